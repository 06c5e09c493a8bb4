/// One notification channel as `nucleic notify ls` shows it: where it is on the ladder, what it
/// takes, and its last delivery.
public struct NotifyChannelStatus: Sendable, Hashable, JSONRepresentable {
    /// `desktop`, `ntfy`, `webhook`, `device:<id>`.
    public var channel: String
    /// `desk`, `devices`, `further`.
    public var stage: String
    public var categories: [String]
    public var lastAt: Timestamp?
    /// `shown`, `withdrawn`, `failed: …`, `gone`; nil before the first delivery.
    public var lastResult: String?

    public init(channel: String, stage: String, categories: [String], lastAt: Timestamp? = nil, lastResult: String? = nil) {
        self.channel = channel
        self.stage = stage
        self.categories = categories
        self.lastAt = lastAt
        self.lastResult = lastResult
    }

    public var json: JSONValue {
        var o = JSONObject()
        o.append("channel", .string(channel))
        o.append("stage", .string(stage))
        o.append("categories", .array(categories.map(JSONValue.string)))
        o.append("lastAt", ifPresent: lastAt.map { .string($0.description) })
        o.append("lastResult", ifPresent: lastResult.map(JSONValue.string))
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "notify channel")
        self.init(channel: try f.string("channel"), stage: try f.string("stage"),
                  categories: (f["categories"]?.arrayValue ?? []).compactMap(\.stringValue),
                  lastAt: try f.optionalString("lastAt").flatMap(Timestamp.init), lastResult: try f.optionalString("lastResult"))
    }
}

/// What a server of the message set asks of the notifier (`notifyStatus`, `notifyTest`).
public protocol NotificationControl: Sendable {
    func channelStatus() async -> [NotifyChannelStatus]
    /// Shows a test notification on `channel` (every channel when nil); each one's status after.
    func test(channel: String?) async -> [NotifyChannelStatus]
    /// Registers (or replaces) the push channel of a paired device; a registration the host
    /// cannot use is refused with a clear error and nothing changes.
    func registerPush(device: DeviceID, _ registration: PushRegistration) async throws(SessionError)
    /// Removes a device's push channel (nothing when it has none).
    func unregisterPush(device: DeviceID) async throws(SessionError)
    /// The providers and VAPID key, and what `device` has registered.
    func pushInfo(device: DeviceID?) async -> PushInfo
}

extension NotificationControl {
    public func registerPush(device: DeviceID, _ registration: PushRegistration) async throws(SessionError) {
        throw SessionError(.unsupported, "this daemon takes no push registrations")
    }
    public func unregisterPush(device: DeviceID) async throws(SessionError) {}
    public func pushInfo(device: DeviceID?) async -> PushInfo { PushInfo(providers: [], webPushKey: nil) }
}
