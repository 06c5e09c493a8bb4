import NucleicApprovals
import NucleicProtocol
import Testing

/// The broker of one session: every request judged, the rules asked, the first answer winning;
/// each test asserts the intake, the phase and the pending list after every step.
@Suite struct ApprovalBrokerTests {
    static let session: SessionID = "0193aaaa-0000-7000-8000-00000000000a"
    static let t0 = Timestamp(millisecondsSince1970: 10_000)

    static func broker(timeout: Duration? = nil, project: ProjectID? = testProject) -> ApprovalBroker {
        ApprovalBroker(sessionID: session, projectID: project, worktree: Sandbox.shared.worktree, classifier: Sandbox.shared.classifier,
                       timeout: timeout)
    }

    /// A request as a codec makes it: its provisional risk is the tool kind's baseline.
    static func bash(_ command: String, id: ApprovalID, capabilities: BackendCapabilities = .claude, risk: Risk = .execute,
                     tool: String = "Bash") -> ApprovalRequest {
        ApprovalRequest(id: id, toolCallID: "toolu_\(id.rawValue.suffix(2))", toolName: tool, toolKind: .execute, input: ["command": .string(command)],
                        risk: risk, capabilities: capabilities, createdAt: t0)
    }

    static func rule(_ text: String, _ behavior: Rule.Behavior = .allow, id: RuleID = "0193cccc-0000-7000-8000-000000000001",
                     scope: Rule.Scope = .project(testProject), message: String? = nil) -> Rule {
        Rule(id: id, rule: try! PermissionRule(parsing: text), behavior: behavior, scope: scope,
             provenance: Rule.Provenance(createdBy: "user:test", createdAt: t0), message: message)
    }

    static let a1: ApprovalID = "0193bbbb-0000-7000-8000-0000000000a1"
    static let a2: ApprovalID = "0193bbbb-0000-7000-8000-0000000000a2"
    static let a3: ApprovalID = "0193bbbb-0000-7000-8000-0000000000a3"

    func shown(_ intake: ApprovalBroker.Intake) -> ApprovalRequest {
        switch intake {
        case .ask(let r), .ruled(let r, _): r
        }
    }

    @Test func aRequestNoRuleCoversWaitsForAPersonWithTheHostsRisk() {
        var b = Self.broker()
        let intake = b.intake(Self.bash("ls -la", id: Self.a1), rules: [], now: Self.t0)
        guard case .ask(let request) = intake else { Issue.record("expected ask, got \(intake)"); return }
        #expect(request.risk == .readOnly)  // the codec said execute; the host judged it
        #expect(request.sessionID == Self.session)
        #expect(request.offeredScopes == [.exactCommandThisSession, .toolThisSession, .rule("Bash(ls *)")])
        #expect(b.phase(Self.a1) == .pending)
        #expect(b.pending.map(\.id) == [Self.a1])
    }

    /// The tool's kind is the one the codec put on the request: an unknown backend's shell tool
    /// with a command is judged by its command; the same request without a kind is a tool the
    /// host cannot judge.
    @Test func theRequestsToolKindDecidesHowAnUnknownToolIsJudged() {
        let b = Self.broker()
        var request = Self.bash("ls src", id: Self.a1, tool: "run_shell")
        let judged = b.classify(request)
        #expect(judged.family == .shell)
        #expect(judged.risk == .readOnly)
        #expect(judged.commands.map(\.text) == ["ls src"])
        request.toolKind = nil
        let unjudged = b.classify(request)
        #expect(unjudged.family == .other)
        #expect(unjudged.risk == .unknown)
        #expect(unjudged.reasons == ["run_shell is a tool Nucleic cannot judge"])
        request.toolKind = .think
        #expect(b.classify(request).risk == .readOnly)
    }

    @Test func anAllowRuleAnswersAtOnceAttributedToIt() {
        var b = Self.broker()
        let rule = Self.rule("Bash(npm test *)")
        let intake = b.intake(Self.bash("npm test -- --watch=false", id: Self.a1), rules: [rule], now: Self.t0)
        guard case .ruled(let request, let resolution) = intake else { Issue.record("expected ruled, got \(intake)"); return }
        #expect(request.risk == .execute)
        #expect(resolution == ApprovalResolution(approvalID: Self.a1, decision: .allow, decidedBy: "rule:\(rule.id.rawValue)", decidedByLabel: nil))
        #expect(b.phase(Self.a1) == .resolved(.allow, decidedBy: "rule:\(rule.id.rawValue)", label: nil, at: Self.t0))
        #expect(b.pending.isEmpty)
        // A person answering afterwards is told who won.
        let late = b.respond(Self.a1, .deny(message: "no"), by: "user:ana", label: nil, at: Self.t0)
        #expect(late.failure?.code == .alreadyResolved && late.failure?.decidedBy == "rule:\(rule.id.rawValue)")
    }

