/// One normalized thing that happened in a session, whatever the backend (DESIGN.md §6).
///
/// Codecs turn native agent lines into these; the host adds its own (approval resolutions,
/// status changes, its own errors). docs/EVENTS.md documents every kind and its JSON.
public enum AgentEvent: Sendable, Hashable {
    /// The agent process is up and told us who it is.
    case sessionStarted(SessionStarted)
    /// The user's prompt or follow-up as the agent received it.
    case userInput(text: String)
    /// Text from the assistant. A partial is a streamed delta; the complete text of the same
    /// message follows and replaces the partials.
    case assistantText(text: String, isPartial: Bool)
    /// The model's visible reasoning (thinking, reasoning summaries); partial like `assistantText`.
    case reasoning(text: String, isPartial: Bool)
    /// A tool call began. Exactly once per tool call id.
    case toolCallStarted(ToolCall)
    /// A fragment of a tool call's input JSON while the model is still writing it.
    case toolCallInputDelta(toolCallID: String, delta: String)
    /// Output a running tool printed (Codex streams command output).
    case toolCallOutputDelta(toolCallID: String, delta: String)
    /// A tool call ended. Exactly once per tool call id, after its start.
    case toolCallCompleted(ToolResult)
    /// The agent's view of its whole working-tree diff changed (Codex `turn/diff/updated`).
    case diffUpdated(diff: String)
    /// The agent waits for a decision.
    case approvalRequested(ApprovalRequest)
    /// A decision was made, by a person or a rule.
    case approvalResolved(ApprovalResolution)
    /// A pending approval no longer needs an answer (turn interrupted, agent exited or cancelled it).
    case approvalWithdrawn(approvalID: ApprovalID, reason: String)
    /// The session's status changed (set by the host, not by codecs).
    case statusChanged(status: SessionStatus, reason: String?)
    /// Token usage so far in this turn or thread.
    case usage(Usage)
    /// A turn ended: completed, or with `isError` when interrupted, failed or refused by the API.
    case runFinished(RunFinished)
    /// Something the backend reported that a person may want to know (API errors, retries, status).
    case notice(level: NoticeLevel, message: String, code: String?)
    /// A failure of the host itself: a malformed or over-limit line, a message it could not read.
    case error(code: String, message: String, preview: String?)
    /// A well-formed message the codec does not know (or a part of one: a block, a delta, an
    /// item), kept verbatim. `nativeKind` names what was not known, as a path of the native
    /// discriminators (`stream_event/content_block_start/server_tool_use`, `item/started/plan`).
    case unknown(raw: String, nativeKind: String? = nil)

    /// The wire spelling of the case, the `kind` field.
    public var kind: String {
        switch self {
        case .sessionStarted: "sessionStarted"
        case .userInput: "userInput"
        case .assistantText: "assistantText"
        case .reasoning: "reasoning"
        case .toolCallStarted: "toolCallStarted"
        case .toolCallInputDelta: "toolCallInputDelta"
        case .toolCallOutputDelta: "toolCallOutputDelta"
        case .toolCallCompleted: "toolCallCompleted"
        case .diffUpdated: "diffUpdated"
        case .approvalRequested: "approvalRequested"
        case .approvalResolved: "approvalResolved"
        case .approvalWithdrawn: "approvalWithdrawn"
        case .statusChanged: "statusChanged"
        case .usage: "usage"
        case .runFinished: "runFinished"
        case .notice: "notice"
        case .error: "error"
        case .unknown: "unknown"
        }
    }
}

public enum NoticeLevel: String, Sendable, Hashable, CaseIterable {
    case info, warning, error
}

public struct SessionStarted: Sendable, Hashable {
    /// `claude`, `codex`, `replay`, …
    public var backend: String
    /// The backend's own session or thread id (what `--resume` / `thread/resume` take).
    public var nativeSessionID: String?
    public var model: String?
    public var cwd: String?
    /// The backend's permission mode or approval policy, as it reports it.
    public var permissionMode: String?
    public var tools: [String]

