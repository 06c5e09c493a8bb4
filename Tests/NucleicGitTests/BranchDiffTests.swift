import Foundation
@testable import NucleicGit
import Testing

/// A session's diff from the point its branch left the base (`base...HEAD` plus the uncommitted
/// work), while other sessions land on the base: judged against `git diff <merge-base>`.
@Suite struct BranchDiffTests {
    /// Two sessions from main; the first one integrated (squash), the second still working.
    struct TwoSessions {
        let fixture: IntegrationFixture
        let first: Session
        let second: Session

        init() throws {
            fixture = try IntegrationFixture()
            first = try fixture.session("first")
            second = try fixture.session("second")
            try fixture.write(["first.txt": "from the first session\n", "README.md": "# Shop\n\nA small shop, reworded.\n"], in: first.path)
            try fixture.write(["second.txt": "from the second session\n", "src/price.swift": "func price() -> Int {\n    return 4400\n}\n"], in: second.path)
            _ = try expectIntegrated(try Integrator(fixture.repository).integrate(fixture.request(first, .squash(message: "First"))))
        }
    }

    @Test func anotherSessionsIntegrationIsNotThisSessionsChange() throws {
        let s = try TwoSessions()
        let stat = try s.fixture.repository.branchDiffStat(worktreePath: s.second.path, base: "main")
        #expect(stat.files.map(\.path) == ["second.txt", "src/price.swift"])
        #expect(stat.files.map(\.status) == [.added, .modified])
        // The old comparison (with main's current tip) reports the first session's files as undone.
        let againstTip = try s.fixture.repository.diffStat(worktreePath: s.second.path, base: "main")
        #expect(againstTip.touchedPaths.isSuperset(of: ["first.txt", "README.md"]))

        let mergeBase = try GitCLI.ok(["merge-base", "main", "HEAD"], in: s.second.path).trimmingCharacters(in: .whitespacesAndNewlines)
        let scratch = try TemporaryDirectory()
        let git = try DiffTests.gitView(of: s.second.path, base: mergeBase, scratch: scratch)
        #expect(stat.files == git.stat)
        #expect(stat.description == git.shortstat.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(try s.fixture.repository.branchDiff(worktreePath: s.second.path, base: "main") == git.patch)
    }

    @Test func committedAndUncommittedWorkBothCountFromTheBranchPoint() throws {
        let s = try TwoSessions()
        // The agent commits part of its work; the rest stays uncommitted.
        try s.fixture.commit(["committed.txt": "committed by the agent\n"], message: "agent commit", in: s.second.path)
        let stat = try s.fixture.repository.branchDiffStat(worktreePath: s.second.path, base: "main")
        #expect(stat.files.map(\.path) == ["committed.txt", "second.txt", "src/price.swift"])
    }

    @Test func aFileTheBaseGainedWithTheSameContentIsNoChange() throws {
        let s = try TwoSessions()
        // The second session writes exactly what the first one integrated, plus a file of its own.
        try s.fixture.write(["first.txt": "from the first session\n"], in: s.second.path)
        let stat = try s.fixture.repository.branchDiffStat(worktreePath: s.second.path, base: "main")
        #expect(stat.files.map(\.path) == ["second.txt", "src/price.swift"])
        #expect(!(try s.fixture.repository.branchDiff(worktreePath: s.second.path, base: "main")).contains("first.txt"))
        // With other content it is a change (and a conflict to come).
        try s.fixture.write(["first.txt": "something else\n"], in: s.second.path)
        let changed = try s.fixture.repository.branchDiffStat(worktreePath: s.second.path, base: "main")
        #expect(changed.files.map(\.path) == ["first.txt", "second.txt", "src/price.swift"])
    }

    @Test func anUnmovedBaseGivesThePlainDiff() throws {
        let fixture = try IntegrationFixture()
        let session = try fixture.session("only")
        try fixture.write(["new.txt": "new\n", "docs/guide.md": nil], in: session.path)
        let branch = try fixture.repository.branchDiffStat(worktreePath: session.path, base: "main")
        #expect(branch == (try fixture.repository.diffStat(worktreePath: session.path, base: "main")))
        #expect(branch.files.map(\.path) == ["docs/guide.md", "new.txt"])
    }

    @Test func overlapCountsOnlyEachSessionsOwnFiles() throws {
        let s = try TwoSessions()
        let third = try s.fixture.session("third")
        try s.fixture.write(["second.txt": "the third session's take\n"], in: third.path)
        // `third` branched after the first integration; `second` before. Neither touched the
        // first session's files, whatever main's tip now is.
        let found = try Integrator(s.fixture.repository).overlap([
            SessionWorktree(id: "second", path: s.second.path, base: "main"),
            SessionWorktree(id: "third", path: third.path, base: "main"),
        ])
        #expect(found == ["second.txt": ["second", "third"]])
    }
}
