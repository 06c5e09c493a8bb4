#if canImport(Glibc)
import Glibc
#endif
public import NucleicAdapters
import NucleicApprovals
public import NucleicProtocol
import NucleicStore
import NucleicSystem

/// A session whose agent runs under a shim (docs/ARCHITECTURE.md, "Shims"): the shim writes the
/// raw journal, and this actor reads it — the journal is the queue between them.
///
/// Reading: records from `journalCursor` up to the shim's durable end, in batches of at most
/// `batchSize`. `out` lines go through the codec; their events are appended to the transcript
/// with one sync per batch, then published, then the lines the codec answered with are sent.
/// `in` lines after the adoption point are this daemon's own (already through the codec); `err`
/// lines are only kept. After each batch the reader waits for the host's store to catch up
/// (`backpressure`), so a fast agent is held back by the disk, never by memory.
///
/// Adopting: the codec (fresh, its approval ids primed from the transcript) is fed this agent's
/// part of the journal (from the shim's `journalStart`; a resumed session's journal holds earlier
/// agents too) up to the shim's end at adoption: `in` lines through `observeHostLine`, `out` lines
/// through `receive` — their events dropped up to the transcript's last `rawOffset`, recorded
/// after it. So nothing is lost or recorded twice and seq stays contiguous. An approval the
/// transcript says was answered but whose answer never reached the journal is answered again
/// (the line only; the event is already recorded); so are the codec's own replies to recorded
/// agent lines when no host line follows them in the journal.
extension Session {
    public static let batchSize = 512

    /// Starts the agent under a new shim and sends the first lines (handshake, first prompt).
    public func start(_ launch: AgentLaunch, options: SessionStartOptions, shim: ShimLaunch, folder: String) async throws(ShimError) {
        // Where this agent's records begin: the agent may write before the link is made.
        let files = ShimFiles(folder: folder)
        var info = stat()
        guard stat(files.journal, &info) == 0 else { throw ShimError("\(files.journal) is missing: \(String(cString: strerror(errno)))") }
        let link = try await ShimLink.launch(shim, folder: folder, agent: launch)
        clientEnvironment = launch.environment
        listenToShimTerminals(link)
        follow(link, from: Int64(info.st_size))
        record(lifecycleInput(.started), rawOffset: nil)
        apply(codec.start(options, now: .now()), rawOffset: nil)
        if options.prompt != nil { record(lifecycleInput(.promptSent), rawOffset: nil) }
    }

    /// Carries on with an agent a previous daemon started: restores the state `transcript`
    /// records, catches up with the journal, and follows it.
    public func adopt(_ link: ShimLink, transcript: [SequencedEvent]) async {
        restore(from: transcript.map(\.event))
        let lastRaw = transcript.last(where: { $0.rawOffset != nil })?.rawOffset ?? -1
        if let exit = link.exit, let at = exit.recordOffset, lastRaw >= at {
            // The previous daemon recorded this exit and died before it released the shim.
            self.link = link
            exitStatus = exit.status
            link.send(.release)
            link.close()
            return
        }
        let answered = resolvedDecisions
        journalReader = try? RawJournal.records(path: link.files.journal, from: link.journalStart)
        self.link = link
        listenToShimTerminals(link)
        // Lines the codec answered recorded agent lines with, not (yet) followed by any host line
        // in the journal: the previous daemon died between recording their events and sending
        // them (it sends right after each batch is recorded, and the shim journals whatever it
        // got before it answers us), so they never reached the agent.
        var undelivered: [String] = []
        holdClientRequests = true
        await readJournal(upTo: link.adoptedAt) { record in
            switch record.direction {
            case .out:
                let output = codec.receive(line: record.line, now: .now())
                if record.offset > lastRaw { apply(output, rawOffset: record.offset) } else { undelivered += output.lines }
            case .in:
                undelivered = []
                _ = codec.observeHostLine(record.line, now: .now())
            case .err:
                break
            }
        }
        link.send(lines: undelivered)
        // Answered before the crash, but the answer never reached the shim: send it again.
        for approval in codec.pendingApprovals {
            guard let decision = answered[approval.id], let output = try? codec.send(.decide(approval.id, decision), now: .now()) else { continue }
            link.send(lines: output.lines)
        }
        // The agent's requests no host line answered: judged now, a terminal/create refused.
        holdClientRequests = false
        afterRestart = true
        serveClientRequests()
        afterRestart = false
        follow(link, from: link.adoptedAt)
    }

    /// Ends the agent through its shim (SIGINT → SIGTERM → SIGKILL on its group), then whatever
    /// of its process group outlived it (the shim may be gone by then: it leaves once released).
    func stopShim(_ link: ShimLink, grace: Duration) async {
        if exitStatus == nil {
            link.send(.closeStdin)
            link.send(.terminate(graceMS: Int64(grace.components.seconds * 1000 + grace.components.attoseconds / 1_000_000_000_000_000)))
            await untilExited()
        }
        await Self.endGroup(link.agentPID, grace: grace)
        // Released, the shim leaves: reap it (if it is our child) before the daemon goes too.
        await link.waitForShimExit(timeout: .seconds(5))
    }

