/// The schema, as the ordered list of migrations that build it (docs/STORE.md explains each
/// table). A released migration is never edited: a change is a new migration at the end.
///
/// Conventions: `STRICT` tables (a value of the wrong type is an error, not silently kept);
/// identifiers are UUIDv7 text; times are Unix milliseconds (`INTEGER`); JSON is compact text.
/// Columns whose set of values may grow (session status, risk, device scope) are checked in
/// Swift, not with `CHECK`, because SQLite cannot alter a constraint without rebuilding the
/// table; fixed sets (approval status, rule scope and behavior) are checked by SQLite.
enum Schema {
    static let migrations: [Migration] = [
        Migration(version: 1, name: "initial", sql: """
            CREATE TABLE projects (
                id          TEXT PRIMARY KEY NOT NULL,
                name        TEXT NOT NULL UNIQUE,
                path        TEXT NOT NULL,
                base_branch TEXT NOT NULL,
                created_at  INTEGER NOT NULL
            ) STRICT;

            CREATE TABLE sessions (
                id                TEXT PRIMARY KEY NOT NULL,
                project_id        TEXT NOT NULL REFERENCES projects(id) ON DELETE RESTRICT,
                backend           TEXT NOT NULL,
                title             TEXT NOT NULL,
                prompt            TEXT NOT NULL,
                status            TEXT NOT NULL,
                branch            TEXT NOT NULL,
                worktree_path     TEXT,
                base_branch       TEXT NOT NULL,
                native_session_id TEXT,
                last_seq          INTEGER NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
                diff_files        INTEGER,
                diff_insertions   INTEGER,
                diff_deletions    INTEGER,
                created_at        INTEGER NOT NULL,
                updated_at        INTEGER NOT NULL,
                exit_code         INTEGER,
                exit_signal       INTEGER,
                stderr_tail       TEXT,
                error             TEXT,
                CHECK ((diff_files IS NULL) = (diff_insertions IS NULL) AND (diff_files IS NULL) = (diff_deletions IS NULL)),
                CHECK (exit_code IS NULL OR exit_signal IS NULL)
            ) STRICT;
            CREATE INDEX sessions_by_updated ON sessions(updated_at DESC, id DESC);
            CREATE INDEX sessions_by_project ON sessions(project_id, updated_at DESC);
            CREATE INDEX sessions_by_status ON sessions(status, updated_at DESC);

            CREATE TABLE approvals (
                id               TEXT PRIMARY KEY NOT NULL,
                session_id       TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                tool_call_id     TEXT,
                tool_name        TEXT NOT NULL,
                input_json       TEXT NOT NULL,
                risk             TEXT NOT NULL,
                request_json     TEXT NOT NULL,
                status           TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'resolved', 'withdrawn')),
                decision_json    TEXT,
                decided_by       TEXT,
                decided_by_label TEXT,
                withdraw_reason  TEXT,
                created_at       INTEGER NOT NULL,
                resolved_at      INTEGER,
                CHECK ((status = 'pending') = (resolved_at IS NULL)),
                CHECK ((status = 'resolved') = (decision_json IS NOT NULL AND decided_by IS NOT NULL))
            ) STRICT;
            CREATE INDEX approvals_by_session ON approvals(session_id, created_at);
            CREATE INDEX approvals_pending ON approvals(created_at) WHERE status = 'pending';

            CREATE TABLE devices (
                id          TEXT PRIMARY KEY NOT NULL,
                label       TEXT NOT NULL,
                scope       TEXT NOT NULL,
                public_key  BLOB NOT NULL UNIQUE CHECK (length(public_key) = 32),
                created_at  INTEGER NOT NULL,
                revoked_at  INTEGER
            ) STRICT;

            CREATE TABLE rules (
                id          TEXT PRIMARY KEY NOT NULL,
                scope       TEXT NOT NULL CHECK (scope IN ('session', 'project')),
                project_id  TEXT REFERENCES projects(id) ON DELETE CASCADE,
                session_id  TEXT REFERENCES sessions(id) ON DELETE CASCADE,
                rule        TEXT NOT NULL,
                behavior    TEXT NOT NULL CHECK (behavior IN ('allow', 'deny')),
                created_by  TEXT NOT NULL,
                created_at  INTEGER NOT NULL,
                approval_id TEXT REFERENCES approvals(id) ON DELETE SET NULL,
                CHECK ((scope = 'session') = (session_id IS NOT NULL AND project_id IS NULL)
                   AND (scope = 'project') = (project_id IS NOT NULL AND session_id IS NULL))
            ) STRICT;
            CREATE INDEX rules_by_project ON rules(project_id) WHERE project_id IS NOT NULL;
            CREATE INDEX rules_by_session ON rules(session_id) WHERE session_id IS NOT NULL;

            CREATE TABLE todos (
                id          INTEGER PRIMARY KEY,
                session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                position    INTEGER NOT NULL,
                text        TEXT NOT NULL,
                done        INTEGER NOT NULL DEFAULT 0 CHECK (done IN (0, 1)),
                UNIQUE (session_id, position)
            ) STRICT;
            """),
        Migration(version: 2, name: "rule messages", sql: """
            ALTER TABLE rules ADD COLUMN message TEXT;
            """),
        // Short handles people type: a session's is a per-host number, never reused (the counter
        // only grows, so a deleted session's number stays retired); an approval's is its
        // session's handle, a dot, and its number within the session (`12.1`). Existing rows are
        // numbered in creation order.
        Migration(version: 3, name: "handles", sql: """
            CREATE TABLE counters (
                name  TEXT PRIMARY KEY NOT NULL,
                value INTEGER NOT NULL CHECK (value >= 0)
            ) STRICT;
            ALTER TABLE sessions ADD COLUMN handle TEXT;
            ALTER TABLE approvals ADD COLUMN handle TEXT;
            UPDATE sessions SET handle = CAST((SELECT count(*) FROM sessions s2
                WHERE s2.created_at < sessions.created_at OR (s2.created_at = sessions.created_at AND s2.id <= sessions.id)) AS TEXT);
            INSERT INTO counters (name, value) VALUES ('session_handle', (SELECT count(*) FROM sessions));
            UPDATE approvals SET handle = (SELECT s.handle FROM sessions s WHERE s.id = approvals.session_id) || '.' ||
                CAST((SELECT count(*) FROM approvals a2 WHERE a2.session_id = approvals.session_id
                    AND (a2.created_at < approvals.created_at OR (a2.created_at = approvals.created_at AND a2.id <= approvals.id))) AS TEXT);
            CREATE UNIQUE INDEX sessions_by_handle ON sessions(handle);
            CREATE UNIQUE INDEX approvals_by_handle ON approvals(handle);
            """),
        // A session's pending approvals, counted for every summary: found without reading the
        // session's answered ones (thousands in a long session).
        Migration(version: 4, name: "pending approvals by session", sql: """
            CREATE INDEX approvals_pending_by_session ON approvals(session_id, created_at) WHERE status = 'pending';
            """),
    ]

    /// The newest schema version this build knows.
    static var latestVersion: Int { migrations.count }
}
