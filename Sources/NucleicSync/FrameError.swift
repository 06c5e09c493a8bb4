/// Why a stream of length-prefixed frames could not be decoded.
///
/// Either error means the byte stream can no longer be trusted: the connection that produced it
/// must be closed. `declaredLength` and `maxPayload` are diagnostics, not part of equality.
public struct FrameError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure; extend with new static members as framing grows.
    public struct Code: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A header announced a payload longer than the decoder's maximum.
        public static let payloadTooLarge = Code(rawValue: "payloadTooLarge")
        /// The stream ended inside a frame (in its header or its payload).
        public static let truncated = Code(rawValue: "truncated")

        public static func < (lhs: Code, rhs: Code) -> Bool { lhs.rawValue < rhs.rawValue }
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence for a person: what was wrong with the stream.
    public let message: String
    /// The payload length the offending header announced, if one was read. Diagnostic only.
    public let declaredLength: Int?

    public init(_ code: Code, _ message: String, declaredLength: Int? = nil) {
        self.code = code
        self.message = message
        self.declaredLength = declaredLength
    }

    public static func == (lhs: FrameError, rhs: FrameError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public var description: String { message }
}
