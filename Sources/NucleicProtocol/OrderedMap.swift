/// Key/value entries kept in the order they were added: a JSON object (``JSONObject``) and a
/// CBOR map (`CBORMap`) are both this, so that a value survives a round trip with its keys in
/// order. Lookups scan; protocol and agent objects are small.
///
/// The members are `@inlinable` so that the CBOR decoder and encoder, in another module, get
/// them specialized as the JSON parser in this one does.
public struct OrderedMap<Key: Sendable & Hashable, Value: Sendable & Hashable>: Sendable, Hashable, Sequence,
    ExpressibleByDictionaryLiteral
{
    public struct Entry: Sendable, Hashable {
        public var key: Key
        public var value: Value
        @inlinable public init(_ key: Key, _ value: Value) { self.key = key; self.value = value }
    }

    @usableFromInline var storage: [Entry]

    /// The entries in order.
    @inlinable public var entries: [Entry] { storage }

    @inlinable public init() { storage = [] }
    @inlinable public init(_ entries: [Entry]) { storage = entries }
    @inlinable public init(dictionaryLiteral elements: (Key, Value)...) {
        storage = elements.map { Entry($0.0, $0.1) }
    }

    @inlinable public var isEmpty: Bool { storage.isEmpty }
    @inlinable public var count: Int { storage.count }
    @inlinable public var keys: [Key] { storage.map(\.key) }

    /// The value for `key`; setting `nil` removes it, setting a new key appends it.
    @inlinable public subscript(key: Key) -> Value? {
        get { storage.first(where: { $0.key == key })?.value }
        set {
            if let index = storage.firstIndex(where: { $0.key == key }) {
                if let newValue { storage[index].value = newValue } else { storage.remove(at: index) }
            } else if let newValue {
                storage.append(Entry(key, newValue))
            }
        }
    }

    /// Appends without checking for an existing key (the decoders' fast path; builders should
    /// not repeat a key).
    @inlinable public mutating func append(_ key: Key, _ value: Value) { storage.append(Entry(key, value)) }

    /// Appends only when `value` is not nil: optional fields are omitted, not written as null.
    @inlinable public mutating func append(_ key: Key, ifPresent value: Value?) {
        if let value { storage.append(Entry(key, value)) }
    }

    @inlinable public mutating func reserveCapacity(_ n: Int) { storage.reserveCapacity(n) }

    @inlinable public func makeIterator() -> IndexingIterator<[Entry]> { storage.makeIterator() }
}
