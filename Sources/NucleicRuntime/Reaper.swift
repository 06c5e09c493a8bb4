import CShims
import Glibc
import Synchronization
import NucleicSystem

/// Makes this process a child subreaper and reaps the orphans it then inherits.
///
/// Agents leave children behind: MCP servers, dev servers, a shell's background jobs. When their
/// parent dies they are re-parented to the nearest subreaper, else to PID 1, which on these
/// machines does not reap (DESIGN.md §7). With the daemon as subreaper they become its children,
/// and this reaper collects every child that has exited and that no `ChildProcess` owns. Owned
/// children are left to their monitors, which reap them through their pidfd: a `waitpid(-1)` here
/// would steal their exit status.
///
/// A pass runs every `interval` and whenever nudged (a `ChildProcess` exited, or finished
/// terminating its group: the moments orphans appear and die). It is not driven by SIGCHLD: a
/// handler would make every blocking call in the daemon liable to EINTR, and Dispatch's signal
/// sources block the signal thread by thread. A zombie that waits one interval costs a slot in
/// the process table, nothing more.
///
/// Orphans that are still running are left alone: a dev server an agent started on purpose may
/// outlive it. A session's process group is what discard and shutdown kill
/// (`ChildProcess.terminate`); whatever of it was orphaned is reaped here once it dies.
///
/// ### Invariants
/// - Never reaps a pid `ChildProcess.Registry` holds: which pids to wait for is decided, and the
///   waits made, under the registry's lock, which every spawn also holds until it has registered.
/// - Waits only with `waitpid(pid, WNOHANG)` on a listed child: never blocks, never `-1`.
/// - At most one reaper thread per process.
public final class Reaper: Sendable {
    /// One reaped orphan.
    public struct Reaped: Sendable, Hashable {
        public let pid: Int32
        /// Its command name (`/proc/<pid>/comm`), if it could be read before it was reaped.
        public let name: String?
        public let status: ChildProcess.ExitStatus
    }

    private struct State {
        var wake: (read: Int32, write: Int32)?
        var stopping = false
        var reaped = 0
    }

    /// The running reaper's wake-up pipe; nil when none runs. Pokes and the close both happen
    /// under this lock, so no poke writes to a closed (and maybe reused) descriptor.
    private static let state = Mutex(State())

    private let interval: Duration

    private init(interval: Duration) { self.interval = interval }

    /// Makes this process a child subreaper and starts the reaper thread.
    ///
    /// - Throws: `ProcessError` if `prctl(PR_SET_CHILD_SUBREAPER)`, the wake-up pipe or the thread
    ///   cannot be had, or a reaper already runs in this process (`resourceUnavailable`).
    public static func start(interval: Duration = .seconds(1)) throws(ProcessError) -> Reaper {
        try becomeSubreaper()
        var fds: [Int32] = [-1, -1]
        let pipeRC = nucleic_pipe_cloexec(&fds, 1)
        guard pipeRC == 0 else {
            throw ProcessError(.resourceUnavailable, "cannot create the reaper's wake-up pipe: \(errnoName(-pipeRC))",
                               function: "pipe2", errno: -pipeRC)
        }
        let installed = state.withLock { state -> Bool in
            guard state.wake == nil else { return false }
            state.wake = (fds[0], fds[1])
            state.stopping = false
            return true
        }
        guard installed else {
            _ = Glibc.close(fds[0])
            _ = Glibc.close(fds[1])
            throw ProcessError(.resourceUnavailable, "a reaper already runs in this process")
        }
        let reaper = Reaper(interval: interval)
        let readEnd = fds[0]
        let threadRC = startDetachedThread(name: "nucleic-reaper") { reaper.run(readEnd: readEnd) }
        guard threadRC == 0 else {
            closeWakePipe()
            throw ProcessError(.resourceUnavailable, "cannot start the reaper thread: \(errnoName(threadRC))",
                               function: "pthread_create", errno: threadRC)
        }
        return reaper
    }

    /// `prctl(PR_SET_CHILD_SUBREAPER, 1)`: orphaned descendants become this process's children.
    public static func becomeSubreaper() throws(ProcessError) {
        let rc = nucleic_set_child_subreaper()
        guard rc == 0 else {
            throw ProcessError(.resourceUnavailable, "cannot become a child subreaper: \(errnoName(-rc)); orphaned agent children would not be reaped",
                               function: "prctl(PR_SET_CHILD_SUBREAPER)", errno: -rc)
        }
    }

    /// Stops the reaper thread (after one last pass). Idempotent. The process stays a subreaper.
    public func stop() {
        Self.state.withLock { state in
            state.stopping = true
            if let wake = state.wake { Self.poke(wake.write) }
        }
    }

    /// Asks the running reaper (if any) for a pass now. Cheap; callable from any thread.
    public static func nudge() {
        state.withLock { state in
            if let wake = state.wake { poke(wake.write) }
        }
    }

