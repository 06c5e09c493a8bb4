import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import NucleicAdapters
import NucleicGit
public import NucleicProtocol
import NucleicStore
import NucleicSystem

extension SessionHost {
    // MARK: Reading

    public func summary(_ id: SessionID) async throws(SessionError) -> SessionSummary {
        do {
            guard let parts = try await store.summaryParts(session: id) else { throw SessionError(.notFound, "no session \(id)") }
            var summary = parts.record.summary(projectName: parts.projectName ?? "?", pendingApprovals: parts.pendingApprovals)
            summary.condition = conditions[id].map { _ in Session.diskFullCode }
            return summary
        } catch let error as SessionError { throw error } catch { throw SessionError(.internalError, "\(error)") }
    }

    /// Sessions in attention order (DESIGN.md §6).
    public func sessions(includeArchived: Bool) async throws(SessionError) -> [SessionSummary] {
        do {
            let summaries = try await store.sessionSummaries(matching: SessionFilter(includeArchived: includeArchived))
            return summaries.map { summary in
                var summary = summary
                summary.condition = conditions[summary.sessionID].map { _ in Session.diskFullCode }
                return summary
            }.sorted(by: SessionSummary.attentionOrder)
        } catch { throw SessionError(.internalError, "\(error)") }
    }

    /// The one session an id or unique prefix names.
    public func resolveSession(_ reference: String) async throws(SessionError) -> SessionID {
        try await resolve(reference, .session, "session")
    }

    /// The one pending or past approval an id or unique prefix names.
    public func resolveApproval(_ reference: String) async throws(SessionError) -> ApprovalID {
        try await resolve(reference, .approval, "approval")
    }

    /// The one stored id of `kind` that `reference` is or begins; `noun` names the kind in errors.
    private func resolve<Tag>(_ reference: String, _ kind: IDKind, _ noun: String) async throws(SessionError) -> Identifier<Tag> {
        let ids: [Identifier<Tag>]
        do { ids = try await store.ids(kind, matchingPrefix: reference.lowercased()).map { Identifier($0) } } catch {
            throw SessionError(.internalError, "\(error)")
        }
        switch Naming.resolve(reference, among: ids) {
        case .one(let id): return id
        case .none: throw SessionError(.notFound, "no \(noun) \(reference)")
        case .ambiguous(let matches):
            throw SessionError(.ambiguous, "\(reference) matches \(matches.count) \(noun)s; give more characters")
        }
    }

    /// Pending approvals across sessions, oldest first.
    public func pendingApprovals() async throws(SessionError) -> [ApprovalRequest] {
        do { return try await store.pendingApprovals().map(\.request) } catch { throw SessionError(.internalError, "\(error)") }
    }

    /// Events after `seq` from the transcript, up to now.
    public func events(_ id: SessionID, after seq: Int64) async throws(SessionError) -> [SequencedEvent] {
        if let entry = live[id] {
            do { return try entry.storage.events(from: seq + 1) } catch { throw SessionError(.internalError, "\(error)") }
        }
        do { return try storedCursor(id, from: seq + 1).collect() } catch {
            throw SessionError(.notFound, "session \(id) has no transcript: \(error)")
        }
    }

    /// Events after `seq` a page at a time: a live session's from its open transcript (each
    /// page found by the seq index), a stored one's through one cursor (`storedCursor`).
    public func eventPages(_ id: SessionID, after seq: Int64) async throws(SessionError) -> any EventPages {
        if let entry = live[id] { return LiveEventPages(storage: entry.storage, after: seq) }
        do { return StoredEventPages(cursor: try storedCursor(id, from: seq + 1)) } catch {
            throw SessionError(.notFound, "session \(id) has no transcript: \(error)")
        }
    }

    /// A stored session's events from `seq`: through a `TranscriptSnapshot`, which reads only
    /// the lines it returns, or, when the snapshot's check finds the file needs repair, through
    /// the repairing open (a pass over the whole file).
    func storedCursor(_ id: SessionID, from seq: Int64) throws(StoreError) -> TranscriptCursor {
        let folder = SessionFolder(home: configuration.home.path, session: id)
        if let snapshot = TranscriptSnapshot.open(folder: folder.path), let cursor = snapshot.read(from: seq) { return cursor }
        let transcript = try folder.openTranscript()
        defer { transcript.close() }
        return try transcript.read(from: seq)
    }

