/// The Noise `CipherState` (spec §5.1): a ChaCha20-Poly1305 key `k` and a 64-bit nonce counter `n`.
///
/// `~Copyable` on purpose: a copy would encrypt two different messages under the same key and
/// nonce, which breaks ChaCha20-Poly1305 outright. A `CipherState` can be moved (to a writer
/// thread, into a `Mutex`), never duplicated.
///
/// ### Invariants
/// - `n` only grows, by one per successful encryption or decryption; a failed decryption leaves it
///   unchanged (spec §5.1). Nothing public sets it.
/// - `n == 2^64-1` is never used as a nonce: at that value every encryption and decryption throws
///   `nonceExhausted`, and the session must end. `rekey()` uses 2^64-1 internally, as the spec says.
/// - The key lives only in `SecretBytes`; `rekey()` replaces it, and the old key is zeroed when
///   released.
public struct CipherState: ~Copyable, Sendable {
    /// The largest plaintext one transport message can carry: 65535 minus the 16-byte tag.
    public static let maxPlaintextSize = NoiseSizes.maxMessage - NoiseSizes.tag
    /// The nonce value Noise reserves (spec §5.1); reaching it ends the session.
    public static let reservedNonce = UInt64.max

    private var key: SecretBytes?
    /// `n`: the nonce the next encryption or decryption uses.
    public private(set) var nonce: UInt64 = 0

    /// A `CipherState` with an empty key: `InitializeKey(empty)`.
    init() {}

    /// `InitializeKey(key)` with `n = 0`.
    init(key: SecretBytes) {
        self.key = key
    }

    /// A `CipherState` keyed with 32 given bytes and `n = 0` (tests, benchmarks; a live session gets
    /// its `CipherState`s from the handshake).
    public init(key: some Collection<UInt8>) throws(NoiseError) {
        guard key.count == NoiseSizes.key else {
            throw NoiseError(.invalidKey, "a ChaCha20-Poly1305 key is 32 bytes, not \(key.count)")
        }
        self.key = SecretBytes(copying: key)
    }

    /// `HasKey()`.
    public var hasKey: Bool { key != nil }

    /// `InitializeKey(key)`: sets `k` and `n = 0`.
    mutating func initializeKey(_ key: SecretBytes?) {
        self.key = key
        nonce = 0
    }

    /// `SetNonce(n)`. Internal: Nucleic never sends nonces, and moving `n` backwards would reuse
    /// one. Tests use it to reach nonce exhaustion.
    mutating func setNonce(_ n: UInt64) {
        nonce = n
    }

    /// `EncryptWithAd(ad, plaintext)`: the ciphertext with its tag, or the plaintext itself while
    /// the key is empty.
    public mutating func encryptWithAd(_ ad: [UInt8], _ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        var out: [UInt8] = []
        try ad.withBytes { (ad) throws(NoiseError) in
            try plaintext.withBytes { (plaintext) throws(NoiseError) in
                try encrypt(ad: ad, plaintext: plaintext, appendingTo: &out)
            }
        }
        return out
    }

    /// `DecryptWithAd(ad, ciphertext)`: the plaintext, or the ciphertext itself while the key is
    /// empty. On `decryptFailed` the nonce does not advance.
    public mutating func decryptWithAd(_ ad: [UInt8], _ ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        var buffer = ciphertext
        let count = try ad.withBytes { (ad) throws(NoiseError) -> Int in
            try buffer.withMutableBytes { (buffer) throws(NoiseError) -> Int in
                try decrypt(ad: ad, inPlace: buffer)
            }
        }
        buffer.removeLast(buffer.count - count)
        return buffer
    }

