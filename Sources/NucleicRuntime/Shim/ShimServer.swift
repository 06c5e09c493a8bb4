import CShims
import Glibc
import NucleicAdapters
import NucleicProtocol
import NucleicStore
import NucleicSystem

/// The per-session shim (`nucleic shim`): the agent's parent, in a session of its own, so the
/// agent outlives the daemon (docs/ARCHITECTURE.md, "Shims").
///
/// It owns the agent's stdin, stdout and stderr and is the raw journal's only writer: every
/// line the agent writes (`out`, `err`) and every line a daemon sends it (`in`) is appended
/// there, with one `fdatasync` per batch (one `read` of the pipe), before the daemon is told the
/// new durable end. The journal is the queue between shim and daemon: the shim reads the
/// agent's pipe only as fast as it writes the journal, so a fast agent fills the disk, never a
/// process's memory, and a daemon that is slow, or dead, loses nothing.
///
/// ### Invariants
/// - One daemon connection at a time, served to its end before the next is accepted (a
///   daemon's last lines are journalled before the next daemon hears where the journal ends).
/// - `journal.end` and `exit.journalEnd` are durable offsets: everything before them is synced.
/// - After the agent exits the shim stays until a daemon sends `release`, so its exit status
///   and stderr tail reach a daemon; `exit.json` keeps them on disk as well.
/// - With an orphan grace, an agent without a daemon for that long is terminated; without
///   one (the default) it keeps running.
public final class ShimServer: @unchecked Sendable {  // mutable state is under `monitor`
    public struct Options: Sendable {
        public var folder: String
        public var executable: String
        public var arguments: [String]
        /// How long the agent may run with no daemon connected; nil: for ever.
        public var orphanGrace: Double?

        public init(folder: String, executable: String, arguments: [String], orphanGrace: Double?) {
            self.folder = folder
            self.executable = executable
            self.arguments = arguments
            self.orphanGrace = orphanGrace
        }
    }

    let options: Options
    let files: ShimFiles
    let monitor = ShimMonitor()
    let journal: RawJournal
    let started = ShimMonitor.monotonicSeconds()
    let tail = TailBuffer(capacity: 4096)
    var agentPID: Int32 = -1
    var durableEnd: Int64
    /// Where this shim's records start (a resumed session's journal holds earlier agents' too).
    let journalStart: Int64
    var connection: Int32 = -1
    var lastDisconnect: Double
    var exit: ShimExit?
    var released = false
    var openOutputs = 2
    var stdinQueue: [[UInt8]] = []
    var stdinClosed = false
    var terminating = false
    /// What holds the agent's descendants (a cgroup, or the subreaper tree); set before the agent starts.
    var containment: ShimContainment?
    /// The journal's write error while it cannot be written (the disk is full), else nil.
    var diskFull: String?
    /// The agent's terminals (`terminal/create`, run for it by the daemon's word), by id: they are
    /// the shim's children, so they outlive a daemon as the agent does.
    var terminals: [String: (key: String, terminal: ClientTerminal)] = [:]
    var terminalExits: [String: ChildProcess.ExitStatus] = [:]
    var nextTerminal = 0

    private init(options: Options, journal: RawJournal) {
        self.options = options
        self.files = ShimFiles(folder: options.folder)
        self.journal = journal
        durableEnd = journal.endOffset
        journalStart = journal.endOffset
        lastDisconnect = started
    }

