import Foundation
import NucleicProtocol
import NucleicTestSupport
import Testing
@testable import NucleicStore

@Suite struct TranscriptTests {
    /// Writes `events` in batches of 1…`maxBatch`, without syncing each (speed).
    static func write(_ events: [SequencedEvent], to transcript: Transcript, maxBatch: Int = 40, seed: UInt64 = 1) throws {
        var rng = SeededRandom(seed: seed)
        var i = 0
        while i < events.count {
            let n = min(events.count - i, Int.random(in: 1...maxBatch, using: &rng))
            try transcript.append(Array(events[i..<(i + n)]), sync: false)
            i += n
        }
        try transcript.sync()
    }

    @Test func readsFromAnySeqExactlyWhatWasWritten() throws {
        let dir = TempFolder("transcript")
        let events = Events.range(1...10_000)
        let transcript = try Transcript(folder: dir.path)
        #expect(transcript.lastSeq == 0)
        #expect(transcript.repair.isClean)
        try Self.write(events, to: transcript)
        #expect(transcript.lastSeq == 10_000)
        #expect(fileSize(transcript.indexPath) == 10_000 * 8)

        #expect(try transcript.read(from: 1).collect() == events)
        var rng = SeededRandom(seed: 7)
        for _ in 0..<300 {
            let seq = Int64.random(in: 1...10_000, using: &rng)
            let cursor = try transcript.read(from: seq)
            for expected in events[Int(seq - 1)..<min(events.count, Int(seq - 1) + 25)] {
                #expect(try cursor.next() == expected)
            }
        }
        for seq: Int64 in [1, 2, 9_999, 10_000] {
            #expect(try transcript.read(from: seq).collect() == Array(events[Int(seq - 1)...]))
        }
        #expect(try transcript.read(from: 10_001).collect().isEmpty)
        #expect(try transcript.read(from: -5).next() == events[0])
        #expect(try transcript.read(4_000...4_010).collect() == Array(events[3_999...4_009]))
        #expect(try transcript.read(9_990...20_000).collect() == Array(events[9_989...]))
        #expect(try transcript.event(seq: 1234) == events[1233])

        // Each line is the event's JSON, nothing else: {"seq","ts",…,"rawOffset"}.
        let firstLine = String(decoding: readBytes(transcript.path).prefix { $0 != 0x0A }, as: UTF8.self)
        #expect(firstLine == JSONWriter.string(events[0].json))

        // Reopened: the same, from the files alone.
        let lastRaw = transcript.lastRawOffset
        #expect(lastRaw == events.last(where: { $0.rawOffset != nil })?.rawOffset)
        transcript.close()
        let reopened = try Transcript(folder: dir.path)
        #expect(reopened.repair.isClean)
        #expect(reopened.lastSeq == 10_000)
        #expect(reopened.lastRawOffset == lastRaw)
        #expect(try reopened.read(from: 5_000).collect() == Array(events[4_999...]))
    }

    @Test func aGapOrARepeatIsRefusedAndNothingIsWritten() throws {
        let dir = TempFolder("transcript")
        let transcript = try Transcript(folder: dir.path)
        try transcript.append(Events.range(1...3))
        let size = fileSize(transcript.path)
        for bad in [[Events.make(5)], [Events.make(3)], [Events.make(1)], [Events.make(4), Events.make(6)], [Events.make(4), Events.make(4)]] {
            let error = #expect(throws: StoreError.self) { try transcript.append(bad) }
            #expect(error?.code == .sequence)
            #expect(error?.message.contains("nothing was written") == true)
            #expect(fileSize(transcript.path) == size)
            #expect(fileSize(transcript.indexPath) == 3 * 8)
            #expect(transcript.lastSeq == 3)
        }
        let gap = #expect(throws: StoreError.self) { try transcript.append([Events.make(7)]) }
        #expect(gap?.message.contains("would leave a gap") == true)
        let repeated = #expect(throws: StoreError.self) { try transcript.append([Events.make(2)]) }
        #expect(repeated?.message.contains("was already written") == true)
        try transcript.append([])
        try transcript.append([Events.make(4)])
        #expect(try transcript.read(from: 1).collect() == Events.range(1...4))
    }

