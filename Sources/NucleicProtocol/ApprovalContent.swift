/// What an approval decides, as lines of text: the same card for `nucleic approvals`, `log`,
/// `log --follow` and any other client (a `watch` view, a phone).
///
/// A Write shows the file it creates as a unified diff, an Edit or MultiEdit its change, a Codex
/// file change each file's patch, a shell command its whole text, a question its options,
/// numbered (the numbers `nucleic answer` takes). Long bodies are cut at `maximumLines`, with
/// the count of lines left out.
public struct ApprovalContent: Sendable, Hashable {
    /// One line: what is asked (`Write notes.txt`, `Bash`, `Question`).
    public var headline: String
    /// The content, already cut.
    public var body: [String]
    /// Lines of the content left out of `body`.
    public var omittedLines: Int

    public init(headline: String, body: [String], omittedLines: Int = 0) {
        self.headline = headline
        self.body = body
        self.omittedLines = omittedLines
    }

    /// The card as lines: the headline, the body, and "… N more lines" when it was cut.
    public var lines: [String] {
        [headline] + body + (omittedLines > 0 ? ["… \(omittedLines) more line\(omittedLines == 1 ? "" : "s")"] : [])
    }

    /// The card of `request`. Paths inside `cwd` (the session's worktree) are shown relative to
    /// it, and so are those inside `otherRoots` (a replayed session's recorded folder).
    public init(_ request: ApprovalRequest, cwd: String? = nil, otherRoots: [String] = [], maximumLines: Int = 40) {
        let input = request.input
        let roots = [cwd].compactMap { $0 } + otherRoots
        func path(_ key: String = "file_path") -> String { Self.relative(input[key]?.stringValue ?? "?", to: roots) }
        var headline = request.toolName
        var body: [String]
        if let question = request.question {
            headline = question.questions.count == 1 ? "Question" : "\(question.questions.count) questions"
            body = Self.questionLines(question)
        } else {
            switch request.toolName {
            case "Write":
                headline = "Write \(path())"
                body = UnifiedDiff.file(path: path(), old: nil, new: input["content"]?.stringValue ?? "")
                if body.isEmpty { body = ["(an empty file)"] }
            case "Edit":
                headline = "Edit \(path())" + (input["replace_all"]?.boolValue == true ? " (every occurrence)" : "")
                body = Self.headers(path(), path())
                    + UnifiedDiff.hunks(old: input["old_string"]?.stringValue ?? "", new: input["new_string"]?.stringValue ?? "")
            case "MultiEdit":
                let edits = input["edits"]?.arrayValue ?? []
                headline = "Edit \(path()) (\(edits.count) change\(edits.count == 1 ? "" : "s"))"
                body = Self.headers(path(), path())
                for edit in edits {
                    body += UnifiedDiff.hunks(old: edit["old_string"]?.stringValue ?? "", new: edit["new_string"]?.stringValue ?? "")
                }
            case "apply_patch":
                let changes = input["changes"]?.arrayValue ?? []
                headline = "Change \(changes.count) file\(changes.count == 1 ? "" : "s")"
                body = changes.flatMap { Self.patchLines($0, roots: roots) }
            default:
                if let command = input["command"] {
                    let text = command.arrayValue.map { $0.map(\.textOrJSON).joined(separator: " ") } ?? command.textOrJSON
                    body = UnifiedDiff.lines(text).enumerated().map { ($0.offset == 0 ? "$ " : "  ") + $0.element }
                    if let description = input["description"]?.stringValue { body.append("# \(description)") }
                    if let dir = input["cwd"]?.stringValue, !roots.contains(dir) { body.append("(in \(dir))") }
                } else {
                    body = [JSONWriter.string(input)]
                }
            }
        }
        if let reason = request.reason, !reason.isEmpty { body.append("why: \(reason)") }
        let cut = max(1, maximumLines)
        self.init(headline: headline, body: Array(body.prefix(cut)), omittedLines: max(0, body.count - cut))
    }

    /// Each question with its options numbered from 1, and how to answer otherwise.
    public static func questionLines(_ question: StructuredQuestion) -> [String] {
        var lines: [String] = []
        for item in question.questions {
            lines.append("? \(item.header.map { "[\($0)] " } ?? "")\(item.question)\(item.multiSelect ? " (one or more)" : "")")
            for (number, option) in item.options.enumerated() {
                lines.append("  \(number + 1). \(option.label)\(option.description.map { " — \($0)" } ?? "")")
            }
            if item.allowsOther { lines.append("  or type an answer of your own") }
        }
        return lines
    }