    /// Runs the shim: starts the agent, says `ready <pid>` on stdout (then closes it), serves
    /// until released. Returns the exit code for the shim process.
    public static func run(_ options: Options) -> Int32 {
        let files = ShimFiles(folder: options.folder)
        func fail(_ message: String) -> Int32 {
            let line = "error \(message)\n"
            _ = line.withCString { Glibc.write(1, $0, strlen($0)) }
            return 1
        }
        nucleic_ignore_sigpipe()
        let journal: RawJournal
        do { journal = try RawJournal(path: files.journal) } catch { return fail("opening the raw journal: \(error)") }
        let server = ShimServer(options: options, journal: journal)
        let listener: Int32
        do { listener = try server.listen() } catch { return fail("\(error)") }
        // Orphans of the agent become ours, and the reaper collects them (logging each).
        let reaper = try? Reaper.start()
        // Before the agent starts, so whatever it starts is born inside.
        let containment = ShimContainment.make()
        server.containment = containment
        let pipes: (stdin: Int32, stdout: Int32, stderr: Int32)
        do { pipes = try server.spawnAgent() } catch {
            unlink(files.socket)
            return fail("\(error)")
        }
        server.writeInfo()
        let ready = "ready \(server.agentPID)\n"
        _ = ready.withCString { Glibc.write(1, $0, strlen($0)) }
        // From now on the daemon's pipes are not ours: stdout to /dev/null, stderr to the log.
        let null = open("/dev/null", O_RDWR)
        let log = open(files.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        dup2(null, 0)
        dup2(null, 1)
        dup2(log >= 0 ? log : null, 2)
        if null > 2 { close(null) }
        if log > 2 { close(log) }
        server.log("agent \(server.agentPID) started; its processes are contained by \(containment.description)")

        let stdin = pipes.stdin, stdout = pipes.stdout, stderr = pipes.stderr
        _ = startDetachedThread(name: "shim-stdout") { server.readOutput(stdout, .out) }
        _ = startDetachedThread(name: "shim-stderr") { server.readOutput(stderr, .err) }
        _ = startDetachedThread(name: "shim-stdin") { server.writeStdin(stdin) }
        _ = startDetachedThread(name: "shim-socket") { server.serve(listener) }
        server.reapAgent()
        server.endTerminals()
        server.awaitRelease()
        // The session ends with everything the agent started (its group, and what it started in
        // sessions or groups of their own, re-parented to us or held by the cgroup): SIGTERM,
        // a grace, SIGKILL. Nothing is left to an ancestor that may never reap it.
        let left = containment.members().count
        if left > 0 {
            let killed = containment.end(grace: 3)
            server.log("ended \(left) process\(left == 1 ? "" : "es") the agent left behind\(killed > 0 ? " (\(killed) needed SIGKILL)" : "")")
        }
        for orphan in Reaper.reapOrphans() {
            HostLog.info("reaped orphan \(orphan.pid)\(orphan.name.map { " (\($0))" } ?? ""): \(orphan.status)")
        }
        reaper?.stop()
        containment.dispose()
        unlink(files.socket)
        unlink(files.info)
        return 0
    }

    // MARK: Setting up

    private func listen() throws(ShimError) -> Int32 {
        let fd = nucleic_unix_socket(0)
        guard fd >= 0 else { throw ShimError("cannot create the shim socket: \(errnoName(-fd))") }
        unlink(files.socket)
        let rc = nucleic_unix_bind(fd, files.socket)
        guard rc == 0 else {
            close(fd)
            throw ShimError(rc == -ENAMETOOLONG
                ? "the shim socket path \(files.socket) is longer than a Unix socket allows (\(nucleic_sun_path_capacity() - 1) bytes); use a shorter NUCLEIC_HOME"
                : "cannot bind \(files.socket): \(errnoName(-rc))")
        }
        chmod(files.socket, 0o600)
        guard Glibc.listen(fd, 4) == 0 else { throw ShimError("cannot listen on \(files.socket): \(errnoName(errno))") }
        return fd
    }

    private func spawnAgent() throws(ShimError) -> (stdin: Int32, stdout: Int32, stderr: Int32) {
        let searchPath = getenv("PATH").map { String(cString: $0) } ?? SpawnPreflight.defaultSearchPath
        let path: String
        do { path = try SpawnPreflight.resolve(options.executable, searchPath: searchPath, workingDirectory: nil) } catch {
            throw ShimError(error.message)
        }
        var pipes: [[Int32]] = []
        for _ in 0..<3 {
            var fds: [Int32] = [-1, -1]
            guard nucleic_pipe_cloexec(&fds, 0) == 0 else { throw ShimError("cannot create the agent's pipes: \(errnoName(errno))") }
            pipes.append(fds)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([options.executable] + options.arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        // Registered, so the orphan reaper leaves the agent's exit status to us.
        let pid = argv.withUnsafeBufferPointer { argv in
            ChildProcess.Registry.spawning {
                nucleic_spawn(path, argv.baseAddress, nil, nil, pipes[0][0], pipes[1][1], pipes[2][1], Int32(NUCLEIC_SPAWN_NEW_PGROUP))
            }
        }
        close(pipes[0][0])
        close(pipes[1][1])
        close(pipes[2][1])
        guard pid > 0 else { throw ShimError("cannot start '\(path)': \(errnoName(-pid))") }
        agentPID = pid
        return (pipes[0][1], pipes[1][0], pipes[2][0])
    }

    private func writeInfo() {
        let info: JSONValue = ["shimPID": .int(Int64(getpid())), "agentPID": .int(Int64(agentPID)),
                               "argv": .array(([options.executable] + options.arguments).map(JSONValue.string)),
                               "orphanGraceSeconds": options.orphanGrace.map { .double($0) } ?? .null,
                               "containment": .string(containment?.description ?? "subreaper")]
        Self.writeFile(files.info, JSONWriter.string(info) + "\n")
    }

    /// Best effort: a file the shim cannot write is one the daemon will find missing and say so.
    static func writeFile(_ path: String, _ text: String) {
        try? WholeFile.replace(path, with: Array(text.utf8))
    }

    // MARK: The agent's output

    private func seconds() -> Double { ShimMonitor.monotonicSeconds() - started }

    /// Reads one of the agent's outputs to EOF, journalling each line; syncs once per read.
    private func readOutput(_ fd: Int32, _ direction: RawJournal.Direction) {
        var framer = LineFramer()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { Syscall.read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            let chunk = Array(buffer[0..<n])
            if direction == .err { tail.append(chunk) }
            append(framer.feed(chunk), direction)
        }
        append(framer.finish().map { [$0] } ?? [], direction)
        close(fd)
        monitor.locked {
            openOutputs -= 1
            monitor.broadcast()
        }
    }

    private func append(_ outputs: [LineFramer.Output], _ direction: RawJournal.Direction) {
        guard !outputs.isEmpty else { return }
        monitor.locked {
            let t = seconds()
            for output in outputs {
                let line: [UInt8] = switch output {
                case .line(let line): line
                case .overLimit(let preview, _): preview
                }
                appendRetryingLocked(direction, line, t: t)
            }
            publishLocked()
        }
    }

    /// Appends one record (the lock held), retrying until it is written: while the journal
    /// cannot be written (a full disk) this thread waits here, so the agent's pipe is not read
    /// and the agent blocks on it, as on a slow disk; nothing is dropped. What was written before
    /// the failure is published first; the daemon hears `condition` when it starts and ends.
    /// Returns the record's offset; nil only if the journal refuses every append (`needsRepair`).
    @discardableResult
    private func appendRetryingLocked(_ direction: RawJournal.Direction, _ line: [UInt8], t: Double) -> Int64? {
        var pause = 0.05
        while true {
            do {
                let offset = try journal.append(direction: direction, line: line, t: t, sync: false)
                if diskFull != nil {
                    diskFull = nil
                    log("the journal can be written again; reading the agent again")
                    sendLocked(.condition(diskFull: false, message: ""))
                }
                return offset
            } catch {
                if error.code == .needsRepair {
                    log("could not append to the journal, which needs repair: \(error)")
                    return nil
                }
                if diskFull == nil {
                    diskFull = error.message
                    log("cannot write the journal (\(error.message)); holding the agent back and retrying until it can")
                    publishLocked()
                    sendLocked(.condition(diskFull: true, message: error.message))
                }
                monitor.wait(seconds: pause)
                pause = min(pause * 2, 1)
            }
        }
    }

    /// Syncs the journal and tells the daemon its new durable end (the lock held). A failed sync
    /// publishes nothing: the next one covers the same records.
    private func publishLocked() {
        guard journal.endOffset > durableEnd else { return }
        do { try journal.sync() } catch {
            log("could not sync the journal: \(error)")
            return
        }
        durableEnd = journal.endOffset
        sendLocked(.journal(end: durableEnd))
    }

    // MARK: The agent's input

    private func writeStdin(_ fd: Int32) {
        var broken = false
        while true {
            let next: [UInt8]? = monitor.locked {
                while stdinQueue.isEmpty && !stdinClosed { monitor.wait() }
                return stdinQueue.isEmpty ? nil : stdinQueue.removeFirst()
            }
            guard let bytes = next else { break }
            if broken { continue }
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { Syscall.write(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { broken = true; break }
                offset += n
            }
        }
        close(fd)
    }

    // MARK: The daemon

    private func serve(_ listener: Int32) {
        while true {
            var poll = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let timeout: Int32 = options.orphanGrace == nil ? -1 : 500
            let ready = Glibc.poll(&poll, 1, timeout)
            if ready == 0 {
                checkGrace()
                continue
            }
            let fd = Glibc.accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            converse(fd)
            // Released: no daemon may adopt the shim again (it would record the exit twice).
            if monitor.locked({ released }) {
                unlink(files.socket)
                close(listener)
                return
            }
        }
    }

    private func checkGrace() {
        guard let grace = options.orphanGrace else { return }
        let expired = monitor.locked { exit == nil && !terminating && ShimMonitor.monotonicSeconds() - lastDisconnect >= grace }
        if expired {
            log("no daemon for \(grace) s: ending the agent")
            terminate(grace: 3)
        }
    }

    /// Serves one daemon until it hangs up.
    private func converse(_ fd: Int32) {
        monitor.locked {
            connection = fd
            // The terminals ride in `state` (a field older daemons ignore; its presence says this
            // shim runs terminals).
            var state = ShimMessage.state(journalStart: journalStart, journalEnd: durableEnd, agentPID: agentPID, exit: exit).json.objectValue ?? JSONObject()
            state["terminals"] = .array(terminals.sorted { $0.key < $1.key }.map { id, held in
                ShimTerminalState(id: id, key: held.key, exit: terminalExits[id]).json
            })
            sendLocked(json: .object(state))
            if let diskFull { sendLocked(.condition(diskFull: true, message: diskFull)) }
        }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        reading: while true {
            let n = buffer.withUnsafeMutableBytes { Syscall.read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            pending += buffer[0..<n]
            var messages: [ShimMessage] = []
            for line in ShimMessage.takeLines(from: &pending) {
                if let json = try? JSONParser.parse(line), let message = ShimMessage(json: json) {
                    messages.append(message)
                } else {
                    log("ignored a message that is not one: \(Preview.text(line))")
                }
            }
            if handle(messages) { break reading }
        }
        monitor.locked {
            connection = -1
            lastDisconnect = ShimMonitor.monotonicSeconds()
        }
        close(fd)
    }

    /// Handles a batch of messages; true once released.
    private func handle(_ messages: [ShimMessage]) -> Bool {
        var lines: [[UInt8]] = []
        for message in messages {
            switch message {
            case .line(let text): lines.append(Array(text.utf8))
            case .closeStdin:
                flushLines(&lines)
                monitor.locked { stdinClosed = true; monitor.broadcast() }
            case .signal(let signal):
                flushLines(&lines)
                monitor.locked { if exit == nil { _ = kill(-agentPID, signal) } }
            case .terminate(let grace):
                flushLines(&lines)
                terminate(grace: Double(grace) / 1000)
            case .release:
                let done = monitor.locked {
                    if exit != nil { released = true; monitor.broadcast() }
                    return released
                }
                if done { return true }
            case .terminalCreate(let spec): createTerminal(spec)
            case .terminalRead(let ref, let id):
                monitor.locked {
                    let output = terminals[id]?.terminal.output ?? (text: "", truncated: false)
                    sendLocked(.terminalOutput(ref: ref, id: id, output: output.text, truncated: output.truncated, exit: terminalExits[id]))
                }
            case .terminalKill(let id):
                if let terminal = monitor.locked({ terminals[id]?.terminal }) { Task { _ = await terminal.process.terminate(grace: .seconds(2)) } }
            case .terminalRelease(let id):
                if let terminal = monitor.locked({ terminals.removeValue(forKey: id)?.terminal }) {
                    Task { _ = await terminal.process.terminate(grace: .seconds(2)) }
                }
            case .hello, .state, .journal, .exit, .condition, .terminalStarted, .terminalOutput, .terminalExit:
                break
            }
        }
        flushLines(&lines)
        return false
    }

    /// Journals the daemon's lines (one sync), then queues them for the agent's stdin.
    private func flushLines(_ lines: inout [[UInt8]]) {
        guard !lines.isEmpty else { return }
        monitor.locked {
            let t = seconds()
            for line in lines {
                appendRetryingLocked(.in, line, t: t)
                if !stdinClosed { stdinQueue.append(line + [0x0A]) }
            }
            publishLocked()
            monitor.broadcast()
        }
        lines = []
    }

    /// Starts the terminal for `spec.key`, once: a key it has seen answers with that terminal.
    private func createTerminal(_ spec: ShimTerminalSpec) {
        monitor.locked {
            if let (id, _) = terminals.first(where: { $0.value.key == spec.key }) {
                sendLocked(.terminalStarted(key: spec.key, id: id, error: nil))
                return
            }
            nextTerminal += 1
            let id = "term-\(nextTerminal)"
            let process: ChildProcess
            do {
                process = try ChildProcess.spawn(executable: spec.executable, arguments: spec.arguments, environment: spec.environment,
                                                 workingDirectory: spec.workingDirectory)
            } catch {
                sendLocked(.terminalStarted(key: spec.key, id: id, error: "cannot start \(spec.executable): \(error)"))
                return
            }
            terminals[id] = (spec.key, ClientTerminal(id: id, process: process, limit: max(0, spec.limit)))
            log("terminal \(id) (\(process.pid)): \(([spec.executable] + spec.arguments).joined(separator: " "))")
            sendLocked(.terminalStarted(key: spec.key, id: id, error: nil))
            Task {
                let status = await process.wait()
                self.monitor.locked {
                    self.terminalExits[id] = status
                    self.sendLocked(.terminalExit(id: id, status: status))
                }
            }
        }
    }

    /// Ends every terminal (the agent exited: no one is left to ask for them).
    private func endTerminals() {
        let all = monitor.locked { () -> [ClientTerminal] in
            defer { terminals = [:] }
            return terminals.values.map(\.terminal)
        }
        for terminal in all { Task { _ = await terminal.process.terminate(grace: .seconds(1)) } }
    }

    private func sendLocked(_ message: ShimMessage) {
        sendLocked(json: message.json)
    }

    private func sendLocked(json: JSONValue) {
        guard connection >= 0 else { return }
        let bytes = Array((JSONWriter.string(json) + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { nucleic_send_nosignal(connection, $0.baseAddress, UInt($0.count)) }
            if n == -Int(EINTR) { continue }
            guard n > 0 else {
                // The daemon is gone; its read loop notices and hangs up.
                shutdown(connection, Int32(SHUT_RDWR))
                return
            }
            offset += n
        }
    }

    // MARK: Ending

    /// SIGINT to the agent's group; then SIGTERM and SIGKILL to the group and to every process
    /// the agent started (`containment`), `grace` seconds apart while any of them runs.
    private func terminate(grace: Double) {
        let go = monitor.locked { () -> Bool in
            guard !terminating, exit == nil else { return false }
            terminating = true
            return true
        }
        guard go else { return }
        _ = startDetachedThread(name: "shim-terminate") { [self] in
            for signal in [SIGINT, SIGTERM, SIGKILL] {
                // SIGINT is the agent's own "stop"; SIGTERM and SIGKILL go to everything it started.
                let everyone = signal != SIGINT
                monitor.locked { if exit == nil { _ = kill(-agentPID, signal) } }
                if everyone { containment?.signalAll(signal) }
                let deadline = ShimMonitor.monotonicSeconds() + grace
                var over = false
                while true {
                    let exited = monitor.locked { exit != nil }
                    over = exited && (!everyone || containment?.members().isEmpty != false)
                    if over || ShimMonitor.monotonicSeconds() >= deadline { break }
                    monitor.locked { if exit == nil { monitor.wait(seconds: min(0.05, max(0.001, deadline - ShimMonitor.monotonicSeconds()))) } }
                    if exited { usleep(20_000) }
                    // What forked since the signal gets it too (SIGKILL cannot be ignored; the rest may be).
                    if signal == SIGKILL { containment?.signalAll(signal) }
                    ShimContainment.reapOrphans()
                }
                if over { return }
            }
        }
    }

    /// Waits for the agent to exit (its orphans are the `Reaper`'s: we are a subreaper); then
    /// records its exit once its output is journalled.
    private func reapAgent() {
        var status: ChildProcess.ExitStatus = .exited(-1)
        var raw: Int32 = 0
        var rc: Int32
        rc = Syscall.waitpid(agentPID, &raw, 0)
        if rc == agentPID {
            status = nucleic_wifsignaled(raw) != 0 ? .signaled(nucleic_wtermsig(raw)) : .exited(nucleic_wexitstatus(raw))
        }
        ChildProcess.Registry.release(agentPID)
        Reaper.nudge()
        monitor.locked {
            // A grandchild may hold the pipes open: wait for EOF a little, not for ever.
            // While the journal cannot be written the readers hold the agent's last lines: wait.
            var deadline = ShimMonitor.monotonicSeconds() + 2
            while openOutputs > 0 && (ShimMonitor.monotonicSeconds() < deadline || diskFull != nil) {
                if diskFull != nil { deadline = ShimMonitor.monotonicSeconds() + 2 }
                monitor.wait(seconds: max(0.01, min(0.5, deadline - ShimMonitor.monotonicSeconds())))
            }
            // The exit gets a record of its own, which the daemon's exit events point at.
            let recordOffset = appendRetryingLocked(.err, Array("nucleic shim: the agent \(status)".utf8), t: seconds())
            var pause = 0.05
            while true {
                do {
                    try journal.sync()
                    break
                } catch {
                    log("could not sync the journal: \(error)")
                    monitor.wait(seconds: pause)
                    pause = min(pause * 2, 1)
                }
            }
            durableEnd = journal.endOffset
            let tailText = String(decoding: tail.suffix(2000), as: UTF8.self)
            let ended = ShimExit(status: status, stderrTail: tailText, journalEnd: durableEnd, recordOffset: recordOffset)
            exit = ended
            Self.writeFile(files.exit, JSONWriter.string(ended.json) + "\n")
            sendLocked(.exit(ended))
            monitor.broadcast()
        }
    }

    private func awaitRelease() {
        monitor.locked {
            while !released { monitor.wait() }
        }
    }

    func log(_ message: String) {
        let line = "nucleic shim \(getpid()): \(message)\n"
        _ = line.withCString { Glibc.write(2, $0, strlen($0)) }
    }
}

/// Why the shim could not start.
public struct ShimError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
