#if canImport(Glibc)
import Glibc
#endif
import NucleicAdapters
import NucleicProtocol
import NucleicCommandLine

/// The timed passes of `nucleic-bench ingest`, one function per row. Each is `@inline(never)`: a
/// symbol of its own for profilers (`--only ROW`, `valgrind --tool=callgrind --toggle-collect=*ROW*`).
extension IngestBenchmark {
    /// What a read from a pipe returns at most, as the runtime reads agent stdout.
    static let readSize = 1 << 16

    /// Framing alone: the bytes as 64 KiB reads, lines counted.
    @inline(never)
    static func frameOnly(_ stream: [UInt8]) -> Measurement {
        let start = monotonicSeconds()
        var framer = LineFramer()
        var lines = 0
        var offset = 0
        while offset < stream.count {
            let end = min(offset + readSize, stream.count)
            lines += framer.feed(stream[offset..<end]).count
            offset = end
        }
        if framer.finish() != nil { lines += 1 }
        return Measurement(seconds: monotonicSeconds() - start, bytes: stream.count, lines: lines, events: nil)
    }

    /// The parser alone, on each line in place: the lines are found before the clock starts, as
    /// Python's row splits them before it does (no framing, no codec).
    @inline(never)
    static func parseLines(_ stream: [UInt8], _ lines: [Range<Int>]) -> Measurement {
        stream.withUnsafeBufferPointer { buffer in
            let start = monotonicSeconds()
            var entries = 0
            for line in lines {
                // A malformed line (possible with --input) costs its time and counts nothing.
                if case .object(let object)? = try? JSONParser.parse(UnsafeBufferPointer(rebasing: buffer[line])) {
                    entries &+= object.count
                }
            }
            blackHole(entries)
            return Measurement(seconds: monotonicSeconds() - start, bytes: buffer.count, lines: lines.count, events: nil)
        }
    }

    /// Where each non-empty line is, without its newline.
    static func lineRanges(_ stream: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        for (i, byte) in stream.enumerated() where byte == UInt8(ascii: "\n") {
            if i > start { ranges.append(start..<i) }
            start = i + 1
        }
        if start < stream.count { ranges.append(start..<stream.count) }
        return ranges
    }

    /// The ingest path: 64 KiB reads through the framer, each line through one `ClaudeCodec`, borrowed
    /// (`feed(_:each:)` and `receive(bytes:now:)`: a line that lies whole in a read is never copied).
    @inline(never)
    static func ingestThroughCodec(_ stream: [UInt8]) -> Measurement {
        stream.withUnsafeBufferPointer { buffer in
            let start = monotonicSeconds()
            var framer = LineFramer()
            var sink = CodecSink()
            var offset = 0
            while offset < buffer.count {
                let end = min(offset + readSize, buffer.count)
                framer.feed(UnsafeBufferPointer(rebasing: buffer[offset..<end])) { sink.take($0) }
                offset = end
            }
            framer.finish { sink.take($0) }
            return Measurement(seconds: monotonicSeconds() - start, bytes: buffer.count, lines: sink.lines, events: sink.events)
        }
    }

    /// Where the ingest row's lines go: the codec and the counts, in one value that the framer's
    /// closures modify in place. (Variables captured by a local function are checked for
    /// exclusive access at run time, on every line; a closure literal's are checked statically.)
    struct CodecSink {
        let now = Timestamp(millisecondsSince1970: 1_780_000_000_000)
        var codec = ClaudeCodec()
        var lines = 0
        var events = 0

        mutating func take(_ output: LineFramer.BorrowedOutput) {
            lines += 1
            switch output {
            case .line(let line): events += codec.receive(bytes: line, now: now).events.count
            case .overLimit(let preview, let byteCount): events += codec.overLimit(preview: Array(preview), byteCount: byteCount).events.count
            }
        }
    }
}
