import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicTestSupport
import Testing

/// `nucleic notify` against the built daemon, with the webhook pointed at a local endpoint.
@Suite(.serialized) struct NotifyEndToEndTests {
    @Test func notifyListsTheChannelsAndTestSendsOneSignedTestNotification() async throws {
        let sink = try HTTPSink(secret: "an-end-to-end-secret")
        defer { sink.stop() }
        try await DaemonHarness.with(environment: ["NUCLEIC_WEBHOOK_URL": "http://127.0.0.1:\(sink.port)/hook",
                                                   "NUCLEIC_WEBHOOK_SECRET": "an-end-to-end-secret"]) { d in
            #expect(try await d.ok(["notify", "ls"]) == "webhook\tfurther\tneeds-you,done\tnothing sent yet\n")
            let tested = try await d.ok(["notify", "test", "webhook"])
            #expect(tested.hasPrefix("webhook\tfurther\tneeds-you,done\tshown "), "\(tested)")
            let requests = try sink.requests()
            #expect(requests.count == 1 && requests.first?["signatureValid"] as? Bool == true, "\(requests)")
            #expect((requests.first?["body"] as? String)?.contains(#""title":"a test notification""#) == true)
            let missing = try await d.nucleic(["notify", "test", "pager"])
            #expect(missing.status == .exited(2) && missing.stderr.contains("no notification channel 'pager'"), "\(missing)")
            let json = try await d.json(["notify", "ls", "--json"])
            #expect(json[0]?["channel"]?.stringValue == "webhook", "\(json)")
        }
    }
}
