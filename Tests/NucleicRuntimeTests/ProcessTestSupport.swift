import CShims
import Glibc
import NucleicRuntime

/// Everything `stream` yields until EOF, concatenated.
func collect(_ stream: AsyncStream<[UInt8]>) async -> [UInt8] {
    var bytes: [UInt8] = []
    for await chunk in stream { bytes += chunk }
    return bytes
}

/// Reads `stream` until `count` newline-terminated lines have arrived; returns them.
func readLines(_ count: Int, from stream: AsyncStream<[UInt8]>) async -> [String] {
    var bytes: [UInt8] = []
    for await chunk in stream {
        bytes += chunk
        if bytes.filter({ $0 == UInt8(ascii: "\n") }).count >= count { break }
    }
    return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// A fresh empty directory under /tmp; the caller removes it.
func makeTemporaryDirectory() -> String {
    var template = Array("/tmp/nucleic-runtime-test-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(path != nil, "mkdtemp failed")
    return String(cString: path!)
}

/// The canonical path of `path` (symlinks resolved).
func realPath(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// The value of `field` (e.g. `SigBlk`) in /proc/<pid>/status.
func procStatusField(_ field: String, of pid: Int32) -> String? {
    guard let text = readSmallFile("/proc/\(pid)/status") else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return line.dropFirst(field.count + 1).trimmingWhitespace()
    }
    return nil
}

/// The contents of a small text file, or nil if it cannot be read.
func readSmallFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// The pids of this process's children that are zombies (exited, not reaped).
func zombieChildren() -> Set<Int32> {
    var zombies: Set<Int32> = []
    guard let tasks = opendir("/proc/self/task") else { return zombies }
    defer { closedir(tasks) }
    while let entry = readdir(tasks) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard Int(name) != nil, let children = readSmallFile("/proc/self/task/\(name)/children") else { continue }
        for child in children.split(separator: " ").compactMap({ Int32($0) })
        where procStatusField("State", of: child)?.hasPrefix("Z") == true {
            zombies.insert(child)
        }
    }
    return zombies
}

/// True if `pid` is no child of ours, reaped or not: waitid answers ECHILD.
/// WNOWAIT keeps it from reaping anything another test is waiting for.
func isNotOurChild(_ pid: Int32) -> Bool {
    var info = siginfo_t()
    let rc = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
    return rc == -1 && errno == ECHILD
}

/// Polls `condition` every 10 ms until it holds or `limit` passes; a guard against hangs only.
func eventually(within limit: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// Reaps `pid` (a child or an orphan handed to us as subreaper), polling so a bug cannot hang
/// the test; returns its raw wait status, or nil if it never ended.
func reapOrphan(_ pid: Int32) async -> Int32? {
    var status: Int32 = 0
    let reaped = await eventually { waitpid(pid, &status, WNOHANG) == pid }
    return reaped ? status : nil
}

extension Substring {
    func trimmingWhitespace() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
