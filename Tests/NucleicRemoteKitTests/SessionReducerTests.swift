import NucleicProtocol
@testable import NucleicRemoteKit
import Testing

/// Drives the reducer one input at a time and asserts the whole state after each: the expected
/// state is built by hand from the previous expected state, never from the reducer's output.
struct Stepper {
    var state: RemoteState
    var expected: RemoteState

    init(_ initial: RemoteState = RemoteState()) {
        state = initial
        expected = initial
    }

    mutating func step(_ input: RemoteInput, sourceLocation: SourceLocation = #_sourceLocation, _ change: (inout RemoteState) -> Void) {
        state = SessionReducer.reduced(state, input)
        change(&expected)
        #expect(state == expected, sourceLocation: sourceLocation)
    }

    mutating func host(_ body: HostMsg.Body, requestID: Int64? = nil, sourceLocation: SourceLocation = #_sourceLocation, _ change: (inout RemoteState) -> Void) {
        step(.host(HostMsg(body, requestID: requestID)), sourceLocation: sourceLocation, change)
    }

    mutating func events(_ id: SessionID, _ events: [SequencedEvent], sourceLocation: SourceLocation = #_sourceLocation, _ change: (inout RemoteState) -> Void) {
        host(.events(sessionID: id, events: events), sourceLocation: sourceLocation, change)
    }
}

extension RemoteState {
    subscript(rows id: SessionID) -> [TranscriptRow] {
        get { mirror.transcripts[id]?.rows ?? [] }
        set { mirror.transcripts[id, default: SessionTranscript()].rows = newValue }
    }
    subscript(cursor id: SessionID) -> Int64 {
        get { mirror.transcripts[id]?.cursor ?? 0 }
        set { mirror.transcripts[id, default: SessionTranscript()].cursor = newValue }
    }
}

func tool(_ id: String = "toolu_1", name: String = "Bash", kind: ToolKind? = .execute, input: JSONValue? = ["command": "ls"], draft: String = "{\"command\":\"ls\"}",
          output: String = "", exit: Int64? = nil, status: ToolRow.Status) -> TranscriptRow.Content {
    .tool(ToolRow(toolCallID: id, name: name, kind: kind, input: input, inputDraft: draft, output: output, exitCode: exit, status: status))
}

@Suite struct SessionReducerTests {
    let live = ConnectionState.connected(since: Fx.ts(0), catchingUp: 0)
    let me = HostInfo(hostName: "box", hostVersion: "1", scope: .approve, deviceID: Fx.me)