    public func diff(_ id: SessionID, statOnly: Bool) async throws(SessionError) -> (DiffStat, [FileStat], String?) {
        let record = try await sessionRecord(id)
        guard let worktree = record.worktreePath, access(worktree, F_OK) == 0 else {
            throw SessionError(.notFound, "session \(id)'s worktree is gone (status \(record.status.rawValue))")
        }
        do {
            let repository = try await RepositoryActor.open(worktree)
            // From the branch point (`base...HEAD` plus uncommitted work), so what the base gained
            // since (another session's integration) is not shown as this session undoing it.
            let stat = try await repository.branchDiffStat(worktreePath: worktree, base: record.baseBranch)
            let patch = statOnly ? nil : try await repository.branchDiff(worktreePath: worktree, base: record.baseBranch)
            let files = stat.files.map {
                FileStat(path: $0.path, change: $0.status.rawValue, insertions: $0.insertions, deletions: $0.deletions, isBinary: $0.isBinary)
            }
            let summary = DiffStat(files: stat.filesChanged, insertions: stat.insertions, deletions: stat.deletions)
            _ = try? await store.update(session: id, diffStat: summary)
            return (summary, files, patch)
        } catch { throw SessionError(.internalError, "diffing session \(id): \(error)") }
    }

    /// The session's raw journal: a fixture anyone can replay (docs/FIXTURES.md).
    public func exportFixture(_ id: SessionID) async throws(SessionError) -> String {
        _ = try await sessionRecord(id)
        let path = SessionFolder(home: configuration.home.path, session: id).rawJournalPath
        let bytes: [UInt8]?
        do { bytes = try WholeFile.read(path) } catch { throw SessionError(.notFound, "session \(id)'s raw journal cannot be read: \(error)") }
        guard let bytes else { throw SessionError(.notFound, "session \(id) has no raw journal") }
        return String(decoding: bytes, as: UTF8.self)
    }

    func sessionRecord(_ id: SessionID) async throws(SessionError) -> SessionRecord {
        do {
            guard let record = try await store.session(id: id) else { throw SessionError(.notFound, "no session \(id)") }
            return record
        } catch let error as SessionError { throw error } catch { throw SessionError(.internalError, "\(error)") }
    }

    // MARK: Acting

    /// Answers an approval; the first valid answer wins (`alreadyResolved` names who answered).
    /// An "always" answer (allowAlways, or a deny with `denyAlways`) also stores a rule.
    ///
    /// An approval this host put to a person, of a session that runs here, goes to its session
    /// at once (its broker judges the answer); any other is looked up in the store first, for
    /// the words of a refusal.
    public func respond(_ approvalID: ApprovalID, _ decision: Decision, decidedBy: String, label: String?,
                        denyAlways: ApprovalScope? = nil) async throws(SessionError) {
        if let sessionID = awaitingPerson[approvalID], let session = live[sessionID]?.session {
            do {
                try await answer(session, approvalID, decision, decidedBy: decidedBy, label: label, denyAlways: denyAlways)
                return
            } catch where error.code == .notFound {
                awaitingPerson[approvalID] = nil  // the session no longer has it: the store says what became of it
            }
        }
        let record: ApprovalRecord
        do {
            guard let found = try await store.approval(id: approvalID) else { throw SessionError(.notFound, "no approval \(approvalID)") }
            record = found
        } catch let error as SessionError { throw error } catch { throw SessionError(.internalError, "\(error)") }
        switch record.status {
        case .resolved:
            // The loser of a race hears what won, not only that it lost.
            let answer = record.decision.map { ": \($0.summary)" } ?? ""
            throw SessionError(.alreadyResolved, "approval \(approvalID) was already answered by \(record.decidedByLabel ?? record.decidedBy ?? "someone")\(answer)")
        case .withdrawn:
            throw SessionError(.alreadyResolved, "approval \(approvalID) was withdrawn: \(record.withdrawReason ?? "no longer needed")")
        case .pending:
            break
        }
        guard let session = live[record.sessionID]?.session else {
            throw SessionError(.notReady, "session \(record.sessionID)'s agent is not running")
        }
        try await answer(session, approvalID, decision, decidedBy: decidedBy, label: label, denyAlways: denyAlways)
    }

