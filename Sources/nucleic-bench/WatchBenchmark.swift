#if canImport(Glibc)
import Glibc
#endif
import NucleicCommandLine
import NucleicProtocol
import NucleicRuntime
import NucleicSockets
import NucleicSync
import NucleicSystem
import Synchronization

/// `nucleic-bench watch`: many busy sessions streaming into one `nucleic watch` on a terminal —
/// the view's CPU, the frames it draws a second, and how long an approval takes from the host
/// to its card on the screen, each beside a peer in the same run (docs/BENCHMARKS.md, "watch").
enum WatchBenchmark: BenchCommand {
    static let name = "watch"
    static let summary = "busy sessions into one `nucleic watch`: its CPU, frames/s, approval → card latency vs a plain subscriber"
    static let usage = """
        usage: nucleic-bench watch [--sessions N] [--deltas N] [--pace N] [--speed recorded|max]
                                   [--approvals N] [--width N] [--height N] [--nucleic PATH] [--keep]

        A SessionHost in this process, served by a LocalServer on the socket of its own
        NUCLEIC_HOME, runs --sessions busy replay sessions (a generated Claude turn of --deltas
        streamed partials each; the agent paced at --pace lines a second with --speed recorded,
        as fast as it can with --speed max; a host rule allows their one Bash call, so none waits
        for a person) and one more session whose turn is --approvals network calls, each waiting
        for a person. Three clients watch:

          watch (terminal)   the built `nucleic watch` on a pseudo-terminal of --width × --height
                             (util-linux `script`), colour on: the full-screen view
          watch (lines)      the same binary with standard output a pipe: the same client core
                             and subscriptions, one line per change, nothing drawn
          subscriber         a plain client in this process subscribed to the approvals' session

        Each approval is answered "allow" by the subscriber once the terminal shows its card and
        the line view has printed it; the next one follows. For each approval it times, from
        the moment the host announced it (a listener inside the host):

          → subscriber       its approvalRequested reaching the plain subscriber
          → lines            the line view printing it
          → card             the terminal's screen showing its card (the bytes of the frame)

        and, for the two watch processes over their whole life, CPU time (from /proc) and the
        frames the terminal view drew (its NUCLEIC_WATCH_STATS count). The first two approvals
        are warm-up and not counted. Nothing asserts a time. Build with -c release.

        Options:
          --sessions N    busy sessions (default 50)
          --deltas N      streamed partials in each busy session's turn (default 3000)
          --pace N        lines a second each busy agent writes with --speed recorded (default 100)
          --speed S       the host's replay speed: recorded (default) or max
          --approvals N   approvals answered one at a time (default 100)
          --width N       the terminal's columns (default 160)
          --height N      the terminal's rows (default 48)
          --nucleic PATH  the nucleic binary (the view, shims and replay agents; default: next to this one)
          --keep          keep the temporary folders
        """

    struct Options {
        var sessions = 50
        var deltas = 3_000
        var pace = 100
        var speed = "recorded"
        var approvals = 100
        var width = 160
        var height = 48
        var nucleic: String
        var keep = false

        init(_ arguments: [String]) throws {
            let args = try ArgumentParser(arguments, valued: ["sessions", "deltas", "pace", "speed", "approvals", "width", "height", "nucleic"],
                                          boolean: ["keep"], short: [:], allowsPositionals: false, usage: usage)
            sessions = try args.integer("sessions", default: sessions, in: 0...500, usage: usage)
            deltas = try args.integer("deltas", default: deltas, in: 10...10_000_000, usage: usage)
            pace = try args.integer("pace", default: pace, in: 1...1_000_000, usage: usage)
            speed = args["speed"] ?? speed
            guard ["recorded", "max"].contains(speed) else { throw UsageError(message: "--speed is recorded or max", usage: usage) }
            approvals = try args.integer("approvals", default: approvals, in: 3...100_000, usage: usage)
            width = try args.integer("width", default: width, in: 80...500, usage: usage)
            height = try args.integer("height", default: height, in: 20...200, usage: usage)
            nucleic = args.nucleicBinary()
            keep = args.flag("keep")
        }
    }

    /// The marker each approval's command carries, found in the views' output.
    static func command(_ i: Int) -> String { "curl -s https://example.com/item-\(i)-end" }

