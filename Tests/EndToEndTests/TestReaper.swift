import Foundation
import NucleicHarness
import NucleicRuntime
import Synchronization

/// Makes the test process a child subreaper, as the daemon is, and reaps the orphans it inherits.
///
/// Tests that check process hygiene need the subreaper: what a daemon or shim left behind is
/// re-parented here and can be listed. But an inherited child that exits and is never waited for
/// stays a zombie of the whole test process, and Swift Testing's exit tests (the store's memory
/// and file-size tests, run in child processes of this one) wait for their child by scanning
/// this process's children: a foreign zombie made that scan spin forever and the suite hang. So
/// a thread here reaps the orphans it inherited (the `git` and other commands an agent started,
/// re-parented here) — only after they have been zombies for 5 s, so that tests which collect
/// their own orphans (ChildProcessTests, `Orphans.collect`) get them first. Never reaped: what a
/// `ChildProcess` owns, process-group leaders (Foundation's `Process` makes each child one and
/// waits for it itself; daemons and shims lead their own sessions and are collected by pid),
/// re-runs of this executable (Swift Testing's exit-test children) and the fake agents (the
/// hygiene test fails if one is left a zombie here, so it must stay visible).
enum TestReaper {
    private static let started = Mutex(false)

    static func becomeSubreaper() throws {
        try Reaper.becomeSubreaper()
        let first = started.withLock { running -> Bool in
            defer { running = true }
            return !running
        }
        guard first else { return }
        let own = (try? String(contentsOfFile: "/proc/self/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        let spared: Set<String> = [FakeAgent.name, FakeAgent.childName]
        let thread = Thread {
            var zombieSince: [Int32: ContinuousClock.Instant] = [:]
            while true {
                let now = ContinuousClock.now
                Reaper.reapOrphans { pid, name in
                    if name == nil || name == own || spared.contains(name!) { return true }
                    guard let (state, group) = Self.stat(of: pid), state == "Z", group != pid else {
                        zombieSince[pid] = nil
                        return true
                    }
                    guard let since = zombieSince[pid] else {
                        zombieSince[pid] = now
                        return true
                    }
                    if now - since < .seconds(5) { return true }
                    zombieSince[pid] = nil
                    return false
                }
                usleep(200_000)
            }
        }
        thread.name = "test-reaper"
        thread.start()
    }

    /// A process's state letter and process group (a zombie's too), from `/proc/<pid>/stat`; nil
    /// if it is gone.
    static func stat(of pid: Int32) -> (Character, Int32)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 2, let state = fields[0].first, let group = Int32(fields[2]) else { return nil }
        return (state, group)
    }
}
