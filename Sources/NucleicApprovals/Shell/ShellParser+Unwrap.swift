/// Peeling wrappers so that the real command is judged: `sudo`, `env`, `xargs`, `timeout`,
/// `nohup`, `nice`, `time`, `command`, `exec`, `stdbuf`, `ionice`, `setsid`, `busybox`,
/// `sh -c '…'` / `bash -lc '…'` (parsed again), `eval`, `trap`, `watch`, `su -c`,
/// `find … -exec cmd … ;|+`, `fd -x cmd`, and project runners (`uv run`, `poetry run`, …).
extension ShellParser {
    /// The command `simple` runs, its wrappers peeled.
    public static func unwrap(_ simple: SimpleCommand, maxDepth: Int = defaultMaxDepth) -> CommandNode {
        let command = ParsedCommand(assignments: simple.assignments, words: simple.words, redirections: simple.redirections, source: simple.source)
        return unwrap(command, depth: 0, maxDepth: maxDepth)
    }

    /// Folders whose programs are named by their base name (`/usr/bin/sudo` is `sudo`; `./sudo` is not).
    static let systemBinDirectories: Set<String> = ["/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"]

    /// The name a program is known by: its base name when it is named by a path in a system
    /// folder, else the name as written.
    public static func programName(_ name: String) -> String {
        guard let slash = name.lastIndex(of: "/") else { return name }
        let dir = String(name[..<slash])
        return systemBinDirectories.contains(dir) ? String(name[name.index(after: slash)...]) : name
    }

    static let shells: Set<String> = ["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh"]

