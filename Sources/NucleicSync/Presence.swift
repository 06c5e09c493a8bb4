public import NucleicProtocol
import Synchronization

/// Which sessions someone is looking at now: the count of `foreground` subscriptions per
/// session over every client (a `watch`, a phone's open view), and a stream of the changes from
/// none to some and back. The notifier reads it: a session someone looks at is not notified.
public final class Presence: Sendable {
    public struct Change: Sendable, Hashable {
        public var sessionID: SessionID
        public var foreground: Bool
    }

    private struct State {
        var counts: [SessionID: Int] = [:]
        var listeners: [Int: AsyncStream<Change>.Continuation] = [:]
        var nextListener = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// The sessions with at least one foreground subscriber.
    public var foregroundSessions: Set<SessionID> { state.withLock { Set($0.counts.keys) } }

    /// Every change from now on: first one `foreground: true` per session looked at now.
    public func changes() -> AsyncStream<Change> {
        let (stream, continuation) = AsyncStream.makeStream(of: Change.self)
        let key = state.withLock { s in
            defer { s.nextListener += 1 }
            s.listeners[s.nextListener] = continuation
            for id in s.counts.keys.sorted() { continuation.yield(Change(sessionID: id, foreground: true)) }
            return s.nextListener
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.listeners.removeValue(forKey: key) } }
        return stream
    }

    func acquire(_ id: SessionID) {
        state.withLock { s in
            s.counts[id, default: 0] += 1
            if s.counts[id] == 1 { for l in s.listeners.values { l.yield(Change(sessionID: id, foreground: true)) } }
        }
    }

    func release(_ id: SessionID) {
        state.withLock { s in
            guard let n = s.counts[id] else { return }
            if n > 1 {
                s.counts[id] = n - 1
            } else {
                s.counts[id] = nil
                for l in s.listeners.values { l.yield(Change(sessionID: id, foreground: false)) }
            }
        }
    }
}
