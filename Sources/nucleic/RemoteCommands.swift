#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicRemoteKit
import NucleicWire
import NucleicSystem
import NucleicCommandLine

/// `nucleic remote …`: a terminal client that is a paired device, talking to a host over TCP
/// exactly as a phone does (NucleicRemoteKit; docs/CLIENTS.md), never over the local socket.
enum RemoteCommands {
    static var usage: String { NucleicCommands.help("remote") }

    static func run(_ arguments: [String]) throws -> Int32 {
        guard let sub = arguments.first else { throw UsageError(message: "missing a remote command", usage: usage) }
        let rest = Array(arguments.dropFirst())
        let result = runBlocking { () async throws -> Int32 in
            switch sub {
            case "pair": return try await pair(rest)
            case "ls": return try await list(rest)
            case "watch": return try await RemoteWatch.run(rest)
            case "approve", "deny": return try await decide(sub, rest)
            case "send": return try await send(rest)
            default: throw UsageError(message: "unknown remote command '\(sub)'", usage: usage)
            }
        }
        return try result.get()
    }

    static func pair(_ arguments: [String]) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: ["label"], boolean: ["json"], usage: usage)
        guard parsed.positionals.count == 1 else { throw UsageError(message: "give the pairing link (nucleic://pair?...)", usage: usage) }
        let invite: PairingInvite
        do { invite = try PairingInvite(parsed.positionals[0]) } catch { throw CommandError(message: error.message, status: 64) }
        let existing = try RemoteConfig.load()
        let key = existing?.privateKey ?? SecretKeyBytes.fresh()
        var config = RemoteConfig(privateKey: key, host: nil)
        let label = parsed["label"] ?? defaultLabel()
        let host: PairedHost
        do {
            host = try await Connection.pair(invite: invite, identity: try config.keyPair(), label: label, clientName: "nucleic-remote", dialer: TCPDialer())
        } catch let error as RemoteError {
            throw CommandError(message: "pairing with \(invite.hostName) failed: \(error.message)")
        }
        config.host = host
        try config.save()
        try? RemoteConfig.saveCursors([:])
        if parsed.flag("json") {
            var o: JSONObject = ["hostName": .string(host.hostName), "label": .string(host.label), "scope": .string(host.scope.rawValue)]
            o.append("deviceID", host.deviceID.map { .string($0.rawValue) } ?? .null)
            o.append("addresses", .array(host.addresses.map(JSONValue.string)))
            SessionCommands.json(.object(o))
            return 0
        }
        Output.standardOutput("paired with \(host.hostName) as \"\(host.label)\" (device \(host.deviceID.map { short($0.rawValue) } ?? "?"), scope \(host.scope.rawValue))")
        return 0
    }

    static func list(_ arguments: [String]) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json"], usage: usage)
        guard parsed.positionals.isEmpty else { throw UsageError(message: "unexpected argument '\(parsed.positionals[0])'", usage: usage) }
        let state = try await OneShot.connect(subscribeAll: false) { $0.mirror.listed }
        let sessions = state.mirror.sessions
        if parsed.flag("json") { SessionCommands.json(.array(sessions.map(\.json))); return 0 }
        Output.standardOutput("\(state.host?.hostName ?? "host") · \(state.connection.chip()) · NEEDS YOU: \(state.mirror.badge)")
        if sessions.isEmpty { Output.standardOutput("no sessions") }
        printAttention(sessions)
        return 0
    }

    static func printAttention(_ sessions: [SessionSummary], numbered: Bool = false) {
        var n = 0
        for bucket in SessionStatus.Bucket.allCases {
            let rows = sessions.filter { $0.status.bucket == bucket }
            guard !rows.isEmpty else { continue }
            let name = switch bucket { case .needsYou: "NEEDS YOU"; case .running: "RUNNING"; case .done: "DONE" }
            Output.standardOutput("\(name) (\(rows.count))")
            for s in rows {
                n += 1
                Output.standardOutput((numbered ? "  [\(n)] " : "  ") + SessionCommands.row(s))
            }
        }
    }

    static func decide(_ command: String, _ arguments: [String]) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: command == "deny" ? ["message"] : [], boolean: command == "approve" ? ["confirm-risk", "json"] : ["json"], usage: usage)
        guard parsed.positionals.count == 1 else { throw UsageError(message: "give one APPROVAL id (or a unique prefix)", usage: usage) }
        let reference = parsed.positionals[0].lowercased()
        let session = try await OneShot.session(subscribeAll: true)
        defer { Task { await session.connection.stop() } }
        let state = await session.connection.state
        let matches = state.mirror.approvals.keys.filter { $0.rawValue.hasPrefix(reference) }
        guard matches.count == 1, let id = matches.first else {
            throw CommandError(message: matches.isEmpty ? "no approval \(reference) on \(state.host?.hostName ?? "the host")" : "\(reference) matches \(matches.count) approvals; give more characters", status: 2)
        }
        let decision: Decision = command == "deny" ? .deny(message: parsed["message"] ?? "") : .allow
        let outcome = await session.connection.respond(to: id, with: decision, deliberate: parsed.flag("confirm-risk"))
        let card = state.mirror.approvals[id]!
        return report(outcome, what: "\(command == "deny" ? "denied" : "approved") \(short(id.rawValue)) (\(card.approval.toolName), \(card.approval.risk.rawValue))", risk: card.approval.risk,
                      json: parsed.flag("json") ? ["approvalID": .string(id.rawValue), "decision": decision.json] : nil)
    }

    /// Prints an action's outcome; the exit status is 0 for done and already-resolved (a normal
    /// outcome), 1 when nothing or not everything happened.
    /// `interactive` (watch): every outcome on standard output, without the `nucleic:` prefix.
    /// With `json`, the outcome is that object (with `done` or `alreadyResolved`) on standard
    /// output, or a JSON error on standard error.
    static func report(_ outcome: ActionOutcome, what: String, risk: Risk? = nil, interactive: Bool = false, json: JSONObject? = nil) -> Int32 {
        let problem: (String) -> Void = json != nil ? { _ = CLI.jsonError("failed", $0, 1) }
            : interactive ? { Output.standardOutput("  \($0)") } : { Output.standardError("nucleic: \($0)") }
        switch outcome {
        case .done:
            if var json { json.append("done", .bool(true)); SessionCommands.json(.object(json)) } else { Output.standardOutput(what) }
            return 0
        case .alreadyResolved(let who):
            if var json { json.append("alreadyResolved", .string(who)); SessionCommands.json(.object(json)) } else { Output.standardOutput("already resolved: \(who)") }
            return 0
        case .notLive(let reason):
            problem("not sent: \(reason)")
            return 1
        case .needsDeliberateStep:
            problem("not sent: this approval's risk is \(risk?.rawValue ?? "high"); look at it, then " + (interactive ? "allow it with a! N" : "run again with --confirm-risk"))
            return 1
        case .failed(let reason):
            problem(reason)
            return 1
        case .refused(let code, let message):
            problem("the host refused (\(code)): \(message)")
            return 1
        }
    }

    static func send(_ arguments: [String]) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json"], usage: usage)
        guard parsed.positionals.count == 2 else { throw UsageError(message: "give SESSION and TEXT", usage: usage) }
        let session = try await OneShot.session(subscribeAll: false)
        defer { Task { await session.connection.stop() } }
        let state = await session.connection.state
        let reference = parsed.positionals[0].lowercased()
        let matches = state.mirror.sessions.filter { $0.sessionID.rawValue.hasPrefix(reference) }
        guard matches.count == 1 else {
            throw CommandError(message: matches.isEmpty ? "no session \(reference) (see `nucleic remote ls`)" : "\(reference) matches \(matches.count) sessions", status: 2)
        }
        let outcome = await session.connection.sendInput(parsed.positionals[1], to: matches[0].sessionID)
        return report(outcome, what: "sent to \(short(matches[0].sessionID.rawValue)) (\(matches[0].title))",
                      json: parsed.flag("json") ? ["sessionID": .string(matches[0].sessionID.rawValue), "sent": .bool(true)] : nil)
    }

    static func short(_ id: String) -> String { SessionCommands.short(id) }

    static func defaultLabel() -> String {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count)
        let host = String(cString: name)
        return "\(RemoteEnvironment["USER"] ?? "user")@\(host.isEmpty ? "terminal" : host)"
    }
}

