import NucleicApprovals
import NucleicProtocol
import Testing

/// Every test asserts the whole state (phase, request, classification) and the actions after
/// every event.
@Suite struct ApprovalStateMachineTests {
    static let t0 = Timestamp(millisecondsSince1970: 1_000)
    static let t1 = Timestamp(millisecondsSince1970: 2_000)
    static let t2 = Timestamp(millisecondsSince1970: 3_000)

    struct Fixture {
        var machine: ApprovalStateMachine
        var request: ApprovalRequest
        var classification: Classification
        /// The request as the machine holds it: risk and offered scopes from the classification.
        var held: ApprovalRequest
    }

    static func started(_ command: String = "npm test", capabilities: BackendCapabilities = .claude, project: ProjectID? = testProject,
                        question: StructuredQuestion? = nil, tool: (String, ToolKind, JSONValue)? = nil) -> Fixture
    {
        let s = Sandbox.shared
        let c = tool.map { s.tool($0.0, $0.1, $0.2) } ?? s.bash(command)
        var r = request(for: c, question: question, capabilities: capabilities)
        r.risk = .execute  // what a codec's baseline would say; the machine replaces it
        var machine = ApprovalStateMachine(projectID: project)
        #expect(machine.phase == .awaitingRequest && machine.request == nil && machine.classification == nil)
        let actions = machine.apply(.requested(r, c))
        var held = r
        held.risk = c.risk
        held.offeredScopes = RuleEngine.offeredScopes(r, c)
        #expect(actions == [])
        #expect(machine.phase == .pending && machine.request == held && machine.classification == c)
        return Fixture(machine: machine, request: r, classification: c, held: held)
    }

    func expectUnchanged(_ m: ApprovalStateMachine, _ f: Fixture, phase: ApprovalStateMachine.Phase = .pending) {
        #expect(m.phase == phase)
        #expect(m.request == f.held)
        #expect(m.classification == f.classification)
    }

    func resolution(_ f: Fixture, _ d: Decision, _ by: String, _ label: String? = nil) -> ApprovalResolution {
        ApprovalResolution(approvalID: f.request.id, decision: d, decidedBy: by, decidedByLabel: label)
    }

    @Test func theRequestTakesTheClassifiersRiskAndScopes() {
        let f = Self.started("ls -la")
        #expect(f.held.risk == .readOnly)
        #expect(f.held.offeredScopes == [.exactCommandThisSession, .toolThisSession, .rule("Bash(ls *)")])
        let network = Self.started("curl x.org")
        #expect(network.held.risk == .network && network.held.offeredScopes == [])
        var again = f.machine
        #expect(again.apply(.requested(f.request, f.classification)).first.map { if case .reject(let e) = $0 { e.code == .invalidDecision } else { false } } == true)
        expectUnchanged(again, f)
    }

    @Test func eventsBeforeTheRequestAreRefused() {
        var m = ApprovalStateMachine(projectID: testProject)
        #expect(m.apply(.respond(.allow, by: "user:ana", label: nil, at: Self.t0)) == [.reject(ApprovalError(.notFound, "there is no such pending approval"))])
        #expect(m.apply(.ruleMatched(.allow("r"), at: Self.t0)) == [.reject(ApprovalError(.notFound, "there is no such pending approval"))])
        #expect(m.apply(.withdrawn(reason: "x", at: Self.t0)) == [])
        #expect(m.phase == .awaitingRequest && m.request == nil)
    }

