#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicSystem

/// The settings file, `config.toml` (docs/CONFIG.md): what would otherwise be environment
/// variables of whichever shell started the daemon. Pure: reading, editing and resolving do no
/// I/O except `load` and `save`, so the daemon (at start and on `reloadConfig`) and the CLI
/// (`nucleic config`) share it.
///
/// The file is a flat subset of TOML: `key = "text"`, `key = 123`, `key = true`, `#` comments,
/// blank lines. Tables, arrays and multi-line strings are refused with the line they are on.
public struct NucleicConfig: Sendable, Hashable {
    /// One setting the file may hold.
    public struct Setting: Sendable, Hashable {
        public let key: String
        /// The environment variable that also sets it (and wins over the file).
        public let environment: String
        public let summary: String
        /// Whether a running daemon takes a new value on `reloadConfig` (otherwise: at its next start).
        public let appliesLive: Bool
        /// Nil when `value` is acceptable, else why not.
        let check: @Sendable (String) -> String?

        public func problem(with value: String) -> String? { check(value) }

        public static func == (a: Setting, b: Setting) -> Bool { a.key == b.key }
        public func hash(into hasher: inout Hasher) { hasher.combine(key) }
    }

    public static let settings: [Setting] = [
        Setting(key: "claude-bin", environment: "NUCLEIC_CLAUDE_BIN", summary: "the Claude Code executable (default: claude on PATH)",
                appliesLive: true, check: absolutePath),
        Setting(key: "codex-bin", environment: "NUCLEIC_CODEX_BIN", summary: "the Codex executable (default: codex on PATH)",
                appliesLive: true, check: absolutePath),
        Setting(key: "acp-command", environment: "NUCLEIC_ACP_COMMAND",
                summary: "the command line of the agent `--backend acp` runs (any Agent Client Protocol agent)", appliesLive: true,
                check: { $0.contains(where: { !$0.isWhitespace }) ? nil : "a command line" }),
        Setting(key: "approval-timeout", environment: "NUCLEIC_APPROVAL_TIMEOUT",
                summary: "deny an approval no one answered in this many seconds (default: wait forever)", appliesLive: false,
                check: { Int($0).map { $0 > 0 } == true ? nil : "a positive number of seconds" }),
        Setting(key: "idle-timeout", environment: "NUCLEIC_IDLE_TIMEOUT",
                summary: "end an agent idle this long: 600, 10m, 1h or off (default 10m)", appliesLive: false,
                check: { value in
                    do throws(SessionError) { _ = try IdleTimeout.parse(value); return nil } catch { return "a duration: 600, 10m, 1h or off" }
                }),
        Setting(key: "listen", environment: "NUCLEIC_LISTEN", summary: "ADDR:PORT to accept paired devices on (default: off)",
                appliesLive: false, check: { $0.isEmpty || $0.contains(":") ? nil : "ADDR:PORT, e.g. 127.0.0.1:7420" }),
        // Read by every `nucleic` command, not by the daemon.
        Setting(key: "pager", environment: "NUCLEIC_PAGER",
                summary: "the pager of log, diff, show and events: a command line, or off (default: PAGER, else less -FRX)",
                appliesLive: true, check: { _ in nil }),
    ] + notifySettings

    public static func setting(_ key: String) -> Setting? { settings.first { $0.key == key } }

    /// Where the file is: `$NUCLEIC_HOME/config.toml` when NUCLEIC_HOME is set, else
    /// `$XDG_CONFIG_HOME/nucleic/config.toml`, else `~/.config/nucleic/config.toml`.
    public static func path(environment: [String: String]) -> String {
        if let home = environment["NUCLEIC_HOME"], !home.isEmpty { return home + "/config.toml" }
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/nucleic/config.toml" }
        return (environment["HOME"] ?? "/tmp") + "/.config/nucleic/config.toml"
    }

    /// The values the file sets, by key.
    public private(set) var values: [String: String] = [:]

    public init(values: [String: String] = [:]) { self.values = values }

    /// Where a setting's effective value came from, in precedence order.
    public enum Source: String, Sendable, Hashable {
        case flag, environment, file, `default`
    }

    /// A setting's value by precedence: the flag, then the environment of the process that reads
    /// it (the daemon's, for the daemon), then the file; nil with `.default` when none sets it.
    public func resolve(_ key: String, flag: String? = nil, environment: [String: String]) -> (value: String?, source: Source) {
        if let flag { return (flag, .flag) }
        if let setting = Self.setting(key), let value = environment[setting.environment], !value.isEmpty { return (value, .environment) }
        if let value = values[key] { return (value, .file) }
        return (nil, .default)
    }

