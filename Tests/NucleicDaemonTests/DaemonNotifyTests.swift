import Foundation
import NucleicDaemon
import NucleicProtocol
import NucleicRuntime
import NucleicSockets
import NucleicSync
import NucleicTestSupport
import Testing

/// The notifier in a daemon run in this process: a replay session's approval reaches the desktop
/// (python-dbusmock on a private session bus), and the desktop's Allow answers it.
@Suite(.serialized) struct DaemonNotifyTests {
    /// Adds the base's repository as project "shop" and starts the replay session whose Bash
    /// call waits for a person (claude/tool-allow.jsonl); its summary.
    static func startAskingSession(_ client: inout SocketClient, _ base: DaemonTests) async throws -> SessionSummary {
        _ = try await client.call(.addProject(path: base.root + "/shop", name: "shop"))
        let start = ClientMsg.StartSession(prompt: "Make the greeting file", backend: "replay",
                                           fixture: Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path)
        guard case .sessionCreated(let summary) = try await client.call(.startSession(start)) else { throw PeerFailure("no session") }
        return summary
    }

    /// The desktop's first `Notify` call, waiting up to 10 s; nil if none came.
    static func firstNotify(_ desktop: DesktopPeer) async throws -> String? {
        for _ in 0..<200 {
            if let notify = desktop.calls().first(where: { $0.hasPrefix("Notify ") }) { return notify }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    /// The session's approval resolution once there is one (a cold subscribe every 50 ms, up to
    /// 10 s); nil if none came.
    static func resolution(of session: SessionID, _ client: inout SocketClient) async throws -> ApprovalResolution? {
        for _ in 0..<200 {
            if case .snapshot(_, let events, _, _) = try await client.call(.subscribe(sessionID: session, sinceSeq: nil, verbosity: .full)) {
                _ = try await client.call(.unsubscribe(sessionID: session))
                for e in events { if case .approvalResolved(let r) = e.event { return r } }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    @Test func anApprovalIsShownOnTheDesktopAndItsAllowAnswersIt() async throws {
        #expect(DesktopPeer.available, "needs dbus-daemon and python3-dbusmock (scripts/setup.sh)")
        let desktop = try DesktopPeer()
        defer { desktop.stop() }
        let base = try DaemonTests()
        defer { try? FileManager.default.removeItem(atPath: base.root) }
        var configuration = base.configuration()
        configuration.host.environment["DBUS_SESSION_BUS_ADDRESS"] = desktop.address
        configuration.host.environment["NUCLEIC_NOTIFY_DESKTOP"] = nil
        let daemon = Daemon(configuration)
        let running = Task { try await daemon.run() }
        let socket = try #require(await daemon.waitUntilServing())
        var client = try SocketClient(path: socket)
        _ = try await client.call(.hello(protocolVersion: 1, client: "test"))
        let summary = try await Self.startAskingSession(&client, base)

        let shown = try #require(try await Self.firstNotify(desktop), "no desktop notification; calls: \(desktop.calls())")
        #expect(shown.hasPrefix(#"Notify "Nucleic" 0 "" "shop · "#) && shown.contains(#"["allow", "Allow", "deny", "Deny"] {"urgency": 2} 0"#),
                "\(shown)")
        #expect(shown.contains("\"needs approval: Bash, risk "), "\(shown)")
        #expect(!shown.contains("echo") && !shown.contains("hello.txt"), "no tool input on the desktop: \(shown)")

        try desktop.invoke(1, "allow")
        let r = try #require(try await Self.resolution(of: summary.sessionID, &client))
        #expect(r.decision == .allow && r.decidedBy == "user:\(ProcessInfo.processInfo.environment["USER"] ?? "uid\(getuid())")"
                && r.decidedByLabel == "desktop", "\(r)")
        // Answered: the notification is withdrawn.
        for _ in 0..<100 where !desktop.calls().contains("CloseNotification 1") { try await Task.sleep(for: .milliseconds(50)) }
        #expect(desktop.calls().contains("CloseNotification 1"), "\(desktop.calls())")
        #expect(FileManager.default.fileExists(atPath: base.home + "/notify/alerts.json"))

        #expect(try await client.call(.shutdown(killSessions: true)) == .ok)
        _ = await client.ended()
        try await running.value
    }

    @Test func aRestartedDaemonDoesNotNotifyAgainAndTheOldNotificationStillAnswers() async throws {
        #expect(DesktopPeer.available, "needs dbus-daemon and python3-dbusmock (scripts/setup.sh)")
        let desktop = try DesktopPeer()
        defer { desktop.stop() }
        let base = try DaemonTests()
        defer { try? FileManager.default.removeItem(atPath: base.root) }
        var configuration = base.configuration()
        configuration.host.environment["DBUS_SESSION_BUS_ADDRESS"] = desktop.address
        configuration.host.environment["NUCLEIC_NOTIFY_DESKTOP"] = nil
        let first = Daemon(configuration)
        let running = Task { try await first.run() }
        var client = try SocketClient(path: try #require(await first.waitUntilServing()))
        _ = try await client.call(.hello(protocolVersion: 1, client: "test"))
        let summary = try await Self.startAskingSession(&client, base)
        _ = try await Self.firstNotify(desktop)
        #expect(desktop.calls().filter { $0.hasPrefix("Notify ") }.count == 1, "\(desktop.calls())")
        // The saved alerts say the desktop has it before the daemon goes.
        for _ in 0..<100 {
            let saved = (try? String(contentsOfFile: base.home + "/notify/alerts.json", encoding: .utf8)) ?? ""
            if saved.contains(#""shown":"1""#) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        // Stopped without killing the session: the approval stays pending under its shim.
        #expect(try await client.call(.shutdown(killSessions: false)) == .ok)
        _ = await client.ended()
        try await running.value

        let second = Daemon(configuration)
        let again = Task { try await second.run() }
        var other = try SocketClient(path: try #require(await second.waitUntilServing()))
        _ = try await other.call(.hello(protocolVersion: 1, client: "test"))
        guard case .approvalList(let pending) = try await other.call(.listApprovals) else { Issue.record("no approvals"); return }
        #expect(pending.count == 1, "the approval is still pending after the restart")
        try await Task.sleep(for: .milliseconds(500))
        #expect(desktop.calls().filter { $0.hasPrefix("Notify ") }.count == 1, "not notified again: \(desktop.calls())")
        // The notification the first daemon showed still answers.
        try desktop.invoke(1, "deny")
        let r = try #require(try await Self.resolution(of: summary.sessionID, &other))
        #expect(r.decision.type == "deny" && r.decidedByLabel == "desktop", "\(r)")
        for _ in 0..<100 where !desktop.calls().contains("CloseNotification 1") { try await Task.sleep(for: .milliseconds(50)) }
        #expect(desktop.calls().contains("CloseNotification 1"), "\(desktop.calls())")
        #expect(try await other.call(.shutdown(killSessions: true)) == .ok)
        _ = await other.ended()
        try await again.value
    }

    @Test func theLadderReachesNtfyAndTheWebhookAfterTheDelaysAndAnAnswerWithdraws() async throws {
        let sink = try HTTPSink(secret: "a-webhook-secret-of-some-length")
        defer { sink.stop() }
        let base = try DaemonTests()
        defer { try? FileManager.default.removeItem(atPath: base.root) }
        var configuration = base.configuration()
        for (key, value) in ["NUCLEIC_NOTIFY_GRACE": "1", "NUCLEIC_NOTIFY_FURTHER_AFTER": "2",
                             "NUCLEIC_NTFY_URL": "http://127.0.0.1:\(sink.port)/alerts", "NUCLEIC_WEBHOOK_URL": "http://127.0.0.1:\(sink.port)/hook",
                             "NUCLEIC_WEBHOOK_SECRET": "a-webhook-secret-of-some-length"] {
            configuration.host.environment[key] = value
        }
        let daemon = Daemon(configuration)
        let running = Task { try await daemon.run() }
        var client = try SocketClient(path: try #require(await daemon.waitUntilServing()))
        _ = try await client.call(.hello(protocolVersion: 1, client: "test"))
        _ = try await Self.startAskingSession(&client, base)
        var pending: [ApprovalRequest] = []
        for _ in 0..<200 where pending.isEmpty {
            if case .approvalList(let list) = try await client.call(.listApprovals) { pending = list }
            if pending.isEmpty { try await Task.sleep(for: .milliseconds(25)) }
        }
        let approval = try #require(pending.first)
        let asked = ContinuousClock.now
        #expect(try sink.requests().isEmpty, "nothing further before its delay")
        for _ in 0..<200 where try sink.requests().count < 2 { try await Task.sleep(for: .milliseconds(50)) }
        let waited = ContinuousClock.now - asked
        let shown = try sink.requests()
        #expect(Set(shown.compactMap { $0["path"] as? String }) == ["/alerts", "/hook"], "\(shown)")
        #expect(waited >= .milliseconds(1500), "the further channels wait for notify-further-after: \(waited)")
        #expect(shown.allSatisfy { ($0["body"] as? String).map { !$0.contains("echo") && !$0.contains("hello.txt") } ?? false })
        // Answered over the socket: the webhook is told to withdraw (ntfy cannot take it back).
        #expect(try await client.call(.approvalRespond(approvalID: approval.id, decision: .allow, denyAlways: nil)) == .ok)
        for _ in 0..<100 where try sink.requests().count < 3 { try await Task.sleep(for: .milliseconds(50)) }
        let all = try sink.requests()
        #expect(all.count == 3 && (all.last?["body"] as? String)?.hasPrefix(#"{"event":"withdraw""#) == true, "\(all)")
        #expect(all.filter { $0["path"] as? String == "/hook" }.allSatisfy { $0["signatureValid"] as? Bool == true })
        // What `nucleic notify ls` and `nucleic notify test` ask.
        guard case .notifyChannels(let channels) = try await client.call(.notifyStatus) else { Issue.record("no status"); return }
        #expect(channels.map(\.channel) == ["ntfy", "webhook"] && channels.allSatisfy { $0.stage == "further" }, "\(channels)")
        #expect(channels.allSatisfy { $0.lastResult == "withdrawn" && $0.lastAt != nil }, "the answer was the last thing: \(channels)")
        guard case .notifyChannels(let tested) = try await client.call(.notifyTest(channel: "webhook")) else { Issue.record("no test"); return }
        #expect(tested.map(\.channel) == ["webhook"] && tested.first?.lastResult == "shown", "\(tested)")
        #expect(try sink.requests().count == 4 && (try sink.requests().last?["body"] as? String)?.contains("a test notification") == true)
        guard case .error(let code, _, _) = try await client.call(.notifyTest(channel: "pager")) else { Issue.record("no error"); return }
        #expect(code == .notFound)
        #expect(try await client.call(.shutdown(killSessions: true)) == .ok)
        _ = await client.ended()
        try await running.value
    }
}
