/// A permission rule in Claude Code's syntax and meaning (DESIGN.md §5):
///
/// - `Bash` (or `Bash(*)`): every shell command; `Bash(npm test)` exactly that command;
///   `Bash(npm test *)` that prefix (a trailing ` *` also matches the bare prefix; a `*`
///   anywhere matches any text); `Bash(npm test:*)` the legacy prefix form.
/// - `Edit(glob)`: every file-editing tool (Edit, Write, MultiEdit, NotebookEdit, Codex
///   apply_patch) on matching files; `Read(glob)`: every reading tool (Read, Glob, Grep, LS).
///   Globs follow gitignore: `src/**` (relative to the worktree), `*.md` (any depth),
///   `/src/**` (the worktree's root), `//abs/path/**` (the file system's root), `~/…` (home).
/// - `WebFetch(domain:example.com)`.
/// - A bare tool name matches every use of the tool; `mcp__server` every tool of an MCP server,
///   `mcp__server__tool` one tool.
///
/// A rule never decides on its own: `RuleEngine` applies the risk gate around it.
public struct PermissionRule: Sendable, Hashable, CustomStringConvertible {
    public enum Specifier: Sendable, Hashable {
        case command(CommandPattern)
        case path(PathPattern)
        case domain(String)
    }

    /// The tool as written: `Bash`, `Edit`, `Read`, `WebFetch`, `mcp__github__create_issue`, ….
    public var toolName: String
    /// What is inside the parentheses; nil for a bare tool name.
    public var specifier: Specifier?

    public init(toolName: String, specifier: Specifier? = nil) {
        self.toolName = toolName
        self.specifier = specifier
    }

    /// Parses a rule, or says what is wrong with it and how to write it.
    public init(parsing raw: String) throws(PermissionRuleError) {
        let text = raw.trimmingBlanks
        guard !text.isEmpty else { throw PermissionRuleError("a rule cannot be empty: write a tool name such as Bash, or Bash(npm test *)") }
        var name = text
        var content: String?
        if let open = text.firstIndex(of: "(") {
            guard text.hasSuffix(")") else {
                throw PermissionRuleError("‘\(text)’ opens ‘(’ but does not end with ‘)’: write Tool(specifier), e.g. Bash(npm test *)")
            }
            name = String(text[..<open])
            content = String(text[text.index(after: open)..<text.index(before: text.endIndex)])
        } else if text.contains(")") {
            throw PermissionRuleError("‘\(text)’ has a ‘)’ but no ‘(’")
        }
        try Self.validateToolName(name, hasSpecifier: content != nil)
        self.toolName = name
        guard let content else {
            self.specifier = nil
            return
        }
        if content.trimmingBlanks.isEmpty {
            throw PermissionRuleError("\(name)() has an empty specifier: write \(name) to match every use, or put a pattern inside the parentheses")
        }
        switch name {
        case "Bash":
            let pattern = try CommandPattern(content)
            self.specifier = pattern.matchesEverything ? nil : .command(pattern)
        case "Edit", "Read":
            let pattern = try PathPattern(content)
            self.specifier = .path(pattern)
        case "WebFetch":
            guard content.hasPrefix("domain:") else {
                throw PermissionRuleError("WebFetch rules name a domain: WebFetch(domain:example.com), not WebFetch(\(content))")
            }
            let host = content.dropFirst("domain:".count).trimmingBlanks.lowercased()
            guard !host.isEmpty, !host.contains("/"), !host.contains(" ") else {
                throw PermissionRuleError("WebFetch(\(content)) needs a host name after ‘domain:’, such as domain:example.com (no scheme, no path)")
            }
            self.specifier = .domain(host)
        default:
            throw PermissionRuleError("Nucleic cannot match a specifier for \(name): use the bare name \(name) to match every use of it")
        }
    }

    static let knownTools: Set<String> = [
        "Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch",
        "AskUserQuestion", "TodoWrite", "Task", "Agent", "ExitPlanMode", "EnterPlanMode", "BashOutput", "KillShell", "KillBash",
        "ToolSearch", "Skill", "SlashCommand",
    ]

