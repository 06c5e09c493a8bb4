public import NucleicProtocol

/// Codex's `app-server` protocol (JSON-RPC shapes on stdio lines, without the `jsonrpc` field),
/// as a pure codec.
///
/// docs/adapters/codex.md maps every native message to its events and every decision to its
/// native answer. The parts that need state:
/// - the handshake is a small state machine (`Handshake`): `start` sends `initialize`; its result
///   makes the codec send `initialized` and `thread/start` (or `thread/resume`); the thread's
///   result is `sessionStarted` and releases the prompts queued meanwhile as `turn/start`s;
/// - every request the host sends has an integer id and a deadline (`PendingRequests`);
/// - a tool item is `toolCallStarted` once (from `item/started`, or from `item/completed` when
///   the start was never seen) and `toolCallCompleted` once; a turn that ends with tool items
///   still open completes them as `interrupted` (Codex does not complete a command it abandons);
/// - approvals are server → client requests; one still pending when its turn ends, or that Codex
///   resolves by itself (`serverRequest/resolved`), is withdrawn.
public struct CodexCodec: AgentCodec {
    public let backend = "codex"
    public let capabilities = BackendCapabilities.codex

    /// How long the host waits for a reply to each of its requests (`initialize`, `thread/start`,
    /// `turn/start`, `turn/interrupt`, …). Codex answers in milliseconds when it is healthy.
    public var requestTimeoutMS: Int64 = 30_000
    /// `thread/start`'s approval policy (DESIGN.md §4: every command comes to the host).
    public var approvalPolicy = "untrusted"
    /// `thread/start`'s sandbox.
    public var sandbox = "workspace-write"
    /// `clientInfo.version` in `initialize`.
    public var clientVersion = "0.1.0"

    let makeApprovalID: @Sendable () -> ApprovalID

    /// Where the session's handshake is.
    public enum Handshake: Sendable, Hashable {
        /// Nothing sent yet.
        case notStarted
        /// `initialize` sent; waiting for its result.
        case initializing
        /// `initialized` and `thread/start` (or `thread/resume`) sent; waiting for the thread.
        case openingThread
        /// The thread exists: prompts go out as `turn/start`.
        case ready
        /// Codex refused a handshake step; the session cannot take prompts.
        case failed(String)
    }

    /// Where the handshake is.
    public internal(set) var handshake = Handshake.notStarted
    /// Codex's thread id (the native session id) once the thread exists.
    public internal(set) var threadID: String?
    /// The turn running now (from `turn/start`'s result or `turn/started`), nil between turns.
    public internal(set) var activeTurnID: String?
    /// Prompts the host sent before the thread existed, sent as `turn/start` when it does.
    public internal(set) var queuedPrompts: [String] = []

    // State (internal so the extensions can reach it; nothing outside the codec touches it).
    /// Whether this codec drives the agent (`start` was called) or only follows a recording:
    /// only a driving codec answers handshake steps by itself.
    var driving = false
    var options: SessionStartOptions?
    var model: String?
    var nextRequestID: Int64 = 1
    /// Deadlines of the host's requests.
    var requests = PendingRequests<RPCID>()
    /// What each host request was, kept past its deadline so that a late reply is still understood.
    var sent: [RPCID: SentRequest] = [:]
    /// Items seen in the current turns, by item id.
    var items: [String: Item] = [:]
    /// Tool item ids started and not completed, in start order.
    var openToolItems: [String] = []
    /// Tool item ids already completed (so a late `item/completed` cannot complete them twice).
    var finishedToolItems: Set<String> = []
    var approvals: [ApprovalID: PendingApproval] = [:]
    var approvalOrder: [ApprovalID] = []
    /// The last complete agent message of each running turn (the run's `result`).
    var lastAgentMessage: [String: String] = [:]
    /// Turns that already reported their failure in an `error` notification.
    var turnsWithErrorNotice: Set<String> = []
    /// The thread's cumulative token usage, and its value when the current turn started.
    var threadUsage: Usage?
    var usageAtTurnStart: Usage?
    /// The sum of the current turn's per-request usage (Codex's `last`).
    var turnUsageSum: Usage?
    /// The thread was resumed: its earlier total usage is unknown to this process.
    var resumed = false
    /// Turns that ended (a late reply naming one does not make it run again).
    var completedTurns: Set<String> = []
    /// A deny message recorded by `observeHostLine` (a `turn/steer`), waiting for its `decline`.
    var observedDenyMessage: String?

    struct SentRequest: Sendable {
        var method: String
        /// The prompt of a `turn/start`, the message of a deny `turn/steer`.
        var text: String?
    }

    struct Item: Sendable {
        var type: String
        var turnID: String?
        /// The tool input (tool items), built once from the first sighting of the item.
        var input: JSONValue = .null
        /// Output deltas, for a completed command whose `aggregatedOutput` is missing.
        var streamedOutput = ""
    }

    enum ApprovalKind: Sendable {
        case command, fileChange, question
    }

    struct PendingApproval: Sendable {
        var request: ApprovalRequest
        var nativeID: RPCID
        var kind: ApprovalKind
        var turnID: String?
        /// The request's `availableDecisions` allow `acceptForSession`.
        var canAcceptForSession: Bool
    }

