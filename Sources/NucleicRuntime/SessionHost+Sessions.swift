#if canImport(Glibc)
import Glibc
#endif
public import NucleicAdapters
import NucleicApprovals
import NucleicGit
public import NucleicProtocol
import NucleicStore
import NucleicSystem

extension SessionHost {
    /// One thread for every change to worktrees and branches, so they never overlap: libgit2
    /// reads the other worktrees' entries while it adds or removes one (is this branch checked
    /// out?), and a half-made entry makes it fail ("reference is already checked out").
    static let worktreeExecutor = SerialThreadExecutor(name: "nucleic-worktrees")

    // MARK: Starting

    /// Creates the session's worktree and branch, records it, and starts its agent (or queues it).
    public func startSession(_ request: ClientMsg.StartSession) async throws(SessionError) -> SessionSummary {
        let project = try await project(request.project)
        let id = SessionID.make()
        let title = request.title ?? Naming.title(fromPrompt: request.prompt)
        let base = request.base ?? project.baseBranch
        let branch = "nucleic/\(Naming.slug(title, maxLength: 32))-\(id.rawValue.suffix(6))"
        let (codecName, launchPlan) = try plan(request)

        let worktreePath = configuration.home.worktree(project: project.name, session: id)
        do {
            // The project's folder of worktrees is private (0700), so no one else reaches the
            // checkouts in it, whose files keep the repository's modes.
            try PrivateFiles.ensureFolder(PrivateFiles.parent(of: worktreePath))
            let repository = try await RepositoryActor.open(project.path, executor: Self.worktreeExecutor)
            _ = try await repository.createWorktree(name: id.rawValue, path: worktreePath, branch: branch, from: base)
            try PrivateFiles.ensureFolder(worktreePath)
        } catch {
            throw SessionError(.conflict, "could not create the session's worktree from \(base): \(error)")
        }
        let record = SessionRecord(id: id, projectID: project.id, backend: request.backend, title: title, prompt: request.prompt,
                                   status: .queued, branch: branch, worktreePath: worktreePath, baseBranch: base)
        do { try await store.insert(record) } catch { throw SessionError(.internalError, "recording the session: \(error)") }

        let launch = launchPlan(worktreePath)
        let options = SessionStartOptions(prompt: request.prompt, cwd: worktreePath, planMode: request.planMode)
        try await attach(id, codecName: codecName, header: RawJournal.Header(
            backend: codecName, cli: request.backend, argv: [launch.executable] + launch.arguments, scenario: title),
                   launch: launch, options: options, status: .queued, projectID: project.id, worktree: worktreePath)
        if runningCount < configuration.maxRunning { try await run(id) } else { queue.append(id) }
        return try await summary(id)
    }

    /// Which codec, and how to launch, for a start request.
    func plan(_ request: ClientMsg.StartSession) throws(SessionError) -> (String, @Sendable (String) -> AgentLaunch) {
        let environment = agentEnvironment
        if request.backend == "replay" {
            guard let fixture = request.fixture else {
                throw SessionError(.badMessage, "the replay backend needs a fixture (--fixture FILE)")
            }
            guard let header = FixtureHeader.read(fixture) else {
                throw SessionError(.notFound, "\(fixture) is not a readable fixture (docs/FIXTURES.md)")
            }
            let executable = configuration.selfExecutable
            let speed = configuration.replaySpeed
            return (header, { cwd in
                AgentLaunch(executable: executable, arguments: ["replay-agent", fixture, "--speed", speed],
                            environment: environment, workingDirectory: cwd)
            })
        }
        guard let manifest = configuration.adapters[request.backend] else {
            let known = (configuration.adapters.keys.sorted() + ["replay"]).joined(separator: ", ")
            throw SessionError(.notFound, "no backend \(request.backend) (backends: \(known))")
        }
        let probe: AgentLaunch
        do { probe = try AgentLaunch.from(manifest, workingDirectory: "/", environment: environment) } catch {
            throw SessionError(.notReady, error.message)
        }
        return (manifest.codec, { cwd in
            var launch = probe
            launch.workingDirectory = cwd
            return launch
        })
    }