/// A connection for one command: connect, wait until the client has what the command needs,
/// or fail at the first attempt that does not get there (a one-shot command does not retry).
struct OneShot {
    let connection: Connection

    static func session(subscribeAll: Bool) async throws -> OneShot {
        let (host, key) = try RemoteConfig.paired()
        let connection = Connection(host: host, identity: key, dialer: TCPDialer(),
                                    options: .init(clientName: "nucleic-remote", autoSubscribe: subscribeAll ? (.statusOnly, .snapshot) : nil))
        await connection.start()
        let state = await connection.waitUntil { s in
            switch s.connection {
            case .connected(_, 0):
                guard s.mirror.listed else { return false }
                return !subscribeAll || s.mirror.sessions.allSatisfy { $0.status.isArchived || s.mirror.transcripts[$0.sessionID] != nil }
            case .reconnecting(_, let n, _), .hostOffline(_, let n, _): return n >= 1
            case .unauthorized, .incompatible, .disconnected: return true
            case .connected: return false
            }
        }
        guard state.connection.isLive else {
            await connection.stop()
            switch state.connection {
            case .unauthorized(let m): throw CommandError(message: "\(m) — pair again with `nucleic remote pair URI`")
            case .incompatible(let m): throw CommandError(message: m)
            case .reconnecting(_, _, let reason), .hostOffline(_, _, let reason):
                throw CommandError(message: "cannot reach \(host.hostName) (\(host.addresses.joined(separator: ", "))): \(reason)")
            default: throw CommandError(message: "not connected to \(host.hostName)")
            }
        }
        return OneShot(connection: connection)
    }

    /// Connects, waits for `ready`, returns the state and disconnects.
    static func connect(subscribeAll: Bool, _ ready: @escaping @Sendable (RemoteState) -> Bool) async throws -> RemoteState {
        let one = try await session(subscribeAll: subscribeAll)
        let state = await one.connection.waitUntil { ready($0) || !$0.connection.isLive }
        await one.connection.stop()
        return state
    }
}

/// 32 random bytes for a new device key (libsodium's CSPRNG, through NucleicWire).
enum SecretKeyBytes {
    static func fresh() -> [UInt8] {
        let pair = NoiseKeyPair.generate()
        return pair.withPrivateKeyBytes { Array($0) }
    }
}
