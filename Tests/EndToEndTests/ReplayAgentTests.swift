import Foundation
import NucleicAdapters
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// `nucleic replay-agent`, the built binary, driven by a host that speaks through the real codec.
///
/// For every fixture, `HostPlan` reads what the recorded host did (with a codec following the
/// recording, so each recorded approval answer becomes the `Decision` it stands for) and
/// `ReplayRun` does the same again through a live codec: `start`, prompts, interrupts and
/// decisions as intents, so the lines the replay agent judges are the codec's own, with the
/// codec's request ids. The replay agent must judge them the same and exit 0, and the turns must
/// end as recorded.
@Suite struct ReplayAgentTests {
    /// The pinned releases' recordings (`Fixtures/<backend>`): the replay agent does not depend on
    /// the CLI version, and a process per fixture is not cheap; the kept older sets are checked
    /// without processes by ReplayScriptTests.
    static let fixtures = ["claude", "codex", "acp"].flatMap { backend in
        ((try? Fixture.all(backend)) ?? []).map { "\(backend)/\($0.name)" }
    }

    /// Recordings whose host sent an answer Nucleic's codec refuses to send; the test host sends
    /// the recorded line instead (the replay agent is still checked, the codec is not).
    /// (None today; an entry names the fixture and says why, e.g. an answer the backend's
    /// request did not offer.)
    static let beyondTheCodec: [String: String] = [:]

