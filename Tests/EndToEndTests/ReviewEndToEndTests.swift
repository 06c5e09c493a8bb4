import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// Review and clean-up through the `nucleic` CLI and its daemon: diffs from the branch point
/// while other sessions land, discard that keeps the work, commits that are the user's, a kill
/// the transcript records.
@Suite(.serialized) struct ReviewEndToEndTests {
    static let edit = Fixture.root.appendingPathComponent("claude/edit.jsonl").path
    static let toolAllow = Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path

    /// A replayed Write of notes.txt, approved and finished.
    func finishedEdit(_ d: DaemonHarness, title: String) async throws -> String {
        let id = try await d.start("write the notes", ["--backend", "replay", "--fixture", Self.edit, "--title", title])
        let approval = try await d.approval(id)
        _ = try await d.ok(["approve", approval.id.rawValue])
        try await d.waitFor(id, ["finished"])
        return id
    }

    @Test func approvalsShowTheWriteAsADiffAndDiscardKeepsTheWork() async throws {
        try await DaemonHarness.with { d in
            let id = try await d.start("write the notes", ["--backend", "replay", "--fixture", Self.edit, "--title", "keep notes"])
            _ = try await d.approval(id)
            let listed = try await d.ok(["approvals"])
            for line in ["Write /tmp/nucleic-fixture/repo/notes.txt", "    --- /dev/null", "    @@ -0,0 +1 @@", "    +from the mock"] {
                #expect(listed.contains(line), "\(listed)")
            }
            _ = try await d.ok(["approve", try await d.approval(id).id.rawValue])
            try await d.waitFor(id, ["finished"])
            // The replayed agent wrote what the recorded one did, in the session's worktree.
            #expect(d.contents(d.worktree(id) + "/notes.txt") == "from the mock\n")
            let summary = try await d.summary(id)
            #expect(summary["worktree"]?.stringValue == d.worktree(id))
            #expect(try await d.json(["show", id])["summary"]?["worktree"]?.stringValue == d.worktree(id))
            #expect(try await d.ok(["show", id]).contains("worktree  \(d.worktree(id))"))

            let refused = try await d.nucleic(["discard", id, "--delete-branch"])
            #expect(refused.status != .exited(0) && refused.stderr.contains("--force"), "\(refused)")
            #expect(d.contents(d.worktree(id) + "/notes.txt") == "from the mock\n", "nothing changed")
            #expect(try await d.status(id) == "finished")

            let out = try await d.ok(["discard", id])
            let branch = try #require(summary["branch"]?.stringValue)
            #expect(out.contains("its uncommitted work is commit ") && out.contains("on branch \(branch), kept"), "\(out)")
            #expect(try await Git.run(["show", "\(branch):notes.txt"], in: d.repo) == "from the mock\n")
            #expect(try await Git.run(["log", "-1", "--format=%an <%ae>|%cn <%ce>|%s", branch], in: d.repo)
                == "Nucleic Tests <tests@localhost>|Nucleic Tests <tests@localhost>|keep notes\n")
            let trailers = try await Git.run(["log", "-1", "--format=%(trailers:only,unfold)", branch], in: d.repo)
            #expect(trailers.contains("Co-authored-by: Claude Code (claude-opus-5-5) <noreply@anthropic.com>"), "\(trailers)")
            #expect(!FileManager.default.fileExists(atPath: d.worktree(id)))
            #expect(try await d.summary(id)["worktree"] == .null)
        }
    }

    @Test func withNoGitIdentityIntegrateAndDiscardRefuseAndChangeNothing() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-noid-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        // A HOME with no .gitconfig (and none under XDG): only the repository's own config counts.
        try await DaemonHarness.with(environment: ["HOME": home, "XDG_CONFIG_HOME": home + "/xdg"]) { d in
            let id = try await finishedEdit(d, title: "no identity")
            _ = try await Git.run(["config", "--unset", "user.name"], in: d.repo)
            _ = try await Git.run(["config", "--unset", "user.email"], in: d.repo)
            let refs = try await Git.run(["for-each-ref"], in: d.repo)
            for command in [["integrate", id, "--squash"], ["discard", id]] {
                let run = try await d.nucleic(command)
                #expect(run.status != .exited(0), "\(command): \(run)")
                #expect(run.stderr.contains("user.name") && run.stderr.contains("user.email"), "\(command): \(run.stderr)")
                #expect(try await Git.run(["for-each-ref"], in: d.repo) == refs, "\(command) moved a ref")
                #expect(d.contents(d.worktree(id) + "/notes.txt") == "from the mock\n", "\(command)")
                #expect(try await d.status(id) == "finished")
            }
        }
    }

    @Test func stopDaemonKillSessionsIsRecordedAndAKilledTurnIsNotFinished() async throws {
        try await DaemonHarness.with { d in
            let id = try await d.start("make hello", ["--backend", "replay", "--fixture", Self.toolAllow])
            _ = try await d.approval(id)
            _ = try await d.ok(["stop-daemon", "--kill-sessions"])
            #expect(try await d.status(id) == "awaitingInput")
            let events = try await d.events(id)
            let notices = events.compactMap { if case .notice(_, let message, let code) = $0.event { (message, code) } else { nil } }
            #expect(notices.contains { $0.1 == "killed" && $0.0.contains("stop-daemon --kill-sessions") }, "\(notices)")
            #expect(events.contains { if case .statusChanged(.awaitingInput, let reason) = $0.event { reason?.contains("killed") == true } else { false } })
            #expect(!events.contains { if case .statusChanged(.finished, _) = $0.event { true } else { false } })
        }
    }

    /// `log --follow` at a terminal (a pty from `script`) shows the approval with its id and card,
    /// and answers it inline.
    @Test func logFollowAnswersAnApprovalInline() async throws {
        try await DaemonHarness.with { d in
            let id = try await d.start("write the notes", ["--backend", "replay", "--fixture", Self.edit])
            let approval = try await d.approval(id)
            let process = try ChildProcess.spawn(
                executable: "/usr/bin/script", arguments: ["-qfec", "'\(NucleicBinary.path)' log \(id) --follow", "/dev/null"],
                environment: d.environment, workingDirectory: d.root)
            var output = ""
            for await chunk in process.stdout {
                output += String(decoding: chunk, as: UTF8.self)
                if output.contains("(empty: later) ›") { break }
            }
            // The card names the approval by its handle (the session's handle and its number).
            #expect(approval.handle == "1.1")
            #expect(output.contains("? approval 1.1: Write notes.txt  [risk:"), "\(output)")
            #expect(output.contains("+from the mock"), "\(output)")
            try await process.write(Array("y\n".utf8))
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            let resolved = try await d.events(id).compactMap { if case .approvalResolved(let r) = $0.event { r.decision } else { nil } }
            #expect(resolved == [.allow])
            _ = await process.terminate(grace: .seconds(2))
        }
    }

    // MARK: The real Claude Code CLI

    /// Two real Claude sessions in one project; the first is integrated. The second's diff, its
    /// `ls` counts and its squash message list only its own files.
    @Test(.enabled(if: Peers.shouldRun(Peers.claudeBinary)))
    func claudeSecondSessionAfterTheFirstIsIntegratedShowsOnlyItsOwnFiles() async throws {
        try await DaemonEndToEndTests().withClaude { d in
            let first = try await d.start("[[scenario:tool-allow]] make hello", ["--backend", "claude", "--title", "hello"])
            let second = try await d.start("[[scenario:edit]] write the notes", ["--backend", "claude", "--title", "notes"])
            for id in [first, second] {
                _ = try await d.ok(["approve", try await d.approval(id).id.rawValue])
                #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            }
            #expect(d.contents(d.worktree(first) + "/hello.txt") != nil)
            #expect(d.contents(d.worktree(second) + "/notes.txt") != nil)

            let integrated = try await d.ok(["integrate", first, "--squash"])
            #expect(integrated.contains("integrated"), "\(integrated)")
            #expect(try await Git.run(["ls-tree", "--name-only", "main"], in: d.repo).contains("hello.txt"))

            let stat = try await d.ok(["diff", second, "--stat"])
            #expect(stat.contains("notes.txt") && !stat.contains("hello.txt"), "\(stat)")
            #expect(stat.contains(" 1 files changed"), "\(stat)")
            let diffStat = try await d.summary(second)["diffStat"]
            #expect(diffStat?["files"] == 1, "\(String(describing: diffStat))")
            #expect(diffStat?["deletions"] == 0, "\(String(describing: diffStat))")

            _ = try await d.ok(["integrate", second, "--squash"])
            let message = try await Git.run(["log", "-1", "--format=%B", "main"], in: d.repo)
            #expect(message.hasPrefix("notes\n"), "\(message)")
            #expect(message.contains("notes.txt") && !message.contains("hello.txt"), "\(message)")
            #expect(message.contains("Co-authored-by: Claude Code"), "\(message)")
            let files = try await Git.run(["show", "--name-status", "--format=", "main"], in: d.repo)
            #expect(files == "A\tnotes.txt\n", "\(files)")
            #expect(try await Git.run(["log", "-2", "--format=%an <%ae>", "main"], in: d.repo)
                == "Nucleic Tests <tests@localhost>\nNucleic Tests <tests@localhost>\n")
        }
    }

    /// An idle Claude agent is ended (a notice in the transcript, the status untouched) and the
    /// next `send` resumes it with `--resume`, carrying on the same conversation.
    @Test(.enabled(if: Peers.shouldRun(Peers.claudeBinary)))
    func claudeIdleAgentIsEndedAndResumedOnTheNextSend() async throws {
        try await DaemonEndToEndTests().withClaude(extra: ["NUCLEIC_IDLE_TIMEOUT": "2"]) { d in
            let id = try await d.start("[[scenario:followup]] first", ["--backend", "claude"])
            try await d.waitFor(id, ["finished"])
            let ended = try await eventually { () -> [SequencedEvent]? in
                let events = try await d.events(id)
                return events.contains { if case .notice(_, _, "idleStopped") = $0.event { true } else { false } } ? events : nil
            }
            #expect(try await d.status(id) == "finished", "idle ending changes no status")
            #expect(try await eventually { d.agents().isEmpty ? true : nil }, "the agent process is gone")
            #expect(ended.last.map { if case .notice = $0.event { true } else { false } } == true, "the notice is the last event")
            _ = try await d.ok(["send", id, "[[followup]] and now the second part"])
            try await eventually { runs(try await d.events(id)).count == 2 ? true : nil }
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            let events = try await d.events(id)
            #expect(runs(events).map(\.isError) == [false, false])
            #expect(finalTexts(events).last?.contains("second turn done") == true, "resumed the same conversation: \(finalTexts(events))")
            let natives = Set(events.compactMap { if case .sessionStarted(let s) = $0.event { s.nativeSessionID } else { nil } })
            #expect(natives.count == 1, "the same Claude session, resumed: \(natives)")
            // Ending the idle agent recorded the notice and nothing else: the next events are
            // the resume's (the turn starting again).
            let idle = try #require(events.firstIndex { if case .notice(_, _, "idleStopped") = $0.event { true } else { false } })
            let between = events[(idle + 1)...].prefix { $0.event.kind != "sessionStarted" }
            #expect(between.allSatisfy {
                switch $0.event {
                case .statusChanged(.running, _): true
                case .userInput(let text): text.contains("the second part")
                default: false
                }
            }, "\(between.map(\.event.kind))")
        }
    }

    func runs(_ events: [SequencedEvent]) -> [RunFinished] {
        events.compactMap { if case .runFinished(let r) = $0.event { r } else { nil } }
    }

    func finalTexts(_ events: [SequencedEvent]) -> [String] {
        events.compactMap { if case .assistantText(let text, false) = $0.event { text } else { nil } }
    }
}
