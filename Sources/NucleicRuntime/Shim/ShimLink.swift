import CShims
import Glibc
import NucleicProtocol
import Synchronization
import NucleicSystem

/// How the daemon starts shims: the executable that has the `shim` subcommand (`nucleic`), and
/// how long an agent may run with no daemon (nil: for ever).
public struct ShimLaunch: Sendable, Hashable {
    public var executable: String
    public var orphanGrace: Double?

    public init(executable: String, orphanGrace: Double? = nil) {
        self.executable = executable
        self.orphanGrace = orphanGrace
    }
}

/// The daemon's end of one shim: the socket, the adoption lock, and what the shim has said.
///
/// ### Invariants
/// - While a link is open its daemon holds `adopt.lock`; no other link to the same shim can be
///   made (in this process or another), so a shim is adopted by exactly one daemon at a time.
/// - `durableEnd` only grows; `exit` is set once, after every `journal` message before it.
/// - The socket is closed only when the link is released (deinit); `close()` and the shim's end
///   only shut it down, so a late `send` fails instead of writing to a reused descriptor. The
///   lock (never read or written) is released by `close()` or the deinit, whichever is first.
public final class ShimLink: Sendable {
    private struct State {
        var durableEnd: Int64
        var exit: ShimExit?
        var lost = false
        /// The shim's journal write error while it cannot write (the disk is full), else nil.
        var diskFull: String?
    }

    public let files: ShimFiles
    public let agentPID: Int32
    /// The durable journal end when this link was made: records before it were written before
    /// this daemon could send anything.
    public let adoptedAt: Int64
    /// Where this shim's agent's records start in the journal.
    public let journalStart: Int64
    /// Wakes the reader of the journal: new durable data, the exit, or the shim gone.
    public let wakeups: AsyncStream<Void>
    private let socket: Int32
    /// The adoption lock's descriptor, -1 once released.
    private let lock: Mutex<Int32>
    private let state: Mutex<State>
    private let writeLock = Mutex(())
    /// The shim process when this daemon started it (its monitor reaps it).
    private let process: ChildProcess?
    /// Whether the shim runs the agent's terminals (its `state` lists them); shims of older
    /// builds do not, and the daemon runs them itself.
    public let hostsTerminals: Bool
    /// The shim's terminals when this link was made.
    public let terminals: [ShimTerminalState]
    /// Who hears the shim's terminal messages; those that come before are kept for it.
    private let terminalListener = Mutex<(handler: (@Sendable (ShimMessage) -> Void)?, early: [ShimMessage])>((nil, []))

    private init(files: ShimFiles, socket: Int32, lock: Int32, agentPID: Int32, start: Int64, end: Int64, exit: ShimExit?,
                 process: ChildProcess?, pending: [UInt8], terminals: [ShimTerminalState]?) {
        self.files = files
        hostsTerminals = terminals != nil
        self.terminals = terminals ?? []
        self.socket = socket
        self.lock = Mutex(lock)
        self.agentPID = agentPID
        self.adoptedAt = end
        self.journalStart = start
        self.process = process
        state = Mutex(State(durableEnd: end, exit: exit))
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        wakeups = stream
        continuation.yield()
        let link = self
        let rc = startDetachedThread(name: "nucleic-shimlink") { link.readMessages(pending, continuation) }
        if rc != 0 {
            state.withLock { $0.lost = true }
            continuation.finish()
        }
    }

    // Closed only here, when nothing can use them any more: a descriptor closed earlier could be
    // reused (by a client's connection) while a late `send` still writes to its number.
    deinit {
        Glibc.close(socket)
        releaseLock()
    }

    private func releaseLock() {
        lock.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }

    public var durableEnd: Int64 { state.withLock { $0.durableEnd } }
    public var exit: ShimExit? { state.withLock { $0.exit } }
    /// Why the shim cannot write the journal now (the disk is full: it holds the agent back and
    /// retries), nil while it can.
    public var diskFull: String? { state.withLock { $0.diskFull } }
    /// The shim hung up without reporting an exit (it died), or this daemon closed the link.
    public var isLost: Bool { state.withLock { $0.lost } }

