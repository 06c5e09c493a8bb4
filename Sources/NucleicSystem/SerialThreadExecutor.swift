import Glibc
import Synchronization

/// A serial executor with a thread of its own: the one executor for actors whose work blocks.
///
/// libgit2 reads files, hashes and checks out synchronously; SQLite and a session's journal and
/// transcript block on `read`, `write` and `fdatasync`. Doing that on Swift's cooperative pool
/// would starve every other task, so the actors that do it (`Store`, `RepositoryActor`,
/// `Session`) run all their code on this executor's thread, in order. Per-thread C state
/// (`git_error_last()`, `errno`) stays with the call that set it. Several actors may share one
/// executor. The thread is named after the executor and ends when the executor is released.
///
/// ```swift
/// actor Session {
///     nonisolated let executor = SerialThreadExecutor(name: "nucleic-session")
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
/// }
/// ```
public final class SerialThreadExecutor: SerialExecutor {
    private let jobs: BlockingQueue<Work>
    private let thread: ThreadIdentity
    /// What this executor is for; also its thread's name (the kernel keeps 15 bytes).
    public let name: String

    /// Starts the thread.
    public init(name: String) {
        self.name = name
        let jobs = BlockingQueue<Work>()
        let thread = ThreadIdentity()
        self.jobs = jobs
        self.thread = thread
        let rc = startDetachedThread(name: name) {
            thread.set()
            while let work = jobs.pop() { work.run() }
        }
        // Without a thread nothing would ever run: failing here is a broken host, not an error
        // a caller could handle.
        precondition(rc == 0, "SerialThreadExecutor \(name): pthread_create failed (\(rc))")
    }

    /// The queued jobs still run; then the thread ends.
    deinit { jobs.close() }

    public func enqueue(_ job: consuming ExecutorJob) {
        jobs.push(.job(UnownedJob(job), asUnownedSerialExecutor()))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets `assumeIsolated` and the runtime's isolation checks pass for code on the thread.
    public func checkIsolated() {
        precondition(isCurrentThread, "not on the thread of SerialThreadExecutor \(name)")
    }

    /// Whether the caller runs on this executor's thread.
    public var isCurrentThread: Bool { thread.isCurrent }

    /// Queues `body` to run on the thread after everything queued before it; returns at once.
    public func execute(_ body: @escaping @Sendable () -> Void) {
        jobs.push(.closure(body))
    }

    /// Runs `body` on the thread, after the jobs already queued, and waits for it without
    /// blocking a cooperative thread.
    public func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            jobs.push(.closure { continuation.resume(returning: Result { () throws(E) -> T in try body() }) })
        }
        return try result.get()
    }
}

/// One entry of the executor's queue: a job of an actor isolated to it, or a plain closure.
private enum Work: @unchecked Sendable { // UnownedJob/UnownedSerialExecutor are plain references to runtime objects, only ever run on the one thread.
    case job(UnownedJob, UnownedSerialExecutor)
    case closure(@Sendable () -> Void)

    func run() {
        switch self {
        case .job(let job, let executor): job.runSynchronously(on: executor)
        case .closure(let body): body()
        }
    }
}

/// The executor's thread, recorded by the thread itself when it starts.
private final class ThreadIdentity: Sendable {
    private let thread = Mutex<pthread_t?>(nil)

    func set() { thread.withLock { $0 = pthread_self() } }

    var isCurrent: Bool {
        thread.withLock { thread in thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }
}
