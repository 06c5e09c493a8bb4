/// Reads exactly one CBOR data item from a complete buffer (RFC 8949), within `Limits`.
///
/// Frames deliver whole messages, so there is no incremental mode: input that ends early is
/// `.truncated`, bytes after the item are `.trailingBytes`. What it accepts beyond what the
/// encoder writes (docs/CBOR.md): indefinite-length strings, arrays and maps (read into the
/// definite-length value), arguments not in their shortest form, floats of any width, any tag.
/// What it refuses: malformed items, text that is not UTF-8, maps with a repeated key, simple
/// values other than false/true/null/undefined, and anything over a limit.
///
/// ### Invariants
/// - Never traps and never reads outside the input, whatever the bytes.
/// - Allocates only in proportion to the input: a length is checked against the limits and
///   against the bytes that remain (every element takes at least one byte) before anything is
///   reserved, so a header claiming 2^60 elements fails at once.
/// - Recursion is bounded by `maxDepth` (arrays, maps and tags all count).
public struct CBORDecoder: Sendable {
    /// Bounds on what one decode accepts; exceeding one is a `CBORError` naming it.
    public struct Limits: Sendable, Hashable {
        /// Largest input in bytes: a reassembled message is at most 16 MiB (DESIGN.md §5).
        public var maxInputSize: Int
        /// Most arrays, maps and tags open inside one another. 128 leaves room for the message
        /// envelope around JSON payloads; keep it modest, as each level is a stack frame.
        public var maxDepth: Int
        /// Most elements of one array or entries of one map.
        public var maxContainerLength: Int
        /// Longest byte or text string, in bytes (an indefinite-length one after joining chunks).
        public var maxStringLength: Int
        /// Most data items in the whole input (map keys, values and tag contents each count);
        /// bounds the memory a small-item flood can take to a few hundred bytes per item.
        public var maxItems: Int

        public init(
            maxInputSize: Int = 16 << 20, maxDepth: Int = 128, maxContainerLength: Int = 1 << 20,
            maxStringLength: Int = 16 << 20, maxItems: Int = 1 << 21
        ) {
            self.maxInputSize = maxInputSize
            self.maxDepth = maxDepth
            self.maxContainerLength = maxContainerLength
            self.maxStringLength = maxStringLength
            self.maxItems = maxItems
        }

        public static let `default` = Limits()
    }

    public var limits: Limits

    public init(limits: Limits = .default) { self.limits = limits }

    /// Decodes the one data item that is all of `bytes`.
    public func decode(_ bytes: some Collection<UInt8>) throws(CBORError) -> CBORValue {
        // Checked here too, so an oversized non-contiguous input is refused before it is copied.
        guard bytes.count <= limits.maxInputSize else { throw Self.tooLarge(bytes.count, limits) }
        let result: Result<CBORValue, CBORError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(CBORError) -> CBORValue in try decode(buffer: buffer) }
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer throws(CBORError) -> CBORValue in try decode(buffer: buffer) }
    }

    /// Decodes the one data item that is all of `bytes`, with `limits`.
    public static func decode(_ bytes: some Collection<UInt8>, limits: Limits = .default) throws(CBORError) -> CBORValue {
        try CBORDecoder(limits: limits).decode(bytes)
    }

    private static func tooLarge(_ count: Int, _ limits: Limits) -> CBORError {
        CBORError(.inputTooLarge, "the input is \(count) bytes, more than the limit of \(limits.maxInputSize)", offset: 0)
    }

    private func decode(buffer: UnsafeBufferPointer<UInt8>) throws(CBORError) -> CBORValue {
        guard buffer.count <= limits.maxInputSize else { throw Self.tooLarge(buffer.count, limits) }
        var reader = Reader(bytes: buffer, limits: limits)
        let value = try reader.readItem(depth: 0)
        guard reader.position == buffer.count else {
            let extra = buffer.count - reader.position
            throw CBORError(
                .trailingBytes, "\(extra) \(extra == 1 ? "byte follows" : "bytes follow") the data item that ends here; a message is exactly one item",
                offset: reader.position)
        }
        return value
    }
}

