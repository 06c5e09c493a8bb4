import NucleicProtocol

/// Judges one command (its wrappers peeled): its program, its paths, its redirections.
struct CommandJudge {
    let c: ParsedCommand
    let paths: PathJudge
    let state: ShellState
    let ctx: ShellContext
    var role = Classification.Part.Role.command
    var risk = Risk.readOnly
    var reasons: [(Risk, String)] = []
    var accesses: [PathAccess] = []
    /// What the command does to the shell's state (`cd`, assignments).
    var effect: ((inout ShellState) -> Void)?
    /// For `find`/`fd`: where the files it lists are (for `-exec {}`).
    var listedFiles: ArgumentSource?
    /// What it writes to standard output, for an `xargs` after it.
    var output: ArgumentSource?
    /// A shell builtin that changes nothing outside the shell (it runs even where the cwd is outside).
    var inert = false
    let elevated: Bool
    /// The folders it may run in.
    let cwd: ShellState.Cwd

    init(c: ParsedCommand, paths: PathJudge, state: ShellState, ctx: ShellContext) {
        self.c = c
        self.paths = paths
        self.state = state
        self.ctx = ctx
        let elevatingNames: Set<String> = ["sudo", "doas", "su", "runuser", "pkexec"]
        elevated = ctx.elevated || c.wrappers.contains { $0.kind == .elevating }
            || c.name.map { elevatingNames.contains(ShellParser.programName($0)) } ?? false
        if let dir = c.workingDirectory {
            cwd = CommandJudge.directories(dir, from: state, paths: paths)
        } else {
            cwd = state.cwd
        }
    }

    var evaluator: WordEvaluator { WordEvaluator(paths: paths, state: state) }
    var resolver: PathResolver { paths.resolver }

    mutating func raise(_ r: Risk, _ reason: String) {
        if r > risk { risk = r }
        reasons.append((r, reason))
    }

    func part() -> Classification.Part {
        var seen = Set<String>()
        let ordered = reasons.enumerated().sorted { a, b in a.element.0 != b.element.0 ? a.element.0 > b.element.0 : a.offset < b.offset }
            .map(\.element.1).filter { seen.insert($0).inserted }
        return Classification.Part(command: c, role: role, risk: risk, reasons: ordered, paths: Array(accesses.prefix(64)))
    }

    func producer() -> Producer? {
        let text = stdoutText
        guard output != nil || text != nil else { return nil }
        var source = output ?? .unknown("the text it prints")
        if output == nil, c.name == "echo" || c.name == "printf", !args.isEmpty {
            // `echo a.txt b.txt | xargs rm`: the names are the words echoed.
            var probe = CommandJudge(c: c, paths: paths, state: state, ctx: ctx)
            probe.read(args.filter { !($0.staticValue?.hasPrefix("-") ?? false) })
            source = probe.listedSource()
        }
        return Producer(source: source, text: text)
    }

    /// What the command prints, when it is fixed text: `echo`/`printf` of static words, `cat` of
    /// a here-document or here-string.
    var stdoutText: String? {
        guard let name = c.name.map(ShellParser.programName) else { return nil }
        switch name {
        case "echo", "printf":
            let words = args.filter { !(name == "echo" && ["-n", "-e", "-E"].contains($0.staticValue ?? "")) }
            let values = words.compactMap(\.staticValue)
            guard values.count == words.count else { return nil }
            return values.joined(separator: " ").replacingEscapedNewlines
        case "cat" where args.isEmpty:
            guard let input = c.redirections.last(where: \.feedsStandardInput) else { return nil }
            switch input.op {
            case .hereDocument, .hereDocumentStrippingTabs: return input.hereDocument.flatMap(ShellParser.staticHereDocument)
            case .hereString: return input.target.staticValue
            default: return nil
            }
        default: return nil
        }
    }

    // MARK: Whole command

