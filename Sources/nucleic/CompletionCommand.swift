import NucleicCommandLine
import NucleicProtocol
import NucleicRuntime
import NucleicSystem

/// `nucleic completion SHELL`, the hidden `nucleic __complete -- WORD...` its scripts call, and
/// the hidden `nucleic __docs man|markdown|commands|options` that scripts/cli-docs.sh and the tests use.
enum CompletionCommand {
    static func script(_ arguments: [String]) throws -> Int32 {
        let usage = NucleicCommands.help("completion")
        let parsed = try ArgumentParser(arguments, valued: [], usage: usage)
        let shells = ["bash", "zsh", "fish"]
        guard let shell = try SessionCommands.positionals(parsed, ["SHELL"], usage).first else { return 64 }
        guard let script = NucleicCommands.table.completionScript(shell) else {
            let hint = Spelling.nearest(shell, among: shells).map { " (did you mean '\($0)'?)" } ?? ""
            throw UsageError(message: "no completion for '\(shell)'\(hint): bash, zsh or fish", usage: usage)
        }
        Output.write(1, script)
        return 0
    }

    /// The candidates for the last word, one a line (with `--describe`: the word, a tab, what it
    /// is). Handles come from a running daemon, asked once; with none running there are none (a
    /// daemon is never started for a completion).
    static func complete(_ arguments: [String]) -> Int32 {
        var words = arguments
        let describe = words.first == "--describe"
        if describe { words.removeFirst() }
        if words.first == "--" { words.removeFirst() }
        for c in NucleicCommands.table.describedCompletions(words, live: live) {
            let text = c.description.map { $0 == "\t" || $0 == "\n" ? " " : $0 }
            Output.standardOutput(describe && !text.isEmpty ? "\(c.word)\t\(String(text))" : c.word)
        }
        return 0
    }

    static func live(_ kind: ArgumentKind) -> [Candidate] {
        if kind == .configKey { return NucleicConfig.settings.map { Candidate($0.key, $0.summary) } }
        let result = runBlocking { () async throws -> [Candidate] in
            let client = try await DaemonClient.connect(start: false)
            defer { Task { await client.close() } }
            switch kind {
            case .session:
                guard case .sessionList(let sessions) = try await client.request(.listSessions(includeArchived: false)).body else { return [] }
                return sessions.compactMap { s in s.handle.map { Candidate($0, "\(s.title) (\(s.status.rawValue))") } }
            case .approval:
                return try await SessionCommands.pending(client).compactMap { a in a.handle.map { Candidate($0, ApprovalContent(a).headline) } }
            case .project:
                guard case .projectList(let projects) = try await client.request(.listProjects).body else { return [] }
                return projects.map { Candidate($0.name, $0.path) }
            case .device:
                guard case .deviceList(let devices) = try await client.request(.listDevices(includeRevoked: false)).body else { return [] }
                return devices.map { Candidate($0.deviceID.rawValue, $0.label) }
            default:
                return []
            }
        }
        return (try? result.get()) ?? []
    }

    static func docs(_ arguments: [String]) throws -> Int32 {
        let table = NucleicCommands.table
        switch arguments.first {
        case "man": Output.write(1, table.manPage(version: "\(table.program) \(VersionCommand.version)"))
        case "markdown": Output.write(1, table.markdown())
        case "commands": for doc in table.allCommands { Output.standardOutput(doc.name) }
        case "options":
            // Each option of each command without subcommands: NAME<tab>--option<tab>VALUE or -<tab>SHORT or -.
            for doc in table.allCommands where doc.subcommands.isEmpty {
                for o in doc.options { Output.standardOutput("\(doc.name)\t--\(o.name)\t\(o.value ?? "-")\t\(o.short.map(String.init) ?? "-")") }
            }
        default: throw UsageError(message: "__docs takes man, markdown, commands or options", usage: "usage: nucleic __docs man|markdown|commands|options")
        }
        return 0
    }
}
