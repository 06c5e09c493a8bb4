public import NucleicProtocol

extension ClaudeCodec {
    public mutating func receive(line: [UInt8], now: Timestamp) -> CodecOutput {
        line.withUnsafeBufferPointer { receive(bytes: $0, now: now) }
    }

    /// `receive(line:now:)` on borrowed bytes (a view of the read buffer): the line is copied only
    /// into the events that carry it (`unknown`, `error`).
    public mutating func receive(bytes line: UnsafeBufferPointer<UInt8>, now: Timestamp) -> CodecOutput {
        // Nine lines in ten are deltas: read without building the whole line (ClaudeCodec+Deltas.swift).
        if let events = streamDelta(line) { return CodecOutput(events: events) }
        return receiveParsed(bytes: line, now: now)
    }

    /// The full path: the whole line parsed into a `JSONValue`, then mapped.
    mutating func receiveParsed(bytes line: UnsafeBufferPointer<UInt8>, now: Timestamp) -> CodecOutput {
        let message: JSONValue
        do { message = try Self.parse(line) } catch {
            return CodecOutput(events: [CodecEvents.malformed(Array(line), error, backend: backend)])
        }
        guard let type = message["type"]?.stringValue else {
            return CodecOutput(events: [Self.unknown(line, "?")])
        }
        do {
            // Most lines are `stream_event`s: that case first.
            switch type {
            case "stream_event": return CodecOutput(events: try streamEvent(message["event"] ?? .null, line))
            case "system": return system(message, line)
            case "assistant": return CodecOutput(events: assistant(message, line))
            case "user": return CodecOutput(events: user(message, line))
            case "result": return CodecOutput(events: result(message))
            case "control_request": return try controlRequest(message, line, now: now)
            case "control_response": return CodecOutput(events: controlResponse(message, line))
            case "control_cancel_request": return CodecOutput(events: cancelRequest(message))
            case "keep_alive": return CodecOutput()
            default: return CodecOutput(events: [Self.unknown(line, type)])
            }
        } catch {
            return CodecOutput(events: [CodecEvents.unreadable(Array(line), "a Claude \(type) message", error)])
        }
    }

    /// A line parsed; a `user` line without its `tool_use_result` (a copy of the tool's output
    /// in Claude Code's own shape, often the largest part of the line, which nothing here reads).
    static func parse(_ line: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        guard line.count > 16, let base = line.baseAddress, JSONParser.equal(base, Self.userPrefix.utf8Start, Self.userPrefix.utf8CodeUnitCount) else {
            return try JSONParser.parse(line)
        }
        // A line that does not parse is parsed again whole, so that the error is `parse`'s own.
        if let message = try? JSONParser.parse(line, skippingMember: "tool_use_result") { return message }
        return try JSONParser.parse(line)
    }

    static let userPrefix: StaticString = #"{"type":"user","#

    public mutating func observeHostLine(_ line: [UInt8], now: Timestamp) -> CodecOutput {
        guard let message = try? JSONParser.parse(line), let type = message["type"]?.stringValue else { return CodecOutput() }
        switch type {
        case "user":
            guard let text = Self.text(of: message["message"]?["content"]) else { return CodecOutput() }
            interruptRequested = false
            return CodecOutput(events: [.userInput(text: text)])
        case "control_request":
            guard let id = message["request_id"]?.stringValue else { return CodecOutput() }
            let subtype = message["request"]?["subtype"]?.stringValue ?? "control_request"
            if subtype == "interrupt" { interruptRequested = true }
            requests.add(id, method: subtype, now: now, timeoutMS: requestTimeoutMS)
            return CodecOutput()
        case "control_response":
            guard let nativeID = message["response"]?["request_id"]?.stringValue,
                let approvalID = approvalOrder.first(where: { approvals[$0]?.nativeRequestID == nativeID }),
                let pending = approvals[approvalID]
            else { return CodecOutput() }
            let decision = Self.decision(recordedAnswer: message["response"]?["response"] ?? .null, pending)
            if !decision.allowsTool { deniedToolIDs.formUnion([pending.request.toolCallID].compactMap { $0 }) }
            if case .cancel = decision { interruptRequested = true }
            approvals[approvalID] = nil
            approvalOrder.removeAll { $0 == approvalID }
            return CodecOutput(events: [.approvalResolved(ApprovalResolution(approvalID: approvalID, decision: decision, decidedBy: "recorded"))])
        default:
            return CodecOutput()
        }
    }

