/// Why a Noise handshake or transport operation failed.
///
/// `code` is what callers match on; `message` is a sentence for a person (what was wrong, in which
/// message or key, and what to do next). Equality compares both. No `NoiseError` ever carries key
/// material or decrypted bytes.
public struct NoiseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; extend with new static members as the layer grows.
    public struct Code: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A key, PSK or prologue given to the API has the wrong length.
        public static let invalidKey = Code(rawValue: "invalidKey")
        /// The keys given do not fit the pattern and role (an IK initiator without the responder's
        /// static key, an XXpsk3 handshake without a PSK, a PSK given to IK, …).
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
        /// A received message has a length the pattern does not allow (too short for its keys and
        /// tags, or longer than 65535 bytes).
        public static let invalidMessage = Code(rawValue: "invalidMessage")
        /// Authentication failed: the message was tampered with, or the peer used another key or
        /// PSK, or another prologue.
        public static let decryptFailed = Code(rawValue: "decryptFailed")
        /// A Diffie-Hellman result was all zeros: the peer sent a low-order (invalid) public key.
        public static let invalidPublicKey = Code(rawValue: "invalidPublicKey")
        /// The peer's static key is not the one this side pinned.
        public static let remoteStaticMismatch = Code(rawValue: "remoteStaticMismatch")
        /// The call does not fit the handshake's progress: reading when it is this side's turn to
        /// write (or the reverse), a message after the handshake completed or failed, finishing an
        /// incomplete handshake.
        public static let wrongState = Code(rawValue: "wrongState")
        /// The cipher's nonce reached 2^64-1, which Noise reserves: the session must end.
        public static let nonceExhausted = Code(rawValue: "nonceExhausted")
        /// A message to send would exceed the 65535-byte Noise message limit.
        public static let messageTooLarge = Code(rawValue: "messageTooLarge")

        public static func < (lhs: Code, rhs: Code) -> Bool { lhs.rawValue < rhs.rawValue }
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence for a person: what was wrong, and where.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "Noise \(code): \(message)" }
}
