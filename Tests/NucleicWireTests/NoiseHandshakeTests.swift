import Testing
@testable import NucleicWire
import NucleicTestSupport

/// Both patterns end to end in memory: payloads, pinning, every kind of invalid message.
struct NoiseHandshakeTests {
    @Test("XXpsk3: round trip with payloads; both sides learn and agree on the keys", arguments: [true, false])
    func xxpsk3RoundTrip(pinHostKey: Bool) throws {
        let parties = Parties()
        // A pairing device knows the host key from the pairing URI and pins it.
        var initiator = try parties.initiator(.xxpsk3, remoteStatic: pinHostKey ? parties.responderStatic.publicKey : nil)
        var responder = try parties.responder(.xxpsk3)
        #expect(initiator.step == .write)
        #expect(responder.step == .read)
        #expect(initiator.remoteStaticKey == nil)

        let payloads = [Array("hello".utf8), Array("host info".utf8), Array("device info".utf8)]
        let transcript = try runHandshake(&initiator, &responder, payloads: payloads)
        #expect(transcript.payloadsReceived == payloads)
        #expect(transcript.messages.map(\.count) == [48 + 5, 96 + 9, 64 + 11])
        #expect(initiator.isComplete && responder.isComplete)
        #expect(initiator.remoteStaticKey == parties.responderStatic.publicKey)
        #expect(responder.remoteStaticKey == parties.initiatorStatic.publicKey)
        #expect(initiator.handshakeHash == responder.handshakeHash)

        var pair = ChannelPair(initiator: try initiator.finish(), responder: try responder.finish())
        #expect(pair.initiator.remoteStaticKey == parties.responderStatic.publicKey)
        #expect(pair.responder.remoteStaticKey == parties.initiatorStatic.publicKey)
        #expect(pair.initiator.handshakeHash == pair.responder.handshakeHash)
        try exchange(&pair)
    }

    @Test("IK: round trip with payloads; the responder knows the device after the first message")
    func ikRoundTrip() throws {
        let parties = Parties()
        var initiator = try parties.initiator(.ik)
        var responder = try parties.responder(.ik)
        #expect(initiator.remoteStaticKey == parties.responderStatic.publicKey)

        let first = try initiator.writeMessage(payload: Array("hello".utf8))
        #expect(first.count == 96 + 5)
        #expect(try responder.readMessage(first) == Array("hello".utf8))
        // The host looks the device up here, before answering.
        #expect(responder.remoteStaticKey == parties.initiatorStatic.publicKey)
        #expect(responder.step == .write)
        let second = try responder.writeMessage(payload: Array("welcome".utf8))
        #expect(second.count == 48 + 7)
        #expect(try initiator.readMessage(second) == Array("welcome".utf8))
        #expect(initiator.step == .complete && responder.step == .complete)

        var pair = ChannelPair(initiator: try initiator.finish(), responder: try responder.finish())
        #expect(pair.initiator.handshakeHash == pair.responder.handshakeHash)
        try exchange(&pair)
    }

