#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicRuntime
import NucleicStore
import Synchronization

/// The memory phase: one long session, the host's RSS sampled as its events come in.
extension SessionsBenchmark {
    struct MemorySample: Sendable {
        var seconds: Double
        /// Events the host had numbered, written and announced.
        var events: Int
        var rss: Int
        /// What the allocator had handed out (`ProcessStats.heapInUse`).
        var heap: Int?
        /// Events the Session had written to its transcript (its index holds 8 bytes a seq):
        /// ahead of `events` by what waits between the Session and the host's pump.
        var written: Int?
        /// Bytes the agent had written to its stdout (`wchar`), when it could be read.
        var agentWritten: Int?
    }

    struct MemoryRun: Sendable {
        var label: String
        var samples: [MemorySample]
        var before: MemorySample
        /// 3 s after the host shut the session down, heap trimmed.
        var after: MemorySample
        var events: Int
        var seconds: Double
        var peakRSS: Int
        var agentTotal: Int?
        var flushBefore: Double?
        var flushAfter: Double?
        var load: Double?
    }

    static func memory(_ options: Options) async throws -> [MemoryRun] {
        let fixtureFolder = try Scratch.make("nucleic-bench-fixture")
        let fixture = fixtureFolder.root + "/long.jsonl"
        // The recorded gaps matter only to the paced run.
        let summary = try SessionFixture.write(to: fixture, deltas: options.long, seed: options.seed &+ 1,
                                               linesPerSecond: Double(max(options.pace, 1)))
        // Written back now, not during the runs: every event the host records waits for a disk
        // flush, and a flush waits for whatever else is being written back (see docs/BENCHMARKS.md).
        sync()
        progress("memory: fixture \(summary.records) records (\(summary.deltas) partials), \(Format.megabytes(summary.bytes))")
        // Paced first: the max-speed run leaves the heap grown (glibc keeps freed memory), which
        // would raise the paced run's starting point.
        var runs: [MemoryRun] = []
        if options.pace > 0 {
            progress("memory: one session, the agent paced at \(options.pace) lines/s (replay speed recorded)…")
            runs.append(try await memoryRun("agent paced at \(options.pace) lines/s", fixture: fixture, speed: "recorded", options: options))
        }
        progress("memory: one session, replay speed max…")
        runs.append(try await memoryRun("agent at max speed", fixture: fixture, speed: "max", options: options))
        if !options.keep { await fixtureFolder.remove() }
        return runs
    }

    static func memoryRun(_ label: String, fixture: String, speed: String, options: Options) async throws -> MemoryRun {
        let rig = try await HostRig.make("nucleic-bench-memory", nucleic: options.nucleic, maxRunning: 1, speed: speed)
        sync()  // the previous run's files and folders, written back before this one starts
        let flushBefore = DiskProbe.fdatasyncLatency(in: rig.scratch.root)
        ProcessStats.trimHeap()
        let counter = SharedCounter()
        let watcher = await HostWatcher.start(rig.host, expecting: 1, counter: counter)
        ProcessStats.resetPeak()
        let started = monotonicSeconds()
        let index = SharedPath()
        let sample: @Sendable () -> MemorySample = {
            let written = ProcessStats.agentPIDs().compactMap(ProcessStats.bytesWritten(by:))
            let transcript = index.path.withLock { $0 }.flatMap(ProcessStats.fileSize).map { $0 / 8 }
            return MemorySample(seconds: monotonicSeconds() - started, events: counter.current, rss: ProcessStats.residentBytes(),
                                heap: ProcessStats.heapInUse(), written: transcript,
                                agentWritten: written.isEmpty ? nil : written.reduce(0, +))
        }
        let before = sample()
        let sampling = Mutex(true)
        let sampler = Task {
            var samples: [MemorySample] = []
            while sampling.withLock({ $0 }) {
                try? await Task.sleep(for: .milliseconds(50))
                samples.append(sample())
            }
            return samples
        }
        do {
            let id = try await rig.start(fixture, prompt: "Walk the codebase and summarise it.")
            index.path.withLock { $0 = SessionFolder(home: rig.scratch.home.path, session: id).transcriptIndexPath }
            _ = try await watcher.value
        } catch {
            sampling.withLock { $0 = false }
            _ = await sampler.value
            await rig.finish(keep: options.keep)
            throw error
        }
        let seconds = monotonicSeconds() - started
        let last = sample()
        sampling.withLock { $0 = false }
        var samples = await sampler.value
        samples.append(last)
        let peak = ProcessStats.peakResidentBytes()
        let load = ProcessStats.loadAverage()
        let flushAfter = DiskProbe.fdatasyncLatency(in: rig.scratch.root)
        await rig.finish(keep: options.keep)
        // What the session leaves behind once it is gone: its Session and its tasks let go
        // within a second or two (the Session's 1 s tick).
        try? await Task.sleep(for: .seconds(3))
        ProcessStats.trimHeap()
        var after = sample()
        after.seconds = monotonicSeconds() - started
        return MemoryRun(label: label, samples: samples, before: before, after: after, events: last.events, seconds: seconds,
                         peakRSS: peak, agentTotal: last.agentWritten, flushBefore: flushBefore, flushAfter: flushAfter, load: load)
    }

