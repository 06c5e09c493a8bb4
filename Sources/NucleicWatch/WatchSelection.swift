public import NucleicProtocol
public import NucleicRemoteKit

/// Which approval a live view's card shows (`nucleic watch`, the phone's approval card): the
/// oldest pending approval of the top NEEDS YOU session, sticky until it is resolved or
/// withdrawn, so a newer or more urgent arrival never moves the card under the person's key.
///
/// The person may move the card themselves (`selecting(session:in:)`, the watch list's j/k):
/// it then shows that session's oldest pending approval, or — when the session has none — stays
/// empty for it (`held`) instead of jumping elsewhere, until an approval of that session comes
/// or the person moves again. Once the approval on the card is answered, the rule chooses again.
///
/// ### Invariants
/// - `selected` is nil or a pending approval of `mirror`, after every `advanced(in:)`.
/// - A selected approval that is still pending stays selected, whatever else arrives.
/// - `held` is set only while `selected` is nil.
public struct WatchSelection: Sendable, Hashable {
    public var selected: ApprovalID?
    /// The session the person moved to that had no pending approval: nothing else is chosen
    /// while it holds.
    public var held: SessionID?

    public init(selected: ApprovalID? = nil, held: SessionID? = nil) {
        self.selected = selected
        self.held = selected == nil ? held : nil
    }

    /// The selection after `mirror` changed: kept while still pending, else the rule's choice
    /// (or, while a session is held, that session's first approval when one comes).
    public func advanced(in mirror: HostMirror) -> WatchSelection {
        if let selected, mirror.approvals[selected]?.outcome == .pending { return self }
        if selected == nil, let held, mirror.summary(held).map({ !$0.status.isArchived }) == true {
            return WatchSelection(selected: Self.oldest(of: held, in: mirror), held: held)
        }
        return WatchSelection(selected: Self.choice(in: mirror))
    }

    /// The person moved to `session`: its oldest pending approval, else nothing, held.
    public static func selecting(session: SessionID, in mirror: HostMirror) -> WatchSelection {
        WatchSelection(selected: oldest(of: session, in: mirror), held: session)
    }

    /// The oldest pending approval of the first NEEDS YOU session (attention order) that has
    /// one; then the oldest pending approval with no listed session; nil when none is pending.
    public static func choice(in mirror: HostMirror) -> ApprovalID? {
        let pending = mirror.pendingApprovals
        guard !pending.isEmpty else { return nil }
        for session in mirror.sessions where session.status.bucket == .needsYou {
            if let card = pending.first(where: { $0.approval.sessionID == session.sessionID }) { return card.approval.id }
        }
        return pending.first?.approval.id
    }

    /// `session`'s oldest pending approval.
    public static func oldest(of session: SessionID, in mirror: HostMirror) -> ApprovalID? {
        mirror.pendingApprovals.first { $0.approval.sessionID == session }?.approval.id
    }
}
