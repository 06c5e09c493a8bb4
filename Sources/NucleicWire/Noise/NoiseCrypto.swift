import CSodium

// The Noise crypto functions (spec revision 34, §4 and §12) for `25519_ChaChaPoly_SHA256`, every
// one of them libsodium's. libsodium 1.0.18 has no HKDF, so `NoiseHKDF` is built on its HMAC the
// way the spec defines it.

extension Sodium {
    private static let initialized: Bool = sodium_init() >= 0

    /// Calls `sodium_init()` once per process; every entry point that touches libsodium calls this.
    static func ensureInitialized() {
        // sodium_init fails only when the library cannot get randomness: nothing secure can run.
        precondition(initialized, "sodium_init() failed: libsodium cannot initialise (no randomness source?)")
    }
}

/// Sizes fixed by `Noise_*_25519_ChaChaPoly_SHA256`.
enum NoiseSizes {
    /// DHLEN: an X25519 public key or shared secret.
    static let dh = 32
    /// A ChaCha20-Poly1305 key.
    static let key = 32
    /// HASHLEN for SHA-256.
    static let hash = 32
    /// The Poly1305 tag every AEAD ciphertext carries.
    static let tag = 16
    /// The largest Noise message (handshake or transport), spec §3.
    static let maxMessage = 65535
}

/// The `25519` DH functions (spec §12.1) on libsodium's `crypto_scalarmult`.
enum X25519 {
    /// The public key for a 32-byte private key (`crypto_scalarmult_base`, which clamps).
    static func publicKey(for privateKey: SecretBytes) -> [UInt8] {
        privateKey.withUnsafeBytes { secret in
            [UInt8](unsafeUninitializedCapacity: NoiseSizes.dh) { out, count in
                _ = crypto_scalarmult_base(out.baseAddress!, secret.bindMemory(to: UInt8.self).baseAddress!)
                count = NoiseSizes.dh
            }
        }
    }

    /// `DH(private, public)`. An all-zero result (the peer sent a low-order point) is an error:
    /// libsodium reports it, and Nucleic refuses it rather than mixing a known value into the keys.
    static func dh(_ privateKey: SecretBytes, _ publicKey: [UInt8]) throws(NoiseError) -> SecretBytes {
        guard publicKey.count == NoiseSizes.dh else {
            throw NoiseError(.invalidKey, "an X25519 public key is 32 bytes, not \(publicKey.count)")
        }
        var status: Int32 = 0
        let shared = SecretBytes(count: NoiseSizes.dh) { out in
            privateKey.withUnsafeBytes { secret in
                publicKey.withUnsafeBufferPointer { point in
                    status = crypto_scalarmult(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        secret.bindMemory(to: UInt8.self).baseAddress!, point.baseAddress!)
                }
            }
        }
        let isZero = shared.withUnsafeBytes { sodium_is_zero($0.bindMemory(to: UInt8.self).baseAddress!, $0.count) == 1 }
        guard status == 0, !isZero else {
            throw NoiseError(.invalidPublicKey, "the peer's public key is a low-order point (the X25519 result is all zeros)")
        }
        return shared
    }
}

/// The `ChaChaPoly` cipher functions (spec §12.3): RFC 8439 AEAD_CHACHA20_POLY1305 with the
/// 96-bit nonce made of 4 zero bytes and the 64-bit counter in little-endian order.
enum ChaChaPoly {
    /// The 12-byte IETF nonce Noise derives from its counter `n`.
    static func nonce(_ n: UInt64) -> [UInt8] {
        [0, 0, 0, 0] + withUnsafeBytes(of: n.littleEndian) { Array($0) }
    }

