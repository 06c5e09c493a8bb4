#if canImport(Glibc)
import Glibc
#endif
public import NucleicProtocol

/// Where Nucleic keeps its state (DESIGN.md §5): `$NUCLEIC_HOME`, else
/// `$XDG_DATA_HOME/nucleic`, else `~/.local/share/nucleic`.
///
/// ```
/// nucleic.db                         projects, sessions, approvals, devices, rules
/// sessions/<id>/raw.jsonl            every agent line both ways (the fixture format)
/// sessions/<id>/transcript.jsonl     the numbered events (+ transcript.idx)
/// worktrees/<project>/<session>/     each session's git worktree
/// run/nucleic.sock                   the daemon's socket;  run/daemon.log its log
/// ```
public struct NucleicHome: Sendable, Hashable {
    public let path: String

    public init(path: String) {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        self.path = p
    }

    /// The data folder this process should use, from its environment.
    public static func fromEnvironment(_ environment: [String: String] = AgentLaunch.hostEnvironment()) -> NucleicHome {
        if let home = environment["NUCLEIC_HOME"], !home.isEmpty { return NucleicHome(path: home) }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return NucleicHome(path: data + "/nucleic") }
        let userHome = environment["HOME"] ?? "/tmp"
        return NucleicHome(path: userHome + "/.local/share/nucleic")
    }

    public var database: String { path + "/nucleic.db" }
    public var sessions: String { path + "/sessions" }
    public var run: String { path + "/run" }
    public var log: String { run + "/daemon.log" }

    public func worktree(project: String, session: SessionID) -> String {
        path + "/worktrees/\(project)/\(session.rawValue)"
    }
}
