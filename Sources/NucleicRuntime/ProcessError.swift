import Glibc

/// Why a child process could not be started, written to, or signalled.
///
/// `code` says what kind of failure it was and is what callers match on; `message` is a sentence
/// for a person (what failed, on what path, what to do next). The C function, errno and path are
/// carried as diagnostics and are not part of equality.
public struct ProcessError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure; extend with new static members as the supervisor grows.
    public struct Code: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The executable does not exist (or is not on PATH).
        public static let executableNotFound = Code(rawValue: "executableNotFound")
        /// The executable exists but may not be executed (permissions, not a regular file, bad format).
        public static let executableNotRunnable = Code(rawValue: "executableNotRunnable")
        /// The working directory does not exist or is not a directory.
        public static let workingDirectoryMissing = Code(rawValue: "workingDirectoryMissing")
        /// The working directory exists but may not be entered.
        public static let workingDirectoryNotAccessible = Code(rawValue: "workingDirectoryNotAccessible")
        /// An argument or environment entry contains a NUL byte.
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        /// The system refused a resource (pipes, threads, pidfd, process slots).
        public static let resourceUnavailable = Code(rawValue: "resourceUnavailable")
        /// `posix_spawn` failed for another reason.
        public static let spawnFailed = Code(rawValue: "spawnFailed")
        /// The child's stdin has no reader any more (EPIPE): the child exited or closed it.
        public static let brokenPipe = Code(rawValue: "brokenPipe")
        /// `closeStdin()` was called before this write.
        public static let stdinClosed = Code(rawValue: "stdinClosed")
        /// `write(2)` to the child's stdin failed for another reason.
        public static let writeFailed = Code(rawValue: "writeFailed")
        /// `kill(2)` or `pidfd_send_signal(2)` refused the signal (EPERM, EINVAL).
        public static let signalFailed = Code(rawValue: "signalFailed")

        public static func < (lhs: Code, rhs: Code) -> Bool { lhs.rawValue < rhs.rawValue }
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence for a person: what failed, on what, and what to do next.
    public let message: String
    /// The path involved (executable or working directory), if any. Diagnostic only.
    public let path: String?
    /// The C function that failed, e.g. `posix_spawn`. Diagnostic only.
    public let function: String?
    /// The errno the C function reported. Diagnostic only.
    public let errno: Int32?

    /// Creates an error; `path`, `function` and `errno` are diagnostics, not part of equality.
    public init(_ code: Code, _ message: String, path: String? = nil, function: String? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.function = function
        self.errno = errno
    }

    public static func == (lhs: ProcessError, rhs: ProcessError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public var description: String {
        var text = message
        if let function, let errno { text += " [\(function): \(errnoName(errno))]" }
        return text
    }
}

/// `strerror(errno)` with the number, e.g. `No such file or directory (errno 2)`.
func errnoName(_ number: Int32) -> String {
    "\(String(cString: strerror(number))) (errno \(number))"
}
