/// Why bytes are not a CBOR data item Nucleic accepts, or why a CBOR value has no JSON form.
///
/// `code` is what callers match on; `message` is a sentence for a person (what was wrong, where,
/// and what limit or rule it broke). `offset` is the byte of the input where the offending item
/// starts (for truncation: the item that runs past the end); it is `nil` for errors that are not
/// about input bytes (converting a decoded value to JSON). Equality compares all three.
public struct CBORError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; extend with new static members as the codec grows.
    public struct Code: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The input ends inside a data item (its head, its argument, its content, or before the
        /// `break` of an indefinite-length item).
        public static let truncated = Code(rawValue: "truncated")
        /// Bytes follow the one top-level data item.
        public static let trailingBytes = Code(rawValue: "trailingBytes")
        /// Not well-formed CBOR (RFC 8949 §3): reserved additional information 28–30, a `break`
        /// outside an indefinite-length item, indefinite length on a major type that has none, a
        /// two-byte simple value below 32, or an indefinite-length string chunk of the wrong type.
        public static let malformed = Code(rawValue: "malformed")
        /// A text string (or one chunk of one) is not valid UTF-8.
        public static let invalidUTF8 = Code(rawValue: "invalidUTF8")
        /// A map has the same key twice.
        public static let duplicateKey = Code(rawValue: "duplicateKey")
        /// Well-formed but outside the subset: simple values other than false, true, null and
        /// undefined (none is registered; docs/CBOR.md).
        public static let unsupported = Code(rawValue: "unsupported")
        /// The input is larger than `Limits.maxInputSize`.
        public static let inputTooLarge = Code(rawValue: "inputTooLarge")
        /// Arrays, maps and tags are nested deeper than `Limits.maxDepth`.
        public static let tooDeep = Code(rawValue: "tooDeep")
        /// An array or map has more than `Limits.maxContainerLength` elements or entries.
        public static let containerTooLong = Code(rawValue: "containerTooLong")
        /// A byte or text string is longer than `Limits.maxStringLength` bytes.
        public static let stringTooLong = Code(rawValue: "stringTooLong")
        /// The input holds more than `Limits.maxItems` data items in all.
        public static let tooManyItems = Code(rawValue: "tooManyItems")
        /// A CBOR value has no JSON form (byte string, tag, non-text map key, integer outside
        /// Int64); see docs/CBOR.md, "JSON mapping".
        public static let notJSON = Code(rawValue: "notJSON")

        public static func < (lhs: Code, rhs: Code) -> Bool { lhs.rawValue < rhs.rawValue }
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence for a person: what was wrong, and where.
    public let message: String
    /// The input byte where the offending item starts; `nil` when not about input bytes.
    public let offset: Int?

    public init(_ code: Code, _ message: String, offset: Int?) {
        self.code = code
        self.message = message
        self.offset = offset
    }

    public var description: String {
        if let offset { return "CBOR \(code) at byte \(offset): \(message)" }
        return "CBOR \(code): \(message)"
    }
}
