import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// The generic ACP backend with the real daemon: the CLI starts sessions with
/// `--backend acp --agent-command "<python> acp_reference_agent.py"` (the scripted agent on the
/// pinned ACP Python SDK, its own Python 3.12 virtualenv), the agent runs under its shim, and the
/// host serves its `fs/*` and `terminal/*` requests inside the worktree.
@Suite(.serialized, .enabled(if: AcpPeer.python != nil || Peers.isCI, "needs NUCLEIC_ACP_PYTHON (scripts/peers.sh)"))
struct AcpEndToEndTests {
    init() throws { try TestReaper.becomeSubreaper() }

    static let options = ["--backend", "acp", "--agent-command", AcpPeer.referenceAgentCommand]

    func with(_ body: (DaemonHarness) async throws -> Void) async throws {
        try await DaemonHarness.with(body)
    }

    func runs(_ events: [SequencedEvent]) -> [RunFinished] {
        events.compactMap { if case .runFinished(let run) = $0.event { run } else { nil } }
    }

    func finalTexts(_ events: [SequencedEvent]) -> [String] {
        events.compactMap { if case .assistantText(let text, false) = $0.event { text } else { nil } }
    }

    func completions(_ events: [SequencedEvent]) -> [ToolResult] {
        events.compactMap { if case .toolCallCompleted(let result) = $0.event { result } else { nil } }
    }

    func starts(_ events: [SequencedEvent]) -> [ToolCall] {
        events.compactMap { if case .toolCallStarted(let call) = $0.event { call } else { nil } }
    }

