import CShims
import Glibc
import Synchronization
import NucleicSystem

/// Listens on the daemon's Unix socket and hands out one `LocalConnection` per client.
///
/// Setting up (all in `init`):
/// 1. the path must fit in `sun_path`; its folder is created with mode 0700 if missing, and must
///    be ours and writable by nobody else;
/// 2. `<path>.lock` is locked (`flock`, held until `close()`): if another listener holds it, a
///    daemon is running and `init` throws `alreadyRunning`. The lock makes "check for a stale
///    socket, then replace it" safe against a second daemon starting at the same moment;
/// 3. if something is at the path: not a socket → `notASocket`, left alone; a socket that
///    answers a connect → `alreadyRunning`; a socket nobody answers → stale, unlinked;
/// 4. bind, `chmod 0600`, then listen: until `listen` a connect is refused, so nobody can connect
///    while the socket still has the umask's mode.
///
/// Accepting runs on a dedicated thread polling the socket and a wake-up pipe, so `close()` never
/// leaves it blocked. The daemon should accept only peers whose `peer.uid` is its own.
///
/// ### Invariants
/// - The socket file is mode 0600 in a folder that only its owner can write to.
/// - `close()` unlinks the socket file only if it is still the one this listener bound (same
///   device and inode), so it never removes a successor's socket.
/// - Only the accept thread closes the listening descriptor, after its last `accept`.
/// - `connections` finishes only after the accept thread has closed the listening socket; it is
///   the accept thread's last act.
public final class UnixListener: Sendable, CustomStringConvertible {
    /// The socket's path.
    public let path: String
    /// The limits every accepted connection gets.
    public let options: ConnectionOptions
    /// The accepted connections, in order. Finishes once the listener has stopped accepting
    /// (after `close()`, or after an accept error, see `failure`). Single consumer; cancelling
    /// the task iterating it closes the listener. Connections already accepted stay open.
    public let connections: AsyncStream<LocalConnection>

    private let core: ListenerCore

    /// Binds and listens at `path`; see the type's documentation for the steps and the errors
    /// (`pathTooLong`, `unsafeDirectory`, `alreadyRunning`, `notASocket`, `systemCallFailed`).
    public init(path: String, options: ConnectionOptions = ConnectionOptions()) throws(SocketError) {
        guard SocketPath.fits(path) else {
            throw SocketError(
                .pathTooLong,
                "cannot listen at \(path): a socket path may be at most \(SocketPath.maxLength) bytes; "
                    + "use SocketPath.resolve(home:) to get a shorter one",
                path: path
            )
        }
        try PrivateDirectory.ensure(parentPath(of: path), uid: getuid())
        let lockFD = try Self.lock(path)
        let bound: (fd: Int32, device: UInt64, inode: UInt64)
        let wake: WakePipe
        do throws(SocketError) {
            try Self.removeStaleSocket(path)
            bound = try Self.bindAndListen(path)
            do throws(SocketError) {
                wake = try WakePipe.open()
            } catch {
                _ = Glibc.close(bound.fd)
                _ = unlink(path)
                throw error
            }
        } catch {
            _ = Glibc.close(lockFD)
            throw error
        }

        let (stream, continuation) = AsyncStream.makeStream(of: LocalConnection.self)
        let core = ListenerCore(
            path: path, listenFD: bound.fd, wake: wake, lockFD: lockFD,
            device: bound.device, inode: bound.inode, options: options, continuation: continuation
        )
        continuation.onTermination = { termination in
            if case .cancelled = termination { core.close() }
        }
        let rc = startDetachedThread(name: "nucleic-accept") { core.run() }
        if rc != 0 {
            core.closeWithoutThread()
            throw SocketError.system("start the accept thread for \(path)", "pthread_create", rc, path: path)
        }
        self.path = path
        self.options = options
        self.connections = stream
        self.core = core
    }

    deinit { core.close() }

    /// Stops accepting: unlinks the socket file (if it is still ours), releases the lock, and
    /// wakes the accept thread, which closes the listening socket and finishes `connections`.
    /// Connections already accepted stay open. Idempotent; never blocks.
    public func close() {
        core.close()
    }

    /// Whether `close()` has been called.
    public var isClosed: Bool { core.isClosed }

    /// Why accepting stopped on its own (an unexpected `accept` or `poll` error), if it did.
    public var failure: SocketError? { core.failure }

