import Foundation
import NucleicProtocol
import NucleicRuntime
import Testing
@testable import NucleicSync
import NucleicSockets
import NucleicTestSupport

/// An independent Python client (noiseprotocol + cbor2, Tests/Peers/remote_client.py) against the
/// real host core over TCP on 127.0.0.1: pairing through the URI, IK reconnects, the message set,
/// approvals answered from the device, and every refusal.
@Suite(.serialized, .enabled(if: PeerPython.path != nil || PeerPython.isCI, "NUCLEIC_PEERS_PYTHON is not set: run eval \"$(scripts/peers.sh)\""))
struct RemoteInteropTests {
    @Test func aDevicePairsReconnectsSubscribesAndAnswersAnApprovalAndTheAgentProceeds() async throws {
        let rig = try await RemoteRig.make()
        let invite = try await rig.pairing.createInvite(scope: .approve, label: nil, addresses: [])
        #expect(invite.uri.hasPrefix("nucleic://pair?v=1&hk=\(rig.pairing.hostKeyText)&psk="))
        #expect(invite.addresses == ["127.0.0.1:\(rig.port)"])
        let peer = try RemoteClientPeer()
        let key = RemoteClientPeer.randomKey()
        let paired = try await peer.call(["op": "pair", "uri": invite.uri, "static": key, "label": "Ana's phone"])
        let welcome = try #require(paired["welcome"] as? [String: Any])
        #expect(welcome["scope"] as? String == "approve")
        #expect(welcome["protocolVersion"] as? Int == 1)
        #expect(welcome["hostName"] as? String == LocalServer.machineName())
        let deviceID = try #require(welcome["deviceID"] as? String)
        let devices = try await rig.pairing.devices(includeRevoked: false)
        #expect(devices.map(\.deviceID.rawValue) == [deviceID])
        #expect(devices.first?.label == "Ana's phone")
        #expect(devices.first?.scope == .approve)

        let session = try await rig.startSession()
        // Reconnect with IK: the pinned host key, the device's static key.
        let connected = try await peer.call(rig.connectArguments(key))
        #expect((connected["welcome"] as? [String: Any])?["deviceID"] as? String == deviceID)
        try await peer.send(["type": "listSessions", "requestID": 2])
        let list = try await peer.until("sessionList")
        #expect(list["requestID"] as? Int == 2)
        #expect((list["sessions"] as? [[String: Any]])?.contains { $0["sessionID"] as? String == session.sessionID.rawValue } == true)

        try await peer.send(["type": "subscribe", "sessionID": session.sessionID.rawValue, "verbosity": "full", "requestID": 3])
        let snapshot = try await peer.until("snapshot")
        #expect(snapshot["requestID"] as? Int == 3)
        let approval: [String: Any]
        if let pending = (snapshot["pendingApprovals"] as? [[String: Any]])?.first {
            approval = pending
        } else {
            approval = try #require(try await peer.until("approvalRequested")["approval"] as? [String: Any])
        }
        let approvalID = try #require(approval["id"] as? String)
        #expect(approval["toolName"] as? String == "Bash")

        try await peer.send(["type": "approvalRespond", "approvalID": approvalID, "decision": ["type": "allow"], "requestID": 4])
        let resolved = try await peer.until("approvalResolved")
        #expect(resolved["approvalID"] as? String == approvalID)
        #expect(resolved["decidedBy"] as? String == "device:\(deviceID)")
        #expect(resolved["decidedByLabel"] as? String == "Ana's phone")
        // The agent proceeds: the tool completes and the run finishes, seen live by the device.
        var sawFinish = false
        var lastSeq = 0
        while !sawFinish {
            let batch = try await peer.until("events")
            for event in batch["events"] as? [[String: Any]] ?? [] {
                let seq = event["seq"] as? Int ?? 0
                #expect(seq > lastSeq, "events arrive in seq order without duplicates")
                lastSeq = max(lastSeq, seq)
                if event["kind"] as? String == "runFinished" { sawFinish = true }
            }
        }
        // A warm resubscribe from seq 0 gets every event again, gap-free, from the transcript.
        try await peer.send(["type": "subscribe", "sessionID": session.sessionID.rawValue, "sinceSeq": 0, "requestID": 5])
        let replay = try await peer.until("events", match: ["requestID": 5])
        let seqs = (replay["events"] as? [[String: Any]] ?? []).compactMap { $0["seq"] as? Int }
        #expect(seqs == Array(1...seqs.count) && seqs.count >= lastSeq)
        await peer.close()
        await rig.stop()
    }

