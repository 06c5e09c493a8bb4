import Testing
@testable import NucleicProtocol

@Suite struct MessageTests {
    static let session = SessionID("0193a000-0000-7000-8000-00000000000a")
    static let summary = SessionSummary(
        sessionID: session, projectName: "shop", backend: "claude", status: .awaitingApproval, title: "fix the flaky test",
        branch: "nucleic/fix-flaky", lastSeq: 42, diffStat: DiffStat(files: 2, insertions: 10, deletions: 3),
        pendingApprovals: 1, updatedAt: Timestamp(millisecondsSince1970: 1_796_000_000_000))

    static let clientMessages: [ClientMsg] = [
        ClientMsg(.hello(protocolVersion: 1, client: "nucleic-cli"), requestID: 1),
        ClientMsg(.listSessions(includeArchived: true)),
        ClientMsg(.subscribe(sessionID: session, sinceSeq: 12, verbosity: .coalesced), requestID: 7),
        ClientMsg(.subscribe(sessionID: session, sinceSeq: nil, verbosity: .full)),
        ClientMsg(.unsubscribe(sessionID: session)),
        ClientMsg(.approvalRespond(approvalID: "a1", decision: .deny(message: "no"))),
        ClientMsg(.sendInput(sessionID: session, text: "go on")),
        ClientMsg(.interrupt(sessionID: session)),
        ClientMsg(.ping),
        ClientMsg(.addProject(path: "/src/shop", name: "shop")),
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

    static let hostMessages: [HostMsg] = [
        HostMsg(.welcome(protocolVersion: 1, scope: .control, hostName: "box", hostVersion: "0.1.0"), requestID: 1),
        HostMsg(.sessionList([summary])),
        HostMsg(.snapshot(summary: summary, events: [SequencedEvent(seq: 41, ts: summary.updatedAt, event: .userInput(text: "x"))],
                          pendingApprovals: [ModelTests.approval], cursor: 41)),
        HostMsg(.events(sessionID: session, events: [SequencedEvent(seq: 42, ts: summary.updatedAt, event: .assistantText(text: "y", isPartial: false))])),
        HostMsg(.approvalRequested(ModelTests.approval)),
        HostMsg(.approvalResolved(sessionID: session, ApprovalResolution(approvalID: "a1", decision: .allow, decidedBy: "device:d1", decidedByLabel: "Ana's iPhone"))),
        HostMsg(.sessionUpdated(summary)),
        HostMsg(.error(code: .alreadyResolved, message: "already answered by user:ana", sessionID: session), requestID: 9),
        HostMsg(.pong),
        HostMsg(.ok, requestID: 3),
        HostMsg(.sessionCreated(summary)),
        HostMsg(.projectList([ProjectInfo(id: "p1", name: "shop", path: "/src/shop", baseBranch: "main")])),
        HostMsg(.approvalList([ModelTests.approval])),
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

    @Test func everyClientMessageRoundTrips() throws {
        #expect(Set(Self.clientMessages.map(\.type)).count == 22)
        for message in Self.clientMessages {
            let text = JSONWriter.string(message.json)
            #expect(text.hasPrefix(#"{"type":""# + message.type), "\(text)")
            #expect(try ClientMsg(json: JSONParser.parse(text)) == message, "\(text)")
        }
    }

    @Test func everyHostMessageRoundTrips() throws {
        #expect(Set(Self.hostMessages.map(\.type)).count == 20)
        for message in Self.hostMessages {
            let text = JSONWriter.string(message.json)
            #expect(try HostMsg(json: JSONParser.parse(text)) == message, "\(text)")
        }
    }

    @Test func scopesAreCheckedPerMessage() {
        let scopes = Dictionary(Self.clientMessages.map { ($0.type, $0.requiredScope) }, uniquingKeysWith: { a, _ in a })
        #expect(scopes["subscribe"] == .view && scopes["listSessions"] == .view && scopes["ping"] == .view)
        #expect(scopes["approvalRespond"] == .approve && scopes["sendInput"] == .approve)
        #expect(scopes["interrupt"] == .control && scopes["startSession"] == .control && scopes["shutdown"] == .control)
        #expect(scopes["listRules"] == .control && scopes["addRule"] == .control && scopes["explainRule"] == .control)
        #expect(Scope.view < .approve && Scope.approve < .control)
    }

    @Test func unknownTypesAndFieldsAreHandledAsDocumented() throws {
        #expect(throws: ShapeError.self) { try ClientMsg(json: ["type": "teleport"]) }
        let withExtra = try ClientMsg(json: ["type": "ping", "requestID": 4, "futureField": [1, 2]])
        #expect(withExtra == ClientMsg(.ping, requestID: 4))
        #expect(throws: ShapeError.self) { try ClientMsg(json: ["type": "subscribe", "sessionID": "s", "verbosity": "loud"]) }
    }

    @Test func theAttentionOrderPutsNeedsYouFirstThenNewest() {
        func s(_ id: String, _ status: SessionStatus, _ ms: Int64) -> SessionSummary {
            SessionSummary(sessionID: SessionID(id), projectName: "p", backend: "claude", status: status, title: id, branch: "b",
                           lastSeq: 0, updatedAt: Timestamp(millisecondsSince1970: ms))
        }
        let sorted = [s("done", .finished, 9), s("run-old", .running, 1), s("err", .error, 2), s("run-new", .running, 5),
                      s("wait", .awaitingApproval, 3), s("queued", .queued, 4)].sorted(by: SessionSummary.attentionOrder)
        #expect(sorted.map(\.title) == ["wait", "err", "run-new", "queued", "run-old", "done"])
    }
}
