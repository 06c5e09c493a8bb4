import NucleicAdapters
import NucleicProtocol
import Testing

/// A kind the codec does not know, at every level of each protocol, is an `unknown` event with
/// its whole line and the path of the unknown discriminators: never dropped, never fatal, and
/// what is known in the same line still maps.
@Suite struct UnknownKindsTests {
    let now = Timestamp(millisecondsSince1970: 1_000)

    func claude() -> ClaudeCodec {
        let ids = CountingIDs()
        return ClaudeCodec(makeApprovalID: { ids.make() })
    }

    func unknown(_ line: String, _ kind: String) -> AgentEvent { .unknown(raw: line, nativeKind: kind) }

    // MARK: Claude Code

    @Test func claudeTopLevelSystemAndControlKinds() {
        var c = claude()
        for (line, kind) in [
            (#"{"type":"hologram","x":1}"#, "hologram"),
            (#"{"type":"system","subtype":"weather_report","sunny":true}"#, "system/weather_report"),
            (#"{"type":"system","session_id":"s"}"#, "system/?"),
            (#"{"type":"control_response","response":{"subtype":"partial","request_id":"req_1"}}"#, "control_response/partial"),
            (#"{"no_type":true}"#, "?"),
        ] {
            #expect(c.receive(line: Array(line.utf8), now: now).events == [unknown(line, kind)])
        }
        let request = #"{"type":"control_request","request_id":"q1","request":{"subtype":"elicitation","message":"?"}}"#
        let out = c.receive(line: Array(request.utf8), now: now)
        #expect(out.events == [unknown(request, "control_request/elicitation")])
        #expect(out.lines.count == 1)  // refused, so that Claude does not wait
    }

    @Test func claudeStreamEventTypesBlocksAndDeltas() {
        var c = claude()
        func receive(_ line: String) -> [AgentEvent] { c.receive(line: Array(line.utf8), now: now).events }
        #expect(receive(#"{"type":"stream_event","event":{"type":"message_start","message":{}}}"#).isEmpty)
        let newEvent = #"{"type":"stream_event","event":{"type":"message_highlight","span":[1,2]}}"#
        #expect(receive(newEvent) == [unknown(newEvent, "stream_event/message_highlight")])
        let newBlock = #"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srv_1","name":"web_search","input":{}}}}"#
        #expect(receive(newBlock) == [unknown(newBlock, "stream_event/content_block_start/server_tool_use")])
        let newDelta = #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"url":"u"}}}}"#
        #expect(receive(newDelta) == [unknown(newDelta, "stream_event/content_block_delta/citations_delta")])
        // The unknown block's stop is not a tool call, though it has an id and a name.
        #expect(receive(#"{"type":"stream_event","event":{"type":"content_block_stop","index":0}}"#).isEmpty)
        // Known kinds around it still map.
        #expect(receive(#"{"type":"stream_event","event":{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}}"#).isEmpty)
        #expect(receive(#"{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"hi"}}}"#)
            == [.assistantText(text: "hi", isPartial: true)])
        #expect(receive(#"{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"x"}}}"#).isEmpty)
        #expect(receive(#"{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{}}}"#).isEmpty)
        #expect(receive(#"{"type":"stream_event","event":{"type":"message_stop"}}"#).isEmpty)
        // A block event without its index cannot be read: an error event, and decoding goes on.
        #expect(receive(#"{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}}"#).map(\.kind) == ["error"])
        #expect(receive(#"{"type":"stream_event","event":{"type":"message_stop"}}"#).isEmpty)
    }

    @Test func claudeUnknownContentBlocksKeepTheKnownOnes() {
        var c = claude()
        let assistant = #"{"type":"assistant","message":{"content":[{"type":"text","text":"Searching."},{"type":"server_tool_use","id":"srv_1","name":"web_search","input":{}},{"type":"web_search_tool_result","tool_use_id":"srv_1","content":[]},{"type":"server_tool_use","id":"srv_2","name":"web_search","input":{}},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}}"#
        #expect(c.receive(line: Array(assistant.utf8), now: now).events == [
            .assistantText(text: "Searching.", isPartial: false),
            .toolCallStarted(ToolCall(toolCallID: "toolu_1", name: "Bash", toolKind: .execute, input: ["command": "ls"])),
            unknown(assistant, "assistant/server_tool_use"),
            unknown(assistant, "assistant/web_search_tool_result"),
        ])
        let user = #"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.txt"},{"type":"image","source":{}},{"type":"text","text":"[Request interrupted by user]"}]}}"#
        #expect(c.receive(line: Array(user.utf8), now: now).events == [
            .toolCallCompleted(ToolResult(toolCallID: "toolu_1", status: .completed, output: "a.txt")),
            unknown(user, "user/image"),
        ])
        let untyped = #"{"type":"assistant","message":{"content":[{"text":"no type"}]}}"#
        #expect(c.receive(line: Array(untyped.utf8), now: now).events == [unknown(untyped, "assistant/?")])
    }