    @Test(arguments: fixtures)
    func everyFixtureReplaysThroughTheRealCodec(_ path: String) async throws {
        let plan = try HostPlan(path)
        let run = try await ReplayRun.run(plan)
        #expect(run.status == .exited(0), "\(path): \(run.status)\n\(run.stderr)")
        #expect(!run.stderr.contains("replay-agent:"), "\(path): \(run.stderr)")
        #expect(run.stepsDone == plan.steps.count, "\(path): \(run.stepsDone) of \(plan.steps.count) host steps done")
        #expect(run.refusals.isEmpty, "\(path): the codec refused \(run.refusals)")
        #expect(run.fallbacks.isEmpty == (Self.beyondTheCodec[path] == nil), "\(path): decisions sent as recorded: \(run.fallbacks)")
        #expect(run.writeFailures.isEmpty, "\(path): \(run.writeFailures)")
        // The folder holds the recorded run's file changes, as the agent reported them.
        let recorded = try RecordedFiles.changes(plan.fixture)
        #expect(Set(run.files.keys) == Set(recorded.compactMap { $0.value == nil ? nil : $0.key }), "\(path): \(run.files.keys.sorted())")
        for (file, content) in run.files { #expect(try RecordedFiles.blobID(content) == recorded[file] ?? nil, "\(path): \(file)") }
        // Every agent line came, and the turns ended as recorded.
        #expect(run.agentLines.count == plan.outCount, "\(path)")
        #expect(run.runs.map(\.isError) == plan.runs.map(\.isError), "\(path)")
        #expect(run.runs.map(\.stopReason) == plan.runs.map(\.stopReason), "\(path)")
        #expect(run.events.filter { $0.kind == "error" }.count == plan.errors, "\(path): \(run.events.filter { $0.kind == "error" })")
        // The agent's stderr lines, as recorded.
        let errLines = plan.fixture.records.filter { $0.direction == "err" }.map(\.line)
        #expect(run.stderr == errLines.map { $0 + "\n" }.joined(), "\(path)")
        // Answers to the host's requests carry the ids the host used (the codec's, not the recording's).
        let hostIDs = Set(run.hostLines.compactMap { Self.hostRequestID($0, plan.backend) })
        for id in run.agentLines.compactMap({ Self.answeredID($0, plan.backend) }) {
            #expect(hostIDs.contains(id), "\(path): the agent answered \(id), which the host never asked with")
        }
    }

    @Test func aDenyWhereTheRecordingAllowedIsExitThree() async throws {
        var plan = try HostPlan("claude/tool-allow")
        plan.replaceDecisions { _ in .deny(message: "no") }
        let run = try await ReplayRun.run(plan)
        #expect(run.status == .exited(3))
        #expect(run.stderr.contains(#"replay-agent: \#(plan.fixturePath) record 8: expected an approval answer allowing the input unchanged, got deny ("no")"#), "\(run.stderr)")
        // The agent stops where the host diverged: nothing after the approval request is written.
        #expect(run.runs.isEmpty)
    }

    @Test func aModifiedInputWhereTheRecordingAllowedItUnchangedIsExitThree() async throws {
        var plan = try HostPlan("claude/tool-allow")
        plan.replaceDecisions { _ in .allowModified(input: ["command": "rm -rf /"]) }
        let run = try await ReplayRun.run(plan)
        #expect(run.status == .exited(3))
        #expect(run.stderr.contains("record 8: expected an approval answer allowing the input unchanged, got allow with a modified input"), "\(run.stderr)")
    }

    @Test(.enabled(if: fixtures.contains("codex/tool-allow")))
    func aCodexDeclineWhereTheRecordingAcceptedIsExitThree() async throws {
        var plan = try HostPlan("codex/tool-allow")
        plan.replaceDecisions { _ in .deny(message: "") }
        let run = try await ReplayRun.run(plan)
        #expect(run.status == .exited(3))
        #expect(run.stderr.contains(#"expected an approval answer to request 0 with decision "accept", got decision "decline""#), "\(run.stderr)")
    }

    @Test func closingStdinBeforeTheRecordedPromptIsExitFour() async throws {
        var plan = try HostPlan("claude/plain")
        plan.steps.removeAll { if case .prompt = $0.action { true } else { false } }
        let run = try await ReplayRun.run(plan)
        #expect(run.status == .exited(4))
        #expect(run.stderr.contains("record 2: expected a user message, got the end of stdin (the host closed it)"), "\(run.stderr)")
    }

    @Test func recordedSpeedPausesByTheRecordedGaps() async throws {
        let plan = try HostPlan("claude/followup")
        let clock = ContinuousClock()
        let started = clock.now
        let run = try await ReplayRun.run(plan, speed: "recorded")
        let took = clock.now - started
        #expect(run.status == .exited(0), "\(run.stderr)")
        // Each record is 10 ms after the one before it; the agent waits out every gap before its lines.
        let gaps = plan.fixture.records.last.map { $0.t - (plan.fixture.records.first?.t ?? 0) } ?? 0
        #expect(took >= .milliseconds(Int(gaps * 1000 * 0.5)), "\(took) for \(gaps) s of recorded gaps")
    }

    // MARK: Ids

    /// The id of a request the host wrote (Claude control_request, Codex request).
    static func hostRequestID(_ line: String, _ backend: String) -> JSONValue? {
        guard let m = try? JSONParser.parse(line) else { return nil }
        if backend == "claude" { return m["type"]?.stringValue == "control_request" ? m["request_id"] : nil }
        return m["method"] != nil ? m["id"] : nil
    }

    /// The host request an agent line answers (Claude control_response, Codex response).
    static func answeredID(_ line: String, _ backend: String) -> JSONValue? {
        guard let m = try? JSONParser.parse(line) else { return nil }
        if backend == "claude" { return m["type"]?.stringValue == "control_response" ? m["response"]?["request_id"] : nil }
        return m["method"] == nil ? m["id"] : nil
    }
}

/// What the recorded host did, as things a host does through its codec, each anchored after the
/// agent line it reacted to.
struct HostPlan {
    enum Action: Sendable {
        /// `codec.start` (the recorded initialize).
        case start
        case prompt(String)
        case interrupt
        case decide(ApprovalID, Decision)
        /// A line the codec writes by itself (Codex's handshake steps, a deny's `turn/steer`).
        case byCodec
        /// A line no intent produces (a late answer, an error response, a line that is not
        /// JSON): written as recorded, and shown to the codec as if it had sent it.
        case raw(String)
    }

    struct Step {
        /// How many agent stdout lines come before it.
        var afterOut: Int
        var record: Int
        var action: Action
    }

    let fixture: Fixture
    let fixturePath: String
    var backend: String { fixture.backend }
    var steps: [Step] = []
    var options: SessionStartOptions
    /// The turns as the recording ends them.
    var runs: [RunFinished] = []
    /// The `error` events the recording's agent lines make (a line that is not JSON).
    var errors = 0
    var outCount = 0