    /// `Rekey()`: `k = REKEY(k)`, the first 32 bytes of `ENCRYPT(k, 2^64-1, empty, 32 zero bytes)`
    /// (spec §4.2; ChaChaPoly defines no rekey of its own). `n` is unchanged (spec §11.3). Does
    /// nothing while the key is empty.
    public mutating func rekey() {
        guard let key else { return }
        let block = SecretBytes(count: NoiseSizes.key + NoiseSizes.tag) { block in
            ChaChaPoly.seal(key: key, nonce: ChaChaPoly.nonce(Self.reservedNonce), ad: UnsafeRawBufferPointer(start: nil, count: 0),
                            buffer: block.baseAddress!, count: NoiseSizes.key)
        }
        self.key = block.withUnsafeBytes { block in SecretBytes(copying: block.prefix(NoiseSizes.key)) }
    }

    /// Encrypts `plaintext` and appends the ciphertext (and tag) to `out`.
    mutating func encrypt(ad: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer, appendingTo out: inout [UInt8]) throws(NoiseError) {
        guard key != nil else {
            out.append(contentsOf: plaintext)
            return
        }
        let start = out.count
        out.append(contentsOf: plaintext)
        out.append(contentsOf: repeatElement(0, count: NoiseSizes.tag))
        try out.withMutableBytes { (out) throws(NoiseError) in
            try encrypt(ad: ad, inPlace: UnsafeMutableRawBufferPointer(rebasing: out[start...]))
        }
    }

    /// Encrypts `buffer.count - 16` plaintext bytes at the start of `buffer` in place, writing the
    /// tag into the last 16 bytes. With an empty key nothing changes (and no tag is written: the
    /// caller sized the buffer for a keyed cipher, so it must not call this while `hasKey` is false).
    mutating func encrypt(ad: UnsafeRawBufferPointer, inPlace buffer: UnsafeMutableRawBufferPointer) throws(NoiseError) {
        guard let key else { return }
        guard nonce != Self.reservedNonce else {
            throw NoiseError(.nonceExhausted, "the sending nonce reached 2^64-1: end this session and handshake again")
        }
        precondition(buffer.count >= NoiseSizes.tag, "the buffer has no room for the tag")
        ChaChaPoly.seal(key: key, counter: nonce, ad: ad, buffer: buffer.baseAddress!, count: buffer.count - NoiseSizes.tag)
        nonce += 1
    }

    /// Decrypts `buffer` (ciphertext and tag) in place; returns the plaintext length (the plaintext
    /// is at the start of `buffer`). With an empty key the "plaintext" is the whole buffer.
    mutating func decrypt(ad: UnsafeRawBufferPointer, inPlace buffer: UnsafeMutableRawBufferPointer) throws(NoiseError) -> Int {
        guard key != nil else { return buffer.count }
        return try decrypt(ad: ad, ciphertext: UnsafeRawBufferPointer(buffer), into: buffer.baseAddress)
    }

    /// Decrypts `ciphertext` (ciphertext and tag) into `plaintext`, which has room for
    /// `ciphertext.count - 16` bytes and is either `ciphertext`'s start or outside it; returns the
    /// plaintext length. On a failure the nonce does not advance and `plaintext` holds no
    /// plaintext (libsodium zeroes it). The key must be set (a transport cipher).
    mutating func decrypt(ad: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawPointer?) throws(NoiseError) -> Int {
        guard let key else { preconditionFailure("decrypt(ciphertext:into:) needs a keyed cipher") }
        guard nonce != Self.reservedNonce else {
            throw NoiseError(.nonceExhausted, "the receiving nonce reached 2^64-1: end this session and handshake again")
        }
        guard ciphertext.count >= NoiseSizes.tag else {
            throw NoiseError(.invalidMessage, "a ciphertext of \(ciphertext.count) bytes is shorter than its 16-byte tag")
        }
        guard let count = ChaChaPoly.open(key: key, counter: nonce, ad: ad, ciphertext: ciphertext.baseAddress!, count: ciphertext.count, into: plaintext!) else {
            throw NoiseError(.decryptFailed, "a message failed authentication (tampered, or sent with another key)")
        }
        nonce += 1
        return count
    }
}