    mutating func judge() {
        judgeWrapperOnly()
        guard let first = c.words.first else {
            role = .shellState
            assignmentEffect()
            return
        }
        guard let name = c.name else {
            raise(.unknown, "the command's name is only known when it runs (\(first.source))")
            return
        }
        judgeProgram(name)
        if !inert {
            switch cwd {
            case .paths(let dirs):
                if let outside = dirs.sorted().first(where: { !paths.location($0).isInsideWorktree }) {
                    raise(.hostExec, "runs in \(outside), outside the worktree")
                }
            case .unknown(let why):
                raise(.hostExec, "runs in a folder known only when it runs (\(why))")
            }
        }
    }

    /// What wrappers, assignments and redirections add, whatever the command is.
    mutating func judgeWrapperOnly() {
        if elevated {
            let who = c.wrappers.last(where: { $0.kind == .elevating })?.name ?? c.name.map(ShellParser.programName) ?? "sudo"
            raise(.hostExec, "runs as another user (\(ctx.elevated && !c.wrappers.contains { $0.kind == .elevating } ? "inside " + (ctx.via.first ?? who) : who))")
        }
        for wrapper in c.wrappers {
            switch wrapper.kind {
            case .detaching: raise(.hostExec, "keeps running after the session ends (\(wrapper.name))")
            case .runner:
                raise(.execute, "runs in the project's environment (\(wrapper.name))")
                if wrapper.words.contains(where: { $0.staticValue?.hasPrefix("--with") ?? false }) {
                    raise(.network, "\(wrapper.name) --with installs packages")
                }
            default: break
            }
        }
        for assignment in c.assignments where ParsedCommand.isCodeLoadingVariable(assignment.name) {
            raise(.unknown, "sets \(assignment.name), which changes what code runs")
        }
        judgeRedirections()
    }

    mutating func judgeRedirections() {
        for r in c.redirections {
            if r.writesFile { access(r.target, .write) }
            if r.readsFile { access(r.target, .read) }
        }
    }

    mutating func assignmentEffect() {
        let assignments = c.assignments
        let evaluator = self.evaluator
        effect = { state in
            for a in assignments {
                if a.append || a.array != nil {
                    state.vars[a.name] = nil
                } else if case .values(let candidates) = evaluator.candidates(a.value), candidates.allSatisfy({ !$0.isPattern }) {
                    state.vars[a.name] = candidates.map(\.literal)
                } else {
                    state.vars[a.name] = nil
                }
            }
        }
    }

    // MARK: Paths

    mutating func read(_ words: some Sequence<ShellWord>) { for w in words { access(w, .read) } }
    mutating func write(_ words: some Sequence<ShellWord>) { for w in words { access(w, .write) } }
    mutating func read(_ word: ShellWord?) { if let word { access(word, .read) } }
    mutating func write(_ word: ShellWord?) { if let word { access(word, .write) } }

    /// The working folder itself, read (`ls`, `grep -r` with no path) or written (`tar x`).
    mutating func accessCwd(_ mode: PathAccess.Mode) { access(.literal("."), mode) }

    /// Files named at run time (appended by `xargs`, or `find -exec … +`).
    mutating func extraArguments(_ mode: PathAccess.Mode) {
        guard c.acceptsExtraArguments, let source = ctx.extraArguments else { return }
        record(source, written: "the file names it is given", mode: mode)
    }

    mutating func record(_ source: ArgumentSource, written: String, mode: PathAccess.Mode) {
        let access: PathAccess
        switch source {
        case .inside: access = PathAccess(mode: mode, written: written, resolved: nil, lexical: nil, location: .inside)
        case .outside(let path): access = PathAccess(mode: mode, written: written, resolved: path, lexical: path, location: .outside)
        case .unknown(let why):
            access = PathAccess(mode: mode, written: written, resolved: nil, lexical: nil, location: .unknown)
            accesses.append(access)
            raise(.hostExec, "\(mode == .read ? "reads" : "writes") \(written) (\(why); they may be outside the worktree)")
            return
        }
        accesses.append(access)
        apply(access)
    }

