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
        // A replayed ACP session switches to the mode its recording's host switched to, as the
        // recorded manifest made it do, so that the replay agent hears the recorded handshake.
        let sessionMode = request.backend == "replay" ? request.fixture.flatMap(FixtureHeader.sessionMode)
            : configuration.adapters[request.backend]?.sessionMode
        let options = SessionStartOptions(prompt: request.prompt, cwd: worktreePath, planMode: request.planMode,
                                          sessionMode: sessionMode)
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
        do { probe = try AgentLaunch.from(manifest, workingDirectory: "/", command: request.agentCommand, environment: environment) } catch {
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
        // The manifest the session was started with names it (`kimi`, not its codec `acp`); a
        // replayed session is named by its recording's codec.
        let named = configuration.adapters[header.cli]?.codec == codecName ? header.cli : codecName
        guard let codec = Codecs.make(codecName, backend: named, makeApprovalID: { primed.next() }) else {
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
        forgetAwaitingPerson(id)  // a resumed session's broker starts afresh
        lastActivity[id] = .now
        // Subscribed before the agent starts: an event recorded earlier would never reach the
        // store (the session would stay `queued` there) nor any listener.
        let events = await session.subscribeBatches()
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

    /// Mirrors a session's events into the store and out to listeners, a batch (one append of
    /// the session's) at a time.
    func pump(_ id: SessionID, _ batches: AsyncStream<[SequencedEvent]>) async {
        for await events in batches where !events.isEmpty {
            await record(id, events)
        }
    }

    /// Sets what holds a session back (`diskFull`), or clears it, and tells the listeners.
    func setCondition(_ id: SessionID, _ message: String?) async {
        if let message { conditions[id] = message } else { conditions[id] = nil }
        if let summary = try? await summary(id) { notify(.sessionUpdated(summary)) }
    }

    /// Records one batch of a session's events in the store (one transaction: the approval path
    /// pays one commit and one trip to the store's thread per batch, not several per event),
    /// then tells the listeners: the events first, then what they mean (an approval to answer, a
    /// new summary), so a client never sees an approval before the event that carries it.
    /// Drops what `awaitingPerson` holds of session `id` (it left `live`, or a new agent took it).
    func forgetAwaitingPerson(_ id: SessionID) {
        awaitingPerson = awaitingPerson.filter { $0.value != id }
    }

    func record(_ id: SessionID, _ events: [SequencedEvent]) async {
        lastActivity[id] = .now
        // A store that cannot write (the disk is full) is waited for, not skipped: the session's
        // reader waits behind this (backpressure), so the agent is held back meanwhile.
        var pause = Duration.milliseconds(50)
        var recorded = Store.RecordedBatch()
        while true {
            do throws(StoreError) {
                recorded = try await store.record(events: events, session: id)
            } catch where error.code == .diskFull {
                if storeFull.insert(id).inserted {
                    HostLog.warning("session \(id): cannot record seq \(events[0].seq)…\(events.last!.seq) in the store (\(error.message)); retrying until it can")
                    await live[id]?.session.setDiskFull("store", error.message)
                }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(1))
                continue
            } catch {
                HostLog.warning("session \(id): could not record seq \(events[0].seq)…\(events.last!.seq) in the store: \(error)")
                break
            }
            if storeFull.remove(id) != nil { await live[id]?.session.setDiskFull("store", nil) }
            break
        }
        for failure in recorded.failures {
            HostLog.warning("session \(id): could not record seq \(failure.seq) in the store: \(failure.error)")
        }
        recordedSeq[id] = events.last!.seq
        releaseRecordedWaiters(id)
        notify(.events(id, events))
        var statusChanged = false
        var lastStatus: SessionStatus?
        var refreshDiff = false
        for (position, event) in events.enumerated() {
            switch event.event {
            case .approvalRequested(var request):
                guard let handle = recorded.approvalHandles[request.id] else { break }
                // One a rule answered at once (its resolution follows in the same batch) needs no one.
                let answered = events[(position + 1)...].contains {
                    switch $0.event {
                    case .approvalResolved(let resolution): resolution.approvalID == request.id
                    case .approvalWithdrawn(let approvalID, _): approvalID == request.id
                    default: false
                    }
                }
                guard !answered else { break }
                request.sessionID = id
                request.handle = handle
                awaitingPerson[request.id] = id
                notify(.approvalRequested(request))
            case .approvalWithdrawn(let approvalID, _):
                awaitingPerson[approvalID] = nil
            case .approvalResolved(let resolution):
                awaitingPerson[resolution.approvalID] = nil
                if !recorded.failures.contains(where: { $0.seq == event.seq }) { notify(.approvalResolved(id, resolution)) }
            case .statusChanged(let status, _):
                statuses[id] = status
                statusChanged = true
                lastStatus = status
            case .toolCallCompleted, .diffUpdated, .runFinished:
                refreshDiff = true
            default:
                break
            }
        }
        if refreshDiff { scheduleDiffRefresh(id) }
        if statusChanged {
            if let summary = try? await summary(id) { notify(.sessionUpdated(summary)) }
            if let lastStatus, lastStatus != .running && lastStatus != .awaitingApproval { await startQueued() }
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

    /// The mode an ACP recording's host switched to (its first `session/set_mode`), if any.
    static func sessionMode(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0, let line {
            let text = String(cString: line)
            guard text.contains("session/set_mode"), let record = try? JSONParser.parse(text), record["dir"]?.stringValue == "in",
                  let message = record["line"]?.stringValue.flatMap({ try? JSONParser.parse($0) }),
                  message["method"]?.stringValue == "session/set_mode"
            else { continue }
            return message["params"]?["modeId"]?.stringValue
        }
        return nil
    }
}
