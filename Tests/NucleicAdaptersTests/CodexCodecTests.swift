import Foundation
import Testing
import NucleicAdapters
import NucleicProtocol

/// Hand-written lines in the shapes Codex 0.163 writes (copied from real runs, trimmed of fields
/// the codec does not read); the recorded fixtures are checked in CodexFixtureTests.
@Suite struct CodexCodecTests {
    let now = Timestamp(millisecondsSince1970: 1_000)
    let ids = CountingIDs()

    func codec() -> CodexCodec { let ids = ids; return CodexCodec(makeApprovalID: { ids.make() }) }
    func parse(_ line: String) throws -> JSONValue { try JSONParser.parse(line) }
    func approvalID(_ n: Int) -> ApprovalID { ApprovalID("00000000-0000-7000-8000-" + String(repeating: "0", count: 12 - String(n).count) + String(n)) }

    static let thread = "01a22b9e-6402-75b3-a018-be70276e14a7"
    static let turn = "01a22b9e-641b-7c72-b0e0-58e76d7f2425"
    static let initializeResult = #"{"id":1,"result":{"userAgent":"nucleic/0.163.0","codexHome":"/tmp/h","platformFamily":"unix","platformOs":"linux"}}"#
    static let threadResult = #"{"id":2,"result":{"thread":{"id":"\#(thread)","cwd":"/w","model":"gpt-5.5","status":{"type":"idle"}},"model":"gpt-5.5","modelProvider":"mock","cwd":"/w","approvalPolicy":"untrusted","sandbox":{"type":"workspaceWrite"}}}"#
    static let turnResult = #"{"id":3,"result":{"turn":{"id":"\#(turn)","items":[],"status":"inProgress","error":null}}}"#
    static let turnStarted = #"{"method":"turn/started","params":{"threadId":"\#(thread)","turn":{"id":"\#(turn)","items":[],"status":"inProgress","error":null}}}"#
    static let userMessage = #"{"method":"item/started","params":{"item":{"type":"userMessage","id":"u1","clientId":null,"content":[{"type":"text","text":"fix it","text_elements":[]}]},"threadId":"\#(thread)","turnId":"\#(turn)"}}"#
    static func commandItem(_ event: String, id: String = "call_1", command: String = "/bin/bash -lc 'rm -rf build'", status: String = "inProgress", output: String = "null", exit: String = "null") -> String {
        #"{"method":"item/\#(event)","params":{"item":{"type":"commandExecution","id":"\#(id)","command":"\#(command)","cwd":"/w","processId":null,"source":"agent","status":"\#(status)","commandActions":[{"type":"unknown","command":"rm -rf build"}],"aggregatedOutput":\#(output),"exitCode":\#(exit),"durationMs":null},"threadId":"\#(thread)","turnId":"\#(turn)"}}"#
    }
    static func commandApproval(id: Int = 0, decisions: String = #"["accept",{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["rm","-rf","build"]}},"cancel"]"#) -> String {
        #"{"method":"item/commandExecution/requestApproval","id":\#(id),"params":{"kind":"command","threadId":"\#(thread)","turnId":"\#(turn)","itemId":"call_1","startedAtMs":1,"environmentId":"local","command":"/bin/bash -lc 'rm -rf build'","cwd":"/w","reason":"clean up","proposedExecpolicyAmendment":["rm","-rf","build"],"availableDecisions":\#(decisions)}}"#
    }
    static let fileChangeStarted = #"{"method":"item/started","params":{"item":{"type":"fileChange","id":"call_f","changes":[{"path":"/w/notes.txt","kind":{"type":"add"},"diff":"Notes.\n"}],"status":"inProgress"},"threadId":"\#(thread)","turnId":"\#(turn)"}}"#
    static let fileChangeApproval = #"{"method":"item/fileChange/requestApproval","id":1,"params":{"threadId":"\#(thread)","turnId":"\#(turn)","itemId":"call_f","startedAtMs":1,"reason":null,"grantRoot":null}}"#
    static let question = #"{"method":"item/tool/requestUserInput","id":2,"params":{"threadId":"\#(thread)","turnId":"\#(turn)","itemId":"call_q","questions":[{"id":"db_choice","header":"Database","question":"Which database should the tests use?","isOther":true,"isSecret":false,"options":[{"label":"SQLite (Recommended)","description":"Fast and needs no server."},{"label":"Postgres","description":"Closest to production."}]}],"isBlocking":true,"autoResolutionMs":null}}"#
    static func turnCompleted(_ status: String, error: String = "null") -> String {
        #"{"method":"turn/completed","params":{"threadId":"\#(thread)","turn":{"id":"\#(turn)","items":[],"status":"\#(status)","error":\#(error),"durationMs":233}}}"#
    }

