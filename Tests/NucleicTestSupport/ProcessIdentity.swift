public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A process named by its pid and its start time, so that a signal meant for it never reaches a
/// later process that was given the same pid.
///
/// The whole suite starts hundreds of processes a second and this machine's `pid_max` is 32,768,
/// so pids come round again within a minute or two: a pid kept for a later `kill` (a watchdog, a
/// clean-up after the test) may by then name another test's peer. Take the identity while the
/// process is known to be the one meant, and signal through it.
public struct ProcessIdentity: Sendable, Equatable, CustomStringConvertible {
    public let pid: Int32
    /// Clock ticks after boot (`/proc/<pid>/stat`, field 22).
    public let startTicks: UInt64

    /// The identity of the process that has `pid` now; nil if there is none.
    public init?(_ pid: Int32) {
        guard pid > 0, let ticks = Self.startTicks(of: pid) else { return nil }
        self.pid = pid
        startTicks = ticks
    }

    /// Whether `pid` still names this process (running, or a zombie not yet reaped).
    public var exists: Bool { Self.startTicks(of: pid) == startTicks }

    /// When the process started, on the wall clock (to within the second `btime` is given in).
    public var startedAt: Date? {
        guard let boot = Self.bootTime else { return nil }
        return boot.addingTimeInterval(Double(startTicks) / Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// Sends `signal` if `pid` still names this process; whether it was sent.
    @discardableResult
    public func signal(_ signal: Int32) -> Bool {
        guard exists else { return false }
        return kill(pid, signal) == 0
    }

    public var description: String { "pid \(pid) (started at tick \(startTicks))" }

    static func startTicks(of pid: Int32) -> UInt64? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After the command name: state is field 3, so start time (field 22) is the 20th here.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }

    static var bootTime: Date? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
              let seconds = Double(line.dropFirst("btime ".count)) else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }
}
