import CSQLite

/// `SQLITE_TRANSIENT`: the C macro is `((sqlite3_destructor_type)-1)`, a cast Swift cannot
/// import. It tells SQLite to copy bound text and blobs before `sqlite3_bind_*` returns, so the
/// Swift buffer only has to live for the call.
let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement, finalized when it goes out of scope (unless `Database` lends it from
/// its cache of prepared statements).
///
/// `~Copyable`: exactly one owner, so it is finalized exactly once (in `deinit`) and cannot
/// outlive the `Database` call that lends it.
public struct Statement: ~Copyable {
    let handle: OpaquePointer
    let database: OpaquePointer
    public let sql: String

    /// Whether `deinit` finalizes the statement: false for one lent from `Database`'s cache,
    /// which the cache finalizes.
    let owned: Bool

    /// Prepares `sql`, owned by the new value.
    init(database: OpaquePointer, sql: String) throws(StoreError) {
        self.init(lending: try Self.prepare(database, sql, persistent: false), database: database, sql: sql, owned: true)
    }

    /// Wraps a prepared statement: `owned`, it is finalized with the value; else it is lent (by
    /// `Database`'s cache, which finalizes it).
    init(lending handle: OpaquePointer, database: OpaquePointer, sql: String, owned: Bool = false) {
        self.handle = handle
        self.database = database
        self.sql = sql
        self.owned = owned
    }

    /// Prepares `sql`; `persistent` tells SQLite the statement will be kept and reused.
    static func prepare(_ database: OpaquePointer, _ sql: String, persistent: Bool) throws(StoreError) -> OpaquePointer {
        var handle: OpaquePointer?
        let rc = sqlite3_prepare_v3(database, sql, -1, persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &handle, nil)
        guard rc == SQLITE_OK, let handle else {
            sqlite3_finalize(handle)
            throw Database.error(rc, database, "sqlite3_prepare_v3", sql: sql)
        }
        return handle
    }

    deinit { if owned { sqlite3_finalize(handle) } }

    /// Binds `values` to the parameters `?1…?n` (after clearing earlier bindings).
    public func bind(_ values: [any SQLValueConvertible]) throws(StoreError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard values.count == expected else {
            throw StoreError(.invalidArgument, "statement takes \(expected) arguments, got \(values.count)", sql: sql)
        }
        for (i, value) in values.enumerated() {
            let index = Int32(i + 1)
            let rc: Int32
            switch value.sqlValue {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
            case .real(let v): rc = sqlite3_bind_double(handle, index, v)
            case .text(var s):
                rc = s.withUTF8 { utf8 in
                    // A non-nil pointer even for "": a NULL pointer would bind SQL NULL.
                    sqlite3_bind_text64(handle, index, utf8.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(("" as StaticString).utf8Start),
                                        UInt64(utf8.count), SQLITE_TRANSIENT, UInt8(SQLITE_UTF8))
                }
            case .blob(let bytes):
                rc = bytes.withUnsafeBytes { raw in
                    raw.baseAddress == nil
                        ? sqlite3_bind_zeroblob(handle, index, 0)
                        : sqlite3_bind_blob64(handle, index, raw.baseAddress, UInt64(raw.count), SQLITE_TRANSIENT)
                }
            }
            guard rc == SQLITE_OK else { throw Database.error(rc, database, "sqlite3_bind", sql: sql) }
        }
    }

    /// Runs one step: true when a row is ready to read, false when the statement is done.
    public func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = Database.error(rc, database, "sqlite3_step", sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// The current row; valid until the next `step`.
    public var row: Row { Row(handle: handle, sql: sql) }

    /// Steps to the end, calling `body` with each row.
    public func forEachRow(_ body: (Row) throws(StoreError) -> Void) throws(StoreError) {
        while try step() { try body(row) }
    }
}

/// The current row of a statement, lent to a closure and valid only inside it.
public struct Row {
    let handle: OpaquePointer
    let sql: String

    public var columnCount: Int32 { sqlite3_column_count(handle) }

    /// The column decoded as `T` (`Optional` for nullable columns).
    public func get<T: SQLColumnDecodable>(_ column: Int32, as type: T.Type = T.self) throws(StoreError) -> T {
        try T.decode(from: self, at: column)
    }

    public func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    public func int64(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    public func double(at column: Int32) -> Double { sqlite3_column_double(handle, column) }

    public func text(at column: Int32) -> String {
        guard let p = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: p, count: count), as: UTF8.self)
    }

    public func blob(at column: Int32) -> [UInt8] {
        guard let p = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: p, count: count))
    }

    public func columnName(_ column: Int32) -> String {
        sqlite3_column_name(handle, column).map { String(cString: $0) } ?? "#\(column)"
    }

    func requireNotNull(_ column: Int32, _ what: String) throws(StoreError) {
        if isNull(at: column) { throw mismatch(column, what) }
    }

    func mismatch(_ column: Int32, _ expected: String) -> StoreError {
        StoreError(.corrupt, "column \(columnName(column)) holds something other than \(expected); the database may have been edited by hand",
                   sql: sql)
    }
}
