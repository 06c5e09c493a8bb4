public import NucleicProtocol

// The settings file in a running host: what applies at once, what waits for a restart.
extension SessionHost {
    /// The environment agents start with: the daemon's own, with the settings file's agent
    /// binaries for the variables that environment does not set (the environment wins).
    var agentEnvironment: [String: String] {
        var environment = configuration.environment
        for setting in NucleicConfig.settings where setting.appliesLive {
            if (environment[setting.environment] ?? "").isEmpty, let value = fileConfig.values[setting.key] {
                environment[setting.environment] = value
            }
        }
        return environment
    }

    /// Reads the settings file again (where the daemon's environment says it is). The agent
    /// binaries apply to the next `start`; the rest is reported as waiting for a restart when
    /// the file now differs from what the daemon started with.
    public func reloadConfig() throws(SessionError) -> [ConfigEntry] {
        let path = NucleicConfig.path(environment: configuration.environment)
        do { fileConfig = try NucleicConfig.load(path: path) } catch {
            throw SessionError(.badMessage, "\(error.message); the daemon keeps its settings")
        }
        return configEntries()
    }

    /// Each setting as this host has it.
    public func configEntries() -> [ConfigEntry] {
        NucleicConfig.settings.map { setting in
            let now = fileConfig.resolve(setting.key, environment: configuration.environment)
            if setting.appliesLive { return ConfigEntry(key: setting.key, value: now.value, source: now.source.rawValue, inForce: true) }
            let atStart = configuration.config.resolve(setting.key, environment: configuration.environment)
            // A value from the environment wins either way; otherwise a changed file needs a restart.
            let inForce = now.source == .environment || now.value == atStart.value
            return ConfigEntry(key: setting.key, value: atStart.value, source: atStart.source.rawValue, inForce: inForce)
        }
    }
}
