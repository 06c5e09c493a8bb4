public import NucleicProtocol

/// Judges how risky a tool call is (DESIGN.md §6: readOnly < write < execute < unknown <
/// network < hostExec < destructive), from the tool, its parsed shell command and the paths it
/// touches, resolved against the session's worktree.
///
/// The only I/O is path resolution through `fileSystem` (symbolic links, glob expansion).
///
/// ### Invariants
/// - The riskiest part decides: a compound command is as risky as its riskiest command,
///   substitution, redirection or wrapper.
/// - A path outside the worktree (after `..`, `~` and symbolic links) is hostExec, except reads
///   of system software folders (`PathPolicy.readableOutside`) and harmless devices.
/// - What cannot be parsed or seen (unbalanced quotes, `sh -c "$X"`, a command name computed at
///   run time) is `unknown`, never readOnly.
public struct RiskClassifier: Sendable {
    public var fileSystem: any FileSystemView
    public var policy: PathPolicy

    public init(fileSystem: any FileSystemView = LocalFileSystem(), policy: PathPolicy = .standard) {
        self.fileSystem = fileSystem
        self.policy = policy
    }

    /// The risk of calling `toolName` with `input` in a session whose worktree is `worktree`.
    public func classify(toolName: String, toolKind: ToolKind, input: JSONValue, worktree: String) -> Classification {
        classify(toolName: toolName, toolKind: toolKind, input: input, resolver: resolver(worktree: worktree))
    }

    /// The resolver `classify` judges paths with for `worktree` (which it resolves, link by link):
    /// made once per session, it saves resolving the worktree again for every request.
    public func resolver(worktree: String) -> PathResolver {
        PathResolver(fileSystem: fileSystem, worktree: worktree)
    }

    /// The risk of calling `toolName` with `input`, paths judged by `resolver` (its worktree).
    public func classify(toolName: String, toolKind: ToolKind, input: JSONValue, resolver: PathResolver) -> Classification {
        let family = ToolFamily(toolName: toolName, toolKind: toolKind, input: input)
        var result = Classification(toolName: toolName, family: family, risk: .readOnly, reasons: [], parts: [],
                                    worktree: resolver.worktree, home: resolver.home)
        var tool = ToolJudge(resolver: resolver, policy: policy)
        switch family {
        case .shell:
            let script = input["command"]?.stringValue ?? ""
            result.script = script
            let cwd = input["cwd"]?.stringValue ?? input["workdir"]?.stringValue
            let (parts, error) = ShellJudge.classify(script, cwd: cwd, resolver: resolver, policy: policy)
            result.parts = parts
            result.parseError = error
        case .read:
            result.parts = [tool.readTool(toolName, input)]
        case .edit:
            result.parts = [tool.editTool(toolName, input)]
        case .webFetch:
            let url = input["url"]?.stringValue
            var part = Classification.Part(risk: .network, reasons: ["fetches \(url ?? "a web page")"])
            part.domain = url.flatMap(Self.host)
            result.parts = [part]
        case .webSearch:
            result.parts = [Classification.Part(risk: .network, reasons: ["searches the web"])]
        case .question:
            result.parts = [Classification.Part(risk: .readOnly, reasons: ["asks you a question"])]
        case .mcp(let server, let name):
            result.parts = [Classification.Part(risk: .unknown, reasons: ["calls the MCP tool \(name) of server \(server), which Nucleic cannot judge"])]
        case .other:
            let risk = Self.otherToolRisk[toolName] ?? toolKind.baselineRisk
            let reason = risk == .unknown ? "\(toolName) is a tool Nucleic cannot judge" : "\(toolName): \(toolKind.rawValue) tool"
            result.parts = [Classification.Part(risk: risk, reasons: [reason])]
        }
        result.summarize()
        return result
    }

    /// Built-in tools that are neither shell, file nor web tools.
    static let otherToolRisk: [String: Risk] = [
        "TodoWrite": .readOnly, "ExitPlanMode": .readOnly, "EnterPlanMode": .readOnly, "ToolSearch": .readOnly,
        "BashOutput": .readOnly, "KillShell": .execute, "KillBash": .execute,
    ]

