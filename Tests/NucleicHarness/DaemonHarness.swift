public import Foundation
public import NucleicProtocol
public import NucleicRuntime
import NucleicTestSupport
public import Testing

/// A private Nucleic for one test: a temp `NUCLEIC_HOME`, a real git repository registered as a
/// project, and the built `nucleic` CLI run against them as a user runs it (`NucleicCommand`,
/// always a real child process, as is the daemon, never this process). The daemon is the
/// one the CLI starts on demand; it inherits the CLI's environment, so what agents need (a mock
/// model API's address, a private HOME, `NUCLEIC_CLAUDE_BIN`) goes in `environment`.
public final class DaemonHarness: @unchecked Sendable {  // set up in make(); `daemons` is only touched by the one test that owns it
    public typealias Run = NucleicCommand.Run

    public let root: String
    public let home: String
    public let repo: String
    public let environment: [String: String]
    /// Every daemon pid seen, so `finish()` can collect them and what they left.
    private var daemons: Set<Int32> = []

    /// The daemon this test started itself (`serve`), if it did.
    public private(set) var served: ChildProcess?

    /// `environment` is added to this process's; NUCLEIC_HOME is set to a fresh folder. With
    /// `serve`, the test starts `nucleic serve <serve…>` itself (as its own child) before the
    /// first CLI call, instead of letting the CLI start one.
    /// `prepare` runs with the data folder's path before anything uses it (to pre-make files).
    public static func make(environment extra: [String: String] = [:], serve: [String]? = nil,
                            prepare: (String) throws -> Void = { _ in }) async throws -> DaemonHarness {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-d-\(UUID().uuidString.prefix(8))").path
        let repo = root + "/shop"
        try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        try "# shop\n".write(toFile: repo + "/README.md", atomically: true, encoding: .utf8)
        // A repository-local identity, as users have one: the commits Nucleic writes are made as it.
        for args in [["init", "-q", "-b", "main"], ["config", "user.name", "Nucleic Tests"], ["config", "user.email", "tests@localhost"],
                     ["add", "README.md"], ["commit", "-qm", "initial"]] {
            try await Git.run(args, in: repo)
        }
        var environment = ProcessInfo.processInfo.environment
        // Test daemons stay off the developer's desktop unless a test asks for it.
        environment["NUCLEIC_NOTIFY_DESKTOP"] = "off"
        environment.merge(extra) { $1 }
        environment["NUCLEIC_HOME"] = root + "/home"
        let harness = DaemonHarness(root: root, home: root + "/home", repo: repo, environment: environment)
        try prepare(harness.home)
        if let serve { try await harness.serve(serve) }
        let added = try await harness.ok(["project", "add", repo, "--name", "shop"])
        #expect(added.contains("added project shop"), "\(added)")
        harness.noteDaemon()
        return harness
    }

    /// Makes a harness, runs `body` with it, and always finishes it (stops the daemon, collects
    /// what it left behind, removes the folders) — also when the test was cancelled by its time
    /// limit: the finishing runs in a task of its own, which the cancellation does not reach, so
    /// no daemon or agent outlives the test (one left behind holds the test runner's output open,
    /// and the run never ends).
    public static func with<T>(environment: [String: String] = [:], serve: [String]? = nil, prepare: (String) throws -> Void = { _ in },
                        _ body: (DaemonHarness) async throws -> T) async throws -> T {
        let harness = try await make(environment: environment, serve: serve, prepare: prepare)
        do {
            let result = try await body(harness)
            await harness.finishUncancelled()
            return result
        } catch {
            await harness.finishUncancelled()
            throw error
        }
    }

    /// `finish`, out of reach of the calling task's cancellation.
    public func finishUncancelled() async {
        await Task { await self.finish() }.value
    }

    private init(root: String, home: String, repo: String, environment: [String: String]) {
        self.root = root
        self.home = home
        self.repo = repo
        self.environment = environment
    }

    // MARK: Running the CLI

    public func nucleic(_ arguments: [String]) async throws -> Run {
        try await NucleicCommand.run(arguments, environment: environment, workingDirectory: root)
    }

    /// Runs the CLI in `directory` (a repository, a worktree) instead of the harness's root.
    public func nucleic(_ arguments: [String], in directory: String) async throws -> Run {
        try await NucleicCommand.run(arguments, environment: environment, workingDirectory: directory)
    }

    /// The CLI started and left running (`remote watch`, `log --follow`), with `extra` added to
    /// the harness's environment.
    public func start(_ arguments: [String], environment extra: [String: String] = [:], keepStdin: Bool = false) throws -> NucleicCommand {
        try NucleicCommand(arguments, environment: environment.merging(extra) { $1 }, workingDirectory: root, keepStdin: keepStdin)
    }

