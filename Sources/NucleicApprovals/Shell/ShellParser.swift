/// Parses a shell command line (what Claude's Bash tool and Codex's `bash -lc` scripts carry)
/// into a `ShellScript`, by recursive descent over the POSIX grammar, not by patterns.
///
/// Handled: simple commands with quoting (`'…'`, `"…"`, `$'…'`, `\`), expansions kept as parts
/// (`$VAR`, `${…}`, `$(…)`, backticks, `$((…))`, `<(…)`), leading assignments, redirections
/// (including here-documents and here-strings), pipelines, `&&`/`||`, `;`/`&`/newlines,
/// subshells, groups, `if`/`while`/`until`/`for`/`select`/`case`, `[[ ]]`, `(( ))`, functions,
/// comments and line continuations.
///
/// ### Invariants
/// - Any input gives a value: a script, or a `ShellParseError` (unbalanced quotes, a missing
///   `fi`, nesting deeper than `maxDepth`, …). Nothing traps.
/// - Command substitutions are parsed as scripts in place, so what runs inside `$(…)` is seen.
public enum ShellParser {
    /// How deeply lists may nest (subshells, substitutions, compound commands, `sh -c` strings).
    public static let defaultMaxDepth = 24
    /// Longer input is refused rather than judged (it stays a value: risk `unknown`).
    public static let maxInputBytes = 4 << 20

    public static func parse(_ source: String, maxDepth: Int = defaultMaxDepth) -> Result<ShellScript, ShellParseError> {
        let bytes = Array(source.utf8)
        guard bytes.count <= maxInputBytes else {
            return .failure(ShellParseError("the command is \(bytes.count) bytes, more than the \(maxInputBytes) Nucleic judges", offset: 0))
        }
        var core = ShellParserCore(bytes: bytes, depth: 0, maxDepth: maxDepth)
        do { return .success(try core.parseTop()) } catch { return .failure(error) }
    }
}

/// The parser's cursor and state. Bytes are UTF-8; every syntax character is ASCII, so
/// multi-byte characters pass through literals untouched.
struct ShellParserCore {
    let b: [UInt8]
    var i = 0
    var depth: Int
    let maxDepth: Int
    /// Here-documents whose bodies start after the next newline.
    var pendingHereDocuments: [PendingHereDocument] = []
    var hereDocumentBodies: [Int: ShellWord] = [:]
    var hereDocumentCount = 0

    struct PendingHereDocument {
        let id: Int
        let delimiter: [UInt8]
        let stripTabs: Bool
        let expands: Bool
    }

    init(bytes: [UInt8], depth: Int, maxDepth: Int) {
        self.b = bytes
        self.depth = depth
        self.maxDepth = maxDepth
    }

    // MARK: Cursor

    var atEnd: Bool { i >= b.count }
    func peek(_ k: Int = 0) -> UInt8? { i + k < b.count ? b[i + k] : nil }
    func fail(_ message: String) -> ShellParseError { ShellParseError(message, offset: i) }
    func text(_ from: Int, _ to: Int) -> String { String(decoding: b[from..<min(to, b.count)], as: UTF8.self) }

    static func isBlank(_ c: UInt8) -> Bool { c == .space || c == .tab }

    /// Characters that end an unquoted word.
    static func isMeta(_ c: UInt8) -> Bool {
        switch c {
        case .space, .tab, .newline, .semicolon, .ampersand, .pipe, .less, .greater, .openParen, .closeParen: true
        default: false
        }
    }

    /// A short description of what is at the cursor, for error messages.
    var here: String {
        guard !atEnd else { return "end of input" }
        var j = i
        while j < b.count, j - i < 12, !(b[j] == .newline) { j += 1 }
        return "‘" + text(i, max(j, i + 1)) + "’"
    }

