import NucleicProtocol
import NucleicRemoteKit
import NucleicWatch
import Testing

/// Drives a `WatchState` and, beside it, the client core's own `RemoteState` through the same
/// reducer, so every step can assert the whole watch state.
struct Script {
    var w = WatchState()
    var r = RemoteState()

    mutating func input(_ i: RemoteInput) -> [WatchCommand] {
        SessionReducer.reduce(&r, i)
        return w.handle(.remote(i))
    }

    @discardableResult mutating func host(_ body: HostMsg.Body) -> [WatchCommand] { input(.host(HostMsg(body))) }
    @discardableResult mutating func local(_ intent: LocalIntent) -> [WatchCommand] { input(.local(intent)) }
    @discardableResult mutating func key(_ k: WatchKey) -> [WatchCommand] { w.handle(.key(k)) }
    @discardableResult mutating func key(_ c: Character) -> [WatchCommand] { w.handle(.key(.char(c))) }
    mutating func type(_ text: String) { for c in text { key(c) } }
    mutating func live() { for i in Fx.live { _ = input(i) } }

    /// The whole watch state must be this (the remote part being the core's own reduction).
    func expect(selected: ApprovalID?, cursor: SessionID?, mode: WatchMode = .list, flash: String? = nil,
                answers: [String: [String]] = [:], diff: DiffPage? = nil, scroll: Int = 0, now: Timestamp? = nil,
                held: SessionID? = nil, marked: Set<ApprovalID> = [], rules: [ApprovalID: CardRules] = [:],
                sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = WatchState(remote: r, selection: WatchSelection(selected: selected, held: held), cursor: cursor, mode: mode, flash: flash,
                                  now: now, answers: answers, diff: diff, scroll: scroll, marked: marked, rules: rules)
        #expect(w == expected, sourceLocation: sourceLocation)
    }
}

@Suite struct WatchStateTests {
    @Test func anApprovalArrivesIsSelectedAndOneKeyAllowsIt() {
        var t = Script()
        t.expect(selected: nil, cursor: nil)
        t.live()
        t.expect(selected: nil, cursor: nil)
        #expect(t.key("a") == [])
        t.expect(selected: nil, cursor: nil, flash: "no approval is waiting")

        t.host(.sessionList([Fx.summary(Fx.s1, "fix-build", .running, second: 5, handle: "1"),
                             Fx.summary(Fx.s2, "docs", .finished, second: 3, handle: "2")]))
        t.expect(selected: nil, cursor: Fx.s1, flash: "no approval is waiting")
        #expect(t.w.groups.map(\.title) == ["RUNNING", "DONE"])

        t.host(.events(sessionID: Fx.s1, events: Fx.events([
            .sessionStarted(SessionStarted(backend: "replay", model: nil)), .userInput(text: "fix the build"),
        ])))
        t.expect(selected: nil, cursor: Fx.s1, flash: "no approval is waiting")
        #expect(t.w.groups[0].rows[0].activity == "thinking")

        t.host(.events(sessionID: Fx.s1, events: Fx.events([
            .toolCallStarted(ToolCall(toolCallID: "toolu_1", name: "Bash", toolKind: .execute, input: ["command": "make test"])),
        ], from: 3)))
        t.expect(selected: nil, cursor: Fx.s1, flash: "no approval is waiting")
        #expect(t.w.groups[0].rows[0].activity == "Bash make test")

        t.host(.events(sessionID: Fx.s1, events: Fx.events([.approvalRequested(Fx.approval(Fx.a1, risk: .execute, command: "make test"))], from: 4)))
        t.host(.sessionUpdated(Fx.summary(Fx.s1, "fix-build", .awaitingApproval, second: 6, lastSeq: 4, pending: 1, handle: "1")))
        t.expect(selected: Fx.a1, cursor: Fx.s1, flash: "no approval is waiting")
        #expect(t.w.groups.map(\.title) == ["NEEDS YOU", "DONE"])
        #expect(t.w.groups[0].rows[0].pending == 1)
        #expect(t.w.groups[0].rows[0].activity == "waiting: Bash make test")
        #expect(t.r.mirror.badge == 1)

        #expect(t.key("a") == [.respond(Fx.a1, .allow, deliberate: false)])
        t.expect(selected: Fx.a1, cursor: Fx.s1)
        t.local(.answerSending(Fx.a1))
        t.expect(selected: Fx.a1, cursor: Fx.s1)
        #expect(t.key("a") == [])
        t.expect(selected: Fx.a1, cursor: Fx.s1, flash: "an answer is already on its way")
        t.local(.answerAccepted(Fx.a1))
        t.host(.events(sessionID: Fx.s1, events: Fx.events([.approvalResolved(Fx.resolved(Fx.a1)),
                                                           .runFinished(RunFinished(isError: false, stopReason: "end_turn", result: "All green."))], from: 5)))
        t.host(.sessionUpdated(Fx.summary(Fx.s1, "fix-build", .finished, second: 7, lastSeq: 6, handle: "1")))
        t.expect(selected: nil, cursor: Fx.s1, flash: "an answer is already on its way")
        #expect(t.w.groups.map(\.title) == ["DONE"])
        #expect(t.w.groups[0].rows.map(\.activity) == ["All green.", "finished"])
    }

