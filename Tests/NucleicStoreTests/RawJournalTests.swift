import Foundation
import NucleicProtocol
import Testing
@testable import NucleicStore

@Suite struct RawJournalTests {
    static let header = RawJournal.Header(backend: "claude", cli: "2.1.327",
                                          argv: ["claude", "-p", "--input-format", "stream-json"], scenario: "store test")

    /// Lines that need every kind of care.
    static let lines: [[UInt8]] = [
        Array(#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}"#.utf8),
        Array(#"with "quotes", a \ backslash and \n written out"#.utf8),
        Array("a real newline\ninside, and\r\n CRLF, and a tab\t".utf8),
        Array("unicode: é ü 中文 😀 \u{2028} \u{FEFF}".utf8),
        [],
        [0x00, 0x01, 0x1F, 0x7F, 0x20],
        [0xFF, 0xFE, 0x41],  // invalid bytes
        [0x41, 0xC3],  // a sequence cut short at the end
        [0xE2, 0x82, 0x41],  // cut short in the middle
        [0xED, 0xA0, 0x80],  // an encoded surrogate (not valid UTF-8)
        [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
        [0xC0, 0xAF, 0xE0, 0x80, 0xAF],  // overlong forms
        [0x80, 0xBF, 0xC3, 0xA9, 0xF0, 0x9F, 0x98, 0x80],  // stray continuations, then é and 😀
        Array(#"\udcff is text here, not an escape"#.utf8),
    ]

    static func randomLines(_ count: Int, seed: UInt64) -> [[UInt8]] {
        var rng = SeededRandom(seed: seed)
        let alphabet: [[UInt8]] = [[0x22], [0x5C], [0x0A], [0x00], [0xC3, 0xA9], [0xF0, 0x9F, 0x98, 0x80], [0xFF], [0xE2, 0x82], Array("abc".utf8), [0x80]]
        return (0..<count).map { _ in
            (0..<Int.random(in: 0...40, using: &rng)).flatMap { _ in
                Bool.random(using: &rng) ? [UInt8.random(in: 0...255, using: &rng)] : alphabet.randomElement(using: &rng)!
            }
        }
    }

    @Test func recordsRoundTripExactly() throws {
        let dir = TempFolder("raw")
        let journal = try RawJournal(folder: dir.path, creatingWith: Self.header)
        #expect(journal.header == Self.header)
        var expected: [RawRecord] = []
        let all = Self.lines + Self.randomLines(300, seed: 11)
        for (i, line) in all.enumerated() {
            let direction = RawJournal.Direction.allCases[i % 3]
            let t = Double(i) * 0.01
            let offset = try journal.append(direction: direction, line: line, t: t, sync: i % 50 == 0)
            expected.append(RawRecord(offset: offset, t: t, direction: direction, line: line))
        }
        #expect(journal.endOffset == fileSize(journal.path))
        #expect(try journal.records().collectAll() == expected)
        #expect(try RawJournal.records(path: journal.path).collectAll() == expected)
        // From any record's offset.
        #expect(try journal.records(from: expected[5].offset).collectAll() == Array(expected[5...]))
        #expect(try RawJournal.readHeader(path: journal.path) == Self.header)

        // Every record is one line of valid JSON in the fixture format; where the line is valid
        // UTF-8, any JSON parser reads it back as the same text.
        let fileLines = readBytes(journal.path).split(separator: 0x0A)
        #expect(fileLines.count == all.count + 1)
        #expect(String(decoding: fileLines[0], as: UTF8.self) == JSONWriter.string(Self.header.json))
        for (i, line) in all.enumerated() {
            let json = try JSONParser.parse(Array(fileLines[i + 1]))
            #expect(json.objectValue?.keys == ["t", "dir", "line"])
            if let text = String(validating: line, as: UTF8.self) { #expect(json["line"]?.stringValue == text) }
        }
        // Invalid bytes are kept as \udcXX, one escape per byte.
        let invalid = String(decoding: fileLines[7], as: UTF8.self)
        #expect(invalid == #"{"t":0.06,"dir":"out","line":"\udcff\udcfeA"}"#)
        #expect(String(decoding: fileLines[9], as: UTF8.self).hasSuffix(#""line":"\udce2\udc82A"}"#))
        #expect(String(decoding: fileLines[14], as: UTF8.self).hasSuffix(#""line":"\\udcff is text here, not an escape"}"#))
    }

    @Test func escapingFedWholeByteByByteAndInRandomPiecesAgrees() throws {
        var rng = SeededRandom(seed: 5)
        for line in Self.lines + Self.randomLines(200, seed: 9) {
            func escaped(_ pieces: [[UInt8]]) -> [UInt8] {
                var escaper = LineEscaper()
                var out: [UInt8] = []
                for piece in pieces { piece.withUnsafeBufferPointer { escaper.escape($0, into: &out) } }
                escaper.finish(into: &out)
                return out
            }
            let whole = escaped([line])
            #expect(escaped(line.map { [$0] }) == whole)
            var pieces: [[UInt8]] = []
            var i = 0
            while i < line.count {
                let n = Int.random(in: 1...5, using: &rng)
                pieces.append(Array(line[i..<min(line.count, i + n)]))
                i += n
            }
            #expect(escaped(pieces) == whole)
            // And it decodes back.
            var record = Array(#"{"dir":"out","line":""#.utf8) + whole + Array(#""}"#.utf8)
            #expect(try RawRecordCodec.decode(&record, offset: 0).line == line)
        }
    }

    @Test func decodingAcceptsOtherWritersRecords() throws {
        func decode(_ text: String) throws -> RawRecord {
            var bytes = Array(text.utf8)
            return try RawRecordCodec.decode(&bytes, offset: 9)
        }
        let r = try decode(#" { "line" : "\u00e9\ud83d\ude00\/\b\f" , "extra": {"a":[1,2,{"b":null}],"c":"}"}, "dir":"err" } "#)
        #expect(r == RawRecord(offset: 9, t: 0, direction: .err, line: Array("é😀/\u{08}\u{0C}".utf8)))
        #expect(try decode(#"{"t":1e-3,"dir":"in","line":"\ud800x\udc00"}"#).line == Array("\u{FFFD}x\u{FFFD}".utf8))
        for bad in [#"{"dir":"up","line":"x"}"#, #"{"dir":"in"}"#, #"{"line":"x"}"#, #"{"dir":"in","line":"x""#,
                    #"{"dir":"in","line":"x"} trailing"#, "{\"dir\":\"in\",\"line\":\"a\u{01}b\"}", #"{"dir":"in","line":"\x"}"#,
                    #"{"dir":"in","line":"a","line":"b"}"#, #"{"t":"soon","dir":"in","line":"x"}"#] {
            #expect(throws: RawRecordCodec.Failure.self, "\(bad)") { try decode(bad) }
        }
    }

    @Test func pythonReadsTheExactBytesBack() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { return }
        let dir = TempFolder("raw")
        let journal = try RawJournal(folder: dir.path, creatingWith: Self.header)
        let all = Self.lines + Self.randomLines(100, seed: 21)
        for line in all { try journal.append(direction: .out, line: line, t: 0, sync: false) }
        let script = """
            import json, sys
            with open(sys.argv[1], encoding="utf-8", errors="surrogateescape") as f:
                header = json.loads(f.readline())
                assert header["fixture"] == 1
                for l in f:
                    print(json.loads(l)["line"].encode("utf-8", "surrogateescape").hex())
            """
        let result = run(["/usr/bin/python3", "-c", script, journal.path])
        #expect(result.status == 0, "\(result.output)")
        let hex = all.map { $0.map { String(format: "%02x", $0) }.joined() }
        #expect(result.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) == hex)
    }

    @Test func theRecordedFixturesReadAsJournals() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures")
        let files = (FileManager.default.enumerator(atPath: fixtures.path)?.compactMap { $0 as? String } ?? []).filter { $0.hasSuffix(".jsonl") }
        #expect(files.count > 10)
        for file in files {
            let path = fixtures.appendingPathComponent(file).path
            let header = try RawJournal.readHeader(path: path)
            #expect(["claude", "codex", "acp"].contains(header.backend))
            var count = 0
            try RawJournal.records(path: path).forEach { (record: RawRecord) throws(StoreError) in
                count += 1
                #expect(String(validating: record.line, as: UTF8.self) != nil)
            }
            // One record per non-blank line after the header.
            let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst()
            #expect(count == lines.filter { !$0.allSatisfy(\.isWhitespace) }.count, "\(file)")
        }
    }

    @Test func aTornLastRecordIsCutAtEveryByte() throws {
        let dir = TempFolder("raw")
        let path = dir.file(RawJournal.fileName)
        var offsets: [Int64] = []
        do {
            let journal = try RawJournal(path: path, creatingWith: Self.header)
            for line in ["first", "second \"line\"", "third é 😀 line with \u{1} bytes"] {
                offsets.append(try journal.append(direction: .out, line: line, t: 0.5))
            }
        }
        let full = readBytes(path)
        for cut in Int(offsets[2])..<full.count {
            writeBytes(Array(full[0..<cut]), to: path)
            let journal = try RawJournal(path: path)
            #expect(journal.endOffset == offsets[2], "cut at \(cut)")
            #expect(journal.repair.tornBytes == Int64(cut) - offsets[2])
            #expect(fileSize(path) == offsets[2])
            let again = try journal.append(direction: .in, line: "fourth", t: 1)
            #expect(again == offsets[2])
            #expect(try journal.records().collectAll().map(\.text) == ["first", "second \"line\"", "fourth"])
        }
    }

    @Test func aCompleteRecordThatDoesNotDecodeIsCutAndKept() throws {
        let dir = TempFolder("raw")
        let path = dir.file(RawJournal.fileName)
        do { try RawJournal(path: path, creatingWith: Self.header).append(direction: .out, line: "ok", t: 0) }
        let good = readBytes(path)
        let bad = Array(#"{"t":1,"dir":"sideways","line":"x"}"#.utf8) + [0x0A]
        writeBytes(good + bad + Array(#"{"t":2,"di"#.utf8), to: path)
        let journal = try RawJournal(path: path)
        #expect(journal.repair.damagedLines == 1)
        #expect(journal.repair.tornBytes == 10)
        #expect(readBytes(try #require(journal.repair.savedTo)) == bad)
        #expect(readBytes(path) == good)
        #expect(try journal.records().collectAll().map(\.text) == ["ok"])
    }

    @Test func theHeaderIsWrittenOnceAndATornOneIsRewritten() throws {
        let dir = TempFolder("raw")
        let path = dir.file(RawJournal.fileName)
        let missing = #expect(throws: StoreError.self) { try RawJournal(path: path) }
        #expect(missing?.code == .notFound)
        writeBytes(Array(#"{"fixture":1,"back"#.utf8), to: path)
        #expect(throws: StoreError.self) { try RawJournal(path: path) }
        do {
            let journal = try RawJournal(path: path, creatingWith: Self.header)
            #expect(journal.repair.tornBytes == 18)
            try journal.append(direction: .out, line: "x", t: 0)
        }
        // Reopening with another header keeps the stored one.
        let other = RawJournal.Header(backend: "codex", cli: "0.163.0", argv: ["codex"], scenario: "other")
        let journal = try RawJournal(path: path, creatingWith: other)
        #expect(journal.header == Self.header)
        #expect(journal.repair.isClean)
        journal.close()
        writeBytes(Array(#"{"fixture":2,"backend":"claude"}"#.utf8) + [0x0A], to: path)
        let newer = #expect(throws: StoreError.self) { try RawJournal(path: path) }
        #expect(newer?.code == .corrupt)
        #expect(newer?.message.contains("format version 2") == true)
    }

    @Test func aFailedStreamingAppendLeavesNothing() throws {
        struct ProducerFailed: Error {}
        let dir = TempFolder("raw")
        let journal = try RawJournal(folder: dir.path, creatingWith: Self.header)
        try journal.append(direction: .out, line: "before", t: 0)
        let size = fileSize(journal.path)
        let error = #expect(throws: StoreError.self) {
            try journal.appendStreaming(direction: .out, t: 1) { (w: inout RawLineWriter) throws(ProducerFailed) in
                try? w.write([UInt8](repeating: 0x61, count: 200_000))  // flushed to the file already
                throw ProducerFailed()
            }
        }
        #expect(error?.code == .invalidArgument)
        #expect(fileSize(journal.path) == size)
        #expect(journal.endOffset == size)
        try journal.append(direction: .out, line: "after", t: 2)
        #expect(try journal.records().collectAll().map(\.text) == ["before", "after"])
        let locked = #expect(throws: StoreError.self) { try RawJournal(folder: dir.path) }
        #expect(locked?.code == .locked)
    }

    @Test func aFollowingReaderWaitsForARecordToComplete() throws {
        let dir = TempFolder("raw")
        let path = dir.file(RawJournal.fileName)
        let journal = try RawJournal(path: path, creatingWith: Self.header)
        try journal.append(direction: .out, line: "one", t: 0)
        let follower = try RawJournal.records(path: path)
        #expect(try follower.next()?.text == "one")
        #expect(try follower.next() == nil)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"t":1,"dir":"out","line":"tw"#.utf8))
        #expect(try follower.next() == nil)
        let waitingAt = follower.offset
        handle.write(Data("o\"}\n".utf8))
        try handle.close()
        let two = try #require(try follower.next())
        #expect(two.text == "two")
        #expect(two.offset == waitingAt)
    }
}

extension RawJournalCursor {
    func collectAll() throws -> [RawRecord] {
        var out: [RawRecord] = []
        while let r = try next() { out.append(r) }
        return out
    }
}
