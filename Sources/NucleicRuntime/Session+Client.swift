#if canImport(Glibc)
import Glibc
#endif
import NucleicAdapters
import NucleicApprovals
import NucleicProtocol
import NucleicSystem

/// The host as an ACP client: the agent's `fs/read_text_file`, `fs/write_text_file` and
/// `terminal/*` requests (docs/adapters/acp.md, "The host as the client").
///
/// Each request the codec holds is judged once:
/// - its path (a file's, a terminal's `cwd`) is resolved as the risk classifier resolves paths
///   (`..`, `~`, every symbolic link) against the worktree; outside it, the request is refused
///   with JSON-RPC -32602 and the refusal recorded (a `notice`, `outsideWorktree`, and the tool
///   call failed);
/// - inside, it is classified as the tool it is (`Read`, `Write`, `Bash` with its command line)
///   and served at once when its risk is at most `execute` and no riskier than what this turn
///   already allowed (readOnly always is); otherwise it is an approval like any other, which a
///   rule or a person answers: allowed, it is served; denied, refused (-32000) with the reason.
///
/// Terminals are children of the agent's shim (Session+ShimTerminals.swift; of the host for an
/// agent without one, or a shim of an older build: `ClientTerminal`), their output kept up to a
/// limit; they are killed when released, when the agent exits, or when the host stops the session.
///
/// ### Invariants
/// - nothing is read, written or run outside the worktree;
/// - every request is answered exactly once (served, refused, or refused when the agent exits);
/// - a `terminal/create` a previous daemon had not answered never runs twice: the shim's terminal
///   for it answers it, or, when the shim has none, it is judged anew (the daemon's own terminals
///   ended with it: refused).
extension Session {
    /// JSON-RPC error codes the host answers with.
    enum ClientError {
        static let invalidParams: Int64 = -32602
        static let denied: Int64 = -32000
        static let notFound: Int64 = -32002
        static let cancelled: Int64 = -32800
        static let internalError: Int64 = -32603
    }

    /// Live terminals a session may hold at once.
    static let maximumTerminals = 16

    /// Judges and serves the agent's requests the codec holds that are not being handled yet.
    func serveClientRequests() {
        guard !holdClientRequests else { return }
        for request in codec.clientRequests {
            guard clientHandled.insert(request.toolCallID).inserted else { continue }
            take(request)
        }
    }

    private func take(_ request: ClientRequest) {
        switch request.method {
        case "terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release":
            serveTerminal(request)
        case "terminal/create" where afterRestart && shimRunsTerminals:
            // The shim holds what was run: answered with its terminal if it ran, else judged.
            if let id = shimTerminal(for: request) {
                if shimTerminals[id] == nil { shimTerminals[id] = .some(nil) }
                answerClient(request, ["terminalId": .string(id)])
            } else {
                judge(request)
            }
        case "terminal/create" where afterRestart:
            refuseClient(request, ClientError.internalError, "the host restarted before it answered this terminal/create: "
                         + "it may have run already, so it is not run again; create it again if it is still needed")
        default:
            judge(request)
        }
    }

    // MARK: Judging

