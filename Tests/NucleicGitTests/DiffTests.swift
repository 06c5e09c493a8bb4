import Foundation
import NucleicGit
import Testing

/// Diffs of a session worktree against its base, judged against `git diff`.
@Suite struct DiffTests {
    /// What git says about a worktree against `base`, untracked files included: computed in a
    /// scratch copy of the worktree's index (`GIT_INDEX_FILE`) after `git add -A`, so the
    /// worktree itself is not touched.
    struct GitView {
        var stat: [FileChanges.File]
        var shortstat: String
        var patch: String
    }

    static func gitView(of worktree: String, base: String, scratch: TemporaryDirectory) throws -> GitView {
        let index = try GitCLI.ok(["rev-parse", "--path-format=absolute", "--git-path", "index"], in: worktree).trimmingCharacters(in: .newlines)
        let copy = scratch.sub("index-\(UUID().uuidString)")
        try FileManager.default.copyItem(atPath: index, toPath: copy)
        let env = ["GIT_INDEX_FILE": copy]
        try GitCLI.ok(["add", "-A"], in: worktree, environment: env)
        let numstat = try GitCLI.ok(["diff", "--cached", "-M", "--numstat", "-z", base], in: worktree, environment: env)
        let names = try GitCLI.ok(["diff", "--cached", "-M", "--name-status", "-z", base], in: worktree, environment: env)
        let shortstat = try GitCLI.ok(["diff", "--cached", "-M", "--shortstat", base], in: worktree, environment: env)
        let patch = try GitCLI.ok(["diff", "--cached", "-M", base], in: worktree, environment: env)

        // --name-status -z: "X\0path\0" or "Rnnn\0old\0new\0".
        var statuses: [String: (FileChanges.File.Status, String?)] = [:]
        var fields = names.split(separator: "\0", omittingEmptySubsequences: false).map(String.init)
        while fields.count >= 2 {
            let letter = fields.removeFirst()
            let status: FileChanges.File.Status = switch letter.prefix(1) {
            case "A": .added
            case "D": .deleted
            case "R": .renamed
            case "C": .copied
            case "T": .typeChanged
            default: .modified
            }
            if status == .renamed || status == .copied {
                let old = fields.removeFirst(), new = fields.removeFirst()
                statuses[new] = (status, old)
            } else {
                statuses[fields.removeFirst()] = (status, nil)
            }
        }
        // --numstat -z: "ins\tdel\tpath\0" or "ins\tdel\t\0old\0new\0"; "-\t-" for binary.
        var files: [FileChanges.File] = []
        var records = numstat.split(separator: "\0", omittingEmptySubsequences: false).map(String.init)
        while let record = records.first, !record.isEmpty {
            records.removeFirst()
            let parts = record.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            var path = parts[2]
            if path.isEmpty { _ = records.removeFirst(); path = records.removeFirst() }
            let binary = parts[0] == "-"
            let (status, old) = try #require(statuses[path], "no status for \(path)")
            files.append(FileChanges.File(path: path, oldPath: old, status: status, insertions: Int(parts[0]) ?? 0, deletions: Int(parts[1]) ?? 0, isBinary: binary))
        }
        return GitView(stat: files.sorted { $0.path < $1.path }, shortstat: shortstat.trimmingCharacters(in: .whitespacesAndNewlines), patch: patch)
    }

