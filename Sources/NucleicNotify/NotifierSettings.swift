public import NucleicProtocol

/// A place a notification can go: the desktop, one paired device's push channel, ntfy, a webhook.
public struct ChannelID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    public static let desktop = ChannelID("desktop")
    public static let ntfy = ChannelID("ntfy")
    public static let webhook = ChannelID("webhook")
    /// A paired device's registered push channel.
    public static func device(_ id: String) -> ChannelID { ChannelID("device:\(id)") }
}

/// The rungs of the escalation ladder, in order.
public enum LadderStage: String, Sendable, Hashable, CaseIterable, Comparable {
    /// The desktop of the host's session: at once.
    case desk
    /// Every paired device with a registered push channel: after the grace time.
    case devices
    /// ntfy, webhook: after the further delay.
    case further

    public static func < (a: Self, b: Self) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }
}

/// One channel as the notifier knows it: its rung and the categories it takes.
public struct ChannelInfo: Sendable, Hashable {
    public var id: ChannelID
    public var stage: LadderStage
    public var categories: Set<NotificationCategory>

    public init(id: ChannelID, stage: LadderStage, categories: Set<NotificationCategory> = Set(NotificationCategory.allCases)) {
        self.id = id
        self.stage = stage
        self.categories = categories
    }
}

/// Local times of day during which only the desk is notified; what would reach a device or a
/// further channel meanwhile waits for the end, and goes then if it is still current.
public struct QuietHours: Sendable, Hashable {
    /// Minutes after local midnight; `start > end` spans midnight (22:00–07:00).
    public var start: Int
    public var end: Int

    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    /// `HH:MM-HH:MM`, or nil when it is not one.
    public init?(parsing text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let s = Self.minutes(parts[0]), let e = Self.minutes(parts[1]), s != e else { return nil }
        self.init(start: s, end: e)
    }

    static func minutes(_ text: Substring) -> Int? {
        let hm = text.split(separator: ":", omittingEmptySubsequences: false)
        guard hm.count == 2, hm[0].count == 2, hm[1].count == 2, let h = Int(hm[0]), let m = Int(hm[1]), (0..<24).contains(h),
            (0..<60).contains(m)
        else { return nil }
        return h * 60 + m
    }

    public func contains(minuteOfDay m: Int) -> Bool {
        start < end ? (start <= m && m < end) : (m >= start || m < end)
    }

    /// `t` itself when it is outside the quiet hours, else the moment they end.
    public func release(_ t: Timestamp, utcOffsetMinutes: Int) -> Timestamp {
        let localMs = t.millisecondsSince1970 + Int64(utcOffsetMinutes) * 60_000
        let dayMs: Int64 = 86_400_000
        let msOfDay = ((localMs % dayMs) + dayMs) % dayMs
        let minute = Int(msOfDay / 60_000)
        guard contains(minuteOfDay: minute) else { return t }
        var wait = Int64(end) * 60_000 - msOfDay
        if wait <= 0 { wait += dayMs }
        return Timestamp(millisecondsSince1970: t.millisecondsSince1970 + wait)
    }
}

/// How failed deliveries are tried again: after `initial`, doubling, at most `maximum` apart,
/// `attempts` times in all.
public struct RetryPolicy: Sendable, Hashable {
    public var initialMilliseconds: Int64
    public var maximumMilliseconds: Int64
    public var attempts: Int

    public init(initialMilliseconds: Int64 = 2_000, maximumMilliseconds: Int64 = 300_000, attempts: Int = 6) {
        self.initialMilliseconds = initialMilliseconds
        self.maximumMilliseconds = maximumMilliseconds
        self.attempts = attempts
    }

    /// The wait after failed attempt `attempt` (1-based).
    public func delay(after attempt: Int) -> Int64 {
        var d = initialMilliseconds
        for _ in 1..<max(1, attempt) where d < maximumMilliseconds { d *= 2 }
        return min(d, maximumMilliseconds)
    }
}

/// What the person chose (docs/CONFIG.md, the `notify-*` keys).
public struct NotifierSettings: Sendable, Hashable {
    /// How long after the desk the devices are notified (default 60 s).
    public var graceMilliseconds: Int64
    /// How long after the desk the further channels are notified (default 5 min).
    public var furtherMilliseconds: Int64
    /// The categories notified at all.
    public var categories: Set<NotificationCategory>
    public var quietHours: QuietHours?
    /// The host's offset from UTC, for quiet hours (the daemon reads it from its time zone).
    public var utcOffsetMinutes: Int
    public var retry: RetryPolicy

    public init(graceMilliseconds: Int64 = 60_000, furtherMilliseconds: Int64 = 300_000,
                categories: Set<NotificationCategory> = Set(NotificationCategory.allCases), quietHours: QuietHours? = nil,
                utcOffsetMinutes: Int = 0, retry: RetryPolicy = RetryPolicy()) {
        self.graceMilliseconds = graceMilliseconds
        self.furtherMilliseconds = furtherMilliseconds
        self.categories = categories
        self.quietHours = quietHours
        self.utcOffsetMinutes = utcOffsetMinutes
        self.retry = retry
    }

    /// The delay of a rung after the notification arose.
    public func delay(_ stage: LadderStage) -> Int64 {
        switch stage {
        case .desk: 0
        case .devices: graceMilliseconds
        case .further: max(graceMilliseconds, furtherMilliseconds)
        }
    }
}
