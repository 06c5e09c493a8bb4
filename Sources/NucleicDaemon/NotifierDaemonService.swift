#if canImport(Glibc)
import Glibc
#endif
import NucleicNotify
import NucleicProtocol
import NucleicRuntime
import NucleicSync
import NucleicSystem
import Synchronization

/// The notifier (docs/OPERATIONS.md, "Notifications"): the host's sessions and who looks at
/// them, into notifications on the desktop and the paired devices' push channels.
struct NotifierDaemonService: Service {
    let notifier: NotifierService
    let host: SessionHost
    let presence: Presence

    var name: String { "notifier" }

    func run() async {
        let changes = presence.changes()
        let inputs = AsyncStream<NotifierService.Input> { continuation in
            let task = Task {
                for await change in changes { continuation.yield(.presence(change.sessionID, foreground: change.foreground)) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        await notifier.run(host: host, presence: inputs)
    }

    func shutdown() async { await notifier.shutdown() }
}

extension NotifierSettings {
    /// The settings from the config (flag, environment, file; docs/CONFIG.md), with the host's
    /// UTC offset for quiet hours. A value the config check let through but that does not parse
    /// here falls back to the default, with a log line.
    static func resolve(_ config: NucleicConfig, environment: [String: String]) -> (NotifierSettings, desktop: Set<NotificationCategory>,
                                                                                   devices: Set<NotificationCategory>) {
        func value(_ key: String) -> String? { config.resolve(key, environment: environment).value }
        func milliseconds(_ key: String, _ fallback: Int64) -> Int64 {
            guard let text = value(key) else { return fallback }
            do throws(SessionError) {
                guard let d = try IdleTimeout.parse(text) else { return Int64.max / 4 }  // off: never
                return d.components.seconds * 1000
            } catch {
                HostLog.warning("notifications: \(key) = '\(text)' is not a duration; using the default")
                return fallback
            }
        }
        func categories(_ key: String) -> Set<NotificationCategory> {
            guard let text = value(key) else { return Set(NotificationCategory.allCases) }
            if text == "off" { return [] }
            return Set(text.split(separator: ",").compactMap { NotificationCategory(rawValue: $0.filter { $0 != " " }) })
        }
        var settings = NotifierSettings(graceMilliseconds: milliseconds("notify-grace", 60_000),
                                        furtherMilliseconds: milliseconds("notify-further-after", 300_000),
                                        categories: categories("notify-categories"))
        if let quiet = value("notify-quiet-hours"), quiet != "off" { settings.quietHours = QuietHours(parsing: quiet) }
        settings.utcOffsetMinutes = Self.localUTCOffsetMinutes()
        return (settings, categories("notify-desktop"), categories("notify-devices"))
    }

    /// This process's offset from UTC now (its TZ), in minutes.
    static func localUTCOffsetMinutes() -> Int {
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return 0 }
        return local.tm_gmtoff / 60
    }
}

extension Daemon {
    /// The notifier with the channels this host has: the desktop when a session bus is reachable
    /// (and `notify-desktop` is not off), its Allow and Deny answered as the user, label "desktop";
    /// ntfy and the webhook when their URLs are set.
    static func makeNotifier(_ configuration: SessionHost.Configuration, host: SessionHost) -> NotifierService {
        let (settings, desktop, devices) = NotifierSettings.resolve(configuration.config, environment: configuration.environment)
        var channels: [any NotificationChannel] = []
        let router = ActionRouter()
        if !desktop.isEmpty, let address = DesktopChannel.busAddress(environment: configuration.environment) {
            channels.append(DesktopChannel(address: address, categories: desktop) { handle, action in
                Task { await router.answer(handle: handle, action: action, host: host) }
            })
        }
        let config = configuration.config
        func value(_ key: String) -> String? { config.resolve(key, environment: configuration.environment).value.flatMap { $0.isEmpty ? nil : $0 } }
        if let url = value("ntfy-url") { channels.append(NtfyChannel(url: url, token: value("ntfy-token"))) }
        if let url = value("webhook-url") {
            if let secret = value("webhook-secret") {
                channels.append(WebhookChannel(url: url, secret: secret))
            } else {
                HostLog.warning("notifications: webhook-url is set but webhook-secret is not; the webhook is off until it is")
            }
        }
        let notifier = NotifierService(settings: settings, channels: channels, statePath: configuration.home.path + "/notify/alerts.json",
                                       push: pushProviders(configuration, categories: devices))
        router.notifier.withLock { $0 = notifier }
        return notifier
    }
}

extension Daemon {
    /// The providers devices can register with: Web Push with the host's VAPID key
    /// (`vapid.pem` in the home, made on first start, 0600) and `webpush-subject`; APNs with the
    /// `apns-*` settings.
    static func pushProviders(_ configuration: SessionHost.Configuration, categories: Set<NotificationCategory>) -> PushProviders {
        let home = configuration.home.path
        func value(_ key: String) -> String? {
            configuration.config.resolve(key, environment: configuration.environment).value.flatMap { $0.isEmpty ? nil : $0 }
        }
        var vapid: VAPID?
        do {
            let key = try P256Key.loadOrCreate(path: home + "/vapid.pem")
            vapid = VAPID(key: key, subject: value("webpush-subject") ?? "mailto:nucleic@\(LocalServer.machineName())")
        } catch {
            HostLog.warning("notifications: no Web Push: \(error.message)")
        }
        return PushProviders(vapid: vapid, apns: apnsProvider(value), categories: categories, registryPath: home + "/notify/push.json")
    }

    /// APNs when `apns-key-file` is set with its key id, team id and topic; a key that cannot be
    /// read leaves APNs off, with a log line.
    static func apnsProvider(_ value: (String) -> String?) -> APNsProvider? {
        guard let file = value("apns-key-file") else { return nil }
        guard let keyID = value("apns-key-id"), let teamID = value("apns-team-id"), let topic = value("apns-topic") else {
            HostLog.warning("notifications: apns-key-file is set but not apns-key-id, apns-team-id and apns-topic; APNs is off until they are")
            return nil
        }
        do {
            let key = try P256Key.read(path: file)
            let endpoint = value("apns-endpoint") ?? (value("apns-environment") == "sandbox" ? APNsProvider.sandbox : APNsProvider.production)
            return APNsProvider(key: key, keyID: keyID, teamID: teamID, topic: topic, endpoint: endpoint, caFile: value("apns-ca-file"))
        } catch {
            HostLog.warning("notifications: no APNs: \(error.message)")
            return nil
        }
    }
}

/// Answers a desktop notification's Allow or Deny: finds the approval the notification stands
/// for and responds as the user who runs the daemon, with the label "desktop".
final class ActionRouter: Sendable {
    let notifier = Mutex<NotifierService?>(nil)

    func answer(handle: String, action: String, host: SessionHost) async {
        guard let notifier = notifier.withLock({ $0 }),
            let payload = await notifier.payload(shownAs: handle, on: .desktop), let approval = payload.approvalID
        else { return }
        let decision: Decision
        switch action {
        // The notification offered Allow only where the risk gate allows it inline; checked
        // again here, and the host judges the answer once more.
        case "allow" where payload.answerableInline: decision = .allow
        case "deny": decision = .deny(message: "Denied from the desktop notification.")
        default: return
        }
        do throws(SessionError) {
            try await host.respond(approval, decision, decidedBy: "user:\(Self.login())", label: "desktop", denyAlways: nil)
        } catch {
            HostLog.warning("notifications: desktop \(action) for approval \(approval.rawValue) not taken: \(error.message)")
        }
    }

    static func login() -> String {
        if let name = getenv("USER") { return String(cString: name) }
        return "uid\(getuid())"
    }
}
