import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// Nothing leaks: after many sessions started and discarded through the daemon — replayed ones,
/// and agents that start children of their own and leave them behind — there is no zombie, no
/// orphan, no stray worktree, and the repository is sound.
@Suite struct ProcessHygieneTests {
    static let cycles = 200
    /// Every `fakeEvery`-th session runs the fake agent (with children) instead of a replay.
    static let fakeEvery = 10
    static let workers = 4

    init() throws {
        // DESIGN.md §7: without this, what the daemon failed to reap would sit under PID 1 where
        // nothing of ours can see it; with it, it is re-parented to this process, and found.
        try TestReaper.becomeSubreaper()
    }

    enum Kind: String, CaseIterable { case replayWaiting, replayFinished, agent, agentExits }

    static func kind(_ n: Int) -> Kind {
        if n % fakeEvery == 0 { return n % (2 * fakeEvery) == 0 ? .agentExits : .agent }
        return n % 2 == 0 ? .replayWaiting : .replayFinished
    }

    @Test func twoHundredStartDiscardCyclesLeaveNothingBehind() async throws {
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-hyg-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: bin) }
        // Every process of this run carries the marker in its environment (the daemon passes its
        // own on to agents, and they to their children), so a leak is found wherever it went.
        let marker = "NUCLEIC_HYGIENE_RUN=\(UUID().uuidString)"
        let environment = [
            "NUCLEIC_CLAUDE_BIN": try FakeAgent.install(in: bin),
            String(marker.split(separator: "=")[0]): String(marker.split(separator: "=")[1]),
        ]
        let fixtures: [Kind: String] = [
            .replayWaiting: Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path,
            .replayFinished: Fixture.root.appendingPathComponent("claude/plain.jsonl").path,
        ]

        try await DaemonHarness.with(environment: environment, serve: ["--replay-speed", "max"]) { d in
            let daemon = try #require(d.daemonPID)
            // Workers run cycles side by side, as several clients would.
            let started = try await withThrowingTaskGroup(of: [(String, Kind, Bool)].self) { group in
                for worker in 0..<Self.workers {
                    group.addTask {
                        var mine: [(String, Kind, Bool)] = []
                        for n in stride(from: worker + 1, through: Self.cycles, by: Self.workers) {
                            let kind = Self.kind(n)
                            let options = fixtures[kind].map { ["--backend", "replay", "--fixture", $0] } ?? ["--backend", "claude"]
                            let id = try await d.start(kind == .agentExits ? "cycle \(n) [[exit]]" : "cycle \(n)", options + ["--title", "cycle \(n)"])
                            // Some are discarded at once, mid-start; others once they have settled.
                            if n % 3 == 0 {
                                switch kind {
                                case .replayWaiting: try await d.waitFor(id, ["awaitingApproval"])
                                case .replayFinished: try await d.waitFor(id, ["finished"])
                                case .agent: try await d.waitFor(id, ["running"])
                                case .agentExits: try await d.waitFor(id, ["error"])
                                }
                            }
                            let deleteBranch = n % 2 == 1
                            try await d.ok(["discard", id] + (deleteBranch ? ["--delete-branch"] : []))
                            mine.append((id, kind, deleteBranch))
                        }
                        return mine
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(started.count == Self.cycles)

            // The daemon ends every agent's group and reaps what was orphaned to it: nothing
            // stays below it, running or zombie.
            let left = try await eventually(timeout: .seconds(60)) { () -> [ProcessTable.Entry]? in
                let left = ProcessTable.snapshot().descendants(of: daemon)
                return left.isEmpty ? left : nil
            }
            #expect(left.isEmpty, "left below the daemon: \(ProcessTable.snapshot().descendants(of: daemon))")
            // Reaped by their session's shim (a subreaper), or by the daemon if they outlived it.
            #expect((d.servedLog + d.shimLogs).contains("(\(FakeAgent.childName)): killed by signal"),
                    "the agents' children were reaped:\n\(d.servedLog)\n\(d.shimLogs)")

            // Every session is discarded, each transcript kept, no worktree left, no stray branch.
            let sessions = try await d.json(["ls", "--all"]).arrayValue ?? []
            #expect(sessions.count == Self.cycles)
            #expect(sessions.allSatisfy { $0["status"]?.stringValue == "discarded" })
            for (id, kind, _) in started {
                let events = try await d.events(id)
                #expect(!events.isEmpty && events.map(\.seq) == (1...Int64(events.count)).map { $0 }, "\(id): \(events.map(\.seq))")
                let statuses = events.compactMap { if case .statusChanged(let status, _) = $0.event { status } else { nil } }
                #expect(statuses.last == .discarded, "\(id) (\(kind)): \(statuses)")
                // An agent's exit status is its own, not taken by the reaper (that would be code -1).
                let errors = events.compactMap { if case .error(_, let message, _) = $0.event { message } else { nil } }
                if kind == .agentExits {
                    #expect(errors.allSatisfy { $0.contains("exited with code 3") }, "\(id): \(errors)")
                } else {
                    #expect(errors.isEmpty && !statuses.contains(.error), "a discard is not an error: \(id) (\(kind)): \(errors) \(statuses)")
                }
            }
            #expect(try await d.worktreeList() == [URL(fileURLWithPath: d.repo).resolvingSymlinksInPath().path])
            let worktrees = (try? FileManager.default.contentsOfDirectory(atPath: d.home + "/worktrees/shop")) ?? []
            #expect(worktrees.isEmpty, "worktree folders left: \(worktrees)")
            let branches = try await Git.run(["branch", "--list", "nucleic/*"], in: d.repo).split(separator: "\n")
            #expect(branches.count == started.filter { !$0.2 }.count, "kept branches stay, deleted ones go")
            _ = try await Git.run(["fsck", "--strict", "--no-progress"], in: d.repo)
            let prune = try await Git.run(["worktree", "prune", "--dry-run", "-v"], in: d.repo)
            #expect(prune.isEmpty, "git has no stale worktree entries: \(prune)")

            // Agents still at work when the daemon stops with --kill-sessions go with it, children and all.
            for n in 1...2 {
                let id = try await d.start("left running \(n)", ["--backend", "claude"])
                try await d.waitFor(id, ["running"])
            }
            _ = try await eventually { ProcessTable.snapshot().descendants(of: daemon).filter { $0.name == FakeAgent.childName }.count == 4 ? true : nil }

            // The daemon stops cleanly and leaves nothing of this run anywhere.
            #expect(try await d.ok(["stop-daemon", "--kill-sessions"]).contains("the daemon stopped"))
            #expect(await d.served?.wait(timeout: .seconds(30)) == .exited(0), "\(d.servedLog)")
            let stray = try await eventually(timeout: .seconds(30)) { () -> [ProcessTable.Entry]? in
                let stray = ProcessTable.snapshot().carrying(marker)
                return stray.isEmpty ? stray : nil
            }
            #expect(stray.isEmpty)
            let zombies = ProcessTable.snapshot().children(of: getpid())
                .filter { $0.isZombie && [FakeAgent.name, FakeAgent.childName].contains($0.name) }
            #expect(zombies.isEmpty, "zombies of this run under the test: \(zombies)")
        }
    }

    @Test func discardEndsAnAgentsWholeGroupAndTheDaemonReapsIt() async throws {
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-hyg-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: bin) }
        try await DaemonHarness.with(environment: ["NUCLEIC_CLAUDE_BIN": try FakeAgent.install(in: bin)]) { d in
            let daemon = try #require(d.daemonPID)
            let id = try await d.start("work", ["--backend", "claude"])
            // The agent, its two children and the subshell: one process group, below the daemon's
            // shim for the session (the shim leads a session of its own).
            let below = try await eventually { () -> [ProcessTable.Entry]? in
                let below = ProcessTable.snapshot().descendants(of: daemon)
                return below.filter { $0.name == FakeAgent.childName }.count == 2 ? below : nil
            }
            let shim = try #require(below.first { $0.parent == daemon })
            #expect(ProcessTable.arguments(shim.pid).dropFirst().first == "shim")
            let group = below.filter { $0.pid != shim.pid }
            let agent = try #require(group.first { $0.parent == shim.pid })
            #expect(agent.name == FakeAgent.name)
            #expect(Set(group.map(\.group)) == [agent.pid], "\(group)")
            _ = try await d.ok(["discard", id])
            let after = try await eventually { () -> [ProcessTable.Entry]? in
                let after = group.compactMap { ProcessTable.entry($0.pid) }
                return after.isEmpty ? after : nil
            }
            #expect(after.isEmpty, "every member of the group ended and was reaped")
            let log = (d.contents(d.home + "/run/daemon.log") ?? "") + d.shimLogs
            #expect(log.contains("reaped orphan") && log.contains("(\(FakeAgent.childName))"), "\(log)")
            _ = try await eventually { ProcessTable.entry(shim.pid) == nil ? true : nil }
        }
    }
}
