/// A JSON value that keeps object key order and integer exactness.
///
/// Agents' tool inputs pass through Nucleic and go back to the agent (Claude's `updatedInput`),
/// so a value must survive a round trip: keys keep their order, integers stay integers.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON object: ordered key/value entries. Lookups scan; agent objects are small.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public struct Entry: Sendable, Hashable {
        public var key: String
        public var value: JSONValue
        public init(_ key: String, _ value: JSONValue) { self.key = key; self.value = value }
    }

    public private(set) var entries: [Entry]

    public init() { entries = [] }
    public init(_ entries: [Entry]) { self.entries = entries }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        entries = elements.map { Entry($0.0, $0.1) }
    }

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }
    public var keys: [String] { entries.map(\.key) }

    /// The value for `key`; setting `nil` removes it, setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get { entries.first(where: { $0.key == key })?.value }
        set {
            if let index = entries.firstIndex(where: { $0.key == key }) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append(Entry(key, newValue))
            }
        }
    }

    /// Appends without checking for an existing key (the parser's and encoders' fast path).
    public mutating func append(_ key: String, _ value: JSONValue) { entries.append(Entry(key, value)) }

    /// Appends only when `value` is not nil: optional fields are omitted, not written as null.
    public mutating func append(_ key: String, ifPresent value: JSONValue?) {
        if let value { entries.append(Entry(key, value)) }
    }

    public func makeIterator() -> IndexingIterator<[Entry]> { entries.makeIterator() }
}

extension JSONValue {
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public subscript(index: Int) -> JSONValue? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    public var objectValue: JSONObject? { if case .object(let o) = self { return o }; return nil }
    public var isNull: Bool { if case .null = self { return true }; return false }

    /// The value as an integer when it is one exactly (`3` and `3.0`, not `3.5`).
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }

    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The text of a string, or the compact JSON of anything else (for previews and messages).
    public var textOrJSON: String {
        if case .string(let s) = self { return s }
        return JSONWriter.string(self)
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { JSONObject.Entry($0.0, $0.1) }))
    }
}

extension JSONValue: CustomStringConvertible {
    public var description: String { JSONWriter.string(self) }
}
