#if canImport(Glibc)
import Glibc
import NucleicSystem
import NucleicCommandLine
#endif

/// `nucleic-bench sessions`: the session host under load, in this process, with real replay
/// agents, a real git repository, a real store and real files (docs/BENCHMARKS.md).
enum SessionsBenchmark: BenchCommand {
    static let name = "sessions"
    static let summary = "N concurrent replay sessions through a SessionHost; `nucleic ls` with 1,000 sessions; host memory vs transcript length"
    static let usage = """
        usage: nucleic-bench sessions [--sessions LIST] [--events N] [--long N] [--pace LINES]
                                      [--store-sessions N] [--repeat N] [--seed N] [--nucleic PATH]
                                      [--idle-sessions N] [--agent-ballast MB] [--only PHASES] [--keep] [--trace]

        Runs a real SessionHost in this process (a temporary NUCLEIC_HOME, a temporary git
        repository with one project) and measures, in three phases:

          throughput  N replay sessions at once (replay speed max, maxRunning = N), each playing
                      the same generated Claude fixture: thousands of stream partials and one
                      approval, answered allow through host.respond as it comes. Prints events/s
                      (every event the host numbered and wrote), host CPU seconds per 10k events
                      (getrusage SELF: this process is the host), the agents' CPU (getrusage
                      CHILDREN, once they are reaped), the host's peak RSS (VmHWM, reset per run),
                      each N's ratio to N = 1, host.sessions timed every 200 ms meanwhile, and the
                      disk's flush latency before and after (the host's rate follows it).
          ls          1,000 sessions (10 projects, seeded statuses, 3 past approvals each) written
                      through Store, then host.sessions(includeArchived:) timed, which is what
                      `nucleic ls` asks the daemon; then the whole CLI path: `nucleic serve` on
                      that data folder and `nucleic ls --json` run again and again, beside
                      `nucleic version` (the cost of starting the binary). Median and p95.
          memory      one session with a long fixture (default 200,000 partials): the host's RSS and
                      heap in use (malloc_info) at 10%, 50% and 100% of its events and 3 s after it
                      ended, beside how far the Session and the agent were ahead of what listeners
                      had heard. Twice: the agent paced at --pace lines a second (replay speed
                      recorded), below what the host can take, so that only the host's own state
                      could grow; then at max speed, where the agent runs ahead of the host.
          idle        --idle-sessions finished Claude-like sessions (a fake Claude Code speaking the
                      stream-json a turn needs, taking --resume, holding --agent-ballast MB): the
                      host's RSS and its shims' and agents' RSS, before and after the host ends
                      the idle agents (what --idle-timeout does), then one follow-up resumed.

        Scratch folders go in $TMPDIR: TMPDIR=/dev/shm takes the disk's flushes out of the numbers.
        The replay agent is the `nucleic` binary: build it first (swift build -c release), or give
        --nucleic PATH. Nothing here asserts a time; the same seed gives the same inputs.

        Options:
          --sessions LIST       concurrent sessions per throughput run (default 1,10,50)
          --events N            partials per session in the throughput fixture (default 4000)
          --long N              partials in the memory fixture (default 200000)
          --pace LINES          agent lines/s in the paced memory run (default 1000; 0 skips that run)
          --store-sessions N    sessions in the store for the ls phase (default 1000)
          --repeat N            timed runs per ls row (default 30)
          --seed N              generator seed (default 1)
          --nucleic PATH        the nucleic binary (default: next to this one)
          --idle-sessions N     finished sessions in the idle phase (default 20)
          --agent-ballast MB    memory each fake Claude holds in the idle phase (default 0)
          --only PHASES         comma-separated: throughput,ls,memory,idle (default all)
          --keep                keep the temporary folders (their paths are printed)
          --trace               also print every 20th memory sample (one a second)
        """

    enum Phase: String, CaseIterable {
        case throughput, ls, memory, idle
    }