    // MARK: Making links

    /// Starts a shim for `launch` in `folder` (the journal must exist, with its header) and
    /// adopts it.
    public static func launch(_ shim: ShimLaunch, folder: String, agent launch: AgentLaunch) async throws(ShimError) -> ShimLink {
        var arguments = ["shim", folder]
        if let grace = shim.orphanGrace { arguments += ["--orphan-grace", "\(grace)"] }
        arguments += ["--", launch.executable] + launch.arguments
        let process: ChildProcess
        do {
            process = try ChildProcess.spawn(executable: shim.executable, arguments: arguments, environment: launch.environment,
                                             workingDirectory: launch.workingDirectory, newSession: true)
        } catch { throw ShimError("cannot start the session's shim: \(error)") }
        process.closeStdin()
        var said: [UInt8] = []
        for await chunk in process.stdout {
            said += chunk
            if said.contains(0x0A) { break }
        }
        let line = String(decoding: said.prefix { $0 != 0x0A }, as: UTF8.self)
        guard line.hasPrefix("ready ") else {
            let status = await process.wait(timeout: .seconds(5))
            let reason = line.hasPrefix("error ") ? String(line.dropFirst(6)) : "it said \"\(line)\" (\(status.map { "\($0)" } ?? "still running")); \(process.stderrTail())"
            throw ShimError("the session's shim could not start the agent: \(reason)")
        }
        let link: ShimLink?
        do { link = try adopt(ShimFiles(folder: folder), process: process) } catch { link = nil }
        guard let link else {
            // Not ours to talk to: end what it started rather than leave an agent no one can reach.
            if let agent = Int32(line.dropFirst("ready ".count)) { _ = Glibc.kill(-agent, SIGKILL) }
            await process.terminate(grace: .seconds(1))
            throw ShimError("the session's shim started but its socket \(ShimFiles(folder: folder).socket) does not answer")
        }
        return link
    }

    /// How long `adopt` waits for a held adoption lock before it says another daemon holds it.
    ///
    /// A lock the previous holder has just released can still be held for a moment: a child that
    /// process was forking when it closed the descriptor holds a copy until its `exec` closes it
    /// (`O_CLOEXEC`), and a dying daemon's descriptors close with its last thread. Another daemon
    /// of the same home is ruled out earlier, by the socket's lock, so a lock that stays held is
    /// rare and worth a short wait to tell apart.
    static let heldLockWait = 1.0

    /// Adopts the live shim in `files.folder`: takes the adoption lock, connects, and reads its
    /// state. Nil when no shim answers there (none was started, or it has gone).
    /// - Throws: `ShimError` when another daemon holds the shim (its lock stays held for
    ///   `heldLockWait`).
    public static func adopt(_ files: ShimFiles, process: ChildProcess? = nil) throws(ShimError) -> ShimLink? {
        let lock = Glibc.open(files.adoptLock, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw ShimError("cannot open \(files.adoptLock): \(errnoName(errno))") }
        let giveUp = ShimMonitor.monotonicSeconds() + heldLockWait
        while flock(lock, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK, ShimMonitor.monotonicSeconds() < giveUp {
                usleep(10_000)
                continue
            }
            Glibc.close(lock)
            throw ShimError("the shim in \(files.folder) is adopted by another daemon (\(files.adoptLock) is locked)")
        }
        let socket = nucleic_unix_socket(0)
        guard socket >= 0 else {
            Glibc.close(lock)
            throw ShimError("cannot create a socket: \(errnoName(-socket))")
        }
        guard nucleic_unix_connect(socket, files.socket) == 0 else {
            Glibc.close(socket)
            Glibc.close(lock)
            return nil
        }
        guard send(socket, .hello) else {
            Glibc.close(socket)
            Glibc.close(lock)
            return nil
        }
        // The first message is the shim's state; read it here, the rest on the reader thread.
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !pending.contains(0x0A) {
            let n = buffer.withUnsafeMutableBytes { Syscall.read(socket, $0.baseAddress, $0.count) }
            guard n > 0 else {
                Glibc.close(socket)
                Glibc.close(lock)
                return nil
            }
            pending += buffer[0..<n]
        }
        let newline = pending.firstIndex(of: 0x0A)!
        let version = (try? JSONParser.parse(Array(pending[..<newline])))?["protocol"]?.intValue ?? 1
        guard version <= ShimMessage.protocolVersion else {
            Glibc.close(socket)
            Glibc.close(lock)
            throw ShimError("the shim in \(files.folder) speaks shim protocol \(version), this nucleic \(ShimMessage.protocolVersion): a newer nucleic started it; run that one")
        }
        guard let json = try? JSONParser.parse(Array(pending[..<newline])),
              case .state(let start, let end, let pid, let exit)? = ShimMessage(json: json) else {
            Glibc.close(socket)
            Glibc.close(lock)
            throw ShimError("the shim in \(files.folder) answered something that is not its state")
        }
        let terminals = json["terminals"]?.arrayValue.map { $0.compactMap(ShimTerminalState.init(json:)) }
        return ShimLink(files: files, socket: socket, lock: lock, agentPID: pid, start: start, end: end, exit: exit, process: process,
                        pending: Array(pending[(newline + 1)...]), terminals: terminals)
    }

