import Foundation
import NucleicDaemon
import NucleicNotify
import NucleicProtocol
import NucleicRemoteKit
import NucleicSockets
import NucleicTestSupport
import NucleicWire
import Testing

/// The whole ladder in a daemon run in this process: a phone paired with NucleicRemoteKit over
/// the Noise channel registers a Web Push subscription (the local push service,
/// Tests/Peers/push_service.py); a replay session's approval is shown on the desktop
/// (python-dbusmock) at once and reaches the push service after the grace time, decrypted there
/// by http_ece to exactly the allowed fields; the desktop's Allow answers it as the user.
@Suite(.serialized, .timeLimit(.minutes(3))) struct DaemonPushTests {
    @Test(.enabled(if: PushServicePeer.python != nil || PushServicePeer.isRequired, "needs NUCLEIC_PUSH_PYTHON (scripts/peers.sh)"))
    func anApprovalReachesTheKitsWebPushEndpointAfterTheGraceAndTheDesktopAnswersIt() async throws {
        #expect(DesktopPeer.available, "needs dbus-daemon and python3-dbusmock (scripts/setup.sh)")
        let desktop = try DesktopPeer()
        defer { desktop.stop() }
        let push = try PushServicePeer()
        defer { push.stop() }
        let base = try DaemonTests()
        defer { try? FileManager.default.removeItem(atPath: base.root) }
        let port = try {
            let probe = try TCPListener(host: "127.0.0.1", port: 0)
            defer { probe.close() }
            return probe.port
        }()
        var configuration = base.configuration(listen: .init(host: "127.0.0.1", port: port))
        configuration.host.environment["DBUS_SESSION_BUS_ADDRESS"] = desktop.address
        configuration.host.environment["NUCLEIC_NOTIFY_DESKTOP"] = nil
        configuration.host.environment["NUCLEIC_NOTIFY_GRACE"] = "2"
        configuration.host.environment["NUCLEIC_WEBPUSH_SUBJECT"] = "mailto:ops@shop.example"
        let daemon = Daemon(configuration)
        let running = Task { try await daemon.run() }
        var client = try SocketClient(path: try #require(await daemon.waitUntilServing()))
        _ = try await client.call(.hello(protocolVersion: 1, client: "test"))
        var info = stat()
        #expect(stat(base.home + "/vapid.pem", &info) == 0 && info.st_mode & 0o777 == 0o600, "the VAPID key is made at start, 0600")

        // The phone pairs with view scope and registers its push channel through the kit.
        guard case .invite(let invite) = try await client.call(.createInvite(scope: .view, label: nil, addresses: ["127.0.0.1:\(port)"]))
        else { Issue.record("no invite"); return }
        let identity = NoiseKeyPair.generate()
        let paired = try await Connection.pair(invite: try PairingInvite(invite.uri), identity: identity, label: "Ana's phone",
                                               clientName: "test", dialer: TCPDialer())
        let phone = Connection(host: paired, identity: identity, dialer: TCPDialer())
        await phone.start()
        _ = await phone.waitUntil { $0.connection.isLive }
        guard case .info(let offer) = await phone.pushInfo() else { Issue.record("no push info"); return }
        #expect(offer.providers == [.webPush] && offer.registered == nil, "\(offer)")
        let vapidKey = try #require(offer.webPushKey)
        #expect(await phone.registerPush(.webPush(endpoint: push.base + "/push/ana", p256dh: push.p256dh, auth: push.auth)) == .done)
        guard case .info(let registered) = await phone.pushInfo() else { Issue.record("no push info"); return }
        #expect(registered.registered == .webPush)
        let deviceID = try #require(paired.deviceID)
        #expect(try String(contentsOfFile: base.home + "/notify/push.json", encoding: .utf8).contains(deviceID.rawValue))

        let summary = try await DaemonNotifyTests.startAskingSession(&client, base)
        let notify = try await DaemonNotifyTests.firstNotify(desktop)
        let shownAt = ContinuousClock.now
        #expect(notify != nil, "the desktop first: \(desktop.calls())")
        #expect(try push.requests().isEmpty, "nothing to the phone before the grace")

        let requests = try await push.waitForRequests(1)
        let waited = ContinuousClock.now - shownAt
        try #require(requests.count == 1, "\(requests); \(push.diagnosis)")
        #expect(waited >= .milliseconds(1500), "the devices wait for notify-grace: \(waited)")
        let request = requests[0]
        #expect(request["path"] as? String == "/push/ana" && request["vapidValid"] as? Bool == true && request["problems"] as? [String] == [],
                "\(request)")
        let claims = request["claims"] as? [String: Any] ?? [:]
        #expect(claims["sub"] as? String == "mailto:ops@shop.example" && claims["aud"] as? String == push.base, "\(claims)")
        #expect((request["headers"] as? [String: String])?["Authorization"]?.hasSuffix(",k=\(vapidKey)") == true)
        let body = try #require(try JSONSerialization.jsonObject(with: Data((request["plaintext"] as? String ?? "").utf8)) as? [String: Any])
        let approvalID = try #require(body["approvalID"] as? String)
        #expect(Set(body.keys) == ["event", "category", "project", "title", "handle", "reason", "sessionID", "approvalID", "url"], "\(body)")
        #expect(body["event"] as? String == "show" && body["category"] as? String == "needs-you" && body["project"] as? String == "shop"
                && body["title"] as? String == summary.title && body["handle"] as? String == summary.handle
                && body["sessionID"] as? String == summary.sessionID.rawValue && body["url"] as? String == "nucleic://approval/\(approvalID)",
                "\(body)")
        #expect((body["reason"] as? String)?.hasPrefix("needs approval: Bash, risk ") == true, "\(body)")

        // The desktop's Allow answers it as the user, label "desktop"; the phone's is withdrawn.
        try desktop.invoke(1, "allow")
        let r = try #require(try await DaemonNotifyTests.resolution(of: summary.sessionID, &client))
        #expect(r.approvalID.rawValue == approvalID && r.decision == .allow
                && r.decidedBy == "user:\(ProcessInfo.processInfo.environment["USER"] ?? "uid\(getuid())")" && r.decidedByLabel == "desktop", "\(r)")
        let after = try await push.waitForRequests(2)
        let withdrawn = try JSONSerialization.jsonObject(with: Data((after.last?["plaintext"] as? String ?? "").utf8)) as? [String: Any]
        #expect(after.count == 2 && withdrawn?["event"] as? String == "withdraw" && withdrawn?["approvalID"] as? String == approvalID, "\(after); \(push.diagnosis)")
        let everything = (try? String(contentsOfFile: push.log, encoding: .utf8)) ?? ""
        let calls = desktop.calls().joined(separator: "\n")
        for secret in ["echo", "hello.txt"] {
            #expect(!everything.contains(secret) && !calls.contains(secret), "no tool input on any channel: \(secret)")
        }

        // The phone turns pushes off: its registration is gone.
        #expect(await phone.unregisterPush() == .done)
        #expect(!(try String(contentsOfFile: base.home + "/notify/push.json", encoding: .utf8)).contains(deviceID.rawValue))
        await phone.stop()
        #expect(try await client.call(.shutdown(killSessions: true)) == .ok)
        _ = await client.ended()
        try await running.value
    }

    @Test(.enabled(if: PushServicePeer.python != nil || PushServicePeer.isRequired, "needs NUCLEIC_PUSH_PYTHON (scripts/peers.sh)"))
    func theAPNsSettingsGiveDevicesAnAPNsChannelThatTheLadderPushes() async throws {
        let base = try DaemonTests()
        defer { try? FileManager.default.removeItem(atPath: base.root) }
        try FileManager.default.createDirectory(atPath: base.root + "/keys", withIntermediateDirectories: true)
        let p8 = base.root + "/keys/AuthKey_KEY1234567.p8"
        try P256Key.generate().pem().write(toFile: p8, atomically: false, encoding: .utf8)
        chmod(p8, 0o600)
        let apns = try APNsServerPeer(teamID: "TEAM123456", keyID: "KEY1234567", topic: "com.example.nucleic", keyFile: p8)
        defer { apns.stop() }
        let port = try {
            let probe = try TCPListener(host: "127.0.0.1", port: 0)
            defer { probe.close() }
            return probe.port
        }()
        var configuration = base.configuration(listen: .init(host: "127.0.0.1", port: port))
        for (key, value) in ["NUCLEIC_NOTIFY_GRACE": "1", "NUCLEIC_APNS_KEY_FILE": p8, "NUCLEIC_APNS_KEY_ID": "KEY1234567",
                             "NUCLEIC_APNS_TEAM_ID": "TEAM123456", "NUCLEIC_APNS_TOPIC": "com.example.nucleic",
                             "NUCLEIC_APNS_ENDPOINT": apns.base, "NUCLEIC_APNS_CA_FILE": apns.caFile] {
            configuration.host.environment[key] = value
        }
        let daemon = Daemon(configuration)
        let running = Task { try await daemon.run() }
        var client = try SocketClient(path: try #require(await daemon.waitUntilServing()))
        _ = try await client.call(.hello(protocolVersion: 1, client: "test"))
        guard case .invite(let invite) = try await client.call(.createInvite(scope: .view, label: nil, addresses: ["127.0.0.1:\(port)"]))
        else { Issue.record("no invite"); return }
        let identity = NoiseKeyPair.generate()
        let paired = try await Connection.pair(invite: try PairingInvite(invite.uri), identity: identity, label: "Ana's iPhone",
                                               clientName: "test", dialer: TCPDialer())
        let phone = Connection(host: paired, identity: identity, dialer: TCPDialer())
        await phone.start()
        _ = await phone.waitUntil { $0.connection.isLive }
        guard case .info(let offer) = await phone.pushInfo() else { Issue.record("no push info"); return }
        #expect(offer.providers == [.webPush, .apns], "\(offer)")
        guard case .refused(let code, _) = await phone.registerPush(.apns(token: "not hex")) else { Issue.record("a bad token was taken"); return }
        #expect(code == "badMessage")
        let token = String(repeating: "c0", count: 32)
        #expect(await phone.registerPush(.apns(token: token)) == .done)

        let summary = try await DaemonNotifyTests.startAskingSession(&client, base)
        var requests: [[String: Any]] = []
        for _ in 0..<200 where requests.isEmpty {
            requests = try apns.requests()
            if requests.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        }
        let request = try #require(requests.first, "nothing reached APNs")
        #expect(request["path"] as? String == "/3/device/\(token)" && request["httpVersion"] as? String == "2", "\(request)")
        #expect(request["jwtValid"] as? Bool == true && request["problems"] as? [String] == [], "\(request)")
        let body = try #require(try JSONSerialization.jsonObject(with: Data((request["body"] as? String ?? "").utf8)) as? [String: Any])
        let nucleic = try #require(body["nucleic"] as? [String: Any])
        #expect(Set(nucleic.keys) == ["event", "category", "project", "title", "handle", "reason", "sessionID", "approvalID", "url"], "\(nucleic)")
        #expect(nucleic["sessionID"] as? String == summary.sessionID.rawValue && nucleic["category"] as? String == "needs-you")
        let everything = (try? String(contentsOfFile: apns.log, encoding: .utf8)) ?? ""
        for secret in ["echo", "hello.txt"] { #expect(!everything.contains(secret), "no tool input: \(secret)") }
        await phone.stop()
        #expect(try await client.call(.shutdown(killSessions: true)) == .ok)
        _ = await client.ended()
        try await running.value
    }
}
