import CGit2

/// The result of merging trees in memory: a tree written to the object database, or the paths
/// that conflict. Nothing outside the object database is touched either way.
enum TreeMerge: Equatable {
    case clean(tree: OID)
    case conflicted(paths: [String])
}

/// In-memory merge primitives for the integrator: no ref, index file or working tree is read or
/// written here, only objects (trees, commits) are added to the object database, where an
/// unreferenced one is harmless (`git gc` drops it).
extension Repository {
    /// The best common ancestor of two commits, nil when their histories are unrelated.
    func mergeBase(_ one: OID, _ two: OID) throws -> OID? {
        var out = git_oid()
        var a = one.raw, b = two.raw
        git_error_clear()
        let rc = git_merge_base(&out, pointer, &a, &b)
        if rc == GIT_ENOTFOUND.rawValue { git_error_clear(); return nil }
        try GitError.check(rc, "git_merge_base", "find the common ancestor of \(one.abbreviated()) and \(two.abbreviated())")
        return OID(out)
    }

    /// Whether `ancestor` is `descendant` or in its history.
    func isAncestor(_ ancestor: OID, of descendant: OID) throws -> Bool {
        if ancestor == descendant { return true }
        var a = ancestor.raw, d = descendant.raw
        return try gitCall("git_graph_descendant_of", "check whether \(descendant.abbreviated()) contains \(ancestor.abbreviated())") {
            git_graph_descendant_of(pointer, &d, &a)
        } == 1
    }

    /// The tree of commit `commit`.
    func treeID(of commit: OID) throws -> OID {
        let handle = try lookupCommit(commit)
        guard let tree = git_commit_tree_id(handle.pointer) else {
            throw GitError(.generic, "Commit \(commit) has no tree.", function: "git_commit_tree_id")
        }
        return OID(tree.pointee)
    }

    /// How many parents commit `commit` has.
    func parentCount(of commit: OID) throws -> Int {
        Int(git_commit_parentcount(try lookupCommit(commit).pointer))
    }

    /// Merges commit `theirs` into commit `ours` in memory (`git_merge_commits`: renames found,
    /// a virtual base for criss-cross histories) and writes the resulting tree.
    func mergeCommitsInMemory(ours: OID, theirs: OID) throws -> TreeMerge {
        let our = try lookupCommit(ours)
        let their = try lookupCommit(theirs)
        var options = try Self.mergeOptions()
        let index = try GitHandle.make("git_merge_commits", "merge \(theirs.abbreviated()) into \(ours.abbreviated()) in memory", free: git_index_free) {
            git_merge_commits(&$0, pointer, our.pointer, their.pointer, &options)
        }
        return try treeOrConflicts(index.pointer, ours: ours)
    }

    /// Applies the change commit `commit` made to its first parent on top of commit `onto`, in
    /// memory (`git_cherrypick_commit`), and writes the resulting tree.
    func cherryPickInMemory(_ commit: OID, onto: OID) throws -> TreeMerge {
        let picked = try lookupCommit(commit)
        let our = try lookupCommit(onto)
        var options = try Self.mergeOptions()
        let index = try GitHandle.make("git_cherrypick_commit", "replay \(commit.abbreviated()) onto \(onto.abbreviated()) in memory", free: git_index_free) {
            git_cherrypick_commit(&$0, pointer, picked.pointer, our.pointer, 0, &options)
        }
        return try treeOrConflicts(index.pointer, ours: onto)
    }

    /// The commits reachable from `tip` and not from `base`, oldest first (parents before
    /// children), as `git rev-list --reverse --topo-order base..tip`.
    func commits(from base: OID, to tip: OID) throws -> [OID] {
        let walk = try GitHandle.make("git_revwalk_new", "walk the history of \(tip.abbreviated())", free: git_revwalk_free) {
            git_revwalk_new(&$0, pointer)
        }
        // Topological, not by time: commits made in the same second must keep their order.
        try gitCall("git_revwalk_sorting") {
            git_revwalk_sorting(walk.pointer, GIT_SORT_TOPOLOGICAL.rawValue | GIT_SORT_REVERSE.rawValue)
        }
        var start = tip.raw, stop = base.raw
        try gitCall("git_revwalk_push", "walk the history of \(tip.abbreviated())") { git_revwalk_push(walk.pointer, &start) }
        try gitCall("git_revwalk_hide", "walk the history of \(tip.abbreviated())") { git_revwalk_hide(walk.pointer, &stop) }
        var result: [OID] = []
        while true {
            var next = git_oid()
            git_error_clear()
            let rc = git_revwalk_next(&next, walk.pointer)
            if rc == GIT_ITEROVER.rawValue { git_error_clear(); break }
            try GitError.check(rc, "git_revwalk_next", "walk the history of \(tip.abbreviated())")
            result.append(OID(next))
        }
        return result
    }

