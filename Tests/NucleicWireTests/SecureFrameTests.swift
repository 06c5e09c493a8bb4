import Testing
@testable import NucleicWire
import NucleicTestSupport

/// The frame codec: every decoder input shape (whole, byte by byte, random chunks, truncated,
/// tampered, oversized, random), fragmenting and reassembly.
struct SecureFrameTests {
    /// An encoder and decoder sharing a key, as the two ends of one direction of a channel.
    static func codec(maxFragment: Int = SecureFrames.maxFragmentSize, encoderMax: Int = SecureFrames.maxMessageSize,
                      decoderMax: Int = SecureFrames.maxMessageSize, nonce: UInt64 = 0) throws -> SecureFrameCodec {
        let key = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        var sending = try CipherState(key: key)
        var receiving = try CipherState(key: key)
        sending.setNonce(nonce)
        receiving.setNonce(nonce)
        return SecureFrameCodec(
            encoder: SecureFrameEncoder(cipher: sending, maxMessageSize: encoderMax, maxFragmentSize: maxFragment),
            decoder: SecureFrameDecoder(cipher: receiving, maxMessageSize: decoderMax))
    }

    /// The decoder of `codec(...)` alone. (Taking one field of a noncopyable temporary trips a
    /// compiler bug in Swift 6.3 — "copy of noncopyable typed value" — so bind it first.)
    static func decoder(decoderMax: Int = SecureFrames.maxMessageSize) throws -> SecureFrameDecoder {
        let codec = try codec(decoderMax: decoderMax)
        return codec.decoder
    }

    /// The encoder of `codec(...)` alone.
    static func encoder(maxFragment: Int = SecureFrames.maxFragmentSize, encoderMax: Int = SecureFrames.maxMessageSize) throws -> SecureFrameEncoder {
        let codec = try codec(maxFragment: maxFragment, encoderMax: encoderMax)
        return codec.encoder
    }