    /// Sets a known key to a value it accepts.
    public mutating func set(_ key: String, _ value: String) throws(ConfigError) {
        guard let setting = Self.setting(key) else { throw ConfigError(unknownKey: key) }
        if let problem = setting.problem(with: value) { throw ConfigError("\(key) takes \(problem), not '\(value)'") }
        values[key] = value
    }

    public mutating func unset(_ key: String) throws(ConfigError) {
        guard Self.setting(key) != nil else { throw ConfigError(unknownKey: key) }
        values[key] = nil
    }

    // MARK: The file's text

    /// Parses the file's text; `path` names it in errors.
    public init(parsing text: String, path: String = "config.toml") throws(ConfigError) {
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = Self.withoutComment(Substring(rawLine)).trimmed
            if line.isEmpty { continue }
            let place = "\(path):\(number + 1)"
            guard let eq = line.firstIndex(of: "=") else { throw ConfigError("\(place): expected key = value, not '\(line)'") }
            let key = line[..<eq].trimmed
            let rawValue = line[line.index(after: eq)...].trimmed
            guard let setting = Self.setting(key) else { throw ConfigError("\(place): " + ConfigError(unknownKey: key).message) }
            let value: String
            if rawValue.hasPrefix("\"") {
                guard rawValue.count >= 2, rawValue.hasSuffix("\""), let unquoted = Self.unescape(rawValue.dropFirst().dropLast()) else {
                    throw ConfigError("\(place): \(key)'s value is not a complete \"string\"")
                }
                value = unquoted
            } else if !rawValue.isEmpty, rawValue.allSatisfy({ $0.isNumber || $0 == "-" }) || rawValue == "true" || rawValue == "false" {
                value = rawValue
            } else {
                throw ConfigError("\(place): \(key)'s value must be a \"quoted string\", a number, true or false")
            }
            if let problem = setting.problem(with: value) { throw ConfigError("\(place): \(key) takes \(problem), not '\(value)'") }
            values[key] = value
        }
    }

    /// The file's text: one `key = "value"` line per set key, in the order of `settings`.
    public var text: String {
        var out = "# Nucleic settings (docs/CONFIG.md). Edit with `nucleic config set KEY VALUE`.\n"
        for setting in Self.settings {
            guard let value = values[setting.key] else { continue }
            out += "\(setting.key) = \"\(Self.escape(value))\"\n"
        }
        return out
    }

    static func withoutComment(_ line: Substring) -> Substring {
        var inString = false
        var escaped = false
        for index in line.indices {
            let c = line[index]
            if escaped { escaped = false; continue }
            if c == "\\" && inString { escaped = true; continue }
            if c == "\"" { inString.toggle() }
            if c == "#" && !inString { return line[..<index] }
        }
        return line
    }

    static func escape(_ value: String) -> String {
        var out = ""
        for c in value {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default: out.append(c)
            }
        }
        return out
    }

    static func unescape(_ text: Substring) -> String? {
        var out = ""
        var escaped = false
        for c in text {
            if escaped {
                switch c {
                case "\\": out.append("\\")
                case "\"": out.append("\"")
                case "n": out.append("\n")
                case "t": out.append("\t")
                default: return nil
                }
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == "\"" {
                return nil
            } else {
                out.append(c)
            }
        }
        return escaped ? nil : out
    }

    static let absolutePath: @Sendable (String) -> String? = { $0.hasPrefix("/") ? nil : "an absolute path" }

    // MARK: Files

    /// The file at `path`; an empty configuration when there is none.
    public static func load(path: String) throws(ConfigError) -> NucleicConfig {
        let read: [UInt8]?
        do { read = try WholeFile.read(path) } catch { throw ConfigError("cannot read \(path): \(error)") }
        guard let bytes = read else { return NucleicConfig() }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw ConfigError("\(path) is not UTF-8 text") }
        return try NucleicConfig(parsing: text, path: path)
    }

    /// Writes the file atomically (a temporary file renamed over it), creating its folder.
    public func save(path: String) throws(ConfigError) {
        do { try WholeFile.replace(path, with: Array(text.utf8)) } catch { throw ConfigError("cannot write \(path): \(error); the file is unchanged") }
    }
}

/// A config file or value Nucleic cannot use: what and where, and what it takes.
public struct ConfigError: Error, Sendable, Hashable {
    public let message: String
    public init(_ message: String) { self.message = message }

    init(unknownKey key: String) {
        let known = NucleicConfig.settings.map(\.key)
        let hint = Spelling.nearest(key, among: known).map { " (did you mean '\($0)'?)" } ?? ""
        self.init("unknown setting '\(key)'\(hint); the settings are \(known.joined(separator: ", "))")
    }
}

extension Substring {
    var trimmed: String {
        var s = self
        while let first = s.first, first.isWhitespace { s.removeFirst() }
        while let last = s.last, last.isWhitespace { s.removeLast() }
        return String(s)
    }
}
