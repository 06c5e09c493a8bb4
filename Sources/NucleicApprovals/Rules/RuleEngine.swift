public import NucleicProtocol

/// What the rules say about a request.
public enum RuleOutcome: Sendable, Hashable {
    /// Allowed by this rule (for a compound command: the rule allowing its riskiest part).
    case allow(RuleID)
    /// Denied by this rule; `message` goes to the agent.
    case deny(RuleID, message: String)
    /// A person decides.
    case ask
}

/// Why the rules decided as they did: for `nucleic rules explain`.
public struct RuleExplanation: Sendable, Hashable {
    public struct Match: Sendable, Hashable {
        public var ruleID: RuleID
        public var rule: String
        public var behavior: Rule.Behavior
        /// The part it matched (`npm test`), or "the whole command".
        public var part: String
        /// Whether the match counted; when not, `note` says why (the risk gate, for example).
        public var honoured: Bool
        public var note: String?
    }

    public var outcome: RuleOutcome
    public var risk: Risk
    public var matches: [Match]
    /// Why a person is asked (empty when a rule decided).
    public var reasons: [String]
}

/// Decides a request by host rules, with the risk gate around them (DESIGN.md §6).
///
/// ### Invariants
/// - Deny beats allow: a deny rule matching any part of the request denies it.
/// - An allow rule never answers risk network, hostExec or destructive, and never a question.
/// - Risk unknown is allowed only by a rule naming that exact command or tool (no wildcard).
/// - A compound command is allowed only when every part that is more than read-only is allowed
///   by an allow rule; read-only parts (a `| tail`, a `cd src &&`) ride along with them, but a
///   command made only of read-only parts still needs a rule matching one of them.
public struct RuleEngine: Sendable {
    public var rules: [Rule]

    public init(rules: [Rule]) { self.rules = rules }

    public func decide(_ request: ApprovalRequest, _ classification: Classification, session: SessionID?, project: ProjectID?) -> RuleOutcome {
        explain(request, classification, session: session, project: project).outcome
    }

