#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicRuntime
import Synchronization

/// The throughput phase: N replay sessions at once through one host.
extension SessionsBenchmark {
    struct ThroughputRow: Sendable {
        var sessions: Int
        /// Events the host numbered and wrote, all sessions (each session's `lastSeq`).
        var events: Int
        /// Events the listener was told of (fewer when some never reached listeners).
        var announced: Int
        /// Sessions whose first events never reached the listener, and how many events that was.
        var sessionsMissingFirstEvents = 0
        var missedEvents = 0
        /// From the first `startSession` to the last session's `finished`.
        var seconds: Double
        /// How long the N `startSession` calls took (worktrees, records, spawns), inside `seconds`.
        var startSeconds: Double
        var hostCPU: Double
        var agentsCPU: Double
        var peakRSS: Int
        var rssBefore: Int
        /// `host.sessions(includeArchived: false)` timed every 200 ms during the run, seconds.
        var listUnderLoad: [Double] = []
        /// `DiskProbe` before and after the run, seconds.
        var flushBefore: Double?
        var flushAfter: Double?
        /// The machine's 1-minute load average at the end of the run.
        var load: Double?

        var eventsPerSecond: Double { Double(events) / seconds }
        var hostCPUPer10k: Double { hostCPU / Double(events) * 10_000 }
    }

    static func throughput(_ options: Options) async throws -> [ThroughputRow] {
        let fixtureFolder = try Scratch.make("nucleic-bench-fixture")
        let fixture = fixtureFolder.root + "/session.jsonl"
        let summary = try SessionFixture.write(to: fixture, deltas: options.events, seed: options.seed)
        // Written back now, not during the runs: every event the host records waits for a disk
        // flush, and a flush waits for whatever else is being written back (see docs/BENCHMARKS.md).
        sync()
        progress("throughput: fixture \(summary.records) records (\(summary.deltas) partials, \(summary.approvals) approval), \(Format.megabytes(summary.bytes)) per session")
        var rows: [ThroughputRow] = []
        for n in options.sessions {
            progress("throughput: \(n) session\(n == 1 ? "" : "s")…")
            let row = try await throughputRun(sessions: n, fixture: fixture, options: options)
            progress("  \(row.events) events in \(Format.fixed(row.seconds, 2)) s")
            rows.append(row)
        }
        if !options.keep { await fixtureFolder.remove() }
        return rows
    }

    static func throughputRun(sessions n: Int, fixture: String, options: Options) async throws -> ThroughputRow {
        let rig = try await HostRig.make("nucleic-bench-sessions", nucleic: options.nucleic, maxRunning: n, speed: "max")
        sync()  // the previous run's files and folders, written back before this one starts
        let flushBefore = DiskProbe.fdatasyncLatency(in: rig.scratch.root)
        let watcher = await HostWatcher.start(rig.host, expecting: n)
        ProcessStats.trimHeap()
        ProcessStats.resetPeak()
        let rssBefore = ProcessStats.residentBytes()
        let cpuBefore = ProcessStats.selfCPU()
        let childrenBefore = ProcessStats.childrenCPU()
        let started = monotonicSeconds()
        let host = rig.host
        let listing = Mutex(true)
        let lister = Task {
            // What `nucleic ls` costs while the sessions stream: the same call, through the same
            // busy host actor and store queue.
            var samples: [Double] = []
            while listing.withLock({ $0 }) {
                try? await Task.sleep(for: .milliseconds(200))
                let t = monotonicSeconds()
                blackHole(try? await host.sessions(includeArchived: false))
                samples.append(monotonicSeconds() - t)
            }
            return samples
        }
        var ids: [SessionID] = []
        do {
            for i in 0..<n { ids.append(try await rig.start(fixture, prompt: "Walk the codebase and summarise it (\(i + 1) of \(n)).")) }
        } catch {
            watcher.cancel()
            listing.withLock { $0 = false }
            await rig.finish(keep: options.keep)
            throw error
        }
        let startSeconds = monotonicSeconds() - started
        let counts: [SessionID: HostWatcher.Seen]
        do { counts = try await watcher.value } catch {
            listing.withLock { $0 = false }
            await rig.finish(keep: options.keep)
            throw error
        }
        let seconds = monotonicSeconds() - started
        let hostCPU = ProcessStats.selfCPU() - cpuBefore
        let peak = ProcessStats.peakResidentBytes()
        listing.withLock { $0 = false }
        let listUnderLoad = await lister.value
        let load = ProcessStats.loadAverage()
        let flushAfter = DiskProbe.fdatasyncLatency(in: rig.scratch.root)
        var recorded = 0
        for id in ids { recorded += Int((try? await rig.host.summary(id).lastSeq) ?? 0) }
        // The agents wait for stdin to close; shutting down ends and reaps them, and only then
        // does their CPU time show in RUSAGE_CHILDREN.
        await rig.finish(keep: options.keep)
        let missing = counts.values.filter { $0.firstSeq > 1 }
        return ThroughputRow(sessions: n, events: recorded, announced: counts.values.map(\.events).reduce(0, +),
                             sessionsMissingFirstEvents: missing.count, missedEvents: missing.map { Int($0.firstSeq - 1) }.reduce(0, +),
                             seconds: seconds, startSeconds: startSeconds, hostCPU: hostCPU,
                             agentsCPU: ProcessStats.childrenCPU() - childrenBefore, peakRSS: peak, rssBefore: rssBefore,
                             listUnderLoad: listUnderLoad, flushBefore: flushBefore, flushAfter: flushAfter, load: load)
    }

