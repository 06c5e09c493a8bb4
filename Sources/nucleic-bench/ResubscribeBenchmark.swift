#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicRuntime
import NucleicStore
import NucleicSync
import NucleicSockets
import NucleicSystem
import NucleicCommandLine

/// `nucleic-bench resubscribe`: how soon a client that reconnects gets its first event, into a
/// long session, while the daemon that ran it still runs (live) and after a restart (stored),
/// measured against a ping round trip on the same socket (docs/BENCHMARKS.md, "Resubscribe").
enum ResubscribeBenchmark: BenchCommand {
    static let name = "resubscribe"
    static let summary = "subscribe sinceSeq into a long session, live and after a restart, vs a ping round trip"
    static let usage = """
        usage: nucleic-bench resubscribe [--events N] [--repeat N] [--seed N] [--nucleic PATH] [--keep]

        One replay session runs a generated Claude fixture (--events partials, replay speed max) to
        its end in a SessionHost in this process, served by a LocalServer on a Unix socket. A client
        in this process then connects (hello, welcome) and times, --repeat times each:

          ping                 ping → pong: the socket round trip, the floor of every row
          sinceSeq last−100    subscribe → the reply carrying the last 100 events
          sinceSeq 0           subscribe → the reply carrying the first page (200 events)

        first with the session live (the host that ran it), then stored: the host shut down and a
        new one opened on the same folder, as after a daemon restart. The stored rows also time the
        repairing open the host falls back to when a transcript needs repair (a pass over the whole
        file), the read every stored subscribe paid before transcripts were read by seeking.

        Nothing asserts a time; the same seed gives the same fixture. Build with -c release.

        Options:
          --events N      partials in the fixture (default 1000000: about 1.05M events)
          --repeat N      timings per row (default 30)
          --seed N        fixture seed (default 1)
          --nucleic PATH  the nucleic binary (the replay agent; default: next to this one)
          --keep          keep the temporary folders
        """

    struct Options {
        var events = 1_000_000
        var repeats = 30
        var seed = 1
        var nucleic: String
        var keep = false

        init(_ arguments: [String]) throws {
            let args = try ArgumentParser(arguments, valued: ["events", "repeat", "seed", "nucleic"], boolean: ["keep"], short: [:],
                                          allowsPositionals: false, usage: usage)
            events = try args.integer("events", default: events, in: 1_000...100_000_000, usage: usage)
            repeats = try args.integer("repeat", default: repeats, in: 3...10_000, usage: usage)
            seed = try args.integer("seed", default: seed, in: 0...Int.max, usage: usage)
            nucleic = args.nucleicBinary()
            keep = args.flag("keep")
        }
    }