    @Test func theCardStaysOnItsApprovalWhateverArrivesUntilItIsResolved() {
        var t = Script()
        t.live()
        t.host(.sessionList([Fx.summary(Fx.s1, "a", .awaitingApproval, second: 5, pending: 1)]))
        t.host(.approvalRequested(Fx.approval(Fx.a1, risk: .execute)))
        t.expect(selected: Fx.a1, cursor: Fx.s1)
        // A newer session needing a person moves to the top, with an older approval: no move.
        var older = Fx.approval(Fx.a2, session: Fx.s2, risk: .destructive)
        older.createdAt = Fx.ts(0)
        t.host(.sessionUpdated(Fx.summary(Fx.s2, "b", .awaitingApproval, second: 9, pending: 1)))
        t.host(.approvalRequested(older))
        t.expect(selected: Fx.a1, cursor: Fx.s1)
        // Resolved elsewhere: the card moves to the top session's approval.
        t.host(.approvalResolved(sessionID: Fx.s1, Fx.resolved(Fx.a1, by: "device:0193c000")))
        t.expect(selected: Fx.a2, cursor: Fx.s2)  // and the list's cursor follows it
    }

    @Test func aRiskyAllowNeedsTheSecondKeyShownOnTheCard() {
        var t = Script()
        t.live()
        t.host(.sessionList([Fx.summary(Fx.s1, "a", .awaitingApproval, second: 5, pending: 1)]))
        t.host(.approvalRequested(Fx.approval(Fx.a1, risk: .destructive, command: "rm -rf build")))
        t.expect(selected: Fx.a1, cursor: Fx.s1)

        #expect(t.key("a") == [])
        t.expect(selected: Fx.a1, cursor: Fx.s1, mode: .armed(Fx.a1, .allow))
        #expect(t.key("a") == [])  // not the second key: disarmed
        t.expect(selected: Fx.a1, cursor: Fx.s1, flash: "not sent")

        #expect(t.key("a") == [])
        #expect(t.key("!") == [.respond(Fx.a1, .allow, deliberate: true)])
        t.expect(selected: Fx.a1, cursor: Fx.s1)

        // "Allow always" is never offered for destructive calls.
        #expect(t.key("A") == [])
        t.expect(selected: Fx.a1, cursor: Fx.s1, flash: "allow always is not offered for this approval (risk destructive)")

        // An edited input is a risky allow too.
        #expect(t.key("e") == [.editThenAllow(Fx.a1)])
        #expect(t.w.handle(.edited(Fx.a1, ["command": "rm -rf build/tmp"])) == [])
        t.expect(selected: Fx.a1, cursor: Fx.s1, mode: .armed(Fx.a1, .allowModified(input: ["command": "rm -rf build/tmp"])))
        #expect(t.key("!") == [.respond(Fx.a1, .allowModified(input: ["command": "rm -rf build/tmp"]), deliberate: true)])

        // Armed, then answered elsewhere: the mode ends and says who answered.
        t.key("a")
        t.host(.approvalResolved(sessionID: Fx.s1, Fx.resolved(Fx.a1, decision: .deny(message: ""))))
        t.expect(selected: nil, cursor: Fx.s1, flash: "that approval was answered meanwhile: denied on the host (ana)")
        #expect(t.key("!") == [])
    }

