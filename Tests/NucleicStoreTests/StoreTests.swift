import Foundation
import NucleicProtocol
import Testing
@testable import NucleicStore

@Suite struct StoreTests {
    static let t0 = Timestamp(millisecondsSince1970: 1_790_000_000_000)

    static func project(_ name: String = "shop") -> ProjectRecord {
        ProjectRecord(name: name, path: "/code/\(name)", baseBranch: "main", createdAt: t0)
    }

    static func session(_ project: ProjectRecord, status: SessionStatus = .running, at: Int64 = 0) -> SessionRecord {
        SessionRecord(projectID: project.id, backend: "claude", title: "fix the flaky test", prompt: "fix the flaky payment test",
                      status: status, branch: "nucleic/fix-flaky", worktreePath: "/w/\(project.name)/s", baseBranch: "main",
                      createdAt: Timestamp(millisecondsSince1970: t0.millisecondsSince1970 + at))
    }

    static func request(_ session: SessionRecord, tool: String = "Bash") -> ApprovalRequest {
        ApprovalRequest(id: .make(), sessionID: session.id, toolCallID: "toolu_01", toolName: tool, input: ["command": "ls -la", "n": 3],
                        risk: .readOnly, capabilities: BackendCapabilities(canModifyToolInput: true, canAnswerQuestions: true),
                        offeredScopes: [.exactCommandThisSession], reason: "to look", createdAt: t0)
    }

    /// A store in `dir` with one project and one session of it, the session's handle set as the
    /// store gave it.
    static func storeWithSession(in dir: TempFolder) async throws -> (store: Store, project: ProjectRecord, session: SessionRecord) {
        let store = try await Store.open(path: dir.file("nucleic.db"))
        let p = project()
        try await store.insert(p)
        var s = session(p)
        s.handle = try await store.insert(s)
        return (store, p, s)
    }

    @Test func projectsRoundTrip() async throws {
        let dir = TempFolder()
        let store = try await Store.open(path: dir.file("nucleic.db"))
        let p = Self.project()
        try await store.insert(p)
        #expect(try await store.project(id: p.id) == p)
        #expect(try await store.project(named: "shop") == p)
        #expect(try await store.projects() == [p])
        var renamed = p
        renamed.path = "/elsewhere"
        renamed.baseBranch = "develop"
        try await store.update(renamed)
        #expect(try await store.project(id: p.id) == renamed)

        let duplicate = await #expect(throws: StoreError.self) { try await store.insert(Self.project()) }
        #expect(duplicate?.code == .constraint)
        #expect(duplicate?.message.contains("a project named \"shop\"") == true)
        try await store.deleteProject(id: p.id)
        #expect(try await store.projects().isEmpty)
        await #expect(throws: StoreError.self) { try await store.deleteProject(id: p.id) }
    }

