public import NucleicProtocol
public import NucleicWire

/// The client's link to its paired host: connects (IK with the pinned host key), says hello,
/// keeps every open session subscribed across drops, and feeds what arrives through
/// `SessionReducer` into `state`.
///
/// ### Invariants
/// - Reconnects by itself after any drop, with exponential backoff and jitter (`Backoff`), until
///   `stop()`, or until the host says this device is unknown (`unauthorized`) or speaks another
///   protocol version. A successful welcome resets the backoff.
/// - After a reconnect every open session is resubscribed from its cursor (`sinceSeq`): events
///   are applied once per (session, seq) — duplicates are dropped — so the state equals that of a
///   client that never dropped.
/// - No optimistic actions: an answer or input is sent only on a live channel, reports failure if
///   the channel drops before the host answers, and is never queued to send later.
public actor Connection {
    /// How a session's subscription starts when it has no cursor yet.
    public enum Start: Sendable, Hashable {
        /// A cold subscribe: the host's snapshot (summary, recent events, pending approvals).
        case snapshot
        /// Every event from seq 1 (`sinceSeq: 0`).
        case beginning
        /// Every event after this seq: a client restarted with a saved cursor (the terminal
        /// client's `watch`), so nothing is missed and nothing shown twice.
        case after(Int64)
    }

    public struct Options: Sendable {
        /// `client` in `hello`.
        public var clientName: String
        public var backoff: Backoff
        /// When set, every non-archived session the host lists is subscribed this way
        /// (`startFor`, when given, may choose another start per session: a saved cursor).
        public var autoSubscribe: (verbosity: ClientMsg.Verbosity, start: Start)?
        public var startFor: (@Sendable (SessionID) -> Start?)?
        /// While live, a `ping` every this many milliseconds; a link on which nothing at all
        /// arrived for two intervals is taken for dead (a half-open TCP connection after a network
        /// change) and replaced. Nil: no heartbeat.
        public var heartbeatMilliseconds: Int64?
        /// Subscriptions say `foreground`: a person has these sessions' view open (`watch`), so the
        /// host does not notify about them meanwhile.
        public var foreground: Bool = false

        public init(clientName: String = "nucleic-remote-kit", backoff: Backoff = Backoff(),
                    autoSubscribe: (verbosity: ClientMsg.Verbosity, start: Start)? = nil,
                    startFor: (@Sendable (SessionID) -> Start?)? = nil, heartbeatMilliseconds: Int64? = 15_000) {
            self.heartbeatMilliseconds = heartbeatMilliseconds
            self.clientName = clientName
            self.backoff = backoff
            self.autoSubscribe = autoSubscribe
            self.startFor = startFor
        }
    }

    enum Reach {
        case paired(identity: NoiseKeyPair, dialer: any Dialer)
        case opener(LinkOpener)
    }

    struct Subscription {
        var verbosity: ClientMsg.Verbosity
        var start: Start
    }

    public let host: PairedHost
    /// How each connection attempt reaches the host: dial the paired host's addresses and run IK
    /// with `identity`, or a link opened some other way (the local daemon's socket).
    let reach: Reach
    let clock: any RemoteClock
    let jitter: @Sendable () -> Double
    public let options: Options

    /// Everything the client shows.
    public internal(set) var state = RemoteState()
    /// Events received again (seq at or below the session's cursor) and dropped.
    public internal(set) var duplicateEventsDropped = 0
    /// Successful welcomes so far (1 after the first connect).
    public internal(set) var connects = 0
    /// The delays waited before reconnect attempts, in order.
    public internal(set) var backoffDelays: [Int64] = []

    var subscriptions: [SessionID: Subscription] = [:]
    var link: (any MessageLink)?
    /// The transport of a connect in progress (closed by `stop()` so a silent host cannot hold it).
    var connecting: (any Transport)?
    var nextRequestID: Int64 = 1
    var waiters: [Int64: CheckedContinuation<HostMsg?, Never>] = [:]
    var catchUp: Set<Int64> = []
    var observers: [Int: AsyncStream<RemoteState>.Continuation] = [:]
    var nextObserver = 0
    var runTask: Task<Void, Never>?
    var stopped = false
    /// When the current link last delivered anything.
    var lastReceived: Timestamp?
    /// Links given up for silence (heartbeat), for tests and diagnostics.
    public internal(set) var silentLinksDropped = 0

    /// - Parameters:
    ///   - jitter: a number in [0, 1) per reconnect attempt (`Backoff`); tests fix it.
    public init(host: PairedHost, identity: NoiseKeyPair, dialer: any Dialer, options: Options = Options(),
                clock: any RemoteClock = SystemClock(), jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.host = host
        self.reach = .paired(identity: identity, dialer: dialer)
        self.options = options
        self.clock = clock
        self.jitter = jitter
    }

    /// A connection whose links `open` makes (the local daemon's Unix socket): the same
    /// reconnects, resubscriptions, reducer and actions as a paired device's, without Noise.
    /// `hostName` names the host until its `welcome` does.
    public init(hostName: String, opening open: @escaping LinkOpener, options: Options = Options(),
                clock: any RemoteClock = SystemClock(), jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.host = PairedHost(hostKey: [], addresses: [], hostName: hostName, deviceID: nil, scope: .control, label: "local")
        self.reach = .opener(open)
        self.options = options
        self.clock = clock
        self.jitter = jitter
    }

    // MARK: - Life

    /// Starts connecting (and reconnecting) in the background.
    public func start() {
        guard runTask == nil, !stopped else { return }
        update(.local(.connection(.reconnecting(asOf: nil, attempt: 0, reason: "connecting"))))
        runTask = Task { await self.run() }
    }

    /// Closes the connection and stops reconnecting; the state keeps the last data, marked stale.
    public func stop() async {
        stopped = true
        let task = runTask
        task?.cancel()
        await link?.close()
        await connecting?.close()
        await task?.value
        update(.local(.connection(.disconnected(asOf: state.connection.isLive ? clock.now() : state.connection.asOf))))
        for (_, c) in observers { c.finish() }
        observers = [:]
    }

    /// The state now, then after every change (only the newest is kept for a slow reader).
    public func updates() -> AsyncStream<RemoteState> {
        let (stream, continuation) = AsyncStream.makeStream(of: RemoteState.self, bufferingPolicy: .bufferingNewest(1))
        let id = nextObserver
        nextObserver += 1
        continuation.yield(state)
        if stopped { continuation.finish() } else { observers[id] = continuation }
        continuation.onTermination = { _ in Task { await self.removeObserver(id) } }
        return stream
    }

    /// Waits until `predicate` holds for the state (or the connection is stopped), and returns it.
    @discardableResult
    public func waitUntil(_ predicate: @Sendable (RemoteState) -> Bool) async -> RemoteState {
        for await s in updates() where predicate(s) { return s }
        return state
    }

    /// A UI-only change (expand a tool row, dismiss the banner).
    public func apply(_ intent: LocalIntent) { update(.local(intent)) }

    func removeObserver(_ id: Int) { observers[id] = nil }

    func update(_ input: RemoteInput) {
        SessionReducer.reduce(&state, input)
        for (_, c) in observers { c.yield(state) }
    }

    // MARK: - Subscriptions

    /// Keeps `sessionID` subscribed from now on (resubscribed after every reconnect).
    public func subscribe(_ sessionID: SessionID, verbosity: ClientMsg.Verbosity = .full, start: Start = .snapshot) async {
        subscriptions[sessionID] = Subscription(verbosity: verbosity, start: start)
        if let link { await sendSubscribe(sessionID, on: link, catchUp: false) }
    }

    public func unsubscribe(_ sessionID: SessionID) async {
        subscriptions[sessionID] = nil
        if let link { try? await link.send(RemoteWire.encode(ClientMsg(.unsubscribe(sessionID: sessionID)))) }
    }

    /// The sessions kept subscribed.
    public var openSessions: Set<SessionID> { Set(subscriptions.keys) }

    /// Asks the host for the session list again.
    public func refreshSessions() async {
        if let link { try? await link.send(RemoteWire.encode(ClientMsg(.listSessions(includeArchived: false), requestID: takeRequestID()))) }
    }

    func sendSubscribe(_ id: SessionID, on link: any MessageLink, catchUp tracked: Bool) async {
        guard let sub = subscriptions[id] else { return }
        let cursor = state.mirror.transcripts[id]?.cursor ?? 0
        let since: Int64?
        switch sub.start {
        case _ where cursor > 0: since = cursor
        case .snapshot: since = nil
        case .beginning: since = 0
        case .after(let seq): since = seq
        }
        let rid = takeRequestID()
        if tracked { catchUp.insert(rid) }
        try? await link.send(RemoteWire.encode(ClientMsg(.subscribe(sessionID: id, sinceSeq: since, verbosity: sub.verbosity, foreground: options.foreground), requestID: rid)))
    }

    func takeRequestID() -> Int64 {
        defer { nextRequestID += 1 }
        return nextRequestID
    }
}
