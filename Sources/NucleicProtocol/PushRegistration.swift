/// A paired device's push channel, as it registers it with `registerPush` (docs/PROTOCOL.md,
/// "Push registration"): a Web Push subscription (the W3C `PushSubscription`'s endpoint and
/// keys, base64url as its `toJSON()` gives them) or an APNs device token.
public struct PushRegistration: Sendable, Hashable, JSONRepresentable {
    public enum Provider: String, Sendable, Hashable, CaseIterable {
        case webPush, apns
    }

    public var provider: Provider
    /// Web Push: the push service URL to POST to.
    public var endpoint: String?
    /// Web Push: the subscriber's P-256 public key (65 bytes), base64url.
    public var p256dh: String?
    /// Web Push: the 16-byte auth secret, base64url.
    public var auth: String?
    /// APNs: the device token, hex.
    public var token: String?

    public init(provider: Provider, endpoint: String? = nil, p256dh: String? = nil, auth: String? = nil, token: String? = nil) {
        self.provider = provider
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        self.token = token
    }

    public static func webPush(endpoint: String, p256dh: String, auth: String) -> PushRegistration {
        PushRegistration(provider: .webPush, endpoint: endpoint, p256dh: p256dh, auth: auth)
    }

    public static func apns(token: String) -> PushRegistration { PushRegistration(provider: .apns, token: token) }

    /// The fields as they travel, flat beside `type` in `registerPush`.
    public func encode(into o: inout JSONObject) {
        o.append("provider", .string(provider.rawValue))
        o.append("endpoint", ifPresent: endpoint.map(JSONValue.string))
        o.append("p256dh", ifPresent: p256dh.map(JSONValue.string))
        o.append("auth", ifPresent: auth.map(JSONValue.string))
        o.append("token", ifPresent: token.map(JSONValue.string))
    }

    public var json: JSONValue {
        var o = JSONObject()
        encode(into: &o)
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        try self.init(fields: try Fields(json, "push registration"))
    }

    /// Reads and checks the shape: Web Push needs `endpoint`, `p256dh` and `auth`; APNs `token`.
    public init(fields f: Fields) throws(ShapeError) {
        let raw = try f.string("provider")
        guard let provider = Provider(rawValue: raw) else { throw ShapeError("registerPush: unknown provider \"\(raw)\" (webPush or apns)") }
        self.init(provider: provider, endpoint: try f.optionalString("endpoint"), p256dh: try f.optionalString("p256dh"),
                  auth: try f.optionalString("auth"), token: try f.optionalString("token"))
        switch provider {
        case .webPush:
            guard endpoint != nil, p256dh != nil, auth != nil else { throw ShapeError("registerPush: webPush needs endpoint, p256dh and auth") }
        case .apns:
            guard token != nil else { throw ShapeError("registerPush: apns needs token") }
        }
    }
}

/// What a client needs to make a push channel for this host (reply to `pushInfo`).
public struct PushInfo: Sendable, Hashable {
    /// The providers this host can send through.
    public var providers: [PushRegistration.Provider]
    /// The host's VAPID public key (65 bytes, base64url): a browser subscribes with it as its
    /// `applicationServerKey`. Nil when the host has no Web Push.
    public var webPushKey: String?
    /// The provider this device has registered, if any.
    public var registered: PushRegistration.Provider?

    public init(providers: [PushRegistration.Provider], webPushKey: String?, registered: PushRegistration.Provider? = nil) {
        self.providers = providers
        self.webPushKey = webPushKey
        self.registered = registered
    }
}
