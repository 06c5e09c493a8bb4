import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicTestSupport
import Testing

/// What the end-to-end suites of real ACP agents (Vibe, Kimi) share: a private home folder for
/// the agent's configuration, and readings of a session's events.
protocol AcpAgentSuite {}

extension AcpAgentSuite {
    /// A fresh folder for the agent's home (its configuration, its sessions), removed after `body`.
    func withHome<T>(_ name: String, _ body: (String) async throws -> T) async throws -> T {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-\(name)-home-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        return try await body(home)
    }

    func runs(_ events: [SequencedEvent]) -> [RunFinished] {
        events.compactMap { if case .runFinished(let run) = $0.event { run } else { nil } }
    }

    func finalTexts(_ events: [SequencedEvent]) -> [String] {
        events.compactMap { if case .assistantText(let text, false) = $0.event { text } else { nil } }
    }

    func errors(_ events: [SequencedEvent]) -> [String] {
        events.compactMap { if case .error(let code, let message, _) = $0.event { "\(code): \(message)" } else { nil } }
    }

    func resolutions(_ events: [SequencedEvent]) -> [ApprovalResolution] {
        events.compactMap { if case .approvalResolved(let r) = $0.event { r } else { nil } }
    }

    /// The session's events once `count` turns have finished.
    func turns(_ d: DaemonHarness, _ id: String, _ count: Int) async throws -> [SequencedEvent] {
        try await eventually(timeout: .seconds(90)) {
            let events = try await d.events(id)
            return runs(events).count >= count ? events : nil
        }
    }

    func rawJournal(_ d: DaemonHarness, _ id: String) throws -> String {
        try String(contentsOfFile: d.home + "/sessions/\(id)/raw.jsonl", encoding: .utf8)
    }

    /// The daemon SIGKILLed while session `id` waits for its approval of a command that writes
    /// `hi` to `out.txt`: the next daemon adopts the session (no second `sessionStarted`), the
    /// approval is still pending, and approving it lets the command run and the turn finish.
    func expectAnApprovalSurvivesADaemonKilledWithSIGKILL(_ d: DaemonHarness, _ id: String) async throws {
        let approval = try await d.approval(id)
        try await d.killDaemon()
        #expect(try await d.approvals(id).map(\.id) == [approval.id], "the approval is still pending")
        d.noteDaemon()
        _ = try await d.ok(["approve", approval.id.rawValue])
        let events = try await turns(d, id, 1)
        #expect(d.contents(d.worktree(id) + "/out.txt") == "hi\n")
        #expect(events.filter { $0.event.kind == "sessionStarted" }.count == 1, "adopted, not resumed")
        #expect(errors(events).isEmpty, "\(errors(events))")
    }
}
