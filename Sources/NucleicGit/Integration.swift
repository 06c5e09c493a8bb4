public import NucleicProtocol
/// How a session's branch lands on its base branch.
public enum IntegrationStrategy: Sendable, Hashable, CustomStringConvertible {
    /// Fast-forward when the base has not moved since the session branched (unless
    /// `noFastForward`), otherwise a merge commit whose parents are the base tip and the
    /// session tip.
    case merge(noFastForward: Bool = false)
    /// The session's commits replayed, in order, onto the base tip (authors and messages kept),
    /// then the base fast-forwarded to the last of them.
    case rebase
    /// One commit on the base with the session's whole change, `message` as its message
    /// (title, blank line, body), plus a `Nucleic-Session` trailer.
    case squash(message: String)

    public var description: String {
        switch self {
        case .merge(let noFastForward): noFastForward ? "merge --no-ff" : "merge"
        case .rebase: "rebase"
        case .squash: "squash"
        }
    }
}

/// What to integrate: a session's branch (and its worktree, whose uncommitted work is
/// snapshotted first) into a base branch.
public struct IntegrationRequest: Sendable, Hashable {
    /// The session's id, written as the `Nucleic-Session: <id>` trailer.
    public var sessionID: String
    /// The session's branch (`nucleic/fix-tests`).
    public var branch: String
    /// The session's worktree, with `branch` checked out. Its uncommitted work (untracked files
    /// included, ignored files excluded) is snapshotted as a commit on `branch` first. Nil when
    /// there is no worktree any more: the branch is integrated as it is.
    public var worktree: String?
    /// The branch to integrate into (`main`).
    public var base: String
    public var strategy: IntegrationStrategy
    /// Author of the snapshot, merge and squash commits, and committer of every commit Nucleic
    /// writes (replayed commits keep their own authors). Also signs the reflog entries.
    public var author: Signature
    /// Committer, when it should differ from `author`.
    public var committer: Signature?
    /// The subject of the snapshot and merge commits (and of a squash with a blank message),
    /// and the agents credited in `Co-authored-by:` trailers.
    public var attribution: SessionAttribution

    public init(
        sessionID: String, branch: String, worktree: String?, base: String, strategy: IntegrationStrategy,
        author: Signature = .nucleic, committer: Signature? = nil, attribution: SessionAttribution = SessionAttribution()
    ) {
        self.attribution = attribution
        self.sessionID = sessionID
        self.branch = branch
        self.worktree = worktree
        self.base = base
        self.strategy = strategy
        self.author = author
        self.committer = committer
    }
}

/// How an integration ended. Everything but `.integrated` means nothing was changed: no ref,
/// no index, no file in any working tree (objects may have been added to the object database;
/// nothing refers to them).
public enum IntegrationResult: Sendable, Hashable {
    /// The base branch moved to `newTip`.
    case integrated(Integration)
    /// The session has nothing the base lacks (its tip is already in the base's history, or
    /// every change it makes is already there).
    case nothingToIntegrate(base: OID)
    /// Merging (or replaying a commit) conflicts on these paths, worked out in memory.
    case conflicted(paths: [String])
    /// The base is checked out in the working tree `worktree`, and these paths, which the
    /// integration would write, have uncommitted work there (staged, unstaged, untracked or
    /// ignored files). The user's work is never overwritten: commit, stash or move it, then
    /// integrate again.
    case dirtyBaseWorktree(worktree: String, paths: [String])
    /// The base moved while integrating, and again after one retry from its new tip.
    case baseMoved(expected: OID, actual: OID)
}

/// A successful integration.
public struct Integration: Sendable, Hashable {
    public let strategy: IntegrationStrategy
    /// The base branch's name.
    public let base: String
    /// The base tip before (after a retry: the tip it was retried from).
    public let previousTip: OID
    /// The base tip now: the commit to record.
    public let newTip: OID
    /// The base was fast-forwarded to the session's tip; no commit was made.
    public let fastForward: Bool
    /// The commits written on the base, oldest first: the merge commit, the replayed commits,
    /// or the squash commit. Empty for a fast-forward.
    public let createdCommits: [OID]
    /// The snapshot commit made of the worktree's uncommitted work, if there was any.
    public let snapshot: OID?
    /// The session branch's tip that was integrated (the snapshot, when there is one).
    public let sessionTip: OID
    /// The files that changed on the base, sorted.
    public let changedPaths: [String]
    /// The working trees with the base checked out that were moved to the new tip.
    public let updatedWorktrees: [String]
    /// The base moved during the integration, and it was redone from the new tip.
    public let retried: Bool
    /// Things that went wrong after the base was updated (recording the snapshot on the
    /// session branch, clean-up): the integration itself stands.
    public internal(set) var warnings: [String]
}

