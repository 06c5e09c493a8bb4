import NucleicGit
import NucleicProtocol
import NucleicStore
import NucleicWire
import NucleicCommandLine

enum VersionCommand {
    static let version = "0.1.0"

    static func run(json: Bool = false) -> Int32 {
        if json {
            let body: JSONValue = ["nucleic": .string(version), "libgit2": .string(LibGit2.version), "sqlite": .string(SQLite.version),
                                   "libsodium": .string(Sodium.version)]
            Output.standardOutput(JSONWriter.string(body))
            return 0
        }
        Output.standardOutput("nucleic \(version) (libgit2 \(LibGit2.version), SQLite \(SQLite.version), libsodium \(Sodium.version))")
        return 0
    }
}
