public import NucleicProtocol
import CGit2

/// The user's identity as git resolves it from configuration, for the commits Nucleic writes on
/// their behalf (snapshots, merges, rebases, squashes).
public struct GitIdentity: Sendable, Hashable {
    public var author: Signature
    public var committer: Signature

    public init(author: Signature, committer: Signature) {
        self.author = author
        self.committer = committer
    }

    /// The configuration keys git reads, in git's order of precedence: `author.name` before
    /// `user.name` for the author, `committer.name` before `user.name` for the committer (the
    /// same for emails). Environment variables (`GIT_AUTHOR_NAME`, `EMAIL`, …) are not
    /// consulted: the daemon is long-lived and serves every terminal, so its own environment
    /// says nothing about the user at hand.
    public static func resolve(_ value: (String) -> String?) -> GitIdentity? {
        func pick(_ keys: String...) -> String? {
            for key in keys { if let found = value(key)?.trimmingWhitespace, !found.isEmpty { return found } }
            return nil
        }
        guard let authorName = pick("author.name", "user.name"), let authorEmail = pick("author.email", "user.email"),
            let committerName = pick("committer.name", "user.name"), let committerEmail = pick("committer.email", "user.email")
        else { return nil }
        return GitIdentity(author: Signature(name: authorName, email: authorEmail), committer: Signature(name: committerName, email: committerEmail))
    }
}

extension CodedError.Code where Domain == GitFailure {
    /// No `user.name` / `user.email` in any git configuration the repository reads.
    public static var identityNotConfigured: Self { Self("identityNotConfigured") }
}

extension Repository {
    /// The identity git would commit with here: the repository's configuration with the user's
    /// global and the system's under it (`git_repository_config_snapshot`). Signatures carry no
    /// time: each is stamped when it is used.
    ///
    /// Throws `.identityNotConfigured`, naming the keys to set, when no name or email is set.
    public func configuredIdentity() throws -> GitIdentity {
        let config = try GitHandle.make("git_repository_config_snapshot", "read the configuration of \(repositoryDescription)", free: git_config_free) {
            git_repository_config_snapshot(&$0, pointer)
        }
        let identity = GitIdentity.resolve { key in
            var value: UnsafePointer<CChar>?
            git_error_clear()
            guard git_config_get_string(&value, config.pointer, key) == 0, let value else {
                git_error_clear()
                return nil
            }
            return String(cString: value)
        }
        guard let identity else {
            throw GitError(.identityNotConfigured, """
                No git identity is configured for \(repositoryDescription): Nucleic writes its commits as you, the way \
                git would. Set user.name and user.email (`git config user.name "Your Name"` and `git config user.email \
                you@example.com`, with --global for every repository), then try again. Nothing was changed.
                """, path: commonDirectory)
        }
        return identity
    }

    /// Sets `key` to `value` in this repository's own configuration (`.git/config`), as
    /// `git config key value` does: for scratch repositories (the demo's, benchmarks') that
    /// need a repository-local identity.
    public func setLocalConfig(_ key: String, _ value: String) throws {
        let config = try GitHandle.make("git_repository_config", "open the configuration of \(repositoryDescription)", free: git_config_free) {
            git_repository_config(&$0, pointer)
        }
        let local = try GitHandle.make("git_config_open_level", "open the local configuration of \(repositoryDescription)", free: git_config_free) {
            git_config_open_level(&$0, config.pointer, GIT_CONFIG_LEVEL_LOCAL)
        }
        try gitCall("git_config_set_string", "set \(key) in \(repositoryDescription)") { git_config_set_string(local.pointer, key, value) }
    }
}
