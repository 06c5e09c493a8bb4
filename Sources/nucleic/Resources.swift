#if canImport(Glibc)
import Glibc
#endif

/// Finds the files Nucleic ships beside its code: `Adapters/` (backend manifests) and
/// `Fixtures/` (recorded streams the demo replays).
///
/// Looked up in `$NUCLEIC_RESOURCES`, then upwards from the executable (a checkout's
/// `.build/debug/nucleic` finds the checkout), then `/usr/local/share/nucleic` and
/// `/usr/share/nucleic`.
enum Resources {
    static func root() throws -> String {
        var candidates: [String] = []
        if let override = getenv("NUCLEIC_RESOURCES") { candidates.append(String(cString: override)) }
        var directory = executableDirectory()
        while directory != "/" && !directory.isEmpty {
            candidates.append(directory)
            directory = parent(of: directory)
        }
        candidates += ["/usr/local/share/nucleic", "/usr/share/nucleic"]
        for candidate in candidates where access(candidate + "/Adapters/claude.json", R_OK) == 0 {
            return candidate
        }
        throw CommandError(message: "cannot find Nucleic's Adapters/ and Fixtures/ folders; set NUCLEIC_RESOURCES to the folder that holds them (the source checkout)")
    }

    static func path(_ relative: String) throws -> String { try root() + "/" + relative }

    private static func executableDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return "" }
        return parent(of: String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
