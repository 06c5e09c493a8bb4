#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicRuntime
import NucleicSystem
import NucleicCommandLine

/// The commands that talk to the daemon (DESIGN.md §1). Each is a small function: parse,
/// one or two requests, print.
enum SessionCommands {
    static func run(_ command: String, _ arguments: [String]) throws -> Int32 {
        let usage = usages[command]!
        let result = runBlocking { () async throws -> Int32 in
            switch command {
            case "project": return try await project(arguments, usage)
            case "start": return try await start(arguments, usage)
            case "ls": return try await list(arguments, usage)
            case "show": return try await show(arguments, usage)
            case "log": return try await log(arguments, usage)
            case "approvals": return try await approvals(arguments, usage)
            case "approve", "deny": return try await decide(command, arguments, usage)
            case "answer": return try await answer(arguments, usage)
            case "rules": return try await rules(arguments, usage)
            case "send": return try await send(arguments, usage)
            case "interrupt": return try await interrupt(arguments, usage)
            case "diff": return try await diff(arguments, usage)
            case "discard": return try await discard(arguments, usage)
            case "export-fixture": return try await exportFixture(arguments, usage)
            case "integrate": return try await integrate(arguments, usage)
            case "overlap": return try await overlap(arguments, usage)
            case "stop-daemon": return try await stopDaemon(arguments, usage)
            default: throw UsageError(message: "unknown command '\(command)'", usage: CLI.usage)
            }
        }
        return try result.get()
    }

    // MARK: Helpers

    static func positionals(_ parsed: ArgumentParser, _ names: [String], _ usage: String) throws -> [String] {
        guard parsed.positionals.count == names.count else {
            let missing = parsed.positionals.count < names.count
            throw UsageError(message: missing ? "missing \(names[parsed.positionals.count])" : "unexpected argument '\(parsed.positionals[names.count])'", usage: usage)
        }
        return parsed.positionals
    }

    static func json(_ value: JSONValue) { Output.standardOutput(JSONWriter.string(value)) }

    /// For a command whose one positional is SESSION: a connection to the daemon and the session
    /// it names.
    static func connectToSession(_ parsed: ArgumentParser, _ usage: String) async throws -> (DaemonClient, SessionSummary) {
        let reference = try positionals(parsed, ["SESSION"], usage)[0]
        let client = try await DaemonClient.connect()
        return (client, try await resolveSession(reference, client))
    }

    static func resolveSession(_ reference: String, _ client: DaemonClient) async throws -> SessionSummary {
        guard case .sessionList(let sessions) = try await client.request(.listSessions(includeArchived: true)).body else {
            throw CommandError(message: "unexpected reply to listSessions")
        }
        switch Naming.resolve(session: reference, among: sessions) {
        case .one(let session): return session
        case .none: throw CommandError(message: "no session \(reference): give a handle, a branch, or the start or end of an id (see `nucleic ls --all`)", status: 2)
        case .ambiguous(let matches):
            let names = matches.map { "\($0.displayName) (\($0.sessionID))" }.joined(separator: ", ")
            throw CommandError(message: "\(reference) matches \(matches.count) sessions: \(names); give its handle", status: 2)
        }
    }

    static func pending(_ client: DaemonClient) async throws -> [ApprovalRequest] {
        guard case .approvalList(let approvals) = try await client.request(.listApprovals).body else {
            throw CommandError(message: "unexpected reply to listApprovals")
        }
        return approvals
    }

    static func resolveApproval(_ reference: String, _ client: DaemonClient) async throws -> ApprovalRequest {
        let approvals = try await pending(client)
        switch Naming.resolve(approval: reference, among: approvals) {
        case .one(let approval): return approval
        case .none: throw CommandError(message: "no pending approval \(reference) (see `nucleic approvals`)", status: 2)
        case .ambiguous(let matches):
            throw CommandError(message: "\(reference) matches \(matches.count) approvals: \(matches.map(\.displayName).joined(separator: ", ")); give its handle", status: 2)
        }
    }

