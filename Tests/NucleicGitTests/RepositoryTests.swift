import Foundation
import NucleicGit
import Testing

/// Opening, creating and reading repositories.
@Suite struct RepositoryTests {
    @Test func linksLibgit2OneFiveOne() {
        #expect(LibGit2.version == "1.5.1")
    }

    @Test func opensFromASubdirectory() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath + "/src")
        #expect(repository.workdir == fixture.repoPath)
        #expect(repository.gitDirectory == fixture.repoPath + "/.git")
        #expect(repository.commonDirectory == fixture.repoPath + "/.git")
        #expect(!repository.isBare && !repository.isLinkedWorktree)
        #expect(try repository.currentBranch == "main")
        #expect(try repository.headCommit?.hex == (try fixture.tip()))
        #expect(try repository.branchTip("main").hex == (try fixture.tip()))
        #expect(try repository.branchExists("main"))
        #expect(try !repository.branchExists("nope"))
        #expect(try !repository.branchExists("not a valid name"))
        #expect(try repository.branches() == ["main"])
        // Opening the .git folder itself works too.
        #expect(try Repository.open(fixture.repoPath + "/.git").workdir == fixture.repoPath)
    }

    @Test func reportsAMissingRepositoryClearly() throws {
        let temp = try TemporaryDirectory()
        let plain = temp.sub("plain/folder")
        try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: true)
        let error = expectGitError(.repositoryNotFound) { _ = try Repository.open(plain) }
        #expect(error?.message.contains(plain) == true)
        #expect(error?.message.contains("git init") == true)
        #expect(error?.function == "git_repository_open_ext")

        let missing = expectGitError(.repositoryNotFound) { _ = try Repository.open(temp.sub("does/not/exist")) }
        #expect(missing?.message.contains("does not exist") == true)
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give the repository to another user"))
    func reportsARepositoryOwnedByAnotherUser() throws {
        let fixture = try Fixture()
        // Hand the repository to `nobody`; we (root) are then not its owner.
        let chown = Process()
        chown.executableURL = URL(fileURLWithPath: "/bin/chown")
        chown.arguments = ["-R", "65534:65534", fixture.repoPath]
        try chown.run()
        chown.waitUntilExit()
        #expect(chown.terminationStatus == 0)

        let error = expectGitError(.notOwned) { _ = try Repository.open(fixture.repoPath) }
        #expect(error?.message.contains("safe.directory") == true)
        #expect(error?.message.contains("uid 65534") == true)
        // Git agrees that something is wrong with this repository for this user.
        #expect(try GitCLI.run(["status"], in: fixture.repoPath).error.contains("dubious ownership"))
    }

    @Test func createsARepositoryOnTheGivenBranch() throws {
        let temp = try TemporaryDirectory()
        let path = temp.sub("new/repo")
        let repository = try Repository.create(at: path, initialBranch: "trunk")
        #expect(repository.workdir == path)
        #expect(try repository.currentBranch == "trunk")
        #expect(try repository.headCommit == nil)
        #expect(try GitCLI.ok(["symbolic-ref", "HEAD"], in: path) == "refs/heads/trunk\n")

        // A first commit by an explicit author (no user.name needed).
        try "hello\n".write(toFile: path + "/hello.txt", atomically: false, encoding: .utf8)
        let first = try #require(try repository.commitAll(message: "first", author: Signature(name: "A", email: "a@example.com")))
        #expect(try GitCLI.ok(["rev-parse", "HEAD"], in: path) == first.hex + "\n")
        #expect(try GitCLI.ok(["log", "--format=%an <%ae> %s"], in: path) == "A <a@example.com> first\n")
        #expect(try repository.commitAll(message: "nothing") == nil)
        try GitCLI.expectFsckClean(path)

        let bare = try Repository.create(at: temp.sub("bare.git"), bare: true)
        #expect(bare.isBare && bare.workdir == nil)
        expectGitError(.bareRepository) { _ = try bare.commitAll(message: "x") }
    }

    @Test func createsAndDeletesBranches() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        let older = try #require(OID(hex: try fixture.tip("main~1")))
        try repository.createBranch("feature/a", at: older)
        #expect(try fixture.tip("feature/a") == older.hex)
        expectGitError(.branchExists) { try repository.createBranch("feature/a", at: older) }
        expectGitError(.invalidName) { try repository.createBranch("a..b", at: older) }
        expectGitError(.revisionNotFound) { try repository.createBranch("b", at: OID(hex: String(repeating: "0", count: 39) + "1")!) }
        #expect(try repository.isBranchCheckedOut("main"))
        #expect(try !repository.isBranchCheckedOut("feature/a"))
        try repository.deleteBranch("feature/a")
        #expect(try !fixture.branchExistsInGit("feature/a"))
        expectGitError(.branchNotFound) { try repository.deleteBranch("feature/a") }
        expectGitError(.branchNotFound) { _ = try repository.branchTip("feature/a") }
        try GitCLI.expectFsckClean(fixture.repoPath)
    }

    @Test func oidsRoundTripHex() throws {
        let fixture = try Fixture()
        let hex = try fixture.tip()
        let oid = try #require(OID(hex: hex.uppercased()))
        #expect(oid.hex == hex && oid.description == hex)
        #expect(oid.abbreviated() == String(hex.prefix(7)))
        #expect(try Repository.open(fixture.repoPath).branchTip("main") == oid)
        #expect(Set([oid, OID(hex: hex)!]).count == 1)
        #expect(OID(hex: "xyz") == nil && OID(hex: String(repeating: "g", count: 40)) == nil)
    }

    @Test func errorsSayWhatFailedWhereAndKeepDiagnosticsOutOfEquality() {
        let a = GitError(.branchExists, "Branch 'x' already exists.", function: "git_branch_create", libgit2Code: -4, path: "/a")
        let b = GitError(.branchExists, "Branch 'x' already exists.", function: nil, path: "/b")
        #expect(a == b)
        #expect(a.description == "Branch 'x' already exists. [git_branch_create → -4]")
        #expect(GitError.Code(libgit2: -3) == .notFound)
        #expect(GitError.Code(libgit2: -36) == .notOwned)
        #expect(GitError.Code(libgit2: -99).rawValue == "libgit2(-99)")
    }
}
