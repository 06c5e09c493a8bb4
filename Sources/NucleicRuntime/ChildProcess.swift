import CShims
import Glibc
import NucleicSystem

/// A child process started with `posix_spawn`, in a process group of its own, with pipes for
/// stdin, stdout and stderr.
///
/// Output arrives as raw chunks on `stdout` and `stderr` (split them into lines with a framer);
/// the last 64 KiB of stderr are also kept for error reports (`stderrTail`). `wait()` returns once
/// the child has exited and been reaped; a monitor thread reaps it even if nobody waits and this
/// object is dropped, so no zombie is left behind. Dropping the object closes stdin but does not
/// kill the child: call `terminate(grace:)` for that.
///
/// ### Invariants
/// - The child starts with an empty signal mask and default dispositions (SIGPIPE included), even
///   when spawned from a Swift concurrency thread that blocks signals.
/// - Its process group id is its pid; `signal` and `terminate` reach the whole group, so
///   grandchildren that stay in the group go too.
/// - Every pipe end is closed exactly once, and never while a thread is blocked on it: the
///   child's ends right after spawn, the read ends by the monitor at EOF, stdin by its writer.
/// - The exit status is published after the output the child wrote before exiting.
public final class ChildProcess: Sendable {
    /// How many bytes of stderr `stderrTail` can return.
    public static let stderrTailCapacity = 64 * 1024

    /// The child's process id; also its process group id.
    public let pid: Int32
    /// The path that was executed: absolute when found on PATH, else as given.
    public let executablePath: String
    /// Raw chunks of the child's stdout, in order, ending at EOF.
    ///
    /// Single consumer. Chunks are buffered until consumed, so memory grows with unread output.
    /// EOF comes when every holder of the pipe has closed it, which may be after the exit if a
    /// grandchild inherited it.
    public let stdout: AsyncStream<[UInt8]>
    /// Raw chunks of the child's stderr, in order, ending at EOF. Same rules as `stdout`.
    public let stderr: AsyncStream<[UInt8]>

    let label: String
    private let pidfd: SharedDescriptor
    private let writer: StdinWriter
    private let exitWatch: ExitWatch
    private let stderrBuffer: TailBuffer

    init(
        pid: Int32, executablePath: String, label: String, pidfd: SharedDescriptor,
        stdout: AsyncStream<[UInt8]>, stderr: AsyncStream<[UInt8]>,
        writer: StdinWriter, exitWatch: ExitWatch, stderrBuffer: TailBuffer
    ) {
        self.pid = pid
        self.executablePath = executablePath
        self.label = label
        self.pidfd = pidfd
        self.stdout = stdout
        self.stderr = stderr
        self.writer = writer
        self.exitWatch = exitWatch
        self.stderrBuffer = stderrBuffer
    }

    deinit { writer.close() }

    // MARK: stdin

    /// Writes `bytes` to the child's stdin, after any earlier writes.
    ///
    /// Suspends until the bytes are in the pipe, i.e. while the child is not reading and the pipe
    /// is full. Throws `brokenPipe` if the child has exited or closed its stdin, `stdinClosed`
    /// after `closeStdin()`. Not interrupted by task cancellation.
    public func write(_ bytes: [UInt8]) async throws(ProcessError) {
        try await writer.write(bytes)
    }

    /// Writes `line` and a newline to the child's stdin, as one write.
    public func write(line: String) async throws(ProcessError) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        try await writer.write(bytes)
    }

    /// Closes the child's stdin once the writes already made are done; the child then reads EOF.
    /// Idempotent; does not wait.
    public func closeStdin() {
        writer.close()
    }

    // MARK: exit

    /// The exit status, if the child has exited and been reaped.
    public var exitStatus: ExitStatus? { exitWatch.status }

    /// Waits until the child has exited and returns how. Any number of tasks may wait.
    ///
    /// Ignores task cancellation (a reaped child is the only way out); use `wait(timeout:)` to
    /// bound the wait.
    public func wait() async -> ExitStatus {
        await exitWatch.wait()
    }

    /// Waits at most `timeout` for the child to exit; nil on timeout or task cancellation.
    public func wait(timeout: Duration) async -> ExitStatus? {
        if let status = exitWatch.status { return status }
        let exitWatch = self.exitWatch
        return await withTaskGroup(of: ExitStatus?.self) { group in
            group.addTask { await exitWatch.waitUnlessCancelled() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? exitWatch.status
        }
    }

    // MARK: signals

    /// Sends `signal` to the child's process group (`group: true`) or to the child alone.
    ///
    /// Returns false when there was nothing to signal (the child is reaped, or the group empty).
    /// The lone child is signalled through its pidfd, so a recycled pid is never hit. A group
    /// outlives its leader while members remain; once it is empty and the pid counter wraps, its
    /// id can name another group, so do not signal a finished process's group long afterwards.
    @discardableResult
    public func signal(_ signal: Int32, group: Bool = true) throws(ProcessError) -> Bool {
        let rc: Int32
        let function: String
        if group {
            rc = Glibc.kill(-pid, signal) == 0 ? 0 : -errno
            function = "kill"
        } else {
            rc = nucleic_pidfd_send_signal(pidfd.raw, signal)
            function = "pidfd_send_signal"
        }
        if rc == 0 { return true }
        if rc == -ESRCH { return false }
        let what = group ? "process group \(pid) of \(label)" : label
        throw ProcessError(
            .signalFailed,
            "cannot send signal \(signal)\(signalName(signal).map { " (\($0))" } ?? "") to \(what): \(errnoName(-rc))",
            function: function, errno: -rc
        )
    }

    /// Stops the child and its process group: SIGINT, then SIGTERM, then SIGKILL, each after
    /// `grace` has passed with some member of the group still running. Returns the child's status.
    ///
    /// Waiting is on the whole group, not just the child: a grandchild that ignores SIGINT (as
    /// shells make background jobs do) gets SIGTERM even if the child itself died at once.
    /// Cancelling the task skips the remaining grace periods and goes straight to SIGKILL.
    @discardableResult
    public func terminate(grace: Duration = .seconds(5)) async -> ExitStatus {
        // The group's other members died too; as orphans they are the reaper's to collect.
        defer { Reaper.nudge() }
        for signal in [SIGINT, SIGTERM] {
            _ = try? self.signal(signal, group: true)
            if await groupEnds(within: grace) { return await wait() }
        }
        _ = try? signal(SIGKILL, group: true)
        return await wait()
    }

    /// Waits until the child is reaped and no member of its group is running, at most `grace`.
    private func groupEnds(within grace: Duration) async -> Bool {
        let deadline = ContinuousClock.now + grace
        guard await wait(timeout: grace) != nil else { return false }
        // No event says "the group is empty": poll /proc, briefly, only during teardown.
        while ProcessGroup.hasLiveMembers(pid) {
            guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    // MARK: stderr tail

    /// The last `maxBytes` bytes of stderr read so far (at most `stderrTailCapacity`), as text.
    ///
    /// Kept whether or not `stderr` is consumed. Complete up to the exit once `wait()` has
    /// returned. Invalid UTF-8 becomes U+FFFD; a character cut by the window is dropped.
    public func stderrTail(maxBytes: Int = 4096) -> String {
        var bytes = stderrBuffer.suffix(maxBytes)[...]
        // Drop the continuation bytes (10xxxxxx, at most 3) of a character cut by the window.
        for _ in 0..<3 {
            guard let first = bytes.first, first & 0xC0 == 0x80 else { break }
            bytes = bytes.dropFirst()
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
