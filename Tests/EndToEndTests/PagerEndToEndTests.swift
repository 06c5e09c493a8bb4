import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// Colour and the pager on a real terminal: tmux runs the built `nucleic`, `capture-pane`
/// (with `-e`, the colours) shows what a person sees.
@Suite(.serialized) struct PagerEndToEndTests {
    typealias Tmux = WatchEndToEndTests.Tmux
    static let edit = Fixture.root.appendingPathComponent("claude/edit.jsonl").path

    init() throws { try TestReaper.becomeSubreaper() }

    /// Runs `command` (shell words; `nucleic` is the built binary) on a terminal of its own with
    /// `environment` and nothing else of the pager's or colour's from this process; returns the
    /// screen (escapes included when `escapes`) once it printed its exit status.
    static func onTerminal(_ command: String, environment: [String: String], escapes: Bool = false,
                           height: Int = 40, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        var screen = ""
        try await Tmux.with { tmux in
            let assignments = environment.keys.sorted().map { "\($0)='\(environment[$0]!)'" }.joined(separator: " ")
            let line = command.replacingOccurrences(of: "nucleic ", with: "'\(NucleicBinary.path)' ")
            try await tmux.start("env -u PAGER -u NUCLEIC_PAGER -u NO_COLOR -u LESS \(assignments) sh -c \"\(line)\"; echo \"exited $?\"; sleep 600",
                                 width: 160, height: height)
            try await tmux.waitFor("exited ", sourceLocation: sourceLocation)
            screen = escapes ? try await tmux.run(["capture-pane", "-p", "-e", "-t", "w"]) : try await tmux.screen()
        }
        return screen
    }

    /// A finished session whose diff adds notes.txt; returns its handle.
    static func finishedSession(_ d: DaemonHarness) async throws -> String {
        let id = try await d.start("write notes", ["--backend", "replay", "--fixture", Self.edit])
        _ = try await d.waitFor(id, ["awaitingApproval"])
        let approval = try await d.approval(id)
        _ = try await d.ok(["approve", approval.id.rawValue])
        #expect(try await d.waitFor(id, ["finished"]) == "finished")
        return try #require(try await d.summary(id)["handle"]?.stringValue)
    }

    /// The pager runs only on a terminal and only when nothing turns it off, in the order
    /// NUCLEIC_PAGER, the pager setting, PAGER.
    @Test func thePagerRunsOnATerminalUnlessTurnedOff() async throws {
        try await DaemonHarness.with(serve: ["--replay-speed", "max"]) { d in
            let handle = try await Self.finishedSession(d)
            let home = ["NUCLEIC_HOME": d.home]
            let marking = "sed s/^/PAGED:/"
            var screen = try await Self.onTerminal("nucleic diff \(handle)", environment: home.merging(["NUCLEIC_PAGER": marking]) { $1 })
            #expect(screen.contains("PAGED:+++ b/notes.txt") && screen.contains("exited 0"), "\(screen)")
            screen = try await Self.onTerminal("nucleic log \(handle)", environment: home.merging(["PAGER": marking]) { $1 })
            #expect(screen.contains("PAGED:you › write notes") && screen.contains("exited 0"), "\(screen)")

            // Not through a pipe, not with --no-pager (before or after the command), not with NUCLEIC_PAGER=cat.
            for command in ["nucleic diff \(handle) | cat", "nucleic --no-pager diff \(handle)", "nucleic diff \(handle) --no-pager"] {
                screen = try await Self.onTerminal(command, environment: home.merging(["NUCLEIC_PAGER": marking]) { $1 })
                #expect(screen.contains("+++ b/notes.txt") && !screen.contains("PAGED:") && screen.contains("exited 0"), "\(command): \(screen)")
            }
            screen = try await Self.onTerminal("nucleic diff \(handle)", environment: home.merging(["NUCLEIC_PAGER": "cat", "PAGER": marking]) { $1 })
            #expect(screen.contains("+++ b/notes.txt") && !screen.contains("PAGED:"), "\(screen)")

            // The setting: off wins over PAGER; NUCLEIC_PAGER wins over it.
            _ = try await d.ok(["config", "set", "pager", "off"])
            screen = try await Self.onTerminal("nucleic diff \(handle)", environment: home.merging(["PAGER": marking]) { $1 })
            #expect(screen.contains("+++ b/notes.txt") && !screen.contains("PAGED:"), "\(screen)")
            screen = try await Self.onTerminal("nucleic diff \(handle)", environment: home.merging(["NUCLEIC_PAGER": marking]) { $1 })
            #expect(screen.contains("PAGED:+++ b/notes.txt"), "\(screen)")
            _ = try await d.ok(["config", "unset", "pager"])

            // An error before any output starts no pager.
            screen = try await Self.onTerminal("nucleic diff 999", environment: home.merging(["NUCLEIC_PAGER": marking]) { $1 })
            #expect(screen.contains("nucleic: ") && !screen.contains("PAGED:") && screen.contains("exited 2"), "\(screen)")
        }
    }

