import Foundation
import NucleicAdapters
import NucleicProtocol
import Testing

/// The replay agent's logic without processes: the script as a state machine, each rule of
/// "means the same", the id maps both ways, and the divergence messages word for word.
@Suite struct ReplayScriptTests {
    typealias Record = ReplayScript.Record

    // MARK: Helpers

    /// A script from (direction, line) pairs, `t` = 0.01 × the record's number.
    static func script(_ backend: ReplayScript.Backend, _ records: [(Record.Direction, String)]) -> ReplayScript {
        ReplayScript(backend: backend, records: records.enumerated().map { index, record in
            Record(number: index + 1, t: Double(index + 1) / 100, direction: record.0, line: record.1)
        })
    }

    /// Calls `next()` until it stops writing; returns the lines written and the action it stopped at.
    static func play(_ script: inout ReplayScript) -> (written: [ReplayScript.Output], then: ReplayScript.Action) {
        var written: [ReplayScript.Output] = []
        while true {
            let action = script.next()
            guard case .write(let output) = action else { return (written, action) }
            written.append(output)
        }
    }

    static func divergence(_ action: ReplayScript.Action) -> ReplayDivergence? {
        if case .fail(let divergence) = action { divergence } else { nil }
    }

    static func json(_ text: String) -> JSONValue { try! JSONParser.parse(text) }

    // Claude lines.
    static let initialize = #"{"type":"control_request","request_id":"req_1_initialize","request":{"subtype":"initialize"}}"#
    static let prompt = #"{"type":"user","message":{"role":"user","content":"Create hello.txt."}}"#
    static let initialized = #"{"type":"control_response","response":{"subtype":"success","request_id":"req_1_initialize","response":{"pid":4242}}}"#
    static let systemInit = #"{"type":"system","subtype":"init","session_id":"s1"}"#
    static let canUseTool = #"{"type":"control_request","request_id":"perm-1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"echo hello > hello.txt","description":"Create hello.txt"},"tool_use_id":"toolu_1"}}"#
    static let result = #"{"type":"result","subtype":"success","is_error":false,"result":"Done."}"#

    static func answer(_ response: String, id: String = "perm-1") -> String {
        #"{"type":"control_response","response":{"subtype":"success","request_id":"\#(id)","response":\#(response)}}"#
    }

