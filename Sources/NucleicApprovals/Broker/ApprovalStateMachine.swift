public import NucleicProtocol

/// The pure core of the ApprovalBroker for one approval: `apply(event)` changes the state and
/// returns the actions the broker performs (send the answer to the agent, record it in the
/// transcript, store a rule), in the style of a composable-architecture reducer.
///
/// ```
/// awaitingRequest ─requested→ pending ─ruleMatched(allow/deny)─→ resolved(decision, decidedBy, at)
///                                     ─respond(valid)─────────→ resolved
///                                     ─withdrawn(reason)──────→ withdrawn(reason)
///                                     ─expired(at)────────────→ expired  (only with a configured timeout)
/// ```
///
/// ### Invariants
/// - At most one resolution: the first valid answer (a rule's or a person's) wins; every later
///   answer is rejected with `alreadyResolved` naming the winner, and the agent receives exactly
///   one `sendToAgent`.
/// - An invalid answer changes nothing: `allowModified` where the backend cannot carry it,
///   `answer` to a non-question, `allowAlways` for risk ≥ network, an unknown scope.
/// - A rule never resolves what needs a person (risk ≥ network, a question), even if asked to.
public struct ApprovalStateMachine: Sendable, Hashable {
    public enum Phase: Sendable, Hashable {
        case awaitingRequest
        case pending
        case resolved(Decision, decidedBy: String, label: String?, at: Timestamp)
        case withdrawn(reason: String, at: Timestamp)
        /// No one answered within the user's configured timeout; the agent was told so.
        case expired(at: Timestamp)
    }

    public enum Event: Sendable, Hashable {
        /// The agent asked; `classification` is the host's judgement of it.
        case requested(ApprovalRequest, Classification)
        /// The rule engine's outcome for the request (`ask` leaves it pending).
        case ruleMatched(RuleOutcome, at: Timestamp)
        /// A person's answer: `by` is `user:<login>` or `device:<id>`, `label` a display name.
        case respond(Decision, by: String, label: String?, at: Timestamp)
        /// The request no longer needs an answer (turn interrupted, agent exited, agent cancelled).
        case withdrawn(reason: String, at: Timestamp)
        /// The configured timeout passed with no answer.
        case expired(at: Timestamp)
        /// Would this decision be accepted now? Changes nothing; answers `accepted` or `reject`.
        case capabilityCheck(Decision)
    }

    public enum Action: Sendable, Hashable {
        /// Tell the clients a person is needed (the request as it will be shown).
        case awaitPerson(ApprovalRequest)
        /// Answer the agent.
        case sendToAgent(Decision)
        /// Append `approvalResolved` to the transcript and update the store.
        case recordResolution(ApprovalResolution)
        /// Append `approvalWithdrawn` to the transcript and update the store.
        case recordWithdrawal(reason: String)
        /// Store a rule made by an "allow always" answer (the store gives it its id).
        case storeRule(RuleDraft)
        /// The decision checked by `capabilityCheck` would be accepted.
        case accepted(Decision)
        /// Tell whoever sent the event why it was refused.
        case reject(ApprovalError)
    }

    public private(set) var phase: Phase = .awaitingRequest
    /// The request, with its risk and offered scopes set from the classification.
    public private(set) var request: ApprovalRequest?
    public private(set) var classification: Classification?
    /// The project the session belongs to (where project rules go).
    public let projectID: ProjectID?

    public init(projectID: ProjectID?) { self.projectID = projectID }

