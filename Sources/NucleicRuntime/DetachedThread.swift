import CShims
import Glibc

/// Starts `body` on a new detached POSIX thread, outside Swift's cooperative pool.
///
/// Blocking calls (`read`, `poll`, `accept`, `write`, `waitpid`) run on such threads so they never starve
/// the pool. The thread is named `name` (truncated to 15 bytes) for `top -H` and debuggers.
/// Returns the `pthread_create` error number, or 0.
public func startDetachedThread(name: String, _ body: @escaping @Sendable () -> Void) -> Int32 {
    let context = Unmanaged.passRetained(ThreadContext(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { raw in
        let context = Unmanaged<ThreadContext>.fromOpaque(raw!).takeRetainedValue()
        nucleic_set_thread_name(context.name)
        context.body()
        return nil
    }, context)
    if rc != 0 {
        Unmanaged<ThreadContext>.fromOpaque(context).release()
        return rc
    }
    pthread_detach(thread)
    return 0
}

private final class ThreadContext: Sendable {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}
