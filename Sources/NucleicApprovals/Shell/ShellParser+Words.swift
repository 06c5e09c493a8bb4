/// Words: quoting, expansions, substitutions, here-document bodies.
extension ShellParserCore {
    /// Collects a word's parts, merging neighbouring literal text of the same quoting.
    struct WordBuilder {
        var parts: [ShellWord.Part] = []
        var literal: [UInt8] = []
        var literalQuoted = false
        /// An empty quoted literal (`""`) still makes a part.
        var literalPending = false

        mutating func append(_ bytes: some Sequence<UInt8>, quoted: Bool) {
            if quoted != literalQuoted, literalPending || !literal.isEmpty { flush() }
            literalQuoted = quoted
            literal.append(contentsOf: bytes)
            literalPending = true
        }

        mutating func append(_ byte: UInt8, quoted: Bool) { append(CollectionOfOne(byte), quoted: quoted) }

        mutating func append(part: ShellWord.Part) {
            flush()
            parts.append(part)
        }

        mutating func flush() {
            if literalPending || !literal.isEmpty {
                parts.append(.literal(String(decoding: literal, as: UTF8.self), quoted: literalQuoted))
            }
            literal = []
            literalPending = false
        }

        /// Whether the unquoted text so far is `NAME=` or `NAME+=` (an array assignment follows `(`).
        var isAssignmentPrefix: Bool {
            guard parts.isEmpty, !literalQuoted, literal.last == .equals else { return false }
            var name = literal.dropLast()
            if name.last == .plus { name = name.dropLast() }
            return ShellParserCore.isName(String(decoding: name, as: UTF8.self))
        }
    }

    /// One word, up to an unquoted metacharacter.
    mutating func parseWord(assignmentPosition: Bool = false) throws(ShellParseError) -> ShellWord {
        let start = i
        var w = WordBuilder()
        var arrayElements: [ShellWord]?
        if peek() == .less || peek() == .greater, peek(1) == .openParen {
            let input = peek() == .less
            i += 2
            let script = try parseList()
            skipLinebreaks()
            guard peek() == .closeParen else { throw fail("expected ‘)’ to close the process substitution but found \(here)") }
            i += 1
            w.append(part: .processSubstitution(script, source: text(start, i), input: input))
        } else if peek() == .tilde {
            var j = i + 1
            while j < b.count, b[j] == .dash || b[j] == .underscore || b[j] == UInt8(ascii: ".") || b[j].isASCIILetter
                || (b[j] >= .zero && b[j] <= .nine)
            {
                j += 1
            }
            if j == b.count || b[j] == .slash || Self.isMeta(b[j]) {
                w.append(part: .tilde(user: text(i + 1, j)))
                i = j
            }
        }
        while let c = peek() {
            if Self.isMeta(c) {
                if c == .openParen, assignmentPosition, arrayElements == nil, w.isAssignmentPrefix {
                    arrayElements = try parseArrayElements()
                    continue
                }
                break
            }
            switch c {
            case .backslash:
                if peek(1) == .newline {
                    i += 2
                } else if let next = peek(1) {
                    w.append(next, quoted: true)
                    i += 2
                } else {
                    w.append(c, quoted: false)
                    i += 1
                }
            case .quote:
                i += 1
                let open = i
                while let d = peek(), d != .quote { i += 1 }
                guard !atEnd else { throw ShellParseError("unterminated single quote", offset: open - 1) }
                w.append(b[open..<i], quoted: true)
                i += 1
            case .doubleQuote:
                try parseDoubleQuoted(into: &w)
            case .backquote:
                w.append(part: try parseBackquoted(inDoubleQuotes: false))
            case .dollar:
                try parseDollar(into: &w, quoted: false)
            default:
                w.append(c, quoted: false)
                i += 1
            }
        }
        w.flush()
        guard i > start else { throw fail("expected a word but found \(here)") }
        return ShellWord(parts: w.parts, source: text(start, i), arrayElements: arrayElements)
    }

