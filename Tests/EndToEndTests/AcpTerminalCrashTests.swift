import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// The reference agent's terminals across a daemon killed with SIGKILL (`[[scenario:late]]`: a
/// `terminal/create` of `sh -c 'sleep 3; echo late; echo ran >> runs.txt'`, a write the host
/// asks about). Terminals are children of the session's shim, so they outlive the daemon; the
/// next daemon adopts the shim and serves the agent's calls on them. A `terminal/create` the
/// dead daemon had recorded but not answered never runs twice: `runs.txt` counts the runs.
@Suite(.serialized, .enabled(if: AcpPeer.python != nil || Peers.isCI, "needs NUCLEIC_ACP_PYTHON (scripts/peers.sh)"))
struct AcpTerminalCrashTests: AcpAgentSuite {
    init() throws { try TestReaper.becomeSubreaper() }

    static let options = ["--backend", "acp", "--agent-command", AcpPeer.referenceAgentCommand]

    /// Killed while the command runs (the agent waits in `terminal/wait_for_exit`): the command
    /// goes on in the shim; after the restart its exit and output reach the same agent, which
    /// finishes its turn. It ran once.
    @Test func aRunningTerminalOutlivesADaemonKilledWithSIGKILL() async throws {
        try await DaemonHarness.with { d in
            let id = try await d.start("[[scenario:late]] run", Self.options)
            let approval = try await d.approval(id)
            #expect(approval.toolName == "Bash" && approval.toolCallID?.hasPrefix("client:") == true, "\(approval)")
            _ = try await d.ok(["approve", approval.id.rawValue])
            _ = try await eventually(timeout: .seconds(30)) { try rawJournal(d, id).contains("terminal/wait_for_exit") ? true : nil }
            let sleeper = try #require(d.agents().first { ProcessTable.arguments($0.pid).first == "sleep" }, "the command runs")
            try await d.killDaemon()
            #expect(ProcessTable.entry(sleeper.pid).map { !$0.isZombie } == true, "the command outlived the daemon")
            d.noteDaemon()
            _ = try await d.ok(["ls"])
            let events = try await turns(d, id, 1)
            let raw = try rawJournal(d, id)
            #expect(raw.contains(#"\"exitCode\":0,\"signal\":null}"#), "the exit reached the agent")
            #expect(raw.contains(#"\"output\":\"late\\n\""#), "the output reached the agent")
            #expect(d.contents(d.worktree(id) + "/runs.txt") == "ran\n", "it ran once")
            #expect(finalTexts(events).last == "exit 0: late", "\(finalTexts(events))")
            #expect(runs(events).map(\.isError) == [false], "\(runs(events))")
            #expect(events.filter { $0.event.kind == "sessionStarted" }.count == 1, "adopted, not resumed")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    /// Killed while the `terminal/create` waits for its approval (recorded, unanswered, not
    /// run): the approval is still pending under its id after the restart; allowed, the
    /// command runs, once, and the agent finishes.
    @Test func anUnansweredTerminalCreateStaysPendingAcrossASIGKILLAndRunsOnce() async throws {
        try await DaemonHarness.with { d in
            let id = try await d.start("[[scenario:late]] run", Self.options)
            let first = try await d.approval(id)
            #expect(try rawJournal(d, id).contains("terminal/create"), "the request is recorded")
            try await d.killDaemon()
            d.noteDaemon()
            let again = try await d.approval(id)
            #expect(again.id == first.id, "the same approval")
            _ = try await d.ok(["approve", again.id.rawValue])
            let events = try await turns(d, id, 1)
            #expect(d.contents(d.worktree(id) + "/runs.txt") == "ran\n", "it ran once")
            #expect(finalTexts(events).last == "exit 0: late", "\(finalTexts(events))")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    /// Killed right after the approval: the shim may have started the terminal before the daemon
    /// died, with the agent not yet told. Either way the next daemon answers the recorded
    /// `terminal/create` with the shim's terminal or judges it anew (it never ran): never twice.
    @Test func aTerminalCreateAllowedJustBeforeASIGKILLRunsOnce() async throws {
        try await DaemonHarness.with { d in
            let id = try await d.start("[[scenario:late]] run", Self.options)
            let approval = try await d.approval(id)
            _ = try await d.ok(["approve", approval.id.rawValue])
            try await d.killDaemon()
            d.noteDaemon()
            _ = try await d.ok(["ls"])
            // If the allowance was lost with the daemon, the request is asked again.
            let events = try await eventually(timeout: .seconds(60)) { () async throws -> [SequencedEvent]? in
                if let pending = try await d.approvals(id).first { _ = try await d.ok(["approve", pending.id.rawValue]) }
                let events = try await d.events(id)
                return runs(events).isEmpty ? nil : events
            }
            #expect(d.contents(d.worktree(id) + "/runs.txt") == "ran\n", "it ran once")
            #expect(finalTexts(events).last == "exit 0: late", "\(finalTexts(events))")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }
}
