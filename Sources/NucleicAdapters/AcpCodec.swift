public import NucleicProtocol

/// The Agent Client Protocol (JSON-RPC 2.0 on the agent's stdio lines), as a pure codec.
///
/// The parts that need state:
/// - the handshake (`Handshake`): `start` sends `initialize`; its result sends `session/new` in
///   the worktree, or `session/load` / `session/resume` for a `resumeID` when the agent offers
///   them (`agentCapabilities.loadSession`, `sessionCapabilities.resume`); the session's result
///   is `sessionStarted` and releases the prompts queued meanwhile;
/// - one `session/prompt` runs at a time; prompts sent while one runs wait and go out when it
///   answers (its `stopReason` is the run's end);
/// - `session/update` notifications a `session/load` replays are history the host's transcript
///   has already: they are counted, not recorded again;
/// - a tool call is `toolCallStarted` once and `toolCallCompleted` once; a turn that ends with
///   tool calls still open completes them as `interrupted`;
/// - `session/request_permission` is an approval; one still pending when its turn ends is withdrawn;
/// - the agent's `fs/*` and `terminal/*` requests are the host's to serve: they wait in
///   `clientRequests` until the host answers them with `respond` or `refuse`.
public struct AcpCodec: AgentCodec {
    public let backend: String
    public let capabilities = BackendCapabilities.acp

    /// The protocol version the host speaks.
    public static let protocolVersion: Int64 = 1
    /// How long the host waits for a reply to its requests other than `session/prompt` (a turn
    /// takes as long as it takes).
    public var requestTimeoutMS: Int64 = 60_000
    /// What the host offers to serve (`initialize`'s `clientCapabilities`).
    public var offersFileSystem = true
    public var offersTerminal = true
    public var clientVersion = "0.1.0"

    let makeApprovalID: @Sendable () -> ApprovalID

    public enum Handshake: Sendable, Hashable {
        case notStarted
        /// `initialize` sent.
        case initializing
        /// `session/new`, `session/load` or `session/resume` sent.
        case openingSession
        /// The session exists; `session/set_mode` to the manifest's mode sent, prompts wait.
        case settingMode
        /// The session exists: prompts go out as `session/prompt`.
        case ready
        /// The agent refused a handshake step; the session cannot take prompts.
        case failed(String)
    }

    public internal(set) var handshake = Handshake.notStarted
    /// The agent's session id once the session exists.
    public internal(set) var sessionID: String?
    /// `initialize`'s result: what the agent can do.
    public internal(set) var agentCanLoad = false
    public internal(set) var agentCanResume = false
    /// The protocol version the agent answered with.
    public internal(set) var agentProtocolVersion: Int64?
    /// The agent's modes (`session/new`'s `modes`) and the current one.
    public internal(set) var availableModes: [String] = []
    public internal(set) var currentMode: String?
    /// The slash commands the agent offers (`available_commands_update`).
    public internal(set) var availableCommands: [String] = []
    /// The agent's last plan (`plan`): each entry's content and status.
    public internal(set) var plan: [PlanEntry] = []
    /// The context window's use (`usage_update`): tokens used and the window's size.
    public internal(set) var contextUsed: Int64?
    public internal(set) var contextSize: Int64?
    /// The `session/prompt` running now (its request id), nil between turns.
    public internal(set) var activePrompt: Int64?
    /// Prompts waiting for the session or for the running turn to end.
    public internal(set) var queuedPrompts: [String] = []
    /// `session/update`s a `session/load` replayed (not recorded again).
    public internal(set) var replayedUpdates = 0
    /// The agent's `fs/*` and `terminal/*` requests the host has not answered yet, oldest first.
    public internal(set) var clientRequests: [ClientRequest] = []

    public struct PlanEntry: Sendable, Hashable {
        public var content: String
        public var status: String
        public var priority: String?
    }

    public typealias ClientRequest = NucleicAdapters.ClientRequest

