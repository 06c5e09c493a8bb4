/// A person's (or a rule's) answer to an approval (DESIGN.md §6).
public enum Decision: Sendable, Hashable, JSONRepresentable {
    /// Run the tool as requested.
    case allow
    /// Run the tool with this input instead; only where `canModifyToolInput`.
    case allowModified(input: JSONValue)
    /// Do not run it; the agent continues and sees `message` as feedback.
    case deny(message: String)
    /// Do not run it and end the turn.
    case cancel
    /// Answers to a structured question: question text → chosen labels.
    case answer(answers: [String: [String]])
    /// Run it, and allow the same again at `scope` without asking.
    case allowAlways(scope: ApprovalScope)

    /// The wire spelling of the case.
    public var type: String {
        switch self {
        case .allow: "allow"
        case .allowModified: "allowModified"
        case .deny: "deny"
        case .cancel: "cancel"
        case .answer: "answer"
        case .allowAlways: "allowAlways"
        }
    }

    /// Whether the tool runs under this decision.
    public var allowsTool: Bool {
        switch self {
        case .allow, .allowModified, .allowAlways, .answer: true
        case .deny, .cancel: false
        }
    }

    public var json: JSONValue {
        var o: JSONObject = ["type": .string(type)]
        switch self {
        case .allow, .cancel: break
        case .allowModified(let input): o.append("input", input)
        case .deny(let message): o.append("message", .string(message))
        case .answer(let answers):
            o.append("answers", .object(JSONObject(answers.keys.sorted().map {
                JSONObject.Entry($0, .array(answers[$0]!.map(JSONValue.string)))
            })))
        case .allowAlways(let scope): o.append("scope", scope.json)
        }
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "decision")
        switch try f.string("type") {
        case "allow": self = .allow
        case "allowModified": self = .allowModified(input: try f.value("input"))
        case "deny": self = .deny(message: try f.optionalString("message") ?? "")
        case "cancel": self = .cancel
        case "answer":
            guard let object = try f.value("answers").objectValue else { throw ShapeError("decision: \"answers\" must be an object") }
            var answers: [String: [String]] = [:]
            for entry in object {
                switch entry.value {
                case .string(let label): answers[entry.key] = [label]
                case .array(let labels):
                    let strings = labels.compactMap(\.stringValue)
                    guard strings.count == labels.count else { throw ShapeError("decision: answers must be strings") }
                    answers[entry.key] = strings
                default: throw ShapeError("decision: answers must be strings")
                }
            }
            self = .answer(answers: answers)
        case "allowAlways": self = .allowAlways(scope: try f.decode("scope"))
        case let other: throw ShapeError("decision: unknown type \"\(other)\"")
        }
    }
}

/// How far an "allow always" reaches.
public enum ApprovalScope: Sendable, Hashable, JSONRepresentable {
    /// This exact command, for the rest of this session.
    case exactCommandThisSession
    /// Every use of this tool, for the rest of this session.
    case toolThisSession
    /// A project rule in Claude Code's permission-rule syntax, e.g. `Bash(npm test *)`.
    case rule(String)

    public var json: JSONValue {
        switch self {
        case .exactCommandThisSession: ["type": "exactCommandThisSession"]
        case .toolThisSession: ["type": "toolThisSession"]
        case .rule(let rule): ["type": "rule", "rule": .string(rule)]
        }
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "scope")
        switch try f.string("type") {
        case "exactCommandThisSession": self = .exactCommandThisSession
        case "toolThisSession": self = .toolThisSession
        case "rule": self = .rule(try f.string("rule"))
        case let other: throw ShapeError("scope: unknown type \"\(other)\"")
        }
    }
}
