import Foundation
import NucleicGit
import Testing

/// Worktrees made and removed by NucleicGit, judged by the `git` CLI.
@Suite struct WorktreeTests {
    @Test func createsAWorktreeOnANewBranchThatGitAgreesWith() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        let path = fixture.worktreePath("s1")
        let info = try repository.createWorktree(name: "s1", path: path, branch: "nucleic/x", from: "main")

        let mainTip = try fixture.tip()
        #expect(info.name == "s1")
        #expect(info.path == path)
        #expect(info.branch == "nucleic/x")
        #expect(info.head?.hex == mainTip)
        #expect(!info.isLocked && !info.isPrunable)

        let records = try GitCLI.worktrees(fixture.repoPath)
        #expect(records.count == 2)
        let linked = try #require(records.first { $0["worktree"] == path })
        #expect(linked["branch"] == "refs/heads/nucleic/x")
        #expect(linked["HEAD"] == mainTip)
        #expect(linked["locked"] == nil)
        #expect(try GitCLI.ok(["log", "-1", "--format=%H"], in: path).trimmingCharacters(in: .newlines) == mainTip)
        #expect(try GitCLI.ok(["rev-parse", "--abbrev-ref", "HEAD"], in: path) == "nucleic/x\n")
        // Fully checked out: every file there, nothing modified, nothing staged.
        #expect(try GitCLI.ok(["status", "--porcelain", "--untracked-files=all"], in: path) == "")
        #expect(exists(path + "/src/cart.swift") && exists(path + "/assets/logo.bin"))
        #expect(try fixture.tip("nucleic/x") == mainTip)
        // The user's own working tree is untouched.
        #expect(try GitCLI.ok(["status", "--porcelain"], in: fixture.repoPath) == "")
        #expect(try repository.currentBranch == "main")
        #expect(try repository.listWorktrees() == [info])
        try GitCLI.expectFsckClean(fixture.repoPath)

