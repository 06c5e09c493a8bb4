public import NucleicProtocol

extension CodexCodec {
    public mutating func receive(line: [UInt8], now: Timestamp) -> CodecOutput {
        let message: JSONValue
        do { message = try JSONParser.parse(line) } catch {
            return CodecOutput(events: [CodecEvents.malformed(line, error, backend: backend)])
        }
        guard case .object = message else {
            return CodecOutput(events: [CodecEvents.unreadable(line, "a Codex message", ShapeError("expected a JSON object"))])
        }
        let method = message["method"]?.stringValue
        let id = RPCID(message["id"])
        do {
            switch (method, id) {
            case (let method?, let id?): return try serverRequest(method, id, message["params"] ?? .null, line, now: now)
            case (let method?, nil): return CodecOutput(events: try notification(method, message["params"] ?? .null, line))
            case (nil, _) where message["result"] != nil || message["error"] != nil:
                return try response(id, message, line, now: now)
            default: return CodecOutput(events: [Self.unknown(line, "?")])
            }
        } catch {
            return CodecOutput(events: [CodecEvents.unreadable(line, "Codex's \(method ?? "reply")", error)])
        }
    }

    /// An `unknown` event for `line`, naming what the codec does not know (a method, an item type).
    static func unknown(_ line: [UInt8], _ nativeKind: String) -> AgentEvent {
        .unknown(raw: String(decoding: line, as: UTF8.self), nativeKind: nativeKind)
    }

    // MARK: Replies to the host's requests

    private mutating func response(_ id: RPCID?, _ message: JSONValue, _ line: [UInt8], now: Timestamp) throws(ShapeError) -> CodecOutput {
        guard let id, let sentRequest = sent.removeValue(forKey: id) else {
            if let error = message["error"] {
                return CodecOutput(events: [.notice(level: .warning, message: "Codex reported an error for a request the host did not send: \(Self.errorMessage(error))", code: "requestFailed")])
            }
            return CodecOutput(events: [Self.unknown(line, "response")])
        }
        _ = requests.resolve(id)
        if let error = message["error"] { return requestFailed(sentRequest, error) }
        let result = message["result"] ?? .null
        switch sentRequest.method {
        case "initialize":
            return openThread(now: now)
        case "thread/start", "thread/resume":
            return try threadOpened(result, now: now)
        case "turn/start":
            // A steer answers with the running turn's id; a new turn with its own.
            if let turnID = result["turn"]?["id"]?.stringValue { beginTurn(turnID) }
            return CodecOutput()
        default:
            return CodecOutput()
        }
    }

    private mutating func threadOpened(_ result: JSONValue, now: Timestamp) throws(ShapeError) -> CodecOutput {
        let thread = try Fields(try Fields(result, "thread result").value("thread"), "thread")
        let id = try thread.string("id")
        guard threadID == nil else { return CodecOutput() }
        threadID = id
        model = result["model"]?.stringValue ?? thread["model"]?.stringValue ?? model
        handshake = .ready
        var out = CodecOutput(events: [.sessionStarted(SessionStarted(
            backend: backend, nativeSessionID: id, model: model,
            cwd: result["cwd"]?.stringValue ?? thread["cwd"]?.stringValue,
            permissionMode: result["approvalPolicy"].flatMap { $0.isNull ? nil : $0.textOrJSON }))])
        let prompts = queuedPrompts
        queuedPrompts = []
        if driving {
            for prompt in prompts { out.append(turnStart(prompt, now: now)) }
        }
        return out
    }

    private mutating func requestFailed(_ request: SentRequest, _ error: JSONValue) -> CodecOutput {
        let text = Self.errorMessage(error)
        var events: [AgentEvent] = []
        switch request.method {
        case "initialize", "thread/start", "thread/resume":
            handshake = .failed("\(request.method): \(text)")
            events.append(.notice(level: .error, message: "Codex refused \(request.method): \(text)", code: "requestFailed"))
            if !queuedPrompts.isEmpty {
                // The queued prompts will never run: their run is over.
                queuedPrompts = []
                events.append(.runFinished(RunFinished(isError: true, stopReason: "failed", result: text)))
            }
        case "turn/start":
            events.append(.notice(level: .error, message: "Codex refused the prompt (turn/start): \(text)", code: "requestFailed"))
            // With a turn running the prompt was a steer: that turn goes on and finishes by itself.
            if activeTurnID == nil { events.append(.runFinished(RunFinished(isError: true, stopReason: "failed", result: text))) }
        case "turn/steer":
            events.append(.notice(level: .warning, message: "the deny message could not be passed to Codex (turn/steer): \(text)", code: "requestFailed"))
        default:
            events.append(.notice(level: .warning, message: "Codex refused \(request.method): \(text)", code: "requestFailed"))
        }
        return CodecOutput(events: events)
    }

    // MARK: Notifications

