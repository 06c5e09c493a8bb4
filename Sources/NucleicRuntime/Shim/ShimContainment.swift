import Glibc
import NucleicSystem

/// What holds everything a shim's agent starts, so ending the session ends all of it, whatever
/// sessions or process groups the agent's children made of themselves.
///
/// Two mechanisms, the stronger one when the machine allows it:
/// - **cgroup**: where cgroup v2 is mounted and this user may create a cgroup below its own
///   (delegation), the shim makes `nucleic-shim-<pid>` there and moves itself into it before it
///   starts the agent, so every process the agent starts is born inside it and is listed in its
///   `cgroup.procs`, however it detaches (`setsid`, double forks, new groups).
/// - **subreaper**: otherwise the shim is the child subreaper (`PR_SET_CHILD_SUBREAPER`) of the
///   agent's tree: whatever is orphaned below it is re-parented to it, never to PID 1, so the
///   tree below the shim (`/proc/<pid>/task/*/children`, walked) holds every descendant.
///
/// The shim is a subreaper in both cases (it reaps what it inherits). `description` says which
/// is in force; the shim writes it into `shim.json` and its log, and the daemon logs it.
///
/// ### Invariants
/// - `members()` never lists the shim itself.
/// - `end(grace:)` returns once no member is left or after SIGKILL did not help for `grace`.
final class ShimContainment: @unchecked Sendable {  // set once at start; `cgroup` is read-only after
    /// The cgroup folder in force, nil when only the subreaper tree is.
    let cgroup: String?
    /// The cgroup the shim was in before, to go back to when it leaves (so its own can be removed).
    private let previous: String?

    private init(cgroup: String?, previous: String?) {
        self.cgroup = cgroup
        self.previous = previous
    }

    /// `cgroup v2 (<path>)` or `subreaper`.
    var description: String { cgroup.map { "cgroup v2 (\($0))" } ?? "subreaper" }
    var kind: String { cgroup == nil ? "subreaper" : "cgroup" }

    /// Moves this process into a cgroup of its own when it can; otherwise the subreaper tree.
    static func make() -> ShimContainment {
        if ProcessEnvironmentFlag.disabled("NUCLEIC_NO_CGROUP") { return ShimContainment(cgroup: nil, previous: nil) }
        guard let mount = cgroup2Mount(), let own = ownCgroup() else { return ShimContainment(cgroup: nil, previous: nil) }
        let parent = own == "/" ? mount : mount + own
        let path = parent + "/nucleic-shim-\(getpid())"
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { return ShimContainment(cgroup: nil, previous: nil) }
        guard write("\(getpid())\n", to: path + "/cgroup.procs") else {
            rmdir(path)
            return ShimContainment(cgroup: nil, previous: nil)
        }
        return ShimContainment(cgroup: path, previous: parent)
    }

    /// The processes the agent's session holds now (running ones; zombies wait for their reaper).
    func members() -> [Int32] {
        let me = getpid()
        if let cgroup, let text = ProcEntry.read(cgroup + "/cgroup.procs") {
            return text.split(separator: "\n").compactMap { Int32($0) }.filter { $0 != me && !Self.isZombie($0) }
        }
        var found: [Int32] = []
        var frontier = [me]
        while let pid = frontier.popLast() {
            for child in Self.children(of: pid) where !found.contains(child) {
                if !Self.isZombie(child) { found.append(child) }
                frontier.append(child)
            }
        }
        return found
    }

    /// Sends `signal` to every member.
    func signalAll(_ signal: Int32) {
        for pid in members() { _ = kill(pid, signal) }
    }

    /// SIGTERM to every member, up to `grace` seconds for them to go, then SIGKILL until none is
    /// left (a member may fork meanwhile: each round lists them again). Reaps what it inherits.
    /// Returns how many were still there for SIGKILL.
    @discardableResult
    func end(grace: Double) -> Int {
        guard !members().isEmpty else { return 0 }
        signalAll(SIGTERM)
        let deadline = ShimMonitor.monotonicSeconds() + grace
        while !members().isEmpty, ShimMonitor.monotonicSeconds() < deadline {
            usleep(20_000)
            Self.reapOrphans()
        }
        var killed = 0
        let last = ShimMonitor.monotonicSeconds() + max(grace, 5)
        while case let left = members(), !left.isEmpty, ShimMonitor.monotonicSeconds() < last {
            killed = max(killed, left.count)
            for pid in left { _ = kill(pid, SIGKILL) }
            usleep(20_000)
            Self.reapOrphans()
        }
        return killed
    }

    /// Reaps the orphans that have exited, logging each (the shim's log is its stderr).
    static func reapOrphans() {
        for orphan in Reaper.reapOrphans() {
            HostLog.info("reaped orphan \(orphan.pid)\(orphan.name.map { " (\($0))" } ?? ""): \(orphan.status)")
        }
    }

    /// Leaves the cgroup (back to the one the shim came from) and removes it, once it is empty.
    func dispose() {
        guard let cgroup, let previous else { return }
        _ = Self.write("\(getpid())\n", to: previous + "/cgroup.procs")
        rmdir(cgroup)
    }

    // MARK: Reading the system

    /// Where cgroup v2 is mounted (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on hybrid
    /// machines), from `/proc/self/mountinfo`.
    static func cgroup2Mount() -> String? {
        guard let text = ProcEntry.read("/proc/self/mountinfo") else { return nil }
        for line in text.split(separator: "\n") {
            // "36 25 0:30 / /sys/fs/cgroup rw,… shared:9 - cgroup2 cgroup2 rw"
            let fields = line.split(separator: " ")
            guard let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count, fields[dash + 1] == "cgroup2", fields.count >= 5 else { continue }
            return String(fields[4])
        }
        return nil
    }

    /// This process's cgroup v2 path (`0::<path>` in `/proc/self/cgroup`).
    static func ownCgroup() -> String? {
        guard let text = ProcEntry.read("/proc/self/cgroup") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("0::") {
            let path = String(line.dropFirst(3))
            return path.isEmpty ? nil : path
        }
        return nil
    }

    static func children(of pid: Int32) -> [Int32] {
        guard let tasks = opendir("/proc/\(pid)/task") else { return [] }
        defer { closedir(tasks) }
        var result: [Int32] = []
        while let entry = readdir(tasks) {
            guard let tid = ProcEntry.number(entry), let text = ProcEntry.read("/proc/\(pid)/task/\(tid)/children") else { continue }
            result += text.split(separator: " ").compactMap { Int32($0.filter { $0 != "\n" }) }
        }
        return result
    }

    static func isZombie(_ pid: Int32) -> Bool {
        guard let stat = ProcEntry.read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return true }
        let rest = stat[stat.index(after: close)...].drop { $0 == " " }
        return rest.first == "Z" || rest.first == "X"
    }

    @discardableResult
    static func write(_ text: String, to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count
    }
}

/// An environment switch such as `NUCLEIC_NO_CGROUP=1`.
enum ProcessEnvironmentFlag {
    static func disabled(_ name: String) -> Bool {
        guard let value = getenv(name) else { return false }
        let text = String(cString: value)
        return !text.isEmpty && text != "0"
    }
}
