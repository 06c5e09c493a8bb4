extension SessionCommands {
    /// Each session command's help, as `nucleic CMD --help` prints it (from NucleicCommands).
    static let usages: [String: String] = Dictionary(uniqueKeysWithValues: NucleicCommands.sessionCommands.map { ($0.path[0], NucleicCommands.table.help($0)) })
}