    /// Spaces, tabs, line continuations and comments (not newlines).
    mutating func skipBlanks() {
        while let c = peek() {
            if Self.isBlank(c) {
                i += 1
            } else if c == .backslash, peek(1) == .newline {
                i += 2
            } else if c == .hash {
                while let d = peek(), d != .newline { i += 1 }
            } else {
                return
            }
        }
    }

    /// Blanks and newlines (reading pending here-document bodies at each newline).
    mutating func skipLinebreaks() {
        while true {
            skipBlanks()
            guard peek() == .newline else { return }
            consumeNewline()
        }
    }

    mutating func consumeNewline() {
        i += 1
        if !pendingHereDocuments.isEmpty { readHereDocumentBodies() }
    }

    mutating func enter() throws(ShellParseError) {
        depth += 1
        if depth > maxDepth { throw fail("the command nests more than \(maxDepth) levels deep") }
    }

    mutating func leave() { depth -= 1 }

    // MARK: Reserved words

    static let reservedWords: Set<String> = [
        "if", "then", "elif", "else", "fi", "do", "done", "case", "esac", "while", "until", "for", "select",
        "in", "function", "time", "{", "}", "!", "[[", "]]",
    ]
    static let closers: Set<String> = ["}", "then", "elif", "else", "fi", "do", "done", "esac"]

    /// The reserved word at the cursor, if the next token is one (unquoted, followed by a
    /// delimiter). Only meaningful where a command may start.
    func reservedWord() -> String? {
        var j = i
        while j < b.count, !Self.isMeta(b[j]) {
            switch b[j] {
            case .quote, .doubleQuote, .backslash, .dollar, .backquote: return nil
            default: j += 1
            }
            if j - i > 8 { return nil }
        }
        guard j > i else { return nil }
        let word = text(i, j)
        return Self.reservedWords.contains(word) ? word : nil
    }

    mutating func expectReserved(_ word: String) throws(ShellParseError) {
        skipLinebreaks()
        guard reservedWord() == word else { throw fail("expected ‘\(word)’ but found \(here)") }
        i += word.utf8.count
    }

    // MARK: Lists

    mutating func parseTop() throws(ShellParseError) -> ShellScript {
        skipLinebreaks()
        var script = try parseList()
        skipLinebreaks()
        if !atEnd { throw fail("unexpected \(here)") }
        // Here-documents on the last line with no newline after them have empty bodies.
        for pending in pendingHereDocuments { hereDocumentBodies[pending.id] = ShellWord(parts: [.literal("", quoted: true)], source: "") }
        pendingHereDocuments = []
        if hereDocumentCount > 0 { script = fillHereDocuments(script) }
        return script
    }

    /// Whether the cursor is at something that ends a list: end of input, `)`, `;;`, or a closing
    /// reserved word.
    func atListEnd() -> Bool {
        guard let c = peek() else { return true }
        if c == .closeParen { return true }
        if c == .semicolon, peek(1) == .semicolon || peek(1) == .ampersand { return true }
        if let word = reservedWord(), Self.closers.contains(word) { return true }
        return false
    }

    mutating func parseList() throws(ShellParseError) -> ShellScript {
        try enter()
        defer { leave() }
        var items: [ShellScript.Item] = []
        while true {
            skipLinebreaks()
            if atListEnd() { break }
            let andOr = try parseAndOr()
            skipBlanks()
            guard let c = peek() else {
                items.append(.init(andOr: andOr, background: false))
                break
            }
            if c == .ampersand, peek(1) != .ampersand, peek(1) != .greater {
                i += 1
                items.append(.init(andOr: andOr, background: true))
            } else if c == .semicolon, peek(1) != .semicolon, peek(1) != .ampersand {
                i += 1
                items.append(.init(andOr: andOr, background: false))
            } else if c == .newline {
                consumeNewline()
                items.append(.init(andOr: andOr, background: false))
            } else {
                items.append(.init(andOr: andOr, background: false))
                break
            }
        }
        return ShellScript(items: items)
    }

