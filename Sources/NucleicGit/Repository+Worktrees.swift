import CGit2
import NucleicSystem

extension Repository {
    /// Creates branch `branch` at the tip of branch `base` and a linked worktree named `name` at
    /// `path` with that branch checked out; returns the new worktree.
    ///
    /// `path` should lie outside the repository (Nucleic uses
    /// `$NUCLEIC_HOME/worktrees/<project>/<session>/`); its parent folders are created. It may be
    /// an empty folder, which is replaced. Refuses clearly, leaving nothing behind, when the name
    /// is not a valid ``WorktreeName`` or already registered, the branch exists or is not a valid
    /// name, the base branch does not exist, or the path exists and is not an empty folder.
    /// If libgit2 fails half-way, everything this call created is removed again (the branch,
    /// `.git/worktrees/<name>`, the folder and any parent folders it made).
    @discardableResult
    public func createWorktree(name: String, path: String, branch: String, from base: String) throws -> WorktreeInfo {
        let tip = try branchTip(base)
        return try createWorktree(name: name, path: path, branch: branch, at: tip)
    }

    /// Like ``createWorktree(name:path:branch:from:)``, with the new branch at `commit`.
    @discardableResult
    public func createWorktree(name: String, path: String, branch: String, at commit: OID) throws -> WorktreeInfo {
        guard WorktreeName.isValid(name) else {
            throw GitError(.invalidName, "'\(name)' cannot name a worktree: use 1–100 letters, digits, '.', '_' or '-', not starting with '.' or '-' (WorktreeName.sanitized makes one from any text; libgit2 refuses '/').", path: commonDirectory)
        }
        try Self.validateBranchName(branch)
        let adminPath = worktreeAdminPath(name)
        if FileSystem.exists(adminPath) {
            throw GitError(.worktreeExists, "A worktree named '\(name)' is already registered in \(commonDirectory) (at \(adminPath)). Remove it first, or pick another name.", path: adminPath)
        }
        if try branchExists(branch) { throw branchExistsError(branch) }
        let target = try lookupCommit(commit)

        // libgit2 wants an absolute path whose parent exists, and creates the folder itself
        // with mkdir(O_EXCL): an existing empty folder must go first.
        let absolutePath = FileSystem.absolute(path)
        if absolutePath == "/" {
            throw GitError(.invalidPath, "A worktree cannot be created at '/'. Pass a folder such as $NUCLEIC_HOME/worktrees/<project>/<session>.", path: path)
        }
        let common = FileSystem.resolved(commonDirectory) ?? commonDirectory
        let resolvedPath = FileSystem.resolved(FileSystem.parent(of: absolutePath)).map { $0 + "/" + FileSystem.lastComponent(of: absolutePath) } ?? absolutePath
        if resolvedPath == common || resolvedPath.hasPrefix(common + "/") {
            throw GitError(.invalidPath, "The worktree path \(absolutePath) lies inside the git directory \(common). Put worktrees outside the repository, e.g. under $NUCLEIC_HOME/worktrees/.", path: absolutePath)
        }
        var removedEmptyFolder = false
        switch FileSystem.entry(at: absolutePath) {
        case .missing: break
        case .emptyDirectory:
            guard FileSystem.removeEmptyDirectory(absolutePath) else {
                throw GitError(.fileSystem, "Could not replace the empty folder \(absolutePath) with a worktree. Check its permissions.", function: "rmdir", path: absolutePath)
            }
            removedEmptyFolder = true
        case .nonEmptyDirectory:
            throw GitError(.pathNotEmpty, "Cannot create worktree '\(name)' at \(absolutePath): the folder exists and is not empty. Remove it, or choose another path.", path: absolutePath)
        case .other:
            throw GitError(.pathNotEmpty, "Cannot create worktree '\(name)' at \(absolutePath): a file is in the way. Remove it, or choose another path.", path: absolutePath)
        }
        var createdFolders: [String] = []
        do {
            createdFolders = try FileSystem.createDirectories(FileSystem.parent(of: absolutePath))
            let reference = try GitHandle.make("git_branch_create", "create branch '\(branch)' at \(commit.abbreviated())", free: git_reference_free) {
                git_branch_create(&$0, pointer, branch, target.pointer, 0)
            }
            do {
                var options = git_worktree_add_options()
                try gitCall("git_worktree_add_options_init") {
                    git_worktree_add_options_init(&options, UInt32(GIT_WORKTREE_ADD_OPTIONS_VERSION))
                }
                // Without `ref`, libgit2 would create (or reuse) a branch named after the worktree.
                options.ref = reference.pointer
                // Locked while it is being made, as `git worktree add` does, so a concurrent
                // `git worktree prune` (or our pruneStale) cannot take the half-made entry.
                options.lock = 1
                // The checkout filters, and the attribute lookups behind them for every file,
                // are skipped where no attribute and no core.autocrlf can change a file.
                let survey = treeSurvey(try treeID(of: commit))
                let disableFilters = checkoutNeedsNoFilters(survey: survey)
                options.checkout_options.disable_filters = disableFilters ? 1 : 0
                // A large tree is checked out in two halves at once after libgit2 made the
                // worktree (its own checkout then only a dry run that writes nothing).
                let halves = Self.checkoutHalves(survey)
                if halves != nil {
                    options.checkout_options.checkout_strategy = GIT_CHECKOUT_DRY_RUN.rawValue | GIT_CHECKOUT_DONT_WRITE_INDEX.rawValue
                }
                let worktree = try GitHandle.make("git_worktree_add", "create worktree '\(name)' at \(absolutePath)", path: absolutePath, free: git_worktree_free) {
                    git_worktree_add(&$0, pointer, name, absolutePath, &options)
                }
                if let halves {
                    try Self.checkOutInHalves(worktree: absolutePath, halves: halves, disableFilters: disableFilters)
                }
                try gitCall("git_worktree_unlock", "unlock the new worktree '\(name)'") { git_worktree_unlock(worktree.pointer) }
            } catch {
                // libgit2 leaves `.git/worktrees/<name>` (and maybe the folder) behind on
                // failure, and cannot prune an entry without its `gitdir` file: undo by hand.
                try? FileSystem.removeTree(adminPath)
                try? FileSystem.removeTree(absolutePath)
                git_error_clear()
                _ = git_branch_delete(reference.pointer)
                git_error_clear()
                throw error
            }
        } catch {
            for folder in createdFolders.reversed() { FileSystem.removeEmptyDirectory(folder) }
            if removedEmptyFolder, !FileSystem.exists(absolutePath) { _ = try? FileSystem.createDirectories(absolutePath) }
            throw error
        }
        guard let info = try worktree(named: name) else {
            throw GitError(.worktreeNotFound, "Worktree '\(name)' was created but cannot be read back from \(adminPath).", path: adminPath)
        }
        return info
    }