    public init(backend: String, nativeSessionID: String? = nil, model: String? = nil, cwd: String? = nil,
                permissionMode: String? = nil, tools: [String] = []) {
        self.backend = backend
        self.nativeSessionID = nativeSessionID
        self.model = model
        self.cwd = cwd
        self.permissionMode = permissionMode
        self.tools = tools
    }
}

public struct ToolCall: Sendable, Hashable {
    public var toolCallID: String
    public var name: String
    public var toolKind: ToolKind
    public var input: JSONValue

    public init(toolCallID: String, name: String, toolKind: ToolKind, input: JSONValue) {
        self.toolCallID = toolCallID
        self.name = name
        self.toolKind = toolKind
        self.input = input
    }
}

public struct ToolResult: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable, CaseIterable {
        /// The tool ran and succeeded.
        case completed
        /// The tool ran and failed (non-zero exit, an error result).
        case failed
        /// The tool never ran: a person or a rule said no.
        case declined
        /// The turn ended before the tool finished.
        case interrupted
    }

    public var toolCallID: String
    public var status: Status
    /// What the tool returned, as text (command output, a file's contents, an error message).
    public var output: String?
    public var exitCode: Int64?

    public init(toolCallID: String, status: Status, output: String? = nil, exitCode: Int64? = nil) {
        self.toolCallID = toolCallID
        self.status = status
        self.output = output
        self.exitCode = exitCode
    }

    public var isError: Bool { status != .completed }
}

public struct ApprovalResolution: Sendable, Hashable {
    public var approvalID: ApprovalID
    public var decision: Decision
    /// `user:<login>`, `device:<id>` or `rule:<id>`.
    public var decidedBy: String
    public var decidedByLabel: String?

    public init(approvalID: ApprovalID, decision: Decision, decidedBy: String, decidedByLabel: String? = nil) {
        self.approvalID = approvalID
        self.decision = decision
        self.decidedBy = decidedBy
        self.decidedByLabel = decidedByLabel
    }
}

public struct Usage: Sendable, Hashable {
    public var inputTokens: Int64
    public var outputTokens: Int64
    public var cacheReadTokens: Int64?
    public var cacheWriteTokens: Int64?
    public var reasoningTokens: Int64?

    public init(inputTokens: Int64, outputTokens: Int64, cacheReadTokens: Int64? = nil,
                cacheWriteTokens: Int64? = nil, reasoningTokens: Int64? = nil) {
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.cacheReadTokens = cacheReadTokens
        self.cacheWriteTokens = cacheWriteTokens
        self.reasoningTokens = reasoningTokens
    }
}

public struct RunFinished: Sendable, Hashable {
    public var isError: Bool
    /// `end_turn`, `interrupted`, `failed`, `api_error`, `max_turns`, … (docs/EVENTS.md).
    public var stopReason: String
    /// The agent's final message or the error text.
    public var result: String?
    public var usage: Usage?
    public var costUSD: Double?
    public var durationMS: Int64?

    public init(isError: Bool, stopReason: String, result: String? = nil, usage: Usage? = nil,
                costUSD: Double? = nil, durationMS: Int64? = nil) {
        self.isError = isError
        self.stopReason = stopReason
        self.result = result
        self.usage = usage
        self.costUSD = costUSD
        self.durationMS = durationMS
    }
}

/// An event as a session's transcript holds it: numbered from 1, stamped, and (in the store)
/// tied to the raw-journal offset it came from.
public struct SequencedEvent: Sendable, Hashable {
    public var seq: Int64
    public var ts: Timestamp
    public var event: AgentEvent
    /// Byte offset in the session's `raw.jsonl` of the line this event came from (host events: nil).
    public var rawOffset: Int64?

    public init(seq: Int64, ts: Timestamp, event: AgentEvent, rawOffset: Int64? = nil) {
        self.seq = seq
        self.ts = ts
        self.event = event
        self.rawOffset = rawOffset
    }
}
