public import NucleicProtocol
import CGit2

/// Why a git operation failed.
///
/// `code` says what kind of failure it was and is what callers match on: either a libgit2 error
/// code (`.notFound`, `.exists`, `.locked`, …) or a Nucleic code for a case the git layer
/// recognises itself (`.repositoryNotFound`, `.notOwned`, `.branchExists`, `.pathNotEmpty`, …).
/// `message` is a sentence for a person: what happened, to what, and what to do next. The C
/// function, libgit2's return code and error class, and the path are diagnostics and are not part
/// of equality.
public typealias GitError = CodedError<GitFailure>

/// The domain of ``GitError``.
public enum GitFailure: ErrorDomain {
    public typealias Diagnostics = GitDiagnostics

    public static func describe(_ error: GitError) -> String {
        var text = error.message
        if let function = error.function {
            text += " [\(function)"
            if let libgit2Code = error.libgit2Code { text += " → \(libgit2Code)" }
            text += "]"
        }
        return text
    }
}

/// What a ``GitError`` carries besides its code and message; not part of equality.
public struct GitDiagnostics: Sendable, Hashable {
    /// The libgit2 function that failed, e.g. `git_worktree_add`.
    public var function: String?
    /// libgit2's return code (negative), if a libgit2 call failed.
    public var libgit2Code: Int32?
    /// libgit2's error class (`git_error_t`) from `git_error_last()`.
    public var libgit2Class: Int32?
    /// libgit2's own error text, verbatim.
    public var libgit2Message: String?
    /// The repository, worktree or file path involved.
    public var path: String?
}

extension CodedError.Code where Domain == GitFailure {
    // MARK: Nucleic codes

    /// No repository at or above the given path.
    public static var repositoryNotFound: Self { Self("repositoryNotFound") }
    /// The repository belongs to another user and libgit2 refuses to open it (safe.directory).
    public static var notOwned: Self { Self("notOwned") }
    /// A branch with that name already exists.
    public static var branchExists: Self { Self("branchExists") }
    /// No local branch with that name.
    public static var branchNotFound: Self { Self("branchNotFound") }
    /// The branch is checked out in the main working tree or a linked worktree.
    public static var branchCheckedOut: Self { Self("branchCheckedOut") }
    /// No commit with that id, or it is not a commit.
    public static var revisionNotFound: Self { Self("revisionNotFound") }
    /// A worktree with that name is already registered.
    public static var worktreeExists: Self { Self("worktreeExists") }
    /// No worktree with that name is registered.
    public static var worktreeNotFound: Self { Self("worktreeNotFound") }
    /// The worktree is locked (`git worktree lock`).
    public static var worktreeLocked: Self { Self("worktreeLocked") }
    /// The path opened as a worktree belongs to another repository, or to none.
    public static var notAWorktree: Self { Self("notAWorktree") }
    /// The target folder exists and is not an empty directory.
    public static var pathNotEmpty: Self { Self("pathNotEmpty") }
    /// A worktree or branch name that git (or libgit2) does not accept.
    public static var invalidName: Self { Self("invalidName") }
    /// A path that may not be used (e.g. inside the `.git` directory).
    public static var invalidPath: Self { Self("invalidPath") }
    /// A file-system call (mkdir, rmdir, unlink, opendir) failed.
    public static var fileSystem: Self { Self("fileSystem") }
    /// The operation needs a working directory and the repository is bare.
    public static var bareRepository: Self { Self("bareRepository") }

    // MARK: libgit2 codes (git_error_code)

    /// GIT_ERROR (-1): a generic error; the message says more.
    public static var generic: Self { Self("generic") }
    /// GIT_ENOTFOUND (-3).
    public static var notFound: Self { Self("notFound") }
    /// GIT_EEXISTS (-4).
    public static var exists: Self { Self("exists") }
    /// GIT_EAMBIGUOUS (-5).
    public static var ambiguous: Self { Self("ambiguous") }
    /// GIT_EUNBORNBRANCH (-9): HEAD names a branch without commits.
    public static var unbornBranch: Self { Self("unbornBranch") }
    /// GIT_EINVALIDSPEC (-12).
    public static var invalidSpec: Self { Self("invalidSpec") }
    /// GIT_ECONFLICT (-13): checkout conflicts.
    public static var conflict: Self { Self("conflict") }
    /// GIT_ELOCKED (-14): a lock file is held by someone else.
    public static var locked: Self { Self("locked") }
    /// GIT_EMODIFIED (-15): a reference moved under us.
    public static var modified: Self { Self("modified") }
    /// GIT_EPEEL (-19).
    public static var peel: Self { Self("peel") }
    /// GIT_EINVALID (-21).
    public static var invalid: Self { Self("invalid") }
    /// GIT_EUNCOMMITTED (-22).
    public static var uncommitted: Self { Self("uncommitted") }
    /// GIT_EMERGECONFLICT (-24).
    public static var mergeConflict: Self { Self("mergeConflict") }
    /// GIT_EINDEXDIRTY (-34).
    public static var indexDirty: Self { Self("indexDirty") }
    /// GIT_EMISMATCH (-33): an object's hash does not match its content.
    public static var mismatch: Self { Self("mismatch") }

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
        default: self = Self(rawValue: "libgit2(\(rc))")
        }
    }
}

extension CodedError where Domain == GitFailure {
    /// Creates an error; everything after `message` is a diagnostic, not part of equality.
    public init(
        _ code: Code, _ message: String, function: String? = nil, libgit2Code: Int32? = nil,
        libgit2Class: Int32? = nil, libgit2Message: String? = nil, path: String? = nil
    ) {
        self.init(code, message, diagnostics: GitDiagnostics(
            function: function, libgit2Code: libgit2Code, libgit2Class: libgit2Class,
            libgit2Message: libgit2Message, path: path))
    }

    /// The libgit2 function that failed, e.g. `git_worktree_add`. Diagnostic only.
    public var function: String? { diagnostics.function }
    /// libgit2's return code (negative), if a libgit2 call failed. Diagnostic only.
    public var libgit2Code: Int32? { diagnostics.libgit2Code }
    /// libgit2's error class (`git_error_t`) from `git_error_last()`. Diagnostic only.
    public var libgit2Class: Int32? { diagnostics.libgit2Class }
    /// libgit2's own error text, verbatim. Diagnostic only.
    public var libgit2Message: String? { diagnostics.libgit2Message }
    /// The repository, worktree or file path involved. Diagnostic only.
    public var path: String? { diagnostics.path }

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