    /// The `Decision` a recorded native answer stands for.
    static func decision(recordedAnswer response: JSONValue, _ pending: PendingApproval) -> Decision {
        guard response["behavior"]?.stringValue == "allow" else {
            if response["interrupt"]?.boolValue == true { return .cancel }
            return .deny(message: response["message"]?.stringValue ?? "")
        }
        let updated = response["updatedInput"] ?? pending.originalInput
        if let question = pending.request.question, let answers = updated["answers"]?.objectValue {
            var chosen: [String: [String]] = [:]
            for item in question.questions {
                if let label = answers[item.question]?.stringValue { chosen[item.question] = [label] }
            }
            return .answer(answers: chosen)
        }
        return updated == pending.originalInput ? .allow : .allowModified(input: updated)
    }

    // MARK: Messages

    private mutating func system(_ message: JSONValue, _ line: UnsafeBufferPointer<UInt8>) -> CodecOutput {
        switch message["subtype"]?.stringValue {
        case "init":
            // Claude repeats system/init at the start of every turn; the session started once.
            guard !startedSession else { return CodecOutput() }
            startedSession = true
            return CodecOutput(events: [.sessionStarted(SessionStarted(
                backend: backend, nativeSessionID: message["session_id"]?.stringValue,
                model: message["model"]?.stringValue, cwd: message["cwd"]?.stringValue,
                permissionMode: message["permissionMode"]?.stringValue,
                tools: (message["tools"]?.arrayValue ?? []).compactMap(\.stringValue)))])
        case "status":
            // `requesting` is every model call; only other states (compacting, …) are worth a line.
            guard let status = message["status"]?.stringValue, status != "requesting" else { return CodecOutput() }
            return CodecOutput(events: [.notice(level: .info, message: "Claude is \(status)", code: "status")])
        case "compact_boundary":
            return CodecOutput(events: [.notice(level: .info, message: "Claude compacted the conversation", code: "compacted")])
        case "thinking_tokens", "task_started", "task_progress", "task_notification", "background_tasks_changed",
            "session_state_changed":
            // Progress of things already reported: thinking (an estimate while it streams), the
            // tasks Bash runs in (their start and end are the tool call's), and Claude's own idea
            // of its state (running / requires_action / idle), which the host derives itself.
            return CodecOutput()
        case "api_retry":
            let attempt = message["attempt"]?.intValue.map { " (attempt \($0))" } ?? ""
            let error = message["error"]?.textOrJSON ?? message["error_status"]?.textOrJSON ?? "an API error"
            return CodecOutput(events: [.notice(level: .warning, message: "Claude is retrying after \(error)\(attempt)", code: "apiRetry")])
        default:
            return CodecOutput(events: [Self.unknown(line, "system/\(message["subtype"]?.stringValue ?? "?")")])
        }
    }

    /// An `unknown` event for `line`, naming the part of it the codec does not know.
    static func unknown(_ line: [UInt8], _ nativeKind: String) -> AgentEvent {
        .unknown(raw: String(decoding: line, as: UTF8.self), nativeKind: nativeKind)
    }

    static func unknown(_ line: UnsafeBufferPointer<UInt8>, _ nativeKind: String) -> AgentEvent {
        .unknown(raw: String(decoding: line, as: UTF8.self), nativeKind: nativeKind)
    }

    /// Content block types of `assistant` messages and streamed blocks the codec maps.
    static let knownAssistantBlocks: Set<String> = ["text", "thinking", "tool_use"]