    @Test func anInviteIsSingleUseAReplacedInviteFailsAndAKeyPairsOnce() async throws {
        let rig = try await RemoteRig.make()
        let invite = try await rig.pairing.createInvite(scope: .view, label: "tablet", addresses: [])
        let first = try RemoteClientPeer()
        let welcome = try #require(try await first.call(["op": "pair", "uri": invite.uri, "static": RemoteClientPeer.randomKey()])["welcome"] as? [String: Any])
        #expect(welcome["scope"] as? String == "view")
        #expect(try await rig.pairing.devices(includeRevoked: false).first?.label == "tablet")
        // The same URI again: no invite is pending, the host closes during the handshake.
        let second = try RemoteClientPeer()
        let again = try await second.call(["op": "pair", "uri": invite.uri, "static": RemoteClientPeer.randomKey()])
        #expect(again["closed"] as? Bool == true)
        #expect(try await rig.pairing.devices(includeRevoked: false).count == 1)
        // A replaced invite: its PSK no longer matches the one the host offers; the handshake
        // fails at message 3 and nothing is stored. The new invite works.
        let old = try await rig.pairing.createInvite(scope: .approve, label: nil, addresses: [])
        let new = try await rig.pairing.createInvite(scope: .approve, label: nil, addresses: [])
        #expect(try await second.call(["op": "pair", "uri": old.uri, "static": RemoteClientPeer.randomKey()])["closed"] as? Bool == true)
        #expect(try await rig.pairing.devices(includeRevoked: false).count == 1)
        #expect(try await second.call(["op": "pair", "uri": new.uri, "static": RemoteClientPeer.randomKey()])["welcome"] != nil)
        #expect(try await rig.pairing.devices(includeRevoked: false).count == 2)
        // A key already paired cannot pair again (a re-pairing device makes a new key).
        let third = try await rig.pairing.createInvite(scope: .control, label: nil, addresses: [])
        let key = RemoteClientPeer.randomKey()
        _ = try await second.call(["op": "pair", "uri": third.uri, "static": key])
        let twice = try await rig.pairing.createInvite(scope: .control, label: nil, addresses: [])
        let refused = try await second.call(["op": "pair", "uri": twice.uri, "static": key])
        #expect((refused["message"] as? [String: Any])?["code"] as? String == "conflict")
        #expect(try await rig.pairing.devices(includeRevoked: false).count == 3)
        await first.close()
        await second.close()
        await rig.stop()
    }

    @Test func aTamperedFrameClosesTheConnection() async throws {
        let rig = try await RemoteRig.make()
        let (peer, _, _) = try await rig.pairedPeer(scope: .approve, label: "phone")
        _ = try await peer.call(["op": "tamper", "message": ["type": "ping", "requestID": 9]])
        let answer = try await peer.call(["op": "closed"])
        #expect(answer["closed"] as? Bool == true)
        #expect((answer["messages"] as? [Any])?.isEmpty == true, "nothing is answered to a tampered frame")
        await peer.close()
        await rig.stop()
    }

    @Test func aReplayedFrameClosesTheConnection() async throws {
        let rig = try await RemoteRig.make()
        let (peer, _, _) = try await rig.pairedPeer(scope: .approve, label: "phone")
        try await peer.send(["type": "ping", "requestID": 1])
        #expect(try await peer.until("pong")["requestID"] as? Int == 1)
        _ = try await peer.call(["op": "replay"])
        let answer = try await peer.call(["op": "closed"])
        #expect(answer["closed"] as? Bool == true)
        #expect((answer["messages"] as? [Any])?.isEmpty == true, "the replayed ping is not answered")
        await peer.close()
        await rig.stop()
    }

    @Test func anUnknownKeyGetsUnauthorizedAfterTheHandshake() async throws {
        let rig = try await RemoteRig.make()
        let peer = try RemoteClientPeer()
        let answer = try await peer.call(rig.connectArguments(RemoteClientPeer.randomKey()))
        let message = try #require(answer["message"] as? [String: Any])
        #expect(message["type"] as? String == "error")
        #expect(message["code"] as? String == "unauthorized")
        #expect(try await peer.call(["op": "closed"])["closed"] as? Bool == true)
        await peer.close()
        await rig.stop()
    }