    @Test func streamingTextToolLifecycleAndApprovalStepByStep() {
        var t = Stepper()
        t.step(.local(.connection(live))) { $0.connection = live }
        t.step(.local(.welcome(me))) { $0.host = me }
        let s1 = Fx.summary(Fx.s1, "fix-build", .running, second: 5)
        t.host(.sessionList([s1])) { $0.mirror.sessions = [s1]; $0.mirror.listed = true }
        let e = Fx.events(Fx.turn(approval: Fx.approval(Fx.a1, risk: .execute)) + Fx.after)
        t.events(Fx.s1, [e[0]]) {
            $0[rows: Fx.s1] = [TranscriptRow(id: "seq:1", seq: 1, content: .started(backend: "claude", model: "opus"))]
            $0[cursor: Fx.s1] = 1
        }
        t.events(Fx.s1, [e[1]]) { $0[rows: Fx.s1].append(TranscriptRow(id: "seq:2", seq: 2, content: .user("fix the build"))); $0[cursor: Fx.s1] = 2 }
        t.events(Fx.s1, [e[2]]) { $0[rows: Fx.s1].append(TranscriptRow(id: "seq:3", seq: 3, content: .reasoning(text: "Look", streaming: true))); $0[cursor: Fx.s1] = 3 }
        t.events(Fx.s1, [e[3]]) { $0[rows: Fx.s1][2].content = .reasoning(text: "Looking", streaming: true); $0[cursor: Fx.s1] = 4 }
        t.events(Fx.s1, [e[4]]) { $0[rows: Fx.s1][2].content = .reasoning(text: "Looking.", streaming: false); $0[cursor: Fx.s1] = 5 }
        t.events(Fx.s1, [e[5]]) { $0[rows: Fx.s1].append(TranscriptRow(id: "seq:6", seq: 6, content: .assistant(text: "I'll ", streaming: true))); $0[cursor: Fx.s1] = 6 }
        t.events(Fx.s1, [e[6]]) { $0[rows: Fx.s1][3].content = .assistant(text: "I'll run it", streaming: true); $0[cursor: Fx.s1] = 7 }
        t.events(Fx.s1, [e[7]]) { $0[rows: Fx.s1][3].content = .assistant(text: "I'll run it.", streaming: false); $0[cursor: Fx.s1] = 8 }
        t.events(Fx.s1, [e[8]]) {
            $0[rows: Fx.s1].append(TranscriptRow(id: "tool:toolu_1", seq: 9, content: tool(name: "tool", kind: nil, input: nil, draft: "{\"comm", status: .writing)))
            $0[cursor: Fx.s1] = 9
        }
        t.events(Fx.s1, [e[9]]) { $0[rows: Fx.s1][4].content = tool(name: "tool", kind: nil, input: nil, status: .writing); $0[cursor: Fx.s1] = 10 }
        t.events(Fx.s1, [e[10]]) { $0[rows: Fx.s1][4].content = tool(status: .running); $0[cursor: Fx.s1] = 11 }
        // The approval arrives as an event and as a push: one card, one row.
        let approval = Fx.approval(Fx.a1, risk: .execute)
        t.events(Fx.s1, [e[11]]) {
            $0[rows: Fx.s1].append(TranscriptRow(id: "approval:\(Fx.a1.rawValue)", seq: 12, content: .approval(Fx.a1)))
            $0.mirror.approvals[Fx.a1] = ApprovalCard(approval: approval)
            $0[cursor: Fx.s1] = 12
        }
        t.host(.approvalRequested(approval)) { _ in }
        let waiting = Fx.summary(Fx.s1, "fix-build", .awaitingApproval, second: 12, lastSeq: 12, pending: 1)
        t.host(.sessionUpdated(waiting)) { $0.mirror.sessions = [waiting]; $0.mirror.badge = 1 }
        #expect(t.state.canAnswer(Fx.a1))
        #expect(t.state.needsMe == [NeedsMeItem(sessionID: Fx.s1, title: "fix-build", approval: ApprovalCard(approval: approval), status: nil, route: .approval(Fx.a1))])
        // Answered elsewhere: the push dismisses the card with who answered.
        let other: DeviceID = "0193c000-0000-7000-8000-0000000000bb"
        let r = Fx.resolved(Fx.a1, by: other, label: "Ana's iPhone")
        t.host(.approvalResolved(sessionID: Fx.s1, r)) {
            $0.mirror.approvals[Fx.a1]!.outcome = .resolved(Resolution(decision: .allow, decidedBy: "device:\(other.rawValue)", decidedByLabel: "Ana's iPhone", byThisDevice: false))
        }
        guard case .resolved(let shown) = t.state.mirror.approvals[Fx.a1]!.outcome else { Issue.record("not resolved"); return }
        #expect(shown.summary == "approved on Ana's iPhone")
        #expect(!t.state.canAnswer(Fx.a1))
        // The same resolution as an event later changes nothing but the cursor.
        t.events(Fx.s1, Fx.events([.approvalResolved(r)], from: 13)) { $0[cursor: Fx.s1] = 13 }
        let after = Fx.events(Fx.after, from: 14)
        t.events(Fx.s1, [after[0]]) { $0[rows: Fx.s1][4].content = tool(output: "a.txt\n", status: .running); $0[cursor: Fx.s1] = 14 }
        t.events(Fx.s1, [after[1]]) { $0[rows: Fx.s1][4].content = tool(output: "a.txt\nb.txt\n", exit: 0, status: .completed); $0[cursor: Fx.s1] = 15 }
        t.events(Fx.s1, Array(after[2...])) {
            $0[rows: Fx.s1].append(TranscriptRow(id: "seq:16", seq: 16, content: .assistant(text: "Done.", streaming: false)))
            $0[rows: Fx.s1].append(TranscriptRow(id: "seq:18", seq: 18, content: .turnEnded(isError: false, stopReason: "end_turn", result: "Done.")))
            $0[cursor: Fx.s1] = 18
        }
        let done = Fx.summary(Fx.s1, "fix-build", .finished, second: 18, lastSeq: 18)
        t.host(.sessionUpdated(done)) { $0.mirror.sessions = [done]; $0.mirror.badge = 0 }
        #expect(t.state.needsMe.isEmpty)
        // Expanding a tool row is local.
        t.step(.local(.toggleTool(Fx.s1, toolCallID: "toolu_1"))) {
            guard case .tool(var row) = $0[rows: Fx.s1][4].content else { return }
            row.collapsed = false
            $0[rows: Fx.s1][4].content = .tool(row)
        }
    }

