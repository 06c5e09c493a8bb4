import Glibc

// Nested, not top-level: Swift Testing exports its own `ExitStatus`, and every test file that
// imports both modules would otherwise have to qualify the name.
typealias ExitStatus = ChildProcess.ExitStatus

extension ChildProcess {
    /// How a child process ended: its exit code, or the signal that killed it.
    ///
    /// An expected outcome, not an error: a non-zero code or a signal is a value to report.
    public enum ExitStatus: Sendable, Hashable, CustomStringConvertible {
        /// The process called `exit(code)` (0–255). `-1` means another reaper in this process
        /// (`waitpid(-1)`, or SIGCHLD set to SIG_IGN) took the status first: it is unknown.
        case exited(Int32)
        /// The process was killed by this signal (e.g. `SIGTERM` = 15).
        case signaled(Int32)

        /// True for `exited(0)`.
        public var isSuccess: Bool { self == .exited(0) }

        public var description: String {
            switch self {
            case .exited(let code): return "exited with code \(code)"
            case .signaled(let signal):
                if let name = signalName(signal) { return "killed by signal \(signal) (\(name))" }
                return "killed by signal \(signal)"
            }
        }
    }
}

/// The conventional name of the common signals, e.g. `SIGTERM`; nil for others.
func signalName(_ signal: Int32) -> String? {
    switch signal {
    case SIGHUP: "SIGHUP"
    case SIGINT: "SIGINT"
    case SIGQUIT: "SIGQUIT"
    case SIGILL: "SIGILL"
    case SIGABRT: "SIGABRT"
    case SIGBUS: "SIGBUS"
    case SIGFPE: "SIGFPE"
    case SIGKILL: "SIGKILL"
    case SIGUSR1: "SIGUSR1"
    case SIGSEGV: "SIGSEGV"
    case SIGUSR2: "SIGUSR2"
    case SIGPIPE: "SIGPIPE"
    case SIGALRM: "SIGALRM"
    case SIGTERM: "SIGTERM"
    default: nil
    }
}
