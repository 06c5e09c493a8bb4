import CCrypto

/// The Web Push message encryption of RFC 8291 in the `aes128gcm` content coding of RFC 8188:
/// one record, an ephemeral P-256 key per message, keys derived with HKDF-SHA256 from the ECDH
/// secret and the subscriber's auth secret. All the primitives are OpenSSL's.
public enum WebPushCrypto {
    /// The record size written into the header. One record carries the whole message, so a
    /// plaintext may be at most `recordSize - 17` bytes (the delimiter and the tag).
    public static let recordSize = 4096

    /// The encrypted body: salt (16) || rs (4) || idlen (1) || the sender's public key (65) ||
    /// AES-128-GCM of the plaintext and the last-record delimiter 0x02, with its tag.
    ///
    /// - Parameters:
    ///   - subscriberKey: the subscription's `p256dh` (65 bytes).
    ///   - authSecret: the subscription's `auth` (16 bytes).
    ///   - senderKey: the ephemeral key; a new one when nil (tests pass RFC 8291's).
    ///   - salt: 16 bytes; random when nil.
    public static func encrypt(_ plaintext: [UInt8], subscriberKey: [UInt8], authSecret: [UInt8], senderKey: P256Key? = nil,
                               salt: [UInt8]? = nil) throws(NotifyError) -> [UInt8] {
        guard authSecret.count == 16 else { throw NotifyError("the subscription's auth secret is \(authSecret.count) bytes, not 16") }
        guard plaintext.count <= recordSize - 17 else { throw NotifyError("a Web Push message is at most \(recordSize - 17) bytes") }
        let subscriber = try P256Key(publicKey: subscriberKey)
        let sender: P256Key
        if let senderKey { sender = senderKey } else { sender = try P256Key.generate() }
        let salt16: [UInt8]
        if let salt { salt16 = salt } else { salt16 = try randomBytes(16) }
        guard salt16.count == 16 else { throw NotifyError("the salt is 16 bytes") }
        let senderPublic = sender.publicKey
        var shared = try sender.sharedSecret(with: subscriber)
        defer { for i in shared.indices { shared[i] = 0 } }
        // RFC 8291 §3.4: IKM = HKDF(auth, ecdh, "WebPush: info" 0x00 || ua_public || as_public, 32).
        var ikm = try hkdf(salt: authSecret, ikm: shared, info: Array("WebPush: info".utf8) + [0] + subscriberKey + senderPublic, length: 32)
        defer { for i in ikm.indices { ikm[i] = 0 } }
        // RFC 8188 §2.2, §2.3: the content key and nonce from the salt (one record: counter 0).
        var key = try hkdf(salt: salt16, ikm: ikm, info: Array("Content-Encoding: aes128gcm".utf8) + [0], length: 16)
        defer { for i in key.indices { key[i] = 0 } }
        let nonce = try hkdf(salt: salt16, ikm: ikm, info: Array("Content-Encoding: nonce".utf8) + [0], length: 12)
        let record = plaintext + [2]
        var sealed = [UInt8](repeating: 0, count: record.count + 16)
        guard nucleic_aes128gcm_seal(key, nonce, record, Int32(record.count), &sealed) == 1 else {
            throw NotifyError("AES-128-GCM failed (OpenSSL)")
        }
        let rs = UInt32(recordSize)
        let header = salt16 + [UInt8(rs >> 24), UInt8((rs >> 16) & 0xff), UInt8((rs >> 8) & 0xff), UInt8(rs & 0xff)]
            + [UInt8(senderPublic.count)] + senderPublic
        return header + sealed
    }

    /// HKDF-SHA256 (RFC 5869), extract then expand.
    public static func hkdf(salt: [UInt8], ikm: [UInt8], info: [UInt8], length: Int) throws(NotifyError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        guard nucleic_hkdf_sha256(salt, Int32(salt.count), ikm, Int32(ikm.count), info, Int32(info.count), &out, length) == 1 else {
            throw NotifyError("HKDF failed (OpenSSL)")
        }
        return out
    }
}