    /// Removes worktree `name`: deletes its folder (uncommitted work in it is lost) and its
    /// entry under `.git/worktrees/`. The branch is kept unless `deleteBranch` is true.
    ///
    /// Refuses (`.worktreeLocked`) when the worktree is locked, (`.worktreeNotFound`) when there
    /// is no such worktree. An entry libgit2 cannot read (left by a failed add) is removed too.
    public func removeWorktree(name: String, deleteBranch: Bool = false) throws {
        let adminPath = worktreeAdminPath(name)
        guard Self.isPlausibleWorktreeName(name), FileSystem.isDirectory(adminPath) else {
            throw GitError(.worktreeNotFound, "There is no worktree named '\(name)' in \(commonDirectory). List them with `git worktree list`.", path: adminPath)
        }
        if !Self.isWorktreeAdminDirectory(adminPath) {
            // A leftover of a failed add: libgit2 neither lists nor prunes it.
            try FileSystem.removeTree(adminPath)
            return
        }
        let worktree = try lookupWorktree(name)
        let reason = GitBuffer()
        let locked = try gitCall("git_worktree_is_locked", "check whether worktree '\(name)' is locked") {
            git_worktree_is_locked(reason.raw, worktree.pointer)
        }
        if locked > 0 {
            let why = reason.string.trimmingNewlines
            throw GitError(.worktreeLocked, "Worktree '\(name)' is locked\(why.isEmpty ? "" : " (\(why))") and was left alone. Unlock it with `git worktree unlock \(name)` first.", function: "git_worktree_is_locked", path: adminPath)
        }
        let branch = worktreeHead(name).branch
        let folder = String(cString: git_worktree_path(worktree.pointer))

        var options = git_worktree_prune_options()
        try gitCall("git_worktree_prune_options_init") {
            git_worktree_prune_options_init(&options, UInt32(GIT_WORKTREE_PRUNE_OPTIONS_VERSION))
        }
        // PRUNE_VALID: prune even though it is healthy; PRUNE_WORKING_TREE: delete its folder.
        options.flags = GIT_WORKTREE_PRUNE_VALID.rawValue | GIT_WORKTREE_PRUNE_WORKING_TREE.rawValue
        try gitCall("git_worktree_prune", "remove worktree '\(name)' at \(folder)", path: folder) {
            git_worktree_prune(worktree.pointer, &options)
        }
        // libgit2 deletes the folder only while it still holds the `.git` link file, and deletes
        // the entry before the folder: finish the job if it stopped half-way.
        if FileSystem.exists(folder), isSafeToDelete(folder) {
            try FileSystem.removeTree(folder)
        }
        if deleteBranch, let branch, try branchExists(branch) {
            try self.deleteBranch(branch)
        }
    }

