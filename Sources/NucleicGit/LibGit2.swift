import CGit2

/// The libgit2 library this build links against.
public enum LibGit2 {
    /// `major.minor.revision` as the linked library reports it.
    public static var version: String {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        git_libgit2_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }
}
