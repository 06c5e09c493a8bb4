/// What a session list shows of one session (the seed's `SessionSummary`).
public struct SessionSummary: Sendable, Hashable, JSONRepresentable {
    public var sessionID: SessionID
    public var projectName: String
    public var backend: String
    public var status: SessionStatus
    public var title: String
    public var branch: String
    /// The session's worktree (an absolute path); nil once it was removed.
    public var worktree: String?
    public var lastSeq: Int64
    public var diffStat: DiffStat?
    public var pendingApprovals: Int
    public var updatedAt: Timestamp
    /// What holds the session back now, when something does: `diskFull` (its journal or
    /// transcript cannot be written; the agent is held back and nothing is lost). Absent in JSON
    /// when nil.
    public var condition: String?
    /// The short name people type (`12`): unique on its host and never reused. Nil from a host
    /// that does not give one.
    public var handle: String?

    public init(sessionID: SessionID, projectName: String, backend: String, status: SessionStatus, title: String,
                branch: String, worktree: String? = nil, lastSeq: Int64, diffStat: DiffStat? = nil, pendingApprovals: Int = 0,
                updatedAt: Timestamp, handle: String? = nil) {
        self.handle = handle
        self.worktree = worktree
        self.sessionID = sessionID
        self.projectName = projectName
        self.backend = backend
        self.status = status
        self.title = title
        self.branch = branch
        self.lastSeq = lastSeq
        self.diffStat = diffStat
        self.pendingApprovals = pendingApprovals
        self.updatedAt = updatedAt
    }

    public var json: JSONValue {
        var o = JSONObject()
        o.append("sessionID", .string(sessionID.rawValue))
        o.append("projectName", .string(projectName))
        o.append("backend", .string(backend))
        o.append("status", .string(status.rawValue))
        o.append("title", .string(title))
        o.append("branch", .string(branch))
        o.append("worktree", worktree.map(JSONValue.string) ?? .null)
        o.append("lastSeq", .int(lastSeq))
        o.append("diffStat", diffStat?.json ?? .null)
        o.append("pendingApprovals", .int(Int64(pendingApprovals)))
        o.append("updatedAt", .string(updatedAt.description))
        if let condition { o.append("condition", .string(condition)) }
        o.append("handle", ifPresent: handle.map(JSONValue.string))
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "session summary")
        guard let updatedAt = Timestamp(try f.string("updatedAt")) else { throw ShapeError("session summary: bad updatedAt") }
        self.init(
            sessionID: SessionID(try f.string("sessionID")), projectName: try f.string("projectName"),
            backend: try f.string("backend"), status: try f.enumValue("status"), title: try f.string("title"),
            branch: try f.string("branch"), worktree: try f.optionalString("worktree"), lastSeq: try f.int("lastSeq"), diffStat: try f.optional("diffStat"),
            pendingApprovals: Int(try f.optionalInt("pendingApprovals") ?? 0), updatedAt: updatedAt,
            handle: try f.optionalString("handle"))
        condition = try f.optionalString("condition")
    }

    /// What a person types for it: the handle, or the id's first characters from a host without handles.
    public var displayName: String { handle ?? String(sessionID.rawValue.prefix(13)) }

    /// The attention order of the session list (DESIGN.md §6): NEEDS YOU, then RUNNING, then
    /// DONE; within a section the most recently updated first.
    public static func attentionOrder(_ a: SessionSummary, _ b: SessionSummary) -> Bool {
        if a.status.bucket != b.status.bucket { return a.status.bucket < b.status.bucket }
        if a.updatedAt != b.updatedAt { return a.updatedAt > b.updatedAt }
        return a.sessionID > b.sessionID
    }
}

/// Files changed, lines added and removed: a session against its base.
public struct DiffStat: Sendable, Hashable, JSONRepresentable {
    public var files: Int
    public var insertions: Int
    public var deletions: Int

    public init(files: Int, insertions: Int, deletions: Int) {
        self.files = files
        self.insertions = insertions
        self.deletions = deletions
    }

    public var json: JSONValue {
        ["files": .int(Int64(files)), "insertions": .int(Int64(insertions)), "deletions": .int(Int64(deletions))]
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "diff stat")
        self.init(files: Int(try f.int("files")), insertions: Int(try f.int("insertions")), deletions: Int(try f.int("deletions")))
    }
}
