public import NucleicProtocol

/// The pure core of the notifier service: what to show, replace and withdraw on which channel,
/// and when, from what the host says about its sessions and who is looking. `apply(_:at:)`
/// changes the state and returns the effects the service performs; time comes with every event
/// (a fake clock in tests), and `nextDeadline` says when to tick next.
///
/// Each session has at most one live notification (an `Alert`), derived from the session:
/// needs-you while it has a pending approval (the oldest one names it), done while it has none
/// and its run finished or failed, nothing otherwise. A change of that derived state replaces
/// the alert (same collapse id when the category is the same) or withdraws it.
///
/// The ladder: an alert is due on the desk at once, on device channels after the grace time,
/// on further channels after the further delay; quiet hours hold the rungs past the desk until
/// they end. A channel is only told what it takes (its categories).
///
/// ### Invariants
/// - At most one alert per session; a channel is shown an alert at most once (a failed show is
///   tried again, with backoff, up to the policy's cap).
/// - A session with a foreground subscriber is not notified: an alert that arises while the
///   person looks is born seen, and an alert the person begins to look at is withdrawn and not
///   escalated further. Seen alerts stay seen when the view closes (the person saw them).
/// - An alert that is no longer current is withdrawn from every channel it was shown on (or
///   being shown on), and nothing more is sent for it.
/// - `alerts` is everything needed to carry on after a restart: a restored notifier shown the
///   same sessions sends nothing again.
public struct Notifier: Sendable, Hashable {
    /// What makes an alert itself: a new identity is a new notification.
    public enum Identity: Sendable, Hashable {
        /// The session waits on this approval (its oldest pending one).
        case needsYou(ApprovalID)
        /// The run ended so (`finished` or `error`).
        case done(SessionStatus)
    }

    /// Where one alert stands on one channel.
    public enum Delivery: Sendable, Hashable {
        /// Its rung comes at this time.
        case waiting(until: Timestamp)
        /// The service is showing it (attempt 1 is the first).
        case sending(attempt: Int)
        /// The channel has it; `handle` is the channel's own id for it (the desktop's), if any.
        case shown(handle: String?)
        /// Attempt `attempt` failed; the next is at `at`.
        case retrying(attempt: Int, at: Timestamp)
        /// Every attempt failed; the last error.
        case gaveUp(String)
        /// Not sent: the person was looking.
        case suppressed
    }

    /// The one live notification of a session.
    public struct Alert: Sendable, Hashable {
        public var identity: Identity
        public var payload: NotificationPayload
        public var createdAt: Timestamp
        /// Born or made seen under a foreground subscriber: nothing more is sent.
        public var seen: Bool
        public var deliveries: [ChannelID: Delivery]

        public init(identity: Identity, payload: NotificationPayload, createdAt: Timestamp, seen: Bool = false,
                    deliveries: [ChannelID: Delivery] = [:]) {
            self.identity = identity
            self.payload = payload
            self.createdAt = createdAt
            self.seen = seen
            self.deliveries = deliveries
        }
    }

    /// What the notifier knows of a session: enough for a payload, never the tool input.
    public struct SessionView: Sendable, Hashable {
        public var project: String
        public var title: String
        public var handle: String?
        public var status: SessionStatus
        public var foreground: Bool
        /// Pending approvals, oldest first.
        public var pending: [PendingApproval]

        public init(project: String, title: String, handle: String?, status: SessionStatus, foreground: Bool = false,
                    pending: [PendingApproval] = []) {
            self.project = project
            self.title = title
            self.handle = handle
            self.status = status
            self.foreground = foreground
            self.pending = pending
        }
    }

    /// A pending approval, reduced to what a payload may say about it.
    public struct PendingApproval: Sendable, Hashable {
        public var id: ApprovalID
        public var toolName: String
        public var risk: Risk
        public var isQuestion: Bool