    /// Builds the live Session for a recorded session (new, or brought back after a restart).
    func attach(_ id: SessionID, codecName: String, header: RawJournal.Header, launch: AgentLaunch?,
                options: SessionStartOptions?, status: SessionStatus, projectID: ProjectID, worktree: String,
                approvalIDs: [ApprovalID] = []) async throws(SessionError) {
        // Adopting, the codec meets the journal's approvals again: they get the ids they had.
        let primed = ApprovalIDSource(approvalIDs)
        guard let codec = Codecs.make(codecName, makeApprovalID: { primed.next() }) else {
            throw SessionError(.internalError, "no codec \(codecName)")
        }
        let storage: FileSessionStorage
        let session: Session
        do {
            storage = try FileSessionStorage(folder: SessionFolder(home: configuration.home.path, session: id), header: header,
                                             ownsJournal: configuration.shim == nil)
            let approvals = ApprovalBroker(sessionID: id, projectID: projectID, worktree: worktree, timeout: configuration.approvalTimeout)
            session = try Session(id: id, backend: codecName, codec: codec, storage: storage, status: status, approvals: approvals, rules: ruleBook)
        } catch { throw SessionError(.internalError, "opening session \(id)'s files: \(error)") }
        live[id] = Live(session: session, storage: storage, launch: launch, options: options)
        lastActivity[id] = .now
        // Subscribed before the agent starts: an event recorded earlier would never reach the
        // store (the session would stay `queued` there) nor any listener.
        let events = await session.subscribe()
        Task { await self.pump(id, events) }
        await session.setBackpressure { [weak self] seq in await self?.untilRecorded(id, seq - Self.unrecordedLimit) }
        await session.setConditionHandler { [weak self] condition in Task { await self?.setCondition(id, condition) } }
    }

    /// Sessions whose agent is mid-turn: what the concurrency cap counts. An agent that
    /// finished its turn and waits for a follow-up does not hold a slot.
    var runningCount: Int { statuses.values.filter { $0 == .running || $0 == .awaitingApproval }.count }

    func run(_ id: SessionID) async throws(SessionError) {
        guard let entry = live[id], let launch = entry.launch, let options = entry.options else { return }
        statuses[id] = .running
        do {
            if let shim = configuration.shim {
                try await entry.session.start(launch, options: options, shim: shim, folder: entry.storage.folder.path)
            } else {
                try await entry.session.start(launch, options: options)
            }
        } catch {
            statuses[id] = .error
            await entry.session.mark(.processExited(description: "could not start: \(error)", expected: false))
            throw SessionError(.notReady, "could not start the agent: \(error)")
        }
    }

    /// Mirrors a session's events into the store and out to listeners.
    func pump(_ id: SessionID, _ events: AsyncStream<SequencedEvent>) async {
        for await event in events {
            await record(id, event)
        }
    }

    /// Sets what holds a session back (`diskFull`), or clears it, and tells the listeners.
    func setCondition(_ id: SessionID, _ message: String?) async {
        if let message { conditions[id] = message } else { conditions[id] = nil }
        if let summary = try? await summary(id) { notify(.sessionUpdated(summary)) }
    }