    @Test func aRevokedDeviceIsClosedAtOnceAndRefusedOnItsNextHandshake() async throws {
        let rig = try await RemoteRig.make()
        let (peer, deviceID, key) = try await rig.pairedPeer(scope: .approve, label: "lost phone")
        try await peer.send(["type": "ping", "requestID": 1])
        _ = try await peer.until("pong")
        #expect(try await rig.pairing.devices(includeRevoked: false).first?.connections == 1)
        let revoked = try await rig.pairing.revoke(String(deviceID.prefix(12)))
        #expect(revoked.revokedAt != nil)
        #expect(try await peer.call(["op": "closed"])["closed"] as? Bool == true)
        let again = try await peer.call(rig.connectArguments(key))
        #expect((again["message"] as? [String: Any])?["code"] as? String == "unauthorized")
        #expect(try await rig.pairing.devices(includeRevoked: false).isEmpty)
        #expect(try await rig.pairing.devices(includeRevoked: true).count == 1)
        await peer.close()
        await rig.stop()
    }

    @Test func aViewDeviceCannotApprove() async throws {
        let rig = try await RemoteRig.make()
        let (peer, _, _) = try await rig.pairedPeer(scope: .view, label: "watch")
        let session = try await rig.startSession()
        try await peer.send(["type": "subscribe", "sessionID": session.sessionID.rawValue, "requestID": 1])
        let snapshot = try await peer.until("snapshot")
        let approval: [String: Any]
        if let pending = (snapshot["pendingApprovals"] as? [[String: Any]])?.first { approval = pending } else {
            approval = try #require(try await peer.until("approvalRequested")["approval"] as? [String: Any])
        }
        let approvalID = try #require(approval["id"] as? String)
        try await peer.send(["type": "approvalRespond", "approvalID": approvalID, "decision": ["type": "allow"], "requestID": 2])
        let refused = try await peer.until("error", match: ["requestID": 2])
        #expect(refused["code"] as? String == "forbidden")
        try await peer.send(["type": "interrupt", "sessionID": session.sessionID.rawValue, "requestID": 3])
        #expect(try await peer.until("error", match: ["requestID": 3])["code"] as? String == "forbidden")
        // Nothing changed: the approval is still pending.
        #expect(try await rig.host.pendingApprovals().map(\.id.rawValue) == [approvalID])
        await peer.close()
        await rig.stop()
    }

    @Test func twoDevicesRaceOnOneApprovalAndBothSeeTheWinner() async throws {
        let rig = try await RemoteRig.make()
        let (a, idA, _) = try await rig.pairedPeer(scope: .approve, label: "A")
        let (b, idB, _) = try await rig.pairedPeer(scope: .approve, label: "B")
        let session = try await rig.startSession()
        var approvalID = ""
        for peer in [a, b] {
            try await peer.send(["type": "subscribe", "sessionID": session.sessionID.rawValue, "requestID": 1])
            let snapshot = try await peer.until("snapshot")
            if let pending = (snapshot["pendingApprovals"] as? [[String: Any]])?.first {
                approvalID = pending["id"] as? String ?? ""
            } else {
                approvalID = try await peer.until("approvalRequested")["approval"].flatMap { ($0 as? [String: Any])?["id"] as? String } ?? ""
            }
        }
        let respond: [String: Any] = ["type": "approvalRespond", "approvalID": approvalID, "decision": ["type": "allow"], "requestID": 7]
        // Both answers are on the wire before either reply is read.
        try await a.send(respond)
        try await b.send(respond)
        var outcomes: [String: String] = [:]
        var winners: [String] = []
        for (peer, id) in [(a, idA), (b, idB)] {
            var reply: [String: Any]?
            var resolved: [String: Any]?
            while reply == nil || resolved == nil {
                let message = try await peer.message(["op": "next"])
                if message["requestID"] as? Int == 7 { reply = message }
                if message["type"] as? String == "approvalResolved" { resolved = message }
            }
            outcomes[id] = reply!["type"] as? String == "ok" ? "ok" : reply!["code"] as? String ?? "?"
            winners.append(resolved!["decidedBy"] as? String ?? "")
        }
        #expect(outcomes.values.sorted() == ["alreadyResolved", "ok"])
        let winner = outcomes.first { $0.value == "ok" }!.key
        #expect(winners == ["device:\(winner)", "device:\(winner)"])
        await a.close()
        await b.close()
        await rig.stop()
    }

