public import NucleicProtocol

// Projects, sessions and their todo lists.
extension Store {
    // MARK: Projects

    public func insert(_ project: ProjectRecord) throws(StoreError) {
        try constraint("a project named \"\(project.name)\" (or with id \(project.id)) already exists; pick another name with --name") {
            () throws(StoreError) in
            try db.execute("INSERT INTO projects (id, name, path, base_branch, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                           project.id, project.name, project.path, project.baseBranch, project.createdAt)
        }
    }

    public func project(id: ProjectID) throws(StoreError) -> ProjectRecord? {
        try db.queryFirst("SELECT \(Self.projectColumns) FROM projects WHERE id = ?1", [id], Self.projectRecord)
    }

    public func project(named name: String) throws(StoreError) -> ProjectRecord? {
        try db.queryFirst("SELECT \(Self.projectColumns) FROM projects WHERE name = ?1", [name], Self.projectRecord)
    }

    /// Every project, by name.
    public func projects() throws(StoreError) -> [ProjectRecord] {
        try db.query("SELECT \(Self.projectColumns) FROM projects ORDER BY name", [], Self.projectRecord)
    }

    /// Changes name, path and base branch.
    public func update(_ project: ProjectRecord) throws(StoreError) {
        try constraint("a project named \"\(project.name)\" already exists") { () throws(StoreError) in
            try db.execute("UPDATE projects SET name = ?2, path = ?3, base_branch = ?4 WHERE id = ?1",
                           project.id, project.name, project.path, project.baseBranch)
        }
        if db.changes == 0 { throw missing("project", project.id.rawValue) }
    }

    /// Removes a project that has no sessions left.
    public func deleteProject(id: ProjectID) throws(StoreError) {
        try constraint("project \(id) still has sessions; discard them first") { () throws(StoreError) in
            try db.execute("DELETE FROM projects WHERE id = ?1", id)
        }
        if db.changes == 0 { throw missing("project", id.rawValue) }
    }

    static let projectColumns = "id, name, path, base_branch, created_at"

    static func projectRecord(_ r: Row) throws(StoreError) -> ProjectRecord {
        ProjectRecord(id: try r.get(0), name: try r.get(1), path: try r.get(2), baseBranch: try r.get(3), createdAt: try r.get(4))
    }

    // MARK: Sessions

    /// Stores a new session with the next handle (a per-host number, never reused; the record's
    /// own `handle` is ignored). Returns the handle it got.
    @discardableResult
    public func insert(_ session: SessionRecord) throws(StoreError) -> String {
        guard try project(id: session.projectID) != nil else {
            throw StoreError(.constraint, "no project with id \(session.projectID); add it with `nucleic project add`")
        }
        return try db.transaction { () throws(StoreError) -> String in
            try db.execute("UPDATE counters SET value = value + 1 WHERE name = 'session_handle'")
            let handle = String(try db.scalar("SELECT value FROM counters WHERE name = 'session_handle'", as: Int64.self) ?? 0)
            var record = session
            record.handle = handle
            try constraint("a session with id \(session.id) (or handle \(handle)) already exists") { () throws(StoreError) in
                try db.execute("INSERT INTO sessions (\(Self.sessionColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
                               arguments: Self.sessionArguments(record))
            }
            return handle
        }
    }

    public func session(id: SessionID) throws(StoreError) -> SessionRecord? {
        try db.queryFirst("SELECT \(Self.sessionColumns) FROM sessions WHERE id = ?1", [id], Self.sessionRecord)
    }

    /// What a session's summary is made of, read in one call: its record, its project's name
    /// (nil when the project is gone) and how many of its approvals are pending.
    public func summaryParts(session id: SessionID) throws(StoreError) -> (record: SessionRecord, projectName: String?, pendingApprovals: Int)? {
        guard let record = try session(id: id) else { return nil }
        return (record, try project(id: record.projectID)?.name, try pendingApprovalCount(session: id))
    }

    /// Sessions that pass `filter`, most recently updated first.
    public func sessions(matching filter: SessionFilter = .all) throws(StoreError) -> [SessionRecord] {
        let (whereClause, arguments) = Self.whereClause(filter)
        var sql = "SELECT \(Self.sessionColumns) FROM sessions\(whereClause) ORDER BY updated_at DESC, id DESC"
        if let limit = filter.limit { sql += " LIMIT \(max(0, limit))" }
        return try db.query(sql, arguments, Self.sessionRecord)
    }

    /// The wire summaries of the sessions that pass `filter`, in attention order (DESIGN.md §6),
    /// with the project's name and the count of pending approvals.
    public func sessionSummaries(matching filter: SessionFilter = .all) throws(StoreError) -> [SessionSummary] {
        let (whereClause, arguments) = Self.whereClause(filter, prefix: "s.")
        var sql = """
            SELECT \(Self.sessionColumnNames.map { "s." + $0 }.joined(separator: ", ")),
                   p.name, (SELECT count(*) FROM approvals a WHERE a.session_id = s.id AND a.status = 'pending')
            FROM sessions s JOIN projects p ON p.id = s.project_id\(whereClause)
            ORDER BY s.updated_at DESC, s.id DESC
            """
        if let limit = filter.limit { sql += " LIMIT \(max(0, limit))" }
        let summaries = try db.query(sql, arguments) { (r: Row) throws(StoreError) -> SessionSummary in
            let record = try Self.sessionRecord(r)
            return record.summary(projectName: try r.get(21), pendingApprovals: try r.get(22))
        }
        return summaries.sorted(by: SessionSummary.attentionOrder)
    }

    /// Sets the status; `updatedAt` becomes `at`.
    public func update(session id: SessionID, status: SessionStatus, at: Timestamp = .now()) throws(StoreError) {
        try db.execute("UPDATE sessions SET status = ?2, updated_at = ?3 WHERE id = ?1", id, status, at)
        if db.changes == 0 { throw missing("session", id.rawValue) }
    }

    /// Records the last seq written to the transcript (never moves backwards).
    public func update(session id: SessionID, lastSeq: Int64, at: Timestamp = .now()) throws(StoreError) {
        try db.execute("UPDATE sessions SET last_seq = max(last_seq, ?2), updated_at = ?3 WHERE id = ?1", id, lastSeq, at)
        if db.changes == 0 { throw missing("session", id.rawValue) }
    }

    public func update(session id: SessionID, diffStat: DiffStat?, at: Timestamp = .now()) throws(StoreError) {
        try db.execute("UPDATE sessions SET diff_files = ?2, diff_insertions = ?3, diff_deletions = ?4, updated_at = ?5 WHERE id = ?1",
                       id, diffStat?.files, diffStat?.insertions, diffStat?.deletions, at)
        if db.changes == 0 { throw missing("session", id.rawValue) }
    }

    public func update(session id: SessionID, nativeSessionID: String?, at: Timestamp = .now()) throws(StoreError) {
        try db.execute("UPDATE sessions SET native_session_id = ?2, updated_at = ?3 WHERE id = ?1", id, nativeSessionID, at)
        if db.changes == 0 { throw missing("session", id.rawValue) }
    }

    /// The agent ended: its exit, the status the session is now in, and what went wrong (if anything).
    public func recordExit(session id: SessionID, exit: ExitInfo, status: SessionStatus, error: String?,
                           at: Timestamp = .now()) throws(StoreError) {
        let (code, signal) = Self.exitColumns(exit)
        try db.execute("UPDATE sessions SET exit_code = ?2, exit_signal = ?3, stderr_tail = ?4, status = ?5, error = ?6, updated_at = ?7 WHERE id = ?1",
                       id, code, signal, exit.stderrTail, status, error, at)
        if db.changes == 0 { throw missing("session", id.rawValue) }
    }

    /// Reads the session, lets `change` edit it, and writes every field back, in one transaction.
    /// `updatedAt` becomes `at` unless `change` set it. Returns the record as stored.
    @discardableResult
    public func modifySession(id: SessionID, at: Timestamp = .now(),
                              _ change: @Sendable (inout SessionRecord) -> Void) throws(StoreError) -> SessionRecord {
        try db.transaction { () throws(StoreError) -> SessionRecord in
            guard var record = try session(id: id) else { throw missing("session", id.rawValue) }
            let before = record.updatedAt
            change(&record)
            guard record.id == id else { throw StoreError(.invalidArgument, "modifySession cannot change a session's id") }
            if record.updatedAt == before { record.updatedAt = at }
            var arguments = Self.sessionArguments(record)
            arguments.removeFirst()
            arguments.removeLast()  // the handle never changes
            try constraint("cannot move session \(id) to project \(record.projectID)") { () throws(StoreError) in
                try db.execute("""
                    UPDATE sessions SET project_id = ?1, backend = ?2, title = ?3, prompt = ?4, status = ?5, branch = ?6,
                        worktree_path = ?7, base_branch = ?8, native_session_id = ?9, last_seq = ?10, diff_files = ?11,
                        diff_insertions = ?12, diff_deletions = ?13, created_at = ?14, updated_at = ?15, exit_code = ?16,
                        exit_signal = ?17, stderr_tail = ?18, error = ?19 WHERE id = ?20
                    """, arguments: arguments + [id])
            }
            return record
        }
    }

    /// Deletes a session's row with its approvals, rules and todos (its files are the caller's).
    public func deleteSession(id: SessionID) throws(StoreError) {
        try db.execute("DELETE FROM sessions WHERE id = ?1", id)
        if db.changes == 0 { throw missing("session", id.rawValue) }
    }

    static let sessionColumnNames = [
        "id", "project_id", "backend", "title", "prompt", "status", "branch", "worktree_path", "base_branch", "native_session_id",
        "last_seq", "diff_files", "diff_insertions", "diff_deletions", "created_at", "updated_at", "exit_code", "exit_signal",
        "stderr_tail", "error", "handle",
    ]
    static let sessionColumns = sessionColumnNames.joined(separator: ", ")

    static func exitColumns(_ exit: ExitInfo?) -> (Int32?, Int32?) {
        switch exit?.status {
        case .exited(let code): (code, nil)
        case .signaled(let signal): (nil, signal)
        case nil: (nil, nil)
        }
    }

    static func sessionArguments(_ s: SessionRecord) -> [any SQLValueConvertible] {
        let (code, signal) = exitColumns(s.exit)
        return [s.id, s.projectID, s.backend, s.title, s.prompt, s.status, s.branch, s.worktreePath, s.baseBranch,
                s.nativeSessionID, s.lastSeq, s.diffStat?.files, s.diffStat?.insertions, s.diffStat?.deletions,
                s.createdAt, s.updatedAt, code, signal, s.exit?.stderrTail, s.error, s.handle]
    }

    static func sessionRecord(_ r: Row) throws(StoreError) -> SessionRecord {
        var diffStat: DiffStat?
        if let files = try r.get(11, as: Int?.self) {
            diffStat = DiffStat(files: files, insertions: try r.get(12), deletions: try r.get(13))
        }
        var exit: ExitInfo?
        if let code = try r.get(16, as: Int32?.self) {
            exit = ExitInfo(status: .exited(code), stderrTail: try r.get(18))
        } else if let signal = try r.get(17, as: Int32?.self) {
            exit = ExitInfo(status: .signaled(signal), stderrTail: try r.get(18))
        }
        return SessionRecord(
            id: try r.get(0), projectID: try r.get(1), backend: try r.get(2), title: try r.get(3), prompt: try r.get(4),
            status: try r.get(5), branch: try r.get(6), worktreePath: try r.get(7), baseBranch: try r.get(8),
            nativeSessionID: try r.get(9), lastSeq: try r.get(10), diffStat: diffStat, createdAt: try r.get(14),
            updatedAt: try r.get(15), exit: exit, error: try r.get(19), handle: try r.get(20))
    }

    static func whereClause(_ filter: SessionFilter, prefix: String = "") -> (String, [any SQLValueConvertible]) {
        var conditions: [String] = []
        var arguments: [any SQLValueConvertible] = []
        func parameter(_ value: any SQLValueConvertible) -> String {
            arguments.append(value)
            return "?\(arguments.count)"
        }
        if let project = filter.projectID { conditions.append("\(prefix)project_id = \(parameter(project))") }
        if let backend = filter.backend { conditions.append("\(prefix)backend = \(parameter(backend))") }
        if let since = filter.updatedSince { conditions.append("\(prefix)updated_at >= \(parameter(since))") }
        var statuses = filter.statuses ?? Set(SessionStatus.allCases)
        if !filter.includeArchived { statuses = statuses.filter { !$0.isArchived } }
        if statuses.count < SessionStatus.allCases.count {
            let list = SessionStatus.allCases.filter(statuses.contains).map { parameter($0) }
            conditions.append(list.isEmpty ? "0" : "\(prefix)status IN (\(list.joined(separator: ", ")))")
        }
        return (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "), arguments)
    }

    // MARK: Todos

    /// Replaces a session's todo list (agents send the whole list each time).
    @discardableResult
    public func replaceTodos(session: SessionID, _ items: [(text: String, done: Bool)]) throws(StoreError) -> [TodoRecord] {
        let texts = items.map(\.text)
        let done = items.map(\.done)
        return try db.transaction { () throws(StoreError) -> [TodoRecord] in
            try db.execute("DELETE FROM todos WHERE session_id = ?1", session)
            for i in texts.indices {
                try constraint("no session with id \(session)") { () throws(StoreError) in
                    try db.execute("INSERT INTO todos (session_id, position, text, done) VALUES (?1, ?2, ?3, ?4)", session, i, texts[i], done[i])
                }
            }
            return try todos(session: session)
        }
    }

    /// A session's todos in list order.
    public func todos(session: SessionID) throws(StoreError) -> [TodoRecord] {
        try db.query("SELECT id, session_id, position, text, done FROM todos WHERE session_id = ?1 ORDER BY position", [session]) {
            (r: Row) throws(StoreError) -> TodoRecord in
            TodoRecord(id: try r.get(0), sessionID: try r.get(1), position: try r.get(2), text: try r.get(3), done: try r.get(4))
        }
    }

    public func setTodo(id: Int64, done: Bool) throws(StoreError) {
        try db.execute("UPDATE todos SET done = ?2 WHERE id = ?1", id, done)
        if db.changes == 0 { throw missing("todo", String(id)) }
    }
}
