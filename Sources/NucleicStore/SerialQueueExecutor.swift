import Dispatch

/// A serial executor backed by one Dispatch queue: an actor that uses it runs every job there,
/// one at a time, off Swift's cooperative pool.
///
/// `Store` uses one so its blocking SQLite calls never occupy a cooperative thread; an actor that
/// owns a session's `Transcript` and `RawJournal` (whose appends block on `write` and
/// `fdatasync`) can use one the same way:
///
/// ```swift
/// actor Session {
///     nonisolated let executor = SerialQueueExecutor(label: "nucleic.session")
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
/// }
/// ```
public final class SerialQueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets `assumeIsolated` and the runtime's isolation checks pass for code already on the queue.
    public func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }

    /// Runs `body` on the queue and waits for it without blocking a cooperative thread.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T) async throws(StoreError) -> T {
        let result: Result<T, StoreError> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(StoreError) -> T in try body() })
            }
        }
        return try result.get()
    }
}
