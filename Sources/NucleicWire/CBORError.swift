public import NucleicProtocol

/// Why bytes are not a CBOR data item Nucleic accepts, or why a CBOR value has no JSON form.
///
/// `code` is what callers match on; `message` is a sentence for a person (what was wrong, where,
/// and what limit or rule it broke). `offset` is the byte of the input where the offending item
/// starts (for truncation: the item that runs past the end); it is `nil` for errors that are not
/// about input bytes (converting a decoded value to JSON). Like every `CodedError`, equality is
/// `code` and `message`; `offset` is a diagnostic (tests check it on its own).
public typealias CBORError = CodedError<CBORFailure>

/// The domain of ``CBORError``; its diagnostic is the offending item's input offset.
public enum CBORFailure: ErrorDomain {
    public typealias Diagnostics = Int?

    public static func describe(_ error: CBORError) -> String {
        if let offset = error.offset { return "CBOR \(error.code) at byte \(offset): \(error.message)" }
        return "CBOR \(error.code): \(error.message)"
    }
}

extension CodedError.Code where Domain == CBORFailure {
    /// The input ends inside a data item (its head, its argument, its content, or before the
    /// `break` of an indefinite-length item).
    public static var truncated: Self { Self("truncated") }
    /// Bytes follow the one top-level data item.
    public static var trailingBytes: Self { Self("trailingBytes") }
    /// Not well-formed CBOR (RFC 8949 §3): reserved additional information 28–30, a `break`
    /// outside an indefinite-length item, indefinite length on a major type that has none, a
    /// two-byte simple value below 32, or an indefinite-length string chunk of the wrong type.
    public static var malformed: Self { Self("malformed") }
    /// A text string (or one chunk of one) is not valid UTF-8.
    public static var invalidUTF8: Self { Self("invalidUTF8") }
    /// A map has the same key twice.
    public static var duplicateKey: Self { Self("duplicateKey") }
    /// Well-formed but outside the subset: simple values other than false, true, null and
    /// undefined (none is registered; docs/CBOR.md).
    public static var unsupported: Self { Self("unsupported") }
    /// The input is larger than `Limits.maxInputSize`.
    public static var inputTooLarge: Self { Self("inputTooLarge") }
    /// Arrays, maps and tags are nested deeper than `Limits.maxDepth`.
    public static var tooDeep: Self { Self("tooDeep") }
    /// An array or map has more than `Limits.maxContainerLength` elements or entries.
    public static var containerTooLong: Self { Self("containerTooLong") }
    /// A byte or text string is longer than `Limits.maxStringLength` bytes.
    public static var stringTooLong: Self { Self("stringTooLong") }
    /// The input holds more than `Limits.maxItems` data items in all.
    public static var tooManyItems: Self { Self("tooManyItems") }
    /// A CBOR value has no JSON form (byte string, tag, non-text map key, integer outside
    /// Int64); see docs/CBOR.md, "JSON mapping".
    public static var notJSON: Self { Self("notJSON") }
}

extension CodedError where Domain == CBORFailure {
    public init(_ code: Code, _ message: String, offset: Int?) {
        self.init(code, message, diagnostics: offset)
    }

    /// The input byte where the offending item starts; `nil` when not about input bytes.
    public var offset: Int? { diagnostics }
}