    /// How many orphans the running reaper has collected so far.
    public static var reapedCount: Int { state.withLock { $0.reaped } }

    private func run(readEnd: Int32) {
        let timeout = Int32(clamping: interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)
        while true {
            var fd = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&fd, 1, max(timeout, 1))
            if ready > 0 { Self.drain(readEnd) }
            let reaped = Self.reapOrphans()
            let stopping = Self.state.withLock { state -> Bool in
                state.reaped += reaped.count
                return state.stopping
            }
            for orphan in reaped {
                HostLog.info("reaped orphan \(orphan.pid)\(orphan.name.map { " (\($0))" } ?? ""): \(orphan.status)")
            }
            if stopping { break }
        }
        Self.closeWakePipe()
    }

    // MARK: One pass

    /// Reaps every child of this process that has exited and that no `ChildProcess` owns.
    ///
    /// Safe to call from any thread, with or without a reaper running; never blocks on a child.
    /// `sparing` keeps children it returns true for (by pid and command name) for someone else
    /// to wait for.
    @discardableResult
    public static func reapOrphans(sparing: (Int32, String?) -> Bool = { _, _ in false }) -> [Reaped] {
        // Listed without the lock: a child seen here either is registered by the time the lock
        // is ours (its spawn holds the lock until it has registered), or is an orphan.
        let candidates = children()
        guard !candidates.isEmpty else { return [] }
        return ChildProcess.Registry.withOwnership { isOwned in
            var reaped: [Reaped] = []
            for pid in candidates where !isOwned(pid) {
                let name = commandName(pid)
                if sparing(pid, name) { continue }
                var status: Int32 = 0
                var rc: Int32
                rc = Syscall.waitpid(pid, &status, WNOHANG)
                guard rc == pid else { continue }  // 0: still running; -1 (ECHILD): not ours any more
                let exit: ChildProcess.ExitStatus = nucleic_wifsignaled(status) != 0
                    ? .signaled(nucleic_wtermsig(status)) : .exited(nucleic_wexitstatus(status))
                reaped.append(Reaped(pid: pid, name: name, status: exit))
            }
            return reaped
        }
    }

    /// The pids of this process's children, running or not, from `/proc/self/task/*/children`
    /// (each thread has its own: a child belongs to the thread that forked it, and an orphan to
    /// whichever thread the kernel picked). Falls back to scanning `/proc/*/stat` for our pid as
    /// parent where the kernel lacks `children` files.
    public static func children() -> [Int32] {
        guard let tasks = opendir("/proc/self/task") else { return childrenByScan() }
        defer { closedir(tasks) }
        var result: [Int32] = []
        var sawFile = false
        while let entry = readdir(tasks) {
            guard let tid = ProcEntry.number(entry) else { continue }
            guard let text = ProcEntry.read("/proc/self/task/\(tid)/children") else { continue }
            sawFile = true
            result += text.split(separator: " ").compactMap { Int32($0.trimmingSpace) }
        }
        return sawFile ? result : childrenByScan()
    }

    private static func childrenByScan() -> [Int32] {
        let me = getpid()
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var result: [Int32] = []
        while let entry = readdir(directory) {
            guard let pid = ProcEntry.number(entry), let stat = ProcEntry.read("/proc/\(pid)/stat"),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ", maxSplits: 3)
            if fields.count >= 2, Int32(fields[1]) == me { result.append(pid) }
        }
        return result
    }

    private static func commandName(_ pid: Int32) -> String? {
        ProcEntry.read("/proc/\(pid)/comm").map { String($0[...].trimmingSpace) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    // MARK: Wake-up pipe

    private static func poke(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = Glibc.write(fd, &byte, 1)  // EAGAIN: the pipe is full, so the thread wakes anyway
    }

    private static func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64)
        while buffer.withUnsafeMutableBytes({ Glibc.read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    private static func closeWakePipe() {
        state.withLock { state in
            if let wake = state.wake {
                _ = Glibc.close(wake.read)
                _ = Glibc.close(wake.write)
            }
            state.wake = nil
        }
    }
}

/// Small readers for `/proc`.
enum ProcEntry {
    /// The entry's name as a positive number (a pid or tid), else nil.
    static func number(_ entry: UnsafeMutablePointer<dirent>) -> Int32? {
        withUnsafeBytes(of: entry.pointee.d_name) { name -> Int32? in
            var value: Int32 = 0
            for byte in name {
                if byte == 0 { break }
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int32(byte - UInt8(ascii: "0"))
            }
            return value > 0 ? value : nil
        }
    }

    /// A small `/proc` file's text (at most 64 KiB), nil if it cannot be read.
    static func read(_ path: String) -> String? {
        (try? WholeFile.read(path, limit: 1 << 16))?.map { String(decoding: $0, as: UTF8.self) }
    }
}

extension Substring {
    fileprivate var trimmingSpace: Substring {
        var s = self
        while let last = s.last, last == "\n" || last == " " { s.removeLast() }
        return s
    }
}