    @Test func theFirstMessageMustBeHelloWithTheRightVersion() async throws {
        let rig = try await RemoteRig.make()
        let (peer, _, key) = try await rig.pairedPeer(scope: .approve, label: "phone")
        var arguments = rig.connectArguments(key)
        arguments["hello"] = false
        _ = try await peer.call(arguments)
        try await peer.send(["type": "ping"])
        let refused = try await peer.message(["op": "next"])
        #expect(refused["code"] as? String == "badMessage")
        #expect(try await peer.call(["op": "closed"])["closed"] as? Bool == true)

        _ = try await peer.call(arguments)
        try await peer.send(["type": "hello", "protocolVersion": 2, "client": "future"])
        #expect(try await peer.message(["op": "next"])["code"] as? String == "protocolVersion")
        #expect(try await peer.call(["op": "closed"])["closed"] as? Bool == true)
        await peer.close()
        await rig.stop()
    }

    @Test func aSilentConnectionIsClosedAtTheHandshakeTimeout() async throws {
        let rig = try await RemoteRig.make(options: RemoteServer.Options(handshakeTimeout: .milliseconds(200)))
        let tcp = try TCPConnection.connect(host: "127.0.0.1", port: rig.port)
        #expect(await tcp.read() == nil, "the host closes a connection that never handshakes")
        // A first message of neither pattern's length is refused at once.
        let other = try TCPConnection.connect(host: "127.0.0.1", port: rig.port)
        try other.enqueue([0, 50] + [UInt8](repeating: 7, count: 50))
        #expect(await other.read() == nil)
        await rig.stop()
    }
}

/// A client that stops reading: bounded queue, `backpressure`, disconnect, resume with sinceSeq.
@Suite(.serialized, .enabled(if: PeerPython.path != nil || PeerPython.isCI, "NUCLEIC_PEERS_PYTHON is not set: run eval \"$(scripts/peers.sh)\""))
struct RemoteBackpressureTests {
    @Test func aClientThatDoesNotReadGetsBackpressureAndResumesWithSinceSeq() async throws {
        // Small kernel buffers both ways, so the host's own 64 KiB queue is what fills.
        let rig = try await RemoteRig.make(options: RemoteServer.Options(maxQueuedBytes: 64 * 1024), sendBufferSize: 4096)
        let (peer, _, key) = try await rig.pairedPeer(scope: .approve, label: "slow")
        let session = try await rig.startSession("claude/partial.jsonl")
        // Wait until the session has finished (its whole transcript exists).
        var updates = await rig.host.listen().makeAsyncIterator()
        while try await rig.host.summary(session.sessionID).status != .finished { _ = await updates.next() }
        var arguments = rig.connectArguments(key)
        arguments["rcvbuf"] = 4096
        _ = try await peer.call(arguments)
        let subscribe: [String: Any] = ["type": "subscribe", "sessionID": session.sessionID.rawValue, "sinceSeq": 0]
        _ = try await peer.call(["op": "stall", "count": 100, "message": subscribe])
        // The client reads nothing until the host has found its queue over the limit.
        while rig.remote.backpressureDisconnects == 0 { try await Task.sleep(for: .milliseconds(10)) }
        let answer = try await peer.call(["op": "closed"])
        #expect(answer["closed"] as? Bool == true)
        let messages = answer["messages"] as? [[String: Any]] ?? []
        #expect(messages.count < 100, "the host stopped before answering everything")
        #expect(messages.last?["type"] as? String == "error")
        #expect(messages.last?["code"] as? String == "backpressure")
        // Everything before the error is whole, decrypted in order: the replies, and the session
        // updates every client hears.
        #expect(messages.dropLast().allSatisfy { ["events", "sessionUpdated"].contains($0["type"] as? String ?? "") })
        // The client resumes: a new connection and a warm subscribe get the events after its seq.
        _ = try await peer.call(rig.connectArguments(key))
        try await peer.send(["type": "subscribe", "sessionID": session.sessionID.rawValue, "sinceSeq": 2, "requestID": 1])
        let resumed = try await peer.until("events", match: ["requestID": 1])
        let seqs = (resumed["events"] as? [[String: Any]] ?? []).compactMap { $0["seq"] as? Int }
        #expect(seqs.first == 3 && seqs == Array(3..<(3 + seqs.count)))
        await peer.close()
        await rig.stop()
    }
}