    /// Encrypts `count` plaintext bytes at `buffer` in place and writes the 16-byte tag after them;
    /// `buffer` must hold `count + 16` bytes. libsodium supports `c == m`.
    static func seal(key: SecretBytes, nonce: [UInt8], ad: UnsafeRawBufferPointer, buffer: UnsafeMutableRawPointer, count: Int) {
        var written: UInt64 = 0
        let text = buffer.assumingMemoryBound(to: UInt8.self)
        key.withUnsafeBytes { key in
            nonce.withUnsafeBufferPointer { nonce in
                _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                    text, &written, text, UInt64(count),
                    ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
                    nil, nonce.baseAddress!, key.bindMemory(to: UInt8.self).baseAddress!)
            }
        }
    }

    /// Decrypts `count` ciphertext bytes (tag included) at `buffer` in place; returns the
    /// plaintext length, or nil when authentication fails (then nothing was decrypted).
    static func open(key: SecretBytes, nonce: [UInt8], ad: UnsafeRawBufferPointer, buffer: UnsafeMutableRawPointer, count: Int) -> Int? {
        nonce.withUnsafeBufferPointer { nonce in
            open(key: key, nonce: nonce.baseAddress!, ad: ad, ciphertext: UnsafeRawPointer(buffer), count: count, into: buffer)
        }
    }

    /// `seal` with the nonce of counter `n`, built on the stack (no allocation per message).
    static func seal(key: SecretBytes, counter n: UInt64, ad: UnsafeRawBufferPointer, buffer: UnsafeMutableRawPointer, count: Int) {
        var written: UInt64 = 0
        let text = buffer.assumingMemoryBound(to: UInt8.self)
        withNonce(n) { nonce in
            key.withUnsafeBytes { key in
                _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                    text, &written, text, UInt64(count),
                    ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
                    nil, nonce, key.bindMemory(to: UInt8.self).baseAddress!)
            }
        }
    }

    /// Decrypts `count` ciphertext bytes (tag included) at `ciphertext` into `plaintext`, which
    /// holds `count - 16` bytes and is either `ciphertext` itself or does not overlap it, with the
    /// nonce of counter `n`; returns the plaintext length, or nil when authentication fails (then
    /// libsodium has written nothing but zeros into `plaintext`).
    static func open(key: SecretBytes, counter n: UInt64, ad: UnsafeRawBufferPointer, ciphertext: UnsafeRawPointer, count: Int, into plaintext: UnsafeMutableRawPointer) -> Int? {
        withNonce(n) { nonce in
            open(key: key, nonce: nonce, ad: ad, ciphertext: ciphertext, count: count, into: plaintext)
        }
    }

    private static func open(key: SecretBytes, nonce: UnsafePointer<UInt8>, ad: UnsafeRawBufferPointer, ciphertext: UnsafeRawPointer, count: Int, into plaintext: UnsafeMutableRawPointer) -> Int? {
        guard count >= NoiseSizes.tag else { return nil }
        var written: UInt64 = 0
        let status = key.withUnsafeBytes { key in
            crypto_aead_chacha20poly1305_ietf_decrypt(
                plaintext.assumingMemoryBound(to: UInt8.self), &written, nil,
                ciphertext.assumingMemoryBound(to: UInt8.self), UInt64(count),
                ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
                nonce, key.bindMemory(to: UInt8.self).baseAddress!)
        }
        return status == 0 ? Int(written) : nil
    }

    /// Calls `body` with the 12-byte nonce of counter `n` (the bytes of ``nonce(_:)``) on the stack.
    @inline(__always)
    private static func withNonce<R>(_ n: UInt64, _ body: (UnsafePointer<UInt8>) -> R) -> R {
        var words: (UInt32, UInt32, UInt32) = (0, 0, 0)
        return withUnsafeMutableBytes(of: &words) { bytes in
            bytes.storeBytes(of: n.littleEndian, toByteOffset: 4, as: UInt64.self)
            return body(UnsafePointer(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)))
        }
    }
}

/// SHA-256 (spec §12.5) on libsodium's multi-part `crypto_hash_sha256`.
enum SHA256 {
    /// `HASH(parts[0] || parts[1] || …)`, without concatenating.
    static func hash(_ parts: UnsafeRawBufferPointer...) -> [UInt8] {
        Sodium.ensureInitialized()
        var state = crypto_hash_sha256_state()
        crypto_hash_sha256_init(&state)
        for part in parts where part.count > 0 {
            crypto_hash_sha256_update(&state, part.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(part.count))
        }
        return [UInt8](unsafeUninitializedCapacity: NoiseSizes.hash) { out, count in
            crypto_hash_sha256_final(&state, out.baseAddress!)
            count = NoiseSizes.hash
        }
    }

