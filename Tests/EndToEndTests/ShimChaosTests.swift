import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// Sessions outlive the daemon: SIGKILL the daemon at seeded random moments while a
/// replay session streams and holds approvals; every restart adopts the session's shim exactly
/// once and carries on. The transcript must come out as an undisturbed run's: seq contiguous,
/// the same events, every approval answered once (the replay agent itself rejects a second
/// answer or a missing one), and nothing of the run left running at the end.
@Suite(.serialized) struct ShimChaosTests {
    static let rounds = 25
    static let approvalsPerSession = 6
    static let linesBetweenApprovals = 12

    init() throws {
        // Shims whose daemon is killed are re-parented to us: we reap them, as a daemon would.
        try TestReaper.becomeSubreaper()
    }

    /// A Claude fixture that streams text and stops for an approval `approvalsPerSession` times,
    /// built from `two-tools.jsonl`'s lines (ids made unique), 10 ms between lines.
    static func makeFixture(at path: String) throws {
        let source = try String(contentsOf: Fixture.root.appendingPathComponent("claude/two-tools.jsonl"), encoding: .utf8)
        let records = source.split(separator: "\n").map(String.init)
        func line(_ index: Int) throws -> (dir: String, line: String) {
            let json = try JSONParser.parse(records[index])
            return (json["dir"]!.stringValue!, json["line"]!.stringValue!)
        }
        var out: [(String, String)] = [try line(1), try line(2), try line(3), try line(4)]
        for k in 0..<approvalsPerSession {
            let tool = "toolu_chaos_\(k)"
            let request = "00000000-0000-4000-8000-1" + String(repeating: "0", count: 10) + "\(k)"
            func unique(_ text: String) -> String {
                text.replacingOccurrences(of: "toolu_mock_twotools_t0s0n0", with: tool)
                    .replacingOccurrences(of: "00000000-0000-4000-8000-000000000005", with: request)
            }
            for i in 0..<linesBetweenApprovals {
                let (dir, text) = try line(5)
                out.append((dir, text.replacingOccurrences(of: "Two files coming.", with: "Chunk \(k).\(i).")
                    .replacingOccurrences(of: "msg_mock_main_twotools_t0s0", with: "msg_chaos_\(k)_\(i)")))
            }
            for index in [6, 7, 8, 10] {
                let (dir, text) = try line(index)
                out.append((dir, unique(text)))
            }
        }
        out += [try line(14), try line(15)]
        var text = records[0].replacingOccurrences(of: "\"two-tools\"", with: "\"chaos\"") + "\n"
        for (n, (dir, line)) in out.enumerated() {
            let record: JSONValue = ["t": .double(Double(n) * 0.01), "dir": .string(dir), "line": .string(line)]
            text += JSONWriter.string(record) + "\n"
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The events as comparable text: the session's own id as `<session>`; no timestamps (nor
    /// approvals' `createdAt`) or raw offsets
    /// (the journal's `t` fields make offsets differ run to run), approval ids numbered in order
    /// of appearance.
    static func normalized(_ events: [SequencedEvent], session: String) -> [String] {
        var ids: [String: String] = [:]
        for event in events {
            if case .approvalRequested(let request) = event.event, ids[request.id.rawValue] == nil {
                ids[request.id.rawValue] = "approval-\(ids.count + 1)"
            }
        }
        return events.map { event in
            var text = JSONWriter.string(event.event.json)
            for (id, name) in ids { text = text.replacingOccurrences(of: id, with: name) }
            text = text.replacingOccurrences(of: session, with: "<session>")
            // When an approval was asked is the moment it was recorded.
            return text.replacingOccurrences(of: #","createdAt":"[^"]*""#, with: "", options: .regularExpression)
        }
    }

    /// Answers every pending approval until cancelled; failures (a daemon killed mid-call) are
    /// retried on the next pass.
    static func approveEverything(_ d: DaemonHarness) async {
        while !Task.isCancelled {
            if let pending = try? await d.json(["approvals"]).arrayValue {
                for approval in pending {
                    guard let id = approval["id"]?.stringValue else { continue }
                    _ = try? await d.nucleic(["approve", id])
                }
            }
            try? await Task.sleep(for: .milliseconds(30))
        }
    }

    func expectSound(_ events: [SequencedEvent], _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!events.isEmpty && events.map(\.seq) == (1...Int64(events.count)).map { $0 },
                "\(context): seqs are 1…N without a gap or a repeat: \(events.map(\.seq))", sourceLocation: sourceLocation)
        let requested = events.compactMap { if case .approvalRequested(let r) = $0.event { r.id } else { nil } }
        let resolved = events.compactMap { if case .approvalResolved(let r) = $0.event { r.approvalID } else { nil } }
        #expect(Set(requested).count == requested.count, "\(context): each approval is requested once: \(requested)", sourceLocation: sourceLocation)
        #expect(Set(resolved).count == resolved.count && Set(resolved).isSubset(of: Set(requested)),
                "\(context): no approval is answered twice: \(resolved)", sourceLocation: sourceLocation)
    }

    /// `stop-daemon` leaves the agent working; the next daemon adopts it with its approval still
    /// pending under the same id; `--kill-sessions` then ends it, shim and all.
    @Test func aGracefulStopLeavesTheSessionRunningForTheNextDaemon() async throws {
        let fixture = Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path
        try await DaemonHarness.with { d in
            let id = try await d.start("make hello", ["--backend", "replay", "--fixture", fixture])
            let approval = try await d.approval(id)
            let before = try await d.events(id)
            let shims = d.shims()
            #expect(shims.count == 1)
            #expect(try await d.ok(["stop-daemon"]).contains("the daemon stopped"))
            #expect(d.shims() == shims, "the shim (and its agent) outlived the daemon")
            // Any command starts the next daemon, which adopts the shim.
            #expect(try await d.approvals(id).map(\.id) == [approval.id])
            d.noteDaemon()
            #expect(try await d.status(id) == "awaitingApproval")
            _ = try await d.ok(["approve", approval.id.rawValue])
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            let events = try await d.events(id)
            expectSound(events, "after the restart")
            #expect(events.prefix(before.count).map(\.seq) == before.map(\.seq))
            #expect(!events.contains { if case .statusChanged(_, let reason) = $0.event { reason == "the host restarted" } else { false } },
                    "an adopted session was never interrupted")
            #expect(d.contents(d.home + "/run/daemon.log")?.contains("adopted its shim") == true)
            #expect(try await d.ok(["stop-daemon", "--kill-sessions"]).contains("the daemon stopped"))
            _ = try await eventually { d.shims().isEmpty ? true : nil }
            let exit = try #require(d.contents(d.home + "/sessions/\(id)/exit.json"), "the agent's end is kept")
            #expect(exit.contains("\"code\"") || exit.contains("\"signal\""), "\(exit)")
        }
    }

