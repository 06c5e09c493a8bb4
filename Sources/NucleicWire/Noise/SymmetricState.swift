/// The Noise `SymmetricState` (spec §5.2): the handshake's `CipherState`, chaining key `ck` and
/// handshake hash `h`.
///
/// ### Invariants
/// - `ck` and every HKDF output live only in `SecretBytes`; `split()` replaces `ck` and the
///   handshake key with nothing, so the handshake secrets are released as soon as the transport
///   keys exist.
/// - `h` commits to everything sent and received so far (prologue, pre-message keys, every
///   ciphertext); it is not secret.
struct SymmetricState: ~Copyable, Sendable {
    private(set) var cipher = CipherState()
    private var chainingKey: SecretBytes
    /// `h`, the handshake hash.
    private(set) var hash: [UInt8]

    /// `InitializeSymmetric(protocol_name)`.
    init(protocolName: [UInt8]) {
        if protocolName.count <= NoiseSizes.hash {
            hash = protocolName + [UInt8](repeating: 0, count: NoiseSizes.hash - protocolName.count)
        } else {
            hash = SHA256.hash(protocolName)
        }
        chainingKey = SecretBytes(copying: hash)
    }

    /// `MixKey(input_key_material)`: `ck, temp_k = HKDF(ck, ikm, 2)`, then `InitializeKey(temp_k)`.
    mutating func mixKey(_ inputKeyMaterial: UnsafeRawBufferPointer) {
        let outputs = NoiseHKDF.derive(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, outputs: 2)
        chainingKey = outputs[0]
        cipher.initializeKey(outputs[1])
    }

    mutating func mixKey(_ inputKeyMaterial: SecretBytes) {
        inputKeyMaterial.withUnsafeBytes { mixKey($0) }
    }

    /// `MixHash(data)`: `h = HASH(h || data)`.
    mutating func mixHash(_ data: UnsafeRawBufferPointer) {
        hash = hash.withUnsafeBytes { SHA256.hash($0, data) }
    }

    mutating func mixHash(_ data: [UInt8]) {
        data.withUnsafeBytes { mixHash($0) }
    }

    /// `MixKeyAndHash(input_key_material)` (spec §9, the `psk` token): `ck, temp_h, temp_k =
    /// HKDF(ck, ikm, 3)`, `MixHash(temp_h)`, `InitializeKey(temp_k)`.
    mutating func mixKeyAndHash(_ inputKeyMaterial: SecretBytes) {
        let outputs = NoiseHKDF.derive(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, outputs: 3)
        chainingKey = outputs[0]
        outputs[1].withUnsafeBytes { mixHash($0) }
        cipher.initializeKey(outputs[2])
    }

    /// `EncryptAndHash(plaintext)`, appending the ciphertext to `out`.
    mutating func encryptAndHash(_ plaintext: UnsafeRawBufferPointer, appendingTo out: inout [UInt8]) throws(NoiseError) {
        let start = out.count
        try hash.withBytes { (ad) throws(NoiseError) in
            try cipher.encrypt(ad: ad, plaintext: plaintext, appendingTo: &out)
        }
        out[start...].withUnsafeBytes { mixHash($0) }
    }

    /// `DecryptAndHash(ciphertext)`.
    mutating func decryptAndHash(_ ciphertext: ArraySlice<UInt8>) throws(NoiseError) -> [UInt8] {
        var buffer = Array(ciphertext)
        let count = try hash.withBytes { (ad) throws(NoiseError) -> Int in
            try buffer.withMutableBytes { (buffer) throws(NoiseError) -> Int in
                try cipher.decrypt(ad: ad, inPlace: buffer)
            }
        }
        ciphertext.withUnsafeBytes { mixHash($0) }
        buffer.removeLast(buffer.count - count)
        return buffer
    }

    /// `Split()`: the two transport `CipherState`s from `HKDF(ck, empty, 2)` — the first for
    /// initiator-to-responder messages, the second for the other direction. The chaining key and
    /// handshake key are dropped afterwards.
    mutating func split() -> CipherStatePair {
        let outputs = NoiseHKDF.derive(chainingKey: chainingKey, inputKeyMaterial: UnsafeRawBufferPointer(start: nil, count: 0), outputs: 2)
        chainingKey = SecretBytes(count: 0) { _ in }
        cipher.initializeKey(nil)
        return CipherStatePair(initiatorToResponder: CipherState(key: outputs[0]), responderToInitiator: CipherState(key: outputs[1]))
    }
}

/// The two `CipherState`s `Split()` returns.
struct CipherStatePair: ~Copyable, Sendable {
    var initiatorToResponder: CipherState
    var responderToInitiator: CipherState
}
