import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// `nucleic config` with a real daemon: a setting written by `config set` reaches the running
/// daemon without a restart, and a shell whose environment asks for something else is told.
@Suite(.serialized) struct ConfigEndToEndTests {
    @Test func settingTheClaudeBinaryAppliesToTheNextStartWithoutARestart() async throws {
        let bins = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-config-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: bins) }
        let first = try FakeAgent.install(in: bins + "/first")
        let second = try FakeAgent.install(in: bins + "/second")
        // The daemon's environment must not set the binary: it would win over the file.
        try await DaemonHarness.with(environment: ["NUCLEIC_CLAUDE_BIN": ""]) { d in
            let daemon = try #require(d.daemonPID)
            let set = try await d.ok(["config", "set", "claude-bin", first])
            #expect(set.contains("the running daemon applies it now"), "\(set)")
            #expect(d.contents(d.home + "/config.toml")?.contains("claude-bin = \"\(first)\"") == true)
            #expect(try await d.ok(["config", "get", "claude-bin"]) == first + "\n")

            let one = try await d.start("work", ["--backend", "claude"])
            _ = try await eventually { try await d.ok(["export-fixture", one]).contains(first) ? true : nil }

            _ = try await d.ok(["config", "set", "claude-bin", second])
            let two = try await d.start("work", ["--backend", "claude"])
            let fixture = try await eventually { () -> String? in
                let text = try await d.ok(["export-fixture", two])
                return text.contains("argv") ? text : nil
            }
            #expect(fixture.contains(second) && !fixture.contains(first), "\(fixture.prefix(400))")
            #expect(d.daemonPID == daemon, "the same daemon")

            let listed = try await d.json(["config", "list"])
            let entry = listed["settings"]?.arrayValue?.first { $0["key"] == "claude-bin" }
            #expect(entry?["value"]?.stringValue == second && entry?["source"] == "file", "\(listed)")

            // A shell asking for another binary is told what the daemon uses, and how to apply it.
            var environment = d.environment
            environment["NUCLEIC_CLAUDE_BIN"] = first
            let process = try ChildProcess.spawn(executable: NucleicBinary.path, arguments: ["start", "again", "--backend", "claude"],
                                                 environment: environment, workingDirectory: d.root)
            process.closeStdin()
            async let out: [UInt8] = process.stdout.reduce(into: []) { $0 += $1 }
            async let err: [UInt8] = process.stderr.reduce(into: []) { $0 += $1 }
            let (_, e) = await (out, err)
            _ = await process.wait()
            let stderr = String(decoding: e, as: UTF8.self)
            #expect(stderr.contains("this shell sets NUCLEIC_CLAUDE_BIN=\(first), but the running daemon uses \(second)")
                    && stderr.contains("nucleic config set claude-bin \(first)"), "\(stderr)")

            let bad = try await d.nucleic(["config", "set", "claude-binn", first])
            #expect(bad.status == .exited(2) && bad.stderr.contains("did you mean 'claude-bin'?"), "\(bad)")
            let relative = try await d.nucleic(["config", "set", "claude-bin", "claude"])
            #expect(relative.status == .exited(2) && relative.stderr.contains("an absolute path"), "\(relative)")
            #expect(try await d.ok(["config", "get", "claude-bin"]) == second + "\n", "a refused value changes nothing")
            for id in try await d.json(["ls"]).arrayValue!.compactMap({ $0["sessionID"]?.stringValue }) {
                _ = try await d.ok(["discard", id])
            }
        }
    }
}
