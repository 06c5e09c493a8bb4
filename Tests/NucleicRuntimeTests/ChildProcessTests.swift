import CShims
import Glibc
import NucleicRuntime
import NucleicTestSupport
import Testing

/// Real child processes (`/bin/sh`, coreutils) driven through `ChildProcess`.
/// Time limits only guard against hangs; no assertion depends on timing.
@Suite(.timeLimit(.minutes(2)))
struct ChildProcessTests {
    // MARK: stdio

    @Test func echoesStdinToStdout() async throws {
        let process = try ChildProcess.spawn(executable: "cat")
        try await process.write(line: "hello")
        try await process.write(Array("wörld\n".utf8))
        process.closeStdin()
        let output = await collect(process.stdout)
        #expect(String(decoding: output, as: UTF8.self) == "hello\nwörld\n")
        #expect(await process.wait() == .exited(0))
    }

    @Test func streamsLargeStdinThroughCatWhileReading() async throws {
        let process = try ChildProcess.spawn(executable: "cat")
        let input = (0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        async let output = collect(process.stdout)
        // More than a pipe holds: the writer blocks until cat reads, on its own thread.
        for start in stride(from: 0, to: input.count, by: 300_000) {
            try await process.write(Array(input[start..<min(start + 300_000, input.count)]))
        }
        process.closeStdin()
        #expect(await output == input)
        #expect(await process.wait() == .exited(0))
    }

    @Test func readsTenMegabytesOfStdoutCompletely() async throws {
        let process = try ChildProcess.spawn(executable: "seq", arguments: ["1", "1500000"])
        let output = await collect(process.stdout)
        var expected: [UInt8] = []
        expected.reserveCapacity(11_000_000)
        for number in 1...1_500_000 {
            expected += Array(String(number).utf8)
            expected.append(UInt8(ascii: "\n"))
        }
        #expect(expected.count > 10_000_000)
        #expect(output.count == expected.count)
        #expect(output == expected)
        #expect(await process.wait() == .exited(0))
    }

    /// A descriptor this process holds without O_CLOEXEC (a library's, a test runner's pipe)
    /// does not reach the child: it has its 0, 1 and 2 and nothing else.
    @Test func theChildGetsItsStdioAndNoOtherDescriptor() async throws {
        var leaky: [Int32] = [0, 0]
        #expect(pipe(&leaky) == 0)
        defer { close(leaky[0]); close(leaky[1]) }
        #expect(fcntl(leaky[1], F_GETFD) & FD_CLOEXEC == 0)
        // The shell lists its own descriptors, less the one `ls` opens to read the folder.
        let process = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", "cd /proc/self/fd && echo *"])
        process.closeStdin()
        let listed = String(decoding: await collect(process.stdout), as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
        #expect(await process.wait() == .exited(0))
        #expect(!listed.contains(leaky[0]) && !listed.contains(leaky[1]), "\(listed)")
        #expect(Set(listed).isSubset(of: [0, 1, 2, 3]), "only stdio (and the folder the shell reads): \(listed)")
    }

    @Test func keepsTheTailOfStderr() async throws {
        let script = #"i=0; while [ $i -lt 10000 ]; do echo "noise $i" >&2; i=$((i+1)); done; echo "last words" >&2; exit 2"#
        let process = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", script])
        // The stderr stream is never consumed: the tail is kept regardless, and complete once
        // wait() has returned.
        #expect(await process.wait() == .exited(2))
        #expect(process.stderrTail(maxBytes: 11) == "last words\n")
        #expect(process.stderrTail(maxBytes: 22) == "noise 9999\nlast words\n")
        let all = process.stderrTail(maxBytes: .max)
        #expect(all.utf8.count == ChildProcess.stderrTailCapacity)
        #expect(all.hasSuffix("noise 9998\nnoise 9999\nlast words\n"))
    }

    @Test func stderrTailDropsACharacterCutByTheWindow() async throws {
        let process = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", "printf 'ééé' >&2"])
        _ = await collect(process.stderr)
        #expect(await process.wait() == .exited(0))
        #expect(process.stderrTail(maxBytes: 3) == "é")
        #expect(process.stderrTail(maxBytes: 4) == "éé")
    }

    // MARK: environment and working directory

    @Test func honoursTheWorkingDirectory() async throws {
        let directory = makeTemporaryDirectory()
        defer { rmdir(directory) }
        let process = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", "pwd -P"], workingDirectory: directory)
        let output = String(decoding: await collect(process.stdout), as: UTF8.self)
        #expect(output == realPath(directory) + "\n")
        #expect(await process.wait() == .exited(0))
    }

    @Test func resolvesARelativeExecutableInTheWorkingDirectory() async throws {
        let directory = makeTemporaryDirectory()
        defer { unlink(directory + "/tool.sh"); rmdir(directory) }
        let fd = open(directory + "/tool.sh", O_WRONLY | O_CREAT | O_TRUNC, 0o755)
        let script = Array("#!/bin/sh\necho tool ran\n".utf8)
        _ = script.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        let process = try ChildProcess.spawn(executable: "./tool.sh", workingDirectory: directory)
        #expect(String(decoding: await collect(process.stdout), as: UTF8.self) == "tool ran\n")
        #expect(await process.wait() == .exited(0))
    }

    @Test func replacesTheEnvironment() async throws {
        let process = try ChildProcess.spawn(
            executable: "/usr/bin/env", environment: ["NUCLEIC_TEST": "yes", "WITH_SPACE": "a b=c"]
        )
        let output = String(decoding: await collect(process.stdout), as: UTF8.self)
        #expect(output.split(separator: "\n").sorted() == ["NUCLEIC_TEST=yes", "WITH_SPACE=a b=c"])
        #expect(await process.wait() == .exited(0))
    }

    @Test func searchesTheChildsPath() async throws {
        // No PATH in the child's environment: the host's PATH finds printenv.
        let process = try ChildProcess.spawn(executable: "printenv", arguments: ["FOO"], environment: ["FOO": "bar"])
        #expect(String(decoding: await collect(process.stdout), as: UTF8.self) == "bar\n")
        #expect(await process.wait() == .exited(0))
        #expect(process.executablePath.hasPrefix("/"))

        // A PATH in the child's environment is the one searched.
        let error = #expect(throws: ProcessError.self) {
            try ChildProcess.spawn(executable: "sh", environment: ["PATH": "/nonexistent/bin"])
        }
        #expect(error?.code == .executableNotFound)
        #expect(error?.message.contains("/nonexistent/bin") == true)
    }

    // MARK: exit status

    @Test(arguments: [
        ("exit 0", ChildProcess.ExitStatus.exited(0)),
        ("exit 3", ChildProcess.ExitStatus.exited(3)),
        ("exit 255", ChildProcess.ExitStatus.exited(255)),
        ("kill -USR1 $$", ChildProcess.ExitStatus.signaled(SIGUSR1)),
        ("kill -KILL $$", ChildProcess.ExitStatus.signaled(SIGKILL)),
    ])
    func reportsExitCodesAndSignals(script: String, expected: ChildProcess.ExitStatus) async throws {
        let process = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", script])
        #expect(await process.wait() == expected)
        #expect(process.exitStatus == expected)
        #expect(await process.wait(timeout: .seconds(1)) == expected)
    }

    @Test func manyTasksWaitForTheSameExit() async throws {
        let process = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", "read line; exit 7"])
        // The child is blocked reading stdin, so it cannot have exited.
        #expect(await process.wait(timeout: .milliseconds(50)) == nil)
        #expect(process.exitStatus == nil)
        let statuses = await withTaskGroup(of: ChildProcess.ExitStatus.self) { group in
            for _ in 0..<8 { group.addTask { await process.wait() } }
            try? await process.write(line: "go")
            var statuses: [ChildProcess.ExitStatus] = []
            for await status in group { statuses.append(status) }
            return statuses
        }
        #expect(statuses == Array(repeating: .exited(7), count: 8))
        #expect(await process.wait() == .exited(7))
    }

    @Test func waitWithTimeoutReturnsNilWhenCancelled() async throws {
        let process = try ChildProcess.spawn(executable: "sleep", arguments: ["100"])
        let waiter = Task { await process.wait(timeout: .seconds(100)) }
        waiter.cancel()
        #expect(await waiter.value == nil)
        try process.signal(SIGKILL)
        #expect(await process.wait() == .signaled(SIGKILL))
    }

    // MARK: signals

    @Test func sigtermReachesAChildSpawnedInsideATask() async throws {
        // Swift concurrency threads block signals (SigBlk fffffffe3bfbea27 on a pool thread here,
        // SIGTERM included); the child must not inherit that mask.
        let process = try await Task.detached {
            try ChildProcess.spawn(executable: "sleep", arguments: ["100"])
        }.value
        #expect(procStatusField("SigBlk", of: process.pid) == "0000000000000000")
        // Only the standard signals: glibc's posix_spawn leaves its two internal signals (32 and
        // 33, SIGCANCEL and SIGSETXID) ignored in the child, which no program can rely on anyway.
        let ignored = UInt64(procStatusField("SigIgn", of: process.pid) ?? "", radix: 16)
        #expect(ignored.map { $0 & 0x7fff_ffff } == 0)
        #expect(try process.signal(SIGTERM))
        #expect(await process.wait() == .signaled(SIGTERM))
    }

    @Test func signalsTheChildAloneThroughItsPidfd() async throws {
        let process = try ChildProcess.spawn(executable: "sleep", arguments: ["100"])
        #expect(try process.signal(SIGKILL, group: false))
        #expect(await process.wait() == .signaled(SIGKILL))
        // Reaped: nothing left to signal, and no recycled pid is hit.
        #expect(try process.signal(SIGKILL, group: false) == false)
        #expect(try process.signal(SIGKILL, group: true) == false)
    }

    @Test func runsInItsOwnProcessGroup() async throws {
        let process = try ChildProcess.spawn(executable: "sleep", arguments: ["100"])
        #expect(getpgid(process.pid) == process.pid)
        #expect(getpgid(process.pid) != getpgrp())
        await process.terminate(grace: .seconds(10))
    }

    @Test func terminateKillsTheWholeGroupIncludingGrandchildren() async throws {
        // Orphaned grandchildren come to us (not to PID 1, which does not reap here) so we can
        // reap them and check they are gone.
        #expect(nucleic_set_child_subreaper() == 0)
        let script = "sleep 100 & echo $!; sleep 100 & echo $!; wait"
        let process = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", script])
        let grandchildren = await readLines(2, from: process.stdout).compactMap { Int32($0) }
        try #require(grandchildren.count == 2)
        // Wait until both have exec'd sleep, i.e. their SIGINT is ignored (sh does that for
        // background jobs): the first signal must not be enough for them.
        for pid in grandchildren {
            #expect(await eventually { procStatusField("Name", of: pid) == "sleep" })
        }

        let status = await process.terminate(grace: .milliseconds(200))
        #expect(status == .signaled(SIGINT))
        for pid in grandchildren {
            let raw = await reapOrphan(pid)
            try #require(raw != nil, "grandchild \(pid) survived terminate()")
            #expect(nucleic_wifsignaled(raw!) != 0 && nucleic_wtermsig(raw!) == SIGTERM)
            #expect(kill(pid, 0) == -1 && errno == ESRCH)
        }
    }

    @Test func terminateEscalatesToSIGKILL() async throws {
        let script = #"trap "" INT TERM; echo ready; exec sleep 100"#
        let process = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", script])
        #expect(await readLines(1, from: process.stdout) == ["ready"])
        #expect(await process.terminate(grace: .milliseconds(100)) == .signaled(SIGKILL))
    }

    @Test func terminateAfterExitReturnsTheStatus() async throws {
        let process = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", "exit 4"])
        #expect(await process.wait() == .exited(4))
        #expect(await process.terminate(grace: .seconds(10)) == .exited(4))
    }

    // MARK: errors

    @Test func writingToAnExitedChildThrows() async throws {
        let process = try ChildProcess.spawn(executable: "true")
        #expect(await process.wait() == .exited(0))
        // More than a pipe holds: while a concurrent spawn elsewhere in this process briefly
        // holds a copy of the read end (until its exec closes it), a small write could still
        // land in the pipe; this one blocks until the last reader is gone, then fails.
        let error = await #expect(throws: ProcessError.self) {
            try await process.write(Array(repeating: UInt8(ascii: "x"), count: 1 << 20))
        }
        #expect(error?.code == .brokenPipe)
        #expect(error?.errno == EPIPE)
        #expect(error?.message.contains("process \(process.pid) (true)") == true)

        process.closeStdin()
        let closed = await #expect(throws: ProcessError.self) { try await process.write(line: "again") }
        #expect(closed?.code == .stdinClosed)
    }