    struct Options: Sendable {
        var sessions = [1, 10, 50]
        var events = 4000
        var long = 200_000
        var pace = 1000
        var storeSessions = 1000
        var repeats = 30
        var seed: UInt64 = 1
        var nucleic = ""
        var phases = Set(Phase.allCases)
        var keep = false
        var trace = false
        var idleSessions = 20
        var agentBallast = 0

        init(_ arguments: [String]) throws {
            let args = try ArgumentParser(arguments, valued: ["sessions", "events", "long", "pace", "store-sessions", "repeat", "seed", "nucleic", "only", "idle-sessions", "agent-ballast"],
                                          boolean: ["keep", "trace"], short: [:], allowsPositionals: false, usage: usage)
            if let list = args["sessions"] {
                let values = list.split(separator: ",").map { Int($0) }
                guard !values.isEmpty, values.allSatisfy({ ($0 ?? 0) >= 1 && ($0 ?? 0) <= 500 }) else {
                    throw UsageError(message: "--sessions takes numbers from 1 to 500, comma-separated, not '\(list)'", usage: usage)
                }
                sessions = values.map { $0! }
            }
            events = try args.integer("events", default: events, in: 100...10_000_000, usage: usage)
            long = try args.integer("long", default: long, in: 100...100_000_000, usage: usage)
            pace = try args.integer("pace", default: pace, in: 0...1_000_000, usage: usage)
            storeSessions = try args.integer("store-sessions", default: storeSessions, in: 1...1_000_000, usage: usage)
            repeats = try args.integer("repeat", default: repeats, in: 1...10_000, usage: usage)
            seed = UInt64(try args.integer("seed", default: 1, in: 0...Int.max, usage: usage))
            idleSessions = try args.integer("idle-sessions", default: idleSessions, in: 1...200, usage: usage)
            agentBallast = try args.integer("agent-ballast", default: agentBallast, in: 0...1024, usage: usage)
            keep = args.flag("keep")
            trace = args.flag("trace")
            if let list = args["only"] {
                let names = list.split(separator: ",").map(String.init)
                guard !names.isEmpty, names.allSatisfy({ Phase(rawValue: $0) != nil }) else {
                    throw UsageError(message: "--only takes phases from throughput,ls,memory,idle, not '\(list)'", usage: usage)
                }
                phases = Set(names.compactMap(Phase.init(rawValue:)))
            }
            nucleic = args.nucleicBinary()
            guard access(nucleic, X_OK) == 0 else {
                throw BenchError(message: "no nucleic binary at \(nucleic): build it (swift build -c release --product nucleic) or give --nucleic PATH")
            }
        }
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments)
        signal(SIGPIPE, SIG_IGN)
        Output.standardOutput("sessions: host in this process (pid \(getpid())), agents: \(options.nucleic) replay-agent; \(cpuCount()) CPUs\n")
        if options.phases.contains(.throughput) {
            let rows = try runBlocking { try await throughput(options) }.get()
            Output.standardOutput(throughputTable(rows, options) + "\n")
        }
        if options.phases.contains(.ls) {
            let result = try runBlocking { try await listLatency(options) }.get()
            Output.standardOutput(listTable(result, options) + "\n")
        }
        if options.phases.contains(.memory) {
            let runs = try runBlocking { try await memory(options) }.get()
            Output.standardOutput(memoryTable(runs, options))
        }
        if options.phases.contains(.idle) {
            let result = try runBlocking { try await idle(options) }.get()
            Output.standardOutput("\n" + idleTable(result))
        }
        return 0
    }

    static func cpuCount() -> Int { Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// The median and the 95th percentile (nearest rank) of `samples`.
    static func percentiles(_ samples: [Double]) -> (median: Double, p95: Double) {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return (0, 0) }
        let median = sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        let rank = Int((0.95 * Double(sorted.count)).rounded(.up))
        return (median, sorted[max(0, min(sorted.count - 1, rank - 1))])
    }

    /// Prints a progress line on stderr (the tables go to stdout).
    static func progress(_ text: String) { Output.standardError(text) }
}