    private func judge(_ request: ClientRequest) {
        guard let call = AcpCodec.clientToolCall(request), let worktree = broker?.worktree else {
            refuseClient(request, ClientError.internalError, "this session has no worktree to serve \(request.method) in")
            return
        }
        let resolver = PathResolver(fileSystem: LocalFileSystem(), worktree: worktree)
        let named = request.method == "terminal/create" ? request.params["cwd"]?.stringValue ?? resolver.worktree : request.params["path"]?.stringValue
        guard let named else {
            refuseClient(request, ClientError.invalidParams, "\(request.method) names no path")
            return
        }
        guard let resolved = resolver.resolve(named, from: resolver.worktree), resolver.isInside(resolved) else {
            let message = "\(named) is outside the session's worktree (\(resolver.worktree)): Nucleic serves files and terminals inside it only"
            record([.notice(level: .warning, message: "refused \(request.method): \(message)", code: "outsideWorktree")], rawOffset: nil)
            refuseClient(request, ClientError.invalidParams, message)
            return
        }
        // Already asked before a restart: that approval stands (answered, or still waiting). The
        // input must match too: a resumed agent numbers its requests from 0 again.
        if let earlier = broker?.machines.values.first(where: { $0.request?.toolCallID == call.toolCallID && $0.request?.input == call.input }), let id = earlier.request?.id {
            switch earlier.phase {
            case .resolved(let decision, _, _, _): decided(request, decision, resolved: resolved)
            case .pending, .awaitingRequest: clientApprovals[id] = (request, resolved)
            case .withdrawn, .expired: refuseClient(request, ClientError.cancelled, "its approval was withdrawn", status: .declined)
            }
            return
        }
        let approval = ApprovalRequest(
            id: ApprovalID.make(), toolCallID: call.toolCallID, toolName: call.name, toolKind: call.toolKind, input: call.input,
            risk: call.toolKind.baselineRisk, capabilities: codec.capabilities, offeredScopes: [], createdAt: .now())
        guard var broker else { return }
        let risk = broker.classify(approval).risk
        if risk <= .execute, risk <= max(.readOnly, turnAllowance ?? .readOnly) {
            serve(request, resolved: resolved)
            return
        }
        let now = Timestamp.now()
        let intake = broker.intake(approval, rules: ruleBook?.rules ?? [], now: now)
        self.broker = broker
        switch intake {
        case .ask(let shown):
            clientApprovals[shown.id] = (request, resolved)
            var events: [AgentEvent] = [.approvalRequested(shown)]
            if let change = lifecycle.apply(.event(.approvalRequested(shown))) { events.append(change) }
            record(events, rawOffset: nil)
        case .ruled(let shown, let resolution):
            // Asked and answered in one step, as for the agent's own requests.
            record([.approvalRequested(shown), .approvalResolved(resolution)], rawOffset: nil)
            decided(request, resolution.decision, resolved: resolved)
        }
    }

    /// A person's or a rule's answer to a request's approval.
    func decided(_ request: ClientRequest, _ decision: Decision, resolved: String) {
        switch decision {
        case .allow, .allowAlways, .allowModified:
            serve(request, resolved: resolved)
        case .deny(let message):
            refuseClient(request, ClientError.denied, "denied" + (message.isEmpty ? "" : ": \(message)"), status: .declined)
        case .cancel, .answer:
            refuseClient(request, ClientError.cancelled, "cancelled", status: .declined)
        }
    }

    /// The answer to a client request's approval, if `approvalID` is one; true when it was.
    func answerClientApproval(_ approvalID: ApprovalID, _ decision: Decision) -> Bool {
        guard let (request, resolved) = clientApprovals.removeValue(forKey: approvalID) else { return false }
        decided(request, decision, resolved: resolved)
        return true
    }

    /// Withdraws the client requests' approvals and refuses the requests (the turn was
    /// interrupted, the agent exited); returns the withdrawals to record.
    func withdrawClientApprovals(reason: String) -> [AgentEvent] {
        var events: [AgentEvent] = []
        for (id, (request, _)) in clientApprovals {
            if broker?.withdraw(id, reason: reason, at: .now()) ?? true { events.append(.approvalWithdrawn(approvalID: id, reason: reason)) }
            if exitStatus == nil { refuseClient(request, ClientError.cancelled, reason, status: .declined) }
        }
        clientApprovals = [:]
        return events
    }

    // MARK: Serving

    private func serve(_ request: ClientRequest, resolved: String) {
        switch request.method {
        case "fs/read_text_file": read(request, resolved)
        case "fs/write_text_file": write(request, resolved)
        case "terminal/create": createTerminal(request, cwd: resolved)
        default: refuseClient(request, ClientError.invalidParams, "\(request.method) is not served")
        }
    }

    /// The file's text (from 1-based `line`, at most `limit` lines), up to `maximumReadBytes`.
    private func read(_ request: ClientRequest, _ path: String) {
        let bytes: [UInt8]
        switch ClientFiles.read(path, limit: ClientFiles.maximumReadBytes) {
        case .bytes(let read): bytes = read
        case .failed(let why):
            refuseClient(request, ClientError.notFound, "cannot read \(path): \(why)")
            return
        case .tooLarge:
            refuseClient(request, ClientError.invalidParams, "\(path) is over \(ClientFiles.maximumReadBytes) bytes, more than Nucleic hands an agent at once")
            return
        }
        var text = String(decoding: bytes, as: UTF8.self)
        let line = request.params["line"]?.intValue
        let limit = request.params["limit"]?.intValue
        if line != nil || limit != nil {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let start = max(0, Int(line ?? 1) - 1)
            let end = limit.map { min(lines.count, start + max(0, Int($0))) } ?? lines.count
            text = start < end ? lines[start..<end].joined(separator: "\n") : ""
        }
        answerClient(request, ["content": .string(text)])
    }

