import CShims
import Glibc
import NucleicSystem

extension ChildProcess {
    /// Starts `executable` with `arguments` in a new process group, with piped stdio.
    ///
    /// Synchronous: the calling thread waits only for the `posix_spawn` itself (a vfork and an
    /// exec). The host ignores SIGPIPE from the first call on.
    ///
    /// - Parameters:
    ///   - executable: a path (a relative one is resolved in `workingDirectory`) or a bare name
    ///     searched on the child's PATH (`environment["PATH"]`, else the host's).
    ///   - arguments: argv after argv[0], which is `executable` as given.
    ///   - environment: the child's whole environment; nil inherits the host's.
    ///   - workingDirectory: the child's cwd; nil inherits the host's.
    ///   - newSession: start the child in a session of its own (`setsid`) rather than only a
    ///     process group: detached from the host's terminal and session (shims).
    /// - Throws: `ProcessError` naming what failed and the path involved: `executableNotFound`,
    ///   `executableNotRunnable`, `workingDirectoryMissing`, `workingDirectoryNotAccessible`,
    ///   `invalidArgument`, `resourceUnavailable`, `spawnFailed`.
    public static func spawn(
        executable: String,
        arguments: [String] = [],
        environment: [String: String]? = nil,
        workingDirectory: String? = nil,
        newSession: Bool = false
    ) throws(ProcessError) -> ChildProcess {
        _ = ignoreSIGPIPE
        let environmentEntries = environment.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }
        for string in [executable] + arguments + (environmentEntries ?? []) + [workingDirectory ?? ""]
        where string.utf8.contains(0) {
            throw ProcessError(.invalidArgument, "cannot start '\(executable)': an argument, environment entry or path contains a NUL byte")
        }
        if let workingDirectory { try SpawnPreflight.checkWorkingDirectory(workingDirectory) }
        let searchPath = environment?["PATH"] ?? getenv("PATH").map { String(cString: $0) } ?? SpawnPreflight.defaultSearchPath
        let path = try SpawnPreflight.resolve(executable, searchPath: searchPath, workingDirectory: workingDirectory)

        // Pipe ends: [read, write]. The child gets stdin's read end and the outputs' write ends.
        var pipes: [[Int32]] = []
        func closeAll() { for pipe in pipes { for fd in pipe where fd >= 0 { _ = Glibc.close(fd) } } }
        for name in ["stdin", "stdout", "stderr"] {
            var fds: [Int32] = [-1, -1]
            let rc = nucleic_pipe_cloexec(&fds, 0)
            guard rc == 0 else {
                closeAll()
                throw ProcessError(
                    .resourceUnavailable, "cannot create the \(name) pipe for '\(executable)': \(errnoName(-rc))",
                    path: path, function: "pipe2", errno: -rc
                )
            }
            pipes.append(fds)
        }

        // Registered as it is made, so the orphan reaper never takes this child's exit status.
        let pid = withCStrings([executable] + arguments) { argv in
            withCStrings(environmentEntries) { envp in
                Registry.spawning {
                    nucleic_spawn(path, argv, envp, workingDirectory, pipes[0][0], pipes[1][1], pipes[2][1],
                                  Int32(newSession ? NUCLEIC_SPAWN_NEW_SESSION : NUCLEIC_SPAWN_NEW_PGROUP))
                }
            }
        }
        // The child has its own copies now (or never started): close ours of its ends.
        for (pipe, end) in [(0, 0), (1, 1), (2, 1)] {
            _ = Glibc.close(pipes[pipe][end])
            pipes[pipe][end] = -1
        }
        guard pid > 0 else {
            closeAll()
            throw spawnError(-pid, executable: executable, path: path, workingDirectory: workingDirectory)
        }
        let label = "process \(pid) (\(executable.split(separator: "/").last.map(String.init) ?? executable))"

        let pidfdRaw = nucleic_pidfd_open(pid)
        guard pidfdRaw >= 0 else {
            abandon(pid)
            closeAll()
            throw ProcessError(
                .resourceUnavailable, "cannot watch \(label): pidfd_open failed: \(errnoName(-pidfdRaw)); it was killed",
                path: path, function: "pidfd_open", errno: -pidfdRaw
            )
        }
        let pidfd = SharedDescriptor(pidfdRaw)