    static func validateToolName(_ name: String, hasSpecifier: Bool) throws(PermissionRuleError) {
        let body = name.hasPrefix("mcp__") && name.hasSuffix("__*") ? String(name.dropLast()) : name
        guard let first = body.unicodeScalars.first, first == "_" || first.properties.isAlphabetic,
            body.unicodeScalars.allSatisfy({ $0 == "_" || $0 == "-" || $0.properties.isAlphabetic || ("0"..."9").contains($0) })
        else {
            throw PermissionRuleError("‘\(name)’ is not a tool name: rules start with a tool such as Bash, Edit, Read, WebFetch or mcp__server__tool")
        }
        if !knownTools.contains(name), let proper = knownTools.first(where: { $0.lowercased() == name.lowercased() }) {
            throw PermissionRuleError("tool names are case-sensitive: write \(proper), not \(name)")
        }
        switch name {
        case let editTool where ["Write", "MultiEdit", "NotebookEdit"].contains(editTool) && hasSpecifier:
            throw PermissionRuleError("\(name)(…) is not how file rules are written: use Edit(…), which covers Edit, Write, MultiEdit and NotebookEdit")
        case let readTool where ["Glob", "Grep", "LS", "NotebookRead"].contains(readTool) && hasSpecifier:
            throw PermissionRuleError("\(name)(…) is not how file rules are written: use Read(…), which covers Read, Glob, Grep and LS")
        case "exec_command":
            throw PermissionRuleError("Codex's exec_command is matched by Bash rules: write Bash or Bash(npm test *)")
        case "apply_patch":
            throw PermissionRuleError("Codex's apply_patch is matched by Edit rules: write Edit or Edit(src/**)")
        case "request_user_input", "AskUserQuestion":
            throw PermissionRuleError("questions are always answered by a person: rules cannot answer \(name)")
        default:
            break
        }
        if name.hasPrefix("mcp__") {
            if hasSpecifier { throw PermissionRuleError("MCP rules take no specifier: write mcp__server (every tool of the server) or mcp__server__tool") }
            guard let (server, _) = ToolFamily.mcpName(name), !server.isEmpty else {
                throw PermissionRuleError("‘\(name)’ names no MCP server: write mcp__server or mcp__server__tool")
            }
        } else if hasSpecifier, !["Bash", "Edit", "Read", "WebFetch", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS", "NotebookRead"].contains(name) {
            throw PermissionRuleError("Nucleic cannot match a specifier for \(name): use the bare name \(name) to match every use of it")
        }
    }

    /// The rule in canonical spelling.
    public var description: String {
        switch specifier {
        case nil: toolName
        case .command(let p): "\(toolName)(\(p.text))"
        case .path(let p): "\(toolName)(\(p.text))"
        case .domain(let host): "\(toolName)(domain:\(host))"
        }
    }

    /// `Bash(<command>)` matching exactly `command` (stars and backslashes escaped).
    public static func exactCommand(_ command: String) -> PermissionRule {
        var escaped = ""
        for c in command.trimmingBlanks {
            if c == "*" || c == "\\" { escaped.append("\\") }
            escaped.append(c)
        }
        // An escaped exact command always parses.
        return (try? PermissionRule(parsing: "Bash(\(escaped))")) ?? PermissionRule(toolName: "Bash", specifier: nil)
    }

    // MARK: Which tools

    /// Whether the rule is about this tool at all.
    public func applies(toTool tool: String, family: ToolFamily) -> Bool {
        switch toolName {
        case "Bash": return family == .shell
        case "Edit": return family == .edit
        case "Read": return family == .read
        default:
            if case .mcp(let server, let name) = family, let (ruleServer, ruleTool) = ToolFamily.mcpName(toolName) {
                return ruleServer == server && (ruleTool.isEmpty || ruleTool == "*" || ruleTool == name)
            }
            return toolName == tool
        }
    }

    /// Whether the rule names one thing exactly (no wildcard, no family, no whole server): the
    /// only kind of allow rule that may answer a request of risk `unknown`.
    public func namesExactly(tool: String) -> Bool {
        switch specifier {
        case .command(let p): return p.kind == .exact
        case .path, .domain: return false
        case nil:
            if toolName == "Bash" || toolName == "Edit" || toolName == "Read" { return tool == toolName && toolName != "Bash" }
            if let (_, ruleTool) = ToolFamily.mcpName(toolName) { return !ruleTool.isEmpty && ruleTool != "*" && toolName == tool }
            return toolName == tool
        }
    }