        public init(id: ApprovalID, toolName: String, risk: Risk, isQuestion: Bool) {
            self.id = id
            self.toolName = toolName
            self.risk = risk
            self.isQuestion = isQuestion
        }

        public init(_ request: ApprovalRequest) {
            self.init(id: request.id, toolName: request.toolName, risk: request.risk, isQuestion: request.question != nil)
        }

        /// The risk gate's rule (`RiskGate.allowsInline` in NucleicRemoteKit): readOnly, write
        /// and execute may be allowed in one step; questions are answered on the card.
        public var answerableInline: Bool { !isQuestion && risk <= .execute }
    }

    public enum Event: Sendable, Hashable {
        /// Everything at once: at start (after a restart too), the sessions and their pending
        /// approvals. Replaces what was known; foreground flags are kept.
        case snapshot([SessionSummary], pending: [ApprovalRequest])
        case sessionUpdated(SessionSummary)
        case approvalRequested(ApprovalRequest)
        case approvalResolved(SessionID, ApprovalID)
        /// Whether some subscriber has the session's view open.
        case presence(SessionID, foreground: Bool)
        /// The channels there are now (a device registered or removed its push channel, the
        /// config changed).
        case channels([ChannelInfo])
        case settings(NotifierSettings)
        /// Time passed.
        case tick
        /// What became of a `show`.
        case delivered(ChannelID, SessionID, Identity, DeliveryOutcome)
    }

    public enum DeliveryOutcome: Sendable, Hashable {
        case shown(handle: String?)
        case failed(String)
        /// The provider says the channel no longer exists (HTTP 410, APNs `Unregistered`).
        case gone
    }

    public enum Effect: Sendable, Hashable {
        /// Show the payload on the channel, replacing the channel's notification `replacing`
        /// (its handle) when there is one, else whatever has the payload's collapse id.
        case show(ChannelID, NotificationPayload, identity: Identity, replacing: String?, attempt: Int)
        /// Take the notification with this collapse id (and handle, when known) off the channel.
        case withdraw(ChannelID, NotificationPayload, handle: String?)
        /// The channel is gone: delete its registration.
        case forget(ChannelID)
        /// A delivery failed: the daemon log gets a line; `retryAt` nil when it was the last try.
        case failed(ChannelID, collapseID: String, attempt: Int, message: String, retryAt: Timestamp?)
    }

    /// The last thing each channel did (for `nucleic notify ls`).
    public struct LastDelivery: Sendable, Hashable {
        public var at: Timestamp
        public var collapseID: String
        /// `shown`, `withdrawn`, `failed: …`, `gone`.
        public var result: String
    }

    public private(set) var settings: NotifierSettings
    public private(set) var channels: [ChannelID: ChannelInfo] = [:]
    public private(set) var sessions: [SessionID: SessionView] = [:]
    public private(set) var alerts: [SessionID: Alert]
    public private(set) var lastDelivery: [ChannelID: LastDelivery] = [:]

    /// A notifier that carries on from `alerts` (what a previous run left). A show in flight
    /// when that run ended is tried again: a channel may see it twice (with the same collapse
    /// id, so it replaces itself), never not at all.
    public init(settings: NotifierSettings = NotifierSettings(), channels: [ChannelInfo] = [], restoring alerts: [SessionID: Alert] = [:]) {
        self.settings = settings
        for c in channels { self.channels[c.id] = c }
        self.alerts = alerts.mapValues { alert in
            var a = alert
            for (c, d) in a.deliveries { if case .sending(let n) = d { a.deliveries[c] = .retrying(attempt: n, at: Timestamp(millisecondsSince1970: 0)) } }
            return a
        }
    }

    /// When the service must tick next, if anything waits.
    public var nextDeadline: Timestamp? {
        var next: Timestamp?
        for alert in alerts.values where !alert.seen {
            for d in alert.deliveries.values {
                let t: Timestamp
                switch d {
                case .waiting(let until): t = until
                case .retrying(_, let at): t = at
                default: continue
                }
                if next == nil || t < next! { next = t }
            }
        }
        return next
    }

