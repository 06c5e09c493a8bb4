public import NucleicProtocol
import Synchronization

/// The host's rules in force, shared by the host (which stores them and changes them) and every
/// live session (which consults them on each request). A change is seen by the next request.
///
/// The store is the record; this is its in-memory copy, so that judging a request never waits
/// for the database.
public final class RuleBook: Sendable {
    private let state: Mutex<[Rule]>

    public init(_ rules: [Rule] = []) { state = Mutex(rules) }

    /// Every rule, oldest first.
    public var rules: [Rule] { state.withLock { $0 } }

    public func insert(_ rule: Rule) {
        state.withLock { rules in
            rules.removeAll { $0.id == rule.id }
            rules.append(rule)
        }
    }

    /// Removes a rule; returns it when there was one.
    @discardableResult
    public func remove(_ id: RuleID) -> Rule? {
        state.withLock { rules in
            guard let index = rules.firstIndex(where: { $0.id == id }) else { return nil }
            return rules.remove(at: index)
        }
    }
}
