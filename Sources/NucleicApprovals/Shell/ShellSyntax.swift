/// The syntax tree of a shell command line, as `ShellParser` reads it (POSIX sh plus the bash
/// forms agents write: `[[ ]]`, `(( ))`, `$'…'`, here-strings, `&>`, process substitution).
///
/// Every node keeps enough of what was written to judge it: words keep their quoting and their
/// expansions (a `$(…)` inside a word is a parsed script, not text), redirections keep their
/// targets, compound commands keep their bodies.
public struct ShellScript: Sendable, Hashable {
    /// And-or lists separated by `;`, `&` or newlines.
    public var items: [Item]

    public struct Item: Sendable, Hashable {
        public var andOr: AndOrList
        /// Ended by `&`: runs in the background (a subshell).
        public var background: Bool

        public init(andOr: AndOrList, background: Bool) {
            self.andOr = andOr
            self.background = background
        }
    }

    public init(items: [Item]) { self.items = items }

    public var isEmpty: Bool { items.isEmpty }
}

/// Pipelines joined by `&&` and `||`.
public struct AndOrList: Sendable, Hashable {
    public enum Connector: String, Sendable, Hashable { case and = "&&", or = "||" }

    public var pipelines: [Pipeline]
    /// `connectors[i]` joins `pipelines[i]` and `pipelines[i + 1]`.
    public var connectors: [Connector]

    public init(pipelines: [Pipeline], connectors: [Connector]) {
        self.pipelines = pipelines
        self.connectors = connectors
    }
}

/// Commands joined by `|` (or `|&`), each in its own subshell.
public struct Pipeline: Sendable, Hashable {
    public var negated: Bool
    /// Prefixed by the `time` reserved word.
    public var timed: Bool
    public var commands: [ShellCommand]

    public init(negated: Bool = false, timed: Bool = false, commands: [ShellCommand]) {
        self.negated = negated
        self.timed = timed
        self.commands = commands
    }
}

/// One command of a pipeline.
public indirect enum ShellCommand: Sendable, Hashable {
    case simple(SimpleCommand)
    /// `( list )`: runs in a subshell (a `cd` inside does not leak out).
    case subshell(ShellScript, redirections: [Redirection])
    /// `{ list; }`
    case group(ShellScript, redirections: [Redirection])
    /// `if c; then b; elif c; then b; else e; fi`
    case ifClause(branches: [Branch], elseBody: ShellScript?, redirections: [Redirection])
    /// `while c; do b; done` (or `until`).
    case loop(until: Bool, condition: ShellScript, body: ShellScript, redirections: [Redirection])
    /// `for name [in words]; do b; done` (or `select`); `items` nil means `"$@"`.
    case forLoop(variable: String, items: [ShellWord]?, body: ShellScript, redirections: [Redirection])
    /// `for ((init; test; step)); do b; done`
    case arithmeticFor(header: String, body: ShellScript, redirections: [Redirection])
    /// `case word in pattern) list ;; esac`
    case caseClause(subject: ShellWord, items: [CaseItem], redirections: [Redirection])
    /// `[[ … ]]`: a test; its words can still hold command substitutions.
    case conditional(words: [ShellWord], redirections: [Redirection])
    /// `(( expression ))`
    case arithmetic(ShellWord, redirections: [Redirection])
    /// `name() body` or `function name body`.
    case function(name: String, body: ShellCommand)

    public struct Branch: Sendable, Hashable {
        public var condition: ShellScript
        public var body: ShellScript
        public init(condition: ShellScript, body: ShellScript) {
            self.condition = condition
            self.body = body
        }
    }

    public struct CaseItem: Sendable, Hashable {
        public var patterns: [ShellWord]
        public var body: ShellScript
        public init(patterns: [ShellWord], body: ShellScript) {
            self.patterns = patterns
            self.body = body
        }
    }

    /// The redirections applied to the whole command.
    public var redirections: [Redirection] {
        switch self {
        case .simple(let c): c.redirections
        case .subshell(_, let r), .group(_, let r), .ifClause(_, _, let r), .loop(_, _, _, let r), .forLoop(_, _, _, let r),
            .arithmeticFor(_, _, let r), .caseClause(_, _, let r), .conditional(_, let r), .arithmetic(_, let r):
            r
        case .function: []
        }
    }
}

