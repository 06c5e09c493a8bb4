import NucleicProtocol

/// Walks a parsed shell script the way it would run, keeping what the classifier needs of the
/// shell's state: the possible working folders (`cd` moves them) and variables with values
/// known from the script itself (`X=src`, `for f in *.c`). Every command, substitution, wrapper
/// and redirection becomes a judged part.
struct ShellJudge {
    let paths: PathJudge
    let maxDepth: Int
    var parts: [Classification.Part] = []

    var resolver: PathResolver { paths.resolver }

    static func classify(_ script: String, cwd: String?, resolver: PathResolver, policy: PathPolicy) -> ([Classification.Part], ShellParseError?) {
        let command = ParsedCommand(words: [], source: script)
        switch ShellParser.parse(script) {
        case .failure(let error):
            let part = Classification.Part(
                command: command, risk: .unknown,
                reasons: ["the command does not parse (\(error.message)), so Nucleic cannot tell what it runs"])
            return ([part], error)
        case .success(let parsed):
            var judge = ShellJudge(paths: PathJudge(resolver: resolver, policy: policy), maxDepth: ShellParser.defaultMaxDepth)
            let start = cwd.flatMap { resolver.resolve($0, from: resolver.worktree) } ?? resolver.worktree
            var state = ShellState(cwd: .paths([start]))
            judge.walk(parsed, &state, ShellContext())
            if judge.parts.isEmpty {
                judge.parts = [Classification.Part(command: command, role: .shellState, risk: .readOnly, reasons: ["runs nothing"])]
            }
            return (judge.parts, nil)
        }
    }

    // MARK: Lists

    mutating func walk(_ script: ShellScript, _ state: inout ShellState, _ ctx: ShellContext) {
        for item in script.items {
            if item.background {
                var copy = state  // `&` runs in a subshell
                walk(item.andOr, &copy, ctx)
            } else {
                walk(item.andOr, &state, ctx)
            }
        }
    }

    mutating func walk(_ andOr: AndOrList, _ state: inout ShellState, _ ctx: ShellContext) {
        var current = state
        var exits: ShellState?
        for (k, pipeline) in andOr.pipelines.enumerated() {
            let before = current
            walk(pipeline, &current, ctx)
            // The list may stop after any pipeline, so what follows sees any of those states.
            exits = exits?.merged(with: current) ?? current
            // After `a || b`, b may run in the state before a (a failed); after `a && b`, after a.
            if k < andOr.connectors.count, andOr.connectors[k] == .or { current = before.merged(with: current) }
        }
        state = exits ?? current
    }

    mutating func walk(_ pipeline: Pipeline, _ state: inout ShellState, _ ctx: ShellContext) {
        if pipeline.commands.count == 1 {
            _ = walk(pipeline.commands[0], &state, ctx, producer: nil)
            return
        }
        var producer: Producer?
        for command in pipeline.commands {
            var copy = state  // each command of a pipeline runs in a subshell
            producer = walk(command, &copy, ctx, producer: producer)
        }
    }

    // MARK: Commands

