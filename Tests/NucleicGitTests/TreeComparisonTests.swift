import CGit2
import Foundation
@testable import NucleicGit
import Testing

/// The integrator's tree shortcuts (`Repository+Trees.swift`) against git and libgit2's general
/// tools, over seeded random histories: edits, new nested folders, deleted files and folders,
/// executable bits, symbolic links, files that become folders and folders that become files,
/// non-ASCII names.
struct TreeComparisonTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func changedPathsAndUpdatedTreesMatchGit(seed: UInt64) throws {
        let directory = try TemporaryDirectory("nucleic-trees")
        let root = directory.path
        try GitCLI.ok(["init", "-q", "-b", "main"], in: root)
        var random = SeededRandom(seed: seed)
        var files: Set<String> = []
        for index in 0..<60 {
            let path = ["a", "a/b", "a/b/c", "a-b", "a.b", "café", "z"][index % 7] + "/f\(index).txt"
            try write(root + "/" + path, "file \(index)\n")
            files.insert(path)
        }
        var commits = [try commitAll(root, "base")]

        for step in 1...14 {
            for _ in 0..<(3 + random.next(6)) {
                let existing = files.sorted()
                guard !existing.isEmpty else { break }
                let pick = existing[random.next(existing.count)]
                let folder = parent(pick)
                // An operation the tree no longer allows (its folder became a file, say) is
                // skipped: git decides below what the tree is, `files` only suggests paths.
                do {
                    switch random.next(8) {
                    case 0, 1: try write(root + "/" + pick, "edited \(step) \(random.next(1000))\n")
                    case 2:
                        let path = "new\(step)/deep\(random.next(3))/g\(random.next(1000)).txt"
                        try write(root + "/" + path, "new\n")
                        files.insert(path)
                    case 3:
                        try FileManager.default.removeItem(atPath: root + "/" + pick)
                        files.remove(pick)
                    case 4:  // a whole folder goes
                        guard !folder.isEmpty else { continue }
                        try FileManager.default.removeItem(atPath: root + "/" + folder)
                        files = files.filter { !$0.hasPrefix(folder + "/") }
                    case 5: _ = chmod(root + "/" + pick, random.next(2) == 0 ? 0o755 : 0o644)
                    case 6:  // a file becomes a folder
                        try FileManager.default.removeItem(atPath: root + "/" + pick)
                        files.remove(pick)
                        try write(root + "/" + pick + "/inner.txt", "was a file\n")
                        files.insert(pick + "/inner.txt")
                    default:
                        if !folder.isEmpty, random.next(2) == 0 {  // a folder becomes a file
                            try FileManager.default.removeItem(atPath: root + "/" + folder)
                            files = files.filter { !$0.hasPrefix(folder + "/") }
                            try write(root + "/" + folder, "was a folder\n")
                            files.insert(folder)
                        } else {  // a symbolic link (never written through: not in `files`)
                            try FileManager.default.createDirectory(atPath: root + "/links\(step)", withIntermediateDirectories: true)
                            try FileManager.default.createSymbolicLink(atPath: root + "/links\(step)/l\(random.next(1000))", withDestinationPath: "../" + pick)
                        }
                    }
                } catch {
                    continue
                }
            }
            commits.append(try commitAll(root, "step \(step)"))
        }

