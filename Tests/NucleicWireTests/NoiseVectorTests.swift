import Testing
@testable import NucleicWire

/// Published Noise test vectors (the JSON format of the Noise wiki): every handshake message, the
/// handshake hash and the transport messages that follow must match byte for byte. The data are
/// copied from cacophony's `vectors/cacophony.txt` (haskell-cryptography/cacophony) and snow's
/// `tests/vectors/snow.txt` (mcginty/snow); the prologue there is not `nucleic/1`.
struct NoiseVectorTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let source: String
        let pattern: NoisePattern
        let prologue: String
        let psk: String?
        let initStatic: String
        let initEphemeral: String
        let initRemoteStatic: String?
        let respStatic: String
        let respEphemeral: String
        let handshakeHash: String?
        /// (payload, ciphertext), alternating initiator and responder from the first message.
        let messages: [(String, String)]

        var testDescription: String { "\(source) \(pattern.protocolName)" }
    }

    static let vectors: [Vector] = [
        Vector(
            source: "cacophony", pattern: .xxpsk3, prologue: "4a6f686e2047616c74",
            psk: "54686973206973206d7920417573747269616e20706572737065637469766521",
            initStatic: "e61ef9919cde45dd5f82166404bd08e38bceb5dfdfded0a34c8df7ed542214d1",
            initEphemeral: "893e28b9dc6ca8d611ab664754b8ceb7bac5117349a4439a6b0569da977c464a",
            initRemoteStatic: nil,
            respStatic: "4a3acbfdb163dec651dfa3194dece676d437029c62a408b4c5ea9114246e4893",
            respEphemeral: "bbdb4cdbd309f1a1f2e1456967fe288cadd6f712d65dc7b7793d5e63da6b375b",
            handshakeHash: "a477edf6a131bbdb54707f6ea30eab6cd935d9b560f0e5fd1f053a95a99669fb",
            messages: [
                ("4c756477696720766f6e204d69736573", "ca35def5ae56cec33dc2036731ab14896bc4c75dbb07a61f879f8e3afa4c7944c9f5ff0e8079630cb7e270c20bbf480821b77a384a645c71a2fd9b3db1c16a5f"),
                ("4d757272617920526f746862617264", "95ebc60d2b1fa672c1f46a8aa265ef51bfe38e7ccb39ec5be34069f144808843b123def17f71e6ae8e57e0e1dec5949c5f7415c6f33517398747d821a06dc23ad430aa1fd7381d46195c378a819fd574425462cbb2d4ca339e738a0b7001dc91423fbf55a99af0c6f1df21012ceb2f"),
                ("462e20412e20486179656b", "52187316111b118d4c060364f7b975dc0809b2590779aff2d63113c564f11744493384db7bf32d5ae6686df6ab06d508d2e07caaf1d6afc010b978735fc78900e71ae1d314130d042e729a"),
                ("4361726c204d656e676572", "eaedc672d4c21e0e2955758756fb98f194c4e90d5deb5b6cf30b27"),
                ("4a65616e2d426170746973746520536179", "522d543c5fe799d09a3d9da7ff54d0dc03c8af1dc7751d2ff708339d2290943e98"),
                ("457567656e2042f6686d20766f6e2042617765726b", "7d4e2c3873eef6a213b04e72f9df60a91666072d3544c5d96c34a09e2329b5030bee796741"),
            ]),
        Vector(
            source: "cacophony", pattern: .ik, prologue: "4a6f686e2047616c74", psk: nil,
            initStatic: "e61ef9919cde45dd5f82166404bd08e38bceb5dfdfded0a34c8df7ed542214d1",
            initEphemeral: "893e28b9dc6ca8d611ab664754b8ceb7bac5117349a4439a6b0569da977c464a",
            initRemoteStatic: "31e0303fd6418d2f8c0e78b91f22e8caed0fbe48656dcf4767e4834f701b8f62",
            respStatic: "4a3acbfdb163dec651dfa3194dece676d437029c62a408b4c5ea9114246e4893",
            respEphemeral: "bbdb4cdbd309f1a1f2e1456967fe288cadd6f712d65dc7b7793d5e63da6b375b",
            handshakeHash: "0b0f68fb0c27e03ce9b97565995ed4838cc0581b762ef72b062f6a546419fad7",
            messages: [
                ("4c756477696720766f6e204d69736573", "ca35def5ae56cec33dc2036731ab14896bc4c75dbb07a61f879f8e3afa4c7944718da798efbcd91528520204f904b9bd6c7413dccdc214d951e15253e39987f18146e8cd0873654207148333479d4d16c289f0294b29960a72f48e0b7bba2e89083169825e59642148d492020664ccf7"),
                ("4d757272617920526f746862617264", "95ebc60d2b1fa672c1f46a8aa265ef51bfe38e7ccb39ec5be34069f1448088435361e70b2ed446e6c9ec387d1d6b3b840f194e373979d241b203c4acafccf5"),
                ("462e20412e20486179656b", "050e9f3c8fac16b68dbce8f8c4bfbf6617c897f9ada4aa29aa19c8"),
                ("4361726c204d656e676572", "344233a6cabb7141d80f3da2fedc311d9646bbb0f505afe403a667"),
                ("4a65616e2d426170746973746520536179", "62cdeeb172ad7ade7aa7d9e069da5790f12331bfa00177787a1d0810c67dc3b2b4"),
                ("457567656e2042f6686d20766f6e2042617765726b", "029bead1b40992327044d409d9a1f3ad8f36c3c452775d557e18bbeb2e8dfcead32d514024"),
            ]),
        Vector(
            source: "snow", pattern: .ik,
            prologue: "5468657265206973206e6f20726967687420616e642077726f6e672e2054686572652773206f6e6c792066756e20616e6420626f72696e672e",
            psk: nil,
            initStatic: "f49f93c5112c0787acc808d61716d7e090e076a58f15a3f78d92773f8dcb473b",
            initEphemeral: "dae68498c41315cff7e4a34dded8d973199d8f0cf3fcb8b6651c169de77de8be",
            initRemoteStatic: "2ea5942829bac414e25aa4cbb1bcc43394816ebb1bd12550d7d0eb4415e42951",
            respStatic: "b790546f98b1e933c48cd01f17e7b281469d46fcacc9a3b584ae65b1d6272e8e",
            respEphemeral: "c0875a5b59c8492bd2135e5432d7d484f938e0a1f5009428c4bcb70b2f69f69f",
            handshakeHash: nil,
            messages: [
                ("95a8f51c435a9530ff1f30868ed7b23ec952eb513c26a0774fed82d2978a8c81", "6d21fec9141f3f37cc464e936a48b2d9521b5a44e0f3d960895d3c3fba30282f731f445c25e898e2534ac0536715b24308c108fc46bd260c887b36c3f68e3a05654fc8295c068ed53fb2022560961224e0b10b0835e1efc82fc587cd50f7178fe3d9eb06e0351c6e7334162c10bed670bfa2a105f7b2768a140b3fd597782601"),
                ("b866b807a6d8b83182b884dbfedc861843c5082bd6e480cb54e4245a72083041", "e64e1fb8701c4f4bc3850b255fea657d4d835338b059c89acc99628fbe52473b41a4e79e3c1e6abc46bf80f078a005e15d8a3e04f989af3e6cb99b52031165006163ac3e17b928af8c116009d7bf4fb2"),
                ("e3a4937faef391028f759758b428b57652e0069a8dee64dfed01b60846938740", "2bebe19102169cdfe79cf41e38930bfd20a5b2fc78ccf33e853ddd939c0983174656eb27b61464a607762848892ca1c0"),
                ("693972f27b0cb98aeac1fb54d782125431e7540e0cb2fa882cf51a8184d724fd", "c7c56da33b45d12f4754e17978bd49999c9c8f51d00db460f902aba2e6e245d0c46662f507915de8596f43b1d175f1db"),
            ]),
    ]

    @Test("Handshake and transport messages match the published vectors", arguments: vectors)
    func vector(_ vector: Vector) throws {
        let initiatorStatic = try NoiseKeyPair(privateKey: bytes(hex: vector.initStatic))
        let responderStatic = try NoiseKeyPair(privateKey: bytes(hex: vector.respStatic))
        if let remote = vector.initRemoteStatic { #expect(bytes(hex: remote) == responderStatic.publicKey) }
        let psk = vector.psk.map { SecretBytes(copying: bytes(hex: $0)) }
        var initiator = try HandshakeState(
            pattern: vector.pattern, role: .initiator, localStatic: initiatorStatic, remoteStatic: vector.initRemoteStatic.map { bytes(hex: $0) },
            psk: psk, prologue: bytes(hex: vector.prologue), ephemeral: try NoiseKeyPair(privateKey: bytes(hex: vector.initEphemeral)))
        var responder = try HandshakeState(
            pattern: vector.pattern, role: .responder, localStatic: responderStatic, remoteStatic: nil,
            psk: psk, prologue: bytes(hex: vector.prologue), ephemeral: try NoiseKeyPair(privateKey: bytes(hex: vector.respEphemeral)))

        let handshakeCount = vector.pattern.messageCount
        for (index, (payload, ciphertext)) in vector.messages.prefix(handshakeCount).enumerated() {
            let message: [UInt8]
            let received: [UInt8]
            if index % 2 == 0 {
                message = try initiator.writeMessage(payload: bytes(hex: payload))
                received = try responder.readMessage(message)
            } else {
                message = try responder.writeMessage(payload: bytes(hex: payload))
                received = try initiator.readMessage(message)
            }
            #expect(hexString(message) == ciphertext, "handshake message \(index + 1)")
            #expect(received == bytes(hex: payload))
        }
        #expect(initiator.handshakeHash == responder.handshakeHash)
        if let hash = vector.handshakeHash { #expect(hexString(initiator.handshakeHash) == hash) }
        #expect(responder.remoteStaticKey == initiatorStatic.publicKey)
        #expect(initiator.remoteStaticKey == responderStatic.publicKey)

        var pair = ChannelPair(initiator: try initiator.finish(), responder: try responder.finish())
        for (index, (payload, ciphertext)) in vector.messages.enumerated().dropFirst(handshakeCount) {
            let message: [UInt8]
            let received: [UInt8]
            if index % 2 == 0 {
                message = try pair.initiator.encrypt(bytes(hex: payload))
                received = try pair.responder.decrypt(message)
            } else {
                message = try pair.responder.encrypt(bytes(hex: payload))
                received = try pair.initiator.decrypt(message)
            }
            #expect(hexString(message) == ciphertext, "transport message \(index + 1)")
            #expect(received == bytes(hex: payload))
        }
    }
}
