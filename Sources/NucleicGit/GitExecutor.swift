import Glibc
import Synchronization

/// A serial executor with a thread of its own, for libgit2's blocking calls.
///
/// libgit2 reads files, hashes and checks out synchronously; doing that on Swift's cooperative
/// pool would starve every other task. Actors that use this executor (``RepositoryActor``) run
/// all their code on the one thread, in order, and `git_error_last()` (per-thread in libgit2)
/// stays with the call that set it. Several actors may share one executor. The thread ends when
/// the executor is released.
public final class GitExecutor: SerialExecutor {
    private let queue: JobQueue
    /// What this executor is for, for diagnostics.
    public let name: String

    /// Starts the thread. (`name` is kept for diagnostics; naming the thread itself needs
    /// `pthread_setname_np`, which Glibc's Swift module does not import.)
    public init(name: String = "nucleic-git") {
        self.name = name
        queue = JobQueue()
        let queue = self.queue
        let context = Unmanaged.passRetained(ThreadBody { queue.run() }).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, context)
        // Without a thread nothing would ever run: failing here is a broken host, not an error
        // a caller could handle.
        precondition(rc == 0, "GitExecutor: pthread_create failed (\(rc))")
        pthread_detach(thread)
    }

    deinit { queue.stop() }

    public func enqueue(_ job: consuming ExecutorJob) {
        queue.push(UnownedJob(job), executor: asUnownedSerialExecutor())
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(queue.isCurrentThread, "not on this GitExecutor's thread")
    }
}

/// The jobs waiting for a ``GitExecutor``'s thread: a locked queue plus a counting semaphore.
// @unchecked: the only non-Sendable member is the sem_t pointer, allocated once, never
// reassigned, and a POSIX semaphore is made for use from several threads.
private final class JobQueue: @unchecked Sendable {
    private struct Pending: @unchecked Sendable { // UnownedJob/UnownedSerialExecutor are plain references to runtime objects, only ever run on the one thread.
        let job: UnownedJob
        let executor: UnownedSerialExecutor
    }

    private let state = Mutex<(jobs: [Pending], head: Int, stopped: Bool, thread: pthread_t?)>(([], 0, false, nil))
    private let semaphore: UnsafeMutablePointer<sem_t>

    init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    func push(_ job: UnownedJob, executor: UnownedSerialExecutor) {
        state.withLock { $0.jobs.append(Pending(job: job, executor: executor)) }
        sem_post(semaphore)
    }

    func stop() {
        state.withLock { $0.stopped = true }
        sem_post(semaphore)
    }

    var isCurrentThread: Bool {
        state.withLock { state in state.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// The thread's loop: runs jobs in order until stopped and drained.
    func run() {
        state.withLock { $0.thread = pthread_self() }
        while true {
            while sem_wait(semaphore) != 0 && errno == EINTR {}
            let next: Pending? = state.withLock { state in
                guard state.head < state.jobs.count else { return nil }
                let job = state.jobs[state.head]
                state.head += 1
                if state.head > 64 && state.head * 2 > state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return job
            }
            if let next {
                next.job.runSynchronously(on: next.executor)
            } else if state.withLock({ $0.stopped }) {
                return
            }
        }
    }
}

private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
