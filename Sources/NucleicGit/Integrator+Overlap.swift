/// Files that several live sessions have touched: conflicts in the making.
extension Integrator {
    /// The paths that two or more of `worktrees` have changed relative to their own base
    /// (committed, staged, unstaged or untracked; both sides of a rename), each with the ids of
    /// the sessions that touched it, sorted. Paths only one session touched are left out.
    ///
    /// This is `nucleic overlap`: it warns before two sessions conflict, from their diff stats
    /// from the point each branched off its base (``Repository/branchDiffStat(worktreePath:base:)``,
    /// so what the base gained since is nobody's change); it does not try the merge.
    public func overlap(_ worktrees: [SessionWorktree]) throws -> [String: [String]] {
        var sessions: [String: Set<String>] = [:]
        for worktree in worktrees {
            let stat: FileChanges
            switch worktree.base {
            case .branch(let name): stat = try repository.branchDiffStat(worktreePath: worktree.path, base: name)
            case .commit: stat = try repository.diffStat(worktreePath: worktree.path, base: worktree.base)
            }
            for path in stat.touchedPaths { sessions[path, default: []].insert(worktree.id) }
        }
        return sessions.filter { $0.value.count >= 2 }.mapValues { $0.sorted() }
    }
}