/// An integration worked out in memory by ``Integrator/prepare(_:)``: nothing has changed yet.
/// ``Integrator/apply(_:)`` carries it out, or redoes it once if the base has moved.
public struct IntegrationPlan: Sendable, Hashable {
    /// What the plan integrates.
    public enum Outcome: Sendable, Hashable {
        /// Moving the base from `IntegrationPlan.baseTip` to `newTip` integrates the session.
        case ready(newTip: OID, fastForward: Bool, createdCommits: [OID], changedPaths: [String])
        case nothingToIntegrate
        case conflicted(paths: [String])
    }

    public let request: IntegrationRequest
    /// The base tip the plan was made against.
    public let baseTip: OID
    /// The session branch's tip as found.
    public let sessionBranchTip: OID
    /// The snapshot commit of the worktree's uncommitted work (written as an object, not yet on
    /// the session branch), nil when the worktree was clean or absent.
    public let snapshot: OID?
    public let outcome: Outcome
    /// The working trees (main or linked) that have the base checked out.
    public let baseWorktrees: [String]

    /// The session tip that is integrated: the snapshot, or the branch tip.
    public var sessionTip: OID { snapshot ?? sessionBranchTip }
}

/// What to do with the session's worktree and branch after a successful integration.
public enum IntegrationCleanup: Sendable, Hashable {
    /// Leave both (the caller removes them later, or keeps them).
    case keep
    /// Remove the session's worktree and delete its branch.
    case removeWorktreeAndBranch
}

/// A live session's worktree, for ``Integrator/overlap(_:)``.
public struct SessionWorktree: Sendable, Hashable {
    public var id: String
    public var path: String
    public var base: Revision

    public init(id: String, path: String, base: Revision) {
        self.id = id
        self.path = path
        self.base = base
    }
}

/// What the commits Nucleic writes for a session say about it: a subject from the session's
/// title or prompt, and the agent as a co-author.
public struct SessionAttribution: Sendable, Hashable {
    /// One line; see ``subject(title:prompt:)``.
    public var subject: String
    /// Credited with `Co-authored-by:` trailers, in order.
    public var coAuthors: [CoAuthor]

    public init(subject: String = "", coAuthors: [CoAuthor] = []) {
        self.subject = subject
        self.coAuthors = coAuthors
    }

    /// The longest subject line, in characters (git's advice is 50, most tools wrap at 72).
    public static let subjectLimit = 72

    /// A commit subject from a session's title, or its prompt when the title is blank: the
    /// first non-blank line, whitespace runs collapsed, cut at a word to ``subjectLimit``
    /// characters with "…". Empty when both are blank.
    public static func subject(title: String, prompt: String) -> String {
        for text in [title, prompt] {
            guard let line = text.split(whereSeparator: \.isNewline).map({ $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") })
                .first(where: { !$0.isEmpty }) else { continue }
            guard line.count > subjectLimit else { return line }
            var cut = String(line.prefix(subjectLimit - 1))
            if let space = cut.lastIndex(of: " "), cut.distance(from: cut.startIndex, to: space) > subjectLimit / 2 {
                cut = String(cut[..<space])
            }
            return cut + "…"
        }
        return ""
    }
}

/// An agent credited on a commit: `Co-authored-by: Claude Code <noreply@anthropic.com>`.
public struct CoAuthor: Sendable, Hashable {
    /// The agent's name, with its model when known: `Claude Code (claude-sonnet-4-5)`.
    public var name: String
    /// The backend's no-reply address.
    public var email: String

    public init(name: String, email: String) {
        self.name = name
        self.email = email
    }

    /// The trailer line, without its newline.
    public var trailer: String { "Co-authored-by: \(name) <\(email)>" }
}

extension CodedError.Code where Domain == GitFailure {
    /// The session and base branches share no history.
    public static var unrelatedHistories: Self { Self("unrelatedHistories") }
    /// A working tree is in the middle of a merge, rebase, cherry-pick, … or its index has
    /// unresolved conflicts.
    public static var operationInProgress: Self { Self("operationInProgress") }
    /// The request itself cannot be carried out (same branch twice, an empty session id, the
    /// worktree has another branch checked out).
    public static var invalidRequest: Self { Self("invalidRequest") }
    /// Moving the base failed half-way and could not be undone everywhere; the message lists
    /// what to check.
    public static var partialUpdate: Self { Self("partialUpdate") }
}
