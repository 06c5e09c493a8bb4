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
/// a thread here reaps exited children that no `ChildProcess` owns, sparing re-runs of this
/// executable (the exit tests' own children, which Swift Testing waits for) and the fake agents
/// (ProcessHygieneTests fails if one is left a zombie here, so it must stay visible). Tests that
/// collect a pid themselves (`Orphans.reap`) already accept finding it reaped.
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
                Reaper.reapOrphans { _, name in name == nil || name == own || spared.contains(name!) }
                usleep(100_000)
            }
        }
        thread.name = "test-reaper"
        thread.start()
    }
}
