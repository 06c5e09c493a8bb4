/// Why a text is not the JSON it should be; `offset` is the byte where reading stopped.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public let offset: Int
    public let message: String
    public var description: String { "invalid JSON at byte \(offset): \(message)" }
}

/// A byte-level JSON parser (RFC 8259) for the ingest hot path.
///
/// DESIGN.md §7: `JSONSerialization` reads agent streams at 0.4× Python's `json.loads`, so agent
/// lines are parsed here straight from UTF-8 bytes (docs/BENCHMARKS.md has the numbers). What
/// makes it fast:
/// - strings are scanned eight bytes at a time for `"`, `\` and control characters; a string
///   without escapes becomes a `String` in one step (one validation, one copy), one with escapes
///   is assembled run by run in a scratch buffer that is reused for every string of the text;
/// - long strings that are not all ASCII are validated in pieces (see `decode`);
/// - object keys the agent protocols repeat on every line come from a table (`KnownKeys`);
/// - objects and arrays are built on two scratch stacks shared by all nesting levels, then moved
///   into one exact-size array each, instead of growing an array per container;
/// - nesting is limited so hostile input cannot exhaust the stack.
public struct JSONParser: ~Copyable {
    /// Deepest nesting accepted; agent messages nest a dozen levels at most.
    public static let maximumDepth = 512