    @Test func spawningAMissingExecutableThrows() throws {
        let byName = #expect(throws: ProcessError.self) {
            try ChildProcess.spawn(executable: "nucleic-no-such-tool")
        }
        #expect(byName?.code == .executableNotFound)
        #expect(byName?.message.contains("'nucleic-no-such-tool' was not found in PATH") == true)

        let byPath = #expect(throws: ProcessError.self) {
            try ChildProcess.spawn(executable: "/nonexistent/nucleic-tool")
        }
        #expect(byPath?.code == .executableNotFound)
        #expect(byPath?.path == "/nonexistent/nucleic-tool")
        #expect(byPath?.message.contains("/nonexistent/nucleic-tool") == true)
    }

    @Test func spawningInAMissingDirectoryThrows() throws {
        let error = #expect(throws: ProcessError.self) {
            try ChildProcess.spawn(executable: "true", workingDirectory: "/nonexistent/worktree")
        }
        #expect(error?.code == .workingDirectoryMissing)
        #expect(error?.path == "/nonexistent/worktree")
        #expect(error?.message.contains("working directory '/nonexistent/worktree' does not exist") == true)
    }

    @Test func spawningANonExecutableFileThrows() throws {
        let directory = makeTemporaryDirectory()
        defer { unlink(directory + "/plain.txt"); rmdir(directory) }
        close(open(directory + "/plain.txt", O_WRONLY | O_CREAT, 0o644))
        let error = #expect(throws: ProcessError.self) {
            try ChildProcess.spawn(executable: directory + "/plain.txt")
        }
        #expect(error?.code == .executableNotRunnable)
        #expect(error?.message.contains("plain.txt") == true)
    }

    @Test func rejectsNulBytes() throws {
        let error = #expect(throws: ProcessError.self) {
            try ChildProcess.spawn(executable: "echo", arguments: ["a\u{0}b"])
        }
        #expect(error?.code == .invalidArgument)
    }

    // MARK: hygiene

    /// The descriptor count is the whole process's, so the cycles run in a process of their own
    /// (`IsolatedTest`): beside other suites, a daemon test's sockets and pipes come and go.
    @Test func manySpawnWaitCyclesLeaveNoZombieAndNoDescriptor() async throws {
        let child = try await IsolatedTest.run("spawn-cycles", filter: "spawnWaitCyclesInAProcessOfTheirOwn")
        #expect(child.status == 0, "\(child.output)")
        #expect(child.output.contains("spawnWaitCyclesInAProcessOfTheirOwn() passed"), "\(child.output)")
    }

    @Test(.enabled(if: IsolatedTest.isChild("spawn-cycles")))
    func spawnWaitCyclesInAProcessOfTheirOwn() async throws {
        let descriptorsBefore = openDescriptorCount()
        var pids: [Int32] = []
        for index in 0..<200 {
            let process = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", "echo \(index); exit \(index % 7)"])
            #expect(await process.wait() == .exited(Int32(index % 7)))
            pids.append(process.pid)
        }
        #expect(zombieChildren().isDisjoint(with: pids))
        #expect(pids.allSatisfy(isNotOurChild))
        // Descriptors are closed when the monitor threads finish, which may trail wait() a little.
        // A leak would be at least one per cycle (200); Swift Testing may hold a few of its own.
        #expect(await eventually { openDescriptorCount() <= descriptorsBefore + 5 })
    }
}

/// How many descriptors this process has open.
private func openDescriptorCount() -> Int {
    guard let directory = opendir("/proc/self/fd") else { return 0 }
    defer { closedir(directory) }
    var count = 0
    while readdir(directory) != nil { count += 1 }
    return count
}
