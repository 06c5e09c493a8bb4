#if canImport(Glibc)
import Glibc
#endif
import NucleicAdapters
import NucleicProtocol
import NucleicSystem

/// Runs `Tests/Peers/bench_json.py` on the same bytes, for the reference row.
///
/// A short-lived child started from the main thread, before any concurrency: plain `posix_spawnp`
/// with its stdout on a pipe is enough here (the supervisor's concerns of DESIGN.md §7 do not apply).
enum PythonPeer {
    struct Report {
        var measurement: Measurement
        var version: String
    }

    /// The script next to the sources: found from the working directory (`swift run` runs in the
    /// package root) or, failing that, from this source file's path.
    static func defaultScript() -> String? {
        let relative = "Tests/Peers/bench_json.py"
        if access(relative, R_OK) == 0 { return relative }
        let source = #filePath  // <root>/Sources/nucleic-bench/PythonPeer.swift
        var parts = source.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count > 3 else { return nil }
        parts.removeLast(3)
        let path = parts.joined(separator: "/") + "/" + relative
        return access(path, R_OK) == 0 ? path : nil
    }

    static func run(python: String, script: String, file: String, repeats: Int) throws(BenchError) -> Report {
        let output = try capture([python, script, file, "--repeat", String(repeats)])
        guard let report = try? JSONParser.parse(output),
            let seconds = report["seconds"]?.doubleValue, let bytes = report["bytes"]?.intValue, let lines = report["lines"]?.intValue
        else {
            throw BenchError(message: "\(script) printed something other than its JSON report: \(Preview.text(output))")
        }
        return Report(measurement: Measurement(seconds: seconds, bytes: Int(bytes), lines: Int(lines), events: nil),
                      version: report["python"]?.stringValue ?? "?")
    }

    /// Runs `argv` and returns its standard output; a failure to start or a non-zero exit throws.
    private static func capture(_ argv: [String]) throws(BenchError) -> [UInt8] {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw BenchError(message: "pipe failed: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[1])
        var cArgs = argv.map { strdup($0) }
        cArgs.append(nil)
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, cArgs, environ)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            throw BenchError(message: "cannot run \(argv[0]): \(String(cString: strerror(rc))) (give another interpreter with --python, or --no-python)")
        }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 14)
        while true {
            let n = chunk.withUnsafeMutableBytes { Syscall.read(fds[0], $0.baseAddress, $0.count) }
            if n <= 0 { break }
            output += chunk[0..<n]
        }
        close(fds[0])
        var status: Int32 = 0
        Syscall.waitpid(pid, &status, 0)
        // WIFEXITED/WEXITSTATUS are macros Swift does not import: exited normally when the low 7
        // bits are 0, with the code in the next 8.
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw BenchError(message: "\(argv.joined(separator: " ")) failed (wait status \(status)); its errors are above")
        }
        return output
    }
}
