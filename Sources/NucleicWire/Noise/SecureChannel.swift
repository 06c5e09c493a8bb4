/// A completed Noise session: the two transport `CipherState`s `Split()` produced, one per
/// direction, with what the handshake established about the peer.
///
/// Transport messages are single Noise messages (at most 65535 bytes with their tag) encrypted
/// with an empty associated data. For a TCP stream, hand the ciphers to the frame codec with
/// `frameCodec()` (docs/NOISE.md, "Frames").
///
/// ### Invariants
/// - `sender` encrypts and `receiver` decrypts: for the initiator the first and second outputs of
///   `Split()`, for the responder the reverse, so each key is used in one direction only.
/// - `~Copyable`: the ciphers can be moved, never duplicated (a copy would reuse nonces).
/// - Messages are accepted only in order: each decryption uses the next nonce, so a replayed,
///   dropped or reordered message fails authentication.
/// `@frozen` for the same reason as `SecureFrameCodec`: `sender` and `receiver` can be moved out
/// separately from another module.
@frozen public struct SecureChannel: ~Copyable, Sendable {
    /// This side's role in the handshake that made the channel.
    public let role: NoiseRole
    /// The peer's static public key, authenticated by the handshake.
    public let remoteStaticKey: [UInt8]
    /// The final handshake hash `h`, the same on both sides.
    public let handshakeHash: [UInt8]
    /// Encrypts this side's messages.
    public var sender: CipherState
    /// Decrypts the peer's messages.
    public var receiver: CipherState

    init(role: NoiseRole, pair: consuming CipherStatePair, remoteStaticKey: [UInt8], handshakeHash: [UInt8]) {
        self.role = role
        self.remoteStaticKey = remoteStaticKey
        self.handshakeHash = handshakeHash
        switch role {
        case .initiator:
            sender = pair.initiatorToResponder
            receiver = pair.responderToInitiator
        case .responder:
            sender = pair.responderToInitiator
            receiver = pair.initiatorToResponder
        }
    }

    /// Encrypts one transport message (at most `CipherState.maxPlaintextSize` bytes of plaintext).
    public mutating func encrypt(_ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard plaintext.count <= CipherState.maxPlaintextSize else {
            throw NoiseError(.messageTooLarge, "a transport message carries at most \(CipherState.maxPlaintextSize) bytes, not \(plaintext.count)")
        }
        return try sender.encryptWithAd([], plaintext)
    }

    /// Decrypts one transport message from the peer.
    public mutating func decrypt(_ ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard ciphertext.count >= Noise.tagSize, ciphertext.count <= Noise.maxMessageSize else {
            throw NoiseError(.invalidMessage, "a transport message is 16...65535 bytes, not \(ciphertext.count)")
        }
        return try receiver.decryptWithAd([], ciphertext)
    }

    /// Splits the channel into a frame encoder (sending side) and decoder (receiving side), which
    /// can then live on different threads.
    public consuming func frameCodec(maxMessageSize: Int = SecureFrames.maxMessageSize) -> SecureFrameCodec {
        SecureFrameCodec(
            encoder: SecureFrameEncoder(cipher: sender, maxMessageSize: maxMessageSize),
            decoder: SecureFrameDecoder(cipher: receiver, maxMessageSize: maxMessageSize))
    }
}

/// The two halves of a framed secure channel.
///
/// `@frozen` so that code in other modules can move `encoder` and `decoder` out separately (to a
/// writer and a reader): Swift refuses to partially consume a non-frozen type from another module.
@frozen public struct SecureFrameCodec: ~Copyable, Sendable {
    /// Turns application messages into frames to write.
    public var encoder: SecureFrameEncoder
    /// Turns received bytes back into application messages.
    public var decoder: SecureFrameDecoder
}
