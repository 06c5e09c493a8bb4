import Foundation
import NucleicAdapters
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// The real Claude Code CLI (pinned wheel) against the scripted Anthropic mock, driven through
/// `ClaudeCodec`. Each test checks the events, counts derived from the raw lines, and the files
/// the agent wrote.
@Suite(.serialized, .enabled(if: Peers.shouldRun(Peers.claudeBinary)))
struct ClaudeEndToEndTests {
    struct Outcome {
        var events: [AgentEvent]
        var agentLines: [String]
        var hostLines: [String]
        var refusals: [CodecError]
        var repo: ScratchRepository

        var approvals: [ApprovalRequest] { events.compactMap { if case .approvalRequested(let a) = $0 { a } else { nil } } }
        var runs: [RunFinished] { events.compactMap { if case .runFinished(let r) = $0 { r } else { nil } } }
        var finalTexts: [String] { events.compactMap { if case .assistantText(let t, false) = $0 { t } else { nil } } }
        var completions: [ToolResult] { events.compactMap { if case .toolCallCompleted(let r) = $0 { r } else { nil } } }
    }

    /// Runs one scenario of `Tests/Peers/mock_anthropic.py` and checks the invariants every run
    /// must keep.
    func drive(_ scenario: String, prompt: String = "", runs: Int = 1, script: @escaping DrivenAgent.Script) async throws -> Outcome {
        let claude = try Peers.require(Peers.claudeBinary, "NUCLEIC_CLAUDE_BIN")
        let mock = try await MockModelAPI.start("mock_anthropic.py")
        let repo = try ScratchRepository.make()
        let home = repo.path + "-home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }

        let manifest = try AdapterManifests.load("claude")
        var environment = ProcessInfo.processInfo.environment
        environment.merge(manifest.environment) { $1 }
        environment["HOME"] = home
        environment["ANTHROPIC_BASE_URL"] = mock.baseURL
        environment["ANTHROPIC_API_KEY"] = "test-key"
        environment["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
        environment["DISABLE_AUTOUPDATER"] = "1"
        let process = try ChildProcess.spawn(
            executable: claude, arguments: manifest.launchArguments(), environment: environment, workingDirectory: repo.path)
        let ids = CountingIDs()
        let agent = DrivenAgent(process: process, codec: ClaudeCodec(makeApprovalID: { ids.make() }), script: script)
        do {
            try await agent.run(SessionStartOptions(prompt: "[[scenario:\(scenario)]] \(prompt)", cwd: repo.path), runs: runs)
        } catch {
            await mock.stop()
            throw error
        }
        await mock.stop()
        let outcome = Outcome(
            events: await agent.events, agentLines: await agent.agentLines, hostLines: await agent.hostLines,
            refusals: await agent.refusals, repo: repo)
        #expect(await agent.writeFailures.isEmpty)
        checkInvariants(outcome)
        return outcome
    }

    /// Counts from the raw lines equal the events' counts; every tool call starts once and
    /// completes once, after its start; no host error events.
    func checkInvariants(_ outcome: Outcome) {
        let raw = RawCounts.claude(outcome.agentLines)
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
        if case .sessionStarted(let s)? = outcome.events.first(where: { $0.kind == "sessionStarted" }) {
            #expect(s.nativeSessionID != nil)
        } else {
            Issue.record("no sessionStarted event")
        }
    }

    @Test func plainAnswer() async throws {
        let o = try await drive("plain") { _ in [] }
        defer { o.repo.remove() }
        #expect(o.approvals.isEmpty)
        #expect(o.runs.map(\.isError) == [false])
        #expect(o.finalTexts.joined().contains("Hello from the mock."))
        #expect(o.runs.first?.usage != nil)
    }

    @Test func toolAllowed() async throws {
        let o = try await drive("tool-allow") { event in
            guard case .approvalRequested(let a) = event else { return [] }
            return [.send(.decide(a.id, .allow))]
        }
        defer { o.repo.remove() }
        #expect(o.approvals.map(\.toolName) == ["Bash"])
        #expect(o.approvals.first?.risk == .execute)
        #expect(o.repo.contents("hello.txt") == "hello\n")
        #expect(o.completions.map(\.status) == [.completed])
        #expect(o.runs.map(\.isError) == [false])
    }

    @Test func deniedWithAMessageTheAgentContinues() async throws {
        let o = try await drive("deny-continue") { event in
            guard case .approvalRequested(let a) = event else { return [] }
            return [.send(.decide(a.id, .deny(message: "use the test db instead")))]
        }
        defer { o.repo.remove() }
        #expect(o.completions.map(\.status) == [.declined])
        #expect(o.runs.map(\.isError) == [false])
        #expect(o.finalTexts.last?.contains("use the test db instead") == true, "\(o.finalTexts)")
    }

    @Test func allowModifiedRunsTheModifiedCommand() async throws {
        let o = try await drive("modify") { event in
            guard case .approvalRequested(let a) = event else { return [] }
            var input = a.input.objectValue ?? [:]
            input["command"] = "echo modified > modified.txt"
            return [.send(.decide(a.id, .allowModified(input: .object(input))))]
        }
        defer { o.repo.remove() }
        #expect(o.repo.contents("modified.txt") == "modified\n")
        #expect(o.approvals.first?.input["command"] == "echo original > modified.txt")
        #expect(o.runs.map(\.isError) == [false])
    }

    @Test func askUserQuestionAnswered() async throws {
        let o = try await drive("ask") { event in
            guard case .approvalRequested(let a) = event, let question = a.question else { return [] }
            let item = question.questions[0]
            return [.send(.decide(a.id, .answer(answers: [item.question: [item.options[1].label]])))]
        }
        defer { o.repo.remove() }
        let question = try #require(o.approvals.first?.question)
        let chosen = question.questions[0].options[1].label
        #expect(o.approvals.first?.toolName == "AskUserQuestion")
        #expect(o.finalTexts.last?.contains(chosen) == true, "\(o.finalTexts)")
        #expect(o.runs.map(\.isError) == [false])
    }

    @Test func twoToolsInOneMessage() async throws {
        let o = try await drive("two-tools") { event in
            guard case .approvalRequested(let a) = event else { return [] }
            return [.send(.decide(a.id, .allow))]
        }
        defer { o.repo.remove() }
        #expect(o.approvals.count == 2)
        #expect(Set(o.approvals.compactMap(\.toolCallID)).count == 2)
        #expect(o.repo.contents("one.txt") == "one\n")
        #expect(o.repo.contents("two.txt") == "two\n")
        #expect(o.runs.map(\.isError) == [false])
    }

    @Test func interruptWhileAToolRuns() async throws {
        let o = try await drive("interrupt") { event in
            guard case .approvalRequested(let a) = event else { return [] }
            return [.send(.decide(a.id, .allow)), .sendAfter(.seconds(2), .interrupt)]
        }
        defer { o.repo.remove() }
        #expect(o.runs.map(\.isError) == [true])
        #expect(o.runs.first?.stopReason == "interrupted")
        #expect(o.completions.map(\.status) == [.interrupted])
    }

    @Test func followUpTurn() async throws {
        let turns = Counter()
        let o = try await drive("followup", runs: 2) { event in
            guard case .runFinished = event, turns.next() == 1 else { return [] }
            return [.send(.prompt("[[followup]] and now the second part"))]
        }
        defer { o.repo.remove() }
        #expect(o.runs.map(\.isError) == [false, false])
        #expect(o.events.filter { $0.kind == "userInput" }.count == 2)
        #expect(o.finalTexts.contains { $0.contains("first turn done") })
        #expect(o.finalTexts.last?.contains("second turn done") == true, "\(o.finalTexts)")
        #expect(o.events.filter { $0.kind == "sessionStarted" }.count == 1)
    }

    @Test func modelAPIErrorIsANoticeAndAFailedRun() async throws {
        let o = try await drive("api-error") { _ in [] }
        defer { o.repo.remove() }
        #expect(o.runs.map(\.isError) == [true])
        #expect(o.events.contains { if case .notice(.error, _, _) = $0 { true } else { false } }, "\(o.events)")
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
