import Glibc

/// A mutex with a condition variable, for the shim's threads (plain POSIX: the shim runs no
/// Swift concurrency at all, so none of its threads is ever a cooperative one).
final class ShimMonitor: @unchecked Sendable {  // the pthread objects are the synchronisation
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    func locked<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits (the lock held by the caller, inside `locked`) until broadcast or `seconds` pass.
    func wait(seconds: Double? = nil) {
        guard let seconds else {
            pthread_cond_wait(condition, mutex)
            return
        }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let total = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + max(0, seconds)
        var deadline = timespec(tv_sec: Int(total), tv_nsec: Int((total - total.rounded(.down)) * 1e9))
        pthread_cond_timedwait(condition, mutex, &deadline)
    }

    func broadcast() { pthread_cond_broadcast(condition) }

    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