    /// The linked worktrees (not the main working tree), sorted by name.
    public func listWorktrees() throws -> [WorktreeInfo] {
        var names = git_strarray()
        try gitCall("git_worktree_list", "list the worktrees of \(commonDirectory)") { git_worktree_list(&names, pointer) }
        return try takeStrings(&names).sorted().compactMap { try worktree(named: $0) }
    }

    /// Worktree `name`, or nil when no such worktree is registered.
    public func worktree(named name: String) throws -> WorktreeInfo? {
        guard Self.isPlausibleWorktreeName(name), Self.isWorktreeAdminDirectory(worktreeAdminPath(name)) else { return nil }
        let worktree = try lookupWorktree(name)
        let reason = GitBuffer()
        let locked = try gitCall("git_worktree_is_locked", "check whether worktree '\(name)' is locked") {
            git_worktree_is_locked(reason.raw, worktree.pointer)
        } > 0
        git_error_clear()
        let prunable = git_worktree_is_prunable(worktree.pointer, nil) > 0
        git_error_clear()
        let folder = String(cString: git_worktree_path(worktree.pointer))
        let head = worktreeHead(name)
        let reasonText = reason.string.trimmingNewlines
        return WorktreeInfo(
            name: name, path: Self.trimmingSlash(folder), branch: head.branch, head: head.commit,
            isLocked: locked, lockReason: locked && !reasonText.isEmpty ? reasonText : nil, isPrunable: prunable)
    }

