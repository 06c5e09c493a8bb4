import CGit2
import Glibc

/// An open git repository: the one owner of a `git_repository*`, freed in `deinit`.
///
/// Every method is a **blocking** call into libgit2 (file reads, hashing, checkouts) and a
/// `Repository` is not thread-safe, so it is deliberately not `Sendable`: use it from one thread
/// at a time, never on Swift's cooperative pool. From async code, go through
/// ``RepositoryActor``, which owns a `Repository` and runs every call on its own thread.
/// Results are copied into `Sendable` values (``OID``, ``WorktreeInfo``, ``FileChanges``) at once.
public final class Repository {
    let pointer: OpaquePointer

    private init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { git_repository_free(pointer) }

    // MARK: Opening

    /// Opens the repository that contains `path`, searching upwards from it like `git` does.
    ///
    /// `path` may be the working tree's root, any folder inside it, the `.git` folder, or a
    /// linked worktree (which opens that worktree: its HEAD, index and working directory).
    /// Throws `.repositoryNotFound` when there is none, and `.notOwned` when the repository
    /// belongs to another user (libgit2's safe.directory check).
    public static func open(_ path: String) throws -> Repository {
        LibGit2.initialize()
        var out: OpaquePointer?
        git_error_clear()
        let rc = git_repository_open_ext(&out, path, 0, nil)
        if rc < 0 || out == nil {
            if let out { git_repository_free(out) }
            let error = GitError.fromLibgit2(rc, "git_repository_open_ext", "open a repository at \(path)", path: path)
            throw classifyOpenFailure(error, path: path)
        }
        return Repository(owning: out!)
    }

    /// Creates a new, empty repository at `path` (creating the folder), with HEAD on
    /// `initialBranch` (libgit2's default would be `master` whatever the user's config says).
    public static func create(at path: String, initialBranch: String = "main", bare: Bool = false) throws -> Repository {
        LibGit2.initialize()
        var options = git_repository_init_options()
        try gitCall("git_repository_init_options_init") {
            git_repository_init_options_init(&options, UInt32(GIT_REPOSITORY_INIT_OPTIONS_VERSION))
        }
        options.flags = GIT_REPOSITORY_INIT_MKPATH.rawValue | (bare ? GIT_REPOSITORY_INIT_BARE.rawValue : 0)
        var out: OpaquePointer?
        git_error_clear()
        let rc = initialBranch.withCString { branch in
            options.initial_head = branch
            return git_repository_init_ext(&out, path, &options)
        }
        if rc < 0 || out == nil {
            if let out { git_repository_free(out) }
            throw GitError.fromLibgit2(rc, "git_repository_init_ext", "create a repository at \(path)", path: path)
        }
        return Repository(owning: out!)
    }

    private static func classifyOpenFailure(_ error: GitError, path: String) -> GitError {
        if error.code == .notOwned {
            let owner = FileSystem.owner(of: path).map { "uid \($0)" } ?? "another user"
            return error.with(.notOwned, """
                The repository at \(path) belongs to \(owner), not to the user running Nucleic \
                (uid \(geteuid())), and libgit2 refuses to open it (git's safe.directory check). \
                Run Nucleic as the repository's owner, or trust this one path with \
                `git config --global --add safe.directory <repository root>` \
                (libgit2 1.5.1 does not honour safe.directory=*).
                """)
        }
        if error.code == .notFound {
            if !FileSystem.exists(path) {
                return error.with(.repositoryNotFound, "Could not open a repository at \(path): the path does not exist. Check the path, or create the repository first.")
            }
            return error.with(.repositoryNotFound, "No git repository at or above \(path). Point Nucleic at a folder inside a git repository, or run `git init` there first.")
        }
        return error
    }

    // MARK: Where it is

    /// The working directory (with a trailing `/` removed), or nil for a bare repository.
    public var workdir: String? {
        guard let dir = git_repository_workdir(pointer) else { return nil }
        return Self.trimmingSlash(String(cString: dir))
    }

    /// The git directory: `.git` for a main working tree, `.git/worktrees/<name>` for a linked
    /// worktree, the repository itself when bare.
    public var gitDirectory: String { Self.trimmingSlash(String(cString: git_repository_path(pointer))) }