    @Test func unknownEventsRoundTripWithTheirKind() throws {
        let event = unknown(#"{"type":"x"}"#, "stream_event/x")
        let json = SequencedEvent(seq: 1, ts: now, event: event).json
        #expect(json["nativeKind"] == "stream_event/x")
        #expect(try SequencedEvent(json: json).event == event)
        let bare = AgentEvent.unknown(raw: "{}")
        #expect(SequencedEvent(seq: 1, ts: now, event: bare).json["nativeKind"] == nil)
    }

    // MARK: Codex

    func codex() -> CodexCodec {
        let ids = CountingIDs()
        var c = CodexCodec(makeApprovalID: { ids.make() })
        _ = c.start(SessionStartOptions(prompt: "fix it", cwd: "/w", model: "gpt-5.5"), now: now)
        for line in [
            #"{"id":1,"result":{"userAgent":"codex"}}"#,
            #"{"id":2,"result":{"thread":{"id":"t1"},"model":"gpt-5.5","cwd":"/w","approvalPolicy":"untrusted"}}"#,
            #"{"id":3,"result":{"turn":{"id":"u1","items":[],"status":"inProgress","error":null}}}"#,
        ] { _ = c.receive(line: Array(line.utf8), now: now) }
        return c
    }

    @Test func codexNotificationsRequestsItemsAndReplies() {
        var c = codex()
        for (line, kind) in [
            (#"{"method":"thread/hologram/updated","params":{}}"#, "thread/hologram/updated"),
            (#"{"method":"item/plan/delta","params":{"itemId":"p1","delta":"step"}}"#, "item/plan/delta"),
            (#"{"method":"item/started","params":{"item":{"type":"plan","id":"p1","text":""},"threadId":"t1","turnId":"u1"}}"#, "item/started/plan"),
            (#"{"method":"item/completed","params":{"item":{"type":"imageView","id":"i1","path":"a.png"},"threadId":"t1","turnId":"u1"}}"#, "item/completed/imageView"),
            (#"{"id":77,"result":{}}"#, "response"),
            (#"{"jsonrpc":"2.0"}"#, "?"),
        ] {
            #expect(c.receive(line: Array(line.utf8), now: now).events == [unknown(line, kind)])
        }
        let request = #"{"method":"account/chatgptAuthTokens/refresh","id":5,"params":{}}"#
        let out = c.receive(line: Array(request.utf8), now: now)
        #expect(out.events.first == unknown(request, "account/chatgptAuthTokens/refresh"))
        #expect(out.lines.count == 1)  // refused with a JSON-RPC error
        // The turn still ends normally afterwards.
        let done = #"{"method":"turn/completed","params":{"threadId":"t1","turn":{"id":"u1","items":[],"status":"completed","error":null}}}"#
        #expect(c.receive(line: Array(done.utf8), now: now).events.map(\.kind) == ["runFinished"])
    }
}
