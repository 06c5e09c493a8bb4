import NucleicProtocol

/// Pure translations of Codex shapes into Nucleic's (no codec state).
extension CodexCodec {
    /// The tool names Nucleic gives Codex's tool items: the names the model itself calls them by
    /// (docs/adapters/codex.md). For host rules, `exec_command` is a shell command (`Bash(…)`)
    /// and `apply_patch` an edit.
    public enum ToolName {
        public static let command = "exec_command"
        public static let fileChange = "apply_patch"
        public static let question = "request_user_input"
    }

    /// Item types that are tool calls.
    static let toolItemTypes: Set<String> = ["commandExecution", "fileChange", "mcpToolCall"]

    static func itemFields(_ params: JSONValue) throws(ShapeError) -> (item: JSONValue, type: String, id: String, turnID: String?) {
        let f = try Fields(params, "item notification")
        let item = try f.value("item")
        let i = try Fields(item, "item")
        return (item, try i.string("type"), try i.string("id"), try f.optionalString("turnId"))
    }

    static func toolCall(_ item: JSONValue, _ type: String, _ id: String) -> ToolCall {
        switch type {
        case "commandExecution":
            return ToolCall(toolCallID: id, name: ToolName.command, toolKind: .execute,
                            input: commandInput(item["command"]?.stringValue, cwd: item["cwd"]?.stringValue))
        case "fileChange":
            return ToolCall(toolCallID: id, name: ToolName.fileChange, toolKind: .edit, input: ["changes": item["changes"] ?? []])
        default:  // mcpToolCall, named the way Claude Code names MCP tools
            let server = item["server"]?.stringValue ?? "unknown", tool = item["tool"]?.stringValue ?? "unknown"
            return ToolCall(toolCallID: id, name: "mcp__\(server)__\(tool)", toolKind: .other, input: item["arguments"] ?? .null)
        }
    }

    static func toolResult(_ item: JSONValue, _ type: String, _ id: String, streamedOutput: String) -> ToolResult {
        let status: ToolResult.Status
        switch item["status"]?.stringValue {
        case "completed": status = (item["exitCode"]?.intValue ?? 0) == 0 ? .completed : .failed
        case "failed": status = .failed
        case "declined": status = .declined
        default: status = .interrupted
        }
        switch type {
        case "mcpToolCall":
            let output = item["error"]?["message"]?.stringValue ?? item["result"]?["content"].map(contentText)
            return ToolResult(toolCallID: id, status: status, output: output)
        default:
            // Output deltas can be lost (DESIGN.md §4): the aggregated output wins when there is one.
            let output = item["aggregatedOutput"]?.stringValue ?? (streamedOutput.isEmpty ? nil : streamedOutput)
            return ToolResult(toolCallID: id, status: status, output: output, exitCode: item["exitCode"]?.intValue)
        }
    }

    /// `{"command": <the script>, "cwd": …}`; Codex runs every command through a login shell
    /// (`/bin/bash -lc '<script>'`), so the script is what a person reads and a rule matches, and
    /// the full command line is kept as `nativeCommand` when it differs.
    static func commandInput(_ command: String?, cwd: String?) -> JSONValue {
        var o = JSONObject()
        let full = command ?? ""
        let script = unwrapShell(full)
        o.append("command", .string(script))
        o.append("cwd", ifPresent: cwd.map(JSONValue.string))
        if script != full { o.append("nativeCommand", .string(full)) }
        return .object(o)
    }

    static let shells: Set<String> = ["/bin/bash", "bash", "/bin/zsh", "zsh", "/bin/sh", "sh", "/usr/bin/bash", "/usr/bin/zsh"]

    /// The script inside `<shell> -lc '<script>'` (or `-c`), or the command unchanged.
    static func unwrapShell(_ command: String) -> String {
        for shell in shells {
            for flag in [" -lc ", " -c "] where command.hasPrefix(shell + flag) {
                if let script = singleShellWord(command.dropFirst(shell.count + flag.count)) { return script }
            }
        }
        return command
    }

