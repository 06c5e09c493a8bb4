import Foundation
import NucleicAdapters
import NucleicProtocol
import NucleicTestSupport
import Testing

/// The recordings of the real ACP agents in Fixtures/acp (`kimi-*`: Kimi CLI 1.52.0 through its
/// scripted provider; `vibe-*`: Mistral Vibe 2.26.1 against mock_chat.py; recorded by
/// Tests/Peers/record_acp.py --agent kimi|vibe) through the codec, event by event: each event
/// in a short form that names what a person would see (text, tool calls with their ids and
/// inputs, approvals with their risk, decisions, results, notices).
@Suite struct AcpAgentFixtureTests {
    static let zero = Timestamp(millisecondsSince1970: 0)

    func events(_ name: String) throws -> [String] {
        let ids = CountingIDs()
        var codec = AcpCodec(makeApprovalID: { ids.make() })
        return try Fixture.named("acp", name).replay(&codec).map(Self.render)
    }

    static func render(_ event: AgentEvent) -> String {
        func json(_ value: JSONValue) -> String { JSONWriter.string(value) }
        switch event {
        case .sessionStarted(let s): return "started \(s.nativeSessionID ?? "-") model=\(s.model ?? "-") mode=\(s.permissionMode ?? "-")"
        case .userInput(let text): return "user: \(text)"
        case .assistantText(let text, let partial): return (partial ? "text…: " : "text: ") + text
        case .reasoning(let text, let partial): return (partial ? "thinking…: " : "thinking: ") + text
        case .toolCallStarted(let c): return "tool \(c.toolCallID) \(c.name) \(c.toolKind.rawValue) \(json(c.input))"
        case .toolCallInputDelta(let id, let delta): return "input \(id): \(delta)"
        case .toolCallOutputDelta(let id, let delta): return "output \(id): \(delta)"
        case .toolCallCompleted(let r): return "done \(r.toolCallID) \(r.status.rawValue)\(r.exitCode.map { " exit=\($0)" } ?? ""): \(r.output ?? "-")"
        case .diffUpdated(let diff): return "diff: \(diff)"
        case .approvalRequested(let a): return "ask \(a.toolCallID ?? "-") \(a.toolName) \(a.toolKind?.rawValue ?? "-") risk=\(a.risk.rawValue)"
        case .approvalResolved(let r): return "decided \(json(r.decision.json)) by \(r.decidedBy)"
        case .approvalWithdrawn(_, let reason): return "withdrawn: \(reason)"
        case .statusChanged(let status, let reason): return "status \(status) \(reason ?? "")"
        case .usage(let u): return "usage \(u.inputTokens)/\(u.outputTokens)"
        case .runFinished(let r): return "finished \(r.stopReason)\(r.isError ? " error" : ""): \(r.result ?? "-")"
        case .notice(let level, let message, let code): return "notice \(level.rawValue) \(code ?? "-"): \(message)"
        case .error(let code, let message, _): return "error \(code): \(message)"
        case .unknown(_, let kind): return "unknown \(kind ?? "-")"
        }
    }

