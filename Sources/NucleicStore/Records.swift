public import NucleicProtocol

/// A repository Nucleic starts sessions in.
public struct ProjectRecord: Sendable, Hashable {
    public var id: ProjectID
    /// Unique; what `--project` takes.
    public var name: String
    /// The repository's folder.
    public var path: String
    /// The branch sessions start from unless told otherwise.
    public var baseBranch: String
    public var createdAt: Timestamp

    public init(id: ProjectID = .make(), name: String, path: String, baseBranch: String, createdAt: Timestamp = .now()) {
        self.id = id
        self.name = name
        self.path = path
        self.baseBranch = baseBranch
        self.createdAt = createdAt
    }
}

/// How a session's agent process ended.
public struct ExitInfo: Sendable, Hashable {
    public enum Status: Sendable, Hashable {
        case exited(Int32)
        case signaled(Int32)
    }

    public var status: Status
    /// The last lines the agent wrote to stderr.
    public var stderrTail: String?

    public init(status: Status, stderrTail: String? = nil) {
        self.status = status
        self.stderrTail = stderrTail
    }
}

/// A session as the store keeps it: what it is, where it runs, and the summary a list shows.
public struct SessionRecord: Sendable, Hashable {
    public var id: SessionID
    public var projectID: ProjectID
    /// `claude`, `codex`, `replay`, …
    public var backend: String
    public var title: String
    /// The first prompt.
    public var prompt: String
    public var status: SessionStatus
    /// The session's branch (`nucleic/<slug>`).
    public var branch: String
    /// The worktree folder; nil once removed.
    public var worktreePath: String?
    public var baseBranch: String
    /// The backend's own session or thread id (what resume takes).
    public var nativeSessionID: String?
    /// The last seq written to the transcript (0: none yet).
    public var lastSeq: Int64
    /// Against the base; nil until first computed.
    public var diffStat: DiffStat?
    public var createdAt: Timestamp
    public var updatedAt: Timestamp
    /// Set when the agent process has ended.
    public var exit: ExitInfo?
    /// What went wrong, for a session in `error`.
    public var error: String?
    /// The short name people type (`12`): assigned by the store when the session is inserted.
    public var handle: String?

    public init(id: SessionID = .make(), projectID: ProjectID, backend: String, title: String, prompt: String,
                status: SessionStatus = .queued, branch: String, worktreePath: String? = nil, baseBranch: String,
                nativeSessionID: String? = nil, lastSeq: Int64 = 0, diffStat: DiffStat? = nil,
                createdAt: Timestamp = .now(), updatedAt: Timestamp? = nil, exit: ExitInfo? = nil, error: String? = nil,
                handle: String? = nil) {
        self.handle = handle
        self.id = id
        self.projectID = projectID
        self.backend = backend
        self.title = title
        self.prompt = prompt
        self.status = status
        self.branch = branch
        self.worktreePath = worktreePath
        self.baseBranch = baseBranch
        self.nativeSessionID = nativeSessionID
        self.lastSeq = lastSeq
        self.diffStat = diffStat
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
        self.exit = exit
        self.error = error
    }

    /// The wire summary, given what the record does not hold.
    public func summary(projectName: String, pendingApprovals: Int) -> SessionSummary {
        SessionSummary(sessionID: id, projectName: projectName, backend: backend, status: status, title: title,
                       branch: branch, worktree: worktreePath, lastSeq: lastSeq, diffStat: diffStat, pendingApprovals: pendingApprovals,
                       updatedAt: updatedAt, handle: handle)
    }
}

/// Which sessions `Store.sessions(matching:)` returns. Every field narrows; the default is all.
public struct SessionFilter: Sendable, Hashable {
    public var projectID: ProjectID?
    /// nil: any status.
    public var statuses: Set<SessionStatus>?
    public var backend: String?
    /// False leaves out `integrated` and `discarded` sessions.
    public var includeArchived: Bool
    /// Only sessions updated at or after this time.
    public var updatedSince: Timestamp?
    public var limit: Int?

    public init(projectID: ProjectID? = nil, statuses: Set<SessionStatus>? = nil, backend: String? = nil,
                includeArchived: Bool = true, updatedSince: Timestamp? = nil, limit: Int? = nil) {
        self.projectID = projectID
        self.statuses = statuses
        self.backend = backend
        self.includeArchived = includeArchived
        self.updatedSince = updatedSince
        self.limit = limit
    }

    public static let all = SessionFilter()
}

/// Where an approval is in its life.
public enum ApprovalStatus: String, Sendable, Hashable, CaseIterable, SQLValueConvertible, SQLColumnDecodable, SQLRawEnum {
    /// Waiting for an answer.
    case pending
    /// Answered, by a person or a rule (`decision`, `decidedBy`).
    case resolved
    /// No longer needs an answer (turn interrupted, agent exited, the agent cancelled it).
    case withdrawn
}

