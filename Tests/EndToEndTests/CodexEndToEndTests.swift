import Foundation
import NucleicAdapters
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// The real Codex CLI (`codex app-server`, pinned wheel) against the scripted Responses-API mock,
/// driven through `CodexCodec`. Each test checks the events, counts derived from the raw lines,
/// and the files the agent wrote.
@Suite(.serialized, .enabled(if: Peers.shouldRun(Peers.codexBinary)))
struct CodexEndToEndTests {
    func drive(_ scenario: String, runs: Int = 1, planMode: Bool = false, script: @escaping DrivenAgent.Script) async throws -> Outcome {
        try await EndToEnd.drive(.codex, scenario, runs: runs, planMode: planMode, script: script)
    }

    static func allowEverything(_ event: AgentEvent) -> [DrivenAgent.Step] {
        guard case .approvalRequested(let a) = event else { return [] }
        return [.send(.decide(a.id, .allow))]
    }

    @Test func plainAnswer() async throws {
        let o = try await drive("plain") { _ in [] }
        defer { o.repo.remove() }
        #expect(o.approvals.isEmpty)
        #expect(o.runs.map(\.isError) == [false])
        #expect(o.finalTexts.last == "Hello from the mock.")
        #expect(o.events.filter { $0.kind == "userInput" }.count == 1)
    }

    @Test func toolAllowed() async throws {
        let o = try await drive("tool-allow", script: Self.allowEverything)
        defer { o.repo.remove() }
        #expect(o.approvals.count == 1)
        #expect(o.approvals.first?.capabilities.canModifyToolInput == false)
        #expect(o.repo.contents("hello.txt") == "hello\n")
        #expect(o.completions.map(\.status) == [.completed])
        #expect(o.completions.first?.exitCode == 0)
        #expect(o.runs.map(\.isError) == [false])
    }

    @Test func declinedTheAgentContinues() async throws {
        let o = try await drive("deny-continue") { event in
            guard case .approvalRequested(let a) = event else { return [] }
            return [.send(.decide(a.id, .deny(message: "keep the build folder")))]
        }
        defer { o.repo.remove() }
        #expect(o.completions.map(\.status) == [.declined])
        #expect(o.runs.map(\.isError) == [false])
        #expect(o.finalTexts.last?.contains("declined") == true, "\(o.finalTexts)")
        #expect(o.finalTexts.last?.contains("keep the build folder") == true, "the deny message reached the model: \(o.finalTexts)")
    }

    @Test func allowModifiedIsRefusedByTheCodecWithAClearError() async throws {
        let o = try await drive("tool-allow") { event in
            guard case .approvalRequested(let a) = event else { return [] }
            return [.sendExpectingRefusal(.decide(a.id, .allowModified(input: ["command": "echo changed > hello.txt"])),
                                          fallback: .decide(a.id, .deny(message: "write 'changed' instead")))]
        }
        defer { o.repo.remove() }
        let refusal = try #require(o.refusals.first as? CodecError)
        #expect(refusal.code == .unsupported)
        #expect(refusal.message.lowercased().contains("deny it with a message"), "the refusal suggests deny-with-message: \(refusal.message)")
        #expect(o.refusals.count == 1)
        #expect(o.repo.contents("hello.txt") == nil, "nothing ran")
        #expect(o.completions.map(\.status) == [.declined])
    }

    @Test func acceptForSessionThenARepeatNeedsNoSecondApproval() async throws {
        let o = try await drive("session-accept") { event in
            guard case .approvalRequested(let a) = event else { return [] }
            return [.send(.decide(a.id, .allowAlways(scope: .exactCommandThisSession)))]
        }
        defer { o.repo.remove() }
        #expect(o.approvals.count == 1, "the repeat was not asked again")
        #expect(o.approvals.first?.offeredScopes.contains(.exactCommandThisSession) == true)
        #expect(o.hostLines.contains { $0.contains(#""acceptForSession""#) })
        #expect(o.repo.contents("log.txt") == "one\none\n")
        #expect(o.completions.map(\.status) == [.completed, .completed])
    }

    @Test func fileChangeApproval() async throws {
        let o = try await drive("file-change", script: Self.allowEverything)
        defer { o.repo.remove() }
        #expect(o.approvals.count == 1)
        #expect(o.approvals.first?.risk == .write)
        #expect(o.repo.contents("notes.txt") == "Notes from the mock.\n")
        #expect(o.completions.map(\.status) == [.completed])
        #expect(o.events.contains { $0.kind == "diffUpdated" })
    }

    @Test func interruptWhileAToolRuns() async throws {
        let o = try await drive("interrupt") { event in
            guard case .approvalRequested(let a) = event else { return [] }
            return [.send(.decide(a.id, .allow)), .sendAfter(.seconds(2), .interrupt)]
        }
        defer { o.repo.remove() }
        #expect(o.runs.map(\.isError) == [true])
        #expect(o.runs.first?.stopReason == "interrupted")
        #expect(o.completions.count == 1 && o.completions.first?.status != .completed)
    }

    @Test func followUpTurn() async throws {
        let turns = Counter()
        let o = try await drive("followup", runs: 2) { event in
            guard case .runFinished = event, turns.next() == 1 else { return [] }
            return [.send(.prompt("[[followup]] and now the second part"))]
        }
        defer { o.repo.remove() }
        #expect(o.runs.map(\.isError) == [false, false])
        #expect(o.finalTexts == ["first turn done", "second turn done"])
        #expect(o.events.filter { $0.kind == "userInput" }.count == 2)
    }

    @Test func modelAPIErrorIsANoticeAndAFailedRun() async throws {
        let o = try await drive("api-error") { _ in [] }
        defer { o.repo.remove() }
        #expect(o.runs.map(\.isError) == [true])
        #expect(o.events.contains { if case .notice(.error, _, _) = $0 { true } else { false } }, "\(o.events)")
    }

    @Test func twoToolsInOneResponse() async throws {
        let o = try await drive("two-tools", script: Self.allowEverything)
        defer { o.repo.remove() }
        #expect(o.approvals.count == 2)
        #expect(o.repo.contents("a.txt") == "a\n")
        #expect(o.repo.contents("b.txt") == "b\n")
        #expect(o.completions.map(\.status) == [.completed, .completed])
        #expect(o.runs.map(\.isError) == [false])
    }

    @Test func questionInPlanModeAnswered() async throws {
        let o = try await drive("question", planMode: true) { event in
            guard case .approvalRequested(let a) = event, let question = a.question else { return [] }
            let item = question.questions[0]
            return [.send(.decide(a.id, .answer(answers: [item.question: [item.options[0].label]])))]
        }
        defer { o.repo.remove() }
        let question = try #require(o.approvals.first?.question)
        #expect(o.finalTexts.last?.contains(question.questions[0].options[0].label) == true, "\(o.finalTexts)")
        #expect(o.runs.map(\.isError) == [false])
    }
}
