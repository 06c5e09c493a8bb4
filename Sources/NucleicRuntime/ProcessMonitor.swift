import CShims
import Glibc
import NucleicSystem

/// Reads a child's stdout and stderr and reaps it when it exits, on one dedicated thread.
///
/// One `poll` loop serves the three descriptors, so blocking never touches the cooperative pool.
/// The loop owns the two read ends and closes each at its EOF; it ends once both are closed and
/// the child is reaped. A grandchild that keeps a pipe open delays only the EOF, never the exit.
///
/// ### Invariants
/// - The exit status is published only after the output the child wrote before exiting has been
///   yielded and appended to the stderr tail.
/// - Output is read whether or not anyone consumes the streams, so the child never blocks on a
///   full pipe; unconsumed chunks are buffered by the streams.
struct ProcessMonitor: Sendable {
    let pid: Int32
    let pidfd: SharedDescriptor
    let stdoutFD: Int32
    let stderrFD: Int32
    let stdout: AsyncStream<[UInt8]>.Continuation
    let stderr: AsyncStream<[UInt8]>.Continuation
    let stderrTail: TailBuffer
    let exit: ExitWatch

    /// Starts the monitor thread; returns the `pthread_create` error number, or 0.
    func start() -> Int32 {
        startDetachedThread(name: "nucleic-io") { run() }
    }

    private func run() {
        var pipes = [
            Pipe(fd: stdoutFD, continuation: stdout, tail: nil),
            Pipe(fd: stderrFD, continuation: stderr, tail: stderrTail),
        ]
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var reaped = false
        while pipes.contains(where: { $0.fd >= 0 }) || !reaped {
            // poll skips entries with a negative descriptor.
            var fds = [
                pollfd(fd: pipes[0].fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: pipes[1].fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: reaped ? -1 : pidfd.raw, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                let number = errno
                if number == EINTR { continue }
                // ENOMEM is transient; anything else (EFAULT, EINVAL) is a bug in this loop.
                if number == ENOMEM { usleep(10_000); continue }
                fatalError("poll on the pipes of process \(pid) failed: \(errnoName(number))")
            }
            for index in pipes.indices where fds[index].revents != 0 {
                pipes[index].readOnce(into: &buffer)
            }
            if fds[2].revents != 0 {
                drainReadyOutput(&pipes, buffer: &buffer)
                let status = reap()
                ChildProcess.Registry.release(pid)
                exit.finish(status)
                reaped = true
                // Its children that outlive it are ours now (we are a subreaper): look soon.
                Reaper.nudge()
            }
        }
    }

    /// Reads what is already in the pipes (all the child wrote before it exited), bounded so a
    /// grandchild that keeps writing cannot hold the exit status back.
    private func drainReadyOutput(_ pipes: inout [Pipe], buffer: inout [UInt8]) {
        for _ in 0..<64 {
            var fds = pipes.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), 0)
            if ready == 0 { return }
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            for index in pipes.indices where fds[index].revents != 0 {
                pipes[index].readOnce(into: &buffer)
            }
        }
    }

    private func reap() -> ExitStatus {
        var signaled: Int32 = 0
        var value: Int32 = 0
        while true {
            let rc = nucleic_reap_pidfd(pidfd.raw, &signaled, &value)
            if rc == 0 { return signaled != 0 ? .signaled(value) : .exited(value) }
            if rc == -EINTR { continue }
            // ECHILD: another waitpid(-1) in this process (or SIGCHLD set to SIG_IGN) took the
            // status first. There is no zombie left either way.
            return .exited(-1)
        }
    }
}

/// One output pipe of the child as seen by the monitor: its read end and where chunks go.
private struct Pipe {
    var fd: Int32
    let continuation: AsyncStream<[UInt8]>.Continuation
    let tail: TailBuffer?

    /// One `read`: yields a chunk, or at EOF (or a read error) finishes the stream and closes.
    mutating func readOnce(into buffer: inout [UInt8]) {
        guard fd >= 0 else { return }
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if count > 0 {
            let chunk = Array(buffer[0..<count])
            tail?.append(chunk)
            continuation.yield(chunk)
            return
        }
        if count < 0 && (errno == EINTR || errno == EAGAIN) { return }
        continuation.finish()
        _ = Glibc.close(fd)
        fd = -1
    }
}
