/// Turns bytes received from the stream back into application messages: splits frames, decrypts
/// each with the next nonce, checks the flags byte and reassembles fragments.
///
/// A value fed whatever chunks the socket returns (whole frames, single bytes, a frame and a
/// half): `append(_:)` them, then call `next()` until it returns nil. At the end of the stream call
/// `finish()`, which reports a frame or message left incomplete.
///
/// ### Invariants
/// - Anything malformed is an error, and the decoder stays failed: `next()` rethrows the same
///   error, with the reason to log, and the connection must close. Malformed means a length below
///   17 (the flags byte and tag), a frame that fails authentication (tampered, replayed,
///   reordered, another key), a flags byte with bits other than bit 0, an empty non-final
///   fragment, or fragments adding up to more than `maxMessageSize`.
/// - Messages completed before the offending frame are returned first, in order.
/// - Memory held is the bytes appended and not yet framed plus one partial message, itself never
///   more than `maxMessageSize`: the size check runs as each fragment arrives.
public struct SecureFrameDecoder: ~Copyable, Sendable {
    /// The largest reassembled message accepted.
    public let maxMessageSize: Int
    private var cipher: CipherState
    private var buffer = FrameBuffer()
    /// Fragments received so far of the message in progress.
    private var partial: [UInt8] = []
    private var failure: SecureFrameError?

    /// A decoder receiving with `cipher` (a `SecureChannel`'s `receiver`).
    public init(cipher: consuming CipherState, maxMessageSize: Int = SecureFrames.maxMessageSize) {
        self.cipher = cipher
        self.maxMessageSize = max(0, maxMessageSize)
    }

    /// Bytes held for an unfinished frame or message.
    public var partialByteCount: Int { buffer.unconsumedCount + partial.count }

    /// Whether the decoder has failed (the connection must close).
    public var hasFailed: Bool { failure != nil }

    /// Adds bytes from the stream. Never throws; errors come from `next()`. Bytes appended after
    /// an error are ignored.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        buffer.append(bytes)
    }

    /// Adds bytes from the stream.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { append($0) } }
    }

    /// The next complete application message, or nil when more bytes are needed.
    public mutating func next() throws(SecureFrameError) -> [UInt8]? {
        if let failure { throw failure }
        do {
            while let range = try buffer.nextFrame(minimum: SecureFrames.minTransportFrameSize) {
                let streamOffset = buffer.offset + range.lowerBound - SecureFrames.lengthSize
                // Decrypt in place in the receive buffer. The bytes are moved out of `self` for the
                // duration, so the closure can use the cipher without overlapping access to `self`.
                var bytes = buffer.bytes
                buffer.bytes = []
                let result = decryptFrame(in: &bytes, range: range, streamOffset: streamOffset)
                buffer.bytes = bytes
                buffer.consume(through: range.upperBound)
                if let message = try result.get() { return message }
            }
            return nil
        } catch {
            failure = error
            partial = []
            throw error
        }
    }

    /// At the end of the stream: throws `truncated` if a frame or a fragmented message was left
    /// incomplete (or the error the decoder already failed with).
    public func finish() throws(SecureFrameError) {
        if let failure { throw failure }
        if buffer.unconsumedCount > 0 {
            throw SecureFrameError(.truncated, "the stream ended inside a frame (\(buffer.unconsumedCount) bytes of it received)")
        }
        if !partial.isEmpty {
            throw SecureFrameError(.truncated, "the stream ended between the fragments of a message (\(partial.count) bytes of it received)")
        }
    }

    /// Decrypts the frame at `range` and takes its fragment: the completed message, nil when
    /// more fragments follow, or the error.
    private mutating func decryptFrame(in bytes: inout [UInt8], range: Range<Int>, streamOffset: Int) -> Result<[UInt8]?, SecureFrameError> {
        bytes.withUnsafeMutableBytes { bytes -> Result<[UInt8]?, SecureFrameError> in
            let frame = UnsafeMutableRawBufferPointer(rebasing: bytes[range])
            let count: Int
            do throws(NoiseError) {
                count = try cipher.decrypt(ad: UnsafeRawBufferPointer(start: nil, count: 0), inPlace: frame)
            } catch {
                let code: SecureFrameError.Code = error.code == .nonceExhausted ? .nonceExhausted : .decryptFailed
                return .failure(SecureFrameError(code, "the frame at stream byte \(streamOffset) (\(range.count) bytes): \(error.message)"))
            }
            let flags = frame[0]
            guard flags & ~SecureFrames.moreFragments == 0 else {
                return .failure(SecureFrameError(.unknownFlags, "the frame at stream byte \(streamOffset) has flags 0x\(String(flags, radix: 16)); only bit 0 is defined"))
            }
            let fragment = UnsafeRawBufferPointer(rebasing: frame[1..<count])
            let more = flags & SecureFrames.moreFragments != 0
            if more, fragment.isEmpty {
                return .failure(SecureFrameError(.emptyFragment, "the frame at stream byte \(streamOffset) announces more fragments but carries none"))
            }
            guard partial.count + fragment.count <= maxMessageSize else {
                return .failure(SecureFrameError(.messageTooLarge, "the message reassembled at stream byte \(streamOffset) would exceed \(maxMessageSize) bytes"))
            }
            if more {
                partial.append(contentsOf: fragment)
                return .success(nil)
            }
            if partial.isEmpty { return .success(Array(fragment)) }
            partial.append(contentsOf: fragment)
            defer { partial = [] }
            return .success(partial)
        }
    }
}
