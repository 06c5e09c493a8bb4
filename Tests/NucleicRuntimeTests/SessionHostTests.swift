import Foundation
import NucleicAdapters
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// The SessionHost with real repositories, real SQLite, real files and the replay agent as the backend.
@Suite(.serialized) struct HostTests {
    struct Setup {
        let root: String
        let repo: String
        var home: NucleicHome { NucleicHome(path: root + "/home") }

        static func make() throws -> Setup {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-host-\(UUID().uuidString)").path
            let repo = root + "/shop"
            try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
            try "# shop\n".write(toFile: repo + "/README.md", atomically: true, encoding: .utf8)
            for args in [["init", "-q", "-b", "main"], ["config", "user.name", "T"], ["config", "user.email", "t@x"], ["add", "."],
                         ["commit", "-qm", "initial"]] {
                try git(args, in: repo)
            }
            return Setup(root: root, repo: repo)
        }

        @discardableResult
        static func git(_ arguments: [String], in directory: String) throws -> String {
            try TestGit.run(arguments, in: directory)
        }

        func host(maxRunning: Int = 4) async throws -> SessionHost {
            try await SessionHost.open(SessionHost.Configuration(home: home, adapters: [:], selfExecutable: NucleicBinary.path,
                                                  maxRunning: maxRunning, replaySpeed: "max"))
        }

        /// Ends what a failed test left running (shims outlive their host), then removes the folder.
        func remove() {
            LeftoverShims.end(home: home.path)
            try? FileManager.default.removeItem(atPath: root)
        }
    }

    func fixture(_ name: String) -> String { Fixture.root.appendingPathComponent(name).path }

    /// Waits for a notification matching `predicate`.
    func wait(_ notifications: inout AsyncStream<SessionHost.Notification>.Iterator, _ predicate: (SessionHost.Notification) -> Bool) async -> SessionHost.Notification? {
        while let n = await notifications.next() { if predicate(n) { return n } }
        return nil
    }

    func status(_ status: SessionStatus) -> (SessionHost.Notification) -> Bool {
        { if case .sessionUpdated(let s) = $0 { s.status == status } else { false } }
    }

    @Test func aSessionRunsInItsWorktreeIsAnsweredAndDiscarded() async throws {
        let setup = try Setup.make()
        defer { setup.remove() }
        let host = try await setup.host()
        var notifications = await host.listen().makeAsyncIterator()
        let project = try await host.addProject(path: setup.repo, name: nil)
        #expect(project.name == "shop" && project.baseBranch == "main")

        let summary = try await host.startSession(.init(prompt: "Create hello.txt", backend: "replay", fixture: fixture("claude/tool-allow.jsonl")))
        #expect(summary.branch.hasPrefix("nucleic/create-hello-txt-"))
        let worktrees = try Setup.git(["worktree", "list", "--porcelain"], in: setup.repo)
        #expect(worktrees.contains("branch refs/heads/\(summary.branch)"))
        #expect(worktrees.contains(setup.home.worktree(project: "shop", session: summary.sessionID)))

        guard case .approvalRequested(let approval)? = await wait(&notifications, { if case .approvalRequested = $0 { true } else { false } }) else {
            Issue.record("no approval"); return
        }
        #expect(approval.sessionID == summary.sessionID)
        #expect(try await host.pendingApprovals().map(\.id) == [approval.id])
        _ = await wait(&notifications, status(.awaitingApproval))
        #expect(try await host.sessions(includeArchived: false).first?.status == .awaitingApproval)
        try await host.respond(approval.id, .allow, decidedBy: "user:test", label: nil)
        await #expect(throws: SessionError.self) { try await host.respond(approval.id, .allow, decidedBy: "device:x", label: "phone") }
        _ = await wait(&notifications, status(.finished))
        #expect(try await host.pendingApprovals().isEmpty)

        let events = try await host.events(summary.sessionID, after: 0)
        #expect(events.map(\.seq) == Array(1...Int64(events.count)))
        #expect(events.contains { $0.event.kind == "approvalResolved" })
        #expect(try await host.summary(summary.sessionID).lastSeq == Int64(events.count))
        #expect(try await host.exportFixture(summary.sessionID).hasPrefix(#"{"fixture":1"#))

        try await host.discard(summary.sessionID, deleteBranch: false)
        let after = try Setup.git(["worktree", "list", "--porcelain"], in: setup.repo)
        #expect(!after.contains(summary.branch))
        #expect(try Setup.git(["branch", "--list", summary.branch], in: setup.repo).contains(summary.branch))
        #expect(try await host.summary(summary.sessionID).status == .discarded)
        #expect(try await host.events(summary.sessionID, after: 0).count >= events.count, "the transcript stays")
        try Setup.git(["fsck", "--strict"], in: setup.repo)
        await host.shutdown()
    }

