import CGit2
#if canImport(Glibc)
import Glibc
#endif

/// A session's own change: its worktree compared with the point where its branch left the base
/// (`git diff base...HEAD`, plus the uncommitted work), as git and code-review tools show a
/// branch. Comparing with the base's *current* tip instead would show everything the base
/// gained since (another session's integrated files) as deleted by this session.
extension Repository {
    /// Where the comparison starts and what it leaves out; see ``branchPoint(base:)``.
    struct BranchPoint {
        /// The merge base of the base branch's tip and this working tree's HEAD.
        let mergeBase: OID
        /// The base branch's tip, when it has moved past the merge base.
        let movedTip: OID?
    }

    /// The diff stat of this working directory (committed, staged, unstaged and untracked work)
    /// against the merge base of branch `base` and HEAD. A path whose content here equals the
    /// base tip's (the base gained the same file) is no change and is left out.
    public func branchDiffStat(base: String) throws -> FileChanges {
        let point = try branchPoint(base: base)
        let diff = try workingDirectoryDiff(against: point.mergeBase, describedAs: "the branch point of \(base)")
        guard let differing = try pathsDifferingFromTip(diff, point, base: base) else { return try diffStat(of: diff, base: base) }
        return try diffStat(of: diff, base: base, keep: { Self.paths(of: $0).contains(where: differing.contains) })
    }

    /// The unified patch of ``branchDiffStat(base:)``'s files: git's text for
    /// `git diff $(git merge-base base HEAD)` once untracked files are added.
    public func branchDiff(base: String) throws -> String {
        let point = try branchPoint(base: base)
        let diff = try workingDirectoryDiff(against: point.mergeBase, describedAs: "the branch point of \(base)")
        guard let differing = try pathsDifferingFromTip(diff, point, base: base) else { return try patchText(of: diff, base: base) }
        return try patchText(of: diff, base: base, keep: { Self.paths(of: $0).contains(where: differing.contains) })
    }

    /// ``branchDiffStat(base:)`` of the linked worktree at `worktreePath` (`.notAWorktree` when
    /// it is not one of this repository's).
    public func branchDiffStat(worktreePath: String, base: String) throws -> FileChanges {
        try openWorktreeRepository(worktreePath).branchDiffStat(base: base)
    }

    /// ``branchDiff(base:)`` of the linked worktree at `worktreePath`.
    public func branchDiff(worktreePath: String, base: String) throws -> String {
        try openWorktreeRepository(worktreePath).branchDiff(base: base)
    }

    /// The merge base of `base`'s tip and HEAD. An unborn HEAD, or histories with nothing in
    /// common, compare with the tip itself.
    func branchPoint(base: String) throws -> BranchPoint {
        let tip = try branchTip(base)
        guard let head = try headCommit, let mergeBase = try mergeBase(tip, head) else {
            return BranchPoint(mergeBase: tip, movedTip: nil)
        }
        return BranchPoint(mergeBase: mergeBase, movedTip: mergeBase == tip ? nil : tip)
    }

    /// When the base moved past the branch point: of the paths `diff`'s deltas touch (both sides
    /// of a rename), those whose state in this working directory differs from the base tip's:
    /// missing on one side only, another mode, or content that hashes to another blob than the
    /// tip's (`git_repository_hashfile`: the blob `git add` would write; nothing is written).
    /// Nil when the base has not moved (every delta is kept).
    private func pathsDifferingFromTip(_ diff: borrowing GitHandle, _ point: BranchPoint, base: String) throws -> Set<String>? {
        guard let tip = point.movedTip, let workdir else { return nil }
        let commit = try lookupCommit(tip)
        let tree = try GitHandle.make("git_commit_tree", "read the tree of \(base)", free: git_tree_free) {
            git_commit_tree(&$0, commit.pointer)
        }
        let root = workdir.hasSuffix("/") ? workdir : workdir + "/"
        var differing = Set<String>()
        var seen = Set<String>()
        for index in 0..<git_diff_num_deltas(diff.pointer) {
            guard let delta = git_diff_get_delta(diff.pointer, index)?.pointee else { continue }
            for path in Self.paths(of: delta) where seen.insert(path).inserted {
                if try differs(path, tree: tree.pointer, root: root) { differing.insert(path) }
            }
        }
        return differing
    }

    private func differs(_ path: String, tree: OpaquePointer, root: String) throws -> Bool {
        var entry: OpaquePointer?
        git_error_clear()
        let found = git_tree_entry_bypath(&entry, tree, path) == 0
        defer { if let entry { git_tree_entry_free(entry) } }
        git_error_clear()
        var info = stat()
        let exists = lstat(root + path, &info) == 0
        guard found, let entry else { return exists }
        guard exists, (info.st_mode & S_IFMT) == S_IFREG, let id = git_tree_entry_id(entry) else { return true }
        if (git_tree_entry_filemode(entry) == GIT_FILEMODE_BLOB_EXECUTABLE) != (info.st_mode & 0o100 != 0) { return true }
        var hashed = git_oid()
        try gitCall("git_repository_hashfile", "hash \(root + path)") {
            git_repository_hashfile(&hashed, pointer, root + path, GIT_OBJECT_BLOB, nil)
        }
        var expected = id.pointee
        return git_oid_equal(&hashed, &expected) != 1
    }

    /// The paths a delta touches: both sides of a rename, the one path otherwise.
    static func paths(of delta: git_diff_delta) -> [String] {
        Array(Set([delta.old_file.path, delta.new_file.path].compactMap { $0.map { String(cString: $0) } }))
    }
}