    @Test func duplicatesAndCatchUpOverlapChangeNothing() {
        let e = Fx.events(Fx.turn(approval: Fx.approval(Fx.a1, risk: .write)))
        let once = SessionReducer.reduced(RemoteState(), .host(HostMsg(.events(sessionID: Fx.s1, events: Array(e[0..<8])))))
        var t = Stepper(once)
        // The whole backlog again, then the rest overlapping: only the new events count.
        t.events(Fx.s1, Array(e[0..<8])) { _ in }
        t.events(Fx.s1, Array(e[5..<10])) {
            $0[rows: Fx.s1].append(TranscriptRow(id: "tool:toolu_1", seq: 9, content: tool(name: "tool", kind: nil, input: nil, status: .writing)))
            $0[cursor: Fx.s1] = 10
        }
        // Applied in one batch or one by one, the result is the same.
        var oneByOne = RemoteState()
        for x in e { oneByOne = SessionReducer.reduced(oneByOne, .host(HostMsg(.events(sessionID: Fx.s1, events: [x])))) }
        let batch = SessionReducer.reduced(RemoteState(), .host(HostMsg(.events(sessionID: Fx.s1, events: e))))
        #expect(oneByOne == batch)
    }

    @Test func coldSnapshotTailPendingApprovalAndAttentionOrder() {
        var t = Stepper()
        let a = Fx.summary(Fx.s1, "a-done", .finished, second: 9)
        let b = Fx.summary(Fx.s2, "b-running", .running, second: 3)
        t.host(.sessionList([a, b])) { $0.mirror.sessions = [b, a]; $0.mirror.listed = true }  // RUNNING before DONE
        let pending = Fx.approval(Fx.a2, session: Fx.s2, risk: .destructive, command: "rm -rf build", scopes: [])
        let waiting = Fx.summary(Fx.s2, "b-running", .awaitingApproval, second: 40, lastSeq: 40, pending: 1)
        let tail = Fx.events([.assistantText(text: "Cleaning.", isPartial: false)], from: 39)
        t.host(.snapshot(summary: waiting, events: tail, pendingApprovals: [pending], cursor: 40)) {
            $0.mirror.sessions = [waiting, a]
            $0.mirror.badge = 1
            $0.mirror.approvals[Fx.a2] = ApprovalCard(approval: pending)
            $0.mirror.transcripts[Fx.s2] = SessionTranscript(cursor: 40, rows: [
                TranscriptRow(id: "seq:39", seq: 39, content: .assistant(text: "Cleaning.", streaming: false)),
                TranscriptRow(id: "approval:\(Fx.a2.rawValue)", seq: 40, content: .approval(Fx.a2)),
            ], truncated: true)
        }
        // Destructive: no inline allow, no "allow always", whatever the host offered.
        let v = t.state.mirror.approvals[Fx.a2]!.verdict
        #expect(!v.allowInline && v.needsDeliberateStep && v.allowAlwaysScopes.isEmpty)
        // Not live: nothing may be answered, and the chip says why.
        #expect(!t.state.canAnswer(Fx.a2))
        #expect(t.state.actionsDisabledReason == "reconnect to act")
        // Withdrawn by the host: the card leaves the pending list.
        t.events(Fx.s2, Fx.events([.approvalWithdrawn(approvalID: Fx.a2, reason: "turn ended")], from: 41)) {
            $0.mirror.approvals[Fx.a2]!.outcome = .withdrawn(reason: "turn ended")
            $0[cursor: Fx.s2] = 41
        }
        #expect(t.state.mirror.pendingApprovals.isEmpty)
        #expect(t.state.needsMe.map(\.route) == [.session(Fx.s2)])
        // A replayed request after its withdrawal does not bring it back.
        t.host(.approvalRequested(pending)) { _ in }
    }

