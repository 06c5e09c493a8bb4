import Foundation
import NucleicNotify
import NucleicProtocol
import NucleicSockets
import NucleicTestSupport
import Testing
@testable import NucleicSync

/// Push registration over the Noise channel, driven by the independent Python client
/// (Tests/Peers/remote_client.py): a paired `view` device registers, replaces and removes its
/// push channel; bad registrations are refused and change nothing; revoking the device deletes
/// its registration; a provider's 404 or 410 (the local push service, Tests/Peers/push_service.py)
/// deletes it too. The rig's server answers with a real NotifierService whose registrations are
/// in `notify/push.json`.
@Suite(.serialized, .timeLimit(.minutes(3)),
       .enabled(if: (PeerPython.path != nil && PushServicePeer.python != nil) || PeerPython.isCI,
                "needs NUCLEIC_PEERS_PYTHON and NUCLEIC_PUSH_PYTHON: run eval \"$(scripts/peers.sh)\""))
struct PushRegistrationTests {
    /// A rig whose server has a notifier with Web Push (a fresh VAPID key) and its registrations
    /// in `<home>/notify/push.json`, run over the rig's host (no desktop, no further channels).
    final class Rig: @unchecked Sendable {  // set once in init
        let rig: RemoteRig
        let notifier: NotifierService
        let vapid: VAPID
        let registry: String
        private let presence: AsyncStream<NotifierService.Input>.Continuation
        private let running: Task<Void, Never>

        init(graceMilliseconds: Int64 = 60_000) async throws {
            let vapid = VAPID(key: try P256Key.generate(), subject: "mailto:ops@shop.example")
            var made: NotifierService?
            var registry = ""
            rig = try await RemoteRig.make { home in
                registry = home + "/notify/push.json"
                let notifier = NotifierService(settings: NotifierSettings(graceMilliseconds: graceMilliseconds), channels: [],
                                               statePath: home + "/notify/alerts.json",
                                               push: PushProviders(vapid: vapid, registryPath: registry))
                made = notifier
                return notifier
            }
            notifier = made!
            self.vapid = vapid
            self.registry = registry
            let (stream, continuation) = AsyncStream.makeStream(of: NotifierService.Input.self)
            presence = continuation
            let notifier = self.notifier, host = rig.host
            running = Task { await notifier.run(host: host, presence: stream) }
        }

        /// The registrations as saved: device id → (provider, endpoint).
        func saved() throws -> [String: [String: String]] {
            guard let data = FileManager.default.contents(atPath: registry) else { return [:] }
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
            var out: [String: [String: String]] = [:]
            for entry in object["registrations"] as? [[String: Any]] ?? [] {
                guard let id = entry["deviceID"] as? String else { continue }
                out[id] = entry.compactMapValues { $0 as? String }.filter { $0.key != "deviceID" }
            }
            return out
        }

        func deviceChannels() async -> [String] {
            await notifier.channelStatus().map(\.channel).filter { $0.hasPrefix("device:") }
        }

        func stop() async {
            await notifier.shutdown()
            presence.finish()
            await running.value
            await rig.stop()
        }
    }

    static func webPush(_ peer: PushServicePeer, _ path: String, requestID: Int) -> [String: Any] {
        ["type": "registerPush", "provider": "webPush", "endpoint": peer.base + path, "p256dh": peer.p256dh, "auth": peer.auth,
         "requestID": requestID]
    }

    /// Sends `message` and reads until the reply with its `requestID`.
    static func ask(_ peer: RemoteClientPeer, _ message: [String: Any]) async throws -> [String: Any] {
        try await peer.send(message)
        let requestID = message["requestID"] as! Int
        while true {
            let m = try await peer.message(["op": "next"])
            if m["requestID"] as? Int == requestID { return m }
        }
    }

