#if canImport(Glibc)
import Glibc
#endif
public import NucleicProtocol
public import NucleicSockets
import NucleicSystem

/// Serves the message set of docs/PROTOCOL.md to a `SessionService` (the daemon's
/// `SessionHost`), whatever the transport: the local socket (every connection from the owner's
/// uid gets the `control` scope) and, through `RemoteServer`, paired devices over Noise (each
/// with its device's scope).
///
/// ### Invariants
/// - Every message is checked against the client's scope before anything happens; a message
///   above it gets `error {code: forbidden}` and changes nothing.
/// - Replies carry the request's `requestID`; pushed messages carry none.
public final class LocalServer: Sendable {
    public static let protocolVersion: Int64 = 1
    public let host: any SessionService
    public let listener: UnixListener
    /// Devices and invites; nil when the daemon has no pairing (tests of the local socket).
    public let pairing: Pairing?
    let hostName: String
    let hostVersion: String
    /// Called when a client asks the daemon to shut down.
    let onShutdown: @Sendable (Bool) async -> Void
    /// The sessions someone looks at (foreground subscriptions over every client).
    public let presence = Presence()
    /// The notifier, for `notifyStatus` and `notifyTest`; nil in a server without one.
    let notifications: (any NotificationControl)?

    public init(host: any SessionService, listener: UnixListener, hostVersion: String, pairing: Pairing? = nil,
                notifications: (any NotificationControl)? = nil, onShutdown: @escaping @Sendable (Bool) async -> Void) {
        self.notifications = notifications
        self.host = host
        self.listener = listener
        self.hostVersion = hostVersion
        self.pairing = pairing
        self.onShutdown = onShutdown
        hostName = Self.machineName()
    }