    /// Prunes worktrees whose folder vanished (as `git worktree prune` does), plus entries a
    /// failed add left half-made. Locked worktrees are kept. Returns the names it removed.
    @discardableResult
    public func pruneStale() throws -> [String] {
        var pruned: [String] = []
        let root = commonDirectory + "/worktrees"
        for name in FileSystem.contents(of: root).sorted() {
            let adminPath = root + "/" + name
            guard FileSystem.isDirectory(adminPath), !FileSystem.exists(adminPath + "/locked") else { continue }
            if !Self.isWorktreeAdminDirectory(adminPath) {
                try FileSystem.removeTree(adminPath)
                pruned.append(name)
                continue
            }
            let worktree = try lookupWorktree(name)
            git_error_clear()
            guard git_worktree_is_prunable(worktree.pointer, nil) > 0 else { git_error_clear(); continue }
            var options = git_worktree_prune_options()
            try gitCall("git_worktree_prune_options_init") {
                git_worktree_prune_options_init(&options, UInt32(GIT_WORKTREE_PRUNE_OPTIONS_VERSION))
            }
            options.flags = 0 // only invalid, unlocked worktrees; never touch a folder
            try gitCall("git_worktree_prune", "prune the stale worktree '\(name)'", path: adminPath) {
                git_worktree_prune(worktree.pointer, &options)
            }
            pruned.append(name)
        }
        if FileSystem.entry(at: root) == .emptyDirectory { FileSystem.removeEmptyDirectory(root) }
        return pruned
    }

    // MARK: Helpers

    func worktreeAdminPath(_ name: String) -> String { commonDirectory + "/worktrees/" + name }

    /// Names git itself may have made (`git worktree add` takes the folder's name): anything
    /// that is one path component. Only names Nucleic creates must be ``WorktreeName/isValid(_:)``.
    static func isPlausibleWorktreeName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\0")
    }

    /// What libgit2 requires of `.git/worktrees/<name>` before it will list or open it.
    static func isWorktreeAdminDirectory(_ path: String) -> Bool {
        FileSystem.exists(path + "/commondir") && FileSystem.exists(path + "/gitdir") && FileSystem.exists(path + "/HEAD")
    }

    func lookupWorktree(_ name: String) throws -> GitHandle {
        do {
            return try GitHandle.make("git_worktree_lookup", "open worktree '\(name)' of \(commonDirectory)", free: git_worktree_free) {
                git_worktree_lookup(&$0, pointer, name)
            }
        } catch let error as GitError where error.code == .notFound {
            throw error.with(.worktreeNotFound, "There is no worktree named '\(name)' in \(commonDirectory). List them with `git worktree list`.")
        }
    }

    /// The branch and commit checked out in worktree `name`; nils when they cannot be read.
    ///
    /// Read from `.git/worktrees/<name>/HEAD` and resolved in the shared refs, not through
    /// `git_repository_head_for_worktree`, for two reasons met in libgit2 1.5.1: it fails once the
    /// worktree's folder is gone (exactly when `git worktree list` still shows the branch of a
    /// prunable entry), and the reference it returns belongs to a repository it has already
    /// freed, so `git_reference_peel` on it crashes (use after free).
    func worktreeHead(_ name: String) -> (branch: String?, commit: OID?) {
        guard let text = WholeFile.text(worktreeAdminPath(name) + "/HEAD")?.trimmingNewlines else { return (nil, nil) }
        if text.hasPrefix("ref: ") {
            let target = String(text.dropFirst(5))
            let branch = target.hasPrefix("refs/heads/") ? String(target.dropFirst("refs/heads/".count)) : nil
            var oid = git_oid()
            git_error_clear()
            let rc = git_reference_name_to_id(&oid, pointer, target)
            git_error_clear()
            return (branch, rc == 0 ? OID(oid) : nil)
        }
        return (nil, OID(hex: text))
    }

    /// Never delete the main working tree, the git directory or anything that contains them.
    private func isSafeToDelete(_ folder: String) -> Bool {
        guard let resolved = FileSystem.resolved(folder), resolved != "/" else { return false }
        let protected = [workdir, commonDirectory, gitDirectory].compactMap { $0 }.map { FileSystem.resolved($0) ?? $0 }
        return !protected.contains { $0 == resolved || $0.hasPrefix(resolved + "/") }
    }
}

extension String {
    var trimmingNewlines: String {
        var text = self
        while let last = text.last, last == "\n" || last == "\r" { text.removeLast() }
        return text
    }
}
