public import NucleicProtocol

/// What the reducer consumes: a message from the host, or something that happened here.
public enum RemoteInput: Sendable, Hashable {
    case host(HostMsg)
    case local(LocalIntent)
}

/// Things the client itself does or learns (not sent by the host).
public enum LocalIntent: Sendable, Hashable {
    /// The connection changed state.
    case connection(ConnectionState)
    /// The host welcomed us (with the `deviceID` the contract adds to `welcome`).
    case welcome(HostInfo)
    /// An answer to this approval is being sent on the live channel.
    case answerSending(ApprovalID)
    /// The host accepted the answer (its `approvalResolved` dismisses the card).
    case answerAccepted(ApprovalID)
    /// Someone answered first: the card shows who (`message` is the host's, naming them).
    case answerAlreadyResolved(ApprovalID, message: String)
    /// The answer could not be delivered or was refused; the approval is still pending on the host.
    case answerFailed(ApprovalID, message: String)
    case inputSending(SessionID)
    case inputAccepted(SessionID)
    case inputFailed(SessionID, message: String)
    /// Expand or collapse a tool row.
    case toggleTool(SessionID, toolCallID: String)
    case dismissBanner
}

/// The client's state machine: a pure function from (state, input) to state. Every view, the
/// notification handler, the widgets and the terminal client read its output; nothing else
/// changes `RemoteState`.
///
/// ### Invariants
/// - Events are applied once: an event at or below a transcript's cursor is ignored, so catch-up
///   after a reconnect may overlap what was seen and the result is the same.
/// - An approval never goes back from resolved or withdrawn to pending (a replayed request after
///   its resolution changes nothing).
/// - Sessions stay in attention order and `badge` counts NEEDS YOU, after every input.
public enum SessionReducer {
    public static func reduced(_ state: RemoteState, _ input: RemoteInput) -> RemoteState {
        var s = state
        reduce(&s, input)
        return s
    }

    public static func reduce(_ state: inout RemoteState, _ input: RemoteInput) {
        switch input {
        case .host(let message): apply(message, to: &state)
        case .local(let intent): apply(intent, to: &state)
        }
        sortSessions(&state.mirror)
    }

    // MARK: - Host messages

    static func apply(_ message: HostMsg, to state: inout RemoteState) {
        let deviceID = state.host?.deviceID
        switch message.body {
        case .sessionList(let sessions):
            state.mirror.sessions = sessions
            state.mirror.listed = true
        case .sessionUpdated(let summary), .sessionCreated(let summary):
            upsert(summary, into: &state.mirror)
        case .snapshot(let summary, let events, let pending, let cursor):
            upsert(summary, into: &state.mirror)
            var transcript = SessionTranscript()
            let input = state.mirror.transcripts[summary.sessionID]?.input ?? .idle
            for card in pending { upsert(card, into: &state.mirror) }
            for e in events where e.seq > transcript.cursor {
                transcript.apply(e, mirror: &state.mirror, sessionID: summary.sessionID, deviceID: deviceID)
            }
            for card in pending where !transcript.rows.contains(where: { $0.id == "approval:\(card.id.rawValue)" }) {
                transcript.rows.append(TranscriptRow(id: "approval:\(card.id.rawValue)", seq: cursor, content: .approval(card.id)))
            }
            transcript.cursor = max(transcript.cursor, cursor)
            transcript.truncated = (events.first?.seq ?? cursor + 1) > 1
            transcript.input = input
            state.mirror.transcripts[summary.sessionID] = transcript
        case .events(let id, let events):
            var transcript = state.mirror.transcripts[id] ?? SessionTranscript()
            for e in events where e.seq > transcript.cursor {
                transcript.apply(e, mirror: &state.mirror, sessionID: id, deviceID: deviceID)
            }
            state.mirror.transcripts[id] = transcript
        case .approvalRequested(let request):
            upsert(request, into: &state.mirror)
        case .approvalResolved(_, let resolution):
            resolve(resolution, in: &state.mirror, deviceID: deviceID)
        case .error(let code, let message, let sessionID):
            state.banner = sessionID.map { "\(code.rawValue) (session \($0.rawValue.prefix(8))): \(message)" } ?? "\(code.rawValue): \(message)"
        default:
            break  // welcome comes as `.welcome(HostInfo)`; the rest are replies a remote client does not draw
        }
    }

