import NucleicAdapters
import NucleicProtocol
import Testing

/// Every recorded Claude Code fixture through the codec: Fixtures/claude (the pinned CLI) and the
/// kept recordings of the previous release (Fixtures/claude-<version>), all from the real CLI.
@Suite struct ClaudeFixtureTests {
    static let fixtures = (try? Fixture.all("claude")) ?? []
    static let paths = Fixture.paths("claude")

    func replay(_ fixture: Fixture) -> [AgentEvent] {
        let ids = CountingIDs()
        var codec = ClaudeCodec(makeApprovalID: { ids.make() })
        return fixture.replay(&codec)
    }

    @Test func thereAreFixtures() throws {
        #expect(Self.fixtures.count >= 10)
        #expect(Fixture.folders("claude").count >= 2, "the pinned release and the previous one")
        for folder in Fixture.folders("claude") {
            let set = try Fixture.all(folder)
            #expect(set.count == Self.fixtures.count, "\(folder) has every scenario")
            #expect(set.allSatisfy { $0.backend == "claude" })
            // One CLI version per folder; a kept folder is named after its version.
            let versions = Set(set.compactMap { $0.header["cli"]?.stringValue })
            #expect(versions.count == 1, "\(folder): \(versions)")
            if folder != "claude" { #expect(versions == [String(folder.dropFirst("claude-".count))]) }
        }
    }

    @Test(arguments: paths)
    func countsMatchTheRawLines(_ path: String) throws {
        let fixture = try Fixture.at(path)
        let events = replay(fixture)
        let counts = EventCounts(events)
        let raw = RawCounts.claude(fixture.outLines)
        #expect(counts.approvalsRequested == raw.approvalsRequested, "\(counts) vs raw \(raw)")
        #expect(counts.toolCallsStarted == raw.toolCallsStarted, "\(counts) vs raw \(raw)")
        #expect(counts.runs == raw.runs, "\(counts) vs raw \(raw)")
        #expect(counts.toolCallsCompleted.sorted() == counts.toolCallsStarted.sorted(), "each started tool completes once")
        #expect(Set(raw.toolCallsCompleted).isSubset(of: Set(counts.toolCallsCompleted)))
        #expect(counts.errors == 0, "\(events.filter { $0.kind == "error" })")
        #expect(!events.contains { $0.kind == "unknown" }, "\(events.filter { $0.kind == "unknown" })")
        // Each approval ends: resolved by the recorded answer, or withdrawn.
        let requested = events.compactMap { if case .approvalRequested(let a) = $0 { a.id } else { nil } }
        let ended = events.compactMap { event -> ApprovalID? in
            switch event {
            case .approvalResolved(let r): r.approvalID
            case .approvalWithdrawn(let id, _): id
            default: nil
            }
        }
        #expect(requested.sorted() == ended.sorted())
        #expect(events.filter { $0.kind == "sessionStarted" }.count == 1)
    }

    @Test(arguments: paths)
    func wholeByteByByteAndRandomChunksGiveTheSameEvents(_ path: String) throws {
        let fixture = try Fixture.at(path)
        let stream = Array(fixture.outLines.joined(separator: "\n").utf8) + [0x0A]
        func decode(_ outputs: [LineFramer.Output]) -> [AgentEvent] {
            let ids = CountingIDs()
            var codec = ClaudeCodec(makeApprovalID: { ids.make() })
            return outputs.flatMap { output -> [AgentEvent] in
                guard case .line(let line) = output else { return [] }
                return codec.receive(line: line, now: Timestamp(millisecondsSince1970: 0)).events
            }
        }
        var whole = LineFramer()
        let expected = decode(whole.feed(stream))
        #expect(!expected.isEmpty)
        var rng = SeededGenerator(seedFrom: path)
        #expect(decode(frameInRandomChunks(stream, maxChunk: 1, using: &rng)) == expected)
        for _ in 0..<5 { #expect(decode(frameInRandomChunks(stream, maxChunk: 4096, using: &rng)) == expected) }
    }

    @Test func truncatedAndCorruptedLinesNeverCrash() throws {
        var rng = SeededGenerator(seed: 99)
        for fixture in Self.fixtures {
            var codec = ClaudeCodec()
            for line in fixture.outLines.prefix(40) {
                let bytes = Array(line.utf8)
                for cut in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 25)) {
                    _ = codec.receive(line: Array(bytes[..<cut]), now: Timestamp(millisecondsSince1970: 0))
                }
                var corrupted = bytes
                for _ in 0..<8 where !corrupted.isEmpty {
                    corrupted[Int.random(in: 0..<corrupted.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
                _ = codec.receive(line: corrupted, now: Timestamp(millisecondsSince1970: 0))
            }
        }
    }

    @Test func randomBytesNeverCrash() {
        var rng = SeededGenerator(seed: 5)
        var codec = ClaudeCodec()
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0..<200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = codec.receive(line: bytes, now: Timestamp(millisecondsSince1970: 0))
        }
    }

    @Test func interruptEndsAsInterruptedInTheRecording() throws {
        let events = replay(try Fixture.named("claude", "interrupt"))
        guard case .runFinished(let run)? = events.last else { Issue.record("no runFinished"); return }
        #expect(run.isError && run.stopReason == "interrupted")
        #expect(events.contains(.toolCallCompleted(ToolResult(toolCallID: "toolu_mock_interrupt_t0s0n0", status: .interrupted,
            output: events.compactMap { if case .toolCallCompleted(let r) = $0 { r.output } else { nil } }.first))))
    }

    @Test func recordedDecisionsReadBackAsDecisions() throws {
        let modify = replay(try Fixture.named("claude", "modify"))
        let decisions = modify.compactMap { if case .approvalResolved(let r) = $0 { r.decision } else { nil } }
        guard case .allowModified(let input)? = decisions.first else { Issue.record("\(decisions)"); return }
        #expect(input["command"]?.stringValue?.contains("modified") == true)

        let deny = replay(try Fixture.named("claude", "deny-continue"))
        #expect(deny.contains { if case .approvalResolved(let r) = $0, case .deny = r.decision { true } else { false } })
        #expect(deny.contains { if case .toolCallCompleted(let r) = $0 { r.status == .declined } else { false } })

        let ask = replay(try Fixture.named("claude", "ask"))
        #expect(ask.contains { if case .approvalResolved(let r) = $0, case .answer = r.decision { true } else { false } })
    }

    @Test func apiErrorIsOneNoticeAndAFailedRun() throws {
        let events = replay(try Fixture.named("claude", "api-error"))
        #expect(events.filter { if case .notice(.error, _, _) = $0 { true } else { false } }.count == 1)
        #expect(!events.contains { if case .assistantText = $0 { true } else { false } })
        guard case .runFinished(let run)? = events.last else { Issue.record("no runFinished"); return }
        #expect(run.isError && run.stopReason == "api_error")
    }
}
