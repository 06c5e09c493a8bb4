#if canImport(Glibc)
import Glibc
#endif
public import NucleicAdapters
public import NucleicApprovals
public import NucleicProtocol
import NucleicStore
import NucleicSystem

/// One agent at work: its process, its codec, its journal and transcript, its status.
///
/// Everything the agent writes goes through here in order: the raw line to the journal, the
/// line through the codec, the events numbered (`seq` from the transcript's last + 1) and
/// appended, the status updated, subscribers told. Everything the host asks of the agent
/// (prompts, decisions, interrupts) goes through the codec and is journalled before it is
/// written to the agent's stdin.
///
/// ### Invariants
/// - seqs are contiguous; every event is appended to storage before a subscriber sees it;
/// - an approval is answered at most once: the first valid answer wins, later ones get
///   `alreadyResolved` naming who answered;
/// - lines for the agent are written in the order the codec produced them.
public actor Session {
    public nonisolated let id: SessionID
    public nonisolated let backend: String
    private let storage: any SessionStorage
    var codec: any AgentCodec
    var lifecycle: SessionLifecycle
    var seq: Int64
    private var process: ChildProcess?
    private var framer = LineFramer()
    private let startedAt = Timestamp.now()
    var subscribers: [Int: AsyncStream<SequencedEvent>.Continuation] = [:]
    var batchSubscribers: [Int: AsyncStream<[SequencedEvent]>.Continuation] = [:]
    private var nextSubscriber = 0
    var resolved: [ApprovalID: ApprovalResolution] = [:]
    /// The host's side of approvals (risk, rules, first answer wins); nil answers through the
    /// codec alone (tests of the session without a host).
    var broker: ApprovalBroker?
    let ruleBook: RuleBook?
    private var outbox: AsyncStream<String>.Continuation?
    private var stopping = false
    /// Why the host ends the agent, when it says (a kill, idle reaping): recorded as a notice and
    /// as the reason of the status change the exit makes.
    private var stopReason: (reason: String, wasMidTurn: Bool)?
    var exitStatus: ChildProcess.ExitStatus?
    var finished: [CheckedContinuation<Void, Never>] = []
    /// How long an in-band interrupt may take before the process group gets SIGINT.
    public var interruptGrace: Duration = .seconds(5)

    // The host as an ACP client (Session+Client.swift).
    /// The agent's requests being judged or served, by tool call id.
    var clientHandled: Set<String> = []
    /// Requests waiting for a person's answer, with the path they were judged at.
    var clientApprovals: [ApprovalID: (request: ClientRequest, resolved: String)] = [:]
    var terminals: [String: ClientTerminal] = [:]
    var nextTerminal = 0
    /// The terminals the shim runs (Session+ShimTerminals.swift), by id, with their exits.
    var shimTerminals: [String: ChildProcess.ExitStatus?] = [:]
    /// `terminal/create`s the shim has not answered yet, by key; `terminal/output`s by ref;
    /// `wait_for_exit`s and `kill`s waiting for their terminal's exit.
    var shimCreates: [String: ClientRequest] = [:]
    var shimReads: [Int64: ClientRequest] = [:]
    var shimExitWaiters: [String: [ClientRequest]] = [:]
    var nextShimRead: Int64 = 0
    /// The environment terminals start with (the agent's).
    var clientEnvironment: [String: String]?
    /// The riskiest request allowed in the running turn.
    var turnAllowance: Risk?
    /// While the journal is caught up with after an adoption, requests wait to be judged.
    var holdClientRequests = false
    /// Judging what a previous daemon left unanswered.
    var afterRestart = false

    // The shim the agent runs under (Session+Shim.swift); nil for an agent spawned directly.
    var link: ShimLink?
    /// The journal as the shim writes it, read from `journalCursor` on.
    var journalReader: RawJournalCursor?
    var journalCursor: Int64 = 0
    /// Events of the journal batch being read, appended (one sync) and published together; and
    /// the lines for the agent they led to, sent after them.
    var batch: [SequencedEvent]?
    var batchLines: [String] = []
    /// The link was closed on purpose (the daemon stops, the agent stays).
    var detached = false
    /// Waits until the host has stored the events up to a seq (backpressure on the journal reader).
    var backpressure: (@Sendable (Int64) async -> Void)?
    /// Why the session's files cannot be written now (the disk is full), by what cannot be
    /// written (`journal`, `transcript`, `store`), and since when the first of them.
    var diskFull: [String: String] = [:]
    var diskFullSince: Timestamp?
    /// Tells the host when `diskFull` starts (with its message) and ends (nil).
    var onCondition: (@Sendable (String?) -> Void)?

    /// Every job of this actor runs on its own queue, off the cooperative pool: it reads the
    /// journal and appends (and syncs) the transcript, which block.
    nonisolated let executor = SerialThreadExecutor(name: "nucleic-session")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    public init(id: SessionID, backend: String, codec: any AgentCodec, storage: any SessionStorage,
                status: SessionStatus = .queued, approvals: ApprovalBroker? = nil, rules: RuleBook? = nil) throws {
        self.id = id
        self.backend = backend
        self.codec = codec
        self.storage = storage
        self.broker = approvals
        self.ruleBook = rules
        self.lifecycle = SessionLifecycle(status: status)
        self.seq = try storage.lastSeq
    }

    // A dropped continuation does not end its stream: finish them, or the host's pump waits forever, holding its buffer.
    deinit {
        for continuation in subscribers.values { continuation.finish() }
        for continuation in batchSubscribers.values { continuation.finish() }
    }

    public var status: SessionStatus { lifecycle.status }
    /// Approvals and questions waiting for an answer (the agent must stay to hear it).
    public var pendingCount: Int { lifecycle.pending.count }
    public var lastSeq: Int64 { seq }
    public var pendingApprovals: [ApprovalRequest] { broker?.pending ?? codec.pendingApprovals }

    /// Whether an approval still waits for an answer (false once a rule or a person answered).
    public func isPending(_ approvalID: ApprovalID) -> Bool {
        if let broker { return broker.phase(approvalID) == .pending }
        return codec.pendingApprovals.contains { $0.id == approvalID }
    }
    public var isRunning: Bool { (process != nil || link != nil) && exitStatus == nil }

    // MARK: Life

    /// Starts the agent and sends the first lines (handshake, first prompt).
    public func start(_ launch: AgentLaunch, options: SessionStartOptions) throws(ProcessError) {
        let process = try ChildProcess.spawn(
            executable: launch.executable, arguments: launch.arguments, environment: launch.environment,
            workingDirectory: launch.workingDirectory)
        self.process = process
        clientEnvironment = launch.environment
        let (stream, continuation) = AsyncStream<String>.makeStream()
        outbox = continuation
        Task { await Self.writeLines(stream, to: process) }
        Task { await self.readStdout(process) }
        Task { await self.readStderr(process) }
        Task { await self.watchExit(process) }
        Task { await self.tick() }
        record(lifecycle.apply(.started).map { [$0] } ?? [], rawOffset: nil)
        apply(codec.start(options, now: .now()), rawOffset: nil)
        if options.prompt != nil { record(lifecycle.apply(.promptSent).map { [$0] } ?? [], rawOffset: nil) }
    }

    /// Ends the agent: closes its stdin, then SIGINT → SIGTERM → SIGKILL on its process group.
    /// With a `reason` (a kill, idle reaping), the transcript records it as a notice (`code`),
    /// and a session cut off mid-turn reads `awaitingInput` with that reason, never `finished`
    /// (whatever the agent reports as it dies).
    public func stop(grace: Duration = .seconds(3), reason: String? = nil, code: String = "stopped") async {
        if let reason, exitStatus == nil, process != nil || link != nil {
            let midTurn = [.running, .awaitingApproval, .queued].contains(lifecycle.status) || !lifecycle.pending.isEmpty
            stopReason = (reason, midTurn)
            record([.notice(level: .info, message: reason, code: code)], rawOffset: nil)
        }
        stopping = true
        endTerminals()
        if let link {
            await stopShim(link, grace: grace)
            return
        }
        guard let process else { return }
        outbox?.finish()
        _ = await process.terminate(grace: grace)
        await untilExited()
    }

    /// Waits until the agent process has exited and its output is all recorded.
    public func untilExited() async {
        guard process != nil || link != nil, exitStatus == nil else { return }
        await withCheckedContinuation { finished.append($0) }
    }

    /// Marks the session with a host-side fact (conflicted, integrated, discarded, restarted).
    public func mark(_ input: SessionLifecycle.Input) {
        record(lifecycle.apply(input).map { [$0] } ?? [], rawOffset: nil)
    }

    // MARK: Host → agent

    /// A follow-up (or the first prompt of an idle session).
    public func send(prompt text: String) throws(SessionError) {
        try ensureRunning()
        do { apply(try codec.send(.prompt(text), now: .now()), rawOffset: nil) } catch { throw SessionError(error) }
        record(lifecycle.apply(.promptSent).map { [$0] } ?? [], rawOffset: nil)
    }

    /// Asks the agent to stop its turn; signals the process group if it does not within the grace.
    public func interrupt() throws(SessionError) {
        try ensureRunning()
        do { apply(try codec.send(.interrupt, now: .now()), rawOffset: nil) } catch { throw SessionError(error) }
        record(withdrawClientApprovals(reason: "the turn was interrupted"), rawOffset: nil)
        let grace = interruptGrace
        let seqAtInterrupt = seq
        Task {
            try? await Task.sleep(for: grace)
            await self.escalateInterrupt(since: seqAtInterrupt)
        }
    }

    /// Answers an approval. The first valid answer wins. With `denyAlways`, a deny also makes a
    /// deny rule at that scope. Returns the rule an "always" answer made (the host stores it).
    @discardableResult
    public func respond(_ approvalID: ApprovalID, _ decision: Decision, decidedBy: String, label: String? = nil,
                        denyAlways: ApprovalScope? = nil) throws(SessionError) -> Rule? {
        // The broker is read and changed in place (`broker!`): a local copy would share its
        // table of approvals, and the change would copy the whole table (copy on write).
        guard broker != nil else {
            try respondThroughCodec(approvalID, decision, decidedBy: decidedBy, label: label)
            return nil
        }
        if let error = broker!.validate(approvalID, decision) { throw SessionError(error) }
        let now = Timestamp.now()
        var denyRule: Rule?
        if let denyAlways {
            guard case .deny(let message) = decision else {
                throw SessionError(.invalidDecision, "only a deny can make a deny rule; allow always with an allowAlways decision")
            }
            switch broker!.denyRule(approvalID, scope: denyAlways, message: message, by: decidedBy, at: now) {
            case .success(let rule): denyRule = rule
            case .failure(let error): throw SessionError(error)
            }
        }
        try ensureRunning()
        let output: CodecOutput
        let forClient = clientApprovals[approvalID] != nil
        if forClient { output = CodecOutput() } else {
            do { output = try codec.send(.decide(approvalID, decision), now: now) } catch { throw SessionError(error) }
        }
        let answer: ApprovalBroker.Answer
        switch broker!.respond(approvalID, decision, by: decidedBy, label: label, at: now) {
        case .success(let accepted): answer = accepted
        case .failure(let error): throw SessionError(error)  // validated above: not reached
        }
        let rule = answer.rule ?? denyRule
        if let rule { ruleBook?.insert(rule) }
        apply(CodecOutput(events: [.approvalResolved(answer.resolution)]), rawOffset: nil)
        apply(output, rawOffset: nil)
        if forClient { _ = answerClientApproval(approvalID, decision) }
        return rule
    }

    /// Without a broker: the codec's pending list is the truth.
    private func respondThroughCodec(_ approvalID: ApprovalID, _ decision: Decision, decidedBy: String, label: String?) throws(SessionError) {
        if let earlier = resolved[approvalID] {
            throw SessionError(.alreadyResolved, "approval \(approvalID) was already answered by \(earlier.decidedByLabel ?? earlier.decidedBy)")
        }
        guard codec.pendingApprovals.contains(where: { $0.id == approvalID }) else {
            throw SessionError(.notFound, "session \(id) has no pending approval \(approvalID) (it may have been withdrawn)")
        }
        try ensureRunning()
        let output: CodecOutput
        do { output = try codec.send(.decide(approvalID, decision), now: .now()) } catch { throw SessionError(error) }
        let resolution = ApprovalResolution(approvalID: approvalID, decision: decision, decidedBy: decidedBy, decidedByLabel: label)
        resolved[approvalID] = resolution
        apply(CodecOutput(events: [.approvalResolved(resolution)]), rawOffset: nil)
        apply(output, rawOffset: nil)
    }

    /// A new request from the agent: judged by the broker, answered at once when a rule decides.
    /// Returns the events to record and the codec's answer to apply after them.
    private func intake(_ request: ApprovalRequest, into events: inout [AgentEvent]) -> CodecOutput? {
        // Taken out while it changes, so that it is not shared (a change would copy its table).
        guard var broker = broker.take() else {
            events.append(.approvalRequested(request))
            if let change = lifecycle.apply(.event(.approvalRequested(request))) { events.append(change) }
            return nil
        }
        let now = Timestamp.now()
        let intake = broker.intake(request, rules: ruleBook?.rules ?? [], now: now)
        if broker.machines.count > 512 { broker.prune(keepingLast: 256) }  // the transcript and store keep the rest
        self.broker = broker
        switch intake {
        case .ask(let shown):
            events.append(.approvalRequested(shown))
            if let change = lifecycle.apply(.event(.approvalRequested(shown))) { events.append(change) }
            return nil
        case .ruled(let shown, let resolution):
            // Asked and answered in one step: the status never shows a person is needed.
            events.append(.approvalRequested(shown))
            events.append(.approvalResolved(resolution))
            do { return try codec.send(.decide(shown.id, resolution.decision), now: now) } catch {
                events.append(.error(code: "ruleNotDelivered", message: "\(resolution.decidedBy) answered \(shown.id) but the agent could not be told: \(error)", preview: nil))
                return nil
            }
        }
    }

    /// Withdraws every approval still waiting (the agent is gone).
    private func withdrawPending(reason: String) -> [AgentEvent] {
        let now = Timestamp.now()
        var events: [AgentEvent] = []
        for approval in codec.pendingApprovals where broker?.withdraw(approval.id, reason: reason, at: now) ?? true {
            events.append(.approvalWithdrawn(approvalID: approval.id, reason: reason))
        }
        return events + withdrawClientApprovals(reason: reason)
    }

    /// Denies requests that waited longer than the configured timeout (none by default).
    private func expireApprovals() {
        guard broker?.timeout != nil else { return }
        let now = Timestamp.now()
        let expired = broker!.expire(now: now)
        for resolution in expired {
            let forClient = clientApprovals[resolution.approvalID] != nil
            let output = forClient ? nil : try? codec.send(.decide(resolution.approvalID, resolution.decision), now: now)
            apply(CodecOutput(events: [.approvalResolved(resolution)]), rawOffset: nil)
            if let output { apply(output, rawOffset: nil) }
            if forClient { _ = answerClientApproval(resolution.approvalID, resolution.decision) }
        }
    }

    // MARK: Subscribers

    /// Events from now on (read earlier ones from the transcript first).
    public func subscribe() -> AsyncStream<SequencedEvent> {
        let (stream, continuation) = AsyncStream<SequencedEvent>.makeStream(bufferingPolicy: .unbounded)
        let key = nextSubscriber
        nextSubscriber += 1
        subscribers[key] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.unsubscribe(key) } }
        return stream
    }

    /// Events from now on, as they are appended: one element per append (a journal batch's
    /// events, or an answer's), so a reader can handle them together (the host stores each
    /// batch in one transaction).
    public func subscribeBatches() -> AsyncStream<[SequencedEvent]> {
        let (stream, continuation) = AsyncStream<[SequencedEvent]>.makeStream(bufferingPolicy: .unbounded)
        let key = nextSubscriber
        nextSubscriber += 1
        batchSubscribers[key] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.unsubscribe(key) } }
        return stream
    }

    private func unsubscribe(_ key: Int) {
        subscribers[key] = nil
        batchSubscribers[key] = nil
    }

    // MARK: Agent → host

    private func readStdout(_ process: ChildProcess) async {
        for await chunk in process.stdout { take(chunk) }
        if let last = framer.finish() { take(last) }
    }

    private func take(_ chunk: [UInt8]) {
        for output in framer.feed(chunk) { take(output) }
    }

    private func take(_ output: LineFramer.Output) {
        switch output {
        case .line(let line):
            let offset = journal(.out, line)
            apply(codec.receive(line: line, now: .now()), rawOffset: offset)
        case .overLimit(let preview, let count):
            // The journal keeps what the framer kept; the codec reports the line as too long.
            let offset = journal(.out, preview)
            apply(codec.overLimit(preview: preview, byteCount: count), rawOffset: offset)
        }
    }

    private func readStderr(_ process: ChildProcess) async {
        var framer = LineFramer(limit: 1 << 20)
        for await chunk in process.stderr {
            for case .line(let line) in framer.feed(chunk) { journal(.err, line) }
        }
        if case .line(let line)? = framer.finish() { journal(.err, line) }
    }

    private func watchExit(_ process: ChildProcess) async {
        let status = await process.wait()
        recordExit(status, stderrTail: process.stderrTail(maxBytes: 2000))
    }

    /// Records the agent's end, in one append: pending approvals withdrawn, an error unless
    /// expected, the status. `rawOffset`: the shim's record of the exit in the journal, so that a
    /// daemon adopting the shim later sees the exit is already recorded.
    func recordExit(_ status: ChildProcess.ExitStatus, stderrTail tail: String, rawOffset: Int64? = nil) {
        exitStatus = status
        outbox?.finish()
        endTerminals()
        var events = withdrawPending(reason: "the agent exited")
        let expected = stopping || (status.isSuccess && lifecycle.status != .running)
        if !expected {
            events.append(.error(code: "agentExited", message: "the agent \(status)" + (tail.isEmpty ? "" : "; its stderr ends: \(tail)"),
                                 preview: nil))
        }
        // Stopped by the host (shutdown, discard): the turn was cut short, not failed; a later
        // input resumes it, as after a restart.
        let input: SessionLifecycle.Input = if let stopReason {
            .stoppedByHost(reason: stopReason.reason, midTurn: stopReason.wasMidTurn)
        } else {
            stopping ? .hostRestarted : .processExited(description: "\(status)", expected: expected)
        }
        if let change = lifecycle.apply(input) { events.append(change) }
        record(events, rawOffset: rawOffset)
        for continuation in finished { continuation.resume() }
        finished = []
    }

    func tick() async {
        while exitStatus == nil && !detached {
            try? await Task.sleep(for: .seconds(1))
            apply(codec.expire(now: .now()), rawOffset: nil)
            expireApprovals()
        }
    }

    private func escalateInterrupt(since: Int64) {
        if let link, exitStatus == nil, lifecycle.status == .running || lifecycle.status == .awaitingApproval {
            link.send(.signal(SIGINT))
            return
        }
        guard let process, exitStatus == nil, lifecycle.status == .running || lifecycle.status == .awaitingApproval else { return }
        _ = try? process.signal(SIGINT)
    }

    // MARK: Recording

    func apply(_ output: CodecOutput, rawOffset: Int64?) {
        var events: [AgentEvent] = []
        var answers: [CodecOutput] = []
        for event in output.events {
            switch event {
            case .approvalRequested(let request):
                if let answer = intake(request, into: &events) { answers.append(answer) }
                continue
            case .approvalWithdrawn(let approvalID, let reason):
                _ = broker?.withdraw(approvalID, reason: reason, at: .now())
            default:
                break
            }
            events.append(event)
            if let change = lifecycle.apply(.event(event)) { events.append(change) }
        }
        record(events, rawOffset: rawOffset)
        // After the events they answer are recorded: a daemon killed in between finds the line
        // unsent and the events unrecorded, and the journal replay sends it (Session+Shim.swift).
        send(lines: output.lines)
        for answer in answers { apply(answer, rawOffset: nil) }
        serveClientRequests()
    }

    /// Lines for the agent: to the shim (which journals them), or journalled and queued here.
    private func send(lines: [String]) {
        guard !lines.isEmpty else { return }
        if let link {
            if batch != nil { batchLines += lines } else { link.send(lines: lines) }
            return
        }
        for line in lines {
            journal(.in, Array(line.utf8))
            outbox?.yield(line)
        }
    }

    func record(_ events: [AgentEvent], rawOffset: Int64?) {
        guard !events.isEmpty else { return }
        noteAllowances(events)
        let now = Timestamp.now()
        let sequenced = events.map { event -> SequencedEvent in
            seq += 1
            return SequencedEvent(seq: seq, ts: now, event: event, rawOffset: rawOffset)
        }
        if batch != nil {
            batch! += sequenced
            return
        }
        publish(sequenced)
    }

    /// Appends events to storage, then hands them to subscribers.
    ///
    /// Nothing is published before it is durable: while the transcript cannot be written (a full
    /// disk) this blocks the session's own thread and retries, with `diskFull` set (the host
    /// shows it); the journal reader, and so the shim and the agent, wait behind it.
    func publish(_ sequenced: [SequencedEvent]) {
        var pause: UInt32 = 50_000
        while true {
            do {
                try storage.appendEvents(sequenced)
                break
            } catch let error as StoreError where error.code == .diskFull || error.code == .io {
                if diskFull["transcript"] == nil {
                    HostLog.warning("session \(id): cannot write its transcript (\(error.message)); holding the agent back and retrying")
                    setDiskFull("transcript", error.message)
                }
                usleep(pause)
                pause = min(pause * 2, 1_000_000)
            } catch {
                HostLog.warning("session \(id): could not append events \(sequenced.first!.seq)…\(sequenced.last!.seq): \(error)")
                return
            }
        }
        for event in sequenced { for continuation in subscribers.values { continuation.yield(event) } }
        for continuation in batchSubscribers.values { continuation.yield(sequenced) }
        if diskFull["transcript"] != nil { setDiskFull("transcript", nil) }
    }

    /// The notice code and condition of a full disk.
    public static let diskFullCode = "diskFull"

    /// Sets or clears the full-disk condition of one of the session's files (`journal`,
    /// `transcript`, `store`). The condition lasts while any of them cannot be written; its end
    /// is recorded as a `notice` (code `diskFull`) saying how long the agent was held back.
    public func setDiskFull(_ what: String, _ message: String?) {
        let wasFull = !diskFull.isEmpty
        if let message {
            guard diskFull[what] == nil else { return }
            diskFull[what] = message
            if !wasFull {
                diskFullSince = .now()
                onCondition?("\(what): \(message)")
            }
            return
        }
        guard diskFull.removeValue(forKey: what) != nil, diskFull.isEmpty else { return }
        onCondition?(nil)
        let since = diskFullSince ?? .now()
        diskFullSince = nil
        let seconds = Double(Timestamp.now().millisecondsSince1970 - since.millisecondsSince1970) / 1000
        HostLog.info("session \(id): its files can be written again after \(seconds) s; nothing was lost")
        record([.notice(level: .warning, message: "the disk was full: the agent was held back for \(seconds) s and nothing was lost",
                        code: Self.diskFullCode)], rawOffset: nil)
    }

    public func setConditionHandler(_ handler: @escaping @Sendable (String?) -> Void) {
        onCondition = handler
    }

    @discardableResult
    private func journal(_ direction: RawDirection, _ line: [UInt8]) -> Int64? {
        let t = Double(Timestamp.now().millisecondsSince1970 - startedAt.millisecondsSince1970) / 1000
        do { return try storage.appendRaw(direction, line: line, t: t) } catch {
            HostLog.warning("session \(id): could not append to the raw journal: \(error)")
            return nil
        }
    }

    private func ensureRunning() throws(SessionError) {
        guard process != nil || link != nil, exitStatus == nil else {
            throw SessionError(.notReady, "session \(id)'s agent is not running (status \(lifecycle.status.rawValue))")
        }
    }

    private static func writeLines(_ lines: AsyncStream<String>, to process: ChildProcess) async {
        for await line in lines {
            do { try await process.write(line: line) } catch { return }
        }
        process.closeStdin()
    }
}

/// The runtime's refusals as the host's: an approval's or a codec's error, with its code mapped.
extension SessionError {
    init(_ error: ApprovalError) {
        self.init(error.errorCode, error.message)
    }

    init(_ error: CodecError) {
        let code: HostMsg.ErrorCode = switch error.code {
        case .unsupported: .unsupported
        case .unknownApproval: .notFound
        case .invalidDecision: .invalidDecision
        case .notReady: .notReady
        }
        self.init(code, error.message)
    }
}
