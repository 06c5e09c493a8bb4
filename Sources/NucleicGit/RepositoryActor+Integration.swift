/// ``Integrator`` for async code: every call on the actor's git thread.
extension RepositoryActor {
    /// ``Integrator/integrate(_:cleanup:)``.
    public func integrate(_ request: IntegrationRequest, cleanup: IntegrationCleanup = .keep) throws -> IntegrationResult {
        try withRepository { try Integrator($0).integrate(request, cleanup: cleanup) }
    }

    /// ``Integrator/integrate(branch:into:strategy:sessionID:worktree:author:cleanup:)``.
    public func integrate(
        branch: String, into base: String, strategy: IntegrationStrategy, sessionID: String, worktree: String?,
        author: Signature = .nucleic, cleanup: IntegrationCleanup = .keep
    ) throws -> IntegrationResult {
        try withRepository {
            try Integrator($0).integrate(branch: branch, into: base, strategy: strategy, sessionID: sessionID, worktree: worktree, author: author, cleanup: cleanup)
        }
    }

    /// ``Integrator/prepare(_:)``: works the integration out; changes nothing.
    public func prepareIntegration(_ request: IntegrationRequest) throws -> IntegrationPlan {
        try withRepository { try Integrator($0).prepare(request) }
    }

    /// ``Integrator/apply(_:)``.
    public func applyIntegration(_ plan: IntegrationPlan) throws -> IntegrationResult {
        try withRepository { try Integrator($0).apply(plan) }
    }

    /// ``Integrator/snapshot(worktree:sessionID:author:committer:attribution:purpose:)``.
    @discardableResult
    public func snapshot(
        worktree: String, sessionID: String, author: Signature? = .nucleic, committer: Signature? = nil,
        attribution: SessionAttribution = SessionAttribution(), purpose: SnapshotPurpose = .integration
    ) throws -> OID? {
        try withRepository {
            try Integrator($0).snapshot(worktree: worktree, sessionID: sessionID, author: author, committer: committer, attribution: attribution, purpose: purpose)
        }
    }

    /// ``Integrator/hasUncommittedWork(worktree:)``.
    public func hasUncommittedWork(worktree: String) throws -> Bool {
        try withRepository { try Integrator($0).hasUncommittedWork(worktree: worktree) }
    }

    /// ``Repository/configuredIdentity()``.
    public func configuredIdentity() throws -> GitIdentity { try withRepository { try $0.configuredIdentity() } }

    /// Whether branch `branch` holds commits that branch `base` lacks.
    public func hasCommits(_ branch: String, notIn base: String) throws -> Bool {
        try withRepository { repository in
            try !repository.isAncestor(try repository.branchTip(branch), of: try repository.branchTip(base))
        }
    }

    /// ``Integrator/overlap(_:)``.
    public func overlap(_ worktrees: [SessionWorktree]) throws -> [String: [String]] {
        try withRepository { try Integrator($0).overlap(worktrees) }
    }
}