    /// Serves connections until the listener is closed or the task is cancelled: runs `handler`
    /// for each accepted connection in a child task and, when it returns, closes the connection
    /// after writing what the handler queued (`closeAfterFlush`).
    ///
    /// Shutdown (for a lifecycle that owns this as a long-running part): cancelling the task, or
    /// `close()`, stops accepting; every connection still open is then closed after its queued
    /// replies are written, so handlers see their `frames` end and no reply already decided is
    /// lost; `run` returns once every handler has returned and every connection has ended.
    /// Consumes `connections`: use one or the other.
    public func run(_ handler: @escaping @Sendable (LocalConnection) async -> Void) async {
        let live = LiveConnections()
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                for await connection in connections {
                    live.insert(connection)
                    group.addTask {
                        await handler(connection)
                        connection.closeAfterFlush()
                        _ = await connection.ended()
                        live.remove(connection)
                    }
                }
                live.closeAll()
            }
        } onCancel: {
            core.close()
        }
    }

    public var description: String { "the listener at \(path)" }

    // MARK: setting up

    /// Opens and locks `<path>.lock`; throws `alreadyRunning` if another listener holds it.
    private static func lock(_ path: String) throws(SocketError) -> Int32 {
        let lockPath = path + ".lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd < 0 {
            throw SocketError.system("open the lock file \(lockPath)", "open", errno, path: lockPath)
        }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let number = errno
            if number == EINTR { continue }
            _ = Glibc.close(fd)
            if number == EWOULDBLOCK {
                throw alreadyRunning(path, because: "another process holds \(lockPath)")
            }
            throw SocketError.system("lock \(lockPath)", "flock", number, path: lockPath)
        }
        return fd
    }

    /// Removes a socket file nobody answers on; throws if something else or a live socket is there.
    private static func removeStaleSocket(_ path: String) throws(SocketError) {
        var info = stat()
        if lstat(path, &info) != 0 {
            let number = errno
            if number == ENOENT { return }
            throw SocketError.system("inspect \(path)", "lstat", number, path: path)
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw SocketError(
                .notASocket,
                "refusing to listen at \(path): something that is not a socket is already there; "
                    + "remove it if it is not needed, or choose another NUCLEIC_HOME",
                path: path
            )
        }
        let probe = nucleic_unix_socket(1)
        if probe < 0 { throw SocketError.system("create a socket", "socket", -probe) }
        let rc = nucleic_unix_connect(probe, path)
        _ = Glibc.close(probe)
        switch -rc {
        case 0, EAGAIN, EINPROGRESS:
            // Connected, or the backlog is full: a live listener is there.
            throw alreadyRunning(path, because: "something answered on the socket")
        case ECONNREFUSED:
            // Nobody listens: the socket of a daemon that died without cleaning up.
            if unlink(path) != 0, errno != ENOENT {
                throw SocketError.system("remove the stale socket \(path)", "unlink", errno, path: path)
            }
        case ENOENT:
            return
        default:
            throw SocketError.system("check whether a daemon is listening at \(path)", "connect", -rc, path: path)
        }
    }

    private static func alreadyRunning(_ path: String, because reason: String) -> SocketError {
        SocketError(
            .alreadyRunning,
            "a daemon is already running at \(path) (\(reason)); stop it first (`nucleic stop-daemon`) "
                + "or use another NUCLEIC_HOME",
            path: path
        )
    }

    /// Creates the socket, binds it, makes the file 0600, listens. Returns the descriptor and the
    /// file's identity.
    private static func bindAndListen(_ path: String) throws(SocketError) -> (fd: Int32, device: UInt64, inode: UInt64) {
        let fd = nucleic_unix_socket(1)
        if fd < 0 { throw SocketError.system("create a socket", "socket", -fd) }
        var bound = false
        func fail(_ error: SocketError) -> SocketError {
            _ = Glibc.close(fd)
            if bound { _ = unlink(path) }
            return error
        }
        let rc = nucleic_unix_bind(fd, path)
        if rc == -EADDRINUSE {
            throw fail(alreadyRunning(path, because: "another process bound the socket at the same moment"))
        }
        if rc != 0 { throw fail(SocketError.system("bind a socket to \(path)", "bind", -rc, path: path)) }
        bound = true
        // Before listen(): until then every connect is refused, whatever the file's mode.
        if chmod(path, 0o600) != 0 {
            throw fail(SocketError.system("make \(path) private", "chmod", errno, path: path))
        }
        var info = stat()
        if lstat(path, &info) != 0 {
            throw fail(SocketError.system("inspect \(path)", "lstat", errno, path: path))
        }
        if listen(fd, SOMAXCONN) != 0 {
            throw fail(SocketError.system("listen at \(path)", "listen", errno, path: path))
        }
        return (fd, UInt64(info.st_dev), UInt64(info.st_ino))
    }
}

/// The accept thread and what `close()` needs, shared between the listener and its thread.
final class ListenerCore: Sendable {
    private struct State {
        var closing = false
        /// Set by the thread under the lock before it closes its descriptors: no poke after it.
        var threadDone = false
        var failure: SocketError?
    }

