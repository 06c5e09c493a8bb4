public import NucleicProtocol
import NucleicSystem

/// A place notifications go, as the service drives it. A channel's calls may take long (a
/// network round trip): the service runs each in a task of its own, so a slow or dead channel
/// holds back no session and no other channel.
public protocol NotificationChannel: Sendable {
    var info: ChannelInfo { get }
    /// Shows the payload, replacing `replacing` (the channel's handle of this session's last
    /// notification) or whatever has the payload's collapse id.
    func show(_ payload: NotificationPayload, replacing: String?) async -> Notifier.DeliveryOutcome
    /// Takes the notification off, as far as the channel can (a push channel sends a withdrawal
    /// the client acts on).
    func withdraw(_ payload: NotificationPayload, handle: String?) async
    /// Called once when the service starts: a channel that hears answers (the desktop's
    /// actions) begins listening, also for what an earlier daemon showed.
    func start() async
}

extension NotificationChannel {
    public func start() async {}
}

/// The notifier's time: real in the daemon, a fake one in tests.
public protocol NotifierClock: Sendable {
    func now() -> Timestamp
    /// Returns at `deadline` or when cancelled.
    func sleep(until deadline: Timestamp) async
}

public struct SystemNotifierClock: NotifierClock {
    public init() {}
    public func now() -> Timestamp { .now() }
    public func sleep(until deadline: Timestamp) async {
        let ms = deadline.millisecondsSince1970 - Timestamp.now().millisecondsSince1970
        if ms > 0 { try? await Task.sleep(for: .milliseconds(ms)) }
    }
}