    public func explain(_ request: ApprovalRequest, _ classification: Classification, session: SessionID?, project: ProjectID?) -> RuleExplanation {
        let inForce = rules.filter { $0.applies(session: session, project: project) }
        let subjects = RuleSubject.of(classification)
        let parts = classification.parts
        var matches: [RuleExplanation.Match] = []
        func label(_ index: Int) -> String { parts[index].label.isEmpty ? "the command" : parts[index].label }

        // Deny rules first: any match on any part, or on the whole command line.
        var denied: (Rule, String)?
        for rule in inForce where rule.behavior == .deny {
            if let script = classification.script, rule.rule.matchesWholeCommand(script, family: classification.family) {
                matches.append(.init(ruleID: rule.id, rule: rule.rule.description, behavior: .deny, part: "the whole command", honoured: denied == nil))
                if denied == nil { denied = (rule, "the whole command") }
                continue
            }
            for (k, subject) in subjects.enumerated() where rule.rule.denies(subject) {
                matches.append(.init(ruleID: rule.id, rule: rule.rule.description, behavior: .deny, part: label(k), honoured: denied == nil))
                if denied == nil { denied = (rule, label(k)) }
                break
            }
        }
        if let (rule, part) = denied {
            let message = rule.message ?? "Denied by the rule \(rule.rule) (\(rule.decidedBy))" + (part == "the whole command" ? "." : ", which matches \(part).")
            return RuleExplanation(outcome: .deny(rule.id, message: message), risk: classification.risk, matches: matches, reasons: [])
        }

        let allowRules = inForce.filter { $0.behavior == .allow }
        var reasons: [String] = []
        let isQuestion = request.question != nil || classification.family == .question
        if isQuestion { reasons.append("a question is always answered by a person") }
        if classification.risk.alwaysNeedsPerson {
            reasons.append("risk \(classification.risk.rawValue) always needs a person: " + (classification.reasons.first ?? ""))
        }
        if !reasons.isEmpty {
            for rule in allowRules where subjects.contains(where: rule.rule.allows) {
                matches.append(.init(ruleID: rule.id, rule: rule.rule.description, behavior: .allow, part: "the request", honoured: false,
                                     note: isQuestion ? "rules never answer questions" : "allow rules never answer risk \(classification.risk.rawValue)"))
            }
            return RuleExplanation(outcome: .ask, risk: classification.risk, matches: matches, reasons: reasons)
        }

        // "This exact command": the whole command line, whatever its parts.
        if let script = classification.script, let rule = allowRules.first(where: { $0.rule.matchesWholeCommand(script, family: classification.family) }) {
            matches.append(.init(ruleID: rule.id, rule: rule.rule.description, behavior: .allow, part: "the whole command", honoured: true))
            return RuleExplanation(outcome: .allow(rule.id), risk: classification.risk, matches: matches, reasons: [])
        }

        var decisive: (Rule, Risk)?
        for (k, subject) in subjects.enumerated() {
            let part = parts[k]
            let matching = allowRules.filter { $0.rule.allows(subject) }
            let usable = part.risk == .unknown ? matching.filter { $0.rule.namesExactly(tool: classification.toolName) } : matching
            for rule in matching where !usable.contains(rule) {
                matches.append(.init(ruleID: rule.id, rule: rule.rule.description, behavior: .allow, part: label(k), honoured: false,
                                     note: "risk unknown is allowed only by a rule naming that exact command or tool"))
            }
            if let rule = usable.first {
                matches.append(.init(ruleID: rule.id, rule: rule.rule.description, behavior: .allow, part: label(k), honoured: true))
                if decisive == nil || part.risk > decisive!.1 { decisive = (rule, part.risk) }
            } else if part.risk == .readOnly || (part.role != .command && part.risk <= .write) {
                continue  // rides along with the parts that rules allow
            } else {
                reasons.append("no allow rule covers \(label(k)) (\(part.risk.rawValue))")
            }
        }
        if reasons.isEmpty, let (rule, _) = decisive {
            return RuleExplanation(outcome: .allow(rule.id), risk: classification.risk, matches: matches, reasons: [])
        }
        if decisive == nil, reasons.isEmpty { reasons.append("no allow rule matches this request") }
        return RuleExplanation(outcome: .ask, risk: classification.risk, matches: matches, reasons: reasons)
    }

    // MARK: "Allow always" scopes

    /// The "allow always" scopes to offer with a request: this exact command (shell tools) or
    /// this tool for the session, a project rule suggested from the command's first words (or
    /// the file's folder), and the backend's own suggestions that parse and match. None for
    /// questions or for what always needs a person.
    public static func offeredScopes(_ request: ApprovalRequest, _ classification: Classification) -> [ApprovalScope] {
        guard request.question == nil, classification.family != .question, !classification.risk.alwaysNeedsPerson else { return [] }
        var scopes: [ApprovalScope] = []
        switch classification.family {
        case .shell:
            scopes.append(.exactCommandThisSession)
            guard classification.risk != .unknown else { return scopes }  // only an exact rule could answer it again
            scopes.append(.toolThisSession)
            if let rule = suggestedShellRule(classification) { scopes.append(.rule(rule)) }
        case .edit, .read:
            scopes.append(.toolThisSession)
            if let rule = suggestedPathRule(classification) { scopes.append(.rule(rule)) }
        case .mcp, .other:
            scopes.append(.toolThisSession)
            if (try? PermissionRule(parsing: classification.toolName)) != nil { scopes.append(.rule(classification.toolName)) }
        case .webFetch, .webSearch, .question:
            return []
        }
        let subjects = RuleSubject.of(classification)
        for case .rule(let text) in request.offeredScopes where !scopes.contains(.rule(text)) {
            guard let rule = try? PermissionRule(parsing: text), subjects.contains(where: rule.allows) else { continue }
            scopes.append(.rule(text))
        }
        return scopes
    }

