import Foundation
@testable import NucleicGit
import Testing

/// The snapshot's tree, written as the index's tree before staging with only the staged paths
/// changed, compared with the tree `git add -A && git write-tree` gives on a copy of the same
/// index: over rounds of edits, deletions, new folders, executable bits, symbolic links, staged
/// changes, files that become folders and back, with the index last written by git (a complete
/// tree cache) or by the previous snapshot (a partial one).
@Suite struct SnapshotTreeTests {
    @Test(arguments: [1, 2, 3])
    func theSnapshotTreeIsTheTreeGitStages(seed: UInt64) throws {
        let f = try IntegrationFixture()
        let s = try f.session("snap\(seed)")
        let integrator = Integrator(f.repository)
        var random = seed &* 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            random &+= 0x9E37_79B9_7F4A_7C15
            var z = random
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
        for round in 0..<8 {
            let files = try GitCLI.ok(["ls-files"], in: s.path).split(separator: "\n").map(String.init)
            for _ in 0..<(1 + next(4)) {
                let path = files[next(files.count)]
                guard !path.hasPrefix("link"), FileManager.default.fileExists(atPath: s.path + "/" + path) else { continue }
                switch next(6) {
                case 0: try FileManager.default.removeItem(atPath: s.path + "/" + path)
                case 1: try GitCLI.ok(["update-index", "--chmod=+x", path], in: s.path); try f.write([path: "exec \(round)\n"], in: s.path)
                default: try f.write([path: "round \(round) \(next(1000))\n"], in: s.path)
                }
            }
            try f.write(["new\(round)/deep/file\(next(3)).txt": "new \(round)\n"], in: s.path)
            if next(3) == 0 {
                try? FileManager.default.removeItem(atPath: s.path + "/link\(round % 2)")
                try FileManager.default.createSymbolicLink(atPath: s.path + "/link\(round % 2)", withDestinationPath: "README.md")
            }
            switch round {
            case 3:  // a file becomes a folder (libgit2 cannot make that as an update of the tree)
                try? FileManager.default.removeItem(atPath: s.path + "/README.md")
                try f.write(["README.md/inside.md": "now a folder\n"], in: s.path)
            case 4:  // and back
                try? FileManager.default.removeItem(atPath: s.path + "/README.md")
                try f.write(["README.md": "a file again\n"], in: s.path)
            case 5:  // a change staged with git and then left alone
                try f.write(["staged.txt": "staged\n"], in: s.path)
                try GitCLI.ok(["add", "staged.txt"], in: s.path)
            case 6:  // git commits: the index gets a complete tree cache
                try GitCLI.ok(["add", "-A"], in: s.path)
                try GitCLI.ok(["commit", "-q", "-m", "agent's commit"], in: s.path)
                try f.write(["after-commit.txt": "x\n"], in: s.path)
            default: break
            }
            let expected = try Self.treeGitStages(s.path)
            let commit = try #require(try integrator.snapshot(worktree: s.path, sessionID: "snap"), "round \(round)")
            #expect(try f.rev(commit.hex + "^{tree}") == expected, "round \(round), seed \(seed)")
            #expect(try f.status(s.path) == "", "round \(round), seed \(seed)")
        }
        try GitCLI.expectFsckClean(f.repoPath)
    }

    /// `git add -A && git write-tree` on a copy of the worktree's index (the index itself is left alone).
    static func treeGitStages(_ worktree: String) throws -> String {
        let indexPath = try GitCLI.ok(["rev-parse", "--absolute-git-dir"], in: worktree).trimmingCharacters(in: .newlines) + "/index"
        let copy = indexPath + ".expected"
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: indexPath, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        // git trusts an entry's stat data only when the file is older than the index file; the
        // copy is newer than the original, so a same-size edit made in the second the original
        // was written would look unchanged to git (racy git). Dated 1970, every entry is checked
        // by content.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1)], ofItemAtPath: copy)
        try GitCLI.ok(["add", "-A"], in: worktree, environment: ["GIT_INDEX_FILE": copy])
        return try GitCLI.ok(["write-tree"], in: worktree, environment: ["GIT_INDEX_FILE": copy]).trimmingCharacters(in: .newlines)
    }
}
