import NucleicProtocol

/// A long Claude Code session as a replay fixture (docs/FIXTURES.md), generated from a seed, for
/// `nucleic-bench sessions`.
///
/// One turn: the host's `initialize` request and prompt, then model calls until `deltas` partials
/// have been written. Each call streams an optional thinking block and a text block as many small
/// `thinking_delta` / `text_delta` partials (one event each on the host), then a tool call (Read,
/// whose result comes back as a `user` message) or, for the last call, the end of the turn and a
/// `result`. The first tool call is a Bash call that needs a person: a `can_use_tool` request
/// whose recorded answer is "allow, input unchanged" (what `host.respond(…, .allow)` sends). The
/// shapes are those of `Fixtures/claude/partial-tool.jsonl`.
///
/// `t` advances in bursts of `burst` records, each `burst / linesPerSecond` seconds after the
/// last: with `--speed max` it is ignored, with `--speed recorded` the replay agent writes about
/// `linesPerSecond` lines a second.
struct SessionFixture {
    struct Summary {
        var records = 0
        var deltas = 0
        var bytes = 0
        var approvals = 0
        var modelCalls = 0
    }

    static let sessionID = "00000000-0000-4000-8000-000000000001"

    private var rng: SplitMix64
    private var out: [UInt8] = []
    private let file: BufferedFile
    private let linesPerSecond: Double
    private let burst = 100
    private var uuidCounter = 1
    private(set) var summary = Summary()

    /// Writes the fixture to `path`.
    static func write(to path: String, deltas: Int, seed: UInt64, linesPerSecond: Double = 1000) throws(BenchError) -> Summary {
        var generator = SessionFixture(file: try BufferedFile(path), seed: seed, linesPerSecond: linesPerSecond)
        try generator.generate(deltas: deltas)
        try generator.file.close()
        return generator.summary
    }

    private init(file: BufferedFile, seed: UInt64, linesPerSecond: Double) {
        self.file = file
        self.linesPerSecond = linesPerSecond
        rng = SplitMix64(seed: seed)
    }

    // MARK: The session

