import NucleicProtocol
import NucleicRemoteKit
import Testing

/// Shared values for the kit's tests.
enum Fx {
    static let s1: SessionID = "0193a000-0000-7000-8000-000000000001"
    static let s2: SessionID = "0193a000-0000-7000-8000-000000000002"
    static let a1: ApprovalID = "0193b000-0000-7000-8000-000000000001"
    static let a2: ApprovalID = "0193b000-0000-7000-8000-000000000002"
    static let me: DeviceID = "0193c000-0000-7000-8000-00000000000a"
    static let epoch: Int64 = 1_796_000_000_000

    static func ts(_ second: Int64) -> Timestamp { Timestamp(millisecondsSince1970: epoch + second * 1000) }

    static func summary(_ id: SessionID, _ title: String, _ status: SessionStatus, second: Int64, lastSeq: Int64 = 0, pending: Int = 0) -> SessionSummary {
        SessionSummary(sessionID: id, projectName: "proj", backend: "replay", status: status, title: title, branch: "nucleic/\(title)",
                       lastSeq: lastSeq, pendingApprovals: pending, updatedAt: ts(second))
    }

    static func approval(_ id: ApprovalID, session: SessionID = s1, risk: Risk, command: String = "ls", tool: String = "toolu_1",
                         scopes: [ApprovalScope] = [.exactCommandThisSession, .toolThisSession]) -> ApprovalRequest {
        ApprovalRequest(id: id, sessionID: session, toolCallID: tool, toolName: "Bash", input: ["command": .string(command)], risk: risk,
                        capabilities: .claude, offeredScopes: scopes, createdAt: ts(1))
    }

    static func events(_ events: [AgentEvent], from seq: Int64 = 1) -> [SequencedEvent] {
        events.enumerated().map { SequencedEvent(seq: seq + Int64($0.offset), ts: ts(seq + Int64($0.offset)), event: $0.element) }
    }

    /// A turn with everything a transcript shows: streamed reasoning and text, a tool written in
    /// deltas then run, an approval.
    static func turn(approval: ApprovalRequest) -> [AgentEvent] {
        [
            .sessionStarted(SessionStarted(backend: "claude", model: "opus")),
            .userInput(text: "fix the build"),
            .reasoning(text: "Look", isPartial: true),
            .reasoning(text: "ing", isPartial: true),
            .reasoning(text: "Looking.", isPartial: false),
            .assistantText(text: "I'll ", isPartial: true),
            .assistantText(text: "run it", isPartial: true),
            .assistantText(text: "I'll run it.", isPartial: false),
            .toolCallInputDelta(toolCallID: "toolu_1", delta: "{\"comm"),
            .toolCallInputDelta(toolCallID: "toolu_1", delta: "and\":\"ls\"}"),
            .toolCallStarted(ToolCall(toolCallID: "toolu_1", name: "Bash", toolKind: .execute, input: ["command": "ls"])),
            .approvalRequested(approval),
        ]
    }

    static func resolved(_ id: ApprovalID, by device: DeviceID, label: String, decision: Decision = .allow) -> ApprovalResolution {
        ApprovalResolution(approvalID: id, decision: decision, decidedBy: "device:\(device.rawValue)", decidedByLabel: label)
    }

    static let after: [AgentEvent] = [
        .toolCallOutputDelta(toolCallID: "toolu_1", delta: "a.txt\n"),
        .toolCallCompleted(ToolResult(toolCallID: "toolu_1", status: .completed, output: "a.txt\nb.txt\n", exitCode: 0)),
        .assistantText(text: "Done", isPartial: true),
        .assistantText(text: "Done.", isPartial: false),
        .runFinished(RunFinished(isError: false, stopReason: "end_turn", result: "Done.")),
    ]
}
