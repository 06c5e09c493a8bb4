import Foundation
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// Review and clean-up through the SessionHost: diffs from the branch point while other sessions
/// land, discard that keeps the work, and commits made as the repository's identity.
@Suite(.serialized) struct SessionHostReviewTests {
    typealias Setup = HostTests.Setup

    func fixture(_ name: String) -> String { Fixture.root.appendingPathComponent(name).path }

    /// A finished replayed session (no approvals on the way) with `files` written in its worktree.
    func finishedSession(_ host: SessionHost, _ files: [String: String], title: String) async throws -> SessionSummary {
        var notifications = await host.listen().makeAsyncIterator()
        let summary = try await host.startSession(.init(prompt: "Work on \(title)", backend: "replay", fixture: fixture("claude/plain.jsonl"), title: title))
        while let n = await notifications.next() {
            if case .sessionUpdated(let s) = n, s.sessionID == summary.sessionID, s.status == .finished { break }
        }
        let worktree = try #require(try await host.summary(summary.sessionID).worktree)
        for (path, text) in files {
            let full = worktree + "/" + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: full, atomically: true, encoding: .utf8)
        }
        return try await host.summary(summary.sessionID)
    }

    @Test func aSecondSessionShowsOnlyItsOwnFilesAfterTheFirstIsIntegrated() async throws {
        let setup = try Setup.make()
        defer { setup.remove() }
        let host = try await setup.host()
        _ = try await host.addProject(path: setup.repo, name: "shop")
        let first = try await finishedSession(host, ["first.txt": "one\n", "README.md": "# shop, reworded\n"], title: "first")
        let second = try await finishedSession(host, ["second.txt": "two\n"], title: "second")
        #expect(second.worktree?.hasPrefix(setup.home.path) == true)

        let done = try await host.integrate(ClientMsg.Integrate(strategy: "squash", sessionID: first.sessionID))
        guard case .integrated = done else { Issue.record("\(done)"); return }

        let (stat, files, patch) = try await host.diff(second.sessionID, statOnly: false)
        #expect(files.map(\.path) == ["second.txt"])
        #expect(stat == DiffStat(files: 1, insertions: 1, deletions: 0))
        #expect(patch?.contains("README.md") == false)
        #expect(try await host.summary(second.sessionID).diffStat == stat)

        let integrated = try await host.integrate(ClientMsg.Integrate(strategy: "squash", sessionID: second.sessionID))
        guard case .integrated(let commit, _, _) = integrated else { Issue.record("\(integrated)"); return }
        let message = try Setup.git(["log", "-1", "--format=%B", commit], in: setup.repo)
        #expect(message.hasPrefix("second\n"))
        #expect(message.contains("second.txt (+1 −0)"))
        #expect(!message.contains("first.txt") && !message.contains("README.md"), "\(message)")
        #expect(try Setup.git(["log", "-1", "--format=%an <%ae>|%cn <%ce>", commit], in: setup.repo) == "T <t@x>|T <t@x>\n")
        #expect(message.contains("Co-authored-by: Claude Code (claude-opus-5-5) <noreply@anthropic.com>"), "\(message)")
        #expect(try Setup.git(["show", "--stat", "--format=", commit], in: setup.repo).contains("second.txt"))
        #expect(!(try Setup.git(["show", "--stat", "--format=", commit], in: setup.repo)).contains("first.txt"))
        await host.shutdown()
    }

    @Test func discardCommitsTheWorkOntoTheKeptBranch() async throws {
        let setup = try Setup.make()
        defer { setup.remove() }
        let host = try await setup.host()
        _ = try await host.addProject(path: setup.repo, name: "shop")
        let session = try await finishedSession(host, ["work/notes.txt": "agent work\n"], title: "keep my work")
        let worktree = try #require(session.worktree)

        // Deleting the branch would lose the work: refused, nothing changed.
        await #expect { try await host.discard(session.sessionID, deleteBranch: true) } throws: {
            ($0 as? SessionError)?.code == .conflict && "\($0)".contains("--force")
        }
        #expect(FileManager.default.fileExists(atPath: worktree + "/work/notes.txt"))
        #expect(try await host.summary(session.sessionID).status == .finished)

        let outcome = try await host.discard(session.sessionID, deleteBranch: false)
        let snapshot = try #require(outcome.snapshot)
        #expect(!FileManager.default.fileExists(atPath: worktree))
        #expect(try Setup.git(["rev-parse", session.branch], in: setup.repo) == snapshot + "\n")
        #expect(try Setup.git(["show", "\(session.branch):work/notes.txt"], in: setup.repo) == "agent work\n")
        #expect(try Setup.git(["log", "-1", "--format=%an <%ae>|%s", snapshot], in: setup.repo) == "T <t@x>|keep my work\n")
        let trailers = try Setup.git(["log", "-1", "--format=%(trailers:only,unfold)", snapshot], in: setup.repo)
        #expect(trailers.contains("Co-authored-by: Claude Code (claude-opus-5-5) <noreply@anthropic.com>"))
        #expect(trailers.contains("Nucleic-Session: \(session.sessionID)"))
        let after = try await host.summary(session.sessionID)
        #expect(after.status == .discarded && after.worktree == nil)
        try Setup.git(["fsck", "--strict"], in: setup.repo)
        await host.shutdown()
    }

    @Test func forceDeletesAnUnintegratedBranchAndACleanSessionNeedsNoForce() async throws {
        let setup = try Setup.make()
        defer { setup.remove() }
        let host = try await setup.host()
        _ = try await host.addProject(path: setup.repo, name: "shop")
        let work = try await finishedSession(host, ["x.txt": "x\n"], title: "throwaway")
        let outcome = try await host.discard(work.sessionID, deleteBranch: true, force: true)
        #expect(outcome.branchDeleted && outcome.snapshot == nil)
        #expect(try Setup.git(["branch", "--list", work.branch], in: setup.repo).isEmpty)

        let clean = try await finishedSession(host, [:], title: "nothing")
        let cleanOutcome = try await host.discard(clean.sessionID, deleteBranch: true)
        #expect(cleanOutcome.branchDeleted && cleanOutcome.snapshot == nil)
        await host.shutdown()
    }

    @Test func theLoserOfARaceHearsTheWinningAnswer() async throws {
        let setup = try Setup.make()
        defer { setup.remove() }
        let host = try await setup.host()
        var notifications = await host.listen().makeAsyncIterator()
        _ = try await host.addProject(path: setup.repo, name: "shop")
        _ = try await host.startSession(.init(prompt: "x", backend: "replay", fixture: fixture("claude/tool-allow.jsonl")))
        var approval: ApprovalRequest?
        while let n = await notifications.next() { if case .approvalRequested(let a) = n { approval = a; break } }
        let id = try #require(approval).id
        try await host.respond(id, .allow, decidedBy: "user:first", label: "the terminal")
        await #expect { try await host.respond(id, .deny(message: "no"), decidedBy: "device:phone", label: "phone") } throws: {
            "\($0)".contains("already answered by the terminal: allowed")
        }
        await host.shutdown()
    }
}
