import CShims
import Glibc
import NucleicSystem

/// A non-blocking pipe that wakes a thread blocked in `poll`: the thread polls `readEnd`, other
/// threads `poke()` it.
///
/// Only the polling thread closes the pipe, and only through `closeAfterLastPoke`, which the owner
/// calls with its state lock held after marking itself done; pokes are made with the same lock
/// held and skipped once done. So no poke ever writes to a descriptor number that was closed and
/// reused (the fd-reuse pitfall).
struct WakePipe: Sendable {
    let readEnd: Int32
    let writeEnd: Int32

    /// Opens the pipe (both ends O_CLOEXEC | O_NONBLOCK).
    static func open() throws(SocketError) -> WakePipe {
        var fds: [Int32] = [-1, -1]
        let rc = nucleic_pipe_cloexec(&fds, 1)
        if rc != 0 { throw SocketError.system("create a wake-up pipe", "pipe2", -rc) }
        return WakePipe(readEnd: fds[0], writeEnd: fds[1])
    }

    /// Opens the pipe for the thread that will own `fd`; closes `fd` when it cannot.
    static func open(owning fd: Int32) throws(SocketError) -> WakePipe {
        do throws(SocketError) { return try open() } catch {
            _ = Glibc.close(fd)
            throw error
        }
    }

    /// Starts the thread that polls this pipe and owns `fd`, running `body`. When no thread
    /// starts, closes `fd` and the pipe and throws; `what` says what was being started ("start a
    /// thread for …").
    func startThread(name: String, owning fd: Int32, _ what: String, _ body: @escaping @Sendable () -> Void) throws(SocketError) {
        let rc = startDetachedThread(name: name, body)
        if rc != 0 {
            _ = Glibc.close(fd)
            close()
            throw SocketError.system(what, "pthread_create", rc)
        }
    }

    /// Makes `readEnd` readable. A full pipe is already readable, so EAGAIN is fine.
    func poke() {
        var byte: UInt8 = 1
        _ = Glibc.write(writeEnd, &byte, 1)
    }

    /// Empties the pipe (called by the polling thread after `readEnd` polled readable).
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while buffer.withUnsafeMutableBytes({ Glibc.read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Closes both ends; see the type's note on when this is safe.
    func close() {
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
    }
}
