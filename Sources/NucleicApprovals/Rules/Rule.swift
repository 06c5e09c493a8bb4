public import NucleicProtocol

/// A host-owned permission rule with its scope and provenance (DESIGN.md §5: rules are the
/// host's; Claude's own rule suggestions are never written to its settings).
public struct Rule: Sendable, Hashable {
    public enum Behavior: String, Sendable, Hashable, CaseIterable { case allow, deny }

    public enum Scope: Sendable, Hashable {
        /// Only in this session (what "allow always … this session" stores).
        case session(SessionID)
        /// Every session of the project.
        case project(ProjectID)
    }

    /// Who made the rule, when, and from which approval (nil when added by `nucleic rules add`).
    public struct Provenance: Sendable, Hashable {
        /// `user:<login>`, `device:<id>`.
        public var createdBy: String
        public var createdAt: Timestamp
        public var fromApproval: ApprovalID?

        public init(createdBy: String, createdAt: Timestamp, fromApproval: ApprovalID? = nil) {
            self.createdBy = createdBy
            self.createdAt = createdAt
            self.fromApproval = fromApproval
        }
    }

    public var id: RuleID
    public var rule: PermissionRule
    public var behavior: Behavior
    public var scope: Scope
    public var provenance: Provenance
    /// For deny rules: what the agent is told (a default names the rule).
    public var message: String?

    public init(id: RuleID, rule: PermissionRule, behavior: Behavior, scope: Scope, provenance: Provenance, message: String? = nil) {
        self.id = id
        self.rule = rule
        self.behavior = behavior
        self.scope = scope
        self.provenance = provenance
        self.message = message
    }

    public init(id: RuleID, _ draft: RuleDraft) {
        self.init(id: id, rule: draft.rule, behavior: draft.behavior, scope: draft.scope, provenance: draft.provenance, message: draft.message)
    }

    /// Whether the rule is in force for a session of a project.
    public func applies(session: SessionID?, project: ProjectID?) -> Bool {
        switch scope {
        case .session(let s): s == session
        case .project(let p): p == project
        }
    }

    /// What a matching request is answered with.
    public var decidedBy: String { "rule:\(id.rawValue)" }
}

/// A rule to store, before the store gives it an id.
public struct RuleDraft: Sendable, Hashable {
    public var rule: PermissionRule
    public var behavior: Rule.Behavior
    public var scope: Rule.Scope
    public var provenance: Rule.Provenance
    public var message: String?

    public init(rule: PermissionRule, behavior: Rule.Behavior, scope: Rule.Scope, provenance: Rule.Provenance, message: String? = nil) {
        self.rule = rule
        self.behavior = behavior
        self.scope = scope
        self.provenance = provenance
        self.message = message
    }
}