    /// Parses one complete JSON text; trailing non-whitespace is an error.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(buffer: buffer) }
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer throws(JSONParseError) -> JSONValue in try parse(buffer: buffer) }
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        let result: Result<JSONValue, JSONParseError> = text.withUTF8 { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(buffer: buffer) }
        }
        return try result.get()
    }

    static func parse(buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(buffer)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.end else { throw parser.error("trailing characters after the value") }
        return value
    }

    @usableFromInline let base: UnsafePointer<UInt8>
    @usableFromInline let end: Int
    @usableFromInline var index = 0
    /// Entries of the objects being parsed, innermost last (see `ScratchStack`).
    var entries = ScratchStack<JSONObject.Entry>()
    /// Elements of the arrays being parsed, innermost last.
    private var elements = ScratchStack<JSONValue>()
    /// The bytes of a string with escapes, decoded; its capacity is kept from string to string.
    private var unescaped = ByteBuffer()
    /// The high bits of the string bytes scanned since the last reset: zero means ASCII. (Whole
    /// words are or-ed in, so a byte just past the string may count too: a hint, never wrong for ASCII.)
    @usableFromInline var highBits: UInt64 = 0

    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        // An empty buffer may have no address; nothing is read from it then (`end` is 0).
        base = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
        end = buffer.count
    }

    @usableFromInline func error(_ message: String) -> JSONParseError { JSONParseError(offset: index, message: message) }

    @inlinable @inline(__always) func byte(at i: Int) -> UInt8 { base[i] }

    @inlinable @inline(__always) mutating func skipWhitespace() {
        while index < end {
            switch byte(at: index) {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < end else { throw error("unexpected end of input") }
        switch byte(at: index) {
        case UInt8(ascii: "{"): return .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard end - index >= count else { throw error("unexpected end of input") }
        let bytes = literal.utf8Start
        for i in 0..<count where byte(at: index + i) != bytes[i] { throw error("invalid literal") }
        index += count
    }

    /// An object at nesting `depth`; its members named `skipping` (when given) are checked and
    /// left out, never built.
    mutating func parseObject(depth: Int, skipping name: String? = nil) throws(JSONParseError) -> JSONObject {
        guard depth <= Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth)") }
        index += 1  // {
        let first = entries.count
        skipWhitespace()
        if index < end, byte(at: index) == UInt8(ascii: "}") { index += 1; return JSONObject() }
        while true {
            skipWhitespace()
            guard index < end, byte(at: index) == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let key = try parseKey()
            skipWhitespace()
            guard index < end, byte(at: index) == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            if let name, key == name {
                try skip(depth: depth)
            } else {
                let value = try parseValue(depth: depth)
                entries.push(JSONObject.Entry(key, value))
            }
            skipWhitespace()
            guard index < end else { throw error("unexpected end of input in object") }
            let c = byte(at: index)
            index += 1
            if c == UInt8(ascii: ",") { continue }
            if c == UInt8(ascii: "}") { return JSONObject(entries.popArray(from: first)) }
            index -= 1
            throw error("expected ',' or '}'")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> [JSONValue] {
        guard depth <= Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth)") }
        index += 1  // [
        let first = elements.count
        skipWhitespace()
        if index < end, byte(at: index) == UInt8(ascii: "]") { index += 1; return [] }
        while true {
            skipWhitespace()
            elements.push(try parseValue(depth: depth))
            skipWhitespace()
            guard index < end else { throw error("unexpected end of input in array") }
            let c = byte(at: index)
            index += 1
            if c == UInt8(ascii: ",") { continue }
            if c == UInt8(ascii: "]") { return elements.popArray(from: first) }
            index -= 1
            throw error("expected ',' or ']'")
        }
    }

    /// An object key: one of `KnownKeys` when it is one (no decoding, no allocation), else a string.
    mutating func parseKey() throws(JSONParseError) -> String {
        let start = index + 1
        // The table's keys are under 32 bytes: four words hold one and its closing quote. They are
        // read whole while the text has 32 more bytes (else the general path takes the key).
        if end - start >= 32 {
            @inline(__always) func word(_ i: Int) -> UInt64 {
                UInt64(littleEndian: UnsafeRawPointer(base + start + 8 * i).loadUnaligned(as: UInt64.self))
            }
            /// The bytes of `w` before its first stop byte, and how many there are (8: no stop).
            @inline(__always) func head(_ w: UInt64) -> (UInt64, Int) {
                let stops = Self.stopBytes(w)
                if stops == 0 { return (w, 8) }
                let n = stops.trailingZeroBitCount >> 3  // 0...7, so the shift below stays under 64
                return (n == 0 ? 0 : w & (~0 >> (64 - 8 * UInt64(n))), n)
            }
            var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            var length = 0
            var n: Int
            (words.0, n) = head(word(0))
            length = n
            if n == 8 {
                (words.1, n) = head(word(1))
                length += n
                if n == 8 {
                    (words.2, n) = head(word(2))
                    length += n
                    if n == 8 {
                        (words.3, n) = head(word(3))
                        length += n
                    }
                }
            }
            if n < 8, length > 0, byte(at: start + length) == UInt8(ascii: "\""), let key = KnownKeys.table.key(words, length) {
                index = start + length + 1
                return key
            }
        }
        return try parseString()
    }

    /// The high bit set in each byte of `w` that is `"`, `\` or below 0x20 (see `scanToQuoteOrEscape`).
    @inlinable @inline(__always) static func stopBytes(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quote = w ^ (ones &* 0x22)
        let backslash = w ^ (ones &* 0x5C)
        return ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash | (w &- ones &* 0x20) & ~w) & (ones &* 0x80)
    }

    @usableFromInline mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        highBits = 0
        try scanToQuoteOrEscape()
        if byte(at: index) == UInt8(ascii: "\"") {
            // No escapes: the bytes are the string.
            let bytes = UnsafeBufferPointer(start: base + start, count: index - start)
            let text = Self.decode(bytes, mayBeNonASCII: highBits & 0x8080_8080_8080_8080 != 0)
            index += 1
            return text
        }
        // Escapes: decode into the scratch buffer, the bytes between escapes copied word by word.
        unescaped.removeAll()
        unescaped.append(base + start, count: index - start)
        while true {
            // At a backslash.
            index += 1
            guard index < end else { throw error("unterminated escape") }
            let e = byte(at: index)
            index += 1
            switch e {
            case UInt8(ascii: "\""): unescaped.append(0x22)
            case UInt8(ascii: "\\"): unescaped.append(0x5C)
            case UInt8(ascii: "/"): unescaped.append(0x2F)
            case UInt8(ascii: "b"): unescaped.append(0x08)
            case UInt8(ascii: "f"): unescaped.append(0x0C)
            case UInt8(ascii: "n"): unescaped.append(0x0A)
            case UInt8(ascii: "r"): unescaped.append(0x0D)
            case UInt8(ascii: "t"): unescaped.append(0x09)
            case UInt8(ascii: "u"):
                let scalar = try parseUnicodeEscape()
                if scalar.value >= 0x80 { highBits |= 0x80 }
                UTF8.encode(scalar) { unescaped.append($0) }
            default: index -= 1; throw error("invalid escape")
            }
            try copyToQuoteOrEscape()
            if byte(at: index) == UInt8(ascii: "\"") {
                index += 1
                return Self.decode(unescaped.bytes, mayBeNonASCII: highBits & 0x8080_8080_8080_8080 != 0)
            }
        }
    }

    /// `scanToQuoteOrEscape`, copying the bytes it passes into `unescaped` as it goes: each word
    /// is stored whole before it is tested, and what lies past a stop byte is not kept. (Source
    /// code and command output have an escape every line; a `memcpy` call per run cost more.)
    @inline(__always) private mutating func copyToQuoteOrEscape() throws(JSONParseError) {
        var i = index
        var high: UInt64 = 0
        defer { highBits |= high }
        scan: while end - i >= 8 {
            // Blocks of up to 4 KiB: room reserved once, then a loop on plain local pointers.
            let block = min(end - i, 4096) & ~7
            let out = unescaped.reserveTail(block)
            var o = 0
            while o < block {
                let w = UnsafeRawPointer(base + i + o).loadUnaligned(as: UInt64.self)
                UnsafeMutableRawPointer(out + o).storeBytes(of: w, as: UInt64.self)
                let word = UInt64(littleEndian: w)
                high |= word
                let hits = Self.stopBytes(word)
                if hits != 0 {
                    let kept = o + hits.trailingZeroBitCount >> 3
                    unescaped.commit(kept)
                    i += kept
                    break scan
                }
                o += 8
            }
            unescaped.commit(block)
            i += block
        }
        while i < end {
            let c = byte(at: i)
            high |= UInt64(c) << 7 & 0x80
            if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { index = i; return }
            if c < 0x20 { index = i; throw error("control character in string") }
            unescaped.append(c)
            i += 1
        }
        index = end
        throw error("unterminated string")
    }

    /// `String(decoding: bytes, as: UTF8.self)`: the same string, ill-formed bytes repaired the same
    /// way, but built faster when it is long and not all ASCII.
    ///
    /// The standard library checks a buffer eight bytes at a time only while it is all ASCII; from
    /// the first other byte on it validates byte by byte (~10 instructions a byte, a third of a
    /// parse). So a long string is decoded in pieces: runs of 256 or more ASCII bytes through that
    /// fast path, what lies between them through the full validation, appended into one string of
    /// the right capacity. (An append costs some 300 instructions: shorter runs do not pay for
    /// theirs; 128 and 256 measured best.) Splitting next to an ASCII byte cannot change the
    /// result: an ASCII byte is never part of a multi-byte sequence, and it ends any ill-formed
    /// one before it.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, mayBeNonASCII: Bool) -> String {
        let n = bytes.count
        guard mayBeNonASCII, n >= 256, let base = bytes.baseAddress else { return String(decoding: bytes, as: UTF8.self) }
        @inline(__always) func isASCIIWord(_ i: Int) -> Bool {
            UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0
        }
        @inline(__always) func piece(_ range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(start: base + range.lowerBound, count: range.count), as: UTF8.self)
        }
        var result: String?
        var pending = 0  // start of the bytes not yet in `result`
        var i = 0
        while n - i >= 8 {
            guard isASCIIWord(i) else { i += 8; continue }
            let run = i
            repeat { i += 8 } while n - i >= 8 && isASCIIWord(i)
            guard i - run >= 256 else { continue }
            if result == nil {
                result = String()
                result!.reserveCapacity(n)
            }
            if run > pending { result!.append(piece(pending..<run)) }
            result!.append(piece(run..<i))
            pending = i
        }
        guard var result else { return String(decoding: bytes, as: UTF8.self) }
        if pending < n { result.append(piece(pending..<n)) }
        return result
    }

    /// Moves `index` to the next `"` or `\` inside a string; a control character or the end of
    /// the input first is an error.
    ///
    /// Eight bytes at a time (SWAR): for a word `w`, `(x - 0x01…) & ~x & 0x80…` flags the zero
    /// bytes of `x`, so `x = w ^ 0x22…` finds quotes, `x = w ^ 0x5C…` backslashes, and
    /// `(w - 0x20…) & ~w & 0x80…` bytes below 0x20. A borrow can flag a byte above a real hit, never
    /// below one, so the lowest flag is exact; the byte loop then decides what it found.
    @inlinable @inline(__always) mutating func scanToQuoteOrEscape() throws(JSONParseError) {
        var i = index
        var high: UInt64 = 0
        defer { highBits |= high }
        while end - i >= 8 {
            let w = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
            high |= w
            let hits = Self.stopBytes(w)
            if hits != 0 {
                i += hits.trailingZeroBitCount >> 3
                break
            }
            i += 8
        }
        while i < end {
            let c = byte(at: i)
            high |= UInt64(c) << 7 & 0x80  // bit 7 of the word's lowest byte, as for whole words
            if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { index = i; return }
            if c < 0x20 { index = i; throw error("control character in string") }
            i += 1
        }
        index = end
        throw error("unterminated string")
    }

    /// Reads the hex digits after `\u`, joining a surrogate pair; a lone surrogate becomes U+FFFD.
    private mutating func parseUnicodeEscape() throws(JSONParseError) -> Unicode.Scalar {
        let high = try parseHex4()
        if (0xD800...0xDBFF).contains(high) {
            if end - index >= 6, byte(at: index) == UInt8(ascii: "\\"), byte(at: index + 1) == UInt8(ascii: "u") {
                let saved = index
                index += 2
                let low = try parseHex4()
                if (0xDC00...0xDFFF).contains(low) {
                    return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
                }
                index = saved
            }
            return "\u{FFFD}"
        }
        return Unicode.Scalar(high) ?? "\u{FFFD}"
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard end - index >= 4 else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = byte(at: index)
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    @usableFromInline mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var negative = false
        if byte(at: index) == UInt8(ascii: "-") { negative = true; index += 1 }
        guard index < end, isDigit(byte(at: index)) else { throw error("invalid number") }
        var magnitude: UInt64 = 0
        var overflow = false
        if byte(at: index) == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < end, isDigit(byte(at: index)) {
                let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (m2, o2) = m1.addingReportingOverflow(UInt64(byte(at: index) - UInt8(ascii: "0")))
                magnitude = m2
                overflow = overflow || o1 || o2
                index += 1
            }
        }
        var isInteger = true
        if index < end, byte(at: index) == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < end, isDigit(byte(at: index)) else { throw error("digits expected after '.'") }
            while index < end, isDigit(byte(at: index)) { index += 1 }
        }
        if index < end, byte(at: index) | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            index += 1
            if index < end, byte(at: index) == UInt8(ascii: "+") || byte(at: index) == UInt8(ascii: "-") { index += 1 }
            guard index < end, isDigit(byte(at: index)) else { throw error("digits expected in exponent") }
            while index < end, isDigit(byte(at: index)) { index += 1 }
        }
        if isInteger, !overflow {
            if !negative, magnitude <= UInt64(Int64.max) { return .int(Int64(magnitude)) }
            if negative, magnitude <= UInt64(Int64.max) + 1 { return .int(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)) }
        }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
        guard let double = Double(text) else { throw JSONParseError(offset: start, message: "number out of range") }
        return .double(double)
    }

    @inline(__always) private func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
}