    /// Kimi thinks, then answers; its commands come with the first prompt.
    @Test func kimiTextAndThinking() throws {
        #expect(try events("kimi-text") == [
            "started 00000000-0000-4000-8000-000000000001 model=scripted mode=default",
            "user: say hello",
            "notice info availableCommands: commands: /init /compact /clear /yolo /afk /plan /add-dir /export /import",
            "thinking…: pondering",
            "text…: Hello from kimi",
            "text: Hello from kimi",
            "finished end_turn: Hello from kimi",
        ])
    }

    /// Kimi's Shell asks (a kind-less tool call: risk unknown); allowed, it runs the whole
    /// command line in a host terminal (`Bash`), waits, reads its output, releases it; its
    /// tool call completes with the terminal.
    @Test func kimiShellAllowedRunsInAHostTerminal() throws {
        #expect(try events("kimi-shell-allow") == [
            "started 00000000-0000-4000-8000-000000000001 model=scripted mode=default",
            "user: run it",
            "notice info availableCommands: commands: /init /compact /clear /yolo /afk /plan /add-dir /export /import",
            "tool 00000000-0000-4000-8000-000000000002/call_s1 Shell: echo hi > out.txt && cat out.txt other {\"title\":\"Shell: echo hi > out.txt && cat out.txt\"}",
            "output 00000000-0000-4000-8000-000000000002/call_s1: {\"command\": \"echo hi > out.txt && cat out.txt\"}",
            "ask 00000000-0000-4000-8000-000000000002/call_s1 Shell__echo_hi___out_txt____cat_out_txt other risk=unknown",
            "decided {\"type\":\"allow\"} by recorded",
            "tool client:1 Bash execute {\"command\":\"echo hi > out.txt && cat out.txt\"}",
            "done client:1 completed: terminal term-1",
            "tool client:2 terminal/wait_for_exit execute {\"terminalId\":\"term-1\"}",
            "done client:2 completed exit=0: exited with code 0",
            "done 00000000-0000-4000-8000-000000000002/call_s1 completed: terminal term-1",
            "text…: done with shell",
            "text: done with shell",
            "finished end_turn: done with shell",
        ])
    }

    /// Denied (`reject`), Kimi fails the tool call and ends the turn without asking its
    /// model again.
    @Test func kimiShellDeniedEndsTheTurn() throws {
        #expect(try events("kimi-shell-deny") == [
            "started 00000000-0000-4000-8000-000000000001 model=scripted mode=default",
            "user: run it",
            "notice info availableCommands: commands: /init /compact /clear /yolo /afk /plan /add-dir /export /import",
            "tool 00000000-0000-4000-8000-000000000002/call_s1 Shell: echo hi > out.txt other {\"title\":\"Shell: echo hi > out.txt\"}",
            "output 00000000-0000-4000-8000-000000000002/call_s1: {\"command\": \"echo hi > out.txt\"}",
            "ask 00000000-0000-4000-8000-000000000002/call_s1 Shell__echo_hi___out_txt other risk=unknown",
            "decided {\"type\":\"deny\",\"message\":\"\"} by recorded",
            "done 00000000-0000-4000-8000-000000000002/call_s1 failed: The tool call is rejected by the user. Stop what you are doing and wait for the user to tell you how to proceed.",
            "finished end_turn: -",
        ])
    }

    /// Kimi's WriteFile asks with a diff, then writes through `fs/write_text_file` (the
    /// host's `Write`).
    @Test func kimiWriteFileGoesThroughTheHost() throws {
        #expect(try events("kimi-write") == [
            "started 00000000-0000-4000-8000-000000000001 model=scripted mode=default",
            "user: make hello",
            "notice info availableCommands: commands: /init /compact /clear /yolo /afk /plan /add-dir /export /import",
            "tool 00000000-0000-4000-8000-000000000002/call_w1 WriteFile: hello.txt other {\"title\":\"WriteFile: hello.txt\"}",
            "output 00000000-0000-4000-8000-000000000002/call_w1: {\"content\": \"hello\\n\", \"path\": \"hello.txt\"}",
            "ask 00000000-0000-4000-8000-000000000002/call_w1 WriteFile__hello_txt other risk=unknown",
            "decided {\"type\":\"allow\"} by recorded",
            "tool client:1 Write edit {\"file_path\":\"/tmp/nucleic-fixture/repo/hello.txt\",\"content\":\"hello\\n\"}",
            "done client:1 completed: wrote 6 bytes",
            "done 00000000-0000-4000-8000-000000000002/call_w1 completed: --- /tmp/nucleic-fixture/repo/hello.txt\nhello",
            "text…: wrote it",
            "text: wrote it",
            "finished end_turn: wrote it",
        ])
    }

    /// A model error: Kimi ends the turn as end_turn with nothing said; the next prompt is
    /// answered.
    @Test func kimiModelErrorIsAnEmptyTurn() throws {
        #expect(try events("kimi-model-error") == [
            "started 00000000-0000-4000-8000-000000000001 model=scripted mode=default",
            "user: fail",
            "notice info availableCommands: commands: /init /compact /clear /yolo /afk /plan /add-dir /export /import",
            "finished end_turn: -",
            "user: again",
            "text…: back",
            "text: back",
            "finished end_turn: back",
        ])
    }

    /// No model configured: session/prompt fails (-32000), a failed turn and a notice.
    @Test func kimiAgentErrorFailsTheTurn() throws {
        #expect(try events("kimi-agent-error") == [
            "started 00000000-0000-4000-8000-000000000001 model= mode=default",
            "user: fail",
            "notice info availableCommands: commands: /init /compact /clear /yolo /afk /plan /add-dir /export /import",
            "notice error turnFailed: acp failed the turn: Authentication required",
            "finished failed error: -",
        ])
    }

    /// Vibe's reasoning (the mock's `reasoning_content`), its text, its context usage,
    /// usage in the prompt's result; its title update is kept as unknown.
    @Test func vibeThinkingThenText() throws {
        #expect(try events("vibe-think") == [
            "notice info contextUsage: context: 0 of 200000 tokens",
            "started 00000000-0000-4000-8000-000000000001 model=- mode=accept-edits",
            "notice info availableCommands: commands: /compact /data-retention /help /leanstall /log /mcp /proxy-setup /reload /retry /teleport /unleanstall /vibe:create-plugin /vibe:skill-creator /vibe:worktree",
            "user: [[scenario:think]] hello",
            "unknown session_info_update",
            "notice info contextUsage: context: 0 of 200000 tokens",
            "thinking…: pondering the mock",
            "notice info contextUsage: context: 0 of 200000 tokens",
            "text…: Hello after thinking.",
            "notice info contextUsage: context: 0 of 200000 tokens",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "text: Hello after thinking.",
            "usage 100/10",
            "finished end_turn: Hello after thinking.",
        ])
    }

    /// Vibe asks before its bash (in `ask` mode); allowed, it runs the command itself: no
    /// terminal/create reaches the host.
    @Test func vibeBashAllowedRunsItself() throws {
        #expect(try events("vibe-bash-allow") == [
            "notice info contextUsage: context: 0 of 200000 tokens",
            "started 00000000-0000-4000-8000-000000000001 model=- mode=accept-edits",
            "notice info availableCommands: commands: /compact /data-retention /help /leanstall /log /mcp /proxy-setup /reload /retry /teleport /unleanstall /vibe:create-plugin /vibe:skill-creator /vibe:worktree",
            "user: [[scenario:bash]] run it",
            "unknown session_info_update",
            "notice info contextUsage: context: 0 of 200000 tokens",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "tool effect-00000000-0000-4000-8000-000000000003 bash: echo hi > out.txt execute {\"title\":\"bash: echo hi > out.txt\",\"rawInput\":{\"command\":\"echo hi > out.txt\"}}",
            "ask effect-00000000-0000-4000-8000-000000000003 Bash execute risk=execute",
            "decided {\"type\":\"allow\"} by recorded",
            "done effect-00000000-0000-4000-8000-000000000003 completed: {\"stdout\":\"\",\"stderr\":\"\",\"output\":\"\",\"truncated\":false}",
            "text…: done with bash",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "text: done with bash",
            "usage 200/20",
            "finished end_turn: done with bash",
        ])
    }

    /// Denied (`reject_once`): the tool call fails, Vibe goes on to its model and ends the turn.
    @Test func vibeBashDeniedFailsTheToolCall() throws {
        #expect(try events("vibe-bash-deny") == [
            "notice info contextUsage: context: 0 of 200000 tokens",
            "started 00000000-0000-4000-8000-000000000001 model=- mode=accept-edits",
            "notice info availableCommands: commands: /compact /data-retention /help /leanstall /log /mcp /proxy-setup /reload /retry /teleport /unleanstall /vibe:create-plugin /vibe:skill-creator /vibe:worktree",
            "user: [[scenario:bash]] run it",
            "unknown session_info_update",
            "notice info contextUsage: context: 0 of 200000 tokens",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "tool effect-00000000-0000-4000-8000-000000000003 bash: echo hi > out.txt execute {\"title\":\"bash: echo hi > out.txt\",\"rawInput\":{\"command\":\"echo hi > out.txt\"}}",
            "ask effect-00000000-0000-4000-8000-000000000003 Bash execute risk=execute",
            "decided {\"type\":\"deny\",\"message\":\"\"} by recorded",
            "output effect-00000000-0000-4000-8000-000000000003: Tool execution denied by approval callback",
            "done effect-00000000-0000-4000-8000-000000000003 failed: Tool execution denied by approval callback",
            "text…: done with bash",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "text: done with bash",
            "usage 200/20",
            "finished end_turn: done with bash",
        ])
    }

    /// Vibe's write_file asks with its diff; allowed, Vibe writes the file itself (no
    /// fs/write_text_file).
    @Test func vibeWriteAsksThenWritesItself() throws {
        #expect(try events("vibe-write") == [
            "notice info contextUsage: context: 0 of 200000 tokens",
            "started 00000000-0000-4000-8000-000000000001 model=- mode=accept-edits",
            "notice info availableCommands: commands: /compact /data-retention /help /leanstall /log /mcp /proxy-setup /reload /retry /teleport /unleanstall /vibe:create-plugin /vibe:skill-creator /vibe:worktree",
            "user: [[scenario:write]] make hello",
            "unknown session_info_update",
            "notice info contextUsage: context: 0 of 200000 tokens",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "tool effect-00000000-0000-4000-8000-000000000003 Writing hello.txt edit {\"title\":\"Writing hello.txt\",\"rawInput\":{\"filePath\":\"/tmp/nucleic-fixture/repo/hello.txt\",\"content\":\"hello\\n\"},\"locations\":[{\"path\":\"/tmp/nucleic-fixture/repo/hello.txt\"}]}",
            "output effect-00000000-0000-4000-8000-000000000003: --- /tmp/nucleic-fixture/repo/hello.txt\nhello\n",
            "ask effect-00000000-0000-4000-8000-000000000003 Edit edit risk=write",
            "decided {\"type\":\"allow\"} by recorded",
            "output effect-00000000-0000-4000-8000-000000000003: \nCreated hello.txt",
            "done effect-00000000-0000-4000-8000-000000000003 completed: --- /tmp/nucleic-fixture/repo/hello.txt\nhello\n\nCreated hello.txt",
            "text…: done with write",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "notice info contextUsage: context: 110 of 200000 tokens",
            "text: done with write",
            "usage 200/20",
            "finished end_turn: done with write",
        ])
    }

    /// A model API 400: the prompt fails (-32603) with the HTTP error, a failed turn.
    @Test func vibeModelErrorFailsTheTurn() throws {
        #expect(try events("vibe-error") == [
            "notice info contextUsage: context: 0 of 200000 tokens",
            "started 00000000-0000-4000-8000-000000000001 model=- mode=accept-edits",
            "notice info availableCommands: commands: /compact /data-retention /help /leanstall /log /mcp /proxy-setup /reload /retry /teleport /unleanstall /vibe:create-plugin /vibe:skill-creator /vibe:worktree",
            "user: [[scenario:error]] fail",
            "unknown session_info_update",
            "notice info contextUsage: context: 0 of 200000 tokens",
            "notice info contextUsage: context: 0 of 200000 tokens",
            "notice error turnFailed: acp failed the turn: Client error '400 Bad Request' for url 'http://127.0.0.1:PORT/v1/chat/completions'\nFor more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/400: scripted failure",
            "finished failed error: -",
        ])
    }

    static let tested = ["kimi-text", "kimi-shell-allow", "kimi-shell-deny", "kimi-write", "kimi-model-error", "kimi-agent-error",
                         "vibe-think", "vibe-bash-allow", "vibe-bash-deny", "vibe-write", "vibe-error"]

    /// A new recording of a real agent gets its own event-by-event test above.
    @Test func everyRealAgentRecordingIsTestedHere() throws {
        let recorded = try Fixture.all("acp").map(\.name).filter { $0.hasPrefix("kimi-") || $0.hasPrefix("vibe-") }
        #expect(Set(recorded) == Set(Self.tested), "\(Set(recorded).symmetricDifference(Self.tested).sorted())")
    }

    /// Which of the host's services each agent used, from the raw lines: Kimi writes and runs
    /// through the host; Vibe, in `ask` mode, asks and then does it itself.
    @Test func kimiUsesTheHostsFilesAndTerminalsVibeDoesNot() throws {
        func methods(_ name: String) throws -> [String] {
            try Fixture.named("acp", name).outLines.compactMap { line in
                guard let m = try? JSONParser.parse(line), m["id"] != nil, let method = m["method"]?.stringValue else { return nil }
                return method
            }
        }
        #expect(try methods("kimi-shell-allow") == ["session/request_permission", "terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"])
        #expect(try methods("kimi-write") == ["session/request_permission", "fs/write_text_file"])
        #expect(try methods("kimi-shell-deny") == ["session/request_permission"])
        for name in ["vibe-bash-allow", "vibe-bash-deny", "vibe-write"] { #expect(try methods(name) == ["session/request_permission"], "\(name)") }
        // Vibe's set_mode (the manifest's `ask`) is in every Vibe recording, after session/new.
        for name in Self.tested where name.hasPrefix("vibe-") {
            let methods = try Fixture.named("acp", name).inLines.compactMap { try? JSONParser.parse($0)["method"]?.stringValue }
            #expect(methods.prefix(4) == ["initialize", "session/new", "session/set_mode", "session/prompt"], "\(name): \(methods)")
        }
    }
}