    static let allowUnchanged = answer(#"{"behavior":"allow","updatedInput":{"command":"echo hello > hello.txt","description":"Create hello.txt"}}"#)
    static let allowModified = answer(#"{"behavior":"allow","updatedInput":{"command":"echo modified > hello.txt","description":"Create hello.txt"}}"#)
    static let denyNo = answer(#"{"behavior":"deny","message":"no"}"#)
    static let denyInterrupt = answer(#"{"behavior":"deny","message":"stop","interrupt":true}"#)

    /// A Claude session: initialize and a prompt, one approval, the result.
    static func claudeScript(answer: String = allowUnchanged) -> ReplayScript {
        script(.claude, [
            (.in, initialize), (.in, prompt),
            (.out, initialized), (.out, systemInit), (.out, canUseTool),
            (.in, answer),
            (.out, result),
        ])
    }

    /// Plays `claudeScript(answer: recorded)` up to the approval and answers it with `host`.
    static func judgeClaudeAnswer(recorded: String, host: String) -> ReplayDivergence? {
        var script = claudeScript(answer: recorded)
        script.take(line: Array(initialize.utf8))
        script.take(line: Array(prompt.utf8))
        _ = play(&script)
        script.take(line: Array(host.utf8))
        return divergence(play(&script).then)
    }

    // MARK: The script as a state machine

    @Test func aClaudeSessionPlaysWithTheHostsOwnRequestIDs() {
        var script = Self.claudeScript()
        var step = Self.play(&script)
        #expect(step.written.isEmpty)
        #expect(step.then == .waitForHost)
        #expect(script.position == 0)

        // The host names its initialize request differently and says something else in its prompt.
        script.take(line: Array(#"{"type":"control_request","request_id":"req_1","request":{"subtype":"initialize","hooks":null}}"#.utf8))
        script.take(line: Array(#"{"type":"user","message":{"role":"user","content":"something else"},"parent_tool_use_id":null}"#.utf8))
        step = Self.play(&script)
        #expect(step.written.map(\.record) == [3, 4, 5])
        #expect(step.written.allSatisfy { $0.stream == .stdout })
        // The answer to the host's request carries the host's id; the rest is as recorded.
        #expect(Self.json(step.written[0].line) == Self.json(#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","response":{"pid":4242}}}"#))
        #expect(step.written[1].line == Self.systemInit)
        #expect(step.written[2].line == Self.canUseTool)  // the agent's own request id as recorded
        #expect(step.then == .waitForHost)
        #expect(script.position == 5)
        #expect(script.hostRequestIDs == ["req_1_initialize": "req_1"])
        #expect(script.agentRequests == ["perm-1": Self.json(#"{"command":"echo hello > hello.txt","description":"Create hello.txt"}"#)])
        #expect(script.expectsHostLines)

        script.take(line: Array(Self.allowUnchanged.utf8))
        step = Self.play(&script)
        #expect(step.written.map(\.line) == [Self.result])
        #expect(step.then == .waitForHost)  // the recording is over: waiting for stdin to close
        #expect(script.position == 7)
        #expect(!script.expectsHostLines)

        script.hostClosed()
        #expect(script.next() == .done)
        #expect(script.next() == .done)
    }

    @Test func hostLinesThatComeEarlyAreQueuedAndJudgedInOrder() {
        var script = Self.claudeScript(answer: Self.allowModified)
        // Everything at once, the approval answer wrong, before the agent wrote anything.
        for line in [Self.initialize, Self.prompt, Self.denyNo] { script.take(line: Array(line.utf8)) }
        #expect(script.queuedCount == 3)
        let step = Self.play(&script)
        // The lines before the approval are written first; the answer is judged at its record.
        #expect(step.written.map(\.record) == [3, 4, 5])
        #expect(script.queuedCount == 0)
        #expect(Self.divergence(step.then)?.description
            == #"record 6: expected an approval answer allowing with a modified input, got deny ("no")"#)
        #expect(Self.divergence(step.then)?.exitStatus == 3)
        // A divergence is final.
        script.take(line: Array(Self.result.utf8))
        #expect(script.next() == step.then)
    }

    @Test func closingStdinBeforeTheHostsLastLineIsExitFour() {
        var script = Self.claudeScript()
        script.take(line: Array(Self.initialize.utf8))
        script.take(line: Array(Self.prompt.utf8))
        script.hostClosed()
        let step = Self.play(&script)
        // What the agent wrote before it needed the host still goes out.
        #expect(step.written.map(\.record) == [3, 4, 5])
        let divergence = Self.divergence(step.then)
        #expect(divergence?.kind == .closedEarly)
        #expect(divergence?.exitStatus == 4)
        #expect(divergence?.description == "record 6: expected an approval answer allowing the input unchanged, got the end of stdin (the host closed it)")
    }

    @Test func closingStdinAfterTheHostsLastLinePlaysTheRestAndEnds() {
        // eof-midturn: the host is done after its prompt; the agent finishes its turn anyway.
        var script = Self.script(.claude, [(.in, Self.initialize), (.in, Self.prompt), (.out, Self.systemInit), (.err, "a warning"), (.out, Self.result)])
        script.take(line: Array(Self.initialize.utf8))
        script.take(line: Array(Self.prompt.utf8))
        script.hostClosed()
        let step = Self.play(&script)
        #expect(step.written.map(\.line) == [Self.systemInit, "a warning", Self.result])
        #expect(step.written.map(\.stream) == [.stdout, .stderr, .stdout])
        #expect(step.then == .done)
    }

    @Test func aLineAfterTheRecordingsEndIsADivergence() {
        var script = Self.script(.claude, [(.in, Self.prompt), (.out, Self.result)])
        script.take(line: Array(Self.prompt.utf8))
        script.take(line: Array(Self.prompt.utf8))
        let step = Self.play(&script)
        #expect(step.written.map(\.line) == [Self.result])
        let divergence = Self.divergence(step.then)
        #expect(divergence?.kind == .afterEnd)
        #expect(divergence?.exitStatus == 3)
        #expect(divergence?.description == "after the last record (2): expected the end of stdin (the recording has no more host lines), got a user message")
    }

    @Test func delaysAreTheRecordedGaps() {
        let records = [
            Record(number: 1, t: 0.5, direction: .out, line: "{}"),
            Record(number: 2, t: 1.25, direction: .err, line: "x"),
            Record(number: 3, t: 2.0, direction: .in, line: Self.prompt),
            Record(number: 4, t: 2.0, direction: .out, line: "{}"),
            Record(number: 5, t: 1.0, direction: .out, line: "{}"),  // out of order: no negative pause
            Record(number: 6, t: 3.5, direction: .out, line: "{}"),
        ]
        var script = ReplayScript(backend: .claude, records: records)
        script.take(line: Array(Self.prompt.utf8))
        #expect(Self.play(&script).written.map(\.delay) == [0.5, 0.75, 0, 0, 1.5])
    }

    @Test func anEmptyRecordingWaitsForStdinToClose() {
        var script = ReplayScript(backend: .codex, records: [])
        #expect(script.next() == .waitForHost)
        script.hostClosed()
        #expect(script.next() == .done)
    }

    // MARK: Claude: what must match

    @Test(arguments: [
        // (recorded, host, divergence or nil)
        (allowUnchanged, allowUnchanged, nil),
        // allow without updatedInput leaves the input unchanged too
        (allowUnchanged, answer(#"{"behavior":"allow"}"#), nil),
        // the same input with its keys in another order is not a modification
        (allowUnchanged, answer(#"{"behavior":"allow","updatedInput":{"description":"Create hello.txt","command":"echo hello > hello.txt"},"updatedPermissions":[]}"#), nil),
        (allowUnchanged, allowModified, "record 6: expected an approval answer allowing the input unchanged, got allow with a modified input"),
        (allowUnchanged, denyNo, #"record 6: expected an approval answer allowing the input unchanged, got deny ("no")"#),
        (allowModified, answer(#"{"behavior":"allow","updatedInput":{"command":"something else entirely"}}"#), nil),
        (allowModified, allowUnchanged, "record 6: expected an approval answer allowing with a modified input, got allow (input unchanged)"),
        (allowModified, denyNo, #"record 6: expected an approval answer allowing with a modified input, got deny ("no")"#),
        // the deny message is free text
        (denyNo, answer(#"{"behavior":"deny","message":"use the test db"}"#), nil),
        (denyNo, denyInterrupt, #"record 6: expected an approval answer denying, got deny and interrupt ("stop")"#),
        (denyInterrupt, denyNo, #"record 6: expected an approval answer denying and interrupting the turn, got deny ("no")"#),
        (denyInterrupt, answer(#"{"behavior":"deny","message":"","interrupt":true}"#), nil),
        (denyNo, answer(#"{"message":"no"}"#), "record 6: expected an approval answer denying, got an answer without a behavior"),
        // the agent's request id must come back as recorded
        (allowUnchanged, answer(#"{"behavior":"allow"}"#, id: "perm-2"),
         #"record 6: expected an approval answer allowing the input unchanged, got an answer to request "perm-2" (the agent asked with "perm-1")"#),
        (allowUnchanged, #"{"type":"control_response","response":{"subtype":"error","request_id":"perm-1","error":"host failed"}}"#,
         #"record 6: expected an approval answer allowing the input unchanged, got an error control response to request "perm-1""#),
        (allowUnchanged, #"{"type":"user","message":{"role":"user","content":"hi"}}"#,
         "record 6: expected an approval answer allowing the input unchanged, got a user message"),
    ] as [(recorded: String, host: String, divergence: String?)])
    func claudeApprovalAnswers(_ example: (recorded: String, host: String, divergence: String?)) {
        #expect(Self.judgeClaudeAnswer(recorded: example.recorded, host: example.host)?.description == example.divergence)
    }

    @Test func questionAnswersMustBeTheSame() {
        let ask = #"{"type":"control_request","request_id":"q-1","request":{"subtype":"can_use_tool","tool_name":"AskUserQuestion","input":{"questions":[{"question":"Which color?","options":[{"label":"Red"},{"label":"Blue"}]}]}}}"#
        func answered(_ label: String) -> String {
            Self.answer(#"{"behavior":"allow","updatedInput":{"questions":[{"question":"Which color?","options":[{"label":"Red"},{"label":"Blue"}]}],"answers":{"Which color?":"\#(label)"}}}"#, id: "q-1")
        }
        func judge(_ host: String) -> String? {
            var script = Self.script(.claude, [(.out, ask), (.in, answered("Blue")), (.out, Self.result)])
            _ = Self.play(&script)
            script.take(line: Array(host.utf8))
            return Self.divergence(Self.play(&script).then)?.description
        }
        #expect(judge(answered("Blue")) == nil)
        #expect(judge(answered("Red")) == #"record 2: expected an approval answer with the answers {"Which color?":"Blue"}, got allow with the answers {"Which color?":"Red"}"#)
        #expect(judge(Self.answer(#"{"behavior":"allow"}"#, id: "q-1")) == #"record 2: expected an approval answer with the answers {"Which color?":"Blue"}, got allow (input unchanged)"#)
    }

    @Test func claudeMessagesMatchByTypeAndSubtype() {
        func judge(_ recorded: String, _ host: String) -> String? {
            var script = Self.script(.claude, [(.in, recorded)])
            script.take(line: Array(host.utf8))
            return Self.divergence(script.next())?.description
        }
        let interrupt = #"{"type":"control_request","request_id":"req_2_interrupt","request":{"subtype":"interrupt"}}"#
        #expect(judge(interrupt, #"{"type":"control_request","request_id":"x","request":{"subtype":"interrupt"}}"#) == nil)
        #expect(judge(interrupt, Self.initialize) == #"record 1: expected a control request "interrupt", got a control request "initialize""#)
        #expect(judge(interrupt, #"{"type":"control_request","request":{"subtype":"interrupt"}}"#)
            == #"record 1: expected a control request "interrupt", got a control request "interrupt" without a request_id"#)
        #expect(judge(interrupt, Self.prompt) == #"record 1: expected a control request "interrupt", got a user message"#)
        #expect(judge(Self.prompt, interrupt) == #"record 1: expected a user message, got a control request "interrupt""#)
        #expect(judge(Self.prompt, #"{"message":"hi"}"#) == "record 1: expected a user message, got a message without a type")
        #expect(judge(Self.prompt, #"{"type":"keep_alive"}"#) == #"record 1: expected a user message, got a "keep_alive" message"#)
        // A user message is judged by its type alone: the words are the host's.
        #expect(judge(Self.prompt, #"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"other"}]}}"#) == nil)
        // An error response to a request must stay one, to the same id.
        let refused = #"{"type":"control_response","response":{"subtype":"error","request_id":"hook-1","error":"no"}}"#
        #expect(judge(refused, #"{"type":"control_response","response":{"subtype":"error","request_id":"hook-1","error":"other words"}}"#) == nil)
        #expect(judge(refused, #"{"type":"control_response","response":{"subtype":"success","request_id":"hook-1","response":{}}}"#)
            == #"record 1: expected an error control response to request "hook-1", got a successful control response to request "hook-1""#)
    }

    @Test func malformedHostLines() {
        func judge(_ host: LineFramer.Output) -> ReplayDivergence? {
            var script = Self.script(.claude, [(.in, Self.prompt)])
            script.take(host)
            return Self.divergence(script.next())
        }
        let notJSON = judge(.line(Array("hello".utf8)))
        #expect(notJSON?.kind == .malformed)
        #expect(notJSON?.exitStatus == 3)
        #expect(notJSON?.description == #"record 1: expected a user message, got a line that is not JSON (invalid JSON at byte 0: unexpected character): "hello""#)
        #expect(judge(.line(Array(#"{"type":"user""#.utf8)))?.kind == .malformed)
        #expect(judge(.line(Array("[1,2]".utf8)))?.description == #"record 1: expected a user message, got JSON that is not a message object: "[1,2]""#)
        #expect(judge(.overLimit(preview: Array("{".utf8), byteCount: 70_000_000))?.description
            == "record 1: expected a user message, got a line of 70000000 bytes, over the line limit")
        // A trailing carriage return is whitespace to JSON.
        #expect(judge(.line(Array((Self.prompt + "\r").utf8))) == nil)
    }

    @Test func aRecordedLineThatIsNotJSONMustComeBackTheSame() {
        // bad-line: the recording tests the agent with a line that is not JSON.
        func judge(_ host: String) -> String? {
            var script = Self.script(.claude, [(.in, "this is not json"), (.err, "Error parsing streaming input line")])
            script.take(line: Array(host.utf8))
            return Self.divergence(script.next())?.description
        }
        #expect(judge("this is not json") == nil)
        #expect(judge("this is not json\r") == nil)
        #expect(judge("this is other text") == #"record 1: expected the line "this is not json", got "this is other text""#)
        #expect(judge(Self.prompt)?.hasPrefix(#"record 1: expected the line "this is not json", got "{\"type\":\"user\""#) == true)
    }

    @Test func anAnswerToAnUnknownRequestIsJudgedWithoutItsInput() {
        // interrupt-pending: the host answers a request the recording never showed.
        let late = Self.answer(#"{"behavior":"allow","updatedInput":{}}"#, id: "req_unknown_0")
        var script = Self.script(.claude, [(.in, late)])
        script.take(line: Array(Self.answer(#"{"behavior":"allow","updatedInput":{"x":1}}"#, id: "req_unknown_0").utf8))
        #expect(script.next() == .waitForHost)
        var denied = Self.script(.claude, [(.in, late)])
        denied.take(line: Array(Self.answer(#"{"behavior":"deny","message":"late"}"#, id: "req_unknown_0").utf8))
        #expect(Self.divergence(denied.next())?.description == #"record 1: expected an approval answer allowing, got deny ("late")"#)
    }

    // MARK: Codex: what must match

    static let codexInitialize = #"{"id":1,"method":"initialize","params":{"clientInfo":{"name":"nucleic"}}}"#
    static let codexInitialized = #"{"method":"initialized"}"#
    static let codexInitializeResult = #"{"id":1,"result":{"userAgent":"codex"}}"#
    static let codexApproval = #"{"method":"item/commandExecution/requestApproval","id":0,"params":{"itemId":"call_1","command":"ls"}}"#
    static let codexAccept = #"{"id":0,"result":{"decision":"accept"}}"#
    static let codexCompleted = #"{"method":"turn/completed","params":{"turn":{"status":"completed"}}}"#

    static func codexScript(answer: String = codexAccept) -> ReplayScript {
        script(.codex, [
            (.err, "WARNING: startup noise"),
            (.in, codexInitialize), (.out, codexInitializeResult), (.in, codexInitialized),
            (.out, codexApproval), (.in, answer), (.out, codexCompleted),
        ])
    }

    @Test func aCodexSessionMapsTheHostsRequestIDsBothWays() {
        var script = Self.codexScript()
        var step = Self.play(&script)
        #expect(step.written.map(\.line) == ["WARNING: startup noise"])
        #expect(step.written.map(\.stream) == [.stderr])
        #expect(step.then == .waitForHost)

        script.take(line: Array(#"{"id":"host-7","method":"initialize","params":{}}"#.utf8))
        step = Self.play(&script)
        // The result answers the host's id, not the recorded 1.
        #expect(step.written.map(\.line).map(Self.json) == [Self.json(#"{"id":"host-7","result":{"userAgent":"codex"}}"#)])
        #expect(script.hostRequestIDs == [1: "host-7"])

        script.take(line: Array(Self.codexInitialized.utf8))
        step = Self.play(&script)
        // The agent's own request goes out with its recorded id…
        #expect(step.written.map(\.line) == [Self.codexApproval])
        #expect(script.agentRequests == [0: "item/commandExecution/requestApproval"])

        // …and the host's answer must carry it.
        script.take(line: Array(#"{"id":0,"result":{"decision":"accept"}}"#.utf8))
        step = Self.play(&script)
        #expect(step.written.map(\.line) == [Self.codexCompleted])
        script.hostClosed()
        #expect(script.next() == .done)
    }

    @Test(arguments: [
        (codexAccept, codexAccept, nil),
        // the same decision with other fields around it
        (codexAccept, #"{"id":0.0,"result":{"decision":"accept","note":"x"}}"#, nil),
        (codexAccept, #"{"id":0,"result":{"decision":"decline"}}"#,
         #"record 6: expected an approval answer to request 0 with decision "accept", got decision "decline""#),
        (codexAccept, #"{"id":0,"result":{}}"#, #"record 6: expected an approval answer to request 0 with decision "accept", got a result without a decision"#),
        (codexAccept, #"{"id":1,"result":{"decision":"accept"}}"#,
         #"record 6: expected an approval answer to request 0 with decision "accept", got a response to request 1 (the agent asked with 0)"#),
        (codexAccept, #"{"id":0,"error":{"code":-1,"message":"no"}}"#,
         #"record 6: expected an approval answer to request 0 with decision "accept", got an error response to request 0"#),
        (#"{"id":0,"result":{"decision":"acceptForSession"}}"#, codexAccept,
         #"record 6: expected an approval answer to request 0 with decision "acceptForSession", got decision "accept""#),
        (#"{"id":0,"result":{"answers":{"db":{"answers":["Postgres"]}}}}"#, #"{"id":0,"result":{"answers":{"db":{"answers":["Postgres"]}}}}"#, nil),
        (#"{"id":0,"result":{"answers":{"db":{"answers":["Postgres"]}}}}"#, #"{"id":0,"result":{"answers":{"db":{"answers":["SQLite"]}}}}"#,
         #"record 6: expected an answer to request 0 with the answers {"db":{"answers":["Postgres"]}}, got answers {"db":{"answers":["SQLite"]}}"#),
        (#"{"id":0,"error":{"code":-32601,"message":"unsupported"}}"#, #"{"id":0,"error":{"code":1,"message":"other"}}"#, nil),
        (codexAccept, #"{"id":5,"method":"turn/interrupt","params":{}}"#,
         #"record 6: expected an approval answer to request 0 with decision "accept", got a request "turn/interrupt""#),
    ] as [(recorded: String, host: String, divergence: String?)])
    func codexResponses(_ example: (recorded: String, host: String, divergence: String?)) {
        var script = Self.codexScript(answer: example.recorded)
        script.take(line: Array(Self.codexInitialize.utf8))
        script.take(line: Array(Self.codexInitialized.utf8))
        script.take(line: Array(example.host.utf8))
        #expect(Self.divergence(Self.play(&script).then)?.description == example.divergence)
    }

    @Test func codexRequestsAndNotificationsMatchByMethod() {
        func judge(_ recorded: String, _ host: String) -> String? {
            var script = Self.script(.codex, [(.in, recorded)])
            script.take(line: Array(host.utf8))
            return Self.divergence(script.next())?.description
        }
        let turnStart = #"{"id":3,"method":"turn/start","params":{"threadId":"t","input":[{"type":"text","text":"Hi"}]}}"#
        #expect(judge(turnStart, #"{"id":9,"method":"turn/start","params":{"threadId":"t2","input":[]}}"#) == nil)
        #expect(judge(turnStart, #"{"id":3,"method":"turn/steer","params":{}}"#) == #"record 1: expected a request "turn/start", got a request "turn/steer""#)
        #expect(judge(turnStart, #"{"method":"turn/start","params":{}}"#) == #"record 1: expected a request "turn/start", got a notification "turn/start""#)
        #expect(judge(Self.codexInitialized, #"{"method":"initialized","params":{}}"#) == nil)
        #expect(judge(Self.codexInitialized, #"{"method":"exit"}"#) == #"record 1: expected a notification "initialized", got a notification "exit""#)
        #expect(judge(Self.codexInitialized, #"{"id":1,"method":"initialized"}"#) == #"record 1: expected a notification "initialized", got a request "initialized""#)
        #expect(judge(Self.codexInitialized, #"{"jsonrpc":"2.0"}"#)
            == #"record 1: expected a notification "initialized", got a message that is neither a request, a notification nor a response"#)
    }

    @Test func aStringIDRecordedForAHostRequestMapsToAnIntegerOne() {
        // protocol-errors: the recording's host used string ids.
        var script = Self.script(.codex, [
            (.in, #"{"id":"early","method":"thread/start","params":{}}"#),
            (.out, #"{"id":"early","error":{"code":-32600,"message":"Not initialized"}}"#),
        ])
        script.take(line: Array(#"{"id":12,"method":"thread/start","params":{}}"#.utf8))
        #expect(Self.play(&script).written.map(\.line) == [#"{"id":12,"error":{"code":-32600,"message":"Not initialized"}}"#])
    }

    // MARK: Reading fixtures

    @Test func aFixtureFileBecomesAScript() throws {
        let text = """
            {"fixture":1,"backend":"claude","cli":"2.1.327","argv":["claude"],"scenario":"x"}
            {"t":0,"dir":"in","line":"{\\"type\\":\\"user\\"}"}

            {"t":0.5,"dir":"out","line":"{\\"type\\":\\"result\\"}"}
            {"dir":"err","line":"bye"}

            """
        let script = try ReplayScript(fixture: Array(text.utf8))
        #expect(script.backend == .claude)
        #expect(script.records == [
            Record(number: 1, t: 0, direction: .in, line: #"{"type":"user"}"#),
            Record(number: 2, t: 0.5, direction: .out, line: #"{"type":"result"}"#),
            Record(number: 3, t: 0, direction: .err, line: "bye"),
        ])
    }

    @Test(arguments: [
        ("", "line 1: not a fixture: the first line must be a header like {\"fixture\":1,\"backend\":\"claude\",…}"),
        ("# a readme\n", "line 1: not a fixture: the first line must be a header like {\"fixture\":1,\"backend\":\"claude\",…}"),
        (#"{"fixture":2,"backend":"claude"}"#, "line 1: fixture format 2 is not one this build reads (1)"),
        (#"{"fixture":1,"backend":"gemini"}"#, #"line 1: the recording's backend "gemini" cannot be replayed: the replay agent plays "claude", "codex" and "acp" recordings"#),
        (#"{"fixture":1}"#, #"line 1: the recording's backend (none) cannot be replayed: the replay agent plays "claude", "codex" and "acp" recordings"#),
        ("{\"fixture\":1,\"backend\":\"codex\"}\n\nnot json", #"line 3: not JSON: a record must look like {"t":0.12,"dir":"out"|"in"|"err","line":"…"}"#),
        ("{\"fixture\":1,\"backend\":\"codex\"}\n{\"dir\":\"sideways\",\"line\":\"\"}",
         #"line 2: "dir" is missing or not out, in or err: a record must look like {"t":0.12,"dir":"out"|"in"|"err","line":"…"}"#),
        ("{\"fixture\":1,\"backend\":\"codex\"}\n{\"dir\":\"in\",\"line\":{}}",
         #"line 2: "line" is missing or not a string: a record must look like {"t":0.12,"dir":"out"|"in"|"err","line":"…"}"#),
        ("{\"fixture\":1,\"backend\":\"codex\"}\n{\"t\":\"soon\",\"dir\":\"in\",\"line\":\"\"}",
         #"line 2: "t" must be seconds (a number ≥ 0): a record must look like {"t":0.12,"dir":"out"|"in"|"err","line":"…"}"#),
    ])
    func badFixturesAreRefusedWithTheirLine(_ text: String, _ message: String) {
        #expect(throws: ReplayScript.FormatError.self) { try ReplayScript(fixture: Array(text.utf8)) }
        do {
            _ = try ReplayScript(fixture: Array(text.utf8))
        } catch {
            #expect(error.description == message)
        }
    }

    // MARK: Every recorded fixture

    static let fixtures = ["claude", "codex", "acp"].flatMap { Fixture.paths($0) }

    /// A host that writes exactly the recorded lines, at the recorded points, means the same: the
    /// script plays to its end, and every agent line goes out byte for byte as recorded.
    @Test(arguments: fixtures)
    func everyFixturePlaysAgainstItsOwnRecordedHost(_ path: String) throws {
        let url = Fixture.root.appendingPathComponent(path + ".jsonl")
        var script = try ReplayScript(fixture: Array(try Data(contentsOf: url)))
        let fixture = try Fixture.load(url)
        #expect(script.records.count == fixture.records.count)
        var written: [ReplayScript.Output] = []
        for record in script.records where record.direction == .in {
            // Up to the record's point, then its line.
            while true {
                let action = script.next()
                guard case .write(let output) = action else {
                    #expect(action == .waitForHost, "\(path): \(action)")
                    break
                }
                written.append(output)
            }
            script.take(line: Array(record.line.utf8))
        }
        script.hostClosed()
        let rest = Self.play(&script)
        written += rest.written
        #expect(rest.then == .done, "\(path): \(rest.then)")
        let agent = script.records.filter { $0.direction != .in }
        #expect(written.map(\.line) == agent.map(\.line))
        #expect(written.map(\.record) == agent.map(\.number))
    }

    @Test func thereAreFixturesOfBothBackends() {
        #expect(Self.fixtures.contains { $0.hasPrefix("claude/") })
        #expect(Self.fixtures.contains { $0.hasPrefix("codex/") })
    }
}
