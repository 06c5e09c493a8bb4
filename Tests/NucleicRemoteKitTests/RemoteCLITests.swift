import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRemoteKit
import Synchronization
import Testing

/// `nucleic remote …` as a device whose config lives in `config` (the built binary, through the
/// harness's `NucleicCommand`).
enum RemoteCLI {
    static func start(_ arguments: [String], config: String, stdin: Bool = false) throws -> NucleicCommand {
        try NucleicCommand(arguments, environment: ["XDG_CONFIG_HOME": config], keepStdin: stdin)
    }

    /// Runs to the end: exit code, every non-empty stdout line, stderr.
    static func run(_ arguments: [String], config: String) async throws -> (Int32, [String], String) {
        let run = try await NucleicCommand.run(arguments, environment: ["XDG_CONFIG_HOME": config])
        return (run.code, run.lines, run.stderr)
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
            let (status, out, err) = try await RemoteCLI.run(["remote", "pair", uri, "--label", label], config: config)
            #expect(status == 0, "\(err)")
            #expect(out.first?.hasPrefix("paired with test-host as \"\(label)\"") == true)
            let attributes = try FileManager.default.attributesOfItem(atPath: config + "/nucleic/remote.json")
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        }
        // A used invitation is refused.
        let stale = try await RemoteCLI.run(["remote", "pair", PairingInvite(hostKey: host.key.publicKey, secret: Array(repeating: 1, count: 32), addresses: [listener.address], hostName: "x").uri], config: try folder())
        #expect(stale.0 == 1 && stale.2.contains("pairing with x failed"))

        let (status, list, _) = try await RemoteCLI.run(["remote", "ls"], config: phone)
        #expect(status == 0)
        #expect(list.contains { $0.contains("NEEDS YOU: 1") } && list.contains("NEEDS YOU (1)") && list.contains { $0.contains("fix-build") })

        let watch = try RemoteCLI.start(["remote", "watch"], config: laptop)
        await watch.waitForLine(containing: "! [1] approval")
        #expect(watch.all.contains { $0.contains("agent › I'll run it.") })

        // The phone answers with a one-shot command; the laptop's card says where.
        let (approved, out, err) = try await RemoteCLI.run(["remote", "approve", String(Fx.a1.rawValue.prefix(12))], config: phone)
        #expect(approved == 0, "\(err)")
        #expect(out.first?.hasPrefix("approved 0193b000-0000") == true)
        #expect(await watch.waitForLine(containing: "✓ [1] approval")?.hasSuffix("approved on Ana's iPhone") == true)
        // The laptop's own late answer is already resolved, a normal outcome.
        let late = try await RemoteCLI.run(["remote", "deny", String(Fx.a1.rawValue.prefix(12))], config: laptop)
        #expect(late.0 == 0 && late.1 == ["already resolved: approved on Ana's iPhone"])

        // Killed, the turn goes on; restarted, the watch shows the rest once and nothing twice.
        // The cursor is saved right after printing: kill once it is on disk (else the last rows
        // would rightly be printed again, never missed).
        let seq = await host.lastSeq(Fx.s1)
        while (try? String(contentsOfFile: laptop + "/nucleic/remote-cursors.json", encoding: .utf8))?.contains("\"\(Fx.s1.rawValue)\":\(seq)") != true {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        let before = watch.all
        await watch.kill()
        await host.append(Fx.after, to: Fx.s1)
        let again = try RemoteCLI.start(["remote", "watch"], config: laptop, stdin: true)
        await again.waitForLine(containing: "■ turn ended")
        try await again.send("q")
        #expect(await again.wait() == .exited(0))
        let after = again.all
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
        #expect(try await RemoteCLI.run(["remote", "pair", uri, "--label", "desk"], config: config).0 == 0)
        let watch = try RemoteCLI.start(["remote", "watch"], config: config, stdin: true)
        let card = await watch.waitForLine(containing: "! [1] approval")
        #expect(card?.contains("rm -rf build [risk: destructive] — risky: a! 1 to allow, d 1 to deny") == true, "\(card ?? "")")
        try await watch.send("a 1")
        await watch.waitForLine(containing: "not sent: this approval's risk is destructive")
        #expect(await host.isPending(Fx.a1))
        try await watch.send("x")
        await watch.waitForLine(containing: "? commands:")
        try await watch.send("a! 1")
        #expect(await watch.waitForLine(containing: "✓ [1] approval")?.hasSuffix("approved on desk") == true)
        #expect(!(await host.isPending(Fx.a1)))
        try await watch.send("s 1 now the tests")
        await watch.waitForLine(containing: "you › now the tests")
        try await watch.send("q")
        #expect(await watch.wait() == .exited(0))
    }

    @Test func withoutPairingOrAHostTheCommandsSayWhatToDo() async throws {
        let empty = try folder()
        let (status, _, err) = try await RemoteCLI.run(["remote", "ls"], config: empty)
        #expect(status == 1 && err.contains("not paired with a host"))
        let bad = try await RemoteCLI.run(["remote", "pair", "nucleic://pair?v=1&hk=abc"], config: empty)
        #expect(bad.0 == 64 && bad.2.contains("not a valid pairing link"))
    }
}
