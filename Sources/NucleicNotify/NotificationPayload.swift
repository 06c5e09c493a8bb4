public import NucleicProtocol

/// What a notification is about: a person is needed, or a run is over.
public enum NotificationCategory: String, Sendable, Hashable, CaseIterable, Comparable {
    /// An approval or a question waits for a person.
    case needsYou = "needs-you"
    /// A run finished or failed.
    case done

    /// How loudly each channel carries it: needs-you is urgent, done is not.
    public var priority: NotificationPriority { self == .needsYou ? .high : .normal }

    public static func < (a: Self, b: Self) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }
}

/// A channel's loudness for a notification (ntfy `urgent` / `default`, Web Push `Urgency`,
/// APNs priority, the desktop's urgency hint).
public enum NotificationPriority: String, Sendable, Hashable {
    case normal, high
}

/// Everything that leaves the host about one notification, on every channel.
///
/// ### Invariants
/// - Carries the project, the session's title and handle, the category, a reason made of the
///   tool's name and its risk, and the opaque session and approval ids: never a command, a
///   file's content, a path or a diff. `reason` is built here from the tool's name and risk
///   only, so no tool input can reach it.
public struct NotificationPayload: Sendable, Hashable {
    public var project: String
    public var title: String
    public var handle: String?
    public var category: NotificationCategory
    /// "needs approval: Bash, risk write", "asks a question", "finished", "failed".
    public var reason: String
    public var sessionID: SessionID
    public var approvalID: ApprovalID?
    /// The risk gate lets this approval be allowed in one step (a desktop notification's Allow).
    /// Not part of the wire body; channels that offer actions read it.
    public var answerableInline: Bool

    public init(project: String, title: String, handle: String?, category: NotificationCategory, reason: String,
                sessionID: SessionID, approvalID: ApprovalID? = nil, answerableInline: Bool = false) {
        self.project = project
        self.title = title
        self.handle = handle
        self.category = category
        self.reason = reason
        self.sessionID = sessionID
        self.approvalID = approvalID
        self.answerableInline = answerableInline
    }

    /// The channels' replace key: one notification per session and category, so a new state of
    /// the same kind replaces the old one (Web Push `Topic`, `apns-collapse-id`, the desktop's
    /// `replaces_id`, ntfy's sequence id). At most 32 characters of the URL-safe alphabet, what
    /// Web Push allows for `Topic`.
    public var collapseID: String {
        let prefix = category == .needsYou ? "n" : "d"
        let id = sessionID.rawValue.filter { $0.isASCII && ($0.isLetter || $0.isNumber) }
        return prefix + String(id.suffix(31))
    }

    /// The route a tap opens in a client (docs/CLIENTS.md).
    public var deepLink: String {
        if let approvalID { return "nucleic://approval/\(approvalID.rawValue)" }
        return "nucleic://session/\(sessionID.rawValue)"
    }

    /// The one-line heading a channel shows: `project · 12 title`.
    public var heading: String {
        let name = handle.map { "\($0) " } ?? ""
        return "\(project) · \(name)\(title)"
    }

    /// The body every JSON channel sends (Web Push, ntfy's message is text, the webhook): exactly
    /// these fields, in this order; `handle` and `approvalID` only when set.
    public var json: JSONValue {
        var o = JSONObject()
        o.append("category", .string(category.rawValue))
        o.append("project", .string(project))
        o.append("title", .string(title))
        o.append("handle", ifPresent: handle.map(JSONValue.string))
        o.append("reason", .string(reason))
        o.append("sessionID", .string(sessionID.rawValue))
        o.append("approvalID", ifPresent: approvalID.map { .string($0.rawValue) })
        o.append("url", .string(deepLink))
        return .object(o)
    }

    /// The reason of a pending approval: its tool's name and its risk, or that it is a question.
    public static func reason(toolName: String, risk: Risk, isQuestion: Bool) -> String {
        if isQuestion { return "asks a question" }
        // A tool's name is the agent's identifier for it (Bash, Edit, mcp__server__tool), not
        // input; it is cut short so a pathological one cannot carry much.
        return "needs approval: \(toolName.prefix(64)), risk \(risk.rawValue)"
    }
}

extension NotificationPayload: JSONRepresentable {
    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "notification")
        guard let category = NotificationCategory(rawValue: try f.string("category")) else {
            throw ShapeError("notification: unknown category")
        }
        self.init(project: try f.string("project"), title: try f.string("title"), handle: try f.optionalString("handle"),
                  category: category, reason: try f.string("reason"), sessionID: SessionID(try f.string("sessionID")),
                  approvalID: try f.optionalString("approvalID").map { ApprovalID($0) },
                  answerableInline: try f.bool("answerableInline", default: false))
    }

    /// `json` with the fields only the host keeps (for its own state file).
    var stored: JSONValue {
        guard case .object(var o) = json else { return json }
        if answerableInline { o.append("answerableInline", .bool(true)) }
        return .object(o)
    }
}