    /// A session's typical mess: committed work, staged and unstaged edits, a same-size edit
    /// right after checkout (racy-git), a deletion, a rename with an edit, mode and binary
    /// changes, untracked files in new folders, and ignored files that must not count.
    static func makeMess(_ fixture: Fixture, in wt: String) throws {
        // Committed on the session branch.
        try fixture.write("src/cart.swift", (1...40).map { $0 == 5 ? "let line5 = 500\n" : "let line\($0) = \($0)\n" }.joined(), in: wt)
        try fixture.write("src/new.swift", "struct New {}\n", in: wt)
        try GitCLI.ok(["add", "-A"], in: wt)
        try GitCLI.ok(["commit", "-q", "-m", "session commit"], in: wt)
        // Staged, then edited again.
        try fixture.write("src/cart.swift", (1...40).map { $0 == 5 ? "let line5 = 500\n" : $0 == 30 ? "let line30 = 3000\n" : "let line\($0) = \($0)\n" }.joined(), in: wt)
        try GitCLI.ok(["add", "src/cart.swift"], in: wt)
        try fixture.write("src/cart.swift", (1...40).map { $0 == 5 ? "let line5 = 500\n" : $0 == 30 ? "let line30 = 3000\n" : $0 == 35 ? "// gone\n" : "let line\($0) = \($0)\n" }.joined() + "let extra = 1\n", in: wt)
        // Same size, same second as the checkout.
        try fixture.write("src/price.swift", "func price() -> Int {\n    return 44\n}\n", in: wt)
        try FileManager.default.removeItem(atPath: wt + "/README.md")
        try FileManager.default.removeItem(atPath: wt + "/placeholder/.keep")
        // Renamed (untracked target) with one line changed.
        let guide = try String(contentsOfFile: wt + "/docs/guide.md", encoding: .utf8)
        try FileManager.default.removeItem(atPath: wt + "/docs/guide.md")
        try fixture.write("docs/handbook.md", guide.replacingOccurrences(of: "paragraph 7 ", with: "paragraph seven "), in: wt)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: wt + "/tools/run.sh")
        try fixture.writeBytes("assets/logo.bin", [0x89, 0x50, 0x4e, 0x47, 0x00, 0x09, 0x09, 0x00], in: wt)
        try fixture.write("notes/todo.md", "- one\n- two\n- three\n", in: wt)
        try fixture.write("notes/deep/more.txt", "deeper\n", in: wt)
        try fixture.write("empty.txt", "", in: wt)
        try fixture.write("no-newline.txt", "no newline at the end", in: wt)
        try fixture.writeBytes("img.bin", [0x00, 0x01, 0x02, 0xff, 0x00], in: wt)
        // Ignored: never part of the diff.
        try fixture.write("debug.log", "noise\n", in: wt)
        try fixture.write("build/out.txt", "artifact\n", in: wt)
        try fixture.write("notes/trace.log", "noise\n", in: wt)
    }

    @Test func diffStatAndPatchMatchGitIncludingUntrackedFiles() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        let wt = fixture.worktreePath("mess")
        try repository.createWorktree(name: "mess", path: wt, branch: "nucleic/mess", from: "main")
        try Self.makeMess(fixture, in: wt)
        let statusBefore = try GitCLI.ok(["status", "--porcelain", "--untracked-files=all"], in: wt)

        let stat = try repository.diffStat(worktreePath: wt, base: "main")
        let patch = try repository.diff(worktreePath: wt, base: "main")
        let git = try Self.gitView(of: wt, base: "main", scratch: fixture.temp)

        #expect(stat.files == git.stat)
        #expect(stat.description == git.shortstat)
        #expect(patch == git.patch)
        // Spot checks, so the comparison above is known to cover what it should.
        let byPath = Dictionary(uniqueKeysWithValues: stat.files.map { ($0.path, $0) })
        #expect(byPath["README.md"]?.status == .deleted)
        #expect(byPath["docs/handbook.md"]?.status == .renamed)
        #expect(byPath["docs/handbook.md"]?.oldPath == "docs/guide.md")
        #expect(byPath["src/price.swift"].map { ($0.insertions, $0.deletions) } ?? (0, 0) == (1, 1))
        #expect(byPath["assets/logo.bin"]?.isBinary == true)
        #expect(byPath["img.bin"]?.isBinary == true && byPath["img.bin"]?.status == .added)
        #expect(byPath["notes/deep/more.txt"]?.status == .added)
        #expect(byPath["tools/run.sh"].map { ($0.status, $0.insertions, $0.deletions) } ?? (.added, 9, 9) == (.modified, 0, 0))
        // git pairs the deleted empty file with the new empty one as a rename; so do we.
        #expect(byPath["empty.txt"]?.status == .renamed && byPath["empty.txt"]?.oldPath == "placeholder/.keep")
        #expect(byPath["debug.log"] == nil && byPath["build/out.txt"] == nil && byPath["notes/trace.log"] == nil)
        #expect(stat.filesChanged == 12)
        // Computing it changed nothing in the worktree.
        #expect(try GitCLI.ok(["status", "--porcelain", "--untracked-files=all"], in: wt) == statusBefore)
        try GitCLI.expectFsckClean(fixture.repoPath)

        // Against a commit id instead of a branch: the same.
        let mainTip = try #require(OID(hex: try fixture.tip()))
        #expect(try repository.diffStat(worktreePath: wt, base: .commit(mainTip)) == stat)
        // And from the worktree's own handle.
        #expect(try Repository.open(wt).diffStat(against: "main") == stat)
    }

    @Test func emptyFilesPrintAsGitPrintsThem() throws {
        // libgit2 prints `---`/`+++` lines for an empty file added or deleted; git does not.
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        let wt = fixture.worktreePath("empty")
        try repository.createWorktree(name: "empty", path: wt, branch: "nucleic/empty", from: "main")
        try FileManager.default.removeItem(atPath: wt + "/placeholder/.keep")
        let deleted = try Self.gitView(of: wt, base: "main", scratch: fixture.temp)
        #expect(try repository.diff(worktreePath: wt, base: "main") == deleted.patch)
        #expect(try repository.diffStat(worktreePath: wt, base: "main").files == deleted.stat)
        #expect(deleted.stat.map(\.status) == [.deleted])
        try fixture.write("placeholder/.keep", "", in: wt)
        try fixture.write("new/empty", "", in: wt)
        let added = try Self.gitView(of: wt, base: "main", scratch: fixture.temp)
        #expect(try repository.diff(worktreePath: wt, base: "main") == added.patch)
        #expect(added.stat.map(\.status) == [.added])
        #expect(!added.patch.contains("+++"))
    }

    @Test func aFreshWorktreeHasAnEmptyDiff() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        let wt = fixture.worktreePath("fresh")
        try repository.createWorktree(name: "fresh", path: wt, branch: "nucleic/fresh", from: "main")
        #expect(try repository.diffStat(worktreePath: wt, base: "main") == .empty)
        #expect(try repository.diff(worktreePath: wt, base: "main") == "")
        try fixture.write("debug.log", "ignored\n", in: wt)
        #expect(try repository.diffStat(worktreePath: wt, base: "main").isEmpty)
        // Against an older base, the base's own history shows.
        let stat = try repository.diffStat(worktreePath: wt, base: .commit(try #require(OID(hex: try fixture.tip("main~1")))))
        #expect(stat.files == [FileChanges.File(path: "src/price.swift", status: .modified, insertions: 1, deletions: 1)])
        #expect(stat.description == "1 file changed, 1 insertion(+), 1 deletion(-)")
    }

    @Test func refusesPathsThatAreNotWorktreesOfThisRepository() throws {
        let fixture = try Fixture()
        let other = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        let foreign = expectGitError(.notAWorktree) { _ = try repository.diffStat(worktreePath: other.repoPath, base: "main") }
        #expect(foreign?.message.contains(other.repoPath) == true)
        expectGitError(.notAWorktree) { _ = try repository.diff(worktreePath: fixture.temp.sub("nowhere"), base: "main") }
        expectGitError(.branchNotFound) { _ = try repository.diffStat(worktreePath: fixture.repoPath, base: "nope") }
        expectGitError(.revisionNotFound) {
            _ = try repository.diffStat(worktreePath: fixture.repoPath, base: .commit(OID(hex: String(repeating: "ab", count: 20))!))
        }
    }

    @Test func commitAllSnapshotsTheWorktreeAsGitWould() throws {
        let fixture = try Fixture()
        let repository = try Repository.open(fixture.repoPath)
        let wt = fixture.worktreePath("snap")
        try repository.createWorktree(name: "snap", path: wt, branch: "nucleic/snap", from: "main")
        try Self.makeMess(fixture, in: wt)
        let before = try repository.diffStat(worktreePath: wt, base: "main")

        let author = Signature(name: "Nucleic", email: "nucleic@localhost", time: 1_800_000_000, offsetMinutes: 60)
        let session = try Repository.open(wt)
        let commit = try #require(try session.commitAll(message: "Snapshot\n\nNucleic-Session: 0193", author: author))

        #expect(try fixture.tip("nucleic/snap") == commit.hex)
        #expect(try GitCLI.ok(["status", "--porcelain", "--untracked-files=all"], in: wt) == "")
        #expect(try GitCLI.ok(["log", "-1", "--format=%an <%ae> %at %ad|%s|%(trailers:key=Nucleic-Session,valueonly)", "--date=format:%z"], in: wt)
            == "Nucleic <nucleic@localhost> 1800000000 +0100|Snapshot|0193\n\n")
        #expect(try GitCLI.ok(["ls-files", "debug.log", "build", "notes/trace.log"], in: wt) == "")
        // The committed tree is exactly what the diff described.
        let git = try Self.gitView(of: wt, base: "main", scratch: fixture.temp)
        #expect(git.stat == before.files)
        #expect(try repository.diffStat(worktreePath: wt, base: "main") == before)
        #expect(try session.commitAll(message: "again") == nil)
        #expect(try session.diffStat(against: .commit(commit)).isEmpty)
        try GitCLI.expectFsckClean(fixture.repoPath)
    }
}
