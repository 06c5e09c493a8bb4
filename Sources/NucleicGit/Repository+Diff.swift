import CGit2

extension Repository {
    /// The diff stat of this repository's working directory against `base`: committed,
    /// staged, unstaged and untracked changes together, ignored files excluded, renames
    /// detected as git does by default.
    public func diffStat(against base: Revision) throws -> FileChanges {
        try diffStat(of: try workingDirectoryDiff(against: try resolve(base), describedAs: "\(base)"), base: "\(base)")
    }

    /// The stat of `diff`'s deltas that `keep` lets through (all by default).
    func diffStat(of diff: borrowing GitHandle, base: String, keep: (git_diff_delta) -> Bool = { _ in true }) throws -> FileChanges {
        let count = git_diff_num_deltas(diff.pointer)
        var files: [FileChanges.File] = []
        files.reserveCapacity(count)
        for index in 0..<count {
            if let delta = git_diff_get_delta(diff.pointer, index)?.pointee, !keep(delta) { continue }
            // Building the patch loads both sides, which is what decides "binary".
            let patch = try GitHandle.make("git_patch_from_diff", "compute the changes of file \(index) against \(base)", free: git_patch_free) {
                git_patch_from_diff(&$0, diff.pointer, index)
            }
            guard let delta = git_patch_get_delta(patch.pointer)?.pointee else { continue }
            guard let status = Self.status(of: delta.status) else { continue }
            var context = 0, additions = 0, removals = 0
            try gitCall("git_patch_line_stats", "count the lines changed against \(base)") {
                git_patch_line_stats(&context, &additions, &removals, patch.pointer)
            }
            let binary = delta.flags & GIT_DIFF_FLAG_BINARY.rawValue != 0
            let newPath = delta.new_file.path.map { String(cString: $0) } ?? ""
            let oldPath = delta.old_file.path.map { String(cString: $0) } ?? newPath
            let path = status == .deleted ? oldPath : newPath
            files.append(FileChanges.File(
                path: path, oldPath: status == .renamed || status == .copied ? oldPath : nil, status: status,
                insertions: binary ? 0 : additions, deletions: binary ? 0 : removals, isBinary: binary))
        }
        return FileChanges(files: files)
    }

    /// The unified patch of this repository's working directory against `base`: byte for byte
    /// what `git diff <base>` prints once untracked files are added (`git add -A`), renames
    /// detected. Binary files appear as "Binary files … differ". Empty when nothing changed.
    public func diff(against base: Revision) throws -> String {
        try patchText(of: try workingDirectoryDiff(against: try resolve(base), describedAs: "\(base)"), base: "\(base)")
    }

    /// The patch text of `diff`'s deltas that `keep` lets through (all by default).
    func patchText(of diff: borrowing GitHandle, base: String, keep: (git_diff_delta) -> Bool = { _ in true }) throws -> String {
        var text = ""
        for index in 0..<git_diff_num_deltas(diff.pointer) {
            if let delta = git_diff_get_delta(diff.pointer, index)?.pointee, !keep(delta) { continue }
            let patch = try GitHandle.make("git_patch_from_diff", "compute the changes of file \(index) against \(base)", free: git_patch_free) {
                git_patch_from_diff(&$0, diff.pointer, index)
            }
            let buffer = GitBuffer()
            try gitCall("git_patch_to_buf", "format the diff against \(base)") { git_patch_to_buf(buffer.raw, patch.pointer) }
            let binary = git_patch_get_delta(patch.pointer).map { $0.pointee.flags & GIT_DIFF_FLAG_BINARY.rawValue != 0 } ?? false
            if git_patch_num_hunks(patch.pointer) == 0 && !binary {
                // git prints no `---`/`+++` lines for a file without hunks (an empty file
                // added or deleted); libgit2 1.5.1 does. Drop them so the text is git's.
                text += buffer.string.split(separator: "\n", omittingEmptySubsequences: false)
                    .filter { !$0.hasPrefix("--- ") && !$0.hasPrefix("+++ ") }
                    .joined(separator: "\n")
            } else {
                text += buffer.string
            }
        }
        return text
    }