    mutating func parseAndOr() throws(ShellParseError) -> AndOrList {
        var pipelines = [try parsePipeline()]
        var connectors: [AndOrList.Connector] = []
        while true {
            skipBlanks()
            if peek() == .ampersand, peek(1) == .ampersand {
                connectors.append(.and)
            } else if peek() == .pipe, peek(1) == .pipe {
                connectors.append(.or)
            } else {
                break
            }
            i += 2
            skipLinebreaks()
            if atListEnd() { throw fail("‘\(connectors.last!.rawValue)’ is not followed by a command") }
            pipelines.append(try parsePipeline())
        }
        return AndOrList(pipelines: pipelines, connectors: connectors)
    }

    mutating func parsePipeline() throws(ShellParseError) -> Pipeline {
        var negated = false, timed = false
        while true {
            skipBlanks()
            switch reservedWord() {
            case "!":
                i += 1
                negated.toggle()
            case "time":
                i += 4
                timed = true
                skipBlanks()
                if peek() == .dash, peek(1) == UInt8(ascii: "p"), peek(2).map(Self.isMeta) ?? true { i += 2 }
            default:
                var commands = [try parseCommand()]
                while true {
                    skipBlanks()
                    guard peek() == .pipe, peek(1) != .pipe else { break }
                    i += 1
                    if peek() == .ampersand { i += 1 }
                    skipLinebreaks()
                    if atListEnd() { throw fail("‘|’ is not followed by a command") }
                    commands.append(try parseCommand())
                }
                return Pipeline(negated: negated, timed: timed, commands: commands)
            }
        }
    }

    // MARK: Commands

    mutating func parseCommand() throws(ShellParseError) -> ShellCommand {
        skipBlanks()
        guard let c = peek() else { throw fail("expected a command") }
        if c == .openParen {
            if peek(1) == .openParen, let expression = try arithmeticCommand() {
                return .arithmetic(expression, redirections: try parseRedirections())
            }
            i += 1
            let body = try parseList()
            skipLinebreaks()
            guard peek() == .closeParen else { throw fail("expected ‘)’ to close the subshell but found \(here)") }
            i += 1
            return .subshell(body, redirections: try parseRedirections())
        }
        switch reservedWord() {
        case "{":
            i += 1
            let body = try parseList()
            try expectReserved("}")
            return .group(body, redirections: try parseRedirections())
        case "if": return try parseIf()
        case "while", "until": return try parseLoop()
        case "for", "select": return try parseFor()
        case "case": return try parseCase()
        case "[[": return try parseConditional()
        case "function": return try parseFunctionKeyword()
        case let word? where Self.closers.contains(word) || word == "]]":
            throw fail("unexpected ‘\(word)’")
        default:
            return try parseSimpleCommand()
        }
    }

    /// Redirections after a compound command.
    mutating func parseRedirections() throws(ShellParseError) -> [Redirection] {
        var redirections: [Redirection] = []
        while true {
            skipBlanks()
            guard let c = peek() else { return redirections }
            if c == .less || c == .greater, peek(1) != .openParen {
                redirections.append(try parseRedirection(fd: nil))
            } else if c == .ampersand, peek(1) == .greater {
                redirections.append(try parseRedirection(fd: nil))
            } else if let (fd, length) = ioNumber() {
                i += length
                redirections.append(try parseRedirection(fd: fd))
            } else {
                return redirections
            }
        }
    }

    mutating func parseIf() throws(ShellParseError) -> ShellCommand {
        i += 2
        var branches: [ShellCommand.Branch] = []
        let condition = try parseList()
        try expectReserved("then")
        branches.append(.init(condition: condition, body: try parseList()))
        var elseBody: ShellScript?
        loop: while true {
            skipLinebreaks()
            switch reservedWord() {
            case "elif":
                i += 4
                let condition = try parseList()
                try expectReserved("then")
                branches.append(.init(condition: condition, body: try parseList()))
            case "else":
                i += 4
                elseBody = try parseList()
                try expectReserved("fi")
                break loop
            case "fi":
                i += 2
                break loop
            default:
                throw fail("expected ‘fi’ but found \(here)")
            }
        }
        return .ifClause(branches: branches, elseBody: elseBody, redirections: try parseRedirections())
    }

