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
}
