public import NucleicProtocol

/// One session's approvals: classifies each request the agent makes, asks the rules, and holds
/// an `ApprovalStateMachine` per request until it is resolved, withdrawn or expired.
///
/// Pure: the rules in force and the time are inputs, and every method returns what the
/// `Session` actor that holds it must do (record events, answer the agent, keep a rule).
///
/// ### Invariants
/// - Every request gets the host's risk (the codecs' is provisional) and the host's offered
///   scopes before anyone sees it.
/// - A request is answered at most once, by a rule or a person: the first valid answer wins;
///   later answers get `alreadyResolved` naming the winner.
/// - An invalid answer (a modified input Codex cannot carry, an answer to a command, "allow
///   always" at risk network or above) changes nothing.
public struct ApprovalBroker: Sendable {
    public let sessionID: SessionID
    public let projectID: ProjectID?
    /// The session's worktree: paths are judged against it, resolved once, when the broker is
    /// made (a link put in its place later does not move what counts as inside).
    public let worktree: String
    public let classifier: RiskClassifier
    private let resolver: PathResolver
    /// How long a request may wait for a person; nil (the default) waits forever.
    public var timeout: Duration?
    public private(set) var machines: [ApprovalID: ApprovalStateMachine] = [:]
    private var createdAt: [ApprovalID: Timestamp] = [:]

    public init(sessionID: SessionID, projectID: ProjectID?, worktree: String, classifier: RiskClassifier = RiskClassifier(),
                timeout: Duration? = nil) {
        self.sessionID = sessionID
        self.projectID = projectID
        self.worktree = worktree
        self.classifier = classifier
        self.resolver = classifier.resolver(worktree: worktree)
        self.timeout = timeout
    }

    /// What happens to a new request.
    public enum Intake: Sendable, Hashable {
        /// A person decides: the request as it is shown (host risk, offered scopes).
        case ask(ApprovalRequest)
        /// A rule decided: record the request and the resolution, and answer the agent.
        case ruled(ApprovalRequest, ApprovalResolution)
    }

    /// A person's accepted answer.
    public struct Answer: Sendable, Hashable {
        public var resolution: ApprovalResolution
        /// The rule an "always" answer makes, with the id it will be stored under.
        public var rule: Rule?

        public init(resolution: ApprovalResolution, rule: Rule? = nil) {
            self.resolution = resolution
            self.rule = rule
        }
    }

    /// Judges a new request and asks the rules in force.
    public mutating func intake(_ request: ApprovalRequest, rules: [Rule], now: Timestamp) -> Intake {
        var request = request
        request.sessionID = sessionID
        let classification = classify(request)
        var machine = ApprovalStateMachine(projectID: projectID)
        _ = machine.apply(.requested(request, classification))
        let outcome = RuleEngine(rules: rules).decide(machine.request!, classification, session: sessionID, project: projectID)
        let actions = machine.apply(.ruleMatched(outcome, at: now))
        machines[request.id] = machine
        createdAt[request.id] = now
        let shown = machine.request!
        for case .recordResolution(let resolution) in actions { return .ruled(shown, resolution) }
        return .ask(shown)
    }

    /// The host's judgement of a request: the classifier's, raised by the backend's own signal
    /// that it needs the network (Codex `networkApprovalContext`). The tool's kind is the one
    /// the codec put on the request; a request without one is judged by its tool name alone.
    public func classify(_ request: ApprovalRequest) -> Classification {
        let kind: ToolKind = request.question != nil ? .question : request.toolKind ?? .other
        let classification = classifier.classify(toolName: request.toolName, toolKind: kind, input: request.input, resolver: resolver)
        guard request.risk >= .network else { return classification }
        return classification.raising(to: request.risk, reason: "the agent says this needs \(request.risk.rawValue) access")
    }

