import NucleicProtocol

/// Escapes a line's bytes into the body of a JSON string, fed in pieces of any size.
///
/// Valid UTF-8 is kept as it is (like Python's `json.dumps(..., ensure_ascii=False)`); `"`, `\`
/// and control characters are escaped. A byte that is not part of valid UTF-8 becomes
/// `\udcXX` (XX the byte), the lone low surrogate Python's `surrogateescape` uses (PEP 383):
/// `json.loads(text).encode("utf-8", "surrogateescape")` gives back the exact bytes, and so does
/// `RawRecordCodec.decode`. A valid line never produces such an escape (valid UTF-8 has no
/// surrogates), so the mapping is exact both ways. Readers that decode to Unicode strings
/// (`JSONParser`, Swift's `String`) see U+FFFD there, as they would for the raw bytes.
///
/// A multi-byte sequence split between two pieces is carried over (at most 3 bytes).
struct LineEscaper {
    private var pending: [UInt8] = []
    /// Continuation bytes the pending sequence still needs.
    private var needed = 0
    /// The range the next continuation byte must be in (narrower after E0, ED, F0, F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    private static let hex = Array("0123456789abcdef".utf8)

    mutating func escape(_ input: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        let n = input.count
        var i = 0
        while i < n {
            let b = input[i]
            if needed > 0 {
                guard b >= lower, b <= upper else {
                    flushPendingAsInvalid(into: &out)  // then look at `b` again as a lead byte
                    continue
                }
                pending.append(b)
                needed -= 1
                lower = 0x80
                upper = 0xBF
                if needed == 0 {
                    out.append(contentsOf: pending)
                    pending.removeAll(keepingCapacity: true)
                }
                i += 1
                continue
            }
            if b < 0x80 {
                // A run of ASCII that needs no escape goes over in one copy.
                var j = i
                while j < n {
                    let c = input[j]
                    if c < 0x20 || c >= 0x80 || c == 0x22 || c == 0x5C { break }
                    j += 1
                }
                if j > i {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: input[i..<j]))
                    i = j
                    continue
                }
                JSONWriter.escape(b, into: &out)
                i += 1
                continue
            }
            switch b {
            case 0xC2...0xDF: begin(b, needed: 1, lower: 0x80, upper: 0xBF)
            case 0xE0: begin(b, needed: 2, lower: 0xA0, upper: 0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: begin(b, needed: 2, lower: 0x80, upper: 0xBF)
            case 0xED: begin(b, needed: 2, lower: 0x80, upper: 0x9F)  // not the surrogates D800–DFFF
            case 0xF0: begin(b, needed: 3, lower: 0x90, upper: 0xBF)
            case 0xF1...0xF3: begin(b, needed: 3, lower: 0x80, upper: 0xBF)
            case 0xF4: begin(b, needed: 3, lower: 0x80, upper: 0x8F)  // not above U+10FFFF
            default: Self.escapeInvalid(b, into: &out)  // 80–C1, F5–FF
            }
            i += 1
        }
    }

    /// The line ended: a sequence still incomplete is invalid.
    mutating func finish(into out: inout [UInt8]) {
        if needed > 0 { flushPendingAsInvalid(into: &out) }
    }

    private mutating func begin(_ b: UInt8, needed: Int, lower: UInt8, upper: UInt8) {
        pending.append(b)
        self.needed = needed
        self.lower = lower
        self.upper = upper
    }

    private mutating func flushPendingAsInvalid(into out: inout [UInt8]) {
        // Each byte alone: none of the bytes after the lead can start a sequence (they are
        // continuation bytes), so escaping them one by one is what a restart would do.
        for b in pending { Self.escapeInvalid(b, into: &out) }
        pending.removeAll(keepingCapacity: true)
        needed = 0
        lower = 0x80
        upper = 0xBF
    }

    static func escapeInvalid(_ b: UInt8, into out: inout [UInt8]) {
        out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "d"), UInt8(ascii: "c"), hex[Int(b >> 4)], hex[Int(b & 0xF)]])
    }
}

