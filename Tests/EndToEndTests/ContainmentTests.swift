import Foundation
import NucleicProtocol
import NucleicRuntime
import NucleicHarness
import NucleicTestSupport
import Testing

/// Ending a session ends everything its agent started: here a grandchild that leaves the agent's
/// session and group (`setsid`) and ignores SIGTERM, which a signal to the agent's group never
/// reaches. It must be gone after `discard` and after `stop-daemon --kill-sessions`, with the
/// cgroup when the machine delegates one and with the subreaper tree alone (`NUCLEIC_NO_CGROUP`).
@Suite(.serialized) struct ContainmentTests {
    static let strayName = "fake-stray"

    init() throws {
        // What a shim failed to end would be re-parented here, where the test can still see it.
        try TestReaper.becomeSubreaper()
    }

    /// A Claude stand-in (as FakeAgent) whose grandchild detaches into a session of its own,
    /// ignores SIGTERM, SIGINT and SIGHUP, and sleeps.
    static func install(in folder: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let sleep = ["/usr/bin/sleep", "/bin/sleep"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/bin/sleep"
        try? FileManager.default.removeItem(atPath: "\(folder)/\(strayName)")
        try FileManager.default.createSymbolicLink(atPath: "\(folder)/\(strayName)", withDestinationPath: sleep)
        let script = """
            #!/bin/sh
            here=$(dirname "$0")
            ( setsid sh -c 'trap "" TERM INT HUP; exec "$0" 1000' "$here/\(strayName)" </dev/null >/dev/null 2>&1 & )
            printf '{"type":"system","subtype":"init","session_id":"stray-%s","model":"fake","tools":[],"cwd":"%s","permissionMode":"default"}\\n' "$$" "$PWD"
            while IFS= read -r line; do :; done

            """
        let path = "\(folder)/stray-agent"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw PeerError("cannot create \(path): \(String(cString: strerror(errno)))") }
        let bytes = Array(script.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else { throw PeerError("cannot write \(path)") }
        return path
    }

    static func strays(_ marker: String) -> [ProcessTable.Entry] {
        ProcessTable.snapshot().carrying(marker).filter { $0.name == strayName }
    }

    @Test(arguments: [false, true])
    func aDetachedGrandchildThatIgnoresTermGoesWithItsSession(subreaperOnly: Bool) async throws {
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-stray-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: bin) }
        let marker = "NUCLEIC_STRAY_RUN=\(UUID().uuidString)"
        var environment = ["NUCLEIC_CLAUDE_BIN": try Self.install(in: bin),
                           String(marker.split(separator: "=")[0]): String(marker.split(separator: "=")[1])]
        if subreaperOnly { environment["NUCLEIC_NO_CGROUP"] = "1" }
        try await DaemonHarness.with(environment: environment) { d in
            for ending in ["discard", "stop-daemon --kill-sessions"] {
                let id = try await d.start("stray \(ending)", ["--backend", "claude"])
                try await d.waitFor(id, ["running", "awaitingInput"])
                let stray = try await eventually { Self.strays(marker).first }
                #expect(stray.group == stray.pid, "the grandchild leads a group (and a session) of its own: \(stray)")
                let shimInfo = try JSONParser.parse(try #require(d.contents(d.home + "/sessions/\(id)/shim.json")))
                let containment = try #require(shimInfo["containment"]?.stringValue)
                if subreaperOnly { #expect(containment == "subreaper") }
                #expect(d.contents(d.home + "/sessions/\(id)/shim.log")?.contains("contained by \(containment)") == true)

                if ending == "discard" {
                    try await d.ok(["discard", id])
                } else {
                    #expect(try await d.ok(["stop-daemon", "--kill-sessions"]).contains("the daemon stopped"))
                }
                let left = try await eventually(timeout: .seconds(60)) { () -> [ProcessTable.Entry]? in
                    // The agent and its grandchild (the daemon carries the marker too, and may stay).
                    let left = ProcessTable.snapshot().carrying(marker).filter { !$0.isZombie && [Self.strayName, "stray-agent"].contains($0.name) }
                    return left.isEmpty ? left : nil
                }
                #expect(left.isEmpty, "after \(ending): \(Self.strays(marker))")
                let log = d.contents(d.home + "/sessions/\(id)/shim.log") ?? ""
                #expect(log.contains("left behind") || log.contains("reaped orphan"), "\(ending): \(log)")
            }
        }
    }
}
