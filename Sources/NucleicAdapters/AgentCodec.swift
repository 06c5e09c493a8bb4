public import NucleicProtocol

/// A backend protocol as a pure state machine: agent lines in, events and reply lines out; host
/// intents in, native lines out. No I/O: the runtime feeds it, tests feed it recorded lines.
///
/// Every input returns a `CodecOutput`: the events to record and the lines to write to the agent's
/// stdin (a codec may answer the agent by itself, e.g. Codex's handshake steps). Nothing thrown
/// out of `receive` ever: a line the codec cannot read becomes an `error` or `unknown` event.
public protocol AgentCodec: Sendable {
    /// `claude`, `codex`.
    var backend: String { get }
    var capabilities: BackendCapabilities { get }

    /// The lines that start a session (handshake, resume, first prompt when given).
    mutating func start(_ options: SessionStartOptions, now: Timestamp) -> CodecOutput

    /// One complete line the agent wrote to stdout (without its newline).
    mutating func receive(line: [UInt8], now: Timestamp) -> CodecOutput

    /// `receive(line:now:)` on borrowed bytes (a view of a read buffer, valid for the call): a
    /// codec that reads in place (`ClaudeCodec`) copies nothing; the default copies the line.
    mutating func receive(bytes line: UnsafeBufferPointer<UInt8>, now: Timestamp) -> CodecOutput

    /// The host wants something of the agent; refused with a `CodecError` when the backend or the
    /// codec's state cannot carry it (nothing is sent then).
    mutating func send(_ intent: HostIntent, now: Timestamp) throws(CodecError) -> CodecOutput

    /// Requests the host sent that got no reply in time become notices (and are forgotten).
    mutating func expire(now: Timestamp) -> CodecOutput

    /// A line the host wrote to the agent, read back from a recording, so that the codec's state
    /// follows a fixture as if it had sent the line itself.
    mutating func observeHostLine(_ line: [UInt8], now: Timestamp) -> CodecOutput

    /// Approvals the agent is waiting for, oldest first.
    var pendingApprovals: [ApprovalRequest] { get }

    /// Requests of the agent the host serves itself (ACP's `fs/*` and `terminal/*`), oldest
    /// first, until `respond` or `refuse` answers them; none for other backends.
    var clientRequests: [ClientRequest] { get }

    /// Answers the agent's request `id` with `result` (nothing when no such request waits).
    mutating func respond(to id: JSONValue, result: JSONValue) -> CodecOutput

    /// Refuses the agent's request `id` with a JSON-RPC error; its tool call ends as `status`.
    mutating func refuse(_ id: JSONValue, code: Int64, message: String, status: ToolResult.Status) -> CodecOutput
}

extension AgentCodec {
    public var clientRequests: [ClientRequest] { [] }
    public mutating func respond(to id: JSONValue, result: JSONValue) -> CodecOutput { CodecOutput() }
    public mutating func refuse(_ id: JSONValue, code: Int64, message: String, status: ToolResult.Status) -> CodecOutput { CodecOutput() }
}

/// A request of the agent to the host (ACP `fs/read_text_file`, `terminal/create`, …).
public struct ClientRequest: Sendable, Hashable {
    /// The JSON-RPC id, as the agent sent it.
    public var id: JSONValue
    public var method: String
    public var params: JSONValue

    public init(id: JSONValue, method: String, params: JSONValue) {
        self.id = id
        self.method = method
        self.params = params
    }

    /// The tool call the transcript records it as (`client:<id>`).
    public var toolCallID: String { "client:" + JSONWriter.string(id) }
}

extension AgentCodec {
    /// A line over the framer's limit: kept in the raw journal, reported as an `error` event.
    public func overLimit(preview: [UInt8], byteCount: Int) -> CodecOutput {
        CodecOutput(events: [.error(
            code: "lineTooLong",
            message: "an agent line of \(byteCount) bytes is over the line limit; it was not decoded (the raw journal keeps it whole)",
            preview: Preview.text(preview))])
    }

    public mutating func receive(bytes line: UnsafeBufferPointer<UInt8>, now: Timestamp) -> CodecOutput {
        receive(line: Array(line), now: now)
    }

    public mutating func receive(line: String, now: Timestamp) -> CodecOutput {
        receive(line: Array(line.utf8), now: now)
    }
}

/// What a codec produced for one input.
public struct CodecOutput: Sendable, Hashable {
    public var events: [AgentEvent]
    /// Lines for the agent's stdin, without newlines, in order.
    public var lines: [String]

    public init(events: [AgentEvent] = [], lines: [String] = []) {
        self.events = events
        self.lines = lines
    }

    public mutating func append(_ other: CodecOutput) {
        events += other.events
        lines += other.lines
    }
}

/// How a session starts.
public struct SessionStartOptions: Sendable, Hashable {
    /// The first prompt; nil starts the agent idle (a later `.prompt` sends it).
    public var prompt: String?
    /// The agent's working directory (the session worktree).
    public var cwd: String
    public var model: String?
    /// The backend's own id of a session to continue (Claude `--resume` is argv; Codex `thread/resume`).
    public var resumeID: String?
    /// Start turns in the backend's planning mode where it has one (Codex questions need it).
    public var planMode: Bool
    /// The agent's own session mode to switch to before the first prompt, when it has one by
    /// that id (ACP `session/set_mode`; the manifest's `sessionMode`).
    public var sessionMode: String?

    public init(prompt: String?, cwd: String, model: String? = nil, resumeID: String? = nil, planMode: Bool = false, sessionMode: String? = nil) {
        self.sessionMode = sessionMode
        self.prompt = prompt
        self.cwd = cwd
        self.model = model
        self.resumeID = resumeID
        self.planMode = planMode
    }
}

/// Something the host asks of the agent.
public enum HostIntent: Sendable, Hashable {
    /// A prompt: the first one if the session started idle, else a follow-up turn.
    case prompt(String)
    /// Stop the current turn (backend-native; the runtime signals after a grace period).
    case interrupt
    /// Answer a pending approval.
    case decide(ApprovalID, Decision)
}

/// Why a codec refused an intent.
public struct CodecError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// The backend cannot carry this decision (e.g. a modified input to Codex).
        case unsupported
        /// No pending approval has this id (already answered, withdrawn, or never existed).
        case unknownApproval
        /// The decision does not fit the request (an answer to a command approval, …).
        case invalidDecision
        /// The agent is not in a state to take this (nothing running to interrupt, handshake not done).
        case notReady
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// Short, printable previews of raw bytes for error events.
public enum Preview {
    public static let maximumCharacters = 200

    public static func text(_ bytes: some Collection<UInt8>) -> String {
        let decoded = String(decoding: bytes.prefix(maximumCharacters * 4), as: UTF8.self)
        return decoded.count > maximumCharacters ? String(decoded.prefix(maximumCharacters)) + "…" : decoded
    }
}
