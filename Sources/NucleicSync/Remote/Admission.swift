/// Who may hold one of the remote listener's connections: a pure state machine, fed the
/// arrivals, authentications and departures of connections with the time, and answering with
/// what to do. `RemoteServer` keeps one under a lock.
///
/// Any peer on the network can open TCP connections and say nothing, so connections that have not
/// yet proved a paired device's key (pending) and those that have (authenticated) have budgets of
/// their own, and a pending one can never take an authenticated one's place:
///
/// - **Pending**: at most `maxPendingPerAddress` per source address and `maxPending` in all. A new
///   connection over either bound evicts the oldest pending one (of its own address, or of the
///   address holding the most), so silent holders are pushed out by whoever comes next, and a
///   device, whose handshake takes milliseconds, gets through. The handshake timeout still ends
///   the ones that stay silent.
/// - **Attempts**: each address has a token bucket (`attemptBurst` at once, `attemptsPerSecond`
///   after): a connection arriving with no token is refused at once, so one address cannot churn
///   the pending budget faster than that.
/// - **Authenticated**: at most `maxAuthenticated`; pending connections never count against it.
/// - **Log lines**: a refusal or eviction is reported at most once per `logInterval` per address,
///   with the number of the ones not reported since.
///
/// A flood from the very address a device uses can still delay that device (nothing tells the
/// two apart before the first handshake message); its reconnects get through as tokens refill.
struct Admission {
    struct Limits: Sendable, Equatable {
        var maxPending = 32
        var maxPendingPerAddress = 8
        var maxAuthenticated = 64
        var attemptBurst = 64.0
        var attemptsPerSecond = 32.0
        var logInterval: Duration = .seconds(10)
    }

    /// What to do with an arriving connection.
    enum Arrival: Equatable {
        /// Serve it; close `evicting` first if set (the oldest pending connection it replaces).
        case admit(evicting: Key?)
        /// Close it at once.
        case refuse(reason: String)
    }

    typealias Key = ObjectIdentifier

    struct Pending: Equatable {
        let key: Key
        let address: String
        let since: ContinuousClock.Instant
    }

    struct Bucket: Equatable {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    struct LogState: Equatable {
        var last: ContinuousClock.Instant?
        var unreported = 0
    }

    let limits: Limits
    /// Pending connections, oldest first.
    private(set) var pending: [Pending] = []
    private(set) var authenticated: Set<Key> = []
    private(set) var buckets: [String: Bucket] = [:]
    private(set) var logs: [String: LogState] = [:]

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// A connection from `address` (a host, without the port) arrived at `now`.
    mutating func arrive(_ key: Key, address: String, now: ContinuousClock.Instant) -> Arrival {
        var bucket = buckets[address] ?? Bucket(tokens: limits.attemptBurst, updated: now)
        let elapsed = bucket.updated.duration(to: now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        bucket.tokens = min(limits.attemptBurst, bucket.tokens + max(0, seconds) * limits.attemptsPerSecond)
        bucket.updated = now
        guard bucket.tokens >= 1 else {
            buckets[address] = bucket
            return .refuse(reason: "too many connection attempts from \(address) (more than \(Int(limits.attemptsPerSecond)) a second)")
        }
        bucket.tokens -= 1
        buckets[address] = bucket
        var evicting: Key?
        if pending.count(where: { $0.address == address }) >= limits.maxPendingPerAddress {
            evicting = pending.first { $0.address == address }?.key
        } else if pending.count >= limits.maxPending {
            evicting = oldestOfTheBusiestAddress()
        }
        if let evicting { pending.removeAll { $0.key == evicting } }
        pending.append(Pending(key: key, address: address, since: now))
        return .admit(evicting: evicting)
    }

    /// The connection proved a paired device's key. False (and the connection is forgotten) when
    /// every authenticated slot is taken.
    mutating func authenticate(_ key: Key) -> Bool {
        pending.removeAll { $0.key == key }
        guard authenticated.count < limits.maxAuthenticated else { return false }
        authenticated.insert(key)
        return true
    }

    /// The connection ended (or was evicted or refused after arriving).
    mutating func leave(_ key: Key) {
        pending.removeAll { $0.key == key }
        authenticated.remove(key)
    }

    /// Whether a refusal or eviction concerning `address` should be logged now; when it should,
    /// also how many were not logged since the last line. Counts the ones that should not.
    mutating func shouldLog(_ address: String, now: ContinuousClock.Instant) -> (log: Bool, unreported: Int) {
        var state = logs[address] ?? LogState()
        defer { logs[address] = state }
        if let last = state.last, last.duration(to: now) < limits.logInterval {
            state.unreported += 1
            return (false, 0)
        }
        let unreported = state.unreported
        state = LogState(last: now, unreported: 0)
        return (true, unreported)
    }

    /// Forgets the buckets and log states of addresses that have nothing pending and whose bucket
    /// is full again, so the tables do not grow with every address ever seen.
    mutating func prune(now: ContinuousClock.Instant) {
        let busy = Set(pending.map(\.address))
        let refill = limits.attemptBurst / limits.attemptsPerSecond
        buckets = buckets.filter { address, bucket in
            busy.contains(address) || bucket.updated.duration(to: now) < .seconds(refill)
        }
        logs = logs.filter { _, state in
            guard let last = state.last else { return state.unreported > 0 }
            return last.duration(to: now) < limits.logInterval || state.unreported > 0
        }
    }

    /// The oldest pending connection among those of the addresses that have the most pending.
    private func oldestOfTheBusiestAddress() -> Key? {
        var counts: [String: Int] = [:]
        for connection in pending { counts[connection.address, default: 0] += 1 }
        guard let most = counts.values.max() else { return nil }
        return pending.first { counts[$0.address] == most }?.key
    }

    /// The host part of a peer name: `1.2.3.4:5678` → `1.2.3.4`, `[::1]:5678` → `::1`.
    static func address(ofPeer peer: String) -> String {
        guard let colon = peer.lastIndex(of: ":") else { return peer }
        var host = String(peer[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }
}
