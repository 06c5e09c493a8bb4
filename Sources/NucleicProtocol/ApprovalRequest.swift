/// An agent asking to use a tool (or asking the user a question), held until someone answers.
public struct ApprovalRequest: Sendable, Hashable, JSONRepresentable {
    public var id: ApprovalID
    public var sessionID: SessionID?
    public var toolCallID: String?
    public var toolName: String
    /// What the tool does, as the codec that made the request knows it; nil for requests read
    /// back from records written before requests carried it.
    public var toolKind: ToolKind?
    public var input: JSONValue
    public var risk: Risk
    public var capabilities: BackendCapabilities
    /// "Allow always" scopes offered with this request (never for network, hostExec, destructive).
    public var offeredScopes: [ApprovalScope]
    /// Set when the tool is a question for the user rather than an action.
    public var question: StructuredQuestion?
    /// Why the agent asks, when it says (Codex `reason`, Claude `decision_reason`).
    public var reason: String?
    public var createdAt: Timestamp?
    /// The short name people type: its session's handle, a dot, its number in the session
    /// (`12.1`). Set by the host once it has recorded the request.
    public var handle: String?

    public init(
        id: ApprovalID, sessionID: SessionID? = nil, toolCallID: String?, toolName: String, toolKind: ToolKind? = nil, input: JSONValue,
        risk: Risk, capabilities: BackendCapabilities, offeredScopes: [ApprovalScope] = [],
        question: StructuredQuestion? = nil, reason: String? = nil, createdAt: Timestamp? = nil, handle: String? = nil
    ) {
        self.handle = handle
        self.id = id
        self.sessionID = sessionID
        self.toolCallID = toolCallID
        self.toolName = toolName
        self.toolKind = toolKind
        self.input = input
        self.risk = risk
        self.capabilities = capabilities
        self.offeredScopes = offeredScopes
        self.question = question
        self.reason = reason
        self.createdAt = createdAt
    }

    public var json: JSONValue {
        var o = JSONObject()
        o.append("id", .string(id.rawValue))
        o.append("sessionID", sessionID.map { .string($0.rawValue) } ?? .null)
        o.append("toolCallID", toolCallID.map(JSONValue.string) ?? .null)
        o.append("toolName", .string(toolName))
        o.append("toolKind", ifPresent: toolKind.map { .string($0.rawValue) })
        o.append("input", input)
        o.append("risk", .string(risk.rawValue))
        o.append("capabilities", capabilities.json)
        o.append("offeredScopes", .array(offeredScopes.map(\.json)))
        o.append("question", question?.json ?? .null)
        o.append("reason", ifPresent: reason.map(JSONValue.string))
        o.append("createdAt", ifPresent: createdAt.map { .string($0.description) })
        o.append("handle", ifPresent: handle.map(JSONValue.string))
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "approval")
        self.init(
            id: ApprovalID(try f.string("id")),
            sessionID: try f.optionalString("sessionID").map { SessionID($0) },
            toolCallID: try f.optionalString("toolCallID"),
            toolName: try f.string("toolName"),
            toolKind: try f.optionalString("toolKind").map { ToolKind(rawValue: $0) ?? .other },
            input: f["input"] ?? .null,
            risk: try f.enumValue("risk"),
            capabilities: try f.decode("capabilities"),
            offeredScopes: try (f["offeredScopes"]?.arrayValue ?? []).map { v throws(ShapeError) in try ApprovalScope(json: v) },
            question: try f.optional("question"),
            reason: try f.optionalString("reason"),
            createdAt: try f.optionalString("createdAt").flatMap(Timestamp.init),
            handle: try f.optionalString("handle"))
    }

    /// What a person types for it: the handle, or the id's first characters without one.
    public var displayName: String { handle ?? String(id.rawValue.prefix(13)) }
}

/// One or more questions the agent wants answered, each with labelled options.
public struct StructuredQuestion: Sendable, Hashable, JSONRepresentable {
    public struct Item: Sendable, Hashable {
        /// The backend's id for the question (Codex); Claude keys answers by the question text.
        public var id: String?
        public var header: String?
        public var question: String
        public var options: [Option]
        public var multiSelect: Bool
        /// Whether the agent takes a free-text answer besides the options ("Other").
        public var allowsOther: Bool

        public init(id: String? = nil, header: String? = nil, question: String, options: [Option], multiSelect: Bool = false,
                    allowsOther: Bool = false) {
            self.allowsOther = allowsOther
            self.id = id
            self.header = header
            self.question = question
            self.options = options
            self.multiSelect = multiSelect
        }
    }

    public struct Option: Sendable, Hashable {
        public var label: String
        public var description: String?
        public init(label: String, description: String? = nil) { self.label = label; self.description = description }
    }

    public var questions: [Item]
    public init(questions: [Item]) { self.questions = questions }

    public var json: JSONValue {
        .object(["questions": .array(questions.map { q in
            var o = JSONObject()
            o.append("id", ifPresent: q.id.map(JSONValue.string))
            o.append("header", ifPresent: q.header.map(JSONValue.string))
            o.append("question", .string(q.question))
            o.append("options", .array(q.options.map { opt in
                var oo: JSONObject = ["label": .string(opt.label)]
                oo.append("description", ifPresent: opt.description.map(JSONValue.string))
                return .object(oo)
            }))
            o.append("multiSelect", .bool(q.multiSelect))
            if q.allowsOther { o.append("allowsOther", .bool(true)) }
            return .object(o)
        })])
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "question")
        guard let items = try f.value("questions").arrayValue else { throw ShapeError("question: \"questions\" must be an array") }
        var questions: [Item] = []
        for item in items {
            let q = try Fields(item, "question item")
            var options: [Option] = []
            for option in q["options"]?.arrayValue ?? [] {
                let o = try Fields(option, "question option")
                options.append(Option(label: try o.string("label"), description: try o.optionalString("description")))
            }
            questions.append(Item(
                id: try q.optionalString("id"), header: try q.optionalString("header"), question: try q.string("question"),
                options: options, multiSelect: try q.bool("multiSelect", default: false),
                allowsOther: try q.bool("allowsOther", default: false)))
        }
        self.questions = questions
    }
}
