#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// A long-running part of the daemon, run by a `ServiceGroup`.
///
/// `run()` does the service's work and returns when the service is done: after `shutdown()`, or
/// on its own (a listener that failed). Acquiring what the service needs (binding a socket,
/// opening the store) happens before the group runs, in the order the services are listed, so a
/// service that cannot start stops the daemon before anything else runs.
public protocol Service: Sendable {
    /// How the service is named in the group's events and in errors.
    var name: String { get }
    /// Does the work until the service is asked to stop (or its work ends); then returns.
    func run() async throws
    /// Asks `run()` to return: stop taking new work, finish or hand over what is under way. The
    /// group calls it once, and waits for `run()` to return before it stops the next service.
    func shutdown() async
}

/// Runs services side by side and stops them gracefully, once: in reverse order, each one's
/// `run()` returned before the one listed before it is asked to stop (the model is
/// swift-service-lifecycle's `ServiceGroup`).
///
/// The shutdown begins on the first of: one of `signals` (SIGTERM, SIGINT for the daemon),
/// `triggerGracefulShutdown(reason:)`, a service's `run()` returning or throwing on its own, or
/// the cancellation of the task running `run()`.
///
/// ### Invariants
/// - Every service's `shutdown()` is called exactly once, in reverse order, and only after every
///   service listed after it has returned from `run()`.
/// - `run()` returns only after every service has returned; it rethrows the first error a
///   service threw.
public actor ServiceGroup {
    /// What the group did, in order (for logs and tests).
    public enum Event: Sendable, Equatable {
        /// The graceful shutdown began, and why (`SIGTERM`, a caller's reason, a service that ended).
        case shutdownBegan(reason: String)
        /// The group asked this service to stop.
        case stopping(String)
        /// This service's `run()` returned (or threw).
        case returned(String)
    }

    private let services: [any Service]
    private let signals: [Int32]
    private let observer: @Sendable (Event) -> Void
    private var shutdownReason: String?
    private var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
    private var returned: [Bool]
    private var returnWaiters: [Int: [CheckedContinuation<Void, Never>]] = [:]
    private var firstError: (any Error)?
    private var started = false

    /// `services` in start order: each may use those before it, and is stopped before them.
    /// `signals` are caught for the lifetime of `run()` (set to be ignored for normal delivery
    /// and watched on a Dispatch source); each begins the shutdown with the signal's name.
    public init(_ services: [any Service], signals: [Int32] = [], observer: @escaping @Sendable (Event) -> Void = { _ in }) {
        self.services = services
        self.signals = signals
        self.observer = observer
        returned = Array(repeating: false, count: services.count)
    }

    /// Runs every service until all have returned; see the type's documentation for when the
    /// shutdown begins. Call once.
    public func run() async throws {
        precondition(!started, "a ServiceGroup runs once")
        started = true
        let watcher = SignalWatcher(signals) { [weak self] number in
            Task { await self?.triggerGracefulShutdown(reason: SignalWatcher.name(number)) }
        }
        defer { watcher.cancel() }
        // The services run in a task of their own, so cancelling the caller begins the graceful
        // shutdown instead of cancelling every service in the middle of its work.
        let running = Task { await self.runServices() }
        await withTaskCancellationHandler {
            await running.value
        } onCancel: {
            Task { await self.triggerGracefulShutdown(reason: "cancelled") }
        }
        if let firstError { throw firstError }
    }

    /// Begins the graceful shutdown, unless it has begun already. `prepare` runs first, only
    /// when this call begins it (so what it sets is seen by every `shutdown()`).
    /// - Returns: whether this call began the shutdown.
    @discardableResult
    public func triggerGracefulShutdown(reason: String, prepare: @Sendable () -> Void = {}) -> Bool {
        guard shutdownReason == nil else { return false }
        prepare()
        shutdownReason = reason
        observer(.shutdownBegan(reason: reason))
        for waiter in shutdownWaiters { waiter.resume() }
        shutdownWaiters = []
        return true
    }

    /// Whether the shutdown has begun.
    public var isShuttingDown: Bool { shutdownReason != nil }

    private func runServices() async {
        await withDiscardingTaskGroup { group in
            for (index, service) in services.enumerated() {
                group.addTask {
                    var failure: (any Error)?
                    do { try await service.run() } catch { failure = error }
                    await self.serviceReturned(index, failure)
                }
            }
            group.addTask { await self.shutdownSequence() }
        }
    }

    private func shutdownSequence() async {
        if shutdownReason == nil { await withCheckedContinuation { shutdownWaiters.append($0) } }
        for index in services.indices.reversed() {
            if !returned[index] {
                observer(.stopping(services[index].name))
                await services[index].shutdown()
            }
            await waitReturned(index)
        }
    }

    private func serviceReturned(_ index: Int, _ failure: (any Error)?) {
        returned[index] = true
        if let failure, firstError == nil { firstError = failure }
        observer(.returned(services[index].name))
        for waiter in returnWaiters.removeValue(forKey: index) ?? [] { waiter.resume() }
        if shutdownReason == nil {
            let what = failure.map { "\(services[index].name) failed: \($0)" } ?? "\(services[index].name) ended"
            triggerGracefulShutdown(reason: what)
        }
    }

    private func waitReturned(_ index: Int) async {
        if returned[index] { return }
        await withCheckedContinuation { returnWaiters[index, default: []].append($0) }
    }
}

/// Runs `body` for signals, on a Dispatch queue; the signals are ignored for normal delivery
/// while it watches them.
public final class SignalWatcher: @unchecked Sendable {  // sources are set once in init; cancel() is thread-safe
    private let sources: [any DispatchSourceSignal]

    public init(_ signals: [Int32], _ body: @escaping @Sendable (Int32) -> Void) {
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { body(number) }
            source.resume()
            return source
        }
    }

    public func cancel() { for source in sources { source.cancel() } }

    static func name(_ number: Int32) -> String {
        switch number {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        case SIGHUP: "SIGHUP"
        default: "signal \(number)"
        }
    }
}

/// Opens once; `wait()` returns once it is open.
final class Latch: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
