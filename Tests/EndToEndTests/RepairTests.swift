import Foundation
import NucleicProtocol
import NucleicRuntime
import NucleicHarness
import NucleicTestSupport
import Testing

/// Repairs say so: a transcript torn while no daemon ran is repaired when the next daemon starts
/// (not at the session's next write), and the repair is in the daemon log, in the transcript as
/// a `notice` (code `repaired`), and in `nucleic doctor`; the store's count of events and what a
/// reader gets agree.
@Suite struct RepairTests {
    @Test(arguments: [false, true])
    func aTornTranscriptIsRepairedAtStartAndReportedByDoctor(killTheShimToo: Bool) async throws {
        try TestReaper.becomeSubreaper()
        let fixture = Fixture.root.appendingPathComponent("claude/plain.jsonl").path
        try await DaemonHarness.with { d in
            let id = try await d.start("torn", ["--backend", "replay", "--fixture", fixture])
            try await d.waitFor(id, ["finished"])
            let before = try await d.events(id)
            #expect(!before.isEmpty)
            // With the shim gone, start-up repairs the session; with it alive, adoption does.
            _ = try await d.ok(killTheShimToo ? ["stop-daemon", "--kill-sessions"] : ["stop-daemon"])
            if killTheShimToo { _ = try await eventually { d.shims().isEmpty ? true : nil } }

            let transcript = d.home + "/sessions/\(id)/transcript.jsonl"
            let torn = #"{"seq":\#(before.count + 1),"ts":"2026-12-02T10:00:00.000Z","kind":"assist"#
            let handle = try #require(FileHandle(forWritingAtPath: transcript))
            handle.seekToEndOfFile()
            handle.write(Data(torn.utf8))
            try handle.close()

            // Any command starts the daemon; the repair is made before it serves.
            _ = try await d.ok(["ls"])
            d.noteDaemon()
            let log = d.contents(d.home + "/run/daemon.log") ?? ""
            #expect(log.contains("session \(id): repaired transcript.jsonl: cut \(torn.utf8.count) bytes of an unfinished last line"), "\(log)")

            let after = try await d.events(id)
            #expect(after.map(\.seq) == (1...Int64(after.count)).map { $0 }, "seq contiguous: \(after.map(\.seq))")
            #expect(Array(after.prefix(before.count)) == before, "nothing before the torn line changed")
            let notices = after.dropFirst(before.count).compactMap { event -> String? in
                if case .notice(_, let message, let code) = event.event, code == "repaired" { message } else { nil }
            }
            #expect(notices.count == 1 && notices[0].contains("transcript.jsonl"), "\(after.dropFirst(before.count))")
            let summary = try await d.summary(id)
            #expect(summary["lastSeq"]?.intValue == Int64(after.count), "the store counts what a reader gets: \(summary)")

            let doctor = try await d.nucleic(["doctor"])
            #expect(doctor.stdout.contains("repaired:\n  session \(id): transcript.jsonl: cut \(torn.utf8.count) bytes"), "\(doctor)")
            #expect(doctor.stdout.contains("modes: none") && doctor.stdout.contains("damaged: none"), "\(doctor)")
            #expect(doctor.status == .exited(0), "\(doctor)")
            let json = try JSONParser.parse(try await d.ok(["doctor", "--json"]))
            #expect(json.arrayValue?.contains { $0["kind"]?.stringValue == "repaired" && $0["sessionID"]?.stringValue == id } == true, "\(json)")
        }
    }
}
