import Foundation
import NucleicNotify
import NucleicProtocol
import NucleicTestSupport
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// APNs: the channel against a local HTTP/2 TLS server (Tests/Peers/apns_server.py, hypercorn on
/// h2, its own CA trusted through the channel's CA file) that checks the headers and verifies the
/// provider token with PyJWT against the `.p8` key's public half; the exact body of each push,
/// no tool input anywhere, and 410 / `Unregistered` as gone.
@Suite(.serialized) struct APNsChannelTests {
    static let team = "TEAM123456", keyID = "KEY1234567", topic = "com.example.nucleic"
    static let token = String(repeating: "ab", count: 32)

    /// A `.p8` key as Apple issues it (PKCS#8 PEM), 0600, in a folder of its own.
    static func keyFile() throws -> (path: String, key: P256Key) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-p8-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/AuthKey_\(keyID).p8"
        let key = try P256Key.generate()
        try key.pem().write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o600)
        return (path, try P256Key.read(path: path))
    }

    @Test func theProviderTokenIsMadeOnceAndTokensAreChecked() throws {
        let (path, key) = try Self.keyFile()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let provider = APNsProvider(key: key, keyID: Self.keyID, teamID: Self.team, topic: Self.topic)
        let now = Timestamp.now()
        let first = try provider.token(now: now)
        #expect(try provider.token(now: Timestamp(millisecondsSince1970: now.millisecondsSince1970 + 49 * 60_000)) == first, "reused under 50 minutes")
        #expect(try provider.token(now: Timestamp(millisecondsSince1970: now.millisecondsSince1970 + 51 * 60_000)) != first, "remade after")
        let header = try #require(Base64URLCodec.decode(String(first.split(separator: ".")[0])))
        #expect(String(decoding: header, as: UTF8.self) == #"{"kid":"KEY1234567","alg":"ES256"}"#)
        #expect(try APNsProvider.normalizedToken(Self.token.uppercased()) == Self.token)
        #expect(throws: NotifyError.self) { try APNsProvider.normalizedToken("abc") }
        #expect(throws: NotifyError.self) { try APNsProvider.normalizedToken(String(repeating: "zz", count: 32)) }
        chmod(path, 0o644)
        #expect(throws: NotifyError.self) { try P256Key.read(path: path) }
        #expect(throws: NotifyError.self) { try P256Key.read(path: path + ".missing") }
    }

    @Test(.enabled(if: PushServicePeer.python != nil || PushServicePeer.isRequired, "needs NUCLEIC_PUSH_PYTHON (scripts/peers.sh)"))
    func anHTTP2ServerChecksTheHeadersAndTheTokenAndGetsExactlyThePayload() async throws {
        let (path, key) = try Self.keyFile()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let server = try APNsServerPeer(teamID: Self.team, keyID: Self.keyID, topic: Self.topic, keyFile: path)
        defer { server.stop() }
        let provider = APNsProvider(key: key, keyID: Self.keyID, teamID: Self.team, topic: Self.topic, endpoint: server.base, caFile: server.caFile)
        func channel(_ token: String) -> APNsChannel { APNsChannel(id: .device("d1"), token: token, provider: provider) }
        let push = channel(Self.token)
        let payload = DesktopChannelTests.payload()
        #expect(await push.show(payload, replacing: nil) == .shown(handle: nil))
        await push.withdraw(payload, handle: nil)
        let done = NotificationPayload(project: "shop", title: "fix the tests", handle: "12", category: .done, reason: "finished", sessionID: NotifierTests.s1)
        #expect(await push.show(done, replacing: nil) == .shown(handle: nil))
        let requests = try server.requests()
        try #require(requests.count == 3, "\(requests)")
        let s1 = NotifierTests.s1.rawValue, a1 = NotifierTests.a1.rawValue
        let inline = payload.answerableInline ? #","category":"NUCLEIC_APPROVAL_ACTIONABLE""# : ""
        #expect(requests.map { $0["body"] as? String } == [
            #"{"aps":{"alert":{"title":"shop · 12 fix the tests","body":"needs approval: Bash, risk write"},"sound":"default","thread-id":"\#(s1)"\#(inline)},"nucleic":{"event":"show","category":"needs-you","project":"shop","title":"fix the tests","handle":"12","reason":"needs approval: Bash, risk write","sessionID":"\#(s1)","approvalID":"\#(a1)","url":"nucleic://approval/\#(a1)"}}"#,
            #"{"aps":{"content-available":1},"nucleic":{"event":"withdraw","category":"needs-you","project":"shop","title":"fix the tests","handle":"12","reason":"needs approval: Bash, risk write","sessionID":"\#(s1)","approvalID":"\#(a1)","url":"nucleic://approval/\#(a1)"}}"#,
            #"{"aps":{"alert":{"title":"shop · 12 fix the tests","body":"finished"},"thread-id":"\#(s1)"},"nucleic":{"event":"show","category":"done","project":"shop","title":"fix the tests","handle":"12","reason":"finished","sessionID":"\#(s1)","url":"nucleic://session/\#(s1)"}}"#,
        ])
        for request in requests {
            #expect(request["httpVersion"] as? String == "2" && request["path"] as? String == "/3/device/\(Self.token)")
            #expect(request["jwtValid"] as? Bool == true && request["problems"] as? [String] == [], "\(request)")
            #expect((request["claims"] as? [String: Any])?["iss"] as? String == Self.team)
            #expect((request["jwtHeader"] as? [String: Any])?["kid"] as? String == Self.keyID)
        }
        let headers = requests.map { $0["headers"] as? [String: String] ?? [:] }
        #expect(headers.map { $0["apns-push-type"] } == ["alert", "background", "alert"])
        #expect(headers.map { $0["apns-priority"] } == ["10", "5", "5"])
        #expect(headers.map { $0["apns-collapse-id"] } == [payload.collapseID, payload.collapseID, done.collapseID])
        #expect(headers.allSatisfy { $0["apns-topic"] == Self.topic && $0["apns-expiration"] != nil })
        #expect(Set(headers.compactMap { $0["authorization"] }).count == 1, "one provider token for all three")
        let everything = (try? String(contentsOfFile: server.log, encoding: .utf8)) ?? ""
        for secret in HTTPChannelTests.secrets { #expect(!everything.contains(secret)) }

        // 410 Unregistered is gone; 400 BadDeviceToken is a failure that names the reason.
        #expect(await channel("dead" + String(Self.token.dropFirst(4))).show(payload, replacing: nil) == .gone)
        #expect(await channel("bad0" + String(Self.token.dropFirst(4))).show(payload, replacing: nil) == .failed("APNs answered 400 BadDeviceToken"))
        // The server's certificate is trusted only through the CA file.
        let untrusted = APNsChannel(id: .device("d1"), token: Self.token,
                                    provider: APNsProvider(key: key, keyID: Self.keyID, teamID: Self.team, topic: Self.topic, endpoint: server.base))
        guard case .failed(let message) = await untrusted.show(payload, replacing: nil) else { Issue.record("shown without trusting the CA"); return }
        #expect(message.contains("POST \(server.base)/3/device/"), "\(message)")
    }

    @Test(.enabled(if: PushServicePeer.python != nil || PushServicePeer.isRequired, "needs NUCLEIC_PUSH_PYTHON (scripts/peers.sh)"))
    func aDeviceRegistersAnAPNsTokenBadOnesAreRefusedAndAGoneTestDeletesIt() async throws {
        let (path, key) = try Self.keyFile()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let server = try APNsServerPeer(teamID: Self.team, keyID: Self.keyID, topic: Self.topic, keyFile: path)
        defer { server.stop() }
        let provider = APNsProvider(key: key, keyID: Self.keyID, teamID: Self.team, topic: Self.topic, endpoint: server.base, caFile: server.caFile)
        let notifier = NotifierService(settings: NotifierSettings(graceMilliseconds: 0), channels: [], statePath: nil,
                                       push: PushProviders(vapid: nil, apns: provider, registryPath: nil))
        #expect(await notifier.pushInfo(device: nil).providers == [.apns])
        await #expect(throws: SessionError.self) { try await notifier.registerPush(device: DeviceID("d1"), .apns(token: "xyz")) }
        await #expect(throws: SessionError.self) {
            try await notifier.registerPush(device: DeviceID("d1"), .webPush(endpoint: "https://x/y", p256dh: "AA", auth: "AA"))
        }
        try await notifier.registerPush(device: DeviceID("d1"), .apns(token: "dead" + String(Self.token.dropFirst(4))))
        #expect(await notifier.channelStatus().map(\.channel) == ["device:d1"])
        let results = await notifier.test(channel: "device:d1")
        #expect(results.map(\.lastResult) == ["gone"], "\(results)")
        // Gone to a test is gone: the registration is deleted.
        let left = await notifier.channelStatus(), info = await notifier.pushInfo(device: DeviceID("d1"))
        #expect(left.isEmpty && info.registered == nil, "\(left) \(info)")
        #expect(try server.requests().first?["problems"] as? [String] == [])
    }
}
