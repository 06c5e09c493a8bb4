public import NucleicProtocol
import Synchronization

/// The host's APNs provider identity (token-based authentication): the `.p8` key Apple issued
/// (`apns-key-file`), its key id and the team id, the app's bundle id as `apns-topic`, and the
/// provider API's base URL (production, the sandbox, or another one a test runs).
public final class APNsProvider: Sendable {
    public static let production = "https://api.push.apple.com"
    public static let sandbox = "https://api.sandbox.push.apple.com"

    public let key: P256Key
    public let keyID: String
    public let teamID: String
    public let topic: String
    /// `https://host[:port]`, without a trailing slash.
    public let endpoint: String
    /// A PEM file of CAs to trust instead of the system's; nil for Apple's servers.
    public let caFile: String?
    /// The provider token and when it was made: APNs wants one reused for at least 20 minutes
    /// and refuses one older than an hour, so it is remade after 50.
    private let cached = Mutex<(token: String, issuedAt: Int64)?>(nil)

    public init(key: P256Key, keyID: String, teamID: String, topic: String, endpoint: String = APNsProvider.production, caFile: String? = nil) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.caFile = caFile
    }

    /// The provider token: an ES256 JWT, header `{"kid":…,"alg":"ES256"}`, claims `iss` (the
    /// team) and `iat` (seconds), reused for 50 minutes.
    public func token(now: Timestamp) throws(NotifyError) -> String {
        let seconds = now.millisecondsSince1970 / 1000
        if let c = cached.withLock({ $0 }), seconds - c.issuedAt < 50 * 60, seconds >= c.issuedAt { return c.token }
        var claims = JSONObject()
        claims.append("iss", .string(teamID))
        claims.append("iat", .int(seconds))
        let token = try JWT.es256(header: [("kid", keyID)], claims: .object(claims), key: key)
        cached.withLock { $0 = (token, seconds) }
        return token
    }

    /// Forgets the token (APNs said it expired or is invalid): the next request makes a new one.
    public func invalidateToken() { cached.withLock { $0 = nil } }

    /// A device token as APNs takes it: hex (lowercased), an even number of digits, 32 to 100
    /// bytes.
    public static func normalizedToken(_ text: String) throws(NotifyError) -> String {
        let lower = text.lowercased()
        guard lower.count % 2 == 0, (64...200).contains(lower.count), lower.allSatisfy({ $0.isHexDigit }) else {
            throw NotifyError("an APNs device token is 32 to 100 bytes in hex, not '\(text.prefix(16))…' (\(text.count) characters)")
        }
        return lower
    }
}

/// APNs (HTTP/2 provider API) to one device token: a show is an alert push whose `aps.alert`
/// is the heading and the reason, and whose `nucleic` dictionary is exactly the payload's JSON
/// with `"event":"show"`; a withdrawal is a background push (`content-available`) with
/// `"event":"withdraw"`, on which the app removes the delivered notification. Both carry
/// `apns-collapse-id` (the session's collapse id), `apns-topic`, `apns-push-type` and
/// `apns-priority` (10 for needs-you, 5 for done and for background pushes).
///
/// ### Invariants
/// - What leaves the host is the payload's fields, the heading made of project, handle and
///   title, and the reason: no command, content, path or diff.
/// - 410, or a body whose `reason` is `Unregistered`, means the token is gone.
public struct APNsChannel: NotificationChannel {
    public let info: ChannelInfo
    public let token: String
    let provider: APNsProvider
    /// Seconds APNs keeps trying to deliver.
    public var expirationSeconds: Int64 = 86_400

    public init(id: ChannelID, token: String, provider: APNsProvider, categories: Set<NotificationCategory> = Set(NotificationCategory.allCases)) {
        info = ChannelInfo(id: id, stage: .devices, categories: categories)
        self.token = token
        self.provider = provider
    }

    public func show(_ payload: NotificationPayload, replacing: String?) async -> Notifier.DeliveryOutcome {
        await send(payload, event: "show")
    }

    public func withdraw(_ payload: NotificationPayload, handle: String?) async {
        _ = await send(payload, event: "withdraw")
    }

    private func send(_ payload: NotificationPayload, event: String) async -> Notifier.DeliveryOutcome {
        do {
            let outcome = Self.outcome(await HTTPPost.exchange(try request(payload, event: event, now: .now())))
            if case .failed(let message) = outcome, message.contains("ProviderToken") { provider.invalidateToken() }
            return outcome
        } catch {
            return .failed(error.message)
        }
    }

    /// The whole request for one message (public for tests that look at it).
    public func request(_ payload: NotificationPayload, event: String, now: Timestamp) throws(NotifyError) -> HTTPPost.Request {
        var nucleic = JSONObject()
        nucleic.append("event", .string(event))
        if case .object(let fields) = payload.json { for entry in fields { nucleic.append(entry.key, entry.value) } }
        var aps = JSONObject()
        let background = event == "withdraw"
        if background {
            aps.append("content-available", .int(1))
        } else {
            aps.append("alert", .object(["title": .string(payload.heading), "body": .string(payload.reason)]))
            if payload.category == .needsYou { aps.append("sound", .string("default")) }
            aps.append("thread-id", .string(payload.sessionID.rawValue))
            // The app's notification category with Allow/Deny, only where the risk gate lets an
            // approval be answered in one step (docs/CLIENTS.md).
            if payload.answerableInline { aps.append("category", .string("NUCLEIC_APPROVAL_ACTIONABLE")) }
        }
        var body = JSONObject()
        body.append("aps", .object(aps))
        body.append("nucleic", .object(nucleic))
        let priority = background || payload.category != .needsYou ? 5 : 10
        return HTTPPost.Request(url: "\(provider.endpoint)/3/device/\(token)", headers: [
            "authorization: bearer \(try provider.token(now: now))",
            "apns-push-type: \(background ? "background" : "alert")",
            "apns-topic: \(provider.topic)",
            "apns-collapse-id: \(payload.collapseID)",
            "apns-priority: \(priority)",
            "apns-expiration: \(now.millisecondsSince1970 / 1000 + expirationSeconds)",
            "content-type: application/json",
        ], body: Array(JSONWriter.string(.object(body)).utf8), requiresHTTP2: true, caFile: provider.caFile)
    }

    /// 200 shown; 410 or `Unregistered` gone; anything else failed, naming APNs' reason.
    static func outcome(_ result: Result<HTTPPost.Response, NotifyError>) -> Notifier.DeliveryOutcome {
        switch result {
        case .failure(let error): return .failed(error.message)
        case .success(let response):
            let reason = (try? JSONParser.parse(response.body)).flatMap { $0["reason"]?.stringValue }
            if response.status == 410 || reason == "Unregistered" { return .gone }
            if (200..<300).contains(response.status) { return .shown(handle: nil) }
            return .failed("APNs answered \(response.status)\(reason.map { " \($0)" } ?? "")")
        }
    }
}