    /// The value of `text` when it is exactly one shell word (quoted or bare), else nil.
    static func singleShellWord(_ text: Substring) -> String? {
        var out = ""
        var chars = text.makeIterator()
        var any = false
        while let c = chars.next() {
            any = true
            switch c {
            case "'":
                var closed = false
                while let d = chars.next() {
                    if d == "'" { closed = true; break }
                    out.append(d)
                }
                guard closed else { return nil }
            case "\"":
                var closed = false
                while let d = chars.next() {
                    if d == "\"" { closed = true; break }
                    if d == "\\" {
                        guard let e = chars.next() else { return nil }
                        if !"\"\\$`\n".contains(e) { out.append("\\") }
                        out.append(e)
                    } else {
                        out.append(d)
                    }
                }
                guard closed else { return nil }
            case "\\":
                guard let e = chars.next() else { return nil }
                out.append(e)
            case " ", "\t", "\n", ";", "&", "|", "<", ">", "(", ")":
                return nil  // more than one word, or shell syntax around the word
            default:
                out.append(c)
            }
        }
        return any ? out : nil
    }

    /// A host rule (Claude Code's syntax, DESIGN.md §5) for Codex's proposed execpolicy amendment:
    /// a prefix of argv becomes `Bash(<prefix> *)`; a whole `bash -lc <script>` becomes the exact
    /// `Bash(<script>)`.
    static func rule(fromAmendment value: JSONValue?) -> String? {
        guard let tokens = value?.arrayValue?.compactMap(\.stringValue), !tokens.isEmpty,
            tokens.count == value?.arrayValue?.count
        else { return nil }
        if tokens.count == 3, shells.contains(tokens[0]), tokens[1] == "-lc" || tokens[1] == "-c" {
            return "Bash(\(tokens[2]))"
        }
        return "Bash(\(tokens.map(shellQuote).joined(separator: " ")) *)"
    }

    static func shellQuote(_ word: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@%+,")
        if !word.isEmpty, word.allSatisfy({ safe.contains($0) }) { return word }
        var quoted = "'"
        for c in word { quoted += c == "'" ? "'\\''" : String(c) }
        return quoted + "'"
    }

    static func reasoningText(_ item: JSONValue) -> String {
        let summary = (item["summary"]?.arrayValue ?? []).compactMap(\.stringValue)
        let parts = summary.isEmpty ? (item["content"]?.arrayValue ?? []).compactMap(\.stringValue) : summary
        return parts.joined(separator: "\n\n")
    }

    static func contentText(_ content: JSONValue) -> String {
        let texts = (content.arrayValue ?? []).compactMap { $0["text"]?.stringValue }
        return texts.isEmpty ? content.textOrJSON : texts.joined(separator: "\n")
    }

    /// The text of a `turn/start`'s or `turn/steer`'s input.
    static func inputText(_ input: JSONValue?) -> String? {
        let texts = (input?.arrayValue ?? []).compactMap { $0["type"]?.stringValue == "text" ? $0["text"]?.stringValue : nil }
        return texts.isEmpty ? nil : texts.joined(separator: "\n")
    }

    // MARK: Errors

    /// A JSON-RPC error's or a `TurnError`'s message.
    static func errorMessage(_ error: JSONValue) -> String {
        var text = error["message"]?.stringValue ?? error.textOrJSON
        if let details = error["additionalDetails"]?.stringValue, !details.isEmpty { text += " (\(details))" }
        if let status = httpStatus(error["codexErrorInfo"]) { text += " [HTTP \(status)]" }
        return text
    }

    /// `codexErrorInfo`'s name: the string itself, or the single key of its object form.
    static func errorInfoName(_ info: JSONValue?) -> String? {
        if let name = info?.stringValue { return name }
        return info?.objectValue?.keys.first
    }

