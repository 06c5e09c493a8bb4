import Glibc
import NucleicSystem

/// Checks and creates the folders that hold the socket: ours, and writable by nobody else.
///
/// A folder that others can write to would let them replace the socket with their own (and read
/// what the CLI sends); a folder that is not ours may be a trap. Such folders are refused, never
/// repaired: the message says what to fix.
enum PrivateDirectory {
    /// Why `path` is not a safe folder for `uid`'s socket, or nil if it is.
    /// `followLinks: false` refuses a symlink (used under world-writable /tmp).
    static func problem(with path: String, uid: uid_t, followLinks: Bool) -> String? {
        var info = stat()
        let rc = followLinks ? stat(path, &info) : lstat(path, &info)
        if rc != 0 { return "cannot inspect it: \(errnoName(errno))" }
        let type = info.st_mode & S_IFMT
        if type == S_IFLNK { return "it is a symbolic link" }
        if type != S_IFDIR { return "it is not a folder" }
        if info.st_uid != uid { return "it belongs to uid \(info.st_uid), not to uid \(uid)" }
        let mode = info.st_mode & 0o7777
        if mode & 0o022 != 0 {
            return "it is writable by its group or by others (mode \(octal(mode)))"
        }
        return nil
    }

    /// Makes sure `path` is a safe folder for `uid`, creating it (and missing parents) with mode
    /// 0700 if needed. Throws `unsafeDirectory` if it exists and is not safe.
    static func ensure(_ path: String, uid: uid_t, followLinks: Bool = true) throws(SocketError) {
        if access(path, F_OK) != 0 {
            try create(path)
        }
        if let problem = problem(with: path, uid: uid, followLinks: followLinks) {
            throw SocketError(
                .unsafeDirectory,
                "refusing to use \(path) for the daemon's socket: \(problem); "
                    + "it must be a folder owned by uid \(uid) that only its owner can write to (chmod 700 it, or remove it)",
                path: path
            )
        }
    }

    /// `mkdir -p` with mode 0700 for every folder it creates. An existing folder is left as is.
    private static func create(_ path: String) throws(SocketError) {
        let parent = parentPath(of: path)
        if parent != path, access(parent, F_OK) != 0 {
            try create(parent)
        }
        if mkdir(path, 0o700) != 0 {
            let number = errno
            // Another process may have created it in between; it is checked afterwards anyway.
            if number == EEXIST { return }
            throw SocketError.system("create the folder \(path)", "mkdir", number, path: path)
        }
        // mkdir applies the umask; a folder we created is 0700 whatever the umask.
        _ = chmod(path, 0o700)
    }
}

/// The folder part of `path`: `/a/b` for `/a/b/c`, `/` for `/a`, `.` for `a`.
func parentPath(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    if slash == trimmed.startIndex { return "/" }
    return String(trimmed[..<slash])
}

/// `mode` as octal digits, e.g. `0775`.
func octal(_ mode: mode_t) -> String {
    let digits = String(mode, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