    struct Result {
        var subscriber: [Double] = []
        var lines: [Double] = []
        var card: [Double] = []
        var terminal = ViewUse()
        var lineView = ViewUse()
        /// Events the host announced per second while the approvals ran.
        var eventsPerSecond = 0.0
        var busyFinished = 0
    }

    struct ViewUse {
        var cpuSeconds = 0.0
        var wallSeconds = 0.0
        var frames: Int?
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments)
        signal(SIGPIPE, SIG_IGN)
        let r = try runBlocking { try await measure(options) }.get()
        let floor = ApprovalsBenchmark.quantile(r.subscriber, 0.5), floor99 = ApprovalsBenchmark.quantile(r.subscriber, 0.99)
        func row(_ label: String, _ samples: [Double]) -> [String] {
            [label] + [0.5, 0.99].map { Format.fixed(ApprovalsBenchmark.quantile(samples, $0) * 1e3, 2) + " ms" }
                + [Format.fixed(ApprovalsBenchmark.quantile(samples, 0.5) / floor, 1) + "×",
                   Format.fixed(ApprovalsBenchmark.quantile(samples, 0.99) / floor99, 1) + "×"]
        }
        func use(_ label: String, _ u: ViewUse) -> [String] {
            [label, Format.fixed(u.cpuSeconds, 2) + " s", Format.fixed(u.wallSeconds, 1) + " s", Format.fixed(100 * u.cpuSeconds / max(u.wallSeconds, 1e-9), 1) + "%",
             u.frames.map { Format.fixed(Double($0) / max(u.wallSeconds, 1e-9), 1) } ?? "—"]
        }
        let pace = options.speed == "max" ? "as fast as they can" : "\(options.pace) lines/s each"
        Output.standardOutput("""
            Watch: \(options.sessions) busy sessions (\(pace); \(Format.count(r.eventsPerSecond)) events/s at the host while the approvals ran, \(r.busyFinished) finished before the end), \(r.card.count) approvals timed, a \(options.width)×\(options.height) terminal
            \(Format.table([
                ["approval announced →", "p50", "p99", "p50 × subscriber", "p99 × subscriber"],
                row("subscriber", r.subscriber),
                row("watch (lines)", r.lines),
                row("watch (terminal): card", r.card),
            ]))

            \(Format.table([
                ["", "CPU", "alive", "CPU / alive", "frames/s"],
                use("watch (terminal)", r.terminal),
                use("watch (lines)", r.lineView),
                ["terminal × lines", Format.fixed(r.terminal.cpuSeconds / max(r.lineView.cpuSeconds, 1e-9), 1) + "×", "", "", ""],
            ]))
            """)
        return 0
    }

    static func measure(_ options: Options) async throws -> Result {
        let fixtures = try Scratch.make("nucleic-bench-watch-fixtures")
        let busy = fixtures.root + "/busy.jsonl", asks = fixtures.root + "/approvals.jsonl"
        _ = try SessionFixture.write(to: busy, deltas: options.deltas, seed: 7, linesPerSecond: Double(options.pace))
        try ApprovalFixture.write(to: asks, approvals: options.approvals, command: command)
        let rig = try await HostRig.make("nucleic-bench-watch", nucleic: options.nucleic, maxRunning: options.sessions + 1, speed: options.speed)
        // The busy sessions' one Bash call is allowed by a rule: the only approvals are the timed ones.
        _ = try await rig.host.rules(.add(rule: "Bash(ls -la src)", behavior: .allow, project: nil, sessionID: nil, message: nil), by: "user:nucleic-bench")
        let socket = try SocketPath.resolve(home: rig.scratch.home.path)
        let result = try await ResubscribeBenchmark.served(rig.host, socket: socket) {
            try await run(options, rig: rig, socket: socket, busy: busy, asks: asks)
        }
        await rig.finish(keep: options.keep)
        if !options.keep { await fixtures.remove() }
        return result
    }

    static func run(_ options: Options, rig: HostRig, socket: String, busy: String, asks: String) async throws -> Result {
        var result = Result()
        // The host's own announcement of each approval: the clock every latency starts from.
        let arrivals = Sightings()
        let events = SharedCounter()
        let finished = FinishedSessions()
        let notifications = await rig.host.listen()
        let listener = Task {
            for await notification in notifications {
                switch notification {
                case .approvalRequested(let request):
                    if let i = request.input["command"]?.stringValue.flatMap(Sightings.index) { arrivals.note(i, at: monotonicSeconds()) }
                case .events(_, let batch): events.add(batch.count)
                case .sessionUpdated(let s) where s.status == .finished: finished.ids.withLock { _ = $0.insert(s.sessionID) }
                default: break
                }
            }
        }
        defer { listener.cancel() }

        SessionsBenchmark.progress("watch: starting \(options.sessions) busy sessions…")
        for n in 0..<options.sessions { _ = try await rig.start(busy, prompt: "busy \(n)") }

        // The views inherit this process's environment, pointed at the rig's home.
        setenv("NUCLEIC_HOME", rig.scratch.home.path, 1)
        setenv("NUCLEIC_NOTIFY_DESKTOP", "off", 1)
        setenv("NUCLEIC_WATCH_STATS", "1", 1)
        setenv("TERM", "xterm-256color", 1)
        unsetenv("NO_COLOR")
        let quoted = "'" + options.nucleic.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        let terminal = try ChildProcess.spawn(executable: "script", arguments: [
            "-qfec", "stty rows \(options.height) cols \(options.width) && exec \(quoted) watch", "/dev/null",
        ])
        let lineView = try ChildProcess.spawn(executable: options.nucleic, arguments: ["watch"])
        let started = monotonicSeconds()
        let screen = ViewOutput(terminal.stdout), lines = ViewOutput(lineView.stdout)
        let drains = [Task { for await _ in terminal.stderr {} }, Task { for await _ in lineView.stderr {} }]
        try await screen.wait(for: "Connected", seconds: 60)
        try await lines.wait(for: "Connected", seconds: 60)
        guard let view = childPID(of: terminal.pid) else { throw BenchError(message: "no `nucleic watch` under script (pid \(terminal.pid))") }

        SessionsBenchmark.progress("watch: \(options.approvals) approvals, answered as each card shows…")
        let client = try await BenchClient.connect(socket)
        defer { client.close() }
        let id = try await rig.start(asks, prompt: "Fetch every item.")
        var frames = client.connection.frames.makeAsyncIterator()
        try await client.connection.send(WireMessages.encode(ClientMsg(.subscribe(sessionID: id, sinceSeq: nil, verbosity: .full), requestID: 1)))
        let eventsBefore = events.current, windowStart = monotonicSeconds()
        var pending: [ApprovalID: Double] = [:]
        for i in 0..<options.approvals {
            // The subscriber's sight of approval i (the snapshot's, for one pending before it subscribed).
            var approval: ApprovalID?
            while approval == nil {
                guard let frame = await frames.next() else { throw BenchError(message: "the subscriber's connection closed") }
                let message = try WireMessages.decodeHost(frame)
                let now = monotonicSeconds()
                switch message.body {
                case .approvalRequested(let r) where Sightings.index(r.input["command"]?.stringValue ?? "") == i:
                    approval = r.id
                    pending[r.id] = now
                case .snapshot(_, _, let waiting, _):
                    if let r = waiting.first(where: { Sightings.index($0.input["command"]?.stringValue ?? "") == i }) { approval = r.id; pending[r.id] = now }
                case .error(_, let text, _): throw BenchError(message: "the subscriber was refused: \(text)")
                default: break
                }
            }
            let deadline = monotonicSeconds() + 60
            while screen.sightings.time(i) == nil || lines.sightings.time(i) == nil || arrivals.time(i) == nil {
                guard monotonicSeconds() < deadline else {
                    throw BenchError(message: "approval \(i) never showed: card \(screen.sightings.time(i) != nil), line \(lines.sightings.time(i) != nil); the screen ends:\n\(screen.tail())")
                }
                try await Task.sleep(for: .milliseconds(1))
            }
            let t0 = arrivals.time(i)!
            if i >= 2 {
                result.subscriber.append(pending[approval!]! - t0)
                result.lines.append(lines.sightings.time(i)! - t0)
                result.card.append(screen.sightings.time(i)! - t0)
            }
            try await client.connection.send(WireMessages.encode(ClientMsg(.approvalRespond(approvalID: approval!, decision: .allow), requestID: Int64(10 + i))))
        }
        let window = monotonicSeconds() - windowStart
        result.eventsPerSecond = Double(events.current - eventsBefore) / window
        result.busyFinished = finished.ids.withLock { $0.count }

        result.terminal.cpuSeconds = cpuSeconds(of: view) ?? 0
        result.lineView.cpuSeconds = cpuSeconds(of: lineView.pid) ?? 0
        let alive = monotonicSeconds() - started
        result.terminal.wallSeconds = alive
        result.lineView.wallSeconds = alive
        try await terminal.write(Array("q".utf8))
        _ = try lineView.signal(SIGTERM, group: false)
        _ = await lineView.wait(timeout: .seconds(10))
        _ = await terminal.wait(timeout: .seconds(10))
        for drain in drains { drain.cancel() }
        // "watch: N frames", printed on the terminal once it is restored.
        if let line = screen.tail().split(separator: "\n").last(where: { $0.contains("watch: ") && $0.contains(" frames") }),
           let n = Int(line.split(separator: "watch: ").last?.prefix { $0.isNumber } ?? "") {
            result.terminal.frames = n
        }
        return result
    }

    /// The first child of `pid` (`script`'s: the view it runs), from /proc.
    static func childPID(of pid: Int32) -> Int32? {
        guard let text = WholeFile.text("/proc/\(pid)/task/\(pid)/children") else { return nil }
        return text.split(separator: " ").first.flatMap { Int32($0.filter(\.isNumber)) }
    }

    /// User + system CPU seconds of a live process (`/proc/PID/stat` fields 14 and 15).
    static func cpuSeconds(of pid: Int32) -> Double? {
        guard let text = WholeFile.text("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime 14, stime 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// The sessions that have finished their turn.
final class FinishedSessions: Sendable {
    let ids = Mutex<Set<SessionID>>([])
}

/// When each approval (by its index) was first seen, in monotonic seconds.
final class Sightings: Sendable {
    private let seen = Mutex<[Int: Double]>([:])

    func note(_ i: Int, at t: Double) { seen.withLock { if $0[i] == nil { $0[i] = t } } }
    func time(_ i: Int) -> Double? { seen.withLock { $0[i] } }

    /// The index in an approval's command (`WatchBenchmark.command`).
    static func index(_ command: String) -> Int? {
        guard let rest = command.split(separator: "item-", maxSplits: 1).dropFirst().first,
              let digits = rest.split(separator: "-end", maxSplits: 1, omittingEmptySubsequences: false).first else { return nil }
        return Int(digits)
    }
}

/// A view's output, read as it comes: every approval marker noted the moment its bytes arrive,
/// and the last bytes kept for the end of the run.
final class ViewOutput: Sendable {
    final class Tail: Sendable {
        let bytes = Mutex<[UInt8]>([])
    }

    let sightings = Sightings()
    private let last = Tail()
    private let reader: Task<Void, Never>

    init(_ stream: AsyncStream<[UInt8]>) {
        let sightings = self.sightings, last = self.last
        reader = Task {
            let marker = Array("item-".utf8)
            for await chunk in stream {
                let now = monotonicSeconds()
                let bytes = last.bytes.withLock { tail -> [UInt8] in
                    let joined = Array(tail.suffix(64)) + chunk
                    tail = Array((tail + chunk).suffix(16_384))
                    return joined
                }
                var i = 0
                while i + marker.count < bytes.count {
                    if bytes[i] == marker[0], Array(bytes[i..<(i + marker.count)]) == marker {
                        var j = i + marker.count
                        var n = 0
                        var digits = 0
                        while j < bytes.count, (48...57).contains(bytes[j]) { n = n * 10 + Int(bytes[j] - 48); j += 1; digits += 1 }
                        if digits > 0, j + 4 <= bytes.count, bytes[j..<(j + 4)].elementsEqual("-end".utf8) { sightings.note(n, at: now) }
                        i = j
                    } else {
                        i += 1
                    }
                }
            }
        }
    }

    deinit { reader.cancel() }

    /// The last bytes, as text.
    func tail() -> String { String(decoding: last.bytes.withLock { $0 }, as: UTF8.self) }

    func wait(for text: String, seconds: Double) async throws {
        let deadline = monotonicSeconds() + seconds
        while !tail().contains(text) {
            guard monotonicSeconds() < deadline else { throw BenchError(message: "the view never showed \"\(text)\"; it ends:\n\(tail())") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
