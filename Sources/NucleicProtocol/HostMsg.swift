/// A message from the host to a client. Same wire rules as `ClientMsg` (docs/PROTOCOL.md).
public struct HostMsg: Sendable, Hashable {
    /// The `requestID` of the client message this answers, when it answers one.
    public var requestID: Int64?
    public var body: Body

    public init(_ body: Body, requestID: Int64? = nil) {
        self.body = body
        self.requestID = requestID
    }

    public enum Body: Sendable, Hashable {
        /// `deviceID`: the paired device this connection is (absent on the local socket).
        case welcome(protocolVersion: Int64, scope: Scope, hostName: String, hostVersion: String, deviceID: DeviceID? = nil)
        case sessionList([SessionSummary])
        /// A cold subscribe: the summary, the last events, what is pending, and the cursor to
        /// continue from.
        case snapshot(summary: SessionSummary, events: [SequencedEvent], pendingApprovals: [ApprovalRequest], cursor: Int64)
        /// Events of one session in seq order.
        case events(sessionID: SessionID, events: [SequencedEvent])
        case approvalRequested(ApprovalRequest)
        case approvalResolved(sessionID: SessionID, ApprovalResolution)
        case sessionUpdated(SessionSummary)
        case error(code: ErrorCode, message: String, sessionID: SessionID?)
        case pong
        // Replies to control messages.
        case ok
        case sessionCreated(SessionSummary)
        case projectList([ProjectInfo])
        case approvalList([ApprovalRequest])
        case diff(sessionID: SessionID, stat: DiffStat, files: [FileStat], patch: String?)
        case fixture(sessionID: SessionID, text: String)
        /// The session's work is on its base: the base's new commit.
        case integrated(sessionID: SessionID, commit: String, strategy: String, fastForward: Bool, changedPaths: [String])
        /// Integration changed nothing: `reason` is `conflicted`, `dirtyBase` (uncommitted work in
        /// the base's working tree at these paths), `baseMoved` or `nothingToIntegrate`.
        case integrationRefused(sessionID: SessionID, reason: String, paths: [String], message: String)
        /// Files two or more live sessions have both touched.
        case overlap([String: [SessionID]])
        /// The reply to `reloadConfig`: each setting as the daemon now has it.
        case config([ConfigEntry])
        /// The reply to `discard`: the snapshot commit of the work the worktree held (nil when
        /// it held none), on `branch`, which is kept unless `branchDeleted`.
        case discarded(sessionID: SessionID, branch: String, snapshot: String?, branchDeleted: Bool)
        /// Reply to `listRules`, `addRule` (the new rule) and `removeRule` (the removed one).
        case ruleList([RuleInfo])
        /// Reply to `explainRule`.
        case ruleVerdict(RuleVerdict)
        /// A pairing invite (reply to `createInvite`).
        case invite(Invite)
        /// Paired devices (reply to `listDevices`, and to `revokeDevice` with the one revoked).
        case deviceList([DeviceInfo])
        /// The notification channels (reply to `notifyStatus` and `notifyTest`).
        case notifyChannels([NotifyChannelStatus])
        /// The host's push providers and VAPID key, and this device's registration (reply to `pushInfo`).
        case pushInfo(PushInfo)
    }

    /// Error codes a client can act on (docs/PROTOCOL.md lists what each means).
    public enum ErrorCode: String, Sendable, Hashable, CaseIterable {
        case badMessage, unknownType, protocolVersion, unauthorized, forbidden
        case notFound, ambiguous, alreadyResolved, unsupported, invalidDecision, notReady, conflict, internalError
        /// The client did not read fast enough; it is disconnected and resumes with `sinceSeq`.
        case backpressure
    }