    /// A codec whose handshake is done and whose first turn runs.
    func running(planMode: Bool = false) -> CodexCodec {
        var c = codec()
        _ = c.start(SessionStartOptions(prompt: "fix it", cwd: "/w", model: "gpt-5.5", planMode: planMode), now: now)
        for line in [Self.initializeResult, Self.threadResult, Self.turnResult, Self.turnStarted] { _ = c.receive(line: line, now: now) }
        return c
    }

    // MARK: Handshake

    @Test func handshakeStepByStep() throws {
        var c = codec()
        #expect(c.handshake == .notStarted)
        let start = c.start(SessionStartOptions(prompt: "fix it", cwd: "/w", model: "gpt-5.5"), now: now)
        #expect(start.events.isEmpty)
        #expect(start.lines == [#"{"id":1,"method":"initialize","params":{"clientInfo":{"name":"nucleic","title":"Nucleic","version":"0.1.0"},"capabilities":{"experimentalApi":true}}}"#])
        #expect(c.handshake == .initializing && c.queuedPrompts == ["fix it"] && c.threadID == nil)

        // A prompt before the thread exists waits for it.
        let early = try c.send(.prompt("and the docs"), now: now)
        #expect(early == CodecOutput())
        #expect(c.queuedPrompts == ["fix it", "and the docs"])

        let initialized = c.receive(line: Self.initializeResult, now: now)
        #expect(initialized.events.isEmpty)
        #expect(initialized.lines == [
            #"{"method":"initialized"}"#,
            #"{"id":2,"method":"thread/start","params":{"cwd":"/w","model":"gpt-5.5","approvalPolicy":"untrusted","sandbox":"workspace-write"}}"#,
        ])
        #expect(c.handshake == .openingThread)

        let opened = c.receive(line: Self.threadResult, now: now)
        #expect(opened.events == [
            .sessionStarted(SessionStarted(backend: "codex", nativeSessionID: Self.thread, model: "gpt-5.5", cwd: "/w", permissionMode: "untrusted")),
            .userInput(text: "fix it"),
            .userInput(text: "and the docs"),
        ])
        #expect(opened.lines == [
            #"{"id":3,"method":"turn/start","params":{"threadId":"\#(Self.thread)","input":[{"type":"text","text":"fix it"}]}}"#,
            #"{"id":4,"method":"turn/start","params":{"threadId":"\#(Self.thread)","input":[{"type":"text","text":"and the docs"}]}}"#,
        ])
        #expect(c.handshake == .ready && c.threadID == Self.thread && c.queuedPrompts.isEmpty && c.activeTurnID == nil)

        #expect(c.receive(line: Self.turnResult, now: now) == CodecOutput())
        #expect(c.activeTurnID == Self.turn)
        // The second turn/start was a steer: Codex answers with the running turn.
        #expect(c.receive(line: Self.turnResult.replacingOccurrences(of: #""id":3"#, with: #""id":4"#), now: now) == CodecOutput())
        #expect(c.activeTurnID == Self.turn)
        #expect(c.receive(line: Self.turnStarted, now: now) == CodecOutput())
        // The echo of the prompt is dropped: the host showed it when it sent it.
        #expect(c.receive(line: Self.userMessage, now: now) == CodecOutput())

        let interrupt = try c.send(.interrupt, now: now)
        #expect(interrupt.lines == [#"{"id":5,"method":"turn/interrupt","params":{"threadId":"\#(Self.thread)","turnId":"\#(Self.turn)"}}"#])
        _ = c.receive(line: #"{"id":5,"result":{}}"#, now: now)
        _ = c.receive(line: Self.turnCompleted("interrupted"), now: now)
        #expect(c.activeTurnID == nil)
        #expect { try c.send(.interrupt, now: now) } throws: { ($0 as? CodecError)?.code == .notReady }

        // A follow-up between turns is a new turn/start on the same thread.
        let followUp = try c.send(.prompt("now the tests"), now: now)
        #expect(followUp.events == [.userInput(text: "now the tests")])
        #expect(try parse(followUp.lines[0])["method"] == "turn/start")
        #expect(try parse(followUp.lines[0])["params"]?["threadId"] == .string(Self.thread))
    }

    @Test func resumeAndPlanMode() throws {
        var c = codec()
        _ = c.start(SessionStartOptions(prompt: nil, cwd: "/w", resumeID: Self.thread, planMode: true), now: now)
        let steps = c.receive(line: Self.initializeResult, now: now)
        #expect(steps.lines[1] == #"{"id":2,"method":"thread/resume","params":{"threadId":"\#(Self.thread)","cwd":"/w","approvalPolicy":"untrusted","sandbox":"workspace-write","excludeTurns":true}}"#)
        let opened = c.receive(line: Self.threadResult, now: now)
        #expect(opened.lines.isEmpty)  // started idle
        let prompt = try c.send(.prompt("plan it"), now: now)
        let params = try parse(prompt.lines[0])["params"]
        #expect(params?["collaborationMode"] == ["mode": "plan", "settings": ["model": "gpt-5.5", "reasoning_effort": nil, "developer_instructions": nil]])
    }

    @Test func notReadyBeforeStartAndAfterAFailedHandshake() throws {
        var c = codec()
        #expect { try c.send(.prompt("hi"), now: now) } throws: { ($0 as? CodecError)?.code == .notReady }
        #expect { try c.send(.interrupt, now: now) } throws: { ($0 as? CodecError)?.code == .notReady }
        _ = c.start(SessionStartOptions(prompt: "hi", cwd: "/w"), now: now)
        _ = c.receive(line: Self.initializeResult, now: now)
        let refused = c.receive(line: #"{"error":{"code":-32600,"message":"no rollout found for thread id x"},"id":2}"#, now: now)
        #expect(refused.events == [
            .notice(level: .error, message: "Codex refused thread/start: no rollout found for thread id x", code: "requestFailed"),
            .runFinished(RunFinished(isError: true, stopReason: "failed", result: "no rollout found for thread id x")),
        ])
        #expect(c.handshake == .failed("thread/start: no rollout found for thread id x"))
        #expect { try c.send(.prompt("again"), now: now) } throws: { ($0 as? CodecError)?.code == .notReady }
    }

    @Test func refusedTurnStartEndsTheRunOnlyWhenNoTurnRuns() throws {
        var c = running()
        _ = try c.send(.prompt("more"), now: now)  // a steer of the running turn, request 4
        let steer = c.receive(line: #"{"error":{"code":-32600,"message":"turn is not steerable"},"id":4}"#, now: now)
        #expect(steer.events == [.notice(level: .error, message: "Codex refused the prompt (turn/start): turn is not steerable", code: "requestFailed")])
        _ = c.receive(line: Self.turnCompleted("completed"), now: now)
        _ = try c.send(.prompt("next"), now: now)  // request 5
        let refused = c.receive(line: #"{"error":{"code":-32600,"message":"invalid thread id"},"id":5}"#, now: now)
        #expect(refused.events == [
            .notice(level: .error, message: "Codex refused the prompt (turn/start): invalid thread id", code: "requestFailed"),
            .runFinished(RunFinished(isError: true, stopReason: "failed", result: "invalid thread id")),
        ])
        let stray = c.receive(line: #"{"error":{"code":-32600,"message":"no active turn to interrupt"},"id":99}"#, now: now)
        #expect(stray.events.map(\.kind) == ["notice"])  // not a request of ours, still reported
    }

    @Test func unansweredRequestsExpireIntoNoticesAndLateRepliesStillCount() {
        var c = codec()
        _ = c.start(SessionStartOptions(prompt: nil, cwd: "/w"), now: now)
        #expect(c.expire(now: Timestamp(millisecondsSince1970: 30_999)).events.isEmpty)
        let expired = c.expire(now: Timestamp(millisecondsSince1970: 31_000)).events
        #expect(expired == [.notice(level: .warning, message: "codex did not answer initialize (request 1) within 30.0 s", code: "requestTimeout")])
        #expect(c.expire(now: Timestamp(millisecondsSince1970: 90_000)).events.isEmpty)  // forgotten once reported
        // The late reply still moves the handshake on.
        #expect(c.receive(line: Self.initializeResult, now: now).lines.count == 2)
        #expect(c.handshake == .openingThread)
    }

    @Test func secondInterruptWithoutReplyTimesOut() throws {
        var c = running()
        _ = try c.send(.interrupt, now: now)
        _ = try c.send(.interrupt, now: now)
        _ = c.receive(line: #"{"id":4,"result":{}}"#, now: now)
        let expired = c.expire(now: Timestamp(millisecondsSince1970: 60_000)).events
        #expect(expired.count == 1)
        guard case .notice(_, let message, "requestTimeout") = expired.first else { Issue.record("no timeout notice"); return }
        #expect(message.contains("turn/interrupt (request 5)"))
    }

    // MARK: Items

    @Test func commandLifecycleUsesAggregatedOutputOverLostDeltas() {
        var c = running()
        let lines = [
            Self.commandItem("started", command: "/bin/bash -lc 'echo hi; echo there'"),
            #"{"method":"item/commandExecution/outputDelta","params":{"threadId":"t","turnId":"x","itemId":"call_1","delta":"hi\n"}}"#,
            Self.commandItem("completed", command: "/bin/bash -lc 'echo hi; echo there'", status: "completed", output: #""hi\nthere\n""#, exit: "0"),
            Self.commandItem("completed", command: "/bin/bash -lc 'echo hi; echo there'", status: "completed", output: #""hi\nthere\n""#, exit: "0"),
        ]
        let events = lines.flatMap { c.receive(line: $0, now: now).events }
        let input: JSONValue = ["command": "echo hi; echo there", "cwd": "/w", "nativeCommand": "/bin/bash -lc 'echo hi; echo there'"]
        #expect(events == [
            .toolCallStarted(ToolCall(toolCallID: "call_1", name: "exec_command", toolKind: .execute, input: input)),
            .toolCallOutputDelta(toolCallID: "call_1", delta: "hi\n"),
            .toolCallCompleted(ToolResult(toolCallID: "call_1", status: .completed, output: "hi\nthere\n", exitCode: 0)),
        ])
    }

    @Test func commandStatusesAndMissingStarts() {
        var c = running()
        // Completed without a start: started first, then completed; streamed output stands in.
        let failed = c.receive(line: Self.commandItem("completed", id: "a", status: "failed", output: #""boom\n""#, exit: "1"), now: now)
        #expect(failed.events.map(\.kind) == ["toolCallStarted", "toolCallCompleted"])
        #expect(failed.events.last == .toolCallCompleted(ToolResult(toolCallID: "a", status: .failed, output: "boom\n", exitCode: 1)))
        _ = c.receive(line: Self.commandItem("started", id: "b"), now: now)
        _ = c.receive(line: #"{"method":"item/commandExecution/outputDelta","params":{"itemId":"b","delta":"part"}}"#, now: now)
        #expect(c.receive(line: Self.commandItem("completed", id: "b", status: "completed", exit: "0"), now: now).events
            == [.toolCallCompleted(ToolResult(toolCallID: "b", status: .completed, output: "part", exitCode: 0))])
        #expect(c.receive(line: Self.commandItem("completed", id: "c", status: "declined"), now: now).events.last
            == .toolCallCompleted(ToolResult(toolCallID: "c", status: .declined)))
        // Codex marks a non-zero exit "failed"; a "completed" with one is a failure all the same.
        #expect(c.receive(line: Self.commandItem("completed", id: "d", status: "completed", exit: "2"), now: now).events.last
            == .toolCallCompleted(ToolResult(toolCallID: "d", status: .failed, exitCode: 2)))
    }

    @Test func messagesReasoningDiffUsageAndTheRunResult() {
        var c = running()
        let lines = [
            #"{"method":"item/started","params":{"item":{"type":"reasoning","id":"r1","summary":[],"content":[]},"threadId":"t","turnId":"\#(Self.turn)"}}"#,
            #"{"method":"item/reasoning/summaryTextDelta","params":{"itemId":"r1","delta":"Thinking","summaryIndex":0}}"#,
            #"{"method":"item/completed","params":{"item":{"type":"reasoning","id":"r1","summary":["Thinking about it."],"content":[]},"threadId":"t","turnId":"\#(Self.turn)"}}"#,
            #"{"method":"item/started","params":{"item":{"type":"agentMessage","id":"m1","text":""},"threadId":"t","turnId":"\#(Self.turn)"}}"#,
            #"{"method":"item/agentMessage/delta","params":{"itemId":"m1","delta":"Added "}}"#,
            #"{"method":"item/agentMessage/delta","params":{"itemId":"m1","delta":"notes."}}"#,
            #"{"method":"item/completed","params":{"item":{"type":"agentMessage","id":"m1","text":"Added notes."},"threadId":"t","turnId":"\#(Self.turn)"}}"#,
            #"{"method":"turn/diff/updated","params":{"threadId":"t","turnId":"\#(Self.turn)","diff":"diff --git a/n b/n\n"}}"#,
            #"{"method":"thread/tokenUsage/updated","params":{"threadId":"t","turnId":"\#(Self.turn)","tokenUsage":{"total":{"totalTokens":120,"inputTokens":100,"cachedInputTokens":0,"cacheWriteInputTokens":0,"outputTokens":20,"reasoningOutputTokens":0},"last":{"totalTokens":120,"inputTokens":100,"cachedInputTokens":0,"cacheWriteInputTokens":0,"outputTokens":20,"reasoningOutputTokens":0},"modelContextWindow":258400}}}"#,
            #"{"method":"thread/status/changed","params":{"threadId":"t","status":{"type":"idle"}}}"#,
            Self.turnCompleted("completed"),
        ]
        let events = lines.flatMap { c.receive(line: $0, now: now).events }
        let usage = Usage(inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0)
        #expect(events == [
            .reasoning(text: "Thinking", isPartial: true),
            .reasoning(text: "Thinking about it.", isPartial: false),
            .assistantText(text: "Added ", isPartial: true),
            .assistantText(text: "notes.", isPartial: true),
            .assistantText(text: "Added notes.", isPartial: false),
            .diffUpdated(diff: "diff --git a/n b/n\n"),
            .usage(usage),
            .runFinished(RunFinished(isError: false, stopReason: "end_turn", result: "Added notes.", usage: usage, durationMS: 233)),
        ])
    }

    @Test func failedTurnsAreANoticeAndAnErrorRun() {
        let apiError = #"{"message":"{\"error\": {\"message\": \"refused\", \"code\": \"mock_refused\"}}","codexErrorInfo":"other","additionalDetails":null}"#
        var c = running()
        let notified = [
            #"{"method":"error","params":{"error":\#(apiError),"willRetry":false,"threadId":"t","turnId":"\#(Self.turn)"}}"#,
            Self.turnCompleted("failed", error: apiError),
        ].flatMap { c.receive(line: $0, now: now).events }
        let message = #"{"error": {"message": "refused", "code": "mock_refused"}}"#
        #expect(notified == [
            .notice(level: .error, message: "Codex: " + message, code: "other"),
            .runFinished(RunFinished(isError: true, stopReason: "api_error", result: message, durationMS: 233)),
        ])
        // Without the error notification, the turn's own error is the notice; a sandbox error is
        // not the API's.
        var d = running()
        let sandbox = #"{"message":"sandbox denied","codexErrorInfo":"sandboxError","additionalDetails":null}"#
        #expect(d.receive(line: Self.turnCompleted("failed", error: sandbox), now: now).events == [
            .notice(level: .error, message: "Codex: sandbox denied", code: "sandboxError"),
            .runFinished(RunFinished(isError: true, stopReason: "failed", result: "sandbox denied", durationMS: 233)),
        ])
        let retry = d.receive(line: #"{"method":"error","params":{"error":{"message":"Reconnecting... 1/5","codexErrorInfo":{"responseStreamDisconnected":{"httpStatusCode":500}}},"willRetry":true,"threadId":"t","turnId":"x"}}"#, now: now)
        #expect(retry.events == [.notice(level: .warning, message: "Codex is retrying after: Reconnecting... 1/5 [HTTP 500]", code: "responseStreamDisconnected")])
    }

    // MARK: Approvals

    @Test func commandApprovalOffersTheSessionAndTheAmendmentAsARule() throws {
        var c = running()
        let started = c.receive(line: Self.commandItem("started"), now: now)
        #expect(started.events.map(\.kind) == ["toolCallStarted"])
        let out = c.receive(line: Self.commandApproval(), now: now)
        guard case .approvalRequested(let approval) = out.events.first else { Issue.record("no approval"); return }
        #expect(approval == ApprovalRequest(
            id: approvalID(1), toolCallID: "call_1", toolName: "exec_command", toolKind: .execute,
            input: ["command": "rm -rf build", "cwd": "/w", "nativeCommand": "/bin/bash -lc 'rm -rf build'"],
            risk: .execute, capabilities: .codex, offeredScopes: [.exactCommandThisSession, .rule("Bash(rm -rf build *)")],
            reason: "clean up", createdAt: now))
        #expect(c.pendingApprovals == [approval])
        // The menu lists the amendment instead of acceptForSession, which Codex honors all the same.
        #expect(try c.send(.decide(approval.id, .allowAlways(scope: .exactCommandThisSession)), now: now).lines
            == [#"{"id":0,"result":{"decision":"acceptForSession"}}"#])
        // A menu with no way to remember the command: only once, or a host rule.
        var d = running()
        _ = d.receive(line: Self.commandApproval(decisions: #"["accept","cancel"]"#), now: now)
        #expect(d.pendingApprovals.first?.offeredScopes == [.rule("Bash(rm -rf build *)")])
        #expect(throws: CodecError(.unsupported, "Codex offers no way to remember this exec_command request (its availableDecisions have neither acceptForSession nor an execpolicy amendment); allow it once, or allow always with a rule scope that the host enforces")) {
            try d.send(.decide(d.pendingApprovals[0].id, .allowAlways(scope: .exactCommandThisSession)), now: now)
        }
        #expect(try d.send(.decide(d.pendingApprovals[0].id, .allowAlways(scope: .rule("Bash(rm -rf build *)"))), now: now).lines
            == [#"{"id":0,"result":{"decision":"accept"}}"#])
        // A whole `bash -lc <script>` amendment is an exact rule for the script.
        var e = running()
        _ = e.receive(line: Self.commandApproval().replacingOccurrences(of: #""proposedExecpolicyAmendment":["rm","-rf","build"]"#, with: #""proposedExecpolicyAmendment":["/bin/bash","-lc","echo hello > hello.txt"]"#), now: now)
        #expect(e.pendingApprovals.first?.offeredScopes == [.exactCommandThisSession, .rule("Bash(echo hello > hello.txt)")])
    }

    @Test func everyDecisionBecomesItsNativeAnswer() throws {
        func answer(_ decision: Decision, decisions: String = #"["accept","acceptForSession","decline","cancel"]"#) throws -> [JSONValue] {
            var c = running()
            _ = c.receive(line: Self.commandItem("started"), now: now)
            _ = c.receive(line: Self.commandApproval(id: 7, decisions: decisions), now: now)
            let reply = try c.send(.decide(c.pendingApprovals[0].id, decision), now: now)
            #expect(reply.events.isEmpty)
            #expect(c.pendingApprovals.isEmpty)
            return try reply.lines.map(parse)
        }
        #expect(try answer(.allow) == [["id": 7, "result": ["decision": "accept"]]])
        #expect(try answer(.allowAlways(scope: .exactCommandThisSession)) == [["id": 7, "result": ["decision": "acceptForSession"]]])
        #expect(try answer(.allowAlways(scope: .toolThisSession)) == [["id": 7, "result": ["decision": "acceptForSession"]]])
        // A rule is the host's: Codex runs this call once and its execpolicy is left alone.
        #expect(try answer(.allowAlways(scope: .rule("Bash(rm -rf build *)"))) == [["id": 7, "result": ["decision": "accept"]]])
        #expect(try answer(.deny(message: "")) == [["id": 7, "result": ["decision": "decline"]]])
        // A deny message rides a steer written just before the decline.
        #expect(try answer(.deny(message: "use the test db")) == [
            ["id": 4, "method": "turn/steer", "params": ["threadId": .string(Self.thread), "expectedTurnId": .string(Self.turn), "input": [["type": "text", "text": "use the test db"]]]],
            ["id": 7, "result": ["decision": "decline"]],
        ])
        // `decline` is accepted even when availableDecisions does not list it (seen with 0.163).
        #expect(try answer(.deny(message: ""), decisions: #"["accept","cancel"]"#) == [["id": 7, "result": ["decision": "decline"]]])
        #expect(try answer(.cancel) == [["id": 7, "result": ["decision": "cancel"]]])
    }

    @Test func refusedDecisionsSendNothing() throws {
        var c = running()
        _ = c.receive(line: Self.commandApproval(), now: now)
        let id = c.pendingApprovals[0].id
        #expect(throws: CodecError(.unsupported, "Codex cannot run a modified exec_command: its approval answer carries no input. Deny it with a message saying what to do instead")) {
            try c.send(.decide(id, .allowModified(input: ["command": "rm -rf build/tmp"])), now: now)
        }
        #expect { try c.send(.decide(id, .answer(answers: ["q": ["a"]])), now: now) } throws: { ($0 as? CodecError)?.code == .invalidDecision }
        #expect(c.pendingApprovals.count == 1)
        _ = try c.send(.decide(id, .allow), now: now)
        #expect { try c.send(.decide(id, .allow), now: now) } throws: { ($0 as? CodecError)?.code == .unknownApproval }
    }

    @Test func fileChangeApprovalCarriesTheDiffOfItsItem() throws {
        var c = running()
        #expect(c.receive(line: Self.fileChangeStarted, now: now).events.map(\.kind) == ["toolCallStarted"])
        let out = c.receive(line: Self.fileChangeApproval, now: now)
        guard case .approvalRequested(let approval) = out.events.first else { Issue.record("no approval"); return }
        #expect(approval.toolName == "apply_patch" && approval.toolCallID == "call_f" && approval.risk == .write)
        #expect(approval.input == ["changes": [["path": "/w/notes.txt", "kind": ["type": "add"], "diff": "Notes.\n"]]])
        #expect(approval.offeredScopes == [.toolThisSession])
        let reply = try c.send(.decide(approval.id, .allowAlways(scope: .toolThisSession)), now: now)
        #expect(try reply.lines.map(parse) == [["id": 1, "result": ["decision": "acceptForSession"]]])
    }

    @Test func questionsAreAnsweredByQuestionTextOrID() throws {
        func reply(_ decision: Decision) throws -> [JSONValue] {
            var c = running(planMode: true)
            let out = c.receive(line: Self.question, now: now)
            guard case .approvalRequested(let approval) = out.events.first else { throw FixtureError("no question") }
            #expect(approval.toolName == "request_user_input" && approval.risk == .readOnly && approval.offeredScopes.isEmpty)
            #expect(approval.question == StructuredQuestion(questions: [.init(
                id: "db_choice", header: "Database", question: "Which database should the tests use?",
                options: [.init(label: "SQLite (Recommended)", description: "Fast and needs no server."), .init(label: "Postgres", description: "Closest to production.")],
                allowsOther: true)]))  // the request says `isOther: true`
            return try c.send(.decide(approval.id, decision), now: now).lines.map(parse)
        }
        let native: [JSONValue] = [["id": 2, "result": ["answers": ["db_choice": ["answers": ["Postgres"]]]]]]
        #expect(try reply(.answer(answers: ["Which database should the tests use?": ["Postgres"]])) == native)
        #expect(try reply(.answer(answers: ["db_choice": ["Postgres"]])) == native)
        #expect(try reply(.deny(message: "")) == [["id": 2, "result": ["answers": [:]]]])
        let cancel = try reply(.cancel)
        #expect(cancel.first == ["id": 2, "result": ["answers": [:]]])
        #expect(cancel.last?["method"] == "turn/interrupt")
        #expect { try reply(.answer(answers: ["Something else?": ["x"]])) } throws: { ($0 as? CodecError)?.code == .invalidDecision }
        #expect { try reply(.allow) } throws: { ($0 as? CodecError)?.code == .invalidDecision }
        #expect { try reply(.allowModified(input: [:])) } throws: { ($0 as? CodecError)?.code == .unsupported }
    }

    @Test func approvalsAreWithdrawnWhenCodexResolvesThemOrTheTurnEnds() throws {
        var c = running()
        _ = c.receive(line: Self.commandItem("started"), now: now)
        _ = c.receive(line: Self.commandApproval(id: 0), now: now)
        _ = c.receive(line: Self.question, now: now)
        let (first, second) = (c.pendingApprovals[0].id, c.pendingApprovals[1].id)
        let resolved = c.receive(line: #"{"method":"serverRequest/resolved","params":{"threadId":"t","requestId":2}}"#, now: now)
        #expect(resolved.events == [.approvalWithdrawn(approvalID: second, reason: "Codex resolved the request itself before anyone answered")])
        // The turn ends (interrupted) with the command approval pending and its item open.
        let ended = c.receive(line: Self.turnCompleted("interrupted"), now: now)
        #expect(ended.events == [
            .approvalWithdrawn(approvalID: first, reason: "the Codex turn ended (interrupted) before anyone answered"),
            .toolCallCompleted(ToolResult(toolCallID: "call_1", status: .interrupted)),
            .runFinished(RunFinished(isError: true, stopReason: "interrupted", durationMS: 233)),
        ])
        #expect(c.pendingApprovals.isEmpty)
        // Codex's resolved notification after the turn changes nothing; nor does a late completion.
        #expect(c.receive(line: #"{"method":"serverRequest/resolved","params":{"threadId":"t","requestId":0}}"#, now: now).events.isEmpty)
        #expect(c.receive(line: Self.commandItem("completed", status: "declined"), now: now).events.isEmpty)
        // An answered approval is not withdrawn by the resolved notification that follows it.
        var d = running()
        _ = d.receive(line: Self.commandApproval(id: 0), now: now)
        _ = try d.send(.decide(d.pendingApprovals[0].id, .allow), now: now)
        #expect(d.receive(line: #"{"method":"serverRequest/resolved","params":{"threadId":"t","requestId":0}}"#, now: now).events.isEmpty)
    }

    // MARK: Recorded host lines

    @Test func observedHostLinesFollowARecording() {
        var c = codec()
        let host = { (line: String) in c.observeHostLine(Array(line.utf8), now: now).events }
        #expect(host(#"{"id":1,"method":"initialize","params":{"clientInfo":{"name":"nucleic"}}}"#).isEmpty)
        #expect(c.handshake == .initializing)
        #expect(c.receive(line: Self.initializeResult, now: now).lines.isEmpty)  // following, not driving
        #expect(host(#"{"method":"initialized"}"#).isEmpty)
        #expect(host(#"{"id":2,"method":"thread/start","params":{"cwd":"/w"}}"#).isEmpty)
        #expect(c.receive(line: Self.threadResult, now: now).events.map(\.kind) == ["sessionStarted"])
        #expect(host(#"{"id":3,"method":"turn/start","params":{"threadId":"t","input":[{"type":"text","text":"fix it","text_elements":[]}]}}"#) == [.userInput(text: "fix it")])
        _ = c.receive(line: Self.turnResult, now: now)
        #expect(c.activeTurnID == Self.turn)
        _ = c.receive(line: Self.commandApproval(id: 0), now: now)
        _ = c.receive(line: Self.commandApproval(id: 1), now: now)
        _ = c.receive(line: Self.question, now: now)
        let approvals = c.pendingApprovals.map(\.id)
        #expect(host(#"{"id":0,"result":{"decision":{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["rm","-rf","build"]}}}}"#)
            == [.approvalResolved(ApprovalResolution(approvalID: approvals[0], decision: .allowAlways(scope: .rule("Bash(rm -rf build *)")), decidedBy: "recorded"))])
        #expect(host(#"{"id":4,"method":"turn/steer","params":{"threadId":"t","expectedTurnId":"x","input":[{"type":"text","text":"not that"}]}}"#).isEmpty)
        #expect(host(#"{"id":1,"result":{"decision":"decline"}}"#)
            == [.approvalResolved(ApprovalResolution(approvalID: approvals[1], decision: .deny(message: "not that"), decidedBy: "recorded"))])
        #expect(host(#"{"id":2,"result":{"answers":{"db_choice":{"answers":["Postgres"]}}}}"#)
            == [.approvalResolved(ApprovalResolution(approvalID: approvals[2], decision: .answer(answers: ["Which database should the tests use?": ["Postgres"]]), decidedBy: "recorded"))])
        #expect(c.pendingApprovals.isEmpty)
        // Host requests are tracked like the codec's own: an unanswered one expires.
        #expect(host(#"{"id":5,"method":"turn/interrupt","params":{"threadId":"t","turnId":"x"}}"#).isEmpty)
        #expect(c.expire(now: Timestamp(millisecondsSince1970: 100_000)).events.map(\.kind) == ["notice", "notice"])  // the steer and the interrupt
        #expect(host("not json").isEmpty)
    }

    // MARK: Robustness

    @Test func malformedUnknownAndUnsupportedLines() throws {
        var c = running()
        #expect(c.receive(line: "{not json", now: now).events.map(\.kind) == ["error"])
        guard case .error("malformedLine", _, _) = c.receive(line: "{not json", now: now).events.first else { Issue.record("not malformedLine"); return }
        let future = #"{"method":"thread/hologram/updated","params":{"x":1}}"#
        #expect(c.receive(line: future, now: now).events == [.unknown(raw: future, nativeKind: "thread/hologram/updated")])
        let item = #"{"method":"item/started","params":{"item":{"type":"webSearch","id":"w1","query":"swift"},"threadId":"t","turnId":"x"}}"#
        #expect(c.receive(line: item, now: now).events == [.unknown(raw: item, nativeKind: "item/started/webSearch")])
        #expect(c.receive(line: "[1,2]", now: now).events.map(\.kind) == ["error"])
        #expect(c.receive(line: #"{"method":"item/started","params":{"item":"oops"}}"#, now: now).events.map(\.kind) == ["error"])
        #expect(c.receive(line: #"{"method":"turn/completed","params":{}}"#, now: now).events.map(\.kind) == ["error"])
        #expect(c.receive(line: #"{"method":"item/commandExecution/requestApproval","id":9,"params":7}"#, now: now).events.map(\.kind) == ["error"])
        // A request Nucleic does not handle is refused, so that Codex does not wait forever.
        let elicit = #"{"method":"mcpServer/elicitation/request","id":11,"params":{"serverName":"x"}}"#
        let refused = c.receive(line: elicit, now: now)
        #expect(refused.events.first == .unknown(raw: elicit, nativeKind: "mcpServer/elicitation/request"))
        #expect(try refused.lines.map(parse) == [["id": 11, "error": ["code": -32601, "message": "Nucleic does not handle mcpServer/elicitation/request"]]])
        #expect(c.receive(line: #"{"id":12345,"result":{}}"#, now: now).events.map(\.kind) == ["unknown"])
    }

    @Test func randomBytesAndTruncatedLinesNeverCrash() {
        var rng = SeededGenerator(seed: 0xC0DE)
        var c = running()
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = c.receive(line: bytes, now: now)
        }
        let samples = [
            Self.initializeResult, Self.threadResult, Self.turnResult, Self.turnStarted, Self.userMessage, Self.commandItem("started"),
            Self.commandItem("completed", status: "completed", output: #""x""#, exit: "0"), Self.commandApproval(), Self.fileChangeStarted,
            Self.fileChangeApproval, Self.question, Self.turnCompleted("failed", error: #"{"message":"m","codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":502}}}"#),
        ]
        for sample in samples {
            let bytes = Array(sample.utf8)
            for n in 0...bytes.count {
                var fresh = running()
                _ = fresh.receive(line: Array(bytes[..<n]), now: now)
                _ = fresh.observeHostLine(Array(bytes[..<n]), now: now)
            }
        }
    }
}