    /// The directory shared by every worktree (the main `.git`).
    public var commonDirectory: String { Self.trimmingSlash(String(cString: git_repository_commondir(pointer))) }

    public var isBare: Bool { git_repository_is_bare(pointer) == 1 }

    /// Whether this handle was opened on a linked worktree.
    public var isLinkedWorktree: Bool { git_repository_is_worktree(pointer) == 1 }

    // MARK: Branches

    /// The branch HEAD points to (`main`, `nucleic/fix-tests`), nil when HEAD is detached.
    /// An unborn branch (no commit yet) still has its name.
    public var currentBranch: String? {
        get throws {
            let head = try GitHandle.make("git_reference_lookup", "read HEAD in \(gitDirectory)", free: git_reference_free) {
                git_reference_lookup(&$0, pointer, "HEAD")
            }
            guard git_reference_type(head.pointer) == GIT_REFERENCE_SYMBOLIC,
                  let target = git_reference_symbolic_target(head.pointer) else { return nil }
            let name = String(cString: target)
            return name.hasPrefix("refs/heads/") ? String(name.dropFirst("refs/heads/".count)) : nil
        }
    }

    /// The commit HEAD points to, nil when the current branch has no commit yet.
    public var headCommit: OID? {
        get throws {
            var oid = git_oid()
            git_error_clear()
            let rc = git_reference_name_to_id(&oid, pointer, "HEAD")
            if rc == GIT_ENOTFOUND.rawValue { git_error_clear(); return nil }
            try GitError.check(rc, "git_reference_name_to_id", "resolve HEAD in \(gitDirectory)")
            return OID(oid)
        }
    }

    /// The commit at the tip of local branch `name`.
    public func branchTip(_ name: String) throws -> OID {
        let reference = try lookupBranch(name)
        let commit = try GitHandle.make("git_reference_peel", "resolve branch '\(name)' to a commit", free: git_object_free) {
            git_reference_peel(&$0, reference.pointer, GIT_OBJECT_COMMIT)
        }
        return OID(git_object_id(commit.pointer).pointee)
    }

    /// Whether local branch `name` exists.
    public func branchExists(_ name: String) throws -> Bool {
        var reference: OpaquePointer?
        git_error_clear()
        let rc = git_branch_lookup(&reference, pointer, name, GIT_BRANCH_LOCAL)
        if let reference { git_reference_free(reference) }
        if rc == GIT_ENOTFOUND.rawValue || rc == GIT_EINVALIDSPEC.rawValue { git_error_clear(); return false }
        try GitError.check(rc, "git_branch_lookup", "look up branch '\(name)' in \(commonDirectory)")
        return true
    }

    /// Whether local branch `name` is checked out in the main working tree or any linked worktree.
    public func isBranchCheckedOut(_ name: String) throws -> Bool {
        let reference = try lookupBranch(name)
        return try gitCall("git_branch_is_checked_out", "check whether branch '\(name)' is checked out") {
            git_branch_is_checked_out(reference.pointer)
        } == 1
    }

    /// Creates local branch `name` at `commit`; refuses (`.branchExists`) when it exists.
    @discardableResult
    public func createBranch(_ name: String, at commit: OID) throws -> OID {
        try Self.validateBranchName(name)
        if try branchExists(name) { throw branchExistsError(name) }
        let target = try lookupCommit(commit)
        _ = try GitHandle.make("git_branch_create", "create branch '\(name)' at \(commit.abbreviated())", free: git_reference_free) {
            git_branch_create(&$0, pointer, name, target.pointer, 0)
        }
        return commit
    }

