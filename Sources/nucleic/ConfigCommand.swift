import NucleicProtocol
import NucleicRuntime
import NucleicSystem
import NucleicCommandLine

/// `nucleic config get|set|unset|list`: the settings file (docs/CONFIG.md), and what the running
/// daemon makes of it.
enum ConfigCommand {
    static var usage: String { NucleicCommands.help("config") }

    /// The help's description (NucleicCommands).
    static let description = """
        Settings that stick, in $NUCLEIC_HOME/config.toml when NUCLEIC_HOME is set, else
        $XDG_CONFIG_HOME/nucleic/config.toml (~/.config/nucleic/config.toml). Every daemon start
        reads it; `set` and `unset` also tell a running daemon, which applies the agent binaries
        to the next `start` at once (the rest at its next start: `nucleic stop-daemon`, sessions
        keep running). Precedence: a `serve` flag, then the environment of the process that
        starts the daemon, then this file, then the default. Keys:
        \(NucleicConfig.settings.map { "  \($0.key.padding(17)) \($0.summary); \($0.environment) too" }.joined(separator: "\n"))
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        guard let sub = arguments.first else { throw UsageError(message: "missing list, get, set or unset", usage: usage) }
        let parsed = try ArgumentParser(Array(arguments.dropFirst()), valued: [], boolean: ["json"], usage: usage)
        let environment = AgentLaunch.hostEnvironment()
        let path = NucleicConfig.path(environment: environment)
        var config: NucleicConfig
        do { config = try NucleicConfig.load(path: path) } catch { throw CommandError(message: error.message) }
        switch sub {
        case "list":
            _ = try SessionCommands.positionals(parsed, [], usage)
            let daemon = try daemonEntries()
            let entries = daemon ?? NucleicConfig.settings.map { s in
                let r = config.resolve(s.key, environment: environment)
                return ConfigEntry(key: s.key, value: r.value, source: r.source.rawValue, inForce: true)
            }
            if parsed.flag("json") {
                SessionCommands.json(["path": .string(path), "daemonRunning": .bool(daemon != nil), "settings": .array(entries.map(\.json))])
                return 0
            }
            Output.standardOutput("# \(path)\(daemon == nil ? " (no daemon running: as the next one would read it)" : " (as the running daemon has it)")")
            for e in entries { Output.standardOutput("\(e.key) = \(e.value.map { "\"\($0)\"" } ?? "(default)")  # \(describe(e))") }
        case "get":
            let key = try SessionCommands.positionals(parsed, ["KEY"], usage)[0]
            guard NucleicConfig.setting(key) != nil else { throw CommandError(message: unknown(key), status: 2) }
            let resolved = config.resolve(key, environment: environment)
            if parsed.flag("json") {
                SessionCommands.json(["key": .string(key), "value": resolved.value.map(JSONValue.string) ?? .null, "source": .string(resolved.source.rawValue)])
            } else if let value = resolved.value {
                Output.standardOutput(value)
            } else {
                return 1  // unset, as `git config` says it: nothing printed, status 1
            }
        case "set", "unset":
            let names = sub == "set" ? ["KEY", "VALUE"] : ["KEY"]
            let values = try SessionCommands.positionals(parsed, names, usage)
            do {
                if sub == "set" { try config.set(values[0], values[1]) } else { try config.unset(values[0]) }
                try config.save(path: path)
            } catch { throw CommandError(message: error.message, status: 2) }
            let entry = try daemonEntries()?.first { $0.key == values[0] }
            let outcome = values[0] == "pager" ? "every nucleic command reads it"
                : entry.map { outcomeText($0, key: values[0]) } ?? "no daemon is running: the next one reads it"
            if parsed.flag("json") {
                var o: JSONObject = ["key": .string(values[0]), "value": sub == "set" ? .string(values[1]) : .null, "path": .string(path)]
                o.append("daemon", ifPresent: entry?.json)
                SessionCommands.json(.object(o))
            } else {
                Output.standardOutput("\(sub == "set" ? "set \(values[0]) = \"\(values[1])\"" : "unset \(values[0])") in \(path); \(outcome)")
            }
        default:
            throw UsageError(message: "unknown config command '\(sub)'", usage: usage)
        }
        return 0
    }

    static func unknown(_ key: String) -> String {
        var probe = NucleicConfig()
        do throws(ConfigError) { try probe.unset(key); return "" } catch { return error.message }
    }

    static func describe(_ e: ConfigEntry) -> String {
        let setting = NucleicConfig.setting(e.key)
        var text = e.source == "environment" ? "from the daemon's \(setting?.environment ?? "environment")" : "from the \(e.source)"
        if !e.inForce { text += "; the file says otherwise: applied at the daemon's next start" }
        return text
    }

    static func outcomeText(_ e: ConfigEntry, key: String) -> String {
        let variable = NucleicConfig.setting(key)?.environment ?? "its variable"
        if e.source == "environment" {
            return "but the running daemon's environment sets \(variable)=\(e.value ?? ""), which wins over the file: restart the daemon from a shell without \(variable) (`nucleic stop-daemon`; sessions keep running)"
        }
        if !e.inForce { return "the running daemon applies it at its next start (`nucleic stop-daemon`; sessions keep running)" }
        return "the running daemon applies it now"
    }

    /// The running daemon's view of the settings, after it re-read the file, or nil when no
    /// daemon runs. Never starts one.
    static func daemonEntries() throws -> [ConfigEntry]? {
        let result = runBlocking { () async throws -> [ConfigEntry]? in
            let client: DaemonClient
            do { client = try await DaemonClient.connect(start: false) } catch { return nil }
            guard case .config(let entries) = try await client.request(.reloadConfig).body else {
                throw CommandError(message: "unexpected reply to reloadConfig")
            }
            return entries
        }
        return try result.get()
    }
}
