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

    private static let initialized: Int32 = git_libgit2_init()
}
