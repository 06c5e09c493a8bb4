import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// The recordings of the real ACP agents (Fixtures/acp/kimi-*, vibe-*) replayed under the real
/// daemon by the replay agent: no Kimi, no Vibe, no model. The host serves what the recording's
/// agent asked of its host (Kimi's terminal and file write) in the session's worktree, and the
/// replay agent checks that the host answered as the recorded one did.
@Suite(.serialized) struct AcpAgentReplayTests: AcpAgentSuite {
    init() throws { try TestReaper.becomeSubreaper() }

    func replay(_ name: String) -> [String] {
        ["--backend", "replay", "--fixture", Fixture.root.appendingPathComponent("acp/\(name).jsonl").path]
    }

    /// Kimi's Shell, allowed: the replayed `terminal/create` (a whole command line, no args) runs
    /// in a terminal of the session's shim in the worktree; its output reaches the replayed agent.
    @Test func kimisAllowedShellRunsInTheWorktree() async throws {
        try await DaemonHarness.with { d in
            let id = try await d.start("run it", replay("kimi-shell-allow"))
            let approval = try await d.approval(id)
            #expect(approval.toolCallID?.hasSuffix("/call_s1") == true && approval.risk == .unknown, "\(approval)")
            _ = try await d.ok(["approve", approval.id.rawValue])
            let events = try await turns(d, id, 1)
            #expect(d.contents(d.worktree(id) + "/out.txt") == "hi\n", "the host ran it in the worktree")
            let raw = try rawJournal(d, id)
            #expect(raw.contains(#"\"output\":\"hi\\n\""#), "the terminal's output went to the agent")
            #expect(finalTexts(events).last == "done with shell")
            #expect(runs(events).map(\.isError) == [false], "\(runs(events))")
            #expect(events.contains { if case .toolCallStarted(let c) = $0.event { c.name == "Bash" && c.toolCallID.hasPrefix("client:") } else { false } })
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    /// Kimi's WriteFile, allowed: the replayed `fs/write_text_file` is served in the worktree.
    @Test func kimisAllowedWriteIsServedInTheWorktree() async throws {
        try await DaemonHarness.with { d in
            let id = try await d.start("make hello", replay("kimi-write"))
            let approval = try await d.approval(id)
            _ = try await d.ok(["approve", approval.id.rawValue])
            let events = try await turns(d, id, 1)
            #expect(d.contents(d.worktree(id) + "/hello.txt") == "hello\n")
            #expect(finalTexts(events).last == "wrote it")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    /// Vibe's bash, denied as recorded: the replay agent hears `reject_once` and plays the rest;
    /// the turn ends as recorded, nothing written.
    @Test func vibesDeniedBashEndsTheTurnAsRecorded() async throws {
        try await DaemonHarness.with { d in
            let id = try await d.start("[[scenario:bash]] run it", replay("vibe-bash-deny"))
            let approval = try await d.approval(id)
            #expect(approval.toolName == "Bash" && approval.input["command"]?.stringValue == "echo hi > out.txt", "\(approval)")
            _ = try await d.ok(["deny", approval.id.rawValue])
            let events = try await turns(d, id, 1)
            #expect(d.contents(d.worktree(id) + "/out.txt") == nil)
            #expect(runs(events).map(\.stopReason) == ["end_turn"], "\(runs(events))")
            #expect(finalTexts(events).last == "done with bash")
            let raw = try rawJournal(d, id)
            #expect(raw.contains(#"\"optionId\":\"reject_once\""#) && raw.contains(#"\"modeId\":\"ask\""#))
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    /// Kimi's failed prompt (no model): a failed turn under the daemon too.
    @Test func kimisAgentErrorIsAFailedTurn() async throws {
        try await DaemonHarness.with { d in
            let id = try await d.start("fail", replay("kimi-agent-error"))
            let events = try await turns(d, id, 1)
            #expect(runs(events).map(\.stopReason) == ["failed"], "\(runs(events))")
            #expect(events.contains { if case .notice(.error, _, "turnFailed") = $0.event { true } else { false } })
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }
}
