import NucleicProtocol

/// SplitMix64: the same seed gives the same stream on every machine and every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Claude Code stream-json as the agent writes it on stdout, generated from a seed.
///
/// The shapes follow the recordings in `Fixtures/claude/*.jsonl` (the `line` of each `out`
/// record): `system/init` and the `initialize` reply at the start of a session; per model call a
/// `message_start`, content blocks streamed as many small `content_block_delta` partials
/// (`text_delta`, `thinking_delta`, `input_json_delta`, `signature_delta`), then one `assistant`
/// message per block; `can_use_tool` control requests for tools that need a person; `user`
/// messages with `tool_result` blocks whose output Claude Code repeats in `tool_use_result`
/// (Read a file, Bash output with ANSI colours, Grep, Edit with the original file, Write); a
/// `result` per turn. Text is code and prose with quotes, tabs, newlines and non-ASCII, written
/// the way JavaScript's `JSON.stringify` does (non-ASCII kept raw, control characters escaped).
struct ClaudeStreamGenerator {
    /// Lines and bytes per kind of line, for the mix summary.
    struct Mix {
        var lines: [String: Int] = [:]
        var bytes: [String: Int] = [:]
    }

    private(set) var stream: [UInt8] = []
    private(set) var mix = Mix()
    private var rng: SplitMix64
    private var uuidCounter = 0
    private var sessionCounter = 0
    private var sessionID = ""
    private var turnsLeftInSession = 0
    private let cwd = "/tmp/nucleic-fixture/repo"

    /// At least `targetBytes` of complete, newline-terminated lines.
    static func generate(targetBytes: Int, seed: UInt64) -> ClaudeStreamGenerator {
        var generator = ClaudeStreamGenerator(seed: seed)
        generator.stream.reserveCapacity(targetBytes + (1 << 20))
        while generator.stream.count < targetBytes { generator.turn() }
        return generator
    }

    private init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    // MARK: Turns

    private mutating func turn() {
        if turnsLeftInSession == 0 { startSession() }
        turnsLeftInSession -= 1
        emit("system/status", system("status", ["status": "requesting"]))
        let toolSteps = Int.random(in: 0...4, using: &rng)
        for _ in 0..<toolSteps { toolStep() }
        let messageID = nextMessageID()
        emitStream(["type": "message_start", "message": messageStub(messageID)], messageID)
        let answer = prose(sentences: Int.random(in: 1...8, using: &rng))
        streamTextBlock(index: 0, type: "text", field: "text", text: answer, messageID: messageID)
        streamMessageEnd(stopReason: "end_turn", messageID: messageID)
        emit("assistant", assistant(messageID, [["type": "text", "text": .string(answer)]]))
        emit("result", result(answer, turns: toolSteps + 1))
    }

    private mutating func startSession() {
        sessionCounter += 1
        sessionID = uuid(0x5E55_0000 + sessionCounter)
        turnsLeftInSession = Int.random(in: 5...40, using: &rng)
        emit("control_response", initializeResponse())
        emit("system/init", systemInit())
    }

