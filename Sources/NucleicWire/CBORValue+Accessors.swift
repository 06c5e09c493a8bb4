public import NucleicProtocol

/// Reading values: typed getters that return nil for any other type, and lookups by field name.
extension CBORValue {
    /// The value under the text key `key` when this is a map.
    public subscript(key: String) -> CBORValue? {
        if case .map(let map) = self { return map[key] }
        return nil
    }

    /// The element at `index` when this is an array that has one.
    public subscript(index: Int) -> CBORValue? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    /// A message's `"type"` field (DESIGN.md §5), when this is a map that has a text one.
    public var messageType: String? { self["type"]?.textValue }

    public var textValue: String? { if case .text(let s) = self { return s }; return nil }
    public var bytesValue: [UInt8]? { if case .bytes(let b) = self { return b }; return nil }
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var arrayValue: [CBORValue]? { if case .array(let a) = self { return a }; return nil }
    public var mapValue: CBORMap? { if case .map(let m) = self { return m }; return nil }
    public var isNull: Bool { if case .null = self { return true }; return false }

    /// Null or undefined: what a field reader treats as "absent".
    public var isNullOrUndefined: Bool {
        switch self {
        case .null, .undefined: return true
        default: return false
        }
    }

    /// The integer when it fits an `Int64`.
    public var int64Value: Int64? {
        switch self {
        case .unsigned(let n): return Int64(exactly: n)
        case .negative(let n): return n <= UInt64(Int64.max) ? ~Int64(n) : nil
        default: return nil
        }
    }

    /// The integer when it is non-negative (every one fits a `UInt64`).
    public var uint64Value: UInt64? { if case .unsigned(let n) = self { return n }; return nil }

    /// A float, or an integer converted to the nearest double (numbers in JSON terms).
    public var doubleValue: Double? {
        switch self {
        case .float(let d): return d
        case .unsigned(let n): return Double(n)
        case .negative(let n): return -1 - Double(n)
        default: return nil
        }
    }

    /// The tag number and content when this is a tag.
    public var taggedValue: (tag: UInt64, value: CBORValue)? {
        if case .tagged(let tag, let value) = self { return (tag, value) }
        return nil
    }

    /// A short name of the value's type for error messages ("a text string", "a map").
    public var kindDescription: String {
        switch self {
        case .unsigned, .negative: return "an integer"
        case .bytes: return "a byte string"
        case .text: return "a text string"
        case .array: return "an array"
        case .map: return "a map"
        case .tagged(let tag, _): return "a value with tag \(tag)"
        case .bool: return "a boolean"
        case .null: return "null"
        case .undefined: return "undefined"
        case .float: return "a float"
        }
    }
}

/// Typed reads of a message map's fields with errors that name the field (the CBOR counterpart
/// of NucleicProtocol's `Fields`). A field that is null or undefined counts as absent, so a
/// client may write optional fields as null instead of omitting them.
public struct CBORFields: Sendable {
    public let map: CBORMap
    let context: String

    /// `context` names the message in errors, e.g. `"subscribe"`.
    public init(_ value: CBORValue, _ context: String) throws(ShapeError) {
        guard case .map(let map) = value else { throw ShapeError("\(context): expected a map, got \(value.kindDescription)") }
        self.map = map
        self.context = context
    }

    public subscript(key: String) -> CBORValue? {
        if let value = map[key], !value.isNullOrUndefined { return value }
        return nil
    }

    public func value(_ key: String) throws(ShapeError) -> CBORValue {
        guard let value = self[key] else { throw ShapeError("\(context): missing \"\(key)\"") }
        return value
    }

    public func text(_ key: String) throws(ShapeError) -> String {
        try typed(key, "a text string", value(key).textValue)
    }

    public func optionalText(_ key: String) throws(ShapeError) -> String? {
        guard let v = self[key] else { return nil }
        return try typed(key, "a text string", v.textValue)
    }

    public func bool(_ key: String, default fallback: Bool? = nil) throws(ShapeError) -> Bool {
        guard let v = self[key] else {
            if let fallback { return fallback }
            throw ShapeError("\(context): missing \"\(key)\"")
        }
        return try typed(key, "a boolean", v.boolValue)
    }

    public func int64(_ key: String) throws(ShapeError) -> Int64 {
        try typed(key, "an integer in the Int64 range", value(key).int64Value)
    }

    public func uint64(_ key: String) throws(ShapeError) -> UInt64 {
        try typed(key, "a non-negative integer", value(key).uint64Value)
    }

    public func optionalUInt64(_ key: String) throws(ShapeError) -> UInt64? {
        guard let v = self[key] else { return nil }
        return try typed(key, "a non-negative integer", v.uint64Value)
    }

    public func bytes(_ key: String) throws(ShapeError) -> [UInt8] {
        try typed(key, "a byte string", value(key).bytesValue)
    }

    public func array(_ key: String) throws(ShapeError) -> [CBORValue] {
        try typed(key, "an array", value(key).arrayValue)
    }

    /// The field converted to JSON (tool inputs, decisions); see `JSONValue.init(cbor:)`.
    public func json(_ key: String) throws(ShapeError) -> JSONValue {
        let field = try value(key)
        do throws(CBORError) {
            return try JSONValue(cbor: field)
        } catch {
            throw ShapeError("\(context): \"\(key)\": \(error.message)")
        }
    }

    private func typed<T>(_ key: String, _ expected: String, _ value: T?) throws(ShapeError) -> T {
        guard let value else {
            throw ShapeError("\(context): \"\(key)\" must be \(expected), got \(map[key]?.kindDescription ?? "nothing")")
        }
        return value
    }
}

extension CBORValue: CustomStringConvertible {
    /// RFC 8949 §8 diagnostic notation, e.g. `{"type": "ping", "n": 1, "b": h'00ff', "f": 1.5}`.
    public var description: String {
        var out = ""
        writeDiagnostic(into: &out)
        return out
    }

    private func writeDiagnostic(into out: inout String) {
        switch self {
        case .unsigned(let n): out += String(n)
        case .negative(let n): out += String(-1 - Int128(n))
        case .bytes(let b):
            out += "h'"
            for byte in b { out += byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }
            out += "'"
        case .text(let s): out += JSONWriter.string(.string(s))
        case .array(let a):
            out += "["
            for (i, element) in a.enumerated() {
                if i > 0 { out += ", " }
                element.writeDiagnostic(into: &out)
            }
            out += "]"
        case .map(let m):
            out += "{"
            for (i, entry) in m.entries.enumerated() {
                if i > 0 { out += ", " }
                entry.key.writeDiagnostic(into: &out)
                out += ": "
                entry.value.writeDiagnostic(into: &out)
            }
            out += "}"
        case .tagged(let tag, let value):
            out += "\(tag)("
            value.writeDiagnostic(into: &out)
            out += ")"
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        case .undefined: out += "undefined"
        case .float(let d):
            if d.isNaN { out += "NaN" } else if d.isInfinite { out += d < 0 ? "-Infinity" : "Infinity" } else { out += d.description }
        }
    }
}
