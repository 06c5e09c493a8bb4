import CSQLite
import Foundation
import Testing
@testable import NucleicStore

@Suite struct DatabaseTests {
    @Test func migratesAnEmptyFileToTheLatestSchema() throws {
        let dir = TempFolder("db")
        let db = try Database(path: dir.file("nucleic.db"))
        #expect(try db.userVersion == Schema.latestVersion)
        let tables = try db.query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name") { (r: Row) throws(StoreError) -> String in try r.get(0) }
        #expect(tables == ["approvals", "counters", "devices", "projects", "rules", "sessions", "todos"])
        #expect(try db.scalar("PRAGMA application_id", as: Int64.self) == Migrator.applicationID)
    }

    @Test func walModeAndForeignKeysAreOn() throws {
        let dir = TempFolder("db")
        let db = try Database(path: dir.file("nucleic.db"))
        #expect(try db.journalMode == "wal")
        #expect(try db.scalar("PRAGMA foreign_keys", as: Int64.self) == 1)
        #expect(try db.scalar("PRAGMA synchronous", as: Int64.self) == 1)  // NORMAL
        #expect(try db.scalar("PRAGMA busy_timeout", as: Int64.self) == Int64(Database.busyTimeoutMilliseconds))
        // Foreign keys are enforced: a session needs its project.
        let error = #expect(throws: StoreError.self) {
            try db.execute("INSERT INTO sessions (id, project_id, backend, title, prompt, status, branch, base_branch, created_at, updated_at) VALUES ('s', 'nope', 'b', 't', 'p', 'queued', 'br', 'main', 0, 0)")
        }
        #expect(error?.code == .constraint)
        #expect(error?.sql?.hasPrefix("INSERT INTO sessions") == true)
    }

    @Test func reopeningKeepsDataAndDoesNotMigrateAgain() throws {
        let dir = TempFolder("db")
        let path = dir.file("nucleic.db")
        do {
            let db = try Database(path: path)
            try db.execute("INSERT INTO projects VALUES (?1, ?2, ?3, ?4, ?5)", "p1", "shop", "/code/shop", "main", 42)
        }
        let db = try Database(path: path)
        #expect(try db.userVersion == Schema.latestVersion)
        #expect(try db.scalar("SELECT name FROM projects WHERE id = 'p1'", as: String.self) == "shop")
    }

    @Test func aNewerSchemaIsRefusedWithAClearMessage() throws {
        let dir = TempFolder("db")
        let path = dir.file("nucleic.db")
        do {
            let db = try Database(path: path)
            try db.execute("PRAGMA user_version = \(Schema.latestVersion + 3)")
        }
        let error = #expect(throws: StoreError.self) { try Database(path: path) }
        #expect(error?.code == .schemaTooNew)
        #expect(error?.message.contains("schema version \(Schema.latestVersion + 3)") == true)
        #expect(error?.message.contains("knows versions up to \(Schema.latestVersion)") == true)
        #expect(error?.message.contains("newer nucleic") == true)
    }

    @Test func anotherApplicationsDatabaseIsRefused() throws {
        let dir = TempFolder("db")
        let path = dir.file("other.db")
        var handle: OpaquePointer?
        #expect(sqlite3_open(path, &handle) == SQLITE_OK)
        sqlite3_exec(handle, "CREATE TABLE things (x); INSERT INTO things VALUES (1);", nil, nil, nil)
        sqlite3_close(handle)
        let error = #expect(throws: StoreError.self) { try Database(path: path) }
        #expect(error?.code == .notNucleicDatabase)

        writeBytes(Array("this is not sqlite at all, just text that is long enough to be a header".utf8), to: dir.file("text.db"))
        let notSQLite = #expect(throws: StoreError.self) { try Database(path: dir.file("text.db")) }
        #expect(notSQLite?.code == .notNucleicDatabase)
    }

    @Test func aCorruptDatabasesMessageNamesTheFile() throws {
        let dir = TempFolder("db")
        let path = dir.file("nucleic.db")
        // A real database whose pages after the header are overwritten: SQLite calls it malformed.
        do {
            let db = try Database(path: path)
            try db.execute("CREATE TABLE filler (x TEXT)")
            for n in 0..<200 { try db.execute("INSERT INTO filler VALUES (?1)", String(repeating: "x", count: 500) + "\(n)") }
        }
        var bytes = try #require(FileManager.default.contents(atPath: path)).map { $0 }
        for i in 100..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: i &* 31) }
        try? FileManager.default.removeItem(atPath: path + "-wal")
        writeBytes(bytes, to: path)
        let error = #expect(throws: StoreError.self) { try Database(path: path) }
        #expect(error?.message.contains(path) == true, "\(String(describing: error))")

        writeBytes(Array("this is not sqlite at all, just text that is long enough to be a header".utf8), to: dir.file("text.db"))
        let notSQLite = #expect(throws: StoreError.self) { try Database(path: dir.file("text.db")) }
        #expect(notSQLite?.message.contains(dir.file("text.db")) == true, "\(String(describing: notSQLite))")
    }

    @Test func theDatabaseAndItsWALArePrivateWhateverTheUmask() throws {
        let old = umask(0o022)
        defer { umask(old) }
        let dir = TempFolder("db")
        let path = dir.file("nucleic.db")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t (x)")
        for file in [path, path + "-wal", path + "-shm"] {
            var st = stat()
            #expect(stat(file, &st) == 0 && st.st_mode & 0o777 == 0o600, "\(file): \(String(st.st_mode & 0o777, radix: 8))")
        }
    }

    @Test func migrationsRunInOrderAndOnlyOnce() throws {
        let dir = TempFolder("db")
        let path = dir.file("m.db")
        let one = Migration(version: 1, name: "one", sql: "CREATE TABLE a (x INTEGER) STRICT; INSERT INTO a VALUES (1);")
        let two = Migration(version: 2, name: "two", sql: "ALTER TABLE a ADD COLUMN y TEXT; UPDATE a SET y = 'added';")
        do {
            let db = try Database(path: path, migrations: [one])
            #expect(try db.userVersion == 1)
        }
        do {
            let db = try Database(path: path, migrations: [one, two])
            #expect(try db.userVersion == 2)
            #expect(try db.scalar("SELECT y FROM a", as: String.self) == "added")
            #expect(try db.scalar("SELECT count(*) FROM a", as: Int64.self) == 1)
        }
        // Opening again with the same list changes nothing.
        let db = try Database(path: path, migrations: [one, two])
        #expect(try db.scalar("SELECT count(*) FROM a", as: Int64.self) == 1)

        // An older build (knows only version 1) refuses it.
        let older = #expect(throws: StoreError.self) { try Database(path: path, migrations: [one]) }
        #expect(older?.code == .schemaTooNew)
    }

    @Test func aFailingMigrationLeavesTheOldVersion() throws {
        let dir = TempFolder("db")
        let path = dir.file("m.db")
        let one = Migration(version: 1, name: "one", sql: "CREATE TABLE a (x INTEGER) STRICT;")
        let bad = Migration(version: 2, name: "bad", sql: "CREATE TABLE b (y INTEGER); INSERT INTO nowhere VALUES (1);")
        _ = try Database(path: path, migrations: [one])
        let error = #expect(throws: StoreError.self) { try Database(path: path, migrations: [one, bad]) }
        #expect(error?.message.contains("migration 2 (bad) failed") == true)
        let db = try Database(path: path, migrations: [one])
        #expect(try db.userVersion == 1)
        #expect(try db.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'b'", as: Int64.self) == 0)

        let misnumbered = #expect(throws: StoreError.self) { try Database(path: dir.file("x.db"), migrations: [bad]) }
        #expect(misnumbered?.code == .invalidArgument)
    }

    @Test func transactionsCommitRollBackAndNest() throws {
        let dir = TempFolder("db")
        let db = try Database(path: dir.file("t.db"), migrations: [Migration(version: 1, name: "t", sql: "CREATE TABLE t (x INTEGER NOT NULL) STRICT;")])
        try db.transaction { () throws(StoreError) in try db.execute("INSERT INTO t VALUES (1)") }
        #expect(throws: StoreError.self) {
            try db.transaction { () throws(StoreError) in
                try db.execute("INSERT INTO t VALUES (2)")
                try db.execute("INSERT INTO t VALUES (NULL)")
            }
        }
        #expect(!db.isInTransaction)
        try db.transaction { () throws(StoreError) in
            try db.execute("INSERT INTO t VALUES (3)")
            try? db.transaction { () throws(StoreError) in
                try db.execute("INSERT INTO t VALUES (4)")
                throw StoreError(.invalidArgument, "inner fails")
            }
        }
        let values = try db.query("SELECT x FROM t ORDER BY x") { (r: Row) throws(StoreError) -> Int in try r.get(0) }
        #expect(values == [1, 3])
    }

    @Test func bindsAndReadsEveryType() throws {
        let dir = TempFolder("db")
        let db = try Database(path: dir.file("v.db"), migrations: [Migration(version: 1, name: "v", sql: "CREATE TABLE v (i INTEGER, r REAL, t TEXT, b BLOB, n TEXT);")])
        let blob: [UInt8] = [0, 1, 2, 255]
        let text = "zero\u{0}byte, ünïcode 😀"
        try db.execute("INSERT INTO v VALUES (?1, ?2, ?3, ?4, ?5)", Int64.min, 2.5, text, blob, String?.none)
        try db.execute("INSERT INTO v VALUES (?1, ?2, ?3, ?4, ?5)", 7, -1.25, "", [UInt8](), "x")
        let rows = try db.query("SELECT i, r, t, b, n FROM v ORDER BY rowid") { (r: Row) throws(StoreError) -> [String] in
            [String(try r.get(0, as: Int64.self)), String(try r.get(1, as: Double.self)), try r.get(2), "\(try r.get(3, as: [UInt8].self))",
             try r.get(4, as: String?.self) ?? "nil"]
        }
        #expect(rows == [[String(Int64.min), "2.5", text, "\(blob)", "nil"], ["7", "-1.25", "", "[]", "x"]])
        // A NULL where a value is required is an error naming the column, not a crash.
        #expect(try db.scalar("SELECT n FROM v WHERE 0", as: String.self) == nil)  // no row at all: nil, not an error
        let null = #expect(throws: StoreError.self) {
            _ = try db.queryFirst("SELECT NULL AS the_column") { (r: Row) throws(StoreError) -> String in try r.get(0) }
        }
        #expect(null?.message.contains("the_column") == true)
        #expect(throws: StoreError.self) { try db.execute("SELECT ?1, ?2", 1) }
    }

    @Test func errorsCompareByCodeAndMessageOnly() {
        let a = StoreError(.io, "cannot write to /x: boom", function: "pwrite", path: "/x", errno: 5)
        let b = StoreError(.io, "cannot write to /x: boom", function: "write", sql: "SELECT 1", path: "/y", errno: 28)
        #expect(a == b)
        #expect(a != StoreError(.diskFull, "cannot write to /x: boom"))
        #expect(a.description.contains("pwrite"))
        #expect(a.description.contains("errno 5"))
        #expect(StoreError.Code.corrupt < StoreError.Code.io)
    }

    @Test func backupMakesAStandaloneCopy() throws {
        let dir = TempFolder("db")
        let db = try Database(path: dir.file("nucleic.db"))
        try db.execute("INSERT INTO projects VALUES ('p1', 'shop', '/code/shop', 'main', 1)")
        try db.backup(to: dir.file("backup.db"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("backup.db-wal")) || fileSize(dir.file("backup.db-wal")) == 0)
        let copy = try Database(path: dir.file("backup.db"))
        #expect(try copy.scalar("SELECT name FROM projects", as: String.self) == "shop")
    }
}
