/// A host rule as clients see it (`nucleic rules ls`): Claude Code's permission-rule syntax,
/// what it does, where it applies, and where it came from.
public struct RuleInfo: Sendable, Hashable, JSONRepresentable {
    public enum Behavior: String, Sendable, Hashable, CaseIterable { case allow, deny }

    public var id: RuleID
    /// `Bash(npm test *)`, `Edit(src/**)`, `WebFetch(domain:example.com)`.
    public var rule: String
    public var behavior: Behavior
    /// Set for a project rule.
    public var projectID: ProjectID?
    /// Set for a rule of one session.
    public var sessionID: SessionID?
    /// `user:<login>`, `device:<id>`.
    public var createdBy: String
    public var createdAt: Timestamp
    /// The approval whose "always" answer made it.
    public var fromApproval: ApprovalID?
    /// For a deny rule: what the agent is told.
    public var message: String?

    public init(id: RuleID, rule: String, behavior: Behavior, projectID: ProjectID? = nil, sessionID: SessionID? = nil,
                createdBy: String, createdAt: Timestamp, fromApproval: ApprovalID? = nil, message: String? = nil) {
        self.id = id
        self.rule = rule
        self.behavior = behavior
        self.projectID = projectID
        self.sessionID = sessionID
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.fromApproval = fromApproval
        self.message = message
    }

    /// `project` or `session`.
    public var scope: String { sessionID == nil ? "project" : "session" }

    public var json: JSONValue {
        var o: JSONObject = ["id": .string(id.rawValue), "rule": .string(rule), "behavior": .string(behavior.rawValue),
                             "scope": .string(scope)]
        o.append("projectID", ifPresent: projectID.map { .string($0.rawValue) })
        o.append("sessionID", ifPresent: sessionID.map { .string($0.rawValue) })
        o.append("createdBy", .string(createdBy))
        o.append("createdAt", .string(createdAt.description))
        o.append("fromApproval", ifPresent: fromApproval.map { .string($0.rawValue) })
        o.append("message", ifPresent: message.map(JSONValue.string))
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "rule")
        guard let createdAt = Timestamp(try f.string("createdAt")) else { throw ShapeError("rule: createdAt is not a timestamp") }
        self.init(id: RuleID(try f.string("id")), rule: try f.string("rule"), behavior: try f.enumValue("behavior"),
                  projectID: try f.optionalString("projectID").map { ProjectID($0) },
                  sessionID: try f.optionalString("sessionID").map { SessionID($0) },
                  createdBy: try f.string("createdBy"), createdAt: createdAt,
                  fromApproval: try f.optionalString("fromApproval").map { ApprovalID($0) }, message: try f.optionalString("message"))
    }
}

/// What the rules say about a tool call, without running anything (`nucleic rules explain`).
public struct RuleVerdict: Sendable, Hashable, JSONRepresentable {
    public enum Outcome: String, Sendable, Hashable, CaseIterable {
        case allowedByRule, deniedByRule, asks
    }

    /// A rule that matched a part of the request, and whether it counted.
    public struct Match: Sendable, Hashable, JSONRepresentable {
        public var ruleID: RuleID
        public var rule: String
        public var behavior: RuleInfo.Behavior
        /// The part it matched (`npm test`), or "the whole command".
        public var part: String
        public var honoured: Bool
        /// Why a match did not count (the risk gate, for example).
        public var note: String?

        public init(ruleID: RuleID, rule: String, behavior: RuleInfo.Behavior, part: String, honoured: Bool, note: String? = nil) {
            self.ruleID = ruleID
            self.rule = rule
            self.behavior = behavior
            self.part = part
            self.honoured = honoured
            self.note = note
        }

        public var json: JSONValue {
            var o: JSONObject = ["ruleID": .string(ruleID.rawValue), "rule": .string(rule), "behavior": .string(behavior.rawValue),
                                 "part": .string(part), "honoured": .bool(honoured)]
            o.append("note", ifPresent: note.map(JSONValue.string))
            return .object(o)
        }

        public init(json: JSONValue) throws(ShapeError) {
            let f = try Fields(json, "rule match")
            self.init(ruleID: RuleID(try f.string("ruleID")), rule: try f.string("rule"), behavior: try f.enumValue("behavior"),
                      part: try f.string("part"), honoured: try f.bool("honoured"), note: try f.optionalString("note"))
        }
    }

