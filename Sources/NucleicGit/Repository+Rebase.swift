import CGit2

/// What replaying a series of commits in memory gave.
enum Replay: Equatable {
    /// The new commits, oldest first; the last is the new tip. Empty when every commit's change
    /// was already there.
    case replayed(commits: [OID])
    /// Replaying `commit` conflicted on these paths; nothing was written but objects.
    case conflicted(commit: OID, paths: [String])
}

extension Repository {
    /// Replays `commits` (oldest first) on top of `onto`, in memory, as `git rebase` would:
    /// each commit's change against its parent is cherry-picked onto the previous result
    /// (`git_cherrypick_commit`), and a new commit is written with the original author, time
    /// zone, message and encoding, and `committer` as committer. No ref moves.
    ///
    /// Like `git rebase` without `--rebase-merges`, merge commits are dropped (their changes
    /// come with the commits they merged), and so is a commit whose change is already on the
    /// base (its replay changes nothing).
    ///
    /// Why not `git_rebase_init` with `inmemory = 1`: this loop is as short and gives exact
    /// control. It walks topologically (1.5.1's rebase walks with `GIT_SORT_REVERSE` alone, the
    /// default order reversed), drops a commit that became empty instead of failing with
    /// `GIT_EAPPLIED`, and leaves no rebase object with state to finish or abort.
    func replayInMemory(_ commits: [OID], onto: OID, committer: Signature) throws -> Replay {
        var tip = onto
        var tipTree = try treeID(of: onto)
        var created: [OID] = []
        return try committer.withGitSignature { committerSignature in
            for commit in commits {
                let original = try lookupCommit(commit)
                if git_commit_parentcount(original.pointer) > 1 { continue }
                switch try cherryPickInMemory(commit, onto: tip) {
                case .conflicted(let paths):
                    return .conflicted(commit: commit, paths: paths)
                case .clean(let tree):
                    if tree == tipTree { continue }
                    guard let author = git_commit_author(original.pointer) else {
                        throw GitError(.generic, "Commit \(commit) has no author.", function: "git_commit_author")
                    }
                    let message = git_commit_message_raw(original.pointer).map { String(cString: $0) } ?? ""
                    let encoding = git_commit_message_encoding(original.pointer).map { String(cString: $0) }
                    tip = try createCommit(
                        tree: tree, parents: [tip], author: author, committer: UnsafePointer(committerSignature),
                        message: message, encoding: encoding)
                    tipTree = tree
                    created.append(tip)
                }
            }
            return .replayed(commits: created)
        }
    }
}