    mutating func parseArrayElements() throws(ShellParseError) -> [ShellWord] {
        i += 1
        var elements: [ShellWord] = []
        while true {
            skipLinebreaks()
            guard let c = peek() else { throw fail("unterminated array assignment") }
            if c == .closeParen {
                i += 1
                return elements
            }
            if Self.isMeta(c) { throw fail("unexpected \(here) in an array assignment") }
            elements.append(try parseWord())
        }
    }

    /// From an opening `"` to its closing `"`.
    mutating func parseDoubleQuoted(into w: inout WordBuilder) throws(ShellParseError) {
        let open = i
        i += 1
        w.append([], quoted: true)
        while true {
            guard let c = peek() else { throw ShellParseError("unterminated double quote", offset: open) }
            switch c {
            case .doubleQuote:
                i += 1
                return
            case .backslash:
                if let next = peek(1), next == .dollar || next == .backquote || next == .doubleQuote || next == .backslash || next == .newline {
                    if next != .newline { w.append(next, quoted: true) }
                    i += 2
                } else {
                    w.append(c, quoted: true)
                    i += 1
                }
            case .backquote:
                w.append(part: try parseBackquoted(inDoubleQuotes: true))
            case .dollar:
                try parseDollar(into: &w, quoted: true)
            default:
                w.append(c, quoted: true)
                i += 1
            }
        }
    }

    /// `$` and what follows: a variable, `${…}`, `$(…)`, `$((…))`, `$'…'`, `$"…"`, or a plain `$`.
    mutating func parseDollar(into w: inout WordBuilder, quoted: Bool) throws(ShellParseError) {
        let start = i
        guard let next = peek(1) else {
            w.append(.dollar, quoted: quoted)
            i += 1
            return
        }
        switch next {
        case .openParen:
            if peek(2) == .openParen, let part = try arithmeticExpansion() {
                w.append(part: part)
                return
            }
            i += 2
            let script = try parseList()
            skipLinebreaks()
            guard peek() == .closeParen else { throw ShellParseError("unterminated ‘$(’", offset: start) }
            i += 1
            w.append(part: .commandSubstitution(script, source: text(start, i), quoted: quoted))
        case .openBrace:
            w.append(part: try parseBraceParameter(quoted: quoted))
        case .quote where !quoted:
            i += 2
            w.append(try ansiCQuoted(), quoted: true)
        case .doubleQuote where !quoted:
            i += 1  // $"…" is a translatable string: a double-quoted one here
        case _ where next == .underscore || next.isASCIILetter:
            var j = i + 2
            while j < b.count, b[j] == .underscore || b[j].isASCIILetter || (b[j] >= .zero && b[j] <= .nine) { j += 1 }
            w.append(part: .variable(text(i + 1, j), quoted: quoted))
            i = j
        case _ where (next >= .zero && next <= .nine) || "@*#?-$!".utf8.contains(next):
            w.append(part: .variable(text(i + 1, i + 2), quoted: quoted))
            i += 2
        default:
            w.append(.dollar, quoted: quoted)
            i += 1
        }
    }

