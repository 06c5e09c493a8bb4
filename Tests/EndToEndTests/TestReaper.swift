import Foundation
import NucleicRuntime
import Synchronization

/// Makes the test process a child subreaper, as the daemon is, and reaps the orphans it inherits.
///
/// Tests that check process hygiene need the subreaper: what a daemon or shim left behind is
/// re-parented here and can be listed. But an inherited child that exits and is never waited for
/// stays a zombie of the whole test process, and Swift Testing's exit tests (the store's memory
/// and file-size tests, run in child processes of this one) wait for their child by scanning
/// this process's children: a foreign zombie made that scan spin forever and the suite hang. So
/// a thread here reaps exited children that no `ChildProcess` owns and that lead no process group
/// of their own: the orphans (the `git` and other commands an agent started, re-parented here).
/// Group leaders are someone's to wait for: Foundation's `Process` makes each child one, and the
/// daemons and shims a test collects by pid (`Orphans.collect`) lead their own sessions. Re-runs
/// of this executable (Swift Testing's exit-test children) and the fake agents (the hygiene test
/// fails if one is left a zombie here, so it must stay visible) are spared too.
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
            while true {
                Reaper.reapOrphans { pid, name in
                    name == nil || name == own || spared.contains(name!) || Self.group(of: pid) ?? pid == pid
                }
                usleep(100_000)
            }
        }
        thread.name = "test-reaper"
        thread.start()
    }

    /// The process group of a process (a zombie's too), from `/proc/<pid>/stat`; nil if it is gone.
    static func group(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 2 ? Int32(fields[2]) : nil
    }
}
