#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicRuntime
import NucleicStore

/// The ls phase: listing sessions with many in the store, in process and through the daemon.
extension SessionsBenchmark {
    struct ListResult: Sendable {
        var sessions: Int
        var listed: Int
        var listedAll: Int
        var insertSeconds: Double
        /// Seconds per call, one sample per run.
        var hostActive: [Double]
        var hostAll: [Double]
        var cliActive: [Double]
        var cliAll: [Double]
        var cliVersion: [Double]
        var cliListed: Int
        var cliError: String?
    }

    /// Status shares of the stored sessions, in per mille: none is live (queued, running,
    /// awaitingApproval), so a host opening the store has nothing to recover and the in-process
    /// host and the daemon list the same rows.
    static let storedStatuses: [(SessionStatus, Int)] = [
        (.finished, 400), (.integrated, 250), (.discarded, 150), (.awaitingInput, 100), (.error, 70), (.conflicted, 30),
    ]

    static func listLatency(_ options: Options) async throws -> ListResult {
        let scratch = try Scratch.make("nucleic-bench-ls")
        defer { if options.keep { progress("  kept \(scratch.root)") } }
        progress("ls: writing \(options.storeSessions) sessions through Store…")
        let home = scratch.home
        guard mkdir(home.path, 0o700) == 0 else { throw BenchError(message: "cannot create \(home.path): \(Scratch.lastError())") }
        let insertStarted = monotonicSeconds()
        do {
            let store = try await Store.open(path: home.database)
            try await fill(store, sessions: options.storeSessions, seed: options.seed, home: home)
        }
        let insertSeconds = monotonicSeconds() - insertStarted

        // In process: what the daemon does for `nucleic ls` (listSessions → host.sessions).
        let configuration = SessionHost.Configuration(home: home, adapters: [:], selfExecutable: options.nucleic, maxRunning: 8)
        let host = try await SessionHost.open(configuration)
        let listed = try await host.sessions(includeArchived: false).count
        let listedAll = try await host.sessions(includeArchived: true).count
        var hostActive: [Double] = [], hostAll: [Double] = []
        for _ in 0..<options.repeats {
            for all in [false, true] {
                let started = monotonicSeconds()
                let rows = try await host.sessions(includeArchived: all)
                let seconds = monotonicSeconds() - started
                blackHole(rows)
                if all { hostAll.append(seconds) } else { hostActive.append(seconds) }
            }
        }
        await host.shutdown()

        // The whole CLI path: a daemon on this data folder, `nucleic ls --json` as a user runs it.
        progress("ls: nucleic serve + nucleic ls --json, \(options.repeats) runs each…")
        var result = ListResult(sessions: options.storeSessions, listed: listed, listedAll: listedAll, insertSeconds: insertSeconds,
                                hostActive: hostActive, hostAll: hostAll, cliActive: [], cliAll: [], cliVersion: [], cliListed: 0)
        do {
            try await runCLI(&result, home: home, options: options)
        } catch {
            result.cliError = "\(error)"
        }
        if !options.keep { await scratch.remove() }
        return result
    }

    /// Projects, sessions and their past approvals, seeded; ids and times too.
    static func fill(_ store: Store, sessions count: Int, seed: UInt64, home: NucleicHome) async throws {
        var rng = SplitMix64(seed: seed ^ 0x15)
        let base: Int64 = 1_780_000_000_000
        func id(_ ms: Int64) -> String {
            // UUIDv7 text from the seed: the time first, as the real ids.
            var hex = String(UInt64(ms), radix: 16)
            hex = String(repeating: "0", count: max(0, 12 - hex.count)) + hex
            let r = String(rng.next() | (1 << 63), radix: 16)
            let s = String(rng.next() | (1 << 63), radix: 16)
            let h = Array(hex + r + s)
            return String(h[0..<8]) + "-" + String(h[8..<12]) + "-7" + String(h[13..<16]) + "-8" + String(h[17..<20]) + "-" + String(h[20..<32])
        }
        var projects: [ProjectRecord] = []
        for p in 0..<10 {
            let record = ProjectRecord(id: ProjectID(id(base + Int64(p))), name: "project-\(p)", path: "/srv/repos/project-\(p)",
                                       baseBranch: "main", createdAt: Timestamp(millisecondsSince1970: base + Int64(p)))
            try await store.insert(record)
            projects.append(record)
        }
        let weights = storedStatuses
        for s in 0..<count {
            let created = base + 60_000 * Int64(s)
            var pick = Int(rng.next() % 1000)
            var status = SessionStatus.finished
            for (candidate, share) in weights {
                if pick < share { status = candidate; break }
                pick -= share
            }
            let project = projects[Int(rng.next() % UInt64(projects.count))]
            let sessionID = SessionID(id(created))
            let title = "Session \(s): " + SessionFixture.words[Int(rng.next() % UInt64(SessionFixture.words.count))]
            let record = SessionRecord(
                id: sessionID, projectID: project.id, backend: s % 3 == 0 ? "codex" : "claude", title: title,
                prompt: title + " — make it so", status: status, branch: "nucleic/session-\(s)-\(sessionID.rawValue.suffix(6))",
                worktreePath: status.isArchived ? nil : home.worktree(project: project.name, session: sessionID), baseBranch: "main",
                nativeSessionID: "native-\(s)", lastSeq: Int64(rng.next() % 5000), diffStat: DiffStat(files: 3, insertions: 40, deletions: 7),
                createdAt: Timestamp(millisecondsSince1970: created),
                updatedAt: Timestamp(millisecondsSince1970: created + Int64(rng.next() % 3_600_000)),
                error: status == .error ? "the agent exited with code 1" : nil)
            try await store.insert(record)
            for a in 0..<3 {
                let at = Timestamp(millisecondsSince1970: created + 1000 * Int64(a + 1))
                let request = ApprovalRequest(id: ApprovalID(id(created + Int64(a))), sessionID: sessionID, toolCallID: "toolu_\(s)_\(a)",
                                              toolName: "Bash", input: ["command": .string("npm test -- --shard \(a)")], risk: .execute,
                                              capabilities: .claude, createdAt: at)
                try await store.insert(ApprovalRecord(request: request, sessionID: sessionID, createdAt: at))
                if a == 2 && status == .awaitingInput {
                    _ = try await store.withdraw(approval: request.id, reason: "the turn ended", at: at)
                } else {
                    _ = try await store.resolve(approval: request.id, decision: .allow, decidedBy: "user:bench", decidedByLabel: nil, at: at)
                }
            }
        }
    }

