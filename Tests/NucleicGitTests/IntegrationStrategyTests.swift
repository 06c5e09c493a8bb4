import Foundation
@testable import NucleicGit
import Testing

/// Merge, rebase and squash, fast-forward and diverged, judged by the `git` CLI.
@Suite struct IntegrationStrategyTests {
    @Test func mergeFastForwardsWhenTheBaseHasNotMoved() throws {
        let f = try IntegrationFixture()
        let s = try f.session("ff")
        try f.commit(["src/price.swift": "func price() -> Int {\n    return 44\n}\n"], message: "raise the price", in: s.path)
        let tip = try f.commit(["src/tax.swift": "let tax = 0.2\n"], message: "add tax", in: s.path)
        let before = try f.rev("main")

        let integration = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, .merge())))

        #expect(integration.fastForward && integration.createdCommits.isEmpty && integration.snapshot == nil)
        #expect(integration.previousTip.hex == before && integration.newTip.hex == tip)
        #expect(integration.changedPaths == ["src/price.swift", "src/tax.swift"])
        #expect(integration.updatedWorktrees == [f.repoPath])
        #expect(try f.rev("main") == tip)
        #expect(try GitCLI.ok(["log", "--format=%s", "main"], in: f.repoPath) == "add tax\nraise the price\nsecond\nfirst\n")
        // The user's tree, with main checked out, moved along.
        #expect(try f.status() == "")
        #expect(try f.read("src/tax.swift") == "let tax = 0.2\n")
        #expect(try f.read("src/price.swift").contains("44"))
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func noFastForwardMakesAMergeCommit() throws {
        let f = try IntegrationFixture()
        let s = try f.session("noff")
        let tip = try f.commit(["src/tax.swift": "let tax = 0.2\n"], message: "add tax", in: s.path)
        let before = try f.rev("main")

        let integration = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, .merge(noFastForward: true))))

        #expect(!integration.fastForward && integration.createdCommits == [integration.newTip])
        #expect(try GitCLI.ok(["rev-list", "--parents", "-1", "main"], in: f.repoPath) == "\(integration.newTip.hex) \(before) \(tip)\n")
        #expect(try GitCLI.ok(["log", "-1", "--format=%an <%ae>|%cn <%ce>|%s|%(trailers:key=Nucleic-Session,valueonly)", "main"], in: f.repoPath)
                == "Nucleic <nucleic@localhost>|Nucleic <nucleic@localhost>|Work of a Nucleic session|noff\n\n")
        #expect(try GitCLI.ok(["log", "-1", "--format=%b", "main"], in: f.repoPath).hasPrefix("Merge branch 'nucleic/noff' into main.\n"))
        #expect(try f.rev("main^{tree}") == f.rev("\(tip)^{tree}"))
        // The reflog entry is signed explicitly too (libgit2 would write "unknown" here).
        #expect(try GitCLI.ok(["log", "-g", "-1", "--format=%gn <%ge>|%gs", "main"], in: f.repoPath)
                == "Nucleic <nucleic@localhost>|nucleic: integrate nucleic/noff (merge --no-ff, session noff)\n")
        #expect(try GitCLI.ok(["log", "--graph", "--format=%s", "main"], in: f.repoPath)
                == "*   Work of a Nucleic session\n|\\  \n| * add tax\n|/  \n* second\n* first\n")
        #expect(try f.status() == "")
        #expect(try f.read("src/tax.swift") == "let tax = 0.2\n")
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func mergeOfDivergedBranchesHasBothParentsAndGitsMergedTree() throws {
        let f = try IntegrationFixture()
        let s = try f.session("div")
        let sessionTip = try f.commit(["src/cart.swift": (1...40).map { $0 == 3 ? "let line3 = 300\n" : "let line\($0) = \($0)\n" }.joined()],
                                      message: "cart: line 3", in: s.path)
        let userTip = try f.commit(["src/cart.swift": (1...40).map { $0 == 38 ? "let line38 = 3800\n" : "let line\($0) = \($0)\n" }.joined(),
                                    "NOTES.md": "notes\n"], message: "cart: line 38")
        let expectedTree = try GitCLI.ok(["merge-tree", "--write-tree", "main", s.branch], in: f.repoPath).trimmingCharacters(in: .whitespacesAndNewlines)

        let integration = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, .merge())))

        #expect(!integration.fastForward)
        #expect(try GitCLI.ok(["rev-list", "--parents", "-1", "main"], in: f.repoPath) == "\(integration.newTip.hex) \(userTip) \(sessionTip)\n")
        #expect(try f.rev("main^{tree}") == expectedTree)
        #expect(integration.changedPaths == ["src/cart.swift"])
        let cart = try f.read("src/cart.swift")
        #expect(cart.contains("let line3 = 300\n") && cart.contains("let line38 = 3800\n"))
        #expect(try f.status() == "")
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func rebaseReplaysSeveralCommitsInOrderKeepingAuthorsAndMessages() throws {
        let f = try IntegrationFixture()
        let s = try f.session("rb")
        // Made within the same second: the order must come from the history, not the clock.
        try f.commit(["a.txt": "one\n"], message: "first session commit\n\nWith a body.", in: s.path)
        try f.commit(["a.txt": "one\ntwo\n", "b.txt": "b\n"], message: "second session commit", in: s.path)
        let sessionTip = try f.commit(["src/price.swift": nil], message: "third session commit", in: s.path)
        let userTip = try f.commit(["README.md": "# Shop\n\nA bigger shop.\n"], message: "user: readme")

        let integration = try expectIntegrated(try Integrator(f.repository).integrate(
            f.request(s, .rebase).with(author: Signature(name: "Host", email: "host@example.com"))))

        #expect(!integration.fastForward && integration.createdCommits.count == 3)
        #expect(integration.createdCommits.last == integration.newTip)
        // Linear, in the session's order, on top of the user's commit.
        #expect(try GitCLI.ok(["log", "--graph", "--format=%s", "main"], in: f.repoPath)
                == "* third session commit\n* second session commit\n* first session commit\n* user: readme\n* second\n* first\n")
        #expect(try f.rev("main~3") == userTip)
        #expect(try GitCLI.ok(["log", "-3", "--format=%an <%ae>|%cn <%ce>", "main"], in: f.repoPath)
                == String(repeating: "Test Person <test@example.com>|Host <host@example.com>\n", count: 3))
        #expect(try GitCLI.ok(["log", "-1", "--format=%B", "main~2"], in: f.repoPath) == "first session commit\n\nWith a body.\n\n")
        #expect(try GitCLI.ok(["rev-list", "--merges", "--count", "main"], in: f.repoPath) == "0\n")
        #expect(try f.rev("main^{tree}") == GitCLI.ok(["merge-tree", "--write-tree", userTip, sessionTip], in: f.repoPath).trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(integration.changedPaths == ["a.txt", "b.txt", "src/price.swift"])
        // The session branch keeps its own commits.
        #expect(try f.rev(s.branch) == sessionTip)
        #expect(try f.status() == "")
        #expect(!exists(f.repoPath + "/src/price.swift"))
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func rebaseOnAnUnmovedBaseFastForwards() throws {
        let f = try IntegrationFixture()
        let s = try f.session("rbff")
        try f.commit(["a.txt": "a\n"], message: "one", in: s.path)
        let tip = try f.commit(["b.txt": "b\n"], message: "two", in: s.path)
        let integration = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, .rebase)))
        #expect(integration.fastForward && integration.createdCommits.isEmpty)
        #expect(try f.rev("main") == tip)
        #expect(try f.status() == "")
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func rebaseDropsACommitWhoseChangeIsAlreadyOnTheBase() throws {
        let f = try IntegrationFixture()
        let s = try f.session("rbdup")
        try f.commit(["same.txt": "same\n"], message: "session: same", in: s.path)
        try f.commit(["own.txt": "own\n"], message: "session: own", in: s.path)
        try f.commit(["same.txt": "same\n"], message: "user: same")
        let integration = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, .rebase)))
        #expect(integration.createdCommits.count == 1)
        #expect(try GitCLI.ok(["log", "-3", "--format=%s", "main"], in: f.repoPath) == "session: own\nuser: same\nsecond\n")
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func squashWritesOneCommitWithTheMessageTheTrailerAndTheMergedTree() throws {
        let f = try IntegrationFixture()
        let s = try f.session("sq")
        try f.commit(["a.txt": "one\n"], message: "wip 1", in: s.path)
        let sessionTip = try f.commit(["a.txt": "one\ntwo\n", "docs/guide.md": nil], message: "wip 2", in: s.path)
        let userTip = try f.commit(["README.md": "# Shop\n\nA bigger shop.\n"], message: "user: readme")
        let expectedTree = try GitCLI.ok(["merge-tree", "--write-tree", userTip, sessionTip], in: f.repoPath).trimmingCharacters(in: .whitespacesAndNewlines)

        let message = "Fix the flaky payment test\n\nThe agent made the retry deterministic.\n\nTwo files changed."
        let integration = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, .squash(message: message))))

        #expect(!integration.fastForward && integration.createdCommits == [integration.newTip])
        #expect(try GitCLI.ok(["rev-list", "--parents", "-1", "main"], in: f.repoPath) == "\(integration.newTip.hex) \(userTip)\n")
        #expect(try GitCLI.ok(["log", "-1", "--format=%B", "main"], in: f.repoPath)
                == "Fix the flaky payment test\n\nThe agent made the retry deterministic.\n\nTwo files changed.\n\nNucleic-Session: sq\n\n")
        #expect(try GitCLI.ok(["log", "-1", "--format=%an <%ae>|%(trailers:key=Nucleic-Session,valueonly)", "main"], in: f.repoPath)
                == "Nucleic <nucleic@localhost>|sq\n\n")
        #expect(try f.rev("main^{tree}") == expectedTree)
        #expect(try GitCLI.ok(["diff", "--name-status", "\(userTip)", "main"], in: f.repoPath) == "A\ta.txt\nD\tdocs/guide.md\n")
        #expect(try f.status() == "")
        #expect(!exists(f.repoPath + "/docs/guide.md"))
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func squashOnAnUnmovedBaseIsOneCommitWithTheSessionsTree() throws {
        let f = try IntegrationFixture()
        let s = try f.session("sqff")
        try f.commit(["a.txt": "1\n"], message: "one", in: s.path)
        let tip = try f.commit(["a.txt": "2\n"], message: "two", in: s.path)
        let before = try f.rev("main")
        let integration = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, .squash(message: "Two in one"))))
        #expect(!integration.fastForward)
        #expect(try f.rev("main^") == before)
        #expect(try f.rev("main^{tree}") == f.rev("\(tip)^{tree}"))
        #expect(try GitCLI.ok(["log", "-1", "--format=%B", "main"], in: f.repoPath) == "Two in one\n\nNucleic-Session: sqff\n\n")
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func renamesDeletionsBinaryFilesAndExecutableBitsLandInTheUsersTree() throws {
        let f = try IntegrationFixture()
        let s = try f.session("kinds")
        try GitCLI.ok(["mv", "docs/guide.md", "docs/manual.md"], in: s.path)
        try FileManager.default.removeItem(atPath: s.path + "/placeholder/.keep")
        try f.base.writeBytes("assets/logo.bin", [0x89, 0x50, 0x00, 0xfe, 0xff, 0x00, 0x10], in: s.path)
        try GitCLI.ok(["update-index", "--chmod=+x", "tools/run.sh"], in: s.path)
        chmod(s.path + "/tools/run.sh", 0o755)
        try GitCLI.ok(["add", "-A"], in: s.path)
        try GitCLI.ok(["commit", "-q", "-m", "kinds of change"], in: s.path)
        try f.commit(["NOTES.md": "notes\n"], message: "user: notes")

        for strategy: IntegrationStrategy in [.merge()] {
            let integration = try expectIntegrated(try Integrator(f.repository).integrate(f.request(s, strategy)))
            #expect(integration.changedPaths == ["assets/logo.bin", "docs/guide.md", "docs/manual.md", "placeholder/.keep", "tools/run.sh"])
        }
        #expect(try GitCLI.ok(["diff", "--name-status", "-M", "main^", "main"], in: f.repoPath)
                == "M\tassets/logo.bin\nR100\tdocs/guide.md\tdocs/manual.md\nD\tplaceholder/.keep\nM\ttools/run.sh\n")
        #expect(try f.status() == "")
        #expect(!exists(f.repoPath + "/docs/guide.md") && exists(f.repoPath + "/docs/manual.md"))
        #expect(!exists(f.repoPath + "/placeholder"))
        #expect(FileManager.default.contents(atPath: f.repoPath + "/assets/logo.bin") == Data([0x89, 0x50, 0x00, 0xfe, 0xff, 0x00, 0x10]))
        #expect(FileManager.default.isExecutableFile(atPath: f.repoPath + "/tools/run.sh"))
        #expect(try GitCLI.ok(["ls-files", "-s", "tools/run.sh"], in: f.repoPath).hasPrefix("100755 "))
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func anEmptySessionHasNothingToIntegrate() throws {
        let f = try IntegrationFixture()
        let s = try f.session("empty")
        let before = try f.state(worktrees: [s.path])
        for strategy: IntegrationStrategy in [.merge(), .merge(noFastForward: true), .rebase, .squash(message: "x")] {
            let result = try Integrator(f.repository).integrate(f.request(s, strategy))
            #expect(result == .nothingToIntegrate(base: try #require(OID(hex: f.rev("main")))))
        }
        expectUnchanged(try f.state(worktrees: [s.path]), before)
        // A session whose only change is already on the base: squash and rebase have nothing either.
        try f.commit(["same.txt": "same\n"], message: "session: same", in: s.path)
        try f.commit(["same.txt": "same\n"], message: "user: same")
        let tip = try #require(OID(hex: f.rev("main")))
        #expect(try Integrator(f.repository).integrate(f.request(s, .squash(message: "x"))) == .nothingToIntegrate(base: tip))
        #expect(try Integrator(f.repository).integrate(f.request(s, .rebase)) == .nothingToIntegrate(base: tip))
        try GitCLI.expectFsckClean(f.repoPath)
    }

    @Test func refusesRequestsThatCannotBeCarriedOut() throws {
        let f = try IntegrationFixture()
        let s = try f.session("bad")
        let integrator = Integrator(f.repository)
        var request = f.request(s, .merge())
        request.base = s.branch
        expectGitError(.invalidRequest) { _ = try integrator.prepare(request) }
        request = f.request(s, .merge())
        request.sessionID = "two\nlines"
        expectGitError(.invalidRequest) { _ = try integrator.prepare(request) }
        request = f.request(s, .merge())
        request.base = "nope"
        expectGitError(.branchNotFound) { _ = try integrator.prepare(request) }
        request = f.request(s, .merge())
        request.worktree = f.repoPath // has main checked out, not the session branch
        expectGitError(.invalidRequest) { _ = try integrator.prepare(request) }
        // Unrelated histories.
        try GitCLI.ok(["checkout", "-q", "--orphan", "island"], in: s.path)
        try GitCLI.ok(["commit", "-q", "-m", "island"], in: s.path)
        let island = IntegrationRequest(sessionID: "i", branch: "island", worktree: nil, base: "main", strategy: .merge())
        expectGitError(.unrelatedHistories) { _ = try integrator.prepare(island) }
    }

    @Test func trailersGoWhereGitPutsThem() {
        #expect(IntegrationMessage.withSessionTrailer("Title", sessionID: "s") == "Title\n\nNucleic-Session: s\n")
        #expect(IntegrationMessage.withSessionTrailer("Title\n\nBody.\n\n", sessionID: "s") == "Title\n\nBody.\n\nNucleic-Session: s\n")
        #expect(IntegrationMessage.withSessionTrailer("Title\n\nBody.\n\nCo-authored-by: A <a@x>", sessionID: "s")
                == "Title\n\nBody.\n\nCo-authored-by: A <a@x>\nNucleic-Session: s\n")
        #expect(IntegrationMessage.withSessionTrailer("Title: with a colon", sessionID: "s") == "Title: with a colon\n\nNucleic-Session: s\n")
        #expect(IntegrationMessage.withSessionTrailer("Title\n\nNucleic-Session: s", sessionID: "s") == "Title\n\nNucleic-Session: s\n")
        #expect(IntegrationMessage.squash("  \n", sessionID: "s") == "Work of a Nucleic session\n\nNucleic-Session: s\n")
    }
}

extension IntegrationRequest {
    func with(author: Signature) -> IntegrationRequest {
        var copy = self
        copy.author = author
        return copy
    }
}
