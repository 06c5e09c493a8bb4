public import NucleicProtocol

/// Everything a remote client shows, as one value: what the views render and what the reducer
/// produces (`SessionReducer`). The phone holds no canonical state: `mirror` is a projection of
/// the host, the rest is this client's connection and its in-flight actions.
///
/// ### Invariants
/// - `mirror.sessions` is in attention order (DESIGN.md §6) and `mirror.badge` counts its NEEDS
///   YOU sessions, after every reduction.
/// - Actions (answers, inputs) are enabled only while `connection.isLive` and the scope allows
///   them; nothing is ever queued to send later.
public struct RemoteState: Sendable, Hashable {
    public var connection: ConnectionState
    /// Who the host is and what this device may do, from the last `welcome`.
    public var host: HostInfo?
    /// The projection of the host's sessions and approvals.
    public var mirror: HostMirror
    /// The last error the host reported that no request was waiting for.
    public var banner: String?

    public init(connection: ConnectionState = .disconnected(asOf: nil), host: HostInfo? = nil, mirror: HostMirror = HostMirror(), banner: String? = nil) {
        self.connection = connection
        self.host = host
        self.mirror = mirror
        self.banner = banner
    }

    /// Whether answers and inputs may be sent now: a live channel and a scope of `approve` or more.
    public var actionsEnabled: Bool { connection.isLive && (host?.scope ?? .view) >= .approve }

    /// Why actions are disabled, for the UI ("reconnect to act"), or nil when they are enabled.
    public var actionsDisabledReason: String? {
        if !connection.isLive { return "reconnect to act" }
        if (host?.scope ?? .view) < .approve { return "this device may only view (scope \(host?.scope.rawValue ?? "view"))" }
        return nil
    }

    /// Whether `approvalID` can be answered now: pending, not being sent, actions enabled.
    public func canAnswer(_ approvalID: ApprovalID) -> Bool {
        guard actionsEnabled, let card = mirror.approvals[approvalID], card.outcome == .pending else { return false }
        return card.action != .sending
    }
}

/// Who the host is (from `welcome`).
public struct HostInfo: Sendable, Hashable {
    public var hostName: String
    public var hostVersion: String
    public var scope: Scope
    /// This device's id on the host: an answer from here is `decidedBy: device:<id>`.
    public var deviceID: DeviceID?

    public init(hostName: String, hostVersion: String, scope: Scope, deviceID: DeviceID?) {
        self.hostName = hostName
        self.hostVersion = hostVersion
        self.scope = scope
        self.deviceID = deviceID
    }
}

/// The connection chip of the UX seed (§6). Timestamps say how fresh the shown data is.
public enum ConnectionState: Sendable, Hashable {
    /// Not started, or stopped by the user: a read-only, stale view.
    case disconnected(asOf: Timestamp?)
    /// Live. `catchingUp` counts resubscriptions not yet answered ("catching up…").
    case connected(since: Timestamp, catchingUp: Int)
    /// The link dropped (or has not come up yet); retrying. Data shown is as of `asOf`.
    case reconnecting(asOf: Timestamp?, attempt: Int, reason: String)
    /// The host cannot be reached at all (refused, no route, timed out); retrying.
    case hostOffline(asOf: Timestamp?, attempt: Int, reason: String)
    /// The host does not know this device (removed there): pair again. No more retries.
    case unauthorized(message: String)
    /// The host speaks another protocol version. No more retries.
    case incompatible(message: String)

    /// Whether actions may be sent.
    public var isLive: Bool { if case .connected = self { true } else { false } }

    /// When the data shown was last live, if it is stale.
    public var asOf: Timestamp? {
        switch self {
        case .disconnected(let t), .reconnecting(let t, _, _), .hostOffline(let t, _, _): t
        default: nil
        }
    }

    /// The chip's text, e.g. `Reconnecting · as of 09:41`. `utcOffsetSeconds` is the viewer's
    /// time zone offset (the kit stays Foundation-free).
    public func chip(utcOffsetSeconds: Int = 0) -> String {
        let stamp = asOf.map { " · as of \(Self.hhmm($0, utcOffsetSeconds))" } ?? ""
        switch self {
        case .connected(_, let catchingUp): return catchingUp > 0 ? "● Connected · catching up…" : "● Connected"
        case .reconnecting(nil, 0, _): return "◐ Connecting…"
        case .reconnecting: return "◐ Reconnecting" + stamp
        case .disconnected: return "○ Disconnected" + stamp
        case .hostOffline: return "○ Host offline" + stamp
        case .unauthorized: return "○ This device was removed on the host"
        case .incompatible: return "○ Update needed"
        }
    }

    /// `HH:MM` of `t` shifted by `offset` seconds.
    public static func hhmm(_ t: Timestamp, _ offset: Int = 0) -> String {
        let minutes = ((t.millisecondsSince1970 / 1000 + Int64(offset)) / 60) % 1440
        let m = minutes < 0 ? minutes + 1440 : minutes
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(two(m / 60)):\(two(m % 60))"
    }
}

