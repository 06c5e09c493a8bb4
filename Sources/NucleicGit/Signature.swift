import CGit2

/// Who made a commit, and when.
///
/// Always created explicitly (`git_signature_new`): a fresh machine has no `user.name`, so
/// Nucleic never relies on `git_signature_default`.
public struct Signature: Sendable, Hashable {
    public var name: String
    public var email: String
    /// Seconds since the epoch; nil means "now", taken when the signature is used.
    public var time: Int64?
    /// The time zone offset in minutes east of UTC.
    public var offsetMinutes: Int32

    public init(name: String, email: String, time: Int64? = nil, offsetMinutes: Int32 = 0) {
        self.name = name
        self.email = email
        self.time = time
        self.offsetMinutes = offsetMinutes
    }

    /// The author Nucleic uses for its own commits unless told otherwise.
    public static let nucleic = Signature(name: "Nucleic", email: "nucleic@localhost")

    /// Creates the libgit2 signature, lends it to `body`, frees it afterwards.
    func withGitSignature<R>(_ body: (UnsafeMutablePointer<git_signature>) throws -> R) throws -> R {
        var signature: UnsafeMutablePointer<git_signature>?
        git_error_clear()
        let rc: Int32
        if let time {
            rc = git_signature_new(&signature, name, email, git_time_t(time), offsetMinutes)
        } else {
            rc = git_signature_now(&signature, name, email)
        }
        try GitError.check(rc, time == nil ? "git_signature_now" : "git_signature_new", "create a signature for \(name) <\(email)>")
        guard let signature else { throw GitError(.generic, "git_signature_new returned no signature.", function: "git_signature_new") }
        defer { git_signature_free(signature) }
        return try body(signature)
    }
}