/// The decoding cursor: a position in the input and the count of items read so far.
private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    let limits: CBORDecoder.Limits
    var position = 0
    var items = 0

    init(bytes: UnsafeBufferPointer<UInt8>, limits: CBORDecoder.Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    var remaining: Int { bytes.count - position }

    /// An item's head: major type, additional information, and the argument (nil for
    /// indefinite length, additional information 31).
    struct Head {
        var start: Int
        var major: UInt8
        var info: UInt8
        var argument: UInt64?
    }

    mutating func readHead() throws(CBORError) -> Head {
        let start = position
        guard position < bytes.count else { throw CBORError(.truncated, "the input ends where a data item should start", offset: start) }
        let initial = bytes[position]
        position += 1
        let major = initial >> 5
        let info = initial & 0x1f
        let argument: UInt64?
        switch info {
        case 0..<24: argument = UInt64(info)
        case 24: argument = try readBigEndian(1, start: start)
        case 25: argument = try readBigEndian(2, start: start)
        case 26: argument = try readBigEndian(4, start: start)
        case 27: argument = try readBigEndian(8, start: start)
        case 28...30:
            throw CBORError(.malformed, "initial byte 0x\(hex(initial)) uses reserved additional information \(info)", offset: start)
        default: argument = nil
        }
        return Head(start: start, major: major, info: info, argument: argument)
    }

    mutating func readBigEndian(_ count: Int, start: Int) throws(CBORError) -> UInt64 {
        guard remaining >= count else {
            throw CBORError(.truncated, "the input ends inside the \(count)-byte argument of the item at byte \(start)", offset: start)
        }
        var value: UInt64 = 0
        for i in 0..<count { value = value << 8 | UInt64(bytes[position + i]) }
        position += count
        return value
    }

    mutating func readItem(depth: Int) throws(CBORError) -> CBORValue {
        let head = try readHead()
        items += 1
        guard items <= limits.maxItems else {
            throw CBORError(.tooManyItems, "the input holds more than \(limits.maxItems) data items", offset: head.start)
        }
        switch head.major {
        case 0, 1:
            guard let n = head.argument else { throw indefiniteNotAllowed(head) }
            return head.major == 0 ? .unsigned(n) : .negative(n)
        case 2:
            return .bytes(try readString(head))
        case 3:
            guard let length = head.argument else {
                // Each chunk was validated on its own; joined, they stay valid.
                return .text(String(decoding: try readString(head), as: UTF8.self))
            }
            // Straight from the input: one validation, one copy.
            let range = try definiteRange(length, head: head, kind: "text string")
            guard let text = String(validating: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) else {
                throw CBORError(.invalidUTF8, "the text string of \(range.count) bytes is not valid UTF-8", offset: head.start)
            }
            return .text(text)
        case 4:
            return .array(try readArray(head, depth: depth))
        case 5:
            return .map(try readMap(head, depth: depth))
        case 6:
            guard let tag = head.argument else { throw indefiniteNotAllowed(head) }
            try enterContainer(head, depth: depth)
            return .tagged(tag, try readItem(depth: depth + 1))
        default:
            return try readSimpleOrFloat(head)
        }
    }

    func indefiniteNotAllowed(_ head: Head) -> CBORError {
        switch head.major {
        case 7: return CBORError(.malformed, "a break (0xff) outside an indefinite-length item", offset: head.start)
        case 6: return CBORError(.malformed, "a tag cannot have indefinite length (initial byte 0xdf)", offset: head.start)
        default:
            return CBORError(.malformed, "an integer cannot have indefinite length (initial byte 0x\(hex(bytes[head.start])))", offset: head.start)
        }
    }

    func enterContainer(_ head: Head, depth: Int) throws(CBORError) {
        guard depth < limits.maxDepth else {
            throw CBORError(.tooDeep, "arrays, maps and tags are nested more than \(limits.maxDepth) deep", offset: head.start)
        }
    }

    /// A byte or text string's bytes: definite, or indefinite chunks joined.
    mutating func readString(_ head: Head) throws(CBORError) -> [UInt8] {
        let kind = head.major == 2 ? "byte string" : "text string"
        if let length = head.argument { return try readDefiniteString(length, head: head, kind: kind) }
        var joined: [UInt8] = []
        while true {
            guard position < bytes.count else {
                throw CBORError(.truncated, "the input ends before the break (0xff) of the indefinite-length \(kind)", offset: head.start)
            }
            if bytes[position] == 0xff {
                position += 1
                return joined
            }
            let chunk = try readHead()
            guard chunk.major == head.major, let length = chunk.argument else {
                throw CBORError(
                    .malformed, "a chunk of an indefinite-length \(kind) must be a definite-length \(kind), not initial byte 0x\(hex(bytes[chunk.start]))",
                    offset: chunk.start)
            }
            guard length <= UInt64(limits.maxStringLength - joined.count) else {
                throw CBORError(.stringTooLong, "the indefinite-length \(kind) is longer than the limit of \(limits.maxStringLength) bytes", offset: head.start)
            }
            let bytes = try readDefiniteString(length, head: chunk, kind: kind)
            // RFC 8949 §3.2.3: a text chunk holds whole characters, so each is valid UTF-8 alone.
            if head.major == 3 && String(validating: bytes, as: UTF8.self) == nil {
                throw CBORError(.invalidUTF8, "a chunk of the indefinite-length text string is not valid UTF-8", offset: chunk.start)
            }
            joined += bytes
        }
    }

    mutating func readDefiniteString(_ length: UInt64, head: Head, kind: String) throws(CBORError) -> [UInt8] {
        Array(bytes[try definiteRange(length, head: head, kind: kind)])
    }

    /// The input range of a definite-length string's content, checked against the limit and
    /// the bytes that remain; the position moves past it.
    mutating func definiteRange(_ length: UInt64, head: Head, kind: String) throws(CBORError) -> Range<Int> {
        guard length <= UInt64(limits.maxStringLength) else {
            throw CBORError(.stringTooLong, "a \(kind) of \(length) bytes is longer than the limit of \(limits.maxStringLength) bytes", offset: head.start)
        }
        guard length <= UInt64(remaining) else {
            throw CBORError(.truncated, "the \(kind) claims \(length) bytes but only \(remaining) remain", offset: head.start)
        }
        let range = position..<(position + Int(length))
        position = range.upperBound
        return range
    }

    /// Checks a container's element count against the limit and against the bytes left
    /// (`minimumBytes` per element) before anything is reserved.
    func checkCount(_ count: UInt64, minimumBytes: Int, head: Head, kind: String) throws(CBORError) -> Int {
        let unit = kind == "a map" ? "entries" : "elements"
        guard count <= UInt64(limits.maxContainerLength) else {
            throw CBORError(.containerTooLong, "\(kind) claims \(count) \(unit), more than the limit of \(limits.maxContainerLength)", offset: head.start)
        }
        guard count <= UInt64(remaining / minimumBytes) else {
            throw CBORError(.truncated, "\(kind) claims \(count) \(unit), more than the \(remaining) bytes that remain could hold", offset: head.start)
        }
        return Int(count)
    }

    /// An indefinite-length container grows one element at a time: only the limit applies.
    func checkIndefiniteCount(_ count: Int, head: Head, kind: String) throws(CBORError) {
        let unit = kind == "map" ? "entries" : "elements"
        guard count <= limits.maxContainerLength else {
            throw CBORError(
                .containerTooLong, "an indefinite-length \(kind) has more than the limit of \(limits.maxContainerLength) \(unit)", offset: head.start)
        }
    }

    mutating func readArray(_ head: Head, depth: Int) throws(CBORError) -> [CBORValue] {
        try enterContainer(head, depth: depth)
        var elements: [CBORValue] = []
        if let claimed = head.argument {
            let count = try checkCount(claimed, minimumBytes: 1, head: head, kind: "an array")
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(try readItem(depth: depth + 1)) }
            return elements
        }
        while try !atBreak(head, kind: "array") {
            try checkIndefiniteCount(elements.count + 1, head: head, kind: "array")
            elements.append(try readItem(depth: depth + 1))
        }
        return elements
    }

    mutating func readMap(_ head: Head, depth: Int) throws(CBORError) -> CBORMap {
        try enterContainer(head, depth: depth)
        var map = CBORMap()
        var seen = KeySet()
        if let claimed = head.argument {
            let count = try checkCount(claimed, minimumBytes: 2, head: head, kind: "a map")
            map.reserveCapacity(count)
            for _ in 0..<count { try readEntry(into: &map, seen: &seen, depth: depth) }
            return map
        }
        while try !atBreak(head, kind: "map") {
            try checkIndefiniteCount(map.count + 1, head: head, kind: "map")
            try readEntry(into: &map, seen: &seen, depth: depth)
        }
        return map
    }

    mutating func readEntry(into map: inout CBORMap, seen: inout KeySet, depth: Int) throws(CBORError) {
        let keyStart = position
        let key = try readItem(depth: depth + 1)
        guard seen.insert(key, existing: map) else {
            throw CBORError(.duplicateKey, "the map already has the key \(key.shortDescription)", offset: keyStart)
        }
        if position < bytes.count && bytes[position] == 0xff {
            throw CBORError(.malformed, "the map's key \(key.shortDescription) has no value before the break", offset: position)
        }
        map.append(key, try readItem(depth: depth + 1))
    }

    /// In an indefinite-length container: consumes a break and returns true, or returns false
    /// when another element follows.
    mutating func atBreak(_ head: Head, kind: String) throws(CBORError) -> Bool {
        guard position < bytes.count else {
            throw CBORError(.truncated, "the input ends before the break (0xff) of the indefinite-length \(kind)", offset: head.start)
        }
        guard bytes[position] == 0xff else { return false }
        position += 1
        return true
    }

    func readSimpleOrFloat(_ head: Head) throws(CBORError) -> CBORValue {
        switch head.info {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 23: return .undefined
        case 24:
            let n = head.argument ?? 0
            guard n >= 32 else {
                throw CBORError(.malformed, "simple value \(n) must be written in the initial byte, not after 0xf8", offset: head.start)
            }
            throw CBORError(.unsupported, "simple value \(n) is not one Nucleic accepts (only false, true, null, undefined)", offset: head.start)
        case 25: return .float(HalfFloat.double(UInt16(head.argument ?? 0)))
        case 26: return .float(Double(Float(bitPattern: UInt32(head.argument ?? 0))))
        case 27: return .float(Double(bitPattern: head.argument ?? 0))
        case 31: throw indefiniteNotAllowed(head)
        default:
            throw CBORError(.unsupported, "simple value \(head.info) is not one Nucleic accepts (only false, true, null, undefined)", offset: head.start)
        }
    }
}

/// Keys seen in one map: a linear scan while the map is small, a hash set after.
private struct KeySet {
    private var set: Set<CBORValue>? = nil

    /// Records `key`; false if `existing` (the entries so far) already has it.
    mutating func insert(_ key: CBORValue, existing map: CBORMap) -> Bool {
        if set == nil {
            if map.count < 16 { return !map.entries.contains(where: { $0.key == key }) }
            set = Set(map.keys)
        }
        return set!.insert(key).inserted
    }
}

private func hex(_ byte: UInt8) -> String {
    byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
}

extension CBORValue {
    /// Diagnostic notation cut to 60 characters, for error messages.
    var shortDescription: String {
        let text = description
        return text.count <= 60 ? text : String(text.prefix(57)) + "..."
    }
}
