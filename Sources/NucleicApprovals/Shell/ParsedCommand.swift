/// One command that runs, with its wrappers peeled off: what the risk classifier judges and a
/// permission rule matches.
///
/// `sudo timeout 5 env FOO=1 npm test >out` is the command `npm test` with the assignment
/// `FOO=1`, the redirection `>out` and the wrappers `sudo`, `timeout 5`, `env`.
public struct ParsedCommand: Sendable, Hashable {
    public var assignments: [Assignment]
    /// The real command and its arguments.
    public var words: [ShellWord]
    public var redirections: [Redirection]
    /// Peeled wrappers, outermost first.
    public var wrappers: [Wrapper]
    /// The simple command as written (for `find -exec` commands: their words).
    public var source: String
    /// More arguments are appended when it runs (`xargs cmd`, `find … -exec cmd {} +`).
    public var acceptsExtraArguments: Bool
    /// A folder the command runs in instead of the shell's (`env -C DIR`, `sudo -D DIR`).
    public var workingDirectory: ShellWord?

    public init(assignments: [Assignment] = [], words: [ShellWord], redirections: [Redirection] = [], wrappers: [Wrapper] = [],
                source: String, acceptsExtraArguments: Bool = false, workingDirectory: ShellWord? = nil)
    {
        self.assignments = assignments
        self.words = words
        self.redirections = redirections
        self.wrappers = wrappers
        self.source = source
        self.acceptsExtraArguments = acceptsExtraArguments
        self.workingDirectory = workingDirectory
    }

    /// The command's name as written (`npm`, `./build.sh`, `/usr/bin/git`), nil when computed at
    /// run time (`$CMD`) or when there is no command (`FOO=1`, `>file`).
    public var name: String? {
        guard let first = words.first else { return nil }
        // `[` is an unquoted glob character, yet names the test builtin (it matches no file).
        if first.source == "[" { return "[" }
        return first.staticValue
    }

    public var arguments: ArraySlice<ShellWord> { words.dropFirst() }

    /// The words in canonical spelling (`npm test 'a b'`), without assignments, wrappers or
    /// redirections.
    public var text: String { words.map(\.canonical).joined(separator: " ") }

    /// What an allow rule is matched against: `text`, preceded by the wrappers that change what
    /// the command may do (`sudo`, `setsid`, `uv run`) and by assignments to variables that
    /// change which code runs (`LD_PRELOAD=…`, `PATH=…`). Transparent wrappers (`timeout`,
    /// `nice`, `nohup`, `time`, `env`, `xargs`, `sh -c`) are left out, as Claude Code does.
    public var ruleText: String {
        var prefix: [String] = []
        for wrapper in wrappers where !wrapper.kind.isTransparent { prefix += wrapper.words.map(\.canonical) }
        for assignment in assignments where Self.isCodeLoadingVariable(assignment.name) {
            prefix.append(assignment.name + (assignment.append ? "+=" : "=") + assignment.value.canonical)
        }
        return (prefix + words.map(\.canonical)).joined(separator: " ")
    }

    /// Variables whose value changes which code a command runs or loads.
    public static func isCodeLoadingVariable(_ name: String) -> Bool {
        codeLoadingVariables.contains(name) || name.hasPrefix("LD_") || name.hasPrefix("DYLD_") || name.hasPrefix("GIT_CONFIG")
            || name.lowercased().hasPrefix("npm_config_")
    }

    static let codeLoadingVariables: Set<String> = [
        "PATH", "NODE_OPTIONS", "NODE_PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "PERL5LIB",
        "PERL5OPT", "PERLLIB", "RUBYLIB", "RUBYOPT", "BASH_ENV", "ENV", "IFS", "SHELLOPTS", "BASHOPTS", "PS4",
        "PROMPT_COMMAND", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_DIR", "GIT_WORK_TREE", "GIT_ASKPASS",
        "GIT_EDITOR", "GIT_PAGER", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "SSH_ASKPASS", "EDITOR", "VISUAL", "PAGER",
        "HOME", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "RUSTC_WRAPPER", "RUSTC", "CARGO_HOME",
        "GEM_HOME", "GOPATH", "GOFLAGS", "BROWSER",
    ]
}

/// A command that runs another: `sudo`, `env`, `xargs`, `timeout`, `sh -c`, `find -exec`, ….
public struct Wrapper: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// Runs the command as it is (`timeout`, `nice`, `nohup`, `time`, `command`, `exec`, `env`,
        /// `stdbuf`, `ionice`, `builtin`).
        case transparent
        /// Runs it as another user, usually root (`sudo`, `doas`, `su -c`).
        case elevating
        /// Runs it outside the session's process group, so it outlives the session (`setsid`).
        case detaching
        /// Appends arguments read from standard input (`xargs`).
        case feedsArguments
        /// Runs it once per file found, with `{}` replaced (`find -exec`, `fd -x`).
        case perFile
        /// Runs a script given as a string (`sh -c`, `bash -lc`, `eval`, `trap`, `watch`, `env -S`).
        case shell
        /// A project's environment runner (`uv run`, `poetry run`, `pipenv run`, `bundle exec`).
        case runner

        /// Left out when a rule matches the command (Claude Code strips these too).
        public var isTransparent: Bool {
            switch self {
            case .transparent, .feedsArguments, .shell, .perFile: true
            case .elevating, .detaching, .runner: false
            }
        }
    }

    /// The wrapper's name (`sudo`, `bash -c`, `find -exec`).
    public var name: String
    /// The wrapper's own words, options included.
    public var words: [ShellWord]
    public var kind: Kind

    public init(name: String, words: [ShellWord], kind: Kind) {
        self.name = name
        self.words = words
        self.kind = kind
    }
}

/// A simple command after unwrapping: the command that runs, or a script it runs.
public indirect enum CommandNode: Sendable, Hashable {
    /// A command, and the commands it starts in turn (`find -exec`, `fd -x`).
    case command(ParsedCommand, runs: [CommandNode])
    /// A command that runs a script given as text (`bash -c '…'`, `eval`, `trap`, `bash <<EOF`),
    /// with that script parsed.
    case script(ParsedCommand, ShellScript)
    /// A command that runs a script Nucleic cannot see: built at run time (`sh -c "$X"`, `eval
    /// $X`), read from standard input, or unparseable.
    case opaque(ParsedCommand, reason: String)

    public var command: ParsedCommand {
        switch self {
        case .command(let c, _), .script(let c, _), .opaque(let c, _): c
        }
    }
}