    @Test func aRestartLeavesAWaitingSessionAwaitingInput() async throws {
        let setup = try Setup.make()
        defer { setup.remove() }
        var id: SessionID?
        do {
            let host = try await setup.host()
            var notifications = await host.listen().makeAsyncIterator()
            _ = try await host.addProject(path: setup.repo, name: "shop")
            let summary = try await host.startSession(.init(prompt: "x", backend: "replay", fixture: fixture("claude/tool-allow.jsonl")))
            id = summary.sessionID
            _ = await wait(&notifications, { if case .approvalRequested = $0 { true } else { false } })
            await host.shutdown()  // as if the daemon died: nothing answered the approval
        }
        let host = try await setup.host()
        let summary = try await host.summary(try #require(id))
        #expect(summary.status == .awaitingInput)
        #expect(summary.pendingApprovals == 0)
        let events = try await host.events(summary.sessionID, after: 0)
        #expect(events.map(\.seq) == Array(1...Int64(events.count)))
        #expect(events.suffix(2).map(\.event.kind) == ["approvalWithdrawn", "statusChanged"], "\(events.suffix(4).map { JSONWriter.string($0.json) })")
        await #expect(throws: SessionError.self) { try await host.sendInput(summary.sessionID, "go on") }
        await host.shutdown()
    }

    @Test func aHostThatStopsLeavesTheAgentToTheNextHost() async throws {
        let setup = try Setup.make()
        defer { setup.remove() }
        var id: SessionID?
        var asked: ApprovalRequest?
        do {
            let host = try await setup.host()
            var notifications = await host.listen().makeAsyncIterator()
            _ = try await host.addProject(path: setup.repo, name: "shop")
            id = try await host.startSession(.init(prompt: "x", backend: "replay", fixture: fixture("claude/tool-allow.jsonl"))).sessionID
            if case .approvalRequested(let request)? = await wait(&notifications, { if case .approvalRequested = $0 { true } else { false } }) {
                asked = request
            }
            await host.shutdown(killSessions: false)  // the agent stays with its shim
        }
        let approval = try #require(asked)
        let host = try await setup.host()
        var notifications = await host.listen().makeAsyncIterator()
        let summary = try await host.summary(try #require(id))
        #expect(summary.status == .awaitingApproval && summary.pendingApprovals == 1, "adopted, still asking")
        #expect(try await host.pendingApprovals().map(\.id) == [approval.id])
        try await host.respond(approval.id, .allow, decidedBy: "user:test", label: nil)
        _ = await wait(&notifications, status(.finished))
        let events = try await host.events(summary.sessionID, after: 0)
        #expect(events.map(\.seq) == Array(1...Int64(events.count)))
        #expect(events.filter { $0.event.kind == "approvalResolved" }.count == 1)
        #expect(!events.contains { $0.event.kind == "approvalWithdrawn" })
        await host.shutdown()
    }

    @Test func sessionsBeyondTheCapWaitQueued() async throws {
        let setup = try Setup.make()
        defer { setup.remove() }
        let host = try await setup.host(maxRunning: 1)
        var notifications = await host.listen().makeAsyncIterator()
        _ = try await host.addProject(path: setup.repo, name: "shop")
        let first = try await host.startSession(.init(prompt: "one", backend: "replay", fixture: fixture("claude/tool-allow.jsonl")))
        let second = try await host.startSession(.init(prompt: "two", backend: "replay", fixture: fixture("claude/plain.jsonl")))
        #expect(second.status == .queued)
        guard case .approvalRequested(let approval)? = await wait(&notifications, { if case .approvalRequested = $0 { true } else { false } }) else { return }
        #expect(try await host.summary(second.sessionID).status == .queued)
        try await host.respond(approval.id, .allow, decidedBy: "user:test", label: nil)
        _ = await wait(&notifications, { if case .sessionUpdated(let s) = $0 { s.sessionID == second.sessionID && s.status == .finished } else { false } })
        #expect(try await host.summary(first.sessionID).status == .finished)
        await host.shutdown()
    }

    @Test func clearErrorsForWhatCannotBeDone() async throws {
        let setup = try Setup.make()
        defer { setup.remove() }
        let host = try await setup.host()
        await #expect(throws: SessionError.self) { try await host.startSession(.init(prompt: "x", backend: "replay", fixture: "/nope.jsonl")) }
        await #expect(throws: SessionError.self) { try await host.addProject(path: setup.root + "/not-a-repo", name: nil) }
        _ = try await host.addProject(path: setup.repo, name: "shop")
        await #expect(throws: SessionError.self) { try await host.addProject(path: setup.repo, name: "shop") }
        await #expect(throws: SessionError.self) { try await host.startSession(.init(prompt: "x", backend: "gpt-9")) }
        await #expect(throws: SessionError.self) { try await host.startSession(.init(prompt: "x", backend: "replay")) }
        await #expect(throws: SessionError.self) { try await host.resolveSession("ffff") }
        await host.shutdown()
    }

    @Test func integrationSquashesOrRefusesOnConflictChangingNothing() async throws {
        let setup = try Setup.make()
        defer { setup.remove() }
        let host = try await setup.host()
        var notifications = await host.listen().makeAsyncIterator()
        _ = try await host.addProject(path: setup.repo, name: "shop")
        let first = try await host.startSession(.init(prompt: "Add notes", backend: "replay", fixture: fixture("claude/plain.jsonl")))
        _ = await wait(&notifications, { if case .sessionUpdated(let s) = $0 { s.sessionID == first.sessionID && s.status == .finished } else { false } })
        let worktree = setup.home.worktree(project: "shop", session: first.sessionID)
        try "notes\n".write(toFile: worktree + "/notes.txt", atomically: true, encoding: .utf8)
        #expect(try await host.overlap(project: "shop").isEmpty)

        let outcome = try await host.integrate(.init(strategy: "squash", sessionID: first.sessionID))
        guard case .integrated(let commit, false, let paths) = outcome else { Issue.record("\(outcome)"); return }
        #expect(paths == ["notes.txt"])
        #expect(try Setup.git(["rev-parse", "main"], in: setup.repo).hasPrefix(commit))
        let message = try Setup.git(["log", "-1", "--format=%an%n%B", "main"], in: setup.repo)
        #expect(message.hasPrefix("T\nAdd notes\n") && message.contains("Nucleic-Session: \(first.sessionID.rawValue)"), "\(message)")
        #expect(message.contains("Co-authored-by: Claude Code (claude-opus-5-5) <noreply@anthropic.com>"), "\(message)")
        #expect(FileManager.default.fileExists(atPath: setup.repo + "/notes.txt"), "the user's checkout of main moved along")
        #expect(!FileManager.default.fileExists(atPath: worktree))
        #expect(try await host.summary(first.sessionID).status == .integrated)
        #expect(try Setup.git(["branch", "--list", first.branch], in: setup.repo).isEmpty)

        let second = try await host.startSession(.init(prompt: "Change readme", backend: "replay", fixture: fixture("claude/plain.jsonl")))
        _ = await wait(&notifications, { if case .sessionUpdated(let s) = $0 { s.sessionID == second.sessionID && s.status == .finished } else { false } })
        let worktree2 = setup.home.worktree(project: "shop", session: second.sessionID)
        try "agent\n".write(toFile: worktree2 + "/README.md", atomically: true, encoding: .utf8)
        try "user\n".write(toFile: setup.repo + "/README.md", atomically: true, encoding: .utf8)
        try Setup.git(["-c", "user.name=T", "-c", "user.email=t@x", "commit", "-qam", "user change"], in: setup.repo)
        let before = try Setup.git(["rev-parse", "main", second.branch], in: setup.repo)
        let conflict = try await host.integrate(.init(strategy: "merge", sessionID: second.sessionID))
        #expect(conflict == .refused(reason: "conflicted", paths: ["README.md"], message: {
            if case .refused(_, _, let m) = conflict { m } else { "" }
        }()))
        #expect(try Setup.git(["rev-parse", "main", second.branch], in: setup.repo) == before)
        #expect(try String(contentsOfFile: worktree2 + "/README.md", encoding: .utf8) == "agent\n")
        #expect(try await host.summary(second.sessionID).status == .conflicted)
        try Setup.git(["fsck", "--strict"], in: setup.repo)
        await host.shutdown()
    }

    @Test func aRunningSessionsDiffStatIsPublishedAfterItsToolsRun() async throws {
        let setup = try Setup.make()
        defer { setup.remove() }
        let host = try await setup.host()
        var notifications = await host.listen().makeAsyncIterator()
        _ = try await host.addProject(path: setup.repo, name: "shop")
        let summary = try await host.startSession(.init(prompt: "Create hello.txt", backend: "replay", fixture: fixture("claude/tool-allow.jsonl")))
        guard case .approvalRequested(let approval)? = await wait(&notifications, { if case .approvalRequested = $0 { true } else { false } }) else { return }
        // What the real tool would have done in the worktree.
        try "hello\n".write(toFile: setup.home.worktree(project: "shop", session: summary.sessionID) + "/hello.txt", atomically: true, encoding: .utf8)
        try await host.respond(approval.id, .allow, decidedBy: "user:test", label: nil)
        let updated = await wait(&notifications, { if case .sessionUpdated(let s) = $0 { s.diffStat?.files == 1 } else { false } })
        guard case .sessionUpdated(let s)? = updated else { Issue.record("no diff stat published"); return }
        #expect(s.diffStat == DiffStat(files: 1, insertions: 1, deletions: 0))
        #expect(try await host.summary(summary.sessionID).diffStat == DiffStat(files: 1, insertions: 1, deletions: 0))
        await host.shutdown()
    }

    @Test func aHundredConcurrentAnswersOneWins() async throws {
        let setup = try Setup.make()
        defer { setup.remove() }
        let host = try await setup.host()
        var notifications = await host.listen().makeAsyncIterator()
        _ = try await host.addProject(path: setup.repo, name: "shop")
        let summary = try await host.startSession(.init(prompt: "x", backend: "replay", fixture: fixture("claude/tool-allow.jsonl")))
        guard case .approvalRequested(let approval)? = await wait(&notifications, { if case .approvalRequested = $0 { true } else { false } }) else { return }
        let outcomes = await withTaskGroup(of: (Int, SessionError?).self) { group in
            for client in 0..<100 {
                group.addTask {
                    do {
                        try await host.respond(approval.id, .allow, decidedBy: "device:\(client)", label: "client \(client)")
                        return (client, nil)
                    } catch { return (client, error as? SessionError ?? SessionError(.internalError, "\(error)")) }
                }
            }
            var all: [(Int, SessionError?)] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        let winners = outcomes.filter { $0.1 == nil }.map { $0.0 }
        #expect(winners.count == 1)
        let winner = try #require(winners.first)
        for (_, error) in outcomes where error != nil {
            #expect(error?.code == .alreadyResolved && error?.message.contains("client \(winner)") == true, "\(String(describing: error))")
        }
        _ = await wait(&notifications, status(.finished))
        let events = try await host.events(summary.sessionID, after: 0)
        let resolutions = events.compactMap { if case .approvalResolved(let r) = $0.event { r } else { nil } }
        #expect(resolutions.count == 1 && resolutions.first?.decidedBy == "device:\(winner)")
        // The agent received exactly one answer: the replay agent checks every host line against
        // the recording and would have failed on a second one.
        #expect(try await host.summary(summary.sessionID).status == .finished)
        let raw = try await host.exportFixture(summary.sessionID)
        let answers = raw.split(separator: "\n").filter { $0.contains(#""dir":"in""#) && $0.contains("control_response") }
        #expect(answers.count == 1, "\(answers)")
        await host.shutdown()
    }
}