/// Assignments, words and redirections: `FOO=1 cmd arg >out 2>&1`.
public struct SimpleCommand: Sendable, Hashable {
    public var assignments: [Assignment]
    public var words: [ShellWord]
    public var redirections: [Redirection]
    /// The command as written (from its first to its last character).
    public var source: String

    public init(assignments: [Assignment] = [], words: [ShellWord], redirections: [Redirection] = [], source: String) {
        self.assignments = assignments
        self.words = words
        self.redirections = redirections
        self.source = source
    }
}

/// `NAME=value`, `NAME+=value` or `NAME=(a b c)`.
public struct Assignment: Sendable, Hashable {
    public var name: String
    public var value: ShellWord
    public var append: Bool
    /// The elements of an array assignment `NAME=(…)`.
    public var array: [ShellWord]?
    public var source: String

    public init(name: String, value: ShellWord, append: Bool = false, array: [ShellWord]? = nil, source: String) {
        self.name = name
        self.value = value
        self.append = append
        self.array = array
        self.source = source
    }
}

/// `[fd]op target`: `>`, `>>`, `<`, `2>`, `&>`, `>|`, `<>`, `<&`, `>&`, `<<`, `<<-`, `<<<`.
public struct Redirection: Sendable, Hashable {
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        case input = "<"
        case output = ">"
        case append = ">>"
        case clobber = ">|"
        case readWrite = "<>"
        case duplicateInput = "<&"
        case duplicateOutput = ">&"
        case outputAndError = "&>"
        case appendOutputAndError = "&>>"
        case hereDocument = "<<"
        case hereDocumentStrippingTabs = "<<-"
        case hereString = "<<<"
    }

    public var fd: Int?
    public var op: Operator
    /// The file, the descriptor (`2>&1`), the here-document delimiter, or the here-string.
    public var target: ShellWord
    /// A here-document's body (expansions parsed when the delimiter was not quoted).
    public var hereDocument: ShellWord?

    public init(fd: Int? = nil, op: Operator, target: ShellWord, hereDocument: ShellWord? = nil) {
        self.fd = fd
        self.op = op
        self.target = target
        self.hereDocument = hereDocument
    }

    /// The file this redirection writes, if it writes one (not a descriptor duplication).
    public var writesFile: Bool {
        switch op {
        case .output, .append, .clobber, .readWrite, .outputAndError, .appendOutputAndError: true
        case .duplicateOutput: !target.isDescriptor
        default: false
        }
    }

    /// The file this redirection reads, if it reads one.
    public var readsFile: Bool {
        switch op {
        case .input, .readWrite: true
        case .duplicateInput: !target.isDescriptor
        default: false
        }
    }

    /// Where the command's standard input comes from when this redirection sets it.
    public var feedsStandardInput: Bool {
        (fd == nil || fd == 0) && [.input, .hereDocument, .hereDocumentStrippingTabs, .hereString, .readWrite].contains(op)
    }
}

/// One shell word, as the parts it was written in.
///
/// `"$HOME"/src/*.swift` is `[variable HOME (quoted), literal "/src/" , literal "*.swift"]`: the
/// quoting decides whether `*` is a glob and `~` a home directory.
public struct ShellWord: Sendable, Hashable {
    public enum Part: Sendable, Hashable {
        /// Text; `quoted` when it came from quotes or an escape (glob characters and `~` are literal).
        case literal(String, quoted: Bool)
        /// `$NAME`, `${NAME}`, `$1`, `$@`, `$?` …
        case variable(String, quoted: Bool)
        /// `${…}` with an operator (`${X:-default}`, `${#X}`, …): the text inside the braces, and the
        /// command substitutions in it.
        case parameter(String, substitutions: [ShellScript], quoted: Bool)
        /// `$(…)` or `` `…` ``.
        case commandSubstitution(ShellScript, source: String, quoted: Bool)
        /// `<(…)` (input) or `>(…)` (output).
        case processSubstitution(ShellScript, source: String, input: Bool)
        /// `$((…))`, with the command substitutions inside it.
        case arithmetic(String, substitutions: [ShellScript])
        /// A leading unquoted `~` or `~user`.
        case tilde(user: String)
    }

    public var parts: [Part]
    /// The word as written.
    public var source: String
    /// The elements when the word is an array assignment's value.
    public var arrayElements: [ShellWord]?