    /// Deletes local branch `name`. Refuses (`.branchCheckedOut`) while any worktree has it
    /// checked out, and (`.branchNotFound`) when there is no such branch.
    public func deleteBranch(_ name: String) throws {
        let reference = try lookupBranch(name)
        let checkedOut = try gitCall("git_branch_is_checked_out", "check whether branch '\(name)' is checked out") {
            git_branch_is_checked_out(reference.pointer)
        }
        if checkedOut == 1 {
            throw GitError(.branchCheckedOut, "Branch '\(name)' is checked out in a working tree of \(commonDirectory) and cannot be deleted. Remove that worktree or switch it to another branch first.", function: "git_branch_is_checked_out", path: commonDirectory)
        }
        try gitCall("git_branch_delete", "delete branch '\(name)' in \(commonDirectory)") {
            git_branch_delete(reference.pointer)
        }
    }

    /// All local branch names, sorted.
    public func branches() throws -> [String] {
        let iterator = try GitHandle.make("git_branch_iterator_new", "list the branches of \(commonDirectory)", free: git_branch_iterator_free) {
            git_branch_iterator_new(&$0, pointer, GIT_BRANCH_LOCAL)
        }
        var names: [String] = []
        while true {
            var reference: OpaquePointer?
            var type = GIT_BRANCH_LOCAL
            git_error_clear()
            let rc = git_branch_next(&reference, &type, iterator.pointer)
            if rc == GIT_ITEROVER.rawValue { git_error_clear(); break }
            try GitError.check(rc, "git_branch_next", "list the branches of \(commonDirectory)")
            guard let reference else { break }
            var name: UnsafePointer<CChar>?
            if git_branch_name(&name, reference) == 0, let name { names.append(String(cString: name)) }
            git_reference_free(reference)
        }
        return names.sorted()
    }

    // MARK: Helpers

    func lookupBranch(_ name: String) throws -> GitHandle {
        var reference: OpaquePointer?
        git_error_clear()
        let rc = git_branch_lookup(&reference, pointer, name, GIT_BRANCH_LOCAL)
        if rc == GIT_ENOTFOUND.rawValue || rc == GIT_EINVALIDSPEC.rawValue {
            if let reference { git_reference_free(reference) }
            let error = GitError.fromLibgit2(rc, "git_branch_lookup", nil, path: commonDirectory)
            throw error.with(.branchNotFound, "There is no branch '\(name)' in \(repositoryDescription). Check the name with `git branch`, or pick another base.")
        }
        if rc < 0 || reference == nil {
            if let reference { git_reference_free(reference) }
            throw GitError.fromLibgit2(rc, "git_branch_lookup", "look up branch '\(name)' in \(repositoryDescription)", path: commonDirectory)
        }
        return GitHandle(reference!, free: git_reference_free)
    }

    func lookupCommit(_ oid: OID) throws -> GitHandle {
        var raw = oid.raw
        var commit: OpaquePointer?
        git_error_clear()
        let rc = git_commit_lookup(&commit, pointer, &raw)
        if rc < 0 || commit == nil {
            if let commit { git_commit_free(commit) }
            let error = GitError.fromLibgit2(rc, "git_commit_lookup", nil, path: commonDirectory)
            throw error.with(.revisionNotFound, "There is no commit \(oid) in \(repositoryDescription) (\(error.libgit2Message ?? "not found")). Check the id, or fetch the history that contains it.")
        }
        return GitHandle(commit!, free: git_commit_free)
    }

    /// The repository as a person knows it: its working directory, or its git directory if bare.
    var repositoryDescription: String {
        if isLinkedWorktree, let workdir { return "the worktree \(workdir)" }
        return workdir ?? commonDirectory
    }

    func branchExistsError(_ name: String) -> GitError {
        GitError(.branchExists, "Branch '\(name)' already exists in \(repositoryDescription). Pick another branch name, or delete the old branch first (`git branch -D \(name)`).", path: commonDirectory)
    }

    static func validateBranchName(_ name: String) throws {
        var valid: Int32 = 0
        try gitCall("git_branch_name_is_valid", "check the branch name '\(name)'") { git_branch_name_is_valid(&valid, name) }
        if valid != 1 {
            throw GitError(.invalidName, "'\(name)' is not a valid branch name (git refuses names with spaces, '..', '~', '^', ':', a leading '-' and the like). Use letters, digits, '-', '_' and '/'.", function: "git_branch_name_is_valid")
        }
    }

    static func trimmingSlash(_ path: String) -> String {
        path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }
}
