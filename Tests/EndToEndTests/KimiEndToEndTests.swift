import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// Kimi CLI (`kimi acp` from the pinned, archived `kimi-cli` wheel, its own virtualenv, through
/// `bin/kimi-legacy`) with the real daemon, `--backend kimi`, offline: its scripted provider
/// (`_scripted_echo`) answers each model call with the next script of the test's list (text,
/// thinking, tool calls, errors), through a private KIMI_SHARE_DIR. Kimi asks the host for its
/// file writes (`fs/write_text_file`) and runs its commands in the host's terminals
/// (`terminal/create`).
@Suite(.serialized, .enabled(if: KimiPeer.binary != nil || Peers.isCI, "needs NUCLEIC_KIMI_BIN (scripts/peers.sh)"))
struct KimiEndToEndTests: AcpAgentSuite {
    init() throws { try TestReaper.becomeSubreaper() }

    /// One script of the scripted provider: the lines of its echo DSL.
    static func text(_ text: String, thinking: String? = nil) -> String {
        (thinking.map { "think: \($0)\n" } ?? "") + "text: \(text)\nusage: input_other=10 output=5"
    }

    static func tool(_ id: String, _ name: String, _ arguments: [String: String]) -> String {
        let encoded = try! JSONSerialization.data(withJSONObject: arguments, options: [.sortedKeys])
        let call = try! JSONSerialization.data(withJSONObject: ["id": id, "name": name, "arguments": String(decoding: encoded, as: UTF8.self)], options: [.sortedKeys])
        return "tool_call: " + String(decoding: call, as: UTF8.self)
    }

    static func shell(_ id: String, _ command: String) -> String { tool(id, "Shell", ["command": command]) }

    /// A daemon whose Kimi answers model calls with `scripts`, in order.
    func withKimi(_ scripts: [String], model: Bool = true, _ body: (DaemonHarness) async throws -> Void) async throws {
        let binary = try Peers.require(KimiPeer.binary, "NUCLEIC_KIMI_BIN")
        try await withHome("kimi") { home in
            try """
                default_model = "\(model ? "scripted" : "")"
                telemetry = false

                [providers.scripted]
                type = "_scripted_echo"
                base_url = ""
                api_key = ""

                [models.scripted]
                provider = "scripted"
                model = "scripted"
                max_context_size = 100000

                """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
            // `kimi acp` refuses session/new without a Kimi login, whatever the provider: a token
            // that never expires stands in for one (nothing is sent with it offline).
            try FileManager.default.createDirectory(atPath: home + "/credentials", withIntermediateDirectories: true)
            try #"{"access_token":"offline","refresh_token":"","expires_at":0,"scope":"","token_type":"Bearer","expires_in":0}"#
                .write(toFile: home + "/credentials/kimi-code.json", atomically: true, encoding: .utf8)
            let list = try JSONSerialization.data(withJSONObject: scripts)
            try list.write(to: URL(fileURLWithPath: home + "/scripts.json"))
            try await DaemonHarness.with(environment: [
                "NUCLEIC_KIMI_BIN": binary, "KIMI_SHARE_DIR": home, "HOME": home, "KIMI_SCRIPTED_ECHO_SCRIPTS": home + "/scripts.json",
            ], body)
        }
    }

    static let options = ["--backend", "kimi"]

