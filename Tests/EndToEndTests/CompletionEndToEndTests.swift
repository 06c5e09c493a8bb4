import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// `nucleic completion bash|zsh|fish`: the scripts parse in their shells, and sourced in a real
/// bash (and fish) they complete command names and, from a running daemon, live handles.
@Suite(.serialized) struct CompletionEndToEndTests {
    static let toolAllow = Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path

    init() throws { try TestReaper.becomeSubreaper() }

    struct Shell: Sendable {
        var status: ChildProcess.ExitStatus
        var stdout: String
        var stderr: String
    }

    /// Runs `shell` with `arguments`, `nucleic` first on its PATH, in `environment`.
    static func shell(_ shell: String, _ arguments: [String], environment extra: [String: String] = [:]) async throws -> Shell {
        var environment = ProcessInfo.processInfo.environment
        let folder = URL(fileURLWithPath: NucleicBinary.path).deletingLastPathComponent().path
        environment["PATH"] = folder + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment.merge(extra) { $1 }
        let process = try ChildProcess.spawn(executable: shell, arguments: arguments, environment: environment)
        process.closeStdin()
        async let out: [UInt8] = process.stdout.reduce(into: []) { $0 += $1 }
        async let err: [UInt8] = process.stderr.reduce(into: []) { $0 += $1 }
        let (o, e) = await (out, err)
        return Shell(status: await process.wait(), stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    static func script(_ shell: String) async throws -> String {
        let run = try await NucleicCommand.run(["completion", shell])
        #expect(run.status == .exited(0) && run.stderr.isEmpty)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-completion-\(UUID().uuidString.prefix(8)).\(shell)").path
        try run.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A bash that sources the completion and prints, for each line, what `_nucleic` offers
    /// (one candidate a line, then `--`), as bash does at a Tab after that line.
    static func bashCompletes(_ lines: [String], environment: [String: String]) async throws -> [[String]] {
        let path = try await script("bash")
        defer { unlink(path) }
        var program = "source '\(path)'\n"
        program += #"c() { COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; COMPREPLY=(); _nucleic; printf '%s\n' "${COMPREPLY[@]}"; echo --; }"# + "\n"
        program += lines.map { "c '\($0)'" }.joined(separator: "\n")
        let run = try await shell("bash", ["--norc", "--noprofile", "-c", program], environment: environment)
        #expect(run.status == .exited(0), "\(run.stderr)")
        var groups: [[String]] = [[]]
        for line in run.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if line == "--" { groups.append([]) } else if !line.isEmpty { groups[groups.count - 1].append(String(line)) }
        }
        return Array(groups.dropLast())
    }

    @Test(arguments: [("bash", ["-n"]), ("zsh", ["-n"]), ("fish", ["--no-execute"])])
    func theScriptParses(_ shell: String, _ check: [String]) async throws {
        let path = try await Self.script(shell)
        defer { unlink(path) }
        let run = try await Self.shell(shell, check + [path])
        #expect(run.status == .exited(0), "\(shell) \(check) on the completion: \(run.stderr)")
        #expect(run.stderr.isEmpty, "\(run.stderr)")
    }

    /// With a daemon running: commands, subcommands, options and values from the table, and the
    /// session and approval handles the daemon has.
    @Test func bashCompletesCommandsAndLiveHandles() async throws {
        try await DaemonHarness.with { d in
            let id = try await d.start("make hello", ["--backend", "replay", "--fixture", Self.toolAllow])
            _ = try await d.waitFor(id, ["awaitingApproval"])
            let handle = try #require(try await d.summary(id)["handle"]?.stringValue)
            let approval = try #require(try await d.approvals(id).first?.handle)
            let got = try await Self.bashCompletes(["nucleic st", "nucleic show ", "nucleic approve ", "nucleic project ", "nucleic diff \(handle) --st",
                                                    "nucleic start x --backend co", "nucleic --color=al", "nucleic ls --color=ne",
                                                    "nucleic completion ", "nucleic help proj", "nucleic start -p "],
                                                   environment: ["NUCLEIC_HOME": d.home])
            #expect(got.count == 11, "\(got)")
            guard got.count == 11 else { return }
            #expect(got[0] == ["start", "stop-daemon"])
            #expect(got[1] == [handle])
            #expect(got[2] == [approval])
            #expect(got[3] == ["add", "ls", "rm"])
            #expect(got[4] == ["--stat"])
            #expect(got[5] == ["codex"])
            #expect(got[6] == [], "a first word is a command: \(got[6])")
            #expect(got[7] == ["never"], "bash splits at '=': only the value is offered")
            #expect(got[8] == ["bash", "zsh", "fish"])
            #expect(got[9] == ["project"])
            #expect(got[10] == ["shop"])
            let described = try await NucleicCommand.run(["__complete", "--describe", "--", "show", ""], environment: ["NUCLEIC_HOME": d.home])
            #expect(described.stdout == "\(handle)\tmake hello (awaitingApproval)\n", "\(described.stdout)")
        }
    }

    /// Without a daemon: the static candidates still come, handles do not, and none is started.
    @Test func completionNeverStartsADaemon() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-c-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        let started = ContinuousClock.now
        let got = try await Self.bashCompletes(["nucleic show ", "nucleic inte"], environment: ["NUCLEIC_HOME": home])
        #expect(got == [[], ["interrupt", "integrate"]])
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(!FileManager.default.fileExists(atPath: home + "/run/nucleic.sock"), "no daemon was started")
        #expect(!FileManager.default.fileExists(atPath: home + "/run/daemon.log"))
    }

    /// zsh runs `_nucleic` as its completion system would (words, CURRENT), with compadd and
    /// _files standing in for the system's: what it offers, or the file fallback.
    @Test func zshCompletesCommandsAndOptions() async throws {
        let path = try await Self.script("zsh")
        defer { unlink(path) }
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-z-\(UUID().uuidString.prefix(8))").path
        let program = """
            compdef() { :; }; compadd() { print -r -- "compadd $*"; }; _files() { print _files; }
            source '\(path)'
            words=(nucleic st); CURRENT=2; _nucleic
            words=(nucleic diff 1 --st); CURRENT=4; _nucleic
            words=(nucleic show ''); CURRENT=3; _nucleic
            """
        let run = try await Self.shell("zsh", ["-f", "-c", program], environment: ["NUCLEIC_HOME": home])
        #expect(run.status == .exited(0), "\(run.stderr)")
        #expect(run.stdout == "compadd -Q -- start stop-daemon\ncompadd -Q -- --stat\n_files\n", "\(run.stdout)")
        #expect(!FileManager.default.fileExists(atPath: home), "no daemon was started")
    }

    /// fish's own completer (`complete -C`) over the sourced script.
    @Test func fishCompletesCommandsAndOptions() async throws {
        let path = try await Self.script("fish")
        defer { unlink(path) }
        let run = try await Self.shell("fish", ["--no-config", "-c", "source '\(path)'; complete -C 'nucleic inte'; echo ---; complete -C 'nucleic diff 1 --st'"])
        #expect(run.status == .exited(0), "\(run.stderr)")
        let words = run.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        #expect(words == ["integrate", "interrupt", "---", "--stat"], "\(run.stdout)")
        #expect(run.stdout.contains("integrate\tbring the session's work onto its base"), "fish shows what each is: \(run.stdout)")
    }
}
