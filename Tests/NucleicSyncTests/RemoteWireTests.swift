import Foundation
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import NucleicWire
import Testing
@testable import NucleicSync
import NucleicSockets

/// The host's wire, byte level: every message type round-trips through cbor2;
/// handshakes and frames written to the host byte by byte and in random chunks; random bytes at
/// every stage never crash it.
@Suite(.serialized) struct RemoteWireTests {
    static let addedMessages: [ClientMsg] = [
        ClientMsg(.hello(protocolVersion: 1, client: "phone", label: "Ana's iPhone ✓"), requestID: 1),
        ClientMsg(.createInvite(scope: .view, label: "kitchen tablet", addresses: ["127.0.0.1:7420", "[::1]:7420"]), requestID: 2),
        ClientMsg(.createInvite(scope: .control, label: nil, addresses: [])),
        ClientMsg(.listDevices(includeRevoked: true), requestID: 3),
        ClientMsg(.revokeDevice(device: "01a2")),
    ]

    static let addedHostMessages: [HostMsg] = [
        HostMsg(.welcome(protocolVersion: 1, scope: .approve, hostName: "mac", hostVersion: "0.1", deviceID: DeviceID("01a22c53-03a9-7821-a960-bc307994ea64")), requestID: 1),
        HostMsg(.welcome(protocolVersion: 1, scope: .control, hostName: "mac", hostVersion: "0.1")),
        HostMsg(.invite(Invite(uri: "nucleic://pair?v=1&hk=AA&psk=BB&addr=127.0.0.1:1&name=x", hostKey: "AA", addresses: ["127.0.0.1:1"],
                               scope: .approve, label: "p", expiresAt: Timestamp(millisecondsSince1970: 1_800_000_000_123))), requestID: 2),
        HostMsg(.deviceList([
            DeviceInfo(deviceID: DeviceID("01a22c53-03a9-7821-a960-bc307994ea64"), label: "Ana", scope: .view, publicKey: "k",
                       createdAt: Timestamp(millisecondsSince1970: 1_800_000_000_000), revokedAt: Timestamp(millisecondsSince1970: 1_800_000_100_000), connections: 0),
            DeviceInfo(deviceID: DeviceID("01a22c53-03a9-7821-a960-bc307994ea65"), label: "Bo", scope: .control, publicKey: "k2",
                       createdAt: Timestamp(millisecondsSince1970: 1_800_000_000_000), revokedAt: nil, connections: 2),
        ])),
        HostMsg(.deviceList([])),
        HostMsg(.error(code: .backpressure, message: "read faster", sessionID: nil)),
    ]

    @Test(.enabled(if: PeerPython.path != nil || PeerPython.isCI)) func everyMessageRoundTripsThroughCBOR2() async throws {
        let peer = try CBORPeer()
        defer { peer.close() }
        for message in MessageExamples.clientMessages + Self.addedMessages {
            let bytes = WireMessages.encode(message)
            let canonical = try peer.canonical(bytes)
            #expect(try WireMessages.decodeClient(canonical) == message, "\(message.type) via cbor2")
            #expect(try WireMessages.decodeClient(bytes) == message)
        }
        for message in MessageExamples.hostMessages + Self.addedHostMessages {
            let bytes = WireMessages.encode(message)
            let canonical = try peer.canonical(bytes)
            #expect(try WireMessages.decodeHost(canonical) == message, "\(message.type) via cbor2")
        }
    }

