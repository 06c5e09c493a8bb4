import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// Mistral Vibe (`vibe-acp` from the pinned `mistral-vibe` wheel, its own Python 3.12
/// virtualenv) with the real daemon, `--backend vibe`, against the scripted chat-completions mock
/// on loopback (Tests/Peers/mock_chat.py) through a private VIBE_HOME.
@Suite(.serialized, .enabled(if: VibePeer.binary != nil || Peers.isCI, "needs NUCLEIC_VIBE_BIN (scripts/peers.sh)"))
struct VibeEndToEndTests: AcpAgentSuite {
    init() throws { try TestReaper.becomeSubreaper() }

    func withVibe(_ body: (DaemonHarness) async throws -> Void) async throws {
        let binary = try Peers.require(VibePeer.binary, "NUCLEIC_VIBE_BIN")
        let mock = try await MockModelAPI.start("mock_chat.py")
        try await withHome("vibe") { home in try await withVibe(binary, mock, home, body) }
    }

    private func withVibe(_ binary: String, _ mock: MockModelAPI, _ home: String, _ body: (DaemonHarness) async throws -> Void) async throws {
        try """
            active_model = "mock"
            enable_auto_update = false

            [[providers]]
            name = "mock"
            api_base = "\(mock.baseURL)/v1"
            api_key_env_var = "MOCK_API_KEY"
            api_style = "openai"

            [[models]]
            name = "mock-model"
            provider = "mock"
            alias = "mock"

            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        do {
            try await DaemonHarness.with(environment: [
                "NUCLEIC_VIBE_BIN": binary, "VIBE_HOME": home, "HOME": home, "MOCK_API_KEY": "test",
            ], body)
        } catch {
            await mock.stop()
            throw error
        }
        await mock.stop()
    }

    static let options = ["--backend", "vibe"]

    @Test func aCommandApprovedThenDeniedInAFollowUp() async throws {
        try await withVibe { d in
            let id = try await d.start("[[scenario:bash]] run it", Self.options)
            let approval = try await d.approval(id)
            #expect(approval.toolName == "Bash" && approval.input["command"]?.stringValue == "echo hi > out.txt", "\(approval)")
            #expect(approval.risk == .write)
            _ = try await d.ok(["approve", approval.id.rawValue])
            let first = try await turns(d, id, 1)
            #expect(d.contents(d.worktree(id) + "/out.txt") == "hi\n")
            #expect(finalTexts(first).last == "done with bash")
            try FileManager.default.removeItem(atPath: d.worktree(id) + "/out.txt")

            _ = try await d.ok(["send", id, "[[scenario:bash]] again"])
            let second = try await d.approval(id)
            _ = try await d.ok(["deny", second.id.rawValue, "--message", "not again"])
            let events = try await turns(d, id, 2)
            #expect(d.contents(d.worktree(id) + "/out.txt") == nil)
            #expect(runs(events).map(\.isError) == [false, false])
            #expect(events.filter { $0.event.kind == "sessionStarted" }.count == 1, "the same agent took the follow-up")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    /// The manifest switches Vibe to its `ask` mode, so a file write comes to the host too.
    @Test func aFileWriteAsksInAskMode() async throws {
        try await withVibe { d in
            let id = try await d.start("[[scenario:write]] make hello", Self.options)
            let approval = try await d.approval(id)
            #expect(approval.toolName == "Edit" && approval.input["file_path"]?.stringValue == d.worktree(id) + "/hello.txt", "\(approval)")
            _ = try await d.ok(["approve", approval.id.rawValue])
            _ = try await turns(d, id, 1)
            #expect(d.contents(d.worktree(id) + "/hello.txt") == "hello\n")
            let raw = try rawJournal(d, id)
            #expect(raw.contains(#"session/set_mode"#) && raw.contains(#"\"modeId\":\"ask\""#))
        }
    }

    @Test func allowAlwaysIsAHostRuleForTheNextCommand() async throws {
        try await withVibe { d in
            let id = try await d.start("[[scenario:bash]] run it", Self.options)
            let approval = try await d.approval(id)
            _ = try await d.ok(["approve", approval.id.rawValue, "--always", "tool"])
            _ = try await turns(d, id, 1)
            _ = try await d.ok(["send", id, "[[scenario:bash]] again"])
            let events = try await turns(d, id, 2)
            let resolved = resolutions(events)
            let log = try await d.ok(["log", id])
            #expect(resolved.count == 2 && resolved.last?.decidedBy.hasPrefix("rule:") == true, "\(resolved)\n\(log)")
            let raw = try rawJournal(d, id)
            #expect(!raw.contains(#"\"outcome\":\"selected\",\"optionId\":\"allow_always"#), "Vibe was told allow_once")
        }
    }

    @Test func cancelMidTurn() async throws {
        try await withVibe { d in
            let id = try await d.start("[[scenario:slow]] wait", Self.options)
            _ = try await eventually(timeout: .seconds(60)) { try await d.events(id).contains { $0.event.kind == "assistantText" } ? true : nil }
            _ = try await d.ok(["interrupt", id])
            let events = try await turns(d, id, 1)
            #expect(runs(events).map(\.stopReason) == ["interrupted"], "\(runs(events))")
            #expect(try await d.waitFor(id, ["awaitingInput", "finished", "error"]) == "awaitingInput")
        }
    }

    @Test func aModelErrorEndsTheTurn() async throws {
        try await withVibe { d in
            let id = try await d.start("[[scenario:error]] fail", Self.options)
            let events = try await turns(d, id, 1)
            #expect(runs(events).last?.isError == true, "\(runs(events)) \(events.map(\.event.kind))")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    @Test func survivesADaemonKilledWithSIGKILL() async throws {
        try await withVibe { d in
            let id = try await d.start("[[scenario:bash]] run it", Self.options)
            try await expectAnApprovalSurvivesADaemonKilledWithSIGKILL(d, id)
        }
    }
}

enum VibePeer {
    static let binary: String? = {
        guard let path = ProcessInfo.processInfo.environment["NUCLEIC_VIBE_BIN"], FileManager.default.isExecutableFile(atPath: path) else { return nil }
        return path
    }()
}
