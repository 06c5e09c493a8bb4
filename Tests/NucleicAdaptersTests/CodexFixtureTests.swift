import NucleicAdapters
import NucleicProtocol
import Testing

/// Every recorded Codex fixture (Fixtures/codex, from the real CLI 0.163.0 against
/// Tests/Peers/mock_openai.py) through the codec: the agent's lines received, the recorded host's
/// lines observed. Every test compares the events with counts read from the raw lines by the
/// independent reader below, so no golden file only confirms the codec with itself.
@Suite struct CodexFixtureTests {
    static let fixtures = (try? Fixture.all("codex")) ?? []
    static let zero = Timestamp(millisecondsSince1970: 0)

    func replay(_ fixture: Fixture) -> [AgentEvent] {
        let ids = CountingIDs()
        var codec = CodexCodec(makeApprovalID: { ids.make() })
        return fixture.replay(&codec)
    }

    @Test func fixturesAreCodexRecordings() {
        #expect(Self.fixtures.allSatisfy { $0.backend == "codex" })
    }

    @Test(arguments: fixtures.map(\.name))
    func countsMatchTheRawLines(_ name: String) throws {
        let fixture = try Fixture.named("codex", name)
        let events = replay(fixture)
        let counts = EventCounts(events)
        let raw = RawCodex(fixture)
        #expect(counts.approvalsRequested == raw.approvals, "\(counts) vs raw \(raw)")
        #expect(counts.toolCallsStarted == raw.started, "\(counts) vs raw \(raw)")
        #expect(counts.toolCallsCompleted == raw.completed, "\(counts) vs raw \(raw)")
        #expect(counts.runs == raw.runs.map { $0 != "completed" }, "\(counts) vs raw \(raw)")
        #expect(counts.errors == 0, "\(events.filter { $0.kind == "error" })")

        // Each tool call starts once and completes once, after its start.
        #expect(Set(counts.toolCallsStarted).count == counts.toolCallsStarted.count)
        for id in counts.toolCallsStarted {
            let start = events.firstIndex { if case .toolCallStarted(let c) = $0 { c.toolCallID == id } else { false } }
            let end = events.firstIndex { if case .toolCallCompleted(let r) = $0 { r.toolCallID == id } else { false } }
            #expect(start != nil && end != nil && start! < end!, "\(id) completes after it starts")
        }

        // Each run's stop reason follows its turn's status.
        let runs = events.compactMap { if case .runFinished(let r) = $0 { r } else { nil } }
        for (run, status) in zip(runs, raw.runs) {
            switch status {
            case "completed": #expect(run.stopReason == "end_turn" && !run.isError)
            case "interrupted": #expect(run.stopReason == "interrupted" && run.isError)
            case "refused": #expect(run.stopReason == "failed" && run.isError)
            default: #expect(["failed", "api_error"].contains(run.stopReason) && run.isError, "\(run)")
            }
        }

        // Each approval ends: resolved by a recorded answer, or withdrawn.
        let requested = events.compactMap { if case .approvalRequested(let a) = $0 { a.id } else { nil } }
        let resolved = events.compactMap { if case .approvalResolved(let r) = $0 { r.approvalID } else { nil } }
        let withdrawn = events.compactMap { if case .approvalWithdrawn(let id, _) = $0 { id } else { nil } }
        #expect(resolved.count == raw.answers, "\(resolved.count) resolved vs \(raw.answers) recorded answers")
        if !raw.runs.isEmpty { #expect(requested.sorted() == (resolved + withdrawn).sorted()) }

        // Each prompt the host sent shows once; Codex's echoes of it do not.
        #expect(events.filter { $0.kind == "userInput" }.count == raw.prompts)
        #expect(events.filter { $0.kind == "sessionStarted" }.count == raw.threads)
        // Whatever the codec does not know is kept verbatim.
        for case .unknown(let line, _) in events { #expect(fixture.outLines.contains(line)) }
    }

    @Test(arguments: fixtures.map(\.name))
    func wholeByteByByteAndRandomChunksGiveTheSameEvents(_ name: String) throws {
        let fixture = try Fixture.named("codex", name)
        let stream = fixture.outStream
        func decode(_ outputs: [LineFramer.Output]) -> [AgentEvent] {
            let ids = CountingIDs()
            var codec = CodexCodec(makeApprovalID: { ids.make() })
            return fixture.replay(outputs, &codec)
        }
        let expected = replay(fixture)
        #expect(!expected.isEmpty)
        var whole = LineFramer()
        #expect(decode(whole.feed(stream)) == expected)
        var rng = SeededGenerator(seedFrom: name)
        #expect(decode(frameInRandomChunks(stream, maxChunk: 1, using: &rng)) == expected)
        for _ in 0..<5 { #expect(decode(frameInRandomChunks(stream, maxChunk: 4096, using: &rng)) == expected) }
    }

    /// A codec that drives the session from the recording's own start (its cwd, model, policy,
    /// first prompt) writes the handshake the recorder wrote.
    @Test(arguments: fixtures.map(\.name))
    func aDrivingCodecWritesTheRecordedHandshake(_ name: String) throws {
        let fixture = try Fixture.named("codex", name)
        let host = fixture.inLines.map { (try? JSONParser.parse($0)) ?? .null }
        guard host.count >= 4, host[0]["method"] == "initialize", host[0]["id"] == 1, host[1]["method"] == "initialized",
            host[2]["method"] == "thread/start", host[2]["id"] == 2, host[3]["method"] == "turn/start", host[3]["id"] == 3,
            host[3]["params"]?["collaborationMode"] == nil, host[2]["params"]?["cwd"]?.stringValue != nil
        else { return }  // a scenario that starts some other way (protocol errors, resume)
        var codec = CodexCodec()
        let params = host[2]["params"] ?? .null
        codec.approvalPolicy = params["approvalPolicy"]?.stringValue ?? codec.approvalPolicy
        codec.sandbox = params["sandbox"]?.stringValue ?? codec.sandbox
        let prompt = host[3]["params"]?["input"]?[0]?["text"]?.stringValue
        var written = codec.start(SessionStartOptions(
            prompt: prompt, cwd: params["cwd"]?.stringValue ?? "", model: params["model"]?.stringValue), now: Self.zero).lines
        for line in fixture.outLines {
            written += codec.receive(line: line, now: Self.zero).lines
            if written.count >= 4 { break }
        }
        let ours = try written.prefix(4).map { try JSONParser.parse($0) }
        #expect(ours.map { $0["method"] } == host.prefix(4).map { $0["method"] })
        #expect(ours.map { $0["id"] } == host.prefix(4).map { $0["id"] })
        #expect(ours[2]["params"] == host[2]["params"])
        #expect(ours[3]["params"]?["input"]?[0]?["text"] == host[3]["params"]?["input"]?[0]?["text"])
        #expect(ours[3]["params"]?["threadId"] == host[3]["params"]?["threadId"])
        #expect(codec.handshake == .ready)
    }

    // MARK: What each scenario means

    func named(_ name: String) throws -> [AgentEvent] { replay(try Fixture.named("codex", name)) }
    func runs(_ events: [AgentEvent]) -> [RunFinished] { events.compactMap { if case .runFinished(let r) = $0 { r } else { nil } } }
    func decisions(_ events: [AgentEvent]) -> [Decision] { events.compactMap { if case .approvalResolved(let r) = $0 { r.decision } else { nil } } }
    func completions(_ events: [AgentEvent]) -> [ToolResult] { events.compactMap { if case .toolCallCompleted(let r) = $0 { r } else { nil } } }
    func approvals(_ events: [AgentEvent]) -> [ApprovalRequest] { events.compactMap { if case .approvalRequested(let a) = $0 { a } else { nil } } }
    func notices(_ events: [AgentEvent], _ level: NoticeLevel) -> [String] {
        events.compactMap { if case .notice(level, let message, _) = $0 { message } else { nil } }
    }

    @Test func toolAllowedRunsTheUnwrappedCommand() throws {
        let events = try named("tool-allow")
        let approval = try #require(approvals(events).first)
        #expect(approval.toolName == "exec_command" && approval.risk == .execute && approval.reason == nil)
        #expect(approval.input["command"] == "echo hello > hello.txt")
        #expect(approval.offeredScopes == [.exactCommandThisSession, .rule("Bash(echo hello > hello.txt)")])
        #expect(decisions(events) == [.allow])
        #expect(completions(events).map(\.status) == [.completed])
        #expect(runs(events).map(\.stopReason) == ["end_turn"])
    }

    @Test func declineAndCancelReadBack() throws {
        let deny = try named("deny-continue")
        #expect(decisions(deny) == [.deny(message: "")])
        #expect(completions(deny).map(\.status) == [.declined])
        #expect(runs(deny).map(\.stopReason) == ["end_turn"])
        let cancel = try named("cancel")
        #expect(decisions(cancel) == [.cancel])
        #expect(completions(cancel).map(\.status) == [.declined])
        #expect(runs(cancel).map(\.stopReason) == ["interrupted"])
    }

    @Test func acceptForSessionIsHonoredThoughNotListed() throws {
        let events = try named("session-accept")
        // Two turns, four runs of a command, two approvals: Codex remembered the first command.
        #expect(approvals(events).count == 2 && completions(events).count == 4)
        #expect(approvals(events).allSatisfy { $0.offeredScopes.first == .exactCommandThisSession })
        #expect(decisions(events) == [.allowAlways(scope: .exactCommandThisSession), .allow])
        #expect(runs(events).map(\.isError) == [false, false])
        #expect(events.filter { $0.kind == "userInput" }.count == 2)
    }

    @Test func fileChangeApprovalShowsTheDiff() throws {
        let events = try named("file-change")
        let approval = try #require(approvals(events).first)
        #expect(approval.toolName == "apply_patch" && approval.risk == .write && approval.offeredScopes == [.toolThisSession])
        #expect(approval.input["changes"]?[0]?["diff"] == "Notes from the mock.\n")
        #expect(events.contains { if case .diffUpdated(let diff) = $0 { diff.contains("+Notes from the mock.") } else { false } })
        #expect(completions(events).map(\.status) == [.completed])
    }

    @Test func interruptedCommandCompletesAsInterrupted() throws {
        let events = try named("interrupt")
        #expect(runs(events).map(\.stopReason) == ["interrupted"])
        #expect(completions(events) == [ToolResult(toolCallID: "call_interrupt_t1_s0_0", status: .interrupted)])
    }

    @Test func aggregatedOutputWinsOverStreamedDeltas() throws {
        let fixture = try Fixture.named("codex", "output-stream")
        let events = replay(fixture)
        // The output is the completed item's aggregatedOutput, whatever the deltas carried.
        let completedItem = try #require(fixture.outLines.lazy.compactMap { try? JSONParser.parse($0) }
            .first { $0["method"] == "item/completed" && $0["params"]?["item"]?["type"] == "commandExecution" })
        let aggregated = try #require(completedItem["params"]?["item"]?["aggregatedOutput"]?.stringValue)
        #expect(completions(events).first?.output == aggregated)
        #expect(aggregated.contains("line1") && aggregated.contains("line3"))
        #expect(events.contains { $0.kind == "toolCallOutputDelta" })
        #expect(completions(events).first?.exitCode == 0)
        let failed = try named("exec-fail")
        #expect(completions(failed).first?.status == .failed && completions(failed).first?.exitCode != 0)
    }

    @Test func modelAPIFailuresAreOneErrorNoticeAndAnAPIErrorRun() throws {
        for name in ["api-error", "stream-error"] {
            let events = try named(name)
            #expect(notices(events, .error).count == 1, "\(name): \(events)")
            #expect(runs(events).first?.stopReason == "api_error", "\(name)")
            #expect(runs(events).first?.isError == true)
        }
        // After a failed turn the thread takes the next one normally (api-error records the retry).
        #expect(runs(try named("api-error")).map(\.stopReason) == ["api_error", "end_turn"])
        #expect(runs(try named("stream-error")).map(\.stopReason) == ["api_error"])
        // Codex retried the broken stream once before giving up: a warning first.
        #expect(notices(try named("stream-error"), .warning).contains { $0.hasPrefix("Codex is retrying after: Reconnecting") })
    }

    @Test func questionAnsweredInPlanMode() throws {
        let events = try named("question")
        let question = try #require(approvals(events).first?.question)
        #expect(question.questions.map(\.id) == ["db_choice"])
        #expect(decisions(events) == [.answer(answers: ["Which database should the tests use?": ["Postgres"]])])
        #expect(runs(events).first?.result == "You chose: Postgres.")
    }

    @Test func reasoningAndResume() throws {
        let reasoning = try named("reasoning")
        #expect(reasoning.contains(.reasoning(text: "Thinking about the answer.", isPartial: false)))
        let resume = try named("resume")
        guard case .sessionStarted(let started)? = resume.first(where: { $0.kind == "sessionStarted" }) else { Issue.record("no sessionStarted"); return }
        #expect(started.nativeSessionID == "00000000-0000-7000-8000-000000000002")
        // The restored thread total is not this turn's usage.
        #expect(runs(resume).first?.usage?.inputTokens == 100)
    }

    @Test func refusedRequestsAreNoticesNotCrashes() throws {
        let events = try named("protocol-errors")
        #expect(!events.contains { $0.kind == "error" })
        #expect(notices(events, .error).contains { $0.contains("collaborationMode requires experimentalApi") })
        #expect(notices(events, .error).contains { $0.contains("Not initialized") })
        #expect(notices(events, .warning).contains { $0.contains("unknown variant `no/such/method`") })
    }

    @Test func everyTruncationOfEveryLineNeverCrashes() {
        var seen: Set<String> = []  // the handshake lines repeat across fixtures: cut each once
        for fixture in Self.fixtures {
            var codec = CodexCodec()
            for record in fixture.records where record.direction != "err" {
                let bytes = Array(record.line.utf8)
                if seen.insert(record.direction + record.line).inserted {
                    for cut in 0..<bytes.count {
                        let prefix = Array(bytes[..<cut])
                        _ = record.direction == "out" ? codec.receive(line: prefix, now: Self.zero) : codec.observeHostLine(prefix, now: Self.zero)
                    }
                }
                // Then the whole line, so that later truncations meet the state the recording reaches.
                _ = record.direction == "out" ? codec.receive(line: bytes, now: Self.zero) : codec.observeHostLine(bytes, now: Self.zero)
            }
        }
    }

    @Test func corruptedLinesNeverCrash() {
        var rng = SeededGenerator(seed: 0x5EED)
        for fixture in Self.fixtures {
            var codec = CodexCodec()
            for line in fixture.outLines {
                var corrupted = Array(line.utf8)
                for _ in 0..<8 where !corrupted.isEmpty {
                    corrupted[Int.random(in: 0..<corrupted.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
                _ = codec.receive(line: corrupted, now: Self.zero)
                _ = codec.receive(line: Array(line.utf8), now: Self.zero)
            }
        }
    }
}

/// What a Codex recording holds, read from its raw lines without the codec.
///
/// Rules (docs/adapters/codex.md): a tool item (commandExecution, fileChange, mcpToolCall) starts
/// at its first `item/started` or `item/completed`; it completes at its `item/completed`, or, if
/// its turn ends first, at that `turn/completed` (Codex abandons such items), in start order.
struct RawCodex: CustomStringConvertible {
    var approvals = 0
    var started: [String] = []
    var completed: [String] = []
    /// Each run's end: a `turn/completed` status, or "refused" for a `turn/start` Codex refused
    /// while no turn ran.
    var runs: [String] = []
    /// Recorded host answers to approval requests that were still pending.
    var answers = 0
    var prompts = 0
    var threads = 0

    init(_ fixture: Fixture) {
        let toolItems: Set<String> = ["commandExecution", "fileChange", "mcpToolCall"]
        let approvalMethods: Set<String> = ["item/commandExecution/requestApproval", "item/fileChange/requestApproval", "item/tool/requestUserInput"]
        var open: [(id: String, turn: String?)] = []
        var pendingRequests: [JSONValue] = []
        var threadRequests: Set<JSONValue> = []
        var turnRequests: Set<JSONValue> = []
        var turnRunning = false
        for record in fixture.records {
            guard let m = try? JSONParser.parse(record.line) else { continue }
            let method = m["method"]?.stringValue
            if record.direction == "in" {
                if let method, let id = m["id"] {
                    if method == "turn/start" {
                        turnRequests.insert(id)
                        if (m["params"]?["input"]?.arrayValue ?? []).contains(where: { $0["type"] == "text" }) { prompts += 1 }
                    }
                    if method == "thread/start" || method == "thread/resume" { threadRequests.insert(id) }
                } else if method == nil, let id = m["id"], let index = pendingRequests.firstIndex(of: id) {
                    answers += 1
                    pendingRequests.remove(at: index)
                }
                continue
            }
            guard record.direction == "out" else { continue }
            if method == nil, let id = m["id"] {
                if m["result"]?["thread"] != nil, threadRequests.contains(id) { threads += 1 }
                if turnRequests.contains(id) {
                    if m["result"]?["turn"]?["id"] != nil { turnRunning = true }
                    if m["error"] != nil, !turnRunning { runs.append("refused") }
                }
            }
            guard let method else { continue }
            let params = m["params"] ?? .null
            switch method {
            case _ where approvalMethods.contains(method) && m["id"] != nil:
                approvals += 1
                pendingRequests.append(m["id"] ?? .null)
            case "serverRequest/resolved":
                pendingRequests.removeAll { $0 == params["requestId"] }
            case "item/started", "item/completed":
                guard toolItems.contains(params["item"]?["type"]?.stringValue ?? ""), let id = params["item"]?["id"]?.stringValue else { continue }
                if !started.contains(id) {
                    started.append(id)
                    open.append((id, params["turnId"]?.stringValue))
                }
                if method == "item/completed", let index = open.firstIndex(where: { $0.id == id }) {
                    completed.append(id)
                    open.remove(at: index)
                }
            case "turn/started":
                turnRunning = true
            case "turn/completed":
                turnRunning = false
                let turn = params["turn"]?["id"]?.stringValue
                completed += open.filter { $0.turn == nil || $0.turn == turn }.map(\.id)
                open.removeAll { $0.turn == nil || $0.turn == turn }
                runs.append(params["turn"]?["status"]?.stringValue ?? "completed")
                pendingRequests = []  // what is still pending is withdrawn with the turn
            default:
                continue
            }
        }
    }

    var description: String {
        "approvals \(approvals), started \(started), completed \(completed), runs \(runs), answers \(answers), prompts \(prompts)"
    }
}
