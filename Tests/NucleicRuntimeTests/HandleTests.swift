import Foundation
import NucleicProtocol
import NucleicRuntime
import NucleicStore
import Testing

/// Session and approval handles: assigned by the store, never reused, resolved by `Naming`.
@Suite struct HandleTests {
    static let t0: Int64 = 1_790_000_000_000

    func temporaryStore() async throws -> (Store, String) {
        var template = Array((NSTemporaryDirectory() + "nucleic-handles-XXXXXX").utf8CString)
        let folder = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        return (try await Store.open(path: folder + "/nucleic.db"), folder)
    }

    /// 200 sessions started over one simulated hour, as `startSession` names them (UUIDv7 ids
    /// made at their start time, branches ending in the id's last six characters).
    @Test func twoHundredSessionsOverAnHourEachHaveAShortHandle() async throws {
        let (store, folder) = try await temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let project = ProjectRecord(name: "shop", path: "/code/shop", baseBranch: "main")
        try await store.insert(project)
        var inserted: [(SessionID, String)] = []
        for i in 0..<200 {
            let at = Timestamp(millisecondsSince1970: Self.t0 + Int64(i) * 18_000)  // one every 18 s
            let id = SessionID.make(now: at)
            let branch = "nucleic/fix-test-\(i % 7)-\(id.rawValue.suffix(6))"
            let handle = try await store.insert(SessionRecord(id: id, projectID: project.id, backend: "claude", title: "fix \(i)",
                                                               prompt: "fix \(i)", branch: branch, baseBranch: "main", createdAt: at))
            inserted.append((id, handle))
        }
        let sessions = try await store.sessionSummaries()
        #expect(sessions.count == 200)
        #expect(Set(sessions.compactMap(\.handle)).count == 200)
        // Ids made within an hour share their first characters: a 4-character prefix names many.
        let prefix = String(inserted[0].0.rawValue.prefix(4))
        guard case .ambiguous = Naming.resolve(session: prefix, among: sessions) else {
            Issue.record("\(prefix) should be ambiguous among ids made within an hour"); return
        }
        for (id, handle) in inserted {
            let session = try #require(sessions.first { $0.sessionID == id })
            #expect(session.handle == handle)
            #expect(handle.count <= 4)
            #expect(Naming.resolve(session: handle, among: sessions) == .one(session))
            #expect(Naming.resolve(session: "#" + handle, among: sessions) == .one(session))
            #expect(Naming.resolve(session: session.branch, among: sessions) == .one(session))
            #expect(Naming.resolve(session: String(session.branch.dropFirst("nucleic/".count)), among: sessions) == .one(session))
            #expect(Naming.resolve(session: String(id.rawValue.suffix(8)), among: sessions) == .one(session))
            #expect(Naming.resolve(session: id.rawValue.uppercased(), among: sessions) == .one(session))
        }
        #expect(Naming.resolve(session: "nope", among: sessions) == .none)
        #expect(Naming.resolve(session: "", among: sessions) == .none)
    }

    @Test func handlesAreNeverReusedAfterADelete() async throws {
        let (store, folder) = try await temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let project = ProjectRecord(name: "shop", path: "/code/shop", baseBranch: "main")
        try await store.insert(project)
        func session() -> SessionRecord {
            SessionRecord(projectID: project.id, backend: "claude", title: "t", prompt: "p", branch: "nucleic/t-\(UInt32.random(in: 0...UInt32.max))", baseBranch: "main")
        }
        let first = session(), second = session()
        #expect(try await store.insert(first) == "1")
        #expect(try await store.insert(second) == "2")
        try await store.deleteSession(id: second.id)
        #expect(try await store.insert(session()) == "3")
        #expect(try await store.session(id: first.id)?.handle == "1")
        // A session's changes keep its handle.
        try await store.modifySession(id: first.id) { $0.title = "renamed" }
        #expect(try await store.session(id: first.id)?.handle == "1")
    }

