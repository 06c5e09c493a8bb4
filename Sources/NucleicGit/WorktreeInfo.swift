/// A linked worktree of a repository, as `git worktree list` would describe it.
public struct WorktreeInfo: Sendable, Hashable, CustomStringConvertible {
    /// The worktree's name: the folder under `.git/worktrees/`.
    public let name: String
    /// The worktree's working directory (absolute, symbolic links resolved).
    public let path: String
    /// The branch checked out there (`nucleic/fix-tests`); nil when HEAD is detached or unreadable.
    public let branch: String?
    /// The commit checked out there; nil when it cannot be read.
    public let head: OID?
    /// Whether it is locked (`git worktree lock`): locked worktrees are never pruned.
    public let isLocked: Bool
    /// The reason given when it was locked, if any.
    public let lockReason: String?
    /// Whether `pruneStale()` would remove it: its folder or its administrative files are gone
    /// and it is not locked.
    public let isPrunable: Bool

    public init(name: String, path: String, branch: String?, head: OID?, isLocked: Bool = false, lockReason: String? = nil, isPrunable: Bool = false) {
        self.name = name
        self.path = path
        self.branch = branch
        self.head = head
        self.isLocked = isLocked
        self.lockReason = lockReason
        self.isPrunable = isPrunable
    }

    public var description: String {
        var text = "\(name) \(path) [\(branch ?? "detached")] \(head?.abbreviated() ?? "-")"
        if isLocked { text += " locked" + (lockReason.map { ": \($0)" } ?? "") }
        if isPrunable { text += " prunable" }
        return text
    }
}

/// Worktree names: what libgit2 and the file system accept as a folder under `.git/worktrees/`.
public enum WorktreeName {
    /// Whether `name` can be used as is: 1–100 characters from `A–Z a–z 0–9 . _ -`, not starting
    /// with `.` or `-`, not ending in `.lock`. (libgit2 itself only refuses `/`, but the name is
    /// a folder name and turns up in paths and messages, so Nucleic is stricter.)
    public static func isValid(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 100, !name.hasPrefix("."), !name.hasPrefix("-"), !name.hasSuffix(".lock") else { return false }
        return name.utf8.allSatisfy(isAllowed)
    }

    /// A valid name made from any text (a session title, a branch name such as `nucleic/x`):
    /// other characters become `-`, runs of `-` collapse, and the result is trimmed to 100
    /// characters. Returns `worktree` when nothing usable is left.
    public static func sanitized(_ text: String) -> String {
        var out: [UInt8] = []
        for byte in text.utf8 {
            let c = isAllowed(byte) ? byte : UInt8(ascii: "-")
            if c == UInt8(ascii: "-"), out.last == UInt8(ascii: "-") { continue }
            out.append(c)
        }
        var name = String(decoding: out.prefix(100), as: UTF8.self)
        while let first = name.first, first == "." || first == "-" { name.removeFirst() }
        while let last = name.last, last == "-" || last == "." { name.removeLast() }
        if name.hasSuffix(".lock") { name = String(name.dropLast(5)) + "-lock" }
        return name.isEmpty ? "worktree" : name
    }

    private static func isAllowed(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }
}
