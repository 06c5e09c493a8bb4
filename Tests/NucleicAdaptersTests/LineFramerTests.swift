import NucleicAdapters
import NucleicTestSupport
import Testing

@Suite struct LineFramerTests {
    @Test func splitsLinesHoweverTheBytesArrive() throws {
        let text = Array("first\nsecond line\n\nthird".utf8)
        let expected: [LineFramer.Output] = [.line(Array("first".utf8)), .line(Array("second line".utf8)), .line([]), .line(Array("third".utf8))]
        // The last line is unterminated: a stream cut anywhere hands its rest over as a line.
        try DecoderVerifier.verifyStream(text, expected: expected, seed: 7, rounds: 200, maxChunk: 5,
                                         truncation: .yieldsRest { $0 == .line($1) }, trailing: [Array("\nmore".utf8)]) {
            final class Framer { var framer = LineFramer() }
            let box = Framer()
            return .init(feed: { box.framer.feed($0) }, finish: { [box.framer.finish()].compactMap { $0 } })
        }
    }

    @Test func overLimitLinesKeepAPreviewAndTheirLength() {
        var framer = LineFramer(limit: 10, previewBytes: 4)
        var out = framer.feed(Array("0123456789ABCDEF".utf8))
        #expect(out.isEmpty)
        #expect(framer.pendingByteCount == 16)
        out = framer.feed(Array("GH\nok\n".utf8))
        #expect(out == [.overLimit(preview: Array("0123".utf8), byteCount: 18), .line(Array("ok".utf8))])
    }

    @Test func overLimitAcrossManySmallChunks() {
        var framer = LineFramer(limit: 8, previewBytes: 3)
        var out: [LineFramer.Output] = []
        for b in Array("abcdefghijklmnop\nxy".utf8) { out += framer.feed([b]) }
        out += [framer.finish()].compactMap { $0 }
        #expect(out == [.overLimit(preview: Array("abc".utf8), byteCount: 16), .line(Array("xy".utf8))])
    }

    @Test func aLineExactlyAtTheLimitIsALine() {
        var framer = LineFramer(limit: 4)
        #expect(framer.feed(Array("abcd\nabcde\n".utf8)) == [.line(Array("abcd".utf8)), .overLimit(preview: Array("abcd".utf8), byteCount: 5)])
        #expect(framer.finish() == nil)
    }

    /// The borrowed lines of `feed(_:each:)`, copied into `Output`s.
    static func borrowed(_ framer: inout LineFramer, _ bytes: [UInt8]) -> [LineFramer.Output] {
        var out: [LineFramer.Output] = []
        bytes.withUnsafeBufferPointer { framer.feed($0, each: { out.append(Self.copy($0)) }) }
        return out
    }

    static func copy(_ output: LineFramer.BorrowedOutput) -> LineFramer.Output {
        switch output {
        case .line(let line): .line(Array(line))
        case .overLimit(let preview, let byteCount): .overLimit(preview: Array(preview), byteCount: byteCount)
        }
    }

    @Test func borrowedLinesPassTheDecoderVerifier() throws {
        let text = Array("first\nsecond line\n\nthird".utf8)
        let expected: [LineFramer.Output] = [.line(Array("first".utf8)), .line(Array("second line".utf8)), .line([]), .line(Array("third".utf8))]
        try DecoderVerifier.verifyStream(text, expected: expected, seed: 8, rounds: 200, maxChunk: 5,
                                         truncation: .yieldsRest { $0 == .line($1) }, trailing: [Array("\nmore".utf8)]) {
            final class Framer { var framer = LineFramer() }
            let box = Framer()
            return .init(feed: { Self.borrowed(&box.framer, Array($0)) }, finish: {
                var last: [LineFramer.Output] = []
                box.framer.finish(each: { last.append(Self.copy($0)) })
                return last
            })
        }
    }

    @Test("feed(_:each:) hands out exactly the lines feed(_:) returns, over-limit lines included, however the bytes arrive")
    func borrowedLinesEqualCopiedLines() {
        var random = SeededGenerator(seed: 0xF4A3)
        for round in 0..<300 {
            let length = Int.random(in: 0...200, using: &random)
            let bytes = (0..<length).map { _ in Bool.random(using: &random) && Int.random(in: 0..<4, using: &random) == 0 ? UInt8(ascii: "\n") : UInt8.random(in: 0x20...0x7e, using: &random) }
            let limit = Int.random(in: 1...40, using: &random)
            let preview = Int.random(in: 0...12, using: &random)
            var copying = LineFramer(limit: limit, previewBytes: preview)
            var borrowing = LineFramer(limit: limit, previewBytes: preview)
            var expected: [LineFramer.Output] = []
            var got: [LineFramer.Output] = []
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + Int.random(in: 1...30, using: &random))
                let chunk = Array(bytes[offset..<end])
                expected += copying.feed(chunk)
                got += Self.borrowed(&borrowing, chunk)
                #expect(borrowing.pendingByteCount == copying.pendingByteCount)
                offset = end
            }
            expected += [copying.finish()].compactMap { $0 }
            borrowing.finish(each: { got.append(Self.copy($0)) })
            #expect(got == expected, "round \(round)")
        }
    }
}