    var driving = false
    var options: SessionStartOptions?
    var nextRequestID: Int64 = 0
    var requests = PendingRequests<Int64>()
    var sent: [Int64: String] = [:]
    /// Tool calls started and not completed, in start order, with what is known of them.
    var openTools: [String: ToolState] = [:]
    var openToolOrder: [String] = []
    var finishedTools: Set<String> = []
    var approvals: [ApprovalID: PendingApproval] = [:]
    var approvalOrder: [ApprovalID] = []
    /// The agent's message of the running turn so far (chunks not yet flushed as one message).
    var messageBuffer = ""
    var thoughtBuffer = ""
    /// The run's result: the turn's last complete message.
    var lastMessage: String?
    /// The prompt of the running turn (an agent that echoes it as `user_message_chunk` is not
    /// recorded twice).
    var activePromptText: String?
    var loading = false

    struct ToolState: Sendable {
        var title: String
        var kind: ToolKind
        var locations: JSONValue?
        var rawInput: JSONValue?
        var content: [JSONValue] = []
        var rawOutput: JSONValue?
    }

    struct PendingApproval: Sendable {
        var request: ApprovalRequest
        var nativeID: JSONValue
        /// optionId by kind (`allow_once`, `allow_always`, `reject_once`, `reject_always`).
        var options: [String: String]
    }

    public init(backend: String = "acp", makeApprovalID: @escaping @Sendable () -> ApprovalID = { ApprovalID.make() }) {
        self.backend = backend
        self.makeApprovalID = makeApprovalID
    }

    public var pendingApprovals: [ApprovalRequest] { approvalOrder.compactMap { approvals[$0]?.request } }

    // MARK: Host → agent

    public mutating func start(_ options: SessionStartOptions, now: Timestamp) -> CodecOutput {
        driving = true
        self.options = options
        if let prompt = options.prompt { queuedPrompts.append(prompt) }
        handshake = .initializing
        let params: JSONValue = [
            "protocolVersion": .int(Self.protocolVersion),
            "clientCapabilities": [
                "fs": ["readTextFile": .bool(offersFileSystem), "writeTextFile": .bool(offersFileSystem)],
                "terminal": .bool(offersTerminal),
            ],
            "clientInfo": ["name": "nucleic", "title": "Nucleic", "version": .string(clientVersion)],
        ]
        return CodecOutput(lines: [request("initialize", params, now: now)])
    }

    public mutating func send(_ intent: HostIntent, now: Timestamp) throws(CodecError) -> CodecOutput {
        switch intent {
        case .prompt(let text):
            switch handshake {
            case .ready where activePrompt == nil:
                return prompt(text, now: now)
            case .ready, .initializing, .openingSession, .settingMode:
                queuedPrompts.append(text)
                return CodecOutput()
            case .notStarted:
                throw CodecError(.notReady, "the \(backend) session has not been started: call start first")
            case .failed(let why):
                throw CodecError(.notReady, "the \(backend) session could not start (\(why)); start a new session")
            }
        case .interrupt:
            guard let sessionID, activePrompt != nil else {
                throw CodecError(.notReady, "no \(backend) turn is running, so there is nothing to interrupt")
            }
            // The agent answers the running `session/prompt` with `cancelled`; pending
            // permission requests must be answered `cancelled` first (the protocol says so).
            var out = CodecOutput()
            for id in approvalOrder {
                guard let pending = approvals[id] else { continue }
                out.lines.append(Self.line(["jsonrpc": "2.0", "id": pending.nativeID, "result": ["outcome": ["outcome": "cancelled"]]]))
                out.events.append(.approvalWithdrawn(approvalID: id, reason: "the turn was interrupted"))
            }
            approvals = [:]
            approvalOrder = []
            out.lines.append(Self.line(["jsonrpc": "2.0", "method": "session/cancel", "params": ["sessionId": .string(sessionID)]]))
            return out
        case .decide(let id, let decision):
            return try answer(id, decision)
        }
    }

    /// Switches the session's mode (`session/set_mode`); refused when the agent has no such mode.
    public mutating func setMode(_ modeID: String, now: Timestamp) throws(CodecError) -> CodecOutput {
        guard let sessionID, handshake == .ready else {
            throw CodecError(.notReady, "the \(backend) session is not open yet")
        }
        guard availableModes.isEmpty || availableModes.contains(modeID) else {
            throw CodecError(.invalidDecision, "\(backend) has no mode \(modeID) (it has \(availableModes.joined(separator: ", ")))")
        }
        return CodecOutput(lines: [request("session/set_mode", ["sessionId": .string(sessionID), "modeId": .string(modeID)], now: now)])
    }