        let repository = try Repository.open(root)
        var pairs = (1..<commits.count).map { ($0 - 1, $0) } + (1..<commits.count).map { ($0, $0 - 1) }
        for _ in 0..<20 { pairs.append((random.next(commits.count), random.next(commits.count))) }
        for (from, to) in pairs {
            let old = try repository.treeID(of: try #require(OID(hex: commits[from])))
            let new = try repository.treeID(of: try #require(OID(hex: commits[to])))
            let expected = try GitCLI.ok(["diff", "--name-only", "--no-renames", "-z", commits[from], commits[to]], in: root)
                .split(separator: "\0").map(String.init).sorted()
            #expect(try repository.changedPaths(from: old, to: new) == expected, "\(from) → \(to)")
            #expect(try writeTree(repository, indexOf: new, basedOn: old) == new, "\(from) → \(to)")
        }
    }

    @Test func onlyAFileTurnedIntoAFolderOrBackTakesTheSlowPath() throws {
        let directory = try TemporaryDirectory("nucleic-trees")
        let root = directory.path
        try GitCLI.ok(["init", "-q", "-b", "main"], in: root)
        for path in ["a/one.txt", "a/two.txt", "b/c/three.txt", "b/c/gone/four.txt", "top.txt", "x"] { try write(root + "/" + path, path + "\n") }
        let base = try commitAll(root, "base")
        // Edits, a new nested folder, a file and a whole folder deleted, an executable bit.
        try write(root + "/a/one.txt", "edited\n")
        try write(root + "/new/deep/five.txt", "five\n")
        try FileManager.default.removeItem(atPath: root + "/a/two.txt")
        try FileManager.default.removeItem(atPath: root + "/b/c/gone")
        _ = chmod(root + "/top.txt", 0o755)
        let edited = try commitAll(root, "edited")
        // A file becomes a folder.
        try FileManager.default.removeItem(atPath: root + "/x")
        try write(root + "/x/inside.txt", "inside\n")
        let folder = try commitAll(root, "folder")

        let repository = try Repository.open(root)
        let baseTree = try repository.treeID(of: try #require(OID(hex: base)))
        let editedTree = try repository.treeID(of: try #require(OID(hex: edited)))
        let folderTree = try repository.treeID(of: try #require(OID(hex: folder)))
        try withIndex(repository, holding: editedTree) { index in
            let fromBase = try repository.updatedTree(baseTree, toMatch: index)
            let unchanged = try repository.updatedTree(editedTree, toMatch: index)
            #expect(fromBase == editedTree && unchanged == editedTree)
        }
        try withIndex(repository, holding: folderTree) { index in
            let updated = try repository.updatedTree(editedTree, toMatch: index)
            let written = try repository.writeTree(of: index, basedOn: editedTree)
            #expect(updated == nil && written == folderTree)
        }
        try withIndex(repository, holding: editedTree) { index in
            let updated = try repository.updatedTree(folderTree, toMatch: index)
            let written = try repository.writeTree(of: index, basedOn: folderTree)
            #expect(updated == nil && written == editedTree)
        }
    }

    /// An index holding tree `tree`, written by ``Repository/writeTree(of:basedOn:)`` on `base`.
    private func writeTree(_ repository: Repository, indexOf tree: OID, basedOn base: OID) throws -> OID {
        try withIndex(repository, holding: tree) { try repository.writeTree(of: $0, basedOn: base) }
    }

    /// A new in-memory index with the entries of tree `tree`.
    private func withIndex<R>(_ repository: Repository, holding tree: OID, _ body: (OpaquePointer) throws -> R) throws -> R {
        var index: OpaquePointer?
        #expect(git_index_new(&index) == 0)
        defer { git_index_free(index) }
        var raw = tree.raw
        var treeObject: OpaquePointer?
        #expect(git_tree_lookup(&treeObject, repository.pointer, &raw) == 0)
        defer { git_tree_free(treeObject) }
        #expect(git_index_read_tree(index, treeObject) == 0)
        return try body(try #require(index))
    }

    private func write(_ path: String, _ text: String) throws {
        try FileManager.default.createDirectory(atPath: parent(path), withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// The folder part of a path ("" at the top). (`NSString.deletingLastPathComponent` traps on
    /// some non-ASCII paths in this Foundation.)
    private func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }

    private func commitAll(_ root: String, _ message: String) throws -> String {
        try GitCLI.ok(["add", "-A"], in: root)
        try GitCLI.ok(["commit", "-q", "--allow-empty", "-m", message], in: root)
        return try GitCLI.ok(["rev-parse", "HEAD"], in: root).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A small seeded generator (SplitMix64), so a failing history can be replayed.
private struct SeededRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(max(bound, 1)))
    }
}