    @Test func truncatedAndTrailingBytesAreRefused() throws {
        for message in Self.addedMessages {
            let bytes = WireMessages.encode(message)
            for cut in 0..<bytes.count { #expect(throws: ShapeError.self) { try WireMessages.decodeClient(Array(bytes[..<cut])) } }
            #expect(throws: ShapeError.self) { try WireMessages.decodeClient(bytes + [0]) }
        }
    }

    @Test func randomBytesNeverCrashTheMessageDecoders() {
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<5000 {
            let bytes = (0..<Int.random(in: 0..<64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? WireMessages.decodeClient(bytes)
            _ = try? WireMessages.decodeHost(bytes)
        }
        // Mutations of valid messages reach deeper than pure noise.
        for message in Self.addedMessages {
            let valid = WireMessages.encode(message)
            for _ in 0..<500 {
                var bytes = valid
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                _ = try? WireMessages.decodeClient(bytes)
            }
        }
    }

    @Test func theHostReadsHandshakesAndFramesByteByByteAndInRandomChunks() async throws {
        // Byte by byte, each piece awaited: slow on a loaded machine, so a generous handshake timeout.
        let rig = try await RemoteRig.make(options: RemoteServer.Options(handshakeTimeout: .seconds(120)))
        for chunk in [1, 2, 3, 7, 64, 1000] {
            let invite = try await rig.pairing.createInvite(scope: .approve, label: nil, addresses: [])
            let client = try await SwiftClient.pair(uri: invite.uri, chunk: chunk)
            guard case .welcome(_, let scope, _, _, let id) = try await client.hello(label: "chunk \(chunk)").body else {
                Issue.record("no welcome with chunks of \(chunk)"); continue
            }
            #expect(scope == .approve && id != nil)
            // A message larger than one frame (fragments; in pieces of 64 bytes and more, to stay
            // fast), and a few small ones.
            if chunk >= 64 { try await client.send(ClientMsg(.startSession(.init(prompt: String(repeating: "x", count: 150_000), backend: "nope")), requestID: 2))
            let reply = try await client.until { $0.requestID == 2 }
            if case .error(let code, _, _) = reply.body { #expect(code == .forbidden) } else { Issue.record("\(reply)") } }
            for i in 0..<5 {
                try await client.send(ClientMsg(.ping, requestID: Int64(10 + i)))
                #expect(try await client.until { $0.requestID == Int64(10 + i) }.body == .pong)
            }
            client.close()
        }
        await rig.stop()
    }

    @Test func randomBytesAtEveryStageCloseTheConnectionAndTheHostKeepsServing() async throws {
        let rig = try await RemoteRig.make(options: RemoteServer.Options(handshakeTimeout: .seconds(5)))
        let invite = try await rig.pairing.createInvite(scope: .approve, label: nil, addresses: [])
        let device = NoiseKeyPair.generate()
        let paired = try await SwiftClient.pair(uri: invite.uri, deviceKey: device)
        _ = try await paired.hello()
        paired.close()
        var generator = SeededGenerator(seed: 9)
        for round in 0..<30 {
            let noise = (0..<Int.random(in: 1..<300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            switch round % 3 {
            case 0:
                // Instead of a handshake.
                let tcp = try TCPConnection.connect(host: "127.0.0.1", port: rig.port)
                try await tcp.send(noise)
                // EOF after the noise: a partial message is refused at once, not at the timeout.
                tcp.shutdownWriting()
                while await tcp.read() != nil {}
            case 1:
                // A valid IK first message, then noise instead of frames.
                let client = try await SwiftClient.connect(port: rig.port, hostKey: rig.pairing.hostKey.publicKey, deviceKey: device)
                try await client.tcp.send(noise)
                client.tcp.shutdownWriting()
                while (try? await client.next()) != nil {}
            default:
                // After hello, noise inside a well-formed length prefix.
                let client = try await SwiftClient.connect(port: rig.port, hostKey: rig.pairing.hostKey.publicKey, deviceKey: device)
                _ = try await client.hello()
                try await client.tcp.send([UInt8(noise.count >> 8), UInt8(noise.count & 0xff)] + noise)
                client.tcp.shutdownWriting()
                while (try? await client.next()) != nil {}
            }
        }
        // Still serving.
        let client = try await SwiftClient.connect(port: rig.port, hostKey: rig.pairing.hostKey.publicKey, deviceKey: device)
        guard case .welcome = try await client.hello().body else { Issue.record("no welcome after the noise"); return }
        client.close()
        await rig.stop()
    }
}

/// `Tests/Peers/cbor_peer.py` (cbor2): decodes bytes and answers cbor2's own canonical encoding.
final class CBORPeer {
    private let peer: LinePeer

    init() throws { peer = try LinePeer("cbor_peer.py") }

    func canonical(_ bytes: [UInt8]) throws -> [UInt8] {
        try peer.send("decode " + bytes.map { String(format: "%02x", $0) }.joined())
        let line = try peer.receive()
        guard let answer = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], answer["ok"] as? Bool == true,
              let hex = answer["canonical"] as? String else { throw PeerFailure("cbor2 refused: \(line)") }
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    func close() { peer.close() }
}

/// Verbosity over the real channel: a `full` and a `coalesced` subscriber of one streaming session.
@Suite(.serialized) struct RemoteVerbosityTests {
    static func deltas(_ events: [SequencedEvent]) -> String {
        events.map { if case .assistantText(let text, true) = $0.event { text } else { "" } }.joined()
    }

    /// Events until the session's last one (its status becoming finished), from the snapshot on.
    /// Every subscriber stops at the same seq, however its batches were cut.
    static func collect(_ client: SwiftClient) async throws -> [SequencedEvent] {
        var events: [SequencedEvent] = []
        while let message = try await client.next() {
            switch message.body {
            case .snapshot(_, let batch, _, _), .events(_, let batch):
                events += batch
                if batch.contains(where: { if case .statusChanged(.finished, _) = $0.event { true } else { false } }) { return events }
            default: continue
            }
        }
        throw PeerFailure("closed before the session finished")
    }

    @Test func coalescedMergesTheDeltasAFullSubscriberSeesOneByOne() async throws {
        let rig = try await RemoteRig.make()
        var clients: [SwiftClient] = []
        for _ in 0..<3 {
            let invite = try await rig.pairing.createInvite(scope: .view, label: nil, addresses: [])
            let client = try await SwiftClient.pair(uri: invite.uri)
            _ = try await client.hello()
            clients.append(client)
        }
        let session = try await rig.startSession("claude/partial.jsonl")
        for (client, verbosity) in zip(clients, [ClientMsg.Verbosity.full, .coalesced, .statusOnly]) {
            try await client.send(ClientMsg(.subscribe(sessionID: session.sessionID, sinceSeq: 0, verbosity: verbosity)))
        }
        let full = try await Self.collect(clients[0])
        let coalesced = try await Self.collect(clients[1])
        let status = try await Self.collect(clients[2])
        #expect(full.map(\.seq) == Array(1...Int64(full.count)), "full: every seq once, in order")
        #expect(coalesced.map(\.seq) == coalesced.map(\.seq).sorted() && Set(coalesced.map(\.seq)).count == coalesced.count)
        #expect(coalesced.count < full.count, "deltas were merged")
        #expect(Self.deltas(coalesced) == Self.deltas(full), "the merged text is every delta's text")
        // Each coalesced event covers exactly the full events since the one before it: one
        // non-delta event unchanged, or consecutive deltas of one stream merged, carrying the seq
        // of the last. (Where a merged run ends depends on the 150 ms flush: not checked.)
        var previous: Int64 = 0
        for event in coalesced {
            let covered = full.filter { $0.seq > previous && $0.seq <= event.seq }
            previous = event.seq
            guard Coalescer.isDelta(event.event) else {
                #expect(covered == [event])
                continue
            }
            var merged: SequencedEvent? = covered.first
            for next in covered.dropFirst() { merged = merged.flatMap { Coalescer.merge($0, next) } }
            #expect(merged == event, "seq \(event.seq) covers \(covered.count) deltas")
        }
        #expect(status.allSatisfy {
            switch $0.event {
            case .statusChanged, .approvalRequested, .approvalResolved, .approvalWithdrawn, .runFinished: true
            default: false
            }
        })
        for client in clients { client.close() }
        await rig.stop()
    }
}
