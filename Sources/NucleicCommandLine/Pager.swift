#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The pager long outputs go through, as git's: armed with a command line before the command
/// runs, started at the first write to standard output (so a command that only fails never
/// starts one), fed through a pipe that replaces standard output, and waited for at the end.
///
/// Quitting the pager early (q) closes the pipe: the next write fails with EPIPE (SIGPIPE is
/// ignored while a pager runs), and the process then waits for the pager and exits 0, printing
/// nothing, as git does. Ctrl-C (SIGINT, SIGTERM, SIGHUP, SIGQUIT) while the output is still
/// coming ends it and waits for the pager to be quit before the process dies of the signal.
public enum Pager {
    private struct State {
        var armed: String?
        var pid: pid_t = 0
    }

    private static let state = Mutex(State())

    /// The pager's pid for `onSignal`, which may not take a lock. Written once, before the
    /// handlers are installed.
    nonisolated(unsafe) private static var signalPID: pid_t = 0

    /// Ctrl-C (or SIGTERM, SIGHUP, SIGQUIT) while a pager runs: end the output, let the pager keep
    /// the terminal until it is quit, then die of the signal, as git does (the shell must not
    /// take the terminal back from a pager still reading it).
    private static let onSignal: @convention(c) (Int32) -> Void = { number in
        close(STDOUT_FILENO)
        var status: Int32 = 0
        if Pager.signalPID > 0 { while waitpid(Pager.signalPID, &status, 0) < 0, errno == EINTR {} }
        signal(number, SIG_DFL)
        raise(number)
    }

    /// The pager to start at the first write to standard output.
    public static func arm(_ command: String) { state.withLock { $0.armed = command } }

    /// Whether a pager is running.
    public static var isRunning: Bool { state.withLock { $0.pid > 0 } }

    /// Starts the armed pager, if there is one and it has not started; called by `Output` before
    /// it writes to standard output. A pager that cannot start leaves output where it was.
    static func startIfArmed() {
        guard let command = state.withLock({ s -> String? in defer { s.armed = nil }; return s.armed }) else { return }
        let pid = spawn(command)
        state.withLock { $0.pid = pid }
    }

    /// Ends the output: closes the pipe and waits for the pager (the user reading it). Call it
    /// before the process exits.
    public static func finish() {
        let pid = state.withLock { s -> pid_t in defer { s.pid = 0; s.armed = nil }; return s.pid }
        guard pid > 0 else { return }
        // Ctrl-C now is for the pager (less takes it); the output is complete.
        for number in [SIGINT, SIGQUIT] { signal(number, SIG_IGN) }
        close(STDOUT_FILENO)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    }

    /// The pager went away before the output ended: wait for it and exit quietly.
    static func brokenPipe() -> Never {
        finish()
        exit(0)
    }

    /// `sh -c COMMAND` with its standard input the read end of a new pipe whose write end
    /// becomes this process's standard output; LESS=FRX and LV=-c unless set (git's defaults).
    /// Returns the pager's pid, or 0 when it could not start.
    private static func spawn(_ command: String) -> pid_t {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return 0 }
        // (pipe2 is not visible from Glibc here.) Single-threaded at this point: no fork between.
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO)
        // A child spawned from Swift inherits a blocked signal mask: clear it, and give the pager
        // the default SIGPIPE and SIGINT (less handles its own).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        sigaddset(&defaults, SIGINT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var environment: [String] = []
        var index = 0
        while let entry = environ[index] {
            environment.append(String(cString: entry))
            index += 1
        }
        if !environment.contains(where: { $0.hasPrefix("LESS=") }) { environment.append("LESS=FRX") }
        if !environment.contains(where: { $0.hasPrefix("LV=") }) { environment.append("LV=-c") }

        let arguments = ["sh", "-c", command]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/bin/sh", &actions, &attributes, &argv, &envp)
        close(fds[0])
        guard rc == 0 else {
            close(fds[1])
            return 0
        }
        signal(SIGPIPE, SIG_IGN)
        dup2(fds[1], STDOUT_FILENO)
        close(fds[1])
        signalPID = pid
        for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] { signal(number, onSignal) }
        return pid
    }
}
