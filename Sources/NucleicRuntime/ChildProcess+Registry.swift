import Synchronization

extension ChildProcess {
    /// The pids of the children `ChildProcess` has spawned and not yet reaped, so that the
    /// `Reaper` (which collects the orphans a subreaper inherits) leaves them to their monitors.
    ///
    /// ### Invariants
    /// - A child is registered before any other thread can see it unregistered: the spawn and
    ///   the registration happen under the lock the reaper takes to decide what to reap.
    /// - A pid leaves the registry only after its owner has reaped it.
    /// - Counted, not a set: after a reap, a recycled pid can be spawned again before the first
    ///   owner has let go of it.
    enum Registry {
        private static let owned = Mutex<[Int32: Int]>([:])

        /// Runs `spawn` (which returns a pid, or a value ≤ 0 when nothing started) under the
        /// registry's lock and registers the pid it made. Keep `spawn` short: it holds off the reaper.
        static func spawning(_ spawn: () -> Int32) -> Int32 {
            owned.withLock { owned in
                let pid = spawn()
                if pid > 0 { owned[pid, default: 0] += 1 }
                return pid
            }
        }

        /// Forgets `pid` once its owner has reaped it.
        static func release(_ pid: Int32) {
            owned.withLock { owned in
                guard let count = owned[pid] else { return }
                owned[pid] = count > 1 ? count - 1 : nil
            }
        }

        /// Whether `pid` is a child some `ChildProcess` owns.
        static func contains(_ pid: Int32) -> Bool {
            owned.withLock { $0[pid] != nil }
        }

        /// Runs `body` with the lock held and a test of ownership, so no spawn registers (and no
        /// owner releases) a pid while `body` decides which pids are free to reap.
        static func withOwnership<T: Sendable>(_ body: ((Int32) -> Bool) -> T) -> T {
            owned.withLock { owned in body { owned[$0] != nil } }
        }
    }
}