    /// `${…}` up to its matching `}`, with the substitutions inside it.
    mutating func parseBraceParameter(quoted: Bool) throws(ShellParseError) -> ShellWord.Part {
        let start = i
        i += 2
        let innerStart = i
        var inner = WordBuilder()
        var nesting = 0
        while true {
            guard let c = peek() else { throw ShellParseError("unterminated ‘${’", offset: start) }
            switch c {
            case .closeBrace where nesting == 0:
                let content = text(innerStart, i)
                i += 1
                inner.flush()
                let subs = ShellWord(parts: inner.parts, source: "").substitutions
                if Self.isName(content) || (content.count == 1 && "@*#?-$!0123456789".contains(content))
                    || (!content.isEmpty && content.allSatisfy(\.isNumber))
                {
                    return .variable(content, quoted: quoted)
                }
                return .parameter(content, substitutions: subs, quoted: quoted)
            case .closeBrace:
                nesting -= 1
                i += 1
            case .openBrace:
                nesting += 1
                i += 1
            case .backslash:
                i += min(2, b.count - i)
            case .quote where !quoted:
                i += 1
                while let d = peek(), d != .quote { i += 1 }
                guard !atEnd else { throw ShellParseError("unterminated single quote", offset: start) }
                i += 1
            case .doubleQuote:
                try parseDoubleQuoted(into: &inner)
            case .backquote:
                inner.append(part: try parseBackquoted(inDoubleQuotes: quoted))
            case .dollar:
                try parseDollar(into: &inner, quoted: true)
            default:
                i += 1
            }
        }
    }

    /// `` `…` ``: the text with its backslash escapes undone, parsed as a script of its own.
    mutating func parseBackquoted(inDoubleQuotes: Bool) throws(ShellParseError) -> ShellWord.Part {
        let start = i
        i += 1
        var content: [UInt8] = []
        while true {
            guard let c = peek() else { throw ShellParseError("unterminated backquote", offset: start) }
            if c == .backquote {
                i += 1
                break
            }
            if c == .backslash, let next = peek(1),
                next == .dollar || next == .backquote || next == .backslash || (inDoubleQuotes && next == .doubleQuote)
            {
                content.append(next)
                i += 2
            } else {
                content.append(c)
                i += 1
            }
        }
        var sub = ShellParserCore(bytes: content, depth: depth + 1, maxDepth: maxDepth)
        do {
            let script = try sub.parseTop()
            return .commandSubstitution(script, source: text(start, i), quoted: inDoubleQuotes)
        } catch {
            throw ShellParseError("inside backquotes: \(error.message)", offset: start + 1 + error.offset)
        }
    }