    @Test func textAndThinking() async throws {
        try await withKimi([Self.text("Hello from kimi", thinking: "pondering")]) { d in
            let id = try await d.start("say hello", Self.options)
            let events = try await turns(d, id, 1)
            #expect(finalTexts(events) == ["Hello from kimi"], "\(events.map(\.event.kind))")
            #expect(events.contains { if case .reasoning(let text, _) = $0.event { text.contains("pondering") } else { false } })
            let started = events.compactMap { if case .sessionStarted(let s) = $0.event { s } else { nil } }
            #expect(started.map(\.backend) == ["kimi"] && started.first?.model == "scripted", "\(started)")
            let listed = try await d.ok(["ls"])
            #expect(listed.contains("kimi"), "\(listed)")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    /// Kimi asks before its Shell tool runs; the command then runs in a host terminal (its
    /// whole command line through /bin/sh), which the turn's allowance covers.
    @Test func aCommandApprovedThenDeniedInAFollowUp() async throws {
        try await withKimi([Self.shell("call_s1", "echo hi > out.txt"), Self.text("done with shell"),
                            Self.shell("call_s2", "echo again > out.txt")]) { d in
            let id = try await d.start("run it", Self.options)
            let approval = try await d.approval(id)
            #expect(approval.input.description.contains("echo hi > out.txt"), "\(approval)")
            _ = try await d.ok(["approve", approval.id.rawValue])
            let first = try await turns(d, id, 1)
            #expect(d.contents(d.worktree(id) + "/out.txt") == "hi\n", "\(first.map(\.event.kind))")
            #expect(finalTexts(first).last == "done with shell")
            let raw = try rawJournal(d, id)
            #expect(raw.contains(#"terminal/create"#) && raw.contains(#"\"optionId\":\"approve\""#))
            try FileManager.default.removeItem(atPath: d.worktree(id) + "/out.txt")

            _ = try await d.ok(["send", id, "again"])
            let second = try await d.approval(id)
            _ = try await d.ok(["deny", second.id.rawValue, "--message", "not again"])
            let events = try await turns(d, id, 2)
            #expect(d.contents(d.worktree(id) + "/out.txt") == nil)
            #expect(runs(events).map(\.isError) == [false, false], "\(runs(events))")
            #expect(events.filter { $0.event.kind == "sessionStarted" }.count == 1, "the same agent took the follow-up")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    /// Kimi's WriteFile asks, then writes through the host (`fs/write_text_file`) in the worktree.
    @Test func aFileWriteGoesThroughTheHost() async throws {
        try await withKimi([Self.tool("call_w1", "WriteFile", ["path": "hello.txt", "content": "hello\n"]), Self.text("wrote it")]) { d in
            let id = try await d.start("make hello", Self.options)
            let approval = try await d.approval(id)
            _ = try await d.ok(["approve", approval.id.rawValue])
            let events = try await turns(d, id, 1)
            #expect(d.contents(d.worktree(id) + "/hello.txt") == "hello\n", "\(events.map(\.event.kind))")
            #expect(try rawJournal(d, id).contains(#"fs/write_text_file"#))
            #expect(finalTexts(events).last == "wrote it")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    @Test func allowAlwaysIsAHostRuleForTheNextCommand() async throws {
        try await withKimi([Self.shell("call_s1", "echo hi > out.txt"), Self.text("one"),
                            Self.shell("call_s2", "echo hi > out.txt"), Self.text("two")]) { d in
            let id = try await d.start("run it", Self.options)
            let approval = try await d.approval(id)
            _ = try await d.ok(["approve", approval.id.rawValue, "--always", "tool"])
            _ = try await turns(d, id, 1)
            _ = try await d.ok(["send", id, "again"])
            let events = try await turns(d, id, 2)
            let log = try await d.ok(["log", id])
            #expect(resolutions(events).count >= 2 && resolutions(events).last?.decidedBy.hasPrefix("rule:") == true, "\(resolutions(events))\n\(log)")
            #expect(finalTexts(events).last == "two")
            #expect(!(try rawJournal(d, id)).contains(#"\"outcome\":\"selected\",\"optionId\":\"approve_for_session"#), "Kimi was told approve (once)")
        }
    }

    /// Interrupted while its command runs in a host terminal: Kimi's turn ends cancelled.
    @Test func cancelMidTurn() async throws {
        try await withKimi([Self.shell("call_s1", "sleep 30")]) { d in
            let id = try await d.start("wait", Self.options)
            let approval = try await d.approval(id)
            _ = try await d.ok(["approve", approval.id.rawValue])
            _ = try await eventually(timeout: .seconds(60)) { try rawJournal(d, id).contains("terminal/wait_for_exit") ? true : nil }
            _ = try await d.ok(["interrupt", id])
            let events = try await turns(d, id, 1)
            #expect(runs(events).map(\.stopReason) == ["interrupted"], "\(runs(events))")
            #expect(try await d.waitFor(id, ["awaitingInput", "finished", "error"]) == "awaitingInput")
        }
    }

    /// A provider error (the scripted `error: 400`): Kimi logs it and ends the turn as `end_turn`
    /// with nothing said (its ACP loop stops at the step's interruption, swallowing the error), so
    /// the turn is not an error here either; the session goes on.
    @Test func aModelErrorEndsTheTurnSilently() async throws {
        try await withKimi(["error: 400 scripted failure", Self.text("back")]) { d in
            let id = try await d.start("fail", Self.options)
            let first = try await turns(d, id, 1)
            #expect(runs(first).map(\.isError) == [false] && finalTexts(first).isEmpty, "\(runs(first)) \(first.map(\.event.kind))")
            _ = try await d.ok(["send", id, "again"])
            let events = try await turns(d, id, 2)
            #expect(finalTexts(events) == ["back"])
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    /// An error Kimi does report: with no model configured, `session/prompt` fails (JSON-RPC
    /// -32000, "Authentication required"); the turn ends as an error.
    @Test func anAgentErrorEndsTheTurn() async throws {
        try await withKimi([], model: false) { d in
            let id = try await d.start("fail", Self.options)
            let events = try await turns(d, id, 1)
            #expect(runs(events).last?.isError == true, "\(runs(events)) \(events.map(\.event.kind))")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    @Test func survivesADaemonKilledWithSIGKILL() async throws {
        try await withKimi([Self.shell("call_s1", "echo hi > out.txt"), Self.text("done with shell")]) { d in
            let id = try await d.start("run it", Self.options)
            try await expectAnApprovalSurvivesADaemonKilledWithSIGKILL(d, id)
        }
    }

    /// A command running in a terminal when the daemon is SIGKILLed: the terminal is the shim's
    /// child, so it runs on; the next daemon adopts the shim, and the command's output and exit
    /// still reach Kimi, which finishes its turn. The command ran once.
    @Test func aTerminalOutlivesADaemonKilledWithSIGKILL() async throws {
        try await withKimi([Self.shell("call_s1", "sleep 4; echo late; echo ran >> runs.txt"), Self.text("done after the restart")]) { d in
            let id = try await d.start("run it", Self.options)
            let approval = try await d.approval(id)
            _ = try await d.ok(["approve", approval.id.rawValue])
            _ = try await eventually(timeout: .seconds(60)) { try rawJournal(d, id).contains("terminal/wait_for_exit") ? true : nil }
            try await d.killDaemon()
            d.noteDaemon()
            _ = try await d.ok(["ls"])
            let events = try await turns(d, id, 1)
            let raw = try rawJournal(d, id)
            #expect(raw.contains(#"\"exitCode\":0,\"signal\":null}"#), "the exit reached Kimi")
            #expect(raw.contains(#"\"output\":\"late\\n\""#), "the output reached Kimi")
            #expect(d.contents(d.worktree(id) + "/runs.txt") == "ran\n", "it ran once")
            #expect(finalTexts(events).last == "done after the restart", "\(events.map(\.event.kind))")
            #expect(runs(events).map(\.isError) == [false], "\(runs(events))")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }
}

enum KimiPeer {
    static let binary: String? = {
        guard let path = ProcessInfo.processInfo.environment["NUCLEIC_KIMI_BIN"], FileManager.default.isExecutableFile(atPath: path) else { return nil }
        return path
    }()
}