    public var type: String {
        switch body {
        case .welcome: "welcome"
        case .sessionList: "sessionList"
        case .snapshot: "snapshot"
        case .events: "events"
        case .approvalRequested: "approvalRequested"
        case .approvalResolved: "approvalResolved"
        case .sessionUpdated: "sessionUpdated"
        case .error: "error"
        case .pong: "pong"
        case .ok: "ok"
        case .sessionCreated: "sessionCreated"
        case .projectList: "projectList"
        case .approvalList: "approvalList"
        case .diff: "diff"
        case .fixture: "fixture"
        case .integrated: "integrated"
        case .integrationRefused: "integrationRefused"
        case .overlap: "overlap"
        case .config: "config"
        case .discarded: "discarded"
        case .ruleList: "ruleList"
        case .ruleVerdict: "ruleVerdict"
        case .invite: "invite"
        case .deviceList: "deviceList"
        case .notifyChannels: "notifyChannels"
        case .pushInfo: "pushInfo"
        }
    }
}

/// A project as clients see it.
public struct ProjectInfo: Sendable, Hashable, JSONRepresentable {
    public var id: ProjectID
    public var name: String
    public var path: String
    public var baseBranch: String

    public init(id: ProjectID, name: String, path: String, baseBranch: String) {
        self.id = id
        self.name = name
        self.path = path
        self.baseBranch = baseBranch
    }

    public var json: JSONValue {
        ["id": .string(id.rawValue), "name": .string(name), "path": .string(path), "baseBranch": .string(baseBranch)]
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "project")
        self.init(id: ProjectID(try f.string("id")), name: try f.string("name"), path: try f.string("path"), baseBranch: try f.string("baseBranch"))
    }
}

/// One file of a diff stat.
public struct FileStat: Sendable, Hashable, JSONRepresentable {
    public var path: String
    /// `added`, `modified`, `deleted`, `renamed`, …
    public var change: String
    public var insertions: Int
    public var deletions: Int
    public var isBinary: Bool

    public init(path: String, change: String, insertions: Int, deletions: Int, isBinary: Bool = false) {
        self.path = path
        self.change = change
        self.insertions = insertions
        self.deletions = deletions
        self.isBinary = isBinary
    }

    public var json: JSONValue {
        ["path": .string(path), "change": .string(change), "insertions": .int(Int64(insertions)),
         "deletions": .int(Int64(deletions)), "isBinary": .bool(isBinary)]
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "file stat")
        self.init(path: try f.string("path"), change: try f.string("change"), insertions: Int(try f.int("insertions")),
                  deletions: Int(try f.int("deletions")), isBinary: try f.bool("isBinary", default: false))
    }
}

