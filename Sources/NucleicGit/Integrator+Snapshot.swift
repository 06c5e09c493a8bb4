import CGit2
import Glibc

/// The snapshot commit: a session worktree's uncommitted work (untracked files included,
/// ignored files excluded) as a commit on its branch, with the `Nucleic-Session` trailer.
extension Integrator {
    /// Commits the uncommitted work in the session worktree at `worktree` to the branch checked
    /// out there, and brings its index in line, as `git add -A && git commit` would. Returns
    /// the commit, or nil when there was nothing to commit.
    ///
    /// Unlike ``Repository/commitAll(message:author:committer:)``, the message is the snapshot
    /// message with the session trailer, and the branch moves by compare-and-swap
    /// (`.modified` when it moved meanwhile).
    ///
    /// `author` nil means the repository's configured identity (``Repository/configuredIdentity()``),
    /// looked up only when there is something to commit: a clean worktree needs no identity.
    @discardableResult
    public func snapshot(
        worktree: String, sessionID: String, author: Signature? = .nucleic, committer: Signature? = nil,
        attribution: SessionAttribution = SessionAttribution(), purpose: SnapshotPurpose = .integration
    ) throws -> OID? {
        let session = try repository.openWorktreeRepository(worktree)
        guard let branch = try session.currentBranch, let tip = try session.headCommit else {
            throw GitError(.invalidRequest, "The worktree \(worktree) has no branch with commits checked out, so there is no session branch to snapshot onto.", path: worktree)
        }
        var identity = committer ?? author ?? .nucleic
        let resolve: () throws -> (Signature, Signature) = {
            guard let author else {
                let configured = try repository.configuredIdentity()
                return (configured.author, committer ?? configured.committer)
            }
            return (author, committer ?? author)
        }
        guard let commit = try makeSnapshot(
            session: session, worktree: worktree, branch: branch, branchTip: tip, sessionID: sessionID,
            signatures: { let pair = try resolve(); identity = pair.1; return pair }, attribution: attribution, purpose: purpose)
        else {
            return nil
        }
        guard try repository.compareAndSwapBranch(branch, from: tip, to: commit, reflogMessage: "nucleic: snapshot of session \(sessionID)", identity: identity) else {
            throw GitError(.modified, "Branch '\(branch)' moved while its worktree \(worktree) was being snapshotted. Make sure nothing is committing there (is the session still running?), then try again.", path: worktree)
        }
        // `session`'s in-memory index holds exactly the staging the commit's tree was written
        // from: written as it is, it is what `git add -A` leaves (a file changed since then has
        // other stat data than its entry, and shows as unstaged). Staging the whole worktree a
        // second time, as ``Repository/writeIndex(matching:)`` does, would double the cost.
        try session.writeStagedIndex()
        return commit
    }

    /// Whether the worktree at `worktree` holds work its HEAD lacks (staged, unstaged or
    /// untracked files; ignored ones do not count): what a snapshot would commit. Nothing is
    /// written but objects.
    public func hasUncommittedWork(worktree: String) throws -> Bool {
        let session = try repository.openWorktreeRepository(worktree)
        let tree = try session.stageWorkingTree()
        guard let head = try session.headCommit else { return true }
        return tree != (try repository.treeID(of: head))
    }

    /// Writes the snapshot commit of the session worktree as an object (no ref moves, the index
    /// file is not written) and returns it, or nil when the worktree matches `branchTip`.
    func makeSnapshot(
        worktree: String, branch: String, branchTip: OID, sessionID: String, author: Signature, committer: Signature,
        attribution: SessionAttribution
    ) throws -> OID? {
        // A handle of its own, dropped at the end: its staged in-memory index goes with it.
        let session = try repository.openWorktreeRepository(worktree)
        return try makeSnapshot(
            session: session, worktree: worktree, branch: branch, branchTip: branchTip, sessionID: sessionID,
            signatures: { (author, committer) }, attribution: attribution, purpose: .integration)
    }

