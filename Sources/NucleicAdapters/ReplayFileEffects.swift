public import NucleicProtocol

/// What a recorded agent did to the files of its working folder, so the replay agent can do the
/// same in the folder it runs in: a replayed session leaves the diff the real run left.
///
/// Worked out from the recording alone, before playing it: for each `out` record that reports a
/// file tool as done (a Claude `tool_result` for a Write, Edit or MultiEdit that is not an error;
/// a Codex `item/completed` fileChange with status `completed`), the changes to make before that
/// line is written, as the real CLI made them before reporting. Paths are made relative to the
/// recording's working folder (Claude's `system/init` `cwd`, Codex's `thread/start` `cwd`); a
/// path outside it is never touched. Commands (Bash, Codex `commandExecution`) are not re-run:
/// their effects on files are not replayed.
public enum ReplayFileEffects {
    /// One change to one file, relative to the working folder.
    public enum Effect: Sendable, Hashable {
        /// Create or overwrite with `content` (Claude Write, Codex add).
        case write(path: String, content: String)
        /// Replace `old` with `new`: the first occurrence, or every one (Claude Edit).
        case replace(path: String, old: String, new: String, all: Bool)
        /// Apply unified-diff hunks (Codex update), then move the file to `moveTo` if given.
        case patch(path: String, hunks: String, moveTo: String?)
        /// Remove the file (Codex delete).
        case delete(path: String)

        public var path: String {
            switch self {
            case .write(let p, _), .replace(let p, _, _, _), .patch(let p, _, _), .delete(let p): p
            }
        }
    }

    /// Why an effect cannot be applied to a file's current content.
    public struct ApplyError: Error, Sendable, Hashable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The effects to carry out before writing each `out` record, by record number.
    public static func plan(_ script: ReplayScript) -> [Int: [Effect]] {
        let lines = script.records.map { record in (record, try? JSONParser.parse(record.line)) }
        let cwd = lines.lazy.compactMap { record, json in json.flatMap { workingFolder(of: $0, direction: record.direction, backend: script.backend) } }.first
        var plan: [Int: [Effect]] = [:]
        var toolInputs: [String: (name: String, input: JSONValue)] = [:]
        for (record, json) in lines where record.direction == .out {
            guard let json else { continue }
            var effects: [Effect] = []
            switch script.backend {
            case .claude:
                if json["type"]?.stringValue == "assistant" {
                    for block in json["message"]?["content"]?.arrayValue ?? [] where block["type"]?.stringValue == "tool_use" {
                        if let id = block["id"]?.stringValue, let name = block["name"]?.stringValue {
                            toolInputs[id] = (name, block["input"] ?? .null)
                        }
                    }
                } else if json["type"]?.stringValue == "user" {
                    for block in json["message"]?["content"]?.arrayValue ?? [] where block["type"]?.stringValue == "tool_result" {
                        guard block["is_error"]?.boolValue != true, let id = block["tool_use_id"]?.stringValue,
                            let tool = toolInputs.removeValue(forKey: id) else { continue }
                        effects += claudeEffects(tool.name, tool.input, cwd: cwd)
                    }
                }
            case .codex:
                let item = json["params"]?["item"]
                if json["method"]?.stringValue == "item/completed", item?["type"]?.stringValue == "fileChange",
                    item?["status"]?.stringValue == "completed"
                {
                    for change in item?["changes"]?.arrayValue ?? [] { effects += codexEffects(change, cwd: cwd) }
                }
            case .acp:
                // The host writes an ACP agent's files (fs/write_text_file): nothing to replay here.
                break
            }
            if !effects.isEmpty { plan[record.number] = effects }
        }
        return plan
    }

    /// The file's content after `effect`, from its content before (nil: it does not exist).
    /// Nil when the effect removes it; for a move, the content goes to ``destination(of:)``.
    public static func apply(_ effect: Effect, to content: String?) throws(ApplyError) -> String? {
        switch effect {
        case .write(_, let text):
            return text
        case .delete:
            return nil
        case .replace(let path, let old, let new, let all):
            guard let content else { throw ApplyError(message: "\(path) does not exist, so its edit cannot be replayed") }
            guard !old.isEmpty, let range = content.firstRange(of: old) else {
                throw ApplyError(message: "\(path) does not contain the text the recorded edit replaces")
            }
            if all { return content.replacing(old, with: new) }
            var edited = content
            edited.replaceSubrange(range, with: new)
            return edited
        case .patch(let path, let hunks, _):
            return try applyHunks(hunks, to: content ?? "", path: path)
        }
    }

    /// Where the file ends up: its path, or the move's target.
    public static func destination(of effect: Effect) -> String {
        if case .patch(_, _, let moveTo?) = effect { return moveTo }
        return effect.path
    }

    // MARK: Reading the recording

