public import NucleicProtocol

/// A generic webhook: a JSON POST of the payload's fields plus `event` (`show` or `withdraw`),
/// signed with HMAC-SHA256 of the body under the shared secret in `X-Nucleic-Signature:
/// sha256=<hex>`, so the receiver can check it came from this host.
public struct WebhookChannel: NotificationChannel {
    public let info: ChannelInfo
    public let url: String
    let secret: [UInt8]

    public init(url: String, secret: String, categories: Set<NotificationCategory> = Set(NotificationCategory.allCases)) {
        info = ChannelInfo(id: .webhook, stage: .further, categories: categories)
        self.url = url
        self.secret = Array(secret.utf8)
    }

    public func show(_ payload: NotificationPayload, replacing: String?) async -> Notifier.DeliveryOutcome {
        HTTPPost.outcome(await HTTPPost.send(request(payload, event: "show")))
    }

    public func withdraw(_ payload: NotificationPayload, handle: String?) async {
        _ = await HTTPPost.send(request(payload, event: "withdraw"))
    }

    func request(_ payload: NotificationPayload, event: String) -> HTTPPost.Request {
        var o = JSONObject()
        o.append("event", .string(event))
        if case .object(let fields) = payload.json { for entry in fields { o.append(entry.key, entry.value) } }
        let body = Array(JSONWriter.string(.object(o)).utf8)
        return HTTPPost.Request(url: url, headers: [
            "Content-Type: application/json", "X-Nucleic-Signature: sha256=\(HTTPPost.hmacSHA256(key: secret, data: body))",
            "X-Nucleic-Event: \(event)", "User-Agent: nucleic",
        ], body: body)
    }
}

/// ntfy (self-hosted or ntfy.sh): a POST to the topic's URL with the reason as the message,
/// the heading as `Title`, `Priority: urgent` for needs-you, `Click` the `nucleic://` deep link,
/// and the access token as a bearer token when one is set. ntfy cannot take a message back, so
/// a withdrawal sends nothing.
public struct NtfyChannel: NotificationChannel {
    public let info: ChannelInfo
    public let url: String
    let token: String?

    public init(url: String, token: String?, categories: Set<NotificationCategory> = Set(NotificationCategory.allCases)) {
        info = ChannelInfo(id: .ntfy, stage: .further, categories: categories)
        self.url = url
        self.token = token
    }

    public func show(_ payload: NotificationPayload, replacing: String?) async -> Notifier.DeliveryOutcome {
        HTTPPost.outcome(await HTTPPost.send(request(payload)))
    }

    public func withdraw(_ payload: NotificationPayload, handle: String?) async {}

    func request(_ payload: NotificationPayload) -> HTTPPost.Request {
        // Header values are one line of ASCII: a title is cut at a line break, and one with
        // other characters goes as an RFC 2047 encoded word (`=?UTF-8?B?…?=`), which ntfy decodes.
        func line(_ s: String) -> String {
            let cut = String(s.prefix { $0 != "\n" && $0 != "\r" })
            return cut.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) ? cut : "=?UTF-8?B?\(HTTPPost.base64(Array(cut.utf8)))?="
        }
        var headers = [
            "Title: \(line(payload.heading))", "Priority: \(payload.category.priority == .high ? "urgent" : "default")",
            "Tags: \(payload.category.rawValue)", "Click: \(payload.deepLink)", "Content-Type: text/plain; charset=utf-8",
        ]
        if let token, !token.isEmpty { headers.append("Authorization: Bearer \(token)") }
        return HTTPPost.Request(url: url, headers: headers, body: Array(payload.reason.utf8))
    }
}
