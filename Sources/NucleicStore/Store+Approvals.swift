public import NucleicProtocol

// Approvals: held, answered once, withdrawn.
extension Store {
    // MARK: Approvals

    /// Stores a new pending approval (`record.status` must be `pending`).
    /// Stores a new pending approval (`record.status` must be `pending`) with the next handle of
    /// its session (`12.1`, `12.2`, …). Returns the handle it got.
    @discardableResult
    public func insert(_ record: ApprovalRecord) throws(StoreError) -> String {
        guard record.status == .pending else {
            throw StoreError(.invalidArgument, "a new approval must be pending, not \(record.status.rawValue)")
        }
        return try db.transaction { () throws(StoreError) -> String in
            let sessionHandle = try db.scalar("SELECT handle FROM sessions WHERE id = ?1", [record.sessionID], as: String.self)
            let count = try db.scalar("SELECT count(*) FROM approvals WHERE session_id = ?1", [record.sessionID], as: Int64.self) ?? 0
            let handle = "\(sessionHandle ?? "?").\(count + 1)"
            try constraint("approval \(record.id) already exists, or session \(record.sessionID) does not") { () throws(StoreError) in
                try db.execute("""
                    INSERT INTO approvals (id, session_id, tool_call_id, tool_name, input_json, risk, request_json, status, created_at, handle)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8, ?9)
                    """, record.id, record.sessionID, record.toolCallID, record.toolName, record.input, record.risk,
                    record.request.sqlJSON, record.createdAt, sessionHandle == nil ? nil : handle)
            }
            return handle
        }
    }

    public func approval(id: ApprovalID) throws(StoreError) -> ApprovalRecord? {
        try db.queryFirst("SELECT \(Self.approvalColumns) FROM approvals WHERE id = ?1", [id], Self.approvalRecord)
    }

    /// A session's approvals (optionally only those with `status`), oldest first.
    public func approvals(session: SessionID, status: ApprovalStatus? = nil) throws(StoreError) -> [ApprovalRecord] {
        if status == .pending {
            // The literal lets SQLite use the partial index of pending approvals.
            return try db.query("SELECT \(Self.approvalColumns) FROM approvals WHERE session_id = ?1 AND status = 'pending' ORDER BY created_at, id",
                                [session], Self.approvalRecord)
        }
        if let status {
            return try db.query("SELECT \(Self.approvalColumns) FROM approvals WHERE session_id = ?1 AND status = ?2 ORDER BY created_at, id",
                                [session, status], Self.approvalRecord)
        }
        return try db.query("SELECT \(Self.approvalColumns) FROM approvals WHERE session_id = ?1 ORDER BY created_at, id",
                            [session], Self.approvalRecord)
    }

    /// How many of a session's approvals are pending.
    public func pendingApprovalCount(session: SessionID) throws(StoreError) -> Int {
        Int(try db.scalar("SELECT count(*) FROM approvals WHERE session_id = ?1 AND status = 'pending'", [session], as: Int64.self) ?? 0)
    }

    /// Every pending approval across sessions, oldest first.
    public func pendingApprovals() throws(StoreError) -> [ApprovalRecord] {
        try db.query("SELECT \(Self.approvalColumns) FROM approvals WHERE status = 'pending' ORDER BY created_at, id", [],
                     Self.approvalRecord)
    }

    /// Answers a pending approval. The first answer wins: a later one gets `.notPending` with the
    /// record as the first left it.
    public func resolve(approval id: ApprovalID, decision: Decision, decidedBy: String, decidedByLabel: String? = nil,
                        at: Timestamp = .now()) throws(StoreError) -> ApprovalOutcome {
        try db.transaction { () throws(StoreError) -> ApprovalOutcome in
            try db.execute("""
                UPDATE approvals SET status = 'resolved', decision_json = ?2, decided_by = ?3, decided_by_label = ?4, resolved_at = ?5
                WHERE id = ?1 AND status = 'pending'
                """, id, decision.sqlJSON, decidedBy, decidedByLabel, at)
            return try outcome(id, changed: db.changes > 0)
        }
    }

    /// Marks a pending approval as no longer needing an answer.
    public func withdraw(approval id: ApprovalID, reason: String, at: Timestamp = .now()) throws(StoreError) -> ApprovalOutcome {
        try db.transaction { () throws(StoreError) -> ApprovalOutcome in
            try db.execute("UPDATE approvals SET status = 'withdrawn', withdraw_reason = ?2, resolved_at = ?3 WHERE id = ?1 AND status = 'pending'",
                           id, reason, at)
            return try outcome(id, changed: db.changes > 0)
        }
    }

    /// Withdraws every pending approval of a session (its agent exited); returns their ids.
    public func withdrawPending(session: SessionID, reason: String, at: Timestamp = .now()) throws(StoreError) -> [ApprovalID] {
        try db.transaction { () throws(StoreError) -> [ApprovalID] in
            let ids = try db.query("SELECT id FROM approvals WHERE session_id = ?1 AND status = 'pending' ORDER BY created_at, id",
                                   [session]) { (r: Row) throws(StoreError) -> ApprovalID in try r.get(0) }
            try db.execute("UPDATE approvals SET status = 'withdrawn', withdraw_reason = ?2, resolved_at = ?3 WHERE session_id = ?1 AND status = 'pending'",
                           session, reason, at)
            return ids
        }
    }

    private func outcome(_ id: ApprovalID, changed: Bool) throws(StoreError) -> ApprovalOutcome {
        guard let record = try approval(id: id) else { return .notFound }
        return changed ? .done(record) : .notPending(record)
    }

    static let approvalColumns = """
        request_json, session_id, status, decision_json, decided_by, decided_by_label, withdraw_reason, created_at, resolved_at, handle
        """

    static func approvalRecord(_ r: Row) throws(StoreError) -> ApprovalRecord {
        var request = try ApprovalRequest.decodeJSON(from: r, at: 0)
        if let handle = try r.get(9, as: String?.self) { request.handle = handle }
        return ApprovalRecord(
            request: request, sessionID: try r.get(1), status: try r.get(2),
            decision: r.isNull(at: 3) ? nil : try Decision.decodeJSON(from: r, at: 3), decidedBy: try r.get(4),
            decidedByLabel: try r.get(5), withdrawReason: try r.get(6), createdAt: try r.get(7), resolvedAt: try r.get(8))
    }
}