    private mutating func generate(deltas target: Int) throws(BenchError) {
        let header: JSONValue = [
            "fixture": 1, "backend": "claude", "cli": "2.1.327",
            "argv": ["claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                     "--permission-prompt-tool", "stdio", "--include-partial-messages"],
            "scenario": .string("nucleic-bench sessions: \(target) partials"),
        ]
        try file.write(JSONWriter.string(header))
        try record(.in, ["type": "control_request", "request_id": "req_1_initialize", "request": ["subtype": "initialize"]])
        try record(.in, ["type": "user", "message": ["role": "user", "content": "Walk the codebase and summarise it."]])
        try record(.out, ["type": "control_response", "response": ["subtype": "success", "request_id": "req_1_initialize",
                                                                  "response": ["commands": [], "models": []]]])
        try record(.out, [
            "type": "system", "subtype": "init", "cwd": "/tmp/nucleic-fixture/repo", "session_id": .string(Self.sessionID),
            "tools": ["Bash", "Edit", "Read", "Write"], "mcp_servers": [], "model": "claude-opus-5-5",
            "permissionMode": "default", "apiKeySource": "none", "output_style": "default", "uuid": .string(nextUUID()),
        ])
        var call = 0
        while summary.deltas < target {
            try modelCall(call, last: false)
            call += 1
        }
        try modelCall(call, last: true)
        try record(.out, [
            "type": "result", "subtype": "success", "is_error": false, "duration_ms": 1000, "duration_api_ms": 900,
            "num_turns": .int(Int64(call + 1)), "result": "Done.", "stop_reason": "end_turn", "session_id": .string(Self.sessionID),
            "total_cost_usd": 0.25, "usage": ["input_tokens": 2000, "output_tokens": .int(Int64(summary.deltas * 3))],
            "uuid": .string(nextUUID()),
        ])
        summary.modelCalls = call + 1
    }

    private mutating func modelCall(_ call: Int, last: Bool) throws(BenchError) {
        let messageID = "msg_bench_\(call)"
        try record(.out, ["type": "system", "subtype": "status", "status": "requesting", "session_id": .string(Self.sessionID),
                          "uuid": .string(nextUUID())])
        try stream(["type": "message_start", "message": [
            "id": .string(messageID), "type": "message", "role": "assistant", "model": "claude-opus-5-5", "content": [],
            "stop_reason": nil, "stop_sequence": nil, "usage": ["input_tokens": 100, "output_tokens": 1],
        ]], messageID)
        var index: Int64 = 0
        if Int.random(in: 0..<3, using: &rng) == 0 {
            try block(index, type: "thinking", deltas: Int.random(in: 20...80, using: &rng), messageID)
            index += 1
        }
        try block(index, type: "text", deltas: Int.random(in: 40...200, using: &rng), messageID)
        index += 1
        if last {
            try stream(["type": "message_delta", "delta": ["stop_reason": "end_turn", "stop_sequence": nil], "usage": ["output_tokens": 20]], messageID)
            try stream(["type": "message_stop"], messageID)
            return
        }
        try toolCall(index, call: call, needsApproval: call == 0, messageID)
    }

    /// A streamed thinking or text block: start, partials, the `assistant` message, stop.
    private mutating func block(_ index: Int64, type: String, deltas: Int, _ messageID: String) throws(BenchError) {
        let field = type == "thinking" ? "thinking" : "text"
        var start: JSONObject = ["type": .string(type), field: ""]
        if type == "thinking" { start["signature"] = "" }
        try stream(["type": "content_block_start", "index": .int(index), "content_block": .object(start)], messageID)
        var text = ""
        for _ in 0..<deltas {
            let piece = phrase()
            text += piece
            try stream(["type": "content_block_delta", "index": .int(index),
                        "delta": ["type": .string(type + "_delta"), field: .string(piece)]], messageID)
            summary.deltas += 1
        }
        var whole: JSONObject = ["type": .string(type), field: .string(text)]
        if type == "thinking" { whole["signature"] = "c2lnbmF0dXJl" }
        try assistant(messageID, [.object(whole)])
        try stream(["type": "content_block_stop", "index": .int(index)], messageID)
    }

    /// A tool call streamed as `input_json_delta`s, announced again by `assistant`, then its
    /// result. The Bash call asks for approval first.
    private mutating func toolCall(_ index: Int64, call: Int, needsApproval: Bool, _ messageID: String) throws(BenchError) {
        let toolID = "toolu_bench_\(call)"
        let name = needsApproval ? "Bash" : "Read"
        let input: JSONValue = needsApproval
            ? ["command": "ls -la src", "description": "List the sources"]
            : ["file_path": .string("/tmp/nucleic-fixture/repo/src/module\(call % 97)/File\(call).swift")]
        try stream(["type": "content_block_start", "index": .int(index),
                    "content_block": ["type": "tool_use", "id": .string(toolID), "name": .string(name), "input": [:]]], messageID)
        let json = Array(JSONWriter.string(input).utf8)
        let cut = [0, json.count / 3, 2 * json.count / 3, json.count]
        for i in 0..<3 {
            try stream(["type": "content_block_delta", "index": .int(index),
                        "delta": ["type": "input_json_delta", "partial_json": .string(String(decoding: json[cut[i]..<cut[i + 1]], as: UTF8.self))]],
                       messageID)
        }
        try assistant(messageID, [["type": "tool_use", "id": .string(toolID), "name": .string(name), "input": input]])
        try stream(["type": "content_block_stop", "index": .int(index)], messageID)
        try stream(["type": "message_delta", "delta": ["stop_reason": "tool_use", "stop_sequence": nil], "usage": ["output_tokens": 20]], messageID)
        if needsApproval {
            let requestID = nextUUID()
            try record(.out, ["type": "control_request", "request_id": .string(requestID), "request": [
                "subtype": "can_use_tool", "tool_name": .string(name), "display_name": .string(name), "input": input,
                "description": "List the sources", "tool_use_id": .string(toolID),
            ]])
            try record(.in, ["type": "control_response", "response": [
                "subtype": "success", "request_id": .string(requestID), "response": ["behavior": "allow", "updatedInput": input],
            ]])
            summary.approvals += 1
        }
        try stream(["type": "message_stop"], messageID)
        var lines: [String] = []
        for n in 0..<Int.random(in: 5...30, using: &rng) { lines.append("\(n + 1)\t" + phrase() + phrase()) }
        let output = needsApproval ? "total 8\ndrwxr-xr-x 2 user user 4096 Jan  1 00:00 ." : lines.joined(separator: "\n")
        try record(.out, [
            "type": "user",
            "message": ["role": "user", "content": [["tool_use_id": .string(toolID), "type": "tool_result", "content": .string(output), "is_error": false]]],
            "parent_tool_use_id": nil, "session_id": .string(Self.sessionID), "uuid": .string(nextUUID()),
        ])
    }

    // MARK: Lines

    private mutating func stream(_ event: JSONValue, _ messageID: String) throws(BenchError) {
        try record(.out, ["type": "stream_event", "event": event, "session_id": .string(Self.sessionID), "parent_tool_use_id": nil,
                          "uuid": .string(nextUUID()), "api_message_id": .string(messageID)])
    }

    private mutating func assistant(_ messageID: String, _ content: [JSONValue]) throws(BenchError) {
        try record(.out, [
            "type": "assistant",
            "message": ["id": .string(messageID), "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                        "content": .array(content), "stop_reason": nil, "usage": ["input_tokens": 100, "output_tokens": 1]],
            "parent_tool_use_id": nil, "session_id": .string(Self.sessionID), "uuid": .string(nextUUID()),
        ])
    }

    private enum Direction: String { case out, `in` }

    private mutating func record(_ direction: Direction, _ line: JSONValue) throws(BenchError) {
        let t = Double(summary.records / burst * burst) / linesPerSecond
        let wrapped: JSONValue = ["t": .double((t * 1000).rounded() / 1000), "dir": .string(direction.rawValue),
                                  "line": .string(JSONWriter.string(line))]
        let text = JSONWriter.string(wrapped)
        summary.records += 1
        summary.bytes += text.utf8.count + 1
        try file.write(text)
    }

    private mutating func nextUUID() -> String {
        uuidCounter += 1
        let hex = String(uuidCounter, radix: 16)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }

    /// One to four words with their spaces; now and then punctuation, a quote, a newline or
    /// non-ASCII, as model output has.
    private mutating func phrase() -> String {
        var text = ""
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            text += Self.words[Int.random(in: 0..<Self.words.count, using: &rng)] + " "
        }
        switch Int.random(in: 0..<20, using: &rng) {
        case 0: text += "\n"
        case 1: text += "\"quoted\" "
        case 2: text += "— "
        case 3: text += "`code()` "
        default: break
        }
        return text
    }

    static let words = [
        "the", "session", "host", "writes", "each", "event", "to", "its", "transcript", "and", "journal", "before", "any",
        "subscriber", "sees", "it", "worktree", "branch", "approval", "agent", "codec", "line", "frame", "naïve", "café",
        "résumé", "index", "offset", "seq", "store", "SQLite", "WAL", "pipe", "stdout", "stream", "partial", "delta", "tool",
        "Read", "Bash", "result", "module", "function", "returns", "value", "struct", "actor", "async", "await", "→",
    ]
}
