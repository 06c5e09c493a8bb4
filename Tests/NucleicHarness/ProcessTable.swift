import Foundation
import NucleicTestSupport

/// The processes of this machine as `/proc` shows them, for tests that check what is left behind.
public struct ProcessTable {
    public struct Entry: Hashable, CustomStringConvertible {
        public let pid: Int32
        public let parent: Int32
        public let group: Int32
        /// The state letter: R, S, D, Z (zombie), …
        public let state: Character
        /// The command name (`comm`, at most 15 bytes).
        public let name: String

        public var isZombie: Bool { state == "Z" || state == "X" }
        public var description: String { "\(pid) \(name) [\(state)] parent \(parent) group \(group)" }
    }

    public let entries: [Int32: Entry]

    /// A snapshot of every process.
    public static func snapshot() -> ProcessTable {
        var entries: [Int32: Entry] = [:]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for name in names {
            guard let pid = Int32(name), let entry = entry(pid) else { continue }
            entries[pid] = entry
        }
        return ProcessTable(entries: entries)
    }

    /// One process from `/proc/<pid>/stat`, nil if it is gone.
    public static func entry(_ pid: Int32) -> Entry? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        // "pid (comm) state ppid pgrp ...": comm may hold spaces and ')', so split after the last ')'.
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return nil }
        let name = String(text[text.index(after: open)..<close])
        let fields = text[text.index(after: close)...].split(separator: " ", maxSplits: 4)
        guard fields.count >= 3, let state = fields[0].first, let parent = Int32(fields[1]), let group = Int32(fields[2]) else { return nil }
        return Entry(pid: pid, parent: parent, group: group, state: state, name: name)
    }

    /// Every process below `pid` (children, their children, …), not `pid` itself.
    public func descendants(of pid: Int32) -> [Entry] {
        var children: [Int32: [Entry]] = [:]
        for entry in entries.values { children[entry.parent, default: []].append(entry) }
        var result: [Entry] = []
        var frontier = [pid]
        while let next = frontier.popLast() {
            for child in children[next] ?? [] {
                result.append(child)
                frontier.append(child.pid)
            }
        }
        return result
    }

    public func children(of pid: Int32) -> [Entry] { entries.values.filter { $0.parent == pid } }

    /// The processes whose environment holds `marker` (`NAME=value`). Zombies have no environment.
    public func carrying(_ marker: String) -> [Entry] {
        entries.values.filter { ProcessTable.environment($0.pid).contains(marker) }
    }

    /// A process's environment entries (empty if unreadable or a zombie).
    public static func environment(_ pid: Int32) -> [String] {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return [] }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A process's argv (empty if unreadable or a zombie).
    public static func arguments(_ pid: Int32) -> [String] {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return [] }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Collects processes this test process inherited as a subreaper, by pid (never `waitpid(-1)`,
/// which would take the statuses `ChildProcess` and Foundation wait for).
public enum Orphans {
    /// Reaps `pid` if it is an exited child of this process; true when it is no child of ours
    /// any more (reaped now, or never ours).
    @discardableResult
    public static func reap(_ pid: Int32) -> Bool {
        var status: Int32 = 0
        var rc: Int32
        repeat { rc = waitpid(pid, &status, WNOHANG) } while rc < 0 && errno == EINTR
        return rc != 0
    }

    /// Waits until each of `pids` has ended, killing what still runs after `grace`, and reaps
    /// those that were re-parented to this process.
    public static func collect(_ pids: [Int32], grace: Duration = .seconds(20)) async {
        let deadline = ContinuousClock.now + grace
        // Taken now: by the deadline a pid that ended may name another test's process.
        let identities = Dictionary(pids.compactMap(ProcessIdentity.init).map { ($0.pid, $0) }) { first, _ in first }
        var remaining = Set(pids)
        while !remaining.isEmpty {
            for pid in remaining {
                let entry = ProcessTable.entry(pid)
                if entry == nil || identities[pid]?.exists == false { remaining.remove(pid); continue }
                if entry!.isZombie {
                    if entry!.parent == getpid() { reap(pid) }
                    // A zombie of another parent is that parent's to reap.
                    if entry!.parent != getpid() || ProcessTable.entry(pid) == nil { remaining.remove(pid) }
                    continue
                }
                if ContinuousClock.now > deadline, identities[pid]?.signal(SIGKILL) != true { remaining.remove(pid) }
            }
            if !remaining.isEmpty { try? await Task.sleep(for: .milliseconds(50)) }
        }
    }
}
