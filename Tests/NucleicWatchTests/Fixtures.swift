import NucleicProtocol
import NucleicRemoteKit
import NucleicWatch
import Testing

/// Shared values for the watch view's tests.
enum Fx {
    static let s1: SessionID = "0193a000-0000-7000-8000-000000000001"
    static let s2: SessionID = "0193a000-0000-7000-8000-000000000002"
    static let s3: SessionID = "0193a000-0000-7000-8000-000000000003"
    static let a1: ApprovalID = "0193b000-0000-7000-8000-000000000001"
    static let a2: ApprovalID = "0193b000-0000-7000-8000-000000000002"
    static let epoch: Int64 = 1_796_000_000_000

    static func ts(_ second: Int64) -> Timestamp { Timestamp(millisecondsSince1970: epoch + second * 1000) }

    static func summary(_ id: SessionID, _ title: String, _ status: SessionStatus, second: Int64, lastSeq: Int64 = 0, pending: Int = 0,
                        handle: String? = nil, diff: DiffStat? = nil, project: String = "proj") -> SessionSummary {
        var s = SessionSummary(sessionID: id, projectName: project, backend: "replay", status: status, title: title, branch: "nucleic/\(title)",
                               lastSeq: lastSeq, diffStat: diff, pendingApprovals: pending, updatedAt: ts(second), handle: handle)
        s.condition = nil
        return s
    }

    static func approval(_ id: ApprovalID, session: SessionID = s1, risk: Risk, command: String = "ls", tool: String = "toolu_1",
                         scopes: [ApprovalScope] = [.exactCommandThisSession, .toolThisSession]) -> ApprovalRequest {
        ApprovalRequest(id: id, sessionID: session, toolCallID: tool, toolName: "Bash", input: ["command": .string(command)], risk: risk,
                        capabilities: .claude, offeredScopes: scopes, createdAt: ts(1))
    }

    static func question(_ id: ApprovalID, session: SessionID = s1, items: [StructuredQuestion.Item]) -> ApprovalRequest {
        ApprovalRequest(id: id, sessionID: session, toolCallID: "toolu_q", toolName: "AskUserQuestion", toolKind: .question,
                        input: ["questions": .array([])], risk: .readOnly, capabilities: .claude,
                        question: StructuredQuestion(questions: items), createdAt: ts(2))
    }

    static let colour = StructuredQuestion.Item(question: "Which colour?", options: [.init(label: "Red"), .init(label: "Blue", description: "calm")])
    static let size = StructuredQuestion.Item(question: "Which size?", options: [.init(label: "S"), .init(label: "M"), .init(label: "L")], allowsOther: true)

    static func events(_ events: [AgentEvent], from seq: Int64 = 1) -> [SequencedEvent] {
        events.enumerated().map { SequencedEvent(seq: seq + Int64($0.offset), ts: ts(seq + Int64($0.offset)), event: $0.element) }
    }

    static func resolved(_ id: ApprovalID, by: String = "user:ana", decision: Decision = .allow) -> ApprovalResolution {
        ApprovalResolution(approvalID: id, decision: decision, decidedBy: by, decidedByLabel: nil)
    }

    static let host = HostInfo(hostName: "box", hostVersion: "0.1", scope: .control, deviceID: nil)

    /// The inputs that make a live view: welcomed and connected.
    static let live: [RemoteInput] = [.local(.welcome(host)), .local(.connection(.connected(since: ts(0), catchingUp: 0)))]
}
