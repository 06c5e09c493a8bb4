#if canImport(Glibc)
import Glibc
import NucleicSystem
import NucleicCommandLine
#endif

/// Whole-file reads and writes, and temporary files, for the benchmarks.
enum Files {
    /// `path` from the current folder, when it is relative: the benchmarks hand the `nucleic`
    /// binary to children that start in other folders (a shim in a session's worktree).
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let folder = getcwd(nil, 0) else { return path }
        defer { free(folder) }
        return String(cString: folder) + "/" + path
    }

    /// `nucleic` in this executable's folder (both are built into .build/<config>/); when
    /// /proc/self/exe cannot be read, in the folder of the path this one was started by.
    static func nucleicBesideThisBinary() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let path = n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
        return String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) + "/nucleic"
    }

    /// A new empty file in $TMPDIR (or /tmp) whose name ends in `suffix`.
    static func temporary(prefix: String, suffix: String) throws(BenchError) -> String {
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((directory + "/" + prefix + "-XXXXXX" + suffix).utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, Int32(suffix.utf8.count)) }
        guard fd >= 0 else { throw BenchError(message: "cannot create a temporary file in \(directory): \(String(cString: strerror(errno)))") }
        close(fd)
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func read(_ path: String) throws(BenchError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BenchError(message: "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = chunk.withUnsafeMutableBytes { Syscall.read(fd, $0.baseAddress, $0.count) }
            guard n >= 0 else { throw BenchError(message: "reading \(path) failed: \(String(cString: strerror(errno)))") }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
        }
    }

    static func write(_ bytes: [UInt8], to path: String) throws(BenchError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw BenchError(message: "cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Syscall.write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw BenchError(message: "writing \(path) failed: \(String(cString: strerror(errno)))") }
            offset += n
        }
    }
}

extension ArgumentParser {
    /// The benchmarks' `--nucleic PATH`, made absolute, or else the `nucleic` binary next to
    /// this one.
    func nucleicBinary() -> String { self["nucleic"].map(Files.absolute) ?? Files.nucleicBesideThisBinary() }
}
