/// What changed between a base commit and a working directory, file by file, with totals.
///
/// Counts follow `git diff --numstat`: lines inserted and deleted per file; a binary file counts
/// no lines and is flagged instead. Untracked files count as added.
public struct FileChanges: Sendable, Hashable, CustomStringConvertible {
    /// One changed file.
    public struct File: Sendable, Hashable {
        /// How a file changed.
        public enum Status: String, Sendable, Hashable {
            case added, modified, deleted, renamed, copied, typeChanged
        }

        /// The path now (for a deleted file: the path it had), relative to the working tree root.
        public let path: String
        /// The path in the base, for renamed and copied files; nil otherwise.
        public let oldPath: String?
        public let status: Status
        /// Lines added (0 for binary files).
        public let insertions: Int
        /// Lines removed (0 for binary files).
        public let deletions: Int
        /// Whether either side is binary (git's "Bin" / numstat "-").
        public let isBinary: Bool

        public init(path: String, oldPath: String? = nil, status: Status, insertions: Int, deletions: Int, isBinary: Bool = false) {
            self.path = path
            self.oldPath = oldPath
            self.status = status
            self.insertions = insertions
            self.deletions = deletions
            self.isBinary = isBinary
        }
    }

    /// The changed files, sorted by path.
    public let files: [File]

    public init(files: [File]) {
        self.files = files.sorted { $0.path < $1.path }
    }

    /// Nothing changed.
    public static let empty = FileChanges(files: [])

    public var filesChanged: Int { files.count }
    public var insertions: Int { files.reduce(0) { $0 + $1.insertions } }
    public var deletions: Int { files.reduce(0) { $0 + $1.deletions } }
    public var isEmpty: Bool { files.isEmpty }

    /// The paths touched, old and new (for overlap checks between sessions).
    public var touchedPaths: Set<String> {
        var paths = Set(files.map(\.path))
        for file in files { if let old = file.oldPath { paths.insert(old) } }
        return paths
    }

    /// `git diff --shortstat`'s summary line, e.g. `3 files changed, 10 insertions(+), 2 deletions(-)`.
    public var description: String {
        var text = "\(filesChanged) file\(filesChanged == 1 ? "" : "s") changed"
        if insertions > 0 || deletions == 0 { text += ", \(insertions) insertion\(insertions == 1 ? "" : "s")(+)" }
        if deletions > 0 || insertions == 0 { text += ", \(deletions) deletion\(deletions == 1 ? "" : "s")(-)" }
        return text
    }
}

/// A commit to compare against: a local branch's tip, or a commit id.
public enum Revision: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    case branch(String)
    case commit(OID)

    public init(stringLiteral value: String) { self = .branch(value) }

    public var description: String {
        switch self {
        case .branch(let name): name
        case .commit(let oid): oid.hex
        }
    }
}
