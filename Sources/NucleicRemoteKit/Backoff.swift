public import NucleicProtocol

/// Time as the connection sees it: injectable, so tests never wait for real time and assert the
/// delays instead.
public protocol RemoteClock: Sendable {
    func now() -> Timestamp
    /// Waits `milliseconds`; throws when the task is cancelled.
    func sleep(milliseconds: Int64) async throws
}

/// The real clock.
public struct SystemClock: RemoteClock {
    public init() {}
    public func now() -> Timestamp { .now() }
    public func sleep(milliseconds: Int64) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, milliseconds)) * 1_000_000)
    }
}

/// Exponential backoff with "equal jitter": attempt `n` waits between half and all of
/// `min(max, initial × multiplierⁿ)`, so many clients dropped together do not return together,
/// and none waits less than half the nominal delay.
public struct Backoff: Sendable, Hashable {
    public var initialMilliseconds: Int64
    public var maxMilliseconds: Int64
    public var multiplier: Int64

    public init(initialMilliseconds: Int64 = 250, maxMilliseconds: Int64 = 30_000, multiplier: Int64 = 2) {
        self.initialMilliseconds = max(1, initialMilliseconds)
        self.maxMilliseconds = max(self.initialMilliseconds, maxMilliseconds)
        self.multiplier = max(1, multiplier)
    }

    /// The nominal delay before attempt `attempt` (0-based), before jitter.
    public func nominal(attempt: Int) -> Int64 {
        var d = initialMilliseconds
        for _ in 0..<max(0, attempt) {
            if d >= maxMilliseconds / multiplier { return maxMilliseconds }
            d *= multiplier
        }
        return min(d, maxMilliseconds)
    }

    /// The delay before attempt `attempt`, with `jitter` in [0, 1) (clamped) choosing a point
    /// in [nominal/2, nominal].
    public func delay(attempt: Int, jitter: Double) -> Int64 {
        let n = nominal(attempt: attempt)
        let j = jitter.isFinite ? min(max(jitter, 0), 1) : 0
        return n / 2 + Int64((Double(n - n / 2) * j).rounded(.down))
    }
}
