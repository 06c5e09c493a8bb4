#if canImport(Glibc)
import Glibc
#endif
import NucleicCommandLine
import NucleicProtocol
import NucleicSystem

/// A failure the user can act on: printed as `nucleic: <message>` (under `--json`, as
/// `{"error": {"code", "message"}}`), exit status `status` (1 unless said; the table in
/// `nucleic help`).
struct CommandError: Error {
    let message: String
    var status: Int32 = 1
    /// A machine-readable code: the daemon's error code, or one derived from the status.
    var code: String?

    var resolvedCode: String { code ?? CLI.exitCodes.first { $0.status == status }?.code ?? "failed" }
}

enum CLI {
    static let usage = """
        usage: nucleic <command> [options]

        Sessions (the daemon starts on demand):
          project add PATH [--name N]              register a git repository
          project ls                               list projects
          start PROMPT [--project P] [--backend B] start an agent in a new worktree; prints its id
          ls [--all]                               sessions: NEEDS YOU, RUNNING, DONE
          show SESSION                             one session's summary
          log SESSION [--follow] [--since SEQ]     the readable transcript (--follow: answer approvals there)
          approvals                                pending approvals: diffs, commands, options; risk
          approve APPROVAL [--input F | --edit]    allow (optionally with a modified input)
                   [--always SCOPE]                ... and every later matching request
          deny APPROVAL [--message M] [--always]   deny; the agent continues with the message
          answer APPROVAL CHOICE...                answer a question: a number, a label or your own text
          rules ls|add|rm|explain                  the host's permission rules
          send SESSION TEXT                        a follow-up
          interrupt SESSION                        stop the current turn
          diff SESSION [--stat]                    the session's changes since it left its base
          discard SESSION [--delete-branch]        stop it, commit its work to its branch, remove the worktree
          integrate SESSION --merge|--rebase|--squash  bring the session's work onto its base
          overlap [PROJECT]                        files two live sessions both touched
          export-fixture SESSION                   the session's raw journal, replayable
          serve / stop-daemon [--kill-sessions]    run / stop the daemon (serve --listen ADDR:PORT for devices)
          config list|get|set|unset                settings that stick (config.toml), applied to a running daemon

        Devices (a phone over the LAN, end-to-end encrypted):
          pair [--scope S] [--label L]             a one-time QR code / nucleic:// link to pair a device
          devices [--all]                          paired devices
          revoke DEVICE                            unpair a device; its connections close at once

        Remote (this machine as a paired device of another host, over TCP):
          remote pair URI [--label L]              pair with a host from its pairing link
          remote ls | watch                        its sessions; live list, approvals, transcripts
          remote approve|deny APPROVAL, remote send SESSION TEXT

        Tools:
          demo [--fixture FILE] [--fast]           replay a recorded agent session, readably
          events --backend claude|codex [FILE|-]   normalize a raw agent stdout stream (or a fixture) to events
          replay-agent FIXTURE [--speed S]         play a recorded agent CLI on stdin/stdout (for testing hosts)
          doctor [--json]                          repairs made, damage, loose modes, stale shims and sockets
          version                                  print versions of nucleic and its libraries
          help [COMMAND]                           show help

        A SESSION is its handle (12, as `ls` shows it), its branch, or the start or end of its id;
        an APPROVAL is its handle (12.1) or the start or end of its id. Commands take --json
        (errors then are {"error":{"code","message"}} on stderr); `CMD --help` shows a command's
        options; `--` ends options. Short options: -a --all, -b --backend, -f --follow,
        -m --message, -n --name, -p --project, -s --stat, -t --title, -h --help.

        Exit status:
        \(exitCodes.map { "  \(String($0.status).padding(4)) \($0.code.padding(12)) \($0.meaning)" }.joined(separator: "\n"))
        """

