import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicTestSupport
import Testing

/// `--json` on every command that talks to the daemon, write commands included: standard output
/// is JSON (one value; `log` one per line), and a failure is `{"error":{"code","message"}}` on
/// standard error with the exit status of the table in `nucleic help`.
@Suite(.serialized) struct JSONEverywhereEndToEndTests {
    static let toolAllow = Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path
    static let ask = Fixture.root.appendingPathComponent("claude-2.1.327/ask.jsonl").path
    static let followup = Fixture.root.appendingPathComponent("claude/followup.jsonl").path

    /// Runs `arguments --json`, expects exit 0 and one JSON value on stdout.
    func json(_ d: DaemonHarness, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> JSONValue {
        let run = try await d.nucleic(arguments + ["--json"])
        #expect(run.status == .exited(0), "\(arguments): \(run)", sourceLocation: sourceLocation)
        do { return try JSONParser.parse(run.stdout) } catch {
            Issue.record("\(arguments) --json printed no JSON: \(run)", sourceLocation: sourceLocation)
            return .null
        }
    }

    /// Runs `arguments --json`, expects `status` and a JSON error with `code` on stderr, stdout empty.
    func jsonError(_ d: DaemonHarness, _ arguments: [String], _ status: Int32, _ code: String,
                   sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let run = try await d.nucleic(arguments + ["--json"])
        #expect(run.status == .exited(status) && run.stdout.isEmpty, "\(arguments): \(run)", sourceLocation: sourceLocation)
        let error = try? JSONParser.parse(run.stderr)
        #expect(error?["error"]?["code"]?.stringValue == code && error?["error"]?["message"]?.stringValue?.isEmpty == false,
                "\(arguments): \(run.stderr)", sourceLocation: sourceLocation)
    }

    @Test func everyCommandSpeaksJSON() async throws {
        try await DaemonHarness.with { d in
            // Projects.
            let cafe = d.root + "/cafe"
            try FileManager.default.createDirectory(atPath: cafe, withIntermediateDirectories: true)
            try await Git.run(["init", "-q", "-b", "main"], in: cafe)
            try await Git.run(["-c", "user.name=T", "-c", "user.email=t@localhost", "commit", "-q", "--allow-empty", "-m", "initial"], in: cafe)
            #expect(try await json(d, ["project", "add", cafe])["name"] == "cafe")
            #expect(try await json(d, ["project", "ls"]).arrayValue?.count == 2)
            #expect(try await json(d, ["project", "rm", "cafe"])["name"] == "cafe")

            // A session asking, approved.
            let first = try await json(d, ["start", "make hello", "--backend", "replay", "--fixture", Self.toolAllow])
            let id = try #require(first["sessionID"]?.stringValue)
            #expect(first["handle"] == "1")
            let approval = try await d.approval(id)
            #expect(try await json(d, ["approvals"]).arrayValue?.count == 1)
            #expect(try await json(d, ["show", "1"])["summary"]?["sessionID"]?.stringValue == id)
            let approved = try await json(d, ["approve", "1.1"])
            #expect(approved["approvalID"]?.stringValue == approval.id.rawValue && approved["handle"] == "1.1", "\(approved)")
            #expect(approved["decision"]?["type"] == "allow" && approved["sessionID"]?.stringValue == id, "\(approved)")
            try await d.waitFor(id, ["finished"])
            #expect(try await json(d, ["ls", "--all"]).arrayValue?.count == 1)
            #expect(try await json(d, ["diff", "1"])["stat"] != nil)
            #expect(try await json(d, ["export-fixture", "1"])["text"]?.stringValue?.isEmpty == false)
            #expect(try await json(d, ["overlap"]).objectValue != nil)
            let log = try await d.nucleic(["log", "1", "--json"])
            #expect(log.status == .exited(0) && !log.lines.isEmpty && log.lines.allSatisfy { (try? JSONParser.parse($0)) != nil }, "\(log)")

            // A question answered; a follow-up sent; an interrupt.
            let asking = try #require(try await json(d, ["start", "pick a color", "--backend", "replay", "--fixture", Self.ask])["sessionID"]?.stringValue)
            try await d.waitFor(asking, ["awaitingInput", "awaitingApproval"])
            let answered = try await json(d, ["answer", "2.1", "Blue"])
            #expect(answered["decision"]?["type"] == "answer" && answered["handle"] == "2.1", "\(answered)")
            let chat = try #require(try await json(d, ["start", "hello", "--backend", "replay", "--fixture", Self.followup])["sessionID"]?.stringValue)
            try await d.waitFor(chat, ["finished", "idle"])
            let sent = try await json(d, ["send", "3", "and more"])
            #expect(sent["sessionID"]?.stringValue == chat && sent["sent"] == true, "\(sent)")
            let interrupted = try await json(d, ["interrupt", "3"])
            #expect(interrupted["handle"] == "3" && interrupted["interrupted"] == true, "\(interrupted)")

            // A denial (with a rule), the rules.
            let fourth = try #require(try await json(d, ["start", "again", "--backend", "replay", "--fixture", Self.toolAllow])["sessionID"]?.stringValue)
            _ = try await d.approval(fourth)
            let denied = try await json(d, ["deny", "4.1", "--message", "not now", "--always"])
            #expect(denied["decision"]?["type"] == "deny" && denied["always"]?["type"] != nil, "\(denied)")
            let added = try await json(d, ["rules", "add", "Bash(npm test *)"])
            let ruleID = try #require(added.arrayValue?.first?["id"]?.stringValue)
            #expect(try await json(d, ["rules", "explain", "Bash", #"{"command":"npm test"}"#]).objectValue != nil)
            #expect(try await json(d, ["rules", "rm", ruleID]).arrayValue?.first?["id"]?.stringValue == ruleID)
            #expect(try await json(d, ["rules", "ls"]).arrayValue != nil)

            // Integrate one, discard another.
            let integrated = try await json(d, ["integrate", "1", "--squash"])
            #expect(integrated["type"]?.stringValue?.hasPrefix("integrat") == true, "\(integrated)")
            let discarded = try await json(d, ["discard", "4", "--delete-branch", "--force"])
            #expect(discarded["sessionID"]?.stringValue == fourth && discarded["branchDeleted"] == true, "\(discarded)")

            // Settings, devices, notifications, the host.
            #expect(try await json(d, ["config", "set", "approval-timeout", "600"])["key"] == "approval-timeout")
            #expect(try await json(d, ["config", "get", "approval-timeout"])["value"] == "600")
            #expect(try await json(d, ["config", "list"])["settings"]?.arrayValue != nil)
            #expect(try await json(d, ["config", "unset", "approval-timeout"])["value"] == .null)
            #expect(try await json(d, ["devices", "--all"]).arrayValue != nil)
            #expect(try await json(d, ["notify", "ls"]).arrayValue != nil)
            #expect(try await json(d, ["version"])["nucleic"] != nil)

            // Errors under --json: JSON on stderr, the table's statuses.
            try await jsonError(d, ["show", "99"], 2, "notFound")
            try await jsonError(d, ["approve", "99.1"], 2, "notFound")
            try await jsonError(d, ["answer", "99.1", "x"], 2, "notFound")
            try await jsonError(d, ["send", "99", "x"], 2, "notFound")
            try await jsonError(d, ["revoke", "nosuchdevice"], 2, "notFound")
            try await jsonError(d, ["project", "rm", "nosuch"], 2, "notFound")
            try await jsonError(d, ["project", "add", d.repo], 1, "conflict")
            try await jsonError(d, ["start", ""], 64, "usage")
            try await jsonError(d, ["frobnicate"], 64, "usage")

            let stopped = try await json(d, ["stop-daemon", "--kill-sessions"])
            #expect(stopped["stopped"] == true, "\(stopped)")
        }
    }

