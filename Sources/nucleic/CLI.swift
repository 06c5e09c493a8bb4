#if canImport(Glibc)
import Glibc
#endif
import NucleicCommandLine
import NucleicProtocol
import NucleicRuntime
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
    /// The overview `nucleic help` prints (NucleicCommands).
    static var usage: String { NucleicCommands.overview }

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
    static var commandNames: [String] { NucleicCommands.table.commandNames }

    /// The commands whose output goes through the pager on a terminal.
    static let paged: Set<String> = ["log", "diff", "show", "events"]

    /// Takes the display options (--color, --no-pager) out of the arguments, sets colour and
    /// arms the pager, then runs the command.
    static func run(_ arguments: [String]) -> Int32 {
        var arguments = arguments
        let display: DisplayOptions
        do { display = try DisplayOptions.take(&arguments) } catch {
            if wantsJSON(arguments) { return jsonError("usage", error.message, 64) }
            Output.standardError("nucleic: \(error.message)\n\n\(error.synopsis)")
            return 64
        }
        let environment = AgentLaunch.hostEnvironment()
        let terminal = isatty(STDOUT_FILENO) == 1
        Colour.enabled = display.colors(isTerminal: terminal, environment: environment)
        if let command = arguments.first, paged.contains(command) {
            let rest = arguments.dropFirst()
            // `log --follow` is a live view that may ask at the terminal: never paged.
            let follows = command == "log" && rest.prefix { $0 != "--" }.contains { $0 == "--follow" || $0 == "-f" }
            if !follows, !ArgumentParser.asksForHelp(Array(rest)),
               let pager = display.pagerCommand(isTerminal: terminal, environment: environment, setting: configuredPager(environment)) {
                Pager.arm(pager)
            }
        }
        return dispatch(arguments)
    }

    /// The `pager` setting of the settings file (nil when unset or unreadable).
    static func configuredPager(_ environment: [String: String]) -> String? {
        (try? NucleicConfig.load(path: NucleicConfig.path(environment: environment)))?.values["pager"]
    }

    static func dispatch(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            // On a terminal, `nucleic` alone is the live view; elsewhere it is a usage error.
            if isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 { return run(["watch"]) }
            Output.standardError(usage)
            return 64
        }
        let rest = Array(arguments.dropFirst())
        let json = wantsJSON(rest)
        // The command (or subcommand) the words name, for its help and its usage errors.
        let named = NucleicCommands.table.resolve(arguments.prefix { !ArgumentParser.looksLikeOption($0) })?.doc
        do {
            // `CMD --help` / `CMD -h`: that command's (or subcommand's) help, whatever else is given.
            if command != "help", command != "shim", ArgumentParser.asksForHelp(rest), let named {
                Output.standardOutput(NucleicCommands.table.help(named))
                return 0
            }
            if let named, named.path.count == 1, !named.subcommands.isEmpty, let sub = rest.first, !ArgumentParser.looksLikeOption(sub),
               named.subcommand(sub) == nil {
                let hint = Spelling.nearest(sub, among: named.subcommands.map { $0.path.last! }).map { " (did you mean '\($0)'?)" } ?? ""
                throw UsageError(message: "unknown \(command) command '\(sub)'\(hint)", usage: NucleicCommands.table.help(named))
            }
            switch command {
            case "demo": return try DemoCommand.run(rest)
            case "watch": return try WatchCommandLine.run(rest)
            case "serve": return try ServeCommand.run(rest)
            case "config": return try ConfigCommand.run(rest)
            case "doctor": return try DoctorCommand.run(rest)
            case "remote": return try RemoteCommands.run(rest)
            case "notify": return try NotifyCommand.run(rest)
            case _ where SessionCommands.usages[command] != nil: return try SessionCommands.run(command, rest)
            case _ where DeviceCommands.usages[command] != nil: return try DeviceCommands.run(command, rest)
            case "events": return try EventsCommand.run(rest)
            case "replay-agent": return try ReplayAgentCommand.run(rest)
            case "shim": return try ShimCommand.run(rest)
            case "completion": return try CompletionCommand.script(rest)
            case "__complete": return CompletionCommand.complete(rest)
            case "__docs": return try CompletionCommand.docs(rest)
            case "version", "--version":
                _ = try ArgumentParser(rest, valued: [], boolean: ["json"], allowsPositionals: false, usage: NucleicCommands.help("version"))
                return VersionCommand.run(json: json)
            case "help", "--help", "-h":
                let topic = rest.filter { !ArgumentParser.looksLikeOption($0) }
                guard !topic.isEmpty else {
                    Output.standardOutput(ArgumentParser.asksForHelp(rest) ? NucleicCommands.help("help") : usage)
                    return 0
                }
                guard let text = NucleicCommands.help(topic) else {
                    throw UsageError(message: unknownCommand(topic.joined(separator: " ")), usage: NucleicCommands.help("help"))
                }
                Output.standardOutput(text)
                return 0
            default:
                throw UsageError(message: unknownCommand(command), usage: "usage: nucleic <command> [options]")
            }
        } catch let error as UsageError {
            if json { return jsonError("usage", error.message, 64) }
            let more = named.map { " \($0.name)" } ?? ""
            Output.standardError("nucleic: \(error.message)\n\n\(error.synopsis)\nRun `nucleic help\(more)` for more.")
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

    static func help(_ command: String) -> String? { NucleicCommands.help([command]) }
}