    /// Gives a pending approval's answer to its session; a race lost to an answer the store has
    /// not recorded yet is reported with the winning answer once it has.
    private func answer(_ session: Session, _ approvalID: ApprovalID, _ decision: Decision, decidedBy: String, label: String?,
                        denyAlways: ApprovalScope?) async throws(SessionError) {
        do {
            if let rule = try await session.respond(approvalID, decision, decidedBy: decidedBy, label: label, denyAlways: denyAlways) {
                await persist(rule)
            }
        } catch let error where error.code == .alreadyResolved {
            // Lost a race the store had not seen yet: say what won once it is recorded.
            for _ in 0..<20 {
                if let won = try? await store.approval(id: approvalID), let decision = won.decision {
                    throw SessionError(.alreadyResolved, "\(error.message): \(decision.summary)")
                }
                try? await Task.sleep(for: .milliseconds(25))
            }
            throw error
        }
    }

    /// A follow-up; an agent that is no longer running is resumed first (its backend's own resume).
    public func sendInput(_ id: SessionID, _ text: String) async throws(SessionError) {
        let record = try await sessionRecord(id)
        guard !record.status.isArchived else { throw SessionError(.conflict, "session \(id) is \(record.status.rawValue)") }
        if let session = live[id]?.session, await session.isRunning {
            try await session.send(prompt: text)
            return
        }
        try await resume(record, prompt: text)
    }

    public func interrupt(_ id: SessionID) async throws(SessionError) {
        guard let session = live[id]?.session, await session.isRunning else {
            throw SessionError(.notReady, "session \(id)'s agent is not running")
        }
        try await session.interrupt()
    }

    /// Stops the agent, commits the worktree's uncommitted work onto the session branch (a
    /// snapshot, as `integrate` makes), and removes the worktree; the branch stays unless
    /// `deleteBranch`, the transcript always stays. Nothing is lost: a branch holding work that
    /// is not on the base is deleted only with `force`, and with no git identity to commit the
    /// snapshot as, the discard is refused; both are checked before anything changes.
    @discardableResult
    public func discard(_ id: SessionID, deleteBranch: Bool, force: Bool = false) async throws(SessionError) -> DiscardOutcome {
        let record = try await sessionRecord(id)
        let project = try? await store.project(id: record.projectID)
        var repository: RepositoryActor?
        var worktree: WorktreeInfo?
        if let project {
            do {
                let opened = try await RepositoryActor.open(project.path, executor: Self.worktreeExecutor)
                repository = opened
                worktree = try await opened.listWorktrees().first { $0.name == id.rawValue && !$0.isPrunable }
            } catch { throw SessionError(.internalError, "reading session \(id)'s worktree: \(error)") }
        }
        var identity: GitIdentity?
        if let repository {
            do {
                var dirty = false
                if let worktree { dirty = try await repository.hasUncommittedWork(worktree: worktree.path) }
                if dirty && !deleteBranch { identity = try await gitIdentity(project!.path) }
                if deleteBranch && !force && record.status != .integrated {
                    var committed = false
                    if try await repository.branchExists(record.branch), try await repository.branchExists(record.baseBranch) {
                        committed = try await repository.hasCommits(record.branch, notIn: record.baseBranch)
                    }
                    if dirty || committed {
                        throw SessionError(.conflict, """
                            session \(id) has work that is not on \(record.baseBranch) (\(dirty ? "uncommitted files in its worktree" : "commits on \(record.branch)")); \
                            deleting its branch would lose it. Discard without --delete-branch to keep it on \(record.branch), \
                            integrate it, or add --force to delete it anyway
                            """)
                    }
                }
            } catch let error as SessionError { throw error } catch {
                throw SessionError(.internalError, "checking session \(id)'s work: \(error)")
            }
        }
        queue.removeAll { $0 == id }
        if let entry = live[id] {
            // Discarded first, so the agent's exit is not recorded as a status of its own.
            await entry.session.mark(.discarded)
            await entry.session.stop()
            entry.storage.close()
            live[id] = nil
            forgetAwaitingPerson(id)
        }
        statuses[id] = nil
        var snapshot: String?
        if let repository {
            do {
                if let worktree, !deleteBranch {
                    // After the agent stopped, so everything it wrote is in. `identity` nil (the
                    // worktree looked clean before): looked up only if there is work after all.
                    snapshot = try await repository.snapshot(
                        worktree: worktree.path, sessionID: id.rawValue, author: identity?.author, committer: identity?.committer,
                        attribution: await attribution(record), purpose: .discard)?.description
                }
                let registered = try await repository.listWorktrees().contains { $0.name == id.rawValue }
                if registered {
                    try await repository.removeWorktree(name: id.rawValue, deleteBranch: deleteBranch)
                } else if deleteBranch, try await repository.branchExists(record.branch) {
                    try await repository.deleteBranch(record.branch)
                }
            } catch let error as GitError where error.code == .identityNotConfigured {
                throw SessionError(.conflict, error.message + " The worktree was kept: \(worktree?.path ?? "?").")
            } catch { throw SessionError(.internalError, "removing session \(id)'s worktree: \(error)") }
        }
        do {
            _ = try await store.withdrawPending(session: id, reason: "the session was discarded")
            let removed = repository != nil
            _ = try await store.modifySession(id: id) {
                $0.status = .discarded
                if removed { $0.worktreePath = nil }
            }
        } catch { throw SessionError(.internalError, "\(error)") }
        await startQueued()
        if let summary = try? await summary(id) { notify(.sessionUpdated(summary)) }
        return DiscardOutcome(snapshot: snapshot, branch: record.branch, branchDeleted: deleteBranch)
    }