    public mutating func apply(_ event: Event, at now: Timestamp) -> [Effect] {
        var effects: [Effect] = []
        switch event {
        case .snapshot(let summaries, let pending):
            var views: [SessionID: SessionView] = [:]
            for s in summaries { views[s.sessionID] = Self.view(s, foreground: sessions[s.sessionID]?.foreground ?? false) }
            for r in pending.sorted(by: Self.older) {
                guard let id = r.sessionID, views[id] != nil else { continue }
                views[id]!.pending.append(PendingApproval(r))
            }
            sessions = views
        case .sessionUpdated(let summary):
            let old = sessions[summary.sessionID]
            var view = Self.view(summary, foreground: old?.foreground ?? false)
            view.pending = old?.pending ?? []
            // A session that no longer waits and counts no pending approval has none (one
            // withdrawn with its turn is not announced as resolved).
            if summary.pendingApprovals == 0, summary.status != .awaitingApproval, summary.status != .awaitingInput {
                view.pending = []
            }
            sessions[summary.sessionID] = view
        case .approvalRequested(let request):
            guard let id = request.sessionID else { break }
            if sessions[id] == nil { sessions[id] = SessionView(project: "", title: "", handle: nil, status: .awaitingApproval) }
            if !sessions[id]!.pending.contains(where: { $0.id == request.id }) { sessions[id]!.pending.append(PendingApproval(request)) }
        case .approvalResolved(let id, let approval):
            sessions[id]?.pending.removeAll { $0.id == approval }
        case .presence(let id, let foreground):
            sessions[id]?.foreground = foreground
            if sessions[id] == nil, foreground {
                sessions[id] = SessionView(project: "", title: "", handle: nil, status: .queued, foreground: true)
            }
        case .channels(let list):
            let old = channels
            channels = [:]
            for c in list { channels[c.id] = c }
            for sid in alerts.keys.sorted() {
                let alert = alerts[sid]!
                for (id, d) in alert.deliveries.sorted(by: { $0.key < $1.key })
                where channels[id] == nil || !channels[id]!.categories.contains(alert.payload.category) {
                    alerts[sid]!.deliveries[id] = nil
                    if Self.reached(d) { effects.append(.withdraw(id, alert.payload, handle: Self.handle(d))) }
                }
                // A channel that is new (a device registered now) joins the ladder where it stands.
                for c in channels.values.sorted(by: { $0.id < $1.id })
                where alert.deliveries[c.id] == nil && c.categories.contains(alert.payload.category) && old[c.id] == nil {
                    alerts[sid]!.deliveries[c.id] = alert.seen ? .suppressed : .waiting(until: dueTime(c.stage, from: alert.createdAt))
                }
            }
        case .settings(let s):
            settings = s
        case .tick:
            break
        case .delivered(let channel, let sid, let identity, let outcome):
            effects += delivered(channel, sid, identity, outcome, at: now)
        }
        if case .snapshot = event { effects += reconcile(at: now, fromSnapshot: true) } else { effects += reconcile(at: now) }
        effects += due(at: now)
        return effects
    }

    // MARK: - Deriving alerts

    static func older(_ a: ApprovalRequest, _ b: ApprovalRequest) -> Bool {
        (a.createdAt ?? Timestamp(millisecondsSince1970: 0), a.id) < (b.createdAt ?? Timestamp(millisecondsSince1970: 0), b.id)
    }

    static func view(_ s: SessionSummary, foreground: Bool) -> SessionView {
        SessionView(project: s.projectName, title: s.title, handle: s.handle, status: s.status, foreground: foreground)
    }