    public init(parts: [Part], source: String, arrayElements: [ShellWord]? = nil) {
        self.parts = parts
        self.source = source
        self.arrayElements = arrayElements
    }

    /// A word of plain text, as if quoted.
    public static func literal(_ text: String) -> ShellWord {
        ShellWord(parts: [.literal(text, quoted: true)], source: text)
    }

    /// The exact string the shell passes, when nothing in the word is expanded (no variable,
    /// substitution, unquoted glob, brace list or tilde).
    public var staticValue: String? {
        var out = ""
        for part in parts {
            guard case .literal(let text, let quoted) = part else { return nil }
            if !quoted, text.contains(where: { ShellWord.globCharacters.contains($0) }) || ShellWord.hasBraceList(text) { return nil }
            out += text
        }
        return out
    }

    /// The text with quotes removed and expansions spelled as written (`$X`, `$(…)`).
    public var text: String {
        parts.map { part -> String in
            switch part {
            case .literal(let t, _): t
            case .variable(let name, _): "$" + name
            case .parameter(let inner, _, _): "${" + inner + "}"
            case .commandSubstitution(_, let source, _), .processSubstitution(_, let source, _): source
            case .arithmetic(let inner, _): "$((" + inner + "))"
            case .tilde(let user): "~" + user
            }
        }.joined()
    }

    /// Whether any part is expanded when the command runs (variables, substitutions).
    public var hasExpansion: Bool {
        parts.contains {
            switch $0 {
            case .literal, .tilde: false
            default: true
            }
        }
    }

    /// Unquoted `*`, `?` or `[`: the shell may replace the word with matching file names.
    public var hasUnquotedGlob: Bool {
        parts.contains {
            if case .literal(let t, false) = $0 { return t.contains(where: { ShellWord.globCharacters.contains($0) }) }
            return false
        }
    }

    /// A digit string or `-` (the target of `2>&1` or `>&-`).
    public var isDescriptor: Bool {
        guard let v = staticValue, !v.isEmpty else { return false }
        return v == "-" || v.allSatisfy(\.isNumber) || (v.hasSuffix("-") && v.dropLast().allSatisfy(\.isNumber))
    }

    /// Every script the word runs when expanded: command and process substitutions, including
    /// those inside `${…}` and `$((…))`.
    public var substitutions: [ShellScript] {
        parts.flatMap { part -> [ShellScript] in
            switch part {
            case .commandSubstitution(let s, _, _), .processSubstitution(let s, _, _): [s]
            case .parameter(_, let subs, _), .arithmetic(_, let subs): subs
            default: []
            }
        } + (arrayElements ?? []).flatMap(\.substitutions)
    }

    /// The word as a canonical shell word: single-quoted when it is static and needs quoting,
    /// otherwise as written. Rules match commands in this spelling, so `"npm" test` and
    /// `npm test` look the same to them.
    public var canonical: String {
        guard let value = staticValue else { return source }
        return ShellWord.quote(value)
    }

    static let globCharacters: Set<Character> = ["*", "?", "["]

    /// `{a,b}` or `{1..3}` in unquoted text: bash brace expansion.
    static func hasBraceList(_ text: String) -> Bool {
        guard let open = text.firstIndex(of: "{") else { return false }
        let rest = text[text.index(after: open)...]
        guard let close = rest.firstIndex(of: "}") else { return false }
        let inner = rest[..<close]
        return inner.contains(",") || inner.contains("..")
    }

    static let safeCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@%+,")

    /// `word` as one shell word: bare when it needs no quoting, else single-quoted (the spelling
    /// `CodexCodec.shellQuote` uses for execpolicy amendments, so their rules match).
    public static func quote(_ word: String) -> String {
        if !word.isEmpty, word.allSatisfy({ safeCharacters.contains($0) }) { return word }
        var quoted = "'"
        for c in word { quoted += c == "'" ? "'\\''" : String(c) }
        return quoted + "'"
    }
}

/// Why a command line could not be parsed. A value, never a crash: the classifier turns it into
/// risk `unknown`.
public struct ShellParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    /// The byte offset in the input where parsing stopped.
    public var offset: Int

    public init(_ message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    public var description: String { "\(message) (at byte \(offset))" }
}
