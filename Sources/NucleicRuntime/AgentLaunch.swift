#if canImport(Glibc)
import Glibc
#endif
public import NucleicAdapters

/// Exactly how to start one agent process: found binary, argv, environment, directory.
public struct AgentLaunch: Sendable, Hashable {
    public var executable: String
    public var arguments: [String]
    public var environment: [String: String]
    public var workingDirectory: String

    public init(executable: String, arguments: [String], environment: [String: String], workingDirectory: String) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
    }

    /// The launch a manifest describes (DESIGN.md §4): the binary from the manifest's
    /// environment override, else the first of its names on `PATH`. A `command` (a whole
    /// command line, `--agent-command`) replaces the binary and the arguments; a manifest whose
    /// `binary.env` holds a command line (the generic `acp` backend) needs one, there or here.
    public static func from(
        _ manifest: AdapterManifest, workingDirectory: String, model: String? = nil, resumeID: String? = nil,
        command: String? = nil, environment: [String: String] = hostEnvironment()
    ) throws(LaunchError) -> AgentLaunch {
        var env = environment
        env.merge(manifest.environment) { $1 }
        let line = command ?? (manifest.binaryIsCommandLine ? manifest.binaryEnvironment.flatMap { environment[$0] } : nil)
        if let line {
            let words: [String]
            do { words = try CommandWords.split(line) } catch { throw LaunchError("the agent command '\(line)': \(error.message)") }
            guard let first = words.first else { throw LaunchError("the agent command is empty: give the program and its arguments") }
            let binary = try locate(first, environment: environment)
            return AgentLaunch(executable: binary, arguments: Array(words.dropFirst()), environment: env, workingDirectory: workingDirectory)
        }
        if manifest.binaryIsCommandLine {
            let key = manifest.binaryEnvironment.flatMap { variable in NucleicConfig.settings.first { $0.environment == variable }?.key }
            throw LaunchError("the \(manifest.name) backend runs the agent you name: give its command with --agent-command \"…\""
                + (key.map { " or `nucleic config set \($0) \"…\"`" } ?? ""))
        }
        let binary = try locate(manifest, environment: environment)
        return AgentLaunch(executable: binary, arguments: manifest.launchArguments(model: model, resumeID: resumeID),
                           environment: env, workingDirectory: workingDirectory)
    }

    /// A command's program: a path as given (it must be executable), a bare name on `PATH`.
    static func locate(_ program: String, environment: [String: String]) throws(LaunchError) -> String {
        if program.contains("/") {
            guard access(program, X_OK) == 0 else { throw LaunchError("\(program) is not an executable file") }
            return program
        }
        for directory in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw LaunchError("\(program) is not on PATH; install it or give its full path")
    }

    static func locate(_ manifest: AdapterManifest, environment: [String: String]) throws(LaunchError) -> String {
        if let variable = manifest.binaryEnvironment, let path = environment[variable], !path.isEmpty {
            guard access(path, X_OK) == 0 else {
                throw LaunchError("\(variable)=\(path) is not an executable file; fix or unset it")
            }
            return path
        }
        let searchPath = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for name in manifest.binaryNames {
            for directory in searchPath.split(separator: ":") where !directory.isEmpty {
                let candidate = "\(directory)/\(name)"
                if access(candidate, X_OK) == 0 { return candidate }
            }
        }
        // The daemon's environment is fixed when it starts: the settings file is what a user can change.
        let key = manifest.binaryEnvironment.flatMap { variable in NucleicConfig.settings.first { $0.environment == variable }?.key }
        let how = key.map { " or give its path with `nucleic config set \($0) PATH`" } ?? manifest.binaryEnvironment.map { " or set \($0) to its path" } ?? ""
        throw LaunchError("\(manifest.displayName) is not installed: none of \(manifest.binaryNames.joined(separator: ", ")) is on PATH; install it\(how)")
    }

    /// This process's environment as a dictionary.
    public static func hostEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let eq = text.firstIndex(of: "=") { result[String(text[..<eq])] = String(text[text.index(after: eq)...]) }
            entry += 1
        }
        return result
    }
}

/// A backend that cannot be started, with what to do about it.
public struct LaunchError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
