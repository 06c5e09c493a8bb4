public import NucleicProtocol
import NucleicSystem

/// The push providers this host can send through, and where the devices' registrations are
/// kept: the daemon builds it from its VAPID key and, when configured, its APNs key.
public struct PushProviders: Sendable {
    /// Web Push's sender identity; nil when the host has no Web Push.
    public var vapid: VAPID?
    /// APNs' provider identity; nil when the host has no APNs key.
    public var apns: APNsProvider?
    /// What devices are pushed (`notify-devices`).
    public var categories: Set<NotificationCategory>
    /// `notify/push.json` in the home; nil keeps registrations in memory only.
    public var registryPath: String?

    public init(vapid: VAPID?, apns: APNsProvider? = nil, categories: Set<NotificationCategory> = Set(NotificationCategory.allCases),
                registryPath: String?) {
        self.vapid = vapid
        self.apns = apns
        self.categories = categories
        self.registryPath = registryPath
    }

    public var available: [PushRegistration.Provider] {
        var out: [PushRegistration.Provider] = []
        if vapid != nil { out.append(.webPush) }
        if apns != nil { out.append(.apns) }
        return out
    }

    /// The channel a device's registration makes, or why there is none.
    public func channel(for device: DeviceID, _ registration: PushRegistration) throws(NotifyError) -> any NotificationChannel {
        let id = ChannelID.device(device.rawValue)
        switch registration.provider {
        case .webPush:
            guard let vapid else { throw NotifyError("this host has no Web Push (its VAPID key could not be made; see the daemon log)") }
            guard let endpoint = registration.endpoint, let p256dh = registration.p256dh.flatMap(Base64URLCodec.decode),
                let auth = registration.auth.flatMap(Base64URLCodec.decode)
            else { throw NotifyError("a Web Push registration needs endpoint, and p256dh and auth in base64url") }
            let subscription = WebPushSubscription(endpoint: endpoint, p256dh: p256dh, auth: auth)
            try subscription.validate()
            return WebPushChannel(id: id, subscription: subscription, vapid: vapid, categories: categories)
        case .apns:
            guard let apns else { throw NotifyError("this host sends no APNs pushes (it has no apns-key-file; docs/OPERATIONS.md, \"APNs\")") }
            guard let token = registration.token else { throw NotifyError("an APNs registration needs token") }
            return APNsChannel(id: id, token: try APNsProvider.normalizedToken(token), provider: apns, categories: categories)
        }
    }
}

/// The registered push channels per device, as saved in `notify/push.json`:
/// `{"registrations":[{"deviceID":…,"provider":…,…}]}`.
enum PushRegistryFile {
    static func read(_ path: String) -> [DeviceID: PushRegistration] {
        do {
            guard let bytes = try StateFile.read(path) else { return [:] }
            let f = try Fields(try JSONParser.parse(bytes), "push registrations")
            var out: [DeviceID: PushRegistration] = [:]
            for entry in f["registrations"]?.arrayValue ?? [] {
                let e = try Fields(entry, "push registration")
                out[DeviceID(try e.string("deviceID"))] = try PushRegistration(fields: e)
            }
            return out
        } catch {
            HostLog.warning("notifications: \(path) cannot be read (\(error)); no device is pushed until it registers again")
            return [:]
        }
    }

    static func write(_ path: String, _ registrations: [DeviceID: PushRegistration]) {
        let entries: [JSONValue] = registrations.sorted { $0.key.rawValue < $1.key.rawValue }.map { device, registration in
            var o = JSONObject()
            o.append("deviceID", .string(device.rawValue))
            registration.encode(into: &o)
            return .object(o)
        }
        do {
            try StateFile.write(path, Array(JSONWriter.string(.object(["registrations": .array(entries)])).utf8))
        } catch {
            HostLog.warning("notifications: \(error); a restarted daemon may not push to a device that registered now")
        }
    }
}