    @Test func aTornLastLineIsCutAtEveryByte() throws {
        let dir = TempFolder("transcript")
        let events = Events.range(1...20)
        let folder = dir.file("s")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        do {
            let t = try Transcript(folder: folder)
            try t.append(events)
        }
        let path = folder + "/" + Transcript.fileName
        let indexPath = folder + "/" + Transcript.indexFileName
        let full = readBytes(path)
        let index = readBytes(indexPath)
        let lastStart = Int(IndexSync.value(index, 19 * 8))
        #expect(full.count > lastStart + 100)
        for cut in lastStart..<full.count {
            writeBytes(Array(full[0..<cut]), to: path)
            writeBytes(index, to: indexPath)  // the index still names seq 20
            let t = try Transcript(folder: folder)
            #expect(t.lastSeq == 19, "cut at \(cut)")
            #expect(t.repair.tornBytes == Int64(cut - lastStart))
            #expect(t.repair.damagedLines == 0)
            #expect(t.repair.savedTo == nil)
            #expect(fileSize(path) == Int64(lastStart))
            #expect(fileSize(indexPath) == 19 * 8)
            #expect(t.lastRawOffset == events[0..<19].last(where: { $0.rawOffset != nil })?.rawOffset)
            // Appending continues with seq 20, written once.
            try t.append([events[19]])
            #expect(try t.read(from: 1).collect() == events)
        }
    }