    /// A word naming a file: resolved against every folder the command may run in, globs expanded.
    mutating func access(_ word: ShellWord, _ mode: PathAccess.Mode) {
        // `<(cmd)` is a pipe (/dev/fd/N): its command is judged on its own.
        if word.parts.contains(where: { if case .processSubstitution = $0 { true } else { false } }) { return }
        if let (placeholder, source) = ctx.placeholder ?? xargsPlaceholder, word.text.contains(placeholder) {
            record(source, written: word.source, mode: mode)
            return
        }
        switch evaluator.candidates(word) {
        case .unknown(let why):
            let access = PathAccess(mode: mode, written: word.source, resolved: nil, lexical: nil, location: .unknown)
            accesses.append(access)
            raise(.hostExec, "\(mode == .read ? "reads" : "writes") \(word.source), a path known only when it runs (\(why); it may be outside the worktree)")
        case .values(let candidates):
            for candidate in candidates {
                let relative = !candidate.text.hasPrefix("/")
                let dirs: [String]
                switch (relative, cwd) {
                case (false, _): dirs = ["/"]
                case (true, .paths(let set)): dirs = set.sorted()
                case (true, .unknown(let why)):
                    accesses.append(PathAccess(mode: mode, written: word.source, resolved: nil, lexical: nil, location: .unknown))
                    raise(.hostExec, "\(mode == .read ? "reads" : "writes") \(word.source) in a folder known only when it runs (\(why))")
                    continue
                }
                for dir in dirs {
                    if candidate.isPattern {
                        let absolute = relative ? Glob.escape(dir) + "/" + candidate.text : candidate.text
                        guard let matches = resolver.expandGlob(absolute) else {
                            accesses.append(PathAccess(mode: mode, written: word.source, resolved: nil, lexical: nil, location: .unknown))
                            raise(.hostExec, "\(word.source) matches too many files to judge")
                            continue
                        }
                        if matches.isEmpty {
                            apply(paths.access(Glob.unescape(absolute), mode: mode, cwd: dir), written: word.source)
                        }
                        for match in matches { apply(paths.access(match, mode: mode, cwd: dir), written: word.source) }
                    } else {
                        apply(paths.access(candidate.literal, mode: mode, cwd: dir), written: word.source)
                    }
                }
            }
        }
    }

    mutating func apply(_ access: PathAccess, written: String) {
        var access = access
        access.written = written
        accesses.append(access)
        apply(access)
    }

    mutating func apply(_ access: PathAccess) {
        let (r, reason) = paths.risk(access)
        if let reason {
            raise(r, reason)
        } else if r == .write {
            let shown = access.resolved.flatMap(resolver.relative).map { $0.isEmpty ? "." : $0 } ?? access.written
            raise(.write, "writes \(shown)")
        }
    }

    /// `xargs -I X`: X stands for each input line.
    var xargsPlaceholder: (String, ArgumentSource)? {
        guard let xargs = c.wrappers.last(where: { $0.kind == .feedsArguments }) else { return nil }
        let o = CommandOptions(xargs.words, from: 1, valuedShort: Set("adEILnPs"), valuedLong: ["replace", "arg-file", "delimiter"], stopAtFirstOperand: true)
        let text = o.value("-I", "--replace")?.staticValue ?? (o.hasAny("-i") ? "{}" : nil)
        return text.map { ($0, ctx.extraArguments ?? .unknown("xargs input")) }
    }

