public import NucleicProtocol

// Paired devices and the host's permission rules.
extension Store {
    // MARK: Devices

    public func insert(_ device: DeviceRecord) throws(StoreError) {
        guard device.publicKey.count == 32 else {
            throw StoreError(.invalidArgument, "a device's public key is 32 bytes, got \(device.publicKey.count)")
        }
        try constraint("device \(device.id) or its public key is already paired") { () throws(StoreError) in
            try db.execute("INSERT INTO devices (id, label, scope, public_key, created_at, revoked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                           device.id, device.label, device.scope, device.publicKey, device.createdAt, device.revokedAt)
        }
    }

    public func device(id: DeviceID) throws(StoreError) -> DeviceRecord? {
        try db.queryFirst("SELECT \(Self.deviceColumns) FROM devices WHERE id = ?1", [id], Self.deviceRecord)
    }

    /// The device with this static public key (what a Noise IK handshake reveals).
    public func device(publicKey: [UInt8]) throws(StoreError) -> DeviceRecord? {
        try db.queryFirst("SELECT \(Self.deviceColumns) FROM devices WHERE public_key = ?1", [publicKey], Self.deviceRecord)
    }

    /// Paired devices, oldest first; revoked ones only when asked.
    public func devices(includeRevoked: Bool = false) throws(StoreError) -> [DeviceRecord] {
        try db.query("SELECT \(Self.deviceColumns) FROM devices\(includeRevoked ? "" : " WHERE revoked_at IS NULL") ORDER BY created_at, id",
                     [], Self.deviceRecord)
    }

    /// Revokes a device; false when it was already revoked. Throws `.notFound` for an unknown id.
    @discardableResult
    public func revoke(device id: DeviceID, at: Timestamp = .now()) throws(StoreError) -> Bool {
        try db.execute("UPDATE devices SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL", id, at)
        if db.changes > 0 { return true }
        guard try device(id: id) != nil else { throw missing("device", id.rawValue) }
        return false
    }

    /// Renames a device (a device pairing without a label gets the one its `hello` names).
    public func relabel(device id: DeviceID, label: String) throws(StoreError) {
        try db.execute("UPDATE devices SET label = ?2 WHERE id = ?1", id, label)
        if db.changes == 0 { throw missing("device", id.rawValue) }
    }

    static let deviceColumns = "id, label, scope, public_key, created_at, revoked_at"

    static func deviceRecord(_ r: Row) throws(StoreError) -> DeviceRecord {
        DeviceRecord(id: try r.get(0), label: try r.get(1), scope: try r.get(2), publicKey: try r.get(3), createdAt: try r.get(4),
                     revokedAt: try r.get(5))
    }

    // MARK: Rules

    public func insert(_ rule: RuleRecord) throws(StoreError) {
        let (scope, project, session): (String, ProjectID?, SessionID?) = switch rule.scope {
        case .project(let p): ("project", p, nil)
        case .session(let s): ("session", nil, s)
        }
        try constraint("rule \(rule.id) already exists, or its project, session or approval does not") { () throws(StoreError) in
            try db.execute("""
                INSERT INTO rules (id, scope, project_id, session_id, rule, behavior, created_by, created_at, approval_id, message)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                """, rule.id, scope, project, session, rule.rule, rule.behavior, rule.createdBy, rule.createdAt, rule.approvalID, rule.message)
        }
    }

    public func rule(id: RuleID) throws(StoreError) -> RuleRecord? {
        try db.queryFirst("SELECT \(Self.ruleColumns) FROM rules WHERE id = ?1", [id], Self.ruleRecord)
    }

    /// Every rule, oldest first.
    public func rules() throws(StoreError) -> [RuleRecord] {
        try db.query("SELECT \(Self.ruleColumns) FROM rules ORDER BY created_at, id", [], Self.ruleRecord)
    }

    /// A project's own rules, oldest first.
    public func rules(project: ProjectID) throws(StoreError) -> [RuleRecord] {
        try db.query("SELECT \(Self.ruleColumns) FROM rules WHERE project_id = ?1 ORDER BY created_at, id", [project], Self.ruleRecord)
    }

    /// The rules that apply in a session: its own and its project's, oldest first.
    public func rules(session: SessionID) throws(StoreError) -> [RuleRecord] {
        try db.query("""
            SELECT \(Self.ruleColumns) FROM rules
            WHERE session_id = ?1 OR project_id = (SELECT project_id FROM sessions WHERE id = ?1)
            ORDER BY created_at, id
            """, [session], Self.ruleRecord)
    }

    /// Deletes a rule; false when there was none.
    @discardableResult
    public func deleteRule(id: RuleID) throws(StoreError) -> Bool {
        try db.execute("DELETE FROM rules WHERE id = ?1", id)
        return db.changes > 0
    }

    static let ruleColumns = "id, scope, project_id, session_id, rule, behavior, created_by, created_at, approval_id, message"

    static func ruleRecord(_ r: Row) throws(StoreError) -> RuleRecord {
        let scope: RuleRecord.RuleScope
        switch try r.get(1, as: String.self) {
        case "project": scope = .project(try r.get(2))
        case "session": scope = .session(try r.get(3))
        case let other: throw r.mismatch(1, "a rule scope, not \"\(other)\"")
        }
        return RuleRecord(id: try r.get(0), scope: scope, rule: try r.get(4), behavior: try r.get(5), createdBy: try r.get(6),
                          createdAt: try r.get(7), approvalID: try r.get(8), message: try r.get(9))
    }
}
