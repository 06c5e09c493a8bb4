import CShims
import Glibc

/// Starts `body` on a new detached POSIX thread, outside Swift's cooperative pool.
///
/// This is the one place Nucleic creates a thread. Blocking calls (`read`, `poll`, `accept`,
/// `write`, `waitpid`, libgit2, SQLite) run on such threads so they never starve the pool. The
/// thread is named `name` (truncated to 15 bytes) for `top -H` and debuggers.
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

/// The name of the calling thread as the kernel knows it (at most 15 bytes), e.g. `nucleic-git`.
public func currentThreadName() -> String {
    var buffer = [CChar](repeating: 0, count: 16)
    nucleic_get_thread_name(&buffer)
    return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

private final class ThreadContext: Sendable {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}