    /// Arguments that look like paths (`/…`, `~/…`, `..`), checked as reads: for programs whose
    /// arguments Nucleic does not know (`python x.py --out /etc/x`).
    mutating func pathLikeArguments(_ words: some Sequence<ShellWord>) {
        for word in words {
            var candidate = word
            if let v = word.staticValue, v.hasPrefix("-"), let eq = v.firstIndex(of: "=") {
                candidate = .literal(String(v[v.index(after: eq)...]))
            } else if word.staticValue?.hasPrefix("-") ?? false {
                continue
            }
            guard case .values(let values) = evaluator.candidates(candidate) else { continue }
            let looksLikePath = values.contains { v in
                let t = v.literal
                return !t.contains(where: { $0 == " " || $0 == "\n" || $0 == "(" || $0 == "'" || $0 == "\"" || $0 == ";" })
                    && !t.contains("://") && (t.hasPrefix("/") || t == ".." || t.hasPrefix("../") || t.contains("/../") || t.hasSuffix("/.."))
            }
            if looksLikePath || word.parts.first.map({ if case .tilde = $0 { true } else { false } }) == true
                || (word.parts.first.map({ if case .variable("HOME", _) = $0 { true } else { false } }) ?? false)
            {
                access(candidate, .read)
            }
        }
    }

    // MARK: Folders

    /// The folders `word` names, as a working folder (for `cd`, `-C DIR`, `env -C`).
    static func directories(_ word: ShellWord, from state: ShellState, paths: PathJudge) -> ShellState.Cwd {
        guard case .values(let candidates) = WordEvaluator(paths: paths, state: state).candidates(word),
            candidates.allSatisfy({ !$0.isPattern })
        else { return .unknown("it changes to \(word.source)") }
        var out = Set<String>()
        for candidate in candidates {
            if candidate.literal.hasPrefix("/") {
                guard let r = paths.resolver.resolve(candidate.literal, from: "/") else { return .unknown("a link loop in \(word.source)") }
                out.insert(r)
                continue
            }
            guard case .paths(let dirs) = state.cwd else { return state.cwd }
            for dir in dirs {
                guard let r = paths.resolver.resolve(candidate.literal, from: dir) else { return .unknown("a link loop in \(word.source)") }
                out.insert(r)
            }
        }
        return .paths(out)
    }
}

/// The values a word may have when it runs, as far as the script itself says.
struct WordEvaluator {
    let paths: PathJudge
    let state: ShellState

    enum Result {
        case values([Candidate])
        case unknown(String)
    }

    /// One possible value, in glob-pattern spelling (quoted glob characters escaped).
    struct Candidate: Hashable {
        var text: String
        var isPattern: Bool
        var literal: String { isPattern ? text : Glob.unescape(text) }
    }

    func candidates(_ word: ShellWord) -> Result {
        var out = [Candidate(text: "", isPattern: false)]
        for part in word.parts {
            var pieces: [Candidate]
            switch part {
            case .literal(let text, let quoted):
                pieces = quoted ? [Candidate(text: Glob.escape(text), isPattern: false)]
                    : Self.expandBraces(text).map { Candidate(text: $0, isPattern: Glob.hasWildcard($0)) }
            case .tilde(let user):
                guard user.isEmpty else { return .unknown("~\(user)") }
                pieces = [Candidate(text: Glob.escape(paths.resolver.home), isPattern: false)]
            case .variable(let name, let quoted):
                let values: [String]
                if name == "HOME" {
                    values = [paths.resolver.home]
                } else if name == "PWD", case .paths(let dirs) = state.cwd {
                    values = dirs.sorted()
                } else if let known = state.vars[name] {
                    values = known
                } else {
                    return .unknown("$" + name)
                }
                pieces = values.map { quoted ? Candidate(text: Glob.escape($0), isPattern: false) : Candidate(text: $0, isPattern: Glob.hasWildcard($0)) }
            case .processSubstitution:
                pieces = [Candidate(text: "/dev/fd/63", isPattern: false)]
            case .commandSubstitution(let script, let source, _):
                guard let values = knownOutput(script) else { return .unknown(source) }
                pieces = values.map { Candidate(text: Glob.escape($0), isPattern: false) }
            case .parameter(let inner, _, _):
                return .unknown("${\(inner)}")
            case .arithmetic(let inner, _):
                return .unknown("$((\(inner)))")
            }
            out = out.flatMap { prefix in pieces.map { Candidate(text: prefix.text + $0.text, isPattern: prefix.isPattern || $0.isPattern) } }
            if out.count > 64 { return .unknown("too many combinations") }
        }
        return .values(out)
    }

