public import NucleicProtocol

/// Codex's server → client requests (approvals, questions) and the host's answers to them.
extension CodexCodec {
    // MARK: Requests from Codex

    static let handledRequests: Set<String> = [
        "item/commandExecution/requestApproval", "item/fileChange/requestApproval", "item/tool/requestUserInput",
    ]

    mutating func serverRequest(_ method: String, _ id: RPCID, _ params: JSONValue, _ line: [UInt8], now: Timestamp) throws(ShapeError) -> CodecOutput {
        guard Self.handledRequests.contains(method) else { return refuse(method, id, line) }
        let f = try Fields(params, method)
        let itemID = try f.optionalString("itemId")
        let turnID = try f.optionalString("turnId")
        let request: ApprovalRequest
        let kind: ApprovalKind
        var canAcceptForSession = true
        switch method {
        case "item/commandExecution/requestApproval":
            kind = .command
            // The request's own command wins over the item's: one item can ask several times.
            let input = f["command"] != nil
                ? Self.commandInput(f["command"]?.stringValue, cwd: f["cwd"]?.stringValue)
                : itemID.flatMap { items[$0]?.input } ?? Self.commandInput(nil, cwd: nil)
            // `availableDecisions` is the menu Codex suggests, not what it accepts: 0.163 lists
            // `acceptWithExecpolicyAmendment` *instead of* `acceptForSession` whenever it proposes an
            // amendment (always, under "untrusted"), yet honors `acceptForSession` (and `decline`)
            // there (Fixtures/codex/session-accept). So "for this session" is offered when the menu
            // has either way to remember the command, or when there is no menu.
            if let available = f["availableDecisions"]?.arrayValue {
                canAcceptForSession = available.contains { $0.stringValue == "acceptForSession" || $0["acceptWithExecpolicyAmendment"] != nil }
            }
            let risk: Risk = f["networkApprovalContext"] != nil ? .network : ToolKind.execute.baselineRisk
            var scopes: [ApprovalScope] = canAcceptForSession ? [.exactCommandThisSession] : []
            if let rule = Self.rule(fromAmendment: f["proposedExecpolicyAmendment"]) { scopes.append(.rule(rule)) }
            request = ApprovalRequest(
                id: makeApprovalID(), toolCallID: itemID, toolName: ToolName.command, toolKind: .execute, input: input, risk: risk,
                capabilities: capabilities, offeredScopes: risk.alwaysNeedsPerson ? [] : scopes,
                reason: try f.optionalString("reason"), createdAt: now)
        case "item/fileChange/requestApproval":
            kind = .fileChange
            // The diff is in the item Codex started just before asking.
            var input = itemID.flatMap { items[$0]?.input }?.objectValue ?? ["changes": []]
            input.append("grantRoot", ifPresent: f["grantRoot"])
            let risk = ToolKind.edit.baselineRisk
            request = ApprovalRequest(
                id: makeApprovalID(), toolCallID: itemID, toolName: ToolName.fileChange, toolKind: .edit, input: .object(input), risk: risk,
                capabilities: capabilities, offeredScopes: risk.alwaysNeedsPerson ? [] : [.toolThisSession],
                reason: try f.optionalString("reason"), createdAt: now)
        case "item/tool/requestUserInput":
            kind = .question
            canAcceptForSession = false
            request = ApprovalRequest(
                id: makeApprovalID(), toolCallID: itemID, toolName: ToolName.question, toolKind: .question, input: ["questions": f["questions"] ?? []],
                risk: ToolKind.question.baselineRisk, capabilities: capabilities, question: try Self.question(f["questions"]),
                createdAt: now)
        default:
            return refuse(method, id, line)
        }
        approvals[request.id] = PendingApproval(request: request, nativeID: id, kind: kind, turnID: turnID, canAcceptForSession: canAcceptForSession)
        approvalOrder.append(request.id)
        return CodecOutput(events: [.approvalRequested(request)])
    }

