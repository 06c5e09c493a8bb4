public import NucleicSystem

/// A ``Repository`` for async code: every call runs on a ``SerialThreadExecutor`` thread, one at a time.
///
/// The actor owns the repository handle (libgit2 handles are not thread-safe) and opens it on
/// first use. Its methods mirror ``Repository``'s and return `Sendable` values; for anything
/// else, ``withRepository(_:)`` lends the handle to a closure that runs on the git thread.
public actor RepositoryActor {
    /// The path the repository was opened from.
    public nonisolated let path: String
    private nonisolated let executor: SerialThreadExecutor
    private var repository: Repository?

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Opens the repository containing `path` on `executor`'s thread (a new thread by default;
    /// pass a shared executor to serialise several repositories on one thread).
    public static func open(_ path: String, executor: SerialThreadExecutor = SerialThreadExecutor(name: "nucleic-git")) async throws -> RepositoryActor {
        let actor = RepositoryActor(path: path, executor: executor)
        try await actor.withRepository { _ in }
        return actor
    }

    private init(path: String, executor: SerialThreadExecutor) {
        self.path = path
        self.executor = executor
    }

    /// Runs `body` with the open repository, on the git thread.
    public func withRepository<T: Sendable>(_ body: (Repository) throws -> T) throws -> T {
        if let repository { return try body(repository) }
        let opened = try Repository.open(path)
        repository = opened
        return try body(opened)
    }

    public var workdir: String? { get throws { try withRepository { $0.workdir } } }
    public var currentBranch: String? { get throws { try withRepository { try $0.currentBranch } } }

    public func branchTip(_ name: String) throws -> OID { try withRepository { try $0.branchTip(name) } }
    public func branchExists(_ name: String) throws -> Bool { try withRepository { try $0.branchExists(name) } }
    public func deleteBranch(_ name: String) throws { try withRepository { try $0.deleteBranch(name) } }

    @discardableResult
    public func createWorktree(name: String, path: String, branch: String, from base: String) throws -> WorktreeInfo {
        try withRepository { try $0.createWorktree(name: name, path: path, branch: branch, from: base) }
    }

    public func removeWorktree(name: String, deleteBranch: Bool = false) throws {
        try withRepository { try $0.removeWorktree(name: name, deleteBranch: deleteBranch) }
    }

    public func listWorktrees() throws -> [WorktreeInfo] { try withRepository { try $0.listWorktrees() } }

    @discardableResult
    public func pruneStale() throws -> [String] { try withRepository { try $0.pruneStale() } }

    public func diffStat(worktreePath: String, base: Revision) throws -> FileChanges {
        try withRepository { try $0.diffStat(worktreePath: worktreePath, base: base) }
    }

    public func diff(worktreePath: String, base: Revision) throws -> String {
        try withRepository { try $0.diff(worktreePath: worktreePath, base: base) }
    }

    public func branchDiffStat(worktreePath: String, base: String) throws -> FileChanges {
        try withRepository { try $0.branchDiffStat(worktreePath: worktreePath, base: base) }
    }

    public func branchDiff(worktreePath: String, base: String) throws -> String {
        try withRepository { try $0.branchDiff(worktreePath: worktreePath, base: base) }
    }

    public func commitInfo(_ oid: OID) throws -> CommitInfo { try withRepository { try $0.commitInfo(oid) } }
}