    static func unwrap(_ start: ParsedCommand, depth: Int, maxDepth: Int) -> CommandNode {
        var c = start
        guard depth <= maxDepth else { return .opaque(c, reason: "wrappers nest more than \(maxDepth) levels deep") }
        for _ in 0..<64 {
            guard let name = c.name else { return .command(c, runs: []) }
            let words = c.words
            func peel(_ count: Int, _ kind: Wrapper.Kind, _ display: String? = nil) {
                c.wrappers.append(Wrapper(name: display ?? programName(name), words: Array(words[..<count]), kind: kind))
                c.words = Array(words[count...])
            }
            func options(_ short: String = "", _ long: Set<String> = [], from: Int = 1) -> CommandOptions {
                CommandOptions(words, from: from, valuedShort: Set(short), valuedLong: long, stopAtFirstOperand: true)
            }
            switch programName(name) {
            case "sudo", "doas", "pkexec":
                let o = options(programName(name) == "doas" ? "uC" : "ugpChDrtUTR",
                                ["user", "group", "host", "prompt", "close-from", "chdir", "role", "type", "other-user", "command-timeout", "chroot"])
                if o.hasAny("-e", "--edit", "-l", "--list", "-v", "--validate", "-k", "-K", "--reset-timestamp", "--remove-timestamp", "-V", "--version") {
                    return .command(c, runs: [])
                }
                guard let first = o.firstOperand else { return .command(c, runs: []) }
                if let dir = o.value("-D", "--chdir") { c.workingDirectory = dir }
                peel(first, .elevating)
            case "env":
                let o = options("uCS", ["unset", "chdir", "split-string"])
                if let split = o.value("-S", "--split-string") {
                    c.wrappers.append(Wrapper(name: "env -S", words: words, kind: .shell))
                    return script(split, in: c, depth: depth, maxDepth: maxDepth)
                }
                var index = o.firstOperand ?? words.count
                if index < words.count, words[index].staticValue == "-" { index += 1 }
                while index < words.count, let assignment = ShellParserCore.assignment(from: words[index]) {
                    c.assignments.append(assignment)
                    index += 1
                }
                guard index < words.count else { return .command(c, runs: []) }  // `env` alone prints the environment
                if let dir = o.value("-C", "--chdir") { c.workingDirectory = dir }
                peel(index, .transparent)
            case "nohup", "builtin":
                guard words.count > 1 else { return .command(c, runs: []) }
                peel(1, .transparent)
            case "busybox":
                guard words.count > 1, words[1].staticValue.map({ !$0.hasPrefix("-") }) ?? false else { return .command(c, runs: []) }
                peel(1, .transparent)
            case "time":
                guard let first = options("fo", ["format", "output"]).firstOperand else { return .command(c, runs: []) }
                peel(first, .transparent)
            case "command":
                let o = options()
                if o.hasAny("-v", "-V") { return .command(c, runs: []) }
                guard let first = o.firstOperand else { return .command(c, runs: []) }
                peel(first, .transparent)
            case "exec":
                guard let first = options("a").firstOperand else { return .command(c, runs: []) }
                peel(first, .transparent)
            case "nice":
                guard let first = options("n", ["adjustment"]).firstOperand else { return .command(c, runs: []) }
                peel(first, .transparent)
            case "timeout":
                // timeout [options] DURATION command …
                guard let duration = options("sk", ["signal", "kill-after"]).firstOperand, duration + 1 < words.count else {
                    return .command(c, runs: [])
                }
                peel(duration + 1, .transparent)
            case "stdbuf":
                guard let first = options("ioe", ["input", "output", "error"]).firstOperand else { return .command(c, runs: []) }
                peel(first, .transparent)
            case "ionice":
                let o = options("cnpPu", ["class", "classdata", "pid", "pgid", "uid"])
                guard !o.hasAny("-p", "--pid", "-P", "--pgid", "-u", "--uid"), let first = o.firstOperand else { return .command(c, runs: []) }
                peel(first, .transparent)
            case "setsid":
                guard let first = options().firstOperand else { return .command(c, runs: []) }
                peel(first, .detaching)
            case "xargs":
                let o = options("adEILnPs", ["arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"])
                if let first = o.firstOperand {
                    peel(first, .feedsArguments)
                } else {
                    c.wrappers.append(Wrapper(name: "xargs", words: words, kind: .feedsArguments))
                    c.words = [.literal("echo")]  // xargs with no command runs echo
                }
                c.acceptsExtraArguments = true
            case "watch":
                let o = options("n", ["interval"])
                guard let first = o.firstOperand else { return .command(c, runs: []) }
                if o.hasAny("-x", "--exec") {
                    peel(first, .transparent)
                } else {
                    // watch joins its arguments with spaces and runs them with `sh -c`.
                    let rest = words[first...]
                    let texts = rest.compactMap(\.staticValue)
                    guard texts.count == rest.count else { return .opaque(c, reason: "runs a script built at run time") }
                    return script(.literal(texts.joined(separator: " ")), in: c, depth: depth, maxDepth: maxDepth)
                }
            case let shell where shells.contains(shell):
                return unwrapShell(c, depth: depth, maxDepth: maxDepth)
            case "eval":
                let args = words.dropFirst()
                guard !args.isEmpty else { return .command(c, runs: []) }
                let texts = args.compactMap(\.staticValue)
                guard texts.count == args.count else { return .opaque(c, reason: "runs text built at run time") }
                return script(.literal(texts.joined(separator: " ")), in: c, depth: depth, maxDepth: maxDepth)
            case "trap":
                guard words.count > 2, let action = words[1].staticValue else {
                    return words.count > 2 ? .opaque(c, reason: "runs text built at run time") : .command(c, runs: [])
                }
                if action == "-" || action.hasPrefix("-") && action.count == 2 { return .command(c, runs: []) }
                return script(words[1], in: c, depth: depth, maxDepth: maxDepth)
            case "su", "runuser":
                let o = CommandOptions(words, from: 1, valuedShort: Set("csgGwu"),
                                       valuedLong: ["command", "shell", "group", "supp-group", "whitelist-environment", "user"], stopAtFirstOperand: false)
                guard let command = o.value("-c", "--command") else { return .command(c, runs: []) }
                c.wrappers.append(Wrapper(name: programName(name), words: words, kind: .elevating))
                return script(command, in: c, depth: depth, maxDepth: maxDepth)
            case "find":
                return .command(c, runs: findExecCommands(c, flags: ["-exec", "-execdir", "-ok", "-okdir"], depth: depth, maxDepth: maxDepth))
            case "fd", "fdfind":
                return .command(c, runs: findExecCommands(c, flags: ["-x", "--exec", "-X", "--exec-batch"], depth: depth, maxDepth: maxDepth))
            case let runner where ["uv", "poetry", "pipenv", "pdm", "rye", "hatch"].contains(runner) && words.count > 2
                && words[1].staticValue == "run":
                let o = options("p", ["with", "with-requirements", "python", "project", "directory", "package", "extra", "group", "env-file",
                                      "index", "index-url", "extra-index-url", "find-links"], from: 2)
                guard let first = o.firstOperand else { return .command(c, runs: []) }
                peel(first, .runner, programName(name) + " run")
            case "bundle" where words.count > 2 && words[1].staticValue == "exec":
                peel(2, .runner, "bundle exec")
            default:
                return .command(c, runs: [])
            }
        }
        return .opaque(c, reason: "too many wrappers")
    }

