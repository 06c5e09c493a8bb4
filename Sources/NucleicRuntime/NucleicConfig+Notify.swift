import NucleicProtocol

/// The notifier's settings (docs/OPERATIONS.md, "Notifications"). Their values are parsed by
/// the daemon into `NotifierSettings`; the checks here are what `nucleic config set` refuses.
extension NucleicConfig {
    static let notifySettings: [Setting] = [
        Setting(key: "notify-grace", environment: "NUCLEIC_NOTIFY_GRACE",
                summary: "how long the desk alone is notified before paired devices are: 60, 90s, 2m or off (default 60s)",
                appliesLive: false, check: duration),
        Setting(key: "notify-further-after", environment: "NUCLEIC_NOTIFY_FURTHER_AFTER",
                summary: "when ntfy and the webhook are notified: 300, 5m or off (default 5m)", appliesLive: false, check: duration),
        Setting(key: "notify-quiet-hours", environment: "NUCLEIC_NOTIFY_QUIET_HOURS",
                summary: "local hours when only the desktop is notified, HH:MM-HH:MM (default: none)", appliesLive: false,
                check: { quietHours($0) ? nil : "HH:MM-HH:MM, e.g. 22:00-07:00, or off" }),
        Setting(key: "notify-categories", environment: "NUCLEIC_NOTIFY_CATEGORIES",
                summary: "what is notified at all: needs-you,done (default), needs-you, or off", appliesLive: false, check: categories),
        Setting(key: "notify-desktop", environment: "NUCLEIC_NOTIFY_DESKTOP",
                summary: "what the desktop is told: needs-you,done (default), needs-you, done or off", appliesLive: false, check: categories),
        Setting(key: "notify-devices", environment: "NUCLEIC_NOTIFY_DEVICES",
                summary: "what paired devices are pushed: needs-you,done (default), needs-you, done or off", appliesLive: false,
                check: categories),
        Setting(key: "ntfy-url", environment: "NUCLEIC_NTFY_URL", summary: "an ntfy topic's URL, e.g. https://ntfy.sh/my-topic (default: none)",
                appliesLive: false, check: httpURL),
        Setting(key: "ntfy-token", environment: "NUCLEIC_NTFY_TOKEN", summary: "the ntfy access token (default: none)", appliesLive: false,
                check: { $0.contains(where: { $0.isNewline }) ? "one line" : nil }),
        Setting(key: "webhook-url", environment: "NUCLEIC_WEBHOOK_URL", summary: "a URL notifications are POSTed to as JSON (default: none)",
                appliesLive: false, check: httpURL),
        Setting(key: "webhook-secret", environment: "NUCLEIC_WEBHOOK_SECRET",
                summary: "the key of the webhook's X-Nucleic-Signature (HMAC-SHA256); needed with webhook-url", appliesLive: false,
                check: { $0.count >= 16 ? nil : "at least 16 characters" }),
        Setting(key: "webpush-subject", environment: "NUCLEIC_WEBPUSH_SUBJECT",
                summary: "the contact Web Push services see in the VAPID token: mailto:you@example.com or https://… (default mailto:nucleic@<host name>)",
                appliesLive: false, check: { ($0.hasPrefix("mailto:") || $0.hasPrefix("https://")) && !$0.contains(where: { $0.isWhitespace }) ? nil : "mailto:… or https://…" }),
        Setting(key: "apns-key-file", environment: "NUCLEIC_APNS_KEY_FILE",
                summary: "the APNs auth key (.p8) Apple issued for the app, an absolute path, mode 0600 (default: none, no APNs)", appliesLive: false,
                check: { $0.hasPrefix("/") ? nil : "an absolute path" }),
        Setting(key: "apns-key-id", environment: "NUCLEIC_APNS_KEY_ID", summary: "the .p8 key's id (10 characters)", appliesLive: false,
                check: { $0.count == 10 && $0.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) ? nil : "10 letters and digits" }),
        Setting(key: "apns-team-id", environment: "NUCLEIC_APNS_TEAM_ID", summary: "the Apple developer team id (10 characters)", appliesLive: false,
                check: { $0.count == 10 && $0.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) ? nil : "10 letters and digits" }),
        Setting(key: "apns-topic", environment: "NUCLEIC_APNS_TOPIC", summary: "the app's bundle id, e.g. com.example.nucleic", appliesLive: false,
                check: { !$0.isEmpty && !$0.contains(where: { $0.isWhitespace }) ? nil : "a bundle id" }),
        Setting(key: "apns-environment", environment: "NUCLEIC_APNS_ENVIRONMENT",
                summary: "production (default: api.push.apple.com) or sandbox (api.sandbox.push.apple.com, for development builds)", appliesLive: false,
                check: { $0 == "production" || $0 == "sandbox" ? nil : "production or sandbox" }),
        Setting(key: "apns-endpoint", environment: "NUCLEIC_APNS_ENDPOINT",
                summary: "another APNs base URL, https://host:port (a test server or a relay; default: the environment's)", appliesLive: false,
                check: { $0.hasPrefix("https://") && !$0.contains(where: { $0.isWhitespace }) ? nil : "an https:// URL" }),
        Setting(key: "apns-ca-file", environment: "NUCLEIC_APNS_CA_FILE",
                summary: "a PEM file of CAs to trust for apns-endpoint instead of the system's (default: the system's)", appliesLive: false,
                check: { $0.hasPrefix("/") ? nil : "an absolute path" }),
    ]

    static let httpURL: @Sendable (String) -> String? = { value in
        (value.hasPrefix("https://") || value.hasPrefix("http://")) && !value.contains(where: { $0.isWhitespace })
            ? nil : "an http:// or https:// URL"
    }

    static let duration: @Sendable (String) -> String? = { value in
        do throws(SessionError) { _ = try IdleTimeout.parse(value); return nil } catch { return "a duration: 60, 90s, 2m, 1h or off" }
    }

    static let categories: @Sendable (String) -> String? = { value in
        if value == "off" { return nil }
        let parts = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.notifyTrimmed }
        return !parts.isEmpty && parts.allSatisfy({ $0 == "needs-you" || $0 == "done" }) ? nil : "needs-you, done, both (needs-you,done) or off"
    }

    static func quietHours(_ value: String) -> Bool {
        if value == "off" { return true }
        let u = Array(value.utf8)
        guard u.count == 11, u[2] == UInt8(ascii: ":"), u[5] == UInt8(ascii: "-"), u[8] == UInt8(ascii: ":") else { return false }
        func number(_ i: Int) -> Int? {
            guard (0x30...0x39).contains(u[i]), (0x30...0x39).contains(u[i + 1]) else { return nil }
            return Int(u[i] - 0x30) * 10 + Int(u[i + 1] - 0x30)
        }
        guard let h1 = number(0), let m1 = number(3), let h2 = number(6), let m2 = number(9) else { return false }
        return h1 < 24 && h2 < 24 && m1 < 60 && m2 < 60 && (h1, m1) != (h2, m2)
    }
}

extension Substring {
    var notifyTrimmed: String { String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
}
