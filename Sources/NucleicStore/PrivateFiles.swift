#if canImport(Glibc)
import Glibc
#endif

/// The host's files are its user's alone: every file it writes is 0600 and every folder 0700,
/// whatever the umask and whatever mode an existing folder had (prompts, code and keys are in
/// them).
///
/// Explicit modes alone are not enough: `open(…, 0600)` does not change a file that already
/// exists, and a folder made by someone else (or by an older version) keeps its mode. So what
/// the host opens for writing is tightened when it is found looser, and a folder that belongs to
/// another user is refused with a message rather than used.
///
/// ### Invariants
/// - Only modes are changed, never owners or contents; only what this user owns is changed.
/// - `tightenTree` never descends into `worktrees/<project>/<session>/` (those are checkouts of
///   the user's repositories, with the repository's modes); their parent folders are private, so
///   nobody else can reach them.
public enum PrivateFiles {
    /// What was made private, for the log and `nucleic doctor`: the path and its old mode.
    public struct Tightened: Sendable, Hashable, CustomStringConvertible {
        public let path: String
        public let oldMode: UInt32
        public let isFolder: Bool
        public var description: String {
            "\(path): mode \(Self.octal(oldMode)) tightened to \(isFolder ? "0700" : "0600")"
        }

        static func octal(_ mode: UInt32) -> String {
            let digits = String(mode, radix: 8)
            return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }
    }

    /// A file or folder whose mode lets its group or others in.
    public struct Loose: Sendable, Hashable, CustomStringConvertible {
        public let path: String
        public let mode: UInt32
        public let isFolder: Bool
        public var description: String {
            "\(path): \(isFolder ? "folder" : "file") mode \(Tightened.octal(mode)), should be \(isFolder ? "0700" : "0600")"
        }
    }

    /// Makes `path` (created if missing, with its parents) a folder only its owner can enter.
    /// Returns what it tightened, nil if nothing needed it.
    ///
    /// - Throws: `StoreError` (`.permission`) if the folder belongs to another user or cannot be
    ///   tightened; the message says what to do.
    @discardableResult
    public static func ensureFolder(_ path: String) throws(StoreError) -> Tightened? {
        var st = stat()
        if lstat(path, &st) != 0 {
            try FileIO.makeDirectories(path)
            guard lstat(path, &st) == 0 else { return nil }
        }
        if st.st_mode & S_IFMT == S_IFLNK {
            // A link to a folder (a data folder on another disk) is followed: check the target.
            guard stat(path, &st) == 0 else { throw StoreError(.invalidArgument, "\(path) is a broken link", path: path) }
        }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw StoreError(.invalidArgument, "\(path) exists and is not a folder", path: path) }
        let mode = UInt32(st.st_mode & 0o7777)
        guard mode & 0o077 != 0 else { return nil }
        guard st.st_uid == getuid() else {
            throw StoreError(.permission, "refusing to use \(path): it belongs to uid \(st.st_uid), not to uid \(getuid()), and its group or others can enter it (mode \(Tightened.octal(mode))); use a folder of your own, or chmod 700 it as its owner",
                             path: path)
        }
        guard chmod(path, 0o700) == 0 else {
            let e = errno
            throw StoreError(.permission, "cannot make \(path) private (mode \(Tightened.octal(mode))): \(String(cString: strerror(e))); chmod 700 it",
                             function: "chmod", path: path, errno: e)
        }
        return Tightened(path: path, oldMode: mode, isFolder: true)
    }

    /// Tightens an open file the host writes to 0600 if its group or others have any access.
    @discardableResult
    public static func tighten(fd: Int32) -> Bool {
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_mode & 0o077 != 0, st.st_uid == getuid() else { return false }
        return fchmod(fd, 0o600) == 0
    }

    /// Tightens the file at `path` (if it exists) to 0600; returns what it changed.
    @discardableResult
    public static func tighten(file path: String) -> Tightened? {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG || st.st_mode & S_IFMT == S_IFSOCK,
              st.st_mode & 0o077 != 0, st.st_uid == getuid() else { return nil }
        let mode = UInt32(st.st_mode & 0o7777)
        return chmod(path, 0o600) == 0 ? Tightened(path: path, oldMode: mode, isFolder: false) : nil
    }

    /// Every file and folder under the data folder `home` (and `home` itself) whose group or
    /// others have access, sparing the worktrees' checkouts. Links are not followed.
    public static func loose(under home: String) -> [Loose] {
        var found: [Loose] = []
        walk(home, depth: 0, home: home) { path, st in
            let mode = UInt32(st.st_mode & 0o7777)
            let type = st.st_mode & S_IFMT
            guard type == S_IFDIR || type == S_IFREG || type == S_IFSOCK, mode & 0o077 != 0 else { return }
            found.append(Loose(path: path, mode: mode, isFolder: type == S_IFDIR))
        }
        return found
    }

    /// Tightens everything `loose(under:)` finds that this user owns; returns what it changed.
    public static func tightenTree(_ home: String) -> [Tightened] {
        var changed: [Tightened] = []
        for item in loose(under: home) {
            var st = stat()
            guard lstat(item.path, &st) == 0, st.st_uid == getuid() else { continue }
            if chmod(item.path, item.isFolder ? 0o700 : 0o600) == 0 {
                changed.append(Tightened(path: item.path, oldMode: item.mode, isFolder: item.isFolder))
            }
        }
        return changed
    }

    /// The folder part of `path`.
    public static func parent(of path: String) -> String { FileIO.parentDirectory(path) }

    private static func walk(_ path: String, depth: Int, home: String, _ visit: (String, stat) -> Void) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        visit(path, st)
        guard st.st_mode & S_IFMT == S_IFDIR, depth < 8 else { return }
        // worktrees/<project>/<session> are checkouts: their folders are listed, not entered.
        let relative = path.dropFirst(home.count)
        if relative.hasPrefix("/worktrees/"), relative.split(separator: "/").count >= 3 { return }
        guard let directory = opendir(path) else { return }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        for name in names.sorted() { walk(FileIO.join(path, name), depth: depth + 1, home: home, visit) }
    }
}
