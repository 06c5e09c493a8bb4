import Testing
@testable import NucleicWire

/// Known-answer tests for the crypto functions under the Noise layer. RFC vectors are quoted from
/// the RFCs; the Noise-specific ones (3-output HKDF, rekey, nonce encoding) were computed with an
/// independent implementation (pyca/cryptography's HKDF and ChaCha20Poly1305).
struct NoisePrimitiveTests {
    // MARK: X25519 (RFC 7748)

    @Test("X25519: RFC 7748 §5.2 scalar multiplication vectors")
    func x25519Vectors() throws {
        let cases = [
            ("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
             "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
             "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"),
            ("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
             "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
             "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"),
        ]
        for (scalar, point, expected) in cases {
            let shared = try X25519.dh(SecretBytes(copying: bytes(hex: scalar)), bytes(hex: point))
            #expect(shared.withUnsafeBytes { Array($0) } == bytes(hex: expected))
        }
    }

    @Test("X25519: RFC 7748 §6.1 Diffie-Hellman, key pairs and shared secret")
    func x25519DiffieHellman() throws {
        let alice = try NoiseKeyPair(privateKey: bytes(hex: "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        let bob = try NoiseKeyPair(privateKey: bytes(hex: "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"))
        #expect(alice.publicKey == bytes(hex: "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"))
        #expect(bob.publicKey == bytes(hex: "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"))
        let expected = bytes(hex: "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
        #expect(try X25519.dh(alice.privateKey, bob.publicKey).withUnsafeBytes { Array($0) } == expected)
        #expect(try X25519.dh(bob.privateKey, alice.publicKey).withUnsafeBytes { Array($0) } == expected)
    }

    @Test("X25519: low-order points give an all-zero result, which is refused")
    func x25519RejectsLowOrderPoints() {
        let key = NoiseKeyPair.generate()
        // Points of order 1, 2, 4 and 8 (and 0, 1 themselves): every result is all zeros.
        let lowOrder = [
            [UInt8](repeating: 0, count: 32),
            [1] + [UInt8](repeating: 0, count: 31),
            bytes(hex: "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
            bytes(hex: "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
            bytes(hex: "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
        ]
        for point in lowOrder {
            #expect(noiseErrorCode { _ = try X25519.dh(key.privateKey, point) } == .invalidPublicKey)
        }
        #expect(noiseErrorCode { _ = try X25519.dh(key.privateKey, [1, 2, 3]) } == .invalidKey)
    }

    @Test("Key pairs: generated keys differ, stored keys round-trip, wrong lengths are refused")
    func keyPairs() throws {
        let first = NoiseKeyPair.generate()
        let second = NoiseKeyPair.generate()
        #expect(first.publicKey != second.publicKey)
        let stored = first.withPrivateKeyBytes { Array($0) }
        #expect(try NoiseKeyPair(privateKey: stored).publicKey == first.publicKey)
        #expect(noiseErrorCode { _ = try NoiseKeyPair(privateKey: [UInt8](repeating: 1, count: 31)) } == .invalidKey)
        #expect(noiseErrorCode { _ = try NoiseKeyPair(privateKey: SecretBytes(copying: [1, 2])) } == .invalidKey)
    }

    // MARK: ChaCha20-Poly1305 (RFC 8439)

    @Test("ChaCha20-Poly1305: RFC 8439 §2.8.2 AEAD vector, sealed and opened in place")
    func aeadVector() throws {
        let key = SecretBytes(copying: (0x80...0x9f).map { UInt8($0) })
        let nonce = bytes(hex: "070000004041424344454647")
        let ad = bytes(hex: "50515253c0c1c2c3c4c5c6c7")
        let plaintext = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
        let expected = bytes(hex: "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116" + "1ae10b594f09e26a7e902ecbd0600691")
        var buffer = plaintext + [UInt8](repeating: 0, count: 16)
        ad.withUnsafeBytes { ad in
            buffer.withUnsafeMutableBytes { ChaChaPoly.seal(key: key, nonce: nonce, ad: ad, buffer: $0.baseAddress!, count: plaintext.count) }
        }
        #expect(buffer == expected)
        let opened = ad.withUnsafeBytes { ad in
            buffer.withUnsafeMutableBytes { ChaChaPoly.open(key: key, nonce: nonce, ad: ad, buffer: $0.baseAddress!, count: $0.count) }
        }
        #expect(opened == plaintext.count)
        #expect(Array(buffer.prefix(plaintext.count)) == plaintext)
    }

    @Test("ChaChaPoly: the Noise nonce is 4 zero bytes and n in little-endian order")
    func noiseNonce() throws {
        #expect(ChaChaPoly.nonce(1) == [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0])
        #expect(ChaChaPoly.nonce(0x0102_0304_0506_0708) == [0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1])
        // ENCRYPT(k = 00..1f, n, ad = "ad", "hello") as pyca/cryptography computes it.
        var cipher = try CipherState(key: (0..<32).map { UInt8($0) })
        cipher.setNonce(1)
        #expect(try cipher.encryptWithAd(Array("ad".utf8), Array("hello".utf8)) == bytes(hex: "f7329f33daea64b0262927f7780ddcddae879c6cf5"))
        cipher.setNonce(0x0102_0304_0506_0708)
        #expect(try cipher.encryptWithAd(Array("ad".utf8), Array("hello".utf8)) == bytes(hex: "982cc188c470553bfb5182218e71c7b4be8e2490e3"))
    }

    // MARK: SHA-256, HMAC-SHA-256 (RFC 4231), HKDF

    @Test("SHA-256: FIPS 180 examples, whole and in parts")
    func sha256() {
        #expect(SHA256.hash(Array("abc".utf8)) == bytes(hex: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        let expected = bytes(hex: "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hash(long) == expected)
        let parts = long.prefix(10).withUnsafeBytes { a in long.dropFirst(10).withUnsafeBytes { b in SHA256.hash(a, b) } }
        #expect(parts == expected)
    }

    @Test("HMAC-SHA-256: RFC 4231 test cases 1, 2, 3, 4, 6 and 7", arguments: [
        ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        ((1...25).map { UInt8($0) }, [UInt8](repeating: 0xcd, count: 50), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        ([UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        ([UInt8](repeating: 0xaa, count: 131),
         Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ])
    func hmac(key: [UInt8], data: [UInt8], expected: String) {
        #expect(HMACSHA256.authenticate(key: key, data: data) == bytes(hex: expected))
    }

    @Test("HKDF: Noise's HKDF is RFC 5869 with ck as salt and empty info (RFC 5869 test case 3)")
    func hkdfRFC5869() {
        // Test case 3: salt and info empty. HMAC pads keys with zeros, so an all-zero 32-byte chaining
        // key is the empty salt; output1 || output2 is the start of the OKM.
        let outputs = [UInt8](repeating: 0x0b, count: 22).withUnsafeBytes {
            NoiseHKDF.derive(chainingKey: SecretBytes(copying: [UInt8](repeating: 0, count: 32)), inputKeyMaterial: $0, outputs: 2)
        }
        let okm = outputs.flatMap { $0.withUnsafeBytes { Array($0) } }
        #expect(Array(okm.prefix(42)) == bytes(hex: "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"))
    }

    @Test("HKDF: two and three outputs, with and without input key material")
    func hkdfOutputs() {
        let chainingKey = SecretBytes(copying: (0..<32).map { UInt8($0) })
        let three = NoiseHKDF.derive(chainingKey: chainingKey, inputKeyMaterial: SecretBytes(copying: (0x20..<0x40).map { UInt8($0) }), outputs: 3)
        #expect(three.flatMap { $0.withUnsafeBytes { Array($0) } } == bytes(hex:
            "2607f5d05b268e0057684567787ed2f250fdb6e5b0572df9ef57a29539e5b5f8ccc538566c93ab32f7106fbee1e0e9fa5501f6363b63ce894b3a27385f13c86cf72d032483792781ae9b50b273a57a44b0f8c47ff9ca121e5443eb7a9dd62e74"))
        let empty = NoiseHKDF.derive(chainingKey: chainingKey, inputKeyMaterial: UnsafeRawBufferPointer(start: nil, count: 0), outputs: 2)
        #expect(empty.flatMap { $0.withUnsafeBytes { Array($0) } } == bytes(hex:
            "1d7e0d6f1d9da2d68dabed53b5f88345f3fd01cb75411fbe5aa4293bd8f430d63ed9b8035bbf370b8cfef7ff15007de45488e18660c84e3d996e8e6c658fa7f8"))
    }

    // MARK: SecretBytes

    @Test("SecretBytes: copies, compares in constant time, random bytes differ")
    func secretBytes() {
        let a = SecretBytes(copying: [1, 2, 3])
        #expect(a.count == 3)
        #expect(a.withUnsafeBytes { Array($0) } == [1, 2, 3])
        #expect(a.constantTimeEquals(SecretBytes(copying: [1, 2, 3])))
        #expect(!a.constantTimeEquals(SecretBytes(copying: [1, 2, 4])))
        #expect(!a.constantTimeEquals(SecretBytes(copying: [1, 2])))
        #expect(SecretBytes(copying: []).constantTimeEquals(SecretBytes(copying: [])))
        #expect(!SecretBytes.random(count: 32).constantTimeEquals(SecretBytes.random(count: 32)))
    }
}
