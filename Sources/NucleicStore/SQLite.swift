import CSQLite

/// The SQLite library this build links against.
public enum SQLite {
    /// The linked library's version string, e.g. `3.40.1`.
    public static var version: String { String(cString: sqlite3_libversion()) }
}