    /// Writes a commit object without moving any ref (`update_ref` NULL): the integrator moves
    /// refs itself, with a compare-and-swap.
    func createCommit(tree: OID, parents: [OID], author: Signature, committer: Signature, message: String) throws -> OID {
        try author.withGitSignature { authorSignature in
            try committer.withGitSignature { committerSignature in
                try createCommit(tree: tree, parents: parents, author: authorSignature, committer: committerSignature, message: message, encoding: nil)
            }
        }
    }

    /// ``createCommit(tree:parents:author:committer:message:)`` with libgit2 signatures (a
    /// replayed commit keeps its original author, time zone included).
    func createCommit(
        tree: OID, parents: [OID], author: UnsafePointer<git_signature>, committer: UnsafePointer<git_signature>,
        message: String, encoding: String?
    ) throws -> OID {
        var treeID = tree.raw
        let treeObject = try GitHandle.make("git_tree_lookup", "read tree \(tree.abbreviated())", free: git_tree_free) {
            git_tree_lookup(&$0, pointer, &treeID)
        }
        // Parent handles cannot sit in an array of ~Copyable values: keep raw pointers, free below.
        var parentPointers: [OpaquePointer?] = []
        defer { for parent in parentPointers { git_commit_free(parent) } }
        for parent in parents {
            var raw = parent.raw
            var commit: OpaquePointer?
            try gitCall("git_commit_lookup", "read commit \(parent.abbreviated())") { git_commit_lookup(&commit, pointer, &raw) }
            parentPointers.append(commit)
        }
        let text = message.hasSuffix("\n") ? message : message + "\n"
        var out = git_oid()
        let count = parentPointers.count
        try gitCall("git_commit_create", "create a commit in \(repositoryDescription)") {
            parentPointers.withUnsafeMutableBufferPointer { buffer in
                git_commit_create(&out, pointer, nil, author, committer, encoding, text, treeObject.pointer, count, buffer.baseAddress)
            }
        }
        return OID(out)
    }

    // MARK: Helpers

    private static func mergeOptions() throws -> git_merge_options {
        var options = git_merge_options()
        // The init function sets GIT_MERGE_FIND_RENAMES, as git's default merge does.
        try gitCall("git_merge_options_init") { git_merge_options_init(&options, UInt32(GIT_MERGE_OPTIONS_VERSION)) }
        return options
    }

    /// The conflicted paths of an in-memory merge index, or its tree written to the object
    /// database when there are none (as commit `ours`'s tree with the differences applied:
    /// ``writeTree(of:basedOn:)``).
    private func treeOrConflicts(_ index: OpaquePointer, ours: OID) throws -> TreeMerge {
        if git_index_has_conflicts(index) == 1 {
            return .conflicted(paths: try Self.conflictedPaths(index))
        }
        return .clean(tree: try writeTree(of: index, basedOn: try treeID(of: ours)))
    }

    /// Every path that appears in a conflict entry (ancestor, ours or theirs), sorted.
    static func conflictedPaths(_ index: OpaquePointer) throws -> [String] {
        let iterator = try GitHandle.make("git_index_conflict_iterator_new", "list the conflicts", free: git_index_conflict_iterator_free) {
            git_index_conflict_iterator_new(&$0, index)
        }
        var paths = Set<String>()
        while true {
            var ancestor: UnsafePointer<git_index_entry>?
            var ours: UnsafePointer<git_index_entry>?
            var theirs: UnsafePointer<git_index_entry>?
            git_error_clear()
            let rc = git_index_conflict_next(&ancestor, &ours, &theirs, iterator.pointer)
            if rc == GIT_ITEROVER.rawValue { git_error_clear(); break }
            try GitError.check(rc, "git_index_conflict_next", "list the conflicts")
            for entry in [ancestor, ours, theirs] {
                if let path = entry?.pointee.path { paths.insert(String(cString: path)) }
            }
        }
        return paths.sorted()
    }
}