    private mutating func streamEvent(_ event: JSONValue, _ line: UnsafeBufferPointer<UInt8>) throws(ShapeError) -> [AgentEvent] {
        let type = event["type"]?.stringValue ?? "?"
        // Cases in order of frequency (a string compare per case that fails): deltas first.
        switch type {
        case "content_block_delta":
            let index = try Fields(event, "content_block_delta").int("index")
            let delta = event["delta"] ?? .null
            let deltaType = delta["type"]?.stringValue ?? "?"
            switch deltaType {
            case "input_json_delta":
                guard let piece = delta["partial_json"]?.stringValue else { return [] }
                return appendToolInput(piece, index: index)
            case "text_delta": return delta["text"]?.stringValue.map { [.assistantText(text: $0, isPartial: true)] } ?? []
            case "thinking_delta": return delta["thinking"]?.stringValue.map { [.reasoning(text: $0, isPartial: true)] } ?? []
            case "signature_delta": return []  // the thinking block's opaque signature
            default: return [Self.unknown(line, "stream_event/content_block_delta/\(deltaType)")]
            }
        case "message_start":
            streamingBlocks = [:]
            return []
        case "message_delta", "message_stop", "ping":
            // The stop reason and usage come again, complete, in the `assistant` message and the `result`.
            return []
        case "content_block_start":
            let index = try Fields(event, "content_block_start").int("index")
            let block = event["content_block"] ?? .null
            let blockType = block["type"]?.stringValue ?? "?"
            streamingBlocks[index] = StreamingBlock(type: blockType, toolID: block["id"]?.stringValue, toolName: block["name"]?.stringValue)
            return Self.knownAssistantBlocks.contains(blockType) ? [] : [Self.unknown(line, "stream_event/content_block_start/\(blockType)")]
        case "content_block_stop":
            let index = try Fields(event, "content_block_stop").int("index")
            guard let block = streamingBlocks.removeValue(forKey: index), let id = block.toolID, let name = block.toolName,
                block.type == "tool_use"
            else { return [] }
            // The whole input is known now; the `assistant` message repeats it later.
            let input = block.partialJSON.isEmpty ? JSONValue.object([:]) : ((try? JSONParser.parse(block.partialJSON)) ?? .null)
            guard input != .null else { return [] }
            return startTool(id: id, name: name, input: input)
        default:
            return [Self.unknown(line, "stream_event/\(type)")]
        }
    }

    /// An `input_json_delta`: the piece is added to its block's input, and is an event while the
    /// tool call has not started (after that the complete input is known). One lookup of the block;
    /// whether its tool has started is asked again (a hash of the id) only when `startedToolIDs` has
    /// grown since the block's last delta (it never shrinks).
    mutating func appendToolInput(_ piece: String, index: Int64) -> [AgentEvent] {
        guard let slot = streamingBlocks.index(forKey: index), let id = streamingBlocks.values[slot].toolID else { return [] }
        streamingBlocks.values[slot].partialJSON.append(contentsOf: piece.utf8)
        if piece.isEmpty { return [] }
        if streamingBlocks.values[slot].startedCheckedAt != startedToolIDs.count {
            streamingBlocks.values[slot].startedCheckedAt = startedToolIDs.count
            streamingBlocks.values[slot].toolStarted = startedToolIDs.contains(id)
        }
        return streamingBlocks.values[slot].toolStarted ? [] : [.toolCallInputDelta(toolCallID: id, delta: piece)]
    }