    /// `sh [options] -c SCRIPT`, `sh FILE`, or `sh` reading its script from standard input.
    /// A shell's options: whether it has `-c`, reads its script from standard input (`-s`), and
    /// where its operands start.
    static func shellOptions(_ words: [ShellWord]) -> (hasC: Bool, readsStdin: Bool, operands: Int) {
        var j = 1
        var hasC = false, readsStdin = false
        while j < words.count, let v = words[j].staticValue {
            if v == "--" || v == "-" {
                j += 1
                break
            }
            if v.hasPrefix("--") {
                j += v == "--rcfile" || v == "--init-file" ? 2 : 1
                continue
            }
            guard v.count > 1, v.hasPrefix("-") || v.hasPrefix("+") else { break }
            let letters = v.dropFirst()
            if letters.contains("c") { hasC = true }
            if letters.contains("s") { readsStdin = true }
            j += 1
            if letters.last == "o" || letters.last == "O" { j += 1 }
        }
        return (hasC, readsStdin, min(j, words.count))
    }

    /// Whether `c` is a shell that runs the script on its standard input (`sh`, `bash -s`).
    static func readsScriptFromStandardInput(_ c: ParsedCommand) -> Bool {
        guard let name = c.name, shells.contains(programName(name)) else { return false }
        let (hasC, readsStdin, operands) = shellOptions(c.words)
        return !hasC && (readsStdin || operands >= c.words.count)
    }

    static func unwrapShell(_ c: ParsedCommand, depth: Int, maxDepth: Int) -> CommandNode {
        let words = c.words
        let (hasC, readsStdin, first) = shellOptions(words)
        let operands = words[first...]
        if hasC {
            guard let text = operands.first else { return .command(c, runs: []) }
            return script(text, in: c, depth: depth, maxDepth: maxDepth)
        }
        if readsStdin || operands.isEmpty {
            if let input = c.redirections.last(where: \.feedsStandardInput) {
                switch input.op {
                case .hereDocument, .hereDocumentStrippingTabs:
                    if let body = input.hereDocument { return script(body, in: c, depth: depth, maxDepth: maxDepth) }
                case .hereString:
                    return script(input.target, in: c, depth: depth, maxDepth: maxDepth)
                default: break
                }
            }
            return .opaque(c, reason: "runs a script read from its standard input")
        }
        return .command(c, runs: [])  // runs a script file: judged as running that file
    }

    /// The script in `text`, parsed; opaque when it is built at run time or does not parse.
    static func script(_ text: ShellWord, in c: ParsedCommand, depth: Int, maxDepth: Int) -> CommandNode {
        guard let source = text.staticValue ?? staticHereDocument(text) else {
            return .opaque(c, reason: "runs a script built at run time")
        }
        switch parse(source, maxDepth: max(0, maxDepth - depth - 1)) {
        case .success(let script): return .script(c, script)
        case .failure(let error): return .opaque(c, reason: "its script does not parse: \(error.message)")
        }
    }