/// The notifier as the daemon runs it: feeds `Notifier` what the host says (sessions,
/// approvals), who looks (presence), what channels answered and the clock, and performs its
/// effects. Its alerts are saved after every change, so a restarted daemon carries on.
///
/// ### Invariants
/// - Nothing here waits on a channel: each show and withdrawal runs in its own task and comes
///   back as an event; a failure is one line in the daemon's log.
/// - A state file that cannot be read is logged and set aside; the notifier starts empty.
public actor NotifierService: NotificationControl {
    public enum Input: Sendable {
        case host(HostNotification)
        case presence(SessionID, foreground: Bool)
    }

    public private(set) var notifier: Notifier
    private var channels: [ChannelID: any NotificationChannel] = [:]
    private let clock: any NotifierClock
    private let statePath: String?
    private var savedAlerts: [SessionID: Notifier.Alert]
    private var timer: Task<Void, Never>?
    private var running: [Task<Void, Never>] = []
    /// Called when a provider says a channel is gone, so its registration is deleted.
    private let onGone: @Sendable (ChannelID) async -> Void
    private var stopped = false
    private let push: PushProviders
    /// Each paired device's registered push channel.
    public private(set) var registrations: [DeviceID: PushRegistration]

    /// - Parameter statePath: where the alerts are kept (`notify/alerts.json` in the home); nil
    ///   keeps them in memory only.
    public init(settings: NotifierSettings, channels: [any NotificationChannel], statePath: String?,
                clock: any NotifierClock = SystemNotifierClock(), push: PushProviders = PushProviders(vapid: nil, registryPath: nil),
                onGone: @escaping @Sendable (ChannelID) async -> Void = { _ in }) {
        var restored: [SessionID: Notifier.Alert] = [:]
        if let statePath {
            do {
                if let bytes = try StateFile.read(statePath) { restored = try Notifier.decode(try JSONParser.parse(bytes)) }
            } catch {
                HostLog.warning("notifications: \(statePath) cannot be read (\(error)); starting without the alerts it held")
            }
        }
        self.push = push
        registrations = push.registryPath.map(PushRegistryFile.read) ?? [:]
        var all = channels
        for (device, registration) in registrations.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            do { all.append(try push.channel(for: device, registration)) } catch {
                HostLog.warning("notifications: device \(device)'s \(registration.provider.rawValue) channel is not usable (\(error.message)); it is not pushed")
            }
        }
        notifier = Notifier(settings: settings, channels: all.map(\.info), restoring: restored)
        savedAlerts = restored
        for c in all { self.channels[c.info.id] = c }
        self.clock = clock
        self.statePath = statePath
        self.onGone = onGone
    }

    /// Serves until `shutdown()`: the host's sessions first, then every change of the host and
    /// of presence.
    public func run(host: any SessionService, presence: AsyncStream<Input>) async {
        let notifications = await host.listen()
        for channel in channelList { await channel.start() }
        // Listening first, then the snapshot: a change in between is applied twice, which the
        // notifier takes (it is idempotent per approval and status), rather than lost.
        do {
            let sessions = try await host.sessions(includeArchived: false)
            let pending = try await host.pendingApprovals()
            apply(.snapshot(sessions, pending: pending))
        } catch {
            HostLog.warning("notifications: cannot read the sessions (\(error.message)); notifying only what changes from now")
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await n in notifications { await self.receive(.host(n)) } }
            group.addTask { for await p in presence { await self.receive(p) } }
            group.addTask { await self.waitUntilStopped() }
            await group.next()
            group.cancelAll()
        }
        timer?.cancel()
        for task in running { task.cancel() }
    }

    private var stopWaiters: [CheckedContinuation<Void, Never>] = []

    private func waitUntilStopped() async {
        if stopped { return }
        await withCheckedContinuation { stopWaiters.append($0) }
    }

    public func shutdown() {
        stopped = true
        for w in stopWaiters { w.resume() }
        stopWaiters = []
    }

    public func receive(_ input: Input) {
        switch input {
        case .host(.approvalRequested(let request)): apply(.approvalRequested(request))
        case .host(.approvalResolved(let id, let resolution)): apply(.approvalResolved(id, resolution.approvalID))
        case .host(.sessionUpdated(let summary)): apply(.sessionUpdated(summary))
        case .host(.events): break
        case .presence(let id, let foreground): apply(.presence(id, foreground: foreground))
        }
    }

    /// Replaces the channels (a device registered or removed its push channel).
    public func setChannels(_ list: [any NotificationChannel]) {
        channels = [:]
        for c in list { channels[c.info.id] = c }
        apply(.channels(list.map(\.info)))
    }

    /// The payload of the alert a channel shows under `handle` (its own id for it).
    public func payload(shownAs handle: String, on channel: ChannelID) -> NotificationPayload? {
        notifier.alerts.values.first { $0.deliveries[channel] == .shown(handle: handle) }?.payload
    }

    public var channelList: [any NotificationChannel] { channels.values.sorted { $0.info.id < $1.info.id } }

    public func apply(_ event: Notifier.Event) {
        guard !stopped else { return }
        let effects = notifier.apply(event, at: clock.now())
        for effect in effects { perform(effect) }
        save()
        schedule()
    }

    private func perform(_ effect: Notifier.Effect) {
        switch effect {
        case .show(let id, let payload, let identity, let replacing, _):
            guard let channel = channels[id] else { return }
            track(Task {
                let outcome = await channel.show(payload, replacing: replacing)
                await self.apply(.delivered(id, payload.sessionID, identity, outcome))
            })
        case .withdraw(let id, let payload, let handle):
            guard let channel = channels[id] else { return }
            track(Task { await channel.withdraw(payload, handle: handle) })
        case .forget(let id):
            channels[id] = nil
            if id.rawValue.hasPrefix("device:") {
                registrations[DeviceID(String(id.rawValue.dropFirst("device:".count)))] = nil
                saveRegistrations()
            }
            HostLog.info("notifications: \(id) is gone (its provider said so); its registration is deleted")
            let onGone = self.onGone
            track(Task { await onGone(id) })
        case .failed(let id, let collapseID, let attempt, let message, let retryAt):
            let next = retryAt.map { "trying again at \($0)" } ?? "giving up"
            HostLog.warning("notifications: \(id) failed to deliver \(collapseID) (attempt \(attempt)): \(message); \(next)")
        }
    }

    private func track(_ task: Task<Void, Never>) {
        running.removeAll { $0.isCancelled }
        running.append(task)
        if running.count > 64 { running.removeFirst(running.count - 64) }
    }

    private func save() {
        guard let statePath, notifier.alerts != savedAlerts else { return }
        do {
            try StateFile.write(statePath, Array(JSONWriter.string(Notifier.encode(notifier.alerts)).utf8))
            savedAlerts = notifier.alerts
        } catch {
            HostLog.warning("notifications: \(error); a restart may notify again what was sent")
        }
    }

    private var scheduled: Timestamp?

    private func schedule() {
        let next = notifier.nextDeadline
        guard next != scheduled else { return }
        scheduled = next
        timer?.cancel()
        guard let next else { return }
        let clock = self.clock
        timer = Task {
            await clock.sleep(until: next)
            guard !Task.isCancelled else { return }
            self.tick()
        }
    }

    private func tick() {
        scheduled = nil
        apply(.tick)
    }

    // MARK: - Push registrations

    /// Registers (or replaces) a device's push channel; the device is on the ladder's device
    /// rung from now on, for alerts already waiting too.
    // `async` like the protocol's requirements, so a call on the concrete type picks these and
    // not the protocol extension's defaults (an async context prefers the async overload).
    public func registerPush(device: DeviceID, _ registration: PushRegistration) async throws(SessionError) {
        let channel: any NotificationChannel
        do { channel = try push.channel(for: device, registration) } catch {
            throw SessionError(push.available.contains(registration.provider) ? .badMessage : .unsupported, error.message)
        }
        let replaced = registrations[device] != nil
        registrations[device] = registration
        saveRegistrations()
        HostLog.info("notifications: device \(device) \(replaced ? "replaced its" : "registered a") \(registration.provider.rawValue) push channel")
        channels[channel.info.id] = channel
        apply(.channels(channels.values.map(\.info)))
    }

    /// Removes a device's push channel: what it was shown is withdrawn, nothing more is sent.
    public func unregisterPush(device: DeviceID) async {
        guard registrations.removeValue(forKey: device) != nil else { return }
        saveRegistrations()
        HostLog.info("notifications: device \(device)'s push channel is removed")
        let id = ChannelID.device(device.rawValue)
        apply(.channels(channels.values.map(\.info).filter { $0.id != id }))
        channels[id] = nil
    }

    public func pushInfo(device: DeviceID?) async -> PushInfo {
        PushInfo(providers: push.available, webPushKey: push.vapid?.publicKeyText, registered: device.flatMap { registrations[$0]?.provider })
    }

    private func saveRegistrations() {
        guard let path = push.registryPath else { return }
        PushRegistryFile.write(path, registrations)
    }

    /// Each channel with its last delivery.
    public func channelStatus() -> [NotifyChannelStatus] {
        channelList.map { c in
            let last = notifier.lastDelivery[c.info.id]
            return NotifyChannelStatus(channel: c.info.id.rawValue, stage: c.info.stage.rawValue, categories: c.info.categories.sorted().map(\.rawValue),
                                       lastAt: last?.at, lastResult: last?.result)
        }
    }

    /// Shows a test notification on `channel` (every channel when nil); the status of each tried.
    public func test(channel: String?) async -> [NotifyChannelStatus] {
        let now = clock.now()
        var out: [NotifyChannelStatus] = []
        for (id, outcome) in await test(channel.map { ChannelID($0) }) {
            let result: String
            switch outcome {
            case .shown: result = "shown"
            case .failed(let message): result = "failed: \(message)"
            case .gone: result = "gone"
            }
            if case .failed = outcome { HostLog.warning("notifications: test on \(id) failed: \(result)") }
            guard let c = channels[id] else { continue }
            out.append(NotifyChannelStatus(channel: id.rawValue, stage: c.info.stage.rawValue, categories: c.info.categories.sorted().map(\.rawValue),
                                           lastAt: now, lastResult: result))
            // A device's provider that says gone to a test is as gone as to an alert.
            if case .gone = outcome, id.rawValue.hasPrefix("device:") {
                HostLog.info("notifications: \(id) is gone (its provider said so to a test); its registration is deleted")
                await unregisterPush(device: DeviceID(String(id.rawValue.dropFirst("device:".count))))
            }
        }
        return out
    }

    /// Shows a test notification on one channel (or every channel) and returns what each said.
    public func test(_ only: ChannelID?) async -> [(ChannelID, Notifier.DeliveryOutcome)] {
        let payload = NotificationPayload(project: "nucleic", title: "a test notification", handle: nil, category: .needsYou,
                                          reason: "testing this channel", sessionID: SessionID("00000000-0000-7000-8000-000000000000"))
        var results: [(ChannelID, Notifier.DeliveryOutcome)] = []
        for channel in channelList where only == nil || channel.info.id == only {
            results.append((channel.info.id, await channel.show(payload, replacing: nil)))
        }
        return results
    }
}