    public static func machineName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        return String(cString: buffer)
    }

    /// Serves connections until the listener closes.
    public func run() async {
        await listener.run { connection in
            await self.serve(connection)
        }
    }

    func serve(_ connection: LocalConnection) async {
        let sink = LocalSink(connection: connection)
        guard connection.peer.uid == getuid() else {
            // The refusal answers the client's first message (its hello), so a client matching
            // replies by id hears it; one that sends nothing within a second gets it unasked.
            // Returning closes the connection after the reply is written (`UnixListener.run`).
            let first = await Self.firstFrame(connection, within: .seconds(1))
            sink.send(HostMsg(.error(code: .unauthorized, message: "only the user who runs the daemon may use its socket", sessionID: nil),
                              requestID: first.flatMap(WireMessages.requestID(in:))))
            return
        }
        let identity = ClientIdentity(scope: .control, decidedBy: "user:\(Self.login())", label: nil, deviceID: nil)
        await serve(ClientState(sink: sink, identity: identity), messages: connection.frames)
    }

    /// The first frame the peer sends within `limit`, or nil (none in time, or it closed).
    static func firstFrame(_ connection: LocalConnection, within limit: Duration) async -> [UInt8]? {
        await withTaskGroup(of: [UInt8]?.self) { group in
            group.addTask { await connection.frames.first { _ in true } }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Serves one client until `messages` ends: answers each message, and forwards what the host
    /// publishes to the sessions the client subscribed to.
    func serve(_ client: ClientState, messages: AsyncStream<[UInt8]>) async {
        let notifications = await host.listen()
        let forwarder = Task {
            for await notification in notifications { await client.forward(notification, server: self) }
        }
        defer {
            forwarder.cancel()
            Task { await client.stop() }
        }
        for await frame in messages {
            let message: ClientMsg
            do { message = try WireMessages.decodeClient(frame) } catch {
                client.sink.send(HostMsg(.error(code: Self.decodeErrorCode(error), message: error.message, sessionID: nil),
                                         requestID: WireMessages.requestID(in: frame)))
                continue
            }
            await handle(message, client: client)
        }
    }

    static func decodeErrorCode(_ error: ShapeError) -> HostMsg.ErrorCode {
        error.message.contains("unknown type") ? .unknownType : .badMessage
    }

    func handle(_ message: ClientMsg, client: ClientState) async {
        guard message.requiredScope <= client.identity.scope else {
            client.sink.send(HostMsg(.error(
                code: .forbidden,
                message: "\(message.type) needs the \(message.requiredScope.rawValue) scope; this connection has \(client.identity.scope.rawValue)",
                sessionID: nil), requestID: message.requestID))
            return
        }
        if case .subscribe(let id, let since, let verbosity, let foreground) = message.body {
            // The client state sends the reply itself, then what arrived while it was built.
            await client.subscribe(id, since: since, verbosity: verbosity, foreground: foreground,
                                   requestID: message.requestID, server: self)
            return
        }
        let reply: HostMsg.Body
        do {
            reply = try await answer(message, client: client)
        } catch {
            reply = .error(code: error.code, message: error.message, sessionID: nil)
        }
        client.sink.send(HostMsg(reply, requestID: message.requestID))
        if case .shutdown(let killSessions) = message.body, case .ok = reply {
            let onShutdown = self.onShutdown
            Task { await onShutdown(killSessions) }
        }
    }

    func answer(_ message: ClientMsg, client: ClientState) async throws(SessionError) -> HostMsg.Body {
        switch message.body {
        case .hello(let version, _, _):
            guard version == Self.protocolVersion else {
                throw SessionError(.protocolVersion, "this host speaks protocol \(Self.protocolVersion), not \(version)")
            }
            return welcome(client.identity)
        case .listSessions(let includeArchived):
            return .sessionList(try await host.sessions(includeArchived: includeArchived))
        case .subscribe:
            preconditionFailure("subscribe is handled by ClientState")
        case .unsubscribe(let id):
            await client.unsubscribe(id)
            return .ok
        case .approvalRespond(let id, let decision, let denyAlways):
            try await host.respond(id, decision, decidedBy: client.identity.decidedBy, label: client.identity.label, denyAlways: denyAlways)
            return .ok
        case .rules(let request):
            return try await host.rules(request, by: client.identity.decidedBy)
        case .sendInput(let id, let text):
            try await host.sendInput(id, text)
            return .ok
        case .interrupt(let id):
            try await host.interrupt(id)
            return .ok
        case .ping:
            return .pong
        case .addProject(let path, let name):
            return .projectList([try await host.addProject(path: path, name: name)])
        case .removeProject(let reference):
            return .projectList([try await host.removeProject(reference)])
        case .listProjects:
            return .projectList(try await host.projects())
        case .startSession(let request):
            return .sessionCreated(try await host.startSession(request))
        case .listApprovals:
            return .approvalList(try await host.pendingApprovals())
        case .getDiff(let id, let statOnly):
            let (stat, files, patch) = try await host.diff(id, statOnly: statOnly)
            return .diff(sessionID: id, stat: stat, files: files, patch: patch)
        case .discard(let id, let deleteBranch, let force):
            let outcome = try await host.discard(id, deleteBranch: deleteBranch, force: force)
            return .discarded(sessionID: id, branch: outcome.branch, snapshot: outcome.snapshot, branchDeleted: outcome.branchDeleted)
        case .exportFixture(let id):
            return .fixture(sessionID: id, text: try await host.exportFixture(id))
        case .integrate(let request):
            switch try await host.integrate(request) {
            case .integrated(let commit, let fastForward, let paths):
                return .integrated(sessionID: request.sessionID, commit: commit, strategy: request.strategy, fastForward: fastForward, changedPaths: paths)
            case .refused(let reason, let paths, let message):
                return .integrationRefused(sessionID: request.sessionID, reason: reason, paths: paths, message: message)
            case .askedAgent:
                return .ok
            }
        case .overlap(let project):
            return .overlap(try await host.overlap(project: project))
        case .reloadConfig:
            return .config(try await host.reloadConfig())
        case .createInvite(let scope, let label, let addresses):
            return .invite(try await requirePairing().createInvite(scope: scope, label: label, addresses: addresses))
        case .listDevices(let includeRevoked):
            return .deviceList(try await requirePairing().devices(includeRevoked: includeRevoked))
        case .revokeDevice(let reference):
            let revoked = try await requirePairing().revoke(reference)
            // A revoked device is pushed nothing more: its registration goes with it.
            try? await notifications?.unregisterPush(device: revoked.deviceID)
            return .deviceList([revoked])
        case .registerPush(let registration):
            try await requireNotifications().registerPush(device: try requireDevice(client), registration)
            return .ok
        case .unregisterPush:
            try await requireNotifications().unregisterPush(device: try requireDevice(client))
            return .ok
        case .pushInfo:
            return .pushInfo(await try requireNotifications().pushInfo(device: client.identity.deviceID))
        case .notifyStatus:
            return .notifyChannels(await try requireNotifications().channelStatus())
        case .notifyTest(let channel):
            let statuses = await try requireNotifications().test(channel: channel)
            if let channel, !statuses.contains(where: { $0.channel == channel }) {
                throw SessionError(.notFound, "no notification channel '\(channel)'; `nucleic notify ls` lists them")
            }
            return .notifyChannels(statuses)
        case .shutdown:
            // `handle` starts the shutdown once this reply is queued: closing the connections
            // writes what is queued, and nothing queued after the close.
            return .ok
        }
    }

    func welcome(_ identity: ClientIdentity) -> HostMsg.Body {
        .welcome(protocolVersion: Self.protocolVersion, scope: identity.scope, hostName: hostName, hostVersion: hostVersion,
                 deviceID: identity.deviceID)
    }

    func requireNotifications() throws(SessionError) -> any NotificationControl {
        guard let notifications else { throw SessionError(.unsupported, "this daemon sends no notifications") }
        return notifications
    }

    /// The paired device a connection is; push channels belong to devices, not to the local CLI.
    func requireDevice(_ client: ClientState) throws(SessionError) -> DeviceID {
        guard let id = client.identity.deviceID else {
            throw SessionError(.unsupported, "only a paired device registers a push channel (over the Noise channel)")
        }
        return id
    }

    func requirePairing() throws(SessionError) -> Pairing {
        guard let pairing else { throw SessionError(.unsupported, "this daemon keeps no paired devices") }
        return pairing
    }

    static func login() -> String {
        if let name = getenv("USER") { return String(cString: name) }
        return "uid\(getuid())"
    }
}

/// Who a served client is: its scope, and how its answers to approvals are recorded
/// (`decidedBy` `user:<login>` locally, `device:<id>` with the device's label remotely).
public struct ClientIdentity: Sendable, Hashable {
    public var scope: Scope
    public var decidedBy: String
    public var label: String?
    public var deviceID: DeviceID?

    public init(scope: Scope, decidedBy: String, label: String?, deviceID: DeviceID?) {
        self.scope = scope
        self.decidedBy = decidedBy
        self.label = label
        self.deviceID = deviceID
    }
}

/// Where the messages for one served client go: queued without blocking the server; a sink whose
/// transport fails or overflows closes its connection itself.
protocol ClientSink: Sendable {
    /// Sends one message already encoded (`WireMessages.encode`).
    func send(encoded bytes: [UInt8])
    /// Returns once what waits to be written to the client is under `bytes` (or its transport
    /// has ended): a sender of many messages waits here between them.
    func waitUntilQueued(below bytes: Int) async
    /// False once the transport has ended or the sink is closing: nothing sent arrives any more.
    var isOpen: Bool { get }
}

extension ClientSink {
    func send(_ message: HostMsg) { send(encoded: WireMessages.encode(message)) }
}

/// The local socket's sink: one frame per message.
struct LocalSink: ClientSink {
    let connection: LocalConnection

    func send(encoded bytes: [UInt8]) {
        do { try connection.enqueue(bytes) } catch {
            HostLog.warning("closed \(connection): \(error.message)")
            connection.close()
        }
    }

    func waitUntilQueued(below bytes: Int) async {
        await connection.waitUntilQueued(below: bytes)
    }

    var isOpen: Bool { connection.isOpen }
}

/// One connection's subscriptions: which sessions, how verbose, and the last seq delivered, so
/// that a resubscribe from a seq gets every later event exactly once.
actor ClientState {
    struct Subscription {
        var verbosity: ClientMsg.Verbosity
        /// The subscriber is a view the person has open (see `ClientMsg.Body.subscribe`).
        var foreground = false
        var delivered: Int64
        /// `coalesced` only: the delta held back until a boundary or the next 150 ms flush.
        var coalescer = Coalescer()
        /// Live events that arrived while the backlog was being read.
        var held: [SequencedEvent]?
    }

    nonisolated let sink: any ClientSink
    nonisolated let identity: ClientIdentity
    var subscriptions: [SessionID: Subscription] = [:]
    /// Where this client's foreground subscriptions are counted (the server's, set on subscribe).
    var presence: Presence?
    /// The 150 ms flush of coalesced subscriptions, running while one holds a delta.
    var flusher: Task<Void, Never>?
    /// How long a coalesced delta may be held.
    static let coalesceInterval: Duration = .milliseconds(150)

    init(sink: any ClientSink, identity: ClientIdentity) {
        self.sink = sink
        self.identity = identity
    }

    func send(_ message: HostMsg, server: LocalServer) {
        sink.send(message)
    }

    /// Sets or ends the subscription to `id`, counting it in `presence` while it is foreground.
    /// (Every other change to a subscription keeps its foreground flag.)
    private func replaceSubscription(_ id: SessionID, with new: Subscription?) {
        let wasForeground = subscriptions[id]?.foreground == true
        subscriptions[id] = new
        if wasForeground, new?.foreground != true { presence?.release(id) }
        if !wasForeground, new?.foreground == true { presence?.acquire(id) }
    }

    /// Ends the client's subscriptions (its transport has ended).
    func stop() {
        for id in subscriptions.keys { replaceSubscription(id, with: nil) }
        flusher?.cancel()
        flusher = nil
    }

    /// Sends what coalesced subscriptions hold back.
    func flushCoalesced() {
        flusher = nil
        for id in subscriptions.keys.sorted() {
            let held = subscriptions[id]!.coalescer.flush()
            if !held.isEmpty { sink.send(HostMsg(.events(sessionID: id, events: held))) }
        }
    }

    private func scheduleFlush() {
        guard flusher == nil else { return }
        flusher = Task { [weak self] in
            try? await Task.sleep(for: Self.coalesceInterval)
            guard !Task.isCancelled else { return }
            await self?.flushCoalesced()
        }
    }

    /// The events of a live batch to send now, by the subscription's verbosity.
    private func live(_ events: [SequencedEvent], _ id: SessionID) -> [SequencedEvent] {
        guard let subscription = subscriptions[id] else { return [] }
        guard subscription.verbosity == .coalesced else { return Self.filter(events, subscription.verbosity) }
        let out = subscriptions[id]!.coalescer.add(events)
        if subscriptions[id]!.coalescer.pending != nil { scheduleFlush() }
        return out
    }

    /// Events in a backlog's first page (the reply: small, so the first events arrive at once),
    /// events per later page, and the queue a backlog waits under between pages.
    static let backlogFirstPageEvents = 200
    static let backlogPageEvents = 2_000
    static let backlogQueueBound = 4 * 1024 * 1024
    /// A page is split while its encoding is larger than this (a frame holds at most 16 MiB).
    static let backlogPageBytes = 8 * 1024 * 1024

    /// Subscribes and sends the reply: a snapshot (cold) or every event after `since` (warm),
    /// then the live events that arrived meanwhile, so there is no gap and no duplicate.
    ///
    /// A warm backlog of any length is sent in pages: the reply carries the first (with the
    /// request's id), pushed `events` messages the rest, in order; between pages the client's
    /// queue must drain under a bound, so a slow reader holds the sending back, not the memory.
    func subscribe(_ id: SessionID, since: Int64?, verbosity: ClientMsg.Verbosity, foreground: Bool = false,
                   requestID: Int64?, server: LocalServer) async {
        presence = server.presence
        replaceSubscription(id, with: Subscription(verbosity: verbosity, foreground: foreground, delivered: since ?? 0, held: []))
        var last: Int64
        do {
            let summary = try await server.host.summary(id)
            if let since {
                let pages = try await server.host.eventPages(id, after: since)
                var limit = Self.backlogFirstPageEvents
                var page = try await pages.next(limit: limit)
                last = page.last?.seq ?? since
                for message in Self.encodedPages(id, Self.filter(page, verbosity), requestID: requestID) { sink.send(encoded: message) }
                // A client gone mid-backlog stops the reading (its frames stream ends only after this
                // request is handled, so the subscription is still there).
                while page.count == limit, subscriptions[id] != nil, sink.isOpen {
                    await sink.waitUntilQueued(below: Self.backlogQueueBound)
                    limit = Self.backlogPageEvents
                    page = try await pages.next(limit: limit)
                    guard let end = page.last?.seq else { break }
                    last = end
                    let events = Self.filter(page, verbosity)
                    if !events.isEmpty { for message in Self.encodedPages(id, events, requestID: nil) { sink.send(encoded: message) } }
                }
            } else {
                let backlog = try await server.host.events(id, after: max(0, summary.lastSeq - 50))
                last = backlog.last?.seq ?? summary.lastSeq
                let pending = try await server.host.pendingApprovals().filter { $0.sessionID == id }
                send(HostMsg(.snapshot(summary: summary, events: Self.filter(backlog, verbosity), pendingApprovals: pending, cursor: last),
                             requestID: requestID), server: server)
            }
        } catch {
            replaceSubscription(id, with: nil)
            send(HostMsg(.error(code: error.code, message: error.message, sessionID: id), requestID: requestID), server: server)
            return
        }
        guard subscriptions[id] != nil else { return }
        let later = (subscriptions[id]?.held ?? []).filter { $0.seq > last }
        subscriptions[id]?.held = nil
        subscriptions[id]?.delivered = later.last?.seq ?? last
        let filtered = live(later, id)
        if !filtered.isEmpty { send(HostMsg(.events(sessionID: id, events: filtered)), server: server) }
    }

    /// `events` as one encoded `events` message, or as several when one would be too large for a
    /// frame (always at least one, empty when `events` is); the first carries `requestID`. Each
    /// message is encoded once: the bytes measured are the bytes sent.
    static func encodedPages(_ id: SessionID, _ events: [SequencedEvent], requestID: Int64?) -> [[UInt8]] {
        let bytes = WireMessages.encode(HostMsg(.events(sessionID: id, events: events), requestID: requestID))
        guard events.count > 1, bytes.count > backlogPageBytes else { return [bytes] }
        let half = events.count / 2
        return encodedPages(id, Array(events[..<half]), requestID: requestID) + encodedPages(id, Array(events[half...]), requestID: nil)
    }

    func unsubscribe(_ id: SessionID) { replaceSubscription(id, with: nil) }

    func forward(_ notification: HostNotification, server: LocalServer) {
        switch notification {
        case .events(let id, let events):
            guard var subscription = subscriptions[id] else { return }
            if subscription.held != nil {
                subscription.held!.append(contentsOf: events)
                subscriptions[id] = subscription
                return
            }
            let fresh = events.filter { $0.seq > subscription.delivered }
            guard let last = fresh.last else { return }
            subscriptions[id]?.delivered = last.seq
            let filtered = live(fresh, id)
            if !filtered.isEmpty { send(HostMsg(.events(sessionID: id, events: filtered)), server: server) }
        case .sessionUpdated(let summary):
            send(HostMsg(.sessionUpdated(summary)), server: server)
        case .approvalRequested(let request):
            guard let id = request.sessionID, subscriptions[id] != nil else { return }
            send(HostMsg(.approvalRequested(request)), server: server)
        case .approvalResolved(let id, let resolution):
            guard subscriptions[id] != nil else { return }
            send(HostMsg(.approvalResolved(sessionID: id, resolution)), server: server)
        }
    }

    /// `full`: everything. `coalesced`: consecutive deltas merged (`Coalescer`).
    /// `statusOnly`: status changes, approvals and run ends.
    static func filter(_ events: [SequencedEvent], _ verbosity: ClientMsg.Verbosity) -> [SequencedEvent] {
        switch verbosity {
        case .full:
            return events
        case .coalesced:
            return Coalescer.coalesce(events)
        case .statusOnly:
            return events.filter {
                switch $0.event {
                case .statusChanged, .approvalRequested, .approvalResolved, .approvalWithdrawn, .runFinished: true
                default: false
                }
            }
        }
    }
}