    /// `$'…'`: ANSI-C escapes.
    mutating func ansiCQuoted() throws(ShellParseError) -> [UInt8] {
        let start = i - 2
        var out: [UInt8] = []
        while true {
            guard let c = peek() else { throw ShellParseError("unterminated ‘$'’", offset: start) }
            i += 1
            if c == .quote { return out }
            guard c == .backslash, let e = peek() else {
                out.append(c)
                continue
            }
            i += 1
            switch e {
            case UInt8(ascii: "n"): out.append(.newline)
            case UInt8(ascii: "t"): out.append(.tab)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "a"): out.append(0x07)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "e"), UInt8(ascii: "E"): out.append(0x1B)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "v"): out.append(0x0B)
            case UInt8(ascii: "x"):
                var value: UInt8 = 0, digits = 0
                while digits < 2, let h = peek(), let v = Self.hexValue(h) {
                    value = value &* 16 &+ v
                    digits += 1
                    i += 1
                }
                out.append(digits == 0 ? UInt8(ascii: "x") : value)
            case .zero...UInt8(ascii: "7"):
                var value = UInt8(e - .zero), digits = 1
                while digits < 3, let d = peek(), d >= .zero, d <= UInt8(ascii: "7") {
                    value = value &* 8 &+ (d - .zero)
                    digits += 1
                    i += 1
                }
                out.append(value)
            default: out.append(e)  // \\ \' \" and anything else: the character itself
            }
        }
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case .zero ... .nine: c - .zero
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: Arithmetic

    /// Scans `((…))` from the cursor (at the first `(`). Returns the inner text and its
    /// substitutions, leaving the cursor after `))`; nil (cursor unchanged) when the parentheses
    /// do not close as `))`, so the caller can read a nested subshell instead.
    mutating func scanArithmetic() throws(ShellParseError) -> (String, [ShellScript])? {
        let save = i
        i += 2
        let innerStart = i
        var nesting = 0
        var subs = WordBuilder()
        while let c = peek() {
            switch c {
            case .openParen:
                nesting += 1
                i += 1
            case .closeParen:
                if nesting == 0 {
                    guard peek(1) == .closeParen else {
                        i = save
                        return nil
                    }
                    let inner = text(innerStart, i)
                    i += 2
                    return (inner, ShellWord(parts: subs.parts, source: "").substitutions)
                }
                nesting -= 1
                i += 1
            case .dollar where peek(1) == .openParen || peek(1) == .openBrace:
                try parseDollar(into: &subs, quoted: true)
                subs.flush()
            case .backquote:
                subs.append(part: try parseBackquoted(inDoubleQuotes: false))
            default:
                i += 1
            }
        }
        i = save
        return nil
    }

    mutating func arithmeticExpansion() throws(ShellParseError) -> ShellWord.Part? {
        i += 1  // the `$`
        guard let (inner, subs) = try scanArithmetic() else {
            i -= 1
            return nil
        }
        return .arithmetic(inner, substitutions: subs)
    }

    /// `(( … ))` as a command (or a for-loop header).
    mutating func arithmeticCommand() throws(ShellParseError) -> ShellWord? {
        let start = i
        guard let (inner, subs) = try scanArithmetic() else { return nil }
        return ShellWord(parts: [.arithmetic(inner, substitutions: subs)], source: text(start, i))
    }

    // MARK: Here-documents

    static let hereDocumentMarker = "\u{0}heredoc:"

    /// Reads the bodies of the here-documents opened on the line just ended.
    mutating func readHereDocumentBodies() {
        let pending = pendingHereDocuments
        pendingHereDocuments = []
        for doc in pending {
            var body: [UInt8] = []
            while !atEnd {
                var end = i
                while end < b.count, b[end] != .newline { end += 1 }
                var line = b[i..<end]
                if doc.stripTabs { line = line.drop(while: { $0 == .tab }) }
                i = min(end + 1, b.count)
                if Array(line) == doc.delimiter { break }
                body.append(contentsOf: line)
                body.append(.newline)
            }
            hereDocumentBodies[doc.id] = hereDocumentWord(body, expands: doc.expands)
        }
    }

    /// An unquoted delimiter means the body is expanded like a double-quoted string: its
    /// `$(…)` and backquotes run.
    func hereDocumentWord(_ body: [UInt8], expands: Bool) -> ShellWord {
        let source = String(decoding: body, as: UTF8.self)
        guard expands, body.contains(where: { $0 == .dollar || $0 == .backquote }) else {
            return ShellWord(parts: [.literal(source, quoted: true)], source: source)
        }
        var sub = ShellParserCore(bytes: body, depth: depth + 1, maxDepth: maxDepth)
        var w = WordBuilder()
        do {
            while let c = sub.peek() {
                switch c {
                case .backslash:
                    if let next = sub.peek(1), next == .dollar || next == .backquote || next == .backslash {
                        w.append(next, quoted: true)
                        sub.i += 2
                    } else if sub.peek(1) == .newline {
                        sub.i += 2
                    } else {
                        w.append(c, quoted: true)
                        sub.i += 1
                    }
                case .dollar: try sub.parseDollar(into: &w, quoted: true)
                case .backquote: w.append(part: try sub.parseBackquoted(inDoubleQuotes: false))
                default:
                    w.append(c, quoted: true)
                    sub.i += 1
                }
            }
        } catch {
            // An expansion that does not parse: keep the body, marked as holding an unknown part.
            return ShellWord(parts: [.literal(source, quoted: true), .parameter("unparseable", substitutions: [], quoted: true)], source: source)
        }
        w.flush()
        return ShellWord(parts: w.parts, source: source)
    }

    /// Puts the here-document bodies read at newlines into the redirections that opened them.
    func fillHereDocuments(_ script: ShellScript) -> ShellScript {
        let bodies = hereDocumentBodies
        return script.mappingRedirections { r in
            guard let marker = r.hereDocument?.source, marker.hasPrefix(Self.hereDocumentMarker),
                let id = Int(marker.dropFirst(Self.hereDocumentMarker.count))
            else { return r }
            var filled = r
            filled.hereDocument = bodies[id] ?? ShellWord(parts: [.literal("", quoted: true)], source: "")
            return filled
        }
    }
}

