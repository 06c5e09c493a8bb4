import CGit2

extension Repository {
    /// Commits everything in the working directory to the current branch, like
    /// `git add -A && git commit`: new, modified and deleted files, ignored files excluded.
    /// Returns the new commit, or nil when the working directory matches HEAD (nothing to
    /// commit). `committer` defaults to `author`.
    ///
    /// This is the snapshot a session's worktree gets before it is integrated or diffed at a
    /// fixed point; the signature is always explicit (a fresh machine has no `user.name`).
    @discardableResult
    public func commitAll(message: String, author: Signature = .nucleic, committer: Signature? = nil) throws -> OID? {
        guard !isBare else {
            throw GitError(.bareRepository, "\(commonDirectory) is a bare repository: there is no working directory to commit.", path: commonDirectory)
        }
        let index = try GitHandle.make("git_repository_index", "open the index of \(repositoryDescription)", free: git_index_free) {
            git_repository_index(&$0, pointer)
        }
        try gitCall("git_index_add_all", "stage the files of \(repositoryDescription)") {
            git_index_add_all(index.pointer, nil, GIT_INDEX_ADD_DEFAULT.rawValue, nil, nil)
        }
        // add_all only adds and updates; files deleted from the working directory go here.
        try gitCall("git_index_update_all", "stage the deletions in \(repositoryDescription)") {
            git_index_update_all(index.pointer, nil, nil, nil)
        }
        try gitCall("git_index_write", "write the index of \(repositoryDescription)") { git_index_write(index.pointer) }
        var tree = git_oid()
        try gitCall("git_index_write_tree", "write the tree of \(repositoryDescription)") { git_index_write_tree(&tree, index.pointer) }
        let treeObject = try GitHandle.make("git_tree_lookup", "read the new tree", free: git_tree_free) {
            git_tree_lookup(&$0, pointer, &tree)
        }

        var parent: GitHandle? = nil
        if let head = try headCommit { parent = try lookupCommit(head) }
        let parentPointer: OpaquePointer? = parent?.pointer
        if let parentPointer, let parentTree = git_commit_tree_id(parentPointer), git_oid_equal(parentTree, &tree) == 1 {
            return nil
        }
        let text = message.hasSuffix("\n") ? message : message + "\n"
        var commit = git_oid()
        try author.withGitSignature { authorSignature in
            try (committer ?? author).withGitSignature { committerSignature in
                var parents: [OpaquePointer?] = parentPointer.map { [$0] } ?? []
                let count = parents.count
                try gitCall("git_commit_create", "commit in \(repositoryDescription)") {
                    parents.withUnsafeMutableBufferPointer { buffer in
                        git_commit_create(&commit, pointer, "HEAD", authorSignature, committerSignature, "UTF-8", text, treeObject.pointer, count, buffer.baseAddress)
                    }
                }
            }
        }
        return OID(commit)
    }
}
