public import NucleicProtocol

/// Requests the host sent to an agent and is waiting on, each with a deadline.
///
/// Both backends can leave a request unanswered (DESIGN.md §4: a second Codex interrupt may get
/// no reply), so every request the host sends is tracked here and expires into a notice.
public struct PendingRequests<ID: Hashable & Sendable>: Sendable {
    public struct Entry: Sendable, Hashable {
        public var id: ID
        /// The request's method or subtype, for messages (`initialize`, `turn/interrupt`, …).
        public var method: String
        public var sentAt: Timestamp
        public var deadline: Timestamp
    }

    private var entries: [ID: Entry] = [:]
    private var order: [ID] = []

    public init() {}

    public var isEmpty: Bool { entries.isEmpty }
    public var all: [Entry] { order.compactMap { entries[$0] } }

    public mutating func add(_ id: ID, method: String, now: Timestamp, timeoutMS: Int64) {
        entries[id] = Entry(id: id, method: method, sentAt: now,
                            deadline: Timestamp(millisecondsSince1970: now.millisecondsSince1970 + timeoutMS))
        order.append(id)
    }

    /// Removes and returns the request a reply answers (nil: not ours, or already expired).
    public mutating func resolve(_ id: ID) -> Entry? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        order.removeAll { $0 == id }
        return entry
    }

    public func contains(method: String) -> Bool { entries.values.contains { $0.method == method } }

    /// Removes and returns every request whose deadline has passed, oldest first.
    public mutating func expire(now: Timestamp) -> [Entry] {
        let expired = order.compactMap { entries[$0] }.filter { $0.deadline <= now }
        for entry in expired { entries[entry.id] = nil }
        order.removeAll { entries[$0] == nil }
        return expired
    }

    /// The notice for an expired request.
    public static func timeoutNotice(_ entry: Entry, backend: String) -> AgentEvent {
        let seconds = Double(entry.deadline.millisecondsSince1970 - entry.sentAt.millisecondsSince1970) / 1000
        return .notice(level: .warning,
                       message: "\(backend) did not answer \(entry.method) (request \(entry.id)) within \(seconds) s",
                       code: "requestTimeout")
    }
}

/// Events shared by every codec.
enum CodecEvents {
    static func malformed(_ line: [UInt8], _ error: JSONParseError, backend: String) -> AgentEvent {
        .error(code: "malformedLine", message: "\(backend) wrote a line that is not JSON (\(error))", preview: Preview.text(line))
    }

    static func unreadable(_ line: [UInt8], _ what: String, _ error: ShapeError) -> AgentEvent {
        .error(code: "unreadableMessage", message: "could not read \(what): \(error.message)", preview: Preview.text(line))
    }
}
