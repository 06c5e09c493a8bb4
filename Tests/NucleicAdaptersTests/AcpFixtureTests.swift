import NucleicAdapters
import NucleicProtocol
import Testing

/// Every recorded ACP fixture (Fixtures/acp, the reference agent on the ACP Python SDK, recorded
/// by Tests/Peers/record_acp.py) through the codec: the agent's lines received, the recorded
/// host's lines observed. Counts come from the raw lines read here independently.
@Suite struct AcpFixtureTests {
    static let fixtures = (try? Fixture.all("acp")) ?? []
    static let zero = Timestamp(millisecondsSince1970: 0)

    func replay(_ fixture: Fixture) -> [AgentEvent] {
        let ids = CountingIDs()
        var codec = AcpCodec(makeApprovalID: { ids.make() })
        return fixture.replay(&codec)
    }

    /// What the raw lines say: the agent's permission requests, its client requests that are
    /// tool calls, the prompt replies (stop reason, or "failed" for an error), lines not JSON.
    struct Raw {
        var permissions = 0
        var clientCalls = 0
        var stops: [String] = []
        var notJSON = 0

        init(_ fixture: Fixture) {
            var prompts: Set<String> = []
            for record in fixture.records {
                guard let m = try? JSONParser.parse(record.line) else {
                    if record.direction == "out" { notJSON += 1 }
                    continue
                }
                let method = m["method"]?.stringValue
                if record.direction == "in", method == "session/prompt", let id = m["id"] { prompts.insert(JSONWriter.string(id)) }
                guard record.direction == "out" else { continue }
                if method == "session/request_permission" { permissions += 1 }
                if let method, m["id"] != nil, method.hasPrefix("fs/") || ["terminal/create", "terminal/wait_for_exit", "terminal/kill"].contains(method) {
                    clientCalls += 1
                }
                if method == nil, let id = m["id"], prompts.contains(JSONWriter.string(id)) {
                    stops.append(m["error"] != nil ? "failed" : m["result"]?["stopReason"]?.stringValue ?? "?")
                }
            }
        }
    }

    @Test func fixturesAreAcpRecordings() {
        #expect(!Self.fixtures.isEmpty)
        #expect(Self.fixtures.allSatisfy { $0.backend == "acp" })
    }

    @Test(arguments: fixtures.map(\.name))
    func countsMatchTheRawLines(_ name: String) throws {
        let fixture = try Fixture.named("acp", name)
        let events = replay(fixture)
        let counts = EventCounts(events)
        let raw = Raw(fixture)
        #expect(counts.approvalsRequested == raw.permissions)
        let client = counts.toolCallsStarted.filter { $0.hasPrefix("client:") }
        #expect(client.count == raw.clientCalls, "\(client)")
        #expect(counts.errors == raw.notJSON, "\(events.filter { $0.kind == "error" })")
        let runs = events.compactMap { if case .runFinished(let r) = $0 { r } else { nil } }
        #expect(runs.map(\.stopReason) == raw.stops.map { $0 == "cancelled" ? "interrupted" : $0 }, "\(runs)")
        // Every tool call starts once and completes once, after its start.
        #expect(Set(counts.toolCallsStarted).count == counts.toolCallsStarted.count)
        #expect(Set(counts.toolCallsStarted) == Set(counts.toolCallsCompleted), "\(counts)")
        for id in counts.toolCallsStarted {
            let start = events.firstIndex { if case .toolCallStarted(let c) = $0 { c.toolCallID == id } else { false } }
            let end = events.firstIndex { if case .toolCallCompleted(let r) = $0 { r.toolCallID == id } else { false } }
            #expect(start! < end!, "\(id) completes after it starts")
        }
        // Every recorded permission answer resolves its approval.
        let resolved = events.compactMap { if case .approvalResolved(let r) = $0 { r } else { nil } }
        #expect(resolved.count == raw.permissions && resolved.allSatisfy { $0.decidedBy == "recorded" })
    }

    @Test(arguments: fixtures.map(\.name))
    func wholeByteByByteAndRandomChunksGiveTheSameEvents(_ name: String) throws {
        let fixture = try Fixture.named("acp", name)
        let stream = fixture.outStream
        func decode(_ outputs: [LineFramer.Output]) -> [AgentEvent] {
            let ids = CountingIDs()
            var codec = AcpCodec(makeApprovalID: { ids.make() })
            return fixture.replay(outputs, &codec)
        }
        let expected = replay(fixture)
        var whole = LineFramer()
        #expect(decode(whole.feed(stream)) == expected)
        var rng = SeededGenerator(seedFrom: name)
        #expect(decode(frameInRandomChunks(stream, maxChunk: 1, using: &rng)) == expected)
        for _ in 0..<3 { #expect(decode(frameInRandomChunks(stream, maxChunk: 512, using: &rng)) == expected) }
    }

    @Test func theRecordedScenariosReadBack() throws {
        func events(_ name: String) throws -> [AgentEvent] { replay(try Fixture.named("acp", name)) }
        let outside = try events("outside")
        #expect(outside.contains(.toolCallCompleted(ToolResult(
            toolCallID: "client:0", status: .failed,
            output: "/etc/hostname is outside the session's worktree (/tmp/nucleic-fixture/repo): Nucleic serves files and terminals inside it only"))))
        let terminal = try events("terminal")
        #expect(terminal.contains(.toolCallCompleted(ToolResult(toolCallID: "client:1", status: .completed, output: "exited with code 0", exitCode: 0))))
        #expect(terminal.contains(.toolCallCompleted(ToolResult(toolCallID: "t3", status: .completed, output: "hi\n"))))
        let deny = try events("permission-deny")
        #expect(deny.contains { if case .approvalResolved(let r) = $0 { r.decision == .deny(message: "") } else { false } })
        let cancel = try events("cancel")
        #expect(cancel.last == .runFinished(RunFinished(isError: true, stopReason: "interrupted", result: "working")))
    }
}