    static func upsert(_ summary: SessionSummary, into mirror: inout HostMirror) {
        if let i = mirror.sessions.firstIndex(where: { $0.sessionID == summary.sessionID }) {
            mirror.sessions[i] = summary
        } else {
            mirror.sessions.append(summary)
        }
    }

    static func upsert(_ request: ApprovalRequest, into mirror: inout HostMirror) {
        if var card = mirror.approvals[request.id] {
            guard card.outcome == .pending else { return }
            card.approval = request
            mirror.approvals[request.id] = card
        } else {
            mirror.approvals[request.id] = ApprovalCard(approval: request)
        }
    }

    static func resolve(_ r: ApprovalResolution, in mirror: inout HostMirror, deviceID: DeviceID?) {
        guard var card = mirror.approvals[r.approvalID] else { return }  // never seen: nothing to dismiss
        let mine = deviceID.map { r.decidedBy == "device:\($0.rawValue)" } ?? false
        card.outcome = .resolved(Resolution(decision: r.decision, decidedBy: r.decidedBy, decidedByLabel: r.decidedByLabel, byThisDevice: mine))
        card.action = .idle
        mirror.approvals[r.approvalID] = card
    }

    static func sortSessions(_ mirror: inout HostMirror) {
        mirror.sessions.sort(by: SessionSummary.attentionOrder)
        mirror.badge = mirror.sessions.count { $0.status.bucket == .needsYou && !$0.status.isArchived }
    }

    // MARK: - Local intents

    static func apply(_ intent: LocalIntent, to state: inout RemoteState) {
        switch intent {
        case .connection(let c):
            state.connection = c
            if !c.isLive {
                // Nothing is in flight once the channel is gone: in-flight sends failed.
                for (id, card) in state.mirror.approvals where card.action == .sending {
                    state.mirror.approvals[id]!.action = .failed("the connection dropped before the host answered; the approval is still pending")
                }
                for (id, t) in state.mirror.transcripts where t.input == .sending {
                    state.mirror.transcripts[id]!.input = .failed("the connection dropped before the host answered; send again when connected")
                }
            }
        case .welcome(let info):
            state.host = info
        case .answerSending(let id):
            if state.mirror.approvals[id]?.outcome == .pending { state.mirror.approvals[id]!.action = .sending }
        case .answerAccepted(let id):
            if state.mirror.approvals[id] != nil { state.mirror.approvals[id]!.action = .idle }
        case .answerAlreadyResolved(let id, let message):
            guard var card = state.mirror.approvals[id] else { return }
            card.action = .idle
            // The host's `approvalResolved` says exactly who and what; until then, its message does.
            if card.outcome == .pending { card.outcome = .answeredElsewhere(message: message) }
            state.mirror.approvals[id] = card
        case .answerFailed(let id, let message):
            if state.mirror.approvals[id] != nil { state.mirror.approvals[id]!.action = .failed(message) }
        case .inputSending(let id):
            state.mirror.transcripts[id, default: SessionTranscript()].input = .sending
        case .inputAccepted(let id):
            state.mirror.transcripts[id, default: SessionTranscript()].input = .idle
        case .inputFailed(let id, let message):
            state.mirror.transcripts[id, default: SessionTranscript()].input = .failed(message)
        case .toggleTool(let id, let toolCallID):
            guard var t = state.mirror.transcripts[id], let i = t.rows.firstIndex(where: { $0.id == "tool:\(toolCallID)" }),
                case .tool(var tool) = t.rows[i].content
            else { return }
            tool.collapsed.toggle()
            t.rows[i].content = .tool(tool)
            state.mirror.transcripts[id] = t
        case .dismissBanner:
            state.banner = nil
        }
    }
}
