public import NucleicProtocol
public import NucleicSystem

/// Why a child process could not be started, written to, or signalled.
///
/// `code` says what kind of failure it was and is what callers match on; `message` is a sentence
/// for a person (what failed, on what path, what to do next). The C function, errno and path are
/// carried as diagnostics and are not part of equality.
public typealias ProcessError = CodedError<ProcessFailure>

/// The domain of ``ProcessError``: failures of spawning, signalling and writing to a child.
public enum ProcessFailure: SystemErrorDomain {}

extension CodedError.Code where Domain == ProcessFailure {
    /// The executable does not exist (or is not on PATH).
    public static var executableNotFound: Self { Self("executableNotFound") }
    /// The executable exists but may not be executed (permissions, not a regular file, bad format).
    public static var executableNotRunnable: Self { Self("executableNotRunnable") }
    /// The working directory does not exist or is not a directory.
    public static var workingDirectoryMissing: Self { Self("workingDirectoryMissing") }
    /// The working directory exists but may not be entered.
    public static var workingDirectoryNotAccessible: Self { Self("workingDirectoryNotAccessible") }
    /// An argument or environment entry contains a NUL byte.
    public static var invalidArgument: Self { Self("invalidArgument") }
    /// The system refused a resource (pipes, threads, pidfd, process slots).
    public static var resourceUnavailable: Self { Self("resourceUnavailable") }
    /// `posix_spawn` failed for another reason.
    public static var spawnFailed: Self { Self("spawnFailed") }
    /// The child's stdin has no reader any more (EPIPE): the child exited or closed it.
    public static var brokenPipe: Self { Self("brokenPipe") }
    /// `closeStdin()` was called before this write.
    public static var stdinClosed: Self { Self("stdinClosed") }
    /// `write(2)` to the child's stdin failed for another reason.
    public static var writeFailed: Self { Self("writeFailed") }
    /// `kill(2)` or `pidfd_send_signal(2)` refused the signal (EPERM, EINVAL).
    public static var signalFailed: Self { Self("signalFailed") }
}