/// What the host has, as this client has seen it.
public struct HostMirror: Sendable, Hashable {
    /// Sessions in attention order: NEEDS YOU, RUNNING, DONE, most recently updated first.
    public var sessions: [SessionSummary]
    /// NEEDS YOU sessions: the app icon badge.
    public var badge: Int
    /// Each subscribed session's transcript.
    public var transcripts: [SessionID: SessionTranscript]
    /// Every approval seen, by id: pending ones and the resolved ones whose cards stay dismissed.
    public var approvals: [ApprovalID: ApprovalCard]
    /// A session list has arrived (so `sessions` is the host's, not just what pushes told).
    public var listed: Bool

    public init(sessions: [SessionSummary] = [], badge: Int = 0, transcripts: [SessionID: SessionTranscript] = [:],
                approvals: [ApprovalID: ApprovalCard] = [:], listed: Bool = false) {
        self.listed = listed
        self.sessions = sessions
        self.badge = badge
        self.transcripts = transcripts
        self.approvals = approvals
    }

    /// Pending approvals, oldest first (by creation time, then id).
    public var pendingApprovals: [ApprovalCard] {
        approvals.values.filter { $0.outcome == .pending }.sorted {
            let a = $0.approval.createdAt?.millisecondsSince1970 ?? 0, b = $1.approval.createdAt?.millisecondsSince1970 ?? 0
            return a != b ? a < b : $0.approval.id < $1.approval.id
        }
    }

    public func summary(_ id: SessionID) -> SessionSummary? { sessions.first { $0.sessionID == id } }
}

/// One approval as a card: the request, what became of it, and this client's attempt to answer.
public struct ApprovalCard: Sendable, Hashable {
    public enum Outcome: Sendable, Hashable {
        case pending
        /// Answered (here or elsewhere): the card is dismissed with `resolution.summary`.
        case resolved(Resolution)
        /// This client's answer came too late (`alreadyResolved`): a normal outcome, not an
        /// error. `message` is the host's, naming who answered; `resolved` follows.
        case answeredElsewhere(message: String)
        /// No answer is needed any more.
        case withdrawn(reason: String)
    }

    /// This client's answer in flight (never queued: `sending` only while the channel is live).
    public enum Action: Sendable, Hashable {
        case idle
        case sending
        /// The send failed (the link dropped); the approval is still pending on the host.
        case failed(String)
    }

    public var approval: ApprovalRequest
    public var outcome: Outcome
    public var action: Action

    public init(approval: ApprovalRequest, outcome: Outcome = .pending, action: Action = .idle) {
        self.approval = approval
        self.outcome = outcome
        self.action = action
    }

    /// How it may be answered (`RiskGate`).
    public var verdict: RiskGate.Verdict { RiskGate.verdict(for: approval) }
}

/// Who answered an approval, as a card shows it.
public struct Resolution: Sendable, Hashable {
    public var decision: Decision
    public var decidedBy: String
    public var decidedByLabel: String?
    /// Answered by this device.
    public var byThisDevice: Bool

    public init(decision: Decision, decidedBy: String, decidedByLabel: String?, byThisDevice: Bool) {
        self.decision = decision
        self.decidedBy = decidedBy
        self.decidedByLabel = decidedByLabel
        self.byThisDevice = byThisDevice
    }

    /// `approved on Ana's iPhone`, `denied on the host (ana)`, `approved by a rule`.
    public var summary: String {
        let verb: String = switch decision {
        case .answer: "answered"
        case .cancel: "cancelled"
        default: decision.allowsTool ? "approved" : "denied"
        }
        if let decidedByLabel { return "\(verb) on \(decidedByLabel)" }
        if decidedBy.hasPrefix("user:") { return "\(verb) on the host (\(decidedBy.dropFirst(5)))" }
        if decidedBy.hasPrefix("rule:") { return "\(verb) by a rule" }
        if decidedBy.hasPrefix("device:") { return "\(verb) on device \(decidedBy.dropFirst(7).prefix(8))" }
        return "\(verb) (\(decidedBy))"
    }
}

/// What the "what needs me" query returns: one thing waiting for a person.
public struct NeedsMeItem: Sendable, Hashable {
    public var sessionID: SessionID?
    public var title: String
    /// Set when an approval waits.
    public var approval: ApprovalCard?
    /// Why the session needs someone (`awaitingInput`, `error`, …) when no approval waits.
    public var status: SessionStatus?
    /// Where tapping leads.
    public var route: Route
}

extension RemoteState {
    /// What needs me: every pending approval (its session's title), then every NEEDS YOU session
    /// with no pending approval, in attention order.
    public var needsMe: [NeedsMeItem] {
        var items: [NeedsMeItem] = []
        var covered = Set<SessionID>()
        for card in mirror.pendingApprovals {
            let session = card.approval.sessionID
            if let session { covered.insert(session) }
            let title = session.flatMap { mirror.summary($0)?.title } ?? card.approval.toolName
            items.append(NeedsMeItem(sessionID: session, title: title, approval: card, status: nil, route: .approval(card.approval.id)))
        }
        for s in mirror.sessions where s.status.bucket == .needsYou && !covered.contains(s.sessionID) {
            items.append(NeedsMeItem(sessionID: s.sessionID, title: s.title, approval: nil, status: s.status, route: .session(s.sessionID)))
        }
        return items
    }
}