    /// Notifications that carry nothing a transcript needs (status echoes, account and UI state).
    static let quietMethods: Set<String> = [
        "thread/started", "thread/status/changed", "thread/readState/changed", "thread/settings/updated",
        "thread/name/updated", "account/rateLimits/updated", "account/updated", "remoteControl/status/changed",
        "item/reasoning/summaryPartAdded", "mcpServer/startupStatus/updated", "skills/changed", "app/list/updated",
        "turn/plan/updated", "thread/compacted", "fs/changed", "thread/goal/updated", "thread/goal/cleared",
    ]

    private mutating func notification(_ method: String, _ params: JSONValue, _ line: [UInt8]) throws(ShapeError) -> [AgentEvent] {
        switch method {
        case "turn/started":
            beginTurn(try Fields(try Fields(params, "turn/started").value("turn"), "turn").string("id"))
            return []
        case "turn/completed":
            return try turnCompleted(params)
        case "item/started":
            return try itemStarted(params, line)
        case "item/completed":
            return try itemCompleted(params, line)
        case "item/agentMessage/delta":
            return [.assistantText(text: try Fields(params, method).string("delta"), isPartial: true)]
        case "item/reasoning/summaryTextDelta", "item/reasoning/textDelta":
            return [.reasoning(text: try Fields(params, method).string("delta"), isPartial: true)]
        case "item/commandExecution/outputDelta", "item/fileChange/outputDelta":
            let f = try Fields(params, method)
            let itemID = try f.string("itemId")
            let delta = try f.string("delta")
            items[itemID]?.streamedOutput += delta
            return [.toolCallOutputDelta(toolCallID: itemID, delta: delta)]
        case "item/fileChange/patchUpdated":
            let f = try Fields(params, method)
            items[try f.string("itemId")]?.input = ["changes": f["changes"] ?? []]
            return []
        case "turn/diff/updated":
            return [.diffUpdated(diff: try Fields(params, method).string("diff"))]
        case "thread/tokenUsage/updated":
            return tokenUsage(params)
        case "error":
            return try errorNotice(params)
        case "serverRequest/resolved":
            guard let id = RPCID(params["requestId"]), let approvalID = approvalOrder.first(where: { approvals[$0]?.nativeID == id }) else { return [] }
            removeApproval(approvalID)
            return [.approvalWithdrawn(approvalID: approvalID, reason: "Codex resolved the request itself before anyone answered")]
        case "warning", "guardianWarning":
            return [.notice(level: .warning, message: params["message"]?.stringValue ?? "Codex warned", code: method)]
        case "configWarning", "deprecationNotice":
            let summary = params["summary"]?.stringValue ?? "Codex warned"
            let details = params["details"]?.stringValue.map { ": \($0)" } ?? ""
            return [.notice(level: .warning, message: summary + details, code: method)]
        case "model/rerouted":
            let from = params["fromModel"]?.stringValue ?? "?", to = params["toModel"]?.stringValue ?? "?"
            return [.notice(level: .info, message: "Codex moved this turn from \(from) to \(to)", code: method)]
        default:
            if Self.quietMethods.contains(method) { return [] }
            return [Self.unknown(line, method)]
        }
    }

    /// A turn began (or a reply named the running one). A turn already over is not revived by a
    /// late reply to a steer.
    mutating func beginTurn(_ turnID: String) {
        guard activeTurnID != turnID, !completedTurns.contains(turnID) else { return }
        activeTurnID = turnID
        usageAtTurnStart = threadUsage
        turnUsageSum = nil
    }

    private mutating func tokenUsage(_ params: JSONValue) -> [AgentEvent] {
        guard let total = Self.usage(params["tokenUsage"]?["total"]) else { return [] }
        threadUsage = total
        if let turnID = params["turnId"]?.stringValue, turnID == activeTurnID {
            if let last = Self.usage(params["tokenUsage"]?["last"]) { turnUsageSum = Self.sum(turnUsageSum, last) }
        } else {
            // Not the running turn's: a resumed thread's restored total (Codex sends it with the
            // last turn's id right after thread/resume). It is where the next turn starts from.
            usageAtTurnStart = total
        }
        return [.usage(total)]
    }

    private mutating func errorNotice(_ params: JSONValue) throws(ShapeError) -> [AgentEvent] {
        let f = try Fields(params, "error")
        let error = try f.value("error")
        let willRetry = try f.bool("willRetry", default: false)
        if !willRetry, let turnID = f["turnId"]?.stringValue { turnsWithErrorNotice.insert(turnID) }
        return [Self.notice(for: error, retrying: willRetry)]
    }

    // MARK: Items

    private mutating func itemStarted(_ params: JSONValue, _ line: [UInt8]) throws(ShapeError) -> [AgentEvent] {
        let (item, type, id, turnID) = try Self.itemFields(params)
        switch type {
        case "userMessage":
            return []  // the host emitted `userInput` when it sent the prompt
        case "agentMessage", "reasoning":
            items[id] = Item(type: type, turnID: turnID)
            return []
        case _ where Self.toolItemTypes.contains(type):
            return startTool(item, type, id, turnID)
        default:
            return [Self.unknown(line, "item/started/\(type)")]
        }
    }

