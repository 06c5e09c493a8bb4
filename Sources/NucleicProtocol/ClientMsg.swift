/// A message from a client (the local CLI, a paired phone) to the host.
///
/// On the wire each is a map with a `"type"` key and named fields (docs/PROTOCOL.md), never
/// Swift's synthesized enum coding. `requestID`, when a client sets it, comes back on the reply
/// or error, so a client can match answers to questions. Unknown fields are ignored.
public struct ClientMsg: Sendable, Hashable {
    public var requestID: Int64?
    public var body: Body

    public init(_ body: Body, requestID: Int64? = nil) {
        self.body = body
        self.requestID = requestID
    }

    public enum Body: Sendable, Hashable {
        /// `label`: the name a device pairing for the first time wants to be listed under.
        case hello(protocolVersion: Int64, client: String, label: String? = nil)
        case listSessions(includeArchived: Bool)
        /// `foreground`: the person is looking at this session now (a `watch` view, a phone's
        /// open screen); the host suppresses notifications about it while such a subscriber lasts.
        case subscribe(sessionID: SessionID, sinceSeq: Int64?, verbosity: Verbosity, foreground: Bool = false)
        case unsubscribe(sessionID: SessionID)
        /// With `denyAlways` (only beside a deny): also make a deny rule at that scope.
        case approvalRespond(approvalID: ApprovalID, decision: Decision, denyAlways: ApprovalScope? = nil)
        case sendInput(sessionID: SessionID, text: String)
        case interrupt(sessionID: SessionID)
        case ping
        // Control scope: what the local CLI does.
        case addProject(path: String, name: String?)
        /// Unregisters a project (by name or id) that has no sessions left, archived ones included.
        case removeProject(project: String)
        case listProjects
        case startSession(StartSession)
        case listApprovals
        case getDiff(sessionID: SessionID, statOnly: Bool)
        /// `force`: delete the branch even when it holds work that is not on the base.
        case discard(sessionID: SessionID, deleteBranch: Bool, force: Bool = false)
        case exportFixture(sessionID: SessionID)
        case shutdown(killSessions: Bool)
        case integrate(Integrate)
        case overlap(project: String?)
        /// Reads the settings file again and applies what can change without a restart; the
        /// reply is `config` (local CLI only).
        case reloadConfig
        /// `listRules`, `addRule`, `removeRule`, `explainRule`.
        case rules(RuleRequest)
        /// Asks the daemon for a pairing invite (docs/PROTOCOL.md, "Pairing"); local CLI only.
        case createInvite(scope: Scope, label: String?, addresses: [String])
        case listDevices(includeRevoked: Bool)
        /// `device`: a device id or a unique prefix of one.
        case revokeDevice(device: String)
        /// The notification channels and their last deliveries (`nucleic notify ls`).
        case notifyStatus
        /// A test notification on one channel, or on every channel when nil.
        case notifyTest(channel: String?)
        // Push registration (a paired device, scope view): docs/PROTOCOL.md, "Push registration".
        /// Registers this device's push channel, replacing the one it had.
        case registerPush(PushRegistration)
        /// Removes this device's push channel.
        case unregisterPush
        /// What push channels this host offers (its VAPID key), and this device's.
        case pushInfo
    }

    /// `nucleic integrate`: bring a session's branch onto its base.
    public struct Integrate: Sendable, Hashable {
        /// `merge`, `rebase` or `squash`.
        public var strategy: String
        public var sessionID: SessionID
        public var message: String?
        public var noFastForward: Bool
        /// Keep the worktree and branch afterwards.
        public var keep: Bool
        /// Interrupt a running session first instead of refusing.
        public var interrupt: Bool
        /// Instead of integrating: ask the agent to bring its branch up to date and resolve conflicts.
        public var resolveWithAgent: Bool

        public init(strategy: String, sessionID: SessionID, message: String? = nil, noFastForward: Bool = false, keep: Bool = false,
                    interrupt: Bool = false, resolveWithAgent: Bool = false) {
            self.strategy = strategy
            self.sessionID = sessionID
            self.message = message
            self.noFastForward = noFastForward
            self.keep = keep
            self.interrupt = interrupt
            self.resolveWithAgent = resolveWithAgent
        }
    }

    public struct StartSession: Sendable, Hashable {
        public var prompt: String
        public var project: String?
        public var backend: String
        /// For the replay backend: the recording to play.
        public var fixture: String?
        public var base: String?
        public var title: String?
        /// Start turns in the backend's planning mode (Codex: where its questions come from).
        public var planMode: Bool
        /// The agent's whole command line (words split as a shell would, no shell run), instead
        /// of the backend manifest's binary and arguments (`--agent-command`; the generic `acp`
        /// backend needs it or its `acp-command` setting).
        public var agentCommand: String?

        public init(prompt: String, project: String? = nil, backend: String, fixture: String? = nil, base: String? = nil, title: String? = nil,
                    planMode: Bool = false, agentCommand: String? = nil) {
            self.agentCommand = agentCommand
            self.prompt = prompt
            self.project = project
            self.backend = backend
            self.fixture = fixture
            self.base = base
            self.title = title
            self.planMode = planMode
        }
    }

