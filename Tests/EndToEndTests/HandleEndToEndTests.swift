import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicTestSupport
import Testing

/// Handles through the real CLI and daemon: `start` prints the id (the handle on stderr), `ls`,
/// `show`, `approvals` print handles, and every command that names a session or an approval
/// takes a handle, a branch, or the end of an id.
@Suite(.serialized) struct HandleEndToEndTests {
    static let toolAllow = Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path

    @Test func sessionsAndApprovalsAreNamedByHandle() async throws {
        try await DaemonHarness.with { d in
            let first = try await d.start("make hello", ["--backend", "replay", "--fixture", Self.toolAllow, "--title", "hello file"])
            #expect(SessionID(first).rawValue.count == 36, "start's last line is the full id: \(first)")
            let approval = try await d.approval(first)
            #expect(approval.handle == "1.1")
            let summary = try await d.summary(first)
            #expect(summary["handle"] == "1")
            let branch = try #require(summary["branch"]?.stringValue)

            let listing = try await d.ok(["ls"])
            #expect(listing.contains("  1     awaitingApproval"), "\(listing)")
            let approvals = try await d.ok(["approvals"])
            #expect(approvals.contains("1.1") && approvals.contains("(session 1)"), "\(approvals)")
            // The same session by handle, branch and the end of its id.
            for name in ["1", "#1", branch, String(first.suffix(6))] {
                let shown = try await d.json(["show", name])
                #expect(shown["summary"]?["sessionID"]?.stringValue == first, "show \(name): \(shown)")
            }
            let approved = try await d.ok(["approve", "1.1"])
            #expect(approved.contains("approved 1.1"), "\(approved)")
            try await d.waitFor(first, ["finished"])
            let log = try await d.ok(["log", "1"])
            #expect(log.contains("? approval 1.1:"), "\(log)")

            let second = try await d.start("again", ["--backend", "replay", "--fixture", Self.toolAllow, "--title", "second"])
            #expect(try await d.summary(second)["handle"] == "2")
            let missing = try await d.nucleic(["show", "99"])
            #expect(missing.status == .exited(2) && missing.stderr.contains("no session 99"), "\(missing)")
            _ = try await d.ok(["discard", "2", "--delete-branch", "--force"])
            _ = try await d.ok(["discard", "1", "--delete-branch", "--force"])
        }
    }
}