    /// Signals a process group until it is empty: SIGINT, SIGTERM, SIGKILL, `grace` apart. As
    /// `ChildProcess.terminate`, right after the leader's exit (its id is not reused while
    /// members remain).
    static func endGroup(_ group: Int32, grace: Duration) async {
        defer { Reaper.nudge() }
        for signal in [SIGINT, SIGTERM, SIGKILL] {
            guard ProcessGroup.hasLiveMembers(group) else { return }
            _ = kill(-group, signal)
            let deadline = ContinuousClock.now + grace
            while ProcessGroup.hasLiveMembers(group), ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Hangs up on the shim, leaving the agent running for the next daemon.
    public func detach() {
        guard let link else { return }
        detached = true
        link.close()
    }

    /// Lets the host hold back the journal reader until it has stored the events up to a seq.
    public func setBackpressure(_ wait: @escaping @Sendable (Int64) async -> Void) {
        backpressure = wait
    }

    // MARK: Following

    private func follow(_ link: ShimLink, from offset: Int64) {
        self.link = link
        journalCursor = offset
        if journalReader == nil { journalReader = try? RawJournal.records(path: link.files.journal, from: offset) }
        Task { await self.followJournal(link) }
        Task { await self.tick() }
    }

    private func followJournal(_ link: ShimLink) async {
        for await _ in link.wakeups {
            // Detached: the next daemon reads on from the transcript's end; nothing more here.
            guard self.link === link, exitStatus == nil, !detached else {
                finishWaiters()
                return
            }
            let exit = link.exit
            // The shim says whether it can write the journal; the host shows it.
            setDiskFull("journal", link.diskFull)
            await readJournal(upTo: max(link.durableEnd, exit?.journalEnd ?? 0)) { record in
                guard record.direction == .out else { return }
                // Borrowed: a codec that reads in place (Claude's) makes no copy of the line.
                let output = record.line.withUnsafeBufferPointer { codec.receive(bytes: $0, now: .now()) }
                apply(output, rawOffset: record.offset)
            }
            if let exit {
                // Everything before `journalEnd` is durable, so the reader got there; if it could
                // not (a record it cannot read), the exit is recorded all the same.
                if journalCursor < exit.journalEnd {
                    HostLog.warning("session \(id): the raw journal could not be read to its end (byte \(journalCursor) of \(exit.journalEnd))")
                }
                recordExit(exit.status, stderrTail: exit.stderrTail, rawOffset: exit.recordOffset)
                link.send(.release)
                link.close()
                return
            }
            if link.isLost {
                if !detached {
                    recordExit(.exited(-1), stderrTail: "its shim (\(link.files.folder)) ended without reporting the agent's exit")
                }
                finishWaiters()
                return
            }
        }
    }

    /// Reads journal records from `journalCursor` up to `end`, in batches: each batch's events
    /// appended with one sync, published, its lines sent; then the host may hold us back.
    private func readJournal(upTo end: Int64, _ body: (RawRecord) -> Void) async {
        guard let reader = journalReader else { return }
        while journalCursor < end {
            batch = []
            var count = 0
            do {
                while count < Self.batchSize, reader.offset < end, let record = try reader.next() {
                    body(record)
                    count += 1
                }
            } catch {
                HostLog.warning("session \(id): reading the raw journal at byte \(reader.offset): \(error)")
            }
            journalCursor = reader.offset
            flushBatch()
            if count == 0 { break }
            if let backpressure { await backpressure(seq) }
        }
    }

    private func flushBatch() {
        let events = batch ?? []
        batch = nil
        if !events.isEmpty { publish(events) }
        let lines = batchLines
        batchLines = []
        if !lines.isEmpty { link?.send(lines: lines) }
    }
}

extension Session {
    func lifecycleInput(_ input: SessionLifecycle.Input) -> [AgentEvent] {
        lifecycle.apply(input).map { [$0] } ?? []
    }

    /// The state a transcript records: status, pending approvals, answers given; the approval
    /// broker replays the requests and their ends (no rules: what they decided is recorded).
    func restore(from events: [AgentEvent]) {
        lifecycle = SessionLifecycle(restoring: events, status: lifecycle.status)
        for case .approvalResolved(let resolution) in events { resolved[resolution.approvalID] = resolution }
        guard var broker else { return }
        let now = Timestamp.now()
        for event in events {
            switch event {
            case .approvalRequested(var request):
                // Transcripts written before requests carried their tool's kind: Claude's names.
                request.toolKind = request.toolKind ?? ClaudeCodec.toolKind(request.toolName)
                _ = broker.intake(request, rules: [], now: now)
            case .approvalResolved(let resolution):
                _ = broker.respond(resolution.approvalID, resolution.decision, by: resolution.decidedBy, label: resolution.decidedByLabel, at: now)
            case .approvalWithdrawn(let id, let reason): _ = broker.withdraw(id, reason: reason, at: now)
            default: break
            }
        }
        self.broker = broker
    }

    var resolvedDecisions: [ApprovalID: Decision] { resolved.mapValues(\.decision) }

    func finishWaiters() {
        for continuation in finished { continuation.resume() }
        finished = []
    }
}