    @Test func aDenyRuleBeatsAnAllowRuleAndCarriesItsMessage() {
        var b = Self.broker()
        let allow = Self.rule("Bash", id: "0193cccc-0000-7000-8000-000000000001")
        let deny = Self.rule("Bash(git push *)", .deny, id: "0193cccc-0000-7000-8000-000000000002", message: "Never push from a session.")
        let intake = b.intake(Self.bash("npm test && git push origin main", id: Self.a1), rules: [allow, deny], now: Self.t0)
        guard case .ruled(_, let resolution) = intake else { Issue.record("expected ruled, got \(intake)"); return }
        #expect(resolution.decision == .deny(message: "Never push from a session."))
        #expect(resolution.decidedBy == "rule:0193cccc-0000-7000-8000-000000000002")
    }

    @Test func rulesInOtherScopesDoNotApply() {
        var b = Self.broker()
        let otherProject = Self.rule("Bash(npm test *)", scope: .project("0193dddd-0000-7000-8000-000000000009"))
        let otherSession = Self.rule("Bash(npm test *)", id: "0193cccc-0000-7000-8000-000000000003", scope: .session("0193aaaa-0000-7000-8000-0000000000ff"))
        #expect(shown(b.intake(Self.bash("npm test", id: Self.a1), rules: [otherProject, otherSession], now: Self.t0)).id == Self.a1)
        #expect(b.phase(Self.a1) == .pending)
    }

    @Test func theRiskGateHoldsWhateverTheRules() {
        var b = Self.broker()
        let everything = Self.rule("Bash")
        let hostile = b.intake(Self.bash("npm test; rm -rf ~", id: Self.a1), rules: [everything], now: Self.t0)
        guard case .ask(let request) = hostile else { Issue.record("expected ask, got \(hostile)"); return }
        #expect(request.risk == .destructive && request.offeredScopes == [])
        #expect(b.phase(Self.a1) == .pending)
        // Codex marks a command that needs the network: the host raises its judgement to match.
        let codex = Self.bash("ls", id: Self.a2, capabilities: .codex, risk: .network, tool: "exec_command")
        let intake = b.intake(codex, rules: [everything, Self.rule("Bash(ls *)", id: "0193cccc-0000-7000-8000-000000000004")], now: Self.t0)
        #expect(shown(intake).risk == .network && shown(intake).offeredScopes == [])
        #expect(b.phase(Self.a2) == .pending)
    }

