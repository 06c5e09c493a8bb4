import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// The daemon as a user meets it: the built `nucleic` CLI with a private NUCLEIC_HOME and a real
/// git repository, the daemon started by the CLI on demand, and real agents — the replay agent,
/// a shell script, and the real Claude Code and Codex CLIs against the mock model APIs.
@Suite(.serialized) struct DaemonEndToEndTests {
    static let toolAllow = Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path

    init() throws {
        // As the daemon is: the CLI-started daemons (and what they leave when killed) become
        // this process's children, and the harness collects them by pid.
        try TestReaper.becomeSubreaper()
    }

    func kinds(_ events: [SequencedEvent]) -> [String] { events.map(\.event.kind) }

    func expectContiguous(_ events: [SequencedEvent], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!events.isEmpty && events.map(\.seq) == (1...Int64(events.count)).map { $0 },
                "seqs are 1…N without a gap or a repeat: \(events.map(\.seq))", sourceLocation: sourceLocation)
    }

    func finalTexts(_ events: [SequencedEvent]) -> [String] {
        events.compactMap { if case .assistantText(let text, false) = $0.event { text } else { nil } }
    }

    func runs(_ events: [SequencedEvent]) -> [RunFinished] {
        events.compactMap { if case .runFinished(let run) = $0.event { run } else { nil } }
    }

    func errors(_ events: [SequencedEvent]) -> [(code: String, message: String)] {
        events.compactMap { if case .error(let code, let message, _) = $0.event { (code, message) } else { nil } }
    }

    // MARK: Replay: the cheap paths

    @Test func replayStartApproveFinishDiscard() async throws {
        try await DaemonHarness.with { d in
            try await replayStartApproveFinishDiscard(d)
        }
    }

    func replayStartApproveFinishDiscard(_ d: DaemonHarness) async throws {
        let id = try await d.start("make hello", ["--backend", "replay", "--fixture", Self.toolAllow, "--title", "hello file"])
        #expect(FileManager.default.fileExists(atPath: d.worktree(id)), "the session has its worktree")
        #expect(try await d.worktreeList() == [d.repo, d.worktree(id)].map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path })

        let approval = try await d.approval(id)
        #expect(approval.toolName == "Bash" && approval.input["command"] == "echo hello > hello.txt")
        let listing = try await d.ok(["ls"])
        #expect(listing.contains("NEEDS YOU (1)") && listing.contains("awaitingApproval"), "\(listing)")
        // A unique prefix is enough.
        let approved = try await d.ok(["approve", String(approval.id.rawValue.prefix(20))])
        #expect(approved.contains("approved"), "\(approved)")
        try await d.waitFor(id, ["finished"])
        let again = try await d.nucleic(["approve", approval.id.rawValue])
        #expect(again.status == .exited(2) && again.stderr.contains("no pending approval"), "\(again)")

        let events = try await d.events(id)
        expectContiguous(events)
        let resolved = events.compactMap { if case .approvalResolved(let r) = $0.event { r } else { nil } }
        #expect(resolved.count == 1 && resolved.first?.decision == .allow && resolved.first?.decidedBy.hasPrefix("user:") == true)
        #expect(runs(events).map(\.isError) == [false])
        #expect(try await d.summary(id)["branch"]?.stringValue?.hasPrefix("nucleic/hello-file-") == true)

        let stat = try await d.ok(["diff", id, "--stat"])
        #expect(stat.contains("0 files changed"), "a replayed agent runs no tools: \(stat)")

        let discarded = try await d.ok(["discard", id, "--delete-branch"])
        #expect(discarded.contains("deleted"), "\(discarded)")
        #expect(try await d.status(id) == "discarded")
        #expect(!FileManager.default.fileExists(atPath: d.worktree(id)), "the worktree is removed")
        #expect(try await d.worktreeList().count == 1)
        #expect(try await Git.run(["branch", "--list", "nucleic/*"], in: d.repo).isEmpty)
        #expect(try await d.events(id).count >= events.count, "the transcript stays")
        #expect(try await d.ok(["ls"]).contains("no sessions"), "a discarded session is archived")
    }

    @Test func aGracefulStopLeavesTurnsAwaitingInput() async throws {
        try await withFakeAgent { d in try await gracefulStop(d) }
    }

    func gracefulStop(_ d: DaemonHarness) async throws {
        let waiting = try await d.start("x", ["--backend", "replay", "--fixture", Self.toolAllow])
        _ = try await d.approval(waiting)
        let working = try await d.start("work", ["--backend", "claude"])
        try await d.waitFor(working, ["running"])
        _ = try await eventually { try await d.events(working).contains { $0.event.kind == "sessionStarted" } ? true : nil }
        #expect(try await d.ok(["stop-daemon", "--kill-sessions"]).contains("the daemon stopped"))
        // The next call starts a new daemon; both turns were cut short by the host, not failed.
        for id in [waiting, working] {
            #expect(try await d.waitFor(id, ["awaitingInput", "error"]) == "awaitingInput")
            let events = try await d.events(id)
            expectContiguous(events)
            #expect(!kinds(events).contains("error"), "a stop by the host is not the agent's error: \(kinds(events))")
        }
        d.noteDaemon()
        #expect(try await d.approvals(waiting).isEmpty, "the pending approval was withdrawn")
        // A replay cannot go on past its recording, and says so.
        let send = try await d.nucleic(["send", waiting, "go on"])
        #expect(send.status == .exited(1) && send.stderr.contains("cannot be resumed"), "\(send)")
        // The other is resumed by a new input: a new agent process.
        _ = try await d.ok(["send", working, "go on"])
        _ = try await eventually { try await d.events(working).filter { $0.event.kind == "sessionStarted" }.count == 2 ? true : nil }
        #expect(try await d.status(working) == "running")
    }

    /// Runs `body` with a harness whose `claude` backend is the fake agent script.
    func withFakeAgent(_ body: (DaemonHarness) async throws -> Void) async throws {
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-fake-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: bin) }
        try await DaemonHarness.with(environment: ["NUCLEIC_CLAUDE_BIN": try FakeAgent.install(in: bin)], body)
    }

    // MARK: Agents that die

    @Test func anAgentKilledWithSIGKILLIsAnErrorWithItsStderrTail() async throws {
        try await withFakeAgent { d in try await killedAgent(d) }
    }

    func killedAgent(_ d: DaemonHarness) async throws {
        let id = try await d.start("work", ["--backend", "claude"])
        try await d.waitFor(id, ["running"])
        let agent = try await eventually { d.agents().first { $0.name == FakeAgent.name && d.shims().contains($0.parent) } }
        // Wait for the line it writes on stderr before it is killed, so the tail can hold it.
        _ = try await eventually { try await d.ok(["export-fixture", id]).contains("started its children") ? true : nil }
        kill(agent.pid, SIGKILL)
        #expect(try await d.waitFor(id, ["error"]) == "error")
        let events = try await d.events(id)
        expectContiguous(events)
        let error = try #require(errors(events).first)
        #expect(error.code == "agentExited")
        #expect(error.message.contains("SIGKILL") && error.message.contains("fake agent \(agent.pid) started its children"), "\(error.message)")

        // An agent that exits badly on its own: its exit code (not stolen by the reaper) and stderr.
        let second = try await d.start("[[exit]]", ["--backend", "claude"])
        #expect(try await d.waitFor(second, ["error"]) == "error")
        let message = try #require(errors(try await d.events(second)).first?.message)
        #expect(message.contains("exited with code 3") && message.contains("leaves its children behind"), "\(message)")

        // What the agents left running is ended with their shims (once their exits are recorded),
        // or by the discard; nothing stays below the daemon.
        let daemon = try #require(d.daemonPID)
        async let first = d.ok(["discard", id])
        async let other = d.ok(["discard", second])
        _ = try await (first, other)
        let left = try await eventually { () -> [ProcessTable.Entry]? in
            let left = ProcessTable.snapshot().descendants(of: daemon)
            return left.isEmpty ? left : nil
        }
        #expect(left.isEmpty)
        // Reaped by their shim, or by the daemon if they outlived it.
        #expect(d.shimLogs.contains("left behind") || d.shimLogs.contains("reaped orphan") || d.contents(d.home + "/run/daemon.log")?.contains("reaped orphan") == true,
                "\(d.shimLogs)\n\(d.daemonLog)")
    }

    // MARK: The real Claude Code CLI

    /// Runs `body` with a harness whose daemon runs the real Claude CLI against the mock.
    func withClaude(extra: [String: String] = [:], _ body: (DaemonHarness) async throws -> Void) async throws {
        let binary = try Peers.require(Peers.claudeBinary, "NUCLEIC_CLAUDE_BIN")
        let mock = try await MockModelAPI.start("mock_anthropic.py")
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-claude-home-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        do {
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            // A private HOME is for tests only (DESIGN.md §4); the daemon passes it on to Claude.
            try await DaemonHarness.with(environment: [
                "NUCLEIC_CLAUDE_BIN": binary, "ANTHROPIC_BASE_URL": mock.baseURL, "ANTHROPIC_API_KEY": "test-key",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "HOME": home,
            ].merging(extra) { _, new in new }, body)
        } catch {
            await mock.stop()
            throw error
        }
        await mock.stop()
    }

    @Test(.enabled(if: Peers.shouldRun(Peers.claudeBinary)))
    func claudeApproveWithModifiedInputChangesTheWorktree() async throws {
        try await withClaude { d in
            let id = try await d.start("[[scenario:modify]] write the file", ["--backend", "claude"])
            let approval = try await d.approval(id)
            #expect(approval.input["command"] == "echo original > modified.txt")
            #expect(approval.capabilities.canModifyToolInput)
            var input = try #require(approval.input.objectValue)
            input["command"] = "echo modified > modified.txt"
            let file = d.root + "/input.json"
            try JSONWriter.string(.object(input)).write(toFile: file, atomically: true, encoding: .utf8)
            _ = try await d.ok(["approve", approval.id.rawValue, "--input", file])
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")

            #expect(d.contents(d.worktree(id) + "/modified.txt") == "modified\n", "the worktree holds the modified result")
            #expect(d.contents(d.repo + "/modified.txt") == nil, "the project's own checkout is untouched")
            let stat = try await d.ok(["diff", id, "--stat"])
            #expect(stat.contains("modified.txt") && stat.contains("1 files changed, 1 insertions(+)"), "\(stat)")
            let patch = try await d.ok(["diff", id])
            #expect(patch.contains("+modified"), "\(patch)")
            let events = try await d.events(id)
            expectContiguous(events)
            let decision = events.compactMap { if case .approvalResolved(let r) = $0.event { r.decision } else { nil } }.first
            #expect(decision == .allowModified(input: .object(input)))
            #expect(errors(events).isEmpty)
        }
    }

    @Test(.enabled(if: Peers.shouldRun(Peers.claudeBinary)))
    func claudeDenyWithAMessageThenAFollowUp() async throws {
        try await withClaude { d in
            // Deny with a message: the agent continues and the model saw the message.
            let denied = try await d.start("[[scenario:deny-continue]] clean up", ["--backend", "claude"])
            let approval = try await d.approval(denied)
            _ = try await d.ok(["deny", String(approval.id.rawValue.prefix(16)), "--message", "use the test db instead"])
            #expect(try await d.waitFor(denied, ["finished", "error"]) == "finished")
            let deniedEvents = try await d.events(denied)
            #expect(finalTexts(deniedEvents).last?.contains("use the test db instead") == true, "\(finalTexts(deniedEvents))")
            #expect(deniedEvents.contains { if case .approvalResolved(let r) = $0.event { r.decision == .deny(message: "use the test db instead") } else { false } })

            // A follow-up turn through `nucleic send`, to the same running agent.
            let id = try await d.start("[[scenario:followup]] first", ["--backend", "claude"])
            try await d.waitFor(id, ["finished"])
            _ = try await d.ok(["send", id, "[[followup]] and now the second part"])
            try await eventually { runs(try await d.events(id)).count == 2 ? true : nil }
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            let events = try await d.events(id)
            expectContiguous(events)
            #expect(runs(events).map(\.isError) == [false, false])
            #expect(finalTexts(events).last?.contains("second turn done") == true, "\(finalTexts(events))")
            #expect(events.filter { $0.event.kind == "sessionStarted" }.count == 1, "the same agent process took the follow-up")
        }
    }

    @Test(.enabled(if: Peers.shouldRun(Peers.claudeBinary)))
    func claudeInterruptLeavesTheSessionAwaitingInput() async throws {
        try await withClaude { d in
            let id = try await d.start("[[scenario:interrupt]] wait", ["--backend", "claude"])
            let approval = try await d.approval(id)
            _ = try await d.ok(["approve", approval.id.rawValue])
            // The command has started (it writes started.txt, then sleeps 30 s): interrupt it.
            _ = try await eventually { d.contents(d.worktree(id) + "/started.txt") }
            _ = try await d.ok(["interrupt", id])
            #expect(try await d.waitFor(id, ["awaitingInput", "finished", "error"]) == "awaitingInput")
            let events = try await d.events(id)
            expectContiguous(events)
            #expect(runs(events).map(\.stopReason) == ["interrupted"])
            #expect(errors(events).isEmpty)
        }
    }

    @Test(.enabled(if: Peers.shouldRun(Peers.claudeBinary)))
    func claudeKilledWithSIGKILLIsAnError() async throws {
        try await withClaude { d in
            let id = try await d.start("[[scenario:tool-allow]] go", ["--backend", "claude"])
            _ = try await d.approval(id)
            let agent = try #require(d.agents().first { d.shims().contains($0.parent) }, "the agent is its shim's child")
            kill(agent.pid, SIGKILL)
            #expect(try await d.waitFor(id, ["error"]) == "error")
            let events = try await d.events(id)
            expectContiguous(events)
            #expect(errors(events).first?.message.contains("SIGKILL") == true, "\(errors(events))")
            #expect(kinds(events).contains("approvalWithdrawn"), "the pending approval went with the agent")
            #expect(try await d.approvals(id).isEmpty)
        }
    }

    /// Sessions outlive the daemon, with the real Claude Code CLI: the daemon is SIGKILLed right after the start and
    /// again while Claude waits for an approval; each next daemon adopts its shim, the
    /// approval is still pending under the same id, the answer reaches the same Claude process,
    /// and the transcript equals an undisturbed run's, event for event.
    @Test(.enabled(if: Peers.shouldRun(Peers.claudeBinary)))
    func claudeSurvivesADaemonKilledWithSIGKILL() async throws {
        try await withClaude { d in
            func comparable(_ events: [SequencedEvent], _ id: String) -> [String] {
                events.map { event -> String in
                    var event = event.event
                    if case .approvalRequested(var request) = event {
                        request.id = ApprovalID("approval")
                        request.createdAt = nil
                        event = .approvalRequested(request)
                    }
                    if case .approvalResolved(var resolution) = event {
                        resolution.approvalID = ApprovalID("approval")
                        event = .approvalResolved(resolution)
                    }
                    if case .sessionStarted(var started) = event {
                        started.nativeSessionID = nil
                        started.cwd = nil
                        event = .sessionStarted(started)
                    }
                    // Real time passes differently: the turn's measured duration is not compared.
                    return JSONWriter.string(event.json).replacingOccurrences(of: d.worktree(id), with: "<worktree>")
                        .replacingOccurrences(of: id, with: "<session>")
                        .replacingOccurrences(of: #""durationMS":[0-9]+"#, with: "", options: .regularExpression)
                }
            }
            let undisturbed = try await d.start("[[scenario:tool-allow]] make hello", ["--backend", "claude"])
            _ = try await d.ok(["approve", try await d.approval(undisturbed).id.rawValue])
            #expect(try await d.waitFor(undisturbed, ["finished", "error"]) == "finished")

            let id = try await d.start("[[scenario:tool-allow]] make hello", ["--backend", "claude"])
            // Round one: right after the start, while Claude starts up (or already streams).
            try await d.killDaemon()
            let approval = try await d.approval(id)
            d.noteDaemon()
            // (Its shim is no daemon's child any more since round one: it was re-parented to us.)
            let shims = d.shims()
            let agent = try #require(ProcessTable.snapshot().entries.values.first { shims.contains($0.parent) && !$0.isZombie })
            try await d.killDaemon()
            // The next CLI call starts a new daemon, which adopts the shim: the same approval waits.
            #expect(try await d.approvals(id).map(\.id) == [approval.id], "the approval is still pending")
            d.noteDaemon()
            #expect(try await d.status(id) == "awaitingApproval")
            _ = try await d.ok(["approve", approval.id.rawValue])
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            #expect(ProcessTable.entry(agent.pid).map { !$0.isZombie } == true, "the same Claude process carried on")
            let events = try await d.events(id)
            expectContiguous(events)
            let expected = comparable(try await d.events(undisturbed), undisturbed)
            let got = comparable(events, id)
            #expect(got == expected, "the events equal the undisturbed run's; first difference: \(zip(got, expected).first { $0 != $1 }.map { "\($0) vs \($1)" } ?? "count \(got.count) vs \(expected.count)")")
            #expect(finalTexts(events).last == "Created hello.txt.", "\(finalTexts(events))")
            #expect(d.contents(d.worktree(id) + "/hello.txt") == "hello\n")
            #expect(events.filter { $0.event.kind == "sessionStarted" }.count == 1, "not resumed: adopted")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    // MARK: The real Codex CLI

    @Test(.enabled(if: Peers.shouldRun(Peers.codexBinary)))
    func codexStartApproveFinish() async throws {
        try await withCodex { d in
            let id = try await d.start("[[scenario:tool-allow]] make hello", ["--backend", "codex"])
            let approval = try await d.approval(id)
            #expect(approval.capabilities.canModifyToolInput == false)
            // Codex cannot take a modified command: refused with a clear error, still pending.
            let file = d.root + "/input.json"
            try #"{"command":"echo changed > hello.txt"}"#.write(toFile: file, atomically: true, encoding: .utf8)
            let refused = try await d.nucleic(["approve", approval.id.rawValue, "--input", file])
            #expect(refused.status == .exited(1) && refused.stderr.lowercased().contains("deny"), "\(refused)")
            #expect(try await d.approvals(id).map(\.id) == [approval.id])
            _ = try await d.ok(["approve", approval.id.rawValue])
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            #expect(d.contents(d.worktree(id) + "/hello.txt") == "hello\n")
            let events = try await d.events(id)
            expectContiguous(events)
            #expect(runs(events).map(\.isError) == [false])
            #expect(errors(events).isEmpty)
        }
    }

    /// Runs `body` with a harness whose daemon starts `codex app-server` as the manifest says;
    /// the mock provider and the model come from a private CODEX_HOME's config (what `-c` gives
    /// in EndToEnd.swift).
    func withCodex(_ body: (DaemonHarness) async throws -> Void) async throws {
        let binary = try Peers.require(Peers.codexBinary, "NUCLEIC_CODEX_BIN")
        let mock = try await MockModelAPI.start("mock_openai.py")
        let codexHome = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-codex-home-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: codexHome, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: codexHome) }
        try """
            model = "gpt-5.5"
            model_provider = "mock"

            [model_providers.mock]
            name = "mock"
            base_url = "\(mock.baseURL)/v1"
            wire_api = "responses"
            env_key = "MOCK_API_KEY"
            request_max_retries = 0
            stream_max_retries = 0

            """.write(toFile: codexHome + "/config.toml", atomically: true, encoding: .utf8)
        do {
            try await DaemonHarness.with(environment: [
                "NUCLEIC_CODEX_BIN": binary, "CODEX_HOME": codexHome, "MOCK_API_KEY": "test", "HOME": codexHome,
            ], body)
        } catch {
            await mock.stop()
            throw error
        }
        await mock.stop()
    }
}

/// Polls `probe` until it gives a value (a guard against hangs with a generous limit, not a
/// timing assertion).
@discardableResult
func eventually<T>(timeout: Duration = .seconds(60), _ probe: () async throws -> T?) async throws -> T {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if let value = try await probe() { return value }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw PeerError("gave up waiting after \(timeout)")
}
