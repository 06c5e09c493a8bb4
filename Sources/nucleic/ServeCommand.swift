#if canImport(Glibc)
import Glibc
#endif
import NucleicAdapters
import NucleicDaemon
import NucleicProtocol
import NucleicRuntime
import NucleicSystem
import NucleicCommandLine

/// `nucleic serve`: the daemon. Owns the session host and listens on the local socket until
/// SIGTERM, SIGINT or `nucleic stop-daemon`; then stops every agent and exits, nothing
/// half-written.
enum ServeCommand {
    static let usage = """
        usage: nucleic serve [--max-running N] [--replay-speed recorded|max] [--approval-timeout SECS] [--listen ADDR:PORT]
                             [--orphan-grace SECONDS]

        Runs the Nucleic daemon in the foreground: it owns the sessions, their agents and the
        store under $NUCLEIC_HOME (default ~/.local/share/nucleic), and listens on
        $NUCLEIC_HOME/run/nucleic.sock. The other commands start it on demand, in the
        background, logging to $NUCLEIC_HOME/run/daemon.log. SIGTERM or `nucleic stop-daemon`
        stops it gracefully. Agents run under per-session shims and outlive the daemon: the
        next daemon adopts them (`stop-daemon --kill-sessions` ends them instead).

        Options:
          --max-running N          agents working at once; more sessions wait as queued (default 8)
          --replay-speed SPEED     how the replay backend plays fixtures (default recorded)
          --approval-timeout SECS  deny an approval no one answered in SECS seconds, telling the
                                   agent why (default: wait forever; NUCLEIC_APPROVAL_TIMEOUT too)
          --listen ADDR:PORT       also accept paired devices over TCP (Noise-encrypted) on this
                                   numeric address; off unless asked. The daemon started on
                                   demand takes it from NUCLEIC_LISTEN.
          --orphan-grace SECONDS   end an agent whose daemon has been gone this long (default: never)
          --idle-timeout TIME      end an agent idle this long (its turn over, nothing pending); the
                                   next `nucleic send` resumes it: 600, 10m, 1h, or off (default
                                   10m; NUCLEIC_IDLE_TIMEOUT too)
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: ["max-running", "replay-speed", "approval-timeout", "listen", "orphan-grace", "idle-timeout"], usage: usage)
        guard parsed.positionals.isEmpty else { throw UsageError(message: "unexpected argument '\(parsed.positionals[0])'", usage: usage) }
        var maxRunning = 8
        if let text = parsed["max-running"] {
            guard let n = Int(text), n > 0 else { throw UsageError(message: "--max-running must be a positive number", usage: usage) }
            maxRunning = n
        }
        // Each setting: the flag, else this process's environment, else config.toml (NucleicConfig).
        let environment = AgentLaunch.hostEnvironment()
        let fileConfig: NucleicConfig
        do { fileConfig = try NucleicConfig.load(path: NucleicConfig.path(environment: environment)) } catch {
            throw CommandError(message: "\(error.message); fix the file or use `nucleic config set`")
        }
        func setting(_ key: String) -> String? { fileConfig.resolve(key, flag: parsed[key], environment: environment).value }
        var approvalTimeout: Duration?
        if let text = setting("approval-timeout") {
            guard let seconds = Int(text), seconds > 0 else { throw UsageError(message: "--approval-timeout must be a positive number of seconds", usage: usage) }
            approvalTimeout = .seconds(seconds)
        }
        var orphanGrace: Double?
        if let text = parsed["orphan-grace"] {
            guard let seconds = Double(text), seconds >= 0 else { throw UsageError(message: "--orphan-grace takes seconds", usage: usage) }
            orphanGrace = seconds
        }
        let idleTimeout: Duration?
        do { idleTimeout = try IdleTimeout.parse(setting("idle-timeout")) } catch {
            throw UsageError(message: error.message, usage: usage)
        }
        let speed = parsed["replay-speed"] ?? "recorded"
        guard ["recorded", "max"].contains(speed) else { throw UsageError(message: "--replay-speed is recorded or max", usage: usage) }

        let listen = try setting("listen").flatMap { $0.isEmpty ? nil : try parseListen($0) }

        var hostConfiguration = SessionHost.Configuration(
            home: NucleicHome.fromEnvironment(), adapters: try AdapterCatalog.load(), selfExecutable: SelfExecutable.path,
            maxRunning: maxRunning, replaySpeed: speed, approvalTimeout: approvalTimeout, orphanGrace: orphanGrace, idleTimeout: idleTimeout)
        hostConfiguration.config = fileConfig
        let daemon = Daemon(Daemon.Configuration(
            host: hostConfiguration, listen: listen.map { Daemon.ListenAddress(host: $0.host, port: $0.port) }, hostVersion: VersionCommand.version))
        try runBlocking { try await daemon.run() }.get()
        return 0
    }
}

/// `ADDR:PORT` for `--listen` / NUCLEIC_LISTEN: a numeric IPv4 address or a bracketed IPv6 one.
func parseListen(_ text: String) throws -> (host: String, port: Int) {
    guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
        throw UsageError(message: "--listen takes ADDR:PORT (e.g. 127.0.0.1:7420), not '\(text)'", usage: ServeCommand.usage)
    }
    var host = String(text[..<colon])
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    return (host, port)
}

enum ProcessEnvironment {
    static func value(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}

/// This executable's path (the replay backend runs `nucleic replay-agent`).
enum SelfExecutable {
    static let path: String = {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    }()
}

/// The backend manifests in `Adapters/` (docs/ADAPTERS.md).
enum AdapterCatalog {
    static func load() throws -> [String: AdapterManifest] {
        var manifests: [String: AdapterManifest] = [:]
        for name in ["claude", "codex"] {
            let path = try Resources.path("Adapters/\(name).json")
            let text = try FileText.read(path)
            do {
                let manifest = try AdapterManifest(json: JSONParser.parse(text))
                manifests[manifest.name] = manifest
            } catch {
                throw CommandError(message: "\(path): \(error)")
            }
        }
        return manifests
    }
}

/// Reading a whole small file.
enum FileText {
    static func read(_ path: String) throws -> String {
        guard let file = fopen(path, "r") else { throw CommandError(message: "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