    /// The default pager is less; quitting it (q) long before the output ends prints nothing
    /// and exits 0.
    @Test func quittingLessEarlyIsQuiet() async throws {
        try await Tmux.with { tmux in
            let line = "yes '{\"type\":\"brand_new_thing\",\"x\":1}' | head -50000 | '\(NucleicBinary.path)' events --backend claude"
            try await tmux.start("env -u PAGER -u NUCLEIC_PAGER -u LESS sh -c \"\(line.replacingOccurrences(of: "\"", with: "\\\""))\"; echo \"exited $?\"; sleep 600",
                                 width: 100, height: 12)
            try await tmux.waitFor("\"seq\":1,", "brand_new_thing")
            #expect(try await tmux.screen().contains("\"seq\":11,") == false, "less shows a page and waits")
            try await tmux.keys("q")
            let screen = try await tmux.waitFor("exited ")
            #expect(screen.contains("exited 0"), "\(screen)")
            #expect(!screen.contains("nucleic:") && !screen.lowercased().contains("broken pipe"), "\(screen)")
        }
    }

    /// Ctrl-C while the pager shows a page of an output still coming: nucleic ends the output
    /// and waits for the pager (which keeps the terminal) before it dies of the signal, so the
    /// shell never takes the terminal back under a pager still reading it.
    @Test func ctrlCLeavesThePagerTheTerminalUntilItIsQuit() async throws {
        try await Tmux.with { tmux in
            // The shells ignore SIGINT (so they live to print the status); nucleic and less set their own.
            let event = #"{\"type\":\"brand_new_thing\",\"x\":1}"#
            let producer = "(i=0; while [ \\$i -lt 60 ]; do echo '\(event)'; i=\\$((i+1)); done; sleep 3)"
            let line = "\(producer) | '\(NucleicBinary.path)' events --backend claude"
            try await tmux.start("trap '' INT; env -u PAGER -u NUCLEIC_PAGER -u LESS sh -c \"\(line)\"; echo \"exited $?\"; sleep 600", width: 100, height: 12)
            try await tmux.waitFor("\"seq\":1,", "brand_new_thing")
            try await tmux.keys("C-c")
            try await Task.sleep(for: .seconds(6))
            let during = try await tmux.screen()
            #expect(!during.contains("exited"), "nucleic waits for the pager: \(during)")
            try await tmux.keys("q")
            let after = try await tmux.waitFor("exited ")
            #expect(after.contains("exited 130") && !after.contains("nucleic:"), "\(after)")
        }
    }

    /// Colour on a terminal; none through a pipe, with NO_COLOR or --color=never; always with
    /// --color=always, through a pipe too.
    @Test func colourOnATerminalOnlyUnlessAsked() async throws {
        try await DaemonHarness.with(serve: ["--replay-speed", "max"]) { d in
            let handle = try await Self.finishedSession(d)
            let plain = ["NUCLEIC_HOME": d.home, "NUCLEIC_PAGER": "cat"]
            let green = "\u{1B}[32m+from the mock"
            func screen(_ command: String, _ extra: [String: String] = [:]) async throws -> String {
                try await Self.onTerminal(command, environment: plain.merging(extra) { $1 }, escapes: true)
            }
            var s = try await screen("nucleic diff \(handle)")
            #expect(s.contains(green) && s.contains("\u{1B}[36m"), "\(s.debugDescription)")
            s = try await screen("nucleic log \(handle)")
            #expect(s.contains(green) && s.contains("[risk: \u{1B}["), "the card's diff and its risk: \(s.debugDescription)")
            s = try await screen("nucleic ls")
            #expect(s.contains("DONE (1)") && s.contains("\u{1B}[1m"), "the groups in bold: \(s.debugDescription)")
            for (command, extra) in [("nucleic diff \(handle) | cat", [:]), ("nucleic diff \(handle)", ["NO_COLOR": "1"]),
                                     ("nucleic --color=never diff \(handle)", [:])] {
                s = try await screen(command, extra)
                #expect(s.contains("+from the mock") && !s.contains("\u{1B}["), "\(command) \(extra): \(s.debugDescription)")
            }
            for command in ["nucleic diff \(handle) --color=always | cat", "nucleic --color diff \(handle) | cat"] {
                s = try await screen(command, ["NO_COLOR": "1"])
                #expect(s.contains(green), "\(command): \(s.debugDescription)")
            }
        }
    }
}
