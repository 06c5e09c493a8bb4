import Foundation
import NucleicProtocol
import NucleicTestSupport
import Testing
@testable import NucleicStore

/// Running out of space is an error with the path and errno, never a crash, and leaves files
/// that reopen cleanly with everything written before the failure.
@Suite struct FullDiskTests {
    /// A 256 KiB tmpfs mounted on a temp folder (needs root and a kernel that lets us mount).
    final class TinyFileSystem {
        let folder = TempFolder("tmpfs")
        let mounted: Bool

        init() {
            mounted = geteuid() == 0 && run(["/bin/mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", folder.path]).status == 0
        }

        deinit { if mounted { run(["/bin/umount", folder.path]) } }

        static let available: Bool = TinyFileSystem().mounted
    }

    @Test(.enabled(if: TinyFileSystem.available, "needs permission to mount a tmpfs"))
    func aFullDiskIsACleanErrorForTheRawJournal() throws {
        let fs = TinyFileSystem()
        try #require(fs.mounted)
        let path = fs.folder.file(RawJournal.fileName)
        let journal = try RawJournal(path: path, creatingWith: RawJournalTests.header)
        let line = [UInt8](repeating: UInt8(ascii: "x"), count: 10_000)
        var written: [Int64] = []
        var failure: StoreError?
        for _ in 0..<100 {
            do throws(StoreError) {
                written.append(try journal.append(direction: .out, line: line, t: 1))
            } catch {
                failure = error
                break
            }
        }
        let error = try #require(failure)
        #expect(error.code == .diskFull)
        #expect(error.errno == ENOSPC)
        #expect(error.path == path)
        #expect(error.message.contains(path))
        #expect(error.message.contains("out of space (No space left on device)"))
        #expect(written.count > 10)
        // Nothing of the failed record is left; the journal goes on once there is room.
        #expect(fileSize(path) == journal.endOffset)
        let after = try journal.append(direction: .in, line: "small", t: 2)
        #expect(after == journal.endOffset - Int64(#"{"t":2.0,"dir":"in","line":"small"}"#.utf8.count + 1))
        journal.close()
        let reopened = try RawJournal(path: path)
        #expect(reopened.repair.isClean)
        let records = try reopened.records().collectAll()
        #expect(records.count == written.count + 1)
        #expect(records.dropLast().allSatisfy { $0.line == line })
    }

    @Test(.enabled(if: TinyFileSystem.available, "needs permission to mount a tmpfs"))
    func aFullDiskIsACleanErrorForTheTranscript() throws {
        let fs = TinyFileSystem()
        try #require(fs.mounted)
        let transcript = try Transcript(folder: fs.folder.path)
        var seq: Int64 = 1
        var failure: StoreError?
        while seq < 10_000 {
            do throws(StoreError) {
                try transcript.append(Events.range(seq...(seq + 4), textSize: 2_000))
                seq += 5
            } catch {
                failure = error
                break
            }
        }
        let error = try #require(failure)
        #expect(error.code == .diskFull)
        #expect(error.errno == ENOSPC)
        #expect(error.path == transcript.path || error.path == transcript.indexPath)
        #expect(transcript.lastSeq == seq - 1)
        #expect(fileSize(transcript.path) == transcript.endOffset)
        #expect(fileSize(transcript.indexPath) == (seq - 1) * 8)
        transcript.close()
        let reopened = try Transcript(folder: fs.folder.path)
        #expect(reopened.repair.isClean)
        #expect(reopened.lastSeq == seq - 1)
        #expect(try reopened.read(from: 1).collect() == Events.range(1...(seq - 1), textSize: 2_000))
    }

    /// The same through the file size limit (what works without root): RLIMIT_FSIZE with SIGXFSZ
    /// ignored makes writes past the limit fail with EFBIG. The limit is per process, so this runs
    /// in a process of its own (`IsolatedTest`) where it cannot disturb others.
    @Test func aFileSizeLimitIsACleanError() async throws {
        let child = try await IsolatedTest.run("file-size-limit", filter: "fileSizeLimitInAProcessOfItsOwn")
        #expect(child.status == 0, "\(child.output)")
        #expect(child.output.contains("fileSizeLimitInAProcessOfItsOwn() passed"), "\(child.output)")
    }

    @Test(.enabled(if: IsolatedTest.isChild("file-size-limit")))
    func fileSizeLimitInAProcessOfItsOwn() {
        FullDiskTests.fileSizeLimitChild()
    }

    static func fileSizeLimitChild() {
        func fail(_ message: String) -> Never {
            FileHandle.standardError.write(Data("FAIL: \(message)\n".utf8))
            exit(1)
        }
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit)
        limit.rlim_cur = 300_000
        guard setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0 else { fail("setrlimit: errno \(errno)") }
        let folder = TempFolder("fsize")
        do {
            let journal = try RawJournal(folder: folder.path, creatingWith: RawJournalTests.header)
            let line = [UInt8](repeating: UInt8(ascii: "y"), count: 70_000)
            var count = 0
            var failure: StoreError?
            while count < 100 {
                do throws(StoreError) {
                    try journal.append(direction: .out, line: line, t: 0)
                    count += 1
                } catch {
                    failure = error
                    break
                }
            }
            guard let failure else { fail("no error past the limit") }
            guard failure.code == .diskFull, failure.errno == EFBIG, failure.path == journal.path else { fail("unexpected \(failure)") }
            guard count == 4, fileSize(journal.path) == journal.endOffset else {
                fail("count \(count), size \(fileSize(journal.path)), end \(journal.endOffset)")
            }
            journal.close()
            let reopened = try RawJournal(folder: folder.path)
            guard reopened.repair.isClean, try reopened.records().collectAll().count == 4 else { fail("reopen: \(reopened.repair)") }

            let transcript = try Transcript(folder: folder.path)
            var seq: Int64 = 1
            var transcriptFailure: StoreError?
            while seq < 1_000 {
                do throws(StoreError) {
                    try transcript.append(Events.range(seq...(seq + 9), textSize: 5_000))
                    seq += 10
                } catch {
                    transcriptFailure = error
                    break
                }
            }
            guard let transcriptFailure, transcriptFailure.code == .diskFull, transcriptFailure.errno == EFBIG else {
                fail("transcript: \(String(describing: transcriptFailure))")
            }
            guard fileSize(transcript.path) == transcript.endOffset, transcript.lastSeq == seq - 1 else { fail("transcript size") }
            transcript.close()
            let again = try Transcript(folder: folder.path)
            guard again.repair.isClean, again.lastSeq == seq - 1, try again.read(from: 1).collect().count == Int(seq - 1) else {
                fail("transcript reopen: \(again.repair)")
            }
        } catch {
            fail("\(error)")
        }
    }
}