/// Reads one raw-journal record, `{"t":…,"dir":…,"line":"…"}`, decoding the line's JSON string
/// back to its exact bytes in place (the decoded bytes are never longer than their escaped form),
/// so a 64 MiB line is held once.
///
/// Keys may come in any order and unknown keys are skipped (fixtures written by other tools);
/// `t` absent means 0. A `\udc80`–`\udcff` escape is the byte 80–FF (see `LineEscaper`); another
/// lone surrogate becomes U+FFFD.
enum RawRecordCodec {
    struct Failure: Error { let offset: Int; let message: String }

    static func recordPrefix(t: Double, direction: RawJournal.Direction) -> [UInt8] {
        var out: [UInt8] = Array(#"{"t":"#.utf8)
        let seconds = t.isFinite && t >= 0 ? t : 0
        out.append(contentsOf: seconds.description.utf8)
        out.append(contentsOf: #","dir":""#.utf8)
        out.append(contentsOf: direction.rawValue.utf8)
        out.append(contentsOf: #"","line":""#.utf8)
        return out
    }

    static let recordSuffix: [UInt8] = Array("\"}\n".utf8)

    /// Decodes `bytes` (one record line without its newline) and returns the record; `bytes`
    /// is consumed: it becomes the line.
    static func decode(_ bytes: inout [UInt8], offset: Int64) throws(Failure) -> RawRecord {
        var t: Double = 0
        var direction: RawJournal.Direction?
        var lineLength: Int?
        try bytes.withUnsafeMutableBufferPointer { (p: inout UnsafeMutableBufferPointer<UInt8>) throws(Failure) in
            var parser = Parser(p: p)
            parser.skipWhitespace()
            try parser.expect(UInt8(ascii: "{"))
            parser.skipWhitespace()
            if parser.peek() == UInt8(ascii: "}") { parser.i += 1 } else {
                while true {
                    parser.skipWhitespace()
                    let key = try parser.smallString()
                    parser.skipWhitespace()
                    try parser.expect(UInt8(ascii: ":"))
                    parser.skipWhitespace()
                    switch key {
                    case "line":
                        guard lineLength == nil else { throw parser.fail("\"line\" appears twice") }
                        lineLength = try parser.decodeStringToFront()
                    case "t":
                        t = try parser.number()
                    case "dir":
                        let raw = try parser.smallString()
                        guard let d = RawJournal.Direction(rawValue: raw) else { throw parser.fail("\"dir\" is \"\(raw)\", not in, out or err") }
                        direction = d
                    default:
                        try parser.skipValue(depth: 0)
                    }
                    parser.skipWhitespace()
                    let c = try parser.take()
                    if c == UInt8(ascii: ",") { continue }
                    if c == UInt8(ascii: "}") { break }
                    throw parser.fail("expected , or }")
                }
            }
            parser.skipWhitespace()
            guard parser.i == p.count else { throw parser.fail("trailing characters after the record") }
        }
        guard let direction else { throw Failure(offset: 0, message: "no \"dir\"") }
        guard let lineLength else { throw Failure(offset: 0, message: "no \"line\"") }
        bytes.removeSubrange(lineLength...)
        return RawRecord(offset: offset, t: t, direction: direction, line: bytes)
    }

    private struct Parser {
        let p: UnsafeMutableBufferPointer<UInt8>
        var i = 0

        func fail(_ message: String) -> Failure { Failure(offset: i, message: message) }
        func peek() -> UInt8? { i < p.count ? p[i] : nil }

        mutating func take() throws(Failure) -> UInt8 {
            guard i < p.count else { throw fail("unexpected end of the record") }
            defer { i += 1 }
            return p[i]
        }

        mutating func expect(_ c: UInt8) throws(Failure) {
            guard try take() == c else { i -= 1; throw fail("expected \(Character(Unicode.Scalar(c)))") }
        }

        mutating func skipWhitespace() {
            while i < p.count, p[i] == 0x20 || p[i] == 0x09 || p[i] == 0x0A || p[i] == 0x0D { i += 1 }
        }

        /// A short string (a key, `dir`), decoded into a new String.
        mutating func smallString() throws(Failure) -> String {
            try expect(UInt8(ascii: "\""))
            var out: [UInt8] = []
            try decodeStringBody { out.append($0) }
            return String(decoding: out, as: UTF8.self)
        }

        /// Decodes the string starting here into `p[0...]` and returns its length. Safe in
        /// place: every escape is at least as long as what it decodes to, and everything before
        /// this value has been read already.
        mutating func decodeStringToFront() throws(Failure) -> Int {
            try expect(UInt8(ascii: "\""))
            var w = 0
            let base = p.baseAddress!
            try decodeStringBody { base[w] = $0; w += 1 }
            return w
        }

        private mutating func decodeStringBody(_ emit: (UInt8) -> Void) throws(Failure) {
            while true {
                guard i < p.count else { throw fail("unterminated string") }
                let c = p[i]
                i += 1
                switch c {
                case UInt8(ascii: "\""): return
                case UInt8(ascii: "\\"):
                    let e = try take()
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): emit(e)
                    case UInt8(ascii: "b"): emit(0x08)
                    case UInt8(ascii: "f"): emit(0x0C)
                    case UInt8(ascii: "n"): emit(0x0A)
                    case UInt8(ascii: "r"): emit(0x0D)
                    case UInt8(ascii: "t"): emit(0x09)
                    case UInt8(ascii: "u"): try unicodeEscape(emit)
                    default: i -= 1; throw fail("invalid escape")
                    }
                case 0..<0x20: i -= 1; throw fail("control character in a string")
                default: emit(c)
                }
            }
        }

        private mutating func hex4() throws(Failure) -> UInt32 {
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = try take()
                let d: UInt32
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
                default: i -= 1; throw fail("invalid \\u escape")
                }
                v = v << 4 | d
            }
            return v
        }