    func expectContiguous(_ events: [SequencedEvent], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!events.isEmpty && events.map(\.seq) == (1...Int64(events.count)).map { $0 }, "\(events.map(\.seq))", sourceLocation: sourceLocation)
    }

    func errors(_ events: [SequencedEvent]) -> [String] {
        events.compactMap { if case .error(let code, let message, _) = $0.event { "\(code): \(message)" } else { nil } }
    }

    /// Waits until the session has finished `count` turns.
    func turns(_ d: DaemonHarness, _ id: String, _ count: Int) async throws -> [SequencedEvent] {
        try await eventually(timeout: .seconds(60)) {
            let events = try await d.events(id)
            return runs(events).count >= count ? events : nil
        }
    }

    @Test func startsAndStreamsEveryUpdateKind() async throws {
        try await with { d in
            let id = try await d.start("[[scenario:updates]] hello", Self.options)
            let events = try await turns(d, id, 1)
            expectContiguous(events)
            #expect(events.first { $0.event.kind == "sessionStarted" } != nil)
            if case .sessionStarted(let started)? = events.first(where: { $0.event.kind == "sessionStarted" })?.event {
                #expect(started.backend == "acp")
                #expect(started.cwd == d.worktree(id))
            }
            #expect(runs(events).map(\.isError) == [false])
            #expect(finalTexts(events).last == "Hello world.")
            #expect(try await d.waitFor(id, ["finished", "awaitingInput", "error"]) == "finished")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    @Test func allowedPermissionWritesThroughTheHostWithoutASecondApproval() async throws {
        try await with { d in
            let id = try await d.start("[[scenario:permission]] write", Self.options)
            let approval = try await d.approval(id)
            #expect(approval.toolKind == .edit)
            #expect(approval.capabilities.canModifyToolInput == false)
            _ = try await d.ok(["approve", approval.id.rawValue])
            let events = try await turns(d, id, 1)
            expectContiguous(events)
            #expect(d.contents(d.worktree(id) + "/a.txt") == "hi\n")
            #expect(finalTexts(events).last == "wrote a.txt")
            // The write the person allowed was served at once: one approval, one Write tool call.
            #expect(events.filter { $0.event.kind == "approvalRequested" }.count == 1)
            #expect(starts(events).contains { $0.name == "Write" && $0.toolCallID.hasPrefix("client:") })
            #expect(completions(events).contains { $0.toolCallID.hasPrefix("client:") && $0.status == .completed })
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    @Test func deniedPermissionWritesNothing() async throws {
        try await with { d in
            let id = try await d.start("[[scenario:permission]] write", Self.options)
            let approval = try await d.approval(id)
            _ = try await d.ok(["deny", approval.id.rawValue, "--message", "not now"])
            let events = try await turns(d, id, 1)
            #expect(d.contents(d.worktree(id) + "/a.txt") == nil)
            #expect(finalTexts(events).last == "not allowed")
            #expect(events.contains { if case .approvalResolved(let r) = $0.event { r.decision == .deny(message: "not now") } else { false } })
        }
    }

    /// "Always" is the host's rule: the agent is told allow_once, and the follow-up's request is
    /// answered by the rule, with no one asked.
    @Test func allowAlwaysBecomesAHostRuleThatAnswersTheFollowUp() async throws {
        try await with { d in
            let id = try await d.start("[[scenario:permission]] write", Self.options)
            let approval = try await d.approval(id)
            _ = try await d.ok(["approve", approval.id.rawValue, "--always", "tool"])
            _ = try await turns(d, id, 1)
            try FileManager.default.removeItem(atPath: d.worktree(id) + "/a.txt")
            _ = try await d.ok(["send", id, "[[scenario:permission]] again"])
            let events = try await turns(d, id, 2)
            expectContiguous(events)
            let resolutions = events.compactMap { if case .approvalResolved(let r) = $0.event { r } else { nil } }
            #expect(resolutions.count == 2)
            #expect(resolutions.last?.decidedBy.hasPrefix("rule:") == true, "\(resolutions)")
            #expect(d.contents(d.worktree(id) + "/a.txt") == "hi\n")
            let raw = try String(contentsOfFile: d.home + "/sessions/\(id)/raw.jsonl", encoding: .utf8)
            #expect(raw.contains(#"\"outcome\":\"selected\",\"optionId\":\"once\""#) && !raw.contains(#"\"outcome\":\"selected\",\"optionId\":\"always\""#), "the agent was told allow_once")
            #expect(events.filter { $0.event.kind == "sessionStarted" }.count == 1, "the same agent took the follow-up")
        }
    }

    @Test func cancelMidTurnLeavesTheSessionAwaitingInput() async throws {
        try await with { d in
            let id = try await d.start("[[scenario:slow]] wait", Self.options)
            _ = try await eventually { try await d.events(id).contains { $0.event.kind == "assistantText" } ? true : nil }
            _ = try await d.ok(["interrupt", id])
            let events = try await turns(d, id, 1)
            #expect(runs(events).map(\.stopReason) == ["interrupted"])
            #expect(try await d.waitFor(id, ["awaitingInput", "finished", "error"]) == "awaitingInput")
            // The agent takes the next turn.
            _ = try await d.ok(["send", id, "[[scenario:updates]] again"])
            let after = try await turns(d, id, 2)
            #expect(runs(after).last?.isError == false)
        }
    }

    @Test func anAgentErrorIsANoticeAndAFailedTurn() async throws {
        try await with { d in
            let id = try await d.start("[[scenario:error]] fail", Self.options)
            let events = try await turns(d, id, 1)
            #expect(runs(events).map(\.stopReason) == ["failed"])
            #expect(events.contains { if case .notice(.error, _, "turnFailed") = $0.event { true } else { false } })
            #expect(errors(events).isEmpty, "a backend error is not an error event: \(errors(events))")
        }
    }

    @Test func aPathOutsideTheWorktreeIsRefusedAndRecorded() async throws {
        try await with { d in
            let id = try await d.start("[[scenario:outside]] read", Self.options)
            let events = try await turns(d, id, 1)
            #expect(finalTexts(events).last?.hasPrefix("refused") == true, "\(finalTexts(events))")
            #expect(events.contains { if case .notice(_, _, "outsideWorktree") = $0.event { true } else { false } })
            #expect(completions(events).contains { $0.toolCallID.hasPrefix("client:") && $0.status == .failed })
            #expect(try await d.approvals(id).isEmpty, "refused, never asked")
        }
    }

    @Test func aTerminalRunsInTheWorktree() async throws {
        try await with { d in
            let id = try await d.start("[[scenario:terminal]] run", Self.options)
            let events = try await turns(d, id, 1)
            #expect(runs(events).map(\.isError) == [false])
            #expect(starts(events).contains { $0.name == "Bash" && $0.input["command"]?.stringValue == "sh -c 'echo hi'" })
            #expect(completions(events).contains { $0.toolCallID == "t3" && $0.output == "hi\n" }, "\(completions(events))")
        }
    }

    /// A terminal that never exits: the agent's turn waits on it; an interrupt makes the agent
    /// kill and release it, and no process of it is left.
    @Test func aTerminalThatNeverExitsEndsWithTheInterrupt() async throws {
        try await with { d in
            let id = try await d.start("[[scenario:forever]] run", Self.options)
            let sleeper = try await eventually { d.agents().first { ProcessTable.arguments($0.pid).first == "sleep" } }
            _ = try await d.ok(["interrupt", id])
            let events = try await turns(d, id, 1)
            #expect(runs(events).map(\.stopReason) == ["interrupted"])
            _ = try await eventually { ProcessTable.entry(sleeper.pid).map { $0.isZombie } ?? true ? true : nil }
            #expect(events.contains { if case .toolCallStarted(let c) = $0.event { c.name == "terminal/kill" } else { false } })
        }
    }

    /// A write the agent asks the host for without a permission request first is the host's
    /// approval: allowed, it is served; a terminal command that writes likewise; denied, the
    /// agent hears the refusal with the deny's message.
    @Test func unaskedWritesAndCommandsAreTheHostsApprovals() async throws {
        try await with { d in
            let id = try await d.start("[[scenario:direct]] write", Self.options)
            let write = try await d.approval(id)
            #expect(write.toolName == "Write" && write.risk == .write && write.toolCallID?.hasPrefix("client:") == true, "\(write)")
            #expect(write.input["file_path"]?.stringValue == d.worktree(id) + "/b.txt")
            _ = try await d.ok(["approve", write.id.rawValue])
            _ = try await turns(d, id, 1)
            #expect(d.contents(d.worktree(id) + "/b.txt") == "direct\n")

            _ = try await d.ok(["send", id, "[[scenario:runwrite]] run"])
            let run = try await d.approval(id)
            #expect(run.toolName == "Bash" && run.input["command"]?.stringValue == "sh -c 'echo made > made.txt'", "\(run)")
            _ = try await d.ok(["approve", run.id.rawValue])
            let events = try await turns(d, id, 2)
            #expect(finalTexts(events).last == "exit 0")
            #expect(d.contents(d.worktree(id) + "/made.txt") == "made\n")

            _ = try await d.ok(["send", id, "[[scenario:direct]] again"])
            let again = try await d.approval(id)
            _ = try await d.ok(["deny", again.id.rawValue, "--message", "keep b as it is"])
            let last = try await turns(d, id, 3)
            #expect(finalTexts(last).last?.contains("keep b as it is") == true, "\(finalTexts(last))")
            #expect(completions(last).contains { $0.toolCallID == again.toolCallID && $0.status == .declined })
            expectContiguous(last)
        }
    }

    /// The agent lives in its shim: a daemon killed with SIGKILL while the agent waits for an
    /// approval is adopted by the next one, the approval still pending under its id; answered,
    /// the same agent process goes on and its write is served by the new daemon.
    @Test func survivesADaemonKilledWithSIGKILL() async throws {
        try await with { d in
            let id = try await d.start("[[scenario:permission]] write", Self.options)
            let approval = try await d.approval(id)
            let shims = d.shims()
            let agent = try #require(ProcessTable.snapshot().entries.values.first { shims.contains($0.parent) && !$0.isZombie })
            try await d.killDaemon()
            #expect(try await d.approvals(id).map(\.id) == [approval.id], "the approval is still pending")
            d.noteDaemon()
            _ = try await d.ok(["approve", approval.id.rawValue])
            let events = try await turns(d, id, 1)
            expectContiguous(events)
            #expect(d.contents(d.worktree(id) + "/a.txt") == "hi\n")
            #expect(finalTexts(events).last == "wrote a.txt")
            #expect(ProcessTable.entry(agent.pid).map { !$0.isZombie } == true, "the same agent process carried on")
            #expect(events.filter { $0.event.kind == "sessionStarted" }.count == 1, "adopted, not resumed")
            #expect(errors(events).isEmpty, "\(errors(events))")
        }
    }

    /// A manifest of Adapters/ names its agent's program and arguments: `--backend kimi` runs
    /// `$NUCLEIC_KIMI_BIN acp` (here a stand-in that runs the reference agent only when given
    /// `acp`), like `--backend claude`.
    @Test func aManifestBackendRunsLikeClaude() async throws {
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-kimi-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: bin) }
        let kimi = bin + "/kimi"
        try "#!/bin/sh\n[ \"$*\" = acp ] || { echo \"kimi stand-in: unexpected arguments $*\" >&2; exit 64; }\nexec \(AcpPeer.referenceAgentCommand)\n"
            .write(toFile: kimi, atomically: true, encoding: .utf8)
        chmod(kimi, 0o755)
        try await DaemonHarness.with(environment: ["NUCLEIC_KIMI_BIN": kimi]) { d in
            let id = try await d.start("[[scenario:permission]] write", ["--backend", "kimi"])
            let approval = try await d.approval(id)
            #expect(approval.toolName == "Edit")
            _ = try await d.ok(["approve", approval.id.rawValue])
            let events = try await turns(d, id, 1)
            #expect(d.contents(d.worktree(id) + "/a.txt") == "hi\n")
            #expect(try await d.summary(id)["backend"]?.stringValue == "kimi")
            // The manifest's name in the transcript too (its codec, acp, is the raw journal's).
            let started = events.compactMap { if case .sessionStarted(let s) = $0.event { s.backend } else { nil } }
            #expect(started == ["kimi"], "\(started)")
            let replayed = try await d.nucleic(["events", d.home + "/sessions/\(id)/raw.jsonl"])
            #expect(replayed.stdout.contains(#""backend":"kimi""#), "\(replayed.stdout.prefix(600))")
            #expect(errors(events).isEmpty, "\(errors(events))")
            // An agent that is not installed says so, and how to point at it.
            let missing = try await d.nucleic(["start", "hello", "--backend", "gemini"])
            #expect(missing.status != .exited(0))
            #expect(missing.stderr.contains("Gemini CLI is not installed") && missing.stderr.contains("NUCLEIC_GEMINI_BIN"), "\(missing.stderr)")
        }
    }

    // MARK: Recordings

    /// A recording of the reference agent replays under the daemon like the others: the replay
    /// agent writes the agent's lines with the recorded folder made the worktree, so the host
    /// serves the recorded write there; the session exports a fixture that replays again.
    @Test func anAcpRecordingReplaysUnderTheDaemonAndExportsAgain() async throws {
        let fixture = Fixture.root.appendingPathComponent("acp/permission-allow.jsonl").path
        try await DaemonHarness.with { d in
            let id = try await d.start("replayed", ["--backend", "replay", "--fixture", fixture])
            let approval = try await d.approval(id)
            #expect(approval.toolName == "Edit" && approval.input["file_path"]?.stringValue == d.worktree(id) + "/a.txt", "\(approval)")
            _ = try await d.ok(["approve", approval.id.rawValue])
            let events = try await turns(d, id, 1)
            #expect(d.contents(d.worktree(id) + "/a.txt") == "hi\n", "the host wrote it in the worktree")
            #expect(finalTexts(events).last == "wrote a.txt")
            #expect(errors(events).isEmpty, "\(errors(events))")
            let exported = try await d.ok(["export-fixture", id])
            #expect(exported.hasPrefix(#"{"fixture":1,"backend":"acp""#), "\(exported.prefix(120))")
            let file = d.root + "/exported.jsonl"
            try exported.write(toFile: file, atomically: true, encoding: .utf8)
            let decoded = try await d.ok(["events", file])
            #expect(decoded.contains("approvalResolved") && decoded.contains("runFinished") && !decoded.contains(#""kind":"error""#), "\(decoded)")
        }
    }

    @Test func eventsDecodesAnAcpRecording() async throws {
        let fixture = Fixture.root.appendingPathComponent("acp/terminal.jsonl").path
        let run = try await NucleicCommand.run(["events", "--backend", "acp", fixture])
        #expect(run.status == .exited(0), "\(run.stderr)")
        let kinds = run.stdout.split(separator: "\n").compactMap { try? JSONParser.parse(String($0))["kind"]?.stringValue }
        #expect(kinds.first == "sessionStarted" && kinds.last == "runFinished", "\(kinds)")
        #expect(run.stdout.contains(#""name":"Bash""#) && run.stdout.contains("client:0"), "the terminal is a tool call")
    }

    @Test func withoutACommandTheAcpBackendSaysHowToGiveOne() async throws {
        try await with { d in
            let run = try await d.nucleic(["start", "hello", "--backend", "acp"])
            #expect(run.status == .exited(1))
            #expect(run.stderr.contains("--agent-command") && run.stderr.contains("acp-command"), "\(run.stderr)")
        }
    }
}

/// The ACP reference agent's Python (its own virtualenv from scripts/peers.sh).
enum AcpPeer {
    static let python: String? = {
        guard let path = ProcessInfo.processInfo.environment["NUCLEIC_ACP_PYTHON"], FileManager.default.isExecutableFile(atPath: path) else { return nil }
        return path
    }()

    static var referenceAgentCommand: String { "\(python ?? "python3") \(Peers.repoRoot)/Tests/Peers/acp_reference_agent.py" }
}
