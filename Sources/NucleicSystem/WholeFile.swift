import Glibc

/// A file read whole, or replaced whole and atomically as a file of the user's own (mode 0600, its
/// missing folders made 0700): the bytes go to a temporary file beside it, which is flushed to
/// disk and renamed over the old one, so a reader sees the old file or the new one, never a part.
///
/// The config, the remote client's pairings, the notifier's saved alerts, the VAPID key and the
/// shim's info and exit files are written this way.
public enum WholeFile {
    /// The file's bytes (its first `limit` bytes, at least, when it is longer); nil when it does
    /// not exist.
    public static func read(_ path: String, limit: Int = .max) throws(SystemCallFailure) -> [UInt8]? {
        let fd = Syscall.retrying { open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .last("open", path: path)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while bytes.count < limit {
            let n = Syscall.read(fd, into: &buffer)
            if n < 0 { throw .last("read", path: path) }
            if n == 0 { return bytes }
            bytes += buffer[0..<n]
        }
        return bytes
    }

    /// The file read as UTF-8 text (its first `limit` bytes, at least, when it is longer); nil
    /// when it does not exist or cannot be read. For small files whose absence and unreadability
    /// mean the same to the caller (`/proc` entries, git's admin files).
    public static func text(_ path: String, limit: Int = 65536) -> String? {
        guard let bytes = try? read(path, limit: limit) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Replaces the file with `bytes`, creating its missing folders (0700). On failure the old
    /// file is left as it was and the temporary one removed.
    public static func replace(_ path: String, with bytes: some Collection<UInt8>) throws(SystemCallFailure) {
        if let slash = path.lastIndex(of: "/") {
            var folder = ""
            for part in path[..<slash].split(separator: "/") {
                folder += "/" + part
                if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw .last("mkdir", path: folder) }
            }
        }
        let temporary = path + ".tmp-\(getpid())"
        let fd = Syscall.retrying { open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600) }
        guard fd >= 0 else { throw .last("open", path: temporary) }
        func fail(_ failure: SystemCallFailure) -> SystemCallFailure {
            close(fd)
            unlink(temporary)
            return failure
        }
        // O_CREAT's mode is masked by the umask; the file is the user's alone whatever it is.
        guard fchmod(fd, 0o600) == 0 else { throw fail(.last("fchmod", path: temporary)) }
        if let failed = Syscall.writeAll(fd, bytes) { throw fail(SystemCallFailure("write", errno: failed.errno, path: temporary)) }
        guard fsync(fd) == 0 else { throw fail(.last("fsync", path: temporary)) }
        guard close(fd) == 0 else {
            let failure = SystemCallFailure.last("close", path: temporary)
            unlink(temporary)
            throw failure
        }
        guard rename(temporary, path) == 0 else {
            let failure = SystemCallFailure.last("rename", path: path)
            unlink(temporary)
            throw failure
        }
    }
}
