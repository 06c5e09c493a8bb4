public import NucleicProtocol

/// One example of every client and host message (several for messages with optional parts),
/// shared by the JSON round-trip tests and the cbor2 interop tests, so a new message type is
/// checked by both as soon as it is listed here.
public enum MessageExamples {
    public static let approval = ApprovalRequest(
        id: "0193a000-0000-7000-8000-000000000001", sessionID: "0193a000-0000-7000-8000-000000000002",
        toolCallID: "toolu_01", toolName: "Bash", input: ["command": "ls"], risk: .readOnly,
        capabilities: .claude, offeredScopes: [.exactCommandThisSession, .rule("Bash(ls *)")],
        question: nil, reason: "list files", createdAt: Timestamp(millisecondsSince1970: 1_796_023_569_145))

    public static let session = SessionID("0193a000-0000-7000-8000-00000000000a")
    public static let summary = SessionSummary(
        sessionID: session, projectName: "shop", backend: "claude", status: .awaitingApproval, title: "fix the flaky test",
        branch: "nucleic/fix-flaky", lastSeq: 42, diffStat: DiffStat(files: 2, insertions: 10, deletions: 3),
        pendingApprovals: 1, updatedAt: Timestamp(millisecondsSince1970: 1_796_000_000_000))

    public static let clientMessages: [ClientMsg] = [
        ClientMsg(.hello(protocolVersion: 1, client: "nucleic-cli"), requestID: 1),
        ClientMsg(.listSessions(includeArchived: true)),
        ClientMsg(.subscribe(sessionID: session, sinceSeq: 12, verbosity: .coalesced), requestID: 7),
        ClientMsg(.subscribe(sessionID: session, sinceSeq: nil, verbosity: .full)),
        ClientMsg(.subscribe(sessionID: session, sinceSeq: nil, verbosity: .full, foreground: true)),
        ClientMsg(.unsubscribe(sessionID: session)),
        ClientMsg(.approvalRespond(approvalID: "a1", decision: .deny(message: "no"))),
        ClientMsg(.sendInput(sessionID: session, text: "go on")),
        ClientMsg(.interrupt(sessionID: session)),
        ClientMsg(.ping),
        ClientMsg(.addProject(path: "/src/shop", name: "shop")),
        ClientMsg(.removeProject(project: "shop")),
        ClientMsg(.listProjects),
        ClientMsg(.startSession(.init(prompt: "fix it", project: "shop", backend: "replay", fixture: "f.jsonl", base: "main", title: "t"))),
        ClientMsg(.listApprovals),
        ClientMsg(.getDiff(sessionID: session, statOnly: true)),
        ClientMsg(.discard(sessionID: session, deleteBranch: true)),
        ClientMsg(.exportFixture(sessionID: session)),
        ClientMsg(.shutdown(killSessions: true)),
        ClientMsg(.integrate(.init(strategy: "squash", sessionID: session, message: "m", noFastForward: false, keep: true, interrupt: true))),
        ClientMsg(.overlap(project: "shop")),
        ClientMsg(.approvalRespond(approvalID: "a2", decision: .deny(message: "never"), denyAlways: .rule("Bash(git push *)")), requestID: 4),
        ClientMsg(.rules(.list(project: "shop"))),
        ClientMsg(.rules(.list(project: nil))),
        ClientMsg(.rules(.add(rule: "Bash(npm test *)", behavior: .allow, project: "shop", sessionID: nil, message: nil))),
        ClientMsg(.rules(.add(rule: "Bash(rm *)", behavior: .deny, project: nil, sessionID: session, message: "use make clean"))),
        ClientMsg(.rules(.remove(ruleID: "0193c"))),
        ClientMsg(.rules(.explain(toolName: "Bash", input: ["command": "npm test; rm -rf ~"], project: "shop", sessionID: nil))),
    ]

    public static let hostMessages: [HostMsg] = [
        HostMsg(.welcome(protocolVersion: 1, scope: .control, hostName: "box", hostVersion: "0.1.0"), requestID: 1),
        HostMsg(.sessionList([summary])),
        HostMsg(.snapshot(summary: summary, events: [SequencedEvent(seq: 41, ts: summary.updatedAt, event: .userInput(text: "x"))],
                          pendingApprovals: [approval], cursor: 41)),
        HostMsg(.events(sessionID: session, events: [SequencedEvent(seq: 42, ts: summary.updatedAt, event: .assistantText(text: "y", isPartial: false))])),
        HostMsg(.approvalRequested(approval)),
        HostMsg(.approvalResolved(sessionID: session, ApprovalResolution(approvalID: "a1", decision: .allow, decidedBy: "device:d1", decidedByLabel: "Ana's iPhone"))),
        HostMsg(.sessionUpdated(summary)),
        HostMsg(.error(code: .alreadyResolved, message: "already answered by user:ana", sessionID: session), requestID: 9),
        HostMsg(.pong),
        HostMsg(.ok, requestID: 3),
        HostMsg(.sessionCreated(summary)),
        HostMsg(.projectList([ProjectInfo(id: "p1", name: "shop", path: "/src/shop", baseBranch: "main")])),
        HostMsg(.approvalList([approval])),
        HostMsg(.diff(sessionID: session, stat: DiffStat(files: 1, insertions: 1, deletions: 0),
                      files: [FileStat(path: "a.txt", change: "added", insertions: 1, deletions: 0)], patch: "diff --git a/a.txt b/a.txt\n")),
        HostMsg(.fixture(sessionID: session, text: "{\"fixture\":1}\n")),
        HostMsg(.integrated(sessionID: session, commit: "abc123", strategy: "squash", fastForward: false, changedPaths: ["a.txt"])),
        HostMsg(.integrationRefused(sessionID: session, reason: "conflicted", paths: ["a.txt"], message: "conflicts in a.txt")),
        HostMsg(.overlap(["src/a.swift": [session, "0193b"]])),
        HostMsg(.ruleList([
            RuleInfo(id: "0193c", rule: "Bash(npm test *)", behavior: .allow, projectID: "p1", createdBy: "user:ana",
                     createdAt: summary.updatedAt, fromApproval: "a1"),
            RuleInfo(id: "0193d", rule: "Bash(rm *)", behavior: .deny, sessionID: session, createdBy: "device:d1",
                     createdAt: summary.updatedAt, message: "use make clean"),
        ]), requestID: 5),
        HostMsg(.ruleVerdict(RuleVerdict(risk: .execute, riskReasons: ["runs npm test"], outcome: .allowedByRule, decidedBy: "0193c",
                                         rules: [.init(ruleID: "0193c", rule: "Bash(npm test *)", behavior: .allow, part: "npm test", honoured: true),
                                                 .init(ruleID: "0193e", rule: "Bash", behavior: .allow, part: "curl x", honoured: false, note: "risk network")],
                                         reasons: []))),
    ]
}
