import Foundation
import NucleicNotify
import NucleicProtocol
import NucleicTestSupport
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// ntfy and the webhook against a local HTTP endpoint (Tests/Peers/http_sink.py, Python's own
/// http.server and hmac), asserting every header and body byte that leaves the host.
@Suite(.serialized) struct HTTPChannelTests {
    static let secrets = ["aws", "credentials", "curl", "evil", "exfiltrate", "/home"]

    @Test func ntfyGetsTheHeadingPriorityAndDeepLinkAndNothingElse() async throws {
        let sink = try HTTPSink(secret: "unused")
        defer { sink.stop() }
        let channel = NtfyChannel(url: "http://127.0.0.1:\(sink.port)/nucleic-alerts", token: "tk_secret")
        let payload = DesktopChannelTests.payload()
        #expect(await channel.show(payload, replacing: nil) == .shown(handle: nil))
        let done = NotificationPayload(project: "shop", title: "fix the tests", handle: "12", category: .done, reason: "finished", sessionID: NotifierTests.s1)
        #expect(await channel.show(done, replacing: nil) == .shown(handle: nil))
        let requests = try sink.requests()
        #expect(requests.count == 2)
        let first = try #require(requests.first)
        let headers = first["headers"] as? [String: String] ?? [:]
        #expect(first["path"] as? String == "/nucleic-alerts" && first["body"] as? String == "needs approval: Bash, risk write")
        #expect(headers["Title"] == "shop · 12 fix the tests" && headers["Priority"] == "urgent" && headers["Tags"] == "needs-you"
                && headers["Click"] == "nucleic://approval/\(NotifierTests.a1.rawValue)" && headers["Authorization"] == "Bearer tk_secret",
                "\(headers)")
        let second = requests[1]["headers"] as? [String: String] ?? [:]
        #expect(second["Priority"] == "default" && second["Click"] == "nucleic://session/\(NotifierTests.s1.rawValue)", "\(second)")
        let everything = (try? String(contentsOfFile: sink.log, encoding: .utf8)) ?? ""
        for secret in Self.secrets { #expect(!everything.contains(secret)) }
        #expect(await NtfyChannel(url: "http://127.0.0.1:\(sink.port)/gone", token: nil).show(payload, replacing: nil) == .gone)
        #expect(await NtfyChannel(url: "http://127.0.0.1:\(sink.port)/fail", token: nil).show(payload, replacing: nil) == .failed("HTTP 500"))
        guard case .failed(let message) = await NtfyChannel(url: "http://127.0.0.1:1/x", token: nil).show(payload, replacing: nil) else {
            Issue.record("shown to a closed port"); return
        }
        #expect(message.hasPrefix("POST http://127.0.0.1:1/x: "), "\(message)")
    }

    @Test func theWebhookBodyIsExactlyThePayloadAndItsSignatureChecksOut() async throws {
        let sink = try HTTPSink(secret: "s3cret-shared")
        defer { sink.stop() }
        let channel = WebhookChannel(url: "http://127.0.0.1:\(sink.port)/hook", secret: "s3cret-shared")
        let payload = DesktopChannelTests.payload()
        #expect(await channel.show(payload, replacing: nil) == .shown(handle: nil))
        await channel.withdraw(payload, handle: nil)
        let wrong = WebhookChannel(url: "http://127.0.0.1:\(sink.port)/hook", secret: "another")
        _ = await wrong.show(payload, replacing: nil)
        let requests = try sink.requests()
        #expect(requests.count == 3)
        let s1 = NotifierTests.s1.rawValue, a1 = NotifierTests.a1.rawValue
        #expect(requests[0]["body"] as? String
                == #"{"event":"show","category":"needs-you","project":"shop","title":"fix the tests","handle":"12","reason":"needs approval: Bash, risk write","sessionID":"\#(s1)","approvalID":"\#(a1)","url":"nucleic://approval/\#(a1)"}"#)
        #expect((requests[1]["body"] as? String)?.hasPrefix(#"{"event":"withdraw","category":"needs-you""#) == true)
        #expect(requests.map { $0["signatureValid"] as? Bool } == [true, true, false])
        #expect((requests[0]["headers"] as? [String: String])?["Content-Type"] == "application/json")
        let everything = (try? String(contentsOfFile: sink.log, encoding: .utf8)) ?? ""
        for secret in Self.secrets { #expect(!everything.contains(secret)) }
        #expect(!everything.contains("s3cret"), "the secret itself never travels")
    }
}