    /// A here-document body is quoted text even when it has glob characters.
    static func staticHereDocument(_ word: ShellWord) -> String? {
        var out = ""
        for part in word.parts {
            guard case .literal(let text, _) = part else { return nil }
            out += text
        }
        return out
    }

    /// The commands after `-exec … ;` (or `+`) in a `find`, or after `-x` in an `fd`.
    static func findExecCommands(_ c: ParsedCommand, flags: Set<String>, depth: Int, maxDepth: Int) -> [CommandNode] {
        var runs: [CommandNode] = []
        var j = 1
        let words = c.words
        while j < words.count {
            guard let flag = words[j].staticValue, flags.contains(flag) else {
                j += 1
                continue
            }
            var inner: [ShellWord] = []
            var k = j + 1
            var terminator: String?
            while k < words.count {
                if let v = words[k].staticValue, v == ";" || (v == "+" && inner.last?.staticValue == "{}") {
                    terminator = v
                    break
                }
                inner.append(words[k])
                k += 1
            }
            if !inner.isEmpty {
                let display = programName(c.name ?? "find") + " " + flag
                let command = ParsedCommand(
                    words: inner, wrappers: c.wrappers + [Wrapper(name: display, words: [], kind: .perFile)],
                    source: inner.map(\.canonical).joined(separator: " "),
                    acceptsExtraArguments: terminator == "+" || terminator == nil && !inner.contains { $0.staticValue == "{}" },
                    workingDirectory: c.workingDirectory)
                runs.append(unwrap(command, depth: depth + 1, maxDepth: maxDepth))
            }
            j = k + 1
        }
        return runs
    }
}

/// Options and operands of a command line, parsed the getopt way: `-abc` is three flags unless
/// one of them takes a value, `--name=value` and `--name value`, `--` ends options.
struct CommandOptions {
    /// Options in order, combined short flags split (`-rf` → `-r`, `-f`), with their values.
    var options: [(name: String, value: ShellWord?)] = []
    /// Indices (into the words) of the operands.
    var operandIndices: [Int] = []
    let words: [ShellWord]

    init(_ words: [ShellWord], from start: Int, valuedShort: Set<Character>, valuedLong: Set<String>, stopAtFirstOperand: Bool) {
        self.words = words
        var j = start
        var endOfOptions = false
        while j < words.count {
            let word = words[j]
            guard !endOfOptions, let v = word.staticValue, v.count > 1, v.hasPrefix("-") else {
                operandIndices.append(j)
                if stopAtFirstOperand { break }
                j += 1
                continue
            }
            if v == "--" {
                endOfOptions = true
                j += 1
                if stopAtFirstOperand, j < words.count { operandIndices.append(j) }
                if stopAtFirstOperand { break }
                continue
            }
            if v.hasPrefix("--") {
                if let eq = v.firstIndex(of: "=") {
                    options.append((String(v[..<eq]), .literal(String(v[v.index(after: eq)...]))))
                } else if valuedLong.contains(String(v.dropFirst(2))), j + 1 < words.count {
                    options.append((v, words[j + 1]))
                    j += 1
                } else {
                    options.append((v, nil))
                }
                j += 1
                continue
            }
            var letters = v.dropFirst()
            while let letter = letters.first {
                letters = letters.dropFirst()
                if valuedShort.contains(letter) {
                    if !letters.isEmpty {
                        options.append(("-" + String(letter), .literal(String(letters))))
                    } else if j + 1 < words.count {
                        options.append(("-" + String(letter), words[j + 1]))
                        j += 1
                    } else {
                        options.append(("-" + String(letter), nil))
                    }
                    break
                }
                options.append(("-" + String(letter), nil))
            }
            j += 1
        }
    }

