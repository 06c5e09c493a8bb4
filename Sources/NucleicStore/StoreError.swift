public import NucleicProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure of the store: SQLite, a session's files, or a value that is not what it should be.
///
/// Equality is `code` and `message` only. The diagnostics (the C function that failed, the SQL,
/// the path, `errno`, SQLite's extended result code) are carried for logs and messages but are not
/// part of equality, so tests and callers can match on what happened without the incidentals.
public typealias StoreError = CodedError<StoreFailure>

/// The domain of ``StoreError``.
public enum StoreFailure: ErrorDomain {
    public typealias Diagnostics = StoreDiagnostics

    /// The message followed by the diagnostics that are present.
    public static func describe(_ error: StoreError) -> String {
        let d = error.diagnostics
        var details: [String] = []
        if let function = d.function { details.append(function) }
        if let errno = d.errno { details.append("errno \(errno): \(String(cString: strerror(errno)))") }
        if let sqliteCode = d.sqliteCode { details.append("sqlite code \(sqliteCode)") }
        if let sql = d.sql { details.append("SQL: \(sql.count > 200 ? String(sql.prefix(200)) + "…" : sql)") }
        return details.isEmpty ? error.message : "\(error.message) (\(details.joined(separator: "; ")))"
    }
}

/// What a ``StoreError`` carries besides its code and message; not part of equality.
public struct StoreDiagnostics: Sendable, Hashable {
    /// The C function that failed (`sqlite3_prepare_v2`, `pwrite`, …).
    public var function: String?
    /// The SQL being run.
    public var sql: String?
    /// The file concerned.
    public var path: String?
    /// The `errno` of a failed system call.
    public var errno: Int32?
    /// SQLite's extended result code.
    public var sqliteCode: Int32?
}

extension CodedError.Code where Domain == StoreFailure {
    /// SQLite failed in a way no other code describes (see `sqliteCode`).
    public static var sqlite: Self { Self("sqlite") }
    /// A uniqueness, foreign-key or check constraint refused a write.
    public static var constraint: Self { Self("constraint") }
    /// Another connection held the database past the busy timeout.
    public static var busy: Self { Self("busy") }
    /// The database was written by a newer Nucleic than this one.
    public static var schemaTooNew: Self { Self("schemaTooNew") }
    /// The file is not a Nucleic database (another application's SQLite file, or not SQLite).
    public static var notNucleicDatabase: Self { Self("notNucleicDatabase") }
    /// A read, write, sync or truncate failed (see `errno`).
    public static var io: Self { Self("io") }
    /// No space left: ENOSPC, EDQUOT, EFBIG (file size limit), or SQLITE_FULL.
    public static var diskFull: Self { Self("diskFull") }
    /// A file holds something that is not a torn tail and cannot be repaired automatically.
    public static var corrupt: Self { Self("corrupt") }
    /// A transcript append whose first seq is not the last seq + 1, or whose seqs have a gap.
    public static var sequence: Self { Self("sequence") }
    /// Another writer (another daemon, another `Transcript` in this process) holds the file.
    public static var locked: Self { Self("locked") }
    /// The record, file or folder does not exist.
    public static var notFound: Self { Self("notFound") }
    /// The caller passed something the store cannot take.
    public static var invalidArgument: Self { Self("invalidArgument") }
    /// A write failed and could not be rolled back: reopen the file to repair it.
    public static var needsRepair: Self { Self("needsRepair") }
    /// The file or database was closed.
    public static var closed: Self { Self("closed") }
    /// A file or folder others could reach that the host cannot make private (not ours).
    public static var permission: Self { Self("permission") }
}

extension CodedError where Domain == StoreFailure {
    public init(_ code: Code, _ message: String, function: String? = nil, sql: String? = nil, path: String? = nil,
                errno: Int32? = nil, sqliteCode: Int32? = nil) {
        self.init(code, message, diagnostics: StoreDiagnostics(
            function: function, sql: sql, path: path, errno: errno, sqliteCode: sqliteCode))
    }

    /// The C function that failed (`sqlite3_prepare_v2`, `pwrite`, …). Diagnostic only.
    public var function: String? { diagnostics.function }
    /// The SQL being run. Diagnostic only.
    public var sql: String? { diagnostics.sql }
    /// The file concerned. Diagnostic only.
    public var path: String? { diagnostics.path }
    /// The `errno` of a failed system call. Diagnostic only.
    public var errno: Int32? {
        get { diagnostics.errno }
        set { diagnostics.errno = newValue }
    }
    /// SQLite's extended result code. Diagnostic only.
    public var sqliteCode: Int32? { diagnostics.sqliteCode }
}
