import Glibc
import NucleicSystem

/// Writes to a child's stdin on a dedicated thread, in order, and closes it exactly once.
///
/// A pipe write blocks while the child is not reading, so writes never run on the cooperative
/// pool. Closing is queued behind the writes already accepted, so the descriptor is never closed
/// while a write is blocked on it; the thread ends after the close.
final class StdinWriter: Sendable {
    private enum Job: Sendable {
        case write([UInt8], CheckedContinuation<Result<Void, ProcessError>, Never>)
        case close
    }

    private let fd: Int32
    private let label: String
    /// Closed by `close()` (with the close as its last job): later writes fail with `stdinClosed`.
    private let jobs = BlockingQueue<Job>()

    /// Takes ownership of `fd` (the parent's write end of the child's stdin pipe).
    /// `label` names the child in error messages, e.g. `process 1234 (claude)`.
    init(fd: Int32, label: String) {
        self.fd = fd
        self.label = label
    }

    /// Starts the writer thread; returns the `pthread_create` error number, or 0.
    func start() -> Int32 {
        startDetachedThread(name: "nucleic-stdin") { self.run() }
    }

    /// Writes all of `bytes`, in order with other writes.
    func write(_ bytes: [UInt8]) async throws(ProcessError) {
        let label = label
        let result = await withCheckedContinuation { continuation in
            if !jobs.push(.write(bytes, continuation)) {
                continuation.resume(returning: .failure(ProcessError(
                    .stdinClosed, "cannot write to the stdin of \(label): stdin was already closed"
                )))
            }
        }
        try result.get()
    }

    /// Closes stdin after the writes already queued. Idempotent; never blocks.
    func close() {
        jobs.pushLast(.close)
    }

    private func run() {
        while let job = jobs.pop() {
            switch job {
            case .write(let bytes, let continuation):
                continuation.resume(returning: writeAll(bytes))
            case .close:
                _ = Glibc.close(fd)
                return
            }
        }
    }

    private func writeAll(_ bytes: [UInt8]) -> Result<Void, ProcessError> {
        guard let (number, offset) = Syscall.writeAll(fd, bytes) else { return .success(()) }
        if number == EPIPE {
            return .failure(ProcessError(
                .brokenPipe,
                "cannot write to the stdin of \(label): the process has exited or closed its stdin "
                    + "(\(offset) of \(bytes.count) bytes written); check its exit status and stderr",
                function: "write", errno: number
            ))
        }
        return .failure(ProcessError(
            .writeFailed,
            "cannot write to the stdin of \(label): \(errnoName(number))",
            function: "write", errno: number
        ))
    }
}