    public mutating func expire(now: Timestamp) -> CodecOutput {
        CodecOutput(events: requests.expire(now: now).map { PendingRequests.timeoutNotice($0, backend: backend) })
    }

    public mutating func observeHostLine(_ line: [UInt8], now: Timestamp) -> CodecOutput {
        guard let message = try? JSONParser.parse(line) else { return CodecOutput() }
        guard let method = message["method"]?.stringValue else {
            guard let id = message["id"], !id.isNull, message["result"] != nil || message["error"] != nil else { return CodecOutput() }
            return observeHostReply(id, message)
        }
        if let id = message["id"]?.intValue {
            sent[id] = method
            nextRequestID = max(nextRequestID, id + 1)
            switch method {
            case "initialize": handshake = .initializing
            case "session/new", "session/load", "session/resume":
                handshake = .openingSession
                loading = method == "session/load"
            case "session/prompt":
                activePrompt = id
                let text = Self.promptText(message["params"]?["prompt"])
                activePromptText = text
                return CodecOutput(events: [.userInput(text: text)])
            default: break
            }
        }
        return CodecOutput()
    }

    /// A request line with the next id; every request but `session/prompt` has a deadline.
    mutating func request(_ method: String, _ params: JSONValue, now: Timestamp) -> String {
        let id = nextRequestID
        nextRequestID &+= 1
        if method != "session/prompt" { requests.add(id, method: method, now: now, timeoutMS: requestTimeoutMS) }
        sent[id] = method
        return Self.line(["jsonrpc": "2.0", "id": .int(id), "method": .string(method), "params": params])
    }

    mutating func prompt(_ text: String, now: Timestamp) -> CodecOutput {
        let line = request("session/prompt", ["sessionId": .string(sessionID ?? ""), "prompt": [["type": "text", "text": .string(text)]]], now: now)
        activePrompt = nextRequestID - 1
        activePromptText = text
        lastMessage = nil
        return CodecOutput(events: [.userInput(text: text)], lines: [line])
    }

    static func promptText(_ blocks: JSONValue?) -> String {
        (blocks?.arrayValue ?? []).compactMap { $0["text"]?.stringValue }.joined(separator: "\n")
    }

    /// The handshake's next step once `initialize` answered.
    mutating func openSession(now: Timestamp) -> CodecOutput {
        handshake = .openingSession
        guard driving, let options else { return CodecOutput() }
        if let resumeID = options.resumeID {
            let params: JSONValue = ["sessionId": .string(resumeID), "cwd": .string(options.cwd), "mcpServers": []]
            if agentCanResume { return CodecOutput(lines: [request("session/resume", params, now: now)]) }
            if agentCanLoad {
                loading = true
                return CodecOutput(lines: [request("session/load", params, now: now)])
            }
            var out = CodecOutput(events: [.notice(
                level: .warning, message: "\(backend) can neither load nor resume a session; session \(resumeID) goes on as a new one without its history",
                code: "resumeUnsupported")])
            out.lines.append(request("session/new", ["cwd": .string(options.cwd), "mcpServers": []], now: now))
            return out
        }
        return CodecOutput(lines: [request("session/new", ["cwd": .string(options.cwd), "mcpServers": []], now: now)])
    }
}

extension BackendCapabilities {
    /// An ACP agent: a permission answer carries no input and is not a question; "always" is only
    /// the host's rule (the agent is told `allow_once`); `session/cancel` interrupts;
    /// `session/load` / `session/resume` continue a session where the agent offers them.
    public static let acp = BackendCapabilities(
        canModifyToolInput: false, canAnswerQuestions: false, canAcceptForSession: false,
        questionsNeedPlanMode: false, canInterrupt: true, canResume: true)
}

extension AcpCodec {
    /// One JSON-RPC message as a line.
    static func line(_ message: JSONObject) -> String { JSONWriter.string(JSONValue.object(message)) }
}
