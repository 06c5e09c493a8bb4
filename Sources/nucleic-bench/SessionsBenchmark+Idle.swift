#if canImport(Glibc)
import Glibc
#endif
import NucleicAdapters
import NucleicProtocol
import NucleicRuntime

/// The idle phase: N finished Claude-like sessions, their host-side memory before and after the
/// host ends the idle agents (`SessionHost.reapIdle`, what `--idle-timeout` does on a timer).
///
/// The agent is a fake Claude Code (`fake-claude`, a Python script written to the scratch
/// folder) speaking the stream-json subset a turn needs (`system/init`, the `initialize` control
/// response, an assistant text, a `result`) and taking `--resume`: 20 real Claude Code processes
/// (Node, ~200 MB each) are too heavy for a machine shared by several builds. `--agent-ballast MB`
/// makes each fake hold that much touched memory, standing in for Node's heap.
extension SessionsBenchmark {
    struct IdleResult: Sendable {
        var sessions: Int
        var ballastMB: Int
        var before: Footprint
        var after: Footprint
        var reaped: Int
        var resumedSeconds: Double?
    }

    /// RSS of the host process and of what it keeps running for its sessions.
    struct Footprint: Sendable {
        var host: Int
        /// Shims and agents (and the agents' children).
        var agents: Int
        var processes: Int
        var total: Int { host + agents }
    }

    static func idle(_ options: Options) async throws -> IdleResult {
        let scratch = try Scratch.make("nucleic-bench-idle")
        let script = scratch.root + "/fake-claude"
        try BufferedFile.write(fakeClaude, to: script)
        chmod(script, 0o755)
        let repository = try await scratch.repository("shop")
        var environment = AgentLaunch.hostEnvironment()
        environment["NUCLEIC_CLAUDE_BIN"] = script
        environment["FAKE_CLAUDE_BALLAST_MB"] = String(options.agentBallast)
        let manifest: AdapterManifest
        do {
            manifest = try AdapterManifest(json: [
                "manifest": 1, "name": "claude", "displayName": "Claude Code", "coAuthorEmail": "noreply@anthropic.com",
                "codec": "claude", "binary": ["env": "NUCLEIC_CLAUDE_BIN", "names": []],
                "arguments": ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
                "resumeArguments": ["--resume", "{resumeID}"], "capabilities": BackendCapabilities.claude.json,
            ])
        } catch { throw BenchError(message: "the fake Claude manifest: \(error)") }
        let host = try await SessionHost.open(SessionHost.Configuration(
            home: scratch.home, adapters: ["claude": manifest], selfExecutable: options.nucleic, maxRunning: options.idleSessions,
            environment: environment))
        _ = try await host.addProject(path: repository, name: "shop")
        let watcher = await HostWatcher.start(host, expecting: options.idleSessions)
        var ids: [SessionID] = []
        for index in 0..<options.idleSessions {
            ids.append(try await host.startSession(.init(prompt: "turn \(index)", backend: "claude")).sessionID)
        }
        _ = try await watcher.value
        try await Task.sleep(for: .seconds(1))  // the last events recorded, the agents settled
        ProcessStats.trimHeap()
        let before = footprint()
        progress("idle: \(ids.count) finished sessions, \(before.processes) processes below the host")
        let reaped = await host.reapIdle(olderThan: .zero)
        for _ in 0..<200 where !ProcessStats.childPIDs().isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        try await Task.sleep(for: .seconds(1))
        ProcessStats.trimHeap()
        let after = footprint()
        // One session resumed on a follow-up, to show the round trip works (not timed as a row).
        let resumeStart = monotonicSeconds()
        let again = await HostWatcher.start(host, expecting: 1)
        try await host.sendInput(ids[0], "and again")
        _ = try await again.value
        let resumed = monotonicSeconds() - resumeStart
        await host.shutdown()
        if options.keep { progress("  kept \(scratch.root)") } else { await scratch.remove() }
        return IdleResult(sessions: ids.count, ballastMB: options.agentBallast, before: before, after: after,
                          reaped: reaped.count, resumedSeconds: resumed)
    }

    static func footprint() -> Footprint {
        var pids: [Int32] = []
        var frontier = ProcessStats.childPIDs()
        while let pid = frontier.popLast() {
            pids.append(pid)
            frontier += ProcessStats.childPIDs(of: "\(pid)")
        }
        let agents = pids.compactMap(ProcessStats.residentBytes(of:)).reduce(0, +)
        return Footprint(host: ProcessStats.residentBytes(), agents: agents, processes: pids.count)
    }

    static func idleTable(_ r: IdleResult) -> String {
        var text = "idle: \(r.sessions) finished Claude-like sessions (fake-claude, \(r.ballastMB) MB ballast each), before and after the host ends idle agents\n"
        text += "  " + ["", "host RSS", "shims + agents RSS", "processes", "host-side total"].map { $0.padding(to: 20) }.joined() + "\n"
        for (label, f) in [("before", r.before), ("after", r.after)] {
            text += "  " + [label, Format.megabytes(f.host), Format.megabytes(f.agents), String(f.processes), Format.megabytes(f.total)]
                .map { $0.padding(to: 20) }.joined() + "\n"
        }
        let ratio = r.before.total > 0 ? Double(r.after.total) / Double(r.before.total) : 0
        text += "  after / before: \(Format.fixed(ratio, 2)) (\(r.reaped) agents ended)"
        if let seconds = r.resumedSeconds { text += "; a follow-up resumed one session and finished its turn in \(Format.fixed(seconds, 2)) s" }
        return text + "\n"
    }

    /// The fake Claude Code: the stream-json a turn needs, `--resume` honoured, optional ballast.
    static let fakeClaude = #"""
        #!/usr/bin/env python3
        import json, os, sys, uuid
        args = sys.argv[1:]
        sid = args[args.index("--resume") + 1] if "--resume" in args else str(uuid.uuid4())
        ballast = bytearray(int(os.environ.get("FAKE_CLAUDE_BALLAST_MB", "0")) << 20)
        for i in range(0, len(ballast), 4096):
            ballast[i] = 1
        def out(o):
            sys.stdout.write(json.dumps(o) + "\n")
            sys.stdout.flush()
        out({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": sid, "tools": [], "model": "fake-claude",
             "permissionMode": "default"})
        usage = {"input_tokens": 10, "output_tokens": 2}
        for line in sys.stdin:
            try:
                m = json.loads(line)
            except ValueError:
                continue
            if m.get("type") == "control_request":
                out({"type": "control_response", "response": {"subtype": "success", "request_id": m.get("request_id"), "response": {}}})
            elif m.get("type") == "user":
                out({"type": "assistant", "session_id": sid, "message": {"id": "msg-" + str(uuid.uuid4()), "type": "message", "role": "assistant",
                     "model": "fake-claude", "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn", "usage": usage}})
                out({"type": "result", "subtype": "success", "is_error": False, "result": "done", "session_id": sid,
                     "stop_reason": "end_turn", "num_turns": 1, "usage": usage, "total_cost_usd": 0})

        """#
}