    static func short(_ id: String) -> String { String(id.prefix(13)) }

    /// Each session's worktree, for showing paths relative to it.
    static func sessionWorktrees(_ client: DaemonClient) async throws -> [SessionID: String] {
        guard case .sessionList(let sessions) = try await client.request(.listSessions(includeArchived: false)).body else { return [:] }
        var out: [SessionID: String] = [:]
        for s in sessions { if let w = s.worktree { out[s.sessionID] = w } }
        return out
    }

    /// Each live session's handle, for naming sessions in lists of approvals.
    static func sessionHandles(_ client: DaemonClient) async throws -> [SessionID: String] {
        guard case .sessionList(let sessions) = try await client.request(.listSessions(includeArchived: true)).body else { return [:] }
        var out: [SessionID: String] = [:]
        for s in sessions { out[s.sessionID] = s.displayName }
        return out
    }

    // MARK: Commands

    static func project(_ arguments: [String], _ usage: String) async throws -> Int32 {
        guard let sub = arguments.first else { throw UsageError(message: "missing add, ls or rm", usage: usage) }
        let parsed = try ArgumentParser(Array(arguments.dropFirst()), valued: ["name"], boolean: ["json"], usage: usage)
        guard ["add", "ls", "rm"].contains(sub) else {
            let hint = Spelling.nearest(sub, among: ["add", "ls", "rm"]).map { " (did you mean '\($0)'?)" } ?? ""
            throw UsageError(message: "unknown project command '\(sub)'\(hint)", usage: usage)
        }
        if sub == "rm" { _ = try positionals(parsed, ["NAME"], usage) }
        let client = try await DaemonClient.connect()
        switch sub {
        case "rm":
            guard case .projectList(let projects) = try await client.request(.removeProject(project: parsed.positionals[0])).body,
                let project = projects.first else { throw CommandError(message: "unexpected reply") }
            if parsed.flag("json") { json(project.json) } else {
                Output.standardOutput("removed project \(project.name) (\(project.path) itself is untouched)")
            }
        case "add":
            let path = try positionals(parsed, ["PATH"], usage)[0]
            let absolute = path.hasPrefix("/") ? path : (Self.currentDirectory() + "/" + path)
            guard case .projectList(let projects) = try await client.request(.addProject(path: absolute, name: parsed["name"])).body,
                let project = projects.first else { throw CommandError(message: "unexpected reply") }
            if parsed.flag("json") { json(project.json) } else {
                Output.standardOutput("added project \(project.name): \(project.path) (sessions start from \(project.baseBranch))")
            }
        case "ls":
            _ = try positionals(parsed, [], usage)
            guard case .projectList(let projects) = try await client.request(.listProjects).body else { throw CommandError(message: "unexpected reply") }
            if parsed.flag("json") { json(.array(projects.map(\.json))) } else if projects.isEmpty {
                Output.standardOutput("no projects yet: add one with `nucleic project add PATH`")
            } else {
                for p in projects { Output.standardOutput("\(p.name)\t\(p.baseBranch)\t\(p.path)") }
            }
        default:
            throw UsageError(message: "unknown project command '\(sub)'", usage: usage)
        }
        return 0
    }

