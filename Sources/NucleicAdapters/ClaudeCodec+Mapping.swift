public import NucleicProtocol

/// Claude Code's tool names, suggestions and content shapes mapped to Nucleic's model.
extension ClaudeCodec {
    /// What a Claude Code tool does. MCP tools (`mcp__server__tool`) and unknown tools are `other`.
    public static func toolKind(_ toolName: String) -> ToolKind {
        switch toolName {
        case "Bash", "BashOutput", "KillShell", "KillBash": .execute
        case "Read", "NotebookRead": .read
        case "Glob", "Grep", "LS", "ToolSearch": .search
        case "Edit", "Write", "MultiEdit", "NotebookEdit": .edit
        case "WebFetch", "WebSearch": .fetch
        case "TodoWrite", "ExitPlanMode", "EnterPlanMode": .think
        case "AskUserQuestion": .question
        default: .other
        }
    }

    /// "Allow always" scopes for a request: Claude's own `addRules` suggestions as project rules
    /// (`Bash(npm test *)`), plus the session scopes. None for what always needs a person.
    static func offeredScopes(_ toolName: String, _ kind: ToolKind, _ suggestions: JSONValue?) -> [ApprovalScope] {
        guard !kind.baselineRisk.alwaysNeedsPerson else { return [] }
        var scopes: [ApprovalScope] = []
        if kind == .execute { scopes.append(.exactCommandThisSession) }
        scopes.append(.toolThisSession)
        for suggestion in suggestions?.arrayValue ?? [] where suggestion["type"]?.stringValue == "addRules"
            && (suggestion["behavior"]?.stringValue ?? "allow") == "allow"
        {
            for rule in suggestion["rules"]?.arrayValue ?? [] {
                guard let tool = rule["toolName"]?.stringValue else { continue }
                let text = rule["ruleContent"]?.stringValue.map { "\(tool)(\($0))" } ?? tool
                if !scopes.contains(.rule(text)) { scopes.append(.rule(text)) }
            }
        }
        return scopes
    }

    /// AskUserQuestion's input: `{"questions":[{"question","header","options":[{"label","description"}],"multiSelect"}]}`.
    static func question(from input: JSONValue) -> StructuredQuestion? {
        guard let items = input["questions"]?.arrayValue else { return nil }
        let questions = items.compactMap { item -> StructuredQuestion.Item? in
            guard let text = item["question"]?.stringValue else { return nil }
            let options = (item["options"]?.arrayValue ?? []).compactMap { option -> StructuredQuestion.Option? in
                guard let label = option["label"]?.stringValue else { return nil }
                return StructuredQuestion.Option(label: label, description: option["description"]?.stringValue)
            }
            // Claude Code always lets the user type an answer of their own ("Other").
            return StructuredQuestion.Item(header: item["header"]?.stringValue, question: text, options: options,
                                           multiSelect: item["multiSelect"]?.boolValue ?? false, allowsOther: true)
        }
        return questions.isEmpty ? nil : StructuredQuestion(questions: questions)
    }

    /// Anthropic usage (`input_tokens`, `output_tokens`, `cache_*_input_tokens`).
    static func usage(_ value: JSONValue?) -> Usage? {
        guard let value, let input = value["input_tokens"]?.intValue, let output = value["output_tokens"]?.intValue else { return nil }
        return Usage(inputTokens: input, outputTokens: output,
                     cacheReadTokens: value["cache_read_input_tokens"]?.intValue,
                     cacheWriteTokens: value["cache_creation_input_tokens"]?.intValue)
    }

    /// The text of message content: a string, or the text blocks of a block array joined by newlines.
    static func text(of content: JSONValue?) -> String? {
        switch content {
        case .string(let s): return s
        case .array(let blocks):
            let texts = blocks.compactMap { $0["type"]?.stringValue == "text" ? $0["text"]?.stringValue : nil }
            return texts.isEmpty ? nil : texts.joined(separator: "\n")
        default: return nil
        }
    }
}
