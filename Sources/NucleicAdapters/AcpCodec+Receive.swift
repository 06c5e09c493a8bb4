public import NucleicProtocol

extension AcpCodec {
    public mutating func receive(line: [UInt8], now: Timestamp) -> CodecOutput {
        let message: JSONValue
        do { message = try JSONParser.parse(line) } catch {
            return CodecOutput(events: [CodecEvents.malformed(line, error, backend: backend)])
        }
        guard case .object = message else {
            return CodecOutput(events: [CodecEvents.unreadable(line, "an ACP message", ShapeError("expected a JSON object"))])
        }
        let method = message["method"]?.stringValue
        let id = message["id"].flatMap { $0.isNull ? nil : $0 }
        do {
            switch (method, id) {
            case (let method?, let id?): return try agentRequest(method, id, message["params"] ?? .null, line, now: now)
            case ("session/update", nil): return try update(message["params"] ?? .null, line)
            case (let method?, nil): return CodecOutput(events: [Self.unknown(line, method)])
            case (nil, let id?) where message["result"] != nil || message["error"] != nil:
                return try response(id, message, line, now: now)
            default: return CodecOutput(events: [Self.unknown(line, "?")])
            }
        } catch {
            return CodecOutput(events: [CodecEvents.unreadable(line, "\(backend)'s \(method ?? "reply")", error)])
        }
    }

    static func unknown(_ line: [UInt8], _ nativeKind: String) -> AgentEvent {
        .unknown(raw: String(decoding: line, as: UTF8.self), nativeKind: nativeKind)
    }

    // MARK: Replies to the host's requests

    private mutating func response(_ id: JSONValue, _ message: JSONValue, _ line: [UInt8], now: Timestamp) throws(ShapeError) -> CodecOutput {
        guard let n = id.intValue, let method = sent.removeValue(forKey: n) else {
            return CodecOutput(events: [Self.unknown(line, "response")])
        }
        _ = requests.resolve(n)
        if let error = message["error"] { return failed(method, n, error, now: now) }
        let result = message["result"] ?? .null
        switch method {
        case "initialize":
            agentProtocolVersion = result["protocolVersion"]?.intValue
            agentCanLoad = result["agentCapabilities"]?["loadSession"]?.boolValue ?? false
            agentCanResume = result["agentCapabilities"]?["sessionCapabilities"]?["resume"].map { !$0.isNull } ?? false
            var out = CodecOutput()
            if let v = agentProtocolVersion, v != Self.protocolVersion {
                out.events.append(.notice(level: .warning, message: "\(backend) speaks ACP version \(v); Nucleic speaks \(Self.protocolVersion)", code: "protocolVersion"))
            }
            out.append(openSession(now: now))
            return out
        case "session/new", "session/load", "session/resume":
            return sessionOpened(method, result, now: now)
        case "session/prompt":
            return turnEnded(n, result, now: now)
        case "session/set_mode":
            guard handshake == .settingMode else { return CodecOutput() }
            return ready(now: now)
        default:
            return CodecOutput()
        }
    }

