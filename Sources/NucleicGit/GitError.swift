import CGit2

/// Why a git operation failed.
///
/// `code` says what kind of failure it was and is what callers match on: either a libgit2 error
/// code (`.notFound`, `.exists`, `.locked`, …) or a Nucleic code for a case the git layer
/// recognises itself (`.repositoryNotFound`, `.notOwned`, `.branchExists`, `.pathNotEmpty`, …).
/// `message` is a sentence for a person: what happened, to what, and what to do next. The C
/// function, libgit2's return code and error class, and the path are diagnostics and are not part
/// of equality.
public struct GitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure; extend with new static members as the git layer grows.
    public struct Code: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        // MARK: Nucleic codes

        /// No repository at or above the given path.
        public static let repositoryNotFound = Code(rawValue: "repositoryNotFound")
        /// The repository belongs to another user and libgit2 refuses to open it (safe.directory).
        public static let notOwned = Code(rawValue: "notOwned")
        /// A branch with that name already exists.
        public static let branchExists = Code(rawValue: "branchExists")
        /// No local branch with that name.
        public static let branchNotFound = Code(rawValue: "branchNotFound")
        /// The branch is checked out in the main working tree or a linked worktree.
        public static let branchCheckedOut = Code(rawValue: "branchCheckedOut")
        /// No commit with that id, or it is not a commit.
        public static let revisionNotFound = Code(rawValue: "revisionNotFound")
        /// A worktree with that name is already registered.
        public static let worktreeExists = Code(rawValue: "worktreeExists")
        /// No worktree with that name is registered.
        public static let worktreeNotFound = Code(rawValue: "worktreeNotFound")
        /// The worktree is locked (`git worktree lock`).
        public static let worktreeLocked = Code(rawValue: "worktreeLocked")
        /// The path opened as a worktree belongs to another repository, or to none.
        public static let notAWorktree = Code(rawValue: "notAWorktree")
        /// The target folder exists and is not an empty directory.
        public static let pathNotEmpty = Code(rawValue: "pathNotEmpty")
        /// A worktree or branch name that git (or libgit2) does not accept.
        public static let invalidName = Code(rawValue: "invalidName")
        /// A path that may not be used (e.g. inside the `.git` directory).
        public static let invalidPath = Code(rawValue: "invalidPath")
        /// A file-system call (mkdir, rmdir, unlink, opendir) failed.
        public static let fileSystem = Code(rawValue: "fileSystem")
        /// The operation needs a working directory and the repository is bare.
        public static let bareRepository = Code(rawValue: "bareRepository")

        // MARK: libgit2 codes (git_error_code)

        /// GIT_ERROR (-1): a generic error; the message says more.
        public static let generic = Code(rawValue: "generic")
        /// GIT_ENOTFOUND (-3).
        public static let notFound = Code(rawValue: "notFound")
        /// GIT_EEXISTS (-4).
        public static let exists = Code(rawValue: "exists")
        /// GIT_EAMBIGUOUS (-5).
        public static let ambiguous = Code(rawValue: "ambiguous")
        /// GIT_EUNBORNBRANCH (-9): HEAD names a branch without commits.
        public static let unbornBranch = Code(rawValue: "unbornBranch")
        /// GIT_EINVALIDSPEC (-12).
        public static let invalidSpec = Code(rawValue: "invalidSpec")
        /// GIT_ECONFLICT (-13): checkout conflicts.
        public static let conflict = Code(rawValue: "conflict")
        /// GIT_ELOCKED (-14): a lock file is held by someone else.
        public static let locked = Code(rawValue: "locked")
        /// GIT_EMODIFIED (-15): a reference moved under us.
        public static let modified = Code(rawValue: "modified")
        /// GIT_EPEEL (-19).
        public static let peel = Code(rawValue: "peel")
        /// GIT_EINVALID (-21).
        public static let invalid = Code(rawValue: "invalid")
        /// GIT_EUNCOMMITTED (-22).
        public static let uncommitted = Code(rawValue: "uncommitted")
        /// GIT_EMERGECONFLICT (-24).
        public static let mergeConflict = Code(rawValue: "mergeConflict")
        /// GIT_EINDEXDIRTY (-34).
        public static let indexDirty = Code(rawValue: "indexDirty")
        /// GIT_EMISMATCH (-33): an object's hash does not match its content.
        public static let mismatch = Code(rawValue: "mismatch")

        /// The code for a libgit2 return value; values without a name of their own become
        /// `libgit2(<n>)`.
        public init(libgit2 rc: Int32) {
            switch rc {
            case GIT_ERROR.rawValue: self = .generic
            case GIT_ENOTFOUND.rawValue: self = .notFound
            case GIT_EEXISTS.rawValue: self = .exists
            case GIT_EAMBIGUOUS.rawValue: self = .ambiguous
            case GIT_EBAREREPO.rawValue: self = .bareRepository
            case GIT_EUNBORNBRANCH.rawValue: self = .unbornBranch
            case GIT_EINVALIDSPEC.rawValue: self = .invalidSpec
            case GIT_ECONFLICT.rawValue: self = .conflict
            case GIT_ELOCKED.rawValue: self = .locked
            case GIT_EMODIFIED.rawValue: self = .modified
            case GIT_EPEEL.rawValue: self = .peel
            case GIT_EINVALID.rawValue: self = .invalid
            case GIT_EUNCOMMITTED.rawValue: self = .uncommitted
            case GIT_EMERGECONFLICT.rawValue: self = .mergeConflict
            case GIT_EMISMATCH.rawValue: self = .mismatch
            case GIT_EINDEXDIRTY.rawValue: self = .indexDirty
            case GIT_EOWNER.rawValue: self = .notOwned
            default: self = Code(rawValue: "libgit2(\(rc))")
            }
        }

        public static func < (lhs: Code, rhs: Code) -> Bool { lhs.rawValue < rhs.rawValue }
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence for a person: what happened, to what, and what to do next.
    public let message: String
    /// The libgit2 function that failed, e.g. `git_worktree_add`. Diagnostic only.
    public let function: String?
    /// libgit2's return code (negative), if a libgit2 call failed. Diagnostic only.
    public let libgit2Code: Int32?
    /// libgit2's error class (`git_error_t`) from `git_error_last()`. Diagnostic only.
    public let libgit2Class: Int32?
    /// libgit2's own error text, verbatim. Diagnostic only.
    public let libgit2Message: String?
    /// The repository, worktree or file path involved. Diagnostic only.
    public let path: String?

    /// Creates an error; everything after `message` is a diagnostic, not part of equality.
    public init(
        _ code: Code, _ message: String, function: String? = nil, libgit2Code: Int32? = nil,
        libgit2Class: Int32? = nil, libgit2Message: String? = nil, path: String? = nil
    ) {
        self.code = code
        self.message = message
        self.function = function
        self.libgit2Code = libgit2Code
        self.libgit2Class = libgit2Class
        self.libgit2Message = libgit2Message
        self.path = path
    }

    public static func == (lhs: GitError, rhs: GitError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public var description: String {
        var text = message
        if let function {
            text += " [\(function)"
            if let libgit2Code { text += " → \(libgit2Code)" }
            text += "]"
        }
        return text
    }

    /// The same failure with another code and message (the diagnostics are kept). Used where the
    /// caller knows better than libgit2 what went wrong and what to do.
    func with(_ code: Code, _ message: String, path: String? = nil) -> GitError {
        GitError(
            code, message, function: function, libgit2Code: libgit2Code, libgit2Class: libgit2Class,
            libgit2Message: libgit2Message, path: path ?? self.path)
    }

    // MARK: Checking libgit2 calls

    /// Throws when `rc` is a libgit2 failure (negative), reading `git_error_last()` at once (it is
    /// per-thread: never `await` between the call and this check). Returns `rc` otherwise.
    ///
    /// `action` names what was being done, to what ("open the repository at /src/shop"); it
    /// becomes the start of the message.
    @discardableResult
    public static func check(_ rc: Int32, _ function: String, _ action: @autoclosure () -> String? = nil, path: String? = nil) throws -> Int32 {
        guard rc < 0 else { return rc }
        throw GitError.fromLibgit2(rc, function, action(), path: path)
    }

    /// Builds the error for a failed libgit2 call from `git_error_last()`, then clears it.
    static func fromLibgit2(_ rc: Int32, _ function: String, _ action: String?, path: String?) -> GitError {
        var detail: String?
        var errorClass: Int32?
        if let last = git_error_last(), let text = last.pointee.message {
            detail = String(cString: text)
            errorClass = last.pointee.klass
        }
        git_error_clear()
        var code = Code(libgit2: rc)
        // libgit2 1.5.1 reports a repository owned by another user as -3 "safe.directory was
        // not found" (its config lookup leaks out) instead of GIT_EOWNER (-36).
        if let detail, detail.contains("safe.directory") || detail.contains("not owned by current user") {
            code = .notOwned
        }
        let what = action.map { "Could not \($0)" } ?? "\(function) failed"
        let message = "\(what): \(detail ?? "libgit2 returned \(rc) without saying why")."
        return GitError(
            code, message, function: function, libgit2Code: rc, libgit2Class: errorClass,
            libgit2Message: detail, path: path)
    }
}

/// Runs one libgit2 call with the thread's error state cleared first, then checks its result.
///
/// Clearing first matters: some libgit2 calls fail without setting an error (e.g.
/// `git_worktree_lookup` on a missing name), and `git_error_last()` would then show a stale
/// message from an earlier, unrelated call.
@discardableResult
func gitCall(_ function: String, _ action: @autoclosure () -> String? = nil, path: String? = nil, _ body: () -> Int32) throws -> Int32 {
    git_error_clear()
    let rc = body()
    return try GitError.check(rc, function, action(), path: path)
}