    init(_ path: String) throws {
        fixturePath = Fixture.root.appendingPathComponent(path + ".jsonl").path
        fixture = try Fixture.load(URL(fileURLWithPath: fixturePath))
        let backend = fixture.backend
        let ids = CountingIDs()
        guard var codec = Codecs.make(backend, makeApprovalID: { ids.make() }) else { throw FixtureError("no codec for \(backend)") }
        let now = Timestamp(millisecondsSince1970: 0)
        let inLines = fixture.records.filter { $0.direction == "in" }.map { (try? JSONParser.parse($0.line)) ?? .null }
        // A recording whose host did not start the way the codec starts (protocol-errors) is
        // played with the recorded lines as they are.
        let codecCanDrive = inLines.first.map { Self.isStart($0, backend) } ?? true
        options = SessionStartOptions(prompt: nil, cwd: "/tmp/nucleic-fixture/repo")
        for message in inLines where message["method"]?.stringValue == "thread/resume" {
            options.resumeID = message["params"]?["threadId"]?.stringValue
        }
        for message in inLines where message["method"]?.stringValue == "turn/start" && message["params"]?["collaborationMode"] != nil {
            options.planMode = true
        }
        options.model = inLines.lazy.compactMap { $0["params"]?["model"]?.stringValue }.first
        if backend == "acp" {
            options.sessionMode = inLines.lazy.filter { $0["method"]?.stringValue == "session/set_mode" }.compactMap { $0["params"]?["modeId"]?.stringValue }.first
        }
        var started = false
        for (index, record) in fixture.records.enumerated() {
            switch record.direction {
            case "out":
                outCount += 1
                let events = codec.receive(line: Array(record.line.utf8), now: now).events
                runs += events.compactMap { if case .runFinished(let run) = $0 { run } else { nil } }
                errors += events.filter { $0.kind == "error" }.count
            case "in":
                let events = codec.observeHostLine(Array(record.line.utf8), now: now).events
                let message = (try? JSONParser.parse(record.line)) ?? .null
                let action: Action
                if !codecCanDrive {
                    action = .raw(record.line)
                } else if !started && Self.isStart(message, backend) {
                    started = true
                    action = .start
                } else if let text = events.lazy.compactMap({ if case .userInput(let text) = $0 { text } else { nil } }).first {
                    action = .prompt(text)
                } else if Self.isInterrupt(message, backend) {
                    action = .interrupt
                } else if let resolution = events.lazy.compactMap({ if case .approvalResolved(let r) = $0 { r } else { nil } }).first,
                    Self.isDecisionAnswer(message, backend)
                {
                    action = .decide(resolution.approvalID, resolution.decision)
                } else if started && Self.isWrittenByCodec(message, backend) {
                    action = .byCodec
                } else {
                    action = .raw(record.line)
                }
                steps.append(Step(afterOut: outCount, record: index + 1, action: action))
            default:
                continue
            }
        }
    }

    /// Puts `decide(id)` in place of every recorded decision.
    mutating func replaceDecisions(_ decide: (Decision) -> Decision) {
        for index in steps.indices {
            if case .decide(let id, let decision) = steps[index].action { steps[index].action = .decide(id, decide(decision)) }
        }
    }

    static func isStart(_ m: JSONValue, _ backend: String) -> Bool {
        backend == "claude"
            ? m["type"]?.stringValue == "control_request" && m["request"]?["subtype"]?.stringValue == "initialize"
            : m["method"]?.stringValue == "initialize" && m["id"] != nil
    }

    static func isInterrupt(_ m: JSONValue, _ backend: String) -> Bool {
        switch backend {
        case "claude": m["type"]?.stringValue == "control_request" && m["request"]?["subtype"]?.stringValue == "interrupt"
        case "acp": m["method"]?.stringValue == "session/cancel"
        default: m["method"]?.stringValue == "turn/interrupt"
        }
    }

    /// An answer the codec writes for a decision (not a Claude error response, not a Codex error).
    static func isDecisionAnswer(_ m: JSONValue, _ backend: String) -> Bool {
        switch backend {
        case "claude": m["response"]?["subtype"]?.stringValue == "success" && m["response"]?["response"]?["behavior"] != nil
        case "acp": m["result"]?["outcome"] != nil  // a permission's answer, not an fs/terminal result
        default: m["result"] != nil
        }
    }

    static func isWrittenByCodec(_ m: JSONValue, _ backend: String) -> Bool {
        switch backend {
        case "codex": ["initialized", "thread/start", "thread/resume", "turn/steer"].contains(m["method"]?.stringValue ?? "")
        case "acp": ["session/new", "session/load", "session/resume", "session/set_mode"].contains(m["method"]?.stringValue ?? "")
        default: false
        }
    }
}

/// One run of the replay agent under a host that follows a `HostPlan` through a live codec.
struct ReplayRun {
    var status: ChildProcess.ExitStatus
    var stderr: String
    var events: [AgentEvent] = []
    var agentLines: [String] = []
    var hostLines: [String] = []
    var refusals: [CodecError] = []
    /// Decisions the codec refused, sent as the recorded lines instead.
    var fallbacks: [String] = []
    var writeFailures: [String] = []
    var stepsDone = 0
    /// What the replay agent left in its working folder, path → content.
    var files: [String: String] = [:]

