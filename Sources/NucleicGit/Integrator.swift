/// Integrates a finished session's branch into its base branch: merge, rebase or squash.
///
/// Two steps, also available on their own: ``prepare(_:)`` works everything out in memory
/// (the snapshot of the session worktree's uncommitted work, the merged or replayed commits,
/// the conflicts, the files that change) and changes nothing; ``apply(_:)`` then moves the
/// base: it checks that every working tree with the base checked out is clean at the paths
/// that change, checks the new files out there, and moves the branch with a compare-and-swap.
/// ``integrate(_:cleanup:)`` does both.
///
/// Blocking and not thread-safe, like ``Repository``; from async code use
/// ``RepositoryActor/integrate(_:cleanup:)``.
///
/// ### Invariants
/// - Unless the result is `.integrated`, no ref, no index and no file of any working tree has
///   changed (new objects may sit in the object database, unreferenced).
/// - A user's uncommitted work is never overwritten: a working tree with the base checked out
///   is only written at the paths the integration changes, only where those are clean
///   (staged, unstaged, untracked and ignored files all count), and with libgit2's safe
///   checkout, which refuses rather than overwrites.
/// - The base ref moves only from the tip the integration was computed against
///   (compare-and-swap); if it moved, the integration is redone once from the new tip.
/// - Every commit is written with an explicit signature (a fresh machine has no `user.name`).
public struct Integrator {
    /// The repository (any of its working trees, or the bare repository).
    public let repository: Repository

    /// A test seam: runs in ``apply(_:)`` once every check has passed, just before the first
    /// working tree or ref is written, on every attempt. Tests move the base here.
    var beforeUpdate: (() throws -> Void)?

    public init(_ repository: Repository) {
        self.repository = repository
    }

    /// Prepares and applies an integration; on success, optionally removes the session's
    /// worktree and branch (failures to do so become warnings: the integration stands).
    public func integrate(_ request: IntegrationRequest, cleanup: IntegrationCleanup = .keep) throws -> IntegrationResult {
        let result = try apply(try prepare(request))
        guard case .integrated(var integration) = result, cleanup == .removeWorktreeAndBranch else { return result }
        integration.warnings += removeSession(request)
        return .integrated(integration)
    }

    /// ``integrate(_:cleanup:)`` with the request spelled out.
    public func integrate(
        branch: String, into base: String, strategy: IntegrationStrategy, sessionID: String, worktree: String?,
        author: Signature = .nucleic, cleanup: IntegrationCleanup = .keep
    ) throws -> IntegrationResult {
        try integrate(IntegrationRequest(sessionID: sessionID, branch: branch, worktree: worktree, base: base, strategy: strategy, author: author), cleanup: cleanup)
    }

    /// Works the integration out in memory and changes nothing (it writes objects only).
    ///
    /// Throws when the request cannot be carried out at all: a branch that does not exist, the
    /// same branch twice, a session worktree with another branch checked out or in the middle of
    /// a merge or rebase, histories with no common ancestor.
    public func prepare(_ request: IntegrationRequest) throws -> IntegrationPlan {
        try validate(request)
        let baseTip = try repository.branchTip(request.base)
        let branchTip = try repository.branchTip(request.branch)
        var snapshot: OID?
        if let worktree = request.worktree {
            snapshot = try makeSnapshot(
                worktree: worktree, branch: request.branch, branchTip: branchTip, sessionID: request.sessionID,
                author: request.author, committer: request.committer ?? request.author, attribution: request.attribution)
        }
        let outcome = try outcome(of: request, base: baseTip, session: snapshot ?? branchTip)
        return IntegrationPlan(
            request: request, baseTip: baseTip, sessionBranchTip: branchTip, snapshot: snapshot,
            outcome: outcome, baseWorktrees: try worktrees(withBranch: request.base))
    }

    /// Carries out a prepared integration. When the base has moved since `plan` was made, the
    /// plan is made again from the new tip, once; if it moves again, `.baseMoved`.
    public func apply(_ plan: IntegrationPlan) throws -> IntegrationResult {
        try apply(plan, retriesLeft: 1, retried: false)
    }

    // MARK: Working it out