    public init(makeApprovalID: @escaping @Sendable () -> ApprovalID = { ApprovalID.make() }) {
        self.makeApprovalID = makeApprovalID
    }

    public var pendingApprovals: [ApprovalRequest] { approvalOrder.compactMap { approvals[$0]?.request } }

    // MARK: Host → agent

    public mutating func start(_ options: SessionStartOptions, now: Timestamp) -> CodecOutput {
        driving = true
        self.options = options
        model = options.model
        if let prompt = options.prompt { queuedPrompts.append(prompt) }
        handshake = .initializing
        let params: JSONValue = [
            "clientInfo": ["name": "nucleic", "title": "Nucleic", "version": .string(clientVersion)],
            // experimentalApi: `availableDecisions` on command approvals and `collaborationMode`
            // (Plan mode, where questions come from) are experimental in 0.163.
            "capabilities": ["experimentalApi": true],
        ]
        return CodecOutput(lines: [request("initialize", params, now: now)])
    }

    public mutating func send(_ intent: HostIntent, now: Timestamp) throws(CodecError) -> CodecOutput {
        switch intent {
        case .prompt(let text):
            switch handshake {
            case .ready:
                return turnStart(text, now: now)
            case .initializing, .openingThread:
                queuedPrompts.append(text)
                return CodecOutput()
            case .notStarted:
                throw CodecError(.notReady, "the Codex session has not been started: call start first")
            case .failed(let why):
                throw CodecError(.notReady, "the Codex session could not start (\(why)); start a new session")
            }
        case .interrupt:
            guard let threadID, let turnID = activeTurnID else {
                throw CodecError(.notReady, "no Codex turn is running, so there is nothing to interrupt")
            }
            return CodecOutput(lines: [request("turn/interrupt", ["threadId": .string(threadID), "turnId": .string(turnID)], now: now)])
        case .decide(let id, let decision):
            return try answer(id, decision, now: now)
        }
    }

    public mutating func expire(now: Timestamp) -> CodecOutput {
        CodecOutput(events: requests.expire(now: now).map { PendingRequests.timeoutNotice($0, backend: backend) })
    }

    /// A request line with the next id, tracked with a deadline.
    mutating func request(_ method: String, _ params: JSONValue, text: String? = nil, now: Timestamp) -> String {
        let id = nextRequestID
        nextRequestID &+= 1
        requests.add(.int(id), method: method, now: now, timeoutMS: requestTimeoutMS)
        sent[.int(id)] = SentRequest(method: method, text: text)
        return JSONWriter.string(JSONValue.object(["id": .int(id), "method": .string(method), "params": params]))
    }

    /// `turn/start` with one prompt. While a turn runs Codex does not start another: it adds the
    /// input to the running turn (a steer) and answers with that turn's id, so a follow-up sent
    /// at any moment is never lost.
    mutating func turnStart(_ text: String, now: Timestamp) -> CodecOutput {
        var params: JSONObject = ["threadId": .string(threadID ?? ""), "input": [["type": "text", "text": .string(text)]]]
        if options?.planMode == true {
            params.append("collaborationMode", [
                "mode": "plan",
                "settings": ["model": model.map(JSONValue.string) ?? .null, "reasoning_effort": nil, "developer_instructions": nil],
            ])
        }
        return CodecOutput(events: [.userInput(text: text)], lines: [request("turn/start", .object(params), text: text, now: now)])
    }

    /// The handshake's next step once `initialize` answered: `initialized`, then the thread.
    mutating func openThread(now: Timestamp) -> CodecOutput {
        handshake = .openingThread
        guard driving, let options else { return CodecOutput() }
        var params = JSONObject()
        if let resumeID = options.resumeID { params.append("threadId", .string(resumeID)) }
        params.append("cwd", .string(options.cwd))
        params.append("model", ifPresent: options.model.map(JSONValue.string))
        params.append("approvalPolicy", .string(approvalPolicy))
        params.append("sandbox", .string(sandbox))
        // The resumed thread's history is in the session's own transcript already.
        if options.resumeID != nil {
            resumed = true
            params.append("excludeTurns", true)
        }
        let method = options.resumeID == nil ? "thread/start" : "thread/resume"
        return CodecOutput(lines: [JSONWriter.string(JSONValue.object(["method": "initialized"])), request(method, .object(params), now: now)])
    }
}

/// A JSON-RPC id: Codex and this codec use integers; the protocol also allows strings (a
/// recorded host may use them).
enum RPCID: Hashable, Sendable, CustomStringConvertible {
    case int(Int64)
    case string(String)

    init?(_ value: JSONValue?) {
        if let i = value?.intValue {
            self = .int(i)
        } else if let s = value?.stringValue {
            self = .string(s)
        } else {
            return nil
        }
    }

    var json: JSONValue {
        switch self {
        case .int(let i): .int(i)
        case .string(let s): .string(s)
        }
    }

    var description: String {
        switch self {
        case .int(let i): String(i)
        case .string(let s): "\"\(s)\""
        }
    }
}