    /// Stops every agent (closing stdin, then signals) — or, without `killSessions`, leaves
    /// each running under its shim for the next daemon to adopt — and closes the files, once
    /// the store has caught up with each transcript (a restart then finds the status the agent left).
    ///
    /// `killReason`: why the agents are killed (`stop-daemon --kill-sessions`), recorded in each
    /// transcript; a session killed mid-turn then reads `awaitingInput`, not `finished`.
    public func shutdown(killSessions: Bool = true, killReason: String? = nil) async {
        queue = []
        for (id, entry) in live {
            if let killReason, killSessions || configuration.shim == nil {
                await entry.session.stop(reason: killReason, code: "killed")
            } else if killSessions || configuration.shim == nil {
                await entry.session.stop()
            } else {
                await entry.session.detach()
            }
            let last = await entry.session.lastSeq
            // The pump records on this actor; each sleep lets it run. Bounded, in case it cannot.
            for _ in 0..<2000 where recordedSeq[id, default: 0] < last {
                try? await Task.sleep(for: .milliseconds(1))
            }
            entry.storage.close()
            live[id] = nil
        }
        awaitingPerson = [:]
        releaseAllRecordedWaiters()
        for listener in listeners.values { listener.finish() }
        listeners = [:]
    }

    // MARK: Restarts

    /// Sessions whose shim is alive are adopted and carry on (SessionHost+Shims.swift). Those a
    /// previous host left mid-turn with no agent are `awaitingInput` now. A new input resumes them.
    func recover() async throws {
        let adopted = try await adoptShims()
        // Sessions whose shim this daemon holds were repaired as they were adopted; those held
        // by another daemon are that daemon's.
        try await repairAtStart(skipping: Set(adopted.filter { $0.value != .gone }.keys))
        let stale = try await store.sessions(matching: SessionFilter(statuses: [.queued, .running, .awaitingApproval]))
        for record in stale where adopted[record.id] == nil || adopted[record.id] == .gone {
            let withdrawn = try await store.withdrawPending(session: record.id, reason: "the host restarted")
            let folder = SessionFolder(home: configuration.home.path, session: record.id)
            let transcript = try folder.openTranscript()
            defer { transcript.close() }
            let now = Timestamp.now()
            var seq = transcript.lastSeq
            var events: [SequencedEvent] = []
            for id in withdrawn {
                seq += 1
                events.append(SequencedEvent(seq: seq, ts: now, event: .approvalWithdrawn(approvalID: id, reason: "the host restarted")))
            }
            seq += 1
            events.append(SequencedEvent(seq: seq, ts: now, event: .statusChanged(status: .awaitingInput, reason: "the host restarted")))
            try transcript.append(events)
            let last = seq
            _ = try await store.modifySession(id: record.id) {
                $0.status = .awaitingInput
                $0.lastSeq = last
            }
        }
    }