    /// One model call that ends in a tool call, its approval when it needs one, and its result.
    private mutating func toolStep() {
        let messageID = nextMessageID()
        emitStream(["type": "message_start", "message": messageStub(messageID)], messageID)
        var blocks: [JSONValue] = []
        var index: Int64 = 0
        if chance(0.4) {
            let thinking = prose(sentences: Int.random(in: 1...6, using: &rng))
            let signature = "sig-" + token(length: 40)
            streamTextBlock(index: index, type: "thinking", field: "thinking", text: thinking, messageID: messageID, signature: signature)
            if chance(0.5) {
                let tokens = JSONValue.int(Int64(thinking.utf8.count / 4))
                emit("system/thinking_tokens", system("thinking_tokens", ["estimated_tokens": tokens, "estimated_tokens_delta": tokens]))
            }
            blocks.append(["type": "thinking", "thinking": .string(thinking), "signature": .string(signature)])
            index += 1
        }
        if chance(0.7) {
            let text = prose(sentences: Int.random(in: 1...3, using: &rng))
            streamTextBlock(index: index, type: "text", field: "text", text: text, messageID: messageID)
            blocks.append(["type": "text", "text": .string(text)])
            index += 1
        }
        let tool = ToolChoice.draw.randomElement(using: &rng)!
        let toolID = "toolu_01" + token(length: 22)
        let path = filePath()
        let input = toolInput(tool, path: path)
        emitStream(["type": "content_block_start", "index": .int(index),
                    "content_block": ["type": "tool_use", "id": .string(toolID), "name": .string(tool.rawValue), "input": [:]]], messageID)
        for piece in pieces(of: JSONWriter.string(input), maximum: 24) {
            emitStream(["type": "content_block_delta", "index": .int(index),
                        "delta": ["type": "input_json_delta", "partial_json": .string(piece)]], messageID)
        }
        emitStream(["type": "content_block_stop", "index": .int(index)], messageID)
        blocks.append(["type": "tool_use", "id": .string(toolID), "name": .string(tool.rawValue), "input": input])
        streamMessageEnd(stopReason: "tool_use", messageID: messageID)
        // Claude Code writes one `assistant` message per content block.
        for block in blocks { emit("assistant", assistant(messageID, [block])) }

        if tool.needsApproval, chance(0.6) { emit("control_request", canUseTool(tool, toolID, input, path)) }
        if tool == .bash, chance(0.3) {
            emit("system/task_started", system("task_started", ["task_id": .string("task-" + token(length: 6)), "tool_use_id": .string(toolID),
                                                               "description": input["description"] ?? "", "task_type": "local_bash"]))
        }
        let (content, isError, toolUseResult) = toolResult(tool, input, path: path)
        emit("user", [
            "type": "user",
            "message": ["role": "user", "content": [[
                "tool_use_id": .string(toolID), "type": "tool_result", "content": .string(content), "is_error": .bool(isError),
            ]]],
            "parent_tool_use_id": nil, "session_id": .string(sessionID), "uuid": .string(nextUUID()),
            "timestamp": "2026-01-01T00:00:00.002Z", "tool_use_result": toolUseResult,
        ])
    }

    // MARK: Streaming

    private mutating func streamTextBlock(index: Int64, type: String, field: String, text: String, messageID: String, signature: String? = nil) {
        var start: JSONObject = ["type": .string(type)]
        start.append(field, .string(""))
        emitStream(["type": "content_block_start", "index": .int(index), "content_block": .object(start)], messageID)
        for piece in pieces(of: text, maximum: 12) {
            var delta: JSONObject = ["type": .string(type + "_delta")]
            delta.append(field, .string(piece))
            emitStream(["type": "content_block_delta", "index": .int(index), "delta": .object(delta)], messageID)
        }
        if let signature {
            emitStream(["type": "content_block_delta", "index": .int(index), "delta": ["type": "signature_delta", "signature": .string(signature)]], messageID)
        }
        emitStream(["type": "content_block_stop", "index": .int(index)], messageID)
    }

    private mutating func streamMessageEnd(stopReason: String, messageID: String) {
        emitStream(["type": "message_delta", "delta": ["stop_reason": .string(stopReason), "stop_sequence": nil],
                    "usage": ["output_tokens": .int(Int64.random(in: 5...900, using: &rng))]], messageID)
        emitStream(["type": "message_stop"], messageID)
    }

    private mutating func emitStream(_ event: JSONValue, _ messageID: String) {
        let kind = "stream_event/" + (event["delta"]?["type"]?.stringValue ?? event["type"]?.stringValue ?? "?")
        emit(kind, [
            "type": "stream_event", "event": event, "session_id": .string(sessionID), "parent_tool_use_id": nil,
            "uuid": .string(nextUUID()), "api_message_id": .string(messageID),
        ])
    }