    @Test func approvalsAreNumberedWithinTheirSession() async throws {
        let (store, folder) = try await temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let project = ProjectRecord(name: "shop", path: "/code/shop", baseBranch: "main")
        try await store.insert(project)
        let a = SessionRecord(projectID: project.id, backend: "claude", title: "a", prompt: "a", branch: "nucleic/a", baseBranch: "main")
        let b = SessionRecord(projectID: project.id, backend: "claude", title: "b", prompt: "b", branch: "nucleic/b", baseBranch: "main")
        try await store.insert(a)
        try await store.insert(b)
        func request(_ s: SessionRecord) -> ApprovalRecord {
            ApprovalRecord(request: ApprovalRequest(id: .make(), sessionID: s.id, toolCallID: nil, toolName: "Bash", input: ["command": "ls"],
                                                    risk: .readOnly, capabilities: BackendCapabilities(canModifyToolInput: true, canAnswerQuestions: true)), sessionID: s.id)
        }
        #expect(try await store.insert(request(a)) == "1.1")
        #expect(try await store.insert(request(b)) == "2.1")
        let third = request(a)
        #expect(try await store.insert(third) == "1.2")
        let pending = try await store.pendingApprovals().map(\.request)
        #expect(Set(pending.compactMap(\.handle)) == ["1.1", "2.1", "1.2"])
        #expect(pending.first { $0.id == third.id }?.json["handle"] == .string("1.2"))
        #expect(Naming.resolve(approval: "1.2", among: pending) == .one(pending.first { $0.id == third.id }!))
        #expect(Naming.resolve(approval: String(third.id.rawValue.suffix(6)), among: pending) == .one(pending.first { $0.id == third.id }!))
        #expect(Naming.resolve(approval: "3.1", among: pending) == .none)
    }

    /// A short number that is no handle names nothing, not a session or approval whose id happens
    /// to end in those digits: an id's prefix or suffix names it from four characters on.
    @Test func aNumberThatIsNoHandleNamesNothingAndShortIDPartsNameNothing() {
        func session(_ id: String, handle: String) -> SessionSummary {
            SessionSummary(sessionID: SessionID(id), projectName: "shop", backend: "replay", status: .finished,
                           title: "t", branch: "nucleic/t-\(id.suffix(6))", worktree: "/w", lastSeq: 0, pendingApprovals: 0,
                           updatedAt: Timestamp(millisecondsSince1970: 0), handle: handle)
        }
        let one = session("01a2425a-6568-75ff-95ee-18f725ab0d99", handle: "1")
        let two = session("01a2425b-0000-7000-8000-000000001234", handle: "2")
        let sessions = [one, two]
        #expect(Naming.resolve(session: "99", among: sessions) == .none)
        #expect(Naming.resolve(session: "#99", among: sessions) == .none)
        #expect(Naming.resolve(session: "1234", among: sessions) == .one(two), "the end of the id, as its branch shows it")
        #expect(Naming.resolve(session: "d99", among: sessions) == .none, "three characters are too few")
        #expect(Naming.resolve(session: "0d99", among: sessions) == .one(one))
        #expect(Naming.resolve(session: "01a2425b", among: sessions) == .one(two))
        #expect(Naming.resolve(session: "01a", among: sessions) == .none)
        #expect(Naming.resolve(session: "2", among: sessions) == .one(two))

        let approval = ApprovalRequest(id: ApprovalID("01a2425c-0000-7000-8000-000000000099"), sessionID: one.sessionID,
                                       toolCallID: nil, toolName: "Bash", input: ["command": "ls"], risk: .readOnly,
                                       capabilities: .claude, handle: "1.1")
        #expect(Naming.resolve(approval: "99", among: [approval]) == .none)
        #expect(Naming.resolve(approval: "9.99", among: [approval]) == .none)
        #expect(Naming.resolve(approval: "099", among: [approval]) == .none, "three characters are too few")
        #expect(Naming.resolve(approval: "0099", among: [approval]) == .one(approval))
        #expect(Naming.resolve(approval: "8000-000000000099", among: [approval]) == .one(approval))
        #expect(Naming.resolve(approval: "1.1", among: [approval]) == .one(approval))
    }
}
