import Glibc
import NucleicSystem
import Synchronization
import Testing

/// What the signalled `read` returned, and its errno.
private struct Outcome: Sendable {
    let result: Int
    let errno: Int32
}

/// How many SIGUSR1s the handler below has seen.
private let interrupts = Atomic<Int>(0)

/// Installs a SIGUSR1 handler without SA_RESTART, so a blocked `read` the signal hits fails with
/// EINTR instead of being restarted by the kernel.
private func installInterruptingHandler() {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in interrupts.add(1, ordering: .relaxed) }
    action.sa_flags = 0
    sigemptyset(&action.sa_mask)
    sigaction(SIGUSR1, &action, nil)
}

/// Reads one byte from a pipe on a thread of its own, with `read`, while the test signals that
/// thread until the handler has run `signals` times, then writes the byte. Returns what `read`
/// returned and its errno.
private func readWhileSignalled(signals: Int, _ read: @escaping @Sendable (Int32) -> Int) -> Outcome? {
    installInterruptingHandler()
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return nil }
    defer { close(fds[0]); close(fds[1]) }
    let readEnd = fds[0]
    let reader = Mutex<pthread_t?>(nil)
    let outcome = BlockingQueue<Outcome>()
    guard startDetachedThread(name: "nucleic-eintr", {
        // A thread inherits its creator's signal mask, and Swift's pool threads may block
        // SIGUSR1: unblock it here, where it must interrupt.
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGUSR1)
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        reader.withLock { $0 = pthread_self() }
        let result = read(readEnd)
        outcome.push(Outcome(result: result, errno: errno))
    }) == 0 else { return nil }
    while reader.withLock({ $0 }) == nil { usleep(1_000) }
    let thread = reader.withLock { $0! }
    let start = interrupts.load(ordering: .relaxed)
    var attempts = 0
    // Signal the reader until the handler has run enough times (or the read already returned).
    while interrupts.load(ordering: .relaxed) - start < signals && attempts < 2_000 {
        usleep(5_000)
        pthread_kill(thread, SIGUSR1)
        attempts += 1
        if let early = outcome.pop(timeout: .milliseconds(1)) { return early }
    }
    var byte: UInt8 = 7
    _ = write(fds[1], &byte, 1)
    return outcome.pop(timeout: .seconds(30))
}

@Suite(.serialized) struct SyscallTests {
    @Test func aPlainReadFailsWithEINTRWhenSignalled() async {
        // The control: proves the signal really interrupts the call the wrapper must retry.
        let outcome = await onOwnThread {
            readWhileSignalled(signals: 1) { fd in
                var byte: UInt8 = 0
                return Glibc.read(fd, &byte, 1)
            }
        }
        #expect(outcome?.result == -1)
        #expect(outcome?.errno == EINTR)
    }

    @Test func syscallReadRetriesThroughSignals() async {
        let outcome = await onOwnThread {
            readWhileSignalled(signals: 5) { fd in
                var buffer = [UInt8](repeating: 0, count: 4)
                return Syscall.read(fd, into: &buffer)
            }
        }
        #expect(outcome?.result == 1)
    }

    @Test func retryingPassesOtherFailuresThrough() {
        let result = Syscall.read(-1, nil, 0)
        #expect(result == -1)
        #expect(errno == EBADF)
        var calls = 0
        let value = Syscall.retrying { () -> Int32 in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 5
        }
        #expect(value == 5)
        #expect(calls == 3)
    }

    @Test func writeAllWritesEverythingAndReportsABrokenPipe() {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let bytes = [UInt8](repeating: 0x61, count: 10_000)
        #expect(Syscall.writeAll(fds[1], bytes) == nil)
        var buffer = [UInt8](repeating: 0, count: 20_000)
        var total = 0
        while total < bytes.count {
            let n = Syscall.read(fds[0], &buffer[total], buffer.count - total)
            #expect(n > 0)
            if n <= 0 { break }
            total += n
        }
        #expect(Array(buffer[0..<total]) == bytes)
        close(fds[0])
        signal(SIGPIPE, SIG_IGN)
        let failure = Syscall.writeAll(fds[1], [1, 2, 3])
        #expect(failure?.errno == EPIPE)
        #expect(failure?.written == 0)
        close(fds[1])
    }

    @Test func waitpidCollectsItsOwnChildAndPollReturnsReadiness() {
        var pid: pid_t = 0
        let arguments = ["/bin/sh", "-c", "exit 3"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        #expect(posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ) == 0)
        var status: Int32 = 0
        // Waits for this pid only: a wait for any child would take other tests' children.
        #expect(Syscall.waitpid(pid, &status, 0) == pid)
        #expect((status >> 8) & 0xff == 3)
        #expect(Syscall.waitpid(pid, &status, 0) == -1)
        #expect(errno == ECHILD)

        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        var polled = [pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)]
        #expect(Syscall.poll(&polled, timeout: 0) == 0)
        var byte: UInt8 = 1
        #expect(write(fds[1], &byte, 1) == 1)
        #expect(Syscall.poll(&polled, timeout: 1_000) == 1)
        #expect(polled[0].revents & Int16(POLLIN) != 0)
        close(fds[0])
        close(fds[1])
    }
}