    @Test func sessionsRoundTripWithEveryField() async throws {
        let dir = TempFolder()
        let store = try await Store.open(path: dir.file("nucleic.db"))
        let p = Self.project()
        try await store.insert(p)
        var full = Self.session(p)
        full.nativeSessionID = "00000000-0000-4000-8000-000000000001"
        full.lastSeq = 42
        full.diffStat = DiffStat(files: 3, insertions: 10, deletions: 2)
        full.exit = ExitInfo(status: .signaled(9), stderrTail: "Killed\n")
        full.error = "the agent died"
        full.updatedAt = Timestamp(millisecondsSince1970: Self.t0.millisecondsSince1970 + 5)
        full.handle = try await store.insert(full)
        #expect(try await store.session(id: full.id) == full)

        var bare = Self.session(p, status: .queued)
        bare.worktreePath = nil
        bare.handle = try await store.insert(bare)
        #expect(try await store.session(id: bare.id) == bare)

        var exited = Self.session(p)
        exited.exit = ExitInfo(status: .exited(0))
        try await store.insert(exited)
        #expect(try await store.session(id: exited.id)?.exit == ExitInfo(status: .exited(0)))

        let orphan = await #expect(throws: StoreError.self) {
            try await store.insert(SessionRecord(projectID: .make(), backend: "codex", title: "t", prompt: "p", branch: "b", baseBranch: "main"))
        }
        #expect(orphan?.code == .constraint)
        #expect(try await store.session(id: .make()) == nil)
    }

    @Test func sessionUpdatesTouchOnlyTheirFields() async throws {
        let dir = TempFolder()
        let (store, _, s) = try await Self.storeWithSession(in: dir)
        let t1 = Timestamp(millisecondsSince1970: Self.t0.millisecondsSince1970 + 1000)

        try await store.update(session: s.id, status: .awaitingApproval, at: t1)
        try await store.update(session: s.id, lastSeq: 17, at: t1)
        try await store.update(session: s.id, lastSeq: 12, at: t1)  // never backwards
        try await store.update(session: s.id, diffStat: DiffStat(files: 1, insertions: 2, deletions: 3), at: t1)
        try await store.update(session: s.id, nativeSessionID: "native-1", at: t1)
        var expected = s
        expected.status = .awaitingApproval
        expected.lastSeq = 17
        expected.diffStat = DiffStat(files: 1, insertions: 2, deletions: 3)
        expected.nativeSessionID = "native-1"
        expected.updatedAt = t1
        #expect(try await store.session(id: s.id) == expected)

        try await store.recordExit(session: s.id, exit: ExitInfo(status: .exited(2), stderrTail: "boom"), status: .error,
                                   error: "exited with code 2", at: t1)
        expected.exit = ExitInfo(status: .exited(2), stderrTail: "boom")
        expected.status = .error
        expected.error = "exited with code 2"
        #expect(try await store.session(id: s.id) == expected)

        let modified = try await store.modifySession(id: s.id, at: t1) { $0.title = "renamed"; $0.diffStat = nil; $0.exit = nil }
        expected.title = "renamed"
        expected.diffStat = nil
        expected.exit = nil
        #expect(modified == expected)
        #expect(try await store.session(id: s.id) == expected)

        let missing = await #expect(throws: StoreError.self) { try await store.update(session: .make(), status: .finished) }
        #expect(missing?.code == .notFound)
    }

    @Test func sessionsAreListedWithFiltersAndSummaries() async throws {
        let dir = TempFolder()
        let store = try await Store.open(path: dir.file("nucleic.db"))
        let shop = Self.project("shop")
        let blog = Self.project("blog")
        try await store.insert(shop)
        try await store.insert(blog)
        var sessions: [SessionRecord] = []
        for (i, (project, status)) in [(shop, SessionStatus.running), (shop, .finished), (blog, .awaitingApproval),
                                       (blog, .discarded), (shop, .error), (blog, .queued)].enumerated() {
            var s = Self.session(project, status: status, at: Int64(i) * 10)
            if i == 5 { s.backend = "codex" }
            s.handle = try await store.insert(s)
            sessions.append(s)
        }
        let all = try await store.sessions()
        #expect(all.map(\.id) == sessions.reversed().map(\.id))  // most recently updated first
        #expect(try await store.sessions(matching: SessionFilter(projectID: blog.id)).map(\.id) == [sessions[5].id, sessions[3].id, sessions[2].id])
        #expect(try await store.sessions(matching: SessionFilter(statuses: [.running, .queued])).map(\.id) == [sessions[5].id, sessions[0].id])
        #expect(try await store.sessions(matching: SessionFilter(includeArchived: false)).count == 5)
        #expect(try await store.sessions(matching: SessionFilter(backend: "codex")).map(\.id) == [sessions[5].id])
        #expect(try await store.sessions(matching: SessionFilter(updatedSince: Timestamp(millisecondsSince1970: Self.t0.millisecondsSince1970 + 30))).count == 3)
        #expect(try await store.sessions(matching: SessionFilter(limit: 2)).count == 2)
        #expect(try await store.sessions(matching: SessionFilter(statuses: [])).isEmpty)

        try await store.insert(ApprovalRecord(request: Self.request(sessions[2]), sessionID: sessions[2].id))
        try await store.insert(ApprovalRecord(request: Self.request(sessions[2], tool: "Edit"), sessionID: sessions[2].id))
        let summaries = try await store.sessionSummaries()
        // NEEDS YOU (awaitingApproval, error), RUNNING (queued, running), DONE (discarded, finished), newest first within each.
        #expect(summaries.map(\.sessionID) == [sessions[4].id, sessions[2].id, sessions[5].id, sessions[0].id, sessions[3].id, sessions[1].id])
        let blogSummary = try #require(summaries.first { $0.sessionID == sessions[2].id })
        #expect(blogSummary.projectName == "blog")
        #expect(blogSummary.pendingApprovals == 2)
        #expect(blogSummary == sessions[2].summary(projectName: "blog", pendingApprovals: 2))

        // Unique prefixes, as the CLI takes them.
        let id = sessions[3].id.rawValue
        #expect(try await store.ids(.session, matchingPrefix: id) == [id])
        #expect(try await store.ids(.session, matchingPrefix: String(id.prefix(34)).uppercased()) == [id])
        #expect(try await store.ids(.session, matchingPrefix: "zzz").isEmpty)
        #expect(try await store.ids(.project, matchingPrefix: "").isEmpty)
    }

    @Test func approvalsResolveOnceAndWithdraw() async throws {
        let dir = TempFolder()
        let (store, _, s) = try await Self.storeWithSession(in: dir)
        var first = ApprovalRecord(request: Self.request(s), sessionID: s.id)
        var second = ApprovalRecord(request: Self.request(s, tool: "Write"), sessionID: s.id,
                                    createdAt: Timestamp(millisecondsSince1970: Self.t0.millisecondsSince1970 + 1))
        first.request.handle = try await store.insert(first)
        second.request.handle = try await store.insert(second)
        #expect(try await store.approval(id: first.id) == first)
        #expect(try await store.pendingApprovals() == [first, second])

        let t1 = Timestamp(millisecondsSince1970: Self.t0.millisecondsSince1970 + 500)
        let decision = Decision.allowModified(input: ["command": "ls"])
        let outcome = try await store.resolve(approval: first.id, decision: decision, decidedBy: "device:0193", decidedByLabel: "Ana's iPhone", at: t1)
        var resolved = first
        resolved.status = .resolved
        resolved.decision = decision
        resolved.decidedBy = "device:0193"
        resolved.decidedByLabel = "Ana's iPhone"
        resolved.resolvedAt = t1
        #expect(outcome == .done(resolved))
        // A later answer does not overwrite the first.
        let late = try await store.resolve(approval: first.id, decision: .deny(message: "no"), decidedBy: "user:ana")
        #expect(late == .notPending(resolved))
        #expect(try await store.resolve(approval: .make(), decision: .allow, decidedBy: "user:ana") == .notFound)

        let withdrawn = try await store.withdrawPending(session: s.id, reason: "agent exited", at: t1)
        #expect(withdrawn == [second.id])
        let secondNow = try #require(try await store.approval(id: second.id))
        #expect(secondNow.status == .withdrawn)
        #expect(secondNow.withdrawReason == "agent exited")
        #expect(try await store.withdraw(approval: second.id, reason: "again") == .notPending(secondNow))
        #expect(try await store.pendingApprovals().isEmpty)
        #expect(try await store.approvals(session: s.id).map(\.id) == [first.id, second.id])
        #expect(try await store.approvals(session: s.id, status: .resolved) == [resolved])

        // Every decision shape survives.
        for d in [Decision.allow, .deny(message: "use the test db"), .cancel, .answer(answers: ["Which?": ["A", "B"]]),
                  .allowAlways(scope: .rule("Bash(npm test *)"))] {
            let a = ApprovalRecord(request: Self.request(s), sessionID: s.id)
            try await store.insert(a)
            guard case .done(let r) = try await store.resolve(approval: a.id, decision: d, decidedBy: "rule:r1") else {
                Issue.record("not resolved"); continue
            }
            #expect(try await store.approval(id: a.id)?.decision == d)
            #expect(r.decision == d)
        }
    }

    @Test func devicesRoundTripAndRevoke() async throws {
        let dir = TempFolder()
        let store = try await Store.open(path: dir.file("nucleic.db"))
        let key = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        let d = DeviceRecord(label: "Ana's iPhone", scope: .approve, publicKey: key, createdAt: Self.t0)
        try await store.insert(d)
        #expect(try await store.device(id: d.id) == d)
        #expect(try await store.device(publicKey: key) == d)
        #expect(try await store.devices() == [d])
        let again = await #expect(throws: StoreError.self) {
            try await store.insert(DeviceRecord(label: "copy", scope: .view, publicKey: key))
        }
        #expect(again?.code == .constraint)
        await #expect(throws: StoreError.self) { try await store.insert(DeviceRecord(label: "short", scope: .view, publicKey: [1, 2, 3])) }

        #expect(try await store.revoke(device: d.id, at: Self.t0) == true)
        #expect(try await store.revoke(device: d.id) == false)
        #expect(try await store.devices().isEmpty)
        var revoked = d
        revoked.revokedAt = Self.t0
        #expect(try await store.devices(includeRevoked: true) == [revoked])
        await #expect(throws: StoreError.self) { try await store.revoke(device: .make()) }
    }

    @Test func rulesRoundTripWithProvenance() async throws {
        let dir = TempFolder()
        let (store, p, s) = try await Self.storeWithSession(in: dir)
        let other = Self.session(p)
        try await store.insert(other)
        let approval = ApprovalRecord(request: Self.request(s), sessionID: s.id)
        try await store.insert(approval)

        let projectRule = RuleRecord(scope: .project(p.id), rule: "Bash(npm test *)", behavior: .allow, createdBy: "user:ana",
                                     createdAt: Self.t0, approvalID: approval.id)
        let sessionRule = RuleRecord(scope: .session(s.id), rule: "WebFetch(domain:example.com)", behavior: .deny, createdBy: "device:0193",
                                     createdAt: Timestamp(millisecondsSince1970: Self.t0.millisecondsSince1970 + 1))
        try await store.insert(projectRule)
        try await store.insert(sessionRule)
        #expect(try await store.rule(id: projectRule.id) == projectRule)
        #expect(try await store.rules(project: p.id) == [projectRule])
        #expect(try await store.rules(session: s.id) == [projectRule, sessionRule])
        #expect(try await store.rules(session: other.id) == [projectRule])
        await #expect(throws: StoreError.self) {
            try await store.insert(RuleRecord(scope: .session(.make()), rule: "Read", behavior: .allow, createdBy: "user:ana"))
        }
        #expect(try await store.deleteRule(id: sessionRule.id))
        #expect(try await store.deleteRule(id: sessionRule.id) == false)
    }

    @Test func todosAreReplacedAsAList() async throws {
        let dir = TempFolder()
        let (store, _, s) = try await Self.storeWithSession(in: dir)
        let first = try await store.replaceTodos(session: s.id, [("read the test", true), ("fix it", false)])
        #expect(first.map(\.text) == ["read the test", "fix it"])
        #expect(first.map(\.done) == [true, false])
        #expect(first.map(\.position) == [0, 1])
        try await store.setTodo(id: first[1].id, done: true)
        #expect(try await store.todos(session: s.id).map(\.done) == [true, true])
        let second = try await store.replaceTodos(session: s.id, [("only this", false)])
        #expect(try await store.todos(session: s.id) == second)
        await #expect(throws: StoreError.self) { try await store.replaceTodos(session: .make(), [("x", false)]) }

        // Deleting the session takes its approvals, rules and todos with it.
        try await store.insert(ApprovalRecord(request: Self.request(s), sessionID: s.id))
        try await store.insert(RuleRecord(scope: .session(s.id), rule: "Read", behavior: .allow, createdBy: "user:ana"))
        try await store.deleteSession(id: s.id)
        #expect(try await store.todos(session: s.id).isEmpty)
        #expect(try await store.pendingApprovals().isEmpty)
        #expect(try await store.rules(session: s.id).isEmpty)
    }

    @Test func reopeningTheStoreKeepsEverything() async throws {
        let dir = TempFolder()
        let path = dir.file("nucleic.db")
        let p = Self.project()
        var s = Self.session(p)
        do {
            let store = try await Store.open(path: path)
            try await store.insert(p)
            s.handle = try await store.insert(s)
        }
        let store = try await Store.open(path: path)
        #expect(try await store.project(id: p.id) == p)
        #expect(try await store.session(id: s.id) == s)
        // The lent database runs on the store's queue.
        let count = try await store.read { db throws(StoreError) -> Int64 in try db.scalar("SELECT count(*) FROM sessions") ?? 0 }
        #expect(count == 1)
        try await store.write { db throws(StoreError) in try db.execute("UPDATE sessions SET title = 'via write'") }
        #expect(try await store.session(id: s.id)?.title == "via write")
        try await store.backup(to: dir.file("copy.db"))
        let copy = try await Store.open(path: dir.file("copy.db"))
        #expect(try await copy.session(id: s.id)?.title == "via write")
    }

    @Test func concurrentCallersAreSerialized() async throws {
        let dir = TempFolder()
        let (store, _, s) = try await Self.storeWithSession(in: dir)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 1...200 {
                group.addTask { try await store.update(session: s.id, lastSeq: Int64(i)) }
            }
            try await group.waitForAll()
        }
        #expect(try await store.session(id: s.id)?.lastSeq == 200)
    }
}