    @Test func aViewDeviceRegistersReplacesAndRemovesItsPushChannel() async throws {
        let push = try PushServicePeer()
        defer { push.stop() }
        let r = try await Rig()
        let (peer, deviceID, _) = try await r.rig.pairedPeer(scope: .view, label: "Ana's phone")

        var info = try await Self.ask(peer, ["type": "pushInfo", "requestID": 2])
        #expect(info["type"] as? String == "pushInfo" && info["providers"] as? [String] == ["webPush"], "\(info)")
        #expect(info["webPushKey"] as? String == r.vapid.publicKeyText && info["registered"] == nil, "\(info)")

        var reply = try await Self.ask(peer, Self.webPush(push, "/push/a", requestID: 3))
        #expect(reply["type"] as? String == "ok", "\(reply)")
        #expect(try r.saved() == [deviceID: ["provider": "webPush", "endpoint": push.base + "/push/a", "p256dh": push.p256dh, "auth": push.auth]])
        #expect(await r.deviceChannels() == ["device:\(deviceID)"])
        info = try await Self.ask(peer, ["type": "pushInfo", "requestID": 4])
        #expect(info["registered"] as? String == "webPush", "\(info)")

        // A second registration replaces the first: still one channel, the new endpoint.
        reply = try await Self.ask(peer, Self.webPush(push, "/push/b", requestID: 5))
        #expect(reply["type"] as? String == "ok", "\(reply)")
        #expect(try r.saved()[deviceID]?["endpoint"] == push.base + "/push/b" && (try r.saved()).count == 1)
        #expect(await r.deviceChannels() == ["device:\(deviceID)"])

        // What the host cannot use is refused with a clear error, and the registration stays.
        var bad = Self.webPush(push, "/push/c", requestID: 6)
        bad["endpoint"] = "ftp://push.example/c"
        var refused = try await Self.ask(peer, bad)
        #expect(refused["type"] as? String == "error" && refused["code"] as? String == "badMessage", "\(refused)")
        bad["endpoint"] = push.base + "/push/c"
        bad["requestID"] = 7
        bad["p256dh"] = "AAAA"
        refused = try await Self.ask(peer, bad)
        #expect(refused["code"] as? String == "badMessage", "a key that is not a P-256 point: \(refused)")
        bad["auth"] = nil
        bad["requestID"] = 8
        refused = try await Self.ask(peer, bad)
        #expect(refused["code"] as? String == "badMessage" && (refused["message"] as? String)?.contains("auth") == true, "\(refused)")
        refused = try await Self.ask(peer, ["type": "registerPush", "provider": "pager", "token": "x", "requestID": 9])
        #expect(refused["code"] as? String == "badMessage" && (refused["message"] as? String)?.contains("pager") == true, "\(refused)")
        refused = try await Self.ask(peer, ["type": "registerPush", "provider": "apns", "token": "ab12", "requestID": 10])
        #expect(refused["code"] as? String == "unsupported", "this host has no APNs key: \(refused)")
        #expect(try r.saved()[deviceID]?["endpoint"] == push.base + "/push/b" && (try r.saved()).count == 1)

        // The local CLI is no device: it has no push channel to register.
        let local = try UnixClient.connect(path: r.rig.root + "/s.sock")
        try await local.send(WireMessages.encode(ClientMsg(.registerPush(.webPush(endpoint: push.base + "/x", p256dh: push.p256dh, auth: push.auth)),
                                                           requestID: 1)))
        var frames = local.frames.makeAsyncIterator()
        var answer: HostMsg?
        while let frame = await frames.next() {
            let m = try WireMessages.decodeHost(frame)
            if m.requestID == 1 { answer = m; break }
        }
        guard case .error(let code, let message, _)? = answer?.body else { Issue.record("no error: \(String(describing: answer))"); return }
        #expect(code == .unsupported && message.contains("paired device"), "\(message)")
        local.close()

        reply = try await Self.ask(peer, ["type": "unregisterPush", "requestID": 11])
        #expect(reply["type"] as? String == "ok", "\(reply)")
        let channelsLeft = await r.deviceChannels()
        #expect(try r.saved().isEmpty && channelsLeft.isEmpty)
        info = try await Self.ask(peer, ["type": "pushInfo", "requestID": 12])
        #expect(info["registered"] == nil, "\(info)")
        // Removing what is not there is no error.
        reply = try await Self.ask(peer, ["type": "unregisterPush", "requestID": 13])
        #expect(reply["type"] as? String == "ok", "\(reply)")
        #expect(try push.requests().isEmpty, "registering sends nothing")
        await peer.close()
        await r.stop()
    }

    @Test func revokingADeviceDeletesItsPushChannelAndARestartKeepsTheOthers() async throws {
        let push = try PushServicePeer()
        defer { push.stop() }
        let r = try await Rig()
        let (ana, anaID, _) = try await r.rig.pairedPeer(scope: .view, label: "Ana's phone")
        let (ben, benID, _) = try await r.rig.pairedPeer(scope: .approve, label: "Ben's tablet")
        #expect(try await Self.ask(ana, Self.webPush(push, "/push/ana", requestID: 2))["type"] as? String == "ok")
        #expect(try await Self.ask(ben, Self.webPush(push, "/push/ben", requestID: 2))["type"] as? String == "ok")
        #expect(Set(try r.saved().keys) == [anaID, benID])

        let local = try UnixClient.connect(path: r.rig.root + "/s.sock")
        try await local.send(WireMessages.encode(ClientMsg(.revokeDevice(device: anaID), requestID: 1)))
        var frames = local.frames.makeAsyncIterator()
        while let frame = await frames.next(), try WireMessages.decodeHost(frame).requestID != 1 {}
        local.close()
        #expect(try await ana.call(["op": "closed"])["closed"] as? Bool == true)
        #expect(Set(try r.saved().keys) == [benID], "the revoked device's registration is deleted")
        #expect(await r.deviceChannels() == ["device:\(benID)"])
        await ben.close()
        await r.notifier.shutdown()

        // A notifier started on the same file has Ben's channel, and only his.
        let again = NotifierService(settings: NotifierSettings(), channels: [], statePath: nil,
                                    push: PushProviders(vapid: r.vapid, registryPath: r.registry))
        #expect(await again.channelStatus().map(\.channel) == ["device:\(benID)"])
        let restored = await again.pushInfo(device: DeviceID(benID))
        #expect(restored.registered == .webPush, "\(restored)")
        await r.stop()
    }