    /// The timings of one host: the ping floor, both subscribes, and (stored only) the repairing open.
    struct Rows {
        var ping: [Double] = []
        var recent: [Double] = []
        var fromStart: [Double] = []
        var repairingOpen: [Double] = []
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments)
        signal(SIGPIPE, SIG_IGN)
        let (events, live, stored) = try runBlocking { try await measure(options) }.get()
        let floor = SessionsBenchmark.percentiles(live.ping).median
        func row(_ label: String, _ samples: [Double]) -> [String] {
            let p = SessionsBenchmark.percentiles(samples)
            return [label, Format.fixed(p.median * 1e3, 3) + " ms", Format.fixed(p.p95 * 1e3, 3) + " ms", Format.fixed(p.median / floor, 1) + "×"]
        }
        Output.standardOutput("""
            Resubscribe into one session of \(Format.count(Double(events))) events (\(options.repeats) timings a row; ratio: median ÷ ping median)
            \(Format.table([
                ["", "median", "p95", "× ping"],
                row("live: ping round trip", live.ping),
                row("live: sinceSeq last−100 → reply", live.recent),
                row("live: sinceSeq 0 → first page", live.fromStart),
                row("stored: ping round trip", stored.ping),
                row("stored: sinceSeq last−100 → reply", stored.recent),
                row("stored: sinceSeq 0 → first page", stored.fromStart),
                row("stored: repairing open + last 100", stored.repairingOpen),
            ]))
            """)
        return 0
    }

    static func measure(_ options: Options) async throws -> (Int64, Rows, Rows) {
        let fixtureFolder = try Scratch.make("nucleic-bench-fixture")
        let fixture = fixtureFolder.root + "/long.jsonl"
        let summary = try SessionFixture.write(to: fixture, deltas: options.events, seed: UInt64(options.seed), linesPerSecond: 1000)
        SessionsBenchmark.progress("resubscribe: fixture \(summary.records) records, \(Format.megabytes(summary.bytes)); replaying it…")
        let rig = try await HostRig.make("nucleic-bench-resubscribe", nucleic: options.nucleic, maxRunning: 1, speed: "max")
        let watcher = await HostWatcher.start(rig.host, expecting: 1)
        let id = try await rig.start(fixture, prompt: "Walk the codebase and summarise it.")
        _ = try await watcher.value
        let lastSeq = try await rig.host.summary(id).lastSeq
        SessionsBenchmark.progress("resubscribe: \(lastSeq) events stored; timing the live host…")
        let socket = rig.scratch.root + "/s.sock"
        let live = try await served(rig.host, socket: socket) { try await rows(socket, id, lastSeq: lastSeq, options) }

        await rig.host.shutdown()
        SessionsBenchmark.progress("resubscribe: host restarted; timing the stored session…")
        let configuration = SessionHost.Configuration(home: rig.scratch.home, adapters: [:], selfExecutable: options.nucleic,
                                                      maxRunning: 1, replaySpeed: "max")
        let reopened = try await SessionHost.open(configuration)
        var stored = try await served(reopened, socket: socket) { try await rows(socket, id, lastSeq: lastSeq, options) }
        let folder = SessionFolder(home: rig.scratch.home.path, session: id)
        for _ in 0..<options.repeats {
            let started = monotonicSeconds()
            let transcript = try folder.openTranscript()
            let events = try transcript.read(from: lastSeq - 99).collect()
            transcript.close()
            stored.repairingOpen.append(monotonicSeconds() - started)
            guard events.count == 100 else { throw BenchError(message: "the repairing open read \(events.count) events, not 100") }
        }
        await reopened.shutdown()
        await rig.finish(keep: options.keep)
        if !options.keep { await fixtureFolder.remove() }
        return (lastSeq, live, stored)
    }

    /// Runs `body` while a LocalServer serves `host` on `socket`.
    static func served<T: Sendable>(_ host: SessionHost, socket: String, _ body: () async throws -> T) async throws -> T {
        unlink(socket)
        let server = LocalServer(host: host, listener: try UnixListener(path: socket), hostVersion: "bench") { _ in }
        let serving = Task { await server.run() }
        defer { server.listener.close() }
        let result = try await body()
        server.listener.close()
        await serving.value
        return result
    }

    static func rows(_ socket: String, _ id: SessionID, lastSeq: Int64, _ options: Options) async throws -> Rows {
        var rows = Rows()
        let client = try await BenchClient.connect(socket)
        for _ in 0..<options.repeats {
            let started = monotonicSeconds()
            let pong = try await client.request(.ping)
            rows.ping.append(monotonicSeconds() - started)
            guard case .pong = pong.body else { throw BenchError(message: "ping answered with \(pong.type)") }
        }
        client.close()
        // The reply to a backlog from 0 holds its first page (ClientState.backlogFirstPageEvents).
        for (since, expected) in [(lastSeq - 100, 100), (0, 200)] {
            for _ in 0..<options.repeats {
                // A fresh connection each time, as a reconnecting client has: the previous
                // subscription's backlog is not still being sent to it.
                let client = try await BenchClient.connect(socket)
                let started = monotonicSeconds()
                let reply = try await client.request(.subscribe(sessionID: id, sinceSeq: since, verbosity: .full))
                let seconds = monotonicSeconds() - started
                client.close()
                guard case .events(_, let events) = reply.body, events.count == expected, events.first?.seq == since + 1 else {
                    throw BenchError(message: "subscribe sinceSeq \(since) answered with \(reply.type), not \(expected) events from \(since + 1)")
                }
                if since == 0 { rows.fromStart.append(seconds) } else { rows.recent.append(seconds) }
            }
        }
        return rows
    }
}

/// A minimal client of the local socket: one request at a time, its reply matched by id.
struct BenchClient {
    let connection: LocalConnection
    private let counter = SharedCounter()

    static func connect(_ socket: String) async throws -> BenchClient {
        let connection = try UnixClient.connect(path: socket)
        let client = BenchClient(connection: connection)
        let welcome = try await client.request(.hello(protocolVersion: LocalServer.protocolVersion, client: "nucleic-bench"))
        guard case .welcome = welcome.body else { throw BenchError(message: "hello answered with \(welcome.type)") }
        return client
    }

    /// Sends `body` and returns the message that answers it, skipping pushed ones.
    func request(_ body: ClientMsg.Body) async throws -> HostMsg {
        counter.add(1)
        let id = Int64(counter.current)
        try await connection.send(WireMessages.encode(ClientMsg(body, requestID: id)))
        var frames = connection.frames.makeAsyncIterator()
        while let frame = await frames.next() {
            let message = try WireMessages.decodeHost(frame)
            if message.requestID == id { return message }
        }
        throw BenchError(message: "the server closed the connection: \(connection.endReason.map { "\($0)" } ?? "no reason")")
    }

    func close() { connection.close() }
}
