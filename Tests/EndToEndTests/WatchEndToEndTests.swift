import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// `nucleic watch` in a real terminal: tmux runs it against the real daemon, keys go in with
/// `send-keys`, the screen comes out with `capture-pane`.
@Suite(.serialized) struct WatchEndToEndTests {
    static let toolAllow = Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path

    init() throws { try TestReaper.becomeSubreaper() }

    /// A private tmux server (its own socket name) holding one window of `width`×`height`.
    struct Tmux {
        let socket = "nucleic-watch-\(UUID().uuidString.prefix(8))"

        @discardableResult
        func run(_ arguments: [String]) async throws -> String {
            try await Tool.run("tmux", ["-L", socket, "-f", "/dev/null"] + arguments)
        }

        /// Starts `command` (shell words) in a new detached session; the pane stays after it exits.
        func start(_ command: String, width: Int = 120, height: Int = 32) async throws {
            try await run(["new-session", "-d", "-s", "w", "-x", "\(width)", "-y", "\(height)", command])
            try await run(["set-option", "-t", "w", "remain-on-exit", "on"])
        }

        func screen() async throws -> String { try await run(["capture-pane", "-p", "-t", "w"]) }

        func keys(_ keys: String...) async throws { try await run(["send-keys", "-t", "w"] + keys) }