    static func httpStatus(_ info: JSONValue?) -> Int64? {
        info?.objectValue?.entries.first?.value["httpStatusCode"]?.intValue
    }

    /// A notice for Codex's `error` notification or a failed turn's error.
    static func notice(for error: JSONValue, retrying: Bool) -> AgentEvent {
        let message = errorMessage(error)
        return .notice(level: retrying ? .warning : .error,
                       message: retrying ? "Codex is retrying after: \(message)" : "Codex: \(message)",
                       code: errorInfoName(error["codexErrorInfo"]) ?? "error")
    }

    /// Failures of the model API or its transport, by `codexErrorInfo`.
    static let apiErrorInfos: Set<String> = [
        "contextWindowExceeded", "usageLimitExceeded", "rateLimitExceeded", "serverOverloaded", "flexUnavailable",
        "httpConnectionFailed", "responseStreamConnectionFailed", "internalServerError", "unauthorized", "badRequest",
        "responseStreamDisconnected", "responseTooManyFailedAttempts",
    ]

    /// `api_error` when the model API failed, `failed` for any other failure of the turn.
    ///
    /// Codex 0.163 reports an HTTP 400 from the model API and a `response.failed` stream as
    /// `codexErrorInfo: "other"`, so for "other" (or none) the message decides: an upstream error
    /// body (`{"error": …}`) or a broken stream is the API's.
    static func failureStopReason(_ error: JSONValue?) -> String {
        let info = errorInfoName(error?["codexErrorInfo"])
        if let info, apiErrorInfos.contains(info) { return "api_error" }
        guard info == nil || info == "other", let message = error?["message"]?.stringValue else { return "failed" }
        if let body = try? JSONParser.parse(message), body["error"] != nil { return "api_error" }
        let apiPrefixes = ["stream disconnected", "unexpected status", "exceeded retry limit", "error sending request"]
        return apiPrefixes.contains { message.hasPrefix($0) } ? "api_error" : "failed"
    }

    // MARK: Usage (wrapping arithmetic: token counts come from the agent and must not trap)

    static func usage(_ breakdown: JSONValue?) -> Usage? {
        guard let b = breakdown, let input = b["inputTokens"]?.intValue, let output = b["outputTokens"]?.intValue else { return nil }
        return Usage(inputTokens: input, outputTokens: output, cacheReadTokens: b["cachedInputTokens"]?.intValue,
                     cacheWriteTokens: b["cacheWriteInputTokens"]?.intValue, reasoningTokens: b["reasoningOutputTokens"]?.intValue)
    }

    static func sum(_ a: Usage?, _ b: Usage) -> Usage {
        guard let a else { return b }
        return Usage(inputTokens: a.inputTokens &+ b.inputTokens, outputTokens: a.outputTokens &+ b.outputTokens,
                     cacheReadTokens: add(a.cacheReadTokens, b.cacheReadTokens), cacheWriteTokens: add(a.cacheWriteTokens, b.cacheWriteTokens),
                     reasoningTokens: add(a.reasoningTokens, b.reasoningTokens))
    }

    static func difference(_ a: Usage, _ b: Usage) -> Usage {
        Usage(inputTokens: a.inputTokens &- b.inputTokens, outputTokens: a.outputTokens &- b.outputTokens,
              cacheReadTokens: a.cacheReadTokens.map { $0 &- (b.cacheReadTokens ?? 0) },
              cacheWriteTokens: a.cacheWriteTokens.map { $0 &- (b.cacheWriteTokens ?? 0) },
              reasoningTokens: a.reasoningTokens.map { $0 &- (b.reasoningTokens ?? 0) })
    }

    private static func add(_ a: Int64?, _ b: Int64?) -> Int64? {
        a == nil && b == nil ? nil : (a ?? 0) &+ (b ?? 0)
    }
}
