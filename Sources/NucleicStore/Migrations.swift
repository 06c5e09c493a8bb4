/// One step of the schema: version `version` is reached by running `sql` on version `version - 1`.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}

/// Brings a database to the newest schema, or refuses one this build cannot read.
///
/// The version is `PRAGMA user_version` (stored in the file header, changed inside the same
/// transaction as the migration, so a crash leaves either the old version with the old schema or
/// the new with the new). `PRAGMA application_id` marks the file as Nucleic's, so another
/// program's SQLite file is refused rather than migrated.
enum Migrator {
    /// "NUCL" in ASCII.
    static let applicationID: Int64 = 0x4E55_434C

    static func migrate(_ db: Database, to migrations: [Migration]) throws(StoreError) {
        for (i, m) in migrations.enumerated() where m.version != i + 1 {
            throw StoreError(.invalidArgument, "migration \"\(m.name)\" has version \(m.version), expected \(i + 1): migrations must be numbered 1, 2, 3, … in order")
        }
        let latest = migrations.count
        try db.transaction(.immediate) { () throws(StoreError) in
            let version = try db.userVersion
            let application = try db.scalar("PRAGMA application_id", as: Int64.self) ?? 0
            if application != applicationID {
                let tables = try db.scalar("SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'", as: Int64.self) ?? 0
                guard application == 0, version == 0, tables == 0 else {
                    throw StoreError(.notNucleicDatabase,
                                     "\(db.path) is not a Nucleic database (application id \(application), \(tables) tables); point NUCLEIC_HOME at a Nucleic data folder",
                                     path: db.path)
                }
                try db.execute("PRAGMA application_id = \(applicationID)")
            }
            if version > latest {
                throw StoreError(.schemaTooNew,
                                 "database \(db.path) has schema version \(version), but this nucleic knows versions up to \(latest): it was written by a newer nucleic. Run that version (or newer), or restore a backup made by this one",
                                 path: db.path)
            }
            for m in migrations where m.version > version {
                do throws(StoreError) {
                    try db.executeScript(m.sql)
                } catch {
                    throw StoreError(error.code, "migration \(m.version) (\(m.name)) failed on \(db.path): \(error.message)",
                                     function: error.function, sql: error.sql, path: db.path, sqliteCode: error.sqliteCode)
                }
                try db.execute("PRAGMA user_version = \(m.version)")
            }
        }
    }
}