    /// How much of a session a subscriber wants (the seed's §5): every event, partial deltas
    /// folded together, or status changes only.
    public enum Verbosity: String, Sendable, Hashable, CaseIterable {
        case full, coalesced, statusOnly
    }

    /// The scope a device needs to send this (view < approve < control).
    public var requiredScope: Scope {
        switch body {
        case .hello, .listSessions, .subscribe, .unsubscribe, .ping, .registerPush, .unregisterPush, .pushInfo: .view
        case .approvalRespond, .sendInput: .approve
        case .interrupt, .addProject, .removeProject, .listProjects, .startSession, .listApprovals, .getDiff, .discard, .exportFixture, .shutdown,
            .integrate, .overlap, .reloadConfig, .rules, .createInvite, .listDevices, .revokeDevice, .notifyStatus, .notifyTest:
            .control
        }
    }

    public var type: String {
        switch body {
        case .hello: "hello"
        case .listSessions: "listSessions"
        case .subscribe: "subscribe"
        case .unsubscribe: "unsubscribe"
        case .approvalRespond: "approvalRespond"
        case .sendInput: "sendInput"
        case .interrupt: "interrupt"
        case .ping: "ping"
        case .addProject: "addProject"
        case .removeProject: "removeProject"
        case .listProjects: "listProjects"
        case .startSession: "startSession"
        case .listApprovals: "listApprovals"
        case .getDiff: "getDiff"
        case .discard: "discard"
        case .exportFixture: "exportFixture"
        case .shutdown: "shutdown"
        case .integrate: "integrate"
        case .overlap: "overlap"
        case .reloadConfig: "reloadConfig"
        case .rules(let request): request.type
        case .createInvite: "createInvite"
        case .listDevices: "listDevices"
        case .revokeDevice: "revokeDevice"
        case .notifyStatus: "notifyStatus"
        case .notifyTest: "notifyTest"
        case .registerPush: "registerPush"
        case .unregisterPush: "unregisterPush"
        case .pushInfo: "pushInfo"
        }
    }
}

/// What a paired device may do; the local CLI has `control`.
public enum Scope: String, Sendable, Hashable, CaseIterable, Comparable {
    case view, approve, control

    public static func < (a: Scope, b: Scope) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }
}

