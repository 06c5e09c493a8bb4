import Glibc
import NucleicSystem

/// The few file-system operations the git layer needs around libgit2: libgit2 creates neither
/// a worktree's parent folders nor cleans up after a failed add.
enum FileSystem {
    /// What is at a path.
    enum Entry: Equatable {
        case missing
        case emptyDirectory
        case nonEmptyDirectory
        case other
    }

    static func entry(at path: String) -> Entry {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .missing }
        guard info.st_mode & S_IFMT == S_IFDIR else { return .other }
        guard let dir = opendir(path) else { return .nonEmptyDirectory }
        defer { closedir(dir) }
        while let item = readdir(dir) {
            let name = entryName(item)
            if name != "." && name != ".." { return .nonEmptyDirectory }
        }
        return .emptyDirectory
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// An absolute, lexically normalised path (`.` and `..` folded, no trailing slash); relative
    /// paths are taken from the current directory. Symbolic links are not resolved.
    static func absolute(_ path: String) -> String {
        var full = path
        if !path.hasPrefix("/") {
            var cwd = "/"
            if let current = getcwd(nil, 0) {
                cwd = String(cString: current)
                free(current)
            }
            full = cwd + "/" + path
        }
        var parts: [Substring] = []
        for part in full.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// `realpath(3)`, or nil when the path does not exist.
    static func resolved(_ path: String) -> String? {
        guard let result = realpath(path, nil) else { return nil }
        defer { free(result) }
        return String(cString: result)
    }

    /// The folder that holds `path` ("/" for "/x").
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    static func lastComponent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// `mkdir -p`; returns the folders it created, outermost first, so a caller can undo them.
    static func createDirectories(_ path: String) throws -> [String] {
        if isDirectory(path) { return [] }
        var created = try createDirectories(parent(of: path))
        if mkdir(path, 0o755) != 0 && !(errno == EEXIST && isDirectory(path)) {
            // EEXIST on a non-directory: a file or a dangling symbolic link is in the way.
            let error = errno
            throw GitError(.fileSystem, "Could not create the folder \(path): \(String(cString: strerror(error))).", function: "mkdir", path: path)
        }
        created.append(path)
        return created
    }

    /// Removes `path` and everything under it, without following symbolic links. Read-only
    /// folders are made writable first so their entries can go. Missing paths are fine.
    static func removeTree(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR {
            if info.st_mode & 0o700 != 0o700 { chmod(path, info.st_mode & 0o7777 | 0o700) }
            if let dir = opendir(path) {
                var names: [String] = []
                while let item = readdir(dir) {
                    let name = entryName(item)
                    if name != "." && name != ".." { names.append(name) }
                }
                closedir(dir)
                for name in names { try removeTree(path + "/" + name) }
            }
            if rmdir(path) != 0 && errno != ENOENT {
                let error = errno
                throw GitError(.fileSystem, "Could not remove the folder \(path): \(String(cString: strerror(error))).", function: "rmdir", path: path)
            }
        } else if unlink(path) != 0 && errno != ENOENT {
            let error = errno
            throw GitError(.fileSystem, "Could not remove \(path): \(String(cString: strerror(error))).", function: "unlink", path: path)
        }
    }

    /// Removes an empty folder; false when it is not empty or not there.
    @discardableResult
    static func removeEmptyDirectory(_ path: String) -> Bool { rmdir(path) == 0 }

    /// Names of the entries in a folder (no `.` and `..`); empty when it cannot be read.
    static func contents(of path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let item = readdir(dir) {
            let name = entryName(item)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The owner of a path, or nil when it cannot be read.
    static func owner(of path: String) -> uid_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_uid
    }

    private static func entryName(_ item: UnsafeMutablePointer<dirent>) -> String {
        withUnsafePointer(to: &item.pointee.d_name) {
            $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
        }
    }
}