    @Test func aProvidersGoneAnswerDeletesTheRegistrationAndTheOthersGetExactlyThePayload() async throws {
        let push = try PushServicePeer()
        defer { push.stop() }
        let r = try await Rig(graceMilliseconds: 200)
        let (kept, keptID, _) = try await r.rig.pairedPeer(scope: .view, label: "kept")
        let (gone, goneID, _) = try await r.rig.pairedPeer(scope: .view, label: "gone")
        let (missing, missingID, _) = try await r.rig.pairedPeer(scope: .view, label: "missing")
        #expect(try await Self.ask(kept, Self.webPush(push, "/push/kept", requestID: 2))["type"] as? String == "ok")
        #expect(try await Self.ask(gone, Self.webPush(push, "/gone", requestID: 2))["type"] as? String == "ok")
        #expect(try await Self.ask(missing, Self.webPush(push, "/missing", requestID: 2))["type"] as? String == "ok")
        #expect(Set(try r.saved().keys) == [keptID, goneID, missingID])

        // A prompt that names nothing of the tool input, so none of it can reach a payload's title.
        _ = try await r.rig.host.addProject(path: r.rig.repo, name: nil)
        let session = try await r.rig.host.startSession(.init(prompt: "Make the greeting file", backend: "replay",
                                                              fixture: Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path))
        let requests = try await push.waitForRequests(3)
        #expect(Set(requests.compactMap { $0["path"] as? String }) == ["/push/kept", "/gone", "/missing"], "\(requests); \(push.diagnosis)")
        for _ in 0..<100 where (try r.saved()).count != 1 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(Set(try r.saved().keys) == [keptID], "410 and 404 delete the registration")
        #expect(await r.deviceChannels() == ["device:\(keptID)"])
        let info = try await Self.ask(gone, ["type": "pushInfo", "requestID": 3])
        #expect(info["registered"] == nil, "\(info)")

        // What the kept device got: exactly the allowed fields, no tool input.
        let shown = try #require(requests.first { $0["path"] as? String == "/push/kept" })
        #expect(shown["vapidValid"] as? Bool == true && shown["problems"] as? [String] == [], "\(shown)")
        let plaintext = try #require(shown["plaintext"] as? String)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(plaintext.utf8)) as? [String: Any])
        let approvalID = try #require(body["approvalID"] as? String)
        #expect(Set(body.keys) == ["event", "category", "project", "title", "handle", "reason", "sessionID", "approvalID", "url"], "\(body)")
        #expect(body["event"] as? String == "show" && body["category"] as? String == "needs-you" && body["project"] as? String == "shop")
        #expect(body["sessionID"] as? String == session.sessionID.rawValue && body["url"] as? String == "nucleic://approval/\(approvalID)")
        #expect((body["reason"] as? String)?.hasPrefix("needs approval: Bash, risk ") == true, "\(body)")
        let everything = (try? String(contentsOfFile: push.log, encoding: .utf8)) ?? ""
        for secret in ["echo", "hello.txt"] { #expect(!everything.contains(secret), "no tool input: \(secret)") }
        for p in [kept, gone, missing] { await p.close() }
        await r.stop()
    }

    @Test func thePushMessagesRoundTripThroughCBOR2() async throws {
        let peer = try CBORPeer()
        defer { peer.close() }
        let clients = [ClientMsg(.registerPush(.webPush(endpoint: "https://push.example/a", p256dh: "BPk", auth: "au")), requestID: 1),
                       ClientMsg(.registerPush(.apns(token: String(repeating: "ab", count: 32))), requestID: 2),
                       ClientMsg(.unregisterPush, requestID: 3), ClientMsg(.pushInfo)]
        for message in clients {
            #expect(try WireMessages.decodeClient(try peer.canonical(WireMessages.encode(message))) == message, "\(message.type) via cbor2")
        }
        for message in [HostMsg(.pushInfo(PushInfo(providers: [.webPush, .apns], webPushKey: "BPk", registered: .webPush)), requestID: 4),
                        HostMsg(.pushInfo(PushInfo(providers: [], webPushKey: nil)))] {
            #expect(try WireMessages.decodeHost(try peer.canonical(WireMessages.encode(message))) == message, "\(message.type) via cbor2")
        }
    }
}