    private mutating func assistant(_ message: JSONValue, _ line: UnsafeBufferPointer<UInt8>) -> [AgentEvent] {
        // An API failure arrives as a message Claude Code made up itself (model "<synthetic>",
        // an `error` code); its text is the error, not the assistant's.
        if let error = message["error"]?.stringValue {
            let text = Self.text(of: message["message"]?["content"]) ?? "Claude reported \(error)"
            reportedErrorThisTurn = true
            return [.notice(level: .error, message: text, code: error)]
        }
        var events: [AgentEvent] = []
        var unknownKinds: [String] = []
        for block in message["message"]?["content"]?.arrayValue ?? [] {
            switch block["type"]?.stringValue {
            case "text": if let text = block["text"]?.stringValue { events.append(.assistantText(text: text, isPartial: false)) }
            case "thinking": if let text = block["thinking"]?.stringValue { events.append(.reasoning(text: text, isPartial: false)) }
            case "tool_use":
                guard let id = block["id"]?.stringValue, let name = block["name"]?.stringValue else { continue }
                events += startTool(id: id, name: name, input: block["input"] ?? .object([:]))
            case let other:
                let kind = "assistant/\(other ?? "?")"
                if !unknownKinds.contains(kind) { unknownKinds.append(kind) }
            }
        }
        return events + unknownKinds.map { Self.unknown(line, $0) }
    }

    private mutating func user(_ message: JSONValue, _ line: UnsafeBufferPointer<UInt8>) -> [AgentEvent] {
        var events: [AgentEvent] = []
        var unknownKinds: [String] = []
        guard let content = message["message"]?["content"] else { return [] }
        for block in content.arrayValue ?? [] {
            let type = block["type"]?.stringValue
            guard type == "tool_result" else {
                // Text in a user message is Claude Code's own note ("[Request interrupted by user…]")
                // or the host's prompt, which the host reported when it sent it.
                let kind = "user/\(type ?? "?")"
                if type != "text", !unknownKinds.contains(kind) { unknownKinds.append(kind) }
                continue
            }
            guard let id = block["tool_use_id"]?.stringValue else { continue }
            let isError = block["is_error"]?.boolValue ?? false
            let status: ToolResult.Status =
                !isError ? .completed : deniedToolIDs.contains(id) ? .declined : interruptRequested ? .interrupted : .failed
            events += completeTool(id: id, status: status, output: Self.text(of: block["content"]))
        }
        return events + unknownKinds.map { Self.unknown(line, $0) }
    }

    private mutating func result(_ message: JSONValue) -> [AgentEvent] {
        var events: [AgentEvent] = []
        let subtype = message["subtype"]?.stringValue ?? "success"
        let isError = message["is_error"]?.boolValue ?? (subtype != "success")
        let text = message["result"]?.stringValue
        let stopReason: String
        if !isError {
            stopReason = message["stop_reason"]?.stringValue ?? "end_turn"
        } else if interruptRequested {
            stopReason = "interrupted"
        } else if subtype == "success" {
            // A "successful" result that is an error is the model API refusing the turn.
            stopReason = message["terminal_reason"]?.stringValue ?? "api_error"
            if !reportedErrorThisTurn {
                events.append(.notice(level: .error, message: text ?? "the model API returned an error", code: "apiError"))
            }
        } else {
            stopReason = subtype.hasPrefix("error_") ? String(subtype.dropFirst(6)) : subtype
            let errors = (message["errors"]?.arrayValue ?? []).map(\.textOrJSON).joined(separator: "; ")
            events.append(.notice(level: .error, message: errors.isEmpty ? "Claude ended the turn: \(subtype)" : errors, code: subtype))
        }
        // Whatever is still open ends with the turn.
        for (id, _) in openToolCalls { events += completeTool(id: id, status: .interrupted, output: nil) }
        for id in approvalOrder { events.append(.approvalWithdrawn(approvalID: id, reason: "the turn ended")) }
        approvals = [:]
        approvalOrder = []
        interruptRequested = false
        reportedErrorThisTurn = false
        deniedToolIDs = []
        events.append(.runFinished(RunFinished(
            isError: isError, stopReason: stopReason, result: text, usage: Self.usage(message["usage"]),
            costUSD: message["total_cost_usd"]?.doubleValue, durationMS: message["duration_ms"]?.intValue)))
        return events
    }

    // MARK: Control messages

