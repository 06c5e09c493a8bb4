import CShims
import Glibc
@testable import NucleicSockets
import NucleicTestSupport
import Testing

/// `count` seeded pseudo-random bytes.
func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { buffer in
        var index = 0
        while index < buffer.count {
            var word = generator.next()
            let take = min(8, buffer.count - index)
            withUnsafeBytes(of: &word) { buffer.baseAddress!.advanced(by: index).copyMemory(from: $0.baseAddress!, byteCount: take) }
            index += take
        }
    }
    return bytes
}

/// Whether `frame` equals `pool[offset..<offset + frame.count]` (memcmp: debug builds compare
/// arrays element by element).
func matches(_ frame: [UInt8], _ pool: [UInt8], offset: Int, count: Int) -> Bool {
    guard frame.count == count else { return false }
    if count == 0 { return true }
    return frame.withUnsafeBytes { a in pool.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress! + offset, count) == 0 } }
}

/// A fresh empty folder under /tmp (short, so socket paths in it fit); removed by `removeTree`.
func makeTemporaryDirectory() -> String {
    var template = Array("/tmp/nsync-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(path != nil, "mkdtemp failed")
    return String(cString: path!)
}

/// `rm -rf path` (does not follow symlinks).
func removeTree(_ path: String) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    if info.st_mode & S_IFMT == S_IFDIR {
        if let directory = opendir(path) {
            var names: [String] = []
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(directory)
            for name in names { removeTree(path + "/" + name) }
        }
        _ = rmdir(path)
    } else {
        _ = unlink(path)
    }
}

/// The permission bits of `path` (not following a symlink), or nil if it does not exist.
func mode(of path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o7777
}

/// The file type bits of `path` (S_IFSOCK, S_IFDIR, ...), or nil if it does not exist.
func fileType(of path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode & S_IFMT
}

func exists(_ path: String) -> Bool { fileType(of: path) != nil }

/// Leaves a socket file at `path` with nobody listening: what a daemon killed with SIGKILL leaves.
func makeStaleSocket(at path: String) {
    let fd = nucleic_unix_socket(0)
    precondition(fd >= 0)
    precondition(nucleic_unix_bind(fd, path) == 0, "bind \(path)")
    close(fd)
}

/// A raw listening socket at `path` that does not take the listener's lock (an older daemon, or
/// another program). Returns its descriptor; the caller closes it and unlinks the path.
func makeRawListener(at path: String) -> Int32 {
    let fd = nucleic_unix_socket(0)
    precondition(fd >= 0)
    precondition(nucleic_unix_bind(fd, path) == 0, "bind \(path)")
    precondition(listen(fd, 8) == 0)
    return fd
}

/// Writes a regular file with `text` at `path`.
func writeFile(_ path: String, _ text: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    precondition(fd >= 0)
    _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

/// Runs an echo server on `listener` (each frame is sent back, waiting for the write) until the
/// listener is closed.
func startEchoServer(_ listener: UnixListener) -> Task<Void, Never> {
    Task {
        await listener.run { connection in
            for await frame in connection.frames {
                do { try await connection.send(frame) } catch { return }
            }
        }
    }
}

/// The first connection `listener` accepts.
func firstConnection(of listener: UnixListener) async -> LocalConnection? {
    for await connection in listener.connections { return connection }
    return nil
}

/// Every frame until the stream ends.
func collectFrames(_ connection: LocalConnection) async -> [[UInt8]] {
    var frames: [[UInt8]] = []
    for await frame in connection.frames { frames.append(frame) }
    return frames
}

/// Runs `body` and returns the SocketError it throws, or nil if it throws nothing (a failed
/// expectation if it throws another error).
func socketError(_ body: () throws -> Void) -> SocketError? {
    do { try body() } catch { return expectSocketError(error) }
    return nil
}

func socketError(_ body: () async throws -> Void) async -> SocketError? {
    do { try await body() } catch { return expectSocketError(error) }
    return nil
}

private func expectSocketError(_ error: any Error) -> SocketError? {
    let socketError = error as? SocketError
    #expect(socketError != nil, "expected a SocketError, got \(error)")
    return socketError
}
