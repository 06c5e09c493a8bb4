/// A pull reader over one JSON text: a caller that needs a few fields of a known shape reads
/// them member by member and skips the rest without building it (no strings, arrays or objects
/// made and freed for values it never looks at).
///
/// It is a fast path, not a second parser: whatever the reader does not like — a key with an
/// escape or a non-ASCII byte (whose decoded text could equal a key the caller compares by
/// bytes), a value of another type than asked — ends the read, and the caller falls back to
/// `JSONParser.parse` on the same bytes, which then says what is wrong. So the reader only has to
/// agree with the parser on the texts it accepts: `read` returns a result only for a text the
/// parser accepts too (skipped values are validated by the parser's own scanning, with the same
/// nesting limit; strings and numbers read are the parser's), and every value it returns is the
/// one `parse` would have built.
extension JSONParser {
    /// Why a read ended early: the caller takes the full parse instead.
    public struct ReadRefused: Error { @inlinable public init() {} }

    /// Runs `body` on a reader at the start of `buffer`; its result if it returns one, the text
    /// then ends (whitespace only), and nothing in it was refused or malformed. Nil otherwise.
    ///
    /// Inlinable, so that `body` and the reader's small functions it calls (`nextKey`, `consume`,
    /// …) are compiled into the caller, its key comparisons folded into the scan.
    @inlinable public static func read<R>(_ buffer: UnsafeBufferPointer<UInt8>,
                                          _ body: (inout JSONParser) throws(ReadRefused) -> R?) -> R? {
        var result: R?
        let accepted = withReader(buffer) { (reader: inout JSONParser) -> Bool in
            guard let read = try? body(&reader) else { return false }
            result = read
            return true
        }
        return accepted ? result : nil
    }

    /// Runs `body` on a reader at the start of `buffer`: whether it accepted the text and the
    /// text then ends (whitespace only). Not inlined: the reader's scratch storage is made and
    /// freed here.
    @usableFromInline static func withReader(_ buffer: UnsafeBufferPointer<UInt8>, _ body: (inout JSONParser) -> Bool) -> Bool {
        var reader = JSONParser(buffer)
        guard body(&reader) else { return false }
        reader.skipWhitespace()
        return reader.index == reader.end
    }

    /// Whether the input at the reader (after whitespace) starts with `prefix`: a cheap test of
    /// a text's shape before reading it. Consumes nothing.
    @inlinable public func hasPrefix(_ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard end - index >= count else { return false }
        return Self.equal(base + index, prefix.utf8Start, count)
    }