    private mutating func controlRequest(_ message: JSONValue, _ line: UnsafeBufferPointer<UInt8>, now: Timestamp) throws(ShapeError) -> CodecOutput {
        let requestID = try Fields(message, "control_request").string("request_id")
        let request = message["request"] ?? .null
        guard request["subtype"]?.stringValue == "can_use_tool" else {
            // Hooks, MCP messages and anything newer: we registered none, so say so rather than
            // leave the agent waiting.
            let subtype = request["subtype"]?.stringValue ?? "unknown"
            let reply: JSONValue = ["type": "control_response", "response": [
                "subtype": "error", "request_id": .string(requestID),
                "error": .string("Nucleic does not handle \(subtype) requests"),
            ]]
            return CodecOutput(events: [Self.unknown(line, "control_request/\(subtype)")], lines: [JSONWriter.string(reply)])
        }
        let f = try Fields(request, "can_use_tool")
        let toolName = try f.string("tool_name")
        let input = f["input"] ?? .object([:])
        let toolCallID = try f.optionalString("tool_use_id")
        let kind = Self.toolKind(toolName)
        let question = toolName == "AskUserQuestion" ? Self.question(from: input) : nil
        let blockedPath = try f.optionalString("blocked_path")
        let reason = try f.optionalString("decision_reason") ?? blockedPath.map { "outside the allowed folders: \($0)" }
        let approval = ApprovalRequest(
            id: makeApprovalID(), toolCallID: toolCallID, toolName: toolName, toolKind: kind, input: input,
            risk: kind.baselineRisk, capabilities: capabilities,
            offeredScopes: question == nil ? Self.offeredScopes(toolName, kind, request["permission_suggestions"]) : [],
            question: question,
            reason: reason,
            createdAt: now)
        approvals[approval.id] = PendingApproval(request: approval, nativeRequestID: requestID, originalInput: input)
        approvalOrder.append(approval.id)
        var events: [AgentEvent] = []
        // A call that never streamed (no partial messages) is announced by its approval request.
        if let toolCallID { events += startTool(id: toolCallID, name: toolName, input: input) }
        events.append(.approvalRequested(approval))
        return CodecOutput(events: events)
    }

    private mutating func controlResponse(_ message: JSONValue, _ line: UnsafeBufferPointer<UInt8>) -> [AgentEvent] {
        let response = message["response"] ?? .null
        let subtype = response["subtype"]?.stringValue ?? "?"
        guard subtype == "success" || subtype == "error" else { return [Self.unknown(line, "control_response/\(subtype)")] }
        guard let id = response["request_id"]?.stringValue, let request = requests.resolve(id) else { return [] }
        guard subtype == "error" else { return [] }
        let error = response["error"]?.textOrJSON ?? "an unspecified error"
        return [.notice(level: .warning, message: "Claude refused \(request.method): \(error)", code: "requestFailed")]
    }

    private mutating func cancelRequest(_ message: JSONValue) -> [AgentEvent] {
        guard let nativeID = message["request_id"]?.stringValue,
            let id = approvalOrder.first(where: { approvals[$0]?.nativeRequestID == nativeID })
        else { return [] }
        approvals[id] = nil
        approvalOrder.removeAll { $0 == id }
        return [.approvalWithdrawn(approvalID: id, reason: "the agent cancelled the request")]
    }

    // MARK: Tool bookkeeping

    private mutating func startTool(id: String, name: String, input: JSONValue) -> [AgentEvent] {
        guard startedToolIDs.insert(id).inserted else { return [] }
        openToolCalls.append((id, name))
        return [.toolCallStarted(ToolCall(toolCallID: id, name: name, toolKind: Self.toolKind(name), input: input))]
    }

    private mutating func completeTool(id: String, status: ToolResult.Status, output: String?) -> [AgentEvent] {
        var events: [AgentEvent] = []
        if !startedToolIDs.contains(id) {
            // A result for a call we never saw start (a subagent's, say): keep the pair intact.
            events += startTool(id: id, name: "unknown", input: .null)
        }
        guard let index = openToolCalls.firstIndex(where: { $0.id == id }) else { return events }
        openToolCalls.remove(at: index)
        events.append(.toolCallCompleted(ToolResult(toolCallID: id, status: status, output: output)))
        return events
    }
}