extension HostMsg: JSONRepresentable {
    public var json: JSONValue {
        var o: JSONObject = ["type": .string(type)]
        o.append("requestID", ifPresent: requestID.map(JSONValue.int))
        switch body {
        case .welcome(let version, let scope, let hostName, let hostVersion, let deviceID):
            o.append("protocolVersion", .int(version))
            o.append("scope", .string(scope.rawValue))
            o.append("hostName", .string(hostName))
            o.append("hostVersion", .string(hostVersion))
            o.append("deviceID", ifPresent: deviceID.map { .string($0.rawValue) })
        case .invite(let invite):
            for entry in invite.json.objectValue ?? JSONObject() { o.append(entry.key, entry.value) }
        case .deviceList(let devices):
            o.append("devices", .array(devices.map(\.json)))
        case .notifyChannels(let channels):
            o.append("channels", .array(channels.map(\.json)))
        case .pushInfo(let info):
            o.append("providers", .array(info.providers.map { .string($0.rawValue) }))
            o.append("webPushKey", ifPresent: info.webPushKey.map(JSONValue.string))
            o.append("registered", ifPresent: info.registered.map { .string($0.rawValue) })
        case .sessionList(let sessions):
            o.append("sessions", .array(sessions.map(\.json)))
        case .snapshot(let summary, let events, let pending, let cursor):
            o.append("summary", summary.json)
            o.append("events", .array(events.map(\.json)))
            o.append("pendingApprovals", .array(pending.map(\.json)))
            o.append("cursor", .int(cursor))
        case .events(let id, let events):
            o.append("sessionID", .string(id.rawValue))
            o.append("events", .array(events.map(\.json)))
        case .approvalRequested(let approval):
            o.append("approval", approval.json)
        case .approvalResolved(let id, let r):
            o.append("sessionID", .string(id.rawValue))
            o.append("approvalID", .string(r.approvalID.rawValue))
            o.append("decision", r.decision.json)
            o.append("decidedBy", .string(r.decidedBy))
            o.append("decidedByLabel", ifPresent: r.decidedByLabel.map(JSONValue.string))
        case .sessionUpdated(let summary), .sessionCreated(let summary):
            o.append("summary", summary.json)
        case .error(let code, let message, let id):
            o.append("code", .string(code.rawValue))
            o.append("message", .string(message))
            o.append("sessionID", ifPresent: id.map { .string($0.rawValue) })
        case .pong, .ok:
            break
        case .projectList(let projects):
            o.append("projects", .array(projects.map(\.json)))
        case .approvalList(let approvals):
            o.append("approvals", .array(approvals.map(\.json)))
        case .diff(let id, let stat, let files, let patch):
            o.append("sessionID", .string(id.rawValue))
            o.append("stat", stat.json)
            o.append("files", .array(files.map(\.json)))
            o.append("patch", ifPresent: patch.map(JSONValue.string))
        case .fixture(let id, let text):
            o.append("sessionID", .string(id.rawValue))
            o.append("text", .string(text))
        case .integrated(let id, let commit, let strategy, let fastForward, let paths):
            o.append("sessionID", .string(id.rawValue))
            o.append("commit", .string(commit))
            o.append("strategy", .string(strategy))
            o.append("fastForward", .bool(fastForward))
            o.append("changedPaths", .array(paths.map(JSONValue.string)))
        case .integrationRefused(let id, let reason, let paths, let message):
            o.append("sessionID", .string(id.rawValue))
            o.append("reason", .string(reason))
            o.append("paths", .array(paths.map(JSONValue.string)))
            o.append("message", .string(message))
        case .ruleList(let rules):
            o.append("rules", .array(rules.map(\.json)))
        case .ruleVerdict(let verdict):
            o.append("verdict", verdict.json)
        case .discarded(let id, let branch, let snapshot, let deleted):
            o.append("sessionID", .string(id.rawValue))
            o.append("branch", .string(branch))
            o.append("snapshot", snapshot.map(JSONValue.string) ?? .null)
            o.append("branchDeleted", .bool(deleted))
        case .overlap(let files):
            o.append("files", .object(JSONObject(files.keys.sorted().map { JSONObject.Entry($0, .array(files[$0]!.map { .string($0.rawValue) })) })))
        case .config(let entries):
            o.append("settings", .array(entries.map(\.json)))
        }
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "host message")
        let requestID = try f.optionalInt("requestID")
        func list<T: JSONRepresentable>(_ key: String, _ type: T.Type) throws(ShapeError) -> [T] {
            var out: [T] = []
            for v in f[key]?.arrayValue ?? [] { out.append(try T(json: v)) }
            return out
        }
        func session() throws(ShapeError) -> SessionID { SessionID(try f.string("sessionID")) }
        let body: Body
        switch try f.string("type") {
        case "welcome":
            body = .welcome(protocolVersion: try f.int("protocolVersion"), scope: try f.enumValue("scope"),
                            hostName: try f.string("hostName"), hostVersion: try f.string("hostVersion"),
                            deviceID: try f.optionalString("deviceID").map { DeviceID($0) })
        case "invite": body = .invite(try Invite(json: json))
        case "deviceList": body = .deviceList(try list("devices", DeviceInfo.self))
        case "notifyChannels": body = .notifyChannels(try list("channels", NotifyChannelStatus.self))
        case "pushInfo":
            body = .pushInfo(PushInfo(providers: (f["providers"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(PushRegistration.Provider.init(rawValue:)) },
                                      webPushKey: try f.optionalString("webPushKey"),
                                      registered: try f.optionalString("registered").flatMap(PushRegistration.Provider.init(rawValue:))))
        case "sessionList": body = .sessionList(try list("sessions", SessionSummary.self))
        case "snapshot":
            body = .snapshot(summary: try f.decode("summary"), events: try list("events", SequencedEvent.self),
                             pendingApprovals: try list("pendingApprovals", ApprovalRequest.self), cursor: try f.int("cursor"))
        case "events": body = .events(sessionID: try session(), events: try list("events", SequencedEvent.self))
        case "approvalRequested": body = .approvalRequested(try f.decode("approval"))
        case "approvalResolved":
            body = .approvalResolved(sessionID: try session(), ApprovalResolution(
                approvalID: ApprovalID(try f.string("approvalID")), decision: try f.decode("decision"),
                decidedBy: try f.string("decidedBy"), decidedByLabel: try f.optionalString("decidedByLabel")))
        case "sessionUpdated": body = .sessionUpdated(try f.decode("summary"))
        case "sessionCreated": body = .sessionCreated(try f.decode("summary"))
        case "error":
            body = .error(code: ErrorCode(rawValue: try f.string("code")) ?? .internalError, message: try f.string("message"),
                          sessionID: try f.optionalString("sessionID").map { SessionID($0) })
        case "pong": body = .pong
        case "ok": body = .ok
        case "projectList": body = .projectList(try list("projects", ProjectInfo.self))
        case "approvalList": body = .approvalList(try list("approvals", ApprovalRequest.self))
        case "diff":
            body = .diff(sessionID: try session(), stat: try f.decode("stat"), files: try list("files", FileStat.self),
                         patch: try f.optionalString("patch"))
        case "fixture": body = .fixture(sessionID: try session(), text: try f.string("text"))
        case "integrated":
            body = .integrated(sessionID: try session(), commit: try f.string("commit"), strategy: try f.string("strategy"),
                               fastForward: try f.bool("fastForward", default: false),
                               changedPaths: (f["changedPaths"]?.arrayValue ?? []).compactMap(\.stringValue))
        case "integrationRefused":
            body = .integrationRefused(sessionID: try session(), reason: try f.string("reason"),
                                       paths: (f["paths"]?.arrayValue ?? []).compactMap(\.stringValue), message: try f.string("message"))
        case "config": body = .config(try list("settings", ConfigEntry.self))
        case "overlap":
            var files: [String: [SessionID]] = [:]
            for entry in f["files"]?.objectValue ?? JSONObject() {
                files[entry.key] = (entry.value.arrayValue ?? []).compactMap(\.stringValue).map { SessionID($0) }
            }
            body = .overlap(files)
        case "discarded":
            body = .discarded(sessionID: try session(), branch: try f.string("branch"), snapshot: try f.optionalString("snapshot"),
                              branchDeleted: try f.bool("branchDeleted", default: false))
        case "ruleList": body = .ruleList(try list("rules", RuleInfo.self))
        case "ruleVerdict": body = .ruleVerdict(try f.decode("verdict"))
        case let other: throw ShapeError("host message: unknown type \"\(other)\"")
        }
        self.init(body, requestID: requestID)
    }
}

/// One setting as a daemon has it: its value (nil: the built-in default), where that came from
/// (`flag`, `environment`, `file`, `default`), and whether it is in force now or waits for the
/// daemon's next start.
public struct ConfigEntry: Sendable, Hashable, JSONRepresentable {
    public var key: String
    public var value: String?
    public var source: String
    /// False: the file says something else than the daemon uses, and only a restart applies it.
    public var inForce: Bool

    public init(key: String, value: String?, source: String, inForce: Bool) {
        self.key = key
        self.value = value
        self.source = source
        self.inForce = inForce
    }

    public var json: JSONValue {
        var o: JSONObject = ["key": .string(key)]
        o.append("value", value.map(JSONValue.string) ?? .null)
        o.append("source", .string(source))
        o.append("inForce", .bool(inForce))
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "config entry")
        self.init(key: try f.string("key"), value: try f.optionalString("value"), source: try f.string("source"),
                  inForce: try f.bool("inForce", default: true))
    }
}
