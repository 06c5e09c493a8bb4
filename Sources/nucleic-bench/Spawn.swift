import Glibc
import NucleicSystem

/// A short-lived child for the peer rows (`git`, Python): started from the main thread before any
/// concurrency, so plain `posix_spawnp` is enough (the supervisor's concerns of DESIGN.md §7 do
/// not apply). stdin from /dev/null or a file, stdout captured on a pipe or discarded, stderr
/// inherited or into a file.
enum Spawn {
    struct Exit {
        /// The raw wait status.
        var status: Int32
        var output: [UInt8]
        /// Exited by itself with status 0. (WIFEXITED/WEXITSTATUS are macros Swift does not
        /// import: exited normally when the low 7 bits are 0, with the code in the next 8.)
        var succeeded: Bool { status & 0x7F == 0 && (status >> 8) & 0xFF == 0 }
    }

    /// Runs `argv` (found on PATH) and waits for it. `hint` ends the message when it cannot be
    /// started ("is it installed and on PATH?").
    static func run(_ argv: [String], input: String? = nil, capture: Bool = true, errors: String? = nil,
                    hint: String) throws(BenchError) -> Exit {
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
        if let errors { posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600) }
        var cArgs = argv.map { strdup($0) }
        cArgs.append(nil)
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, cArgs, environ)
        if capture { close(fds[1]) }
        guard rc == 0 else {
            if capture { close(fds[0]) }
            throw BenchError(message: "cannot run \(argv[0]): \(String(cString: strerror(rc))) (\(hint))")
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
        return Exit(status: status, output: output)
    }
}
