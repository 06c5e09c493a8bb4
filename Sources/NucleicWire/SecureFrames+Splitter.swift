/// Splits a byte stream into whole Noise messages (2-byte big-endian length + message) without
/// decrypting them: the framing of the handshake, before there are transport keys.
///
/// Fed whatever chunks the socket returns. When the handshake completes, bytes already received
/// after the last handshake message (the peer's first transport frames) are taken with
/// `takeBuffered()` and given to the `SecureFrameDecoder`.
///
/// ### Invariants
/// - A length below `minimumFrameSize` (always at least 1) is an error as soon as its 2 bytes
///   have arrived; after an error the splitter stays failed and `next()` rethrows it.
/// - Memory held is the bytes appended and not yet returned; a frame is never larger than 65535.
public struct SecureFrameSplitter: Sendable {
    /// The smallest frame accepted.
    public let minimumFrameSize: Int
    private var buffer = FrameBuffer()
    private var failure: SecureFrameError?

    /// A splitter refusing frames shorter than `minimumFrameSize` bytes (a Noise handshake message
    /// is at least 48 bytes in both of Nucleic's patterns).
    public init(minimumFrameSize: Int = 1) {
        self.minimumFrameSize = max(1, minimumFrameSize)
    }

    /// Bytes received and not yet returned.
    public var bufferedByteCount: Int { buffer.unconsumedCount }

    /// Adds bytes from the stream. Never throws; errors come from `next()`.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        buffer.append(bytes)
    }

    /// Adds bytes from the stream.
    @inlinable  // specialized in the caller: its arrays go to the raw-buffer entry without a generic call
    public mutating func append(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { append($0) } }
    }

    /// The next whole Noise message, or nil when more bytes are needed.
    public mutating func next() throws(SecureFrameError) -> [UInt8]? {
        if let failure { throw failure }
        do {
            guard let range = try buffer.nextFrame(minimum: minimumFrameSize) else { return nil }
            let message = Array(buffer.bytes[range])
            buffer.consume(through: range.upperBound)
            return message
        } catch {
            failure = error
            throw error
        }
    }

    /// Every byte received after the messages returned so far (to hand to the next stage).
    public mutating func takeBuffered() -> [UInt8] {
        buffer.takeAll()
    }

    /// At the end of the stream: throws `truncated` if a frame was left incomplete.
    public func finish() throws(SecureFrameError) {
        if let failure { throw failure }
        if buffer.unconsumedCount > 0 {
            throw SecureFrameError(.truncated, "the stream ended inside a frame (\(buffer.unconsumedCount) bytes of it received)")
        }
    }
}
