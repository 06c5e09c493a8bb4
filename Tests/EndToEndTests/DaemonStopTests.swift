import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// Replies the daemon decides to send right before it closes a connection arrive: the `ok` of
/// `stop-daemon`, and the refusal another user gets.
@Suite(.serialized) struct DaemonStopTests {
    init() throws {
        try TestReaper.becomeSubreaper()
    }

    @Test func fiftyStopsInARowAllExitZero() async throws {
        try await DaemonHarness.with { d in
            for round in 0..<50 {
                // Any command starts a daemon on demand; the stop must hear the daemon's answer.
                _ = try await d.ok(["ls"])
                d.noteDaemon()
                let stop = try await d.nucleic(["stop-daemon"])
                #expect(stop.status == .exited(0), "round \(round): \(stop)\n\(d.daemonLog)")
                #expect(stop.stdout == "the daemon stopped\n", "round \(round): \(stop)")
            }
        }
    }

    /// Root may connect to any user's socket; a daemon run as another user refuses it with
    /// `unauthorized`, and the refusal is read before the connection closes.
    @Test func anotherUserIsToldItIsUnauthorized() async throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            Issue.record("needs root and setpriv (util-linux) to run the daemon as another user")
            return
        }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-u-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let nobody: UInt32 = 65534
        #expect(chmod(root, 0o755) == 0 && chown(root, nobody, nobody) == 0)
        var environment = ProcessInfo.processInfo.environment
        environment["NUCLEIC_HOME"] = root + "/home"
        environment["HOME"] = root
        // The checkout may sit where that user cannot read (a clone in a private temporary
        // folder): the manifests it needs go beside its home.
        let checkout = Fixture.root.deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: root + "/resources/Fixtures", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: checkout + "/Adapters", toPath: root + "/resources/Adapters")
        environment["NUCLEIC_RESOURCES"] = root + "/resources"
        let daemon = try ChildProcess.spawn(
            executable: "/usr/bin/setpriv",
            arguments: ["--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups", NucleicBinary.path, "serve"],
            environment: environment, workingDirectory: root)
        var seen = ""
        for await chunk in daemon.stderr {
            seen += String(decoding: chunk, as: UTF8.self)
            if seen.contains(" serving ") { break }
        }
        #expect(seen.contains(" serving "), "the daemon did not start: \(seen)")
        defer { kill(daemon.pid, SIGTERM) }
        for round in 0..<20 {
            let run = try await NucleicCommand.run(["ls"], environment: environment, workingDirectory: root)
            #expect(run.status != .exited(0), "round \(round)")
            #expect(run.stderr.contains("only the user who runs the daemon may use its socket"), "round \(round): \(run.stderr)")
        }
        kill(daemon.pid, SIGTERM)
        #expect(await daemon.wait(timeout: .seconds(30)) != nil)
    }
}