    /// One Codex file change: `{path, kind: {type: add|delete|update, move_path?}, diff}`.
    static func patchLines(_ change: JSONValue, roots: [String]) -> [String] {
        let path = relative(change["path"]?.stringValue ?? "?", to: roots)
        let diff = change["diff"]?.stringValue ?? ""
        switch change["kind"]?["type"]?.stringValue {
        case "add":
            let lines = UnifiedDiff.file(path: path, old: nil, new: diff)
            return lines.isEmpty ? ["--- /dev/null", headers(path, path)[1], "(an empty file)"] : lines
        case "delete":
            let lines = UnifiedDiff.file(path: path, old: diff, new: nil)
            return lines.isEmpty ? [headers(path, path)[0], "+++ /dev/null"] : lines
        default:
            let moved = change["kind"]?["move_path"]?.stringValue.map { relative($0, to: roots) } ?? path
            // An update's diff is already unified hunks; a header may or may not lead it.
            let hunks = UnifiedDiff.lines(diff).drop { !$0.hasPrefix("@@") }
            return headers(path, moved) + (hunks.isEmpty ? UnifiedDiff.lines(diff)[...] : hunks)
        }
    }

    /// `path` relative to the first of `folders` it lies inside; unchanged otherwise.
    public static func relative(_ path: String, to folders: [String]) -> String {
        for var folder in folders where !folder.isEmpty {
            if !folder.hasSuffix("/") { folder += "/" }
            if path.hasPrefix(folder) { return String(path.dropFirst(folder.count)) }
        }
        return path
    }

    /// `--- a/old` / `+++ b/new`; an absolute path (outside the worktree) is shown as it is.
    static func headers(_ old: String, _ new: String) -> [String] {
        ["--- " + (old.hasPrefix("/") ? old : "a/" + old), "+++ " + (new.hasPrefix("/") ? new : "b/" + new)]
    }
}

/// Reading a person's answer to a question: an option's number, its label in any case, or free
/// text where the agent allows it.
public enum QuestionAnswer {
    /// The labels (or the free text) `text` picks for `item`. For a multi-select question, the
    /// choices are separated by commas (`1,3` or `red, blue`). Throws a message listing the
    /// options when `text` picks none and the question takes no answer of one's own.
    public static func resolve(_ text: String, for item: StructuredQuestion.Item) throws(ShapeError) -> [String] {
        let trimmed = text.trimmed
        let parts = item.multiSelect ? trimmed.split(separator: ",").map { String($0).trimmed }.filter { !$0.isEmpty } : [trimmed]
        var labels: [String] = []
        for part in parts {
            if let label = option(part, of: item) {
                labels.append(label)
            } else if item.allowsOther, !trimmed.isEmpty {
                return [trimmed]  // the whole text is the person's own answer
            } else {
                let options = item.options.enumerated().map { "\($0.offset + 1). \($0.element.label)" }.joined(separator: ", ")
                throw ShapeError("\"\(part)\" is not an option of \"\(item.question)\" (\(options))")
            }
        }
        guard !labels.isEmpty else { throw ShapeError("no answer for \"\(item.question)\"") }
        return labels
    }

    private static func option(_ text: String, of item: StructuredQuestion.Item) -> String? {
        if let number = Int(text), number >= 1, number <= item.options.count { return item.options[number - 1].label }
        return item.options.first { $0.label == text }?.label ?? item.options.first { $0.label.lowercased() == text.lowercased() }?.label
    }
}

extension Decision {
    /// How a person reads the decision: `allowed`, `denied: not now`, `answered Color: Blue`.
    public var summary: String {
        switch self {
        case .allow: "allowed"
        case .allowModified: "allowed with a modified input"
        case .deny(let message): message.isEmpty ? "denied" : "denied: \(message)"
        case .cancel: "cancelled"
        case .answer(let answers): "answered " + answers.keys.sorted().map { "\($0): \(answers[$0]!.joined(separator: ", "))" }.joined(separator: "; ")
        case .allowAlways(let scope): "allowed always (\(JSONWriter.string(scope.json)))"
        }
    }
}

extension String {
    fileprivate var trimmed: String {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}