    /// ``makeSnapshot(worktree:branch:branchTip:sessionID:author:committer:attribution:)`` through
    /// an open handle on the session worktree, whose in-memory index is left staged
    /// (``Repository/stageWorkingTree()``): write it with ``Repository/writeStagedIndex()`` or
    /// drop the handle. `signatures` (author, committer) is asked only when there is something
    /// to commit.
    private func makeSnapshot(
        session: Repository, worktree: String, branch: String, branchTip: OID, sessionID: String,
        signatures: () throws -> (Signature, Signature), attribution: SessionAttribution, purpose: SnapshotPurpose
    ) throws -> OID? {
        let checkedOut = try session.currentBranch
        guard checkedOut == branch else {
            throw GitError(.invalidRequest, "The worktree \(worktree) has \(checkedOut.map { "branch '\($0)'" } ?? "a detached HEAD") checked out, not the session branch '\(branch)'. Pass the session's own worktree and branch.", path: worktree)
        }
        guard try session.headCommit == branchTip else {
            throw GitError(.modified, "Branch '\(branch)' moved while its worktree \(worktree) was being read. Make sure nothing is committing there, then integrate again.", path: worktree)
        }
        if let operation = try session.operationInProgress {
            throw GitError(.operationInProgress, "The session worktree \(worktree) is in the middle of a \(operation). Finish or abort it there (or ask the agent to), then integrate again.", path: worktree)
        }
        let tree = try session.stageWorkingTree()
        if tree == (try repository.treeID(of: branchTip)) { return nil }
        let (author, committer) = try signatures()
        return try repository.createCommit(
            tree: tree, parents: [branchTip], author: author, committer: committer,
            message: IntegrationMessage.snapshot(sessionID: sessionID, attribution: attribution, purpose: purpose))
    }
}

extension Repository {
    /// Stages the working tree as `git add -A` would (ignored files excluded) in this handle's
    /// in-memory index, and writes that tree to the object database. The index file is not
    /// written: write it with ``writeStagedIndex()``, or drop the handle (which drops the
    /// staging; nothing else may use the handle's index meanwhile, as it looks staged).
    ///
    /// The tree is written as the tree the index held before staging with only the staged paths
    /// changed (`git_tree_create_updated`: the folders on those paths are read and written, no
    /// others). `git_index_write_tree` after staging would write the same tree, then read all
    /// of it back to rebuild the index's tree cache (a third of a snapshot of 10,000 files).
    /// The tree before staging costs nothing when the index has a complete tree cache (git
    /// leaves one after a commit, reset or checkout); otherwise `git_index_write_tree` writes
    /// it first (what it cost before, the folders already stored). An index with conflicts, or
    /// a change libgit2 cannot make as updates (a file that becomes a folder or the reverse),
    /// is written whole after staging.
    func stageWorkingTree() throws -> OID {
        let index = try GitHandle.make("git_repository_index", "open the index of \(repositoryDescription)", free: git_index_free) {
            git_repository_index(&$0, pointer)
        }
        var before = git_oid()
        git_error_clear()
        let caseSensitive = git_index_caps(index.pointer) & Int32(GIT_INDEX_CAPABILITY_IGNORE_CASE.rawValue) == 0
        let base: OID? = caseSensitive && git_index_write_tree(&before, index.pointer) == 0 ? OID(before) : nil
        git_error_clear()
        let staged = StagedPaths()
        try stageEverything(index.pointer, recording: staged)
        if let base, let tree = try updatedTree(base, staged: staged.paths, in: index.pointer) { return tree }
        var tree = git_oid()
        try gitCall("git_index_write_tree", "write the tree of \(repositoryDescription)") { git_index_write_tree(&tree, index.pointer) }
        return OID(tree)
    }

