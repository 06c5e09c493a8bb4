import NucleicProtocol

/// Where a resolved path is, and what reading or writing it risks.
struct PathJudge {
    let resolver: PathResolver
    let policy: PathPolicy

    static let harmlessDevices: Set<String> = [
        "/dev/null", "/dev/zero", "/dev/full", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/random", "/dev/urandom",
    ]
    static let diskPrefixes = ["/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk", "/dev/disk", "/dev/dm-", "/dev/md",
                               "/dev/loop", "/dev/mapper/", "/dev/sr", "/dev/mem", "/dev/kmem", "/dev/port", "/dev/nbd", "/dev/rbd", "/dev/zd"]

    func location(_ resolved: String?) -> PathAccess.Location {
        guard let path = resolved else { return .unknown }
        if Self.harmlessDevices.contains(path) || path.hasPrefix("/dev/fd/") || path.hasPrefix("/proc/self/fd/") { return .harmlessDevice }
        if Self.diskPrefixes.contains(where: { path.hasPrefix($0) }) { return .blockDevice }
        if let relative = resolver.relative(path) {
            let first = relative.split(separator: "/").first.map(String.init) ?? ""
            return policy.protectedInside.contains(first) ? .protected(first) : .inside
        }
        if policy.readableOutside.contains(where: { PathResolver.isWithin(path, $0) }) { return .system }
        return .outside
    }

    /// An access to a path given as text (absolute, `~/…` or relative to `cwd`).
    func access(_ written: String, mode: PathAccess.Mode, cwd: String) -> PathAccess {
        let resolved = resolver.resolve(written, from: cwd)
        return PathAccess(mode: mode, written: written, resolved: resolved, lexical: resolver.lexical(written, from: cwd), location: location(resolved))
    }

    /// The risk of an access, and the reason to show when it is more than reading or writing
    /// inside the worktree.
    func risk(_ access: PathAccess) -> (Risk, String?) {
        let shown = access.resolved ?? access.written
        switch (access.mode, access.location) {
        case (_, .harmlessDevice): return (.readOnly, nil)
        case (.read, .inside), (.read, .protected): return (.readOnly, nil)
        case (.read, .system): return (.readOnly, nil)
        case (.read, .blockDevice): return (.hostExec, "reads the disk \(shown)")
        case (.read, .outside): return (.hostExec, "reads \(shown), outside the worktree")
        case (.read, .unknown): return (.hostExec, "reads \(access.written), a path known only when it runs (it may be outside the worktree)")
        case (.write, .inside): return (.write, nil)
        case (.write, .protected(let name)): return (.hostExec, "writes \(shown): \(Self.protectedReason(name))")
        case (.write, .blockDevice): return (.destructive, "writes the disk \(shown)")
        case (.write, .system), (.write, .outside): return (.hostExec, "writes \(shown), outside the worktree")
        case (.write, .unknown): return (.hostExec, "writes \(access.written), a path known only when it runs (it may be outside the worktree)")
        }
    }

    static func protectedReason(_ name: String) -> String {
        switch name {
        case ".git": "git's own data (hooks and config run outside the session)"
        case ".envrc": "direnv runs it in your shell"
        default: "an agent's settings (it could grant itself permissions)"
        }
    }
}

/// File tools (Read, Glob, Grep, LS, Edit, Write, MultiEdit, NotebookEdit, apply_patch).
struct ToolJudge {
    let resolver: PathResolver
    let policy: PathPolicy
    var paths: PathJudge { PathJudge(resolver: resolver, policy: policy) }

    mutating func readTool(_ toolName: String, _ input: JSONValue) -> Classification.Part {
        var written: [String] = []
        switch toolName {
        case "Read": written = [input["file_path"]?.stringValue].compactMap { $0 }
        case "NotebookRead": written = [input["notebook_path"]?.stringValue].compactMap { $0 }
        case "Glob":
            let base = input["path"]?.stringValue ?? resolver.worktree
            let pattern = input["pattern"]?.stringValue ?? ""
            written = [Self.globBase(pattern, under: base)]
        default:  // Grep, LS
            written = [input["path"]?.stringValue ?? resolver.worktree]
        }
        guard !written.isEmpty else { return Classification.Part(risk: .unknown, reasons: ["\(toolName) names no file"]) }
        return part(written, mode: .read, verb: toolName == "Read" || toolName == "NotebookRead" ? "reads" : "searches")
    }

    mutating func editTool(_ toolName: String, _ input: JSONValue) -> Classification.Part {
        var written: [String] = []
        var reasons: [String] = []
        var risk = Risk.readOnly
        switch toolName {
        case "NotebookEdit": written = [input["notebook_path"]?.stringValue].compactMap { $0 }
        case "apply_patch":
            for change in input["changes"]?.arrayValue ?? [] {
                if let path = change["path"]?.stringValue { written.append(path) }
                for key in ["move_path", "movePath"] {
                    if let moved = change[key]?.stringValue ?? change["kind"]?[key]?.stringValue { written.append(moved) }
                }
            }
            if let root = input["grantRoot"]?.stringValue {
                let access = paths.access(root, mode: .write, cwd: resolver.worktree)
                if access.location != .inside {
                    risk = .hostExec
                    reasons.append("asks for write access to \(access.resolved ?? root), outside the worktree")
                }
            }
        default: written = [input["file_path"]?.stringValue].compactMap { $0 }
        }
        guard !written.isEmpty else { return Classification.Part(risk: max(risk, .unknown), reasons: reasons + ["\(toolName) names no file"]) }
        var result = part(written, mode: .write, verb: "edits")
        if risk > result.risk { result.risk = risk }
        result.reasons = reasons + result.reasons
        return result
    }

    func part(_ written: [String], mode: PathAccess.Mode, verb: String) -> Classification.Part {
        var risk = mode == .write ? Risk.write : .readOnly
        var reasons: [String] = []
        var accesses: [PathAccess] = []
        for path in written {
            let access = paths.access(path, mode: mode, cwd: resolver.worktree)
            accesses.append(access)
            let (r, reason) = paths.risk(access)
            if r > risk { risk = r }
            if let reason { reasons.append(reason) }
        }
        if reasons.isEmpty {
            let shown = accesses.map { a in a.resolved.flatMap(resolver.relative).map { $0.isEmpty ? "." : $0 } ?? a.written }
            reasons.append("\(verb) \(shown.joined(separator: ", "))" + (risk == .readOnly && mode == .read && accesses.contains { $0.location == .system } ? " (system files)" : ""))
        }
        return Classification.Part(risk: risk, reasons: reasons, paths: accesses)
    }

    /// The folder a glob searches: `base` joined with the pattern's leading literal components.
    static func globBase(_ pattern: String, under base: String) -> String {
        let full = pattern.hasPrefix("/") || pattern.hasPrefix("~") ? pattern : base + "/" + pattern
        var out: [Substring] = []
        for component in full.split(separator: "/", omittingEmptySubsequences: false) {
            if Glob.hasWildcard(String(component)) { break }
            out.append(component)
        }
        if out.count == full.split(separator: "/", omittingEmptySubsequences: false).count, !out.isEmpty { out.removeLast() }
        let joined = out.joined(separator: "/")
        return joined.isEmpty ? (full.hasPrefix("/") ? "/" : base) : joined
    }
}
