import NucleicTestSupport
import Testing

/// A one-byte-length frame decoder, right or with one of the bugs the verifier must catch.
final class TinyFrames {
    enum Bug { case none, dropsPartialHeaderAcrossChunks, finishIgnoresTruncation }
    struct Truncated: Error {}
    let bug: Bug
    var buffer: [UInt8] = []
    init(_ bug: Bug) { self.bug = bug }

    func feed(_ bytes: [UInt8]) -> [[UInt8]] {
        buffer += bytes
        var out: [[UInt8]] = []
        while let length = buffer.first, buffer.count > Int(length) {
            out.append(Array(buffer[1..<(1 + Int(length))]))
            buffer.removeFirst(Int(length) + 1)
        }
        // The bug: a header byte alone at the end of a chunk is forgotten.
        if bug == .dropsPartialHeaderAcrossChunks, buffer.count == 1, bytes.count > 1 { buffer = [] }
        return out
    }

    func finish() throws -> [[UInt8]] {
        if !buffer.isEmpty, bug != .finishIgnoresTruncation { throw Truncated() }
        return []
    }

    static func run(_ bug: Bug) -> DecoderVerifier.StreamRun<[UInt8]> {
        let decoder = TinyFrames(bug)
        return .init(feed: decoder.feed, finish: decoder.finish)
    }
}

@Suite struct DecoderVerifierTests {
    static let messages: [[UInt8]] = [[1, 2, 3], [], [9], Array(0..<40)]
    static let stream = messages.flatMap { [UInt8($0.count)] + $0 }

    @Test func aCorrectStreamDecoderPasses() throws {
        try DecoderVerifier.verifyStream(Self.stream, expected: Self.messages, seed: 1, trailing: [[5, 1]]) { TinyFrames.run(.none) }
    }

    @Test func aDecoderLosingStateAcrossChunksFails() {
        #expect(throws: DecoderVerifier.Failure.self) {
            try DecoderVerifier.verifyStream(Self.stream, expected: Self.messages, seed: 1) { TinyFrames.run(.dropsPartialHeaderAcrossChunks) }
        }
    }

    @Test func aDecoderNotReportingTruncationFails() {
        #expect(throws: DecoderVerifier.Failure.self) {
            try DecoderVerifier.verifyStream(Self.stream, expected: Self.messages, seed: 1) { TinyFrames.run(.finishIgnoresTruncation) }
        }
    }

    @Test func wrongExpectationsFail() {
        #expect(throws: DecoderVerifier.Failure.self) {
            try DecoderVerifier.verifyStream(Self.stream, expected: Array(Self.messages.dropLast()), seed: 1) { TinyFrames.run(.none) }
        }
    }

    /// A message decoder: a one-byte length and that many bytes, nothing after.
    static func decode(_ bytes: ArraySlice<UInt8>, allowTrailing: Bool = false) throws -> [UInt8] {
        struct Invalid: Error {}
        guard let first = bytes.first else { throw Invalid() }
        let length = Int(first)
        guard bytes.count >= 1 + length, allowTrailing || bytes.count == 1 + length else { throw Invalid() }
        return Array(bytes.dropFirst().prefix(length))
    }

    @Test func messageDecodersAreCheckedForTruncationAndTrailingBytes() throws {
        let input: [UInt8] = [3, 7, 8, 9]
        try DecoderVerifier.verifyMessage(input, expected: [7, 8, 9]) { try Self.decode($0) }
        #expect(throws: DecoderVerifier.Failure.self) {
            try DecoderVerifier.verifyMessage(input, expected: [7, 8, 9]) { try Self.decode($0, allowTrailing: true) }
        }
        #expect(throws: DecoderVerifier.Failure.self) {
            try DecoderVerifier.verifyMessage(input + [1], expected: [7, 8, 9]) { try Self.decode($0, allowTrailing: true) }
        }
    }

    @Test func stableHashIsFNV1a() {
        // The published FNV-1a 64 values: a seed taken from a name replays in every run.
        #expect(stableHash("") == 0xCBF2_9CE4_8422_2325)
        #expect(stableHash("a") == 0xAF63_DC4C_8601_EC8C)
        #expect(stableHash("foobar") == 0x8594_4171_F739_67E8)
    }
}