    public var risk: Risk
    /// Why the risk is what it is, riskiest part first.
    public var riskReasons: [String]
    public var outcome: Outcome
    /// The rule that decided, when one did.
    public var decidedBy: RuleID?
    public var rules: [Match]
    /// Why a person is asked (empty when a rule decided).
    public var reasons: [String]

    public init(risk: Risk, riskReasons: [String], outcome: Outcome, decidedBy: RuleID?, rules: [Match], reasons: [String]) {
        self.risk = risk
        self.riskReasons = riskReasons
        self.outcome = outcome
        self.decidedBy = decidedBy
        self.rules = rules
        self.reasons = reasons
    }

    public var json: JSONValue {
        var o: JSONObject = ["risk": .string(risk.rawValue), "riskReasons": .array(riskReasons.map(JSONValue.string)),
                             "outcome": .string(outcome.rawValue)]
        o.append("decidedBy", ifPresent: decidedBy.map { .string("rule:\($0.rawValue)") })
        o.append("rules", .array(rules.map(\.json)))
        o.append("reasons", .array(reasons.map(JSONValue.string)))
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "rule verdict")
        var matches: [Match] = []
        for value in f["rules"]?.arrayValue ?? [] { matches.append(try Match(json: value)) }
        let decidedBy = try f.optionalString("decidedBy").map { RuleID(String($0.dropFirst($0.hasPrefix("rule:") ? 5 : 0))) }
        self.init(risk: try f.enumValue("risk"), riskReasons: (f["riskReasons"]?.arrayValue ?? []).compactMap(\.stringValue),
                  outcome: try f.enumValue("outcome"), decidedBy: decidedBy, rules: matches,
                  reasons: (f["reasons"]?.arrayValue ?? []).compactMap(\.stringValue))
    }
}

/// The rule messages of the control scope (`nucleic rules …`).
public enum RuleRequest: Sendable, Hashable {
    /// `listRules {project?}`: every rule, or those in force for a project's sessions.
    case list(project: String?)
    /// `addRule {rule, behavior, project?, sessionID?, message?}`: a project rule, or one
    /// session's when `sessionID` is given.
    case add(rule: String, behavior: RuleInfo.Behavior, project: String?, sessionID: SessionID?, message: String?)
    /// `removeRule {ruleID}` (an id or unique prefix).
    case remove(ruleID: String)
    /// `explainRule {toolName, input, project?, sessionID?}`: risk, matching rules, outcome.
    case explain(toolName: String, input: JSONValue, project: String?, sessionID: SessionID?)

    public var type: String {
        switch self {
        case .list: "listRules"
        case .add: "addRule"
        case .remove: "removeRule"
        case .explain: "explainRule"
        }
    }

    static let types: Set<String> = ["listRules", "addRule", "removeRule", "explainRule"]

    func encode(into o: inout JSONObject) {
        switch self {
        case .list(let project):
            o.append("project", ifPresent: project.map(JSONValue.string))
        case .add(let rule, let behavior, let project, let session, let message):
            o.append("rule", .string(rule))
            o.append("behavior", .string(behavior.rawValue))
            o.append("project", ifPresent: project.map(JSONValue.string))
            o.append("sessionID", ifPresent: session.map { .string($0.rawValue) })
            o.append("message", ifPresent: message.map(JSONValue.string))
        case .remove(let id):
            o.append("ruleID", .string(id))
        case .explain(let tool, let input, let project, let session):
            o.append("toolName", .string(tool))
            o.append("input", input)
            o.append("project", ifPresent: project.map(JSONValue.string))
            o.append("sessionID", ifPresent: session.map { .string($0.rawValue) })
        }
    }

    init(type: String, _ f: Fields) throws(ShapeError) {
        let session = try f.optionalString("sessionID").map { SessionID($0) }
        switch type {
        case "listRules": self = .list(project: try f.optionalString("project"))
        case "addRule":
            self = .add(rule: try f.string("rule"), behavior: try f.optionalString("behavior") == nil ? .allow : f.enumValue("behavior"),
                        project: try f.optionalString("project"), sessionID: session, message: try f.optionalString("message"))
        case "removeRule": self = .remove(ruleID: try f.string("ruleID"))
        default:
            guard let input = f["input"], case .object = input else { throw ShapeError("explainRule: input must be an object") }
            self = .explain(toolName: try f.string("toolName"), input: input, project: try f.optionalString("project"), sessionID: session)
        }
    }
}
