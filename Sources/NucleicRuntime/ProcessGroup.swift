import Glibc

/// Questions about a process group answered from `/proc`.
enum ProcessGroup {
    /// True if some process in group `pgid` is still running (zombies do not count).
    ///
    /// `kill(-pgid, 0)` is not enough: it also succeeds for members that have died but wait, as
    /// zombies, for a subreaper to collect them.
    static func hasLiveMembers(_ pgid: Int32) -> Bool {
        guard let directory = opendir("/proc") else { return Glibc.kill(-pgid, 0) == 0 }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            guard let pid = ProcEntry.number(entry), let stat = statusAndGroup(of: pid) else { continue }
            if stat.group == pgid && stat.state != UInt8(ascii: "Z") && stat.state != UInt8(ascii: "X") {
                return true
            }
        }
        return false
    }

    /// The state letter and process group of `pid` from `/proc/<pid>/stat`, nil if it is gone.
    static func statusAndGroup(of pid: Int32) -> (state: UInt8, group: Int32)? {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = close(fd) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        // "pid (comm) state ppid pgrp ...": comm may hold spaces and ')', so split after the last ')'.
        guard let closeParen = buffer[0..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = buffer[(closeParen + 1)..<count].split(separator: UInt8(ascii: " "), maxSplits: 4)
        guard fields.count >= 3, let state = fields[0].first,
              let group = Int32(String(decoding: fields[2], as: UTF8.self)) else { return nil }
        return (state, group)
    }
}
