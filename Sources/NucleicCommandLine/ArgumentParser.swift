public import NucleicProtocol

/// A command line the user got wrong: printed with the command's synopsis, exit status 64 (EX_USAGE).
public struct UsageError: Error, Sendable {
    public let message: String
    /// The command's help text; its first paragraph (the synopsis) is printed with the message.
    public let usage: String

    public init(message: String, usage: String) {
        self.message = message
        self.usage = usage
    }

    /// The first paragraph of `usage`: the `usage:` lines.
    public var synopsis: String {
        let lines = usage.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.prefix { !$0.allSatisfy(\.isWhitespace) }.joined(separator: "\n")
    }
}

/// Parses one command's arguments as git and gh do (docs/CLI.md, "Arguments"):
///
/// - `--name value`, `--name=value`, boolean `--flag`, and the short forms in `short` (`-a`,
///   `-m value`) for the options the command has;
/// - an option is never taken for a value: `--message -q` is an error (write `--message=-q`);
///   a negative number is a value (`--since -3` reaches the command's own check);
/// - an argument that looks like an option and is not one is an error naming the nearest one;
/// - `--` ends the options: everything after it is positional, `-q` included.
public struct ArgumentParser: Sendable {
    public private(set) var positionals: [String] = []
    private var options: [String: String] = [:]
    private var lists: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// The short forms every command that has the long option accepts.
    public static let commonShortOptions: [Character: String] = [
        "a": "all", "b": "backend", "f": "follow", "m": "message", "p": "project", "t": "title", "n": "name", "s": "stat",
    ]

    /// - Parameters: `valued` options take a value (the last one given wins); `repeated` ones take
    ///   a value each time; `boolean` ones take none. `allowsPositionals: false` refuses any.
    public init(_ arguments: [String], valued: Set<String>, boolean: Set<String> = [], repeated: Set<String> = [],
                short: [Character: String] = ArgumentParser.commonShortOptions, allowsPositionals: Bool = true,
                usage: String) throws(UsageError) {
        let known = valued.union(boolean).union(repeated)
        var i = 0
        var onlyPositionals = false
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            if onlyPositionals || !Self.looksLikeOption(argument) {
                guard allowsPositionals else { throw UsageError(message: "unexpected argument '\(argument)'", usage: usage) }
                positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            var name: String
            var value: String?
            if argument.hasPrefix("--") {
                name = String(argument.dropFirst(2))
                if let eq = name.firstIndex(of: "=") {
                    value = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
            } else {
                // `-x`: a short option of a long one this command has.
                let letters = Array(argument.dropFirst())
                guard letters.count == 1, let long = short[letters[0]], known.contains(long) else {
                    let hint = letters.count > 1 && known.contains(String(letters)) ? " (did you mean --\(String(letters))?)" : ""
                    throw UsageError(message: "unknown option \(argument)\(hint)\(hint.isEmpty ? Self.shortList(short, known) : "")", usage: usage)
                }
                name = long
            }
            if boolean.contains(name) {
                guard value == nil else { throw UsageError(message: "--\(name) takes no value", usage: usage) }
                flags.insert(name)
            } else if valued.contains(name) || repeated.contains(name) {
                if value == nil {
                    guard i < arguments.count else { throw UsageError(message: "--\(name) needs a value", usage: usage) }
                    let next = arguments[i]
                    guard !Self.looksLikeOption(next) else {
                        throw UsageError(message: "--\(name) needs a value, and '\(next)' is an option; for a value that starts with '-', write --\(name)=\(next)", usage: usage)
                    }
                    value = next
                    i += 1
                }
                options[name] = value
                lists[name, default: []].append(value!)
            } else {
                let hint = Spelling.nearest(name, among: known).map { " (did you mean --\($0)?)" } ?? ""
                throw UsageError(message: "unknown option --\(name)\(hint)", usage: usage)
            }
        }
    }

    /// `-x`, `--x`, `--`: not `-` (standard input) and not a negative number.
    public static func looksLikeOption(_ argument: String) -> Bool {
        guard argument.hasPrefix("-"), argument != "-" else { return false }
        return Double(argument) == nil
    }

    static func shortList(_ short: [Character: String], _ known: Set<String>) -> String {
        let mine = short.filter { known.contains($0.value) }.sorted { $0.key < $1.key }
        return mine.isEmpty ? "" : " (short options here: \(mine.map { "-\($0.key) (--\($0.value))" }.joined(separator: ", ")))"
    }

    public subscript(option: String) -> String? { options[option] }
    public func flag(_ name: String) -> Bool { flags.contains(name) }
    /// Every value a repeated option was given, in order.
    public func all(_ option: String) -> [String] { lists[option] ?? [] }

    /// An integer option within `range`, or `default` when absent.
    public func integer(_ name: String, default value: Int, in range: ClosedRange<Int>, usage: String) throws(UsageError) -> Int {
        guard let text = options[name] else { return value }
        guard let n = Int(text), range.contains(n) else {
            throw UsageError(message: "--\(name) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'", usage: usage)
        }
        return n
    }

    /// Whether `arguments` ask for help (`--help` or `-h` before any `--`).
    public static func asksForHelp(_ arguments: [String]) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "--help" || argument == "-h" { return true }
        }
        return false
    }
}
