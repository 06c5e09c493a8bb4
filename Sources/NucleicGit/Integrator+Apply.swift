/// Carrying a plan out: the base's working trees first, then the ref, then the snapshot.
extension Integrator {
    /// A working tree with the base checked out, opened for the update.
    private struct BaseWorktree {
        let path: String
        let repository: Repository
    }

    func apply(_ plan: IntegrationPlan, retriesLeft: Int, retried: Bool) throws -> IntegrationResult {
        let request = plan.request
        let newTip: OID, fastForward: Bool, created: [OID], changed: [String]
        switch plan.outcome {
        case .conflicted(let paths): return .conflicted(paths: paths)
        case .nothingToIntegrate: return .nothingToIntegrate(base: plan.baseTip)
        case .ready(let tip, let isFastForward, let commits, let paths):
            (newTip, fastForward, created, changed) = (tip, isFastForward, commits, paths)
        }

        // 1. The base must still be where the plan found it.
        let current = try repository.branchTip(request.base)
        if current != plan.baseTip { return try retry(plan, actual: current, retriesLeft: retriesLeft) }

        // 2. Every working tree with the base checked out must be clean wherever the
        //    integration writes: no staged, unstaged, untracked or ignored file at those paths,
        //    no file where one of their folders must go, and nothing else that makes libgit2's
        //    safe checkout refuse (a dry run, which writes neither files nor the index). The dry
        //    run is there so that every tree is checked before any is written; with one tree, the
        //    checkout in step 3 makes the same check itself, before it writes anything, and
        //    writes nothing (files or index) when it refuses, so it is skipped (a full pass over
        //    the changed paths saved: docs/BENCHMARKS.md, `integrate`).
        let oldTree = try repository.treeID(of: plan.baseTip)
        let newTree = try repository.treeID(of: newTip)
        var worktrees: [BaseWorktree] = []
        let paths = try self.worktrees(withBranch: request.base)
        for path in paths {
            let worktree = try Repository.open(path)
            if let operation = try worktree.operationInProgress {
                throw GitError(.operationInProgress, "The working tree \(path), where '\(request.base)' is checked out, is in the middle of a \(operation). Finish or abort it there, then integrate again.", path: path)
            }
            var dirty = Set(try worktree.uncommittedPaths(among: changed))
            dirty.formUnion(worktree.blockedFolders(for: changed))
            if paths.count > 1 {
                dirty.formUnion(try worktree.checkout(paths: changed, of: newTree, from: oldTree, dryRun: true))
            }
            if !dirty.isEmpty { return .dirtyBaseWorktree(worktree: path, paths: dirty.sorted()) }
            worktrees.append(BaseWorktree(path: path, repository: worktree))
        }

        try beforeUpdate?()

        // 3. The new files first, then the ref (a ref moved first would make the working tree
        //    look as if the user had undone the integration).
        var updated: [BaseWorktree] = []
        for worktree in worktrees {
            let blocked: [String]
            do {
                blocked = try worktree.repository.checkout(paths: changed, of: newTree, from: oldTree, dryRun: false)
            } catch {
                try rollBack(updated + [worktree], paths: changed, newTree: newTree, oldTree: oldTree, cause: "\(error)")
                throw error
            }
            if !blocked.isEmpty {
                // Refused: something changed after the checks, or (one tree, no dry run) only the
                // checkout itself saw it. Nothing was written in this tree.
                try rollBack(updated, paths: changed, newTree: newTree, oldTree: oldTree, cause: "a file changed during the integration")
                let now = try repository.branchTip(request.base)
                if now != plan.baseTip { return try retry(plan, actual: now, retriesLeft: retriesLeft) }
                return .dirtyBaseWorktree(worktree: worktree.path, paths: blocked)
            }
            updated.append(worktree)
        }

        let committer = request.committer ?? request.author
        let moved = try repository.compareAndSwapBranch(
            request.base, from: plan.baseTip, to: newTip,
            reflogMessage: "nucleic: integrate \(request.branch) (\(request.strategy), session \(request.sessionID))",
            identity: committer)
        if !moved {
            try rollBack(updated, paths: changed, newTree: newTree, oldTree: oldTree, cause: "'\(request.base)' moved during the integration")
            let now = try repository.branchTip(request.base)
            return try retry(plan, actual: now, retriesLeft: retriesLeft)
        }

        // 4. The snapshot goes on the session branch once the integration stands.
        let warnings = recordSnapshot(of: plan)
        return .integrated(Integration(
            strategy: request.strategy, base: request.base, previousTip: plan.baseTip, newTip: newTip,
            fastForward: fastForward, createdCommits: created, snapshot: plan.snapshot, sessionTip: plan.sessionTip,
            changedPaths: changed, updatedWorktrees: updated.map(\.path), retried: retried, warnings: warnings))
    }

    /// The base moved: make the plan again from its new tip, once.
    private func retry(_ plan: IntegrationPlan, actual: OID, retriesLeft: Int) throws -> IntegrationResult {
        guard retriesLeft > 0 else { return .baseMoved(expected: plan.baseTip, actual: actual) }
        return try apply(try prepare(plan.request), retriesLeft: retriesLeft - 1, retried: true)
    }

    /// Puts the old tree back over `paths` in working trees already moved to the new one (safe
    /// checkout from the new tree: a file someone changed meanwhile is left alone and
    /// reported).
    private func rollBack(_ worktrees: [BaseWorktree], paths: [String], newTree: OID, oldTree: OID, cause: String) throws {
        var failures: [String] = []
        for worktree in worktrees {
            do {
                let blocked = try worktree.repository.checkout(paths: paths, of: oldTree, from: newTree, dryRun: false)
                if !blocked.isEmpty { failures.append("\(worktree.path): \(blocked.joined(separator: ", "))") }
            } catch {
                failures.append("\(worktree.path): \(error)")
            }
        }
        guard failures.isEmpty else {
            throw GitError(.partialUpdate, "The integration stopped (\(cause)) after updating files in the working tree, and they could not all be put back: \(failures.joined(separator: "; ")). The branch did not move; compare these files with `git diff` and restore them with `git checkout -- <path>` where you have no changes of your own.")
        }
    }

    /// Moves the session branch to the snapshot commit and its worktree's index to the
    /// snapshot's tree. Returns warnings: the integration stands whatever happens here.
    private func recordSnapshot(of plan: IntegrationPlan) -> [String] {
        guard let snapshot = plan.snapshot, let path = plan.request.worktree else { return [] }
        let request = plan.request
        do {
            let session = try repository.openWorktreeRepository(path)
            let tree = try repository.treeID(of: snapshot)
            let moved = try repository.compareAndSwapBranch(
                request.branch, from: plan.sessionBranchTip, to: snapshot,
                reflogMessage: "nucleic: snapshot of session \(request.sessionID)", identity: request.committer ?? request.author)
            guard moved else {
                return ["Branch '\(request.branch)' moved during the integration, so the snapshot commit \(snapshot.abbreviated()) (integrated into '\(request.base)') was not recorded on it."]
            }
            try session.writeIndex(matching: tree)
            return []
        } catch {
            return ["The snapshot commit \(snapshot.abbreviated()) was integrated, but recording it on branch '\(request.branch)' failed: \(error)"]
        }
    }
}
