import NucleicProtocol
import NucleicRemoteKit
import NucleicWatch
import Testing

/// The list's cursor and the card move together; several approvals are answered at once only
/// when that is safe; the card asks the host what its rules say.
@Suite struct WatchCursorTests {
    static let a3: ApprovalID = "0193b000-0000-7000-8000-000000000003"

    /// s1 and s2 need a person (s1 on top), s3 is running.
    static func three() -> Script {
        var t = Script()
        t.live()
        t.host(.sessionList([Fx.summary(Fx.s1, "a", .awaitingApproval, second: 9, pending: 1),
                             Fx.summary(Fx.s2, "b", .awaitingApproval, second: 8, pending: 1),
                             Fx.summary(Fx.s3, "c", .running, second: 7)]))
        return t
    }

    @Test func theCursorFollowsTheCardAndJKMoveBoth() {
        var t = Self.three()
        t.expect(selected: nil, cursor: Fx.s1)
        t.host(.approvalRequested(Fx.approval(Fx.a2, session: Fx.s2, risk: .execute)))
        // The card shows s2's approval (the only one): the cursor goes with it.
        t.expect(selected: Fx.a2, cursor: Fx.s2)
        t.host(.approvalRequested(Fx.approval(Fx.a1, session: Fx.s1, risk: .execute)))
        t.expect(selected: Fx.a2, cursor: Fx.s2)  // sticky: s1 is on top but the card stays

        // k: s1, its approval on the card; j j: s3, which has none: the card is empty for it.
        t.key("k")
        t.expect(selected: Fx.a1, cursor: Fx.s1)
        t.key("j")
        t.expect(selected: Fx.a2, cursor: Fx.s2)
        t.key(.down)
        t.expect(selected: nil, cursor: Fx.s3, held: Fx.s3)
        #expect(t.key("a") == [])
        t.expect(selected: nil, cursor: Fx.s3, flash: "no approval is waiting in this session (n: the next one that needs you)", held: Fx.s3)

        // An approval elsewhere does not move it; one of s3 shows on its card.
        let flash = "no approval is waiting in this session (n: the next one that needs you)"
        t.host(.approvalRequested(Fx.approval(Self.a3, session: Fx.s1, risk: .execute, command: "make")))
        t.expect(selected: nil, cursor: Fx.s3, flash: flash, held: Fx.s3)
        var mine = Fx.approval(Self.a3, session: Fx.s3, risk: .execute, command: "make")
        mine.id = "0193b000-0000-7000-8000-000000000004"
        t.host(.approvalRequested(mine))
        t.expect(selected: mine.id, cursor: Fx.s3, flash: flash)

        // Answered: the rule chooses again (s1's oldest), and the cursor follows.
        #expect(t.key("a") == [.respond(mine.id, .allow, deliberate: false)])
        t.host(.approvalResolved(sessionID: Fx.s3, Fx.resolved(mine.id)))
        t.expect(selected: Fx.a1, cursor: Fx.s1)

        // n goes back to what the rule picks from wherever the cursor is.
        t.key("j")
        t.key("j")
        t.expect(selected: nil, cursor: Fx.s3, held: Fx.s3)
        t.key("n")
        t.expect(selected: Fx.a1, cursor: Fx.s1)
    }