    // MARK: Matching

    /// Whether this rule, as an allow rule, covers `subject` (one part of a request).
    ///
    /// Strict: a command matches in its `ruleText` spelling (privilege wrappers and code-loading
    /// variables kept); a path by where it really is (links followed); every path must match;
    /// a command given extra arguments at run time (`xargs`) only by a pattern open at its end.
    public func allows(_ subject: RuleSubject) -> Bool {
        guard applies(toTool: subject.toolName, family: subject.family) else { return false }
        switch specifier {
        case nil: return true
        case .command(let pattern):
            guard let command = subject.command else { return false }
            if command.acceptsExtraArguments, !pattern.isOpenEnded { return false }
            return pattern.matches(command.ruleText)
        case .path(let pattern):
            return !subject.paths.isEmpty && subject.paths.allSatisfy { access in
                guard let resolved = access.resolved else { return false }
                return subject.searchesDirectory ? pattern.covers(directory: resolved, subject) : pattern.matches(resolved, subject)
            }
        case .domain(let host):
            return subject.domain.map { Self.domain($0, matches: host) } ?? false
        }
    }

    /// Whether this rule, as a deny rule, matches `subject`: in any spelling of the command
    /// (with or without wrappers), any path (as written or resolved). Read and Edit rules also
    /// deny shell commands that read or write matching files (a deliberate strengthening:
    /// `Read(.env)` also stops `cat .env`).
    public func denies(_ subject: RuleSubject) -> Bool {
        if subject.family == .shell, toolName == "Read" || toolName == "Edit", case .path(let pattern) = specifier {
            let mode: PathAccess.Mode = toolName == "Read" ? .read : .write
            return subject.paths.contains { a in
                a.mode == mode && [a.resolved, a.lexical].compactMap { $0 }.contains { pattern.matches($0, subject) }
            }
        }
        guard applies(toTool: subject.toolName, family: subject.family) else { return false }
        switch specifier {
        case nil: return true
        case .command(let pattern):
            guard let command = subject.command else { return false }
            let spellings = [command.text, command.ruleText, command.source, ([command.assignments.map(\.source).joined(separator: " ")] + [command.text]).joined(separator: " ").trimmingBlanks]
            return spellings.contains { pattern.matches($0) || (command.acceptsExtraArguments && pattern.matchesPrefix($0)) }
        case .path(let pattern):
            return subject.paths.contains { a in
                [a.resolved, a.lexical].compactMap { $0 }.contains { subject.searchesDirectory ? pattern.covers(directory: $0, subject) || pattern.matches($0, subject) : pattern.matches($0, subject) }
            }
        case .domain(let host):
            return subject.domain.map { Self.domain($0, matches: host) } ?? false
        }
    }

    /// Whether the rule matches the request as a whole, as Claude Code reads it: the exact
    /// command line, or every part (each command of a compound command) allowed by it. The
    /// `RuleEngine` decides with the risk gate and read-only parts on top of this.
    public func matches(_ classification: Classification) -> Bool {
        if let script = classification.script, matchesWholeCommand(script, family: classification.family) { return true }
        let subjects = RuleSubject.of(classification)
        return !subjects.isEmpty && subjects.allSatisfy(allows)
    }

    /// `Bash(<exact>)` against a whole shell command line (for "this exact command" rules).
    public func matchesWholeCommand(_ script: String, family: ToolFamily) -> Bool {
        guard family == .shell, toolName == "Bash", case .command(let pattern) = specifier, pattern.kind == .exact else { return false }
        return pattern.literal == script.trimmingBlanks || pattern.matches(script.trimmingBlanks)
    }

    static func domain(_ host: String, matches rule: String) -> Bool {
        if rule.hasPrefix("*.") { return host.hasSuffix(String(rule.dropFirst(1))) }
        return host == rule
    }
}

/// What a rule is matched against: one part of a request.
public struct RuleSubject: Sendable, Hashable {
    public var toolName: String
    public var family: ToolFamily
    public var command: ParsedCommand?
    public var paths: [PathAccess]
    public var domain: String?
    /// The paths are folders searched (Glob, Grep, LS): a rule must cover everything under them.
    public var searchesDirectory: Bool
    public var worktree: String
    public var home: String

