import Foundation
import Testing
import NucleicAdapters
import NucleicProtocol

/// Hand-written lines in the shapes of the Agent Client Protocol's schema (version 1).
@Suite struct AcpCodecTests {
    let now = Timestamp(millisecondsSince1970: 1_000)
    let ids = CountingIDs()

    func codec() -> AcpCodec { let ids = ids; return AcpCodec(makeApprovalID: { ids.make() }) }
    func parse(_ line: String) throws -> JSONValue { try JSONParser.parse(line) }
    func approvalID(_ n: Int) -> ApprovalID { ApprovalID("00000000-0000-7000-8000-" + String(repeating: "0", count: 12 - String(n).count) + String(n)) }

    static let initializeResult = #"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{}},"authMethods":[]}}"#
    static let newResult = #"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-1","modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"},{"id":"plan","name":"Plan"}]}}}"#
    static func update(_ body: String) -> String { #"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":\#(body)}}"# }
    static let permission = #"{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s-1","toolCall":{"toolCallId":"t1","title":"Write a.txt","kind":"edit","rawInput":{"path":"/w/a.txt"}},"options":[{"optionId":"o1","name":"Allow","kind":"allow_once"},{"optionId":"o2","name":"Always","kind":"allow_always"},{"optionId":"o3","name":"Reject","kind":"reject_once"}]}}"#

    /// A codec whose session is open and whose first turn (request 2) runs.
    func running() -> AcpCodec {
        var c = codec()
        _ = c.start(SessionStartOptions(prompt: "fix it", cwd: "/w"), now: now)
        _ = c.receive(line: Self.initializeResult, now: now)
        _ = c.receive(line: Self.newResult, now: now)
        return c
    }

    /// The manifest's mode (`sessionMode`) is set before the first prompt, which waits for it;
    /// an agent that refuses it goes on in its own mode.
    @Test func theManifestsModeIsSetBeforeTheFirstPrompt() throws {
        for refused in [false, true] {
            var c = codec()
            _ = c.start(SessionStartOptions(prompt: "fix it", cwd: "/w", sessionMode: "plan"), now: now)
            _ = c.receive(line: Self.initializeResult, now: now)
            let opened = c.receive(line: Self.newResult, now: now)
            #expect(opened.lines.count == 1)
            #expect(try parse(opened.lines[0]) == ["jsonrpc": "2.0", "id": 2, "method": "session/set_mode", "params": ["sessionId": "s-1", "modeId": "plan"]])
            #expect(c.handshake == .settingMode && c.queuedPrompts == ["fix it"] && c.activePrompt == nil)
            let answer = refused ? #"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no"}}"# : #"{"jsonrpc":"2.0","id":2,"result":{}}"#
            let set = c.receive(line: answer, now: now)
            #expect(try parse(set.lines[0])["method"] == "session/prompt")
            #expect(c.handshake == .ready && c.queuedPrompts == [] && c.activePrompt == 3)
            #expect(c.currentMode == (refused ? nil : "plan"))
            #expect(set.events.contains { $0.kind == "notice" } == refused)
        }
        // A mode the agent does not list, or the one it is in, is not set.
        var c = codec()
        _ = c.start(SessionStartOptions(prompt: "fix it", cwd: "/w", sessionMode: "default"), now: now)
        _ = c.receive(line: Self.initializeResult, now: now)
        #expect(try parse(c.receive(line: Self.newResult, now: now).lines[0])["method"] == "session/prompt")
    }

    @Test func handshakeOpensTheSessionInTheWorktreeThenPrompts() throws {
        var c = codec()
        let start = c.start(SessionStartOptions(prompt: "fix it", cwd: "/w"), now: now)
        #expect(start.events == [])
        let initialize = try parse(start.lines[0])
        #expect(initialize["method"] == "initialize")
        #expect(initialize["params"]?["protocolVersion"] == .int(1))
        #expect(initialize["params"]?["clientCapabilities"]?["fs"]?["writeTextFile"] == true)
        #expect(initialize["params"]?["clientCapabilities"]?["terminal"] == true)
        #expect(c.handshake == .initializing)

        let opened = c.receive(line: Self.initializeResult, now: now)
        #expect(opened.events == [])
        let new = try parse(opened.lines[0])
        #expect(new["method"] == "session/new")
        #expect(new["params"]?["cwd"] == "/w")
        #expect(c.handshake == .openingSession)
        #expect(c.agentCanLoad)

        let ready = c.receive(line: Self.newResult, now: now)
        #expect(ready.events == [
            .sessionStarted(SessionStarted(backend: "acp", nativeSessionID: "s-1", cwd: "/w", permissionMode: "default")),
            .userInput(text: "fix it"),
        ])
        let prompt = try parse(ready.lines[0])
        #expect(prompt["method"] == "session/prompt")
        #expect(prompt["params"]?["sessionId"] == "s-1")
        #expect(prompt["params"]?["prompt"]?[0]?["text"] == "fix it")
        #expect(c.handshake == .ready)
        #expect(c.activePrompt == 2)
        #expect(c.availableModes == ["default", "plan"])
        #expect(c.queuedPrompts == [])
    }

    @Test func resumeUsesSessionLoadAndDoesNotRecordTheReplayedHistory() throws {
        var c = codec()
        _ = c.start(SessionStartOptions(prompt: nil, cwd: "/w", resumeID: "s-1"), now: now)
        let load = c.receive(line: Self.initializeResult, now: now)
        let request = try parse(load.lines[0])
        #expect(request["method"] == "session/load")
        #expect(request["params"]?["sessionId"] == "s-1")
        let replayed = c.receive(line: Self.update(#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"old"}}"#), now: now)
        #expect(replayed == CodecOutput())
        #expect(c.replayedUpdates == 1)
        let ready = c.receive(line: #"{"jsonrpc":"2.0","id":1,"result":null}"#, now: now)
        #expect(ready.events == [
            .sessionStarted(SessionStarted(backend: "acp", nativeSessionID: "s-1", cwd: "/w")),
            .notice(level: .info, message: "acp replayed 1 updates of the loaded session; the transcript has them already", code: "historyReplayed"),
        ])
        #expect(ready.lines == [])
        #expect(c.handshake == .ready)
        #expect(c.activePrompt == nil)
    }

    @Test func everyUpdateKindMapsToEvents() throws {
        var c = running()
        #expect(c.receive(line: Self.update(#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}"#), now: now).events
            == [.reasoning(text: "hmm", isPartial: true)])
        #expect(c.receive(line: Self.update(#"{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"fix it"}}"#), now: now).events == [])
        #expect(c.receive(line: Self.update(#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me "}}"#), now: now).events
            == [.assistantText(text: "Let me ", isPartial: true)])
        #expect(c.receive(line: Self.update(#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"look."}}"#), now: now).events
            == [.assistantText(text: "look.", isPartial: true)])
        let call = c.receive(line: Self.update(#"{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Run ls","kind":"execute","status":"pending","rawInput":{"command":"ls"},"locations":[{"path":"/w"}]}"#), now: now)
        #expect(call.events == [
            .assistantText(text: "Let me look.", isPartial: false),
            .toolCallStarted(ToolCall(toolCallID: "t1", name: "Run ls", toolKind: .execute, input: ["title": "Run ls", "rawInput": ["command": "ls"], "locations": [["path": "/w"]]])),
        ])
        #expect(c.receive(line: Self.update(#"{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"a.txt"}}]}"#), now: now).events
            == [.toolCallOutputDelta(toolCallID: "t1", delta: "a.txt")])
        #expect(c.receive(line: Self.update(#"{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}"#), now: now).events
            == [.toolCallCompleted(ToolResult(toolCallID: "t1", status: .completed, output: "a.txt"))])
        // A late update of a finished call changes nothing.
        #expect(c.receive(line: Self.update(#"{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed"}"#), now: now).events == [])
        #expect(c.receive(line: Self.update(#"{"sessionUpdate":"plan","entries":[{"content":"read","priority":"high","status":"completed"},{"content":"fix","priority":"medium","status":"pending"}]}"#), now: now).events
            == [.notice(level: .info, message: "plan:\n[completed] read\n[pending] fix", code: "plan")])
        #expect(c.plan.count == 2)
        #expect(c.receive(line: Self.update(#"{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"init","description":"d"}]}"#), now: now).events
            == [.notice(level: .info, message: "commands: /init", code: "availableCommands")])
        #expect(c.availableCommands == ["init"])
        #expect(c.receive(line: Self.update(#"{"sessionUpdate":"current_mode_update","currentModeId":"plan"}"#), now: now).events
            == [.notice(level: .info, message: "mode: plan", code: "modeChanged")])
        #expect(c.currentMode == "plan")
        #expect(c.receive(line: Self.update(#"{"sessionUpdate":"usage_update","used":1200,"size":200000}"#), now: now).events
            == [.notice(level: .info, message: "context: 1200 of 200000 tokens", code: "contextUsage")])
        let odd = Self.update(#"{"sessionUpdate":"something_new","x":1}"#)
        #expect(c.receive(line: odd, now: now).events == [.unknown(raw: odd, nativeKind: "something_new")])

        let end = c.receive(line: #"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn","usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15}}}"#, now: now)
        let usage = Usage(inputTokens: 10, outputTokens: 5)
        #expect(end.events == [.usage(usage), .runFinished(RunFinished(isError: false, stopReason: "end_turn", result: "Let me look.", usage: usage))])
        #expect(c.activePrompt == nil)
    }

    @Test func malformedLinesAreErrorsNotCrashes() {
        var c = running()
        let out = c.receive(line: "not json", now: now)
        guard case .error(let code, _, _)? = out.events.first else { Issue.record("no error event"); return }
        #expect(code == "malformedLine")
        let shapeless = c.receive(line: Self.update(#"{"nope":1}"#), now: now)
        guard case .error(let code2, _, _)? = shapeless.events.first else { Issue.record("no error event"); return }
        #expect(code2 == "unreadableMessage")
        #expect(c.handshake == .ready)
    }

    @Test func permissionBecomesAnApprovalAndAlwaysIsTheHostsRule() throws {
        var c = running()
        let asked = c.receive(line: Self.permission, now: now)
        let request = ApprovalRequest(
            id: approvalID(1), toolCallID: "t1", toolName: "Edit", toolKind: .edit,
            input: ["title": "Write a.txt", "rawInput": ["path": "/w/a.txt"], "file_path": "/w/a.txt"],
            risk: .write, capabilities: .acp, offeredScopes: [.toolThisSession], createdAt: now)
        #expect(asked.events == [.approvalRequested(request)])
        #expect(c.pendingApprovals == [request])
        #expect(throws: CodecError.self) { try c.send(.decide(request.id, .allowModified(input: [:])), now: now) }
        let answered = try c.send(.decide(request.id, .allowAlways(scope: .toolThisSession)), now: now)
        #expect(try parse(answered.lines[0]) == ["jsonrpc": "2.0", "id": "p1", "result": ["outcome": ["outcome": "selected", "optionId": "o1"]]])
        #expect(c.pendingApprovals == [])

        _ = c.receive(line: Self.permission, now: now)
        let denied = try c.send(.decide(approvalID(2), .deny(message: "no")), now: now)
        #expect(try parse(denied.lines[0])["result"]?["outcome"]?["optionId"] == "o3")
    }

    @Test func cancelAnswersPendingPermissionsThenCancelsTheTurn() throws {
        var c = running()
        _ = c.receive(line: Self.permission, now: now)
        _ = c.receive(line: Self.update(#"{"sessionUpdate":"tool_call","toolCallId":"t2","title":"Run","kind":"execute","status":"in_progress"}"#), now: now)
        let out = try c.send(.interrupt, now: now)
        #expect(out.events == [.approvalWithdrawn(approvalID: approvalID(1), reason: "the turn was interrupted")])
        #expect(try parse(out.lines[0])["result"]?["outcome"]?["outcome"] == "cancelled")
        #expect(try parse(out.lines[1]) == ["jsonrpc": "2.0", "method": "session/cancel", "params": ["sessionId": "s-1"]])
        let end = c.receive(line: #"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#, now: now)
        #expect(end.events == [
            .toolCallCompleted(ToolResult(toolCallID: "t2", status: .interrupted)),
            .runFinished(RunFinished(isError: true, stopReason: "interrupted")),
        ])
        #expect(throws: CodecError.self) { try c.send(.interrupt, now: now) }
    }

    @Test func followUpsWaitForTheRunningTurn() throws {
        var c = running()
        #expect(try c.send(.prompt("and more"), now: now) == CodecOutput())
        #expect(c.queuedPrompts == ["and more"])
        let end = c.receive(line: #"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#, now: now)
        #expect(end.events == [.runFinished(RunFinished(isError: false, stopReason: "end_turn")), .userInput(text: "and more")])
        #expect(try parse(end.lines[0])["id"] == .int(3))
        #expect(c.activePrompt == 3)
        #expect(c.queuedPrompts == [])
    }

    @Test func agentErrorEndsTheTurn() {
        var c = running()
        let out = c.receive(line: #"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error","data":"model down"}}"#, now: now)
        #expect(out.events == [
            .notice(level: .error, message: "acp failed the turn: Internal error (model down)", code: "turnFailed"),
            .runFinished(RunFinished(isError: true, stopReason: "failed")),
        ])
        #expect(c.activePrompt == nil)
    }

    @Test func clientRequestsWaitForTheHostAndOthersAreRefused() throws {
        var c = running()
        let read = #"{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"sessionId":"s-1","path":"/w/a.txt"}}"#
        #expect(c.receive(line: read, now: now) == CodecOutput(events: [
            .toolCallStarted(ToolCall(toolCallID: "client:7", name: "Read", toolKind: .read, input: ["file_path": "/w/a.txt"])),
        ]))
        #expect(c.clientRequests.map(\.method) == ["fs/read_text_file"])
        let served = c.respond(to: .int(7), result: ["content": "hi"])
        #expect(try parse(served.lines[0]) == ["jsonrpc": "2.0", "id": 7, "result": ["content": "hi"]])
        #expect(served.events == [.toolCallCompleted(ToolResult(toolCallID: "client:7", status: .completed, output: "hi"))])
        #expect(c.clientRequests == [])
        let odd = #"{"jsonrpc":"2.0","id":8,"method":"_x/thing","params":{}}"#
        let refused = c.receive(line: odd, now: now)
        #expect(refused.events.first == .unknown(raw: odd, nativeKind: "_x/thing"))
        #expect(try parse(refused.lines[0])["error"]?["code"] == .int(-32601))
    }

    @Test func setModeNeedsAKnownMode() throws {
        var c = running()
        let out = try c.setMode("plan", now: now)
        #expect(try parse(out.lines[0])["method"] == "session/set_mode")
        #expect(throws: CodecError.self) { try c.setMode("yolo", now: now) }
    }

    @Test func theCodecIsKnownByName() {
        #expect(Codecs.names.contains("acp"))
        #expect(Codecs.capabilities("acp") == .acp)
        #expect(Codecs.make("acp")?.backend == "acp")
    }
}