    func record(_ id: SessionID, _ event: SequencedEvent) async {
        lastActivity[id] = .now
        // Listeners hear the event first, then what it means (an approval to answer, a new
        // summary), so a client never sees an approval before the event that carries it.
        var after: [Notification] = []
        // A store that cannot write (the disk is full) is waited for, not skipped: the session's
        // reader waits behind this (backpressure), so the agent is held back meanwhile.
        var pause = Duration.milliseconds(50)
        while true {
            after = []
            do {
                try await recordInStore(id, event, &after)
                if storeFull.remove(id) != nil { await live[id]?.session.setDiskFull("store", nil) }
                break
            } catch let error as StoreError where error.code == .diskFull {
                if storeFull.insert(id).inserted {
                    HostLog.warning("session \(id): cannot record seq \(event.seq) in the store (\(error.message)); retrying until it can")
                    await live[id]?.session.setDiskFull("store", error.message)
                }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(1))
            } catch {
                HostLog.warning("session \(id): could not record seq \(event.seq) in the store: \(error)")
                break
            }
        }
        recordedSeq[id] = event.seq
        releaseRecordedWaiters(id)
        notify(.events(id, [event]))
        for notification in after { notify(notification) }
        switch event.event {
        case .toolCallCompleted, .diffUpdated, .runFinished: scheduleDiffRefresh(id)
        default: break
        }
        if case .statusChanged(let status, _) = event.event {
            if let summary = try? await summary(id) { notify(.sessionUpdated(summary)) }
            if status != .running && status != .awaitingApproval { await startQueued() }
        }
    }

    private func recordInStore(_ id: SessionID, _ event: SequencedEvent, _ after: inout [Notification]) async throws {
        do {
            switch event.event {
            case .approvalRequested(var request):
                request.sessionID = id
                request.handle = try await store.insert(ApprovalRecord(request: request, sessionID: id, createdAt: event.ts))
                // One a rule answered at once (its resolution is the next event) needs no one.
                if await live[id]?.session.isPending(request.id) ?? true { after.append(.approvalRequested(request)) }
            case .approvalResolved(let resolution):
                _ = try await store.resolve(approval: resolution.approvalID, decision: resolution.decision,
                                            decidedBy: resolution.decidedBy, decidedByLabel: resolution.decidedByLabel, at: event.ts)
                after.append(.approvalResolved(id, resolution))
            case .approvalWithdrawn(let approvalID, let reason):
                _ = try await store.withdraw(approval: approvalID, reason: reason, at: event.ts)
            case .sessionStarted(let started):
                if let native = started.nativeSessionID { try await store.update(session: id, nativeSessionID: native, at: event.ts) }
            case .statusChanged(let status, let reason):
                _ = try await store.modifySession(id: id, at: event.ts) { record in
                    record.status = status
                    if status == .error { record.error = reason }
                }
                statuses[id] = status
            default:
                break
            }
            try await store.update(session: id, lastSeq: event.seq, at: event.ts)
        }
    }

    /// Recomputes a session's diff stat after its tools ran, at most once a second per session,
    /// and publishes it as a summary change (`nucleic ls`, phones and `overlap` see it current).
    func scheduleDiffRefresh(_ id: SessionID) {
        guard diffRefreshPending.insert(id).inserted else { return }
        Task {
            try? await Task.sleep(for: .seconds(1))
            await self.refreshDiff(id)
        }
    }

    private func refreshDiff(_ id: SessionID) async {
        diffRefreshPending.remove(id)
        guard live[id] != nil, let before = try? await summary(id) else { return }
        guard (try? await diff(id, statOnly: true)) != nil, let after = try? await summary(id), after.diffStat != before.diffStat else { return }
        notify(.sessionUpdated(after))
    }

    /// Starts queued sessions while there are free slots.
    func startQueued() async {
        while runningCount < configuration.maxRunning, !queue.isEmpty {
            let next = queue.removeFirst()
            do { try await run(next) } catch { HostLog.warning("queued session \(next) could not start: \(error)") }
        }
    }
}

/// The backend a fixture was recorded from, read from its header line.
enum FixtureHeader {
    static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        guard getline(&line, &capacity, file) > 0, let line else { return nil }
        defer { free(line) }
        guard let header = try? JSONParser.parse(String(cString: line)), header["fixture"]?.intValue == 1 else { return nil }
        return header["backend"]?.stringValue
    }
}