    /// A person's answer. `makeRuleID` names the rule an "always" answer creates.
    public mutating func respond(_ id: ApprovalID, _ decision: Decision, by: String, label: String?, at: Timestamp,
                                 makeRuleID: () -> RuleID = { RuleID.make() }) -> Result<Answer, ApprovalError> {
        guard var machine = machines[id] else { return .failure(ApprovalError(.notFound, "this session has no approval \(id)")) }
        let actions = machine.apply(.respond(decision, by: by, label: label, at: at))
        machines[id] = machine
        var answer: Answer?
        var rule: Rule?
        for action in actions {
            switch action {
            case .reject(let error): return .failure(error)
            case .recordResolution(let resolution): answer = Answer(resolution: resolution)
            case .storeRule(let draft): rule = Rule(id: makeRuleID(), draft)
            default: break
            }
        }
        guard var answer else { return .failure(ApprovalError(.invalidDecision, "the answer was not taken")) }
        answer.rule = rule
        return .success(answer)
    }

    /// Why `decision` would be refused now, or nil.
    public func validate(_ id: ApprovalID, _ decision: Decision) -> ApprovalError? {
        guard let machine = machines[id] else { return ApprovalError(.notFound, "this session has no approval \(id)") }
        return machine.validate(decision)
    }

    /// A rule a person asked for alongside a deny ("deny always"): made from the request at `scope`.
    public func denyRule(_ id: ApprovalID, scope: ApprovalScope, message: String?, by: String, at: Timestamp,
                         makeRuleID: () -> RuleID = { RuleID.make() }) -> Result<Rule, ApprovalError> {
        guard let machine = machines[id], let request = machine.request, let classification = machine.classification else {
            return .failure(ApprovalError(.notFound, "this session has no approval \(id)"))
        }
        if request.question != nil { return .failure(ApprovalError(.invalidDecision, "questions cannot be denied always")) }
        let permission: PermissionRule
        do { permission = try RuleEngine.rule(for: scope, classification) } catch {
            return .failure(ApprovalError(.invalidDecision, "cannot deny always at that scope: \(error.message)"))
        }
        let ruleScope: Rule.Scope
        switch scope {
        case .rule:
            guard let projectID else { return .failure(ApprovalError(.invalidDecision, "this session has no project to keep the rule")) }
            ruleScope = .project(projectID)
        case .exactCommandThisSession, .toolThisSession:
            ruleScope = .session(sessionID)
        }
        let text = message?.isEmpty == false ? message : nil
        return .success(Rule(id: makeRuleID(), rule: permission, behavior: .deny, scope: ruleScope,
                             provenance: Rule.Provenance(createdBy: by, createdAt: at, fromApproval: id), message: text))
    }

    /// The request no longer needs an answer; true when it was pending (record the withdrawal).
    public mutating func withdraw(_ id: ApprovalID, reason: String, at: Timestamp) -> Bool {
        guard var machine = machines[id] else { return false }
        let actions = machine.apply(.withdrawn(reason: reason, at: at))
        machines[id] = machine
        return actions.contains(.recordWithdrawal(reason: reason))
    }

    /// Requests that waited longer than the configured timeout: each is denied with a message
    /// saying so (record the resolution, send its decision).
    public mutating func expire(now: Timestamp) -> [ApprovalResolution] {
        guard let timeout else { return [] }
        let limit = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        var expired: [ApprovalResolution] = []
        for (id, since) in createdAt.sorted(by: { $0.value.millisecondsSince1970 < $1.value.millisecondsSince1970 })
        where now.millisecondsSince1970 - since.millisecondsSince1970 >= limit {
            guard var machine = machines[id], machine.phase == .pending else { continue }
            for case .recordResolution(let resolution) in machine.apply(.expired(at: now)) { expired.append(resolution) }
            machines[id] = machine
        }
        return expired
    }

    /// Who answered an approval, if someone did.
    public func phase(_ id: ApprovalID) -> ApprovalStateMachine.Phase? { machines[id]?.phase }

    /// Requests still waiting for a person, oldest first.
    public var pending: [ApprovalRequest] {
        machines.values.filter { $0.phase == .pending }.compactMap(\.request)
            .sorted { (createdAt[$0.id]?.millisecondsSince1970 ?? 0) < (createdAt[$1.id]?.millisecondsSince1970 ?? 0) }
    }

    /// Forgets settled requests (keeps memory flat over a long session); the transcript has them.
    public mutating func prune(keepingLast count: Int = 256) {
        let settled = machines.filter { $0.value.phase != .pending }.keys.sorted()
        guard settled.count > count else { return }
        for id in settled.prefix(settled.count - count) {
            machines[id] = nil
            createdAt[id] = nil
        }
    }
}