    @Test func connectionStatesDisableActionsAndFailInFlightSends() {
        var t = Stepper()
        let approval = Fx.approval(Fx.a1, risk: .readOnly)
        t.step(.local(.welcome(me))) { $0.host = me }
        t.step(.local(.connection(live))) { $0.connection = live }
        t.host(.approvalRequested(approval)) { $0.mirror.approvals[Fx.a1] = ApprovalCard(approval: approval) }
        #expect(t.state.canAnswer(Fx.a1) && t.state.connection.chip() == "● Connected")
        t.step(.local(.answerSending(Fx.a1))) { $0.mirror.approvals[Fx.a1]!.action = .sending }
        t.step(.local(.inputSending(Fx.s1))) { $0.mirror.transcripts[Fx.s1] = SessionTranscript(input: .sending) }
        #expect(!t.state.canAnswer(Fx.a1))
        // The link drops mid-send: both fail visibly, nothing stays "sending", nothing is queued.
        let dropped = ConnectionState.reconnecting(asOf: Fx.ts(125), attempt: 1, reason: "closed")
        t.step(.local(.connection(dropped))) {
            $0.connection = dropped
            $0.mirror.approvals[Fx.a1]!.action = .failed("the connection dropped before the host answered; the approval is still pending")
            $0.mirror.transcripts[Fx.s1]!.input = .failed("the connection dropped before the host answered; send again when connected")
        }
        #expect(t.state.connection.chip() == "◐ Reconnecting · as of 00:55")
        #expect(t.state.actionsDisabledReason == "reconnect to act" && !t.state.canAnswer(Fx.a1))
        let offline = ConnectionState.hostOffline(asOf: Fx.ts(125), attempt: 2, reason: "refused")
        t.step(.local(.connection(offline))) { $0.connection = offline }
        #expect(t.state.connection.chip(utcOffsetSeconds: 3600) == "○ Host offline · as of 01:55")
        t.step(.local(.connection(.disconnected(asOf: Fx.ts(125))))) { $0.connection = .disconnected(asOf: Fx.ts(125)) }
        #expect(t.state.connection.chip() == "○ Disconnected · as of 00:55")
        t.step(.local(.connection(.unauthorized(message: "gone")))) { $0.connection = .unauthorized(message: "gone") }
        #expect(t.state.connection.chip() == "○ This device was removed on the host")
        // Live again, catching up, then an answer that lost the race.
        let catching = ConnectionState.connected(since: Fx.ts(200), catchingUp: 1)
        t.step(.local(.connection(catching))) { $0.connection = catching }
        #expect(t.state.connection.chip() == "● Connected · catching up…" && t.state.canAnswer(Fx.a1))
        t.step(.local(.answerSending(Fx.a1))) { $0.mirror.approvals[Fx.a1]!.action = .sending }
        t.step(.local(.answerAlreadyResolved(Fx.a1, message: "already answered on Ana's iPhone"))) {
            $0.mirror.approvals[Fx.a1]!.action = .idle
            $0.mirror.approvals[Fx.a1]!.outcome = .answeredElsewhere(message: "already answered on Ana's iPhone")
        }
        let r = Fx.resolved(Fx.a1, by: "0193c000-0000-7000-8000-0000000000bb", label: "Ana's iPhone", decision: .deny(message: "no"))
        t.host(.approvalResolved(sessionID: Fx.s1, r)) {
            $0.mirror.approvals[Fx.a1]!.outcome = .resolved(Resolution(decision: .deny(message: "no"), decidedBy: r.decidedBy, decidedByLabel: "Ana's iPhone", byThisDevice: false))
        }
        // A host error nobody asked for becomes the banner; dismissing it is local.
        t.host(.error(code: .internalError, message: "disk full", sessionID: nil)) { $0.banner = "internalError: disk full" }
        t.step(.local(.dismissBanner)) { $0.banner = nil }
    }

