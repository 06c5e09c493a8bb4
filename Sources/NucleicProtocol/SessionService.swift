/// What a server of the message set (docs/PROTOCOL.md) asks of the host: one method per request
/// that reaches projects, sessions, approvals and rules, and the stream of what happens.
///
/// `SessionHost` is the one implementation; the servers (`LocalServer`, and through it
/// `RemoteServer`) depend on this protocol only, so they do not import the process supervisor.
/// Every failure is a `SessionError`, which a server sends back as `error {code, message}`.
public protocol SessionService: Actor {
    /// Every change from now on, in order, until the stream is dropped.
    func listen() async -> AsyncStream<HostNotification>

    func projects() async throws(SessionError) -> [ProjectInfo]
    func addProject(path: String, name: String?) async throws(SessionError) -> ProjectInfo
    /// Unregisters a project with no sessions left; returns it.
    func removeProject(_ reference: String) async throws(SessionError) -> ProjectInfo

    func sessions(includeArchived: Bool) async throws(SessionError) -> [SessionSummary]
    func summary(_ id: SessionID) async throws(SessionError) -> SessionSummary
    /// The events of a session after `seq`, oldest first.
    func events(_ id: SessionID, after seq: Int64) async throws(SessionError) -> [SequencedEvent]
    /// Reads the config file again and applies what a running daemon can; the settings in force.
    func reloadConfig() async throws(SessionError) -> [ConfigEntry]
    /// The events of a session after `seq`, read a page at a time from one opened transcript (a
    /// backlog of any length, in bounded memory).
    func eventPages(_ id: SessionID, after seq: Int64) async throws(SessionError) -> any EventPages
    func startSession(_ request: ClientMsg.StartSession) async throws(SessionError) -> SessionSummary
    func sendInput(_ id: SessionID, _ text: String) async throws(SessionError)
    func interrupt(_ id: SessionID) async throws(SessionError)

    func pendingApprovals() async throws(SessionError) -> [ApprovalRequest]
    func respond(_ approvalID: ApprovalID, _ decision: Decision, decidedBy: String, label: String?,
                 denyAlways: ApprovalScope?) async throws(SessionError)
    func rules(_ request: RuleRequest, by: String) async throws(SessionError) -> HostMsg.Body

    /// The session's change from its branch point: totals, per file, and the patch unless `statOnly`.
    func diff(_ id: SessionID, statOnly: Bool) async throws(SessionError) -> (DiffStat, [FileStat], String?)
    func discard(_ id: SessionID, deleteBranch: Bool, force: Bool) async throws(SessionError) -> DiscardOutcome
    func integrate(_ request: ClientMsg.Integrate) async throws(SessionError) -> IntegrationOutcome
    /// Files two or more live sessions of a project have both touched, with those sessions.
    func overlap(project reference: String?) async throws(SessionError) -> [String: [SessionID]]
    /// The session's raw journal as a replay fixture.
    func exportFixture(_ id: SessionID) async throws(SessionError) -> String
}

/// What a host tells its listeners, in order: a session's events before what they mean.
public enum HostNotification: Sendable, Hashable {
    case events(SessionID, [SequencedEvent])
    case sessionUpdated(SessionSummary)
    case approvalRequested(ApprovalRequest)
    case approvalResolved(SessionID, ApprovalResolution)
}

/// What `integrate` did.
public enum IntegrationOutcome: Sendable, Hashable {
    case integrated(commit: String, fastForward: Bool, changedPaths: [String])
    /// Nothing changed anywhere; `reason`: conflicted, dirtyBase, baseMoved, nothingToIntegrate.
    case refused(reason: String, paths: [String], message: String)
    /// `--resolve-with-agent`: the agent was asked to bring its branch up to date.
    case askedAgent
}

/// What `discard` did.
public struct DiscardOutcome: Sendable, Hashable {
    /// The commit holding the work the worktree had uncommitted, now the branch's tip.
    public var snapshot: String?
    public var branch: String
    public var branchDeleted: Bool

    public init(snapshot: String?, branch: String, branchDeleted: Bool) {
        self.snapshot = snapshot
        self.branch = branch
        self.branchDeleted = branchDeleted
    }
}

/// A session's events after some seq, read in pages, oldest first, up to the last event that
/// existed when the reader was made.
public protocol EventPages: Sendable {
    /// The next `limit` events at most; empty once everything was read.
    func next(limit: Int) async throws(SessionError) -> [SequencedEvent]
}
