import CGit2

/// The libgit2 library this build links against.
public enum LibGit2 {
    /// `major.minor.revision` as the linked library reports it.
    public static var version: String {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        git_libgit2_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }

    /// Initialises libgit2 once per process; every entry point of this module calls it.
    ///
    /// `git_libgit2_init` is reference-counted and must run before any other libgit2 call.
    /// A Swift `static let` initialiser runs exactly once, thread-safely. There is deliberately no
    /// matching `git_libgit2_shutdown`: it would tear down global state under any repository
    /// handle still alive on another thread, and the process exit frees everything anyway.
    public static func initialize() {
        _ = initialized
    }

    private static let initialized: Int32 = {
        let count = git_libgit2_init()
        // Two checks git does not make on these paths, each a large part of a checkout (a
        // 10,000-file worktree: 26% and 7% of the instructions) and of every snapshot:
        // - the SHA-1 of every object read, compared with its id (git reads objects from its
        //   own store without rehashing them; `git fsck` is where it verifies them);
        // - reading the header of every object an index entry, tree or commit being created
        //   refers to (git's `write-tree` only checks that the object exists, which libgit2
        //   has no cheaper way to ask). Nucleic creates such entries only from objects it has
        //   just read or written.
        // Process-wide options: set once, before any repository is opened.
        _ = nucleic_git_set_int_option(Int32(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION.rawValue), 0)
        _ = nucleic_git_set_int_option(Int32(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION.rawValue), 0)
        return count
    }()
}
