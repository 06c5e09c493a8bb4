import Glibc

/// A FIFO whose consumer blocks until an element arrives: the one hand-off between a dedicated
/// thread and the code that feeds it (stdin writers, executor jobs, waiting for async work from
/// synchronous code).
///
/// `push` never blocks. `pop` blocks the calling thread, so call it only on a thread of its own
/// (``startDetachedThread(name:_:)``) or from synchronous code that may wait, never on the
/// cooperative pool. After `close()` pushes are refused and `pop` returns what is left, then nil.
public final class BlockingQueue<Element> {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let ready = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var items: [Element] = []
    private var head = 0
    private var closed = false

    public init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Timed waits measure on the monotonic clock: a wall-clock jump moves no deadline.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(ready, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(ready)
        pthread_mutex_destroy(mutex)
        ready.deallocate()
        mutex.deallocate()
    }

    /// Appends `element`; returns false (and drops it) when the queue is closed.
    @discardableResult
    public func push(_ element: Element) -> Bool {
        locked {
            guard !closed else { return false }
            items.append(element)
            pthread_cond_signal(ready)
            return true
        }
    }

    /// Appends `element` and closes the queue in one step, so nothing can follow it; returns
    /// false (and drops it) when the queue was already closed.
    @discardableResult
    public func pushLast(_ element: Element) -> Bool {
        locked {
            guard !closed else { return false }
            items.append(element)
            closed = true
            pthread_cond_broadcast(ready)
            return true
        }
    }

    /// Refuses further pushes; consumers drain what is queued, then get nil.
    public func close() {
        locked {
            closed = true
            pthread_cond_broadcast(ready)
        }
    }

    /// Whether `close()` (or `pushLast`) has been called.
    public var isClosed: Bool { locked { closed } }

    /// The next element, waiting for one; nil once the queue is closed and empty.
    public func pop() -> Element? {
        locked {
            while head == items.count && !closed { pthread_cond_wait(ready, mutex) }
            return takeFirst()
        }
    }

    /// The next element, waiting at most `timeout`; nil when none came in time or the queue is
    /// closed and empty.
    public func pop(timeout: Duration) -> Element? {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return locked {
            while head == items.count && !closed {
                if pthread_cond_timedwait(ready, mutex, &deadline) == ETIMEDOUT { break }
            }
            return takeFirst()
        }
    }

    /// Removes the first element; the caller holds the mutex.
    private func takeFirst() -> Element? {
        guard head < items.count else { return nil }
        let element = items[head]
        head += 1
        // Drop consumed slots once they are the larger part, so each element moves O(1) times.
        if head == items.count {
            items.removeAll(keepingCapacity: items.count <= 1024)
            head = 0
        } else if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return element
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}

// @unchecked: `items`, `head` and `closed` are only touched with `mutex` held, and the pthread
// primitives sit at fixed heap addresses for the queue's whole life.
extension BlockingQueue: @unchecked Sendable where Element: Sendable {}

/// Runs async work from synchronous code (a command's `main`) and waits for its result.
///
/// The work runs on Swift's cooperative pool; the calling thread only waits. Never call this
/// from async code: it would block a pool thread until the work, which may need that thread, ends.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let result = BlockingQueue<Result<T, any Error>>()
    Task {
        do { result.push(.success(try await body())) } catch { result.push(.failure(error)) }
    }
    // The queue is never closed, so pop returns only once the task has pushed.
    return result.pop()!
}
