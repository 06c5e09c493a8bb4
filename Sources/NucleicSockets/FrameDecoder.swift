/// Splits a byte stream into frames: a 4-byte big-endian payload length, then that many bytes.
///
/// A pure value type, fed whatever chunks the socket returns (whole frames, single bytes, a frame
/// and a half): `append(_:)` the bytes, then call `next()` until it returns nil. At end of stream
/// call `finish()`, which reports a frame left half-received.
///
/// ### Invariants
/// - A header announcing more than `maxPayload` bytes is an error as soon as its 4 bytes have
///   arrived; nothing of that payload is buffered. Frames completed before it are still returned,
///   in order, and the error is thrown once they have been taken. After an error the decoder stays
///   failed: the stream has lost its framing and the connection must be closed.
/// - Memory held is the frames completed but not yet taken plus the partial frame: a header never
///   makes the decoder reserve more than 1 MiB ahead of the bytes that actually arrived.
public struct FrameDecoder: Sendable {
    /// Bytes in a frame header.
    public static let headerSize = 4
    /// The default largest payload: 16 MiB.
    public static let defaultMaxPayload = 16 * 1024 * 1024

    /// The largest payload accepted; a longer one is a `payloadTooLarge` error.
    public let maxPayload: Int

    /// Frames completed and not yet taken by `next()`, from `readyHead` on.
    private var ready: [[UInt8]] = []
    private var readyHead = 0
    /// Header bytes of the frame in progress (0...3 of them while it is being read).
    private var headerCount = 0
    private var headerValue: UInt32 = 0
    /// The payload of the frame in progress, once its header is complete; `length` is its size.
    private var payload: [UInt8]?
    private var length = 0
    /// Set once the stream is known to be broken; thrown after the ready frames.
    private var failure: FrameError?

    /// Creates a decoder accepting payloads of at most `maxPayload` bytes (0...UInt32.max).
    public init(maxPayload: Int = FrameDecoder.defaultMaxPayload) {
        precondition(maxPayload >= 0 && UInt64(maxPayload) <= UInt64(UInt32.max), "maxPayload must fit in 32 bits")
        self.maxPayload = maxPayload
    }

    /// Bytes of an unfinished frame (header and payload) held by the decoder.
    public var partialByteCount: Int {
        payload.map { Self.headerSize + $0.count } ?? headerCount
    }

    /// Whether `next()` has a frame (or the error) to return.
    public var hasReadyFrame: Bool { readyHead < ready.count || failure != nil }

    /// Adds bytes from the stream. Never throws: an over-long header is reported by `next()`
    /// after the frames that came before it. Bytes appended after an error are ignored.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        let count = bytes.count
        while index < count, failure == nil {
            if payload == nil {
                headerValue = headerValue << 8 | UInt32(bytes[index])
                headerCount += 1
                index += 1
                if headerCount == Self.headerSize { beginPayload() }
                continue
            }
            let take = min(length - payload!.count, count - index)
            let chunk = UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)])
            payload!.append(contentsOf: chunk.assumingMemoryBound(to: UInt8.self))
            index += take
            if payload!.count == length { completeFrame() }
        }
    }

    /// Adds bytes from the stream; see `append(_:)` for a raw buffer.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            append(UnsafeRawBufferPointer(buffer))
        }
        if done == nil { Array(bytes).withUnsafeBytes { append($0) } }
    }

    /// The next complete payload, or nil when more bytes are needed.
    ///
    /// Throws `payloadTooLarge` once the frames before the offending header have been returned,
    /// and again on every later call.
    public mutating func next() throws(FrameError) -> [UInt8]? {
        if readyHead < ready.count {
            let frame = ready[readyHead]
            ready[readyHead] = []
            readyHead += 1
            if readyHead == ready.count {
                ready.removeAll(keepingCapacity: true)
                readyHead = 0
            }
            return frame
        }
        if let failure { throw failure }
        return nil
    }

    /// Checks that the stream ended on a frame boundary: throws `truncated` if part of a frame
    /// has been received (a partial frame is never delivered), or the earlier error if any.
    /// Call it at end of stream, after taking the ready frames.
    public func finish() throws(FrameError) {
        if let failure { throw failure }
        if let payload {
            throw FrameError(
                .truncated,
                "the stream ended in the middle of a frame: \(payload.count) of its \(length) payload bytes had arrived",
                declaredLength: length
            )
        }
        if headerCount > 0 {
            throw FrameError(
                .truncated,
                "the stream ended in the middle of a frame header: \(headerCount) of its \(Self.headerSize) bytes had arrived"
            )
        }
    }

    private mutating func beginPayload() {
        length = Int(headerValue)
        headerCount = 0
        headerValue = 0
        guard length <= maxPayload else {
            failure = FrameError(
                .payloadTooLarge,
                "a frame announced a payload of \(length) bytes, over the limit of \(maxPayload) bytes",
                declaredLength: length
            )
            return
        }
        var bytes: [UInt8] = []
        // Reserve for what is announced, but no more than 1 MiB ahead of what has arrived: a peer
        // that announces 16 MiB and sends nothing must not cost 16 MiB.
        bytes.reserveCapacity(min(length, 1 << 20))
        payload = bytes
        if length == 0 { completeFrame() }
    }

    private mutating func completeFrame() {
        ready.append(payload!)
        payload = nil
        length = 0
    }
}

/// Builds frames: a 4-byte big-endian payload length, then the payload.
public enum FrameEncoder {
    /// The frame carrying `payload`. The payload must be shorter than 4 GiB; a receiver only
    /// accepts payloads up to its own maximum (16 MiB by default).
    public static func encode(_ payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(FrameDecoder.headerSize + payload.count)
        frame.append(contentsOf: header(length: payload.count))
        frame.append(contentsOf: payload)
        return frame
    }

    /// The 4-byte header announcing a payload of `length` bytes (0...UInt32.max).
    public static func header(length: Int) -> [UInt8] {
        precondition(length >= 0 && UInt64(length) <= UInt64(UInt32.max), "a frame payload must be shorter than 4 GiB")
        let value = UInt32(length)
        return [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}