    @Test func markedApprovalsAreAllowedTogetherOnlyWhenNoneIsRisky() {
        var t = Self.three()
        t.host(.approvalRequested(Fx.approval(Fx.a1, session: Fx.s1, risk: .execute, command: "make")))
        t.host(.approvalRequested(Fx.approval(Fx.a2, session: Fx.s2, risk: .write, command: "touch x")))
        t.expect(selected: Fx.a1, cursor: Fx.s1)
        t.key(" ")
        t.expect(selected: Fx.a1, cursor: Fx.s1, marked: [Fx.a1])
        t.key("j")
        t.key(" ")
        t.expect(selected: Fx.a2, cursor: Fx.s2, marked: [Fx.a1, Fx.a2])
        // a answers both, oldest first (a1 was created first); the marks are spent.
        #expect(t.key("a") == [.respond(Fx.a1, .allow, deliberate: false), .respond(Fx.a2, .allow, deliberate: false)])
        t.expect(selected: Fx.a2, cursor: Fx.s2)

        // With a risky one among them, allowing together is refused; denying is not.
        var risky = Fx.approval(Self.a3, session: Fx.s2, risk: .network, command: "curl https://example.com")
        risky.createdAt = Fx.ts(3)
        t.host(.approvalRequested(risky))
        t.key(" ")
        t.key("k")
        t.key(" ")
        t.expect(selected: Fx.a1, cursor: Fx.s1, marked: [Fx.a1, Fx.a2])
        t.key("j")
        t.expect(selected: Fx.a2, cursor: Fx.s2, marked: [Fx.a1, Fx.a2])
        // a2 is s2's oldest; mark a3 by answering... no: move the card to a3 when a2 is resolved.
        t.host(.approvalResolved(sessionID: Fx.s2, Fx.resolved(Fx.a2, by: "device:0193c000")))
        t.expect(selected: Fx.a1, cursor: Fx.s1, marked: [Fx.a1])
        t.key("j")
        t.expect(selected: Self.a3, cursor: Fx.s2, marked: [Fx.a1])
        t.key(" ")
        t.expect(selected: Self.a3, cursor: Fx.s2, marked: [Fx.a1, Self.a3])
        #expect(t.key("a") == [])
        t.expect(selected: Self.a3, cursor: Fx.s2, flash: "not sent: 1 of the 2 marked is risky (network): allow it one at a time",
                 marked: [Fx.a1, Self.a3])
        t.key("d")
        t.expect(selected: Self.a3, cursor: Fx.s2, mode: .prompt(WatchPrompt(.denyMarked([Fx.a1, Self.a3]))), marked: [Fx.a1, Self.a3])
        t.type("later")
        #expect(t.key(.enter) == [.respond(Fx.a1, .deny(message: "later"), deliberate: false),
                                  .respond(Self.a3, .deny(message: "later"), deliberate: false)])
        t.expect(selected: Self.a3, cursor: Fx.s2)

        // esc clears marks; space again unmarks.
        t.key(" ")
        t.key(" ")
        t.expect(selected: Self.a3, cursor: Fx.s2)
        t.key(" ")
        t.key(.escape)
        t.expect(selected: Self.a3, cursor: Fx.s2, flash: "marks cleared")
    }

    @Test func aQuestionIsNeverAllowedWithOthers() {
        var t = Self.three()
        t.host(.approvalRequested(Fx.approval(Fx.a1, session: Fx.s1, risk: .execute)))
        t.host(.approvalRequested(Fx.question(Fx.a2, session: Fx.s2, items: [Fx.colour])))
        t.key(" ")
        t.key("j")
        t.key(" ")
        #expect(t.key("a") == [])
        t.expect(selected: Fx.a2, cursor: Fx.s2, flash: "not sent: a marked approval is a question; answer it with its option's number",
                 marked: [Fx.a1, Fx.a2])
    }

    @Test func theCardAsksWhatTheRulesSayOncePerApproval() {
        var t = Self.three()
        #expect(t.host(.approvalRequested(Fx.approval(Fx.a1, session: Fx.s1, risk: .execute))) == [.explainRules(Fx.a1)])
        #expect(t.host(.approvalRequested(Fx.approval(Fx.a2, session: Fx.s2, risk: .execute))) == [])
        let verdict = RuleVerdict(risk: .execute, riskReasons: ["runs a program"], outcome: .asks, decidedBy: nil,
                                  rules: [], reasons: ["no rule allows it"])
        #expect(t.w.handle(.rulesExplained(Fx.a1, .verdict(verdict))) == [])
        t.expect(selected: Fx.a1, cursor: Fx.s1, rules: [Fx.a1: .verdict(verdict)])
        #expect(t.key("j") == [.explainRules(Fx.a2)])
        #expect(t.key("k") == [])  // already known
        #expect(t.w.handle(.rulesExplained(Fx.a2, .unavailable("forbidden"))) == [])
        t.expect(selected: Fx.a1, cursor: Fx.s1, rules: [Fx.a1: .verdict(verdict), Fx.a2: .unavailable("forbidden")])
        // Offline: not asked; asked again once the link is back.
        t.host(.approvalResolved(sessionID: Fx.s1, Fx.resolved(Fx.a1)))
        t.expect(selected: Fx.a2, cursor: Fx.s2, rules: [Fx.a2: .unavailable("forbidden")])
        t.local(.connection(.reconnecting(asOf: Fx.ts(8), attempt: 1, reason: "closed")))
        var late = Fx.approval(Self.a3, session: Fx.s1, risk: .execute)
        late.createdAt = Fx.ts(0)
        t.host(.approvalRequested(late))
        #expect(t.host(.approvalResolved(sessionID: Fx.s2, Fx.resolved(Fx.a2))) == [])
        t.expect(selected: Self.a3, cursor: Fx.s1)
        #expect(t.local(.connection(.connected(since: Fx.ts(9), catchingUp: 0))) == [.explainRules(Self.a3)])
    }
}