    var runs: [RunFinished] { events.compactMap { if case .runFinished(let r) = $0 { r } else { nil } } }

    static func run(_ plan: HostPlan, speed: String = "max", timeout: Duration = .seconds(30)) async throws -> ReplayRun {
        // A folder of its own: the replay agent makes the recorded file changes where it runs.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-replay-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let process = try ChildProcess.spawn(
            executable: NucleicBinary.path, arguments: ["replay-agent", plan.fixturePath, "--speed", speed], workingDirectory: folder)
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            _ = await process.terminate(grace: .seconds(2))
        }
        defer { watchdog.cancel() }
        async let stderrBytes: [UInt8] = process.stderr.reduce(into: []) { $0 += $1 }
        let ids = CountingIDs()
        var host = Host(process: process, codec: Codecs.make(plan.backend, makeApprovalID: { ids.make() })!, plan: plan)
        await host.performDueSteps()
        var framer = LineFramer()
        for await chunk in process.stdout {
            for output in framer.feed(chunk) {
                guard case .line(let bytes) = output else { continue }
                await host.receive(bytes)
            }
        }
        process.closeStdin()
        let status = await process.wait()
        return ReplayRun(
            status: status, stderr: String(decoding: await stderrBytes, as: UTF8.self), events: host.events,
            agentLines: host.agentLines, hostLines: host.hostLines, refusals: host.refusals,
            fallbacks: host.fallbacks, writeFailures: host.writeFailures, stepsDone: host.next, files: try RecordedFiles.read(folder))
    }

    /// The host's side: the live codec and the plan's steps, done as the agent's lines come.
    struct Host {
        let process: ChildProcess
        var codec: any AgentCodec
        let plan: HostPlan
        var next = 0
        var events: [AgentEvent] = []
        var agentLines: [String] = []
        var hostLines: [String] = []
        var refusals: [CodecError] = []
        var fallbacks: [String] = []
        var writeFailures: [String] = []
        var closed = false

        mutating func receive(_ bytes: [UInt8]) async {
            agentLines.append(String(decoding: bytes, as: UTF8.self))
            await apply(codec.receive(line: bytes, now: .now()))
            await performDueSteps()
        }

        /// Does the steps anchored at or before the agent lines seen so far; closes stdin after
        /// the last one, as the recorded host did.
        mutating func performDueSteps() async {
            while next < plan.steps.count, plan.steps[next].afterOut <= agentLines.count {
                let step = plan.steps[next]
                next += 1
                await perform(step.action)
            }
            if next == plan.steps.count && !closed {
                closed = true
                process.closeStdin()
            }
        }

        mutating func perform(_ action: HostPlan.Action) async {
            let now = Timestamp.now()
            switch action {
            case .start:
                await apply(codec.start(plan.options, now: now))
            case .prompt(let text):
                await send(.prompt(text))
            case .interrupt:
                do { await apply(try codec.send(.interrupt, now: now)) } catch {
                    // Nothing the codec knows of is running (Codex's second interrupt): send the
                    // recorded line, as the recorded host did.
                    if case .raw(let line)? = recordedLine(for: action) { await writeRaw(line) }
                }
            case .decide(let id, let decision):
                do { await apply(try codec.send(.decide(id, decision), now: now)) } catch {
                    // The recorded host sent an answer this codec will not (see
                    // `ReplayAgentTests.beyondTheCodec`): send it as recorded.
                    fallbacks.append("\(error)")
                    if case .raw(let line)? = recordedLine(for: action) { await writeRaw(line) }
                }
            case .byCodec:
                break
            case .raw(let line):
                await writeRaw(line)
            }
        }

        /// The recorded line of the step just taken, as a raw action.
        func recordedLine(for action: HostPlan.Action) -> HostPlan.Action? {
            let record = plan.steps[next - 1].record
            return .raw(plan.fixture.records[record - 1].line)
        }

        mutating func send(_ intent: HostIntent) async {
            do { await apply(try codec.send(intent, now: .now())) } catch { refusals.append(error) }
        }

        mutating func writeRaw(_ line: String) async {
            await write(line)
            events += codec.observeHostLine(Array(line.utf8), now: .now()).events
        }

        mutating func apply(_ output: CodecOutput) async {
            for line in output.lines { await write(line) }
            events += output.events
        }

        mutating func write(_ line: String) async {
            hostLines.append(line)
            // After a divergence the agent is gone: a failed write is expected then, and the exit
            // status tells the story.
            do { try await process.write(line: line) } catch { writeFailures.append("\(error)") }
        }
    }
}
