import CGit2

/// One commit as `git log -1 --stat` shows it.
public struct CommitInfo: Sendable, Hashable {
    public let id: OID
    public let author: Signature
    public let committer: Signature
    /// The whole message, trailers included.
    public let message: String
    /// What it changed against its first parent (against nothing for a root commit).
    public let stat: FileChanges
}

extension Repository {
    /// The commit `oid`: who made it, its message, and its diff stat against its first parent.
    public func commitInfo(_ oid: OID) throws -> CommitInfo {
        let commit = try lookupCommit(oid)
        func signature(_ pointer: UnsafePointer<git_signature>?) -> Signature {
            guard let s = pointer?.pointee else { return Signature(name: "", email: "") }
            return Signature(name: String(cString: s.name), email: String(cString: s.email), time: Int64(s.when.time), offsetMinutes: s.when.offset)
        }
        let message = git_commit_message(commit.pointer).map { String(cString: $0) } ?? ""
        let tree = try GitHandle.make("git_commit_tree", "read the tree of \(oid.abbreviated())", free: git_tree_free) {
            git_commit_tree(&$0, commit.pointer)
        }
        var parentTree: GitHandle?
        if git_commit_parentcount(commit.pointer) > 0 {
            let parent = try GitHandle.make("git_commit_parent", "read the parent of \(oid.abbreviated())", free: git_commit_free) {
                git_commit_parent(&$0, commit.pointer, 0)
            }
            parentTree = try GitHandle.make("git_commit_tree", "read the parent tree of \(oid.abbreviated())", free: git_tree_free) {
                git_commit_tree(&$0, parent.pointer)
            }
        }
        var options = git_diff_options()
        try gitCall("git_diff_options_init") { git_diff_options_init(&options, UInt32(GIT_DIFF_OPTIONS_VERSION)) }
        let old: OpaquePointer? = parentTree?.pointer
        let diff = try GitHandle.make("git_diff_tree_to_tree", "compare \(oid.abbreviated()) with its parent", free: git_diff_free) {
            git_diff_tree_to_tree(&$0, pointer, old, tree.pointer, &options)
        }
        return CommitInfo(
            id: oid, author: signature(git_commit_author(commit.pointer)), committer: signature(git_commit_committer(commit.pointer)),
            message: message, stat: try diffStat(of: diff, base: oid.abbreviated()))
    }
}