    /// The host of an `http(s)://` URL, lowercased, without port or user.
    public static func host(_ url: String) -> String? {
        guard let scheme = url.firstRange(of: "://") else { return nil }
        var rest = url[scheme.upperBound...]
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.hasPrefix("[") {
            if let close = rest.firstIndex(of: "]") { return String(rest[...close]).lowercased() }
        } else if let colon = rest.firstIndex(of: ":") {
            rest = rest[..<colon]
        }
        return rest.isEmpty ? nil : rest.lowercased()
    }
}

/// Which tools a request is for, as rules and the classifier see them.
public enum ToolFamily: Sendable, Hashable {
    /// Claude `Bash`, Codex `exec_command`: a shell command in `input.command`.
    case shell
    /// Claude `Edit`, `Write`, `MultiEdit`, `NotebookEdit`; Codex `apply_patch`.
    case edit
    /// Claude `Read`, `Glob`, `Grep`, `LS`, `NotebookRead`.
    case read
    case webFetch
    case webSearch
    /// Claude `AskUserQuestion`, Codex `request_user_input`.
    case question
    /// `mcp__server__tool`.
    case mcp(server: String, tool: String)
    case other

    public static let shellTools: Set<String> = ["Bash", "exec_command"]
    public static let editTools: Set<String> = ["Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch"]
    public static let readTools: Set<String> = ["Read", "Glob", "Grep", "LS", "NotebookRead"]

    public init(toolName: String, toolKind: ToolKind? = nil, input: JSONValue? = nil) {
        if Self.shellTools.contains(toolName) {
            self = .shell
        } else if Self.editTools.contains(toolName) {
            self = .edit
        } else if Self.readTools.contains(toolName) {
            self = .read
        } else if toolName == "WebFetch" {
            self = .webFetch
        } else if toolName == "WebSearch" {
            self = .webSearch
        } else if toolName == "AskUserQuestion" || toolName == "request_user_input" || toolKind == .question {
            self = .question
        } else if let (server, tool) = Self.mcpName(toolName) {
            self = .mcp(server: server, tool: tool)
        } else if toolKind == .execute, input?["command"]?.stringValue != nil {
            self = .shell  // an unknown backend's shell tool: judge its command
        } else {
            self = .other
        }
    }

    /// `mcp__server__tool` → (server, tool); the server name may itself hold single underscores.
    public static func mcpName(_ name: String) -> (String, String)? {
        guard name.hasPrefix("mcp__") else { return nil }
        let rest = name.dropFirst(5)
        guard let sep = rest.firstRange(of: "__") else { return rest.isEmpty ? nil : (String(rest), "") }
        return (String(rest[..<sep.lowerBound]), String(rest[sep.upperBound...]))
    }
}

/// Where paths may go without asking.
public struct PathPolicy: Sendable, Hashable {
    /// Outside the worktree, these may be read (not written) at risk readOnly: system software
    /// that is the same on every machine and holds no user secrets.
    public var readableOutside: [String]
    /// Inside the worktree, writing these is hostExec: git's own data (hooks and config run
    /// outside the session) and agents' settings (writing them would let an agent grant itself
    /// permissions, DESIGN.md §5).
    public var protectedInside: [String]

    public init(readableOutside: [String], protectedInside: [String]) {
        self.readableOutside = readableOutside
        self.protectedInside = protectedInside
    }

    public static let standard = PathPolicy(
        readableOutside: ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/os-release", "/etc/lsb-release",
                          "/etc/debian_version"],
        protectedInside: [".git", ".claude", ".codex", ".gemini", ".mcp.json", ".envrc"])
}

/// How risky a tool call is, and why.
public struct Classification: Sendable, Hashable {
    public var toolName: String
    public var family: ToolFamily
    /// The riskiest part's risk.
    public var risk: Risk
    /// Why, riskiest first: `rm -rf build: deletes build recursively`.
    public var reasons: [String]
    /// What was judged: one per command of a shell script (substitutions, wrapped and `sh -c`
    /// commands included), one for any other tool.
    public var parts: [Part]
    /// A shell tool's command line, as the agent sent it.
    public var script: String?
    /// Why the shell command could not be parsed (the whole command is then one unknown part).
    public var parseError: ShellParseError?
    /// The worktree and home the paths were resolved against.
    public var worktree: String
    public var home: String