    public mutating func apply(_ event: Event) -> [Action] {
        switch event {
        case .requested(var request, let classification):
            guard phase == .awaitingRequest else { return [.reject(ApprovalError(.invalidDecision, "approval \(request.id) was already requested"))] }
            request.risk = classification.risk
            request.offeredScopes = RuleEngine.offeredScopes(request, classification)
            self.request = request
            self.classification = classification
            phase = .pending
            return []

        case .ruleMatched(let outcome, let at):
            guard let request, phase == .pending else { return [.reject(notPending())] }
            switch outcome {
            case .ask:
                return [.awaitPerson(request)]
            case .allow(let rule):
                if request.question != nil || request.risk.alwaysNeedsPerson {
                    return [.reject(ApprovalError(.invalidDecision, "rule \(rule) cannot answer \(request.toolName) (risk \(request.risk.rawValue)): a person must"))]
                        + [.awaitPerson(request)]
                }
                return resolve(.allow, by: "rule:\(rule.rawValue)", label: nil, at: at)
            case .deny(let rule, let message):
                return resolve(.deny(message: message), by: "rule:\(rule.rawValue)", label: nil, at: at)
            }

        case .respond(let decision, let by, let label, let at):
            if let error = validate(decision) { return [.reject(error)] }
            var actions = resolve(decision, by: by, label: label, at: at)
            if case .allowAlways(let scope) = decision, let draft = draft(for: scope, by: by, at: at) {
                actions.insert(.storeRule(draft), at: 1)
            }
            return actions

        case .withdrawn(let reason, let at):
            guard phase == .pending else { return [] }  // answered before the agent went away: nothing to undo
            phase = .withdrawn(reason: reason, at: at)
            return [.recordWithdrawal(reason: reason)]

        case .expired(let at):
            guard phase == .pending else { return [] }
            phase = .expired(at: at)
            let message = "No one answered this request in time, so it was not run. Ask again or continue without it."
            let resolution = ApprovalResolution(approvalID: request!.id, decision: .deny(message: message), decidedBy: "host:timeout", decidedByLabel: "timeout")
            return [.recordResolution(resolution), .sendToAgent(.deny(message: message))]

        case .capabilityCheck(let decision):
            if let error = validate(decision) { return [.reject(error)] }
            return [.accepted(decision)]
        }
    }

    private mutating func resolve(_ decision: Decision, by: String, label: String?, at: Timestamp) -> [Action] {
        guard let request, phase == .pending else { return [.reject(notPending())] }
        phase = .resolved(decision, decidedBy: by, label: label, at: at)
        let resolution = ApprovalResolution(approvalID: request.id, decision: decision, decidedBy: by, decidedByLabel: label)
        return [.recordResolution(resolution), .sendToAgent(decision)]
    }

    private func notPending() -> ApprovalError {
        switch phase {
        case .awaitingRequest: ApprovalError(.notFound, "there is no such pending approval")
        case .pending: ApprovalError(.invalidDecision, "the approval is pending")
        case .resolved(_, let by, let label, _):
            ApprovalError(.alreadyResolved, "approval \(request?.id.rawValue ?? "") was already answered by \(label ?? by)", decidedBy: by, decidedByLabel: label)
        case .withdrawn(let reason, _): ApprovalError(.withdrawn, "approval \(request?.id.rawValue ?? "") was withdrawn: \(reason)")
        case .expired: ApprovalError(.withdrawn, "approval \(request?.id.rawValue ?? "") expired with no answer")
        }
    }

