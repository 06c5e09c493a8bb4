import Foundation
import NucleicProtocol
import NucleicRemoteKit
import Synchronization
import Testing

/// The built `nucleic` binary as a child process, its output read line by line as it comes.
final class CLIProcess: @unchecked Sendable {
    // @unchecked: `process` is only started and signalled; `lines`/`all` are behind locks.
    let process = Process()
    let lines: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    let all = Mutex<[String]>([])
    let stderr = Mutex<String>("")
    /// Ends when standard error reached its end.
    let stderrDone: AsyncStream<Void>
    private let stderrDoneContinuation: AsyncStream<Void>.Continuation
    /// The exit status once known, and who waits for it (no blocking waits on the test pool).
    let exit = Mutex<(status: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))

    static var binary: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/nucleic")
    }

    init(_ arguments: [String], config: String, stdin: Bool = false) throws {
        (lines, continuation) = AsyncStream.makeStream(of: String.self)
        (stderrDone, stderrDoneContinuation) = AsyncStream.makeStream(of: Void.self)
        process.executableURL = Self.binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["XDG_CONFIG_HOME"] = config
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin ? Pipe() : FileHandle.nullDevice
        let continuation = self.continuation
        // Blocking reads on threads of their own until end of file (readabilityHandler on Linux
        // can report an empty read before the data).
        let outFD = out.fileHandleForReading.fileDescriptor, errFD = err.fileHandleForReading.fileDescriptor
        Thread.detachNewThread { [self] in
            var pending: [UInt8] = []
            Self.readAll(outFD) { chunk in
                pending += chunk
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    guard !line.isEmpty else { continue }
                    all.withLock { $0.append(line) }
                    continuation.yield(line)
                }
            }
            if !pending.isEmpty {
                let line = String(decoding: pending, as: UTF8.self)
                all.withLock { $0.append(line) }
                continuation.yield(line)
            }
            continuation.finish()
        }
        Thread.detachNewThread { [self] in
            var bytes: [UInt8] = []
            Self.readAll(errFD) { chunk in bytes += chunk }
            stderr.withLock { $0 = String(decoding: bytes, as: UTF8.self) }
            stderrDoneContinuation.finish()
        }
        process.terminationHandler = { [self] p in
            let status = p.terminationStatus
            let waiters = exit.withLock { e in
                e.status = status
                defer { e.waiters = [] }
                return e.waiters
            }
            for w in waiters { w.resume(returning: status) }
        }
        try process.run()
    }

    static func readAll(_ fd: Int32, _ body: ([UInt8]) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            body(Array(buffer[0..<n]))
        }
    }

    /// Runs to the end: status and every stdout line.
    static func run(_ arguments: [String], config: String) async throws -> (Int32, [String], String) {
        let p = try CLIProcess(arguments, config: config)
        var out: [String] = []
        for await line in p.lines { out.append(line) }
        let status = await p.wait()
        for await _ in p.stderrDone {}
        return (status, out, p.stderr.withLock { $0 })
    }

    /// Reads lines until one contains `text` (the suite's time limit bounds the wait).
    @discardableResult
    func waitForLine(containing text: String) async -> String? {
        for await line in lines where line.contains(text) { return line }
        return nil
    }

    func send(_ line: String) {
        (process.standardInput as? Pipe)?.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    func wait() async -> Int32 {
        await withCheckedContinuation { (c: CheckedContinuation<Int32, Never>) in
            let done: Int32? = exit.withLock { e in
                if let status = e.status { return status }
                e.waiters.append(c)
                return nil
            }
            if let done { c.resume(returning: done) }
        }
    }

    func kill() async {
        Foundation.kill(process.processIdentifier, SIGKILL)
        _ = await wait()
    }
}

