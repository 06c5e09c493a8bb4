import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// One SQLite connection: WAL mode, foreign keys on, a busy timeout, migrated to the newest
/// schema this build knows.
///
/// ### Threading
/// A `Database` is not `Sendable` and is used from one thread at a time: the connection is
/// opened with `SQLITE_OPEN_NOMUTEX`, so SQLite does no locking of its own. `Store` owns one and
/// runs every call on its serial executor (`SerialThreadExecutor`); code that needs SQL the `Store`
/// API lacks borrows it through `Store.read { db in … }` / `Store.write { db in … }`, which run on
/// that same executor. Every call blocks (disk I/O, the busy timeout), which is why it never runs
/// on Swift's cooperative pool.
public final class Database {
    let handle: OpaquePointer
    public let path: String
    /// Prepared statements by their SQL, kept for the connection's life: the store runs the same
    /// few dozen statements over and over, and preparing one (parsing and planning the SQL) costs
    /// several times running it.
    private var prepared: [String: OpaquePointer] = [:]
    /// The SQL of the cached statements lent out now (a nested use of the same SQL prepares its own).
    private var lent: Set<String> = []
    /// Statements cached at most: SQL built at run time (a list of `?`s of varying length) must
    /// not grow the cache without bound; past the limit a statement is prepared per call.
    static let preparedLimit = 256

    /// How long a write waits for another connection's lock before failing with `.busy`.
    public static let busyTimeoutMilliseconds: Int32 = 5000

    /// Opens (creating if needed) and migrates the database at `path`.
    public convenience init(path: String) throws(StoreError) {
        try self.init(path: path, migrations: Schema.migrations)
    }