/// An approval request and what became of it.
public struct ApprovalRecord: Sendable, Hashable {
    /// The request as the agent made it and the transcript holds it.
    public var request: ApprovalRequest
    public var sessionID: SessionID
    public var status: ApprovalStatus
    public var decision: Decision?
    /// `user:<login>`, `device:<id>` or `rule:<id>`.
    public var decidedBy: String?
    /// A person-readable name for `decidedBy` (a device's label).
    public var decidedByLabel: String?
    public var withdrawReason: String?
    public var createdAt: Timestamp
    /// When it was resolved or withdrawn.
    public var resolvedAt: Timestamp?

    public init(request: ApprovalRequest, sessionID: SessionID, status: ApprovalStatus = .pending, decision: Decision? = nil,
                decidedBy: String? = nil, decidedByLabel: String? = nil, withdrawReason: String? = nil,
                createdAt: Timestamp? = nil, resolvedAt: Timestamp? = nil) {
        self.request = request
        self.sessionID = sessionID
        self.status = status
        self.decision = decision
        self.decidedBy = decidedBy
        self.decidedByLabel = decidedByLabel
        self.withdrawReason = withdrawReason
        self.createdAt = createdAt ?? request.createdAt ?? .now()
        self.resolvedAt = resolvedAt
    }

    public var id: ApprovalID { request.id }
    public var toolCallID: String? { request.toolCallID }
    public var toolName: String { request.toolName }
    public var input: JSONValue { request.input }
    public var risk: Risk { request.risk }
}

/// What an attempt to answer or withdraw an approval found: the first answer wins.
public enum ApprovalOutcome: Sendable, Hashable {
    /// This call changed it; the record as it now is.
    case done(ApprovalRecord)
    /// It was already resolved or withdrawn (by an earlier answer); the record as it is.
    case notPending(ApprovalRecord)
    case notFound
}

/// A paired device (a phone) and what it may do.
public struct DeviceRecord: Sendable, Hashable {
    public var id: DeviceID
    /// A person-readable name ("Ana's iPhone").
    public var label: String
    public var scope: Scope
    /// The device's static X25519 public key (32 bytes).
    public var publicKey: [UInt8]
    public var createdAt: Timestamp
    public var revokedAt: Timestamp?

    public init(id: DeviceID = .make(), label: String, scope: Scope, publicKey: [UInt8], createdAt: Timestamp = .now(),
                revokedAt: Timestamp? = nil) {
        self.id = id
        self.label = label
        self.scope = scope
        self.publicKey = publicKey
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    public var isRevoked: Bool { revokedAt != nil }
}

/// A host-owned permission rule (DESIGN.md §5), in Claude Code's syntax: `Bash(npm test *)`.
public struct RuleRecord: Sendable, Hashable {
    public enum RuleScope: Sendable, Hashable {
        case session(SessionID)
        case project(ProjectID)
    }

    public enum Behavior: String, Sendable, Hashable, CaseIterable, SQLValueConvertible, SQLColumnDecodable, SQLRawEnum {
        case allow, deny
    }

    public var id: RuleID
    public var scope: RuleScope
    public var rule: String
    public var behavior: Behavior
    /// Who made it: `user:<login>`, `device:<id>`.
    public var createdBy: String
    public var createdAt: Timestamp
    /// The approval whose "allow always" made it, when one did.
    public var approvalID: ApprovalID?
    /// For a deny rule: what the agent is told (nil: a message naming the rule).
    public var message: String?

    public init(id: RuleID = .make(), scope: RuleScope, rule: String, behavior: Behavior, createdBy: String,
                createdAt: Timestamp = .now(), approvalID: ApprovalID? = nil, message: String? = nil) {
        self.id = id
        self.scope = scope
        self.rule = rule
        self.behavior = behavior
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.approvalID = approvalID
        self.message = message
    }
}

/// One item of a session's todo list (the agent's plan).
public struct TodoRecord: Sendable, Hashable {
    /// Assigned by the store.
    public var id: Int64
    public var sessionID: SessionID
    /// 0-based order in the list.
    public var position: Int
    public var text: String
    public var done: Bool

    public init(id: Int64, sessionID: SessionID, position: Int, text: String, done: Bool) {
        self.id = id
        self.sessionID = sessionID
        self.position = position
        self.text = text
        self.done = done
    }
}

/// The tables whose ids the CLI accepts abbreviated.
public enum IDKind: String, Sendable, Hashable, CaseIterable {
    case project, session, approval, device, rule

    var table: String {
        switch self {
        case .project: "projects"
        case .session: "sessions"
        case .approval: "approvals"
        case .device: "devices"
        case .rule: "rules"
        }
    }
}
