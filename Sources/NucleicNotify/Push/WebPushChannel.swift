public import NucleicProtocol

/// A browser's or home-screen web app's push subscription (the W3C Push API's
/// `PushSubscription`): where to POST, and the keys the message is encrypted to.
public struct WebPushSubscription: Sendable, Hashable {
    public var endpoint: String
    /// The subscriber's P-256 public key, 65 bytes (`keys.p256dh`).
    public var p256dh: [UInt8]
    /// The subscriber's auth secret, 16 bytes (`keys.auth`).
    public var auth: [UInt8]

    public init(endpoint: String, p256dh: [UInt8], auth: [UInt8]) {
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
    }

    /// Checks what a client sent: an http(s) endpoint, a point on P-256, a 16-byte secret.
    public func validate() throws(NotifyError) {
        guard VAPID.origin(endpoint) != nil else { throw NotifyError("the endpoint \(endpoint) is not an http(s) URL") }
        guard auth.count == 16 else { throw NotifyError("keys.auth is \(auth.count) bytes, not 16") }
        _ = try P256Key(publicKey: p256dh)
    }
}

/// Web Push (RFC 8030) to one subscription: the payload's JSON, encrypted per RFC 8291
/// (`aes128gcm`), with a VAPID JWT (RFC 8292), `Topic` the collapse id (a newer message with
/// the same topic replaces one the push service still holds), `Urgency` from the category.
///
/// A withdrawal is a message of its own with the same topic and `"event":"withdraw"`: a push
/// service that still holds the show drops it, and a client's service worker that got it
/// closes the notification with that tag.
///
/// ### Invariants
/// - What leaves the host is `{"event":…}` plus `NotificationPayload.json`, encrypted to the
///   subscriber: the push service sees only the headers (topic, urgency, TTL) and ciphertext.
public struct WebPushChannel: NotificationChannel {
    public let info: ChannelInfo
    public let subscription: WebPushSubscription
    let vapid: VAPID
    /// How long the push service keeps an undelivered message, in seconds.
    public var ttl = 86_400

    public init(id: ChannelID, subscription: WebPushSubscription, vapid: VAPID,
                categories: Set<NotificationCategory> = Set(NotificationCategory.allCases)) {
        info = ChannelInfo(id: id, stage: .devices, categories: categories)
        self.subscription = subscription
        self.vapid = vapid
    }

    public func show(_ payload: NotificationPayload, replacing: String?) async -> Notifier.DeliveryOutcome {
        do {
            return Self.outcome(await HTTPPost.send(try request(payload, event: "show", now: .now())))
        } catch {
            return .failed(error.message)
        }
    }

    public func withdraw(_ payload: NotificationPayload, handle: String?) async {
        guard let request = try? request(payload, event: "withdraw", now: .now()) else { return }
        _ = await HTTPPost.send(request)
    }

    /// The whole request for one message (public for tests that look at it).
    public func request(_ payload: NotificationPayload, event: String, now: Timestamp) throws(NotifyError) -> HTTPPost.Request {
        var o = JSONObject()
        o.append("event", .string(event))
        if case .object(let fields) = payload.json { for entry in fields { o.append(entry.key, entry.value) } }
        let body = try WebPushCrypto.encrypt(Array(JSONWriter.string(.object(o)).utf8), subscriberKey: subscription.p256dh,
                                             authSecret: subscription.auth)
        return HTTPPost.Request(url: subscription.endpoint, headers: [
            "Authorization: \(try vapid.authorization(endpoint: subscription.endpoint, now: now))",
            "Content-Encoding: aes128gcm", "Content-Type: application/octet-stream", "TTL: \(ttl)",
            "Urgency: \(payload.category.priority == .high ? "high" : "normal")", "Topic: \(payload.collapseID)",
        ], body: body)
    }

    /// 201 (or any 2xx) shown; 404 and 410 the subscription is gone (RFC 8030 §7.3); else failed.
    static func outcome(_ result: Result<Int, NotifyError>) -> Notifier.DeliveryOutcome {
        if case .success(404) = result { return .gone }
        return HTTPPost.outcome(result)
    }
}
