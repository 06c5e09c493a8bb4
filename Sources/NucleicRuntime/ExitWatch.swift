import Synchronization

/// The exit status of one child once it has been reaped, and the tasks waiting for it.
///
/// The monitor thread calls `finish` exactly once; any number of tasks may wait, before or after.
final class ExitWatch: Sendable {
    private struct State {
        var status: ExitStatus?
        var nextWaiter: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<ExitStatus?, Never>] = [:]
    }

    private let state = Mutex(State())

    /// The status, if the child has been reaped.
    var status: ExitStatus? { state.withLock { $0.status } }

    /// Records the status and wakes every waiter. Later calls are ignored.
    func finish(_ status: ExitStatus) {
        let waiters = state.withLock { state -> [CheckedContinuation<ExitStatus?, Never>] in
            guard state.status == nil else { return [] }
            state.status = status
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: status) }
    }

    /// Waits for the status, ignoring task cancellation.
    func wait() async -> ExitStatus {
        // A continuation registered without a cancellation handler is only resumed by `finish`.
        await register(cancellable: false)!
    }

    /// Waits for the status; returns nil as soon as the task is cancelled.
    func waitUnlessCancelled() async -> ExitStatus? {
        await register(cancellable: true)
    }

    private func register(cancellable: Bool) async -> ExitStatus? {
        if let status { return status }
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                state.withLock { state in
                    if let status = state.status {
                        continuation.resume(returning: status)
                    } else if cancellable && Task.isCancelled {
                        // The handler below may already have run and found nothing to remove.
                        continuation.resume(returning: nil)
                    } else {
                        state.waiters[id] = continuation
                    }
                }
            }
        } onCancel: {
            guard cancellable else { return }
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }
}