    /// The alert a session calls for now, if any (before settings filter it).
    static func wanted(_ id: SessionID, _ view: SessionView) -> (Identity, NotificationPayload)? {
        guard !view.status.isArchived, !view.project.isEmpty || !view.title.isEmpty else { return nil }
        if let first = view.pending.first {
            let reason = NotificationPayload.reason(toolName: first.toolName, risk: first.risk, isQuestion: first.isQuestion)
            return (.needsYou(first.id), NotificationPayload(
                project: view.project, title: view.title, handle: view.handle, category: .needsYou, reason: reason,
                sessionID: id, approvalID: first.id, answerableInline: first.answerableInline))
        }
        switch view.status {
        case .finished, .error:
            return (.done(view.status), NotificationPayload(
                project: view.project, title: view.title, handle: view.handle, category: .done,
                reason: view.status == .finished ? "finished" : "failed", sessionID: id))
        default:
            return nil
        }
    }

    /// Makes `alerts` match what the sessions call for: new alerts, replaced ones, withdrawn ones.
    ///
    /// From a snapshot (the daemon's start), a run found already over is not news: its done alert
    /// is born seen, so a start does not announce every finished session again. A pending
    /// approval is notified.
    mutating func reconcile(at now: Timestamp, fromSnapshot: Bool = false) -> [Effect] {
        var effects: [Effect] = []
        for id in Set(alerts.keys).union(sessions.keys).sorted() {
            let view = sessions[id]
            let want = view.flatMap { Self.wanted(id, $0) }.flatMap { settings.categories.contains($0.1.category) ? $0 : nil }
            let current = alerts[id]
            if let current, let want, current.identity == want.0 {
                // The same state: a title or handle that changed is not worth a notification.
                if view!.foreground && !current.seen { effects += markSeen(id) }
                continue
            }
            var handles: [ChannelID: String?] = [:]
            if let current {
                for (c, d) in current.deliveries.sorted(by: { $0.key < $1.key }) where Self.reached(d) {
                    // The same category replaces in place (same collapse id); another is withdrawn.
                    if let want, want.1.category == current.payload.category, !(view?.foreground ?? false) {
                        handles.updateValue(Self.handle(d), forKey: c)
                    } else {
                        effects.append(.withdraw(c, current.payload, handle: Self.handle(d)))
                        record(c, current.payload, "withdrawn", at: now)
                    }
                }
                alerts[id] = nil
            }
            guard let want else { continue }
            let old = fromSnapshot && current == nil && want.1.category == .done
            var alert = Alert(identity: want.0, payload: want.1, createdAt: now, seen: view!.foreground || old)
            for c in channels.values.sorted(by: { $0.id < $1.id }) where c.categories.contains(want.1.category) {
                if alert.seen {
                    alert.deliveries[c.id] = .suppressed
                } else if handles[c.id] != nil {
                    // Replacing what the channel shows happens at once, whatever the rung: the
                    // channel already has this session's notification, and it must not go stale.
                    alert.deliveries[c.id] = .waiting(until: now)
                } else {
                    alert.deliveries[c.id] = .waiting(until: dueTime(c.stage, from: now))
                }
            }
            alerts[id] = alert
            replacing[id] = handles.compactMapValues { $0 }
        }
        return effects
    }

    /// The handles the next show on each channel replaces, per session (not part of the state
    /// a restart needs: a replacement is due at once).
    private var replacing: [SessionID: [ChannelID: String]] = [:]

    func dueTime(_ stage: LadderStage, from t: Timestamp) -> Timestamp {
        let due = Timestamp(millisecondsSince1970: t.millisecondsSince1970 + settings.delay(stage))
        guard stage != .desk, let quiet = settings.quietHours else { return due }
        return quiet.release(due, utcOffsetMinutes: settings.utcOffsetMinutes)
    }

    /// The person looks at the session: what was shown goes, nothing more is sent.
    mutating func markSeen(_ id: SessionID) -> [Effect] {
        guard var alert = alerts[id] else { return [] }
        var effects: [Effect] = []
        alert.seen = true
        for (c, d) in alert.deliveries.sorted(by: { $0.key < $1.key }) {
            if Self.reached(d) { effects.append(.withdraw(c, alert.payload, handle: Self.handle(d))) }
            alert.deliveries[c] = .suppressed
        }
        alerts[id] = alert
        return effects
    }