    static func workingFolder(of json: JSONValue, direction: ReplayScript.Record.Direction, backend: ReplayScript.Backend) -> String? {
        switch backend {
        case .claude:
            return direction == .out && json["type"]?.stringValue == "system" && json["subtype"]?.stringValue == "init"
                ? json["cwd"]?.stringValue : nil
        case .codex:
            if direction == .in, json["method"]?.stringValue == "thread/start" || json["method"]?.stringValue == "thread/resume" {
                return json["params"]?["cwd"]?.stringValue
            }
            return nil
        case .acp:
            return nil
        }
    }

    static func claudeEffects(_ name: String, _ input: JSONValue, cwd: String?) -> [Effect] {
        guard let path = relative(input["file_path"]?.stringValue, cwd: cwd) else { return [] }
        switch name {
        case "Write":
            return [.write(path: path, content: input["content"]?.stringValue ?? "")]
        case "Edit":
            return [.replace(path: path, old: input["old_string"]?.stringValue ?? "", new: input["new_string"]?.stringValue ?? "",
                             all: input["replace_all"]?.boolValue ?? false)]
        case "MultiEdit":
            return (input["edits"]?.arrayValue ?? []).map {
                .replace(path: path, old: $0["old_string"]?.stringValue ?? "", new: $0["new_string"]?.stringValue ?? "",
                         all: $0["replace_all"]?.boolValue ?? false)
            }
        default:
            return []
        }
    }

    static func codexEffects(_ change: JSONValue, cwd: String?) -> [Effect] {
        guard let path = relative(change["path"]?.stringValue, cwd: cwd) else { return [] }
        let diff = change["diff"]?.stringValue ?? ""
        switch change["kind"]?["type"]?.stringValue {
        case "add": return [.write(path: path, content: diff)]
        case "delete": return [.delete(path: path)]
        case "update":
            let moved = change["kind"]?["move_path"]?.stringValue
            if moved != nil, relative(moved, cwd: cwd) == nil { return [] }
            return [.patch(path: path, hunks: diff, moveTo: relative(moved, cwd: cwd))]
        default: return []
        }
    }

    /// `path` relative to the recording's folder: nil when it lies outside (or climbs out of
    /// it with `..`), so a replay never writes outside its own working folder.
    static func relative(_ path: String?, cwd: String?) -> String? {
        guard let path, !path.isEmpty else { return nil }
        var rest = path
        if path.hasPrefix("/") {
            guard var folder = cwd else { return nil }
            if !folder.hasSuffix("/") { folder += "/" }
            guard path.hasPrefix(folder) else { return nil }
            rest = String(path.dropFirst(folder.count))
        }
        let parts = rest.split(separator: "/").filter { $0 != "." }
        guard !parts.isEmpty, !parts.contains("..") else { return nil }
        return parts.joined(separator: "/")
    }

    // MARK: Unified hunks

    /// Applies `@@ -a,b +c,d @@` hunks in order. Each hunk's old lines must appear at or after
    /// the end of the previous one (searched from its stated line, then onwards, as `patch`
    /// allows an offset).
    static func applyHunks(_ text: String, to content: String, path: String) throws(ApplyError) -> String {
        var lines = UnifiedDiff.lines(content)
        let endsWithNewline = content.isEmpty || content.hasSuffix("\n")
        var newlineAtEnd = endsWithNewline
        var hunks: [(start: Int, old: [String], new: [String])] = []
        for line in UnifiedDiff.lines(text) {
            if line.hasPrefix("@@") {
                let start = line.split(separator: " ").dropFirst().first.flatMap { Int($0.dropFirst().split(separator: ",").first ?? "") } ?? 1
                hunks.append((start, [], []))
            } else if line.hasPrefix("\\") {
                newlineAtEnd = false  // "\ No newline at end of file" after the last line
            } else if !hunks.isEmpty, let mark = line.first {
                let body = String(line.dropFirst())
                switch mark {
                case " ": hunks[hunks.count - 1].old.append(body); hunks[hunks.count - 1].new.append(body)
                case "-": hunks[hunks.count - 1].old.append(body)
                case "+": hunks[hunks.count - 1].new.append(body)
                default: break
                }
            }
        }
        var offset = 0
        var searchFrom = 0
        for hunk in hunks {
            let wanted = max(searchFrom, hunk.start - 1 + offset)
            guard let at = find(hunk.old, in: lines, from: wanted) ?? find(hunk.old, in: lines, from: searchFrom) else {
                throw ApplyError(message: "\(path) does not match the recorded patch (hunk at line \(hunk.start))")
            }
            lines.replaceSubrange(at..<(at + hunk.old.count), with: hunk.new)
            offset += hunk.new.count - hunk.old.count
            searchFrom = at + hunk.new.count
        }
        guard !lines.isEmpty else { return "" }
        return lines.joined(separator: "\n") + (newlineAtEnd ? "\n" : "")
    }

    private static func find(_ needle: [String], in lines: [String], from start: Int) -> Int? {
        if needle.isEmpty { return min(max(0, start), lines.count) }
        guard lines.count >= needle.count else { return nil }
        var index = max(0, start)
        while index + needle.count <= lines.count {
            if Array(lines[index..<(index + needle.count)]) == needle { return index }
            index += 1
        }
        return nil
    }
}
