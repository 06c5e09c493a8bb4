import Testing
import NucleicAdapters
import NucleicProtocol

/// Hand-written lines in the shapes the real CLI writes (docs/adapters/claude.md); the recorded
/// fixtures are checked in ClaudeFixtureTests.
@Suite struct ClaudeCodecTests {
    let now = Timestamp(millisecondsSince1970: 1_000)
    let ids = CountingIDs()

    func codec() -> ClaudeCodec { let ids = ids; return ClaudeCodec(makeApprovalID: { ids.make() }) }

    func parse(_ line: String) throws -> JSONValue { try JSONParser.parse(line) }

    static let canUseBash = #"{"type":"control_request","request_id":"r-7","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"echo hi > a.txt","description":"write"},"tool_use_id":"toolu_1","permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"echo hi *"}],"behavior":"allow","destination":"localSettings"},{"type":"setMode","mode":"acceptEdits","destination":"session"}]}}"#

    @Test func startSendsInitializeThenThePrompt() throws {
        var c = codec()
        let out = c.start(SessionStartOptions(prompt: "fix it", cwd: "/w"), now: now)
        #expect(out.events == [.userInput(text: "fix it")])
        #expect(out.lines.count == 2)
        let initialize = try parse(out.lines[0])
        #expect(initialize["type"] == "control_request")
        #expect(initialize["request"]?["subtype"] == "initialize")
        let user = try parse(out.lines[1])
        #expect(user["type"] == "user")
        #expect(user["message"]?["content"] == "fix it")
        #expect(user["message"]?["role"] == "user")
    }

    @Test func approvalCarriesSuggestionsAsOfferedScopesAndStartsTheToolOnce() throws {
        var c = codec()
        let out = c.receive(line: Self.canUseBash, now: now)
        guard case .approvalRequested(let approval) = out.events.last else { Issue.record("no approval"); return }
        #expect(out.events.first == .toolCallStarted(ToolCall(toolCallID: "toolu_1", name: "Bash", toolKind: .execute, input: approval.input)))
        #expect(approval.toolName == "Bash")
        #expect(approval.toolCallID == "toolu_1")
        #expect(approval.capabilities.canModifyToolInput)
        #expect(approval.offeredScopes == [.exactCommandThisSession, .toolThisSession, .rule("Bash(echo hi *)")])
        #expect(c.pendingApprovals == [approval])
        // The assistant message repeating the tool does not start it again.
        let again = c.receive(line: #"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"echo hi > a.txt"}}]}}"#, now: now)
        #expect(again.events.isEmpty)
    }

    @Test func everyDecisionBecomesItsNativeAnswer() throws {
        func answer(_ decision: Decision) throws -> JSONValue {
            var c = codec()
            let out = c.receive(line: Self.canUseBash, now: now)
            guard case .approvalRequested(let approval) = out.events.last else { throw FixtureError("no approval") }
            let reply = try c.send(.decide(approval.id, decision), now: now)
            #expect(reply.lines.count == 1)
            #expect(c.pendingApprovals.isEmpty)
            let line = try parse(reply.lines[0])
            #expect(line["type"] == "control_response")
            #expect(line["response"]?["request_id"] == "r-7")
            #expect(line["response"]?["subtype"] == "success")
            return line["response"]?["response"] ?? .null
        }
        let original: JSONValue = ["command": "echo hi > a.txt", "description": "write"]
        #expect(try answer(.allow) == ["behavior": "allow", "updatedInput": original])
        #expect(try answer(.allowAlways(scope: .rule("Bash(echo hi *)"))) == ["behavior": "allow", "updatedInput": original])
        #expect(try answer(.allowModified(input: ["command": "echo bye > a.txt"])) == ["behavior": "allow", "updatedInput": ["command": "echo bye > a.txt"]])
        #expect(try answer(.deny(message: "use the test db")) == ["behavior": "deny", "message": "use the test db"])
        let cancel = try answer(.cancel)
        #expect(cancel["behavior"] == "deny" && cancel["interrupt"] == true)
    }

    @Test func refusesWhatDoesNotFit() throws {
        var c = codec()
        _ = c.receive(line: Self.canUseBash, now: now)
        let id = c.pendingApprovals[0].id
        #expect(throws: CodecError(.invalidDecision, "a modified tool input must be a JSON object, like the original")) {
            try c.send(.decide(id, .allowModified(input: "rm -rf /")), now: now)
        }
        #expect { try c.send(.decide(id, .answer(answers: ["q": ["a"]])), now: now) } throws: { ($0 as? CodecError)?.code == .invalidDecision }
        _ = try c.send(.decide(id, .allow), now: now)
        #expect { try c.send(.decide(id, .allow), now: now) } throws: { ($0 as? CodecError)?.code == .unknownApproval }
    }

