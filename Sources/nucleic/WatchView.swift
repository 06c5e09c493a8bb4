#if canImport(Glibc)
import Glibc
#endif
import NucleicCommandLine
import NucleicDaemon
import NucleicProtocol
import NucleicRemoteKit
import NucleicSockets
import NucleicSync
import NucleicWatch

/// The driver of the watch view, the same for the local socket (`nucleic watch`) and a paired
/// host (`nucleic remote watch`): the client core's `Connection` feeds `WatchState`, keys become
/// `WatchCommand`s performed through the connection, and the screen is redrawn at most
/// `framesPerSecond` times a second however fast events arrive. Without a terminal it prints
/// `WatchLog` lines instead.
///
/// It never exits because the host went away (the connection reconnects and resumes each
/// session from its cursor); only q, Ctrl-C, SIGINT, SIGTERM or SIGHUP end it, and every one of
/// them restores the terminal.
actor WatchView {
    static let framesPerSecond = 30

    let connection: Connection
    let terminal: Terminal?
    let color: Bool
    var state = WatchState()
    var logged: WatchState?
    var drawScheduled = false
    var lastDraw: ContinuousClock.Instant?
    var quitting: CheckedContinuation<Void, Never>?
    var quit = false
    /// Frames drawn (for the benchmark: `NUCLEIC_WATCH_STATS` prints it at exit).
    var frames = 0

    init(connection: Connection, terminal: Terminal?) {
        self.connection = connection
        self.terminal = terminal
        // --color, NO_COLOR and TERM=dumb, as every command takes them (DisplayOptions).
        color = terminal != nil && Colour.enabled
    }

    /// Runs until the person quits; returns the exit status.
    func run() async -> Int32 {
        let signals = SignalWatcher([SIGINT, SIGTERM, SIGHUP, SIGWINCH]) { number in
            Task { await self.signal(number) }
        }
        terminal?.enter()
        state.now = .now()
        await connection.start()
        let updates = Task {
            for await remote in await connection.updates() { await self.apply(.state(remote)) }
        }
        let keys = terminal.map { terminal in
            Task {
                for await bytes in terminal.keys() {
                    for key in WatchKey.parse(bytes) { await self.apply(.key(key)) }
                }
            }
        }
        let ticks = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                await self.apply(.tick(.now()))
            }
        }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            if quit { c.resume() } else { quitting = c }
        }
        signals.cancel()
        ticks.cancel()
        terminal?.stopReading()
        keys?.cancel()
        await connection.stop()
        updates.cancel()
        terminal?.leave()
        if getenv("NUCLEIC_WATCH_STATS") != nil { Output.write(STDERR_FILENO, "watch: \(frames) frames\n") }
        return 0
    }

    func signal(_ number: Int32) {
        if number == SIGWINCH { scheduleDraw(); return }
        finish()
    }

    func finish() {
        quit = true
        quitting?.resume()
        quitting = nil
    }

    func apply(_ event: WatchEvent) {
        guard !quit else { return }
        let commands = state.handle(event)
        if terminal == nil {
            if case .tick = event { return }
            for line in WatchLog.lines(from: logged, to: state) { Output.standardOutput(line) }
            logged = state
        } else {
            scheduleDraw()
        }
        for command in commands { perform(command) }
    }

    // MARK: - Drawing

    /// Draws soon: at once if the last frame is older than a frame's time, else when it is.
    func scheduleDraw() {
        guard terminal != nil, !drawScheduled else { return }
        drawScheduled = true
        let interval = Duration.milliseconds(1000 / Self.framesPerSecond)
        let wait = lastDraw.map { max(.zero, interval - (ContinuousClock.now - $0)) } ?? .zero
        Task {
            if wait > .zero { try? await Task.sleep(for: wait) }
            self.draw()
        }
    }

    func draw() {
        drawScheduled = false
        guard let terminal, !quit else { return }
        let (width, height) = terminal.size()
        terminal.draw(WatchScreen.render(state, width: width, height: height, color: color, utcOffsetSeconds: Self.utcOffset()))
        lastDraw = .now
        frames += 1
    }

    static func utcOffset() -> Int {
        var now = time(nil)
        var local = tm()
        localtime_r(&now, &local)
        return local.tm_gmtoff
    }

    // MARK: - Commands

    func perform(_ command: WatchCommand) {
        let connection = self.connection
        switch command {
        case .quit: finish()
        case .respond(let id, let decision, let deliberate):
            Task {
                let outcome = await connection.respond(to: id, with: decision, deliberate: deliberate)
                self.apply(.outcome(Self.text(outcome, "\(decision.summary)")))
            }
        case .sendInput(let id, let text):
            Task { self.apply(.outcome(Self.text(await connection.sendInput(text, to: id), "sent"))) }
        case .interrupt(let id):
            Task { self.apply(.outcome(Self.reply(await connection.perform(.interrupt(sessionID: id)), done: "interrupted"))) }
        case .integrate(let id, let strategy):
            Task {
                let reply = await connection.perform(.integrate(.init(strategy: strategy, sessionID: id)))
                let line: String = switch reply?.body {
                case .integrated(_, let commit, let strategy, _, let paths)?: "integrated (\(strategy)) as \(commit.prefix(10)): \(paths.count) path\(paths.count == 1 ? "" : "s")"
                case .integrationRefused(_, let reason, _, let message)?: "not integrated (\(reason)): \(message)"
                default: Self.reply(reply, done: "integrated")
                }
                self.apply(.outcome(line))
            }
        case .discard(let id):
            Task {
                let reply = await connection.perform(.discard(sessionID: id, deleteBranch: false))
                let line: String = if case .discarded(_, let branch, _, _)? = reply?.body { "discarded; its work is on \(branch)" } else { Self.reply(reply, done: "discarded") }
                self.apply(.outcome(line))
            }
        case .loadDiff(let id):
            Task {
                let reply = await connection.perform(.getDiff(sessionID: id, statOnly: false))
                let lines: [String] = switch reply?.body {
                case .diff(_, let stat, _, let patch)?:
                    ["\(stat.files) file\(stat.files == 1 ? "" : "s") changed, +\(stat.insertions) −\(stat.deletions)"]
                        + (patch ?? "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                default: [Self.reply(reply, done: "")]
                }
                self.apply(.diffLoaded(id, lines))
            }
        case .explainRules(let id):
            guard let request = state.remote.mirror.approvals[id]?.approval else { return }
            Task {
                let reply = await connection.perform(.rules(.explain(toolName: request.toolName, input: request.input, project: nil,
                                                                     sessionID: request.sessionID)))
                switch reply?.body {
                case .ruleVerdict(let verdict)?: self.apply(.rulesExplained(id, .verdict(verdict)))
                case .error(let code, let message, _)?:
                    let why = code == .forbidden ? "explaining rules needs a device of the control scope" : "\(code.rawValue): \(message)"
                    self.apply(.rulesExplained(id, .unavailable(why)))
                default: break  // the link dropped: asked again when it is back
                }
            }
        case .editThenAllow(let id):
            guard let card = state.remote.mirror.approvals[id], let terminal else {
                apply(.outcome("editing needs a terminal"))
                return
            }
            do {
                let edited = try terminal.suspended { try Editor.edit(card.approval.input) }
                apply(.edited(id, edited))
            } catch let error as CommandError {
                apply(.outcome("not sent: \(error.message)"))
            } catch {
                apply(.outcome("not sent: \(error)"))
            }
        }
    }

    static func text(_ outcome: ActionOutcome, _ what: String) -> String {
        switch outcome {
        case .done: what
        case .alreadyResolved(let who): "already answered: \(who)"
        case .notLive(let reason): "not sent: \(reason)"
        case .needsDeliberateStep: "not sent: this approval needs the second key (!)"
        case .failed(let message): "failed: \(message)"
        case .refused(let code, let message): "refused (\(code)): \(message)"
        }
    }

    static func reply(_ reply: HostMsg?, done: String) -> String {
        switch reply?.body {
        case nil: "not sent, or no answer: the connection is down"
        case .error(let code, let message, _)?: "refused (\(code.rawValue)): \(message)"
        default: done
        }
    }
}