    /// Judges one command; returns what it writes to its standard output, for an `xargs` after it.
    mutating func walk(_ command: ShellCommand, _ state: inout ShellState, _ ctx: ShellContext, producer: Producer?) -> Producer? {
        switch command {
        case .simple(let simple):
            walkSubstitutions(simple.assignments.map(\.value) + simple.assignments.flatMap { $0.array ?? [] } + simple.words, state, ctx)
            walkSubstitutions(simple.redirections.map(\.target) + simple.redirections.compactMap(\.hereDocument), state, ctx)
            return judge(ShellParser.unwrap(simple, maxDepth: maxDepth - ctx.depth), &state, ctx, producer: producer)
        case .subshell(let body, let r):
            var copy = state
            walk(body, &copy, ctx)
            redirectionsOnly(r, state, ctx)
        case .group(let body, let r):
            walk(body, &state, ctx)
            redirectionsOnly(r, state, ctx)
        case .ifClause(let branches, let elseBody, let r):
            var reached = state
            var outcome: ShellState?
            for branch in branches {
                walk(branch.condition, &reached, ctx)
                var taken = reached
                walk(branch.body, &taken, ctx)
                outcome = outcome?.merged(with: taken) ?? taken
            }
            var otherwise = reached
            if let elseBody { walk(elseBody, &otherwise, ctx) }
            state = outcome?.merged(with: otherwise) ?? otherwise
            redirectionsOnly(r, state, ctx)
        case .loop(_, let condition, let body, let r):
            var s = state
            walk(condition, &s, ctx)
            var b = s
            walk(body, &b, ctx)
            b = s.merged(with: b)
            walk(condition, &b, ctx)  // a second pass sees what the first iteration changed
            walk(body, &b, ctx)
            state = s.merged(with: b)
            redirectionsOnly(r, state, ctx)
        case .forLoop(let variable, let items, let body, let r):
            walkSubstitutions(items ?? [], state, ctx)
            var s = state
            s.vars[variable] = items.flatMap { loopValues($0, state) }
            var b = s
            walk(body, &b, ctx)
            b = s.merged(with: b)
            walk(body, &b, ctx)
            state = state.merged(with: b)
            redirectionsOnly(r, state, ctx)
        case .arithmeticFor(_, let body, let r):
            var b = state
            walk(body, &b, ctx)
            state = state.merged(with: b)
            redirectionsOnly(r, state, ctx)
        case .caseClause(let subject, let items, let r):
            walkSubstitutions([subject] + items.flatMap(\.patterns), state, ctx)
            var outcome = state
            for item in items {
                var b = state
                walk(item.body, &b, ctx)
                outcome = outcome.merged(with: b)
            }
            state = outcome
            redirectionsOnly(r, state, ctx)
        case .conditional(let words, let r):
            walkSubstitutions(words, state, ctx)
            redirectionsOnly(r, state, ctx)
        case .arithmetic(let word, let r):
            walkSubstitutions([word], state, ctx)
            redirectionsOnly(r, state, ctx)
        case .function(let name, let body):
            // The body is judged as if it ran; defining a function is itself unknown, since a
            // later command of that name runs it (and recursion such as `:(){ :|:& };:` hides).
            parts.append(Classification.Part(
                command: ParsedCommand(words: [], source: name + "()"), role: .shellState, risk: .unknown,
                reasons: ["defines the shell function \(name), so later commands named \(name) run its body"]))
            var copy = state
            _ = walk(body, &copy, ctx, producer: nil)
        }
        return nil
    }

    /// Command and process substitutions run first, each in a subshell.
    mutating func walkSubstitutions(_ words: [ShellWord], _ state: ShellState, _ ctx: ShellContext) {
        for word in words {
            for sub in word.substitutions {
                var copy = state
                walk(sub, &copy, ctx.inside("$(…)"))
            }
        }
    }

    /// A compound command's redirections, judged as a part of their own.
    mutating func redirectionsOnly(_ redirections: [Redirection], _ state: ShellState, _ ctx: ShellContext) {
        guard !redirections.isEmpty else { return }
        walkSubstitutions(redirections.map(\.target), state, ctx)
        let command = ParsedCommand(words: [], redirections: redirections, source: redirections.map { ($0.fd.map(String.init) ?? "") + $0.op.rawValue + $0.target.source }.joined(separator: " "))
        var judge = CommandJudge(c: command, paths: paths, state: state, ctx: ctx)
        judge.role = .shellState
        judge.judgeRedirections()
        parts.append(judge.part())
    }

    /// Values of a for-loop variable: the items, globs expanded.
    func loopValues(_ items: [ShellWord], _ state: ShellState) -> [String]? {
        var values: [String] = []
        for item in items {
            guard case .values(let candidates) = WordEvaluator(paths: paths, state: state).candidates(item) else { return nil }
            for candidate in candidates {
                guard candidate.isPattern else {
                    values.append(candidate.literal)
                    continue
                }
                guard case .paths(let cwds) = state.cwd, cwds.count == 1, let cwd = cwds.first else { return nil }
                let absolute = candidate.text.hasPrefix("/") ? candidate.text : Glob.escape(cwd) + "/" + candidate.text
                guard let matches = resolver.expandGlob(absolute) else { return nil }
                values += matches.isEmpty ? [candidate.literal] : matches
            }
            if values.count > 256 { return nil }
        }
        return values
    }

    // MARK: Nodes

