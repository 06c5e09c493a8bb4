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
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is. Extendable: new codes are new static members.
    public struct Code: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        init(_ rawValue: String) { self.rawValue = rawValue }

        /// SQLite failed in a way no other code describes (see `sqliteCode`).
        public static let sqlite = Code("sqlite")
        /// A uniqueness, foreign-key or check constraint refused a write.
        public static let constraint = Code("constraint")
        /// Another connection held the database past the busy timeout.
        public static let busy = Code("busy")
        /// The database was written by a newer Nucleic than this one.
        public static let schemaTooNew = Code("schemaTooNew")
        /// The file is not a Nucleic database (another application's SQLite file, or not SQLite).
        public static let notNucleicDatabase = Code("notNucleicDatabase")
        /// A read, write, sync or truncate failed (see `errno`).
        public static let io = Code("io")
        /// No space left: ENOSPC, EDQUOT, EFBIG (file size limit), or SQLITE_FULL.
        public static let diskFull = Code("diskFull")
        /// A file holds something that is not a torn tail and cannot be repaired automatically.
        public static let corrupt = Code("corrupt")
        /// A transcript append whose first seq is not the last seq + 1, or whose seqs have a gap.
        public static let sequence = Code("sequence")
        /// Another writer (another daemon, another `Transcript` in this process) holds the file.
        public static let locked = Code("locked")
        /// The record, file or folder does not exist.
        public static let notFound = Code("notFound")
        /// The caller passed something the store cannot take.
        public static let invalidArgument = Code("invalidArgument")
        /// A write failed and could not be rolled back: reopen the file to repair it.
        public static let needsRepair = Code("needsRepair")
        /// The file or database was closed.
        public static let closed = Code("closed")

        public static func < (a: Code, b: Code) -> Bool { a.rawValue < b.rawValue }
        public var description: String { rawValue }
    }

    public let code: Code
    public let message: String

    // Diagnostics, not part of equality.
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

    public init(_ code: Code, _ message: String, function: String? = nil, sql: String? = nil, path: String? = nil,
                errno: Int32? = nil, sqliteCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.function = function
        self.sql = sql
        self.path = path
        self.errno = errno
        self.sqliteCode = sqliteCode
    }

    public static func == (a: StoreError, b: StoreError) -> Bool { a.code == b.code && a.message == b.message }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }

    /// The message followed by the diagnostics that are present.
    public var description: String {
        var details: [String] = []
        if let function { details.append(function) }
        if let errno { details.append("errno \(errno): \(String(cString: strerror(errno)))") }
        if let sqliteCode { details.append("sqlite code \(sqliteCode)") }
        if let sql { details.append("SQL: \(sql.count > 200 ? String(sql.prefix(200)) + "…" : sql)") }
        return details.isEmpty ? message : "\(message) (\(details.joined(separator: "; ")))"
    }
}