    private func write(_ request: ClientRequest, _ path: String) {
        guard let content = request.params["content"]?.stringValue else {
            refuseClient(request, ClientError.invalidParams, "fs/write_text_file needs content")
            return
        }
        if let problem = ClientFiles.write(path, Array(content.utf8)) {
            refuseClient(request, ClientError.internalError, "cannot write \(path): \(problem)")
            return
        }
        answerClient(request, .null)
    }

    private func createTerminal(_ request: ClientRequest, cwd: String) {
        guard terminals.count + shimTerminals.count < Self.maximumTerminals else {
            refuseClient(request, ClientError.internalError, "this session already has \(Self.maximumTerminals) terminals: release one first")
            return
        }
        guard let (command, arguments) = AcpCodec.terminalArgv(request.params) else {
            refuseClient(request, ClientError.invalidParams, "terminal/create needs a command")
            return
        }
        var environment = clientEnvironment ?? AgentLaunch.hostEnvironment()
        for variable in request.params["env"]?.arrayValue ?? [] {
            if let name = variable["name"]?.stringValue { environment[name] = variable["value"]?.stringValue ?? "" }
        }
        let limit = min(Int(request.params["outputByteLimit"]?.intValue ?? Int64(ClientTerminal.maximumOutputBytes)), ClientTerminal.maximumOutputBytes)
        if shimRunsTerminals {
            createShimTerminal(request, executable: command, arguments: arguments, cwd: cwd, environment: environment, limit: max(0, limit))
            return
        }
        nextTerminal += 1
        let id = "term-\(nextTerminal)"
        do {
            let process = try ChildProcess.spawn(executable: command, arguments: arguments, environment: environment, workingDirectory: cwd)
            terminals[id] = ClientTerminal(id: id, process: process, limit: max(0, limit))
        } catch {
            refuseClient(request, ClientError.internalError, "cannot start \(command): \(error)")
            return
        }
        answerClient(request, ["terminalId": .string(id)])
    }

    private func serveTerminal(_ request: ClientRequest) {
        let id = request.params["terminalId"]?.stringValue ?? ""
        if shimRunsTerminals, shimTerminals[id] != nil {
            serveShimTerminal(request, id)
            return
        }
        guard let terminal = terminals[id] else {
            let why = afterRestart ? " (the host restarted: its terminals ended with the previous daemon)" : ""
            refuseClient(request, ClientError.invalidParams, "this session has no terminal \(id)\(why)")
            return
        }
        switch request.method {
        case "terminal/output":
            var result: JSONObject = ["output": .string(terminal.output.text), "truncated": .bool(terminal.output.truncated)]
            result.append("exitStatus", ifPresent: terminal.process.exitStatus.map(ClientTerminal.json))
            answerClient(request, .object(result))
        case "terminal/wait_for_exit":
            Task {
                let status = await terminal.process.wait()
                await self.answerClient(request, ClientTerminal.json(status))
            }
        case "terminal/kill":
            Task {
                _ = await terminal.process.terminate(grace: .seconds(2))
                await self.answerClient(request, .null)
            }
        default:  // terminal/release
            terminals[id] = nil
            Task { _ = await terminal.process.terminate(grace: .seconds(2)) }
            answerClient(request, .null)
        }
    }

    /// Kills every terminal (the agent exited, the host stops the session).
    func endTerminals() {
        endShimTerminals()
        let all = terminals.values
        terminals = [:]
        for terminal in all { Task { _ = await terminal.process.terminate(grace: .seconds(1)) } }
    }

    // MARK: Answering

    func answerClient(_ request: ClientRequest, _ result: JSONValue) {
        guard exitStatus == nil else { return }
        clientHandled.remove(request.toolCallID)
        apply(codec.respond(to: request.id, result: result), rawOffset: nil)
    }

    func refuseClient(_ request: ClientRequest, _ code: Int64, _ message: String, status: ToolResult.Status = .failed) {
        clientHandled.remove(request.toolCallID)
        apply(codec.refuse(request.id, code: code, message: message, status: status), rawOffset: nil)
    }

    /// The riskiest request a person or a rule allowed in this turn, from the events recorded.
    func noteAllowances(_ events: [AgentEvent]) {
        for event in events {
            switch event {
            case .approvalResolved(let resolution):
                switch resolution.decision {
                case .allow, .allowAlways, .allowModified:
                    if let risk = broker?.machines[resolution.approvalID]?.request?.risk { turnAllowance = max(turnAllowance ?? risk, risk) }
                default: break
                }
            case .runFinished: turnAllowance = nil
            default: break
            }
        }
    }
}
