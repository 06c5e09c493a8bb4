#if canImport(Glibc)
import Glibc
#endif
import NucleicRuntime
import NucleicSystem

/// A temporary folder for one benchmark phase: a data folder, a git repository, fixtures.
/// Removed (with `rm -rf`) by `remove()` unless kept.
struct Scratch {
    let root: String

    /// A new empty folder `$TMPDIR/<prefix>-XXXXXX`.
    static func make(_ prefix: String) throws(BenchError) -> Scratch {
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((directory + "/" + prefix + "-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw BenchError(message: "cannot create a temporary folder in \(directory): \(Scratch.lastError())") }
        return Scratch(root: String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    var home: NucleicHome { NucleicHome(path: root + "/home") }

    /// A git repository `root/<name>` with one commit on `main`, made with the git CLI.
    func repository(_ name: String) async throws(BenchError) -> String {
        let path = root + "/" + name
        guard mkdir(path, 0o700) == 0 else { throw BenchError(message: "cannot create \(path): \(Scratch.lastError())") }
        try BufferedFile.write("# \(name)\n\nA repository for nucleic-bench sessions.\n", to: path + "/README.md")
        let git = ["git", "-c", "commit.gpgsign=false"]
        // A repository-local identity: integrations and discards commit as it.
        for arguments in [["init", "-q", "-b", "main"], ["config", "user.name", "nucleic-bench"], ["config", "user.email", "bench@nucleic.invalid"],
                          ["add", "README.md"], ["commit", "-qm", "initial"]] {
            let result = try await Command.run(git + arguments, workingDirectory: path)
            guard result.status.isSuccess else {
                throw BenchError(message: "git \(arguments.joined(separator: " ")) failed in \(path) (\(result.status)): \(result.errorText)")
            }
        }
        return path
    }

    func remove() async {
        _ = try? await Command.run(["rm", "-rf", root])
    }

    static func lastError() -> String { String(cString: strerror(errno)) }
}

/// A short-lived child process, run to its end, through the runtime's own spawner.
enum Command {
    struct Result {
        var status: ChildProcess.ExitStatus
        var output: [UInt8]
        var errorText: String
        var seconds: Double
    }

    /// Runs `argv` (argv[0] looked up on PATH) and collects its stdout; stderr's tail is kept.
    static func run(_ argv: [String], environment: [String: String]? = nil, workingDirectory: String? = nil) async throws(BenchError) -> Result {
        let started = monotonicSeconds()
        let process: ChildProcess
        do {
            process = try ChildProcess.spawn(executable: argv[0], arguments: Array(argv.dropFirst()), environment: environment,
                                             workingDirectory: workingDirectory)
        } catch { throw BenchError(message: "cannot run \(argv[0]): \(error)") }
        process.closeStdin()
        var output: [UInt8] = []
        for await chunk in process.stdout { output += chunk }
        let status = await process.wait()
        return Result(status: status, output: output, errorText: process.stderrTail(maxBytes: 2000), seconds: monotonicSeconds() - started)
    }
}

/// A file written in 1 MiB pieces.
final class BufferedFile {
    let path: String
    private var buffer: [UInt8] = []
    private var fd: Int32

    init(_ path: String) throws(BenchError) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw BenchError(message: "cannot write \(path): \(Scratch.lastError())") }
        buffer.reserveCapacity((1 << 20) + 4096)
    }

    static func write(_ text: String, to path: String) throws(BenchError) {
        let file = try BufferedFile(path)
        file.buffer += text.utf8
        try file.close()
    }

    /// Appends `line` and a newline.
    func write(_ line: String) throws(BenchError) {
        buffer += line.utf8
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= 1 << 20 { try flush() }
    }

    func close() throws(BenchError) {
        try flush()
        Glibc.close(fd)
        fd = -1
    }

    private func flush() throws(BenchError) {
        var offset = 0
        while offset < buffer.count {
            let n = buffer[offset...].withUnsafeBytes { Syscall.write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw BenchError(message: "writing \(path) failed: \(Scratch.lastError())") }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }
}