    @Test func aCompleteLineThatDoesNotParseIsCutAndKept() throws {
        let dir = TempFolder("transcript")
        do { try Transcript(folder: dir.path).append(Events.range(1...5)) }
        let path = dir.file(Transcript.fileName)
        let good = readBytes(path)
        let garbage = Array(#"{"seq":6,"ts":"2026-01-01T00:00:00.000Z","kind":"notice","level":"#.utf8) + [0, 0, 0, 0x0A]
        writeBytes(good + garbage + Array(#"{"seq":7,"ts"#.utf8), to: path)
        let t = try Transcript(folder: dir.path)
        #expect(t.lastSeq == 5)
        #expect(t.repair.damagedLines == 1)
        #expect(t.repair.tornBytes == 12)
        let saved = try #require(t.repair.savedTo)
        #expect(readBytes(saved) == garbage)
        #expect(readBytes(path) == good)
        try t.append([Events.make(6)])
        #expect(try t.read(from: 1).collect() == Events.range(1...6))
    }

    @Test func aWrongSeqInTheMiddleCutsFromThereAndKeepsTheRest() throws {
        let dir = TempFolder("transcript")
        do { try Transcript(folder: dir.path).append(Events.range(1...10)) }
        let path = dir.file(Transcript.fileName)
        var bytes = readBytes(path)
        let index = readBytes(dir.file(Transcript.indexFileName))
        let fifth = Int(IndexSync.value(index, 4 * 8))
        #expect(bytes[fifth + 7] == UInt8(ascii: "5"))
        bytes[fifth + 7] = UInt8(ascii: "8")  // {"seq":8, where 5 belongs
        writeBytes(bytes, to: path)
        let t = try Transcript(folder: dir.path)
        #expect(t.lastSeq == 4)
        #expect(t.repair.damagedLines == 6)
        #expect(readBytes(try #require(t.repair.savedTo)) == Array(bytes[fifth...]))
        #expect(try t.read(from: 1).collect() == Events.range(1...4))
    }

    @Test func anIncompleteGroupOfOneRawLinesEventsIsCutWhole() throws {
        let dir = TempFolder("transcript")
        // Events 4, 5, 6 come from one raw line (offset 777); 7 is a host event.
        let group = (4...6).map { Events.make(Int64($0), rawOffset: 777) }
        do {
            let t = try Transcript(folder: dir.path)
            try t.append([Events.make(1, rawOffset: 100), Events.make(2, rawOffset: 200), Events.make(3, rawOffset: .some(nil))])
            try t.append(group)
            #expect(t.lastRawOffset == 777)
            try t.append([Events.make(7, rawOffset: .some(nil))])
            #expect(t.lastRawOffset == 777)
        }
        let path = dir.file(Transcript.fileName)
        let lines = readBytes(path).split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        #expect(lines[3].hasSuffix(#","rawOffset":777,"rawMore":true}"#))
        #expect(lines[4].hasSuffix(#","rawOffset":777,"rawMore":true}"#))
        #expect(lines[5].hasSuffix(#","rawOffset":777}"#))
        #expect(!lines[6].contains("rawMore"))

        // Whole: nothing to cut; reading gives the events as appended (rawMore is not part of them).
        do {
            let t = try Transcript(folder: dir.path)
            #expect(t.repair.isClean)
            #expect(t.lastSeq == 7)
            #expect(t.lastRawOffset == 777)
            #expect(try t.read(4...6).collect() == group)
        }
        // A crash after the group's second line: the two written lines of it are cut too, so the
        // raw line at 777 is read again and gives all three.
        let index = readBytes(dir.file(Transcript.indexFileName))
        let sixth = Int(IndexSync.value(index, 5 * 8))
        let fourth = Int(IndexSync.value(index, 3 * 8))
        truncateFile(path, to: Int64(sixth + 10))
        let t = try Transcript(folder: dir.path)
        #expect(t.lastSeq == 3)
        #expect(t.repair.incompleteGroupEvents == 2)
        #expect(t.repair.tornBytes == 10)
        #expect(t.repair.savedTo == nil)
        #expect(fileSize(path) == Int64(fourth))
        #expect(t.lastRawOffset == 200)
        try t.append(group)
        #expect(try t.read(from: 1).collect().map(\.seq) == [1, 2, 3, 4, 5, 6])
    }

    @Test(arguments: ["delete", "truncate", "corrupt", "extend", "zero"])
    func theIndexIsRebuiltFromTheTranscript(_ damage: String) throws {
        let dir = TempFolder("transcript")
        let events = Events.range(1...2_000)
        do { try Self.write(events, to: Transcript(folder: dir.path)) }
        let indexPath = dir.file(Transcript.indexFileName)
        let good = readBytes(indexPath)
        let expectedFrom: Int64
        switch damage {
        case "delete":
            try FileManager.default.removeItem(atPath: indexPath)
            expectedFrom = 1
        case "truncate":
            truncateFile(indexPath, to: 37)
            expectedFrom = 5
        case "corrupt":
            var bytes = good
            for i in (1_499 * 8)..<(1_499 * 8 + 8) { bytes[i] ^= 0x5A }
            writeBytes(bytes, to: indexPath)
            expectedFrom = 1_500
        case "extend":
            writeBytes(good + [UInt8](repeating: 7, count: 8 * 3 + 5), to: indexPath)
            expectedFrom = 2_001
        default:
            writeBytes([UInt8](repeating: 0, count: good.count), to: indexPath)
            expectedFrom = 2
        }
        let t = try Transcript(folder: dir.path)
        #expect(t.repair.indexRewrittenFrom == expectedFrom)
        #expect(t.repair.lengthBefore == t.repair.lengthAfter)
        #expect(readBytes(indexPath) == good)
        var rng = SeededRandom(seed: 3)
        for _ in 0..<50 {
            let seq = Int64.random(in: 1...2_000, using: &rng)
            #expect(try t.read(from: seq).next() == events[Int(seq - 1)])
        }
        try t.append([Events.make(2_001)])
        #expect(try t.read(from: 2_000).collect() == [events[1_999], Events.make(2_001)])
    }

    @Test func lastRawOffsetLooksPastHostEvents() throws {
        let dir = TempFolder("transcript")
        do {
            let t = try Transcript(folder: dir.path)
            try t.append([Events.make(1, rawOffset: 4_242)])
            // Host events after it, some with "rawOffset" inside their content (escaped, or nested).
            try t.append((2...40).map { Events.make(Int64($0), rawOffset: .some(nil)) })
            #expect(t.lastRawOffset == 4_242)
        }
        let t = try Transcript(folder: dir.path)
        #expect(t.lastRawOffset == 4_242)
        t.close()
        let empty = TempFolder("transcript")
        let none = try Transcript(folder: empty.path)
        #expect(none.lastRawOffset == nil)
        try none.append([Events.make(1, rawOffset: .some(nil))])
        #expect(none.lastRawOffset == nil)
    }

    @Test func oneWriterAtATime() throws {
        let dir = TempFolder("transcript")
        let first = try Transcript(folder: dir.path)
        let error = #expect(throws: StoreError.self) { try Transcript(folder: dir.path) }
        #expect(error?.code == .locked)
        first.close()
        let second = try Transcript(folder: dir.path)
        try second.append([Events.make(1)])
        let closed = #expect(throws: StoreError.self) { try first.append([Events.make(2)]) }
        #expect(closed?.code == .closed)
    }

    @Test func aCursorStopsAtTheSeqThatExistedWhenItWasMade() throws {
        let dir = TempFolder("transcript")
        let t = try Transcript(folder: dir.path)
        try t.append(Events.range(1...10))
        let cursor = try t.read(from: 4)
        try t.append(Events.range(11...20))
        t.close()
        #expect(try cursor.collect() == Events.range(4...10))
    }
}

/// Tests that watch the process's memory. Resident memory is a property of the whole process,
/// and other tests running beside one would move it, so each runs in a process of its own
/// (`IsolatedTest`) and reports through its exit status and output.
@Suite struct StoreMemoryTests {
    @Test func readingDoesNotGrowWithTranscriptLength() async throws {
        let child = try await IsolatedTest.run("transcript-reading-memory", filter: "readingMemoryInAProcessOfItsOwn")
        #expect(child.status == 0, "\(child.output)")
        #expect(child.output.contains("readingMemoryInAProcessOfItsOwn() passed"), "\(child.output)")
    }

    @Test(.enabled(if: IsolatedTest.isChild("transcript-reading-memory")))
    func readingMemoryInAProcessOfItsOwn() {
        StoreMemoryTests.readingChild()
    }

    static func readingChild() {
        var failures: [String] = []
        func check(_ condition: Bool, _ message: @autoclosure () -> String = "") {
            if !condition { failures.append(message()) }
        }
        do {
            try readingBody(check)
        } catch {
            failures.append("\(error)")
        }
        if !failures.isEmpty {
            FileHandle.standardError.write(Data(("FAIL: " + failures.joined(separator: "\nFAIL: ") + "\n").utf8))
            exit(1)
        }
    }

    static func readingBody(_ check: (Bool, @autoclosure () -> String) -> Void) throws {
        let dir = TempFolder("memory")
        let count: Int64 = 12_000
        do {
            let t = try Transcript(folder: dir.path)
            var seq: Int64 = 1
            while seq <= count {
                let upper = min(count, seq + 99)
                try t.append(Events.range(seq...upper, textSize: 4_000), sync: false)
                seq = upper + 1
            }
            try t.sync()
        }
        let size = fileSize(dir.file(Transcript.fileName))
        check(size > 35_000_000, "the transcript is \(size) bytes")

        let t = try Transcript(folder: dir.path)
        let before = residentBytes()
        var peak = before
        var seen: Int64 = 0
        let cursor = try t.read(from: 1)
        while let event = try cursor.next() {
            seen += 1
            check(event.seq == seen, "seq \(event.seq) where \(seen) was due")
            if seen % 500 == 0 { peak = max(peak, residentBytes()) }
        }
        check(seen == count, "read \(seen) of \(count) events")
        // The whole file would be 35+ MB as bytes (and more parsed); reading holds one line.
        check(peak - before < 16_000_000, "resident memory grew by \(peak - before) bytes reading \(size) bytes")

        // The probe would have seen a reader that keeps what it reads: half the events, kept,
        // take well over the bound.
        let kept = try t.read(1...(count / 2)).collect()
        let holding = residentBytes()
        check(kept.count == Int(count / 2), "kept \(kept.count)")
        check(holding - before > 16_000_000, "keeping \(kept.count) events grew resident memory by only \(holding - before) bytes")
    }
}

@Suite struct StoreLargeLineTests {
    @Test func aTwentyMegabyteLineGoesInAndOutInChunks() throws {
        let dir = TempFolder("bigline")
        let journal = try RawJournal(folder: dir.path, creatingWith: RawJournalTests.header)
        // 20 MB with quotes, backslashes, newlines, non-ASCII and invalid bytes spread through it.
        var pattern = Array("{\"text\":\"é \\\"quoted\\\" \n tab\t 😀 ".utf8) + [0xFF, 0xC3] + Array(" plain ascii run ".utf8)
        while pattern.count < 4096 { pattern += Array("0123456789abcdef".utf8) }
        let total = 20 * 1024 * 1024
        let offset = try journal.appendStreaming(direction: .out, t: 1.5) { (w: inout RawLineWriter) throws(StoreError) in
            var written = 0
            var chunk: [UInt8] = []
            while written < total {
                chunk.removeAll(keepingCapacity: true)
                while chunk.count < 1 << 20, written + chunk.count < total { chunk += pattern }
                let take = min(chunk.count, total - written)
                try w.write(Array(chunk[0..<take]))
                written += take
            }
        }
        let small = try journal.append(direction: .in, line: "after", t: 2)
        #expect(journal.endOffset == fileSize(journal.path))

        let cursor = try journal.records(from: offset)
        let record = try #require(try cursor.next())
        #expect(record.offset == offset)
        #expect(record.line.count == total)
        var expected: [UInt8] = []
        expected.reserveCapacity(total)
        while expected.count < total { expected += pattern }
        expected.removeLast(expected.count - total)
        // The same bytes, written in 1 MiB pieces that split multi-byte sequences anywhere.
        #expect(record.line == expected)
        #expect(try cursor.next() == RawRecord(offset: small, t: 2, direction: .in, line: Array("after".utf8)))
        #expect(try cursor.next() == nil)

        journal.close()
        let reopened = try RawJournal(folder: dir.path)
        #expect(reopened.repair.isClean)
    }
}