    static func reached(_ d: Delivery) -> Bool {
        switch d {
        case .shown, .sending: true
        case .retrying(let attempt, _): attempt > 0
        default: false
        }
    }

    static func handle(_ d: Delivery) -> String? {
        if case .shown(let h) = d { return h }
        return nil
    }

    // MARK: - Sending

    /// Shows what is due now.
    mutating func due(at now: Timestamp) -> [Effect] {
        var effects: [Effect] = []
        for id in alerts.keys.sorted() where !alerts[id]!.seen {
            for (c, d) in alerts[id]!.deliveries.sorted(by: { $0.key < $1.key }) {
                let attempt: Int
                switch d {
                case .waiting(let until) where until <= now: attempt = 1
                case .retrying(let n, let at) where at <= now: attempt = n + 1
                default: continue
                }
                alerts[id]!.deliveries[c] = .sending(attempt: attempt)
                let replaced = replacing[id]?.removeValue(forKey: c)
                effects.append(.show(c, alerts[id]!.payload, identity: alerts[id]!.identity, replacing: replaced, attempt: attempt))
            }
            if replacing[id]?.isEmpty == true { replacing[id] = nil }
        }
        return effects
    }

    mutating func delivered(_ channel: ChannelID, _ id: SessionID, _ identity: Identity, _ outcome: DeliveryOutcome,
                            at now: Timestamp) -> [Effect] {
        guard let alert = alerts[id], alert.identity == identity, case .sending(let attempt)? = alert.deliveries[channel] else {
            // A result for an alert that is gone or replaced: what it showed must not linger.
            if case .shown(let handle) = outcome, let handle, let payload = stalePayload(id, identity) {
                if case .shown(let current)? = alerts[id]?.deliveries[channel], current == handle { return [] }
                return [.withdraw(channel, payload, handle: handle)]
            }
            if outcome == .gone { return forget(channel, at: now) }
            return []
        }
        switch outcome {
        case .shown(let handle):
            alerts[id]!.deliveries[channel] = .shown(handle: handle)
            record(channel, alert.payload, "shown", at: now)
            return []
        case .failed(let message):
            let retryAt: Timestamp? = attempt < settings.retry.attempts
                ? Timestamp(millisecondsSince1970: now.millisecondsSince1970 + settings.retry.delay(after: attempt)) : nil
            alerts[id]!.deliveries[channel] = retryAt.map { .retrying(attempt: attempt, at: $0) } ?? .gaveUp(message)
            record(channel, alert.payload, "failed: \(message)", at: now)
            return [.failed(channel, collapseID: alert.payload.collapseID, attempt: attempt, message: message, retryAt: retryAt)]
        case .gone:
            record(channel, alert.payload, "gone", at: now)
            return forget(channel, at: now)
        }
    }

    /// The payload of a replaced alert, rebuilt enough to withdraw it (collapse id and ids).
    func stalePayload(_ id: SessionID, _ identity: Identity) -> NotificationPayload? {
        let category: NotificationCategory
        var approval: ApprovalID?
        switch identity {
        case .needsYou(let a): category = .needsYou; approval = a
        case .done: category = .done
        }
        let view = sessions[id]
        return NotificationPayload(project: view?.project ?? "", title: view?.title ?? "", handle: view?.handle, category: category,
                                   reason: "", sessionID: id, approvalID: approval)
    }

    mutating func forget(_ channel: ChannelID, at now: Timestamp) -> [Effect] {
        channels[channel] = nil
        for id in alerts.keys { alerts[id]!.deliveries[channel] = nil }
        return [.forget(channel)]
    }

    mutating func record(_ channel: ChannelID, _ payload: NotificationPayload, _ result: String, at now: Timestamp) {
        lastDelivery[channel] = LastDelivery(at: now, collapseID: payload.collapseID, result: result)
    }
}
