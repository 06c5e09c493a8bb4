import Foundation
@testable import NucleicGit
import Testing

/// Conflicts, the snapshot, the user's own working tree and a base that moves: nothing of
/// anyone's is lost, and a refusal changes nothing.
@Suite struct IntegrationSafetyTests {
    static let allStrategies: [IntegrationStrategy] = [.merge(), .merge(noFastForward: true), .rebase, .squash(message: "Squashed")]

    /// A session and the user both change line 2 of src/price.swift; the session also has
    /// uncommitted and untracked work, the user an unrelated uncommitted change.
    private func conflictingSetup() throws -> (IntegrationFixture, Session) {
        let f = try IntegrationFixture()
        let s = try f.session("clash")
        try f.commit(["src/price.swift": "func price() -> Int {\n    return 50\n}\n", "a.txt": "a\n"], message: "session: price 50", in: s.path)
        try f.write(["src/cart.swift": "changed but not committed\n", "new/untracked.txt": "untracked\n", "debug.log": "ignored\n"], in: s.path)
        try f.commit(["src/price.swift": "func price() -> Int {\n    return 60\n}\n"], message: "user: price 60")
        try f.write(["README.md": "user's own edit\n", "scratch.txt": "user's untracked file\n"])
        return (f, s)
    }

    @Test(arguments: allStrategies)
    func aConflictChangesNothingAnywhereAndListsThePaths(strategy: IntegrationStrategy) throws {
        let (f, s) = try conflictingSetup()
        let before = try f.state(worktrees: [s.path])

        let result = try Integrator(f.repository).integrate(f.request(s, strategy))

        #expect(result == .conflicted(paths: ["src/price.swift"]))
        expectUnchanged(try f.state(worktrees: [s.path]), before)
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func aConflictIsFoundBeforeAnythingIsTouched() throws {
        let (f, s) = try conflictingSetup()
        let before = try f.state(worktrees: [s.path])
        let plan = try Integrator(f.repository).prepare(f.request(s, .merge()))
        #expect(plan.outcome == .conflicted(paths: ["src/price.swift"]))
        #expect(plan.snapshot != nil) // the uncommitted work took part in the merge
        #expect(plan.baseWorktrees == [f.repoPath])
        expectUnchanged(try f.state(worktrees: [s.path]), before)
    }

    @Test func aConflictInTheMiddleOfARebaseNamesThePaths() throws {
        let f = try IntegrationFixture()
        let s = try f.session("rbclash")
        try f.commit(["ok.txt": "fine\n"], message: "session: fine", in: s.path)
        try f.commit(["src/price.swift": "func price() -> Int {\n    return 50\n}\n"], message: "session: price", in: s.path)
        try f.commit(["later.txt": "later\n"], message: "session: later", in: s.path)
        try f.commit(["src/price.swift": "func price() -> Int {\n    return 60\n}\n"], message: "user: price")
        let before = try f.state(worktrees: [s.path])
        #expect(try Integrator(f.repository).integrate(f.request(s, .rebase)) == .conflicted(paths: ["src/price.swift"]))
        expectUnchanged(try f.state(worktrees: [s.path]), before)
    }

    @Test func theSnapshotCarriesUncommittedAndUntrackedWorkButNotIgnoredFiles() throws {
        let f = try IntegrationFixture()
        let s = try f.session("snap")
        try f.commit(["committed.txt": "committed\n"], message: "session: committed", in: s.path)
        let committedTip = try f.rev(s.branch)
        try f.write(["src/price.swift": "func price() -> Int {\n    return 99\n}\n",   // modified
                     "new/deep/untracked.txt": "untracked\n",                          // untracked, new folders
                     "README.md": nil,                                                 // deleted
                     "debug.log": "ignored\n", "build/out.o": "ignored too\n"],         // ignored
                    in: s.path)
        try GitCLI.ok(["add", "src/price.swift"], in: s.path) // one of them staged

        let integration = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, .merge())))

        let snapshot = try #require(integration.snapshot)
        #expect(integration.fastForward && integration.newTip == snapshot && integration.sessionTip == snapshot)
        #expect(try f.rev("main") == snapshot.hex)
        #expect(try f.rev(s.branch) == snapshot.hex)
        #expect(try f.rev("\(snapshot.hex)^") == committedTip)
        #expect(try GitCLI.ok(["log", "-1", "--format=%an <%ae>|%s|%(trailers:key=Nucleic-Session,valueonly)", snapshot.hex], in: f.repoPath)
                == "Nucleic <nucleic@localhost>|Work of a Nucleic session|snap\n\n")
        #expect(try GitCLI.ok(["diff", "--name-status", committedTip, snapshot.hex], in: f.repoPath)
                == "D\tREADME.md\nA\tnew/deep/untracked.txt\nM\tsrc/price.swift\n")
        #expect(try GitCLI.ok(["ls-tree", "-r", "--name-only", "main"], in: f.repoPath).split(separator: "\n").allSatisfy { !$0.hasSuffix(".log") && !$0.hasPrefix("build/") })
        // The session worktree is clean, its ignored files still there.
        #expect(try f.status(s.path) == "")
        #expect(try f.status(s.path, ignored: true) == "!! build/out.o\n!! debug.log\n")
        // The user's tree moved to the snapshot.
        #expect(try f.status() == "")
        #expect(try f.read("new/deep/untracked.txt") == "untracked\n" && !exists(f.repoPath + "/README.md"))
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func snapshotOnItsOwnCommitsWithTheTrailerAndLeavesTheWorktreeClean() throws {
        let f = try IntegrationFixture()
        let s = try f.session("alone")
        let integrator = Integrator(f.repository)
        #expect(try integrator.snapshot(worktree: s.path, sessionID: "alone") == nil)
        try f.write(["x.txt": "x\n", "y.log": "ignored\n"], in: s.path)
        let commit = try #require(try integrator.snapshot(worktree: s.path, sessionID: "alone", author: Signature(name: "Ana", email: "ana@example.com")))
        #expect(try f.rev(s.branch) == commit.hex)
        #expect(try GitCLI.ok(["log", "-1", "--format=%an <%ae>|%(trailers:key=Nucleic-Session,valueonly)", s.branch], in: f.repoPath) == "Ana <ana@example.com>|alone\n\n")
        #expect(try f.status(s.path, ignored: true) == "!! y.log\n")
        #expect(try f.rev("main") != commit.hex)
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test(arguments: ["unstaged", "staged", "untracked", "ignored"])
    func aDirtyPathTheIntegrationTouchesRefusesAndChangesNothing(kind: String) throws {
        let f = try IntegrationFixture()
        let s = try f.session("dirty-\(kind)")
        // The session changes src/price.swift and adds added.txt and build/forced.txt (force-added, ignored).
        try f.write(["src/price.swift": "func price() -> Int {\n    return 7\n}\n", "added.txt": "session\n", "build/forced.txt": "session\n"], in: s.path)
        try GitCLI.ok(["add", "-A", "-f", "."], in: s.path)
        try GitCLI.ok(["commit", "-q", "-m", "session work"], in: s.path)
        try f.commit(["NOTES.md": "notes\n"], message: "user: notes")
        let dirtyPath: String
        switch kind {
        case "unstaged":
            try f.write(["src/price.swift": "user's edit\n"])
            dirtyPath = "src/price.swift"
        case "staged":
            try f.write(["src/price.swift": "user's staged edit\n"])
            try GitCLI.ok(["add", "src/price.swift"], in: f.repoPath)
            dirtyPath = "src/price.swift"
        case "untracked":
            try f.write(["added.txt": "user's own file\n"])
            dirtyPath = "added.txt"
        default:
            try f.write(["build/forced.txt": "user's ignored build output\n"])
            dirtyPath = "build/forced.txt"
        }
        let before = try f.state(worktrees: [s.path])

        for strategy in Self.allStrategies {
            let result = try Integrator(f.repository).integrate(f.request(s, strategy))
            #expect(result == .dirtyBaseWorktree(worktree: f.repoPath, paths: [dirtyPath]), "\(strategy)")
            expectUnchanged(try f.state(worktrees: [s.path]), before)
        }
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func aFileInTheWayOfANewFolderRefuses() throws {
        let f = try IntegrationFixture()
        let s = try f.session("blocker")
        try f.commit(["gen/code.swift": "generated\n"], message: "session: gen/", in: s.path)
        try f.write(["gen": "a user's file named like the new folder\n"])
        let before = try f.state(worktrees: [s.path])
        let result = try Integrator(f.repository).integrate(f.request(s, .merge()))
        guard case .dirtyBaseWorktree(let worktree, let paths) = result else {
            Issue.record("expected .dirtyBaseWorktree, got \(result)")
            return
        }
        #expect(worktree == f.repoPath && paths == ["gen"])
        expectUnchanged(try f.state(worktrees: [s.path]), before)
    }

    @Test func aFileReplacedByAFolderAndAFolderByAFileLandWhenClean() throws {
        let f = try IntegrationFixture()
        let s = try f.session("swap")
        // tools/run.sh becomes a folder tools/run.sh/; placeholder/ becomes a file.
        try f.commit(["tools/run.sh": nil, "placeholder/.keep": nil], message: "session: clear", in: s.path)
        try FileManager.default.removeItem(atPath: s.path + "/placeholder")
        try f.commit(["tools/run.sh/main.sh": "echo folder\n", "placeholder": "now a file\n"], message: "session: swap", in: s.path)
        try f.commit(["NOTES.md": "notes\n"], message: "user: notes")
        try f.write(["placeholder/mine.txt": "user's untracked file in the old folder\n"])
        let before = try f.state(worktrees: [s.path])
        #expect(try Integrator(f.repository).integrate(f.request(s, .merge())) == .dirtyBaseWorktree(worktree: f.repoPath, paths: ["placeholder/mine.txt"]))
        expectUnchanged(try f.state(worktrees: [s.path]), before)

        try FileManager.default.removeItem(atPath: f.repoPath + "/placeholder/mine.txt")
        _ = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, .merge())))
        #expect(try f.status() == "")
        #expect(try f.read("tools/run.sh/main.sh") == "echo folder\n" && f.read("placeholder") == "now a file\n")
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func unrelatedUncommittedWorkInTheUsersTreeSurvives() throws {
        let f = try IntegrationFixture()
        let s = try f.session("survive")
        try f.commit(["src/price.swift": "func price() -> Int {\n    return 7\n}\n", "added.txt": "session\n"], message: "session work", in: s.path)
        try f.commit(["NOTES.md": "notes\n"], message: "user: notes")
        try f.write(["README.md": "user's unstaged edit\n", "docs/guide.md": "user's staged edit\n", "mine.txt": "user's untracked\n", "mine.log": "user's ignored\n"])
        try GitCLI.ok(["add", "docs/guide.md"], in: f.repoPath)
        let statusBefore = try f.status(ignored: true)

        let integration = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, .merge())))

        #expect(integration.updatedWorktrees == [f.repoPath])
        #expect(try f.status(ignored: true) == statusBefore)
        #expect(statusBefore == " M README.md\nM  docs/guide.md\n?? mine.txt\n!! mine.log\n")
        #expect(try f.read("README.md") == "user's unstaged edit\n")
        #expect(try f.read("docs/guide.md") == "user's staged edit\n")
        #expect(try f.read("mine.txt") == "user's untracked\n" && f.read("mine.log") == "user's ignored\n")
        #expect(try f.read("added.txt") == "session\n" && f.read("src/price.swift").contains("7"))
        #expect(try GitCLI.ok(["diff", "--cached", "--name-only"], in: f.repoPath) == "docs/guide.md\n")
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func aBaseCheckedOutInALinkedWorktreeIsHandledThere() throws {
        let f = try IntegrationFixture()
        let s = try f.session("linked")
        try f.commit(["added.txt": "session\n"], message: "session work", in: s.path)
        // The user's tree moves to another branch; main is checked out in a linked worktree.
        try GitCLI.ok(["switch", "-q", "-c", "elsewhere"], in: f.repoPath)
        let userTree = f.base.temp.sub("user-main")
        try GitCLI.ok(["worktree", "add", "-q", userTree, "main"], in: f.repoPath)
        try f.write(["added.txt": "in the way\n"], in: userTree)
        let before = try f.state(worktrees: [s.path, userTree])

        let refused = try Integrator(f.repository).integrate(f.request(s, .merge(noFastForward: true)))
        #expect(refused == .dirtyBaseWorktree(worktree: userTree, paths: ["added.txt"]))
        expectUnchanged(try f.state(worktrees: [s.path, userTree]), before)

        try FileManager.default.removeItem(atPath: userTree + "/added.txt")
        try f.write(["README.md": "unrelated edit\n"], in: userTree)
        let integration = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, .merge(noFastForward: true))))
        #expect(integration.updatedWorktrees == [userTree])
        #expect(try f.rev("HEAD", in: userTree) == integration.newTip.hex)
        #expect(try f.status(userTree) == " M README.md\n")
        #expect(try f.read("added.txt", in: userTree) == "session\n")
        // The main working tree, on another branch, was not touched.
        #expect(try f.status() == "" && !exists(f.repoPath + "/added.txt"))
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func aBaseCheckedOutNowhereOnlyMovesTheRef() throws {
        let f = try IntegrationFixture()
        let s = try f.session("nowhere")
        try f.commit(["added.txt": "session\n"], message: "session work", in: s.path)
        try GitCLI.ok(["switch", "-q", "-c", "elsewhere"], in: f.repoPath)
        let integration = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, .squash(message: "Add a file"))))
        #expect(integration.updatedWorktrees.isEmpty)
        #expect(try f.rev("main") == integration.newTip.hex)
        #expect(try f.status() == "" && !exists(f.repoPath + "/added.txt"))
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func aBaseThatMovedAfterPreparingIsRedoneFromItsNewTip() throws {
        let f = try IntegrationFixture()
        let s = try f.session("moved")
        let sessionTip = try f.commit(["added.txt": "session\n"], message: "session work", in: s.path)
        let integrator = Integrator(f.repository)
        let plan = try integrator.prepare(f.request(s, .merge()))
        guard case .ready(_, true, _, _) = plan.outcome else {
            Issue.record("expected a fast-forward plan, got \(plan.outcome)")
            return
        }
        let userTip = try f.commit(["NOTES.md": "notes\n"], message: "user: notes")

        let integration = try expectIntegrated(try integrator.apply(plan))

        #expect(integration.retried && !integration.fastForward)
        #expect(integration.previousTip.hex == userTip)
        #expect(try GitCLI.ok(["rev-list", "--parents", "-1", "main"], in: f.repoPath) == "\(integration.newTip.hex) \(userTip) \(sessionTip)\n")
        #expect(try f.status() == "")
        #expect(try f.read("added.txt") == "session\n" && f.read("NOTES.md") == "notes\n")
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func aBaseThatMovedIntoAConflictAfterPreparingChangesNothing() throws {
        let f = try IntegrationFixture()
        let s = try f.session("movedclash")
        try f.commit(["src/price.swift": "func price() -> Int {\n    return 50\n}\n"], message: "session: price", in: s.path)
        try f.write(["wip.txt": "uncommitted\n"], in: s.path)
        let integrator = Integrator(f.repository)
        let plan = try integrator.prepare(f.request(s, .rebase))
        try f.commit(["src/price.swift": "func price() -> Int {\n    return 60\n}\n"], message: "user: price")
        let before = try f.state(worktrees: [s.path])
        #expect(try integrator.apply(plan) == .conflicted(paths: ["src/price.swift"]))
        expectUnchanged(try f.state(worktrees: [s.path]), before)
    }

    @Test func aBaseThatMovesAfterTheChecksIsPutBackAndRedone() throws {
        let f = try IntegrationFixture()
        let s = try f.session("race")
        let sessionTip = try f.commit(["added.txt": "session\n", "src/price.swift": "func price() -> Int {\n    return 1\n}\n"], message: "session work", in: s.path)
        var integrator = Integrator(f.repository)
        var attempts = 0
        var userTip = ""
        // The user commits in their tree after the checks passed, before the update: the files
        // are checked out, the compare-and-swap fails, the files are put back, and it is redone.
        integrator.beforeUpdate = {
            attempts += 1
            if attempts == 1 { userTip = try f.commit(["NOTES.md": "notes\n"], message: "user: notes") }
        }

        let integration = try expectIntegrated(try integrator.integrate(f.request(s, .merge())))

        #expect(attempts == 2 && integration.retried)
        #expect(try GitCLI.ok(["rev-list", "--parents", "-1", "main"], in: f.repoPath) == "\(integration.newTip.hex) \(userTip) \(sessionTip)\n")
        #expect(try f.status() == "")
        #expect(try f.read("added.txt") == "session\n" && f.read("NOTES.md") == "notes\n")
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func aBaseThatKeepsMovingIsRefusedWithTheFilesPutBack() throws {
        let f = try IntegrationFixture()
        let s = try f.session("restless")
        try f.commit(["added.txt": "session\n", "src/price.swift": "func price() -> Int {\n    return 1\n}\n"], message: "session work", in: s.path)
        try f.write(["wip.txt": "uncommitted\n"], in: s.path)
        var integrator = Integrator(f.repository)
        var attempts = 0
        var before: RepositoryState?
        integrator.beforeUpdate = {
            attempts += 1
            try f.commit(["NOTES.md": "notes \(attempts)\n"], message: "user: notes \(attempts)")
            before = try f.state(worktrees: [s.path])
        }

        let result = try integrator.integrate(f.request(s, .merge()))

        #expect(attempts == 2)
        #expect(result == .baseMoved(expected: try #require(OID(hex: f.rev("main~1"))), actual: try #require(OID(hex: f.rev("main")))))
        // Everything is as the user's last commit left it: the checked-out files were put back.
        // (The index has the same entries, but the stat data of the files written twice.)
        expectUnchanged(try f.state(worktrees: [s.path]), try #require(before), ignoring: [f.repoPath + "/.git/index"])
        #expect(try GitCLI.ok(["ls-files", "-s"], in: f.repoPath) == GitCLI.ok(["ls-tree", "-r", "--format=%(objectmode) %(objectname) 0\t%(path)", "main"], in: f.repoPath))
        #expect(try f.status() == "" && !exists(f.repoPath + "/added.txt"))
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func cleanupRemovesTheWorktreeAndTheBranch() throws {
        let f = try IntegrationFixture()
        let s = try f.session("tidy")
        try f.write(["added.txt": "uncommitted\n"], in: s.path)
        let integration = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, .squash(message: "Tidy")), cleanup: .removeWorktreeAndBranch))
        #expect(integration.warnings.isEmpty)
        #expect(!exists(s.path))
        #expect(try !f.base.branchExistsInGit(s.branch))
        #expect(try GitCLI.worktrees(f.repoPath).count == 1)
        #expect(try f.read("added.txt") == "uncommitted\n")
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func theActorIntegratesOnItsThread() async throws {
        let f = try IntegrationFixture()
        let s = try f.session("actor")
        try f.write(["added.txt": "uncommitted\n"], in: s.path)
        let actor = try await RepositoryActor.open(f.repoPath)
        let request = f.request(s, .merge(noFastForward: true))
        let plan = try await actor.prepareIntegration(request)
        #expect(plan.snapshot != nil)
        let result = try await actor.applyIntegration(plan)
        let integration = try expectIntegrated(result)
        #expect(try f.rev("main") == integration.newTip.hex)
        #expect(try await actor.integrate(request) == .nothingToIntegrate(base: integration.newTip))
        try f.write(["more.txt": "more\n"], in: s.path)
        let second = try expectIntegrated(try await actor.integrate(
            branch: s.branch, into: "main", strategy: .rebase, sessionID: s.id, worktree: s.path, cleanup: .removeWorktreeAndBranch))
        // The snapshot (on top of the first one) is replayed onto the merge commit.
        #expect(!second.fastForward && second.createdCommits == [second.newTip] && second.snapshot != nil)
        #expect(try f.rev("main^") == integration.newTip.hex)
        #expect(try f.read("more.txt") == "more\n" && !exists(s.path))
    }
}
