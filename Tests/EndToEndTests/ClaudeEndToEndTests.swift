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
    func drive(_ scenario: String, prompt: String = "", runs: Int = 1, script: @escaping DrivenAgent.Script) async throws -> Outcome {
        try await EndToEnd.drive(.claude, scenario, prompt: prompt, runs: runs, script: script)
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