    @Test("Payload limits: the largest payload makes a 65535-byte message; one more byte is refused without harm", arguments: NoisePattern.allCases)
    func payloadLimits(pattern: NoisePattern) throws {
        let parties = Parties()
        var initiator = try parties.initiator(pattern)
        var responder = try parties.responder(pattern)
        for _ in 0..<pattern.messageCount {
            let writerIsInitiator = initiator.step == .write
            let maximum = writerIsInitiator ? initiator.maxPayloadSize : responder.maxPayloadSize
            let tooLarge = [UInt8](repeating: 7, count: maximum + 1)
            #expect(noiseErrorCode {
                if writerIsInitiator { _ = try initiator.writeMessage(payload: tooLarge) } else { _ = try responder.writeMessage(payload: tooLarge) }
            } == .messageTooLarge)
            let payload = [UInt8](repeating: 9, count: maximum)
            let message = writerIsInitiator ? try initiator.writeMessage(payload: payload) : try responder.writeMessage(payload: payload)
            #expect(message.count == Noise.maxMessageSize)
            let received = writerIsInitiator ? try responder.readMessage(message) : try initiator.readMessage(message)
            #expect(received == payload)
        }
        #expect(initiator.isComplete && responder.isComplete)
    }

    // MARK: Wrong keys

    @Test("XXpsk3: a wrong PSK fails authentication at the third message")
    func wrongPSK() throws {
        let parties = Parties()
        var initiator = try parties.initiator(.xxpsk3)
        var responder = try parties.responder(.xxpsk3, psk: [UInt8](repeating: 0x42, count: 32))
        var failedAt: Int?
        #expect(noiseErrorCode {
            _ = try runHandshake(&initiator, &responder, tamper: { index, _ in failedAt = index })
        } == .decryptFailed)
        #expect(failedAt == 2)
        #expect(responder.step == .failed)
    }

    @Test("XXpsk3: a device pinning another host key refuses the host at the second message")
    func wrongPinnedHostKeyXX() throws {
        let parties = Parties()
        var initiator = try parties.initiator(.xxpsk3, remoteStatic: NoiseKeyPair.generate().publicKey)
        var responder = try parties.responder(.xxpsk3)
        #expect(noiseErrorCode { _ = try runHandshake(&initiator, &responder) } == .remoteStaticMismatch)
        #expect(initiator.step == .failed)
        #expect(initiator.remoteStaticKey == nil)
    }

    @Test("IK: an initiator pinning another host key is refused by the host at the first message")
    func wrongPinnedHostKeyIK() throws {
        let parties = Parties()
        var initiator = try parties.initiator(.ik, remoteStatic: NoiseKeyPair.generate().publicKey)
        var responder = try parties.responder(.ik)
        #expect(noiseErrorCode { _ = try runHandshake(&initiator, &responder) } == .decryptFailed)
        #expect(responder.step == .failed)
        #expect(responder.remoteStaticKey == nil)
    }

    @Test("IK: a responder pinning one device refuses another")
    func wrongDeviceIK() throws {
        let parties = Parties()
        var initiator = try parties.initiator(.ik)
        var responder = try parties.responder(.ik, remoteStatic: NoiseKeyPair.generate().publicKey)
        #expect(noiseErrorCode { _ = try runHandshake(&initiator, &responder) } == .remoteStaticMismatch)
    }

    @Test("Low-order ephemeral keys are refused", arguments: NoisePattern.allCases)
    func lowOrderEphemeral(pattern: NoisePattern) throws {
        let parties = Parties()
        var initiator = try parties.initiator(pattern)
        var responder = try parties.responder(pattern)
        // The first DH with the peer's ephemeral key: IK's `es` in message 1, XXpsk3's `ee` in message 2.
        let target = pattern == .ik ? 0 : 1
        var error: NoiseError.Code?
        error = noiseErrorCode {
            _ = try runHandshake(&initiator, &responder, tamper: { index, message in
                if index == target { message.replaceSubrange(0..<32, with: [UInt8](repeating: 0, count: 32)) }
            })
        }
        #expect(error == .invalidPublicKey)
    }

    // MARK: Tampering and malformed messages

    @Test("Every single-bit change to every handshake message fails the handshake", arguments: NoisePattern.allCases)
    func tamperedMessages(pattern: NoisePattern) throws {
        let parties = Parties()
        for message in 0..<pattern.messageCount {
            let size = pattern.overhead(ofMessage: message) + 3
            for position in 0..<size {
                for bit in [UInt8(0x01), 0x80] {
                    var initiator = try parties.initiator(pattern)
                    var responder = try parties.responder(pattern)
                    let code = noiseErrorCode {
                        _ = try runHandshake(&initiator, &responder, payloads: [[1, 2, 3], [4, 5, 6], [7, 8, 9]], tamper: { index, bytes in
                            if index == message { bytes[position] ^= bit }
                        })
                    }
                    #expect(code == .decryptFailed || code == .invalidPublicKey, "message \(message + 1), byte \(position), bit \(bit)")
                }
            }
        }
    }

    @Test("Truncated, extended and oversized messages are refused", arguments: NoisePattern.allCases)
    func malformedLengths(pattern: NoisePattern) throws {
        let parties = Parties()
        for message in 0..<pattern.messageCount {
            var referenceInitiator = try parties.initiator(pattern)
            var referenceResponder = try parties.responder(pattern)
            let transcript = try runHandshake(&referenceInitiator, &referenceResponder, payloads: [[1], [2], [3]])
            let original = transcript.messages[message]
            var variants: [[UInt8]] = (0..<original.count).map { Array(original.prefix($0)) }
            variants.append(original + [0])
            variants.append(original + [UInt8](repeating: 0, count: Noise.maxMessageSize + 1 - original.count))
            for variant in variants {
                var initiator = try parties.initiator(pattern)
                var responder = try parties.responder(pattern)
                let code = noiseErrorCode {
                    _ = try runHandshake(&initiator, &responder, payloads: [[1], [2], [3]], tamper: { index, bytes in
                        if index == message { bytes = variant }
                    })
                }
                #expect(code == .invalidMessage || code == .decryptFailed, "message \(message + 1) as \(variant.count) bytes")
                if variant.count < pattern.overhead(ofMessage: message) || variant.count > Noise.maxMessageSize {
                    #expect(code == .invalidMessage)
                }
            }
        }
    }

    @Test("Random bytes as any handshake message are errors, never crashes", arguments: NoisePattern.allCases)
    func randomMessages(pattern: NoisePattern) throws {
        var rng = SeededGenerator(seed: 0x4e01_5e00 + UInt64(pattern.messageCount))
        let parties = Parties()
        for _ in 0..<300 {
            let message = Int.random(in: 0..<pattern.messageCount, using: &rng)
            let length = [Int.random(in: 0..<200, using: &rng), Int.random(in: 0..<70_000, using: &rng)][Int.random(in: 0...1, using: &rng)]
            let garbage = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var initiator = try parties.initiator(pattern)
            var responder = try parties.responder(pattern)
            let code = noiseErrorCode {
                _ = try runHandshake(&initiator, &responder, tamper: { index, bytes in if index == message { bytes = garbage } })
            }
            #expect(code != nil)
        }
    }

    // MARK: Order and state

    @Test("Out-of-turn calls, messages after completion and finishing early are wrongState errors")
    func wrongOrder() throws {
        let parties = Parties()
        var initiator = try parties.initiator(.xxpsk3)
        var responder = try parties.responder(.xxpsk3)
        #expect(noiseErrorCode { _ = try initiator.readMessage([UInt8](repeating: 0, count: 96)) } == .wrongState)
        #expect(noiseErrorCode { _ = try responder.writeMessage() } == .wrongState)
        // Out-of-turn calls change nothing: the handshake still completes.
        #expect(initiator.step == .write && responder.step == .read)
        let first = try initiator.writeMessage()
        #expect(noiseErrorCode { _ = try initiator.writeMessage() } == .wrongState)
        _ = try responder.readMessage(first)
        // A replayed first message is out of turn for the responder.
        #expect(noiseErrorCode { _ = try responder.readMessage(first) } == .wrongState)
        _ = try runHandshake(&initiator, &responder)
        #expect(noiseErrorCode { _ = try initiator.writeMessage() } == .wrongState)
        #expect(noiseErrorCode { _ = try responder.readMessage(first) } == .wrongState)

        let early = try parties.initiator(.ik)
        // (A consuming call cannot go in a closure, hence the do/catch.)
        do {
            _ = try early.finish()
            Issue.record("finishing an incomplete handshake succeeded")
        } catch {
            #expect(error.code == .wrongState)
        }
    }

    @Test("After a failure every call is a wrongState error and no channel is produced")
    func failureIsFinal() throws {
        let parties = Parties()
        var initiator = try parties.initiator(.ik)
        var responder = try parties.responder(.ik)
        var first = try initiator.writeMessage()
        first[40] ^= 1
        #expect(noiseErrorCode { _ = try responder.readMessage(first) } == .decryptFailed)
        #expect(responder.step == .failed)
        first[40] ^= 1
        #expect(noiseErrorCode { _ = try responder.readMessage(first) } == .wrongState)
        #expect(noiseErrorCode { _ = try responder.writeMessage() } == .wrongState)
        do {
            _ = try responder.finish()
            Issue.record("finishing a failed handshake succeeded")
        } catch {
            #expect(error.code == .wrongState)
        }
    }

    @Test("Configurations that do not fit the pattern are refused")
    func configuration() throws {
        let key = NoiseKeyPair.generate()
        let psk = SecretBytes(copying: [UInt8](repeating: 1, count: 32))
        #expect(noiseErrorCode { _ = try HandshakeState(pattern: .ik, role: .initiator, localStatic: key) } == .invalidConfiguration)
        #expect(noiseErrorCode { _ = try HandshakeState(pattern: .xxpsk3, role: .responder, localStatic: key) } == .invalidConfiguration)
        #expect(noiseErrorCode { _ = try HandshakeState(pattern: .ik, role: .responder, localStatic: key, psk: psk) } == .invalidConfiguration)
        #expect(noiseErrorCode {
            _ = try HandshakeState(pattern: .xxpsk3, role: .initiator, localStatic: key, psk: SecretBytes(copying: [1, 2, 3]))
        } == .invalidKey)
        #expect(noiseErrorCode {
            _ = try HandshakeState(pattern: .ik, role: .initiator, localStatic: key, remoteStatic: [1, 2, 3])
        } == .invalidKey)
    }

    @Test("Pattern facts: protocol names and per-message overhead")
    func patternFacts() {
        #expect(NoisePattern.xxpsk3.protocolName == "Noise_XXpsk3_25519_ChaChaPoly_SHA256")
        #expect(NoisePattern.ik.protocolName == "Noise_IK_25519_ChaChaPoly_SHA256")
        #expect((0..<3).map { NoisePattern.xxpsk3.overhead(ofMessage: $0) } == [48, 96, 64])
        #expect((0..<2).map { NoisePattern.ik.overhead(ofMessage: $0) } == [96, 48])
        #expect(Noise.prologue == Array("nucleic/1".utf8))
    }

    /// Messages both ways, several in a row, including empty and maximal ones.
    private func exchange(_ pair: inout ChannelPair) throws {
        for size in [0, 1, 100, CipherState.maxPlaintextSize] {
            let message = (0..<size).map { UInt8(truncatingIfNeeded: $0) }
            #expect(try pair.responder.decrypt(try pair.initiator.encrypt(message)) == message)
            #expect(try pair.initiator.decrypt(try pair.responder.encrypt(message)) == message)
        }
        #expect(pair.initiator.sender.nonce == 4 && pair.responder.receiver.nonce == 4)
    }
}
