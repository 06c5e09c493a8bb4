import CGit2
import Glibc

/// Working-tree and ref primitives for moving a checked-out branch safely: which of a set of
/// paths carry uncommitted work, a checkout limited to those paths that refuses rather than
/// overwrites, and a compare-and-swap on a ref.
extension Repository {
    /// The git operation in progress in this working tree (`merge`, `rebase`, …), or nil when
    /// there is none. Also reports an index with unresolved conflicts as `merge`.
    var operationInProgress: String? {
        get throws {
            let state = git_repository_state(pointer)
            if state != Int32(GIT_REPOSITORY_STATE_NONE.rawValue) { return Self.stateName(state) }
            guard !isBare else { return nil }
            let index = try GitHandle.make("git_repository_index", "open the index of \(repositoryDescription)", free: git_index_free) {
                git_repository_index(&$0, pointer)
            }
            return git_index_has_conflicts(index.pointer) == 1 ? "merge" : nil
        }
    }

    /// The paths among `paths` that have uncommitted work in this working tree: staged or
    /// unstaged changes, and untracked or ignored files. Reads only; the index is not written.
    ///
    /// Ignored files count too: an ignored file at a path the integration would write is still
    /// something of the user's (a `.env`, a local build), and is never overwritten.
    func uncommittedPaths(among paths: [String]) throws -> [String] {
        guard !paths.isEmpty, !isBare else { return [] }
        var options = git_status_options()
        try gitCall("git_status_options_init") { git_status_options_init(&options, UInt32(GIT_STATUS_OPTIONS_VERSION)) }
        options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR
        options.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED.rawValue | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS.rawValue
            | GIT_STATUS_OPT_INCLUDE_IGNORED.rawValue | GIT_STATUS_OPT_RECURSE_IGNORED_DIRS.rawValue
            | GIT_STATUS_OPT_DISABLE_PATHSPEC_MATCH.rawValue | GIT_STATUS_OPT_EXCLUDE_SUBMODULES.rawValue
        let list = try withStringArray(paths) { pathspec in
            options.pathspec = pathspec
            return try GitHandle.make("git_status_list_new", "read the status of \(repositoryDescription)", free: git_status_list_free) {
                git_status_list_new(&$0, pointer, &options)
            }
        }
        var dirty = Set<String>()
        for index in 0..<git_status_list_entrycount(list.pointer) {
            guard let entry = git_status_byindex(list.pointer, index)?.pointee, entry.status.rawValue != GIT_STATUS_CURRENT.rawValue else { continue }
            for delta in [entry.head_to_index, entry.index_to_workdir] {
                guard let delta = delta?.pointee else { continue }
                if let path = delta.old_file.path { dirty.insert(String(cString: path)) }
                if let path = delta.new_file.path { dirty.insert(String(cString: path)) }
            }
        }
        // A literal pathspec also matches what lies under a directory of that name.
        let wanted = Set(paths)
        return dirty.filter { path in wanted.contains(path) || wanted.contains { path.hasPrefix($0 + "/") } }.sorted()
    }

    /// The folders a checkout of `paths` would have to create where this working tree has
    /// something else: a file (or symbolic link) at `gen` when `gen/code.swift` is to be
    /// written. A checkout limited to `paths` does not see it (the pathspec filters it out of
    /// libgit2's working-tree walk, so even a dry run passes) and then fails half-way with
    /// "failed to make directory". A folder that is itself among `paths` (a tracked file the
    /// integration replaces by a folder) is left to ``uncommittedPaths(among:)``.
    func blockedFolders(for paths: [String]) -> [String] {
        guard let workdir else { return [] }
        let changing = Set(paths)
        var blocked = Set<String>(), seen = Set<String>()
        for path in paths {
            var components = path.split(separator: "/").dropLast().map(String.init)
            var prefixes: [String] = []
            while !components.isEmpty {
                prefixes.append(components.joined(separator: "/"))
                components.removeLast()
            }
            for folder in prefixes.reversed() where !changing.contains(folder) && seen.insert(folder).inserted {
                var info = stat()
                if lstat(workdir + "/" + folder, &info) == 0, info.st_mode & S_IFMT != S_IFDIR { blocked.insert(folder) }
            }
        }
        return blocked.sorted()
    }