    public init(toolName: String, family: ToolFamily, risk: Risk, reasons: [String], parts: [Part], script: String? = nil,
                parseError: ShellParseError? = nil, worktree: String, home: String)
    {
        self.toolName = toolName
        self.family = family
        self.risk = risk
        self.reasons = reasons
        self.parts = parts
        self.script = script
        self.parseError = parseError
        self.worktree = worktree
        self.home = home
    }

    /// The parsed commands of a shell tool.
    public var commands: [ParsedCommand] { parts.compactMap(\.command) }

    /// One judged piece of a tool call.
    public struct Part: Sendable, Hashable {
        public enum Role: String, Sendable, Hashable {
            /// A command that runs: it needs an allow rule unless it is read-only.
            case command
            /// A command that only runs another (`bash -c '…'`, `eval`): its inner commands are
            /// judged as parts of their own; it needs no rule of its own unless it is riskier
            /// than a write.
            case wrapper
            /// Shell state with no command: assignments, a bare redirection, a function definition.
            case shellState
        }

        public var command: ParsedCommand?
        public var role: Role
        public var risk: Risk
        /// Why, riskiest first.
        public var reasons: [String]
        /// Files read and written, resolved.
        public var paths: [PathAccess]
        /// A web request's host.
        public var domain: String?

        public init(command: ParsedCommand? = nil, role: Role = .command, risk: Risk, reasons: [String], paths: [PathAccess] = [], domain: String? = nil) {
            self.command = command
            self.role = role
            self.risk = risk
            self.reasons = reasons
            self.paths = paths
            self.domain = domain
        }

        /// A short label for the part: the command's text, shortened.
        public var label: String {
            guard let command else { return "" }
            let text = command.text.isEmpty ? command.source : command.text
            return text.count > 60 ? String(text.prefix(57)) + "…" : text
        }
    }

    mutating func summarize() {
        risk = parts.map(\.risk).max() ?? .readOnly
        var seen = Set<String>()
        reasons = []
        for part in parts.sorted(by: { $0.risk > $1.risk }) {
            for reason in part.reasons {
                let text = part.label.isEmpty ? reason : "\(part.label): \(reason)"
                if seen.insert(text).inserted { reasons.append(text) }
            }
        }
    }

    /// The same classification, at least as risky as `risk` (a backend's own signal, such as
    /// Codex asking for network access).
    public func raising(to risk: Risk, reason: String) -> Classification {
        guard risk > self.risk else { return self }
        var copy = self
        copy.risk = risk
        copy.reasons.insert(reason, at: 0)
        return copy
    }
}

/// A file a part reads or writes.
public struct PathAccess: Sendable, Hashable {
    public enum Mode: String, Sendable, Hashable { case read, write }

    public enum Location: Sendable, Hashable {
        /// Inside the worktree.
        case inside
        /// Inside, but one of `PathPolicy.protectedInside` (its first component).
        case protected(String)
        /// A system software folder (`PathPolicy.readableOutside`).
        case system
        /// `/dev/null`, `/dev/stdout`, `/dev/fd/N`, …
        case harmlessDevice
        /// A disk (`/dev/sda`, `/dev/nvme0n1`, …).
        case blockDevice
        case outside
        /// Built at run time (`$X/file`, `$(pwd)/x`) or a symbolic link loop: could be anywhere.
        case unknown

        /// Inside the worktree (protected names included).
        public var isInsideWorktree: Bool {
            switch self {
            case .inside, .protected: true
            default: false
            }
        }
    }

    public var mode: Mode
    /// As written.
    public var written: String
    /// Resolved (absolute, links followed); nil when `location` is unknown.
    public var resolved: String?
    /// Absolute with `..` removed but links not followed (rules match this too).
    public var lexical: String?
    public var location: Location

    public init(mode: Mode, written: String, resolved: String?, lexical: String?, location: Location) {
        self.mode = mode
        self.written = written
        self.resolved = resolved
        self.lexical = lexical
        self.location = location
    }
}
