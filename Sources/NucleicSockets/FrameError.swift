public import NucleicProtocol

/// Why a stream of length-prefixed frames could not be decoded.
///
/// Either error means the byte stream can no longer be trusted: the connection that produced it
/// must be closed. `declaredLength` is a diagnostic, not part of equality.
public typealias FrameError = CodedError<FrameFailure>

/// The domain of ``FrameError``; its diagnostic is the payload length the offending header
/// announced, if one was read.
public enum FrameFailure: ErrorDomain {
    public typealias Diagnostics = Int?
}

extension CodedError.Code where Domain == FrameFailure {
    /// A header announced a payload longer than the decoder's maximum.
    public static var payloadTooLarge: Self { Self("payloadTooLarge") }
    /// The stream ended inside a frame (in its header or its payload).
    public static var truncated: Self { Self("truncated") }
}

extension CodedError where Domain == FrameFailure {
    public init(_ code: Code, _ message: String, declaredLength: Int? = nil) {
        self.init(code, message, diagnostics: declaredLength)
    }

    /// The payload length the offending header announced, if one was read. Diagnostic only.
    public var declaredLength: Int? { diagnostics }
}
