import Testing
@testable import NucleicProtocol
import NucleicTestSupport

@Suite struct ModelTests {
    static let approval = ApprovalRequest(
        id: "0193a000-0000-7000-8000-000000000001", sessionID: "0193a000-0000-7000-8000-000000000002",
        toolCallID: "toolu_01", toolName: "Bash", toolKind: .execute, input: ["command": "ls"], risk: .readOnly,
        capabilities: .claude, offeredScopes: [.exactCommandThisSession, .rule("Bash(ls *)")],
        question: nil, reason: "list files", createdAt: Timestamp(millisecondsSince1970: 1_796_023_569_145))

    static let everyKind: [AgentEvent] = [
        .sessionStarted(SessionStarted(backend: "claude", nativeSessionID: "abc", model: "m", cwd: "/w", permissionMode: "default", tools: ["Bash"])),
        .userInput(text: "fix it"),
        .assistantText(text: "Hel", isPartial: true),
        .assistantText(text: "Hello", isPartial: false),
        .reasoning(text: "thinking", isPartial: false),
        .toolCallStarted(ToolCall(toolCallID: "toolu_01", name: "Bash", toolKind: .execute, input: ["command": "ls"])),
        .toolCallInputDelta(toolCallID: "toolu_01", delta: #"{"comm"#),
        .toolCallOutputDelta(toolCallID: "toolu_01", delta: "a.txt\n"),
        .toolCallCompleted(ToolResult(toolCallID: "toolu_01", status: .failed, output: "boom", exitCode: 2)),
        .diffUpdated(diff: "diff --git a/x b/x\n"),
        .approvalRequested(approval),
        .approvalResolved(ApprovalResolution(approvalID: approval.id, decision: .allow, decidedBy: "device:0193", decidedByLabel: "Ana's iPhone")),
        .approvalWithdrawn(approvalID: approval.id, reason: "turn interrupted"),
        .statusChanged(status: .awaitingApproval, reason: nil),
        .usage(Usage(inputTokens: 20, outputTokens: 10, cacheReadTokens: 5)),
        .runFinished(RunFinished(isError: false, stopReason: "end_turn", result: "Done.", usage: Usage(inputTokens: 20, outputTokens: 10), costUSD: 0.00028, durationMS: 1200)),
        .notice(level: .warning, message: "API error 529", code: "overloaded_error"),
        .error(code: "malformedLine", message: "invalid JSON at byte 3", preview: "{x"),
        .unknown(raw: #"{"type":"future_thing"}"#),
    ]

    @Test func everyKindRoundTripsThroughJSONText() throws {
        #expect(Set(Self.everyKind.map(\.kind)).count == 18)
        for event in Self.everyKind {
            let text = JSONWriter.string(event.json)
            #expect(text.hasPrefix(#"{"kind":""# + event.kind + "\""), "kind first: \(text)")
            #expect(try AgentEvent(json: JSONParser.parse(text)) == event, "\(text)")
        }
    }

    @Test func sequencedEventMatchesTheDesignExample() throws {
        let event = SequencedEvent(
            seq: 12, ts: Timestamp("2026-11-30T07:26:09.145Z")!,
            event: .toolCallStarted(ToolCall(toolCallID: "toolu_01", name: "Bash", toolKind: .execute, input: ["command": "ls"])))
        let text = JSONWriter.string(event.json)
        #expect(text == #"{"seq":12,"ts":"2026-11-30T07:26:09.145Z","kind":"toolCallStarted","toolCallID":"toolu_01","name":"Bash","toolKind":"execute","input":{"command":"ls"}}"#)
        #expect(try SequencedEvent(json: JSONParser.parse(text)) == event)

        let finished = SequencedEvent(seq: 20, ts: event.ts, event: .runFinished(RunFinished(
            isError: false, stopReason: "end_turn", result: "Done.", usage: Usage(inputTokens: 20, outputTokens: 10), costUSD: 0.00028)))
        #expect(JSONWriter.string(finished.json).hasSuffix(#""kind":"runFinished","isError":false,"stopReason":"end_turn","result":"Done.","usage":{"inputTokens":20,"outputTokens":10},"costUSD":0.00028}"#))
    }

    @Test func everyDecisionHasItsDocumentedShape() throws {
        let cases: [(Decision, String)] = [
            (.allow, #"{"type":"allow"}"#),
            (.allowModified(input: ["command": "ls -la"]), #"{"type":"allowModified","input":{"command":"ls -la"}}"#),
            (.deny(message: "use the test db"), #"{"type":"deny","message":"use the test db"}"#),
            (.cancel, #"{"type":"cancel"}"#),
            (.answer(answers: ["Which?": ["A"]]), #"{"type":"answer","answers":{"Which?":["A"]}}"#),
            (.allowAlways(scope: .exactCommandThisSession), #"{"type":"allowAlways","scope":{"type":"exactCommandThisSession"}}"#),
            (.allowAlways(scope: .toolThisSession), #"{"type":"allowAlways","scope":{"type":"toolThisSession"}}"#),
            (.allowAlways(scope: .rule("Bash(npm test *)")), #"{"type":"allowAlways","scope":{"type":"rule","rule":"Bash(npm test *)"}}"#),
        ]
        for (decision, text) in cases {
            #expect(JSONWriter.string(decision.json) == text)
            #expect(try Decision(json: JSONParser.parse(text)) == decision)
        }
        #expect(throws: ShapeError.self) { try Decision(json: ["type": "maybe"]) }
        #expect(throws: ShapeError.self) { try Decision(json: ["type": "allowModified"]) }
    }

    @Test func statusesFallInTheirBuckets() {
        let expected: [SessionStatus: SessionStatus.Bucket] = [
            .queued: .running, .running: .running, .awaitingApproval: .needsYou, .awaitingInput: .needsYou,
            .error: .needsYou, .conflicted: .needsYou, .finished: .done, .integrated: .done, .discarded: .done,
        ]
        for status in SessionStatus.allCases { #expect(status.bucket == expected[status]) }
        #expect(SessionStatus.allCases.filter(\.isArchived) == [.integrated, .discarded])
        #expect(SessionStatus.Bucket.allCases.sorted() == [.needsYou, .running, .done])
    }

    @Test func riskIsOrdered() {
        let order: [Risk] = [.readOnly, .write, .execute, .unknown, .network, .hostExec, .destructive]
        var rng = SeededGenerator(seed: 0x815C)
        for _ in 0..<8 { #expect(Risk.allCases.shuffled(using: &rng).sorted() == order) }
        #expect(order.filter(\.alwaysNeedsPerson) == [.network, .hostExec, .destructive])
        #expect([Risk.write, .destructive, .execute].max() == .destructive)
    }

    @Test func capabilitiesDifferWhereTheBackendsDo() throws {
        #expect(BackendCapabilities.claude.canModifyToolInput)
        #expect(!BackendCapabilities.codex.canModifyToolInput)
        #expect(BackendCapabilities.codex.canAcceptForSession && !BackendCapabilities.claude.canAcceptForSession)
        #expect(try BackendCapabilities(json: BackendCapabilities.codex.json) == .codex)
    }

    @Test func timestampsPrintAndParseRFC3339() {
        let ts = Timestamp(millisecondsSince1970: 1_796_023_569_145)
        #expect(ts.description == "2026-11-30T07:26:09.145Z")
        #expect(Timestamp(ts.description) == ts)
        #expect(Timestamp("1970-01-01T00:00:00Z") == Timestamp(millisecondsSince1970: 0))
        #expect(Timestamp("2000-02-29T23:59:59.5Z")?.description == "2000-02-29T23:59:59.500Z")
        #expect(Timestamp(millisecondsSince1970: -1).description == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp("2026-13-01T00:00:00Z") == nil)
        #expect(Timestamp("yesterday") == nil)
    }

    @Test func identifiersAreTimeSortableUUIDv7() {
        let a = SessionID.make(now: Timestamp(millisecondsSince1970: 1_000))
        let b = SessionID.make(now: Timestamp(millisecondsSince1970: 2_000))
        #expect(a < b)
        let text = a.rawValue
        #expect(text.count == 36 && text == text.lowercased())
        #expect(Array(text)[14] == "7")
        #expect("89ab".contains(Array(text)[19]))
        #expect(SessionID("ABC") == SessionID("abc"))
    }

    /// Ids made in the same millisecond differ in their 74 random bits: every hex digit after
    /// the timestamp takes many values over many ids (a byte left unfilled would stay constant).
    @Test func idsOfOneMillisecondAreDistinctInEveryRandomDigit() {
        let now = Timestamp(millisecondsSince1970: 1_790_000_000_000)
        let ids = (0..<10_000).map { _ in ApprovalID.make(now: now).rawValue }
        #expect(Set(ids).count == ids.count)
        let digits = ids.map { Array($0) }
        for position in [15, 16, 17, 20, 21, 22, 24, 28, 32, 35] {
            #expect(Set(digits.map { $0[position] }).count >= 15, "hex digit \(position)")
        }
        #expect(Set(digits.map { $0[19] }) == ["8", "9", "a", "b"], "the variant's digit")
    }
}
