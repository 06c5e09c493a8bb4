public import NucleicProtocol

/// A session's status as a pure state machine (DESIGN.md §6): what happened in, the new status
/// and the `statusChanged` event (if it changed) out.
///
/// The Session actor feeds it every event the codec produces and every host-side fact (a prompt
/// sent, the process exiting, a restart); the transcript records each change it returns.
///
/// ### Invariants
/// - `awaitingApproval` exactly while a non-question approval is pending; a pending question
///   alone is `awaitingInput` (the agent asks the user something).
/// - `integrated` and `discarded` are final: nothing moves a session out of them.
public struct SessionLifecycle: Sendable, Hashable {
    public enum Input: Sendable, Hashable {
        /// A free slot: the agent process starts.
        case started
        /// The host sent a prompt (first or follow-up).
        case promptSent
        /// An event from the codec.
        case event(AgentEvent)
        /// The agent process ended. `expected` when the host ended it (discard, shutdown) or it
        /// exited cleanly after its stdin was closed.
        case processExited(description: String, expected: Bool)
        /// The host restarted and the agent is gone: the turn stopped before it finished.
        case hostRestarted
        /// The host ended the agent for `reason` (a kill, idle reaping). `midTurn`: it was
        /// working (or waiting for an answer) when stopped, so the session waits for input now,
        /// even if the agent reported its turn finished as it went.
        case stoppedByHost(reason: String, midTurn: Bool)
        case conflicted
        case integrated
        case discarded
    }

    public private(set) var status: SessionStatus
    /// Approvals waiting for an answer, and whether each is a question.
    public private(set) var pending: [ApprovalID: Bool] = [:]
    /// Why the session is in `error`, when it is.
    public private(set) var errorReason: String?

    public init(status: SessionStatus = .queued) { self.status = status }

    /// The state a transcript leaves: the last recorded status (else `status`), the approvals
    /// requested and not yet resolved or withdrawn, the last error reason. A daemon that adopts
    /// a running agent carries on from here.
    public init(restoring events: [AgentEvent], status: SessionStatus) {
        self.status = status
        for event in events {
            switch event {
            case .statusChanged(let changed, let reason):
                self.status = changed
                errorReason = changed == .error ? reason : nil
            case .approvalRequested(let request): pending[request.id] = request.question != nil
            case .approvalResolved(let resolution): pending[resolution.approvalID] = nil
            case .approvalWithdrawn(let id, _): pending[id] = nil
            case .runFinished: pending = [:]
            default: break
            }
        }
    }

    /// Applies one input; returns the `statusChanged` event when the status changed.
    public mutating func apply(_ input: Input) -> AgentEvent? {
        guard !status.isArchived else { return nil }
        let before = status
        var reason: String?
        switch input {
        case .started, .promptSent:
            errorReason = nil
            status = settled(.running)
        case .event(let event):
            switch event {
            case .approvalRequested(let request):
                pending[request.id] = request.question != nil
                status = settled(status)
            case .approvalResolved(let resolution):
                pending[resolution.approvalID] = nil
                status = settled(.running)
            case .approvalWithdrawn(let id, _):
                pending[id] = nil
                status = settled(status == .awaitingApproval || status == .awaitingInput ? .running : status)
            case .runFinished(let run):
                pending = [:]
                if !run.isError {
                    status = .finished
                } else if run.stopReason == "interrupted" {
                    status = .awaitingInput
                    reason = "interrupted"
                } else {
                    status = .error
                    errorReason = run.result ?? run.stopReason
                    reason = run.stopReason
                }
            default:
                break
            }
        case .processExited(let description, let expected):
            pending = [:]
            if !expected || status == .running || status == .queued {
                status = .error
                errorReason = "the agent exited: \(description)"
                reason = errorReason
            }
        case .hostRestarted:
            pending = [:]
            if status == .running || status == .queued || status == .awaitingApproval {
                status = .awaitingInput
                reason = "the host restarted"
            }
        case .stoppedByHost(let why, let midTurn):
            pending = [:]
            if midTurn && status != .error && status != .conflicted {
                status = .awaitingInput
                reason = why
            }
        case .conflicted:
            status = .conflicted
        case .integrated:
            status = .integrated
        case .discarded:
            status = .discarded
        }
        return status == before ? nil : .statusChanged(status: status, reason: reason)
    }

    /// `base`, unless pending approvals say the session waits for a person.
    private func settled(_ base: SessionStatus) -> SessionStatus {
        if pending.values.contains(false) { return .awaitingApproval }
        if pending.values.contains(true) { return .awaitingInput }
        if base == .awaitingApproval || base == .awaitingInput { return .running }
        return base
    }
}