    mutating func judge(_ node: CommandNode, _ state: inout ShellState, _ ctx: ShellContext, producer: Producer?) -> Producer? {
        var ctx = ctx
        let c = node.command
        if c.wrappers.contains(where: { $0.kind == .feedsArguments }) {
            ctx.extraArguments = producer?.source ?? .unknown("xargs reads them from its input")
        }
        switch node {
        case .command(let command, let runs):
            var judge = CommandJudge(c: command, paths: paths, state: state, ctx: ctx)
            judge.judge()
            parts.append(judge.part())
            judge.effect?(&state)
            if !runs.isEmpty {
                var inner = ctx.inside(runs.first?.command.wrappers.last?.name ?? "find -exec")
                inner.placeholder = ("{}", judge.listedFiles ?? .unknown("the files it finds"))
                inner.extraArguments = judge.listedFiles ?? .unknown("the files it finds")
                for run in runs {
                    var copy = state
                    _ = self.judge(run, &copy, inner, producer: nil)
                }
            }
            return judge.producer()
        case .script(let command, let script):
            var judge = CommandJudge(c: command, paths: paths, state: state, ctx: ctx)
            judge.role = .wrapper
            judge.judgeWrapperOnly()
            parts.append(judge.part())
            var inner = ctx.inside(command.wrappers.last?.name ?? ShellParser.programName(command.name ?? "sh"))
            inner.elevated = inner.elevated || judge.elevated
            inner.depth += 1
            if inner.depth > maxDepth {
                parts.append(Classification.Part(command: command, risk: .unknown, reasons: ["scripts nest more than \(maxDepth) levels deep"]))
                return nil
            }
            // `eval` and `trap` run in this shell; `sh -c` in a child (its `cd` does not leak).
            if command.name == "eval" {
                walk(script, &state, inner)
            } else {
                var copy = state
                copy.cwd = judge.cwd
                walk(script, &copy, inner)
            }
            return nil
        case .opaque(let command, let reason):
            // `echo 'rm -rf x' | sh`, `cat <<'EOF' | bash`: the script is the text piped in.
            if let text = producer?.text, ShellParser.readsScriptFromStandardInput(command),
                case .success(let script) = ShellParser.parse(text, maxDepth: max(0, maxDepth - ctx.depth - 1))
            {
                return judge(.script(command, script), &state, ctx, producer: nil)
            }
            var judge = CommandJudge(c: command, paths: paths, state: state, ctx: ctx)
            judge.judgeWrapperOnly()
            judge.raise(.unknown, reason)
            parts.append(judge.part())
            return nil
        }
    }
}

/// Where file names given to a command at run time come from (`xargs` input, `find -exec {}`).
enum ArgumentSource: Sendable, Hashable {
    /// Names of files inside the worktree (from `find .`, `git ls-files`, `grep -l` in it, …).
    case inside
    /// Somewhere outside: the first such path.
    case outside(String)
    /// Text Nucleic cannot know.
    case unknown(String)
}

/// What a pipeline stage writes, for an `xargs` after it.
struct Producer {
    var source: ArgumentSource
    /// The exact text it writes, when the script says (`echo 'ls'`, `cat <<'EOF'`).
    var text: String?
}

/// The shell's state as far as the classifier follows it.
struct ShellState {
    enum Cwd: Hashable {
        case paths(Set<String>)
        case unknown(String)
    }

    var cwd: Cwd
    /// Variables with values known from the script (absent: unknown).
    var vars: [String: [String]] = [:]

    func merged(with other: ShellState) -> ShellState {
        var out = self
        switch (cwd, other.cwd) {
        case (.paths(let a), .paths(let b)):
            let union = a.union(b)
            out.cwd = union.count > 8 ? .unknown("the folder depends on earlier commands") : .paths(union)
        case (.unknown(let r), _), (_, .unknown(let r)): out.cwd = .unknown(r)
        }
        out.vars = [:]
        for (name, values) in vars {
            guard let others = other.vars[name] else { continue }
            let union = Array(Set(values).union(others)).sorted()
            if union.count <= 64 { out.vars[name] = union }
        }
        return out
    }
}

/// Where in the script a command sits.
struct ShellContext {
    /// Inside `sudo`/`su`: everything runs as another user.
    var elevated = false
    /// The wrappers and substitutions around it, outermost first.
    var via: [String] = []
    var depth = 0
    /// A word standing for file names given at run time (`{}` of `find -exec`, `xargs -I X`).
    var placeholder: (String, ArgumentSource)?
    /// Where arguments appended at run time come from (`xargs`, `find -exec … +`).
    var extraArguments: ArgumentSource?

    func inside(_ wrapper: String) -> ShellContext {
        var copy = self
        copy.via.append(wrapper)
        copy.placeholder = nil
        copy.extraArguments = nil
        return copy
    }
}
