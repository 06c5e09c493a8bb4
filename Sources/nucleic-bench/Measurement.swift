#if canImport(Glibc)
import Glibc
#endif

/// One timed pass over the input: how long it took and what it produced.
struct Measurement {
    var seconds: Double
    var bytes: Int
    var lines: Int
    /// Events a codec produced; nil for rows that make none.
    var events: Int?

    var megabytesPerSecond: Double { Double(bytes) / seconds / 1e6 }
    var linesPerSecond: Double { Double(lines) / seconds }
    var eventsPerSecond: Double? { events.map { Double($0) / seconds } }

    /// The fastest of several passes over the same input: the one least disturbed by the rest of
    /// the machine. Every pass must do the same work, so the counts are checked to agree.
    struct Best {
        private(set) var best: Measurement?

        mutating func add(_ m: Measurement) {
            if let b = best { precondition(b.lines == m.lines && b.events == m.events, "passes over the same input disagree") }
            if best == nil || m.seconds < best!.seconds { best = m }
        }
    }
}

/// Monotonic wall-clock time in seconds.
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Keeps a value alive as far as the optimizer can tell, so measured work is not removed.
@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

enum Format {
    /// `1.2M`, `845.3K`, `912`.
    static func count(_ value: Double) -> String {
        if value >= 1e6 { return fixed(value / 1e6, 1) + "M" }
        if value >= 1e3 { return fixed(value / 1e3, 1) + "K" }
        return fixed(value, 0)
    }

    /// `value` with `digits` decimals, without Foundation.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (value * scale).rounded()
        guard scaled.isFinite, abs(scaled) < 9e18 else { return String(value) }
        let n = Int64(scaled)
        guard digits > 0 else { return String(n) }
        let sign = n < 0 ? "-" : ""
        let magnitude = n.magnitude
        let s = Int64(scale)
        let fraction = String(magnitude % UInt64(s))
        return sign + String(magnitude / UInt64(s)) + "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    /// Columns: the first left-aligned, the rest right-aligned.
    static func table(_ rows: [[String]]) -> String {
        guard let columns = rows.map(\.count).max() else { return "" }
        let widths = (0..<columns).map { c in rows.map { c < $0.count ? $0[c].count : 0 }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { c, cell in c == 0 ? cell.padding(to: widths[c]) : cell.leftPadding(to: widths[c]) }
                .joined(separator: "   ")
        }.joined(separator: "\n")
    }
}