    @Test func askUserQuestionIsAnsweredInsideTheAllowedInput() throws {
        var c = codec()
        let ask = #"{"type":"control_request","request_id":"q1","request":{"subtype":"can_use_tool","tool_name":"AskUserQuestion","input":{"questions":[{"question":"Which color?","header":"Color","options":[{"label":"Red","description":"warm"},{"label":"Blue","description":"cool"}],"multiSelect":false}]},"tool_use_id":"toolu_q"}}"#
        let out = c.receive(line: ask, now: now)
        guard case .approvalRequested(let approval) = out.events.last, let question = approval.question else { Issue.record("no question"); return }
        #expect(question.questions.map(\.question) == ["Which color?"])
        #expect(question.questions[0].options.map(\.label) == ["Red", "Blue"])
        #expect(approval.offeredScopes.isEmpty)
        #expect { try c.send(.decide(approval.id, .allow), now: now) } throws: { ($0 as? CodecError)?.code == .invalidDecision }
        let reply = try c.send(.decide(approval.id, .answer(answers: ["Which color?": ["Blue"]])), now: now)
        let response = try parse(reply.lines[0])["response"]?["response"]
        #expect(response?["behavior"] == "allow")
        #expect(response?["updatedInput"]?["answers"] == ["Which color?": "Blue"])
        #expect(response?["updatedInput"]?["questions"] != nil)
    }

    @Test func streamedToolInputStartsTheToolWhenTheBlockEnds() {
        var c = codec()
        let lines = [
            #"{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1"}}}"#,
            #"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}}"#,
            #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me "}}}"#,
            #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"look."}}}"#,
            #"{"type":"stream_event","event":{"type":"content_block_stop","index":0}}"#,
            #"{"type":"stream_event","event":{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_9","name":"Bash","input":{}}}}"#,
            #"{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"comm"}}}"#,
            #"{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"and\":\"ls\"}"}}}"#,
            #"{"type":"stream_event","event":{"type":"content_block_stop","index":1}}"#,
            #"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Let me look."}]}}"#,
            #"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_9","name":"Bash","input":{"command":"ls"}}]}}"#,
            #"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"a.txt","is_error":false}]}}"#,
        ]
        let events = lines.flatMap { c.receive(line: $0, now: now).events }
        #expect(events == [
            .assistantText(text: "Let me ", isPartial: true),
            .assistantText(text: "look.", isPartial: true),
            .toolCallInputDelta(toolCallID: "toolu_9", delta: #"{"comm"#),
            .toolCallInputDelta(toolCallID: "toolu_9", delta: #"and":"ls"}"#),
            .toolCallStarted(ToolCall(toolCallID: "toolu_9", name: "Bash", toolKind: .execute, input: ["command": "ls"])),
            .assistantText(text: "Let me look.", isPartial: false),
            .toolCallCompleted(ToolResult(toolCallID: "toolu_9", status: .completed, output: "a.txt")),
        ])
    }

