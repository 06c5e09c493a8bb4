public import NucleicProtocol

/// Claude Code's stream-json and control protocol (`claude -p --input-format stream-json
/// --output-format stream-json --verbose --permission-prompt-tool stdio`), as a pure codec.
///
/// docs/adapters/claude.md maps every native message to its events. The rules that need state:
/// - a tool call is announced by `stream_event` partials and again by the `assistant` message;
///   `toolCallStarted` fires once, as soon as the whole input is known;
/// - `toolCallCompleted` fires once per started call, from its `tool_result`, or at the end of
///   the turn for a call that never got one;
/// - a `result` that is an error is a `notice` plus `runFinished(isError: true)`.
public struct ClaudeCodec: AgentCodec {
    public let backend = "claude"
    public let capabilities = BackendCapabilities.claude

    /// How long the host waits for a reply to its own control requests.
    public var requestTimeoutMS: Int64 = 30_000
    let makeApprovalID: @Sendable () -> ApprovalID

    // State (internal so the +Receive extension can reach it; nothing outside the codec touches it).
    // Request ids the host sent, by their `request_id`.
    var requests = PendingRequests<String>()
    var nextRequestNumber = 1
    var startedSession = false
    var interruptRequested = false
    /// The turn's API error was already reported (by the synthetic assistant message).
    var reportedErrorThisTurn = false
    /// Tool calls started and not yet completed, in start order, with their names.
    var openToolCalls: [(id: String, name: String)] = []
    var startedToolIDs: Set<String> = []
    var deniedToolIDs: Set<String> = []
    /// Streamed content blocks of the message in progress, by block index.
    var streamingBlocks: [Int64: StreamingBlock] = [:]
    var approvals: [ApprovalID: PendingApproval] = [:]
    var approvalOrder: [ApprovalID] = []

    struct StreamingBlock: Sendable {
        var type: String
        var toolID: String?
        var toolName: String?
        var partialJSON: [UInt8] = []
        /// `startedToolIDs.count` when `toolStarted` was last found (-1: not yet).
        var startedCheckedAt = -1
        /// Whether `toolID` was in `startedToolIDs` then.
        var toolStarted = false
    }

    struct PendingApproval: Sendable {
        var request: ApprovalRequest
        var nativeRequestID: String
        var originalInput: JSONValue
    }

    public init(makeApprovalID: @escaping @Sendable () -> ApprovalID = { ApprovalID.make() }) {
        self.makeApprovalID = makeApprovalID
    }

    public var pendingApprovals: [ApprovalRequest] { approvalOrder.compactMap { approvals[$0]?.request } }

    // MARK: Host → agent

    public mutating func start(_ options: SessionStartOptions, now: Timestamp) -> CodecOutput {
        var out = CodecOutput(lines: [controlRequest(["subtype": "initialize", "hooks": nil], now: now)])
        if let prompt = options.prompt { out.append(userMessage(prompt)) }
        return out
    }

    public mutating func send(_ intent: HostIntent, now: Timestamp) throws(CodecError) -> CodecOutput {
        switch intent {
        case .prompt(let text):
            interruptRequested = false
            return userMessage(text)
        case .interrupt:
            interruptRequested = true
            return CodecOutput(lines: [controlRequest(["subtype": "interrupt"], now: now)])
        case .decide(let id, let decision):
            return try answer(id, decision)
        }
    }

    public mutating func expire(now: Timestamp) -> CodecOutput {
        CodecOutput(events: requests.expire(now: now).map { PendingRequests.timeoutNotice($0, backend: backend) })
    }

    private mutating func controlRequest(_ request: JSONObject, now: Timestamp) -> String {
        let id = "req_\(nextRequestNumber)"
        nextRequestNumber += 1
        requests.add(id, method: request["subtype"]?.stringValue ?? "control_request", now: now, timeoutMS: requestTimeoutMS)
        let line: JSONValue = ["type": "control_request", "request_id": .string(id), "request": .object(request)]
        return JSONWriter.string(line)
    }

    private func userMessage(_ text: String) -> CodecOutput {
        let line: JSONValue = [
            "type": "user", "message": ["role": "user", "content": .string(text)], "parent_tool_use_id": nil,
        ]
        return CodecOutput(events: [.userInput(text: text)], lines: [JSONWriter.string(line)])
    }

    private mutating func answer(_ id: ApprovalID, _ decision: Decision) throws(CodecError) -> CodecOutput {
        guard let pending = approvals[id] else {
            throw CodecError(.unknownApproval, "no pending approval \(id): it was already answered, withdrawn, or never existed")
        }
        let response: JSONValue
        switch decision {
        case .allow, .allowAlways:
            // "Allow always" rules are the host's (DESIGN.md §5): nothing goes to Claude's settings.
            guard pending.request.question == nil else {
                throw CodecError(.invalidDecision, "\(pending.request.toolName) is a question: answer it with an `answer` decision")
            }
            response = ["behavior": "allow", "updatedInput": pending.originalInput]
        case .allowModified(let input):
            guard case .object = input else {
                throw CodecError(.invalidDecision, "a modified tool input must be a JSON object, like the original")
            }
            response = ["behavior": "allow", "updatedInput": input]
        case .deny(let message):
            deniedToolIDs.formUnion([pending.request.toolCallID].compactMap { $0 })
            response = ["behavior": "deny", "message": .string(message.isEmpty ? "The user denied this tool use." : message)]
        case .cancel:
            deniedToolIDs.formUnion([pending.request.toolCallID].compactMap { $0 })
            interruptRequested = true
            response = ["behavior": "deny", "message": "The user cancelled this tool use and stopped the turn.", "interrupt": true]
        case .answer(let answers):
            guard let question = pending.request.question else {
                throw CodecError(.invalidDecision, "\(pending.request.toolName) is not a question: allow, deny or cancel it")
            }
            response = ["behavior": "allow", "updatedInput": try Self.inputWithAnswers(pending.originalInput, question, answers)]
        }
        approvals[id] = nil
        approvalOrder.removeAll { $0 == id }
        let line: JSONValue = [
            "type": "control_response",
            "response": ["subtype": "success", "request_id": .string(pending.nativeRequestID), "response": response],
        ]
        return CodecOutput(lines: [JSONWriter.string(line)])
    }

    /// AskUserQuestion takes its answers inside the allowed input: `answers: {question: label}`,
    /// several labels of a multi-select joined with ", " (what Claude Code's own UI sends).
    static func inputWithAnswers(_ input: JSONValue, _ question: StructuredQuestion, _ answers: [String: [String]]) throws(CodecError) -> JSONValue {
        var object = input.objectValue ?? JSONObject()
        var chosen = JSONObject()
        for item in question.questions {
            guard let labels = answers[item.question] ?? item.id.flatMap({ answers[$0] }) ?? item.header.flatMap({ answers[$0] }) else {
                throw CodecError(.invalidDecision, "no answer for the question \"\(item.question)\"")
            }
            chosen.append(item.question, .string(labels.joined(separator: ", ")))
        }
        object["answers"] = .object(chosen)
        return .object(object)
    }
}
