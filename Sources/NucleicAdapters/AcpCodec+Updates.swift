public import NucleicProtocol

/// `session/update` notifications as events.
extension AcpCodec {
    mutating func update(_ params: JSONValue, _ line: [UInt8]) throws(ShapeError) -> CodecOutput {
        let f = try Fields(params, "session/update")
        let u = try Fields(try f.value("update"), "session/update's update")
        let kind = try u.string("sessionUpdate")
        if loading {
            // History the loaded session replays: the host's transcript has it already.
            replayedUpdates += 1
            return CodecOutput()
        }
        switch kind {
        case "agent_message_chunk":
            thoughtBufferFlushIfNeeded()
            let text = Self.blockText(u["content"])
            messageBuffer += text
            return CodecOutput(events: text.isEmpty ? [] : [.assistantText(text: text, isPartial: true)])
        case "agent_thought_chunk":
            let text = Self.blockText(u["content"])
            thoughtBuffer += text
            return CodecOutput(events: text.isEmpty ? [] : [.reasoning(text: text, isPartial: true)])
        case "user_message_chunk":
            let text = Self.blockText(u["content"])
            // An agent that echoes the prompt the host sent: recorded once, by the host.
            if let prompt = activePromptText, prompt.hasPrefix(text) { return CodecOutput() }
            return CodecOutput(events: text.isEmpty ? [] : [.userInput(text: text)])
        case "tool_call":
            return CodecOutput(events: flushText() + toolCall(u, isUpdate: false))
        case "tool_call_update":
            return CodecOutput(events: flushText() + toolCall(u, isUpdate: true))
        case "plan":
            plan = (u["entries"]?.arrayValue ?? []).map {
                PlanEntry(content: $0["content"]?.stringValue ?? "", status: $0["status"]?.stringValue ?? "pending",
                          priority: $0["priority"]?.stringValue)
            }
            let lines = plan.map { "[\($0.status)] \($0.content)" }
            return CodecOutput(events: [.notice(level: .info, message: "plan:\n" + lines.joined(separator: "\n"), code: "plan")])
        case "available_commands_update":
            availableCommands = (u["availableCommands"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
            return CodecOutput(events: [.notice(level: .info, message: "commands: " + availableCommands.map { "/" + $0 }.joined(separator: " "), code: "availableCommands")])
        case "current_mode_update":
            currentMode = try u.optionalString("currentModeId")
            return CodecOutput(events: [.notice(level: .info, message: "mode: \(currentMode ?? "?")", code: "modeChanged")])
        case "usage_update":
            contextUsed = u["used"]?.intValue
            contextSize = u["size"]?.intValue
            return CodecOutput(events: [.notice(level: .info, message: "context: \(contextUsed.map(String.init) ?? "?") of \(contextSize.map(String.init) ?? "?") tokens", code: "contextUsage")])
        default:
            return CodecOutput(events: [Self.unknown(line, kind)])
        }
    }

    /// A thought ends where the message starts.
    mutating func thoughtBufferFlushIfNeeded() {
        thoughtBuffer = ""
    }

    /// The agent's message so far as one complete message (before a tool call, an approval, the
    /// turn's end).
    mutating func flushText() -> [AgentEvent] {
        thoughtBuffer = ""
        guard !messageBuffer.isEmpty else { return [] }
        let text = messageBuffer
        messageBuffer = ""
        lastMessage = text
        return [.assistantText(text: text, isPartial: false)]
    }

    static func blockText(_ block: JSONValue?) -> String {
        guard let block else { return "" }
        switch block["type"]?.stringValue {
        case "text": return block["text"]?.stringValue ?? ""
        case "resource_link": return block["uri"]?.stringValue ?? ""
        case "resource": return block["resource"]?["text"]?.stringValue ?? block["resource"]?["uri"]?.stringValue ?? ""
        default: return ""
        }
    }

    static func toolKind(_ kind: String) -> ToolKind {
        switch kind {
        case "switch_mode": .other
        default: ToolKind(rawValue: kind) ?? .other
        }
    }

    /// The text of a tool call's content: content blocks as text, diffs as their path and new
    /// text, terminals by id.
    static func contentText(_ content: [JSONValue]) -> String? {
        let parts = content.compactMap { item -> String? in
            switch item["type"]?.stringValue {
            case "content": return blockText(item["content"])
            case "diff": return "--- \(item["path"]?.stringValue ?? "?")\n" + (item["newText"]?.stringValue ?? "")
            case "terminal": return "terminal \(item["terminalId"]?.stringValue ?? "?")"
            default: return nil
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: "\n")
    }

    mutating func toolCall(_ u: Fields, isUpdate: Bool) -> [AgentEvent] {
        guard let id = u["toolCallId"]?.stringValue, !finishedTools.contains(id) else { return [] }
        var events: [AgentEvent] = []
        if openTools[id] == nil {
            let kind = u["kind"]?.stringValue.map(Self.toolKind) ?? .other
            let title = u["title"]?.stringValue ?? kind.rawValue
            var input = JSONObject()
            input.append("title", .string(title))
            input.append("rawInput", ifPresent: u["rawInput"])
            input.append("locations", ifPresent: u["locations"])
            openTools[id] = ToolState(title: title, kind: kind, locations: u["locations"], rawInput: u["rawInput"])
            openToolOrder.append(id)
            events.append(.toolCallStarted(ToolCall(toolCallID: id, name: title, toolKind: kind, input: .object(input))))
        }
        if let content = u["content"]?.arrayValue {
            // Content replaces what the call had; what is new is its output so far.
            let before = Self.contentText(openTools[id]?.content ?? []) ?? ""
            openTools[id]?.content = content
            let after = Self.contentText(content) ?? ""
            if after.hasPrefix(before), after.count > before.count {
                events.append(.toolCallOutputDelta(toolCallID: id, delta: String(after.dropFirst(before.count))))
            }
        }
        if let raw = u["rawOutput"] { openTools[id]?.rawOutput = raw }
        let status = u["status"]?.stringValue
        if status == "completed" || status == "failed" {
            let tool = openTools.removeValue(forKey: id)
            openToolOrder.removeAll { $0 == id }
            finishedTools.insert(id)
            let output = Self.contentText(tool?.content ?? []) ?? tool?.rawOutput.map { $0.stringValue ?? JSONWriter.string($0) }
            events.append(.toolCallCompleted(ToolResult(toolCallID: id, status: status == "completed" ? .completed : .failed, output: output)))
        }
        return events
    }
}
