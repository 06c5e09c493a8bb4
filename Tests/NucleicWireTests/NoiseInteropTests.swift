import Foundation
import Testing
@testable import NucleicWire
import NucleicTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A running `Tests/Peers/noise_peer.py` (the pinned PyPI `noiseprotocol`), spoken to one line at
/// a time over pipes.
final class NoisePeer {
    private let peer: LinePeer

    init(_ arguments: [String]) throws {
        peer = try LinePeer("noise_peer.py", arguments: arguments)
    }

    func send(_ line: String) throws { try peer.send(line) }

    /// The next line; throws with the peer's stderr when it ended instead, or reported an error.
    func receive() throws -> String {
        let line = try peer.receive()
        if line.hasPrefix("error ") { throw PeerFailure("noise_peer.py: \(line) \(peer.stderr())") }
        return line
    }

    /// The hex argument of the next line, which must start with `word`.
    func receive(_ word: String) throws -> [UInt8] {
        let line = try receive()
        guard line.hasPrefix(word + " ") else { throw PeerFailure("expected `\(word) …` from noise_peer.py, got `\(line.prefix(80))`") }
        return bytes(hex: String(line.dropFirst(word.count + 1)))
    }

    /// Asks the peer to quit and waits for it.
    func close() { peer.close(saying: "quit") }
}

/// Interop with an independent Noise implementation: both patterns, both roles, transport messages
/// and frames both ways, rekey. Skipped without the peer, except under `CI=true` where it fails.
@Suite(.serialized, .enabled(if: PeerPython.path != nil || PeerPython.isCI, "NUCLEIC_PEERS_PYTHON is not set: run eval \"$(scripts/peers.sh)\""))
struct NoiseInteropTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let pattern: NoisePattern
        let swiftRole: NoiseRole
        var testDescription: String { "\(pattern.protocolName), Swift as \(swiftRole)" }
    }

    static let cases = NoisePattern.allCases.flatMap { pattern in [NoiseRole.initiator, .responder].map { Case(pattern: pattern, swiftRole: $0) } }

    @Test("Handshake, transport messages, rekey and frames against noiseprotocol", arguments: cases)
    func interop(_ test: Case) throws {
        let swiftKey = NoiseKeyPair.generate()
        let peerKey = NoiseKeyPair.generate()
        let psk = SecretBytes.random(count: 32)
        let pskHex = hexString(psk.withUnsafeBytes { Array($0) })
        let peerRole: NoiseRole = test.swiftRole == .initiator ? .responder : .initiator
        var arguments = ["--pattern", test.pattern.rawValue, "--role", peerRole.rawValue,
                         "--static", hexString(peerKey.withPrivateKeyBytes { Array($0) }), "--fragment", "1000"]
        var remoteStatic: [UInt8]?
        switch test.pattern {
        case .xxpsk3:
            arguments += ["--psk", pskHex]
            // The Swift side pins the peer's key when it is the device (as with the pairing URI).
            if test.swiftRole == .initiator { remoteStatic = peerKey.publicKey }
        case .ik:
            if test.swiftRole == .initiator { remoteStatic = peerKey.publicKey } else { arguments += ["--remote-static", hexString(swiftKey.publicKey)] }
        }
        var handshake = try HandshakeState(pattern: test.pattern, role: test.swiftRole, localStatic: swiftKey, remoteStatic: remoteStatic,
                                           psk: test.pattern.usesPSK ? psk : nil)
        let peer = try NoisePeer(arguments)
        defer { peer.close() }

        var index = 0
        while !handshake.isComplete {
            index += 1
            if handshake.step == .write {
                let payload = Array("swift-\(index)".utf8)
                try peer.send("hs " + hexString(try handshake.writeMessage(payload: payload)))
                #expect(try peer.receive("payload") == payload)
            } else {
                #expect(try handshake.readMessage(try peer.receive("hs")) == Array("py-\(index)".utf8))
            }
        }
        #expect(index == test.pattern.messageCount)
        let ready = try peer.receive().split(separator: " ")
        #expect(ready.count == 3 && ready[0] == "ready")
        #expect(bytes(hex: String(ready[1])) == swiftKey.publicKey)
        #expect(bytes(hex: String(ready[2])) == handshake.handshakeHash)
        var channel = try handshake.finish()
        #expect(channel.remoteStaticKey == peerKey.publicKey)

        // Transport messages both ways, up to the largest.
        for size in [0, 1, 1000, CipherState.maxPlaintextSize - 5] {
            let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            try peer.send("msg " + hexString(try channel.encrypt(message)))
            #expect(try channel.decrypt(try peer.receive("msg")) == Array("echo:".utf8) + message)
            try peer.send("send " + hexString(message))
            #expect(try channel.decrypt(try peer.receive("msg")) == message)
        }

        // Rekey both directions on both sides (spec §11.3), then keep talking.
        try peer.send("rekey")
        #expect(try peer.receive() == "ok")
        channel.sender.rekey()
        channel.receiver.rekey()
        try peer.send("msg " + hexString(try channel.encrypt([1, 2, 3])))
        #expect(try channel.decrypt(try peer.receive("msg")) == Array("echo:".utf8) + [1, 2, 3])

        // Frames: Swift's fragments of at most 65518 bytes one way, the peer's of 1000 the other.
        var codec = channel.frameCodec()
        let messages = [0, 10, 70_000, 200_000].map { size in (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 11) } }
        var stream: [UInt8] = []
        for message in messages { stream += try codec.encoder.encode(message) }
        try peer.send("frames " + hexString(stream))
        codec.decoder.append(try peer.receive("frames"))
        var echoed: [[UInt8]] = []
        while let message = try codec.decoder.next() { echoed.append(message) }
        try codec.decoder.finish()
        #expect(echoed == messages.map { Array("echo:".utf8) + $0 })
    }

    @Test("A peer with another PSK is refused at the third XXpsk3 message")
    func wrongPSK() throws {
        let swiftKey = NoiseKeyPair.generate()
        let peer = try NoisePeer(["--pattern", "XXpsk3", "--role", "initiator", "--static", hexString(NoiseKeyPair.generate().withPrivateKeyBytes { Array($0) }),
                                  "--psk", String(repeating: "ab", count: 32)])
        defer { peer.close() }
        var handshake = try HandshakeState(pattern: .xxpsk3, role: .responder, localStatic: swiftKey,
                                           psk: SecretBytes(copying: [UInt8](repeating: 0xcd, count: 32)))
        _ = try handshake.readMessage(try peer.receive("hs"))
        try peer.send("hs " + hexString(try handshake.writeMessage()))
        _ = try peer.receive("payload")
        let third = try peer.receive("hs")
        #expect(noiseErrorCode { _ = try handshake.readMessage(third) } == .decryptFailed)
    }

    @Test("An IK initiator that pinned another host key is refused")
    func wrongHostKey() throws {
        let swiftKey = NoiseKeyPair.generate()
        let peer = try NoisePeer(["--pattern", "IK", "--role", "initiator", "--static", hexString(NoiseKeyPair.generate().withPrivateKeyBytes { Array($0) }),
                                  "--remote-static", hexString(NoiseKeyPair.generate().publicKey)])
        defer { peer.close() }
        var handshake = try HandshakeState(pattern: .ik, role: .responder, localStatic: swiftKey)
        let first = try peer.receive("hs")
        #expect(noiseErrorCode { _ = try handshake.readMessage(first) } == .decryptFailed)
    }
}
