public import NucleicProtocol

/// The agent's requests of its client (`fs/*`, `terminal/*`): the host serves them; the codec
/// keeps them until they are answered and records each as a tool call, so a transcript (and
/// `nucleic events` on a recording) shows what the agent had the host do.
///
/// A request is `toolCallStarted` (id `client:<JSON-RPC id>`) when it arrives and
/// `toolCallCompleted` when it is answered: `Read` for `fs/read_text_file`, `Write` for
/// `fs/write_text_file`, `Bash` for `terminal/create` (its command line with the environment it
/// sets in front, as a shell would read it), the method's name for `terminal/wait_for_exit` and
/// `terminal/kill`. `terminal/output` and `terminal/release` (reading and dropping the host's
/// own state of a terminal) are answered without a tool call.
extension AcpCodec {
    /// Answers the agent's `fs/*` or `terminal/*` request `id` with `result`.
    public mutating func respond(to id: JSONValue, result: JSONValue) -> CodecOutput {
        guard let request = takeClientRequest(id) else { return CodecOutput() }
        var out = CodecOutput(lines: [Self.line(["jsonrpc": "2.0", "id": id, "result": result])])
        if Self.isRecorded(request.method) { out.events.append(.toolCallCompleted(Self.clientResult(request, result: result))) }
        return out
    }

    /// Refuses the agent's request `id` with a JSON-RPC error; its tool call ends as `status`
    /// (`declined` when a person or a rule said no, `failed` otherwise).
    public mutating func refuse(_ id: JSONValue, code: Int64, message: String, status: ToolResult.Status = .failed) -> CodecOutput {
        guard let request = takeClientRequest(id) else { return CodecOutput() }
        var out = CodecOutput(lines: [Self.line(["jsonrpc": "2.0", "id": id, "error": ["code": .int(code), "message": .string(message)]])])
        if Self.isRecorded(request.method) {
            out.events.append(.toolCallCompleted(ToolResult(toolCallID: request.toolCallID, status: status, output: message)))
        }
        return out
    }

    mutating func takeClientRequest(_ id: JSONValue) -> ClientRequest? {
        guard let index = clientRequests.firstIndex(where: { $0.id == id }) else { return nil }
        return clientRequests.remove(at: index)
    }

    /// A new request of the agent: kept until answered, and its tool call started.
    mutating func clientRequest(_ request: ClientRequest) -> CodecOutput {
        clientRequests.append(request)
        guard let call = Self.clientToolCall(request) else { return CodecOutput() }
        return CodecOutput(events: flushText() + [.toolCallStarted(call)])
    }

    /// A recorded host line that answers one of the agent's requests (reading a recording, or
    /// catching up with the journal after an adoption).
    mutating func observeHostReply(_ id: JSONValue, _ message: JSONValue) -> CodecOutput {
        if clientRequests.contains(where: { $0.id == id }) {
            if let error = message["error"] {
                return refuse(id, code: error["code"]?.intValue ?? -32603, message: Self.errorMessage(error), status: .failed).onlyEvents
            }
            return respond(to: id, result: message["result"] ?? .null).onlyEvents
        }
        guard let approvalID = approvalOrder.first(where: { approvals[$0]?.nativeID == id }), let pending = approvals[approvalID] else {
            return CodecOutput()
        }
        approvals[approvalID] = nil
        approvalOrder.removeAll { $0 == approvalID }
        let outcome = message["result"]?["outcome"]
        let option = outcome?["optionId"]?.stringValue
        let kind = pending.options.first { $0.value == option }?.key
        let decision: Decision = switch kind {
        case "allow_once", "allow_always": .allow
        case "reject_once", "reject_always": .deny(message: "")
        default: .cancel
        }
        return CodecOutput(events: [.approvalResolved(ApprovalResolution(approvalID: approvalID, decision: decision, decidedBy: "recorded"))])
    }

    static func isRecorded(_ method: String) -> Bool { method != "terminal/output" && method != "terminal/release" }