    /// Starts a new agent process for a session whose agent is gone, resuming the backend's own
    /// session, then sends `prompt`. Never two agents for one session.
    func resume(_ record: SessionRecord, prompt: String) async throws(SessionError) {
        if let existing = live[record.id]?.session, await existing.isRunning {
            throw SessionError(.conflict, "session \(record.id) is already running")
        }
        guard let worktree = record.worktreePath else { throw SessionError(.notFound, "session \(record.id) has no worktree") }
        // Its agent may still run under a shim no daemon has adopted yet: adopt it, never start a second.
        let files = ShimFiles(folder: SessionFolder(home: configuration.home.path, session: record.id).path)
        if live[record.id] == nil, access(files.socket, F_OK) == 0 {
            switch await adopt(record, files) {
            case .adopted:
                if let session = live[record.id]?.session, await session.isRunning {
                    try await session.send(prompt: prompt)
                    return
                }
            case .heldElsewhere:
                throw SessionError(.conflict, "session \(record.id)'s agent is held by another daemon (\(files.adoptLock))")
            case .gone:
                break
            }
        }
        if let entry = live[record.id] { entry.storage.close() }
        guard record.backend != "replay" else {
            throw SessionError(.unsupported, "a replayed session cannot be resumed: its recording has ended")
        }
        // An ACP agent resumes in-band: the same command line as before (it may have been the
        // session's own `--agent-command`), read from the journal's header.
        let folder = SessionFolder(home: configuration.home.path, session: record.id)
        var request = ClientMsg.StartSession(prompt: prompt, backend: record.backend)
        if configuration.adapters[record.backend]?.codec == "acp", let header = try? RawJournal.readHeader(path: folder.rawJournalPath) {
            request.agentCommand = header.argv.map(CommandWords.quote).joined(separator: " ")
        }
        let (codecName, launchPlan) = try plan(request)
        var launch = launchPlan(worktree)
        var options = SessionStartOptions(prompt: prompt, cwd: worktree, sessionMode: configuration.adapters[record.backend]?.sessionMode)
        if let native = record.nativeSessionID, let manifest = configuration.adapters[record.backend] {
            if manifest.resumeArguments.isEmpty {
                options.resumeID = native  // in-band (Codex thread/resume)
            } else {
                launch.arguments = manifest.launchArguments(resumeID: native)
            }
        }
        try await attach(record.id, codecName: codecName, header: RawJournal.Header(
            backend: codecName, cli: record.backend, argv: [launch.executable] + launch.arguments, scenario: record.title),
                   launch: launch, options: options, status: record.status, projectID: record.projectID, worktree: worktree)
        if runningCount < configuration.maxRunning { try await run(record.id) } else { queue.append(record.id) }
    }
}

/// Pages of a live session's transcript, each read by seq through the transcript's index.
final class LiveEventPages: EventPages {
    private let storage: FileSessionStorage
    private let last = Mutex<Int64>(0)

    init(storage: FileSessionStorage, after seq: Int64) {
        self.storage = storage
        last.withLock { $0 = seq }
    }

    func next(limit: Int) async throws(SessionError) -> [SequencedEvent] {
        let after = last.withLock { $0 }
        let page: [SequencedEvent]
        do { page = try storage.events(from: after + 1, limit: limit) } catch { throw SessionError(.internalError, "\(error)") }
        if let end = page.last?.seq { last.withLock { $0 = end } }
        return page
    }
}

/// Pages of a stored session's transcript through one cursor (which keeps its own descriptor).
final class StoredEventPages: EventPages, @unchecked Sendable {  // the cursor is only used under `lock`
    private let lock = Mutex(())
    private let cursor: TranscriptCursor

    init(cursor: TranscriptCursor) {
        self.cursor = cursor
    }

    func next(limit: Int) async throws(SessionError) -> [SequencedEvent] {
        do {
            return try lock.withLock { _ throws(StoreError) in try cursor.collect(limit: limit) }
        } catch { throw SessionError(.internalError, "\(error)") }
    }
}
