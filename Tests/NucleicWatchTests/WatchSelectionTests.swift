import NucleicProtocol
import NucleicRemoteKit
import NucleicWatch
import Testing

@Suite struct WatchSelectionTests {
    static let a3: ApprovalID = "0193b000-0000-7000-8000-000000000003"

    func card(_ id: ApprovalID, session: SessionID, second: Int64, outcome: ApprovalCard.Outcome = .pending) -> ApprovalCard {
        var request = Fx.approval(id, session: session, risk: .execute)
        request.createdAt = Fx.ts(second)
        return ApprovalCard(approval: request, outcome: outcome)
    }

    @Test func emptyMirrorSelectsNothing() {
        #expect(WatchSelection().advanced(in: HostMirror()) == WatchSelection(selected: nil))
    }

    @Test func oldestPendingOfTheTopNeedsYouSessionThenStickyUntilResolved() {
        // s2 is first in attention order (updated later); s1's approval is older but not its.
        var mirror = HostMirror(sessions: [Fx.summary(Fx.s2, "b", .awaitingApproval, second: 9, pending: 2),
                                           Fx.summary(Fx.s1, "a", .awaitingApproval, second: 5, pending: 1)],
                                badge: 2,
                                approvals: [Fx.a1: card(Fx.a1, session: Fx.s1, second: 1),
                                            Fx.a2: card(Fx.a2, session: Fx.s2, second: 4),
                                            Self.a3: card(Self.a3, session: Fx.s2, second: 3)])
        var selection = WatchSelection().advanced(in: mirror)
        #expect(selection == WatchSelection(selected: Self.a3))

        // s1 moves to the top and gains an older approval: the card stays where it is.
        mirror.sessions.reverse()
        selection = selection.advanced(in: mirror)
        #expect(selection == WatchSelection(selected: Self.a3))

        // a3 is answered: the rule picks again, now from s1 (the top session).
        mirror.approvals[Self.a3]!.outcome = .withdrawn(reason: "answered")
        selection = selection.advanced(in: mirror)
        #expect(selection == WatchSelection(selected: Fx.a1))

        // a1 resolved too: s2's remaining approval.
        mirror.approvals[Fx.a1]!.outcome = .resolved(Resolution(decision: .allow, decidedBy: "user:ana", decidedByLabel: nil, byThisDevice: false))
        selection = selection.advanced(in: mirror)
        #expect(selection == WatchSelection(selected: Fx.a2))

        // Nothing pending: no card.
        mirror.approvals[Fx.a2]!.outcome = .withdrawn(reason: "session ended")
        selection = selection.advanced(in: mirror)
        #expect(selection == WatchSelection(selected: nil))
    }

    @Test func approvalWithNoListedSessionIsStillShown() {
        let mirror = HostMirror(approvals: [Fx.a1: card(Fx.a1, session: Fx.s1, second: 1)])
        #expect(WatchSelection().advanced(in: mirror) == WatchSelection(selected: Fx.a1))
    }
}