    @Test func twentyFiveSIGKILLsLoseNothingAndDuplicateNothing() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-chaos-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fixture = folder + "/chaos.jsonl"
        try Self.makeFixture(at: fixture)
        let marker = "NUCLEIC_CHAOS_RUN"
        let run = UUID().uuidString
        let start = ["--backend", "replay", "--fixture", fixture]

        // The undisturbed run.
        let baseline = try await DaemonHarness.with(environment: [marker: run]) { d in
            let approver = Task { await Self.approveEverything(d) }
            defer { approver.cancel() }
            let id = try await d.start("stream and ask", start)
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            let events = try await d.events(id)
            expectSound(events, "undisturbed")
            return Self.normalized(events, session: id)
        }
        #expect(baseline.filter { $0.contains("\"approvalResolved\"") }.count == Self.approvalsPerSession)

        try await DaemonHarness.with(environment: [marker: run]) { d in
            var random = SeededGenerator(seed: 0x0009_5EED)
            let approver = Task { await Self.approveEverything(d) }
            defer { approver.cancel() }
            var sessions = [try await d.start("stream and ask", start)]
            var killedWhilePending = 0
            for round in 1...Self.rounds {
                if try await ["finished", "error"].contains(d.status(sessions.last!)) {
                    sessions.append(try await d.start("stream and ask", start))
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...350, using: &random)))
                let pendingBefore = (try? await d.approvals(sessions.last!).count) ?? 0
                try await d.killDaemon()
                // The next command starts a new daemon, which adopts the shims.
                let events = try await d.events(sessions.last!)
                d.noteDaemon()
                expectSound(events, "round \(round)")
                if pendingBefore > 0 {
                    killedWhilePending += 1
                    #expect(!events.contains { if case .approvalWithdrawn = $0.event { true } else { false } },
                            "round \(round): an approval pending across the restart stays pending")
                }
            }
            for id in sessions { try await d.waitFor(id, ["finished", "error"]) }
            approver.cancel()

            #expect(killedWhilePending > 0, "some kills hit a pending approval")
            for id in sessions {
                let events = try await d.events(id)
                expectSound(events, id)
                let got = Self.normalized(events, session: id)
                #expect(got == baseline, "\(id): the events equal the undisturbed run's; first difference: \(zip(got, baseline).enumerated().first { $0.element.0 != $0.element.1 }.map { "#\($0.offset): \($0.element.0) vs \($0.element.1)" } ?? "count \(got.count) vs \(baseline.count)")")
                // What reached the agent: one answer per approval, no more.
                let journal = try await d.ok(["export-fixture", id])
                let answers = journal.split(separator: "\n").filter { $0.contains(#""dir":"in""#) && $0.contains("behavior") }
                #expect(answers.count == Self.approvalsPerSession, "\(id): \(answers.count) answers reached the agent")
                #expect(try await d.status(id) == "finished")
            }
            let log = d.contents(d.home + "/run/daemon.log") ?? ""
            #expect(log.components(separatedBy: "adopted its shim").count - 1 >= Self.rounds, "every restart adopted the live shim")

            // Ending the sessions ends every process of this run: shims, agents, daemons.
            #expect(try await d.ok(["stop-daemon", "--kill-sessions"]).contains("the daemon stopped"))
            let stray = try await eventually(timeout: .seconds(30)) { () -> [ProcessTable.Entry]? in
                let stray = ProcessTable.snapshot().carrying("\(marker)=\(run)")
                return stray.isEmpty ? stray : nil
            }
            #expect(stray.isEmpty, "left running: \(stray)")
        }
    }
}