        // The worktree opened on its own is a linked worktree on its branch.
        let opened = try Repository.open(path + "/src")
        #expect(opened.isLinkedWorktree)
        #expect(try opened.currentBranch == "nucleic/x")
        #expect(opened.workdir == path)
    }

    @Test func removesTheWorktreeAndKeepsTheBranch() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        let path = fixture.worktreePath("s2")
        try repository.createWorktree(name: "s2", path: path, branch: "nucleic/keep", from: "main")
        try fixture.write("new.txt", "work\n", in: path)
        try GitCLI.ok(["add", "new.txt"], in: path)
        try GitCLI.ok(["commit", "-q", "-m", "session work"], in: path)
        let branchTip = try fixture.tip("nucleic/keep")
        try fixture.write("uncommitted.txt", "lost on purpose\n", in: path)

        try repository.removeWorktree(name: "s2")

        #expect(try GitCLI.worktrees(fixture.repoPath).map { $0["worktree"] } == [fixture.repoPath])
        #expect(!exists(path))
        #expect(exists(fixture.worktreesRoot)) // only the session's own folder goes
        #expect(!exists(fixture.adminRoot + "/s2"))
        #expect(try fixture.branchExistsInGit("nucleic/keep"))
        #expect(try fixture.tip("nucleic/keep") == branchTip)
        #expect(try repository.branchTip("nucleic/keep").hex == branchTip)
        #expect(try repository.listWorktrees().isEmpty)
        try GitCLI.expectFsckClean(fixture.repoPath)
        // Git itself has nothing left to prune.
        #expect(try GitCLI.ok(["worktree", "prune", "--dry-run", "-v"], in: fixture.repoPath) == "")
    }

    @Test func removesTheWorktreeAndItsBranchWhenAsked() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        let path = fixture.worktreePath("s3")
        try repository.createWorktree(name: "s3", path: path, branch: "nucleic/gone", from: "main")
        try repository.removeWorktree(name: "s3", deleteBranch: true)
        #expect(!exists(path))
        #expect(try !fixture.branchExistsInGit("nucleic/gone"))
        #expect(try GitCLI.ok(["branch", "--list"], in: fixture.repoPath) == "* main\n")
        #expect(try !repository.branchExists("nucleic/gone"))
        #expect(try GitCLI.worktrees(fixture.repoPath).count == 1)
        try GitCLI.expectFsckClean(fixture.repoPath)
    }

    @Test func refusesANonEmptyPathAndLeavesNothingBehind() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        let path = fixture.worktreePath("busy")
        try fixture.write("mine.txt", "someone's file\n", in: path)

        let error = expectGitError(.pathNotEmpty) {
            try repository.createWorktree(name: "busy", path: path, branch: "nucleic/busy", from: "main")
        }
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("not empty") == true)
        #expect(!exists(fixture.adminRoot + "/busy"))
        #expect(try !fixture.branchExistsInGit("nucleic/busy"))
        #expect(try String(contentsOfFile: path + "/mine.txt", encoding: .utf8) == "someone's file\n")
        #expect(try GitCLI.worktrees(fixture.repoPath).count == 1)

        // A file in the way is refused the same way.
        try fixture.write("file-in-the-way", "x", in: fixture.worktreesRoot)
        expectGitError(.pathNotEmpty) {
            try repository.createWorktree(name: "busy", path: fixture.worktreePath("file-in-the-way"), branch: "nucleic/busy", from: "main")
        }
        #expect(!exists(fixture.adminRoot + "/busy"))
        try GitCLI.expectFsckClean(fixture.repoPath)
    }

    @Test func refusesAnExistingBranchAndLeavesNothingBehind() throws {
        let fixture = try Fixture()
        try GitCLI.ok(["branch", "nucleic/taken", "main~1"], in: fixture.repoPath)
        let before = try fixture.tip("nucleic/taken")
        let repository = try Repository.open(fixture.repoPath)
        let path = fixture.worktreePath("taken")
        let error = expectGitError(.branchExists) {
            try repository.createWorktree(name: "taken", path: path, branch: "nucleic/taken", from: "main")
        }
        #expect(error?.message.contains("nucleic/taken") == true)
        #expect(!exists(path))
        #expect(!exists(fixture.worktreesRoot)) // no parent folders made either
        #expect(!exists(fixture.adminRoot + "/taken"))
        #expect(try fixture.tip("nucleic/taken") == before)
        #expect(try GitCLI.worktrees(fixture.repoPath).count == 1)
        try GitCLI.expectFsckClean(fixture.repoPath)
    }

    @Test func refusesBadNamesAMissingBaseAndATakenWorktreeName() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        expectGitError(.invalidName) {
            try repository.createWorktree(name: "nucleic/x", path: fixture.worktreePath("a"), branch: "nucleic/x", from: "main")
        }
        expectGitError(.invalidName) {
            try repository.createWorktree(name: "ok", path: fixture.worktreePath("a"), branch: "bad name..", from: "main")
        }
        let missing = expectGitError(.branchNotFound) {
            try repository.createWorktree(name: "ok", path: fixture.worktreePath("a"), branch: "nucleic/a", from: "develop")
        }
        #expect(missing?.message.contains("develop") == true)
        try repository.createWorktree(name: "ok", path: fixture.worktreePath("a"), branch: "nucleic/a", from: "main")
        expectGitError(.worktreeExists) {
            try repository.createWorktree(name: "ok", path: fixture.worktreePath("b"), branch: "nucleic/b", from: "main")
        }
        #expect(try !fixture.branchExistsInGit("nucleic/b"))
        #expect(!exists(fixture.worktreePath("b")))
        // A branch checked out in a worktree is refused for deletion, clearly.
        expectGitError(.branchCheckedOut) { try repository.deleteBranch("nucleic/a") }
        expectGitError(.branchCheckedOut) { try repository.deleteBranch("main") }
        expectGitError(.worktreeNotFound) { try repository.removeWorktree(name: "nope") }
        try GitCLI.expectFsckClean(fixture.repoPath)
    }

    @Test func sanitizesNamesIntoValidOnes() {
        #expect(WorktreeName.sanitized("nucleic/fix the flaky test!") == "nucleic-fix-the-flaky-test")
        #expect(WorktreeName.sanitized("..hidden") == "hidden")
        #expect(WorktreeName.sanitized("///") == "worktree")
        #expect(WorktreeName.sanitized("x.lock") == "x-lock")
        #expect(WorktreeName.isValid("0193f2a4-7c1e-7000-8000-000000000001"))
        #expect(!WorktreeName.isValid("a/b") && !WorktreeName.isValid("") && !WorktreeName.isValid(".x"))
        for text in ["nucleic/x", "a b c", "ünïcødé", String(repeating: "z", count: 300)] {
            #expect(WorktreeName.isValid(WorktreeName.sanitized(text)))
        }
    }

    @Test func replacesAnEmptyFolder() throws {
        let fixture = try Fixture()
        let path = fixture.worktreePath("empty")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let repository = try Repository.open(fixture.repoPath)
        try repository.createWorktree(name: "empty", path: path, branch: "nucleic/empty", from: "main")
        #expect(exists(path + "/README.md"))
        #expect(try GitCLI.worktrees(fixture.repoPath).contains { $0["worktree"] == path })
    }

    @Test func cleansUpWhenLibgit2FailsHalfWay() throws {
        // A commit whose tree holds a `.git` entry: git_worktree_add makes `.git/worktrees/<name>`
        // and the folder, then its checkout refuses the path. libgit2 leaves its half-made entry
        // behind; NucleicGit must remove it, the folder and the branch.
        let fixture = try Fixture()
        let blob = try GitCLI.ok(["hash-object", "-w", "--stdin"], in: fixture.repoPath, input: "evil\n").trimmingCharacters(in: .newlines)
        let tree = try GitCLI.ok(["mktree"], in: fixture.repoPath, input: "100644 blob \(blob)\t.git\n").trimmingCharacters(in: .newlines)
        let commit = try GitCLI.ok(["commit-tree", tree, "-m", "evil"], in: fixture.repoPath).trimmingCharacters(in: .newlines)
        try GitCLI.ok(["update-ref", "refs/heads/evil", commit], in: fixture.repoPath)

        let repository = try Repository.open(fixture.repoPath)
        let path = fixture.worktreePath("evil")
        do {
            try repository.createWorktree(name: "evil", path: path, branch: "nucleic/evil", from: "evil")
            Issue.record("libgit2 checked out a `.git` path")
        } catch let error as GitError {
            #expect(error.function == "git_worktree_add")
            #expect(error.message.contains("worktree 'evil'"))
        }
        #expect(!exists(fixture.adminRoot + "/evil"))
        #expect(!exists(path))
        #expect(!exists(fixture.worktreesRoot))
        #expect(try !fixture.branchExistsInGit("nucleic/evil"))
        #expect(try GitCLI.worktrees(fixture.repoPath).count == 1)
        // The name is free again.
        try repository.createWorktree(name: "evil", path: path, branch: "nucleic/evil", from: "main")
        #expect(exists(path + "/README.md"))
    }

    @Test func fiftyCreateRemoveCyclesLeaveOnlyTheMainWorktree() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        for cycle in 0..<50 {
            let name = "cycle-\(cycle)"
            let path = fixture.worktreePath(name)
            let info = try repository.createWorktree(name: name, path: path, branch: "nucleic/\(name)", from: "main")
            #expect(info.path == path)
            try fixture.write("scratch-\(cycle).txt", "\(cycle)\n", in: path)
            try repository.removeWorktree(name: name, deleteBranch: cycle % 2 == 0)
            #expect(!exists(path))
        }
        #expect(try GitCLI.worktrees(fixture.repoPath).map { $0["worktree"] } == [fixture.repoPath])
        #expect(try repository.listWorktrees().isEmpty)
        #expect(FileManager.default.subpathsOrEmpty(fixture.adminRoot).isEmpty)
        #expect(FileManager.default.subpathsOrEmpty(fixture.worktreesRoot).isEmpty)
        let branches = try GitCLI.ok(["branch", "--list", "--format=%(refname:short)"], in: fixture.repoPath).split(separator: "\n")
        #expect(branches.count == 1 + 25)
        try GitCLI.expectFsckClean(fixture.repoPath)
    }

    @Test func prunesWorktreesWhoseFolderVanishedButNotLockedOnes() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        try repository.createWorktree(name: "vanished", path: fixture.worktreePath("vanished"), branch: "nucleic/vanished", from: "main")
        try repository.createWorktree(name: "locked", path: fixture.worktreePath("locked"), branch: "nucleic/locked", from: "main")
        try repository.createWorktree(name: "alive", path: fixture.worktreePath("alive"), branch: "nucleic/alive", from: "main")
        try GitCLI.ok(["worktree", "lock", "--reason", "on a usb disk", fixture.worktreePath("locked")], in: fixture.repoPath)
        try FileManager.default.removeItem(atPath: fixture.worktreePath("vanished"))
        try FileManager.default.removeItem(atPath: fixture.worktreePath("locked"))
        // A half-made entry, as a failed libgit2 add leaves it: libgit2 cannot see it.
        try FileManager.default.createDirectory(atPath: fixture.adminRoot + "/ghost", withIntermediateDirectories: true)
        try "ref: refs/heads/main\n".write(toFile: fixture.adminRoot + "/ghost/HEAD", atomically: false, encoding: .utf8)

        let listed = try repository.listWorktrees()
        #expect(listed.map(\.name) == ["alive", "locked", "vanished"])
        #expect(listed.map(\.isPrunable) == [false, false, true])
        #expect(listed[1].isLocked && listed[1].lockReason == "on a usb disk")
        #expect(listed[2].branch == "nucleic/vanished")

        let gitSays = try GitCLI.worktrees(fixture.repoPath)
        #expect(gitSays.first { $0["worktree"] == fixture.worktreePath("vanished") }?["prunable"] != nil)

        expectGitError(.worktreeLocked) { try repository.removeWorktree(name: "locked") }
        #expect(try repository.pruneStale() == ["ghost", "vanished"])
        #expect(try repository.listWorktrees().map(\.name) == ["alive", "locked"])
        #expect(try GitCLI.worktrees(fixture.repoPath).count == 3)
        #expect(!exists(fixture.adminRoot + "/ghost"))
        #expect(exists(fixture.worktreePath("alive") + "/README.md"))
        #expect(try fixture.branchExistsInGit("nucleic/vanished"))
        #expect(try GitCLI.ok(["worktree", "prune", "--dry-run", "-v"], in: fixture.repoPath) == "")
        try GitCLI.expectFsckClean(fixture.repoPath)
    }

    @Test func removesALeftoverEntryByName() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        try FileManager.default.createDirectory(atPath: fixture.adminRoot + "/ghost", withIntermediateDirectories: true)
        expectGitError(.worktreeExists) {
            try repository.createWorktree(name: "ghost", path: fixture.worktreePath("ghost"), branch: "nucleic/ghost", from: "main")
        }
        try repository.removeWorktree(name: "ghost")
        #expect(!exists(fixture.adminRoot + "/ghost"))
        try repository.createWorktree(name: "ghost", path: fixture.worktreePath("ghost"), branch: "nucleic/ghost", from: "main")
        #expect(try GitCLI.worktrees(fixture.repoPath).count == 2)
    }

    @Test func reportsADetachedWorktree() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        let path = fixture.worktreePath("detached")
        try repository.createWorktree(name: "detached", path: path, branch: "nucleic/detached", from: "main")
        try GitCLI.ok(["checkout", "-q", "--detach", "HEAD~1"], in: path)
        let info = try #require(try repository.worktree(named: "detached"))
        #expect(info.branch == nil)
        #expect(info.head?.hex == (try fixture.tip("main~1")))
        #expect(try Repository.open(path).currentBranch == nil)
        // Detached, it has no branch of its own: deleteBranch deletes nothing.
        try repository.removeWorktree(name: "detached", deleteBranch: true)
        #expect(try fixture.branchExistsInGit("nucleic/detached"))
        #expect(!exists(path))
    }
}

extension FileManager {
    func subpathsOrEmpty(_ path: String) -> [String] { (try? contentsOfDirectory(atPath: path)) ?? [] }
}