    /// ``diffStat(against:)`` of the linked worktree at `worktreePath`, which must belong to
    /// this repository (`.notAWorktree` otherwise).
    public func diffStat(worktreePath: String, base: Revision) throws -> FileChanges {
        try openWorktreeRepository(worktreePath).diffStat(against: base)
    }

    /// ``diff(against:)`` of the linked worktree at `worktreePath`, which must belong to this
    /// repository (`.notAWorktree` otherwise).
    public func diff(worktreePath: String, base: Revision) throws -> String {
        try openWorktreeRepository(worktreePath).diff(against: base)
    }

    /// Opens the working tree at `path` and checks that it shares this repository's objects.
    public func openWorktreeRepository(_ path: String) throws -> Repository {
        let repository: Repository
        do {
            repository = try Repository.open(path)
        } catch let error as GitError where error.code == .repositoryNotFound {
            throw error.with(.notAWorktree, "\(path) is not a worktree of \(repositoryDescription): there is no repository there. Was the worktree removed?")
        }
        let mine = FileSystem.resolved(commonDirectory) ?? commonDirectory
        let theirs = FileSystem.resolved(repository.commonDirectory) ?? repository.commonDirectory
        guard mine == theirs else {
            throw GitError(.notAWorktree, "\(path) belongs to the repository at \(theirs), not to \(mine). Pass a worktree of this repository.", path: path)
        }
        return repository
    }

    /// The base's commit id.
    public func resolve(_ revision: Revision) throws -> OID {
        switch revision {
        case .branch(let name): return try branchTip(name)
        case .commit(let oid):
            _ = try lookupCommit(oid)
            return oid
        }
    }

    // MARK: Helpers

    /// Commit `base`'s tree → working directory through the index, untracked content included;
    /// renames found unless `findRenames` is false.
    func workingDirectoryDiff(against base: OID, describedAs name: String, findRenames: Bool = true) throws -> GitHandle {
        guard !isBare else {
            throw GitError(.bareRepository, "\(commonDirectory) is a bare repository: it has no working directory to compare with \(name).", path: commonDirectory)
        }
        let commit = try lookupCommit(base)
        let tree = try GitHandle.make("git_commit_tree", "read the tree of \(name)", free: git_tree_free) {
            git_commit_tree(&$0, commit.pointer)
        }
        var options = git_diff_options()
        try gitCall("git_diff_options_init") { git_diff_options_init(&options, UInt32(GIT_DIFF_OPTIONS_VERSION)) }
        options.flags = GIT_DIFF_INCLUDE_UNTRACKED.rawValue | GIT_DIFF_RECURSE_UNTRACKED_DIRS.rawValue
            | GIT_DIFF_SHOW_UNTRACKED_CONTENT.rawValue
        let diff = try GitHandle.make("git_diff_tree_to_workdir_with_index", "compare \(repositoryDescription) with \(name)", path: workdir, free: git_diff_free) {
            git_diff_tree_to_workdir_with_index(&$0, pointer, tree.pointer, &options)
        }
        guard findRenames else { return diff }
        var find = git_diff_find_options()
        try gitCall("git_diff_find_options_init") { git_diff_find_options_init(&find, UInt32(GIT_DIFF_FIND_OPTIONS_VERSION)) }
        // git's default (diff.renames=true): renames, with untracked files as candidates, since
        // an agent's `mv` shows up as a deleted tracked file plus an untracked one.
        find.flags = GIT_DIFF_FIND_RENAMES.rawValue | GIT_DIFF_FIND_FOR_UNTRACKED.rawValue
        try gitCall("git_diff_find_similar", "detect renames against \(name)") { git_diff_find_similar(diff.pointer, &find) }
        return diff
    }

    static func status(of delta: git_delta_t) -> FileChanges.File.Status? {
        switch delta {
        case GIT_DELTA_ADDED, GIT_DELTA_UNTRACKED: .added
        case GIT_DELTA_DELETED: .deleted
        case GIT_DELTA_MODIFIED: .modified
        case GIT_DELTA_RENAMED: .renamed
        case GIT_DELTA_COPIED: .copied
        case GIT_DELTA_TYPECHANGE: .typeChanged
        case GIT_DELTA_CONFLICTED: .modified // an unresolved merge in the worktree
        default: nil // unmodified, ignored, unreadable
        }
    }
}
