public import NucleicProtocol

/// Why a Noise handshake or transport operation failed.
///
/// `code` is what callers match on; `message` is a sentence for a person (what was wrong, in which
/// message or key, and what to do next). Equality compares both. No `NoiseError` ever carries key
/// material or decrypted bytes.
public typealias NoiseError = CodedError<NoiseFailure>

/// The domain of ``NoiseError``.
public enum NoiseFailure: ErrorDomain {
    public static func describe(_ error: CodedError<Self>) -> String { "Noise \(error.code): \(error.message)" }
}

extension CodedError.Code where Domain == NoiseFailure {
    /// A key, PSK or prologue given to the API has the wrong length.
    public static var invalidKey: Self { Self("invalidKey") }
    /// The keys given do not fit the pattern and role (an IK initiator without the responder's
    /// static key, an XXpsk3 handshake without a PSK, a PSK given to IK, …).
    public static var invalidConfiguration: Self { Self("invalidConfiguration") }
    /// A received message has a length the pattern does not allow (too short for its keys and
    /// tags, or longer than 65535 bytes).
    public static var invalidMessage: Self { Self("invalidMessage") }
    /// Authentication failed: the message was tampered with, or the peer used another key or
    /// PSK, or another prologue.
    public static var decryptFailed: Self { Self("decryptFailed") }
    /// A Diffie-Hellman result was all zeros: the peer sent a low-order (invalid) public key.
    public static var invalidPublicKey: Self { Self("invalidPublicKey") }
    /// The peer's static key is not the one this side pinned.
    public static var remoteStaticMismatch: Self { Self("remoteStaticMismatch") }
    /// The call does not fit the handshake's progress: reading when it is this side's turn to
    /// write (or the reverse), a message after the handshake completed or failed, finishing an
    /// incomplete handshake.
    public static var wrongState: Self { Self("wrongState") }
    /// The cipher's nonce reached 2^64-1, which Noise reserves: the session must end.
    public static var nonceExhausted: Self { Self("nonceExhausted") }
    /// A message to send would exceed the 65535-byte Noise message limit.
    public static var messageTooLarge: Self { Self("messageTooLarge") }
}

