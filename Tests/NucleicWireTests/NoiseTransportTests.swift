import Testing
@testable import NucleicWire

/// The transport phase: ordering, replay, nonce exhaustion, rekey.
struct NoiseTransportTests {
    @Test("A replayed, reordered or tampered transport message fails; a failure does not advance the nonce")
    func replayAndReorder() throws {
        var pair = try connect(.ik)
        let first = try pair.initiator.encrypt([1])
        let second = try pair.initiator.encrypt([2])
        #expect(noiseErrorCode { _ = try pair.responder.decrypt(second) } == .decryptFailed)
        var tampered = first
        tampered[0] ^= 0x10
        #expect(noiseErrorCode { _ = try pair.responder.decrypt(tampered) } == .decryptFailed)
        #expect(pair.responder.receiver.nonce == 0)
        #expect(try pair.responder.decrypt(first) == [1])
        #expect(noiseErrorCode { _ = try pair.responder.decrypt(first) } == .decryptFailed)
        #expect(try pair.responder.decrypt(second) == [2])
    }

    @Test("Keys are per direction: a message cannot be reflected back to its sender")
    func reflection() throws {
        var pair = try connect(.xxpsk3)
        let message = try pair.initiator.encrypt([1, 2, 3])
        #expect(noiseErrorCode { _ = try pair.initiator.decrypt(message) } == .decryptFailed)
    }

    @Test("Transport messages over 65535 bytes are refused on both sides")
    func transportLimits() throws {
        var pair = try connect(.ik)
        #expect(noiseErrorCode { _ = try pair.initiator.encrypt([UInt8](repeating: 0, count: CipherState.maxPlaintextSize + 1)) } == .messageTooLarge)
        #expect(noiseErrorCode { _ = try pair.responder.decrypt([UInt8](repeating: 0, count: Noise.maxMessageSize + 1)) } == .invalidMessage)
        #expect(noiseErrorCode { _ = try pair.responder.decrypt([UInt8](repeating: 0, count: 15)) } == .invalidMessage)
        // The sender's nonce did not move: the next real message still decrypts.
        #expect(try pair.responder.decrypt(try pair.initiator.encrypt([9])) == [9])
    }

    @Test("Nonce exhaustion: n = 2^64-2 is the last nonce used; then both directions fail for good")
    func nonceExhaustion() throws {
        var pair = try connect(.ik)
        pair.initiator.sender.setNonce(UInt64.max - 1)
        pair.responder.receiver.setNonce(UInt64.max - 1)
        let last = try pair.initiator.encrypt([1])
        #expect(pair.initiator.sender.nonce == UInt64.max)
        #expect(noiseErrorCode { _ = try pair.initiator.encrypt([2]) } == .nonceExhausted)
        #expect(noiseErrorCode { _ = try pair.initiator.encrypt([2]) } == .nonceExhausted)
        #expect(try pair.responder.decrypt(last) == [1])
        #expect(noiseErrorCode { _ = try pair.responder.decrypt(last) } == .nonceExhausted)
    }

    @Test("Rekey: REKEY(k) is the first 32 bytes of ENCRYPT(k, 2^64-1, empty, zeros); n is kept")
    func rekeyKnownAnswer() throws {
        let key = (0..<32).map { UInt8($0) }
        var cipher = try CipherState(key: key)
        cipher.setNonce(5)
        cipher.rekey()
        #expect(cipher.nonce == 5)
        // The same plaintext under the key pyca/cryptography derives (5083…5042) at n = 5.
        var expected = try CipherState(key: bytes(hex: "50835543a205b22c9323f2022bc4f67d838f90e61d5ccf33c4513e01f85b5042"))
        expected.setNonce(5)
        #expect(try cipher.encryptWithAd([], [1, 2, 3]) == expected.encryptWithAd([], [1, 2, 3]))
        // Rekeying is allowed at the reserved nonce, which it uses itself.
        var atEnd = try CipherState(key: key)
        atEnd.setNonce(UInt64.max)
        atEnd.rekey()
        #expect(noiseErrorCode { _ = try atEnd.encryptWithAd([], [1]) } == .nonceExhausted)
    }

    @Test("Rekey: both ends rekeying a direction keep talking; one end alone cannot")
    func rekeyChannel() throws {
        var pair = try connect(.xxpsk3)
        #expect(try pair.responder.decrypt(try pair.initiator.encrypt([1])) == [1])
        pair.initiator.sender.rekey()
        pair.responder.receiver.rekey()
        #expect(try pair.responder.decrypt(try pair.initiator.encrypt([2])) == [2])
        pair.responder.sender.rekey()
        #expect(noiseErrorCode { _ = try pair.initiator.decrypt(try pair.responder.encrypt([3])) } == .decryptFailed)
    }

    @Test("A CipherState with an empty key passes bytes through (the handshake before the first DH)")
    func emptyKey() throws {
        var cipher = CipherState()
        // (`#expect` cannot inspect a property of a noncopyable value, hence the local.)
        var hasKey = cipher.hasKey
        #expect(!hasKey)
        #expect(try cipher.encryptWithAd([1], [1, 2, 3]) == [1, 2, 3])
        #expect(try cipher.decryptWithAd([1], [1, 2, 3]) == [1, 2, 3])
        cipher.rekey()
        hasKey = cipher.hasKey
        #expect(!hasKey)
        #expect(noiseErrorCode { _ = try CipherState(key: [1, 2, 3]) } == .invalidKey)
    }
}