    /// Why `decision` cannot be accepted now, or nil.
    public func validate(_ decision: Decision) -> ApprovalError? {
        guard let request, let classification, phase == .pending else { return notPending() }
        let isQuestion = request.question != nil
        switch decision {
        case .allow:
            if isQuestion { return ApprovalError(.invalidDecision, "\(request.toolName) is a question: answer it with one of its options, or deny or cancel it") }
        case .deny, .cancel:
            break
        case .allowModified:
            if isQuestion { return ApprovalError(.invalidDecision, "\(request.toolName) is a question: answer it with one of its options, or deny or cancel it") }
            if !request.capabilities.canModifyToolInput {
                return ApprovalError(.unsupported, "this backend cannot run a modified \(request.toolName): its approval answer carries no new input. Deny it with a message saying what to run instead")
            }
        case .answer(let answers):
            guard let question = request.question else {
                return ApprovalError(.invalidDecision, "\(request.toolName) is not a question: allow, deny or cancel it")
            }
            if !request.capabilities.canAnswerQuestions {
                return ApprovalError(.unsupported, "this backend cannot receive answers to questions; deny it with a message instead")
            }
            if let problem = Self.check(answers, against: question) { return ApprovalError(.invalidDecision, problem) }
        case .allowAlways(let scope):
            if isQuestion { return ApprovalError(.invalidDecision, "questions cannot be answered always: answer this one") }
            if request.risk.alwaysNeedsPerson {
                return ApprovalError(.invalidDecision, "risk \(request.risk.rawValue) always needs a person, so it cannot be allowed always: allow it once")
            }
            let rule: PermissionRule
            do { rule = try RuleEngine.rule(for: scope, classification) } catch {
                return ApprovalError(.invalidDecision, "cannot allow always at that scope: \(error.message)")
            }
            if case .rule(let text) = scope {
                guard RuleSubject.of(classification).contains(where: rule.allows) || rule.matchesWholeCommand(classification.script ?? "", family: classification.family) else {
                    return ApprovalError(.invalidDecision, "the rule \(text) does not match this request, so it would not allow it again")
                }
                if projectID == nil { return ApprovalError(.invalidDecision, "this session has no project to keep the rule \(text); allow always for this session instead") }
            }
        }
        return nil
    }

    /// Labels must be options of the question; every question gets an answer; one label unless
    /// the question allows several.
    static func check(_ answers: [String: [String]], against question: StructuredQuestion) -> String? {
        for item in question.questions {
            let key = answers[item.question] != nil ? item.question : (item.id.flatMap { answers[$0] != nil ? $0 : nil } ?? item.question)
            guard let labels = answers[key], !labels.isEmpty else { return "no answer to “\(item.question)”" }
            if labels.count > 1, !item.multiSelect { return "“\(item.question)” takes one answer" }
            if !item.options.isEmpty, let bad = labels.first(where: { label in !item.options.contains { $0.label == label } }) {
                return "“\(bad)” is not an option of “\(item.question)” (options: \(item.options.map(\.label).joined(separator: ", ")))"
            }
        }
        let known = Set(question.questions.flatMap { [$0.question] + ($0.id.map { [$0] } ?? []) })
        if let extra = answers.keys.sorted().first(where: { !known.contains($0) }) { return "“\(extra)” is not one of the questions" }
        return nil
    }

    private func draft(for scope: ApprovalScope, by: String, at: Timestamp) -> RuleDraft? {
        guard let request, let classification, let rule = try? RuleEngine.rule(for: scope, classification) else { return nil }
        let ruleScope: Rule.Scope
        switch scope {
        case .rule:
            guard let projectID else { return nil }
            ruleScope = .project(projectID)
        case .exactCommandThisSession, .toolThisSession:
            guard let session = request.sessionID else { return nil }
            ruleScope = .session(session)
        }
        return RuleDraft(rule: rule, behavior: .allow, scope: ruleScope, provenance: Rule.Provenance(createdBy: by, createdAt: at, fromApproval: request.id))
    }
}

/// Why an answer to an approval was refused. Says what happened and what to do instead.
public struct ApprovalError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        case notFound, alreadyResolved, withdrawn, unsupported, invalidDecision
    }

    public var code: Code
    public var message: String
    /// For `alreadyResolved`: who won.
    public var decidedBy: String?
    public var decidedByLabel: String?

    public init(_ code: Code, _ message: String, decidedBy: String? = nil, decidedByLabel: String? = nil) {
        self.code = code
        self.message = message
        self.decidedBy = decidedBy
        self.decidedByLabel = decidedByLabel
    }

    public var description: String { message }

    /// The wire error code (`withdrawn` is reported as `alreadyResolved`: the answer came too late).
    public var errorCode: HostMsg.ErrorCode {
        switch code {
        case .notFound: .notFound
        case .alreadyResolved, .withdrawn: .alreadyResolved
        case .unsupported: .unsupported
        case .invalidDecision: .invalidDecision
        }
    }
}