    /// A frame carrying `plaintext` (flags byte included) encrypted as the `index`-th frame of `codec()`.
    static func rawFrame(_ plaintext: [UInt8], index: UInt64 = 0) throws -> [UInt8] {
        var cipher = try CipherState(key: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        cipher.setNonce(index)
        let ciphertext = try cipher.encryptWithAd([], plaintext)
        return try SecureFrames.frame(ciphertext)
    }

    static func messages(count: Int, seed: UInt64, maxSize: Int) -> [[UInt8]] {
        var rng = SeededGenerator(seed: seed)
        return (0..<count).map { _ in
            (0..<Int.random(in: 0...maxSize, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        }
    }

    /// Feeds `stream` in the given chunk sizes (cycled), collects every message, then calls `finish()`.
    static func decode(_ stream: [UInt8], chunks: [Int], into decoder: inout SecureFrameDecoder) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        try decode(stream, chunks: chunks, into: &decoder, received: &out)
        return out
    }

    /// As `decode(_:chunks:into:)`, collecting into `received`, which keeps the messages that
    /// came before an error.
    static func decode(_ stream: [UInt8], chunks: [Int], into decoder: inout SecureFrameDecoder, received out: inout [[UInt8]]) throws {
        // Bytes appended before the call (handed over by a splitter) come first.
        while let message = try decoder.next() { out.append(message) }
        var position = 0
        var chunk = 0
        while position < stream.count {
            let size = min(chunks[chunk % chunks.count], stream.count - position)
            decoder.append(stream[position..<(position + size)])
            position += size
            chunk += 1
            while let message = try decoder.next() { out.append(message) }
        }
        try decoder.finish()
    }

    // MARK: Round trips

    @Test("Messages of every size round-trip, fed whole", arguments: [0, 1, 2, 100, 65517, 65518, 65519, 131_036, 131_037, 300_000])
    func sizes(size: Int) throws {
        var codec = try Self.codec()
        let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let stream = try codec.encoder.encode(message)
        let frames = codec.encoder.frameCount(forMessageSize: size)
        #expect(frames == max(1, (size + 65517) / 65518))
        #expect(stream.count == size + frames * (2 + 1 + 16))
        #expect(try Self.decode(stream, chunks: [stream.count], into: &codec.decoder) == [message])
    }

    @Test("A 16 MiB message is the largest accepted, on both sides")
    func largestMessage() throws {
        var codec = try Self.codec()
        let message = [UInt8](repeating: 0x5a, count: SecureFrames.maxMessageSize)
        let stream = try codec.encoder.encode(message)
        #expect(try Self.decode(stream, chunks: [1 << 20], into: &codec.decoder) == [message])
        #expect(frameErrorCode { _ = try codec.encoder.encode(message + [0]) } == .messageTooLarge)
    }

    @Test("Fragmented messages reassemble fed whole, byte by byte and in random chunks", arguments: [1, 7, 1000])
    func chunking(maxFragment: Int) throws {
        let messages = Self.messages(count: 12, seed: UInt64(maxFragment), maxSize: 3000)
        var encoder = try Self.encoder(maxFragment: maxFragment)
        var stream: [UInt8] = []
        for message in messages { stream += try encoder.encode(message) }

        var whole = try Self.decoder()
        #expect(try Self.decode(stream, chunks: [stream.count], into: &whole) == messages)
        var byByte = try Self.decoder()
        #expect(try Self.decode(stream, chunks: [1], into: &byByte) == messages)
        var rng = SeededGenerator(seed: 99)
        for _ in 0..<5 {
            var random = try Self.decoder()
            let chunks = (0..<50).map { _ in Int.random(in: 1...400, using: &rng) }
            #expect(try Self.decode(stream, chunks: chunks, into: &random) == messages)
        }
    }

    @Test("nextMessage lends the messages next() returns, in random chunks, sizes growing and shrinking, up to the same error", arguments: [7, 1000, SecureFrames.maxFragmentSize])
    func borrowedMessages(maxFragment: Int) throws {
        var rng = SeededGenerator(seed: UInt64(maxFragment) &+ 5)
        let sizes = [0, 1, 3000, 200_000, 10, 131_037, 65_519, 300_000, 2, 65_518]
        let messages = sizes.map { size in (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        var encoder = try Self.encoder(maxFragment: maxFragment)
        var stream: [UInt8] = []
        for message in messages { stream += try encoder.encode(message) }
        // A tampered byte in the last frame: both decoders give every message before it, then fail alike.
        var tampered = stream
        tampered[tampered.count - 3] ^= 0x40
        for input in [stream, tampered] {
            var owned = try Self.decoder()
            var lent = try Self.decoder()
            var ownedOut: [[UInt8]] = [], lentOut: [[UInt8]] = []
            var ownedError: SecureFrameError?, lentError: SecureFrameError?
            var position = 0
            while position < input.count {
                let size = min(Int.random(in: 1...150_000, using: &rng), input.count - position)
                owned.append(input[position..<(position + size)])
                lent.append(input[position..<(position + size)])
                position += size
                do { while let message = try owned.next() { ownedOut.append(message) } } catch { ownedError = ownedError ?? error }
                do { while let message = try lent.nextMessage({ Array($0) }) { lentOut.append(message) } } catch { lentError = lentError ?? error }
                #expect(owned.partialByteCount == lent.partialByteCount)
            }
            #expect(lentOut == ownedOut)
            #expect(lentError?.code == ownedError?.code)
            #expect(lentError?.message == ownedError?.message)
            if input == stream { #expect(ownedOut == messages) } else { #expect(ownedOut == Array(messages.dropLast())) }
        }
    }

    @Test("The decoder passes the decoder verifier: whole, byte by byte, random chunks, every cut, trailing bytes")
    func verifier() throws {
        let messages = Self.messages(count: 6, seed: 0x5EC, maxSize: 200) + [[]]
        var encoder = try Self.encoder(maxFragment: 50)
        var stream: [UInt8] = []
        for message in messages { stream += try encoder.encode(message) }
        // Trailing: half a frame header, and a whole frame's length with nothing after it.
        try DecoderVerifier.verifyStream(stream, expected: messages, seed: 0x5EC, trailing: [[0x00], [0x00, 0x20]]) {
            final class Decoder { var decoder: SecureFrameDecoder; init() throws { decoder = try SecureFrameTests.decoder() } }
            let box = try Decoder()
            return .init(feed: { bytes in
                box.decoder.append(bytes)
                var out: [[UInt8]] = []
                while let message = try box.decoder.next() { out.append(message) }
                return out
            }, finish: {
                try box.decoder.finish()
                return []
            })
        }
    }

    @Test("The splitter hands handshake frames over, then the bytes after them to the decoder")
    func splitterHandOver() throws {
        var codec = try Self.codec()
        let handshake = [[UInt8](repeating: 1, count: 48), [UInt8](repeating: 2, count: 64)]
        let application = try codec.encoder.encode(Array("first".utf8)) + codec.encoder.encode(Array("second".utf8))
        let stream = try handshake.flatMap { try SecureFrames.frame($0) } + application
        for cut in [0, 1, 2, 50, 51, 52, 100, stream.count] {
            var splitter = SecureFrameSplitter(minimumFrameSize: 48)
            var received: [[UInt8]] = []
            splitter.append(stream.prefix(cut))
            while received.count < 2, let frame = try splitter.next() { received.append(frame) }
            var rest = stream.dropFirst(cut)
            while received.count < 2 {
                splitter.append(rest.prefix(1))
                rest = rest.dropFirst()
                if let frame = try splitter.next() { received.append(frame) }
            }
            #expect(received == handshake)
            var decoder = try Self.decoder()
            decoder.append(splitter.takeBuffered())
            #expect(splitter.bufferedByteCount == 0)
            #expect(try Self.decode(Array(rest), chunks: [3], into: &decoder) == [Array("first".utf8), Array("second".utf8)])
        }
        var splitter = SecureFrameSplitter()
        splitter.append([0, 0])
        #expect(frameErrorCode { _ = try splitter.next() } == .frameTooShort)
        #expect(frameErrorCode { _ = try SecureFrames.frame([]) } == .frameTooLarge)
        #expect(frameErrorCode { _ = try SecureFrames.frame([UInt8](repeating: 0, count: 65536)) } == .frameTooLarge)
        var partial = SecureFrameSplitter()
        partial.append([0, 5, 1])
        #expect(try partial.next() == nil)
        #expect(frameErrorCode { try partial.finish() } == .truncated)
    }

    // MARK: Malformed input

    @Test("A stream cut anywhere yields the messages before the cut, and finish() reports the rest as truncated")
    func truncation() throws {
        let messages = Self.messages(count: 4, seed: 7, maxSize: 40)
        var encoder = try Self.encoder(maxFragment: 16)
        var boundaries: [Int: Int] = [0: 0]
        var stream: [UInt8] = []
        for (index, message) in messages.enumerated() {
            stream += try encoder.encode(message)
            boundaries[stream.count] = index + 1
        }
        for cut in 0...stream.count {
            var decoder = try Self.decoder()
            decoder.append(stream.prefix(cut))
            var received: [[UInt8]] = []
            while let message = try decoder.next() { received.append(message) }
            #expect(messages.starts(with: received))
            if let complete = boundaries[cut] {
                #expect(received.count == complete)
                try decoder.finish()
            } else {
                #expect(frameErrorCode { try decoder.finish() } == .truncated, "cut at \(cut)")
            }
        }
    }

    /// Large frames are decrypted straight from what `append` is given (a whole message's
    /// fragments, or a fragment completing one begun in the receive buffer); small ones through
    /// the receive buffer. Whichever way a byte arrives, the messages and the error are the same.
    @Test("Large messages give the same messages and the same error fed whole, byte by byte and in chunks, tampered anywhere")
    func largeFramesTheSameWhicheverWayTheyArrive() throws {
        let messages = Self.messages(count: 3, seed: 0xD1EC7, maxSize: 20) + [
            (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) },
            (0..<SecureFrameDecoder.directFragmentSize).map { UInt8(truncatingIfNeeded: $0) },
            [1, 2, 3],
        ]
        var encoder = try Self.encoder()
        var stream: [UInt8] = []
        var frameStarts: [Int] = []
        var encodedSizes: [Int] = []
        for message in messages {
            let frames = try encoder.encode(message)
            encodedSizes.append(frames.count)
            var position = 0
            while position < frames.count {
                frameStarts.append(stream.count + position)
                position += SecureFrames.lengthSize + (Int(frames[position]) << 8 | Int(frames[position + 1]))
            }
            stream += frames
        }
        func outcome(_ stream: [UInt8], _ chunks: [Int]) throws -> (messages: [[UInt8]], error: String?) {
            var decoder = try Self.decoder()
            var received: [[UInt8]] = []
            do {
                try Self.decode(stream, chunks: chunks, into: &decoder, received: &received)
                return (received, nil)
            } catch {
                return (received, "\(error)")
            }
        }
        let clean = try outcome(stream, [stream.count])
        #expect(clean.messages == messages && clean.error == nil)
        // In each frame: a length byte, the flags byte, the middle of the fragment, the tag's last byte.
        var positions: [Int] = []
        for (index, start) in frameStarts.enumerated() {
            let end = index + 1 < frameStarts.count ? frameStarts[index + 1] : stream.count
            positions += [start, start + 1, start + 2, (start + end) / 2, end - 1]
        }
        for position in positions {
            var tampered = stream
            tampered[position] ^= 0x40
            let whole = try outcome(tampered, [tampered.count])
            #expect(whole.error != nil, "byte \(position)")
            #expect(messages.starts(with: whole.messages), "byte \(position)")
            // One message a chunk (its first fragment straight from the chunk), halves of them
            // (fragments completed from the chunk), and the receive buffer's ways.
            let halves = encodedSizes.flatMap { [$0 / 2, $0 - $0 / 2] }.filter { $0 > 0 }
            for chunks in [encodedSizes, halves, [1], [1000], [65_537, 3], [70_000]] {
                let other = try outcome(tampered, chunks)
                #expect(other.messages == whole.messages && other.error == whole.error, "byte \(position), chunks \(chunks.prefix(4)): \(other.error ?? "-") vs \(whole.error ?? "-")")
            }
        }
    }

    @Test("Every single-bit change to a stream is an error (or a truncation), never a wrong message")
    func tampering() throws {
        let messages = Self.messages(count: 3, seed: 11, maxSize: 30)
        var encoder = try Self.encoder(maxFragment: 10)
        var stream: [UInt8] = []
        for message in messages { stream += try encoder.encode(message) }
        for position in 0..<stream.count {
            for bit in [UInt8(0x01), 0x80] {
                var tampered = stream
                tampered[position] ^= bit
                var decoder = try Self.decoder()
                decoder.append(tampered)
                var received: [[UInt8]] = []
                var failure: SecureFrameError.Code?
                do {
                    while let message = try decoder.next() { received.append(message) }
                    try decoder.finish()
                } catch {
                    failure = error.code
                }
                #expect(messages.starts(with: received))
                #expect(failure != nil, "byte \(position) bit \(bit)")
                #expect([.decryptFailed, .frameTooShort, .truncated].contains(failure))
            }
        }
    }

    @Test("Replayed, dropped and reordered frames fail to decrypt")
    func replayAndReorder() throws {
        var encoder = try Self.encoder()
        let first = try encoder.encode([1])
        let second = try encoder.encode([2])
        let third = try encoder.encode([3])
        for stream in [first + first, first + third, second + first, second] {
            var decoder = try Self.decoder()
            decoder.append(stream)
            #expect(frameErrorCode { while try decoder.next() != nil {} } == .decryptFailed)
        }
        var decoder = try Self.decoder()
        #expect(try Self.decode(first + second + third, chunks: [5], into: &decoder) == [[1], [2], [3]])
    }

    @Test("Lengths below 17, unknown flags and empty non-final fragments are refused")
    func malformedFrames() throws {
        for length in [0, 1, 16] {
            var decoder = try Self.decoder()
            decoder.append([UInt8(length >> 8), UInt8(length & 0xff)])
            #expect(frameErrorCode { _ = try decoder.next() } == .frameTooShort, "length \(length)")
        }
        for flags in [UInt8(0x02), 0x80, 0xff, 0x03] {
            var decoder = try Self.decoder()
            decoder.append(try Self.rawFrame([flags, 1, 2]))
            #expect(frameErrorCode { _ = try decoder.next() } == .unknownFlags)
        }
        var decoder = try Self.decoder()
        decoder.append(try Self.rawFrame([SecureFrames.moreFragments]))
        #expect(frameErrorCode { _ = try decoder.next() } == .emptyFragment)
        // An empty final fragment is an empty message, alone or after fragments.
        var empty = try Self.decoder()
        empty.append(try Self.rawFrame([0]) + Self.rawFrame([1, 7], index: 1) + Self.rawFrame([0], index: 2))
        #expect(try empty.next() == [])
        #expect(try empty.next() == [7])
    }

    @Test("Fragments adding up to more than the maximum are refused as soon as they do")
    func oversizedReassembly() throws {
        var codec = try Self.codec(maxFragment: 100, decoderMax: 1000)
        #expect(try Self.decode(try codec.encoder.encode([UInt8](repeating: 1, count: 1000)), chunks: [64], into: &codec.decoder).count == 1)
        var big = try Self.codec(maxFragment: 100, decoderMax: 1000)
        let stream = try big.encoder.encode([UInt8](repeating: 1, count: 5000))
        // The first 10 frames (1000 bytes) are fine; the 11th crosses the limit.
        let frameSize = 2 + 1 + 100 + 16
        big.decoder.append(stream.prefix(10 * frameSize))
        #expect(try big.decoder.next() == nil)
        let partialByteCount = big.decoder.partialByteCount
        #expect(partialByteCount == 1000)
        big.decoder.append(stream.dropFirst(10 * frameSize).prefix(frameSize))
        #expect(frameErrorCode { _ = try big.decoder.next() } == .messageTooLarge)
        // The encoder refuses what the decoder would.
        var small = try Self.codec(encoderMax: 10)
        #expect(frameErrorCode { _ = try small.encoder.encode([UInt8](repeating: 0, count: 11)) } == .messageTooLarge)
        #expect(try small.encoder.encode([UInt8](repeating: 0, count: 10)).count == 10 + 19)
    }

    @Test("After an error the decoder stays failed; messages before the error come first")
    func failureIsFinal() throws {
        var encoder = try Self.encoder()
        var stream = try encoder.encode([1]) + encoder.encode([2])
        var bad = try encoder.encode([3])
        bad[5] ^= 1
        stream += try bad + encoder.encode([4])
        var decoder = try Self.decoder()
        decoder.append(stream)
        #expect(try decoder.next() == [1])
        #expect(try decoder.next() == [2])
        var first: SecureFrameError?
        do { _ = try decoder.next() } catch { first = error }
        #expect(first?.code == .decryptFailed)
        let failed = decoder.hasFailed
        #expect(failed)
        decoder.append(try encoder.encode([5]))
        do {
            _ = try decoder.next()
            Issue.record("a failed decoder returned a message")
        } catch {
            #expect(error == first)
        }
        #expect(frameErrorCode { try decoder.finish() } == .decryptFailed)
    }

    @Test("Encoder nonce exhaustion adds nothing to the output and is final")
    func encoderNonceExhaustion() throws {
        // Two nonces left (2^64-3, 2^64-2): a 3-fragment message cannot be sent.
        var codec = try Self.codec(maxFragment: 4, nonce: UInt64.max - 2)
        var out: [UInt8] = [9]
        #expect(frameErrorCode {
            try [UInt8](repeating: 1, count: 12).withUnsafeBytes { try codec.encoder.encode($0, appendingTo: &out) }
        } == .nonceExhausted)
        #expect(out == [9])
        #expect(frameErrorCode { _ = try codec.encoder.encode([1]) } == .nonceExhausted)
    }

    @Test("Random bytes never crash the decoder or the splitter")
    func randomBytes() throws {
        var rng = SeededGenerator(seed: 0x5ec_f4a3e)
        for _ in 0..<500 {
            let count = Int.random(in: 0..<600, using: &rng)
            var garbage = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // Plausible lengths half the time, so decryption itself is reached.
            if count > 2, Bool.random(using: &rng) {
                let length = Int.random(in: 0...(count - 2), using: &rng)
                garbage[0] = UInt8(length >> 8)
                garbage[1] = UInt8(length & 0xff)
            }
            var decoder = try Self.decoder()
            var splitter = SecureFrameSplitter()
            var position = 0
            while position < garbage.count {
                let size = Int.random(in: 1...64, using: &rng)
                let chunk = garbage[position..<min(garbage.count, position + size)]
                position += size
                decoder.append(chunk)
                splitter.append(chunk)
                _ = try? decoder.next()
                _ = try? splitter.next()
            }
            _ = try? decoder.finish()
            _ = try? splitter.finish()
        }
    }

    @Test("A channel from a real handshake carries framed messages both ways")
    func channelFraming() throws {
        let pair = try connect(.xxpsk3)
        var device = pair.initiator.frameCodec()
        var host = pair.responder.frameCodec()
        let messages = Self.messages(count: 5, seed: 3, maxSize: 200_000)
        for message in messages {
            host.decoder.append(try device.encoder.encode(message))
            #expect(try host.decoder.next() == message)
            device.decoder.append(try host.encoder.encode(message))
            #expect(try device.decoder.next() == message)
        }
    }
}
