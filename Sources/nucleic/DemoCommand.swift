#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import NucleicAdapters
import NucleicDaemon
import NucleicGit
import NucleicProtocol
import NucleicRuntime
import NucleicSystem
import Synchronization
import NucleicCommandLine

/// `nucleic demo`: a whole session on the embedded default — a scratch repository, the replay
/// backend playing a recorded Claude Code session (its file changes made in the session's
/// worktree), the events as they come, the approval asked of you, the session's diff, and its
/// integration onto the scratch repository's main. Needs no agent, no network, no daemon.
enum DemoCommand {
    static var usage: String { NucleicCommands.help("demo") }

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: ["fixture"], boolean: ["yes", "fast", "json", "keep"], usage: usage)
        guard parsed.positionals.isEmpty else { throw UsageError(message: "unexpected argument '\(parsed.positionals[0])'", usage: usage) }
        var fixture = try parsed["fixture"] ?? Resources.path("Fixtures/claude/edit.jsonl")
        if !fixture.hasPrefix("/") { fixture = SessionCommands.currentDirectory() + "/" + fixture }
        guard access(fixture, R_OK) == 0 else { throw CommandError(message: "cannot read \(fixture): \(String(cString: strerror(errno)))") }
        let options = Options(fixture: fixture, yes: parsed.flag("yes"), fast: parsed.flag("fast"), json: parsed.flag("json"))

        var template = Array("/tmp/nucleic-demo-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw CommandError(message: "cannot create a temporary folder: \(String(cString: strerror(errno)))") }
        let root = String(cString: template)
        let keep = parsed.flag("keep")
        // Ctrl-C (or SIGTERM, SIGHUP) anywhere: end the agent, remove the folder, exit 130.
        let signals = SignalWatcher([SIGINT, SIGTERM, SIGHUP]) { _ in
            Output.standardError("\ninterrupted: ending the session and removing \(root)")
            let done = DispatchSemaphore(value: 0)
            Task {
                await DemoState.host.withLock { $0 }?.shutdown()
                done.signal()
            }
            _ = done.wait(timeout: .now() + 15)
            if !keep { _ = system("rm -rf '\(root)'") }
            _exit(130)
        }
        defer {
            signals.cancel()
            if keep { Output.standardError("kept \(root)") } else { _ = system("rm -rf '\(root)'") }
        }
        return try runBlocking { try await demo(root: root, options) }.get()
    }

    /// The demo's host, for the signal handler.
    enum DemoState {
        static let host = Mutex<SessionHost?>(nil)
    }

    struct Options: Sendable {
        var fixture: String
        var yes: Bool
        var fast: Bool
        var json: Bool
    }

    static func demo(root: String, _ options: Options) async throws -> Int32 {
        let say: @Sendable (String) -> Void = { if !options.json { Output.standardOutput($0) } }
        let repositoryPath = root + "/shop"
        do {
            try DaemonClient.makeDirectories(repositoryPath)
            let repository = try Repository.create(at: repositoryPath)
            // The scratch repository's own identity: the demo's commits are made as it.
            try repository.setLocalConfig("user.name", "Nucleic Demo")
            try repository.setLocalConfig("user.email", "demo@nucleic.invalid")
            let identity = try repository.configuredIdentity()
            let readme = fopen(repositoryPath + "/README.md", "w")
            fputs("# shop\n\nA scratch repository for the Nucleic demo.\n", readme)
            fclose(readme)
            _ = try repository.commitAll(message: "Initial commit", author: identity.author, committer: identity.committer)
        } catch { throw CommandError(message: "creating the scratch repository: \(error)") }

        let host = try await SessionHost.open(SessionHost.Configuration(
            home: NucleicHome(path: root + "/nucleic"), adapters: [:], selfExecutable: SelfExecutable.path,
            replaySpeed: options.fast ? "max" : "recorded"))
        DemoState.host.withLock { $0 = host }
        let project = try await host.addProject(path: repositoryPath, name: "shop")
        say("Scratch repository \(project.path) (project \(project.name), base \(project.baseBranch)).")
        var notifications = await host.listen().makeAsyncIterator()
        let summary = try await host.startSession(.init(prompt: "Write notes.txt.", backend: "replay", fixture: options.fixture))
        let worktree = summary.worktree ?? "?"
        say("Session \(summary.sessionID) on branch \(summary.branch), in its worktree \(worktree),")
        say("replaying \(options.fixture)\n")

        var renderer = TranscriptRenderer(cwd: worktree)
        var status = SessionStatus.running
        var denied = false
        while let notification = await notifications.next() {
            switch notification {
            case .events(let id, let events) where id == summary.sessionID:
                for event in events {
                    if case .sessionStarted(let started) = event.event { renderer.reportedCwd = started.cwd }
                    if options.json { Output.standardOutput(JSONWriter.string(event.json)) } else if let line = renderer.render(event.event) {
                        say(line)
                    }
                }
            case .approvalRequested(let approval):
                let decision = options.yes ? Decision.allow : await ask(approval)
                denied = !decision.allowsTool
                if options.yes { say("  (--yes: allowing)") }
                try await host.respond(approval.id, decision, decidedBy: "user:demo", label: nil)
            case .sessionUpdated(let updated) where updated.sessionID == summary.sessionID:
                status = updated.status
            default:
                break
            }
            if [.finished, .error, .awaitingInput].contains(status) { break }
        }

        if denied && status == .error {
            say("\nThe recording was made with this command allowed. A replayed agent can only follow its recording, so it")
            say("stops when the host answers differently: that is how fixtures catch a host that changed its behaviour.")
        }
        let (stat, files, patch) = try await host.diff(summary.sessionID, statOnly: false)
        say("\nThe session's diff against \(project.baseBranch) (in \(worktree)): \(stat.files) files, +\(stat.insertions) −\(stat.deletions)")
        if let patch, !patch.isEmpty { say(patch) }
        for f in files { say("  \(f.path) (\(f.change))") }
        if stat.files == 0 {
            say("(The recording changed no file: a replayed agent makes only the file changes its recording shows, and runs no commands.)")
        }
        var exit: Int32 = status == .finished ? 0 : 1
        if status == .finished && stat.files > 0 {
            exit = try await integrate(host, summary, project: project, say: say)
        } else {
            try await host.discard(summary.sessionID, deleteBranch: true, force: true)
        }
        say("Status: \(status.rawValue). (Run with --keep to look at the repository, transcript and raw journal afterwards.)")
        await host.shutdown()
        DemoState.host.withLock { $0 = nil }
        return exit
    }

    /// `nucleic integrate --squash`, then the new commit as `git log -1 --stat` shows it.
    static func integrate(_ host: SessionHost, _ summary: SessionSummary, project: ProjectInfo, say: @Sendable (String) -> Void) async throws -> Int32 {
        say("\nIntegrating it onto \(project.baseBranch) (nucleic integrate \(summary.sessionID.rawValue.prefix(13)) --squash):")
        switch try await host.integrate(ClientMsg.Integrate(strategy: "squash", sessionID: summary.sessionID)) {
        case .integrated(let commit, _, _):
            guard let oid = OID(hex: commit) else { return 1 }
            let info = try await RepositoryActor.open(project.path).commitInfo(oid)
            say("commit \(info.id.hex)")
            say("Author: \(info.author.name) <\(info.author.email)>\n")
            for line in info.message.split(separator: "\n", omittingEmptySubsequences: false).dropLast() { say("    \(line)".trimmingTrailing()) }
            say("")
            let width = info.stat.files.map(\.path.count).max() ?? 0
            for file in info.stat.files {
                let changes = file.insertions + file.deletions
                say(" \(file.path.padding(width)) | \(changes) \(String(repeating: "+", count: min(file.insertions, 40)))\(String(repeating: "-", count: min(file.deletions, 40)))")
            }
            say(" \(info.stat)")
            return 0
        case .refused(_, _, let message):
            say("not integrated: \(message)")
            return 1
        case .askedAgent:
            return 1
        }
    }

    /// Asks at the terminal; end of input denies.
    static func ask(_ approval: ApprovalRequest) async -> Decision {
        let what = TranscriptRenderer().summary(of: approval.input)
        Output.write(1, "\nAllow \(approval.toolName) `\(what)` (risk \(approval.risk.rawValue))? [Y]es / [n]o / a reason to deny: ")
        let line: String? = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: readLine()) }
        }
        guard let answer = line?.trimmingCharacters() else {
            Output.standardOutput("\n(no answer: denying)")
            return .deny(message: "The user did not answer.")
        }
        switch answer.lowercased() {
        case "y", "yes", "": return .allow
        case "n", "no": return .deny(message: "")
        default: return .deny(message: answer)
        }
    }
}

extension String {
    func trimmingTrailing() -> String {
        var s = Substring(self)
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }

    func trimmingCharacters() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}