    private func validate(_ request: IntegrationRequest) throws {
        if request.sessionID.isEmpty || request.sessionID.contains(where: { $0.isNewline || $0.asciiValue.map { $0 < 0x20 } == true }) {
            throw GitError(.invalidRequest, "The session id '\(request.sessionID)' cannot go into a commit trailer: it must be one line of text. Pass the session's id.")
        }
        if request.branch == request.base {
            throw GitError(.invalidRequest, "Cannot integrate branch '\(request.branch)' into itself. Pass the session's branch and the base it was made from.")
        }
    }

    /// What moving the base from `base` would take to integrate `session`.
    private func outcome(of request: IntegrationRequest, base: OID, session: OID) throws -> IntegrationPlan.Outcome {
        if try repository.isAncestor(session, of: base) { return .nothingToIntegrate }
        guard let mergeBase = try repository.mergeBase(base, session) else {
            throw GitError(.unrelatedHistories, "Branch '\(request.branch)' and '\(request.base)' have no common history, so there is nothing to merge against. Integrate it by hand (`git merge --allow-unrelated-histories`) if that is really meant.")
        }
        let canFastForward = mergeBase == base
        let committer = request.committer ?? request.author
        let newTip: OID
        var fastForward = false
        var created: [OID] = []
        switch request.strategy {
        case .merge(let noFastForward):
            if canFastForward && !noFastForward {
                newTip = session
                fastForward = true
            } else {
                switch try repository.mergeCommitsInMemory(ours: base, theirs: session) {
                case .conflicted(let paths): return .conflicted(paths: paths)
                case .clean(let tree):
                    newTip = try repository.createCommit(
                        tree: tree, parents: [base, session], author: request.author, committer: committer,
                        message: IntegrationMessage.merge(branch: request.branch, base: request.base, sessionID: request.sessionID, attribution: request.attribution))
                    created = [newTip]
                }
            }
        case .rebase:
            let commits = try repository.commits(from: base, to: session)
            let hasMerges = try commits.contains { try repository.parentCount(of: $0) > 1 }
            if canFastForward && !hasMerges {
                // Already on top of the base: `git rebase` rewrites nothing either.
                newTip = session
                fastForward = true
            } else {
                switch try repository.replayInMemory(commits, onto: base, committer: committer) {
                case .conflicted(_, let paths): return .conflicted(paths: paths)
                case .replayed(let commits):
                    guard let last = commits.last else { return .nothingToIntegrate }
                    newTip = last
                    created = commits
                }
            }
        case .squash(let message):
            switch try repository.mergeCommitsInMemory(ours: base, theirs: session) {
            case .conflicted(let paths): return .conflicted(paths: paths)
            case .clean(let tree):
                if tree == (try repository.treeID(of: base)) { return .nothingToIntegrate }
                newTip = try repository.createCommit(
                    tree: tree, parents: [base], author: request.author, committer: committer,
                    message: IntegrationMessage.squash(message, sessionID: request.sessionID, attribution: request.attribution))
                created = [newTip]
            }
        }
        let changed = try repository.changedPaths(from: try repository.treeID(of: base), to: try repository.treeID(of: newTip))
        return .ready(newTip: newTip, fastForward: fastForward, createdCommits: created, changedPaths: changed)
    }

    /// The working trees, main or linked, that have `branch` checked out.
    func worktrees(withBranch branch: String) throws -> [String] {
        var paths: [String] = []
        let main = try Repository.open(repository.commonDirectory)
        if !main.isBare, let workdir = main.workdir, try main.currentBranch == branch { paths.append(workdir) }
        for info in try repository.listWorktrees() where info.branch == branch && !info.isPrunable {
            paths.append(info.path)
        }
        return paths
    }

    // MARK: Clean-up

    private func removeSession(_ request: IntegrationRequest) -> [String] {
        var warnings: [String] = []
        do {
            if let path = request.worktree {
                let resolved = FileSystem.resolved(path) ?? path
                if let info = try repository.listWorktrees().first(where: { $0.path == resolved || $0.path == path }) {
                    try repository.removeWorktree(name: info.name)
                } else {
                    warnings.append("No worktree is registered at \(path); nothing was removed there.")
                }
            }
            if try repository.branchExists(request.branch) { try repository.deleteBranch(request.branch) }
        } catch {
            warnings.append("The session was integrated, but its worktree or branch could not be removed: \(error). Remove them with `git worktree remove` and `git branch -D \(request.branch)`.")
        }
        return warnings
    }
}