    @Test func allowAlwaysOffersTheScopesEditAndDenyWithAMessage() {
        var t = Script()
        t.live()
        t.host(.sessionList([Fx.summary(Fx.s1, "a", .awaitingApproval, second: 5, pending: 1)]))
        t.host(.approvalRequested(Fx.approval(Fx.a1, risk: .execute, scopes: [.exactCommandThisSession, .rule("Bash(npm test *)")])))
        t.key("A")
        t.expect(selected: Fx.a1, cursor: Fx.s1, mode: .chooseScope(Fx.a1))
        #expect(t.key("2") == [.respond(Fx.a1, .allowAlways(scope: .rule("Bash(npm test *)")), deliberate: false)])
        t.expect(selected: Fx.a1, cursor: Fx.s1)
        t.key("A")
        #expect(t.key("3") == [])
        t.expect(selected: Fx.a1, cursor: Fx.s1, flash: "not sent")

        #expect(t.key("e") == [.editThenAllow(Fx.a1)])
        #expect(t.w.handle(.edited(Fx.a1, ["command": "ls -la"])) == [.respond(Fx.a1, .allowModified(input: ["command": "ls -la"]), deliberate: false)])

        t.key("d")
        t.expect(selected: Fx.a1, cursor: Fx.s1, mode: .prompt(WatchPrompt(.deny(Fx.a1))))
        t.type("not noq")
        t.key(.backspace)
        t.expect(selected: Fx.a1, cursor: Fx.s1, mode: .prompt(WatchPrompt(.deny(Fx.a1), text: "not no")))
        t.type("w")
        #expect(t.key(.enter) == [.respond(Fx.a1, .deny(message: "not now"), deliberate: false)])
        t.expect(selected: Fx.a1, cursor: Fx.s1)
        t.key("d")
        #expect(t.key(.escape) == [])
        t.expect(selected: Fx.a1, cursor: Fx.s1, flash: "not sent")
    }

    @Test func aBackendThatCannotTakeAnEditedInputRefusesE() {
        var t = Script()
        t.live()
        var request = Fx.approval(Fx.a1, risk: .execute)
        request.capabilities = .codex
        t.host(.sessionList([Fx.summary(Fx.s1, "a", .awaitingApproval, second: 5, pending: 1)]))
        t.host(.approvalRequested(request))
        #expect(t.key("e") == [])
        t.expect(selected: Fx.a1, cursor: Fx.s1, flash: "this backend cannot take an edited input")
    }

    @Test func questionsAreAnsweredWithOptionNumbersOneAfterTheOther() {
        var t = Script()
        t.live()
        t.host(.sessionList([Fx.summary(Fx.s1, "a", .awaitingApproval, second: 5, pending: 1)]))
        t.host(.approvalRequested(Fx.question(Fx.a1, items: [Fx.colour, Fx.size])))
        t.expect(selected: Fx.a1, cursor: Fx.s1)
        #expect(t.key("a") == [])
        t.expect(selected: Fx.a1, cursor: Fx.s1, flash: "a question: press its option's number (1–9)")
        #expect(t.key("9") == [])
        t.expect(selected: Fx.a1, cursor: Fx.s1, flash: "\"Which colour?\" has 2 options")
        #expect(t.key("o") == [])
        t.expect(selected: Fx.a1, cursor: Fx.s1, flash: "no question takes an answer of your own")
        #expect(t.key("2") == [])
        t.expect(selected: Fx.a1, cursor: Fx.s1, answers: ["Which colour?": ["Blue"]])
        #expect(t.key("3") == [.respond(Fx.a1, .answer(answers: ["Which colour?": ["Blue"], "Which size?": ["L"]]), deliberate: false)])
        t.expect(selected: Fx.a1, cursor: Fx.s1)

        // An answer of one's own, where the question takes one.
        t.key("1")
        t.key("o")
        t.expect(selected: Fx.a1, cursor: Fx.s1, mode: .prompt(WatchPrompt(.answer(Fx.a1))), answers: ["Which colour?": ["Red"]])
        t.type("XL")
        #expect(t.key(.enter) == [.respond(Fx.a1, .answer(answers: ["Which colour?": ["Red"], "Which size?": ["XL"]]), deliberate: false)])
        t.expect(selected: Fx.a1, cursor: Fx.s1)
    }

