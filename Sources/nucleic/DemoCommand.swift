#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import NucleicAdapters
import NucleicGit
import NucleicProtocol
import NucleicRuntime
import NucleicSystem

/// `nucleic demo`: a whole session on the embedded default — a scratch repository, the replay
/// backend playing a recorded Claude Code session, the events as they come, the approval asked
/// of you, and the session's diff at the end. Needs no agent, no network, no daemon.
enum DemoCommand {
    static let usage = """
        usage: nucleic demo [--fixture FILE] [--yes] [--fast] [--json] [--keep]

        Creates a scratch git repository and a private Nucleic home in a temporary folder, starts a
        session in its own worktree on the replay backend (a recorded Claude Code session, by
        default Fixtures/claude/tool-allow.jsonl: the agent asks to run a command, then finishes),
        shows the events as they come, stops at the approval to ask you, and ends with the
        session's diff against its base.

        Options:
          --fixture FILE   another recording (docs/FIXTURES.md)
          --yes            answer the approval "allow" without asking
          --fast           play the recording at full speed instead of its recorded pace
          --json           print the normalized events as JSON lines instead
          --keep           keep the temporary folder (its path is printed) to look around
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: ["fixture"], boolean: ["yes", "fast", "json", "keep"], usage: usage)
        guard parsed.positionals.isEmpty else { throw UsageError(message: "unexpected argument '\(parsed.positionals[0])'", usage: usage) }
        var fixture = try parsed["fixture"] ?? Resources.path("Fixtures/claude/tool-allow.jsonl")
        if !fixture.hasPrefix("/") { fixture = SessionCommands.currentDirectory() + "/" + fixture }
        guard access(fixture, R_OK) == 0 else { throw CommandError(message: "cannot read \(fixture): \(String(cString: strerror(errno)))") }
        let options = Options(fixture: fixture, yes: parsed.flag("yes"), fast: parsed.flag("fast"), json: parsed.flag("json"))

        var template = Array("/tmp/nucleic-demo-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw CommandError(message: "cannot create a temporary folder: \(String(cString: strerror(errno)))") }
        let root = String(cString: template)
        defer {
            if parsed.flag("keep") { Output.standardError("kept \(root)") } else { _ = system("rm -rf '\(root)'") }
        }
        return try runBlocking { try await demo(root: root, options) }.get()
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
            let readme = fopen(repositoryPath + "/README.md", "w")
            fputs("# shop\n\nA scratch repository for the Nucleic demo.\n", readme)
            fclose(readme)
            _ = try repository.commitAll(message: "Initial commit")
        } catch { throw CommandError(message: "creating the scratch repository: \(error)") }

        let host = try await SessionHost.open(SessionHost.Configuration(
            home: NucleicHome(path: root + "/nucleic"), adapters: [:], selfExecutable: SelfExecutable.path,
            replaySpeed: options.fast ? "max" : "recorded"))
        let project = try await host.addProject(path: repositoryPath, name: "shop")
        say("Scratch repository \(project.path) (project \(project.name), base \(project.baseBranch)).")
        var notifications = await host.listen().makeAsyncIterator()
        let summary = try await host.startSession(.init(prompt: "Create hello.txt containing hello.", backend: "replay", fixture: options.fixture))
        say("Session \(summary.sessionID) on branch \(summary.branch), replaying \(options.fixture)\n")

        let renderer = TranscriptRenderer()
        var status = SessionStatus.running
        var denied = false
        while let notification = await notifications.next() {
            switch notification {
            case .events(let id, let events) where id == summary.sessionID:
                for event in events {
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
        say("\nThe session's diff against \(project.baseBranch): \(stat.files) files, +\(stat.insertions) −\(stat.deletions)")
        if let patch, !patch.isEmpty { say(patch) }
        for f in files { say("  \(f.path) (\(f.change))") }
        if stat.files == 0 {
            say("(A replayed agent runs no tools, so its worktree is unchanged; a real agent's would hold hello.txt.)")
        }
        say("Status: \(status.rawValue). (Run with --keep to look at the worktree, transcript and raw journal afterwards.)")
        try await host.discard(summary.sessionID, deleteBranch: true)
        await host.shutdown()
        return status == .finished ? 0 : 1
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
    func trimmingCharacters() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}
