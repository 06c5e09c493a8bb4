import NucleicGit
import NucleicStore
import NucleicWire

enum VersionCommand {
    static let version = "0.1.0"

    static func run() -> Int32 {
        Output.standardOutput("nucleic \(version) (libgit2 \(LibGit2.version), SQLite \(SQLite.version), libsodium \(Sodium.version))")
        return 0
    }
}
