import NucleicProtocol
import NucleicRuntime
import Testing

@Suite struct SessionLifecycleTests {
    static func approval(_ n: Int, question: Bool = false) -> ApprovalRequest {
        ApprovalRequest(
            id: ApprovalID("a\(n)"), toolCallID: "t\(n)", toolName: question ? "AskUserQuestion" : "Bash", input: [:],
            risk: .execute, capabilities: .claude,
            question: question ? StructuredQuestion(questions: [.init(question: "Which?", options: [.init(label: "A")])]) : nil)
    }

    static func resolved(_ n: Int) -> AgentEvent {
        .approvalResolved(ApprovalResolution(approvalID: ApprovalID("a\(n)"), decision: .allow, decidedBy: "user:me"))
    }

    /// Applies inputs one by one, checking the status and the emitted change after each.
    func run(_ steps: [(SessionLifecycle.Input, SessionStatus, changed: Bool)], from start: SessionStatus = .queued) -> SessionLifecycle {
        var machine = SessionLifecycle(status: start)
        for (i, step) in steps.enumerated() {
            let before = machine.status
            let change = machine.apply(step.0)
            #expect(machine.status == step.1, "step \(i): \(step.0)")
            if step.changed {
                guard case .statusChanged(let status, _)? = change else { Issue.record("step \(i): no change event"); continue }
                #expect(status == step.1 && before != status)
            } else {
                #expect(change == nil, "step \(i): unexpected \(String(describing: change))")
            }
        }
        return machine
    }

    @Test func aTurnWithAnApprovalGoesRunningWaitingRunningFinished() {
        let m = run([
            (.started, .running, true),
            (.event(.toolCallStarted(ToolCall(toolCallID: "t1", name: "Bash", toolKind: .execute, input: [:]))), .running, false),
            (.event(.approvalRequested(Self.approval(1))), .awaitingApproval, true),
            (.event(Self.resolved(1)), .running, true),
            (.event(.runFinished(RunFinished(isError: false, stopReason: "end_turn"))), .finished, true),
            (.promptSent, .running, true),
        ])
        #expect(m.pending.isEmpty)
    }

    @Test func twoApprovalsWaitUntilBothAreAnswered() {
        let m = run([
            (.started, .running, true),
            (.event(.approvalRequested(Self.approval(1))), .awaitingApproval, true),
            (.event(.approvalRequested(Self.approval(2))), .awaitingApproval, false),
            (.event(Self.resolved(1)), .awaitingApproval, false),
            (.event(.approvalWithdrawn(approvalID: ApprovalID("a2"), reason: "cancelled")), .running, true),
        ])
        #expect(m.pending.isEmpty)
    }

    @Test func aQuestionIsAwaitingInputAndAnApprovalBesideItWins() {
        _ = run([
            (.started, .running, true),
            (.event(.approvalRequested(Self.approval(1, question: true))), .awaitingInput, true),
            (.event(.approvalRequested(Self.approval(2))), .awaitingApproval, true),
            (.event(Self.resolved(2)), .awaitingInput, true),
            (.event(Self.resolved(1)), .running, true),
        ])
    }

    @Test func anInterruptedTurnAwaitsInputAndAFailedOneIsAnError() {
        _ = run([
            (.started, .running, true),
            (.event(.approvalRequested(Self.approval(1))), .awaitingApproval, true),
            (.event(.runFinished(RunFinished(isError: true, stopReason: "interrupted"))), .awaitingInput, true),
            (.promptSent, .running, true),
        ])
        let m = run([
            (.started, .running, true),
            (.event(.runFinished(RunFinished(isError: true, stopReason: "api_error", result: "API Error: 500"))), .error, true),
        ])
        #expect(m.errorReason == "API Error: 500")
    }

    @Test func anUnexpectedExitIsAnErrorAnExpectedOneAfterATurnIsNot() {
        let m = run([
            (.started, .running, true),
            (.processExited(description: "killed by SIGKILL", expected: false), .error, true),
        ])
        #expect(m.errorReason == "the agent exited: killed by SIGKILL")
        _ = run([
            (.started, .running, true),
            (.event(.runFinished(RunFinished(isError: false, stopReason: "end_turn"))), .finished, true),
            (.processExited(description: "exit 0", expected: true), .finished, false),
        ])
        _ = run([
            (.started, .running, true),
            (.processExited(description: "exit 0", expected: true), .error, true),
        ])
    }

    @Test func aHostRestartStopsTheTurn() {
        _ = run([
            (.started, .running, true),
            (.event(.approvalRequested(Self.approval(1))), .awaitingApproval, true),
            (.hostRestarted, .awaitingInput, true),
        ])
        _ = run([(.hostRestarted, .finished, false)], from: .finished)
    }

    @Test func integratedAndDiscardedAreFinal() {
        _ = run([
            (.conflicted, .conflicted, true),
            (.integrated, .integrated, true),
            (.promptSent, .integrated, false),
            (.discarded, .integrated, false),
        ], from: .finished)
        _ = run([(.discarded, .discarded, true), (.started, .discarded, false)], from: .running)
    }
}