    /// Starts `nucleic serve` on `home`, times `nucleic ls --json` (and `--all`, and `version`).
    static func runCLI(_ result: inout ListResult, home: NucleicHome, options: Options) async throws {
        var environment = AgentLaunch.hostEnvironment()
        environment["NUCLEIC_HOME"] = home.path
        let daemon: ChildProcess
        do {
            daemon = try ChildProcess.spawn(executable: options.nucleic, arguments: ["serve"], environment: environment)
        } catch { throw BenchError(message: "cannot start nucleic serve: \(error)") }
        daemon.closeStdin()
        do {
            try await timeCLI(&result, daemon: daemon, environment: environment, options: options)
        } catch {
            _ = await daemon.terminate(grace: .seconds(5))
            throw error
        }
        _ = try? await Command.run([options.nucleic, "stop-daemon"], environment: environment)
        if await daemon.wait(timeout: .seconds(10)) == nil { _ = await daemon.terminate(grace: .seconds(5)) }
    }

    private static func timeCLI(_ result: inout ListResult, daemon: ChildProcess, environment: [String: String], options: Options) async throws {
        // Ready once it logs that it serves (on stderr). Until then `ls` would start a daemon of
        // its own: wait, so that there is only ever ours.
        let deadline = monotonicSeconds() + 30
        while !daemon.stderrTail().contains(" serving ") {
            guard daemon.exitStatus == nil else { throw BenchError(message: "nucleic serve \(daemon.exitStatus!): \(daemon.stderrTail())") }
            guard monotonicSeconds() < deadline else { throw BenchError(message: "nucleic serve did not start serving in 30 s: \(daemon.stderrTail())") }
            try await Task.sleep(for: .milliseconds(20))
        }
        let ls = [options.nucleic, "ls", "--json"]
        let warm = try await Command.run(ls, environment: environment)
        guard warm.status.isSuccess, case .array(let rows)? = try? JSONParser.parse(warm.output) else {
            throw BenchError(message: "nucleic ls --json \(warm.status): \(warm.errorText)")
        }
        result.cliListed = rows.count
        for _ in 0..<options.repeats {
            result.cliVersion.append(try await timed([options.nucleic, "version"], environment))
            result.cliActive.append(try await timed(ls, environment))
            result.cliAll.append(try await timed(ls + ["--all"], environment))
        }
    }

    private static func timed(_ argv: [String], _ environment: [String: String]) async throws -> Double {
        let run = try await Command.run(argv, environment: environment)
        guard run.status.isSuccess else { throw BenchError(message: "\(argv.dropFirst().joined(separator: " ")) \(run.status): \(run.errorText)") }
        return run.seconds
    }

    static func listTable(_ r: ListResult, _ options: Options) -> String {
        func ms(_ samples: [Double]) -> (String, String) {
            let p = percentiles(samples)
            return (Format.fixed(p.median * 1000, 2), Format.fixed(p.p95 * 1000, 2))
        }
        var table = [["", "rows", "median ms", "p95 ms", "vs host call"]]
        let reference = percentiles(r.hostActive).median
        func add(_ label: String, _ rows: Int, _ samples: [Double]) {
            guard !samples.isEmpty else { return }
            let (median, p95) = ms(samples)
            table.append([label, String(rows), median, p95, Format.fixed(percentiles(samples).median / reference, 1) + "x"])
        }
        add("host.sessions(includeArchived: false)", r.listed, r.hostActive)
        add("host.sessions(includeArchived: true)", r.listedAll, r.hostAll)
        add("nucleic ls --json (CLI → daemon socket)", r.cliListed, r.cliActive)
        add("nucleic ls --all --json", r.listedAll, r.cliAll)
        add("nucleic version (process start floor)", 0, r.cliVersion)
        var text = """
            ls: \(r.sessions) sessions in 10 projects, 3 past approvals each (written in \(Format.fixed(r.insertSeconds, 1)) s); \(options.repeats) runs per row

            \(Format.table(table))
            """
        if let error = r.cliError { text += "\nthe CLI rows are missing: \(error)" }
        return text + "\n"
    }
}
