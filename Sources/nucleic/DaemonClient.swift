#if canImport(Glibc)
import Glibc
#endif
import CShims
import NucleicProtocol
import NucleicRuntime
import NucleicSync
import NucleicSockets
import NucleicSystem

/// The CLI's connection to the daemon, started on demand.
///
/// Replies are matched to requests by `requestID`; everything else the daemon pushes (events,
/// approvals, session updates) comes out of `pushed`.
actor DaemonClient {
    let connection: LocalConnection
    private var nextRequest: Int64 = 1
    private var waiting: [Int64: CheckedContinuation<HostMsg, any Error>] = [:]
    private let pushedContinuation: AsyncStream<HostMsg>.Continuation
    nonisolated let pushed: AsyncStream<HostMsg>
    private var closedReason: String?

    /// Connects to the daemon of this `$NUCLEIC_HOME`, starting it when `start` and none runs.
    static func connect(start: Bool = true) async throws -> DaemonClient {
        let home = NucleicHome.fromEnvironment()
        let path = try SocketPath.resolve(home: home.path)
        // (A `catch where` on the typed SocketError crashes the 6.3 compiler: keep this shape.)
        let attempt = Result { () throws(SocketError) -> LocalConnection in try UnixClient.connect(path: path) }
        let connection: LocalConnection
        switch attempt {
        case .success(let c): connection = c
        case .failure(let error):
            guard error.code == .notRunning, start else { throw CommandError(message: error.message) }
            connection = try await startDaemon(home: home, socket: path)
        }
        let client = DaemonClient(connection: connection)
        await client.listen()
        let welcome = try await client.request(.hello(protocolVersion: LocalServer.protocolVersion, client: "nucleic-cli"))
        guard case .welcome = welcome.body else { throw CommandError(message: "the daemon did not welcome us: \(welcome.type)") }
        return client
    }

    private init(connection: LocalConnection) {
        self.connection = connection
        (pushed, pushedContinuation) = AsyncStream<HostMsg>.makeStream(bufferingPolicy: .unbounded)
    }

    private func listen() {
        let frames = connection.frames
        Task {
            for await frame in frames {
                let message: HostMsg
                do { message = try WireMessages.decodeHost(frame) } catch {
                    HostLog.warning("the daemon sent a message this CLI cannot read: \(error)")
                    continue
                }
                self.deliver(message)
            }
            self.closed(self.connection.endReason.map { "\($0)" } ?? "the daemon closed the connection")
        }
    }

    private func deliver(_ message: HostMsg) {
        if let id = message.requestID, let continuation = waiting.removeValue(forKey: id) {
            continuation.resume(returning: message)
        } else {
            // An error answering no request says why the daemon is about to close.
            if case .error(_, let text, nil) = message.body { refusal = text }
            pushedContinuation.yield(message)
        }
    }

    /// The last error the daemon sent answering no request, if any.
    private var refusal: String?

    private func closed(_ reason: String) {
        closedReason = reason
        let error = refusal.map { CommandError(message: "the daemon refused: \($0)") } ?? CommandError(message: "lost the daemon: \(reason)")
        for continuation in waiting.values { continuation.resume(throwing: error) }
        waiting = [:]
        pushedContinuation.finish()
    }

    /// Sends a request and waits for its reply; an `error` reply is thrown as a CommandError.
    func request(_ body: ClientMsg.Body) async throws -> HostMsg {
        if let closedReason { throw CommandError(message: "lost the daemon: \(closedReason)") }
        let id = nextRequest
        nextRequest += 1
        let bytes = WireMessages.encode(ClientMsg(body, requestID: id))
        let reply = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HostMsg, any Error>) in
            waiting[id] = continuation
            do { try connection.enqueue(bytes) } catch {
                waiting[id] = nil
                continuation.resume(throwing: CommandError(message: "cannot talk to the daemon: \(error)"))
            }
        }
        if case .error(let code, let message, _) = reply.body {
            throw CommandError(message: message, status: code == .notFound || code == .ambiguous ? 2 : 1, code: code.rawValue)
        }
        return reply
    }

    func close() { connection.close() }

    /// Starts `nucleic serve` in its own session, logging to `run/daemon.log`, and waits for its socket.
    static func startDaemon(home: NucleicHome, socket: String) async throws -> LocalConnection {
        try makeDirectories(home.run)
        let log = open(home.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard log >= 0 else { throw CommandError(message: "cannot open \(home.log): \(String(cString: strerror(errno)))") }
        defer { Glibc.close(log) }
        let argv = [SelfExecutable.path, "serve"]
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        let pid = nucleic_spawn(SelfExecutable.path, &cArgs, nil, "/", -1, log, log, Int32(NUCLEIC_SPAWN_NEW_SESSION))
        guard pid > 0 else { throw CommandError(message: "cannot start the daemon: \(String(cString: strerror(-pid)))") }
        // The daemon is not our child to wait for in the end; reap it if it dies early. One that
        // exits may have lost the race to another CLI's daemon, which is about to listen: keep
        // trying to connect a little longer before saying it failed.
        var exitedAt: Int?
        for attempt in 0..<200 {
            if let connection = try? UnixClient.connect(path: socket) {
                // Another CLI's daemon won the start: ours exits at once ("already running").
                // Reap it, or it stays a zombie of whoever inherits it when we exit.
                if connection.peer.pid != pid && connection.peer.pid != 0 { await reapLoser(pid) }
                return connection
            }
            var status: Int32 = 0
            if exitedAt == nil, waitpid(pid, &status, WNOHANG) == pid { exitedAt = attempt }
            if let exitedAt, attempt - exitedAt >= 20 {
                throw CommandError(message: "the daemon exited at start; see \(home.log)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw CommandError(message: "the daemon did not open \(socket) within 10 s; see \(home.log)")
    }

    /// Waits (at most 10 s) for a daemon we started that lost the start race to exit, and reaps it.
    static func reapLoser(_ pid: Int32) async {
        for _ in 0..<500 {
            var status: Int32 = 0
            let rc = waitpid(pid, &status, WNOHANG)
            if rc == pid || (rc < 0 && errno != EINTR) { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    static func makeDirectories(_ path: String) throws {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw CommandError(message: "cannot create \(prefix): \(String(cString: strerror(errno)))")
            }
        }
    }
}
