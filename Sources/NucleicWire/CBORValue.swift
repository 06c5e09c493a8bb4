/// One CBOR data item (RFC 8949), in the subset Nucleic's wire protocol uses (docs/CBOR.md).
///
/// Integers are stored the way CBOR stores them, as a major type and a 64-bit argument, so the
/// whole range −2^64 … 2^64−1 is representable and each integer has exactly one representation:
/// `.unsigned(n)` is n, `.negative(n)` is −1 − n (so `.negative(0)` is −1 and
/// `.negative(UInt64.max)` is −2^64). Build integers with `CBORValue(_: Int64)` or an integer
/// literal and read them with `int64Value` / `uint64Value` / `integerValue`.
///
/// Floats keep no width: a half, single or double on the wire all decode to `.float(Double)`,
/// and the encoder writes the shortest width that holds the value exactly.
///
/// ### Invariants
/// - Equality is equality of encodings: floats compare by bit pattern (so `0.0 != -0.0`), except
///   that every NaN equals every other NaN (all NaNs are written as the one canonical NaN). Maps
///   compare entry by entry in order.
/// - A decoded map never has two equal keys; a map built in code may (`CBORMap.append` does not
///   check), and then no conforming decoder, ours included, will accept its encoding.
public enum CBORValue: Sendable {
    /// Major type 0: a non-negative integer.
    case unsigned(UInt64)
    /// Major type 1: the integer −1 − n.
    case negative(UInt64)
    /// Major type 2: a byte string.
    case bytes([UInt8])
    /// Major type 3: a text string (valid UTF-8 on the wire).
    case text(String)
    /// Major type 4: an array.
    case array([CBORValue])
    /// Major type 5: a map, entries in wire order.
    case map(CBORMap)
    /// Major type 6: a tag number and its content, kept uninterpreted (docs/CBOR.md, "Tags").
    // Only this case is indirect: arrays and maps already live on the heap, and boxing every
    // integer would cost an allocation per decoded item.
    indirect case tagged(UInt64, CBORValue)
    /// Major type 7: false (0xf4) and true (0xf5).
    case bool(Bool)
    /// Major type 7: null (0xf6).
    case null
    /// Major type 7: undefined (0xf7). Nucleic never sends it; it is kept so that a decoded
    /// value re-encodes as it came, and becomes JSON null.
    case undefined
    /// Major type 7: a floating-point number (half, single or double on the wire).
    case float(Double)
}

extension CBORValue {
    /// The integer `value`.
    public init(_ value: Int64) {
        self = value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(bitPattern: ~value))
    }

    /// The integer `value`.
    public init(_ value: Int) { self.init(Int64(value)) }

    /// The integer `value`.
    public init(_ value: UInt64) { self = .unsigned(value) }

    /// The integer `value`, or nil outside −2^64 … 2^64−1.
    public init?(exactly value: Int128) {
        if value >= 0 {
            guard let n = UInt64(exactly: value) else { return nil }
            self = .unsigned(n)
        } else {
            guard let n = UInt64(exactly: -1 - value) else { return nil }
            self = .negative(n)
        }
    }

    /// The integer as an `Int128` (every CBOR integer fits).
    public var integerValue: Int128? {
        switch self {
        case .unsigned(let n): return Int128(n)
        case .negative(let n): return -1 - Int128(n)
        default: return nil
        }
    }
}

/// A CBOR map: entries in order, keys of any type. Lookups scan; protocol maps are small.
public struct CBORMap: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public struct Entry: Sendable, Hashable {
        public var key: CBORValue
        public var value: CBORValue
        public init(_ key: CBORValue, _ value: CBORValue) { self.key = key; self.value = value }
    }

    public private(set) var entries: [Entry]

    public init() { entries = [] }
    public init(_ entries: [Entry]) { self.entries = entries }
    public init(dictionaryLiteral elements: (CBORValue, CBORValue)...) {
        entries = elements.map { Entry($0.0, $0.1) }
    }

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }
    public var keys: [CBORValue] { entries.map(\.key) }

    /// The value for `key`; setting `nil` removes it, setting a new key appends it.
    public subscript(key: CBORValue) -> CBORValue? {
        get { entries.first(where: { $0.key == key })?.value }
        set {
            if let index = entries.firstIndex(where: { $0.key == key }) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append(Entry(key, newValue))
            }
        }
    }

    /// The value for the text key `key` (the protocol's field names).
    public subscript(key: String) -> CBORValue? {
        get {
            for entry in entries {
                if case .text(let k) = entry.key, k == key { return entry.value }
            }
            return nil
        }
        set { self[.text(key)] = newValue }
    }

    /// Appends without checking for an existing key (the decoder checks; builders should not
    /// repeat a key).
    public mutating func append(_ key: CBORValue, _ value: CBORValue) { entries.append(Entry(key, value)) }

    /// Appends only when `value` is not nil: optional fields are omitted, not written as null.
    public mutating func append(_ key: String, ifPresent value: CBORValue?) {
        if let value { entries.append(Entry(.text(key), value)) }
    }

    public mutating func reserveCapacity(_ n: Int) { entries.reserveCapacity(n) }

    public func makeIterator() -> IndexingIterator<[Entry]> { entries.makeIterator() }
}

extension CBORValue: Hashable {
    public static func == (lhs: CBORValue, rhs: CBORValue) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)): return a == b
        case (.negative(let a), .negative(let b)): return a == b
        case (.bytes(let a), .bytes(let b)): return a == b
        case (.text(let a), .text(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.map(let a), .map(let b)): return a == b
        case (.tagged(let t, let a), .tagged(let u, let b)): return t == u && a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null), (.undefined, .undefined): return true
        case (.float(let a), .float(let b)): return a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .unsigned(let n): hasher.combine(0); hasher.combine(n)
        case .negative(let n): hasher.combine(1); hasher.combine(n)
        case .bytes(let b): hasher.combine(2); hasher.combine(b)
        case .text(let s): hasher.combine(3); hasher.combine(s)
        case .array(let a): hasher.combine(4); hasher.combine(a)
        case .map(let m): hasher.combine(5); hasher.combine(m)
        case .tagged(let t, let v): hasher.combine(6); hasher.combine(t); hasher.combine(v)
        case .bool(let b): hasher.combine(7); hasher.combine(b)
        case .null: hasher.combine(8)
        case .undefined: hasher.combine(9)
        case .float(let d): hasher.combine(10); hasher.combine(d.isNaN ? Double.nan.bitPattern : d.bitPattern)
        }
    }
}

extension CBORValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self.init(value) }
    public init(floatLiteral value: Double) { self = .float(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(arrayLiteral elements: CBORValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (CBORValue, CBORValue)...) {
        self = .map(CBORMap(elements.map { CBORMap.Entry($0.0, $0.1) }))
    }
}