    var firstOperand: Int? { operandIndices.first }
    var operands: [ShellWord] { operandIndices.map { words[$0] } }

    func hasAny(_ names: String...) -> Bool { options.contains { names.contains($0.name) } }

    /// The last value given for any of `names`.
    func value(_ names: String...) -> ShellWord? { options.last { names.contains($0.name) }?.value }

    func values(_ names: String...) -> [ShellWord] { options.filter { names.contains($0.name) }.compactMap(\.value) }
}

extension ShellScript {
    /// Every command the script may run, wrappers peeled, in the order they would run (a
    /// command substitution before the command whose word holds it): including commands inside
    /// substitutions, compound commands, `sh -c` strings and `find -exec`. A command that runs a
    /// script (`bash -c '…'`) is listed, then the script's commands.
    public func commands(maxDepth: Int = ShellParser.defaultMaxDepth) -> [ParsedCommand] {
        var out: [ParsedCommand] = []
        CommandCollector(maxDepth: maxDepth).visit(self, into: &out)
        return out
    }
}

/// Walks a script for `ShellScript.commands`.
struct CommandCollector {
    let maxDepth: Int

    func visit(_ script: ShellScript, into out: inout [ParsedCommand]) {
        for item in script.items {
            for pipeline in item.andOr.pipelines {
                for command in pipeline.commands { visit(command, into: &out) }
            }
        }
    }

    func visit(words: [ShellWord], into out: inout [ParsedCommand]) {
        for word in words {
            for sub in word.substitutions { visit(sub, into: &out) }
        }
    }

    func visit(redirections: [Redirection], into out: inout [ParsedCommand]) {
        visit(words: redirections.map(\.target) + redirections.compactMap(\.hereDocument), into: &out)
    }

    func visit(_ command: ShellCommand, into out: inout [ParsedCommand]) {
        switch command {
        case .simple(let s):
            visit(words: s.assignments.map(\.value) + s.words, into: &out)
            visit(redirections: s.redirections, into: &out)
            visit(ShellParser.unwrap(s, maxDepth: maxDepth), into: &out)
        case .subshell(let body, let r), .group(let body, let r):
            visit(body, into: &out)
            visit(redirections: r, into: &out)
        case .ifClause(let branches, let elseBody, let r):
            for branch in branches {
                visit(branch.condition, into: &out)
                visit(branch.body, into: &out)
            }
            if let elseBody { visit(elseBody, into: &out) }
            visit(redirections: r, into: &out)
        case .loop(_, let condition, let body, let r):
            visit(condition, into: &out)
            visit(body, into: &out)
            visit(redirections: r, into: &out)
        case .forLoop(_, let items, let body, let r):
            visit(words: items ?? [], into: &out)
            visit(body, into: &out)
            visit(redirections: r, into: &out)
        case .arithmeticFor(_, let body, let r):
            visit(body, into: &out)
            visit(redirections: r, into: &out)
        case .caseClause(let subject, let items, let r):
            visit(words: [subject], into: &out)
            for item in items {
                visit(words: item.patterns, into: &out)
                visit(item.body, into: &out)
            }
            visit(redirections: r, into: &out)
        case .conditional(let words, let r):
            visit(words: words, into: &out)
            visit(redirections: r, into: &out)
        case .arithmetic(let word, let r):
            visit(words: [word], into: &out)
            visit(redirections: r, into: &out)
        case .function(_, let body):
            visit(body, into: &out)
        }
    }

    func visit(_ node: CommandNode, into out: inout [ParsedCommand]) {
        switch node {
        case .command(let c, let runs):
            out.append(c)
            for run in runs { visit(run, into: &out) }
        case .script(let c, let script):
            out.append(c)
            guard maxDepth > 1 else { return }
            CommandCollector(maxDepth: maxDepth - 1).visit(script, into: &out)
        case .opaque(let c, _):
            out.append(c)
        }
    }
}
