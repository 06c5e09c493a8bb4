/// Why a text is not the JSON it should be; `offset` is the byte where reading stopped.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public let offset: Int
    public let message: String
    public var description: String { "invalid JSON at byte \(offset): \(message)" }
}

/// A byte-level JSON parser (RFC 8259) for the ingest hot path.
///
/// DESIGN.md §7: `JSONSerialization` reads agent streams at 0.4× Python's `json.loads`, so agent
/// lines are parsed here straight from UTF-8 bytes. Strings without escapes are decoded in one
/// step; nesting is limited so hostile input cannot exhaust the stack.
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

    private let base: UnsafePointer<UInt8>?
    private let end: Int
    private var index = 0

    private init(_ buffer: UnsafeBufferPointer<UInt8>) {
        base = buffer.baseAddress
        end = buffer.count
    }

    private func error(_ message: String) -> JSONParseError { JSONParseError(offset: index, message: message) }

    @inline(__always) private func byte(at i: Int) -> UInt8 { base![i] }

    @inline(__always) private mutating func skipWhitespace() {
        while index < end {
            switch byte(at: index) {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
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

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard end - index >= count else { throw error("unexpected end of input") }
        let bytes = literal.utf8Start
        for i in 0..<count where byte(at: index + i) != bytes[i] { throw error("invalid literal") }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONObject {
        guard depth <= Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth)") }
        index += 1  // {
        var entries: [JSONObject.Entry] = []
        skipWhitespace()
        if index < end, byte(at: index) == UInt8(ascii: "}") { index += 1; return JSONObject(entries) }
        while true {
            skipWhitespace()
            guard index < end, byte(at: index) == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard index < end, byte(at: index) == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            entries.append(JSONObject.Entry(key, value))
            skipWhitespace()
            guard index < end else { throw error("unexpected end of input in object") }
            let c = byte(at: index)
            index += 1
            if c == UInt8(ascii: ",") { continue }
            if c == UInt8(ascii: "}") { return JSONObject(entries) }
            index -= 1
            throw error("expected ',' or '}'")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> [JSONValue] {
        guard depth <= Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth)") }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < end, byte(at: index) == UInt8(ascii: "]") { index += 1; return elements }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < end else { throw error("unexpected end of input in array") }
            let c = byte(at: index)
            index += 1
            if c == UInt8(ascii: ",") { continue }
            if c == UInt8(ascii: "]") { return elements }
            index -= 1
            throw error("expected ',' or ']'")
        }
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes. Scan to the closing quote.
        while index < end {
            let c = byte(at: index)
            if c == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(start: base! + start, count: index - start), as: UTF8.self)
                index += 1
                return text
            }
            if c == UInt8(ascii: "\\") { break }
            if c < 0x20 { throw error("control character in string") }
            index += 1
        }
        guard index < end else { throw error("unterminated string") }
        // Slow path: copy what we have, then decode escapes.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(index - start + 16)
        bytes.append(contentsOf: UnsafeBufferPointer(start: base! + start, count: index - start))
        while index < end {
            let c = byte(at: index)
            switch c {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: bytes, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < end else { throw error("unterminated escape") }
                let e = byte(at: index)
                index += 1
                switch e {
                case UInt8(ascii: "\""): bytes.append(0x22)
                case UInt8(ascii: "\\"): bytes.append(0x5C)
                case UInt8(ascii: "/"): bytes.append(0x2F)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"): appendScalar(try parseUnicodeEscape(), to: &bytes)
                default: index -= 1; throw error("invalid escape")
                }
            default:
                if c < 0x20 { throw error("control character in string") }
                bytes.append(c)
                index += 1
            }
        }
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

    private func appendScalar(_ scalar: Unicode.Scalar, to bytes: inout [UInt8]) {
        UTF8.encode(scalar) { bytes.append($0) }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
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
        let text = String(decoding: UnsafeBufferPointer(start: base! + start, count: index - start), as: UTF8.self)
        guard let double = Double(text) else { throw JSONParseError(offset: start, message: "number out of range") }
        return .double(double)
    }

    @inline(__always) private func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
}