    /// Waits (at most `timeout`) until the shim process this daemon started has exited and
    /// been reaped; returns at once for an adopted shim (not our child: not ours to reap).
    /// Hands the shim's terminal messages (`terminalStarted`, `terminalOutput`, `terminalExit`)
    /// to `handler`, those already received first.
    public func onTerminal(_ handler: @escaping @Sendable (ShimMessage) -> Void) {
        let early = terminalListener.withLock { listener in
            listener.handler = handler
            defer { listener.early = [] }
            return listener.early
        }
        for message in early { handler(message) }
    }

    public func waitForShimExit(timeout: Duration) async {
        _ = await process?.wait(timeout: timeout)
    }

    // MARK: Talking

    /// Sends `message`; false when the shim is gone.
    @discardableResult
    public func send(_ message: ShimMessage) -> Bool {
        writeLock.withLock { _ in Self.send(socket, message) }
    }

    /// Sends lines for the agent, as one write.
    @discardableResult
    public func send(lines: [String]) -> Bool {
        guard !lines.isEmpty else { return true }
        let bytes = lines.flatMap { ShimMessage.line($0).wireLine }
        return writeLock.withLock { _ in Self.write(socket, bytes) }
    }

    private static func send(_ socket: Int32, _ message: ShimMessage) -> Bool {
        write(socket, message.wireLine)
    }

    private static func write(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { nucleic_send_nosignal(socket, $0.baseAddress, UInt($0.count)) }
            if n == -Int(EINTR) { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    /// Hangs up and releases the adoption lock: the shim goes on with its agent (or its exit),
    /// and the next daemon can adopt it (the shim serves it once done with this connection).
    public func close() {
        state.withLock { $0.lost = true }
        shutdown(socket, Int32(SHUT_RDWR))
        releaseLock()
    }

    private func readMessages(_ initial: [UInt8], _ continuation: AsyncStream<Void>.Continuation) {
        var pending = initial
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            var changed = false
            for line in ShimMessage.takeLines(from: &pending) {
                guard let json = try? JSONParser.parse(line), let message = ShimMessage(json: json) else { continue }
                switch message {
                case .terminalStarted, .terminalOutput, .terminalExit:
                    let handler = terminalListener.withLock { listener in
                        if listener.handler == nil { listener.early.append(message) }
                        return listener.handler
                    }
                    handler?(message)
                    continue
                default: break
                }
                state.withLock { state in
                    switch message {
                    case .journal(let end): state.durableEnd = max(state.durableEnd, end)
                    case .exit(let exit):
                        state.durableEnd = max(state.durableEnd, exit.journalEnd)
                        state.exit = exit
                    case .condition(let full, let message): state.diskFull = full ? message : nil
                    default: break
                    }
                }
                changed = true
            }
            if changed { continuation.yield() }
            let n = buffer.withUnsafeMutableBytes { Syscall.read(socket, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            pending += buffer[0..<n]
        }
        state.withLock { $0.lost = true }
        continuation.yield()
        continuation.finish()
    }
}