    /// The tool call a request is recorded as; nil for those answered without one.
    public static func clientToolCall(_ request: ClientRequest) -> ToolCall? {
        let p = request.params
        var input = JSONObject()
        let name: String
        let kind: ToolKind
        switch request.method {
        case "fs/read_text_file":
            name = "Read"
            kind = .read
            input.append("file_path", p["path"] ?? .null)
            input.append("line", ifPresent: p["line"])
            input.append("limit", ifPresent: p["limit"])
        case "fs/write_text_file":
            name = "Write"
            kind = .edit
            input.append("file_path", p["path"] ?? .null)
            input.append("content", p["content"] ?? .null)
        case "terminal/create":
            name = "Bash"
            kind = .execute
            input.append("command", .string(terminalCommandLine(p)))
            input.append("cwd", ifPresent: p["cwd"])
        case "terminal/wait_for_exit", "terminal/kill":
            name = request.method
            kind = .execute
            input.append("terminalId", p["terminalId"] ?? .null)
        default:
            return nil
        }
        return ToolCall(toolCallID: request.toolCallID, name: name, toolKind: kind, input: .object(input))
    }

    /// `terminal/create`'s command, arguments and environment as one shell command line
    /// (`NAME=value … command args…`, each word quoted where needed): what the risk classifier
    /// and the rules read. Without `args` the command is a shell command line (`terminalArgv`),
    /// taken as it is.
    public static func terminalCommandLine(_ params: JSONValue) -> String {
        var words: [String] = []
        for variable in params["env"]?.arrayValue ?? [] {
            guard let name = variable["name"]?.stringValue else { continue }
            words.append(name + "=" + CommandWords.quote(variable["value"]?.stringValue ?? ""))
        }
        let command = params["command"]?.stringValue ?? ""
        let arguments = params["args"]?.arrayValue ?? []
        words.append(arguments.isEmpty ? command : CommandWords.quote(command))
        words += arguments.map { CommandWords.quote($0.stringValue ?? "") }
        return words.joined(separator: " ")
    }

    /// What runs for a `terminal/create`: `command` with `args` as they are; without `args`,
    /// `command` is a whole shell command line, run by `/bin/sh -c` (Kimi CLI sends
    /// `{"command": "echo hi > out.txt"}`, as a client that runs commands through a shell allows).
    public static func terminalArgv(_ params: JSONValue) -> (executable: String, arguments: [String])? {
        guard let command = params["command"]?.stringValue, !command.isEmpty else { return nil }
        let arguments = (params["args"]?.arrayValue ?? []).map { $0.stringValue ?? "" }
        return arguments.isEmpty ? ("/bin/sh", ["-c", command]) : (command, arguments)
    }

    static func clientResult(_ request: ClientRequest, result: JSONValue) -> ToolResult {
        let id = request.toolCallID
        switch request.method {
        case "fs/read_text_file":
            return ToolResult(toolCallID: id, status: .completed, output: result["content"]?.stringValue)
        case "fs/write_text_file":
            let bytes = request.params["content"]?.stringValue?.utf8.count ?? 0
            return ToolResult(toolCallID: id, status: .completed, output: "wrote \(bytes) bytes")
        case "terminal/create":
            return ToolResult(toolCallID: id, status: .completed, output: "terminal \(result["terminalId"]?.stringValue ?? "?")")
        case "terminal/wait_for_exit":
            let code = result["exitCode"]?.intValue
            let signal = result["signal"]?.stringValue
            return ToolResult(toolCallID: id, status: code == 0 ? .completed : .failed,
                              output: signal.map { "killed by \($0)" } ?? code.map { "exited with code \($0)" }, exitCode: code)
        default:
            return ToolResult(toolCallID: id, status: .completed)
        }
    }
}

extension CodecOutput {
    /// The events alone: a recorded host line was already sent.
    var onlyEvents: CodecOutput { CodecOutput(events: events) }
}