    /// The remote client's write commands under --json, against a real daemon over TCP.
    @Test func theRemoteClientSpeaksJSON() async throws {
        let address = "127.0.0.1:\(try RemoteEndToEndTests.freePort())"
        try await DaemonHarness.with(serve: ["--listen", address, "--replay-speed", "max"]) { d in
            let phone = d.root + "/phone"
            func remote(_ arguments: [String]) async throws -> DaemonHarness.Run {
                try await d.start(["remote"] + arguments + ["--json"], environment: ["XDG_CONFIG_HOME": phone]).finish()
            }
            let uri = try #require(try await d.json(["pair"])["uri"]?.stringValue)
            let paired = try await remote(["pair", uri, "--label", "phone"])
            let host = try JSONParser.parse(paired.stdout)
            #expect(paired.status == .exited(0) && host["label"] == "phone" && host["scope"] == "approve", "\(paired)")

            let id = try await d.start("make hello", ["--backend", "replay", "--fixture", Self.toolAllow])
            let approval = try await d.approval(id)
            let short = String(approval.id.rawValue.prefix(13))
            let approved = try await remote(["approve", short])
            #expect(approved.status == .exited(0), "\(approved)")
            let done = try JSONParser.parse(approved.stdout)
            #expect(done["done"] == true && done["approvalID"]?.stringValue == approval.id.rawValue && done["decision"]?["type"] == "allow", "\(done)")
            let late = try await remote(["deny", short])
            let lateReply = try? JSONParser.parse(late.stdout)
            #expect(late.status == .exited(0) && lateReply?["alreadyResolved"]?.stringValue != nil, "\(late)")
            let missing = try await remote(["approve", "ffffffff"])
            #expect(missing.status == .exited(2) && (try? JSONParser.parse(missing.stderr))?["error"]?["code"] == "notFound", "\(missing)")
            try await d.waitFor(id, ["finished"])
            let sent = try await remote(["send", String(id.prefix(13)), "more"])
            let sentReply = try? JSONParser.parse(sent.stdout)
            #expect(sent.status == .exited(0) && sentReply?["sent"] == true, "\(sent)")
        }
    }
}