    private mutating func emit(_ kind: String, _ line: JSONValue) {
        let before = stream.count
        JSONWriter.write(line, into: &stream)
        stream.append(UInt8(ascii: "\n"))
        mix.lines[kind, default: 0] += 1
        mix.bytes[kind, default: 0] += stream.count - before
    }

    // MARK: Messages

    private mutating func system(_ subtype: String, _ fields: JSONObject) -> JSONValue {
        var object: JSONObject = ["type": "system", "subtype": .string(subtype)]
        for entry in fields { object.append(entry.key, entry.value) }
        object.append("session_id", .string(sessionID))
        object.append("uuid", .string(nextUUID()))
        return .object(object)
    }

    private func messageStub(_ id: String) -> JSONValue {
        ["id": .string(id), "type": "message", "role": "assistant", "model": "claude-opus-5-5", "content": [],
         "stop_reason": nil, "stop_sequence": nil, "usage": usage(input: 100, output: 1)]
    }

    private mutating func assistant(_ messageID: String, _ content: [JSONValue]) -> JSONValue {
        var message = messageStub(messageID).objectValue!
        message["content"] = .array(content)
        message.append("context_management", nil)
        return [
            "type": "assistant", "message": .object(message), "parent_tool_use_id": nil, "session_id": .string(sessionID),
            "uuid": .string(nextUUID()), "timestamp": "2026-01-01T00:00:00.001Z", "request_id": .string("req_" + token(length: 24)),
        ]
    }

    private func usage(input: Int64, output: Int64) -> JSONValue {
        ["input_tokens": .int(input), "cache_creation_input_tokens": 0, "cache_read_input_tokens": .int(input * 40),
         "output_tokens": .int(output), "service_tier": "standard"]
    }

    private mutating func canUseTool(_ tool: ToolChoice, _ toolID: String, _ input: JSONValue, _ path: String) -> JSONValue {
        let rule = tool == .bash ? (input["command"]?.stringValue ?? "") : path
        return [
            "type": "control_request", "request_id": .string(nextUUID()),
            "request": [
                "subtype": "can_use_tool", "tool_name": .string(tool.rawValue), "display_name": .string(tool.rawValue), "input": input,
                "description": input["description"] ?? .string("\(tool.rawValue) \(path)"),
                "permission_suggestions": [
                    ["type": "addRules", "rules": [["toolName": .string(tool.rawValue), "ruleContent": .string(rule)]],
                     "behavior": "allow", "destination": "localSettings"],
                    ["type": "addDirectories", "directories": .array([.string(cwd)]), "destination": "session"],
                    ["type": "setMode", "mode": "acceptEdits", "destination": "session"],
                ],
                "blocked_path": .string(path), "tool_use_id": .string(toolID),
            ],
        ]
    }

    private mutating func result(_ text: String, turns: Int) -> JSONValue {
        let output = Int64.random(in: 20...4000, using: &rng)
        return [
            "type": "result", "subtype": "success", "is_error": false, "duration_ms": .int(Int64.random(in: 800...90_000, using: &rng)),
            "duration_api_ms": .int(Int64.random(in: 500...80_000, using: &rng)), "num_turns": .int(Int64(turns)),
            "result": .string(text), "stop_reason": "end_turn", "session_id": .string(sessionID),
            "total_cost_usd": .double(Double(output) * 0.000075), "usage": usage(input: 200, output: output),
            "modelUsage": ["claude-opus-5-5": [
                "inputTokens": 200, "outputTokens": .int(output), "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0,
                "webSearchRequests": 0, "costUSD": .double(Double(output) * 0.000075), "contextWindow": 1_000_000, "maxOutputTokens": 128_000,
            ]],
            "permission_denials": [], "terminal_reason": "completed", "uuid": .string(nextUUID()),
        ]
    }

