#if canImport(Glibc)
import Glibc
import NucleicSystem
#endif

/// A command line the user got wrong: printed with the command's usage, exit status 64 (EX_USAGE).
struct UsageError: Error {
    let message: String
    let usage: String
}

/// A failure the user can act on: printed as `nucleic: <message>`, exit status 1.
struct CommandError: Error {
    let message: String
    var status: Int32 = 1
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

        Read commands take --json. Ids may be shortened to a unique prefix.
        Run `nucleic help COMMAND` for a command's options.
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            Output.standardError(usage)
            return 64
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch command {
            case "demo": return try DemoCommand.run(rest)
            case "serve": return try ServeCommand.run(rest)
            case "config": return try ConfigCommand.run(rest)
            case "remote": return try RemoteCommands.run(rest)
            case _ where SessionCommands.usages[command] != nil: return try SessionCommands.run(command, rest)
            case _ where DeviceCommands.usages[command] != nil: return try DeviceCommands.run(command, rest)
            case "events": return try EventsCommand.run(rest)
            case "replay-agent": return try ReplayAgentCommand.run(rest)
            case "shim": return try ShimCommand.run(rest)
            case "doctor": return try DoctorCommand.run(rest)
            case "version", "--version": return VersionCommand.run()
            case "help", "--help", "-h":
                if let topic = rest.first, let text = help(topic) { Output.standardOutput(text) } else { Output.standardOutput(usage) }
                return 0
            default:
                throw UsageError(message: "unknown command '\(command)'", usage: usage)
            }
        } catch let error as UsageError {
            Output.standardError("nucleic: \(error.message)\n\n\(error.usage)")
            return 64
        } catch let error as CommandError {
            Output.standardError("nucleic: \(error.message)")
            return error.status
        } catch {
            Output.standardError("nucleic: \(error)")
            return 1
        }
    }

    static func help(_ command: String) -> String? {
        switch command {
        case "demo": DemoCommand.usage
        case "serve": ServeCommand.usage
        case "config": ConfigCommand.usage
        case "remote": RemoteCommands.usage
        case _ where SessionCommands.usages[command] != nil: SessionCommands.usages[command]
        case _ where DeviceCommands.usages[command] != nil: DeviceCommands.usages[command]
        case "events": EventsCommand.usage
        case "replay-agent": ReplayAgentCommand.usage
        case "version": "usage: nucleic version"
        case "doctor": DoctorCommand.usage
        default: nil
        }
    }
}

/// Parses `--flag value`, `--flag=value`, boolean flags and positionals for one command.
struct ArgumentParser {
    private(set) var positionals: [String] = []
    private var options: [String: String] = [:]
    private var lists: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// - Parameters: `valued` options take a value (the last one given wins); `repeated` ones take
    ///   a value each time; `boolean` ones take none. Anything else is an error.
    init(_ arguments: [String], valued: Set<String>, boolean: Set<String> = [], repeated: Set<String> = [], usage: String) throws {
        var i = 0
        var onlyPositionals = false
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let eq = name.firstIndex(of: "=") {
                value = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if boolean.contains(name) {
                guard value == nil else { throw UsageError(message: "--\(name) takes no value", usage: usage) }
                flags.insert(name)
            } else if valued.contains(name) || repeated.contains(name) {
                if value == nil {
                    guard i < arguments.count else { throw UsageError(message: "--\(name) needs a value", usage: usage) }
                    value = arguments[i]
                    i += 1
                }
                options[name] = value
                lists[name, default: []].append(value!)
            } else {
                throw UsageError(message: "unknown option --\(name)", usage: usage)
            }
        }
    }

    subscript(option: String) -> String? { options[option] }
    func flag(_ name: String) -> Bool { flags.contains(name) }
    /// Every value a repeated option was given, in order.
    func all(_ option: String) -> [String] { lists[option] ?? [] }
}

enum Output {
    static func standardOutput(_ text: String) { write(1, text + "\n") }
    static func standardError(_ text: String) { write(2, text + "\n") }

    static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Syscall.write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
        }
    }
}