extension ClientMsg: JSONRepresentable {
    public var json: JSONValue {
        var o: JSONObject = ["type": .string(type)]
        o.append("requestID", ifPresent: requestID.map(JSONValue.int))
        switch body {
        case .hello(let version, let client, let label):
            o.append("protocolVersion", .int(version))
            o.append("client", .string(client))
            o.append("label", ifPresent: label.map(JSONValue.string))
        case .listSessions(let includeArchived):
            o.append("includeArchived", .bool(includeArchived))
        case .subscribe(let id, let since, let verbosity, let foreground):
            o.append("sessionID", .string(id.rawValue))
            o.append("sinceSeq", ifPresent: since.map(JSONValue.int))
            o.append("verbosity", .string(verbosity.rawValue))
            if foreground { o.append("foreground", .bool(true)) }
        case .unsubscribe(let id), .interrupt(let id), .exportFixture(let id):
            o.append("sessionID", .string(id.rawValue))
        case .approvalRespond(let id, let decision, let denyAlways):
            o.append("approvalID", .string(id.rawValue))
            o.append("decision", decision.json)
            o.append("denyAlways", ifPresent: denyAlways?.json)
        case .sendInput(let id, let text):
            o.append("sessionID", .string(id.rawValue))
            o.append("text", .string(text))
        case .ping, .listProjects, .listApprovals:
            break
        case .addProject(let path, let name):
            o.append("path", .string(path))
            o.append("name", ifPresent: name.map(JSONValue.string))
        case .removeProject(let project):
            o.append("project", .string(project))
        case .startSession(let s):
            o.append("prompt", .string(s.prompt))
            o.append("project", ifPresent: s.project.map(JSONValue.string))
            o.append("backend", .string(s.backend))
            o.append("fixture", ifPresent: s.fixture.map(JSONValue.string))
            o.append("base", ifPresent: s.base.map(JSONValue.string))
            o.append("title", ifPresent: s.title.map(JSONValue.string))
            if s.planMode { o.append("planMode", .bool(true)) }
            o.append("agentCommand", ifPresent: s.agentCommand.map(JSONValue.string))
        case .getDiff(let id, let statOnly):
            o.append("sessionID", .string(id.rawValue))
            o.append("statOnly", .bool(statOnly))
        case .discard(let id, let deleteBranch, let force):
            o.append("sessionID", .string(id.rawValue))
            o.append("deleteBranch", .bool(deleteBranch))
            if force { o.append("force", .bool(true)) }
        case .shutdown(let killSessions):
            o.append("killSessions", .bool(killSessions))
        case .integrate(let i):
            o.append("sessionID", .string(i.sessionID.rawValue))
            o.append("strategy", .string(i.strategy))
            o.append("message", ifPresent: i.message.map(JSONValue.string))
            o.append("noFastForward", .bool(i.noFastForward))
            o.append("keep", .bool(i.keep))
            o.append("interrupt", .bool(i.interrupt))
            o.append("resolveWithAgent", .bool(i.resolveWithAgent))
        case .overlap(let project):
            o.append("project", ifPresent: project.map(JSONValue.string))
        case .reloadConfig:
            break
        case .rules(let request):
            request.encode(into: &o)
        case .createInvite(let scope, let label, let addresses):
            o.append("scope", .string(scope.rawValue))
            o.append("label", ifPresent: label.map(JSONValue.string))
            o.append("addresses", .array(addresses.map(JSONValue.string)))
        case .listDevices(let includeRevoked):
            o.append("includeRevoked", .bool(includeRevoked))
        case .revokeDevice(let device):
            o.append("device", .string(device))
        case .notifyStatus:
            break
        case .notifyTest(let channel):
            o.append("channel", ifPresent: channel.map(JSONValue.string))
        case .registerPush(let registration):
            registration.encode(into: &o)
        case .unregisterPush, .pushInfo:
            break
        }
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "client message")
        let requestID = try f.optionalInt("requestID")
        func session() throws(ShapeError) -> SessionID { SessionID(try f.string("sessionID")) }
        let body: Body
        switch try f.string("type") {
        case "hello":
            body = .hello(protocolVersion: try f.int("protocolVersion"), client: try f.optionalString("client") ?? "unknown",
                          label: try f.optionalString("label"))
        case "listSessions": body = .listSessions(includeArchived: try f.bool("includeArchived", default: false))
        case "subscribe":
            let verbosity = try f.optionalString("verbosity").map { raw throws(ShapeError) -> Verbosity in
                guard let v = Verbosity(rawValue: raw) else { throw ShapeError("client message: unknown verbosity \"\(raw)\"") }
                return v
            } ?? .full
            body = .subscribe(sessionID: try session(), sinceSeq: try f.optionalInt("sinceSeq"), verbosity: verbosity,
                              foreground: try f.bool("foreground", default: false))
        case "unsubscribe": body = .unsubscribe(sessionID: try session())
        case "approvalRespond":
            body = .approvalRespond(approvalID: ApprovalID(try f.string("approvalID")), decision: try f.decode("decision"),
                                    denyAlways: try f.optional("denyAlways"))
        case "sendInput": body = .sendInput(sessionID: try session(), text: try f.string("text"))
        case "interrupt": body = .interrupt(sessionID: try session())
        case "ping": body = .ping
        case "addProject": body = .addProject(path: try f.string("path"), name: try f.optionalString("name"))
        case "removeProject": body = .removeProject(project: try f.string("project"))
        case "listProjects": body = .listProjects
        case "startSession":
            body = .startSession(StartSession(
                prompt: try f.string("prompt"), project: try f.optionalString("project"), backend: try f.string("backend"),
                fixture: try f.optionalString("fixture"), base: try f.optionalString("base"), title: try f.optionalString("title"),
                planMode: try f.bool("planMode", default: false), agentCommand: try f.optionalString("agentCommand")))
        case "listApprovals": body = .listApprovals
        case "getDiff": body = .getDiff(sessionID: try session(), statOnly: try f.bool("statOnly", default: false))
        case "discard":
            body = .discard(sessionID: try session(), deleteBranch: try f.bool("deleteBranch", default: false), force: try f.bool("force", default: false))
        case "exportFixture": body = .exportFixture(sessionID: try session())
        case "shutdown": body = .shutdown(killSessions: try f.bool("killSessions", default: false))
        case "integrate":
            body = .integrate(Integrate(
                strategy: try f.string("strategy"), sessionID: try session(), message: try f.optionalString("message"),
                noFastForward: try f.bool("noFastForward", default: false), keep: try f.bool("keep", default: false),
                interrupt: try f.bool("interrupt", default: false), resolveWithAgent: try f.bool("resolveWithAgent", default: false)))
        case "overlap": body = .overlap(project: try f.optionalString("project"))
        case "reloadConfig": body = .reloadConfig
        case let type where RuleRequest.types.contains(type): body = .rules(try RuleRequest(type: type, f))
        case "createInvite":
            body = .createInvite(scope: try f.enumValue("scope"), label: try f.optionalString("label"),
                                 addresses: try (f["addresses"]?.arrayValue ?? []).map { v throws(ShapeError) -> String in
                                     guard let text = v.stringValue else { throw ShapeError("createInvite: addresses are strings") }
                                     return text
                                 })
        case "listDevices": body = .listDevices(includeRevoked: try f.bool("includeRevoked", default: false))
        case "revokeDevice": body = .revokeDevice(device: try f.string("device"))
        case "notifyStatus": body = .notifyStatus
        case "notifyTest": body = .notifyTest(channel: try f.optionalString("channel"))
        case "registerPush": body = .registerPush(try PushRegistration(fields: f))
        case "unregisterPush": body = .unregisterPush
        case "pushInfo": body = .pushInfo
        case let other: throw ShapeError("client message: unknown type \"\(other)\"")
        }
        self.init(body, requestID: requestID)
    }
}