    /// `Bash(<first words> *)` when the parts needing a rule share one such prefix.
    static func suggestedShellRule(_ classification: Classification) -> String? {
        let needing = classification.parts.filter { $0.role == .command && $0.risk > .readOnly && $0.command?.name != nil }
        let candidates = needing.isEmpty ? Array(classification.parts.filter { $0.role == .command && $0.command?.name != nil }.prefix(1)) : needing
        let prefixes = Set(candidates.compactMap { $0.command.flatMap(commandPrefix) })
        guard prefixes.count == 1, let prefix = prefixes.first else { return nil }
        let text = "Bash(\(prefix) *)"
        guard let rule = try? PermissionRule(parsing: text) else { return nil }
        let subjects = RuleSubject.of(classification)
        return zip(classification.parts, subjects).allSatisfy({ part, subject in !candidates.contains(part) || rule.allows(subject) }) ? text : nil
    }

    static let interpreters: Set<String> = ["python", "python3", "node", "bash", "sh", "zsh", "ruby", "perl", "php", "deno", "bun", "swift", "go"]

    /// A command's first words: the program and up to two subcommand-like words (`npm run build`,
    /// `git commit`, `python scripts/test.py`).
    static func commandPrefix(_ command: ParsedCommand) -> String? {
        guard let first = command.words.first, first.staticValue != nil else { return nil }
        var words = [first.canonical]
        let program = ShellParser.programName(first.staticValue ?? "")
        for word in command.words.dropFirst().prefix(2) {
            guard let v = word.staticValue, !v.isEmpty, !v.hasPrefix("-"), word.canonical == v else { break }
            let subcommandLike = v.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ":" }
            let scriptLike = interpreters.contains(program) && words.count == 1 && !v.hasPrefix("/") && !v.hasPrefix("..") && !v.hasPrefix("~")
                && v.contains(".")
            guard subcommandLike || scriptLike else { break }
            words.append(v)
            if scriptLike { break }
        }
        let prefix = ([command.ruleText.dropLast(command.text.count).trimmingBlanks] + words).filter { !$0.isEmpty }.joined(separator: " ")
        return prefix
    }

    /// `Edit(src/**)` / `Read(src/**)` for the folder of the files, `Edit(/README.md)` for a file
    /// at the worktree's root.
    static func suggestedPathRule(_ classification: Classification) -> String? {
        let tool = classification.family == .edit ? "Edit" : "Read"
        let resolver = PathResolver(fileSystem: NoFileSystem(home: classification.home), resolvedWorktree: classification.worktree, home: classification.home)
        let relatives = classification.parts.flatMap(\.paths).compactMap { $0.resolved.flatMap(resolver.relative) }
        guard !relatives.isEmpty, relatives.count == classification.parts.flatMap(\.paths).count else { return nil }
        let searches = ["Glob", "Grep", "LS"].contains(classification.toolName)
        let folders = Set(relatives.map { path -> String in
            if searches { return path }
            guard let slash = path.lastIndex(of: "/") else { return "" }
            return String(path[..<slash])
        })
        guard folders.count == 1, let folder = folders.first else { return nil }
        if folder.isEmpty {
            guard !searches, relatives.count == 1 else { return nil }
            return "\(tool)(/\(Glob.escape(relatives[0])))"
        }
        return "\(tool)(\(Glob.escape(folder))/**)"
    }

    /// The permission rule an "allow always" scope stands for.
    public static func rule(for scope: ApprovalScope, _ classification: Classification) throws(PermissionRuleError) -> PermissionRule {
        switch scope {
        case .exactCommandThisSession:
            guard classification.family == .shell, let script = classification.script else {
                throw PermissionRuleError("‘this exact command’ is for shell commands; \(classification.toolName) can be allowed for this session or by a rule")
            }
            return PermissionRule.exactCommand(script)
        case .toolThisSession:
            switch classification.family {
            case .shell: return PermissionRule(toolName: "Bash")
            case .edit: return PermissionRule(toolName: classification.toolName == "apply_patch" ? "Edit" : classification.toolName)
            case .read: return PermissionRule(toolName: classification.toolName)
            case .question: throw PermissionRuleError("questions are always answered by a person")
            default: return try PermissionRule(parsing: classification.toolName)
            }
        case .rule(let text):
            return try PermissionRule(parsing: text)
        }
    }
}
