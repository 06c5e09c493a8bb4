import CCrypto
#if canImport(Glibc)
import Glibc
#endif

/// A P-256 key in OpenSSL (an `EVP_PKEY`), public only or with its private half: the VAPID
/// key, an APNs `.p8` key, a Web Push message's ephemeral key, a subscriber's `p256dh`.
///
/// ### Invariants
/// - Owns its `EVP_PKEY` alone and frees it in `deinit`; the key is never changed after init.
/// - Always a key on P-256 (a PEM of another curve or kind is refused).
public final class P256Key: @unchecked Sendable {  // the EVP_PKEY is immutable after init and only read
    let key: OpaquePointer

    private init(owning key: OpaquePointer) { self.key = key }

    deinit { EVP_PKEY_free(key) }

    /// A new random key pair.
    public static func generate() throws(NotifyError) -> P256Key {
        guard let key = nucleic_p256_generate() else { throw NotifyError("cannot generate a P-256 key (OpenSSL)") }
        return P256Key(owning: key)
    }

    /// The private key in PEM text (PKCS#8 or SEC 1, unencrypted).
    public convenience init(pem: String) throws(NotifyError) {
        let bytes = Array(pem.utf8)
        guard let key = bytes.withUnsafeBufferPointer({ buffer in
            buffer.withMemoryRebound(to: CChar.self) { nucleic_pkey_from_pem($0.baseAddress, Int32($0.count)) }
        }) else { throw NotifyError("not a PEM private key") }
        guard nucleic_p256_check(key) == 1 else {
            EVP_PKEY_free(key)
            throw NotifyError("the key is not a P-256 (ES256) key")
        }
        self.init(owning: key)
    }

    /// A key from its uncompressed public point (65 bytes), with the private scalar when given
    /// (32 bytes, big-endian); the point must lie on the curve.
    public convenience init(publicKey point: [UInt8], privateScalar: [UInt8]? = nil) throws(NotifyError) {
        guard point.count == 65, point[0] == 4 else { throw NotifyError("a P-256 public key is 65 bytes starting 0x04, not \(point.count) bytes") }
        if let privateScalar, privateScalar.count != 32 { throw NotifyError("a P-256 private key is 32 bytes") }
        let made: OpaquePointer? = if let privateScalar {
            nucleic_p256_from_raw(point, point.count, privateScalar)
        } else {
            nucleic_p256_from_raw(point, point.count, nil)
        }
        guard let made else { throw NotifyError("not a point on P-256") }
        self.init(owning: made)
    }

    /// The uncompressed public point, 65 bytes.
    public var publicKey: [UInt8] {
        var out = [UInt8](repeating: 0, count: 65)
        return nucleic_p256_public(key, &out) == 1 ? out : []
    }

    /// The private key as PKCS#8 PEM text.
    public func pem() throws(NotifyError) -> String {
        var out = [CChar](repeating: 0, count: 1024)
        let n = nucleic_pkey_to_pem(key, &out, Int32(out.count))
        defer { for i in out.indices { out[i] = 0 } }
        guard n > 0 else { throw NotifyError("cannot write the key as PEM (OpenSSL)") }
        return String(decoding: out.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// ECDH with `peer`: the shared 32-byte secret.
    public func sharedSecret(with peer: P256Key) throws(NotifyError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        guard nucleic_ecdh(key, peer.key, &out) == 1 else { throw NotifyError("ECDH failed (OpenSSL)") }
        return out
    }

    /// An ES256 signature of `message`: r || s, 64 bytes.
    public func signES256(_ message: [UInt8]) throws(NotifyError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        guard nucleic_es256_sign(key, message, message.count, &out) == 1 else { throw NotifyError("ES256 signing failed (OpenSSL)") }
        return out
    }

    /// The key in `path` (PKCS#8 PEM, mode 0600), created once when the file does not exist.
    /// The new file appears whole (written aside, then linked in), so two daemons racing end
    /// with the same key; a file readable by others is refused.
    public static func loadOrCreate(path: String) throws(NotifyError) -> P256Key {
        for _ in 0..<3 {
            if let existing = try load(path) { return existing }
            let key = try generate()
            var text = Array(try key.pem().utf8)
            defer { for i in text.indices { text[i] = 0 } }
            let temporary = path + ".new-\(getpid())"
            try StateFile.write(temporary, text)
            let linked = link(temporary, path)
            let linkErrno = errno
            unlink(temporary)
            if linked == 0 { return key }
            guard linkErrno == EEXIST else { throw NotifyError("cannot create \(path): \(String(cString: strerror(linkErrno)))") }
        }
        throw NotifyError("the key \(path) keeps appearing and disappearing")
    }

    /// The key in `path` (PKCS#8 PEM, mode 0600: an APNs `.p8`), which must exist.
    public static func read(path: String) throws(NotifyError) -> P256Key {
        guard let key = try load(path) else { throw NotifyError("there is no key \(path)") }
        return key
    }

    static func load(_ path: String) throws(NotifyError) -> P256Key? {
        var info = stat()
        if stat(path, &info) != 0 {
            if errno == ENOENT { return nil }
            throw NotifyError("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw NotifyError("the key \(path) is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        guard var bytes = try StateFile.read(path) else { return nil }
        defer { for i in bytes.indices { bytes[i] = 0 } }
        do { return try P256Key(pem: String(decoding: bytes, as: UTF8.self)) } catch { throw NotifyError("\(path): \(error.message)") }
    }
}

/// Random bytes from OpenSSL's generator.
func randomBytes(_ count: Int) throws(NotifyError) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: count)
    guard RAND_bytes(&out, Int32(count)) == 1 else { throw NotifyError("no random bytes (OpenSSL RAND_bytes)") }
    return out
}

/// Unpadded base64url (RFC 4648 §5), the alphabet of JWTs, VAPID keys and Web Push keys.
public enum Base64URLCodec {
    public static func encode(_ bytes: [UInt8]) -> String {
        var text = HTTPPost.base64(bytes)
        while text.hasSuffix("=") { text.removeLast() }
        return String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
    }

    /// The bytes, or nil when `text` is not base64url (padding is accepted).
    public static func decode(_ text: String) -> [UInt8]? {
        var chars = Array(text.utf8).filter { $0 != UInt8(ascii: "=") }
        for i in chars.indices {
            switch chars[i] {
            case UInt8(ascii: "-"): chars[i] = UInt8(ascii: "+")
            case UInt8(ascii: "_"): chars[i] = UInt8(ascii: "/")
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): break
            default: return nil
            }
        }
        guard chars.count % 4 != 1 else { return nil }
        let padding = (4 - chars.count % 4) % 4
        chars += Array(repeating: UInt8(ascii: "="), count: padding)
        var out = [UInt8](repeating: 0, count: chars.count / 4 * 3 + 1)
        let n = EVP_DecodeBlock(&out, chars, Int32(chars.count))
        guard n >= 0 else { return nil }
        return Array(out.prefix(Int(n) - padding))
    }
}