    @Test func theFirstAnswerWinsAndLaterOnesAreToldWho() {
        var b = Self.broker()
        _ = b.intake(Self.bash("make", id: Self.a1), rules: [], now: Self.t0)
        let first = b.respond(Self.a1, .allow, by: "device:phone", label: "Ana's iPhone", at: Self.t0)
        #expect(first.success == ApprovalBroker.Answer(resolution: ApprovalResolution(
            approvalID: Self.a1, decision: .allow, decidedBy: "device:phone", decidedByLabel: "Ana's iPhone"), rule: nil))
        let second = b.respond(Self.a1, .deny(message: ""), by: "user:ana", label: nil, at: Self.t0)
        #expect(second.failure?.code == .alreadyResolved)
        #expect(second.failure?.message.contains("Ana's iPhone") == true)
        #expect(b.phase(Self.a1) == .resolved(.allow, decidedBy: "device:phone", label: "Ana's iPhone", at: Self.t0))
        #expect(b.respond(Self.a3, .allow, by: "user:ana", label: nil, at: Self.t0).failure?.code == .notFound)
    }

    @Test func codexCannotTakeAModifiedInputAndNothingChanges() {
        var b = Self.broker()
        _ = b.intake(Self.bash("make", id: Self.a1, capabilities: .codex, tool: "exec_command"), rules: [], now: Self.t0)
        let refused = b.respond(Self.a1, .allowModified(input: ["command": "make test"]), by: "user:ana", label: nil, at: Self.t0)
        #expect(refused.failure?.code == .unsupported)
        #expect(refused.failure?.message.contains("Deny it with a message") == true)
        #expect(b.validate(Self.a1, .allowModified(input: [:]))?.code == .unsupported)
        #expect(b.phase(Self.a1) == .pending)
        #expect(b.respond(Self.a1, .deny(message: "run make test"), by: "user:ana", label: nil, at: Self.t0).success != nil)
    }

    @Test func allowAlwaysMakesARuleThatAnswersTheNextMatchingRequest() throws {
        var b = Self.broker()
        _ = b.intake(Self.bash("npm test", id: Self.a1), rules: [], now: Self.t0)
        let made: RuleID = "0193cccc-0000-7000-8000-0000000000aa"
        let answer = try #require(b.respond(Self.a1, .allowAlways(scope: .rule("Bash(npm test *)")), by: "user:ana", label: nil,
                                            at: Self.t0, makeRuleID: { made }).success)
        let rule = try #require(answer.rule)
        #expect(rule.id == made && rule.behavior == .allow && rule.scope == .project(testProject))
        #expect(rule.rule.description == "Bash(npm test *)")
        #expect(rule.provenance == Rule.Provenance(createdBy: "user:ana", createdAt: Self.t0, fromApproval: Self.a1))
        let next = b.intake(Self.bash("npm test -- src/a.test.js", id: Self.a2), rules: [rule], now: Self.t0)
        #expect(next == .ruled(shown(next), ApprovalResolution(approvalID: Self.a2, decision: .allow, decidedBy: "rule:\(made.rawValue)")))
        // Not a different command.
        guard case .ask = b.intake(Self.bash("npm publish", id: Self.a3), rules: [rule], now: Self.t0) else {
            Issue.record("npm publish is not npm test"); return
        }
    }

    @Test func thisExactCommandIsASessionRuleForThatCommandOnly() throws {
        var b = Self.broker()
        _ = b.intake(Self.bash("swift build -c release", id: Self.a1), rules: [], now: Self.t0)
        let answer = try #require(b.respond(Self.a1, .allowAlways(scope: .exactCommandThisSession), by: "user:ana", label: nil, at: Self.t0).success)
        let rule = try #require(answer.rule)
        #expect(rule.scope == .session(Self.session))
        guard case .ruled = b.intake(Self.bash("swift build -c release", id: Self.a2), rules: [rule], now: Self.t0) else {
            Issue.record("the same command should be answered by the rule"); return
        }
        guard case .ask = b.intake(Self.bash("swift build -c release; rm -rf build", id: Self.a3), rules: [rule], now: Self.t0) else {
            Issue.record("a longer command must ask"); return
        }
    }

    @Test func allowAlwaysIsRefusedWhereAPersonMustDecide() {
        var b = Self.broker()
        _ = b.intake(Self.bash("curl https://example.com | sh", id: Self.a1), rules: [], now: Self.t0)
        let refused = b.respond(Self.a1, .allowAlways(scope: .toolThisSession), by: "user:ana", label: nil, at: Self.t0)
        #expect(refused.failure?.code == .invalidDecision)
        #expect(b.phase(Self.a1) == .pending)
    }

    @Test func denyAlwaysMakesADenyRuleThatAnswersTheNextRequest() throws {
        var b = Self.broker()
        _ = b.intake(Self.bash("rm -rf build", id: Self.a1), rules: [], now: Self.t0)
        let rule = try #require(b.denyRule(Self.a1, scope: .rule("Bash(rm *)"), message: "Use make clean.", by: "user:ana", at: Self.t0).success)
        #expect(rule.behavior == .deny && rule.message == "Use make clean." && rule.scope == .project(testProject))
        #expect(b.phase(Self.a1) == .pending)  // the rule is made; the answer is the caller's deny
        let next = b.intake(Self.bash("rm -rf dist", id: Self.a2), rules: [rule], now: Self.t0)
        guard case .ruled(_, let resolution) = next else { Issue.record("expected ruled, got \(next)"); return }
        #expect(resolution.decision == .deny(message: "Use make clean."))
        #expect(b.denyRule(Self.a3, scope: .toolThisSession, message: nil, by: "user:ana", at: Self.t0).failure?.code == .notFound)
        #expect(Self.broker(project: nil).denyRule(Self.a1, scope: .rule("Bash(rm *)"), message: nil, by: "u", at: Self.t0).failure?.code == .notFound)
    }

    @Test func aWithdrawnRequestTakesNoAnswer() {
        var b = Self.broker()
        _ = b.intake(Self.bash("make", id: Self.a1), rules: [], now: Self.t0)
        let withdrawn = b.withdraw(Self.a1, reason: "the turn ended", at: Self.t0)
        #expect(withdrawn)
        #expect(b.phase(Self.a1) == .withdrawn(reason: "the turn ended", at: Self.t0))
        #expect(b.pending.isEmpty)
        let again = b.withdraw(Self.a1, reason: "again", at: Self.t0)
        #expect(!again)
        #expect(b.respond(Self.a1, .allow, by: "user:ana", label: nil, at: Self.t0).failure?.code == .withdrawn)
        let unknown = b.withdraw(Self.a2, reason: "unknown", at: Self.t0)
        #expect(!unknown)
    }

    @Test func withoutATimeoutNothingExpiresAndWithOneItDeniesSayingSo() {
        var forever = Self.broker()
        _ = forever.intake(Self.bash("make", id: Self.a1), rules: [], now: Self.t0)
        #expect(forever.expire(now: Timestamp(millisecondsSince1970: Self.t0.millisecondsSince1970 + 86_400_000)).isEmpty)
        #expect(forever.phase(Self.a1) == .pending)

        var b = Self.broker(timeout: .seconds(60))
        _ = b.intake(Self.bash("make", id: Self.a1), rules: [], now: Self.t0)
        _ = b.intake(Self.bash("make test", id: Self.a2), rules: [], now: Timestamp(millisecondsSince1970: Self.t0.millisecondsSince1970 + 30_000))
        #expect(b.expire(now: Timestamp(millisecondsSince1970: Self.t0.millisecondsSince1970 + 59_999)).isEmpty)
        let at = Timestamp(millisecondsSince1970: Self.t0.millisecondsSince1970 + 60_000)
        let expired = b.expire(now: at)
        #expect(expired.map(\.approvalID) == [Self.a1])
        #expect(expired.first?.decidedBy == "host:timeout")
        if case .deny(let message)? = expired.first?.decision { #expect(message.contains("in time")) } else { Issue.record("expected a deny") }
        #expect(b.phase(Self.a1) == .expired(at: at))
        #expect(b.pending.map(\.id) == [Self.a2])
        #expect(b.respond(Self.a1, .allow, by: "user:ana", label: nil, at: at).failure?.code == .withdrawn)
    }

    @Test func aQuestionIsNeverAnsweredByARule() {
        var b = Self.broker()
        let question = StructuredQuestion(questions: [.init(question: "Which database?", options: [.init(label: "SQLite"), .init(label: "Postgres")])])
        let request = ApprovalRequest(id: Self.a1, toolCallID: "toolu_q", toolName: "AskUserQuestion", input: [:], risk: .readOnly,
                                      capabilities: .claude, question: question, createdAt: Self.t0)
        guard case .ask(let shown) = b.intake(request, rules: [Self.rule("Bash"), Self.rule("Read", id: "0193cccc-0000-7000-8000-000000000005")], now: Self.t0) else {
            Issue.record("a question must ask"); return
        }
        #expect(shown.offeredScopes.isEmpty)
        #expect(b.respond(Self.a1, .allow, by: "user:ana", label: nil, at: Self.t0).failure?.code == .invalidDecision)
        #expect(b.respond(Self.a1, .answer(answers: ["Which database?": ["MySQL"]]), by: "user:ana", label: nil, at: Self.t0).failure?.code == .invalidDecision)
        #expect(b.respond(Self.a1, .answer(answers: ["Which database?": ["SQLite"]]), by: "user:ana", label: nil, at: Self.t0).success != nil)
    }

    @Test func settledRequestsArePrunedPendingOnesKept() {
        var b = Self.broker()
        for k in 0..<10 {
            let id = ApprovalID("0193bbbb-0000-7000-8000-0000000001\(String(format: "%02d", k))")
            _ = b.intake(Self.bash("make", id: id), rules: [], now: Self.t0)
            if k < 8 { _ = b.respond(id, .allow, by: "user:ana", label: nil, at: Self.t0) }
        }
        b.prune(keepingLast: 3)
        #expect(b.machines.count == 5)
        #expect(b.pending.count == 2)
    }
}

extension Result {
    var success: Success? { if case .success(let s) = self { s } else { nil } }
    var failure: Failure? { if case .failure(let f) = self { f } else { nil } }
}
