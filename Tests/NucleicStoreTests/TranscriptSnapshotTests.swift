import Foundation
import NucleicProtocol
import NucleicTestSupport
import Testing
@testable import NucleicStore

/// The read-only view of a stored transcript: it reads what it returns, trusts the index only
/// where it checks out, and says "needs the repairing open" (nil) for every kind of damage a
/// crash or a lagging index leaves.
@Suite struct TranscriptSnapshotTests {
    @Test func readsFromAnySeqWhatWasWritten() throws {
        let dir = TempFolder("snapshot")
        let events = Events.range(1...3_000)
        do { try TranscriptTests.write(events, to: Transcript(folder: dir.path)) }
        let snapshot = try #require(TranscriptSnapshot.open(folder: dir.path))
        #expect(snapshot.lastSeq == 3_000)
        #expect(snapshot.endOffset == fileSize(dir.file(Transcript.fileName)))
        for seq: Int64 in [1, 2, 1_500, 2_999, 3_000] {
            #expect(try #require(snapshot.read(from: seq)).collect() == Array(events[Int(seq - 1)...]))
        }
        #expect(try #require(snapshot.read(from: -3)).next() == events[0])
        #expect(try #require(snapshot.read(from: 3_001)).collect().isEmpty)
    }

    @Test func anEmptyTranscriptIsAnEmptySnapshot() throws {
        let dir = TempFolder("snapshot")
        do { _ = try Transcript(folder: dir.path) }
        let snapshot = try #require(TranscriptSnapshot.open(folder: dir.path))
        #expect(snapshot.lastSeq == 0)
        #expect(try #require(snapshot.read(from: 1)).collect().isEmpty)
        #expect(TranscriptSnapshot.open(folder: dir.path + "/missing") == nil)
    }

    /// It takes no lock: a writer may hold the transcript, and what the writer appends after the
    /// snapshot was taken is not in it.
    @Test func itNeitherLocksNorSeesLaterAppends() throws {
        let dir = TempFolder("snapshot")
        let writer = try Transcript(folder: dir.path)
        try writer.append(Events.range(1...10))
        let snapshot = try #require(TranscriptSnapshot.open(folder: dir.path))
        try writer.append(Events.range(11...20))
        #expect(snapshot.lastSeq == 10)
        #expect(try #require(snapshot.read(from: 5)).collect() == Events.range(5...10))
        writer.close()
        let reopened = try Transcript(folder: dir.path)
        #expect(reopened.lastSeq == 20, "the snapshot held no lock")
    }

    @Test(arguments: ["torn tail", "index behind", "index ahead", "index not a whole entry", "unfinished group", "garbage last line", "index gone"])
    func damageMeansTheRepairingOpen(_ damage: String) throws {
        let dir = TempFolder("snapshot")
        let path = dir.file(Transcript.fileName)
        let indexPath = dir.file(Transcript.indexFileName)
        do {
            let t = try Transcript(folder: dir.path)
            try t.append(Events.range(1...20))
            if damage == "unfinished group" {
                try t.append((21...23).map { Events.make(Int64($0), rawOffset: 900) })
            }
        }
        let index = readBytes(indexPath)
        switch damage {
        case "torn tail": writeBytes(readBytes(path) + Array(#"{"seq":21,"ts":1,"#.utf8), to: path)
        case "index behind": truncateFile(indexPath, to: 19 * 8)
        case "index ahead": writeBytes(index + index.suffix(8), to: indexPath)
        case "index not a whole entry": writeBytes(index + [1, 2, 3], to: indexPath)
        case "unfinished group":
            // The crash came after the group's second line: its last line still says rawMore.
            truncateFile(path, to: Int64(IndexSync.value(index, 22 * 8)))
            truncateFile(indexPath, to: 22 * 8)
        case "garbage last line":
            let last = Int(IndexSync.value(index, 19 * 8))
            writeBytes(Array(readBytes(path)[..<last]) + Array(#"{"seq":20,"ts":}"#.utf8) + [0x0A], to: path)
        default: unlink(indexPath)
        }
        #expect(TranscriptSnapshot.open(folder: dir.path) == nil, "\(damage)")
        // The repairing open then makes the files agree, and a snapshot works again.
        do { _ = try Transcript(folder: dir.path) }
        #expect(TranscriptSnapshot.open(folder: dir.path) != nil, "\(damage), after repair")
    }

    /// An entry in the middle that points at the wrong line (the index is not synced, so a power
    /// loss can leave such pages) refuses that read, not the whole snapshot.
    @Test func aWrongEntryRefusesItsRead() throws {
        let dir = TempFolder("snapshot")
        let indexPath = dir.file(Transcript.indexFileName)
        do { try Transcript(folder: dir.path).append(Events.range(1...20)) }
        var index = readBytes(indexPath)
        index.replaceSubrange((9 * 8)..<(10 * 8), with: index[(3 * 8)..<(4 * 8)])  // seq 10 → seq 4's line
        writeBytes(index, to: indexPath)
        let snapshot = try #require(TranscriptSnapshot.open(folder: dir.path))
        #expect(snapshot.read(from: 10) == nil)
        #expect(try #require(snapshot.read(from: 9)).collect() == Events.range(9...20))
    }
}
