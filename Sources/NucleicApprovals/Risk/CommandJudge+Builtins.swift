import NucleicProtocol

/// Shell builtins and the commands that act like them: the folder, variables, aliases; most
/// change nothing (`inertBuiltins`).
extension CommandJudge {
    static let inertBuiltins: Set<String> = [
        ":", "true", "false", "echo", "printf", "test", "[", "shift", "exit", "return", "wait", "sleep", "break", "continue",
        "let", "read", "getopts", "umask", "ulimit", "unalias", "type", "dirs", "jobs", "times", "help",
        "caller", "pwd", "which", "whereis", "basename", "dirname", "seq", "expr", "yes", "tput", "clear", "whoami", "id",
        "groups", "uname", "arch", "nproc", "tty", "locale", "getconf", "logname", "cal", "factor", "numfmt", "bc",
    ]

    mutating func judgeShellBuiltin(_ program: String) -> Bool {
        switch program {
        case "cd", "pushd", "chdir":
            inert = true
            let o = options()
            let target: ShellWord? = o.operands.first
            let newCwd: ShellState.Cwd
            if let target, target.staticValue == "-" {
                newCwd = .unknown("cd - returns to an earlier folder")
            } else {
                newCwd = Self.directories(target ?? .literal(resolver.home), from: state, paths: paths)
            }
            raise(.readOnly, "changes the shell's folder")
            effect = { $0.cwd = newCwd }
        case "popd":
            inert = true
            effect = { $0.cwd = .unknown("popd returns to an earlier folder") }
        case "export", "declare", "typeset", "local", "readonly":
            inert = true
            let o = options("")
            if o.hasAny("-p") || o.operands.isEmpty && !o.hasAny("-f", "-F") {
                raise(.hostExec, "prints every environment variable, which may hold secrets")
            }
            var assignments: [Assignment] = []
            for word in o.operands {
                guard let a = ShellParserCore.assignment(from: word) else { continue }
                assignments.append(a)
                if ParsedCommand.isCodeLoadingVariable(a.name) { raise(.unknown, "sets \(a.name), which changes what code runs") }
            }
            let evaluator = self.evaluator
            effect = { state in
                for a in assignments {
                    if case .values(let v) = evaluator.candidates(a.value), !a.append, v.allSatisfy({ !$0.isPattern }) {
                        state.vars[a.name] = v.map(\.literal)
                    } else {
                        state.vars[a.name] = nil
                    }
                }
            }
        case "unset":
            inert = true
            let names = args.compactMap(\.staticValue).filter { !$0.hasPrefix("-") }
            effect = { state in for n in names { state.vars[n] = nil } }
        case "set":
            inert = true
            if args.isEmpty { raise(.hostExec, "prints every shell variable, which may hold secrets") }
        case "alias", "hash", "enable":
            // `alias ls='rm -rf x'` (with expand_aliases), `hash -p /tmp/x ls`, `enable -f lib.so x`:
            // a later command of that name runs something else.
            inert = true
            let defines = program == "alias" ? args.contains { $0.text.contains("=") } : args.contains { ["-p", "-f"].contains($0.staticValue ?? "") }
            if defines { raise(.unknown, "\(program) changes what a later command name runs") }
        case "shopt":
            inert = true
        case "env", "printenv":
            if args.isEmpty || program == "env" {
                raise(.hostExec, "prints every environment variable, which may hold secrets")
            }
        case "source", ".":
            guard let file = args.first else { return true }
            read(file)
            raise(.execute, "runs the shell script \(file.source) in this shell")
            effect = { state in state.vars = [:] }
        case "command":
            inert = true  // `command -v X` (the runnable form was unwrapped)
        case "disown":
            raise(.hostExec, "lets background jobs outlive the session")
        case "history":
            inert = true
        default:
            guard Self.inertBuiltins.contains(program) else { return false }
            inert = true
            if program == "printf", let v = options("v").value("-v"), let name = v.staticValue {
                effect = { $0.vars[name] = nil }
            }
            if program == "read" {
                let names = args.compactMap(\.staticValue).filter { !$0.hasPrefix("-") }
                effect = { state in for n in names { state.vars[n] = nil } }
            }
        }
        return true
    }
}