    /// What `$(pwd)` and `$(git rev-parse --show-toplevel)` print: the working folder, and the
    /// worktree (when the working folder is inside it).
    func knownOutput(_ script: ShellScript) -> [String]? {
        guard script.items.count == 1, script.items[0].andOr.pipelines.count == 1, script.items[0].andOr.pipelines[0].commands.count == 1,
            case .simple(let simple) = script.items[0].andOr.pipelines[0].commands[0], simple.redirections.isEmpty, simple.assignments.isEmpty
        else { return nil }
        let words = simple.words.map(\.staticValue)
        guard case .paths(let dirs) = state.cwd else { return nil }
        if words == ["pwd"] { return dirs.sorted() }
        if words == ["git", "rev-parse", "--show-toplevel"], dirs.allSatisfy({ paths.resolver.isInside($0) }) { return [paths.resolver.worktree] }
        return nil
    }

    /// Bash brace expansion: `{a,b}c` → `ac`, `bc`; `{1..3}` → `1`, `2`, `3`.
    static func expandBraces(_ text: String, limit: Int = 64) -> [String] {
        let chars = Array(text)
        var start = 0
        while let open = chars[start...].firstIndex(of: "{") {
            var depth = 0
            var commas: [Int] = []
            var close: Int?
            for i in open..<chars.count {
                if chars[i] == "{" { depth += 1 }
                if chars[i] == "}" {
                    depth -= 1
                    if depth == 0 {
                        close = i
                        break
                    }
                }
                if chars[i] == ",", depth == 1 { commas.append(i) }
            }
            guard let close else { break }
            let prefix = String(chars[..<open]), suffix = String(chars[(close + 1)...])
            var alternatives: [String] = []
            if !commas.isEmpty {
                var from = open + 1
                for comma in commas + [close] {
                    alternatives.append(String(chars[from..<comma]))
                    from = comma + 1
                }
            } else {
                let inner = String(chars[(open + 1)..<close])
                let bounds = inner.split(separator: "..", omittingEmptySubsequences: false).map(String.init)
                if bounds.count == 2, let a = Int(bounds[0]), let b = Int(bounds[1]), abs(b - a) < limit {
                    alternatives = stride(from: a, through: b, by: a <= b ? 1 : -1).map(String.init)
                } else if bounds.count == 2, bounds[0].count == 1, bounds[1].count == 1,
                    let a = bounds[0].unicodeScalars.first?.value, let b = bounds[1].unicodeScalars.first?.value, a <= b, b - a < UInt32(limit)
                {
                    alternatives = (a...b).compactMap { Unicode.Scalar($0).map { String(Character($0)) } }
                }
            }
            if alternatives.isEmpty {
                start = open + 1
                continue
            }
            var out: [String] = []
            for alternative in alternatives {
                out += expandBraces(prefix + alternative + suffix, limit: limit)
                if out.count > limit { return [text] }
            }
            return out
        }
        return [text]
    }
}

extension String {
    /// `\n` written as two characters (printf, echo -e) read as a newline.
    var replacingEscapedNewlines: String {
        var out = ""
        var escaped = false
        for c in self {
            if escaped {
                out.append(c == "n" ? "\n" : c == "t" ? "\t" : c)
                if c != "n" && c != "t" { out.insert("\\", at: out.index(before: out.endIndex)) }
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else {
                out.append(c)
            }
        }
        if escaped { out.append("\\") }
        return out
    }
}