    /// Runs the CLI, expects exit 0 and returns its stdout.
    @discardableResult
    public func ok(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let run = try await nucleic(arguments)
        guard run.status == .exited(0) else {
            throw PeerError("nucleic \(arguments.joined(separator: " ")) failed: \(run)\n\(daemonLog)")
        }
        return run.stdout
    }

    public func json(_ arguments: [String]) async throws -> JSONValue {
        try JSONParser.parse(try await ok(arguments + ["--json"]))
    }

    /// Starts a session and returns its id.
    public func start(_ prompt: String, _ options: [String]) async throws -> String {
        let id = try await ok(["start", prompt] + options).trimmingCharacters(in: .whitespacesAndNewlines)
        noteDaemon()
        return id
    }

    // MARK: Reading state

    public func summary(_ id: String) async throws -> JSONValue {
        let sessions = try await json(["ls", "--all"])
        guard let found = sessions.arrayValue?.first(where: { $0["sessionID"]?.stringValue == id }) else {
            throw PeerError("session \(id) is not listed: \(sessions)")
        }
        return found
    }

    public func status(_ id: String) async throws -> String {
        try await summary(id)["status"]?.stringValue ?? "?"
    }

    /// Polls until the session's status is one of `statuses`; fails after a generous timeout
    /// (a guard against hangs, not a timing assertion).
    @discardableResult
    public func waitFor(_ id: String, _ statuses: Set<String>, timeout: Duration = .seconds(90)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var last = ""
        while ContinuousClock.now < deadline {
            last = try await status(id)
            if statuses.contains(last) { return last }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw PeerError("session \(id) stayed \(last), never \(statuses.sorted()); transcript:\n\(try await ok(["log", id]))\n\(daemonLog)")
    }

    /// The session's pending approvals, oldest first.
    public func approvals(_ id: String) async throws -> [ApprovalRequest] {
        try await json(["approvals"]).arrayValue!.map { try ApprovalRequest(json: $0) }.filter { $0.sessionID?.rawValue == id }
    }

    /// Waits for the session to ask, and returns its (only) pending approval.
    public func approval(_ id: String) async throws -> ApprovalRequest {
        try await waitFor(id, ["awaitingApproval"])
        let pending = try await approvals(id)
        guard pending.count == 1 else { throw PeerError("expected one pending approval, found \(pending)") }
        return pending[0]
    }

    /// The transcript, as `nucleic log --json` prints it.
    public func events(_ id: String) async throws -> [SequencedEvent] {
        try await ok(["log", id, "--json"]).split(separator: "\n").map { try SequencedEvent(json: JSONParser.parse(String($0))) }
    }

    public func worktree(_ id: String) -> String { "\(home)/worktrees/shop/\(id)" }

    public func contents(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    public var daemonLog: String { "daemon log:\n" + (served != nil ? servedLog : contents(home + "/run/daemon.log") ?? "(none)") }

    // MARK: The daemon

    /// The pid of the daemon now serving this home, from the line it logs at start.
    public var daemonPID: Int32? {
        if let served { return served.exitStatus == nil ? served.pid : nil }
        let lines = (contents(home + "/run/daemon.log") ?? "").split(separator: "\n")
        guard let line = lines.last(where: { $0.contains(" serving ") }),
              let pid = line.split(separator: " ").dropFirst(2).first.flatMap({ Int32($0) }),
              let entry = ProcessTable.entry(pid), !entry.isZombie,
              ProcessTable.arguments(pid).dropFirst().first == "serve" else { return nil }
        return pid
    }

    private func serve(_ arguments: [String]) async throws {
        let process = try NucleicCommand(["serve"] + arguments, environment: environment, workingDirectory: root, readsStderr: false).process
        served = process
        // Its log is our pipe: wait for the line it writes once it listens.
        var seen = ""
        for await chunk in process.stderr {
            seen += String(decoding: chunk, as: UTF8.self)
            if seen.contains(" serving ") { return }
        }
        throw PeerError("nucleic serve did not start (\(await process.wait())): \(seen)")
    }

    /// The log of the daemon this test started itself (the last 64 KiB).
    public var servedLog: String { served?.stderrTail(maxBytes: ChildProcess.stderrTailCapacity) ?? "" }

    /// Remembers the running daemon, so `finish` collects it even if it was re-parented to us;
    /// and the session shims now running, which outlive daemons and may be re-parented to us.
    public func noteDaemon() {
        // A daemon started by `serve` is a ChildProcess: its monitor reaps it, never we.
        if served == nil, let pid = daemonPID { daemons.insert(pid) }
        shimPIDs.formUnion(shims())
    }

    /// Every session shim seen under this home.
    private var shimPIDs: Set<Int32> = []

    /// The daemon's descendants now (its shims, their agents, and theirs).
    public func agents() -> [ProcessTable.Entry] {
        guard let pid = daemonPID else { return [] }
        return ProcessTable.snapshot().descendants(of: pid)
    }

    /// The pids of the session shims (`nucleic shim`) running now under this home.
    public func shims() -> Set<Int32> {
        Set(ProcessTable.snapshot().entries.values.filter {
            let arguments = ProcessTable.arguments($0.pid)
            return !$0.isZombie && arguments.dropFirst().first == "shim" && arguments.dropFirst(2).first?.hasPrefix(home) == true
        }.map(\.pid))
    }

    /// The shims' own diagnostics (`sessions/*/shim.log`): what their reapers collected.
    public var shimLogs: String {
        let sessions = (try? FileManager.default.contentsOfDirectory(atPath: home + "/sessions")) ?? []
        return sessions.compactMap { contents(home + "/sessions/\($0)/shim.log") }.joined()
    }

    /// Kills the daemon with SIGKILL; returns the pids it leaves behind (its agents and theirs),
    /// which `finish` collects.
    @discardableResult
    public func killDaemon() async throws -> [Int32] {
        let pid = try #require(daemonPID)
        shimPIDs.formUnion(shims())
        let left = ProcessTable.snapshot().descendants(of: pid).map(\.pid)
        kill(pid, SIGKILL)
        if let served { _ = await served.wait() } else { await Orphans.collect([pid]) }
        orphans += left
        return left
    }

    private var orphans: [Int32] = []

    /// Stops the daemon and every session (`stop-daemon --kill-sessions`, which adopts what a
    /// killed daemon left first), collects every daemon and orphan of this harness, and removes
    /// the folders.
    public func finish() async {
        noteDaemon()
        _ = try? await nucleic(["stop-daemon", "--kill-sessions"])
        // Every daemon that ever served this home (one may have started and stopped just now).
        for line in (contents(home + "/run/daemon.log") ?? "").split(separator: "\n") where line.contains(" serving ") {
            guard let pid = line.split(separator: " ").dropFirst(2).first.flatMap({ Int32($0) }),
                  let entry = ProcessTable.entry(pid) else { continue }
            if (entry.isZombie && entry.parent == getpid()) || ProcessTable.arguments(pid).dropFirst().first == "serve" { daemons.insert(pid) }
        }
        if let served, await served.wait(timeout: .seconds(30)) == nil { await served.terminate(grace: .seconds(1)) }
        // Shims that were re-parented to us (their daemon went first) are ours to reap; only those
        // still our children, so a pid reused since is never touched.
        let shimsOfOurs = shimPIDs.filter { ProcessTable.entry($0)?.parent == getpid() }
        await Orphans.collect(Array(daemons) + orphans + shimsOfOurs)
        try? FileManager.default.removeItem(atPath: root)
    }

    // MARK: Git

    /// `git worktree list --porcelain` paths of the project repository.
    public func worktreeList() async throws -> [String] {
        try await Git.run(["worktree", "list", "--porcelain"], in: repo).split(separator: "\n")
            .filter { $0.hasPrefix("worktree ") }.map { String($0.dropFirst("worktree ".count)) }
    }
}

/// The git CLI, run as a real child process (as the judge of what libgit2 did).
public enum Git {
    @discardableResult
    public static func run(_ arguments: [String], in directory: String) async throws -> String {
        try await Tool.run("git", arguments, in: directory)
    }
}

/// A command-line tool (git, tmux) run to its end as a real child process.
public enum Tool {
    /// Its stdout; an error with its status and stderr unless it exits 0.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], in directory: String? = nil) async throws -> String {
        let process = try ChildProcess.spawn(executable: executable, arguments: arguments, workingDirectory: directory)
        process.closeStdin()
        async let out: [UInt8] = process.stdout.reduce(into: []) { $0 += $1 }
        async let err: [UInt8] = process.stderr.reduce(into: []) { $0 += $1 }
        let (o, e) = await (out, err)
        let status = await process.wait()
        guard status == .exited(0) else {
            let place = directory.map { " in \($0)" } ?? ""
            throw PeerError("\(executable) \(arguments.joined(separator: " "))\(place): \(status): \(String(decoding: e, as: UTF8.self))")
        }
        return String(decoding: o, as: UTF8.self)
    }
}

/// A test's own failure, with what it saw.
public struct PeerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
