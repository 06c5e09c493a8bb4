public import NucleicSystem

/// The host's state in SQLite (`$NUCLEIC_HOME/nucleic.db`): projects, sessions and their
/// summaries, approvals, devices, rules, todos. Value types in and out.
///
/// An actor on its own `SerialThreadExecutor`: every method runs on the executor's thread, one at a
/// time, so the connection is never used from two threads and the blocking SQLite calls never
/// occupy Swift's cooperative pool. Callers `await` each call. For SQL this API lacks, `read` and
/// `write` lend the `Database` to a closure on the same thread.
///
/// The transcripts (`Transcript`) are the record of what happened; this database holds the
/// current state and the summary a list needs (docs/STORE.md).
public actor Store {
    public nonisolated let executor: SerialThreadExecutor
    /// The database file.
    public nonisolated let path: String
    let db: Database

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Opens (creating and migrating if needed) the database at `path`, on the store's own thread.
    public static func open(path: String) async throws(StoreError) -> Store {
        let executor = SerialThreadExecutor(name: "nucleic-store")
        return try await executor.run { () throws(StoreError) -> Store in
            try Store(database: Database(path: path), executor: executor)
        }
    }

    init(database: Database, executor: SerialThreadExecutor) {
        self.db = database
        self.path = database.path
        self.executor = executor
    }

    /// Lends the database to `body` for reads.
    public func read<T: Sendable>(_ body: @Sendable (Database) throws(StoreError) -> T) throws(StoreError) -> T {
        try body(db)
    }

    /// Lends the database to `body` inside an immediate transaction: committed when it returns,
    /// rolled back when it throws.
    public func write<T: Sendable>(_ body: @Sendable (Database) throws(StoreError) -> T) throws(StoreError) -> T {
        try db.transaction { () throws(StoreError) -> T in try body(db) }
    }

    /// Copies the database to `destination` with SQLite's online backup (consistent while the
    /// daemon keeps writing).
    public func backup(to destination: String) throws(StoreError) {
        try db.backup(to: destination)
    }

    /// Full ids of `kind` starting with `prefix` (case-insensitive), at most `limit` of them: one
    /// means the prefix is unique.
    public func ids(_ kind: IDKind, matchingPrefix prefix: String, limit: Int = 10) throws(StoreError) -> [String] {
        let p = prefix.lowercased()
        guard !p.isEmpty else { return [] }
        // A range on the primary key rather than LIKE, which would need its wildcards escaped.
        return try db.query("SELECT id FROM \(kind.table) WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT ?3",
                            [p, p + "\u{10FFFF}", limit]) { (r: Row) throws(StoreError) -> String in try r.get(0) }
    }

    /// Runs `body`, turning a constraint failure into `message` (said to a person).
    func constraint<T>(_ message: @autoclosure () -> String, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        do { return try body() } catch where error.code == .constraint {
            var e = StoreError(.constraint, "\(message()) (\(error.message))", function: error.function, sql: error.sql,
                               path: error.path, sqliteCode: error.sqliteCode)
            e.errno = error.errno
            throw e
        }
    }

    /// The error for an update of a row that is not there.
    func missing(_ what: String, _ id: String) -> StoreError {
        StoreError(.notFound, "no \(what) with id \(id)")
    }
}