    /// The exit statuses every command uses (docs/CLI.md), with the JSON error code of each.
    static let exitCodes: [(status: Int32, code: String, meaning: String)] = [
        (0, "ok", "done"),
        (1, "failed", "it could not be done; the message says why"),
        (2, "notFound", "no such session, approval, project or setting, or more than one matches"),
        (3, "conflicted", "integrate: conflicts; nothing changed"),
        (4, "dirtyBase", "integrate: uncommitted work in the base's checkout at paths it changes"),
        (64, "usage", "the command line is wrong (unknown command or option, missing argument)"),
    ]

    /// Every command name, for did-you-mean.
    static var commandNames: [String] {
        ["demo", "serve", "config", "doctor", "remote", "events", "replay-agent", "version", "help"]
            + Array(SessionCommands.usages.keys) + Array(DeviceCommands.usages.keys)
    }

    static func run(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            Output.standardError(usage)
            return 64
        }
        let rest = Array(arguments.dropFirst())
        let json = wantsJSON(rest)
        do {
            // `CMD --help` / `CMD -h`: that command's help, whatever else is given.
            if command != "help", command != "shim", ArgumentParser.asksForHelp(rest), let text = help(command) {
                Output.standardOutput(text)
                return 0
            }
            switch command {
            case "demo": return try DemoCommand.run(rest)
            case "serve": return try ServeCommand.run(rest)
            case "config": return try ConfigCommand.run(rest)
            case "doctor": return try DoctorCommand.run(rest)
            case "remote": return try RemoteCommands.run(rest)
            case _ where SessionCommands.usages[command] != nil: return try SessionCommands.run(command, rest)
            case _ where DeviceCommands.usages[command] != nil: return try DeviceCommands.run(command, rest)
            case "events": return try EventsCommand.run(rest)
            case "replay-agent": return try ReplayAgentCommand.run(rest)
            case "shim": return try ShimCommand.run(rest)
            case "version", "--version": return VersionCommand.run(json: json)
            case "help", "--help", "-h":
                guard let topic = rest.first else { Output.standardOutput(usage); return 0 }
                guard let text = help(topic) else { throw UsageError(message: unknownCommand(topic), usage: "usage: nucleic help [COMMAND]") }
                Output.standardOutput(text)
                return 0
            default:
                throw UsageError(message: unknownCommand(command), usage: "usage: nucleic <command> [options]")
            }
        } catch let error as UsageError {
            if json { return jsonError("usage", error.message, 64) }
            Output.standardError("nucleic: \(error.message)\n\n\(error.synopsis)\nRun `nucleic help\(help(command) != nil ? " \(command)" : "")` for more.")
            return 64
        } catch let error as CommandError {
            if json { return jsonError(error.resolvedCode, error.message, error.status) }
            Output.standardError("nucleic: \(error.message)")
            return error.status
        } catch {
            if json { return jsonError("failed", "\(error)", 1) }
            Output.standardError("nucleic: \(error)")
            return 1
        }
    }

    static func unknownCommand(_ command: String) -> String {
        let hint = Spelling.nearest(command, among: commandNames).map { " (did you mean '\($0)'?)" } ?? ""
        return "unknown command '\(command)'\(hint)"
    }

    /// `--json` among the options (before any `--`).
    static func wantsJSON(_ arguments: [String]) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "--json" { return true }
        }
        return false
    }

    /// An error under `--json`: `{"error":{"code":…,"message":…}}` on stderr, the same status.
    static func jsonError(_ code: String, _ message: String, _ status: Int32) -> Int32 {
        let body: JSONValue = ["error": ["code": .string(code), "message": .string(message)]]
        Output.standardError(JSONWriter.string(body))
        return status
    }

    static func help(_ command: String) -> String? {
        switch command {
        case "demo": DemoCommand.usage
        case "serve": ServeCommand.usage
        case "remote": RemoteCommands.usage
        case _ where SessionCommands.usages[command] != nil: SessionCommands.usages[command]
        case _ where DeviceCommands.usages[command] != nil: DeviceCommands.usages[command]
        case "events": EventsCommand.usage
        case "replay-agent": ReplayAgentCommand.usage
        case "version": "usage: nucleic version [--json]\n\nPrints the versions of nucleic and its libraries."
        case "config": ConfigCommand.usage
        case "doctor": DoctorCommand.usage
        default: nil
        }
    }
}