        /// `#{…}` formats of the pane (pane_dead, pane_dead_status, alternate_on, pane_pid).
        func pane(_ format: String) async throws -> String {
            try await run(["display-message", "-p", "-t", "w", format]).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Waits until the screen shows every one of `texts`; fails with the screen after 60 s.
        @discardableResult
        func waitFor(_ texts: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
            let deadline = ContinuousClock.now + .seconds(60)
            var last = ""
            while ContinuousClock.now < deadline {
                last = try await screen()
                if texts.allSatisfy({ last.contains($0) }) { return last }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("the screen never showed \(texts):\n\(last)", sourceLocation: sourceLocation)
            throw PeerError("timed out")
        }

        /// Ends the server and removes its socket (tmux leaves it behind).
        func kill() async {
            _ = try? await run(["kill-server"])
            unlink("\(ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp")/tmux-\(getuid())/\(socket)")
        }
    }

    /// The shell command that runs the built `nucleic watch` against the harness's home, then
    /// prints its exit status on the terminal it restored and stays (a dead pane's screen is
    /// tmux's, not the program's).
    static func watchCommand(_ d: DaemonHarness, _ extra: [String: String] = [:], _ arguments: String = "watch") -> String {
        var environment = ["NUCLEIC_HOME": d.home, "NUCLEIC_NOTIFY_DESKTOP": "off", "NO_COLOR": "1"]
        environment.merge(extra) { $1 }
        let assignments = environment.keys.sorted().map { "\($0)='\(environment[$0]!)'" }.joined(separator: " ")
        return "env \(assignments) '\(NucleicBinary.path)' \(arguments); echo \"watch exited $?\"; sleep 600"
    }

    static func count(_ text: String, in screen: String) -> Int { screen.components(separatedBy: text).count - 1 }

    @Test func anApprovalIsAnsweredWithOneKeyAndTheViewOutlivesADaemonRestart() async throws {
        try await DaemonHarness.with { d in
            try await Tmux.with { tmux in try await Self.answerAndRestart(d, tmux) }
        }
    }

    static func answerAndRestart(_ d: DaemonHarness, _ tmux: Tmux) async throws {
        do {
            let first = try await d.start("make hello", ["--backend", "replay", "--fixture", Self.toolAllow])
            try await tmux.start(Self.watchCommand(d))

            // The approval appears on the card, selected; one key answers it.
            try await tmux.waitFor("NEEDS YOU (1)", "make hello (1) · Bash · risk write", "$ echo hello > hello.txt", "rules: none match", "a allow")
            try await tmux.keys("a")
            try await tmux.waitFor("DONE (1)", "Created hello.txt.", "Nothing needs you.")
            #expect(try await d.status(first) == "finished")

            // A second session waits on its approval; the daemon stops under the view.
            let second = try await d.start("make hello again", ["--backend", "replay", "--fixture", Self.toolAllow])
            try await tmux.waitFor("make hello again (2) · Bash")
            _ = try await d.ok(["stop-daemon"])
            try await tmux.waitFor("Host offline", "actions disabled until the connection is back")
            try await tmux.keys("a")
            try await tmux.waitFor("actions disabled: reconnect to act")
            #expect(try await tmux.pane("#{pane_dead}") == "0")  // it did not exit
            try await Task.sleep(for: .seconds(2))
            #expect(d.daemonPID == nil)  // and it started no daemon

            // A new daemon (started on demand by the CLI): the view resumes, the card is back.
            #expect(try await d.status(second) == "awaitingApproval")
            d.noteDaemon()
            try await tmux.waitFor("● Connected", "make hello again (2) · Bash · risk write")
            try await tmux.keys("a")
            try await tmux.waitFor("DONE (2)", "Nothing needs you.")
            #expect(try await d.waitFor(second, ["finished"]) == "finished")

            // Nothing shown twice: the second session's transcript, caught up across the restart.
            try await tmux.keys("k", "k", "Enter")
            let transcript = try await tmux.waitFor("transcript · make hello again (2)", "■ turn ended")
            for line in ["you › make hello again", "agent › I will create the file.", "⚙ Bash echo hello > hello.txt — completed",
                         "⚠ approval Bash echo hello > hello.txt — approved", "agent › Created hello.txt.", "■ turn ended: end_turn"] {
                #expect(Self.count(line, in: transcript) == 1, "\(line) in:\n\(transcript)")
            }
            try await tmux.keys("q")

            // q quits, leaving the alternate screen: the status is printed on the normal one.
            try await tmux.keys("q")
            try await tmux.waitFor("watch exited 0")
            #expect(try await tmux.pane("#{alternate_on}") == "0")
        }
    }

    static let ask = Fixture.root.appendingPathComponent("claude-2.1.327/ask.jsonl").path

    @Test func remoteWatchOverThePairedLinkAnswersAQuestionWithANumberKey() async throws {
        let address = "127.0.0.1:\(try RemoteEndToEndTests.freePort())"
        try await DaemonHarness.with(serve: ["--listen", address, "--replay-speed", "max"]) { d in
            let config = d.root + "/laptop"
            let invite = try await d.json(["pair"])
            let uri = try #require(invite["uri"]?.stringValue)
            let paired = try await d.start(["remote", "pair", uri, "--label", "laptop"], environment: ["XDG_CONFIG_HOME": config]).finish()
            #expect(paired.status == .exited(0), "\(paired)")
            let id = try await d.start("pick a color", ["--backend", "replay", "--fixture", Self.ask, "--title", "colour"])
            try await Tmux.with { tmux in
                try await tmux.start(Self.watchCommand(d, ["XDG_CONFIG_HOME": config], "remote watch"))
                try await tmux.waitFor("● Connected", "colour (", "Question", "Which color should the button be?", "2. Blue", "1–2 answer")
                try await tmux.keys("2")
                try await tmux.waitFor("DONE (1)", "Nothing needs you.")
                #expect(try await d.waitFor(id, ["finished", "error"]) == "finished")
                let answers = try await d.events(id).compactMap { if case .approvalResolved(let r) = $0.event { r } else { nil } }
                #expect(answers.map(\.decision) == [.answer(answers: ["Which color should the button be?": ["Blue"]])])
                #expect(answers.first?.decidedBy.hasPrefix("device:") == true && answers.first?.decidedByLabel == "laptop", "\(answers)")

                // An approval, allowed with one key over the same link. A device of the approve
                // scope is not told the host's rules: the card says so.
                let hello = try await d.start("make hello", ["--backend", "replay", "--fixture", Self.toolAllow, "--title", "hello"])
                try await tmux.waitFor("hello (", "Bash · risk write", "$ echo hello > hello.txt", "rules: not shown (explaining rules needs", "a allow")
                try await tmux.keys("a")
                try await tmux.waitFor("DONE (2)", "Nothing needs you.")
                #expect(try await d.waitFor(hello, ["finished", "error"]) == "finished")
                let allowed = try await d.events(hello).compactMap { if case .approvalResolved(let r) = $0.event { r } else { nil } }
                #expect(allowed.map(\.decision) == [.allow] && allowed.first?.decidedByLabel == "laptop", "\(allowed)")
                try await tmux.keys("q")
                try await tmux.waitFor("watch exited 0")
            }
        }
    }

    @Test func sigtermAndCtrlCRestoreTheTerminal() async throws {
        try await DaemonHarness.with { d in
            for ending in ["TERM", "C-c"] {
                try await Tmux.with { tmux in
                try await tmux.start(Self.watchCommand(d))
                try await tmux.waitFor("● Connected", "No sessions yet.")
                #expect(try await tmux.pane("#{alternate_on}") == "1")
                if ending == "TERM" {
                    let shell = try #require(Int32(try await tmux.pane("#{pane_pid}")))
                    let watch = try #require(ProcessTable.snapshot().descendants(of: shell).first { ProcessTable.arguments($0.pid).last == "watch" })
                    kill(watch.pid, SIGTERM)
                } else {
                    try await tmux.keys("C-c")
                }
                try await tmux.waitFor("watch exited 0")
                #expect(try await tmux.pane("#{alternate_on}") == "0", "after \(ending)")
                }
            }
        }
    }
}

extension WatchEndToEndTests.Tmux {
    /// Runs `body` with a fresh server, killed afterwards whatever happened.
    static func with(_ body: (Self) async throws -> Void) async throws {
        let tmux = Self()
        do {
            try await body(tmux)
            await tmux.kill()
        } catch {
            await tmux.kill()
            throw error
        }
    }
}