    /// Whether `count` bytes at `a` and `b` are equal: eight at a time, then the rest.
    @inlinable @inline(__always) public static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        var i = 0
        while count - i >= 8 {
            if UnsafeRawPointer(a + i).loadUnaligned(as: UInt64.self) != UnsafeRawPointer(b + i).loadUnaligned(as: UInt64.self) { return false }
            i += 8
        }
        while i < count {
            if a[i] != b[i] { return false }
            i += 1
        }
        return true
    }

    /// Enters the object that comes next (its depth: 1 for the text's own object, one more for
    /// each object around it); anything else is refused.
    @inlinable public mutating func enterObject(depth: Int) throws(ReadRefused) {
        skipWhitespace()
        guard depth <= Self.maximumDepth, index < end, byte(at: index) == UInt8(ascii: "{") else { throw ReadRefused() }
        index += 1
        skipWhitespace()
    }

    /// The next member's key of the object entered last, its raw bytes (a view of the input,
    /// valid while the input is), with the reader at the member's value; nil at the object's end
    /// (consumed). `first`: no member was read from this object yet (set to false here). A key
    /// with an escape or a byte outside ASCII is refused.
    @inlinable public mutating func nextKey(first: inout Bool) throws(ReadRefused) -> UnsafeBufferPointer<UInt8>? {
        skipWhitespace()
        guard index < end else { throw ReadRefused() }
        if byte(at: index) == UInt8(ascii: "}") {
            index += 1
            return nil
        }
        if !first {
            guard byte(at: index) == UInt8(ascii: ",") else { throw ReadRefused() }
            index += 1
            skipWhitespace()
        }
        first = false
        guard index < end, byte(at: index) == UInt8(ascii: "\"") else { throw ReadRefused() }
        index += 1
        let start = index
        highBits = 0
        do { try scanToQuoteOrEscape() } catch { throw ReadRefused() }
        guard byte(at: index) == UInt8(ascii: "\""), highBits & 0x8080_8080_8080_8080 == 0 || isASCII(start, index) else {
            throw ReadRefused()
        }
        let key = UnsafeBufferPointer(start: base + start, count: index - start)
        index += 1
        skipWhitespace()
        guard index < end, byte(at: index) == UInt8(ascii: ":") else { throw ReadRefused() }
        index += 1
        skipWhitespace()
        return key
    }

    /// Whether the bytes `start..<stop` are all ASCII (the scan's high bits are only a hint: a
    /// whole word is or-ed in, so a byte past the key may have set them).
    @usableFromInline func isASCII(_ start: Int, _ stop: Int) -> Bool {
        for i in start..<stop where byte(at: i) >= 0x80 { return false }
        return true
    }

    /// The string value at the reader, decoded as `parse` decodes it; a value of another type is
    /// refused.
    @inlinable public mutating func readString() throws(ReadRefused) -> String {
        guard index < end, byte(at: index) == UInt8(ascii: "\"") else { throw ReadRefused() }
        do { return try parseString() } catch { throw ReadRefused() }
    }

    /// Whether the input at the reader starts with `literal` (raw bytes, no whitespace skipped);
    /// consumed only then. A caller that knows how a writer lays its lines out matches the
    /// fixed parts of a line with it, and reads the rest member by member when a part differs.
    @inlinable @inline(__always) public mutating func consume(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard end - index >= count, Self.equal(base + index, literal.utf8Start, count) else { return false }
        index += count
        return true
    }

    /// Whether the value at the reader is the string `literal` exactly (no escapes); consumed
    /// only then, so a caller can try several.
    @inlinable public mutating func consumeString(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard end - index >= count + 2, byte(at: index) == UInt8(ascii: "\""), byte(at: index + count + 1) == UInt8(ascii: "\""),
            Self.equal(base + index + 1, literal.utf8Start, count)
        else { return false }
        index += count + 2
        return true
    }

    /// The integer value at the reader (what `parse` makes `.int`); anything else is refused.
    @inlinable public mutating func readInt() throws(ReadRefused) -> Int64 {
        guard index < end, byte(at: index) == UInt8(ascii: "-") || (byte(at: index) >= UInt8(ascii: "0") && byte(at: index) <= UInt8(ascii: "9")) else {
            throw ReadRefused()
        }
        guard case .int(let value)? = try? parseNumber() else { throw ReadRefused() }
        return value
    }

    /// Passes over the value at the reader, checking it as `parse` would, building nothing (the
    /// escapes of a string are checked, not decoded: see `skipEscape`). `depth`: that
    /// of the object or array the value is in (0 for the text itself). Whitespace before it is skipped too.
    public mutating func skipValue(depth: Int) throws(ReadRefused) {
        skipWhitespace()
        do { try skip(depth: depth) } catch { throw ReadRefused() }
    }

    @usableFromInline mutating func skip(depth: Int) throws(JSONParseError) {
        guard index < end else { throw error("unexpected end of input") }
        switch byte(at: index) {
        case UInt8(ascii: "\""):
            index += 1
            try scanToQuoteOrEscape()
            while byte(at: index) == UInt8(ascii: "\\") {
                try skipEscape()
                try scanToQuoteOrEscape()
            }
            index += 1
        case UInt8(ascii: "{"):
            guard depth + 1 <= Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth)") }
            index += 1
            skipWhitespace()
            if index < end, byte(at: index) == UInt8(ascii: "}") { index += 1; return }
            while true {
                skipWhitespace()
                guard index < end, byte(at: index) == UInt8(ascii: "\"") else { throw error("expected a string key") }
                try skip(depth: depth + 1)
                skipWhitespace()
                guard index < end, byte(at: index) == UInt8(ascii: ":") else { throw error("expected ':'") }
                index += 1
                skipWhitespace()
                try skip(depth: depth + 1)
                skipWhitespace()
                guard index < end else { throw error("unexpected end of input in object") }
                let c = byte(at: index)
                index += 1
                if c == UInt8(ascii: ",") { continue }
                if c == UInt8(ascii: "}") { return }
                index -= 1
                throw error("expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            guard depth + 1 <= Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth)") }
            index += 1
            skipWhitespace()
            if index < end, byte(at: index) == UInt8(ascii: "]") { index += 1; return }
            while true {
                skipWhitespace()
                try skip(depth: depth + 1)
                skipWhitespace()
                guard index < end else { throw error("unexpected end of input in array") }
                let c = byte(at: index)
                index += 1
                if c == UInt8(ascii: ",") { continue }
                if c == UInt8(ascii: "]") { return }
                index -= 1
                throw error("expected ',' or ']'")
            }
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
        default: throw error("unexpected character")
        }
    }

    /// Passes over the escape at the reader (at its backslash), checking it as `parseString` does:
    /// one of `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, or `\u` and four hex digits. (The
    /// parser accepts any sequence of valid escapes: it joins surrogate pairs and makes a lone
    /// surrogate U+FFFD, never an error; nor are ill-formed UTF-8 bytes, which it repairs. So a
    /// string skipped is checked without decoding it.)
    private mutating func skipEscape() throws(JSONParseError) {
        index += 1
        guard index < end else { throw error("unterminated escape") }
        switch byte(at: index) {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
            UInt8(ascii: "r"), UInt8(ascii: "t"):
            index += 1
        case UInt8(ascii: "u"):
            index += 1
            guard end - index >= 4 else { throw error("truncated \\u escape") }
            for i in index..<index + 4 {
                switch byte(at: i) {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): continue
                default: index = i; throw error("invalid hex digit in \\u escape")
                }
            }
            index += 4
        default: throw error("invalid escape")
        }
    }
}

extension JSONParser {
    /// `parse`, except that the members named `name` of the text's own object are checked and
    /// left out, never built: for a caller that never reads them (Claude Code repeats a tool's
    /// whole output in `tool_use_result`, which the codec does not read). A text that is not an
    /// object is parsed whole. Errors are the ones `parse` reports.
    public static func parse(_ buffer: UnsafeBufferPointer<UInt8>, skippingMember name: String) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(buffer)
        parser.skipWhitespace()
        guard parser.index < parser.end, parser.byte(at: parser.index) == UInt8(ascii: "{") else { return try parse(buffer: buffer) }
        let value = JSONValue.object(try parser.parseObject(depth: 1, skipping: name))
        parser.skipWhitespace()
        guard parser.index == parser.end else { throw parser.error("trailing characters after the value") }
        return value
    }
}