    mutating func parseLoop() throws(ShellParseError) -> ShellCommand {
        let until = reservedWord() == "until"
        i += 5  // "while" and "until" are both five letters
        let condition = try parseList()
        try expectReserved("do")
        let body = try parseList()
        try expectReserved("done")
        return .loop(until: until, condition: condition, body: body, redirections: try parseRedirections())
    }

    mutating func parseFor() throws(ShellParseError) -> ShellCommand {
        i += reservedWord() == "for" ? 3 : 6
        skipBlanks()
        if peek() == .openParen, peek(1) == .openParen {
            guard let header = try arithmeticCommand() else { throw fail("unterminated ‘((’ in for") }
            skipBlanks()
            if peek() == .semicolon { i += 1 }
            try expectReserved("do")
            let body = try parseList()
            try expectReserved("done")
            guard case .arithmetic(let inner, _)? = header.parts.first else { throw fail("unterminated ‘((’ in for") }
            return .arithmeticFor(header: inner, body: body, redirections: try parseRedirections())
        }
        let nameWord = try parseWord()
        guard let name = nameWord.staticValue, Self.isName(name) else { throw fail("‘\(nameWord.source)’ is not a valid for-loop variable") }
        skipLinebreaks()
        var items: [ShellWord]?
        if reservedWord() == "in" {
            i += 2
            var words: [ShellWord] = []
            while true {
                skipBlanks()
                guard let c = peek(), c != .semicolon, c != .newline else { break }
                if Self.isMeta(c) { throw fail("unexpected \(here) in the for-loop's word list") }
                words.append(try parseWord())
            }
            items = words
        }
        skipBlanks()
        if peek() == .semicolon { i += 1 }
        try expectReserved("do")
        let body = try parseList()
        try expectReserved("done")
        return .forLoop(variable: name, items: items, body: body, redirections: try parseRedirections())
    }

    mutating func parseCase() throws(ShellParseError) -> ShellCommand {
        i += 4
        skipBlanks()
        let subject = try parseWord()
        skipLinebreaks()
        guard reservedWord() == "in" else { throw fail("expected ‘in’ after case but found \(here)") }
        i += 2
        var items: [ShellCommand.CaseItem] = []
        while true {
            skipLinebreaks()
            if reservedWord() == "esac" {
                i += 4
                break
            }
            if atEnd { throw fail("expected ‘esac’") }
            if peek() == .openParen { i += 1 }
            var patterns: [ShellWord] = []
            while true {
                skipBlanks()
                patterns.append(try parseWord())
                skipBlanks()
                if peek() == .pipe {
                    i += 1
                } else if peek() == .closeParen {
                    i += 1
                    break
                } else {
                    throw fail("expected ‘)’ after a case pattern but found \(here)")
                }
            }
            let body = try parseList()
            skipLinebreaks()
            if peek() == .semicolon, peek(1) == .semicolon || peek(1) == .ampersand {
                i += 2
                if peek() == .ampersand { i += 1 }
            } else if reservedWord() != "esac" {
                throw fail("expected ‘;;’ or ‘esac’ but found \(here)")
            }
            items.append(.init(patterns: patterns, body: body))
        }
        return .caseClause(subject: subject, items: items, redirections: try parseRedirections())
    }

