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
    static var usage: String { NucleicCommands.help("serve") }

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
        // Every manifest of the folder: a backend is added by adding its file.
        let folder = String(try Resources.path("Adapters/claude.json").dropLast("/claude.json".count))
        var names: [String] = []
        if let directory = opendir(folder) {
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasSuffix(".json"), !name.hasPrefix(".") { names.append(name) }
            }
            closedir(directory)
        }
        for name in names.sorted() {
            let path = folder + "/" + name
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