    /// Checks tree `target` out over `paths` only (`GIT_CHECKOUT_SAFE`, paths taken literally),
    /// from `baseline`, the tree the working tree is expected to match there. Returns the paths
    /// that prevent it; then nothing was written (libgit2 works out every action, conflicts
    /// included, before it touches a file). With `dryRun`, only finds those paths: neither a
    /// file nor the index is written.
    ///
    /// Untracked and ignored files in the way are conflicts, never overwritten or removed.
    func checkout(paths: [String], of target: OID, from baseline: OID, dryRun: Bool) throws -> [String] {
        guard !paths.isEmpty else { return [] } // an empty list would mean "every path"
        var targetID = target.raw, baselineID = baseline.raw
        let targetTree = try GitHandle.make("git_object_lookup", "read tree \(target.abbreviated())", free: git_object_free) {
            git_object_lookup(&$0, pointer, &targetID, GIT_OBJECT_TREE)
        }
        let baselineTree = try GitHandle.make("git_tree_lookup", "read tree \(baseline.abbreviated())", free: git_tree_free) {
            git_tree_lookup(&$0, pointer, &baselineID)
        }
        var options = git_checkout_options()
        try gitCall("git_checkout_options_init") { git_checkout_options_init(&options, UInt32(GIT_CHECKOUT_OPTIONS_VERSION)) }
        var strategy = GIT_CHECKOUT_SAFE.rawValue | GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH.rawValue
            | GIT_CHECKOUT_DONT_OVERWRITE_IGNORED.rawValue
        // DRY_RUN alone still writes the index at the end (1.5.1 `git_checkout_iterator`): a
        // dry run must say DONT_WRITE_INDEX too, or it rewrites the user's index file.
        if dryRun { strategy |= GIT_CHECKOUT_DRY_RUN.rawValue | GIT_CHECKOUT_DONT_WRITE_INDEX.rawValue }
        options.checkout_strategy = strategy
        options.baseline = baselineTree.pointer
        options.notify_flags = GIT_CHECKOUT_NOTIFY_CONFLICT.rawValue
        let collector = PathCollector()
        options.notify_payload = Unmanaged.passUnretained(collector).toOpaque()
        options.notify_cb = { _, path, _, _, _, payload in
            if let path, let payload {
                Unmanaged<PathCollector>.fromOpaque(payload).takeUnretainedValue().paths.insert(String(cString: path))
            }
            return 0
        }
        let rc = withStringArray(paths) { pathspec -> Int32 in
            options.paths = pathspec
            git_error_clear()
            return withExtendedLifetime(collector) { git_checkout_tree(pointer, targetTree.pointer, &options) }
        }
        if rc == GIT_ECONFLICT.rawValue {
            git_error_clear()
            return collector.paths.isEmpty ? paths : collector.paths.sorted()
        }
        try GitError.check(rc, "git_checkout_tree", "update \(paths.count) file\(paths.count == 1 ? "" : "s") in \(repositoryDescription)", path: workdir)
        return collector.paths.sorted()
    }

    /// Moves local branch `branch` from `expected` to `new` only if it is still at `expected`
    /// (`git_reference_create_matching`, compared under the ref's lock). Returns false, changing
    /// nothing, when the branch has moved. The reflog entry names `identity`.
    func compareAndSwapBranch(_ branch: String, from expected: OID, to new: OID, reflogMessage: String, identity: Signature) throws -> Bool {
        var old = expected.raw, target = new.raw
        let name = "refs/heads/" + branch
        let rc = try withIdentity(identity) { () -> Int32 in
            var out: OpaquePointer?
            git_error_clear()
            let rc = git_reference_create_matching(&out, pointer, name, &target, 1, &old, reflogMessage)
            if let out { git_reference_free(out) }
            return rc
        }
        if rc == GIT_EMODIFIED.rawValue { git_error_clear(); return false }
        try GitError.check(rc, "git_reference_create_matching", "move branch '\(branch)' from \(expected.abbreviated()) to \(new.abbreviated())", path: commonDirectory)
        return true
    }

    // MARK: Helpers

    /// Runs `body` with this handle's reflog identity set to `identity`, then restores it.
    /// libgit2 signs reflog entries with `user.name`, or "unknown" on a fresh machine.
    private func withIdentity<R>(_ identity: Signature, _ body: () throws -> R) throws -> R {
        var name: UnsafePointer<CChar>?, email: UnsafePointer<CChar>?
        git_repository_ident(&name, &email, pointer)
        let previous = (name.map { String(cString: $0) }, email.map { String(cString: $0) })
        try gitCall("git_repository_set_ident") { git_repository_set_ident(pointer, identity.name, identity.email) }
        defer {
            git_error_clear()
            _ = git_repository_set_ident(pointer, previous.0, previous.1)
            git_error_clear()
        }
        return try body()
    }

    private static func stateName(_ state: Int32) -> String {
        switch UInt32(state) {
        case GIT_REPOSITORY_STATE_MERGE.rawValue: "merge"
        case GIT_REPOSITORY_STATE_REVERT.rawValue, GIT_REPOSITORY_STATE_REVERT_SEQUENCE.rawValue: "revert"
        case GIT_REPOSITORY_STATE_CHERRYPICK.rawValue, GIT_REPOSITORY_STATE_CHERRYPICK_SEQUENCE.rawValue: "cherry-pick"
        case GIT_REPOSITORY_STATE_BISECT.rawValue: "bisect"
        case GIT_REPOSITORY_STATE_REBASE.rawValue, GIT_REPOSITORY_STATE_REBASE_INTERACTIVE.rawValue,
             GIT_REPOSITORY_STATE_REBASE_MERGE.rawValue: "rebase"
        default: "am"
        }
    }
}

/// Collects paths from a libgit2 callback (passed through its `void *payload`).
private final class PathCollector {
    var paths = Set<String>()
}

/// Lends `strings` to libgit2 as a `git_strarray` (C copies, freed afterwards).
func withStringArray<R: ~Copyable>(_ strings: [String], _ body: (git_strarray) throws -> R) rethrows -> R {
    let pointers = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: max(strings.count, 1))
    for (index, string) in strings.enumerated() { pointers[index] = strdup(string) }
    defer {
        for index in 0..<strings.count { free(pointers[index]) }
        pointers.deallocate()
    }
    return try body(git_strarray(strings: pointers, count: strings.count))
}