    /// `[[ … ]]`: words up to `]]`; `<`, `>`, `(`, `)`, `&&`, `||` are test operators here.
    mutating func parseConditional() throws(ShellParseError) -> ShellCommand {
        i += 2
        var words: [ShellWord] = []
        while true {
            skipLinebreaks()
            guard let c = peek() else { throw fail("expected ‘]]’") }
            if c == .closeBracket, peek(1) == .closeBracket, peek(2).map(Self.isMeta) ?? true {
                i += 2
                break
            }
            if c == .ampersand || c == .pipe, peek(1) == c {
                words.append(.literal(text(i, i + 2)))
                i += 2
            } else if c == .less || c == .greater || c == .openParen || c == .closeParen {
                words.append(.literal(text(i, i + 1)))
                i += 1
            } else if Self.isMeta(c) {
                throw fail("unexpected \(here) inside [[ ]]")
            } else {
                words.append(try parseWord())
            }
        }
        return .conditional(words: words, redirections: try parseRedirections())
    }

    mutating func parseFunctionKeyword() throws(ShellParseError) -> ShellCommand {
        i += 8
        skipBlanks()
        let nameWord = try parseWord()
        guard let name = nameWord.staticValue, !name.isEmpty else { throw fail("a function needs a plain name") }
        skipBlanks()
        if peek() == .openParen { return try parseFunctionRest(name) }
        skipLinebreaks()
        return .function(name: name, body: try parseCommand())
    }

    /// A function definition from the `(` after its name: `)`, then its body.
    mutating func parseFunctionRest(_ name: String) throws(ShellParseError) -> ShellCommand {
        i += 1
        skipBlanks()
        guard peek() == .closeParen else { throw fail("expected ‘)’ after ‘\(name)(’") }
        i += 1
        skipLinebreaks()
        return .function(name: name, body: try parseCommand())
    }

    mutating func parseSimpleCommand() throws(ShellParseError) -> ShellCommand {
        let start = i
        var assignments: [Assignment] = []
        var words: [ShellWord] = []
        var redirections: [Redirection] = []
        while true {
            skipBlanks()
            guard let c = peek() else { break }
            if c == .newline || c == .semicolon || c == .pipe || c == .closeParen { break }
            if c == .ampersand {
                guard peek(1) == .greater else { break }
                redirections.append(try parseRedirection(fd: nil))
                continue
            }
            if c == .openParen {
                guard words.count == 1, assignments.isEmpty, redirections.isEmpty, let name = words[0].staticValue, !name.isEmpty else {
                    throw fail("unexpected ‘(’")
                }
                return try parseFunctionRest(name)
            }
            if c == .less || c == .greater {
                if peek(1) == .openParen {
                    words.append(try parseWord())
                } else {
                    redirections.append(try parseRedirection(fd: nil))
                }
                continue
            }
            if let (fd, length) = ioNumber() {
                i += length
                redirections.append(try parseRedirection(fd: fd))
                continue
            }
            let word = try parseWord(assignmentPosition: words.isEmpty)
            if words.isEmpty, let assignment = Self.assignment(from: word) {
                assignments.append(assignment)
            } else {
                words.append(word)
            }
        }
        if words.isEmpty, assignments.isEmpty, redirections.isEmpty { throw fail("expected a command but found \(here)") }
        var end = i
        while end > start, Self.isBlank(b[end - 1]) { end -= 1 }
        return .simple(SimpleCommand(assignments: assignments, words: words, redirections: redirections, source: text(start, end)))
    }

    /// Digits immediately followed by `<` or `>`: a redirection's file descriptor.
    func ioNumber() -> (Int, Int)? {
        var j = i
        while j < b.count, b[j] >= .zero, b[j] <= .nine { j += 1 }
        guard j > i, j - i < 6, j < b.count, b[j] == .less || b[j] == .greater else { return nil }
        return (Int(text(i, j)) ?? 0, j - i)
    }