    @Test func actionsAreDisabledWhileReconnectingAndTheViewStays() {
        var t = Script()
        t.live()
        t.host(.sessionList([Fx.summary(Fx.s1, "a", .awaitingApproval, second: 5, pending: 1)]))
        t.host(.approvalRequested(Fx.approval(Fx.a1, risk: .execute)))
        t.local(.connection(.reconnecting(asOf: Fx.ts(8), attempt: 1, reason: "the daemon closed the connection")))
        t.expect(selected: Fx.a1, cursor: Fx.s1)
        for k: Character in ["a", "A", "e", "d", "1", "s", "i", "D", "I", "x"] {
            #expect(t.key(k) == [])
            t.expect(selected: Fx.a1, cursor: Fx.s1, flash: "actions disabled: reconnect to act")
        }
        // Reading still works; quitting always does.
        t.key(.enter)
        t.expect(selected: Fx.a1, cursor: Fx.s1, mode: .transcript(Fx.s1), scroll: Int.max)
        t.key(.escape)
        #expect(t.key("q") == [.quit])
        // Back live: one key answers again.
        t.local(.connection(.connected(since: Fx.ts(9), catchingUp: 1)))
        #expect(t.key("a") == [.respond(Fx.a1, .allow, deliberate: false)])
    }

    @Test func sessionKeysActOnTheCursor() {
        var t = Script()
        t.live()
        t.host(.sessionList([Fx.summary(Fx.s1, "a", .running, second: 5), Fx.summary(Fx.s2, "b", .finished, second: 4)]))
        t.expect(selected: nil, cursor: Fx.s1)
        t.key(.down)
        t.expect(selected: nil, cursor: Fx.s2, held: Fx.s2)
        t.key(.down)
        t.expect(selected: nil, cursor: Fx.s2, held: Fx.s2)
        t.key("k")
        t.expect(selected: nil, cursor: Fx.s1, held: Fx.s1)
        #expect(t.key("i") == [.interrupt(Fx.s1)])
        t.key("j")

        t.key("s")
        t.expect(selected: nil, cursor: Fx.s2, mode: .prompt(WatchPrompt(.followUp(Fx.s2))), held: Fx.s2)
        #expect(t.key(.enter) == [])
        t.expect(selected: nil, cursor: Fx.s2, flash: "nothing to send", held: Fx.s2)
        t.key("s")
        t.type("now the docs")
        #expect(t.key(.enter) == [.sendInput(Fx.s2, "now the docs")])

        t.key("I")
        t.expect(selected: nil, cursor: Fx.s2, mode: .chooseStrategy(Fx.s2), held: Fx.s2)
        #expect(t.key("r") == [.integrate(Fx.s2, strategy: "rebase")])
        t.key("I")
        #expect(t.key("z") == [])
        t.expect(selected: nil, cursor: Fx.s2, flash: "not integrated", held: Fx.s2)

        t.key("x")
        t.expect(selected: nil, cursor: Fx.s2, mode: .confirmDiscard(Fx.s2), held: Fx.s2)
        #expect(t.key("n") == [])
        t.expect(selected: nil, cursor: Fx.s2, flash: "kept", held: Fx.s2)
        t.key("x")
        #expect(t.key("y") == [.discard(Fx.s2)])

        #expect(t.key("D") == [.loadDiff(Fx.s2)])
        t.expect(selected: nil, cursor: Fx.s2, mode: .diff(Fx.s2), diff: DiffPage(sessionID: Fx.s2), held: Fx.s2)
        #expect(t.w.handle(.diffLoaded(Fx.s2, ["1 file, +1 −0", "+hello"])) == [])
        t.expect(selected: nil, cursor: Fx.s2, mode: .diff(Fx.s2), diff: DiffPage(sessionID: Fx.s2, lines: ["1 file, +1 −0", "+hello"]), held: Fx.s2)
        t.key(.down)
        t.key(.pageDown)
        t.expect(selected: nil, cursor: Fx.s2, mode: .diff(Fx.s2), diff: DiffPage(sessionID: Fx.s2, lines: ["1 file, +1 −0", "+hello"]), scroll: 21, held: Fx.s2)
        t.key("q")
        t.expect(selected: nil, cursor: Fx.s2, held: Fx.s2)

        t.key("?")
        t.expect(selected: nil, cursor: Fx.s2, mode: .help, held: Fx.s2)
        t.key("q")
        t.expect(selected: nil, cursor: Fx.s2, held: Fx.s2)
        #expect(t.key(.interrupt) == [.quit])
        #expect(t.key("q") == [.quit])

        // The cursor's session leaves the list: the cursor moves to one that is there.
        t.host(.sessionUpdated(Fx.summary(Fx.s2, "b", .discarded, second: 10)))
        t.expect(selected: nil, cursor: Fx.s1)
        #expect(t.w.handle(.tick(Fx.ts(65))) == [])
        t.expect(selected: nil, cursor: Fx.s1, now: Fx.ts(65))
        #expect(t.w.groups[0].rows[0].elapsedSeconds == 60)
        #expect(t.w.handle(.outcome("interrupted 1")) == [])
        t.expect(selected: nil, cursor: Fx.s1, flash: "interrupted 1", now: Fx.ts(65))
    }