/// The daemon's Unix socket as a `MessageLink` for the client core (no Noise: the kernel
/// vouches for the peer, the daemon gives this user the `control` scope).
final class LocalLink: MessageLink, @unchecked Sendable {  // `frames` is read by one reader at a time (Connection's run loop)
    let connection: LocalConnection
    private var frames: AsyncStream<[UInt8]>.AsyncIterator

    init(_ connection: LocalConnection) {
        self.connection = connection
        frames = connection.frames.makeAsyncIterator()
    }

    func send(_ message: [UInt8]) async throws(RemoteError) {
        do { try await connection.send(message) } catch { throw RemoteError(.closed, "the daemon's socket: \(error.message)") }
    }

    func receive() async throws(RemoteError) -> [UInt8]? { await frames.next() }

    func close() async { connection.close() }

    /// Opens the daemon's socket for each connection attempt; nothing listening is "host
    /// offline" (a stopped daemon is never started again from here).
    static func opener(path: String) -> LinkOpener {
        return { () async throws(RemoteError) -> any MessageLink in
            // (A `catch where` on the typed SocketError crashes the 6.3 compiler: keep this shape.)
            let attempt = Result { () throws(SocketError) -> LocalConnection in try UnixClient.connect(path: path) }
            switch attempt {
            case .success(let connection): return LocalLink(connection)
            case .failure(let error):
                throw RemoteError(error.code == .notRunning ? .hostUnreachable : .io,
                                  error.code == .notRunning ? "no daemon on \(path)" : error.message)
            }
        }
    }
}