    mutating func parseRedirection(fd: Int?) throws(ShellParseError) -> Redirection {
        let ops: [(String, Redirection.Operator)] = [
            ("&>>", .appendOutputAndError), ("&>", .outputAndError), ("<<<", .hereString), ("<<-", .hereDocumentStrippingTabs),
            ("<<", .hereDocument), ("<&", .duplicateInput), ("<>", .readWrite), ("<", .input), (">>", .append),
            (">&", .duplicateOutput), (">|", .clobber), (">", .output),
        ]
        var op = Redirection.Operator.output
        for (spelling, candidate) in ops where b[i...].starts(with: spelling.utf8) {
            op = candidate
            i += spelling.utf8.count
            break
        }
        skipBlanks()
        guard let c = peek(), !Self.isMeta(c) || ((c == .less || c == .greater) && peek(1) == .openParen) else {
            throw fail("the redirection ‘\(op.rawValue)’ has no target")
        }
        let target = try parseWord()
        var redirection = Redirection(fd: fd, op: op, target: target)
        if op == .hereDocument || op == .hereDocumentStrippingTabs {
            let quoted = target.source.contains(where: { $0 == "'" || $0 == "\"" || $0 == "\\" })
            let id = hereDocumentCount
            hereDocumentCount += 1
            pendingHereDocuments.append(PendingHereDocument(
                id: id, delimiter: Array(target.text.utf8), stripTabs: op == .hereDocumentStrippingTabs, expands: !quoted))
            redirection.hereDocument = ShellWord(parts: [], source: Self.hereDocumentMarker + String(id))
        }
        return redirection
    }

    static func isName(_ s: String) -> Bool {
        guard let first = s.utf8.first, first == .underscore || first.isASCIILetter else { return false }
        return s.utf8.allSatisfy { $0 == .underscore || $0.isASCIILetter || ($0 >= .zero && $0 <= .nine) }
    }

    /// `NAME=value` / `NAME+=value` in command-prefix position.
    static func assignment(from word: ShellWord) -> Assignment? {
        guard case .literal(let first, quoted: false)? = word.parts.first, let eq = first.firstIndex(of: "=") else { return nil }
        var name = String(first[..<eq])
        let append = name.hasSuffix("+")
        if append { name.removeLast() }
        guard isName(name) else { return nil }
        var valueParts: [ShellWord.Part] = []
        let rest = String(first[first.index(after: eq)...])
        if rest.hasPrefix("~"), rest.count == 1 || rest.dropFirst().first == "/" {
            valueParts.append(.tilde(user: ""))
            if rest.count > 1 { valueParts.append(.literal(String(rest.dropFirst()), quoted: false)) }
        } else if !rest.isEmpty {
            valueParts.append(.literal(rest, quoted: false))
        }
        valueParts += word.parts.dropFirst()
        if valueParts.isEmpty { valueParts = [.literal("", quoted: true)] }
        let valueSource = String(word.source[word.source.index(after: word.source.firstIndex(of: "=")!)...])
        return Assignment(name: name, value: ShellWord(parts: valueParts, source: valueSource), append: append,
                          array: word.arrayElements, source: word.source)
    }
}

// MARK: - Byte constants

extension UInt8 {
    static let tab = UInt8(ascii: "\t"), newline = UInt8(ascii: "\n"), space = UInt8(ascii: " ")
    static let quote = UInt8(ascii: "'"), doubleQuote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
    static let dollar = UInt8(ascii: "$"), backquote = UInt8(ascii: "`"), hash = UInt8(ascii: "#")
    static let semicolon = UInt8(ascii: ";"), ampersand = UInt8(ascii: "&"), pipe = UInt8(ascii: "|")
    static let less = UInt8(ascii: "<"), greater = UInt8(ascii: ">"), openParen = UInt8(ascii: "("), closeParen = UInt8(ascii: ")")
    static let openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}"), closeBracket = UInt8(ascii: "]")
    static let tilde = UInt8(ascii: "~"), slash = UInt8(ascii: "/"), equals = UInt8(ascii: "="), plus = UInt8(ascii: "+")
    static let dash = UInt8(ascii: "-"), underscore = UInt8(ascii: "_"), zero = UInt8(ascii: "0"), nine = UInt8(ascii: "9")

    var isASCIILetter: Bool { (self >= 0x41 && self <= 0x5A) || (self >= 0x61 && self <= 0x7A) }
}