    /// Codex waits for an answer to every request: what Nucleic cannot handle (MCP elicitations,
    /// dynamic tools, auth refreshes, …) is refused with a JSON-RPC error so that it does not hang.
    private func refuse(_ method: String, _ id: RPCID, _ line: [UInt8]) -> CodecOutput {
        let refusal: JSONValue = ["id": id.json, "error": ["code": -32601, "message": .string("Nucleic does not handle \(method)")]]
        return CodecOutput(
            events: [Self.unknown(line, method),
                     .notice(level: .warning, message: "Codex asked for \(method), which Nucleic does not handle; the request was refused", code: "unsupportedRequest")],
            lines: driving ? [JSONWriter.string(refusal)] : [])
    }

    static func question(_ value: JSONValue?) throws(ShapeError) -> StructuredQuestion {
        guard let items = value?.arrayValue else { throw ShapeError("requestUserInput: \"questions\" must be an array") }
        var questions: [StructuredQuestion.Item] = []
        for item in items {
            let q = try Fields(item, "requestUserInput question")
            var options: [StructuredQuestion.Option] = []
            for option in q["options"]?.arrayValue ?? [] {
                let o = try Fields(option, "requestUserInput option")
                options.append(StructuredQuestion.Option(label: try o.string("label"), description: try o.optionalString("description")))
            }
            questions.append(StructuredQuestion.Item(
                id: try q.optionalString("id"), header: try q.optionalString("header"), question: try q.string("question"), options: options,
                allowsOther: try q.bool("isOther", default: false)))
        }
        return StructuredQuestion(questions: questions)
    }

    // MARK: The host's answers

    mutating func answer(_ id: ApprovalID, _ decision: Decision, now: Timestamp) throws(CodecError) -> CodecOutput {
        guard let pending = approvals[id] else {
            throw CodecError(.unknownApproval, "no pending approval \(id): it was already answered, withdrawn, or never existed")
        }
        let name = pending.request.toolName
        var before: [String] = [], after: [String] = []
        let result: JSONValue
        switch (pending.kind, decision) {
        case (_, .allowModified):
            throw CodecError(.unsupported, "Codex cannot run a modified \(name): its approval answer carries no input. Deny it with a message saying what to do instead")
        case (.question, .answer(let answers)):
            guard let question = pending.request.question else { throw CodecError(.invalidDecision, "\(name) has no questions to answer") }
            result = ["answers": try Self.nativeAnswers(question, answers)]
        case (.question, .deny(let message)):
            // No answers: the model goes on without them (the message follows as user input).
            before = steer(message, pending, now: now)
            result = ["answers": [:]]
        case (.question, .cancel):
            result = ["answers": [:]]
            if let threadID, let turnID = pending.turnID ?? activeTurnID {
                after = [request("turn/interrupt", ["threadId": .string(threadID), "turnId": .string(turnID)], now: now)]
            }
        case (.question, _):
            throw CodecError(.invalidDecision, "\(name) is a question: answer it with an `answer` decision, or deny or cancel it")
        case (_, .answer):
            throw CodecError(.invalidDecision, "\(name) is not a question: allow, deny or cancel it")
        case (_, .allow):
            result = ["decision": "accept"]
        case (_, .allowAlways(.rule)):
            // Rules are the host's (DESIGN.md §5): Codex runs this one call and its own execpolicy
            // is left alone; the host answers the next matching request by its rule.
            result = ["decision": "accept"]
        case (_, .allowAlways):
            guard pending.canAcceptForSession else {
                throw CodecError(.unsupported, "Codex offers no way to remember this \(name) request (its availableDecisions have neither acceptForSession nor an execpolicy amendment); allow it once, or allow always with a rule scope that the host enforces")
            }
            result = ["decision": "acceptForSession"]
        case (_, .deny(let message)):
            before = steer(message, pending, now: now)
            result = ["decision": "decline"]
        case (_, .cancel):
            result = ["decision": "cancel"]  // Codex declines the call and ends the turn (interrupted)
        }
        removeApproval(id)
        let reply: JSONValue = ["id": pending.nativeID.json, "result": result]
        return CodecOutput(lines: before + [JSONWriter.string(reply)] + after)
    }

