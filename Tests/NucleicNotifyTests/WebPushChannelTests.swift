import Foundation
import NucleicNotify
import NucleicProtocol
import NucleicTestSupport
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Web Push: RFC 8291's own example as a known answer, then the channel against a local push
/// service (Tests/Peers/push_service.py) that checks the VAPID JWT with py_vapid and decrypts
/// with http_ece, asserting every field of the decrypted body and that no tool input travels.
@Suite(.serialized) struct WebPushChannelTests {
    static func b(_ text: String) -> [UInt8] { Base64URLCodec.decode(text)! }

    @Test func rfc8291AppendixAEncryptsToItsExactBody() throws {
        let sender = try P256Key(publicKey: Self.b("BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"),
                                 privateScalar: Self.b("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"))
        let body = try WebPushCrypto.encrypt(Array("When I grow up, I want to be a watermelon".utf8),
                                             subscriberKey: Self.b("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"),
                                             authSecret: Self.b("BTBZMqHH6r4Tts7J_aSIgg"), senderKey: sender, salt: Self.b("DGv6ra1nlYgDCS1FRnbzlw"))
        #expect(Base64URLCodec.encode(body)
                == "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN")
    }

    @Test func base64URLRoundTripsAndRefusesOtherText() {
        for n in 0..<40 {
            let bytes = (0..<n).map { UInt8(($0 * 37 + n) & 0xff) }
            #expect(Base64URLCodec.decode(Base64URLCodec.encode(bytes)) == bytes)
        }
        #expect(Base64URLCodec.decode("a+b/") == nil && Base64URLCodec.decode("abcde") == nil && Base64URLCodec.decode("ab cd") == nil)
    }

    @Test func theVAPIDKeyIsMadeOnceWithMode0600AndKept() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-vapid-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/vapid.pem"
        let first = try P256Key.loadOrCreate(path: path)
        let second = try P256Key.loadOrCreate(path: path)
        #expect(first.publicKey.count == 65 && first.publicKey == second.publicKey)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(FileManager.default.subpaths(atPath: folder) == ["vapid.pem"], "nothing is left beside it")
        chmod(path, 0o644)
        #expect(throws: NotifyError.self) { try P256Key.loadOrCreate(path: path) }
        chmod(path, 0o600)
        try "not a key".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: NotifyError.self) { try P256Key.loadOrCreate(path: path) }
    }

    @Test func aSubscriptionIsCheckedBeforeItIsUsed() throws {
        let good = try P256Key.generate().publicKey
        #expect(throws: NotifyError.self) { try WebPushSubscription(endpoint: "ftp://x/y", p256dh: good, auth: Array(repeating: 1, count: 16)).validate() }
        #expect(throws: NotifyError.self) { try WebPushSubscription(endpoint: "https://x/y", p256dh: good, auth: [1, 2]).validate() }
        var offCurve = good
        offCurve[64] ^= 1
        #expect(throws: NotifyError.self) { try WebPushSubscription(endpoint: "https://x/y", p256dh: offCurve, auth: Array(repeating: 1, count: 16)).validate() }
        try WebPushSubscription(endpoint: "https://push.example/abc", p256dh: good, auth: Array(repeating: 1, count: 16)).validate()
        #expect(VAPID.origin("https://Push.Example:8443/wp/abc?x") == "https://push.example:8443" && VAPID.origin("mailto:a@b") == nil)
    }

    @Test(.enabled(if: PushServicePeer.python != nil || PushServicePeer.isRequired, "needs NUCLEIC_PUSH_PYTHON (scripts/peers.sh)"))
    func aPushServiceVerifiesTheVAPIDJWTAndDecryptsExactlyThePayload() async throws {
        let peer = try PushServicePeer()
        defer { peer.stop() }
        let vapid = VAPID(key: try P256Key.generate(), subject: "mailto:ops@shop.example")
        func channel(_ path: String) -> WebPushChannel {
            WebPushChannel(id: .device("d1"), subscription: WebPushSubscription(endpoint: peer.base + path, p256dh: Self.b(peer.p256dh), auth: Self.b(peer.auth)),
                           vapid: vapid)
        }
        let push = channel("/push/d1")
        let payload = DesktopChannelTests.payload()
        #expect(await push.show(payload, replacing: nil) == .shown(handle: nil))
        await push.withdraw(payload, handle: nil)
        let done = NotificationPayload(project: "shop", title: "fix the tests", handle: "12", category: .done, reason: "finished", sessionID: NotifierTests.s1)
        #expect(await push.show(done, replacing: nil) == .shown(handle: nil))
        let requests = try peer.requests()
        try #require(requests.count == 3)
        let s1 = NotifierTests.s1.rawValue, a1 = NotifierTests.a1.rawValue
        #expect(requests.map { $0["plaintext"] as? String } == [
            #"{"event":"show","category":"needs-you","project":"shop","title":"fix the tests","handle":"12","reason":"needs approval: Bash, risk write","sessionID":"\#(s1)","approvalID":"\#(a1)","url":"nucleic://approval/\#(a1)"}"#,
            #"{"event":"withdraw","category":"needs-you","project":"shop","title":"fix the tests","handle":"12","reason":"needs approval: Bash, risk write","sessionID":"\#(s1)","approvalID":"\#(a1)","url":"nucleic://approval/\#(a1)"}"#,
            #"{"event":"show","category":"done","project":"shop","title":"fix the tests","handle":"12","reason":"finished","sessionID":"\#(s1)","url":"nucleic://session/\#(s1)"}"#,
        ])
        for request in requests {
            #expect(request["vapidValid"] as? Bool == true && (request["problems"] as? [String]) == [], "\(request)")
            let claims = request["claims"] as? [String: Any] ?? [:]
            #expect(claims["aud"] as? String == peer.base && claims["sub"] as? String == "mailto:ops@shop.example")
            let headers = request["headers"] as? [String: String] ?? [:]
            #expect(headers["Content-Encoding"] == "aes128gcm" && headers["TTL"] == "86400" && headers["Content-Type"] == "application/octet-stream")
            #expect(headers["Authorization"]?.hasSuffix(",k=\(vapid.publicKeyText)") == true)
            // The ciphertext is not the plaintext: the push service itself cannot read it.
            let raw = Data(base64Encoded: request["body"] as? String ?? "") ?? Data()
            #expect(raw.count > 86 && !String(decoding: raw, as: UTF8.self).contains("shop"))
        }
        let headers = requests.map { $0["headers"] as? [String: String] ?? [:] }
        #expect(headers.map { $0["Topic"] } == [payload.collapseID, payload.collapseID, done.collapseID] && payload.collapseID != done.collapseID)
        #expect(headers.map { $0["Urgency"] } == ["high", "high", "normal"])
        // No byte of the tool input, in the clear or in what was decrypted.
        let everything = (try? String(contentsOfFile: peer.log, encoding: .utf8)) ?? ""
        for secret in HTTPChannelTests.secrets { #expect(!everything.contains(secret)) }

        #expect(await channel("/gone").show(payload, replacing: nil) == .gone)
        #expect(await channel("/missing").show(payload, replacing: nil) == .gone)
        let closed = WebPushChannel(id: .device("d1"), subscription: WebPushSubscription(endpoint: "http://127.0.0.1:1/x", p256dh: Self.b(peer.p256dh), auth: Self.b(peer.auth)), vapid: vapid)
        guard case .failed(let message) = await closed.show(payload, replacing: nil) else { Issue.record("shown to a closed port"); return }
        #expect(message.hasPrefix("POST http://127.0.0.1:1/x: "), "\(message)")
    }
}
