import NucleicAdapters
import NucleicProtocol

/// The agent's terminals when its shim runs them (ShimMessage's `terminal*`): they are the
/// shim's children, so a daemon that dies, SIGKILL included, leaves them running with the agent,
/// and the next daemon serves the agent's `terminal/*` calls on them.
///
/// - `terminal/create` goes to the shim with its JSON-RPC id as key; the shim starts one terminal
///   per key for the agent's life and answers with its id. After a restart an unanswered
///   `terminal/create` whose key the shim holds is answered with that terminal: never run twice;
///   one the shim does not hold never ran, and is judged as any request.
/// - `terminal/output` asks the shim (by a ref); `wait_for_exit` and `kill` are answered when the
///   shim says the terminal exited (or at once, if it had); `release` forgets it.
extension Session {
    /// Whether this session's terminals are its shim's.
    var shimRunsTerminals: Bool { link?.hostsTerminals == true }

    static func terminalKey(_ request: ClientRequest) -> String { JSONWriter.string(request.id) }

    /// Hears the shim's terminal messages, in order.
    func listenToShimTerminals(_ link: ShimLink) {
        guard link.hostsTerminals else { return }
        for terminal in link.terminals { shimTerminals[terminal.id] = .some(terminal.exit) }
        let (stream, continuation) = AsyncStream<ShimMessage>.makeStream()
        link.onTerminal { continuation.yield($0) }
        Task {
            for await message in stream { self.shimTerminal(message) }
        }
    }

    /// A terminal the shim already runs for this `terminal/create` (a previous daemon asked for
    /// it and died before answering the agent).
    func shimTerminal(for request: ClientRequest) -> String? {
        let key = Self.terminalKey(request)
        return link?.terminals.first { $0.key == key }?.id
    }

    func createShimTerminal(_ request: ClientRequest, executable: String, arguments: [String], cwd: String,
                            environment: [String: String], limit: Int) {
        guard let link else { return }
        let key = Self.terminalKey(request)
        shimCreates[key] = request
        link.send(.terminalCreate(ShimTerminalSpec(key: key, executable: executable, arguments: arguments, workingDirectory: cwd,
                                                   environment: environment, limit: limit)))
    }

    /// `terminal/output`, `wait_for_exit`, `kill`, `release` on a terminal of the shim.
    func serveShimTerminal(_ request: ClientRequest, _ id: String) {
        guard let link, let exit = shimTerminals[id] else { return }
        switch request.method {
        case "terminal/output":
            nextShimRead += 1
            shimReads[nextShimRead] = request
            link.send(.terminalRead(ref: nextShimRead, id: id))
        case "terminal/wait_for_exit", "terminal/kill":
            if let exit {
                answerClient(request, request.method == "terminal/kill" ? .null : ClientTerminal.json(exit))
                return
            }
            shimExitWaiters[id, default: []].append(request)
            if request.method == "terminal/kill" { link.send(.terminalKill(id: id)) }
        default:  // terminal/release
            shimTerminals[id] = nil
            link.send(.terminalRelease(id: id))
            for waiter in shimExitWaiters.removeValue(forKey: id) ?? [] {
                refuseClient(waiter, ClientError.invalidParams, "terminal \(id) was released")
            }
            answerClient(request, .null)
        }
    }

    func shimTerminal(_ message: ShimMessage) {
        switch message {
        case .terminalStarted(let key, let id, let error):
            guard let request = shimCreates.removeValue(forKey: key) else { return }
            if let error {
                refuseClient(request, ClientError.internalError, error)
                return
            }
            if shimTerminals[id] == nil { shimTerminals[id] = .some(nil) }
            answerClient(request, ["terminalId": .string(id)])
        case .terminalOutput(let ref, _, let output, let truncated, let exit):
            guard let request = shimReads.removeValue(forKey: ref) else { return }
            var result: JSONObject = ["output": .string(output), "truncated": .bool(truncated)]
            result.append("exitStatus", ifPresent: exit.map(ClientTerminal.json))
            answerClient(request, .object(result))
        case .terminalExit(let id, let status):
            guard shimTerminals[id] != nil else { return }
            shimTerminals[id] = .some(status)
            for waiter in shimExitWaiters.removeValue(forKey: id) ?? [] {
                answerClient(waiter, waiter.method == "terminal/kill" ? .null : ClientTerminal.json(status))
            }
        default:
            break
        }
    }

    /// Releases every terminal of the shim (the agent exited, the host stops the session).
    func endShimTerminals() {
        for id in shimTerminals.keys { link?.send(.terminalRelease(id: id)) }
        shimTerminals = [:]
        shimCreates = [:]
        shimReads = [:]
        shimExitWaiters = [:]
    }
}