    private mutating func systemInit() -> JSONValue {
        let tools: [JSONValue] = ["Task", "AskUserQuestion", "Bash", "Edit", "EnterPlanMode", "ExitPlanMode", "Glob", "Grep", "NotebookEdit",
                                  "Read", "Skill", "TaskStop", "ToolSearch", "WebFetch", "WebSearch", "Write"]
        let commands: [JSONValue] = ["code-review", "simplify", "doctor", "loop", "init", "mcp", "model", "compact", "config", "context",
                                     "review", "security-review", "usage", "agents", "clear", "color"]
        return [
            "type": "system", "subtype": "init", "cwd": .string(cwd), "session_id": .string(sessionID), "tools": .array(tools),
            "mcp_servers": [], "model": "claude-opus-5-5", "permissionMode": "default", "slash_commands": .array(commands),
            "apiKeySource": "ANTHROPIC_API_KEY", "claude_code_version": "2.1.327", "output_style": "default",
            "agents": ["claude", "Explore", "general-purpose", "Plan", "statusline-setup"], "skills": .array(commands),
            "plugins": [], "uuid": .string(nextUUID()),
        ]
    }

    /// The agent's reply to the host's `initialize`: the slash commands, with long descriptions.
    private mutating func initializeResponse() -> JSONValue {
        let commands = (0..<Int.random(in: 20...50, using: &rng)).map { _ -> JSONValue in
            ["name": .string(Self.words.randomElement(using: &rng)! + "-" + Self.words.randomElement(using: &rng)!),
             "description": .string(prose(sentences: Int.random(in: 1...6, using: &rng))), "argumentHint": "", "builtin": .bool(chance(0.5))]
        }
        return ["type": "control_response", "response": [
            "subtype": "success", "request_id": "req_1_initialize",
            "response": ["commands": .array(commands), "output_style": "default", "models": ["claude-opus-5-5", "claude-sonnet-5"]],
        ]]
    }

    // MARK: Tools

    private enum ToolChoice: String {
        case read = "Read", bash = "Bash", grep = "Grep", edit = "Edit", write = "Write"
        var needsApproval: Bool { self == .bash || self == .edit || self == .write }
        /// Read and Bash are the most frequent tools, then Edit.
        static let draw: [ToolChoice] = [.read, .read, .read, .bash, .bash, .bash, .grep, .edit, .edit, .write]
    }

    private mutating func toolInput(_ tool: ToolChoice, path: String) -> JSONValue {
        switch tool {
        case .read: return chance(0.8) ? ["file_path": .string(path)] : ["file_path": .string(path), "offset": 200, "limit": 400]
        case .bash:
            let command = Self.commands.randomElement(using: &rng)!
            return ["command": .string(command), "description": .string(prose(sentences: 1))]
        case .grep:
            return ["pattern": .string(Self.words.randomElement(using: &rng)! + "\\(.*\\)"), "path": .string(cwd), "output_mode": "content", "-n": true]
        case .edit:
            return ["file_path": .string(path), "old_string": .string(code(lines: Int.random(in: 1...8, using: &rng))),
                    "new_string": .string(code(lines: Int.random(in: 1...12, using: &rng))), "replace_all": false]
        case .write:
            return ["file_path": .string(path), "content": .string(code(lines: Int.random(in: 10...120, using: &rng)))]
        }
    }