// MARK: - Tree mapping

extension ShellScript {
    /// The same tree with every redirection (at any depth, inside substitutions too) passed through `f`.
    func mappingRedirections(_ f: (Redirection) -> Redirection) -> ShellScript {
        ShellScript(items: items.map { item in
            ShellScript.Item(andOr: AndOrList(
                pipelines: item.andOr.pipelines.map { p in
                    Pipeline(negated: p.negated, timed: p.timed, commands: p.commands.map { $0.mappingRedirections(f) })
                },
                connectors: item.andOr.connectors), background: item.background)
        })
    }
}

extension ShellCommand {
    func mappingRedirections(_ f: (Redirection) -> Redirection) -> ShellCommand {
        func script(_ s: ShellScript) -> ShellScript { s.mappingRedirections(f) }
        func word(_ w: ShellWord) -> ShellWord { w.mappingRedirections(f) }
        func redirs(_ rs: [Redirection]) -> [Redirection] {
            rs.map { r in
                var r = f(r)
                r.target = word(r.target)
                r.hereDocument = r.hereDocument.map(word)
                return r
            }
        }
        switch self {
        case .simple(var c):
            c.assignments = c.assignments.map { a in
                var a = a
                a.value = word(a.value)
                a.array = a.array?.map(word)
                return a
            }
            c.words = c.words.map(word)
            c.redirections = redirs(c.redirections)
            return .simple(c)
        case .subshell(let s, let r): return .subshell(script(s), redirections: redirs(r))
        case .group(let s, let r): return .group(script(s), redirections: redirs(r))
        case .ifClause(let branches, let elseBody, let r):
            return .ifClause(branches: branches.map { .init(condition: script($0.condition), body: script($0.body)) },
                             elseBody: elseBody.map(script), redirections: redirs(r))
        case .loop(let until, let c, let body, let r):
            return .loop(until: until, condition: script(c), body: script(body), redirections: redirs(r))
        case .forLoop(let v, let items, let body, let r):
            return .forLoop(variable: v, items: items?.map(word), body: script(body), redirections: redirs(r))
        case .arithmeticFor(let h, let body, let r): return .arithmeticFor(header: h, body: script(body), redirections: redirs(r))
        case .caseClause(let subject, let items, let r):
            return .caseClause(subject: word(subject), items: items.map { .init(patterns: $0.patterns.map(word), body: script($0.body)) },
                               redirections: redirs(r))
        case .conditional(let words, let r): return .conditional(words: words.map(word), redirections: redirs(r))
        case .arithmetic(let w, let r): return .arithmetic(word(w), redirections: redirs(r))
        case .function(let name, let body): return .function(name: name, body: body.mappingRedirections(f))
        }
    }
}

extension ShellWord {
    func mappingRedirections(_ f: (Redirection) -> Redirection) -> ShellWord {
        var w = self
        w.parts = parts.map { part in
            switch part {
            case .commandSubstitution(let s, let source, let quoted):
                .commandSubstitution(s.mappingRedirections(f), source: source, quoted: quoted)
            case .processSubstitution(let s, let source, let input):
                .processSubstitution(s.mappingRedirections(f), source: source, input: input)
            case .parameter(let inner, let subs, let quoted):
                .parameter(inner, substitutions: subs.map { $0.mappingRedirections(f) }, quoted: quoted)
            case .arithmetic(let inner, let subs):
                .arithmetic(inner, substitutions: subs.map { $0.mappingRedirections(f) })
            default: part
            }
        }
        w.arrayElements = arrayElements?.map { $0.mappingRedirections(f) }
        return w
    }
}