    @Test func aRuleAnswersAtOnceAndLaterAnswersLearnWhoWon() {
        var f = Self.started()
        var m = f.machine
        #expect(m.apply(.ruleMatched(.allow("0193dddd"), at: Self.t1)) == [
            .recordResolution(resolution(f, .allow, "rule:0193dddd")), .sendToAgent(.allow),
        ])
        expectUnchanged(m, f, phase: .resolved(.allow, decidedBy: "rule:0193dddd", label: nil, at: Self.t1))
        let late = m.apply(.respond(.deny(message: "no"), by: "device:phone", label: "Ana's iPhone", at: Self.t2))
        #expect(late == [.reject(ApprovalError(.alreadyResolved, "approval \(f.request.id) was already answered by rule:0193dddd", decidedBy: "rule:0193dddd"))])
        expectUnchanged(m, f, phase: .resolved(.allow, decidedBy: "rule:0193dddd", label: nil, at: Self.t1))
        f.machine = m
    }

    @Test func aDenyRuleTellsTheAgentWhy() {
        let f = Self.started("git push --force")
        var m = f.machine
        #expect(m.apply(.ruleMatched(.deny("r1", message: "Denied by the rule Bash(git push --force *)"), at: Self.t1)) == [
            .recordResolution(resolution(f, .deny(message: "Denied by the rule Bash(git push --force *)"), "rule:r1")),
            .sendToAgent(.deny(message: "Denied by the rule Bash(git push --force *)")),
        ])
        expectUnchanged(m, f, phase: .resolved(.deny(message: "Denied by the rule Bash(git push --force *)"), decidedBy: "rule:r1", label: nil, at: Self.t1))
    }

    @Test func aRuleCannotAnswerWhatNeedsAPerson() {
        for f in [Self.started("curl x.org"), Self.started("rm -rf build"),
                  Self.started(question: StructuredQuestion(questions: [.init(question: "Q?", options: [.init(label: "A")])]),
                               tool: ("AskUserQuestion", .question, ["questions": []]))]
        {
            var m = f.machine
            let actions = m.apply(.ruleMatched(.allow("r"), at: Self.t1))
            #expect(actions.count == 2)
            #expect(actions.last == .awaitPerson(f.held))
            if case .reject(let e)? = actions.first { #expect(e.code == .invalidDecision && e.message.contains("a person must")) } else { Issue.record("not rejected") }
            expectUnchanged(m, f)
        }
    }

    @Test func askWaitsForAPersonAndTheFirstValidAnswerWins() {
        let f = Self.started()
        var m = f.machine
        #expect(m.apply(.ruleMatched(.ask, at: Self.t0)) == [.awaitPerson(f.held)])
        expectUnchanged(m, f)
        #expect(m.apply(.respond(.allow, by: "device:0193eeee", label: "Ana's iPhone", at: Self.t1)) == [
            .recordResolution(resolution(f, .allow, "device:0193eeee", "Ana's iPhone")), .sendToAgent(.allow),
        ])
        let won = ApprovalStateMachine.Phase.resolved(.allow, decidedBy: "device:0193eeee", label: "Ana's iPhone", at: Self.t1)
        expectUnchanged(m, f, phase: won)
        let again = m.apply(.respond(.cancel, by: "user:ana", label: nil, at: Self.t2))
        #expect(again == [.reject(ApprovalError(.alreadyResolved, "approval \(f.request.id) was already answered by Ana's iPhone",
                                                decidedBy: "device:0193eeee", decidedByLabel: "Ana's iPhone"))])
        expectUnchanged(m, f, phase: won)
        #expect(m.apply(.ruleMatched(.allow("r"), at: Self.t2)).count == 1)
        #expect(m.apply(.withdrawn(reason: "agent exited", at: Self.t2)) == [])
        #expect(m.apply(.expired(at: Self.t2)) == [])
        expectUnchanged(m, f, phase: won)
    }

    /// 100 answers from different clients, in a shuffled order, some of them invalid: exactly one
    /// reaches the agent, the first valid one, and every other names it.
    @Test func aHundredAnswersOneWinner() {
        let f = Self.started(capabilities: .codex)
        var m = f.machine
        var rng = SplitMix(seed: 42)
        var answers: [(Decision, String)] = (0..<100).map { i in
            let decision: Decision = i % 3 == 0 ? .allowModified(input: ["command": "npm test -- -x"]) : (i % 2 == 0 ? .allow : .deny(message: "no \(i)"))
            return (decision, "device:\(i)")
        }
        for i in stride(from: answers.count - 1, to: 0, by: -1) { answers.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
        var sent: [Decision] = []
        var winner: String?
        for (decision, by) in answers {
            for action in m.apply(.respond(decision, by: by, label: nil, at: Self.t1)) {
                switch action {
                case .sendToAgent(let d):
                    sent.append(d)
                    winner = by
                case .reject(let e):
                    if winner == nil {
                        #expect(e.code == .unsupported)  // only allowModified, which Codex cannot carry, is refused before
                    } else {
                        #expect(e.code == .alreadyResolved && e.decidedBy == winner)
                    }
                case .recordResolution: break
                default: Issue.record("unexpected \(action)")
                }
            }
        }
        #expect(sent.count == 1)
        let first = answers.first { if case .allowModified = $0.0 { false } else { true } }!
        #expect(winner == first.1 && sent == [first.0])
        expectUnchanged(m, f, phase: .resolved(first.0, decidedBy: first.1, label: nil, at: Self.t1))
    }

    @Test func allowModifiedNeedsTheBackendToCarryIt() {
        let codex = Self.started(capabilities: .codex)
        var m = codex.machine
        let refused = m.apply(.respond(.allowModified(input: ["command": "npm test -- --ci"]), by: "user:ana", label: nil, at: Self.t1))
        guard case .reject(let e)? = refused.first, refused.count == 1 else { Issue.record("\(refused)"); return }
        #expect(e.code == .unsupported && e.errorCode == .unsupported)
        #expect(e.message.contains("Deny it with a message"))
        expectUnchanged(m, codex)
        #expect(m.apply(.respond(.deny(message: "run npm test -- --ci instead"), by: "user:ana", label: nil, at: Self.t2)) == [
            .recordResolution(resolution(codex, .deny(message: "run npm test -- --ci instead"), "user:ana")),
            .sendToAgent(.deny(message: "run npm test -- --ci instead")),
        ])
        let claude = Self.started(capabilities: .claude)
        var c = claude.machine
        let modified = Decision.allowModified(input: ["command": "npm test -- --ci"])
        #expect(c.apply(.respond(modified, by: "user:ana", label: nil, at: Self.t1)) == [
            .recordResolution(resolution(claude, modified, "user:ana")), .sendToAgent(modified),
        ])
        expectUnchanged(c, claude, phase: .resolved(modified, decidedBy: "user:ana", label: nil, at: Self.t1))
    }

    @Test func questionsTakeAnswersOnly() {
        let q = StructuredQuestion(questions: [
            .init(question: "Which database?", options: [.init(label: "Postgres"), .init(label: "SQLite")]),
            .init(id: "q2", question: "Which features?", options: [.init(label: "A"), .init(label: "B")], multiSelect: true),
        ])
        let f = Self.started(question: q, tool: ("AskUserQuestion", .question, ["questions": []]))
        #expect(f.held.offeredScopes == [] && f.held.risk == .readOnly)
        var m = f.machine
        let invalid: [(Decision, String)] = [
            (.allow, "is a question"), (.allowModified(input: [:]), "is a question"), (.allowAlways(scope: .toolThisSession), "cannot be answered always"),
            (.answer(answers: ["Which database?": ["MySQL"], "q2": ["A"]]), "“MySQL” is not an option"),
            (.answer(answers: ["Which database?": ["Postgres", "SQLite"], "q2": ["A"]]), "takes one answer"),
            (.answer(answers: ["Which database?": ["Postgres"]]), "no answer to “Which features?”"),
            (.answer(answers: ["Which database?": ["Postgres"], "q2": ["A"], "Other?": ["x"]]), "“Other?” is not one of the questions"),
        ]
        for (decision, message) in invalid {
            let actions = m.apply(.respond(decision, by: "user:ana", label: nil, at: Self.t1))
            guard case .reject(let e)? = actions.first, actions.count == 1 else { Issue.record("\(decision) accepted"); continue }
            #expect(e.code == .invalidDecision && e.message.contains(message), "\(decision): \(e.message)")
            expectUnchanged(m, f)
        }
        let answer = Decision.answer(answers: ["Which database?": ["SQLite"], "q2": ["A", "B"]])
        #expect(m.apply(.respond(answer, by: "user:ana", label: nil, at: Self.t1)) == [.recordResolution(resolution(f, answer, "user:ana")), .sendToAgent(answer)])
        expectUnchanged(m, f, phase: .resolved(answer, decidedBy: "user:ana", label: nil, at: Self.t1))

        var n = Self.started().machine
        let notQuestion = n.apply(.respond(.answer(answers: ["x": ["y"]]), by: "user:ana", label: nil, at: Self.t1))
        if case .reject(let e)? = notQuestion.first { #expect(e.message.contains("is not a question")) } else { Issue.record("accepted") }
        // A question may still be denied or cancelled.
        var d = f.machine
        #expect(d.apply(.respond(.cancel, by: "user:ana", label: nil, at: Self.t1)) == [.recordResolution(resolution(f, .cancel, "user:ana")), .sendToAgent(.cancel)])
    }

    @Test func allowAlwaysStoresTheRuleForItsScope() throws {
        let f = Self.started("npm test -- --watch")
        for (scope, rule, ruleScope) in [
            (ApprovalScope.rule("Bash(npm test *)"), "Bash(npm test *)", Rule.Scope.project(testProject)),
            (.exactCommandThisSession, "Bash(npm test -- --watch)", .session(testSession)),
            (.toolThisSession, "Bash", .session(testSession)),
        ] {
            var m = f.machine
            let decision = Decision.allowAlways(scope: scope)
            let draft = RuleDraft(rule: try PermissionRule(parsing: rule), behavior: .allow, scope: ruleScope,
                                  provenance: .init(createdBy: "device:phone", createdAt: Self.t1, fromApproval: f.request.id))
            #expect(m.apply(.respond(decision, by: "device:phone", label: "Phone", at: Self.t1)) == [
                .recordResolution(resolution(f, decision, "device:phone", "Phone")), .storeRule(draft), .sendToAgent(decision),
            ])
            expectUnchanged(m, f, phase: .resolved(decision, decidedBy: "device:phone", label: "Phone", at: Self.t1))
        }
    }

    @Test func allowAlwaysIsRefusedWhereItCannotHold() {
        let cases: [(Fixture, ApprovalScope, String)] = [
            (Self.started("curl x.org"), .toolThisSession, "always needs a person"),
            (Self.started("git push -f"), .rule("Bash(git push *)"), "always needs a person"),
            (Self.started("cat ~/.bashrc"), .exactCommandThisSession, "always needs a person"),
            (Self.started("npm test"), .rule("Bash(make *)"), "does not match this request"),
            (Self.started("npm test"), .rule("Bash(npm test"), "cannot allow always at that scope"),
            (Self.started("npm test", project: nil), .rule("Bash(npm test *)"), "no project"),
            (Self.started(tool: ("Edit", .edit, ["file_path": "src/a.swift"])), .exactCommandThisSession, "for shell commands"),
        ]
        for (f, scope, message) in cases {
            var m = f.machine
            let actions = m.apply(.respond(.allowAlways(scope: scope), by: "user:ana", label: nil, at: Self.t1))
            guard case .reject(let e)? = actions.first, actions.count == 1 else { Issue.record("\(scope) accepted: \(actions)"); continue }
            #expect(e.code == .invalidDecision && e.message.contains(message), "\(scope): \(e.message)")
            expectUnchanged(m, f)
            // Allowing once still works.
            #expect(m.apply(.respond(.allow, by: "user:ana", label: nil, at: Self.t2)).contains(.sendToAgent(.allow)))
        }
    }

    @Test func withdrawnAndExpired() {
        let f = Self.started()
        var m = f.machine
        #expect(m.apply(.withdrawn(reason: "the turn was interrupted", at: Self.t1)) == [.recordWithdrawal(reason: "the turn was interrupted")])
        expectUnchanged(m, f, phase: .withdrawn(reason: "the turn was interrupted", at: Self.t1))
        let late = m.apply(.respond(.allow, by: "user:ana", label: nil, at: Self.t2))
        guard case .reject(let e)? = late.first else { Issue.record("accepted"); return }
        #expect(e.code == .withdrawn && e.errorCode == .alreadyResolved && e.message.contains("withdrawn: the turn was interrupted"))
        #expect(m.apply(.withdrawn(reason: "again", at: Self.t2)) == [])
        expectUnchanged(m, f, phase: .withdrawn(reason: "the turn was interrupted", at: Self.t1))

        var x = f.machine
        let message = "No one answered this request in time, so it was not run. Ask again or continue without it."
        #expect(x.apply(.expired(at: Self.t2)) == [
            .recordResolution(ApprovalResolution(approvalID: f.request.id, decision: .deny(message: message), decidedBy: "host:timeout", decidedByLabel: "timeout")),
            .sendToAgent(.deny(message: message)),
        ])
        expectUnchanged(x, f, phase: .expired(at: Self.t2))
        if case .reject(let e)? = x.apply(.respond(.allow, by: "user:ana", label: nil, at: Self.t2)).first { #expect(e.message.contains("expired")) } else { Issue.record("accepted") }
    }

    @Test func capabilityCheckChangesNothing() {
        let f = Self.started(capabilities: .codex)
        var m = f.machine
        #expect(m.apply(.capabilityCheck(.allow)) == [.accepted(.allow)])
        #expect(m.apply(.capabilityCheck(.allowAlways(scope: .rule("Bash(npm test *)")))) == [.accepted(.allowAlways(scope: .rule("Bash(npm test *)")))])
        guard case .reject(let e)? = m.apply(.capabilityCheck(.allowModified(input: [:]))).first else { Issue.record("accepted"); return }
        #expect(e.code == .unsupported)
        expectUnchanged(m, f)
        _ = m.apply(.respond(.deny(message: "x"), by: "user:ana", label: nil, at: Self.t1))
        guard case .reject(let late)? = m.apply(.capabilityCheck(.allow)).first else { Issue.record("accepted"); return }
        #expect(late.code == .alreadyResolved)
    }
}