    @Test func deniedToolsCompleteAsDeclinedAndTheRunGoesOn() throws {
        var c = codec()
        _ = c.receive(line: Self.canUseBash, now: now)
        _ = try c.send(.decide(c.pendingApprovals[0].id, .deny(message: "no")), now: now)
        let done = c.receive(line: #"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"no","is_error":true}]}}"#, now: now)
        #expect(done.events == [.toolCallCompleted(ToolResult(toolCallID: "toolu_1", status: .declined, output: "no"))])
    }

    @Test func errorResultsAreANoticeAndAFailedRun() {
        var c = codec()
        let apiError = c.receive(line: #"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500 boom","duration_ms":12,"total_cost_usd":0}"#, now: now)
        #expect(apiError.events == [
            .notice(level: .error, message: "API Error: 500 boom", code: "apiError"),
            .runFinished(RunFinished(isError: true, stopReason: "api_error", result: "API Error: 500 boom", costUSD: 0, durationMS: 12)),
        ])
        let maxTurns = c.receive(line: #"{"type":"result","subtype":"error_max_turns","is_error":true}"#, now: now)
        #expect(maxTurns.events.last == .runFinished(RunFinished(isError: true, stopReason: "max_turns")))
    }

    @Test func interruptEndsTheRunAsInterruptedAndClosesOpenTools() throws {
        var c = codec()
        _ = c.receive(line: Self.canUseBash, now: now)
        let approval = c.pendingApprovals[0].id
        _ = try c.send(.decide(approval, .allow), now: now)
        let interrupt = try c.send(.interrupt, now: now)
        #expect(try parse(interrupt.lines[0])["request"]?["subtype"] == "interrupt")
        let end = c.receive(line: #"{"type":"result","subtype":"error_during_execution","is_error":true}"#, now: now)
        #expect(end.events == [
            .toolCallCompleted(ToolResult(toolCallID: "toolu_1", status: .interrupted)),
            .runFinished(RunFinished(isError: true, stopReason: "interrupted")),
        ])
    }

    @Test func cancelRequestWithdrawsTheApproval() {
        var c = codec()
        _ = c.receive(line: Self.canUseBash, now: now)
        let id = c.pendingApprovals[0].id
        let out = c.receive(line: #"{"type":"control_cancel_request","request_id":"r-7"}"#, now: now)
        #expect(out.events == [.approvalWithdrawn(approvalID: id, reason: "the agent cancelled the request")])
        #expect(c.pendingApprovals.isEmpty)
    }

    @Test func unansweredControlRequestsExpireIntoNotices() throws {
        var c = codec()
        _ = try c.send(.interrupt, now: now)
        #expect(c.expire(now: Timestamp(millisecondsSince1970: 2_000)).events.isEmpty)
        let expired = c.expire(now: Timestamp(millisecondsSince1970: 31_000)).events
        #expect(expired.count == 1)
        guard case .notice(_, let message, let code) = expired.first else { Issue.record("no notice"); return }
        #expect(code == "requestTimeout" && message.contains("interrupt"))
        // A late reply to an expired request is ignored.
        #expect(c.receive(line: #"{"type":"control_response","response":{"subtype":"success","request_id":"req_1"}}"#, now: now).events.isEmpty)
    }

    @Test func requestsWeDoNotHandleAreRefusedNotLeftHanging() throws {
        var c = codec()
        let out = c.receive(line: #"{"type":"control_request","request_id":"h1","request":{"subtype":"hook_callback","callback_id":"x"}}"#, now: now)
        #expect(out.lines.count == 1)
        let reply = try parse(out.lines[0])
        #expect(reply["response"]?["subtype"] == "error" && reply["response"]?["request_id"] == "h1")
        #expect(out.events.first == .unknown(raw: #"{"type":"control_request","request_id":"h1","request":{"subtype":"hook_callback","callback_id":"x"}}"#, nativeKind: "control_request/hook_callback"))
    }

    @Test func malformedAndUnknownLinesNeverThrow() {
        var c = codec()
        #expect(c.receive(line: "{not json", now: now).events.map(\.kind) == ["error"])
        #expect(c.receive(line: #"{"type":"from_the_future","x":1}"#, now: now).events == [.unknown(raw: #"{"type":"from_the_future","x":1}"#, nativeKind: "from_the_future")])
        #expect(c.receive(line: #"[1,2]"#, now: now).events.map(\.kind) == ["unknown"])
        #expect(c.receive(line: #"{"type":"control_request","request":{"subtype":"can_use_tool"}}"#, now: now).events.map(\.kind) == ["error"])
        #expect(c.receive(line: #"{"type":"assistant","message":"oops"}"#, now: now).events.isEmpty)
    }
}
