import Glibc

/// Writes to a child's stdin on a dedicated thread, in order, and closes it exactly once.
///
/// A pipe write blocks while the child is not reading, so writes never run on the cooperative
/// pool. Closing is queued behind the writes already accepted, so the descriptor is never closed
/// while a write is blocked on it; the thread ends after the close.
final class StdinWriter: @unchecked Sendable {
    // @unchecked: `jobs` and `closing` are only touched with `mutex` held, and the pthread
    // primitives sit at fixed heap addresses for the object's whole life.

    private enum Job {
        case write([UInt8], CheckedContinuation<Result<Void, ProcessError>, Never>)
        case close
    }

    private let fd: Int32
    private let label: String
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [Job] = []
    /// Set once `close()` has been queued: later writes fail with `stdinClosed`.
    private var closing = false

    /// Takes ownership of `fd` (the parent's write end of the child's stdin pipe).
    /// `label` names the child in error messages, e.g. `process 1234 (claude)`.
    init(fd: Int32, label: String) {
        self.fd = fd
        self.label = label
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(wake, nil)
    }

    deinit {
        pthread_cond_destroy(wake)
        pthread_mutex_destroy(mutex)
        wake.deallocate()
        mutex.deallocate()
    }

    /// Starts the writer thread; returns the `pthread_create` error number, or 0.
    func start() -> Int32 {
        startDetachedThread(name: "nucleic-stdin") { self.run() }
    }

    /// Writes all of `bytes`, in order with other writes.
    func write(_ bytes: [UInt8]) async throws(ProcessError) {
        let result = await withCheckedContinuation { continuation in
            let accepted = locked { () -> Bool in
                guard !closing else { return false }
                jobs.append(.write(bytes, continuation))
                pthread_cond_signal(wake)
                return true
            }
            if !accepted {
                continuation.resume(returning: .failure(ProcessError(
                    .stdinClosed, "cannot write to the stdin of \(label): stdin was already closed"
                )))
            }
        }
        try result.get()
    }

    /// Closes stdin after the writes already queued. Idempotent; never blocks.
    func close() {
        locked {
            guard !closing else { return }
            closing = true
            jobs.append(.close)
            pthread_cond_signal(wake)
        }
    }

    private func run() {
        while true {
            let job = locked { () -> Job in
                while jobs.isEmpty { pthread_cond_wait(wake, mutex) }
                return jobs.removeFirst()
            }
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
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written >= 0 {
                offset += written
                continue
            }
            let number = errno
            if number == EINTR { continue }
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
        return .success(())
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
