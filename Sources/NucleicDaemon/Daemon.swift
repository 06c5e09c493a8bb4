#if canImport(Glibc)
import NucleicSystem
import Glibc
#endif
public import NucleicRuntime
import NucleicSockets
import NucleicSync
import Synchronization

/// The Nucleic daemon as a value: owns one home's session host and serves it on the local socket
/// (and, when asked, to paired devices over TCP) until SIGTERM, SIGINT, `stop-daemon` or
/// `stop(reason:killSessions:)`; then stops gracefully, nothing half-written.
///
/// Its parts are `Service`s run by one `ServiceGroup`, in this order (and stopped in reverse):
/// the orphan reaper, the local socket, the session host, the notifier, the remote listener. So
/// at shutdown paired devices go first, then notifications stop, then the agents are stopped (or
/// left to their shims), then the socket stops accepting, and orphans are collected last.
///
/// ### Invariants
/// - The socket's lock is taken before the session host opens: two daemons starting at once on
///   one home never both adopt its shims.
/// - `run()` returns only after every service has returned; what it opened is closed then, also
///   when it fails part-way.
public final class Daemon: Sendable {
    /// `ADDR:PORT` to accept paired devices on (a numeric address).
    public struct ListenAddress: Sendable, Equatable {
        public var host: String
        public var port: Int
        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    public struct Configuration: Sendable {
        public var host: SessionHost.Configuration
        /// Where to accept paired devices; nil serves the local socket only.
        public var listen: ListenAddress?
        /// The version the daemon reports to clients (`welcome`).
        public var hostVersion: String
        /// Whether to make this process a child subreaper and collect orphaned agent children.
        /// A process that runs other work beside the daemon (a test) leaves it off.
        public var reapsOrphans: Bool
        /// The signals that begin a graceful shutdown.
        public var shutdownSignals: [Int32]
        /// Sees what the service group does, in order.
        public var observer: @Sendable (ServiceGroup.Event) -> Void

        public init(host: SessionHost.Configuration, listen: ListenAddress? = nil, hostVersion: String, reapsOrphans: Bool = true,
                    shutdownSignals: [Int32] = Daemon.standardShutdownSignals, observer: @escaping @Sendable (ServiceGroup.Event) -> Void = { _ in }) {
            self.host = host
            self.listen = listen
            self.hostVersion = hostVersion
            self.reapsOrphans = reapsOrphans
            self.shutdownSignals = shutdownSignals
            self.observer = observer
        }
    }

    /// SIGTERM (`kill`, systemd) and SIGINT (Ctrl-C in the foreground).
    public static let standardShutdownSignals: [Int32] = [SIGTERM, SIGINT]

    public let configuration: Configuration
    private let state = Mutex(State())
    private let serving = Latch()
    private let killSessions = SharedFlag()

    private struct State {
        var group: ServiceGroup?
        var socketPath: String?
        /// A stop asked for before the group existed.
        var pendingStop: (reason: String, killSessions: Bool)?
        var ran = false
    }

    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// Runs the daemon until it has stopped. Call once.
    ///
    /// - Throws: what keeps it from starting (another daemon holds the socket, the store cannot
    ///   be opened, the TCP address cannot be bound), or the first error a service threw.
    public func run() async throws {
        let first = state.withLock { state in
            defer { state.ran = true }
            return !state.ran
        }
        precondition(first, "a Daemon runs once")
        defer { serving.open() }
        signal(SIGPIPE, SIG_IGN)
        var reaper: ReaperService?
        if configuration.reapsOrphans {
            // Before any agent starts: orphans of agents become ours, and the reaper collects them.
            do { reaper = ReaperService(reaper: try Reaper.start()) } catch {
                HostLog.warning("\(error); orphaned agent children may be left as zombies")
            }
        }
        var services: [any Service] = reaper.map { [$0] } ?? []
        let home = configuration.host.home
        let host: SessionHost
        let listener: UnixListener
        let socketPath: String
        do {
            // The socket's lock first: it makes this the only daemon of this home, before any
            // shim is adopted (two daemons starting at once must not share the sessions out).
            try Self.makeDirectories(home.run)
            socketPath = try SocketPath.resolve(home: home.path)
            listener = try UnixListener(path: socketPath)
            do { host = try await SessionHost.open(configuration.host) } catch {
                listener.close()
                throw error
            }
        } catch {
            await reaper?.shutdown()
            throw error
        }
        let hostService = SessionHostService(host: host, killSessions: killSessions)
        do {
            let hostKey = try HostKey.loadOrCreate(path: home.path + "/host.key")
            let pairing = Pairing(hostKey: hostKey, store: host.store, hostName: LocalServer.machineName())
            let notifier = Self.makeNotifier(configuration.host, host: host)
            let server = LocalServer(host: host, listener: listener, hostVersion: configuration.hostVersion, pairing: pairing,
                                     notifications: notifier) { [self] kill in
                await stop(reason: "stop-daemon\(kill ? " --kill-sessions" : "")", killSessions: kill)
            }
            services.append(LocalSocketService(server: server))
            services.append(hostService)
            services.append(NotifierDaemonService(notifier: notifier, host: host, presence: server.presence))
            if let listen = configuration.listen {
                let options = RemoteServer.Options()
                let tcp = try TCPListener(host: listen.host, port: listen.port, options: RemoteServer.connectionOptions(options))
                services.append(RemoteService(server: await RemoteServer(server: server, pairing: pairing, listener: tcp, options: options)))
                HostLog.info("listening for paired devices on \(tcp.address)")
            }
        } catch {
            await hostService.shutdown()
            listener.close()
            await reaper?.shutdown()
            throw error
        }

        let observer = configuration.observer
        let killSessions = self.killSessions
        let group = ServiceGroup(services, signals: configuration.shutdownSignals) { event in
            if case .shutdownBegan(let reason) = event {
                HostLog.info("shutting down (\(reason))\(killSessions.value ? "" : "; sessions keep running")")
            }
            observer(event)
        }
        let pending = state.withLock { state in
            state.group = group
            state.socketPath = socketPath
            return state.pendingStop
        }
        if let pending { await stop(reason: pending.reason, killSessions: pending.killSessions) }
        HostLog.info("daemon \(getpid()) serving \(home.path) on \(socketPath)")
        serving.open()
        try await group.run()
        HostLog.info("daemon \(getpid()) stopped")
    }

    /// Begins the graceful shutdown, unless one has begun. Without `killSessions` the agents keep
    /// running under their shims, for the next daemon.
    public func stop(reason: String, killSessions kill: Bool = false) async {
        let group = state.withLock { state -> ServiceGroup? in
            if state.group == nil, state.pendingStop == nil { state.pendingStop = (reason, kill) }
            return state.group
        }
        guard let group else { return }
        let flag = killSessions
        await group.triggerGracefulShutdown(reason: reason) { flag.value = kill }
    }

    /// Waits until the daemon listens on its socket, and returns the socket's path; nil if
    /// `run()` ended without serving.
    public func waitUntilServing() async -> String? {
        await serving.wait()
        return state.withLock { $0.socketPath }
    }

    /// Creates `path` and its missing parents with mode 0700.
    static func makeDirectories(_ path: String) throws(DaemonError) {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw DaemonError(message: "cannot create \(prefix): \(String(cString: strerror(errno)))")
            }
        }
    }
}

/// What keeps the daemon from starting, for a person.
public struct DaemonError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
