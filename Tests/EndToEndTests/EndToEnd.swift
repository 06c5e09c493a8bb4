import Foundation
import NucleicAdapters
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// One real CLI run against its mock model API, with everything both ways kept.
struct Outcome {
    var events: [AgentEvent]
    var agentLines: [String]
    var hostLines: [String]
    var refusals: [any Error]
    var repo: ScratchRepository

    var approvals: [ApprovalRequest] { events.compactMap { if case .approvalRequested(let a) = $0 { a } else { nil } } }
    var runs: [RunFinished] { events.compactMap { if case .runFinished(let r) = $0 { r } else { nil } } }
    var finalTexts: [String] { events.compactMap { if case .assistantText(let t, false) = $0 { t } else { nil } } }
    var completions: [ToolResult] { events.compactMap { if case .toolCallCompleted(let r) = $0 { r } else { nil } } }
    var notices: [String] { events.compactMap { if case .notice(_, let m, _) = $0 { m } else { nil } } }
}

/// How to run each real backend in tests.
enum EndToEnd {
    enum Backend {
        case claude, codex

        var name: String { self == .claude ? "claude" : "codex" }
        var mockScript: String { self == .claude ? "mock_anthropic.py" : "mock_openai.py" }
    }

    /// Runs one scenario of the backend's mock model API in a scratch repository with a private
    /// home, drives it through its codec, and checks the invariants every run must keep.
    static func drive(
        _ backend: Backend, _ scenario: String, prompt: String = "", runs: Int = 1, planMode: Bool = false,
        script: @escaping DrivenAgent.Script
    ) async throws -> Outcome {
        let binary = backend == .claude
            ? try Peers.require(Peers.claudeBinary, "NUCLEIC_CLAUDE_BIN")
            : try Peers.require(Peers.codexBinary, "NUCLEIC_CODEX_BIN")
        let mock = try await MockModelAPI.start(backend.mockScript)
        let repo = try ScratchRepository.make()
        let home = repo.path + "-home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }

        let manifest = try AdapterManifests.load(backend.name)
        var environment = ProcessInfo.processInfo.environment
        environment.merge(manifest.environment) { $1 }
        var arguments = manifest.launchArguments()
        // A private home is for tests only: users' sessions keep their own logins (DESIGN.md §4).
        environment["HOME"] = home
        switch backend {
        case .claude:
            environment["ANTHROPIC_BASE_URL"] = mock.baseURL
            environment["ANTHROPIC_API_KEY"] = "test-key"
            environment["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
            environment["DISABLE_AUTOUPDATER"] = "1"
        case .codex:
            environment["CODEX_HOME"] = home
            environment["MOCK_API_KEY"] = "test"
            arguments += [
                "-c", "model_provider=mock", "-c", "model_providers.mock.name=mock",
                "-c", "model_providers.mock.base_url=\(mock.baseURL)/v1",
                "-c", "model_providers.mock.wire_api=responses", "-c", "model_providers.mock.env_key=MOCK_API_KEY",
                "-c", "model_providers.mock.request_max_retries=0", "-c", "model_providers.mock.stream_max_retries=0",
            ]
        }
        let process = try ChildProcess.spawn(executable: binary, arguments: arguments, environment: environment, workingDirectory: repo.path)
        let ids = CountingIDs()
        let codec: any AgentCodec = backend == .claude
            ? ClaudeCodec(makeApprovalID: { ids.make() }) : CodexCodec(makeApprovalID: { ids.make() })
        let agent = DrivenAgent(process: process, codec: codec, script: script)
        let options = SessionStartOptions(
            prompt: "[[scenario:\(scenario)]] \(prompt)", cwd: repo.path, model: backend == .codex ? "gpt-5.5" : nil, planMode: planMode)
        do {
            try await agent.run(options, runs: runs)
        } catch {
            await mock.stop()
            throw error
        }
        await mock.stop()
        let outcome = Outcome(
            events: await agent.events, agentLines: await agent.agentLines, hostLines: await agent.hostLines,
            refusals: await agent.refusals, repo: repo)
        let writeFailures = await agent.writeFailures
        #expect(writeFailures.isEmpty, "\(writeFailures)")
        checkInvariants(outcome, backend)
        return outcome
    }

    /// Counts derived from the raw lines equal the events' counts; every tool call starts once
    /// and completes once, after its start; no host error events; one session start.
    static func checkInvariants(_ outcome: Outcome, _ backend: Backend) {
        let raw = backend == .claude ? RawCounts.claude(outcome.agentLines) : RawCounts.codex(outcome.agentLines)
        let events = EventCounts(outcome.events)
        #expect(events.approvalsRequested == raw.approvalsRequested, "approvals: events \(events), raw \(raw)")
        #expect(events.toolCallsStarted == raw.toolCallsStarted, "tool starts: events \(events), raw \(raw)")
        #expect(events.runs == raw.runs, "runs: events \(events), raw \(raw)")
        #expect(Set(events.toolCallsStarted).count == events.toolCallsStarted.count)
        #expect(events.toolCallsCompleted.sorted() == events.toolCallsStarted.sorted(), "every started tool completes once: \(events)")
        #expect(Set(raw.toolCallsCompleted).isSubset(of: Set(events.toolCallsCompleted)))
        for id in events.toolCallsStarted {
            let start = outcome.events.firstIndex { if case .toolCallStarted(let c) = $0 { c.toolCallID == id } else { false } }
            let end = outcome.events.firstIndex { if case .toolCallCompleted(let r) = $0 { r.toolCallID == id } else { false } }
            #expect(start != nil && end != nil && start! < end!, "\(id) completes after it starts")
        }
        let hostErrors = outcome.events.filter { $0.kind == "error" }
        #expect(hostErrors.isEmpty, "host errors: \(hostErrors)")
        let starts = outcome.events.compactMap { if case .sessionStarted(let s) = $0 { s } else { nil } }
        #expect(starts.count == 1 && starts.first?.nativeSessionID != nil, "\(starts)")
    }
}

/// A thread-safe counter for scripts that act on the n-th event of a kind.
final class Counter: @unchecked Sendable {  // mutated only under `lock`
    private let lock = NSLock()
    private var value = 0
    /// Increments and returns the new value (1 on the first call).
    func next() -> Int {
        lock.lock(); defer { lock.unlock() }
        value += 1
        return value
    }
}

/// The repository's adapter manifests.
enum AdapterManifests {
    static func load(_ name: String) throws -> AdapterManifest {
        let text = try String(contentsOfFile: "\(Peers.repoRoot)/Adapters/\(name).json", encoding: .utf8)
        return try AdapterManifest(json: JSONParser.parse(text))
    }
}
