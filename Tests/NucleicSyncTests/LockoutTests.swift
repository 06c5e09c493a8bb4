import Foundation
import NucleicProtocol
import NucleicSockets
import NucleicWire
import Testing
@testable import NucleicSync
import NucleicTestSupport

/// A LAN peer holding connections open without a word cannot lock paired devices out: pending
/// handshakes have a budget of their own, per address, and the newest pushes out the oldest.
@Suite(.serialized) struct LockoutTests {
    /// Tries `attempt` as a real client reconnects (the kit backs off the same way), up to 40
    /// times: an address out of attempt tokens is refused until they refill.
    func retrying<T>(_ attempt: () async throws -> T) async throws -> T {
        var last: (any Error)?
        for round in 0..<40 {
            do { return try await attempt() } catch { last = error }
            try await Task.sleep(for: .milliseconds(50 * min(round + 1, 8)))
        }
        throw last!
    }

    @Test func twoHundredSilentConnectionsDoNotKeepADeviceOut() async throws {
        try await RemoteRig.with { rig in
            // The device pairs first, as it would have before the attack.
            let invite = try await rig.pairing.createInvite(scope: .approve, label: nil, addresses: [])
            let device = NoiseKeyPair.generate()
            let paired = try await SwiftClient.pair(uri: invite.uri, deviceKey: device)
            guard case .welcome = try await paired.hello().body else { Issue.record("no welcome when pairing"); return }
            paired.close()
            // 200 connections from the same loopback address say nothing (the handshake timeout,
            // 30 s, would end them long after this test is done).
            var silent: [TCPConnection] = []
            for _ in 0..<200 {
                if let connection = try? TCPConnection.connect(host: "127.0.0.1", port: rig.port) { silent.append(connection) }
            }
            defer { for connection in silent { connection.close() } }
            #expect(silent.count == 200)
            // The paired device connects and is served.
            let client = try await retrying { () async throws -> SwiftClient in
                let client = try await SwiftClient.connect(port: rig.port, hostKey: rig.pairing.hostKey.publicKey, deviceKey: device)
                guard case .welcome = try await client.hello().body else {
                    client.close()
                    throw PeerFailure("not welcomed")
                }
                return client
            }
            try await client.send(ClientMsg(.ping, requestID: 2))
            #expect(try await client.until { $0.requestID == 2 }.body == .pong)
            client.close()
            // Beyond its pending budget, the attacker's connections were refused or pushed out.
            var closed = 0
            for connection in silent {
                let ended = await withTaskGroup(of: Bool.self) { group in
                    group.addTask { _ = await connection.ended(); return true }
                    group.addTask { try? await Task.sleep(for: .seconds(2)); return false }
                    let first = await group.next()!
                    group.cancelAll()
                    return first
                }
                if ended { closed += 1 }
            }
            #expect(closed >= 200 - RemoteServer.Options().maxPendingHandshakesPerAddress, "\(closed) of 200 were closed")
        }
    }
}