/// The terminal client end to end against the scripted host over TCP on 127.0.0.1 (the same
/// checks run against the real host in EndToEndTests once the host's listener is in).
@Suite(.timeLimit(.minutes(2))) struct RemoteCLITests {
    func folder() throws -> String {
        let path = NSTemporaryDirectory() + "nucleic-remote-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func twoTerminalClientsOneAnswersTheOtherSeesItAndARestartedWatchResumes() async throws {
        let host = TestHost()
        let listener = try TCPListener(host: host)
        defer { listener.close() }
        await host.addSession(Fx.s1, title: "fix-build", updatedAtSecond: 1)
        await host.append(Fx.turn(approval: Fx.approval(Fx.a1, risk: .execute)), to: Fx.s1)
        let phone = try folder(), laptop = try folder()
        defer { try? FileManager.default.removeItem(atPath: phone); try? FileManager.default.removeItem(atPath: laptop) }

        for (config, label) in [(phone, "Ana's iPhone"), (laptop, "laptop")] {
            let uri = await host.makeInvite(address: listener.address).uri
            let (status, out, err) = try await CLIProcess.run(["remote", "pair", uri, "--label", label], config: config)
            #expect(status == 0, "\(err)")
            #expect(out.first?.hasPrefix("paired with test-host as \"\(label)\"") == true)
            let attributes = try FileManager.default.attributesOfItem(atPath: config + "/nucleic/remote.json")
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        }
        // A used invitation is refused.
        let stale = try await CLIProcess.run(["remote", "pair", PairingInvite(hostKey: host.key.publicKey, secret: Array(repeating: 1, count: 32), addresses: [listener.address], hostName: "x").uri], config: try folder())
        #expect(stale.0 == 1 && stale.2.contains("pairing with x failed"))

        let (status, list, _) = try await CLIProcess.run(["remote", "ls"], config: phone)
        #expect(status == 0)
        #expect(list.contains { $0.contains("NEEDS YOU: 1") } && list.contains("NEEDS YOU (1)") && list.contains { $0.contains("fix-build") })

        let watch = try CLIProcess(["remote", "watch"], config: laptop)
        await watch.waitForLine(containing: "! [1] approval")
        #expect(watch.all.withLock { $0 }.contains { $0.contains("agent › I'll run it.") })

        // The phone answers with a one-shot command; the laptop's card says where.
        let (approved, out, err) = try await CLIProcess.run(["remote", "approve", String(Fx.a1.rawValue.prefix(12))], config: phone)
        #expect(approved == 0, "\(err)")
        #expect(out.first?.hasPrefix("approved 0193b000-0000") == true)
        #expect(await watch.waitForLine(containing: "✓ [1] approval")?.hasSuffix("approved on Ana's iPhone") == true)
        // The laptop's own late answer is already resolved, a normal outcome.
        let late = try await CLIProcess.run(["remote", "deny", String(Fx.a1.rawValue.prefix(12))], config: laptop)
        #expect(late.0 == 0 && late.1 == ["already resolved: approved on Ana's iPhone"])

        // Killed, the turn goes on; restarted, the watch shows the rest once and nothing twice.
        // The cursor is saved right after printing: kill once it is on disk (else the last rows
        // would rightly be printed again, never missed).
        let seq = await host.lastSeq(Fx.s1)
        while (try? String(contentsOfFile: laptop + "/nucleic/remote-cursors.json", encoding: .utf8))?.contains("\"\(Fx.s1.rawValue)\":\(seq)") != true {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        let before = watch.all.withLock { $0 }
        await watch.kill()
        await host.append(Fx.after, to: Fx.s1)
        let again = try CLIProcess(["remote", "watch"], config: laptop, stdin: true)
        await again.waitForLine(containing: "■ turn ended")
        again.send("q")
        #expect(await again.wait() == 0)
        let after = again.all.withLock { $0 }
        let rows = { (lines: [String]) in lines.filter { $0.hasPrefix("[fix-build #") } }
        #expect(Set(rows(before)).isDisjoint(with: rows(after)), "\(rows(after))")
        #expect(rows(after).contains("[fix-build #16] agent › Done."))
        #expect(rows(after).contains { $0.contains("   ✓ completed (exit 0)") })
        #expect(!rows(after).contains { $0.contains("you › fix the build") })
        let cursors = try String(contentsOfFile: laptop + "/nucleic/remote-cursors.json", encoding: .utf8)
        #expect(cursors.contains("\"\(Fx.s1.rawValue)\":\(await host.lastSeq(Fx.s1))"))
    }

    @Test func watchAnswersFromTheKeyboardWithTheRiskGate() async throws {
        let host = TestHost()
        let listener = try TCPListener(host: host)
        defer { listener.close() }
        await host.addSession(Fx.s1, title: "cleanup", updatedAtSecond: 1)
        await host.append(Fx.turn(approval: Fx.approval(Fx.a1, risk: .destructive, command: "rm -rf build", scopes: [])), to: Fx.s1)
        let config = try folder()
        defer { try? FileManager.default.removeItem(atPath: config) }
        let uri = await host.makeInvite(address: listener.address).uri
        #expect(try await CLIProcess.run(["remote", "pair", uri, "--label", "desk"], config: config).0 == 0)
        let watch = try CLIProcess(["remote", "watch"], config: config, stdin: true)
        let card = await watch.waitForLine(containing: "! [1] approval")
        #expect(card?.contains("rm -rf build [risk: destructive] — risky: a! 1 to allow, d 1 to deny") == true, "\(card ?? "")")
        watch.send("a 1")
        await watch.waitForLine(containing: "not sent: this approval's risk is destructive")
        #expect(await host.isPending(Fx.a1))
        watch.send("x")
        await watch.waitForLine(containing: "? commands:")
        watch.send("a! 1")
        #expect(await watch.waitForLine(containing: "✓ [1] approval")?.hasSuffix("approved on desk") == true)
        #expect(!(await host.isPending(Fx.a1)))
        watch.send("s 1 now the tests")
        await watch.waitForLine(containing: "you › now the tests")
        watch.send("q")
        #expect(await watch.wait() == 0)
    }

    @Test func withoutPairingOrAHostTheCommandsSayWhatToDo() async throws {
        let empty = try folder()
        let (status, _, err) = try await CLIProcess.run(["remote", "ls"], config: empty)
        #expect(status == 1 && err.contains("not paired with a host"))
        let bad = try await CLIProcess.run(["remote", "pair", "nucleic://pair?v=1&hk=abc"], config: empty)
        #expect(bad.0 == 64 && bad.2.contains("not a valid pairing link"))
    }
}