    static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        return getcwd(&buffer, buffer.count) != nil ? String(cString: buffer) : "."
    }

    static func start(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: ["project", "backend", "fixture", "base", "title", "agent-command"], boolean: ["json", "plan"], usage: usage)
        let prompt = try Prompt.nonEmpty(positionals(parsed, ["PROMPT"], usage)[0], "PROMPT", usage: usage)
        let backend = parsed["backend"] ?? "claude"
        var fixture = parsed["fixture"]
        if let f = fixture, !f.hasPrefix("/") { fixture = currentDirectory() + "/" + f }
        if backend == "replay" && fixture == nil { throw UsageError(message: "--backend replay needs --fixture FILE", usage: usage) }
        if backend != "replay" && fixture != nil { throw UsageError(message: "--fixture is for --backend replay", usage: usage) }
        if backend == "replay" && parsed["agent-command"] != nil { throw UsageError(message: "--agent-command is not for --backend replay", usage: usage) }
        let client = try await DaemonClient.connect()
        try await warnAboutEnvironment(backend: backend, client)
        let project = try await ProjectFromFolder.resolve(parsed["project"], client)
        let request = ClientMsg.StartSession(prompt: prompt, project: project, backend: backend, fixture: fixture,
                                             base: parsed["base"], title: parsed["title"], planMode: parsed.flag("plan"),
                                             agentCommand: parsed["agent-command"])
        guard case .sessionCreated(let summary) = try await client.request(.startSession(request)).body else {
            throw CommandError(message: "unexpected reply to startSession")
        }
        if parsed.flag("json") { json(summary.json) } else {
            // The handle for people on stderr; stdout stays the bare id, for `id=$(nucleic start …)`.
            Output.standardError("started session \(summary.displayName) on branch \(summary.branch)")
            Output.standardOutput(summary.sessionID.rawValue)
        }
        return 0
    }

    /// This shell sets the backend's binary, but the running daemon (started elsewhere) uses
    /// another: say so, and how to apply it.
    static func warnAboutEnvironment(backend: String, _ client: DaemonClient) async throws {
        let key = "\(backend)-bin"
        guard let setting = NucleicConfig.setting(key), let wanted = AgentLaunch.hostEnvironment()[setting.environment], !wanted.isEmpty,
            case .config(let entries) = try await client.request(.reloadConfig).body,
            let entry = entries.first(where: { $0.key == key }), entry.value != wanted else { return }
        let has = entry.value.map { "\($0) (from its \(entry.source == "environment" ? setting.environment : entry.source))" } ?? "the \(backend) on its PATH"
        let fix = entry.source == "environment"
            ? "restart it from this shell (`nucleic stop-daemon`; sessions keep running)"
            : "`nucleic config set \(key) \(wanted)` applies it to the next start, or restart the daemon from this shell (`nucleic stop-daemon`)"
        Output.standardError("nucleic: this shell sets \(setting.environment)=\(wanted), but the running daemon uses \(has): \(fix)")
    }

    static func list(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json", "all"], usage: usage)
        _ = try positionals(parsed, [], usage)
        let client = try await DaemonClient.connect()
        guard case .sessionList(let sessions) = try await client.request(.listSessions(includeArchived: parsed.flag("all"))).body else {
            throw CommandError(message: "unexpected reply")
        }
        if parsed.flag("json") { json(.array(sessions.map(\.json))); return 0 }
        if sessions.isEmpty { Output.standardOutput("no sessions: start one with `nucleic start PROMPT`"); return 0 }
        for bucket in SessionStatus.Bucket.allCases {
            let rows = sessions.filter { $0.status.bucket == bucket }
            guard !rows.isEmpty else { continue }
            let (name, style): (String, Colour.Style) = switch bucket {
            case .needsYou: ("NEEDS YOU", .boldYellow)
            case .running: ("RUNNING", .boldGreen)
            case .done: ("DONE", .bold)
            }
            Output.standardOutput(Colour.paint("\(name) (\(rows.count))", style))
            for s in rows { Output.standardOutput("  " + row(s)) }
        }
        return 0
    }

    static func row(_ s: SessionSummary) -> String {
        let diff = s.diffStat.map { " +\($0.insertions)/−\($0.deletions)" } ?? ""
        let pending = (s.pendingApprovals > 0 ? " · \(s.pendingApprovals) pending" : "") + (s.condition.map { " · \($0)" } ?? "")
        return "\(s.displayName.padding(4))  \(paint(s.status, s.status.rawValue.padding(16)))  \(s.title)  [\(s.projectName) · \(s.backend)\(diff)\(pending)]"
    }

    /// A status in its bucket's colour (NEEDS YOU yellow, RUNNING green, DONE plain).
    static func paint(_ status: SessionStatus, _ text: String) -> String {
        switch status.bucket {
        case .needsYou: Colour.paint(text, .yellow)
        case .running: Colour.paint(text, .green)
        case .done: text
        }
    }

    /// An approval card's lines, a file change's coloured as a diff.
    static func paintCard(_ a: ApprovalRequest, _ lines: [String]) -> [String] {
        guard Colour.enabled, a.question == nil, ["Write", "Edit", "MultiEdit", "apply_patch"].contains(a.toolName) else { return lines }
        return lines.map { Colour.diff($0) }
    }

    static func show(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json"], usage: usage)
        let (client, summary) = try await connectToSession(parsed, usage)
        let approvals = try await pending(client).filter { $0.sessionID == summary.sessionID }
        if parsed.flag("json") {
            json(["summary": summary.json, "pendingApprovals": .array(approvals.map(\.json))])
            return 0
        }
        Output.standardOutput("""
            session   \(summary.displayName)   id \(summary.sessionID)
            title     \(summary.title)
            status    \(paint(summary.status, summary.status.rawValue))\(summary.condition.map { "   held back: \($0) (the disk is full; free some space)" } ?? "")
            project   \(summary.projectName)   backend \(summary.backend)
            branch    \(summary.branch)
            worktree  \(summary.worktree ?? "(removed)")
            events    \(summary.lastSeq)   updated \(summary.updatedAt)
            """)
        if let d = summary.diffStat { Output.standardOutput("diff      \(d.files) files, +\(d.insertions) −\(d.deletions)") }
        for a in approvals {
            Output.standardOutput("pending   \(a.displayName)  [\(Colour.risk(a.risk.rawValue))]")
            for line in paintCard(a, ApprovalContent(a, cwd: summary.worktree).lines) { Output.standardOutput("    " + line) }
        }
        return 0
    }

    static func log(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: ["since"], boolean: ["json", "follow"], usage: usage)
        let reference = try positionals(parsed, ["SESSION"], usage)[0]
        var since: Int64 = 0
        if let text = parsed["since"] {
            guard let n = Int64(text), n >= 0 else { throw UsageError(message: "--since must be a seq (0 or more)", usage: usage) }
            since = n
        }
        let client = try await DaemonClient.connect()
        let summary = try await resolveSession(reference, client)
        var renderer = TranscriptRenderer(cwd: summary.worktree, sessionHandle: summary.handle)
        func emit(_ events: [SequencedEvent]) {
            for e in events {
                if case .sessionStarted(let started) = e.event { renderer.reportedCwd = started.cwd }
                // Every event goes through the renderer (it numbers the approvals); those up to
                // --since are not printed.
                let line = renderer.render(e.event)
                guard e.seq > since else { continue }
                if parsed.flag("json") { json(e.json) } else if let line { Output.standardOutput(line) }
            }
        }
        // From the start whatever --since says: approval handles count from the first event.
        let from: Int64 = parsed.flag("json") ? since : 0
        guard case .events(_, let backlog) = try await client.request(.subscribe(sessionID: summary.sessionID, sinceSeq: from, verbosity: .full)).body else {
            throw CommandError(message: "unexpected reply to subscribe")
        }
        emit(backlog)
        var pushed = client.pushed.makeAsyncIterator()
        // A long backlog goes on in pushed pages, in order: without --follow, read them up to
        // the last seq the session had when asked.
        var last = backlog.last?.seq ?? since ?? 0
        while !parsed.flag("follow"), last < summary.lastSeq, let message = await pushed.next() {
            guard case .events(let id, let events) = message.body, id == summary.sessionID else { continue }
            emit(events)
            last = events.last?.seq ?? last
        }
        guard parsed.flag("follow") else { return 0 }
        // At a terminal, each approval can be answered where it shows (as the demo does).
        let inline = !parsed.flag("json") && isatty(0) == 1
        if inline {
            for approval in try await pending(client) where approval.sessionID == summary.sessionID {
                await answerInline(approval, client)
            }
        }
        while let message = await pushed.next() {
            switch message.body {
            case .events(let id, let events) where id == summary.sessionID: emit(events)
            case .approvalRequested(let approval) where inline && approval.sessionID == summary.sessionID:
                await answerInline(approval, client)
            default: break
            }
        }
        return 0
    }

    static func approvals(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json"], usage: usage)
        _ = try positionals(parsed, [], usage)
        let client = try await DaemonClient.connect()
        let list = try await pending(client)
        if parsed.flag("json") { json(.array(list.map(\.json))); return 0 }
        if list.isEmpty { Output.standardOutput("no pending approvals"); return 0 }
        let worktrees = try await sessionWorktrees(client)
        let handles = try await sessionHandles(client)
        for a in list {
            let card = ApprovalContent(a, cwd: a.sessionID.flatMap { worktrees[$0] })
            let session = a.sessionID.flatMap { handles[$0] } ?? a.sessionID.map { short($0.rawValue) } ?? "?"
            Output.standardOutput("\(a.displayName.padding(6))  \(Colour.risk(a.risk.rawValue.padding(11)))  \(card.headline)  (session \(session))")
            for line in paintCard(a, card.body) + (card.omittedLines > 0 ? [card.lines.last!] : []) { Output.standardOutput("    " + line) }
            Output.standardOutput("    → \(allowed(a))")
        }
        return 0
    }

    /// What can be answered: the decisions the backend takes and the "always" scopes offered.
    static func allowed(_ a: ApprovalRequest) -> String {
        if a.question != nil { return "answer: nucleic answer \(a.displayName) NUMBER|LABEL…  (or deny)" }
        var parts = ["allow", a.capabilities.canModifyToolInput ? "allow with an edited input" : "no edited input (the backend cannot take one)",
                     "deny with a message"]
        let scopes = a.offeredScopes.map { scope -> String in
            switch scope {
            case .exactCommandThisSession: "command"
            case .toolThisSession: "tool"
            case .rule(let rule): "'\(rule)'"
            }
        }
        parts.append(scopes.isEmpty ? "never always (\(a.risk.alwaysNeedsPerson ? "risk \(a.risk.rawValue)" : "nothing to remember"))" : "--always " + scopes.joined(separator: " | "))
        return parts.joined(separator: " · ")
    }

    static func send(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json"], usage: usage)
        let values = try positionals(parsed, ["SESSION", "TEXT"], usage)
        _ = try Prompt.nonEmpty(values[1], "TEXT", usage: usage)
        let client = try await DaemonClient.connect()
        let summary = try await resolveSession(values[0], client)
        _ = try await client.request(.sendInput(sessionID: summary.sessionID, text: values[1]))
        if parsed.flag("json") { json(sessionReference(summary, ["sent": .bool(true)])) }
        return 0
    }

    static func interrupt(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json"], usage: usage)
        let (client, summary) = try await connectToSession(parsed, usage)
        _ = try await client.request(.interrupt(sessionID: summary.sessionID))
        if parsed.flag("json") { json(sessionReference(summary, ["interrupted": .bool(true)])) }
        return 0
    }

    static func diff(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["stat", "json"], usage: usage)
        let (client, summary) = try await connectToSession(parsed, usage)
        guard case .diff(_, let stat, let files, let patch) = try await client.request(.getDiff(sessionID: summary.sessionID, statOnly: parsed.flag("stat"))).body else {
            throw CommandError(message: "unexpected reply to getDiff")
        }
        if parsed.flag("json") {
            var o: JSONObject = ["stat": stat.json, "files": .array(files.map(\.json))]
            o.append("patch", ifPresent: patch.map(JSONValue.string))
            json(.object(o))
            return 0
        }
        if let patch, !parsed.flag("stat") { Output.write(1, Colour.diff(patch)) }
        for f in files { Output.standardOutput(" \(f.path) | \(f.isBinary ? "binary" : "+\(f.insertions) −\(f.deletions)") (\(f.change))") }
        Output.standardOutput(" \(stat.files) files changed, \(stat.insertions) insertions(+), \(stat.deletions) deletions(−)")
        return 0
    }

    static func discard(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["delete-branch", "force", "json"], usage: usage)
        let reference = try positionals(parsed, ["SESSION"], usage)[0]
        if parsed.flag("force") && !parsed.flag("delete-branch") { throw UsageError(message: "--force goes with --delete-branch", usage: usage) }
        let client = try await DaemonClient.connect()
        let summary = try await resolveSession(reference, client)
        guard case .discarded(_, let branch, let snapshot, let deleted) = try await client.request(
            .discard(sessionID: summary.sessionID, deleteBranch: parsed.flag("delete-branch"), force: parsed.flag("force"))).body
        else { throw CommandError(message: "unexpected reply to discard") }
        if parsed.flag("json") {
            json(sessionReference(summary, ["branch": .string(branch), "snapshot": snapshot.map(JSONValue.string) ?? .null, "branchDeleted": .bool(deleted)]))
        } else if deleted {
            Output.standardOutput("discarded \(summary.displayName); branch \(branch) deleted")
        } else if let snapshot {
            Output.standardOutput("discarded \(summary.displayName); its uncommitted work is commit \(snapshot.prefix(12)) on branch \(branch), kept")
        } else {
            Output.standardOutput("discarded \(summary.displayName); branch \(branch) kept (nothing was left uncommitted)")
        }
        return 0
    }

    static func exportFixture(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json"], usage: usage)
        let (client, summary) = try await connectToSession(parsed, usage)
        guard case .fixture(_, let text) = try await client.request(.exportFixture(sessionID: summary.sessionID)).body else {
            throw CommandError(message: "unexpected reply to exportFixture")
        }
        if parsed.flag("json") { json(sessionReference(summary, ["text": .string(text)])); return 0 }
        Output.write(1, text)
        return 0
    }

    static func stopDaemon(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["kill-sessions", "json"], usage: usage)
        _ = try positionals(parsed, [], usage)
        let kill = parsed.flag("kill-sessions")
        let client: DaemonClient
        do { client = try await DaemonClient.connect(start: kill) } catch {
            if parsed.flag("json") { json(["wasRunning": false, "stopped": false]) } else { Output.standardOutput("the daemon is not running") }
            return 0
        }
        _ = try await client.request(.shutdown(killSessions: kill))
        for await _ in client.pushed {}  // until the daemon closes the connection
        if parsed.flag("json") { json(["wasRunning": true, "stopped": true, "sessionsKilled": .bool(kill)]); return 0 }
        Output.standardOutput("the daemon stopped")
        return 0
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}

/// `--edit`: the input in $EDITOR (or vi), read back as JSON.
enum Editor {
    static func edit(_ input: JSONValue) throws -> JSONValue {
        var template = Array("/tmp/nucleic-input-XXXXXX.json".utf8CString)
        let fd = mkstemps(&template, 5)
        guard fd >= 0 else { throw CommandError(message: "cannot create a temporary file: \(String(cString: strerror(errno)))") }
        let path = String(cString: template)
        defer { unlink(path) }
        Output.write(fd, JSONWriter.string(input) + "\n")
        Glibc.close(fd)
        let editor = getenv("VISUAL").map { String(cString: $0) } ?? getenv("EDITOR").map { String(cString: $0) } ?? "vi"
        let status = system("\(editor) '\(path)'")
        guard status == 0 else { throw CommandError(message: "\(editor) exited with status \(status); nothing was sent") }
        return try SessionCommands.parseInput(FileText.read(path), from: "the edited input")
    }
}