        let writer = StdinWriter(fd: pipes[0][1], label: label)
        let writerRC = writer.start()
        guard writerRC == 0 else {
            abandon(pid)
            closeAll()
            throw threadError(writerRC, label: label, path: path)
        }
        // From here stdin's write end belongs to the writer.
        pipes[0][1] = -1

        let (stdout, stdoutContinuation) = AsyncStream.makeStream(of: [UInt8].self)
        let (stderr, stderrContinuation) = AsyncStream.makeStream(of: [UInt8].self)
        let exitWatch = ExitWatch()
        let stderrBuffer = TailBuffer(capacity: stderrTailCapacity)
        let monitor = ProcessMonitor(
            pid: pid, pidfd: pidfd, stdoutFD: pipes[1][0], stderrFD: pipes[2][0],
            stdout: stdoutContinuation, stderr: stderrContinuation, stderrTail: stderrBuffer, exit: exitWatch
        )
        let monitorRC = monitor.start()
        guard monitorRC == 0 else {
            writer.close()
            abandon(pid)
            closeAll()
            throw threadError(monitorRC, label: label, path: path)
        }
        return ChildProcess(
            pid: pid, executablePath: path, label: label, pidfd: pidfd, stdout: stdout, stderr: stderr,
            writer: writer, exitWatch: exitWatch, stderrBuffer: stderrBuffer
        )
    }

    /// Ignores SIGPIPE in the host once, so a write to a dead child's stdin fails with EPIPE
    /// instead of killing us. Children get the default disposition back (`nucleic_spawn`).
    private static let ignoreSIGPIPE: Void = nucleic_ignore_sigpipe()

    /// Kills and reaps a child we failed to finish setting up (no monitor watches it yet).
    private static func abandon(_ pid: Int32) {
        _ = Glibc.kill(-pid, SIGKILL)
        Syscall.waitpid(pid, nil, 0)
        Registry.release(pid)
    }

    private static func threadError(_ rc: Int32, label: String, path: String) -> ProcessError {
        ProcessError(
            .resourceUnavailable, "cannot start a thread to serve \(label): \(errnoName(rc)); it was killed",
            path: path, function: "pthread_create", errno: rc
        )
    }

    /// Turns a `posix_spawn` errno into an error that says which part failed.
    private static func spawnError(_ number: Int32, executable: String, path: String, workingDirectory: String?) -> ProcessError {
        // The preflight passed, so a cwd problem now means it changed under us; check it again.
        if let workingDirectory, number == ENOENT || number == ENOTDIR || number == EACCES {
            do { try SpawnPreflight.checkWorkingDirectory(workingDirectory) } catch { return error }
        }
        switch number {
        case ENOENT, ENOTDIR:
            return ProcessError(
                .executableNotFound,
                "cannot start '\(path)': it or the interpreter on its #! line does not exist",
                path: path, function: "posix_spawn", errno: number
            )
        case EACCES, ENOEXEC, ETXTBSY, EISDIR, ELOOP, ENAMETOOLONG:
            return ProcessError(
                .executableNotRunnable, "cannot start '\(path)': \(errnoName(number))",
                path: path, function: "posix_spawn", errno: number
            )
        case EAGAIN, ENOMEM, EMFILE, ENFILE, E2BIG:
            return ProcessError(
                .resourceUnavailable, "cannot start '\(path)': the system is out of resources: \(errnoName(number))",
                path: path, function: "posix_spawn", errno: number
            )
        default:
            return ProcessError(
                .spawnFailed, "cannot start '\(path)': \(errnoName(number))",
                path: path, function: "posix_spawn", errno: number
            )
        }
    }
}

/// Calls `body` with a NULL-terminated C array of `strings` (NULL itself when `strings` is nil).
private func withCStrings<R>(
    _ strings: [String]?, _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>?) -> R
) -> R {
    guard let strings else { return body(nil) }
    let pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}