    @Test func keysAreReadFromRawTerminalBytes() {
        let bytes: [UInt8] = Array("aA!".utf8) + [0x0D, 0x7F, 0x1B, 0x5B, 0x41, 0x1B, 0x5B, 0x42, 0x1B, 0x5B, 0x35, 0x7E, 0x03, 0x1B] + Array("é".utf8)
        #expect(WatchKey.parse(bytes) == [.char("a"), .char("A"), .char("!"), .enter, .backspace, .up, .down, .pageUp, .interrupt, .escape, .char("é")])
        #expect(WatchKey.parse([0x1B, 0x5B, 0x31, 0x3B, 0x35, 0x43, 0x61]) == [.char("a")])  // ctrl-right: dropped
    }
}

@Suite struct WatchLogTests {
    @Test func oneLinePerChange() {
        var t = Script()
        var lines: [String] = []
        var last: WatchState?
        func step(_ change: (inout Script) -> Void) -> [String] {
            change(&t)
            defer { last = t.w }
            return WatchLog.lines(from: last, to: t.w)
        }
        lines = step { $0.live() }
        #expect(lines == ["— box · ● Connected · NEEDS YOU 0"])
        lines = step { $0.host(.sessionList([Fx.summary(Fx.s1, "fix-build", .running, second: 5, handle: "1")])) }
        #expect(lines == ["◐ 1 fix-build [proj] running · thinking"])
        lines = step { $0.host(.sessionList([Fx.summary(Fx.s1, "fix-build", .running, second: 6, handle: "1")])) }
        #expect(lines == [])  // nothing a person sees changed
        lines = step {
            $0.host(.events(sessionID: Fx.s1, events: Fx.events([.approvalRequested(Fx.approval(Fx.a1, risk: .destructive, command: "rm -rf build"))])))
            $0.host(.sessionUpdated(Fx.summary(Fx.s1, "fix-build", .awaitingApproval, second: 7, pending: 1, handle: "1")))
        }
        #expect(lines == ["— box · ● Connected · NEEDS YOU 1", "⚠ 1 fix-build [proj] awaitingApproval · waiting: Bash rm -rf build [1]",
                          "! approval 0193b000-0000 · fix-build · Bash rm -rf build [risk destructive (risky)]"])
        lines = step {
            $0.host(.events(sessionID: Fx.s1, events: Fx.events([.approvalResolved(Fx.resolved(Fx.a1))], from: 2)))
            $0.host(.sessionUpdated(Fx.summary(Fx.s1, "fix-build", .finished, second: 8, handle: "1")))
        }
        #expect(lines == ["— box · ● Connected · NEEDS YOU 0", "✓ 1 fix-build [proj] finished · finished", "✓ approval 0193b000-0000 approved on the host (ana)"])
        lines = step { $0.local(.connection(.reconnecting(asOf: Fx.ts(8), attempt: 1, reason: "closed"))) }
        #expect(lines == ["— box · ◐ Reconnecting · as of 00:53 · NEEDS YOU 0"])
    }
}