    static func memoryTable(_ runs: [MemoryRun], _ options: Options) -> String {
        var text = "memory: one session, \(options.long) partials; host RSS as its events come in\n"
        for run in runs {
            var table = [["", "events", "session wrote", "at s", "host RSS", "vs 10%", "heap in use", "vs 10%", "agent had written"]]
            func row(_ label: String, _ s: MemorySample, reference: MemorySample?) {
                let written: String
                if let w = s.agentWritten, let total = run.agentTotal, total > 0 {
                    written = Format.fixed(100 * Double(w) / Double(total), 0) + "% (" + Format.megabytes(w) + ")"
                } else {
                    written = "-"
                }
                func ratio(_ a: Int?, _ b: Int?) -> String {
                    guard let a, let b, b > 0 else { return "-" }
                    return Format.fixed(Double(a) / Double(b), 2) + "x"
                }
                table.append([label, String(s.events), s.written.map(String.init) ?? "-", Format.fixed(s.seconds, 2), Format.megabytes(s.rss), ratio(s.rss, reference?.rss),
                              s.heap.map(Format.megabytes) ?? "-", ratio(s.heap, reference?.heap), written])
            }
            row("before start", run.before, reference: nil)
            var reference: MemorySample?
            for percent in [10, 50, 100] {
                let target = (run.events * percent + 99) / 100
                guard let s = run.samples.first(where: { $0.events >= target }) else { continue }
                if percent == 10 { reference = s }
                row("\(percent)% of events", s, reference: reference)
            }
            if options.trace {
                for (i, s) in run.samples.enumerated() where i % 20 == 19 { row("  sample", s, reference: reference) }
            }
            let maximum = run.samples.max { $0.rss < $1.rss }
            if let maximum { row("largest sample", maximum, reference: reference) }
            var after = run.after
            after.agentWritten = nil
            row("after shutdown (+3 s)", after, reference: reference)
            text += """

                \(run.label): \(run.events) events in \(Format.fixed(run.seconds, 1)) s (\(Format.count(Double(run.events) / run.seconds)) events/s), peak RSS \(Format.megabytes(run.peakRSS)); flush µs \(flushText(run.flushBefore, run.flushAfter)), load \(run.load.map { Format.fixed($0, 1) } ?? "-")

                \(Format.table(table))

                """
        }
        text += """

            events: what the listener had heard of (through the host's pump); session wrote: what the Session had
            already written to its transcript (the gap waits between the Session and the pump); host RSS: VmRSS of
            this process (the host and its listener), sampled every 50 ms, heap trimmed (malloc_trim) before the run;
            heap in use: what malloc has handed out and not had back (malloc_info), which falls when memory is freed
            even where RSS does not; agent had written: the replay agent's wchar, as a share of all it wrote (how far
            it was ahead of the host); after shutdown: 3 s after the host stopped the session, heap trimmed.

            """
        return text
    }
}

/// The transcript index to watch, set once the session exists.
final class SharedPath: Sendable {
    let path = Mutex<String?>(nil)
}
