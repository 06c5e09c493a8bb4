/// One command (or subcommand) of a command line, as its help, the man page, the reference page
/// and the shell completions all describe it: the single source they are rendered from.
public struct CommandDoc: Sendable {
    /// The words that name it after the program: `["start"]`, `["project", "add"]`.
    public let path: [String]
    /// The one-line summary (the man page's and the completions' description).
    public let summary: String
    /// The `usage:` lines, each after the program's name: `start PROMPT [--project P]`.
    public let synopsis: [String]
    /// Paragraphs separated by blank lines; a paragraph with an indented line is kept as laid out.
    public let description: String
    public let options: [OptionDoc]
    /// What each positional argument is, in order (the last one may repeat), for completion.
    public let arguments: [ArgumentKind]
    /// Command lines with a comment: `nucleic start "fix the test" -p shop   # …`.
    public let examples: [String]
    public let subcommands: [CommandDoc]

    public init(_ path: [String], summary: String, synopsis: [String], description: String = "", options: [OptionDoc] = [],
                arguments: [ArgumentKind] = [], examples: [String] = [], subcommands: [CommandDoc] = []) {
        self.path = path
        self.summary = summary
        self.synopsis = synopsis
        self.description = description
        self.options = options
        self.arguments = arguments
        self.examples = examples
        self.subcommands = subcommands
    }

    public var name: String { path.joined(separator: " ") }

    /// The subcommand called `word`.
    public func subcommand(_ word: String) -> CommandDoc? { subcommands.first { $0.path.last == word } }
}

/// One option of a command.
public struct OptionDoc: Sendable, Hashable {
    /// Without the dashes: `project`.
    public let name: String
    public let short: Character?
    /// The value's placeholder (`P`, `FILE`); nil for a flag.
    public let value: String?
    public let text: String
    /// What the value is, for completion.
    public let kind: ArgumentKind

    public init(_ name: String, short: Character? = nil, value: String? = nil, _ text: String, kind: ArgumentKind? = nil) {
        self.name = name
        self.short = short
        self.value = value
        self.text = text
        self.kind = kind ?? (value == nil ? .none : .text)
    }

    /// `-p, --project P` / `--json`.
    public var label: String {
        let long = "--\(name)" + (value.map { " \($0)" } ?? "")
        return short.map { "-\($0), \(long)" } ?? long
    }

    public static let json = OptionDoc("json", "print JSON instead (errors: {\"error\":{\"code\",\"message\"}} on stderr)")
    public static let help = OptionDoc("help", short: "h", "show this help")
}

/// What a positional argument or an option's value is: what the shell may complete it with.
public enum ArgumentKind: Sendable, Hashable {
    /// A flag: no value.
    case none
    /// Free text: nothing to complete.
    case text
    /// A path: the shell's file completion.
    case file
    /// A live session's handle (asked of a running daemon).
    case session
    /// A pending approval's handle (asked of a running daemon).
    case approval
    /// A registered project's name (asked of a running daemon).
    case project
    /// A paired device (asked of a running daemon).
    case device
    /// A command's name.
    case command
    /// A setting's key.
    case configKey
    /// One of these words.
    case choice([String])
}

/// A section of prose after the commands (the man page's ENVIRONMENT, FILES, …).
public struct TopicDoc: Sendable {
    public let title: String
    public let text: String

    public init(_ title: String, _ text: String) {
        self.title = title
        self.text = text
    }
}

/// The whole command line: the overview `nucleic help` prints, the commands, the exit statuses,
/// and the topics.
public struct CommandTable: Sendable {
    public let program: String
    /// One line on what the program is (the man page's NAME).
    public let tagline: String
    /// The overview, as `nucleic help` prints it.
    public let overview: String
    public let commands: [CommandDoc]
    public let exitCodes: [(status: Int32, code: String, meaning: String)]
    public let topics: [TopicDoc]

    public init(program: String, tagline: String, overview: String, commands: [CommandDoc],
                exitCodes: [(status: Int32, code: String, meaning: String)], topics: [TopicDoc]) {
        self.program = program
        self.tagline = tagline
        self.overview = overview
        self.commands = commands
        self.exitCodes = exitCodes
        self.topics = topics
    }

    public func command(_ name: String) -> CommandDoc? { commands.first { $0.path == [name] } }

    /// The deepest command `words` name (`["project", "add", "x"]` → project add), with how many
    /// words that took; nil when the first word is no command.
    public func resolve(_ words: [String]) -> (doc: CommandDoc, depth: Int)? {
        guard let first = words.first, var doc = command(first) else { return nil }
        var depth = 1
        while depth < words.count, let sub = doc.subcommand(words[depth]) {
            doc = sub
            depth += 1
        }
        return (doc, depth)
    }

    /// Every command and subcommand, depth first. (The hidden ones, `shim`, `__complete` and
    /// `__docs`, are not in the table.)
    public var allCommands: [CommandDoc] {
        func walk(_ doc: CommandDoc) -> [CommandDoc] { [doc] + doc.subcommands.flatMap(walk) }
        return commands.flatMap(walk)
    }

    /// The command names, for did-you-mean and completion.
    public var commandNames: [String] { commands.map(\.path[0]) }
}