    private mutating func sessionOpened(_ method: String, _ result: JSONValue, now: Timestamp) -> CodecOutput {
        loading = false
        let id = result["sessionId"]?.stringValue ?? options?.resumeID
        guard sessionID == nil else { return CodecOutput() }
        sessionID = id
        handshake = .ready
        if let modes = result["modes"] {
            currentMode = modes["currentModeId"]?.stringValue
            availableModes = (modes["availableModes"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        }
        var out = CodecOutput(events: [.sessionStarted(SessionStarted(
            backend: backend, nativeSessionID: id, model: options?.model ?? result["models"]?["currentModelId"]?.stringValue,
            cwd: options?.cwd, permissionMode: currentMode))])
        if replayedUpdates > 0 {
            out.events.append(.notice(level: .info, message: "\(backend) replayed \(replayedUpdates) updates of the loaded session; the transcript has them already", code: "historyReplayed"))
        }
        // The mode the manifest asks for goes first; prompts wait for its answer.
        if driving, let mode = options?.sessionMode, mode != currentMode, availableModes.contains(mode), let sessionID {
            handshake = .settingMode
            out.lines.append(request("session/set_mode", ["sessionId": .string(sessionID), "modeId": .string(mode)], now: now))
            currentMode = mode
            return out
        }
        out.append(ready(now: now))
        return out
    }

    /// The session takes prompts: the first one queued goes out.
    private mutating func ready(now: Timestamp) -> CodecOutput {
        handshake = .ready
        guard driving, !queuedPrompts.isEmpty else { return CodecOutput() }
        return prompt(queuedPrompts.removeFirst(), now: now)
    }

    private mutating func turnEnded(_ id: Int64, _ result: JSONValue, now: Timestamp) -> CodecOutput {
        var out = CodecOutput(events: flushText())
        for tool in openToolOrder {
            finishedTools.insert(tool)
            out.events.append(.toolCallCompleted(ToolResult(toolCallID: tool, status: .interrupted)))
        }
        openTools = [:]
        openToolOrder = []
        for approval in approvalOrder {
            out.events.append(.approvalWithdrawn(approvalID: approval, reason: "the turn ended"))
        }
        approvals = [:]
        approvalOrder = []
        let usage = Self.usage(result["usage"])
        if let usage { out.events.append(.usage(usage)) }
        let stop = result["stopReason"]?.stringValue ?? "end_turn"
        let run: RunFinished = switch stop {
        case "end_turn": RunFinished(isError: false, stopReason: "end_turn", result: lastMessage, usage: usage)
        case "cancelled": RunFinished(isError: true, stopReason: "interrupted", result: lastMessage, usage: usage)
        default: RunFinished(isError: true, stopReason: stop, result: lastMessage, usage: usage)
        }
        out.events.append(.runFinished(run))
        if activePrompt == id { activePrompt = nil }
        activePromptText = nil
        if driving, activePrompt == nil, handshake == .ready, !queuedPrompts.isEmpty {
            out.append(prompt(queuedPrompts.removeFirst(), now: now))
        }
        return out
    }

    private mutating func failed(_ method: String, _ id: Int64, _ error: JSONValue, now: Timestamp) -> CodecOutput {
        let text = Self.errorMessage(error)
        switch method {
        case "initialize", "session/new", "session/load", "session/resume":
            handshake = .failed(text)
            loading = false
            return CodecOutput(events: [
                .notice(level: .error, message: "\(backend) refused \(method): \(text)", code: "handshakeFailed"),
                .runFinished(RunFinished(isError: true, stopReason: "failed", result: text)),
            ])
        case "session/prompt":
            var out = CodecOutput(events: [.notice(level: .error, message: "\(backend) failed the turn: \(text)", code: "turnFailed")])
            let ended = turnEnded(id, ["stopReason": "failed"], now: now)
            out.append(ended)
            return out
        case "session/set_mode" where handshake == .settingMode:
            // The session goes on in the agent's own mode; the host still judges what it asks.
            var out = CodecOutput(events: [.notice(level: .warning, message: "\(backend) refused \(method): \(text)", code: "requestFailed")])
            currentMode = nil
            out.append(ready(now: now))
            return out
        default:
            return CodecOutput(events: [.notice(level: .warning, message: "\(backend) refused \(method): \(text)", code: "requestFailed")])
        }
    }

    static func errorMessage(_ error: JSONValue) -> String {
        var text = error["message"]?.stringValue ?? JSONWriter.string(error)
        if let data = error["data"], !data.isNull { text += " (\(data.stringValue ?? JSONWriter.string(data)))" }
        return text
    }

    static func usage(_ value: JSONValue?) -> Usage? {
        guard let value, let input = value["inputTokens"]?.intValue, let output = value["outputTokens"]?.intValue else { return nil }
        return Usage(inputTokens: input, outputTokens: output, cacheReadTokens: value["cachedReadTokens"]?.intValue,
                     cacheWriteTokens: value["cachedWriteTokens"]?.intValue, reasoningTokens: value["thoughtTokens"]?.intValue)
    }

    // MARK: Requests of the agent

    static let clientMethods: Set<String> = [
        "fs/read_text_file", "fs/write_text_file", "terminal/create", "terminal/output", "terminal/wait_for_exit",
        "terminal/kill", "terminal/release",
    ]

    private mutating func agentRequest(_ method: String, _ id: JSONValue, _ params: JSONValue, _ line: [UInt8], now: Timestamp) throws(ShapeError) -> CodecOutput {
        if method == "session/request_permission" { return try permission(id, params, now: now) }
        if Self.clientMethods.contains(method) {
            return clientRequest(ClientRequest(id: id, method: method, params: params))
        }
        return CodecOutput(
            events: [Self.unknown(line, method),
                     .notice(level: .warning, message: "\(backend) asked for \(method), which Nucleic does not handle; the request was refused", code: "unsupportedRequest")],
            lines: driving ? [Self.line(["jsonrpc": "2.0", "id": id, "error": ["code": -32601, "message": .string("Nucleic does not handle \(method)")]])] : [])
    }

    private mutating func permission(_ id: JSONValue, _ params: JSONValue, now: Timestamp) throws(ShapeError) -> CodecOutput {
        let f = try Fields(params, "session/request_permission")
        let call = try Fields(try f.value("toolCall"), "toolCall")
        let toolCallID = try call.optionalString("toolCallId")
        var options: [String: String] = [:]
        for option in f["options"]?.arrayValue ?? [] {
            let o = try Fields(option, "permission option")
            let kind = try o.string("kind")
            if options[kind] == nil { options[kind] = try o.string("optionId") }
        }
        guard options["allow_once"] != nil || options["allow_always"] != nil else {
            throw ShapeError("session/request_permission offers no option that allows the call")
        }
        let known = toolCallID.flatMap { openTools[$0] }
        let kind = call["kind"]?.stringValue.map(Self.toolKind) ?? known?.kind ?? .other
        let title = call["title"]?.stringValue ?? known?.title ?? kind.rawValue
        var input = JSONObject()
        input.append("title", .string(title))
        // An agent may name only the call (Mistral Vibe): what its tool_call said stands.
        let rawInput = call["rawInput"] ?? known?.rawInput
        input.append("rawInput", ifPresent: rawInput)
        input.append("locations", ifPresent: call["locations"] ?? known?.locations)
        input.append("content", ifPresent: call["content"])
        let name = Self.hostToolName(kind, title: title, rawInput, call["locations"] ?? known?.locations, into: &input)
        let risk = kind.baselineRisk
        let request = ApprovalRequest(
            id: makeApprovalID(), toolCallID: toolCallID, toolName: name, toolKind: kind, input: .object(input), risk: risk,
            capabilities: capabilities, offeredScopes: risk.alwaysNeedsPerson ? [] : [.toolThisSession], createdAt: now)
        approvals[request.id] = PendingApproval(request: request, nativeID: id, options: options)
        approvalOrder.append(request.id)
        return CodecOutput(events: flushText() + [.approvalRequested(request)])
    }

    /// The name the host judges and keeps rules for a permission request under, with the input
    /// the risk classifier reads for it: a call that names its file is `Edit` (kind edit) or
    /// `Read` (kind read, search) with `file_path`; one with a command line is `Bash` with
    /// `command` (and `cwd`); one with a URL is `WebFetch`; any other is its title as a tool
    /// name (letters, digits, `_`, `-`), so "allow always" is a rule for that exact title.
    static func hostToolName(_ kind: ToolKind, title: String, _ raw: JSONValue?, _ locations: JSONValue?, into input: inout JSONObject) -> String {
        let path = raw?["path"]?.stringValue ?? raw?["file_path"]?.stringValue ?? raw?["filePath"]?.stringValue ?? raw?["abs_path"]?.stringValue
            ?? locations?.arrayValue?.first?["path"]?.stringValue
        var command = raw?["command"]?.stringValue
        if command == nil, let words = raw?["command"]?.arrayValue?.compactMap(\.stringValue), !words.isEmpty {
            command = words.map(CommandWords.quote).joined(separator: " ")
        }
        switch kind {
        case .edit where path != nil, .move where path != nil:
            input.append("file_path", .string(path!))
            return "Edit"
        case .read where path != nil, .search where path != nil:
            input.append("file_path", .string(path!))
            return "Read"
        case .execute where command != nil:
            input.append("command", .string(command!))
            input.append("cwd", ifPresent: raw?["cwd"])
            return "Bash"
        case .fetch where raw?["url"]?.stringValue != nil:
            input.append("url", raw!["url"]!)
            return "WebFetch"
        default:
            let scalars = title.unicodeScalars.map { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" ? Character($0) : "_" }
            let name = String(scalars)
            return name.first.map { $0.isLetter || $0 == "_" } == true ? name : "acp_" + name
        }
    }

    /// The host's decision as the agent's option. "Always" is the host's rule: the agent is told
    /// `allow_once`, so that every later call still comes to the host.
    mutating func answer(_ id: ApprovalID, _ decision: Decision) throws(CodecError) -> CodecOutput {
        guard let pending = approvals[id] else {
            throw CodecError(.unknownApproval, "no pending approval \(id): it was already answered, withdrawn, or never existed")
        }
        let outcome: JSONValue
        var cancel = false
        switch decision {
        case .allowModified:
            throw CodecError(.unsupported, "\(backend) cannot run a modified call: a permission answer carries no input. Deny it with a message saying what to do instead")
        case .answer:
            throw CodecError(.invalidDecision, "\(pending.request.toolName) is not a question: allow, deny or cancel it")
        case .allow, .allowAlways:
            outcome = ["outcome": "selected", "optionId": .string(pending.options["allow_once"] ?? pending.options["allow_always"]!)]
        case .deny:
            if let option = pending.options["reject_once"] ?? pending.options["reject_always"] {
                outcome = ["outcome": "selected", "optionId": .string(option)]
            } else {
                outcome = ["outcome": "cancelled"]
            }
        case .cancel:
            outcome = ["outcome": "cancelled"]
            cancel = true
        }
        approvals[id] = nil
        approvalOrder.removeAll { $0 == id }
        var out = CodecOutput(lines: [Self.line(["jsonrpc": "2.0", "id": pending.nativeID, "result": ["outcome": outcome]])])
        if cancel, let sessionID, activePrompt != nil {
            out.lines.append(Self.line(["jsonrpc": "2.0", "method": "session/cancel", "params": ["sessionId": .string(sessionID)]]))
        }
        return out
    }
}
