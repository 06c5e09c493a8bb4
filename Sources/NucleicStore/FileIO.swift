#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The POSIX calls the session files use, retried on EINTR, failing as `StoreError`s that name
/// the function, the path and `errno`.
///
/// Blocking: call these from a thread that may block (a serial executor such as
/// `SerialThreadExecutor`), not from the cooperative pool.
enum FileIO {
    /// The error for a failed system call; running out of space gets its own code.
    static func failure(_ function: String, path: String, errno e: Int32, _ what: String) -> StoreError {
        let full = e == ENOSPC || e == EFBIG || e == EDQUOT
        let reason = full ? "out of space (\(String(cString: strerror(e))))" : String(cString: strerror(e))
        let next = full ? "; free some space, then retry (the file is left as it was before the write)" : ""
        return StoreError(full ? .diskFull : .io, "\(what) \(path): \(reason)\(next)", function: function, path: path, errno: e)
    }

    /// Opens `path`; a file it may create is private (0600), and an existing one that its group
    /// or others could read is tightened to that (the host's files hold prompts and code).
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(StoreError) -> Int32 {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 {
                if flags & O_CREAT != 0 { PrivateFiles.tighten(fd: fd) }
                return fd
            }
            let e = Glibc.errno
            if e == EINTR { continue }
            if e == ENOENT { throw StoreError(.notFound, "no such file \(path)", function: "open", path: path, errno: e) }
            throw failure("open", path: path, errno: e, "cannot open")
        }
    }

    /// Takes an exclusive advisory lock without waiting: one writer per file, in any process.
    /// (`flock` locks belong to the open file description, so a second open in this process is
    /// refused too.)
    static func lockExclusive(_ fd: Int32, path: String, what: String) throws(StoreError) {
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let e = Glibc.errno
            if e == EINTR { continue }
            if e == EWOULDBLOCK {
                throw StoreError(.locked, "\(what) \(path) is already open for writing (another nucleic daemon, or another handle in this one); close that one first",
                                 function: "flock", path: path, errno: e)
            }
            throw failure("flock", path: path, errno: e, "cannot lock")
        }
    }

    /// Unlocks, then closes. A child another thread is spawning holds a copy of every descriptor
    /// until its exec (O_CLOEXEC closes it only then); with a plain close the lock would stay held
    /// by that copy meanwhile, and reopening the file right away would be refused as locked.
    static func closeLocked(_ fd: Int32) {
        _ = flock(fd, LOCK_UN)
        _ = Glibc.close(fd)
    }

    static func size(_ fd: Int32, path: String) throws(StoreError) -> Int64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw failure("fstat", path: path, errno: Glibc.errno, "cannot stat") }
        return Int64(st.st_size)
    }

    /// Writes all of `buffer` at `offset`, continuing after short writes.
    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64, path: String) throws(StoreError) {
        guard var base = buffer.baseAddress else { return }
        var remaining = buffer.count
        var at = offset
        while remaining > 0 {
            let n = pwrite(fd, base, remaining, off_t(at))
            if n < 0 {
                let e = Glibc.errno
                if e == EINTR { continue }
                throw failure("pwrite", path: path, errno: e, "cannot write to")
            }
            if n == 0 { throw failure("pwrite", path: path, errno: EIO, "cannot write to") }
            base += n
            remaining -= n
            at += Int64(n)
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int64, path: String) throws(StoreError) {
        let result: Result<Void, StoreError> = bytes.withUnsafeBytes { raw in
            Result { () throws(StoreError) in try writeAll(fd, raw, at: offset, path: path) }
        }
        try result.get()
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end of the file.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String) throws(StoreError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let n = pread(fd, base + done, buffer.count - done, off_t(offset + Int64(done)))
            if n < 0 {
                let e = Glibc.errno
                if e == EINTR { continue }
                throw failure("pread", path: path, errno: e, "cannot read")
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Reads exactly `count` bytes at `offset` (fewer at the end of the file).
    static func read(_ fd: Int32, count: Int, at offset: Int64, path: String) throws(StoreError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let result: Result<Int, StoreError> = bytes.withUnsafeMutableBytes { raw in
            Result { () throws(StoreError) -> Int in try read(fd, into: raw, at: offset, path: path) }
        }
        let n = try result.get()
        if n < count { bytes.removeLast(count - n) }
        return bytes
    }

    static func truncate(_ fd: Int32, to length: Int64, path: String) throws(StoreError) {
        while ftruncate(fd, off_t(length)) != 0 {
            let e = Glibc.errno
            if e == EINTR { continue }
            throw failure("ftruncate", path: path, errno: e, "cannot truncate")
        }
    }

    /// `fdatasync`: the file's data (and its size) reach the disk.
    static func sync(_ fd: Int32, path: String) throws(StoreError) {
        while fdatasync(fd) != 0 {
            let e = Glibc.errno
            if e == EINTR { continue }
            throw failure("fdatasync", path: path, errno: e, "cannot sync")
        }
    }

    /// Makes a folder's entries (a new file, a rename) durable.
    static func syncDirectory(_ path: String) throws(StoreError) {
        let fd = try open(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        while fsync(fd) != 0 {
            let e = Glibc.errno
            if e == EINTR { continue }
            if e == EINVAL || e == EROFS { return }  // file systems that cannot sync folders
            throw failure("fsync", path: path, errno: e, "cannot sync folder")
        }
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// `mkdir -p` with mode 0700 (whatever the umask), syncing each parent that got a new entry.
    /// An existing `path` of ours that its group or others can enter is tightened to 0700; one
    /// that belongs to another user is refused (`PrivateFiles.ensureFolder`).
    static func makeDirectories(_ path: String) throws(StoreError) {
        var st = stat()
        if stat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFDIR else {
                throw StoreError(.invalidArgument, "\(path) exists and is not a folder", path: path)
            }
            if st.st_mode & 0o077 != 0 { _ = try PrivateFiles.ensureFolder(path) }
            return
        }
        let parent = parentDirectory(path)
        if parent != path, !parent.isEmpty { try makeDirectories(parent) }
        if mkdir(path, 0o700) != 0 {
            let e = Glibc.errno
            if e != EEXIST { throw failure("mkdir", path: path, errno: e, "cannot create folder") }
            return
        }
        if !parent.isEmpty { try syncDirectory(parent) }
    }

    static func parentDirectory(_ path: String) -> String {
        var p = Substring(path)
        while p.count > 1, p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/") else { return "." }
        return slash == p.startIndex ? "/" : String(p[..<slash])
    }

    static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }
}