    static func hash(_ data: [UInt8]) -> [UInt8] {
        data.withUnsafeBytes { hash($0) }
    }
}

/// HMAC-SHA-256 (RFC 2104 with SHA-256) on libsodium's multi-part `crypto_auth_hmacsha256`,
/// which takes keys of any length as RFC 2104 does.
enum HMACSHA256 {
    /// Writes `HMAC(key, parts[0] || parts[1] || …)` (32 bytes) to `out`; the state, which holds
    /// key-derived material, is zeroed afterwards.
    static func authenticate(key: UnsafeRawBufferPointer, _ parts: [UnsafeRawBufferPointer], into out: UnsafeMutableRawPointer) {
        Sodium.ensureInitialized()
        var state = crypto_auth_hmacsha256_state()
        // The C function requires a non-null key pointer even for an empty key.
        var empty: UInt8 = 0
        if let base = key.baseAddress, key.count > 0 {
            crypto_auth_hmacsha256_init(&state, base.assumingMemoryBound(to: UInt8.self), key.count)
        } else {
            crypto_auth_hmacsha256_init(&state, &empty, 0)
        }
        for part in parts where part.count > 0 {
            crypto_auth_hmacsha256_update(&state, part.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(part.count))
        }
        crypto_auth_hmacsha256_final(&state, out.assumingMemoryBound(to: UInt8.self))
        sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size)
    }

    /// `HMAC(key, data)` as a new array (for tests and non-secret uses).
    static func authenticate(key: [UInt8], data: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: NoiseSizes.hash) { out, count in
            key.withUnsafeBytes { key in
                data.withUnsafeBytes { data in authenticate(key: key, [data], into: out.baseAddress!) }
            }
            count = NoiseSizes.hash
        }
    }
}

/// `HKDF(chaining_key, input_key_material, num_outputs)` exactly as spec §4.3 defines it: RFC 5869
/// HKDF-SHA-256 with the chaining key as salt and an empty info, giving two or three 32-byte outputs.
enum NoiseHKDF {
    static func derive(chainingKey: SecretBytes, inputKeyMaterial: UnsafeRawBufferPointer, outputs: Int) -> [SecretBytes] {
        precondition(outputs == 2 || outputs == 3, "Noise HKDF gives two or three outputs")
        // temp_key = HMAC(chaining_key, input_key_material)
        let tempKey = SecretBytes(count: NoiseSizes.hash) { out in
            chainingKey.withUnsafeBytes { ck in
                HMACSHA256.authenticate(key: ck, [inputKeyMaterial], into: out.baseAddress!)
            }
        }
        // output_i = HMAC(temp_key, output_{i-1} || byte(i)), output_0 being empty.
        var results: [SecretBytes] = []
        for index in 1...outputs {
            var counter = UInt8(index)
            let output = SecretBytes(count: NoiseSizes.hash) { out in
                tempKey.withUnsafeBytes { tempKey in
                    withUnsafeBytes(of: &counter) { counter in
                        if let previous = results.last {
                            previous.withUnsafeBytes { previous in
                                HMACSHA256.authenticate(key: tempKey, [previous, counter], into: out.baseAddress!)
                            }
                        } else {
                            HMACSHA256.authenticate(key: tempKey, [counter], into: out.baseAddress!)
                        }
                    }
                }
            }
            results.append(output)
        }
        return results
    }

    static func derive(chainingKey: SecretBytes, inputKeyMaterial: SecretBytes, outputs: Int) -> [SecretBytes] {
        inputKeyMaterial.withUnsafeBytes { derive(chainingKey: chainingKey, inputKeyMaterial: $0, outputs: outputs) }
    }
}

// `Array.withUnsafeBytes` is `rethrows`, so a typed error thrown inside becomes `any Error`; these
// keep the type, for the `throws(NoiseError)` API.
extension Array where Element == UInt8 {
    func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { bytes in Result { () throws(E) -> R in try body(bytes) } }
        return try result.get()
    }

    mutating func withMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeMutableBytes { bytes in Result { () throws(E) -> R in try body(bytes) } }
        return try result.get()
    }
}