    @Test func ownAnswerIsMarkedAndViewScopeCannotAct() {
        var t = Stepper()
        let viewer = HostInfo(hostName: "box", hostVersion: "1", scope: .view, deviceID: Fx.me)
        t.step(.local(.welcome(viewer))) { $0.host = viewer }
        t.step(.local(.connection(live))) { $0.connection = live }
        let approval = Fx.approval(Fx.a1, risk: .write)
        t.host(.approvalRequested(approval)) { $0.mirror.approvals[Fx.a1] = ApprovalCard(approval: approval) }
        #expect(!t.state.actionsEnabled && t.state.actionsDisabledReason == "this device may only view (scope view)")
        let r = Fx.resolved(Fx.a1, by: Fx.me, label: "laptop")
        t.host(.approvalResolved(sessionID: Fx.s1, r)) {
            $0.mirror.approvals[Fx.a1]!.outcome = .resolved(Resolution(decision: .allow, decidedBy: r.decidedBy, decidedByLabel: "laptop", byThisDevice: true))
        }
        // Errors in the transcript and unknown kinds are rows; usage and status are not.
        t.events(Fx.s1, Fx.events([.usage(Usage(inputTokens: 1, outputTokens: 2)), .error(code: "malformedLine", message: "bad", preview: "x"),
                                   .notice(level: .warning, message: "retrying", code: nil), .unknown(raw: "{}"),
                                   .runFinished(RunFinished(isError: true, stopReason: "api_error"))])) {
            $0.mirror.transcripts[Fx.s1] = SessionTranscript(cursor: 5, rows: [
                TranscriptRow(id: "seq:2", seq: 2, content: .hostError(code: "malformedLine", message: "bad")),
                TranscriptRow(id: "seq:3", seq: 3, content: .notice(level: .warning, message: "retrying")),
                TranscriptRow(id: "seq:4", seq: 4, content: .other(kind: "unknown")),
                TranscriptRow(id: "seq:5", seq: 5, content: .turnEnded(isError: true, stopReason: "api_error", result: nil)),
            ])
        }
    }

    @Test func aTranscriptsRequestWithoutASessionGetsItsSession() {
        var t = Stepper()
        let connecting = ConnectionState.reconnecting(asOf: nil, attempt: 0, reason: "connecting")
        t.step(.local(.connection(connecting))) { $0.connection = connecting }
        #expect(t.state.connection.chip() == "◐ Connecting…")
        var bare = Fx.approval(Fx.a1, risk: .write)
        bare.sessionID = nil
        t.events(Fx.s2, Fx.events([.approvalRequested(bare)])) {
            $0.mirror.approvals[Fx.a1] = ApprovalCard(approval: Fx.approval(Fx.a1, session: Fx.s2, risk: .write))
            $0.mirror.transcripts[Fx.s2] = SessionTranscript(cursor: 1, rows: [TranscriptRow(id: "approval:\(Fx.a1.rawValue)", seq: 1, content: .approval(Fx.a1))])
        }
    }

    @Test func streamingCutShortByTheTurnEndStopsStreaming() {
        var t = Stepper()
        t.events(Fx.s1, Fx.events([.assistantText(text: "Half", isPartial: true), .toolCallCompleted(ToolResult(toolCallID: "x", status: .interrupted))])) {
            $0.mirror.transcripts[Fx.s1] = SessionTranscript(cursor: 2, rows: [
                TranscriptRow(id: "seq:1", seq: 1, content: .assistant(text: "Half", streaming: true)),
                TranscriptRow(id: "tool:x", seq: 2, content: tool("x", name: "tool", kind: nil, input: nil, draft: "", status: .interrupted)),
            ])
        }
        t.events(Fx.s1, Fx.events([.runFinished(RunFinished(isError: true, stopReason: "interrupted"))], from: 3)) {
            $0[rows: Fx.s1][0].content = .assistant(text: "Half", streaming: false)
            $0[rows: Fx.s1].append(TranscriptRow(id: "seq:3", seq: 3, content: .turnEnded(isError: true, stopReason: "interrupted", result: nil)))
            $0[cursor: Fx.s1] = 3
        }
        // The next turn's text starts a new row.
        t.events(Fx.s1, Fx.events([.userInput(text: "go on"), .assistantText(text: "Ok", isPartial: true)], from: 4)) {
            $0[rows: Fx.s1].append(TranscriptRow(id: "seq:4", seq: 4, content: .user("go on")))
            $0[rows: Fx.s1].append(TranscriptRow(id: "seq:5", seq: 5, content: .assistant(text: "Ok", streaming: true)))
            $0[cursor: Fx.s1] = 5
        }
    }
}
