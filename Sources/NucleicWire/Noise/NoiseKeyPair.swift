/// An X25519 key pair: a static key (the host's `host.key`, a device's key) or an ephemeral one.
///
/// ### Invariants
/// - `publicKey` is always the X25519 public key of the private key (derived, never taken on trust).
/// - The private key lives only in `SecretBytes`, zeroed when the last copy of the pair is released.
public struct NoiseKeyPair: Sendable {
    /// The 32-byte public key, as sent in handshakes and pinned by peers.
    public let publicKey: [UInt8]
    let privateKey: SecretBytes

    /// A fresh key pair from libsodium's CSPRNG.
    public static func generate() -> NoiseKeyPair {
        NoiseKeyPair(validPrivateKey: .random(count: NoiseSizes.dh))
    }

    /// The key pair of a stored 32-byte private key (the bytes are copied into owned memory).
    public init(privateKey: some Collection<UInt8>) throws(NoiseError) {
        guard privateKey.count == NoiseSizes.dh else {
            throw NoiseError(.invalidKey, "an X25519 private key is 32 bytes, not \(privateKey.count)")
        }
        self.init(validPrivateKey: SecretBytes(copying: privateKey))
    }

    /// The key pair of a 32-byte private key already held in `SecretBytes`.
    public init(privateKey: SecretBytes) throws(NoiseError) {
        guard privateKey.count == NoiseSizes.dh else {
            throw NoiseError(.invalidKey, "an X25519 private key is 32 bytes, not \(privateKey.count)")
        }
        self.init(validPrivateKey: privateKey)
    }

    private init(validPrivateKey: SecretBytes) {
        privateKey = validPrivateKey
        publicKey = X25519.publicKey(for: validPrivateKey)
    }

    /// Lends the 32 private-key bytes to `body` (to store them in a 0600 file); they must not escape.
    public func withPrivateKeyBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try privateKey.withUnsafeBytes(body)
    }
}
