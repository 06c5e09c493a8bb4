/// Object keys Claude Code's stream-json and Codex's app-server protocol write on every line.
///
/// Keys are most of the strings in an agent line and nearly all of them come from a small set:
/// returning the table's string (a literal: no validation, no allocation, no reference count)
/// instead of decoding the bytes again takes ~10% off a parse of Claude stream-json. Any other key
/// is decoded as usual, so the table changes speed, never results. Collected from
/// `Fixtures/*/*.jsonl` and the tool results Claude Code reports; keys of 32 bytes or more are
/// left out (`parseKey` reads four words, the closing quote included).
struct KnownKeys: @unchecked Sendable {  // read-only after init
    static let table = KnownKeys([
        // Claude Code stream-json and control protocol
        "type", "subtype", "session_id", "uuid", "parent_tool_use_id", "message", "id", "role", "model", "content",
        "text", "thinking", "signature", "name", "input", "tool_use_id", "is_error", "stop_reason", "stop_sequence",
        "usage", "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
        "cache_creation", "ephemeral_1h_input_tokens", "ephemeral_5m_input_tokens", "service_tier",
        "server_tool_use", "web_search_requests", "web_fetch_requests", "output_tokens_details", "thinking_tokens",
        "inference_geo", "iterations", "speed", "fallback_credit", "context_management", "timestamp", "request_id",
        "event", "index", "delta", "content_block", "partial_json", "api_message_id", "ttft_ms", "thinking_display",
        "tool_use_result", "tool_result_meta", "permission_decision", "decision", "source", "stdout", "stderr",
        "interrupted", "isImage", "noOutputExpected", "request", "response", "tool_name", "display_name",
        "description", "permission_suggestions", "rules", "toolName", "ruleContent", "behavior", "destination",
        "directories", "mode", "blocked_path", "decision_reason", "updatedInput", "result", "num_turns",
        "duration_ms", "duration_api_ms", "total_cost_usd", "modelUsage", "permission_denials", "terminal_reason",
        "api_error_status", "errors", "error", "status", "cwd", "tools", "mcp_servers", "permissionMode",
        "slash_commands", "apiKeySource", "claude_code_version", "output_style", "agents", "skills", "plugins",
        "inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens", "webSearchRequests",
        "costUSD", "contextWindow", "maxOutputTokens", "estimated_tokens", "estimated_tokens_delta", "task_id",
        "task_type", "is_backgrounded", "attempt", "max_retries", "retry_delay_ms", "error_status", "state",
        "commands", "argumentHint", "builtin", "questions", "question", "header", "options", "label", "multiSelect",
        "answers",
        // Claude Code tool inputs and results
        "command", "file_path", "old_string", "new_string", "replace_all", "pattern", "path", "output_mode",
        "offset", "limit", "file", "filePath", "numLines", "startLine", "totalLines", "oldString", "newString",
        "originalFile", "structuredPatch", "oldStart", "oldLines", "newStart", "newLines", "lines", "userModified",
        "replaceAll", "numFiles", "filenames", "todos", "activeForm", "url", "prompt",
        // Codex app-server
        "jsonrpc", "method", "params", "threadId", "turnId", "itemId", "item", "items", "turn", "thread",
        "emittedAtMs", "startedAtMs", "completedAtMs", "durationMs", "aggregatedOutput", "exitCode", "processId",
        "commandActions", "changes", "diff", "kind", "phase", "summary", "details", "tokenUsage", "total", "last",
        "totalTokens", "cachedInputTokens", "reasoningOutputTokens", "modelContextWindow", "rateLimits", "primary",
        "secondary", "usedPercent", "windowDurationMins", "resetsAt", "requestId", "reason", "availableDecisions",
        "proposedExecpolicyAmendment", "codexErrorInfo", "additionalDetails", "willRetry", "createdAt", "updatedAt",
        "preview", "modelProvider", "sessionId", "approvalPolicy", "sandbox", "reasoningEffort", "value", "text_elements",
    ])

    private struct Entry {
        /// The key's UTF-8 in four little-endian words, zero-padded.
        var words: (UInt64, UInt64, UInt64, UInt64)
        var length: Int
        var key: String
    }

    // Plain buffers, not arrays: a lookup then costs no reference counting. Allocated once, when
    // the table is first used, and kept for the life of the process.
    /// Open addressing, linear probing: 0 is empty, else 1 + an index into `entries`.
    private let slots: UnsafeMutablePointer<UInt16>
    private let entries: UnsafeMutablePointer<Entry>
    private let mask: Int
    private let shift: UInt64

    private init(_ list: [String]) {
        var bits: UInt64 = 6
        while 1 << bits < list.count * 4 { bits += 1 }
        var slots = [UInt16](repeating: 0, count: 1 << bits)
        var entries: [Entry] = []
        for key in list where !key.isEmpty && key.utf8.count < 32 {
            var bytes = Array(key.utf8)
            bytes += [UInt8](repeating: 0, count: 32 - bytes.count)
            let word = { (i: Int) in bytes[8 * i..<8 * i + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
            let entry = Entry(words: (word(0), word(1), word(2), word(3)), length: key.utf8.count, key: key)
            var slot = Self.slot(entry.words, entry.length, shift: 64 - bits)
            var duplicate = false
            while slots[slot] != 0 {
                if entries[Int(slots[slot]) - 1].key == key { duplicate = true; break }
                slot = (slot + 1) & (slots.count - 1)
            }
            if duplicate { continue }
            entries.append(entry)
            slots[slot] = UInt16(entries.count)
        }
        self.slots = .allocate(capacity: slots.count)
        self.slots.initialize(from: slots, count: slots.count)
        self.entries = .allocate(capacity: entries.count)
        self.entries.initialize(from: entries, count: entries.count)
        mask = slots.count - 1
        shift = 64 - bits
    }

    @inline(__always) private static func slot(_ w: (UInt64, UInt64, UInt64, UInt64), _ length: Int, shift: UInt64) -> Int {
        let h = (w.0 &* 0x9E37_79B9_7F4A_7C15) ^ (w.1 &* 0xC2B2_AE3D_27D4_EB4F) ^ (w.2 &* 0x1656_67B1_9E37_79F9)
            ^ (w.3 &* 0x85EB_CA77_C2B2_AE63) ^ UInt64(length)
        return Int(truncatingIfNeeded: (h &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The key whose UTF-8 is `words` (zero-padded after `length` bytes), if it is in the table.
    @inline(__always) func key(_ words: (UInt64, UInt64, UInt64, UInt64), _ length: Int) -> String? {
        var slot = Self.slot(words, length, shift: shift)
        while true {
            let k = Int(slots[slot])
            guard k != 0 else { return nil }
            let e = entries + (k - 1)
            if e.pointee.length == length, e.pointee.words.0 == words.0, e.pointee.words.1 == words.1,
                e.pointee.words.2 == words.2, e.pointee.words.3 == words.3
            {
                return e.pointee.key
            }
            slot = (slot + 1) & mask
        }
    }
}
