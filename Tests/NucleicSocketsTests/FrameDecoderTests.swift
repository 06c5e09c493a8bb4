@testable import NucleicSockets
import Testing
import NucleicTestSupport

/// FrameDecoder fed whole, byte by byte and in random chunks; over-long, truncated and trailing input.
struct FrameDecoderTests {
    private static let payloads: [[UInt8]] = [
        Array("hello".utf8), [], [0, 0, 0, 0], randomBytes(70_000, seed: 1), Array("last".utf8), [255],
    ]
    private static let stream: [UInt8] = payloads.flatMap(FrameEncoder.encode)

    /// Feeds `stream` in chunks of the given sizes (cycled) and returns everything `next()` gave.
    private func decode(_ stream: [UInt8], chunks: [Int], maxPayload: Int = FrameDecoder.defaultMaxPayload) throws(FrameError) -> [[UInt8]] {
        var decoder = FrameDecoder(maxPayload: maxPayload)
        var frames: [[UInt8]] = []
        var index = 0
        var chunk = 0
        while index < stream.count {
            let size = min(chunks[chunk % chunks.count], stream.count - index)
            decoder.append(stream[index..<(index + size)])
            index += size
            chunk += 1
            while let frame = try decoder.next() { frames.append(frame) }
        }
        try decoder.finish()
        return frames
    }

    @Test func encodesABigEndianLengthThenThePayload() {
        #expect(FrameEncoder.encode([1, 2, 3]) == [0, 0, 0, 3, 1, 2, 3])
        #expect(FrameEncoder.encode([]) == [0, 0, 0, 0])
        #expect(FrameEncoder.header(length: 0x0102_0304) == [1, 2, 3, 4])
        #expect(FrameEncoder.header(length: 300) == [0, 0, 1, 44])
    }

    @Test func decodesAWholeStream() throws {
        #expect(try decode(Self.stream, chunks: [Self.stream.count]) == Self.payloads)
    }

    @Test func decodesByteByByte() throws {
        #expect(try decode(Self.stream, chunks: [1]) == Self.payloads)
    }

    /// Whole, byte by byte, random chunks, every cut and trailing bytes, on a stream small enough
    /// to cut at every byte.
    @Test func passesTheDecoderVerifier() throws {
        let payloads: [[UInt8]] = [Array("hello".utf8), [], [0, 0, 0, 0], randomBytes(700, seed: 3), [255]]
        try DecoderVerifier.verifyStream(payloads.flatMap(FrameEncoder.encode), expected: payloads, seed: 42,
                                         trailing: [[0], [0, 0, 0], [0, 0, 0, 9, 1]]) {
            final class Decoder { var decoder = FrameDecoder() }
            let box = Decoder()
            return .init(feed: { bytes in
                box.decoder.append(bytes)
                var frames: [[UInt8]] = []
                while let frame = try box.decoder.next() { frames.append(frame) }
                return frames
            }, finish: {
                try box.decoder.finish()
                return []
            })
        }
    }

    @Test func decodesRandomChunks() throws {
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<200 {
            let chunks = (0..<16).map { _ in Int.random(in: 1...9000, using: &generator) }
            #expect(try decode(Self.stream, chunks: chunks) == Self.payloads)
        }
    }

    @Test func decodesAStreamWithManyFramesPerChunk() throws {
        let payloads = (0..<500).map { Array(repeating: UInt8(truncatingIfNeeded: $0), count: $0 % 7) }
        let stream = payloads.flatMap(FrameEncoder.encode)
        #expect(try decode(stream, chunks: [4096]) == payloads)
        #expect(try decode(stream, chunks: [3, 5, 1]) == payloads)
    }

    @Test func acceptsAPayloadOfExactlyTheMaximum() throws {
        let payload = randomBytes(100, seed: 2)
        #expect(try decode(FrameEncoder.encode(payload), chunks: [7], maxPayload: 100) == [payload])
    }

    @Test func refusesALengthOverTheMaximumAsSoonAsTheHeaderArrives() throws {
        var decoder = FrameDecoder(maxPayload: 100)
        decoder.append(FrameEncoder.encode([9, 9]))
        // Only the header of the long frame: nothing of its payload has to arrive for the error.
        decoder.append(FrameEncoder.header(length: 101))
        decoder.append([1, 2, 3])
        #expect(try decoder.next() == [9, 9])
        let error = #expect(throws: FrameError.self) { try decoder.next() }
        #expect(error?.code == .payloadTooLarge)
        #expect(error?.declaredLength == 101)
        #expect(error?.message == "a frame announced a payload of 101 bytes, over the limit of 100 bytes")
        // The decoder stays failed: the stream has lost its framing.
        decoder.append(FrameEncoder.encode([1]))
        #expect(throws: FrameError.self) { try decoder.next() }
        #expect(throws: FrameError.self) { try decoder.finish() }
    }

    @Test func refusesTheLargestLengthWithTheDefaultMaximum() {
        var decoder = FrameDecoder()
        decoder.append([0xFF, 0xFF, 0xFF, 0xFF])
        #expect(decoder.partialByteCount == 0)
        #expect(throws: FrameError.self) { try decoder.next() }
    }

    @Test func reportsAFrameTruncatedInItsPayloadAtTheEnd() throws {
        var decoder = FrameDecoder()
        decoder.append(FrameEncoder.encode([1, 2, 3]))
        decoder.append(Array(FrameEncoder.encode(Array(repeating: 7, count: 10)).prefix(9)))
        #expect(try decoder.next() == [1, 2, 3])
        // The partial frame is never delivered.
        #expect(try decoder.next() == nil)
        #expect(decoder.partialByteCount == 9)
        let error = #expect(throws: FrameError.self) { try decoder.finish() }
        #expect(error?.code == .truncated)
        #expect(error?.message == "the stream ended in the middle of a frame: 5 of its 10 payload bytes had arrived")
    }

    @Test func reportsAFrameTruncatedInItsHeaderAtTheEnd() throws {
        var decoder = FrameDecoder()
        decoder.append([0, 0])
        #expect(try decoder.next() == nil)
        let error = #expect(throws: FrameError.self) { try decoder.finish() }
        #expect(error?.message == "the stream ended in the middle of a frame header: 2 of its 4 bytes had arrived")
    }

    @Test func reportsTrailingBytesAfterTheLastFrame() throws {
        var decoder = FrameDecoder()
        decoder.append(FrameEncoder.encode([5]) + [0, 0, 0])
        #expect(try decoder.next() == [5])
        #expect(try decoder.next() == nil)
        #expect(throws: FrameError.self) { try decoder.finish() }
    }

    @Test func aHeaderDoesNotMakeTheDecoderReserveTheWholePayload() throws {
        var decoder = FrameDecoder()
        decoder.append(FrameEncoder.header(length: FrameDecoder.defaultMaxPayload))
        decoder.append([1])
        #expect(try decoder.next() == nil)
        #expect(decoder.partialByteCount == 5)
    }

    @Test func anEmptyStreamFinishesCleanly() throws {
        var decoder = FrameDecoder()
        #expect(try decoder.next() == nil)
        try decoder.finish()
    }
}