    /// Opens and migrates with `migrations` (tests use shorter or longer lists).
    init(path: String, migrations: [Migration]) throws(StoreError) {
        // SQLite creates the file 0644 (less the umask) and gives its -wal and -shm the file's
        // mode: created 0600 here first (and an existing one tightened), all three are private.
        for file in [path, path + "-wal", path + "-shm"] { PrivateFiles.tighten(file: file) }
        let created = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if created >= 0 { Glibc.close(created) }
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let error = handle.map { Database.error(rc, $0, "sqlite3_open_v2", path: path) }
                ?? StoreError(.sqlite, "cannot open database \(path): out of memory", function: "sqlite3_open_v2", path: path)
            sqlite3_close_v2(handle)
            throw error
        }
        self.handle = handle
        self.path = path
        sqlite3_busy_timeout(handle, Self.busyTimeoutMilliseconds)
        sqlite3_extended_result_codes(handle, 1)
        do {
            try configure()
            try Migrator.migrate(self, to: migrations)
        } catch {
            throw Self.naming(path, error)
        }
    }

    /// `error` with the database's path in its message (SQLite's own messages name no file, and
    /// a corrupt or foreign file must be findable from the message alone).
    static func naming(_ path: String, _ error: StoreError) -> StoreError {
        guard !error.message.contains(path) else { return error }
        let advice: String = switch error.code {
        case .notNucleicDatabase, .corrupt:
            "; stop the daemon, move the file aside (with its -wal and -shm) and restore a backup, or start afresh without it"
        default: ""
        }
        var diagnostics = error.diagnostics
        diagnostics.path = diagnostics.path ?? path
        return StoreError(error.code, "database \(path): \(error.message)\(advice)", diagnostics: diagnostics)
    }

    deinit {
        // Lent statements are ~Copyable and scoped to the calls that borrowed them: none is
        // alive here, and the cached ones are finalized before the connection closes.
        for statement in prepared.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    private func configure() throws(StoreError) {
        // WAL: readers never block the writer; a crash loses at most the transactions not yet
        // synced, never consistency. synchronous=NORMAL is the WAL setting SQLite recommends:
        // commits are durable once the WAL is checkpointed or synced at the next commit that
        // needs it; a power cut may lose the last transactions but never corrupts the file.
        // (The transcripts, not the database, are the record of what happened.)
        let mode = try scalar("PRAGMA journal_mode = WAL", as: String.self)
        guard mode?.lowercased() == "wal" else {
            throw StoreError(.sqlite, "database \(path) cannot use WAL mode (got \(mode ?? "nothing")); keep it on a local file system",
                             path: path)
        }
        try execute("PRAGMA synchronous = NORMAL")
        try execute("PRAGMA foreign_keys = ON")
        guard try scalar("PRAGMA foreign_keys", as: Int64.self) == 1 else {
            throw StoreError(.sqlite, "this SQLite was built without foreign keys", path: path)
        }
    }

    // MARK: Running SQL

    /// Lends the prepared statement of `sql` to `body`: from the cache, prepared and cached on
    /// first use. When `body` returns the statement is reset (its read or write lock released)
    /// and its bindings cleared, whether `body` threw or not.
    public func withStatement<T>(_ sql: String, _ body: (borrowing Statement) throws(StoreError) -> T) throws(StoreError) -> T {
        guard !lent.contains(sql) else { return try body(try Statement(database: handle, sql: sql)) }
        let cached: OpaquePointer
        if let statement = prepared[sql] {
            cached = statement
        } else {
            guard prepared.count < Self.preparedLimit else { return try body(try Statement(database: handle, sql: sql)) }
            cached = try Statement.prepare(handle, sql, persistent: true)
            prepared[sql] = cached
        }
        lent.insert(sql)
        defer {
            lent.remove(sql)
            sqlite3_reset(cached)
            sqlite3_clear_bindings(cached)
        }
        return try body(Statement(lending: cached, database: handle, sql: sql))
    }

    /// Runs one statement that returns no rows.
    public func execute(_ sql: String, _ arguments: any SQLValueConvertible...) throws(StoreError) {
        try execute(sql, arguments: arguments)
    }

    public func execute(_ sql: String, arguments: [any SQLValueConvertible]) throws(StoreError) {
        try withStatement(sql) { (s: borrowing Statement) throws(StoreError) in
            try s.bind(arguments)
            while try s.step() {}
        }
    }

    /// Runs several `;`-separated statements without arguments (migrations).
    public func executeScript(_ sql: String) throws(StoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(message)
            throw Database.error(rc, handle, "sqlite3_exec", sql: sql, message: text)
        }
    }

    /// Maps every row through `row`.
    public func query<T>(_ sql: String, _ arguments: [any SQLValueConvertible] = [],
                         _ row: (Row) throws(StoreError) -> T) throws(StoreError) -> [T] {
        try withStatement(sql) { (s: borrowing Statement) throws(StoreError) -> [T] in
            try s.bind(arguments)
            var out: [T] = []
            while try s.step() { out.append(try row(s.row)) }
            return out
        }
    }

    /// The first row mapped through `row`, or nil when there is none.
    public func queryFirst<T>(_ sql: String, _ arguments: [any SQLValueConvertible] = [],
                              _ row: (Row) throws(StoreError) -> T) throws(StoreError) -> T? {
        try withStatement(sql) { (s: borrowing Statement) throws(StoreError) -> T? in
            try s.bind(arguments)
            guard try s.step() else { return nil }
            return try row(s.row)
        }
    }

    /// The first column of the first row (nil when there is no row or it is NULL).
    public func scalar<T: SQLColumnDecodable>(_ sql: String, _ arguments: [any SQLValueConvertible] = [],
                                              as type: T.Type = T.self) throws(StoreError) -> T? {
        let value: T?? = try queryFirst(sql, arguments) { (r: Row) throws(StoreError) -> T? in try r.get(0, as: T?.self) }
        return value ?? nil
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes64(handle)) }
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    /// True inside `transaction`.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    // MARK: Transactions

    public enum TransactionKind: String, Sendable {
        /// Takes the write lock at BEGIN, so a read-then-write cannot fail halfway with SQLITE_BUSY.
        case immediate = "IMMEDIATE"
        case deferred = "DEFERRED"
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// Nested calls become savepoints.
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        let nested = isInTransaction
        // Prepared statements (cached), not sqlite3_exec: the same few are run for every write.
        try execute(nested ? "SAVEPOINT nucleic_nested" : "BEGIN \(kind.rawValue)")
        do {
            let result = try body()
            try execute(nested ? "RELEASE nucleic_nested" : "COMMIT")
            return result
        } catch {
            // Roll back; if that fails too, the first error is the one that matters.
            if nested {
                try? executeScript("ROLLBACK TO nucleic_nested")
                try? executeScript("RELEASE nucleic_nested")
            } else if isInTransaction {
                try? executeScript("ROLLBACK")
            }
            throw error
        }
    }

    // MARK: Pragmas and backup

    /// `PRAGMA user_version`: the schema version (see `Migrator`).
    public var userVersion: Int {
        get throws(StoreError) { Int(try scalar("PRAGMA user_version", as: Int64.self) ?? 0) }
    }

    /// The journal mode SQLite reports (`wal`).
    public var journalMode: String {
        get throws(StoreError) { try scalar("PRAGMA journal_mode", as: String.self) ?? "" }
    }

    /// Copies the whole database to a new file at `destination` with SQLite's online backup API
    /// (what the `sqlite3` shell's `.backup` does): a consistent snapshot even while the daemon
    /// writes, and the copy needs no `-wal` file beside it.
    public func backup(to destination: String) throws(StoreError) {
        var target: OpaquePointer?
        let rc = sqlite3_open_v2(destination, &target, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        defer { sqlite3_close_v2(target) }
        guard rc == SQLITE_OK, let target else {
            throw StoreError(.sqlite, "cannot create backup \(destination)", function: "sqlite3_open_v2", path: destination, sqliteCode: rc)
        }
        guard let backup = sqlite3_backup_init(target, "main", handle, "main") else {
            throw Database.error(sqlite3_errcode(target), target, "sqlite3_backup_init", path: destination)
        }
        let step = sqlite3_backup_step(backup, -1)
        let finish = sqlite3_backup_finish(backup)
        guard step == SQLITE_DONE, finish == SQLITE_OK else {
            throw Database.error(step == SQLITE_DONE ? finish : step, target, "sqlite3_backup_step", path: destination)
        }
    }

    // MARK: Errors

    /// The error for a failed SQLite call. Reads `sqlite3_errmsg` at once: it belongs to the
    /// connection and the next call overwrites it.
    static func error(_ rc: Int32, _ db: OpaquePointer?, _ function: String, sql: String? = nil, path: String? = nil,
                      message: String? = nil) -> StoreError {
        let text = message ?? db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        let code: StoreError.Code
        switch rc & 0xFF {
        case SQLITE_CONSTRAINT: code = .constraint
        case SQLITE_BUSY, SQLITE_LOCKED: code = .busy
        case SQLITE_FULL: code = .diskFull
        case SQLITE_NOTADB: code = .notNucleicDatabase
        case SQLITE_CORRUPT: code = .corrupt
        case SQLITE_IOERR, SQLITE_CANTOPEN: code = .io
        default: code = .sqlite
        }
        return StoreError(code, text, function: function, sql: sql, path: path, sqliteCode: rc)
    }
}
