#if canImport(Glibc)
import Glibc
#endif
public import NucleicAdapters
import NucleicApprovals
import NucleicGit
public import NucleicProtocol
public import NucleicStore
import NucleicSystem

/// The authority: projects, sessions and their agents, approvals, and what clients hear.
///
/// Clients (the daemon's connections) call it with requests and listen to its bus. It keeps
/// the live `Session` actors, starts at most `maxRunning` agents at once (the rest wait as
/// `queued`), mirrors every session's status and summary into the store, and on start-up
/// brings back sessions a previous host left running as `awaitingInput`.
public actor SessionHost: SessionService {
    public struct Configuration: Sendable {
        public var home: NucleicHome
        /// Backend manifests by name (`claude`, `codex`).
        public var adapters: [String: AdapterManifest]
        /// The `nucleic` executable, for the replay backend (`nucleic replay-agent`).
        public var selfExecutable: String
        public var maxRunning: Int
        /// The environment agents start with (plus their manifest's).
        public var environment: [String: String]
        public var replaySpeed: String
        /// How long an approval may wait for a person before it is denied with a message saying
        /// so; nil (the default) waits forever — never a silent deny.
        public var approvalTimeout: Duration?
        /// How agents are started: under a shim (`nucleic shim`, the default), so they outlive
        /// the daemon; nil spawns them as the daemon's own children.
        public var shim: ShimLaunch?
        /// How long a session's agent may sit idle (its turn over, nothing pending) before the
        /// host ends its process; the next `send` resumes it. Nil: never (IdleTimeout).
        public var idleTimeout: Duration?
        /// The settings file as read at start (NucleicConfig); `reloadConfig` replaces it.
        public var config = NucleicConfig()

        public init(home: NucleicHome, adapters: [String: AdapterManifest], selfExecutable: String, maxRunning: Int = 8,
                    environment: [String: String] = AgentLaunch.hostEnvironment(), replaySpeed: String = "recorded",
                    approvalTimeout: Duration? = nil, orphanGrace: Double? = nil, idleTimeout: Duration? = nil) {
            self.idleTimeout = idleTimeout
            self.shim = ShimLaunch(executable: selfExecutable, orphanGrace: orphanGrace)
            self.home = home
            self.adapters = adapters
            self.selfExecutable = selfExecutable
            self.maxRunning = maxRunning
            self.environment = environment
            self.replaySpeed = replaySpeed
            self.approvalTimeout = approvalTimeout
        }
    }

    /// What the host tells its listeners.
    public typealias Notification = HostNotification

    struct Live {
        var session: Session
        var storage: FileSessionStorage
        var launch: AgentLaunch?
        var options: SessionStartOptions?
    }

    public let configuration: Configuration
    /// The host's store (the daemon's pairing keeps its devices there).
    public nonisolated let store: Store
    /// The rules in force; every live session consults it on each request.
    let ruleBook = RuleBook()
    var live: [SessionID: Live] = [:]
    var queue: [SessionID] = []
    /// The last status of every live session, for the concurrency cap.
    var statuses: [SessionID: SessionStatus] = [:]
    /// Sessions whose diff stat will be recomputed shortly.
    var diffRefreshPending: Set<SessionID> = []
    /// The last seq of each session mirrored into the store (shutdown waits for it to catch up).
    var recordedSeq: [SessionID: Int64] = [:]
    /// The approvals of live sessions put to a person and not yet answered or withdrawn, with
    /// their session: an answer to one goes to its session without a store lookup.
    var awaitingPerson: [ApprovalID: SessionID] = [:]
    var listeners: [Int: AsyncStream<Notification>.Continuation] = [:]
    var nextListener = 0
    /// Journal readers held back until the store has caught up (backpressure).
    var recordedWaiters: [SessionID: [(seq: Int64, continuation: CheckedContinuation<Void, Never>)]] = [:]
    /// When each live session last did anything (an event, an input): what idle reaping reads.
    var lastActivity: [SessionID: ContinuousClock.Instant] = [:]
    /// What holds each session back now (a full disk), as summaries show it (`condition`).
    var conditions: [SessionID: String] = [:]
    /// Sessions whose last store write failed for want of space.
    var storeFull: Set<SessionID> = []
    /// The loop that ends idle agents (SessionHost+Idle.swift), while the host is open.
    var idleReaper: Task<Void, Never>?
    /// The settings file as last read (at start, then on each `reloadConfig`).
    var fileConfig: NucleicConfig

    public init(_ configuration: Configuration, store: Store) {
        self.configuration = configuration
        self.fileConfig = configuration.config
        self.store = store
    }

    /// Opens the store under the configured home (creating folders) and recovers sessions a
    /// previous host left behind.
    public static func open(_ configuration: Configuration) async throws -> SessionHost {
        try makePrivate(configuration.home)
        let store = try await Store.open(path: configuration.home.database)
        let host = SessionHost(configuration, store: store)
        try await host.loadRules()
        try await host.recover()
        await host.startIdleReaper()
        return host
    }

    // MARK: Listening

    public func listen() -> AsyncStream<Notification> {
        let (stream, continuation) = AsyncStream<Notification>.makeStream(bufferingPolicy: .unbounded)
        let key = nextListener
        nextListener += 1
        listeners[key] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.stopListening(key) } }
        return stream
    }

    private func stopListening(_ key: Int) { listeners[key] = nil }

    func notify(_ notification: Notification) {
        for listener in listeners.values { listener.yield(notification) }
    }

    // MARK: Projects

    public func addProject(path: String, name: String?) async throws(SessionError) -> ProjectInfo {
        let repository: RepositoryActor
        do { repository = try await RepositoryActor.open(path) } catch {
            throw SessionError(.notFound, "\(path) is not a git repository (\(error)); run `git init` there first")
        }
        let root: String
        let branch: String?
        do {
            root = try await repository.workdir ?? path
            branch = try await repository.currentBranch
        } catch { throw SessionError(.internalError, "reading \(path): \(error)") }
        guard let branch else {
            throw SessionError(.conflict, "\(root) has a detached HEAD; check out the branch sessions should start from, then add it again")
        }
        let projectName = name ?? Naming.slug(String(root.split(separator: "/").last ?? "project"))
        let record = ProjectRecord(name: projectName, path: root, baseBranch: branch)
        do {
            if let existing = try await store.projects().first(where: { Self.samePath($0.path, root) }) {
                throw SessionError(.conflict, "\(root) is already the project \(existing.name); `nucleic project rm \(existing.name)` first to add it again")
            }
            if let existing = try await store.project(named: projectName) {
                throw SessionError(.conflict, "a project named \(projectName) already exists (\(existing.path)); choose another with --name")
            }
            try await store.insert(record)
        } catch let error as SessionError { throw error } catch { throw SessionError(.internalError, "\(error)") }
        return Self.info(record)
    }

    /// Unregisters a project that has no sessions left (archived ones included: their history
    /// names it); its project rules go with it.
    public func removeProject(_ reference: String) async throws(SessionError) -> ProjectInfo {
        let record = try await project(reference)
        let sessions: [SessionRecord]
        do { sessions = try await store.sessions(matching: SessionFilter(projectID: record.id, includeArchived: true)) } catch {
            throw SessionError(.internalError, "\(error)")
        }
        guard sessions.isEmpty else {
            throw SessionError(.conflict, "project \(record.name) still has \(sessions.count) session\(sessions.count == 1 ? "" : "s") (see `nucleic ls --all`); it stays")
        }
        do { try await store.deleteProject(id: record.id) } catch { throw SessionError(.internalError, "\(error)") }
        return Self.info(record)
    }

    /// Two spellings of one folder: equal once trailing slashes go and symbolic links resolve.
    static func samePath(_ a: String, _ b: String) -> Bool {
        func canonical(_ path: String) -> String {
            var trimmed = path
            while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
            guard let resolved = realpath(trimmed, nil) else { return trimmed }
            defer { free(resolved) }
            return String(cString: resolved)
        }
        return canonical(a) == canonical(b)
    }

    public func projects() async throws(SessionError) -> [ProjectInfo] {
        do { return try await store.projects().map(Self.info) } catch { throw SessionError(.internalError, "\(error)") }
    }

    static func info(_ record: ProjectRecord) -> ProjectInfo {
        ProjectInfo(id: record.id, name: record.name, path: record.path, baseBranch: record.baseBranch)
    }

    func project(_ reference: String?) async throws(SessionError) -> ProjectRecord {
        let all: [ProjectRecord]
        do { all = try await store.projects() } catch { throw SessionError(.internalError, "\(error)") }
        guard let reference else {
            if all.count == 1 { return all[0] }
            throw SessionError(all.isEmpty ? .notFound : .ambiguous, all.isEmpty
                ? "no project yet: add one with `nucleic project add PATH`"
                : "there are \(all.count) projects; choose one with --project (\(all.map(\.name).joined(separator: ", ")))")
        }
        if let byName = all.first(where: { $0.name == reference }) { return byName }
        switch Naming.resolve(reference, among: all.map(\.id)) {
        case .one(let id): return all.first { $0.id == id }!
        case .ambiguous: throw SessionError(.ambiguous, "project \(reference) is ambiguous")
        case .none: throw SessionError(.notFound, "no project \(reference) (projects: \(all.map(\.name).joined(separator: ", ")))")
        }
    }
}

extension SessionHost {
    /// Creates the data folder and its folders 0700 and tightens whatever in it others could
    /// reach (files to 0600, folders to 0700: the data folder holds prompts, code and keys),
    /// logging each change. A folder of another user is refused (PrivateFiles).
    static func makePrivate(_ home: NucleicHome) throws(SessionError) {
        do {
            var changed: [PrivateFiles.Tightened] = []
            for folder in [home.path, home.sessions, home.run, home.path + "/worktrees"] {
                if let tightened = try PrivateFiles.ensureFolder(folder) { changed.append(tightened) }
            }
            changed += PrivateFiles.tightenTree(home.path)
            for item in changed { HostLog.warning("made private: \(item)") }
        } catch {
            throw SessionError(.internalError, error.message)
        }
    }
}