    let path: String
    let listenFD: Int32
    let wake: WakePipe
    let lockFD: Int32
    let device: UInt64
    let inode: UInt64
    let options: ConnectionOptions
    let continuation: AsyncStream<LocalConnection>.Continuation
    private let state = Mutex(State())

    init(
        path: String, listenFD: Int32, wake: WakePipe, lockFD: Int32, device: UInt64, inode: UInt64,
        options: ConnectionOptions, continuation: AsyncStream<LocalConnection>.Continuation
    ) {
        self.path = path
        self.listenFD = listenFD
        self.wake = wake
        self.lockFD = lockFD
        self.device = device
        self.inode = inode
        self.options = options
        self.continuation = continuation
    }

    var isClosed: Bool { state.withLock { $0.closing } }
    var failure: SocketError? { state.withLock { $0.failure } }

    func close() {
        let first = state.withLock { state -> Bool in
            guard !state.closing else { return false }
            state.closing = true
            if !state.threadDone { wake.poke() }
            return true
        }
        guard first else { return }
        unlinkIfOurs()
        releaseLock()
    }

    /// Undoes `init` when the accept thread could not be started.
    func closeWithoutThread() {
        state.withLock { state in
            state.closing = true
            state.threadDone = true
        }
        unlinkIfOurs()
        releaseLock()
        _ = Glibc.close(listenFD)
        wake.close()
        continuation.finish()
    }

    /// Unlocks before closing: a child spawned by another thread holds a copy of the descriptor
    /// until its exec, and a plain close would leave the lock held by that copy meanwhile (a
    /// listener opened right after then saw "a daemon is already running").
    private func releaseLock() {
        _ = flock(lockFD, LOCK_UN)
        _ = Glibc.close(lockFD)
    }

    private func unlinkIfOurs() {
        var info = stat()
        guard lstat(path, &info) == 0, UInt64(info.st_dev) == device, UInt64(info.st_ino) == inode else { return }
        _ = unlink(path)
    }

    /// The accept loop; returns after closing the listening socket and finishing `connections`.
    func run() {
        while true {
            let stop = state.withLock { state -> Bool in
                guard state.closing || state.failure != nil else { return false }
                state.threadDone = true
                return true
            }
            if stop { break }
            var fds = [
                pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                let number = errno
                if number == EINTR { continue }
                if number == ENOMEM { usleep(10_000); continue }
                fail(SocketError.system("wait for connections at \(path)", "poll", number, path: path))
                continue
            }
            if fds[1].revents != 0 {
                wake.drain()
                continue
            }
            if fds[0].revents & Int16(POLLIN) != 0 {
                acceptReady()
            } else if fds[0].revents != 0 {
                fail(SocketError(
                    .systemCallFailed, "the listening socket at \(path) failed (poll events \(fds[0].revents))",
                    path: path, function: "poll"
                ))
            }
        }
        // `threadDone` is set: nobody pokes the pipe any more.
        _ = Glibc.close(listenFD)
        wake.close()
        continuation.finish()
    }

    /// Accepts the connections waiting (a bounded number per round).
    private func acceptReady() {
        for _ in 0..<64 {
            let fd = nucleic_unix_accept(listenFD)
            if fd >= 0 {
                // A connection whose setup fails (no thread, no pipe) is closed and skipped.
                if let connection = try? LocalConnection.start(fd: fd, options: options, label: { "the connection from \($0)" }) {
                    continuation.yield(connection)
                }
                continue
            }
            switch -fd {
            case EAGAIN, EWOULDBLOCK:
                return
            case EINTR, ECONNABORTED, EPROTO:
                continue
            case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                // Out of descriptors or memory: the client waits in the backlog. Pause instead of
                // spinning on a socket that stays readable, but wake at once for close().
                var wakeOnly = [pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
                _ = poll(&wakeOnly, 1, 100)
                return
            default:
                fail(SocketError.system("accept connections at \(path)", "accept4", -fd, path: path))
                return
            }
        }
    }

    private func fail(_ error: SocketError) {
        state.withLock { state in
            if state.failure == nil { state.failure = error }
        }
    }
}

/// The connections `UnixListener.run` is serving, so shutdown can close them.
private final class LiveConnections: Sendable {
    private let connections = Mutex<[ObjectIdentifier: LocalConnection]>([:])

    func insert(_ connection: LocalConnection) {
        connections.withLock { $0[ObjectIdentifier(connection)] = connection }
    }

    func remove(_ connection: LocalConnection) {
        _ = connections.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    /// Closes every live connection once its queued replies are written.
    func closeAll() {
        let all = connections.withLock { Array($0.values) }
        for connection in all { connection.closeAfterFlush() }
    }
}