    public init(toolName: String, family: ToolFamily, command: ParsedCommand? = nil, paths: [PathAccess] = [], domain: String? = nil,
                searchesDirectory: Bool = false, worktree: String, home: String)
    {
        self.toolName = toolName
        self.family = family
        self.command = command
        self.paths = paths
        self.domain = domain
        self.searchesDirectory = searchesDirectory
        self.worktree = worktree
        self.home = home
    }

    /// The subjects of a classified request, one per part.
    public static func of(_ classification: Classification) -> [RuleSubject] {
        let searches = ["Glob", "Grep", "LS"].contains(classification.toolName)
        return classification.parts.map { part in
            RuleSubject(toolName: classification.toolName, family: classification.family, command: part.command, paths: part.paths,
                        domain: part.domain, searchesDirectory: searches, worktree: classification.worktree, home: classification.home)
        }
    }
}

/// Why a rule could not be parsed, and how to write it.
public struct PermissionRuleError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A `Bash(…)` specifier.
public struct CommandPattern: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// No wildcard: the command must be exactly this.
        case exact
        /// `prefix:*` (legacy) or `prefix *`: the prefix alone, or followed by a space and anything.
        case prefix
        /// `*` elsewhere: any text at each `*`.
        case wildcard
    }

    /// As written inside the parentheses.
    public var text: String
    public var kind: Kind
    /// For exact: the command; for prefix: the prefix; in canonical shell spelling when it parses
    /// as one plain command (so `"npm" test` and `npm test` are the same rule).
    public var literal: String
    /// For wildcard: the literal pieces between the stars.
    var pieces: [String]

    public init(_ raw: String) throws(PermissionRuleError) {
        text = raw
        let pieces = Self.splitOnStars(raw.trimmingBlanks)
        if pieces.count == 1 {
            kind = .exact
            literal = Self.canonical(pieces[0])
            self.pieces = pieces
        } else if pieces.count == 2, pieces[1].isEmpty, pieces[0].hasSuffix(":") || pieces[0].hasSuffix(" ") {
            // `npm test:*` or `npm test *`: a prefix at a word boundary (the bare prefix matches too).
            kind = .prefix
            let prefix = String(pieces[0].dropLast()).trimmingBlanks
            literal = Self.canonical(prefix)
            self.pieces = pieces
            if prefix.isEmpty, pieces[0].hasSuffix(":") { throw PermissionRuleError("Bash(\(raw)) has an empty prefix before ‘:*’") }
        } else {
            kind = .wildcard
            literal = raw
            self.pieces = pieces
        }
    }

    /// `*` alone: every command (the same as a bare `Bash`).
    var matchesEverything: Bool { kind == .wildcard && pieces.allSatisfy(\.isEmpty) || (kind == .prefix && literal.isEmpty) }

    /// Whether any text may follow what the pattern names (needed for commands that get more
    /// arguments at run time).
    public var isOpenEnded: Bool { kind != .exact && (pieces.last?.isEmpty ?? false) }

    public func matches(_ command: String) -> Bool {
        let command = command.trimmingBlanks
        switch kind {
        case .exact: return command == literal || command == Self.unescape(text.trimmingBlanks)
        case .prefix: return command == literal || command.hasPrefix(literal + " ")
        case .wildcard: return Self.wildcard(pieces, command)
        }
    }

    /// Whether the command starts with what the pattern requires (deny rules against commands
    /// given more arguments at run time).
    func matchesPrefix(_ command: String) -> Bool {
        matches(command) || kind == .exact && command.hasPrefix(literal)
    }

    /// Pieces between unescaped stars; `\*` is a literal star and `\\` a backslash.
    static func splitOnStars(_ text: String) -> [String] {
        var pieces = [""]
        var escaped = false
        for c in text {
            if escaped {
                if c != "*" && c != "\\" { pieces[pieces.count - 1].append("\\") }
                pieces[pieces.count - 1].append(c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == "*" {
                pieces.append("")
            } else {
                pieces[pieces.count - 1].append(c)
            }
        }
        if escaped { pieces[pieces.count - 1].append("\\") }
        return pieces
    }

    static func unescape(_ text: String) -> String { splitOnStars(text).joined(separator: "*") }

    /// The canonical spelling of `text` when it is one plain command (no operators).
    static func canonical(_ text: String) -> String {
        guard case .success(let script) = ShellParser.parse(text), script.items.count == 1, !script.items[0].background,
            script.items[0].andOr.pipelines.count == 1, script.items[0].andOr.pipelines[0].commands.count == 1,
            case .simple(let simple) = script.items[0].andOr.pipelines[0].commands[0], simple.redirections.isEmpty,
            simple.assignments.isEmpty, !simple.words.isEmpty
        else { return text.trimmingBlanks }
        return simple.words.map(\.canonical).joined(separator: " ")
    }

    /// Stars matching any text (spaces and slashes included) between literal pieces.
    static func wildcard(_ pieces: [String], _ text: String) -> Bool {
        guard let first = pieces.first, text.hasPrefix(first) else { return false }
        var rest = text.dropFirst(first.count)
        let middle = pieces.dropFirst().dropLast()
        for piece in middle where !piece.isEmpty {
            guard let r = rest.firstRange(of: piece) else { return false }
            rest = rest[r.upperBound...]
        }
        guard let last = pieces.last, pieces.count > 1 else { return rest.isEmpty }
        return rest.hasSuffix(last)
    }
}

/// An `Edit(…)` or `Read(…)` specifier: a gitignore-style glob.
public struct PathPattern: Sendable, Hashable {
    /// As written.
    public var text: String

    public init(_ raw: String) throws(PermissionRuleError) {
        let t = raw.trimmingBlanks
        if t.hasPrefix("~"), t != "~", !t.hasPrefix("~/") {
            throw PermissionRuleError("‘\(t)’: only your own home can be named, as ~/…")
        }
        if t.contains("\0") { throw PermissionRuleError("a path pattern cannot hold a NUL character") }
        text = t
    }

    /// The pattern as an absolute glob, for a worktree and home (Claude Code's anchors).
    public func anchored(worktree: String, home: String) -> String {
        var t = text
        let base: String
        if t.hasPrefix("//") {
            base = ""
            t = String(t.dropFirst(1))
        } else if t == "~" || t.hasPrefix("~/") {
            base = Glob.escape(home)
            t = String(t.dropFirst(1))
        } else if t.hasPrefix("/") {
            base = Glob.escape(worktree)
        } else {
            if t.hasPrefix("./") { t = String(t.dropFirst(2)) }
            let inner = t.hasSuffix("/") ? String(t.dropLast()) : t
            base = Glob.escape(worktree) + (inner.contains("/") ? "/" : "/**/")
        }
        if t.hasSuffix("/") { t += "**" }
        return Self.normalize(base + t)
    }

    /// `..` and `.` removed from the literal components.
    static func normalize(_ pattern: String) -> String {
        var out: [Substring] = []
        for component in pattern.split(separator: "/", omittingEmptySubsequences: true) {
            if component == "." { continue }
            if component == "..", let last = out.last, last != "**" {
                out.removeLast()
                continue
            }
            out.append(component)
        }
        return "/" + out.joined(separator: "/")
    }

    /// Whether the absolute `path` (or a folder containing it) matches, gitignore-style.
    public func matches(_ path: String, _ subject: RuleSubject) -> Bool {
        let glob = anchored(worktree: subject.worktree, home: subject.home)
        let normalized = PathResolver.normalize(path)
        return Glob.matchPath(glob, normalized) || Glob.matchPath(glob + "/**", normalized)
    }

    /// Whether everything under the folder `directory` matches (for searches).
    func covers(directory: String, _ subject: RuleSubject) -> Bool {
        let d = PathResolver.normalize(directory)
        let probe = d == "/" ? "" : d
        return matches(probe + "/\u{1}", subject) && matches(probe + "/\u{1}/\u{1}", subject)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and newlines.
    var trimmingBlanks: String {
        let blanks: Set<Character> = [" ", "\t", "\n", "\r"]
        guard let start = firstIndex(where: { !blanks.contains($0) }), let end = lastIndex(where: { !blanks.contains($0) }) else { return "" }
        return String(self[start...end])
    }
}