    private mutating func itemCompleted(_ params: JSONValue, _ line: [UInt8]) throws(ShapeError) -> [AgentEvent] {
        let (item, type, id, turnID) = try Self.itemFields(params)
        switch type {
        case "userMessage":
            return []
        case "agentMessage":
            items[id] = nil
            let text = item["text"]?.stringValue ?? ""
            if let turnID { lastAgentMessage[turnID] = text }
            return text.isEmpty ? [] : [.assistantText(text: text, isPartial: false)]
        case "reasoning":
            items[id] = nil
            let text = Self.reasoningText(item)
            return text.isEmpty ? [] : [.reasoning(text: text, isPartial: false)]
        case _ where Self.toolItemTypes.contains(type):
            guard !finishedToolItems.contains(id) else { return [] }
            var events = items[id] == nil ? startTool(item, type, id, turnID) : []
            let streamed = items[id]?.streamedOutput ?? ""
            finishTool(id)
            events.append(.toolCallCompleted(Self.toolResult(item, type, id, streamedOutput: streamed)))
            return events
        default:
            return [Self.unknown(line, "item/completed/\(type)")]
        }
    }

    private mutating func startTool(_ item: JSONValue, _ type: String, _ id: String, _ turnID: String?) -> [AgentEvent] {
        guard items[id] == nil, !finishedToolItems.contains(id) else { return [] }
        let call = Self.toolCall(item, type, id)
        items[id] = Item(type: type, turnID: turnID, input: call.input)
        openToolItems.append(id)
        return [.toolCallStarted(call)]
    }

    mutating func finishTool(_ id: String) {
        items[id] = nil
        openToolItems.removeAll { $0 == id }
        finishedToolItems.insert(id)
    }

    // MARK: Turn end

    private mutating func turnCompleted(_ params: JSONValue) throws(ShapeError) -> [AgentEvent] {
        let turn = try Fields(try Fields(params, "turn/completed").value("turn"), "turn")
        let turnID = try turn.string("id")
        let status = try turn.optionalString("status") ?? "completed"
        var events: [AgentEvent] = []
        // Approvals of this turn can no longer be answered (Codex resolves them after the turn).
        for approvalID in approvalOrder where approvals[approvalID].map({ $0.turnID == nil || $0.turnID == turnID }) == true {
            removeApproval(approvalID)
            events.append(.approvalWithdrawn(approvalID: approvalID, reason: "the Codex turn ended (\(status)) before anyone answered"))
        }
        // Codex abandons a command it was running or waiting to run without completing its item.
        for id in openToolItems where items[id].map({ $0.turnID == nil || $0.turnID == turnID }) == true {
            finishTool(id)
            events.append(.toolCallCompleted(ToolResult(toolCallID: id, status: .interrupted)))
        }
        let error = turn["error"]
        if status == "failed", let error, !turnsWithErrorNotice.contains(turnID) {
            events.append(Self.notice(for: error, retrying: false))
        }
        let run: RunFinished
        switch status {
        case "completed": run = RunFinished(isError: false, stopReason: "end_turn", result: lastAgentMessage[turnID])
        case "interrupted": run = RunFinished(isError: true, stopReason: "interrupted", result: error.map(Self.errorMessage))
        case "failed": run = RunFinished(isError: true, stopReason: Self.failureStopReason(error), result: error.map(Self.errorMessage))
        default: run = RunFinished(isError: true, stopReason: status, result: error.map(Self.errorMessage))
        }
        events.append(.runFinished(RunFinished(
            isError: run.isError, stopReason: run.stopReason, result: run.result, usage: turnUsage(),
            durationMS: turn["durationMs"]?.intValue)))
        if activeTurnID == turnID { activeTurnID = nil }
        completedTurns.insert(turnID)
        lastAgentMessage[turnID] = nil
        turnsWithErrorNotice.remove(turnID)
        items = items.filter { $0.value.turnID != turnID }
        usageAtTurnStart = threadUsage
        turnUsageSum = nil
        return events
    }

    /// The turn's tokens: the growth of the thread's total since the turn began, or (on a resumed
    /// thread, whose earlier total this process never saw) the sum of the turn's per-request usage.
    private func turnUsage() -> Usage? {
        guard let total = threadUsage, total != usageAtTurnStart else { return nil }
        guard let start = usageAtTurnStart ?? (resumed ? nil : Usage(inputTokens: 0, outputTokens: 0)) else { return turnUsageSum }
        return Self.difference(total, start)
    }

    mutating func removeApproval(_ id: ApprovalID) {
        approvals[id] = nil
        approvalOrder.removeAll { $0 == id }
    }
}