    /// `base` updated to the index's entries at `paths` (an entry: set; none: removed).
    private func updatedTree(_ base: OID, staged paths: [[UInt8]], in index: OpaquePointer) throws -> OID? {
        var upserts: [(path: [UInt8], id: OID, mode: UInt32)] = []
        var removals: [[UInt8]] = []
        for path in paths {
            let entry = (path + [0]).withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { git_index_get_bypath(index, $0.baseAddress, 0) }
            }
            if let entry {
                upserts.append((path, OID(entry.pointee.id), entry.pointee.mode))
            } else {
                removals.append(path)
            }
        }
        return try updatedTree(base, upserts: upserts, removals: removals)
    }

    /// Writes this handle's in-memory index (as ``stageWorkingTree()`` left it) to the index file.
    func writeStagedIndex() throws {
        let index = try GitHandle.make("git_repository_index", "open the index of \(repositoryDescription)", free: git_index_free) {
            git_repository_index(&$0, pointer)
        }
        try gitCall("git_index_write", "write the index of \(repositoryDescription)") { git_index_write(index.pointer) }
    }

    /// Sets this working tree's index to `tree` and writes it: after the branch moved to the
    /// snapshot commit, `git status` is clean again. Staging the working tree gives that tree
    /// (with fresh stat data) unless a file changed since the snapshot; then the index is read
    /// from the tree itself, and the newer change shows as unstaged, as it should.
    func writeIndex(matching tree: OID) throws {
        let index = try GitHandle.make("git_repository_index", "open the index of \(repositoryDescription)", free: git_index_free) {
            git_repository_index(&$0, pointer)
        }
        try stageEverything(index.pointer)
        var staged = git_oid()
        try gitCall("git_index_write_tree", "write the tree of \(repositoryDescription)") { git_index_write_tree(&staged, index.pointer) }
        if OID(staged) != tree {
            var id = tree.raw
            let treeObject = try GitHandle.make("git_tree_lookup", "read tree \(tree.abbreviated())", free: git_tree_free) {
                git_tree_lookup(&$0, pointer, &id)
            }
            try gitCall("git_index_read_tree", "reset the index of \(repositoryDescription)") { git_index_read_tree(index.pointer, treeObject.pointer) }
        }
        try gitCall("git_index_write", "write the index of \(repositoryDescription)") { git_index_write(index.pointer) }
    }

    /// `git add -A` in memory: new, modified and deleted files (ignored ones excluded).
    ///
    /// One `git_index_add_all` is enough: it stages from a diff of the index against the working
    /// directory, untracked files included, and removes the entries whose file is gone
    /// (libgit2 ≥ 0.23, `apply_each_file`). A `git_index_update_all` after it would walk the
    /// whole working directory again to find nothing (15% of a snapshot on 10,000 files).
    private func stageEverything(_ index: OpaquePointer, recording staged: StagedPaths? = nil) throws {
        guard let staged else {
            try gitCall("git_index_add_all", "stage the files of \(repositoryDescription)") {
                git_index_add_all(index, nil, GIT_INDEX_ADD_DEFAULT.rawValue, nil, nil)
            }
            return
        }
        // What `git_index_add_all` does (libgit2 1.5, `index_apply_to_wd_diff`), with the
        // paths kept: the same diff of the index against the working directory, then each
        // path staged, or removed when its file is gone. `git_diff_foreach`, which add_all walks
        // the diff with, also builds a patch of each changed file (reading its old blob) that
        // staging does not use: 9% of a snapshot.
        var options = git_diff_options()
        try gitCall("git_diff_options_init") { git_diff_options_init(&options, UInt32(GIT_DIFF_OPTIONS_VERSION)) }
        options.flags = GIT_DIFF_INCLUDE_TYPECHANGE.rawValue | GIT_DIFF_INCLUDE_UNTRACKED.rawValue | GIT_DIFF_RECURSE_UNTRACKED_DIRS.rawValue
        let diff = try GitHandle.make("git_diff_index_to_workdir", "compare the index of \(repositoryDescription) with its files", free: git_diff_free) {
            git_diff_index_to_workdir(&$0, pointer, index, &options)
        }
        let count = git_diff_num_deltas(diff.pointer)
        staged.paths.reserveCapacity(count)
        for position in 0..<count {
            guard let delta = git_diff_get_delta(diff.pointer, position), let path = delta.pointee.old_file.path else { continue }
            // The deltas `git_diff_foreach` skips with these options.
            let status = delta.pointee.status
            if status == GIT_DELTA_UNMODIFIED || status == GIT_DELTA_IGNORED || status == GIT_DELTA_UNREADABLE { continue }
            staged.paths.append(Array(UnsafeBufferPointer(start: UnsafeRawPointer(path).assumingMemoryBound(to: UInt8.self), count: strlen(path))))
            if delta.pointee.new_file.flags & GIT_DIFF_FLAG_EXISTS.rawValue == 0 {
                try gitCall("git_index_remove_bypath", "unstage the deleted file \(String(cString: path))") { git_index_remove_bypath(index, path) }
            } else {
                try gitCall("git_index_add_bypath", "stage \(String(cString: delta.pointee.new_file.path))") { git_index_add_bypath(index, delta.pointee.new_file.path) }
            }
        }
    }
}

/// The paths staged or removed.
private final class StagedPaths {
    var paths: [[UInt8]] = []
}
