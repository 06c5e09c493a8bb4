import Foundation
import NucleicGit
import Testing
import NucleicSystem

/// The async face: every call runs on the actor's own git thread.
@Suite struct RepositoryActorTests {
    @Test func drivesASessionWorktreeFromAsyncCode() async throws {
        let fixture = try Fixture()
        let repository = try await RepositoryActor.open(fixture.repoPath + "/src")
        #expect(try await repository.currentBranch == "main")
        #expect(try await repository.workdir == fixture.repoPath)

        let path = fixture.worktreePath("async")
        let info = try await repository.createWorktree(name: "async", path: path, branch: "nucleic/async", from: "main")
        #expect(info.branch == "nucleic/async")
        try fixture.write("added.txt", "one\ntwo\n", in: path)

        // Many concurrent callers, one thread: every answer is the same and right.
        let stats = try await withThrowingTaskGroup(of: FileChanges.self) { group in
            for _ in 0..<20 {
                group.addTask { try await repository.diffStat(worktreePath: path, base: "main") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let expected = FileChanges(files: [FileChanges.File(path: "added.txt", status: .added, insertions: 2, deletions: 0)])
        #expect(stats.count == 20 && stats.allSatisfy { $0 == expected })
        #expect(try await repository.diff(worktreePath: path, base: "main").contains("+two"))
        #expect(try await repository.listWorktrees().map(\.name) == ["async"])
        // withRepository lends the handle for anything else.
        let tip = try await repository.withRepository { try $0.branchTip("nucleic/async") }
        #expect(tip.hex == (try fixture.tip()))

        try await repository.removeWorktree(name: "async", deleteBranch: true)
        #expect(try await repository.listWorktrees().isEmpty)
        #expect(try await !repository.branchExists("nucleic/async"))
        #expect(try GitCLI.worktrees(fixture.repoPath).count == 1)
        try GitCLI.expectFsckClean(fixture.repoPath)
    }

    @Test func reportsOpenFailuresOnOpen() async throws {
        let temp = try TemporaryDirectory()
        await #expect(throws: GitError.self) { _ = try await RepositoryActor.open(temp.path) }
        do {
            _ = try await RepositoryActor.open(temp.path)
        } catch let error as GitError {
            #expect(error.code == .repositoryNotFound)
        }
    }

    @Test func repositoriesCanShareOneExecutor() async throws {
        let one = try Fixture(), two = try Fixture()
        let executor = SerialThreadExecutor(name: "shared-git")
        let first = try await RepositoryActor.open(one.repoPath, executor: executor)
        let second = try await RepositoryActor.open(two.repoPath, executor: executor)
        async let a = first.branchTip("main")
        async let b = second.branchTip("main")
        #expect(try await a.hex == (try one.tip()))
        #expect(try await b.hex == (try two.tip()))
    }
}