        private mutating func unicodeEscape(_ emit: (UInt8) -> Void) throws(Failure) {
            var code = try hex4()
            if (0xD800...0xDBFF).contains(code), i + 6 <= p.count, p[i] == UInt8(ascii: "\\"), p[i + 1] == UInt8(ascii: "u") {
                let saved = i
                i += 2
                let low = try hex4()
                if (0xDC00...0xDFFF).contains(low) {
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    i = saved  // a lone high surrogate; the next escape stands alone
                }
            }
            if (0xDC80...0xDCFF).contains(code) {
                emit(UInt8(code - 0xDC00))  // an escaped invalid byte
                return
            }
            if (0xD800...0xDFFF).contains(code) { code = 0xFFFD }
            for b in String(Character(Unicode.Scalar(code)!)).utf8 { emit(b) }
        }

        mutating func number() throws(Failure) -> Double {
            let start = i
            while i < p.count, let c = Optional(p[i]),
                (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-") || c == UInt8(ascii: "+")
                    || c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { i += 1 }
            let text = String(decoding: UnsafeBufferPointer(rebasing: p[start..<i]), as: UTF8.self)
            guard let value = Double(text), value.isFinite else { i = start; throw fail("invalid number") }
            return value
        }

        mutating func skipValue(depth: Int) throws(Failure) {
            guard depth < 256 else { throw fail("nesting too deep") }
            guard let c = peek() else { throw fail("unexpected end of the record") }
            switch c {
            case UInt8(ascii: "\""):
                i += 1
                try decodeStringBody { _ in }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let close = c == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                i += 1
                skipWhitespace()
                if peek() == close { i += 1; return }
                while true {
                    skipWhitespace()
                    if close == UInt8(ascii: "}") {
                        _ = try smallString()
                        skipWhitespace()
                        try expect(UInt8(ascii: ":"))
                        skipWhitespace()
                    }
                    try skipValue(depth: depth + 1)
                    skipWhitespace()
                    let n = try take()
                    if n == UInt8(ascii: ",") { continue }
                    if n == close { return }
                    throw fail("expected , or \(Character(Unicode.Scalar(close)))")
                }
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                while i < p.count, p[i] >= UInt8(ascii: "a"), p[i] <= UInt8(ascii: "z") { i += 1 }
            default:
                _ = try number()
            }
        }
    }
}
