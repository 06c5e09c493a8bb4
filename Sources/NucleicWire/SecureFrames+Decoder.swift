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
///   more than `maxMessageSize` (the size check runs as each fragment arrives), plus at most one
///   complete message `append` reassembled and `next()` has not taken yet. Beyond that, the
///   receive buffer keeps up to `FrameBuffer.retainedCapacity` of capacity between messages, and a
///   message of several fragments is reassembled in a buffer reserved at the size of the last
///   such message (at most `FrameBuffer.retainedCapacity`), then handed out as it is, without a
///   copy (its capacity may exceed its count by that much).
/// - Frames of large messages are decrypted straight from the bytes `append(_:)` is given into
///   the reassembly buffer (see there); other frames are decrypted in place in the receive
///   buffer, or, for every fragment after a message's first, straight from it into the
///   reassembly buffer. A small message of one fragment is copied once after the stream's by
///   `next()`, out of the receive buffer, and not at all by `nextMessage(_:)`. Which way a frame
///   goes depends on how the stream was cut; the messages and errors do not.
public struct SecureFrameDecoder: ~Copyable, Sendable {
    /// The largest reassembled message accepted.
    public let maxMessageSize: Int
    private var cipher: CipherState
    private var buffer = FrameBuffer()
    /// Fragments received so far of the message in progress.
    private var partial: [UInt8] = []
    /// The size of the last message reassembled from several fragments (at most
    /// `FrameBuffer.retainedCapacity`): the capacity a new one reserves.
    private var lastReassembledSize = 0
    /// A message `append` completed (reassembled straight from the bytes it was given), returned
    /// by the next `next()` or `nextMessage(_:)` before anything else.
    private var ready: [UInt8]?
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
    ///
    /// Frames of large messages are decrypted from `bytes` itself, straight into the reassembly
    /// buffer, without a copy into the receive buffer first: every later fragment of a message in
    /// progress that lies whole in `bytes` (a frame begun in the receive buffer is completed from
    /// `bytes` first), and a message's first fragment of at least `directFragmentSize` bytes when
    /// the receive buffer is empty. Only the rest is copied into the receive buffer (small
    /// messages are read there, in place). A message so completed waits for `next()`.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        var rest = bytes
        if cipher.hasKey, ready == nil, bytes.count > 0 { rest = decryptDirectly(bytes) }
        if failure == nil { buffer.append(rest) }
    }

    /// The smallest first fragment `append` decrypts straight from the bytes it is given.
    static let directFragmentSize = 16 * 1024

    /// Decrypts what `append(_:)` takes straight from `bytes`, in stream order, stopping once a
    /// message is complete, at a frame `bytes` does not hold whole, or at anything the buffered
    /// path is to judge (a frame too short, a message too large, a frame already complete in the
    /// receive buffer); returns the bytes left for the receive buffer. A failure is recorded for
    /// `next()`.
    private mutating func decryptDirectly(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var rest = bytes
        if buffer.unconsumedCount > 0 {
            // Only a continuation frame begun there and not yet complete: complete frames go first,
            // through `next()`.
            guard !partial.isEmpty else { return rest }
            let complete: Bool
            do { complete = try buffer.nextFrame(minimum: SecureFrames.minTransportFrameSize) != nil } catch { return rest }
            guard !complete else { return rest }
            if buffer.unconsumedCount < SecureFrames.lengthSize {
                let take = min(SecureFrames.lengthSize - buffer.unconsumedCount, rest.count)
                buffer.append(UnsafeRawBufferPointer(rebasing: rest[..<take]))
                rest = UnsafeRawBufferPointer(rebasing: rest[take...])
                if buffer.unconsumedCount < SecureFrames.lengthSize { return rest }
            }
            let length = Int(buffer.bytes[buffer.head]) << 8 | Int(buffer.bytes[buffer.head + 1])
            let need = SecureFrames.lengthSize + length - buffer.unconsumedCount
            guard length >= SecureFrames.minTransportFrameSize, rest.count >= need else { return rest }
            buffer.append(UnsafeRawBufferPointer(rebasing: rest[..<need]))
            rest = UnsafeRawBufferPointer(rebasing: rest[need...])
            // The receive buffer now holds that one frame, a continuation: decrypted as `next()` would.
            do {
                if let (completed, end) = try nextCompleted() {
                    guard case .reassembled = completed else { preconditionFailure("a continuation completes a reassembled message") }
                    ready = takePartial()
                    buffer.consume(through: end)
                    return rest
                }
            } catch {
                return rest
            }
        }
        // The receive buffer is empty: `rest` starts at stream byte `buffer.offset`.
        var position = 0
        while ready == nil, rest.count - position >= SecureFrames.lengthSize {
            let length = Int(rest[position]) << 8 | Int(rest[position + 1])
            let fragmentCount = length - Noise.tagSize - 1
            guard length >= SecureFrames.minTransportFrameSize, rest.count - position - SecureFrames.lengthSize >= length,
                  partial.count + fragmentCount <= maxMessageSize,
                  !partial.isEmpty || fragmentCount >= Self.directFragmentSize else { break }
            let frame = UnsafeRawBufferPointer(rebasing: rest[(position + SecureFrames.lengthSize)..<(position + SecureFrames.lengthSize + length)])
            let streamOffset = buffer.offset + position
            let result = partial.isEmpty
                ? Self.takeFirstFragment(from: frame, fragmentCount: fragmentCount, streamOffset: streamOffset, cipher: &cipher,
                                         partial: &partial, lastReassembledSize: lastReassembledSize)
                : Self.appendFragment(from: frame, fragmentCount: fragmentCount, streamOffset: streamOffset, cipher: &cipher, partial: &partial)
            position += SecureFrames.lengthSize + length
            switch result {
            case .failure(let error):
                failure = error
                partial = []
                return UnsafeRawBufferPointer(rebasing: rest[position...])
            case .success(.reassembled):
                ready = takePartial()
            case .success:
                break
            }
        }
        buffer.offset += position
        return UnsafeRawBufferPointer(rebasing: rest[position...])
    }

    /// Decrypts a message's first fragment from `frame` into the empty `partial` (the flags byte
    /// first, then dropped): `.more`, or `.reassembled` for a message of this one fragment.
    private static func takeFirstFragment(from frame: UnsafeRawBufferPointer, fragmentCount: Int, streamOffset: Int, cipher: inout CipherState,
                                          partial: inout [UInt8], lastReassembledSize: Int) -> Result<Completed, SecureFrameError> {
        partial.reserveCapacity(max(lastReassembledSize, fragmentCount + 1))
        partial.append(contentsOf: repeatElement(0, count: fragmentCount + 1))
        let count: Int
        do throws(NoiseError) {
            count = try partial.withMutableBytes { (target) throws(NoiseError) -> Int in
                try cipher.decrypt(ad: UnsafeRawBufferPointer(start: nil, count: 0), ciphertext: frame, into: target.baseAddress!)
            }
        } catch {
            partial = []
            return .failure(decryptError(error, frame.count, streamOffset))
        }
        let flags = partial[0]
        if let error = checkFlags(flags, fragmentCount: count - 1, streamOffset: streamOffset) { return .failure(error) }
        partial.removeFirst()
        return .success(flags & SecureFrames.moreFragments != 0 ? .more : .reassembled)
    }

    /// Adds bytes from the stream.
    @inlinable  // specialized in the caller: its arrays go to the raw-buffer entry without a generic call
    public mutating func append(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { append($0) } }
    }

    /// The next complete application message, or nil when more bytes are needed.
    public mutating func next() throws(SecureFrameError) -> [UInt8]? {
        if let message = ready {
            ready = nil
            return message
        }
        guard let (completed, end) = try nextCompleted() else { return nil }
        let message: [UInt8]
        switch completed {
        case .inReceiveBuffer(let fragment): message = Array(buffer.bytes[fragment])
        case .reassembled: message = takePartial()
        case .more: preconditionFailure("nextCompleted() returns only completed messages")
        }
        buffer.consume(through: end)
        return message
    }

    /// The next complete application message lent to `body` (the view is valid only during the
    /// call), or nil when more bytes are needed. The same messages and errors as `next()`, without
    /// an array made for each: a message of one fragment is read where it was decrypted, in the
    /// receive buffer, and the reassembly buffer keeps its capacity for the next message.
    public mutating func nextMessage<R>(_ body: (UnsafeRawBufferPointer) -> R) throws(SecureFrameError) -> R? {
        if var message = ready {
            ready = nil
            let result = message.withUnsafeBytes(body)
            // Its storage becomes the reassembly buffer again.
            message.removeAll(keepingCapacity: message.capacity <= FrameBuffer.retainedCapacity)
            partial = message
            return result
        }
        guard let (completed, end) = try nextCompleted() else { return nil }
        let result: R
        switch completed {
        case .inReceiveBuffer(let fragment):
            result = buffer.bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[fragment])) }
        case .reassembled:
            result = partial.withUnsafeBytes(body)
            lastReassembledSize = min(partial.count, FrameBuffer.retainedCapacity)
            partial.removeAll(keepingCapacity: partial.capacity <= FrameBuffer.retainedCapacity)
        case .more: preconditionFailure("nextCompleted() returns only completed messages")
        }
        buffer.consume(through: end)
        return result
    }

    /// Where a decrypted frame left its message.
    private enum Completed {
        /// More fragments follow.
        case more
        /// A message of one fragment, decrypted in place: these bytes of the receive buffer.
        case inReceiveBuffer(Range<Int>)
        /// A message of several fragments, complete in `partial`.
        case reassembled
    }

    /// Decrypts frames until one completes a message, and returns where it is and the end of its
    /// frame in the receive buffer, not yet consumed (the caller reads the message, then consumes);
    /// nil when more bytes are needed.
    private mutating func nextCompleted() throws(SecureFrameError) -> (Completed, end: Int)? {
        if let failure { throw failure }
        do {
            while let range = try buffer.nextFrame(minimum: SecureFrames.minTransportFrameSize) {
                let streamOffset = buffer.offset + range.lowerBound - SecureFrames.lengthSize
                // Disjoint stored properties, each passed on its own (no copy of the storage).
                let completed = try Self.decryptFrame(in: &buffer.bytes, range: range, streamOffset: streamOffset, cipher: &cipher,
                                                      partial: &partial, lastReassembledSize: lastReassembledSize,
                                                      maxMessageSize: maxMessageSize).get()
                if case .more = completed {
                    buffer.consume(through: range.upperBound)
                    continue
                }
                return (completed, range.upperBound)
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

    /// Decrypts the frame at `range` and takes its fragment: where the completed message is,
    /// `.more` when more fragments follow, or the error.
    ///
    /// A frame that starts a message is decrypted in place in the receive buffer: a message of
    /// one fragment stays there; the first fragment of several is copied into
    /// `partial`, reserved at the size of the last reassembled message. Every later fragment is
    /// decrypted straight from the receive buffer into `partial`, and the completed message is
    /// `partial` itself, moved out by `next()`: the fragments are never copied again.
    private static func decryptFrame(in bytes: inout [UInt8], range: Range<Int>, streamOffset: Int, cipher: inout CipherState,
                                     partial: inout [UInt8], lastReassembledSize: Int, maxMessageSize: Int) -> Result<Completed, SecureFrameError> {
        // The plaintext is the flags byte and the fragment (the frame is at least 17 bytes).
        let fragmentCount = range.count - Noise.tagSize - 1
        // Out of place only with a key (an unkeyed cipher's "plaintext" is the whole frame).
        if cipher.hasKey, !partial.isEmpty, partial.count + fragmentCount <= maxMessageSize {
            return bytes.withUnsafeBytes { bytes in
                appendFragment(from: UnsafeRawBufferPointer(rebasing: bytes[range]), fragmentCount: fragmentCount, streamOffset: streamOffset,
                               cipher: &cipher, partial: &partial)
            }
        }
        return bytes.withUnsafeMutableBytes { bytes -> Result<Completed, SecureFrameError> in
            let frame = UnsafeMutableRawBufferPointer(rebasing: bytes[range])
            let count: Int
            do throws(NoiseError) {
                count = try cipher.decrypt(ad: UnsafeRawBufferPointer(start: nil, count: 0), inPlace: frame)
            } catch {
                return .failure(decryptError(error, range.count, streamOffset))
            }
            let flags = frame[0]
            if let error = checkFlags(flags, fragmentCount: count - 1, streamOffset: streamOffset) { return .failure(error) }
            let fragment = UnsafeRawBufferPointer(rebasing: frame[1..<count])
            guard partial.count + fragment.count <= maxMessageSize else {
                return .failure(SecureFrameError(.messageTooLarge, "the message reassembled at stream byte \(streamOffset) would exceed \(maxMessageSize) bytes"))
            }
            if flags & SecureFrames.moreFragments != 0 {
                partial.reserveCapacity(max(lastReassembledSize, partial.count + fragment.count))
                partial.append(contentsOf: fragment)
                return .success(.more)
            }
            if partial.isEmpty { return .success(.inReceiveBuffer((range.lowerBound + 1)..<(range.lowerBound + count))) }
            partial.append(contentsOf: fragment)
            return .success(.reassembled)
        }
    }

    /// Decrypts a later fragment's frame from the receive buffer straight into `partial` (which
    /// is not empty, and has room for the fragment within `maxMessageSize`). The plaintext's
    /// flags byte lands on `partial`'s last byte, which is put back after.
    private static func appendFragment(from frame: UnsafeRawBufferPointer, fragmentCount: Int, streamOffset: Int,
                                       cipher: inout CipherState, partial: inout [UInt8]) -> Result<Completed, SecureFrameError> {
        let start = partial.count - 1
        let kept = partial[start]
        partial.append(contentsOf: repeatElement(0, count: fragmentCount))
        let count: Int
        do throws(NoiseError) {
            count = try partial.withMutableBytes { (target) throws(NoiseError) -> Int in
                try cipher.decrypt(ad: UnsafeRawBufferPointer(start: nil, count: 0), ciphertext: frame, into: target.baseAddress! + start)
            }
        } catch {
            return .failure(decryptError(error, frame.count, streamOffset))
        }
        let flags = partial[start]
        partial[start] = kept
        if let error = checkFlags(flags, fragmentCount: count - 1, streamOffset: streamOffset) { return .failure(error) }
        return .success(flags & SecureFrames.moreFragments != 0 ? .more : .reassembled)
    }

    /// The reassembled message, moved out of `partial`; its size is remembered, so the next
    /// message's reassembly reserves it at once instead of growing fragment by fragment.
    private mutating func takePartial() -> [UInt8] {
        var message: [UInt8] = []
        swap(&message, &partial)
        lastReassembledSize = min(message.count, FrameBuffer.retainedCapacity)
        return message
    }

    private static func decryptError(_ error: NoiseError, _ frameCount: Int, _ streamOffset: Int) -> SecureFrameError {
        let code: SecureFrameError.Code = error.code == .nonceExhausted ? .nonceExhausted : .decryptFailed
        return SecureFrameError(code, "the frame at stream byte \(streamOffset) (\(frameCount) bytes): \(error.message)")
    }

    private static func checkFlags(_ flags: UInt8, fragmentCount: Int, streamOffset: Int) -> SecureFrameError? {
        guard flags & ~SecureFrames.moreFragments == 0 else {
            return SecureFrameError(.unknownFlags, "the frame at stream byte \(streamOffset) has flags 0x\(String(flags, radix: 16)); only bit 0 is defined")
        }
        if flags & SecureFrames.moreFragments != 0, fragmentCount == 0 {
            return SecureFrameError(.emptyFragment, "the frame at stream byte \(streamOffset) announces more fragments but carries none")
        }
        return nil
    }
}
