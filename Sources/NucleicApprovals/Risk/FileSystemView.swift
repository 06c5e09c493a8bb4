#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The little of the file system the risk classifier looks at: symbolic links (to resolve a
/// path the way the kernel will) and folder listings (to expand a glob). Injectable so tests
/// can point it at temp folders with their own home.
public protocol FileSystemView: Sendable {
    /// The user's home folder, for `~` and `$HOME`.
    var homeDirectory: String { get }
    /// The target of the symbolic link at the absolute `path`, or nil when `path` is not a link
    /// (or does not exist).
    func symbolicLinkTarget(atPath path: String) -> String?
    /// The names in the folder at `path` (without `.` and `..`), nil when it is not a readable folder.
    func contentsOfDirectory(atPath path: String) -> [String]?
}

/// A file system with no links and no folders (for relative-path arithmetic only).
struct NoFileSystem: FileSystemView {
    let home: String
    var homeDirectory: String { home }
    func symbolicLinkTarget(atPath path: String) -> String? { nil }
    func contentsOfDirectory(atPath path: String) -> [String]? { nil }
}

/// The machine's file system (`lstat`/`readlink`, `opendir`).
public struct LocalFileSystem: FileSystemView {
    public let homeDirectory: String

    /// `homeDirectory` defaults to `$HOME`, then the password database.
    public init(homeDirectory: String? = nil) {
        self.homeDirectory = homeDirectory ?? Self.defaultHome()
    }

    static func defaultHome() -> String {
        if let home = getenv("HOME"), home[0] != 0 { return String(cString: home) }
        if let pw = getpwuid(getuid()), let dir = pw.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }

    public func symbolicLinkTarget(atPath path: String) -> String? {
        var st = stat()
        guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFLNK else { return nil }
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = buffer.withUnsafeMutableBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { readlink(path, $0, p.count - 1) }
        }
        guard n >= 0 else { return nil }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }

    public func contentsOfDirectory(atPath path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

/// Resolves paths against a session's worktree the way the kernel will: `~`, `..`, and every
/// symbolic link along the way.
///
/// ### Invariants
/// - A path is inside only if its resolved form is the worktree or below it (compared by path
///   components, so `/work/tree-other` is not inside `/work/tree`).
/// - A symbolic link loop, or more than 40 links, resolves to nil (treated as outside).
public struct PathResolver: Sendable {
    public let fileSystem: any FileSystemView
    /// The worktree, resolved.
    public let worktree: String
    public let home: String

    public init(fileSystem: any FileSystemView, worktree: String) {
        self.fileSystem = fileSystem
        self.home = PathResolver.normalize(fileSystem.homeDirectory)
        let absolute = worktree.hasPrefix("/") ? worktree : "/" + worktree
        let resolver = PathResolver(fileSystem: fileSystem, resolvedWorktree: "/", home: PathResolver.normalize(fileSystem.homeDirectory))
        self.worktree = resolver.resolve(absolute, from: "/") ?? PathResolver.normalize(absolute)
    }

    init(fileSystem: any FileSystemView, resolvedWorktree: String, home: String) {
        self.fileSystem = fileSystem
        self.worktree = resolvedWorktree
        self.home = home
    }

    /// `path` made absolute against `cwd` and `..`/`.` removed, without following links.
    public func lexical(_ path: String, from cwd: String) -> String {
        Self.normalize(absolute(path, from: cwd))
    }

    func absolute(_ path: String, from cwd: String) -> String {
        if path == "~" { return home }
        if path.hasPrefix("~/") { return home + path.dropFirst(1) }
        return path.hasPrefix("/") ? path : cwd + "/" + path
    }

    /// `path` resolved as the kernel would: absolute, every link followed, `..` applied to what
    /// a link pointed at. Components that do not exist are kept as written. Nil on a link loop.
    public func resolve(_ path: String, from cwd: String) -> String? {
        var pending = Array(absolute(path, from: cwd).split(separator: "/", omittingEmptySubsequences: true).reversed())
        var resolved: [Substring] = []
        var links = 0
        while let component = pending.popLast() {
            if component == "." { continue }
            if component == ".." {
                if !resolved.isEmpty { resolved.removeLast() }
                continue
            }
            let candidate = "/" + (resolved + [component]).joined(separator: "/")
            guard let target = fileSystem.symbolicLinkTarget(atPath: candidate) else {
                resolved.append(component)
                continue
            }
            links += 1
            if links > 40 { return nil }
            if target.hasPrefix("/") { resolved = [] }
            pending += target.split(separator: "/", omittingEmptySubsequences: true).reversed()
        }
        return "/" + resolved.joined(separator: "/")
    }

    /// Whether the resolved `path` is the worktree or inside it.
    public func isInside(_ path: String) -> Bool { Self.isWithin(path, worktree) }

    static func isWithin(_ path: String, _ root: String) -> Bool {
        root == "/" || path == root || path.hasPrefix(root + "/")
    }

    /// The path relative to the worktree (`src/a.swift`), or nil when outside.
    public func relative(_ path: String) -> String? {
        if path == worktree { return "" }
        guard isInside(path) else { return nil }
        return String(path.dropFirst(worktree == "/" ? 1 : worktree.count + 1))
    }

    /// Absolute path with `.` and `..` removed lexically and no trailing slash.
    public static func normalize(_ path: String) -> String {
        var out: [Substring] = []
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            if component == "." { continue }
            if component == ".." {
                if !out.isEmpty { out.removeLast() }
                continue
            }
            out.append(component)
        }
        return "/" + out.joined(separator: "/")
    }

    // MARK: Globs

    /// The files an absolute glob `pattern` names (components matched with `Glob`; hidden names
    /// only by a pattern starting with `.`). Nil when the expansion would pass `limit` entries.
    /// No match gives `[]` (the shell then passes the pattern itself).
    public func expandGlob(_ pattern: String, limit: Int = 4096) -> [String]? {
        var current = ["/"]
        for component in pattern.split(separator: "/", omittingEmptySubsequences: true) {
            let text = String(component)
            var next: [String] = []
            for base in current {
                let prefix = base == "/" ? "" : base
                if !Glob.hasWildcard(text) {
                    next.append(prefix + "/" + Glob.unescape(text))
                    continue
                }
                guard let names = fileSystem.contentsOfDirectory(atPath: base) else { continue }
                for name in names where (!name.hasPrefix(".") || text.hasPrefix(".")) && Glob.matchComponent(text, name) {
                    next.append(prefix + "/" + name)
                }
            }
            if next.count > limit { return nil }
            current = next
        }
        return current
    }
}