    /// The `tool_result` content, whether it is an error, and Claude Code's `tool_use_result`.
    private mutating func toolResult(_ tool: ToolChoice, _ input: JSONValue, path: String) -> (String, Bool, JSONValue) {
        switch tool {
        case .read:
            let lines = sizeDraw()
            let file = code(lines: lines)
            var numbered = ""
            numbered.reserveCapacity(file.utf8.count + lines * 8)
            for (n, line) in file.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let number = String(n + 1)
                numbered += String(repeating: " ", count: max(0, 6 - number.count)) + number + "\t" + line + "\n"
            }
            return (numbered, false, ["type": "text", "file": ["filePath": .string(path), "content": .string(file),
                                                               "numLines": .int(Int64(lines)), "startLine": 1, "totalLines": .int(Int64(lines))]])
        case .bash:
            let output = bashOutput(lines: sizeDraw() / 2 + 1)
            let failed = chance(0.15)
            let content = failed ? "Exit code 1\n" + output : output
            return (content, failed, ["stdout": .string(output), "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false])
        case .grep:
            let hits = Int.random(in: 1...120, using: &rng)
            var text = ""
            for _ in 0..<hits { text += filePath() + ":" + String(Int.random(in: 1...2000, using: &rng)) + ":" + codeLine() + "\n" }
            return (text, false, ["mode": "content", "numFiles": .int(Int64(hits / 3 + 1)), "filenames": [], "content": .string(text),
                                  "numLines": .int(Int64(hits))])
        case .edit:
            let original = code(lines: sizeDraw())
            let patch: [JSONValue] = (input["old_string"]?.stringValue ?? "").split(separator: "\n").map { .string("-" + $0) }
                + (input["new_string"]?.stringValue ?? "").split(separator: "\n").map { .string("+" + $0) }
            return ("The file \(path) has been updated successfully.", false, [
                "filePath": .string(path), "oldString": input["old_string"] ?? "", "newString": input["new_string"] ?? "",
                "originalFile": .string(original),
                "structuredPatch": [["oldStart": 12, "oldLines": 3, "newStart": 12, "newLines": 4, "lines": .array(patch)]],
                "userModified": false, "replaceAll": false,
            ])
        case .write:
            return ("File created successfully at: \(path)", false, [
                "type": "create", "filePath": .string(path), "content": input["content"] ?? "", "structuredPatch": [],
            ])
        }
    }

    /// Lines in a file or an output: mostly small, sometimes a whole large file.
    private mutating func sizeDraw() -> Int {
        let r = Double.random(in: 0..<1, using: &rng)
        if r < 0.55 { return Int.random(in: 5...80, using: &rng) }
        if r < 0.90 { return Int.random(in: 80...600, using: &rng) }
        return Int.random(in: 600...3000, using: &rng)
    }

    // MARK: Text

    private mutating func code(lines: Int) -> String {
        var text = ""
        text.reserveCapacity(lines * 40)
        for i in 0..<lines {
            if i > 0 { text += "\n" }
            text += codeLine()
        }
        return text
    }

    private mutating func codeLine() -> String {
        let indent = String(repeating: chance(0.1) ? "\t" : "    ", count: Int.random(in: 0...3, using: &rng))
        return indent + Self.codeLines.randomElement(using: &rng)!
    }

    private mutating func bashOutput(lines: Int) -> String {
        var text = ""
        for _ in 0..<lines { text += Self.outputLines.randomElement(using: &rng)! + "\n" }
        return text
    }

    private mutating func prose(sentences: Int) -> String {
        var text = ""
        for s in 0..<sentences {
            if s > 0 { text += chance(0.2) ? "\n\n" : " " }
            let words = Int.random(in: 4...22, using: &rng)
            for w in 0..<words {
                if w > 0 { text += " " }
                text += Self.words.randomElement(using: &rng)!
            }
            text += chance(0.1) ? ": `swift build`." : "."
        }
        return text
    }

    /// Splits text the way the API streams it: a few characters at a time, never inside a character.
    private mutating func pieces(of text: String, maximum: Int) -> [String] {
        var result: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            let n = Int.random(in: 1...maximum, using: &rng)
            result.append(String(rest.prefix(n)))
            rest = rest.dropFirst(n)
        }
        return result
    }

    private mutating func filePath() -> String {
        let dirs = ["Sources/NucleicProtocol", "Sources/NucleicAdapters", "Tests/NucleicAdaptersTests", "docs", "web/src/components", "scripts"]
        let exts = [".swift", ".swift", ".md", ".ts", ".py", ".json"]
        return cwd + "/" + dirs.randomElement(using: &rng)! + "/" + Self.words.randomElement(using: &rng)!.capitalizedFirst
            + Self.words.randomElement(using: &rng)!.capitalizedFirst + exts.randomElement(using: &rng)!
    }

