import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// The built `nucleic` binary, run as a user runs it.
@Suite struct CommandLineTests {
    typealias Run = NucleicCommand.Run

    func nucleic(_ arguments: [String], stdin: [UInt8] = [], environment: [String: String] = [:]) async throws -> Run {
        try await NucleicCommand.run(arguments, environment: environment, stdin: stdin)
    }

    func golden(_ name: String) throws -> String {
        try String(contentsOf: Fixture.root.deletingLastPathComponent().appendingPathComponent("Tests/EndToEndTests/Golden/\(name)"), encoding: .utf8)
    }

    func events(_ stdout: String) throws -> [SequencedEvent] {
        try stdout.split(separator: "\n").map { try SequencedEvent(json: JSONParser.parse(String($0))) }
    }

    /// `nucleic help`, and every command's and subcommand's help, as the goldens have them,
    /// whichever way it is asked for (`help CMD`, `CMD --help`, `CMD -h`); no golden is left
    /// without its command. scripts/cli-docs.sh --golden rewrites them from the binary.
    @Test func helpIsAsDocumented() async throws {
        let overview = try await nucleic(["help"])
        #expect(overview.status == .exited(0))
        #expect(overview.stdout == (try golden("help.txt")), "nucleic help differs from Golden/help.txt")
        let commands = try await nucleic(["__docs", "commands"]).stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(commands.count > 40 && commands.contains(["project", "add"]) && commands.contains(["remote", "watch"]))
        for name in Set(commands.map { $0[0] }) {
            #expect(overview.stdout.contains("\n  \(name) ") || overview.stdout.contains("\n  \(name)\n"), "nucleic help lists no '\(name)'")
        }
        var files: Set<String> = ["help.txt"]
        for words in commands {
            let file = "help-\(words.joined(separator: "-")).txt"
            files.insert(file)
            let expected = try golden(file)
            for args in [["help"] + words, words + ["--help"], words + ["-h"]] {
                let run = try await nucleic(args)
                #expect(run.status == .exited(0) && run.stderr.isEmpty, "nucleic \(args.joined(separator: " ")): \(run.status) \(run.stderr)")
                #expect(run.stdout == expected, "nucleic \(args.joined(separator: " ")) differs from Golden/\(file)")
            }
        }
        let folder = Fixture.root.deletingLastPathComponent().appendingPathComponent("Tests/EndToEndTests/Golden").path
        let present = Set(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("help") })
        #expect(present == files, "goldens without a command: \(present.subtracting(files)); commands without a golden: \(files.subtracting(present))")
    }

    /// The man page is well-formed roff: groff renders it with every warning on and says nothing.
    @Test func theManPageRendersWithoutWarnings() async throws {
        let page = Fixture.root.deletingLastPathComponent().appendingPathComponent("docs/man/nucleic.1").path
        let run = try await CompletionEndToEndTests.shell("groff", ["-Kutf8", "-man", "-ww", "-z", page])
        #expect(run.status == .exited(0) && run.stderr.isEmpty, "\(run.stderr)")
        let text = try await CompletionEndToEndTests.shell("groff", ["-Kutf8", "-man", "-Tutf8", page])
        #expect(text.stdout.contains("nucleic integrate SESSION") && text.stdout.contains("dirtyBase"))
    }

    /// Every option the help lists is one the command's parser takes, with a value when the help
    /// gives it one and without when not, in its short form too: an unknown option after it is
    /// the first error, so the documented one went through.
    @Test func everyDocumentedOptionIsAccepted() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-o-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        let rows = try await nucleic(["__docs", "options"]).stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(rows.count > 60)
        for row in rows {
            let words = row[0].split(separator: " ").map(String.init)
            let (option, value, short) = (row[1], row[2], row[3])
            var forms = [value == "-" ? [option] : ["\(option)=x"]]
            if short != "-" { forms.append(value == "-" ? ["-\(short)"] : ["-\(short)", "x"]) }
            for form in forms {
                let args = words + form + ["--zz-not-an-option"]
                let run = try await nucleic(args, environment: ["NUCLEIC_HOME": home])
                #expect(run.status == .exited(64) && run.stderr.contains("unknown option --zz-not-an-option"),
                        "nucleic \(args.joined(separator: " ")): \(run.stderr)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: home + "/run/nucleic.sock"), "no daemon was started")
    }

    /// docs/CLI.md and docs/man/nucleic.1 are what the command table renders now.
    @Test func theReferenceAndTheManPageAreUpToDate() async throws {
        let root = Fixture.root.deletingLastPathComponent()
        for (format, path) in [("markdown", "docs/CLI.md"), ("man", "docs/man/nucleic.1")] {
            let run = try await nucleic(["__docs", format])
            #expect(run.status == .exited(0))
            let checkedIn = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            #expect(run.stdout == checkedIn, "\(path) is stale: run scripts/cli-docs.sh")
        }
    }

    @Test(arguments: [
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["events", "--backend"], "--backend needs a value"),
        (["events", "--backend", "gpt"], "unknown backend 'gpt'"),
        (["events", "--colour"], "unknown option --colour"),
        (["events", "a", "b"], "give at most one FILE"),
        (["demo", "--fast=yes"], "--fast takes no value"),
        (["start"], "missing PROMPT"),
        (["start", ""], "PROMPT is empty"),
        (["start", " \n\t"], "PROMPT is empty"),
        (["send", "1", ""], "TEXT is empty"),
        (["project", "rm"], "missing NAME"),
        (["project", "lss"], "did you mean 'ls'?"),
        (["rules", "ad", "x"], "unknown rules command 'ad' (did you mean 'add'?)"),
        (["remote", "wach"], "did you mean 'watch'?"),
        (["diff", "1", "--stta"], "unknown option --stta (did you mean --stat?)"),
        (["integrate", "1", "--sqash"], "did you mean --squash?"),
        (["aprove", "1.1"], "unknown command 'aprove' (did you mean 'approve'?)"),
        (["help", "intgrate"], "did you mean 'integrate'?"),
        (["completion", "bsh"], "no completion for 'bsh' (did you mean 'bash'?)"),
        (["completion"], "missing SHELL"),
        (["version", "extra"], "unexpected argument 'extra'"),
        (["start", "x", "--backend", "replay"], "--backend replay needs --fixture FILE"),
        (["approve", "a1", "--input", "f", "--edit"], "give one of --input, --edit and --answer"),
        (["deny", "a1", "--cancel", "--message", "m"], "--cancel takes no --message"),
        (["log", "s1", "--since", "-3"], "--since must be a seq"),
        (["serve", "--max-running", "0"], "--max-running must be a positive number"),
    ])
    func usageErrorsExit64WithTheUsage(_ args: [String], _ message: String) async throws {
        let run = try await nucleic(args)
        #expect(run.status == .exited(64))
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(run.stderr.contains("usage: nucleic"))
        #expect(run.stdout.isEmpty)
    }

    @Test func noArgumentsPrintsTheUsage() async throws {
        let run = try await nucleic([])
        #expect(run.status == .exited(64) && run.stderr.contains("usage: nucleic <command>"))
    }

    @Test func eventsFromAFixtureFileNumberFromOne() async throws {
        let fixture = try Fixture.named("claude", "two-tools")
        let run = try await nucleic(["events", Fixture.root.appendingPathComponent("claude/two-tools.jsonl").path])
        #expect(run.status == .exited(0), "\(run.stderr)")
        let events = try events(run.stdout)
        #expect(events.map(\.seq) == Array(1...Int64(events.count)))
        let counts = EventCounts(events.map(\.event))
        let raw = RawCounts.claude(fixture.outLines)
        #expect(counts.approvalsRequested == raw.approvalsRequested && counts.toolCallsStarted == raw.toolCallsStarted && counts.runs == raw.runs)
        #expect(events.filter { $0.event.kind == "approvalResolved" }.count == 2)
    }

    @Test func eventsFromStandardInputKeepGoingPastBadLines() async throws {
        let fixture = try Fixture.named("claude", "tool-allow")
        var lines = fixture.outLines
        lines.insert("this is not json", at: 2)
        lines.insert(#"{"type":"assistant","message":{"content":[{"type":"text","text":"trunc"#, at: 4)
        lines.insert(#"{"type":"brand_new_thing","x":1}"#, at: 5)
        let run = try await nucleic(["events", "--backend", "claude", "-"], stdin: Array((lines.joined(separator: "\n") + "\n").utf8))
        #expect(run.status == .exited(0), "\(run.stderr)")
        let kinds = try events(run.stdout).map(\.event.kind)
        #expect(kinds.filter { $0 == "error" }.count == 2)
        #expect(kinds.filter { $0 == "unknown" }.count == 1)
        #expect(kinds.last == "runFinished")
        #expect(kinds.contains("toolCallCompleted"))
    }

    @Test func anOverLimitLineIsAnErrorEventAndReadingGoesOn() async throws {
        let big = #"{"type":"assistant","message":{"content":[{"type":"text","text":""# + String(repeating: "x", count: 300_000) + #""}]}}"#
        let input = [big, #"{"type":"result","subtype":"success","is_error":false,"result":"ok"}"#].joined(separator: "\n") + "\n"
        let run = try await nucleic(["events", "--backend", "claude"], stdin: Array(input.utf8), environment: ["NUCLEIC_MAX_LINE_BYTES": "100000"])
        #expect(run.status == .exited(0), "\(run.stderr)")
        let events = try events(run.stdout)
        guard case .error(let code, let message, let preview)? = events.first?.event else { Issue.record("\(events)"); return }
        #expect(code == "lineTooLong" && message.contains("\(big.utf8.count) bytes"))
        #expect(preview?.hasPrefix(#"{"type":"assistant""#) == true)
        #expect(events.last?.event.kind == "runFinished")
    }

    @Test func aMissingFileIsAClearError() async throws {
        let run = try await nucleic(["events", "--backend", "codex", "/nonexistent/stream.jsonl"])
        #expect(run.status == .exited(1))
        #expect(run.stderr == "nucleic: cannot read /nonexistent/stream.jsonl: No such file or directory\n")
    }

    @Test func theDemoRunsASessionAndAsksForTheApproval() async throws {
        let run = try await nucleic(["demo", "--fast", "--yes"])
        #expect(run.status == .exited(0), "\(run.stderr)")
        for expected in ["Scratch repository", "in its worktree ", "(recorded in /tmp/nucleic-fixture/repo)",
                         ": Write notes.txt  [risk:", "    +from the mock", "→ allowed by user:demo", "■ run finished",
                         "The session's diff against main", "+++ b/notes.txt", "nucleic integrate", "--squash",
                         "Author: Nucleic Demo <demo@nucleic.invalid>", "Co-authored-by: Claude Code (claude-opus-5-5) <noreply@anthropic.com>",
                         " notes.txt | 1 +", " 1 file changed, 1 insertion(+)", "Status: finished"] {
            #expect(run.stdout.contains(expected), "\(run.stdout)")
        }
        // The worktree the demo names is where the session ran (and the folder is gone afterwards).
        let worktree = try #require(run.stdout.split(separator: "\n").first { $0.contains("in its worktree ") }
            .map { String($0.split(separator: " ").last!.dropLast()) })
        #expect(worktree.contains("/nucleic/worktrees/shop/"))
        #expect(!FileManager.default.fileExists(atPath: worktree))
        // Asked at the terminal: a reason denies, and the replay stops at the divergence, explained.
        let denied = try await nucleic(["demo", "--fast"], stdin: Array("not now\n".utf8))
        #expect(denied.status == .exited(1))
        #expect(denied.stdout.contains("→ denied: not now by user:demo") && denied.stdout.contains("A replayed agent can only follow its recording"),
                "\(denied.stdout)")
    }

    /// Ctrl-C while the demo waits at its approval: the agent (and its shim) end, the folder goes.
    @Test func ctrlCInTheDemoLeavesNoProcessAndNoFolder() async throws {
        let process = try ChildProcess.spawn(executable: NucleicBinary.path, arguments: ["demo"], environment: ProcessInfo.processInfo.environment)
        async let err: [UInt8] = process.stderr.reduce(into: []) { $0 += $1 }
        var output = ""
        var root: String?
        for await chunk in process.stdout {
            output += String(decoding: chunk, as: UTF8.self)
            if root == nil, let line = output.split(separator: "\n").first(where: { $0.hasPrefix("Scratch repository ") }) {
                root = line.split(separator: " ")[2].split(separator: "/").dropLast().map(String.init).reduce("") { $0 + "/" + $1 }
            }
            if output.contains("[Y]es / [n]o") { break }  // waiting at the approval, the agent running
        }
        let folder = try #require(root, "\(output)")
        #expect(FileManager.default.fileExists(atPath: folder))
        #expect(!Self.processes(under: folder).isEmpty, "the agent runs in the scratch folder")
        _ = try process.signal(SIGINT, group: false)
        let status = await process.wait()
        _ = await err
        #expect(status == .exited(130), "\(status)")
        #expect(!FileManager.default.fileExists(atPath: folder), "the scratch folder is removed")
        try await Task.sleep(for: .milliseconds(500))
        #expect(Self.processes(under: folder).isEmpty, "\(Self.processes(under: folder))")
    }

    /// Live processes whose working folder or arguments name `folder`.
    static func processes(under folder: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.filter { $0.allSatisfy(\.isNumber) }.compactMap { pid in
            let cwd = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd")) ?? ""
            let arguments = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))).map { String(decoding: $0, as: UTF8.self) } ?? ""
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: ")").last?.split(separator: " ").first
            guard state != "Z", cwd.hasPrefix(folder) || arguments.contains(folder) else { return nil }
            return "\(pid) \(arguments.replacingOccurrences(of: "\0", with: " "))"
        }
    }
}
