import NucleicSystem

/// The command line's whole small files: `WholeFile`, with its failures said as `CommandError`s.
enum FileText {
    /// The file's text; an error when it does not exist or cannot be read.
    static func read(_ path: String) throws -> String {
        guard let text = try readIfExists(path) else { throw CommandError(message: "cannot read \(path): no such file") }
        return text
    }

    /// The file's text, or nil when it does not exist.
    static func readIfExists(_ path: String) throws -> String? {
        do { return try WholeFile.read(path).map { String(decoding: $0, as: UTF8.self) } } catch { throw CommandError(message: "cannot read \(path): \(error)") }
    }

    /// Writes `text` to `path` through a 0600 temporary file and a rename; creates the folder 0700.
    static func writeAtomically(_ text: String, to path: String) throws {
        do { try WholeFile.replace(path, with: Array(text.utf8)) } catch { throw CommandError(message: "cannot write \(path): \(error)") }
    }
}