    private mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }

    private mutating func token(length: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<length).map { _ in alphabet.randomElement(using: &rng)! })
    }

    private mutating func nextUUID() -> String {
        uuidCounter += 1
        return uuid(uuidCounter)
    }

    private mutating func nextMessageID() -> String { "msg_01" + token(length: 22) }

    private func uuid(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }

    // MARK: Corpora

    static let words = [
        "the", "parser", "reads", "a", "line", "and", "then", "checks", "whether", "session", "approval", "tool", "result", "build",
        "test", "framer", "codec", "bytes", "stream", "event", "value", "object", "key", "error", "file", "worktree", "branch",
        "merge", "commit", "I'll", "let", "me", "look", "at", "this", "first", "now", "fix", "run", "passes", "fails", "because",
        "café", "naïve", "résumé", "—", "→", "✓", "😀", "日本語", "über", "Straße", "ok", "so", "it", "is", "not", "we", "should",
    ]

    static let codeLines = [
        "import NucleicProtocol",
        "public struct LineFramer: Sendable {",
        "func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {",
        "let message = \"unexpected \\\"\\(token)\\\" at byte \\(offset)\"",
        "guard let value = object[\"type\"]?.stringValue else { return nil }",
        "return CodecOutput(events: [.notice(level: .warning, message: \"Claude refused\", code: \"requestFailed\")])",
        "}",
        "",
        "// Café — naïve résumé handling keeps UTF-8 as it is: “quotes” and 日本語 too.",
        "print(\"✓ all tests passed 🎉\")",
        "def handle(self, request):",
        "raise ValueError(f\"bad path: {path!r}\")",
        "if (line.length > 0 && line[0] === '{') { return JSON.parse(line); }",
        "const re = /\\\\d+\\.\\d*/g;  // a backslash-heavy regex",
        "<div className=\"header\">{title}</div>",
        "for (i, entry) in object.entries.enumerated() where entry.key == key {",
        "    case .string(let s): writeString(s, into: &out)",
        "#expect(try JSONParser.parse(#\"\"\\ud83d\\ude00\"\"#) == \"😀\")",
        "SELECT id, name FROM sessions WHERE status = 'running' ORDER BY created_at DESC;",
        "self.assertEqual(result[\"stop_reason\"], \"end_turn\")",
        "/// A JSON value that keeps object key order and integer exactness.",
        "let ms = millisecondsSince1970 % 86_400_000",
    ]

    static let commands = [
        "swift build 2>&1 | tail -50", "swift test --filter NucleicProtocolTests", "ls -la Fixtures/claude",
        "git status --short && git diff --stat", "npm test -- --watch=false", "grep -rn \"JSONParser\" Sources | head -40",
        "python3 -m pytest -q tests/", "cat Package.swift",
    ]

    static let outputLines = [
        "\u{1B}[32m✓\u{1B}[0m JSONParserTests.parsesEveryKindOfValue (0.002 seconds)",
        "\u{1B}[31m✘\u{1B}[0m ClaudeCodecTests.deniedToolIsDeclined: expectation failed: (events → [...]) == expected",
        "[12/148] Compiling NucleicAdapters ClaudeCodec+Receive.swift",
        "Building for debugging...",
        "warning: 'parse' is deprecated: use parse(_:) instead",
        "npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.",
        "  ●  renders the session list › shows \"NEEDS YOU\" first",
        "drwxr-xr-x  5 root root   4096 Nov 30 08:46 Sources",
        "-rw-r--r--  1 root root  35914 Nov 30 08:50 allow-always.jsonl",
        "Test Suite 'All tests' passed at 2026-11-30 07:26:09.145.",
        "\tat Object.<anonymous> (/repo/web/src/session.test.ts:42:17)",
        "error: no such file or directory: 'Sources/Missing.swift'",
    ]
}

extension String {
    fileprivate var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