    static func throughputTable(_ rows: [ThroughputRow], _ options: Options) -> String {
        var table = [["sessions", "events", "wall s", "start s", "events/s", "vs N=1", "host CPU s", "CPU s/10k ev", "vs N=1",
                      "agents CPU s", "peak RSS", "RSS before", "ls ms (p50/p95)", "flush µs", "load"]]
        let one = rows.first { $0.sessions == 1 }
        for row in rows {
            table.append([
                String(row.sessions), String(row.events), Format.fixed(row.seconds, 2), Format.fixed(row.startSeconds, 2),
                Format.count(row.eventsPerSecond),
                one.map { Format.fixed(row.eventsPerSecond / $0.eventsPerSecond, 2) + "x" } ?? "-",
                Format.fixed(row.hostCPU, 2), Format.fixed(row.hostCPUPer10k, 3),
                one.map { Format.fixed(row.hostCPUPer10k / $0.hostCPUPer10k, 2) + "x" } ?? "-",
                Format.fixed(row.agentsCPU, 2), Format.megabytes(row.peakRSS), Format.megabytes(row.rssBefore),
                row.listUnderLoad.isEmpty ? "-" : {
                    let p = percentiles(row.listUnderLoad)
                    return Format.fixed(p.median * 1000, 1) + " / " + Format.fixed(p.p95 * 1000, 1)
                }(),
                flushText(row.flushBefore, row.flushAfter), row.load.map { Format.fixed($0, 1) } ?? "-",
            ])
        }
        var text = """
            throughput: N replay sessions at once, replay speed max, \(options.events) partials each (seed \(options.seed))

            \(Format.table(table))
            """
        for row in rows where row.announced != row.events || row.sessionsMissingFirstEvents > 0 {
            text += "\nnote: N=\(row.sessions): the host wrote \(row.events) events, listeners were told of \(row.announced);"
                + " \(row.sessionsMissingFirstEvents) of \(row.sessions) sessions never announced their first events"
                + " (\(row.missedEvents) in all)"
        }
        text += """

            events/s: events numbered and written by the host (sum of lastSeq) / wall time from the first start to the last finish.
            host CPU: getrusage(RUSAGE_SELF) of this process, which is the host (plus its listener); agents CPU:
            RUSAGE_CHILDREN after the agents were reaped (each replay agent also parses its whole fixture).
            peak RSS: VmHWM of this process, reset (after malloc_trim) before each run. start s: the N startSession calls, one after another.
            ls ms: host.sessions(includeArchived: false) (what `nucleic ls` asks) every 200 ms while the sessions run.
            flush µs: median write(300 B) + fdatasync in the data folder, before / after the run (the host does two per
            agent line, so its rate follows this); load: the machine's 1-minute load average at the end of the run.

            """
        return text
    }

    /// `180 / 210` (microseconds), or `-`.
    static func flushText(_ before: Double?, _ after: Double?) -> String {
        func us(_ s: Double?) -> String { s.map { Format.fixed($0 * 1e6, 0) } ?? "-" }
        return us(before) + " / " + us(after)
    }
}