    /// A deny message as user input in the running turn (`turn/steer`), written before the
    /// `decline` so that Codex holds it when the turn resumes: the model reads the declined call,
    /// then the message. Codex's approval answers have no field for a message.
    private mutating func steer(_ message: String, _ pending: PendingApproval, now: Timestamp) -> [String] {
        guard !message.isEmpty, let threadID, let turnID = pending.turnID ?? activeTurnID else { return [] }
        let params: JSONValue = ["threadId": .string(threadID), "expectedTurnId": .string(turnID), "input": [["type": "text", "text": .string(message)]]]
        return [request("turn/steer", params, text: message, now: now)]
    }

    /// `{"<question id>": {"answers": ["<label>", …]}}` from a decision keyed by question text,
    /// id or header.
    static func nativeAnswers(_ question: StructuredQuestion, _ answers: [String: [String]]) throws(CodecError) -> JSONValue {
        var native = JSONObject()
        for item in question.questions {
            guard let labels = answers[item.question] ?? item.id.flatMap({ answers[$0] }) ?? item.header.flatMap({ answers[$0] }) else {
                throw CodecError(.invalidDecision, "no answer for the question \"\(item.question)\"")
            }
            native.append(item.id ?? item.question, ["answers": .array(labels.map(JSONValue.string))])
        }
        return .object(native)
    }

    // MARK: Recorded host lines

    public mutating func observeHostLine(_ line: [UInt8], now: Timestamp) -> CodecOutput {
        guard let message = try? JSONParser.parse(line), case .object = message else { return CodecOutput() }
        let denyMessage = observedDenyMessage
        observedDenyMessage = nil
        let id = RPCID(message["id"])
        if let method = message["method"]?.stringValue {
            guard let id else { return CodecOutput() }  // `initialized`
            if case .int(let number) = id { nextRequestID = max(nextRequestID, number &+ 1) }
            let params = message["params"] ?? .null
            let text = Self.inputText(params["input"])
            _ = requests.resolve(id)
            requests.add(id, method: method, now: now, timeoutMS: requestTimeoutMS)
            sent[id] = SentRequest(method: method, text: text)
            switch method {
            case "initialize":
                if handshake == .notStarted { handshake = .initializing }
            case "thread/start", "thread/resume":
                if threadID == nil { handshake = .openingThread }
                if method == "thread/resume" { resumed = true }
            case "turn/start":
                if let text { return CodecOutput(events: [.userInput(text: text)]) }
            case "turn/steer":
                observedDenyMessage = text  // this codec steers only to carry a deny message
            default:
                break
            }
            return CodecOutput()
        }
        guard let id, let approvalID = approvalOrder.first(where: { approvals[$0]?.nativeID == id }), let pending = approvals[approvalID] else {
            return CodecOutput()
        }
        removeApproval(approvalID)
        let decision = Self.decision(recorded: message, pending, denyMessage: denyMessage)
        return CodecOutput(events: [.approvalResolved(ApprovalResolution(approvalID: approvalID, decision: decision, decidedBy: "recorded"))])
    }

    /// The `Decision` a recorded native answer stands for.
    static func decision(recorded message: JSONValue, _ pending: PendingApproval, denyMessage: String?) -> Decision {
        guard let result = message["result"] else { return .deny(message: denyMessage ?? "") }
        if pending.kind == .question {
            guard let native = result["answers"]?.objectValue, !native.isEmpty, let question = pending.request.question else {
                return .deny(message: denyMessage ?? "")
            }
            var answers: [String: [String]] = [:]
            for item in question.questions {
                if let labels = native[item.id ?? item.question]?["answers"]?.arrayValue {
                    answers[item.question] = labels.compactMap(\.stringValue)
                }
            }
            return .answer(answers: answers)
        }
        let decision = result["decision"] ?? .null
        switch decision.stringValue {
        case "accept": return .allow
        case "acceptForSession": return .allowAlways(scope: pending.kind == .fileChange ? .toolThisSession : .exactCommandThisSession)
        case "decline": return .deny(message: denyMessage ?? "")
        case "cancel": return .cancel
        default:
            if let rule = rule(fromAmendment: decision["acceptWithExecpolicyAmendment"]?["execpolicy_amendment"]) {
                return .allowAlways(scope: .rule(rule))
            }
            return .allow
        }
    }
}
