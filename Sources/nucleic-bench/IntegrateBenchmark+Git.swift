#if canImport(Glibc)
import Glibc
import NucleicSystem
#endif

/// The `git` CLI for `nucleic-bench integrate`: the peer rows, the resets between passes and the
/// checks after them.
///
/// A short-lived child started from the main thread, before any concurrency (as `PythonPeer`):
/// plain `posix_spawnp`, stdin from /dev/null (or a file), stdout to a pipe or /dev/null, stderr to
/// a scratch file that is read back when the command fails.
struct GitRunner {
    /// Where each command's stderr goes (truncated per command).
    let errorFile: String

    /// Runs `git -C directory arguments…` and returns its stdout; a non-zero exit throws with
    /// the command's stderr.
    @discardableResult
    func run(_ arguments: [String], in directory: String, input: String? = nil, capture: Bool = true) throws(BenchError) -> String {
        try execute(["git", "-C", directory] + arguments, input: input, capture: capture)
    }

    /// Runs any command (`rm -rf` for the clean-up) the same way.
    @discardableResult
    func execute(_ argv: [String], input: String? = nil, capture: Bool = true) throws(BenchError) -> String {
        let (status, output) = try spawn(argv, input: input, capture: capture)
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            let errors = (try? Files.read(errorFile)).map { String(decoding: $0.suffix(2000), as: UTF8.self) } ?? ""
            throw BenchError(message: "\(argv.joined(separator: " ")) failed (wait status \(status)): \(errors)")
        }
        return output
    }

    /// ``run(_:in:input:capture:)`` with stdout discarded, timed (spawn to reaped child).
    func timed(_ arguments: [String], in directory: String) throws(BenchError) -> Double {
        let start = monotonicSeconds()
        try run(arguments, in: directory, capture: false)
        return monotonicSeconds() - start
    }

    /// The trimmed stdout of a query (`rev-parse`, `status --porcelain`).
    func value(_ arguments: [String], in directory: String) throws(BenchError) -> String {
        var text = try run(arguments, in: directory)
        while let last = text.last, last.isNewline { text.removeLast() }
        return text
    }

    /// The version line (`git version 2.39.5`).
    func version() -> String {
        guard let line = try? value(["--version"], in: "/") else { return "?" }
        return line.hasPrefix("git version ") ? String(line.dropFirst("git version ".count)) : line
    }

    private func spawn(_ argv: [String], input: String?, capture: Bool) throws(BenchError) -> (Int32, String) {
        var fds: [Int32] = [-1, -1]
        if capture, pipe(&fds) != 0 { throw BenchError(message: "pipe failed: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input ?? "/dev/null", O_RDONLY, 0)
        if capture {
            posix_spawn_file_actions_addclose(&actions, fds[0])
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
            posix_spawn_file_actions_addclose(&actions, fds[1])
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, errorFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var cArgs = argv.map { strdup($0) }
        cArgs.append(nil)
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, cArgs, environ)
        if capture { close(fds[1]) }
        guard rc == 0 else {
            if capture { close(fds[0]) }
            throw BenchError(message: "cannot run \(argv[0]): \(String(cString: strerror(rc))) (is it installed and on PATH?)")
        }
        var output: [UInt8] = []
        if capture {
            var chunk = [UInt8](repeating: 0, count: 1 << 14)
            while true {
                let n = chunk.withUnsafeMutableBytes { Syscall.read(fds[0], $0.baseAddress, $0.count) }
                if n <= 0 { break }
                output += chunk[0..<n]
            }
            close(fds[0])
        }
        var status: Int32 = 0
        Syscall.waitpid(pid, &status, 0)
        // WIFEXITED/WEXITSTATUS are macros Swift does not import: exited normally when the low 7
        // bits are 0, with the code in the next 8.
        return (status, String(decoding: output, as: UTF8.self))
    }
}
