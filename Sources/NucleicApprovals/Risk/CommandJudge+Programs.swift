import NucleicProtocol

/// What each known program does: its base risk and which of its arguments are files it reads
/// or writes. Programs Nucleic does not know run project code: `execute`, with path-looking
/// arguments checked.
extension CommandJudge {
    var args: [ShellWord] { Array(c.words.dropFirst()) }

    func options(_ short: String = "", _ long: Set<String> = [], from: Int = 1, stop: Bool = false) -> CommandOptions {
        CommandOptions(c.words, from: from, valuedShort: Set(short), valuedLong: long, stopAtFirstOperand: stop)
    }

    /// The first operand's value (a subcommand), and the index after it.
    func subcommand(_ o: CommandOptions) -> (String?, Int) {
        guard let index = o.firstOperand else { return (nil, c.words.count) }
        return (c.words[index].staticValue, index + 1)
    }

    /// `python3.11` → `python`, `mkfs.ext4` → `mkfs`, `pip3` → `pip`.
    static func canonical(_ program: String) -> String {
        for base in ["python", "pip", "pypy", "ruby", "perl", "php", "node", "gcc", "g++", "clang", "clang++", "lua", "java", "swift"]
        where program.hasPrefix(base) {
            let rest = program.dropFirst(base.count)
            if rest.allSatisfy({ $0.isNumber || $0 == "." || $0 == "-" }) { return base }
        }
        for prefix in ["mkfs", "fsck", "mke2fs"] where program.hasPrefix(prefix + ".") { return prefix }
        return program
    }

    mutating func judgeProgram(_ name: String) {
        if name.contains("/"), ShellParser.programName(name) == name {
            runFile(c.words[0])
            pathLikeArguments(args)
            return
        }
        let program = Self.canonical(ShellParser.programName(name))
        if judgeShellBuiltin(program) || judgeFiles(program) || judgeSystem(program) || judgeNetwork(program) || judgePackages(program)
            || judgeDevelopment(program)
        {
            return
        }
        raise(.execute, "runs \(program), a program Nucleic does not know")
        pathLikeArguments(args)
        extraArguments(.read)
    }

    /// A script or binary named by a path: inside the worktree it is project code.
    mutating func runFile(_ word: ShellWord) {
        access(word, .read)
        raise(.execute, "runs \(word.source)")
    }
}
