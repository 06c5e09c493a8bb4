import Foundation
import NucleicProtocol
import NucleicRuntime
import NucleicHarness
import NucleicTestSupport
import Testing

/// A full disk loses nothing: the data folder is a small tmpfs mostly taken by a ballast file;
/// a replayed agent writes far past what is left. The session must show `diskFull` (its summary's
/// `condition`, `show`) while the shim holds the agent back; once the ballast is removed the run
/// goes on, and its transcript equals an undisturbed run's (seq contiguous, every line there),
/// with a `diskFull` notice added for each stretch the disk was full.
///
/// Needs a tmpfs it can mount (root, or CAP_SYS_ADMIN, as in these containers). Where it cannot
/// mount, the test is skipped, unless `NUCLEIC_REQUIRE_TMPFS=1` (set it on CI runners that can
/// mount): then it fails, so a runner that lost the ability is noticed.
@Suite(.serialized) struct FullDiskEndToEndTests {
    static let fillerLines = 4000
    static let tmpfsBytes = 32 << 20

    static let canMount: Bool = {
        var template = Array((NSTemporaryDirectory() + "nucleic-mount-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { return false }
        let path = String(cString: made)
        defer { rmdir(path) }
        guard mount("tmpfs", path, "tmpfs", 0, "size=1m") == 0 else { return false }
        umount(path)
        return true
    }()

    static var required: Bool { ProcessInfo.processInfo.environment["NUCLEIC_REQUIRE_TMPFS"] == "1" }

    /// A Claude recording: the handshake, `fillerLines` lines of about 1 KB (each an `unknown`
    /// event kept verbatim), then the answer and the result.
    static func makeFixture(at path: String) throws {
        let source = try String(contentsOf: Fixture.root.appendingPathComponent("claude/plain.jsonl"), encoding: .utf8)
        let records = source.split(separator: "\n").map(String.init)
        var text = records[0...4].joined(separator: "\n") + "\n"
        let pad = String(repeating: "p", count: 900)
        for n in 0..<fillerLines {
            let line = #"{"type":"system","subtype":"nucleic_filler","n":\#(n),"pad":"\#(pad)"}"#
            let record: JSONValue = ["t": .double(0.05), "dir": .string("out"), "line": .string(line)]
            text += JSONWriter.string(record) + "\n"
        }
        text += records[5...].joined(separator: "\n") + "\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Runs the fixture to its end in a fresh harness; with `ballast`, the data folder is a
    /// tmpfs filled so that the run cannot fit until the ballast goes.
    static func run(_ fixture: String, fullDisk: Bool) async throws -> (events: [SequencedEvent], id: String) {
        var mounted: String?
        defer {
            if let mounted {
                umount2(mounted, Int32(MNT_DETACH))
                rmdir(mounted)
            }
        }
        return try await DaemonHarness.with(prepare: { home in
            guard fullDisk else { return }
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            guard mount("tmpfs", home, "tmpfs", 0, "size=\(tmpfsBytes),mode=0700") == 0 else {
                throw PeerError("cannot mount a tmpfs on \(home): \(String(cString: strerror(errno)))")
            }
            mounted = home
        }) { d in
            var ballast: String?
            if fullDisk {
                // Leave about 2 MiB: the run needs several times that.
                var fs = statvfs()
                #expect(statvfs(d.home, &fs) == 0)
                let free = Int(fs.f_bavail) * Int(fs.f_frsize)
                let path = d.home + "/ballast"
                let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
                let chunk = [UInt8](repeating: 0x62, count: 1 << 20)
                var written = 0
                while written < free - (2 << 20) {
                    let n = chunk.withUnsafeBytes { write(fd, $0.baseAddress, min($0.count, free - (2 << 20) - written)) }
                    if n <= 0 { break }
                    written += n
                }
                close(fd)
                ballast = path
            }
            let id = try await d.start("fill the disk", ["--backend", "replay", "--fixture", fixture])
            if let ballast {
                let held = try await eventually(timeout: .seconds(120)) { () -> JSONValue? in
                    let summary = try await d.summary(id)
                    return summary["condition"]?.stringValue == "diskFull" ? summary : nil
                }
                #expect(held["status"]?.stringValue != "finished", "\(held)")
                // Held back for good, not at a moment's contention: the count of stored events
                // stops growing while `show` says why.
                var last: Int64 = -1
                let show = try await eventually(timeout: .seconds(120)) { () -> String? in
                    let show = try await d.ok(["show", id])
                    let seq = try await d.summary(id)["lastSeq"]?.intValue ?? 0
                    defer { last = seq }
                    try await Task.sleep(for: .milliseconds(500))
                    return show.contains("held back: diskFull") && seq == last ? show : nil
                }
                #expect(show.contains("held back: diskFull"), "\(show)")
                #expect(unlink(ballast) == 0)
            }
            try await d.waitFor(id, ["finished"], timeout: .seconds(300))
            let summary = try await d.summary(id)
            #expect(summary["condition"] == nil, "\(summary)")
            // The transcript itself (`log --json` pages long transcripts).
            let text = try String(contentsOfFile: d.home + "/sessions/\(id)/transcript.jsonl", encoding: .utf8)
            let events = try text.split(separator: "\n").map { try SequencedEvent(json: JSONParser.parse(String($0))) }
            #expect(summary["lastSeq"]?.intValue == Int64(events.count))
            if fullDisk {
                // The daemon's log is on the full disk too: what it could not write is counted,
                // and the end of the condition is there once space is back.
                let log = d.contents(d.home + "/run/daemon.log") ?? ""
                #expect(log.contains("session \(id): its files can be written again"), "\(log)\nshim log:\n\(d.contents(d.home + "/sessions/\(id)/shim.log") ?? "")\nnotices: \(events.filter { if case .notice = $0.event { true } else { false } })")
            }
            return (events, id)
        }
    }

    @Test(.enabled(if: canMount || required, "cannot mount a tmpfs here (not root?); set NUCLEIC_REQUIRE_TMPFS=1 to fail instead"))
    func anAgentWritingPastAFullDiskLosesNothing() async throws {
        try TestReaper.becomeSubreaper()
        #expect(Self.canMount, "NUCLEIC_REQUIRE_TMPFS=1, but a tmpfs cannot be mounted here")
        guard Self.canMount else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-fill-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fixture = folder + "/fill.jsonl"
        try Self.makeFixture(at: fixture)

        let calm = try await Self.run(fixture, fullDisk: false)
        let full = try await Self.run(fixture, fullDisk: true)
        #expect(full.events.map(\.seq) == (1...Int64(full.events.count)).map { $0 }, "seq contiguous")
        let notices = full.events.filter { if case .notice(_, _, "diskFull") = $0.event { true } else { false } }
        // One per stretch of full disk: space may come and go for a moment before it is gone.
        #expect(!notices.isEmpty, "a diskFull notice: \(notices)")
        let expected = ShimChaosTests.normalized(calm.events, session: calm.id)
        let got = ShimChaosTests.normalized(full.events.filter { event in !notices.contains { $0.seq == event.seq } }, session: full.id)
        #expect(got.count == expected.count, "events: \(got.count) vs \(expected.count) undisturbed")
        #expect(got == expected, "first difference at \(zip(got, expected).enumerated().first { $0.element.0 != $0.element.1 }.map { "\($0.offset): \($0.element)" } ?? "the end")")
        #expect(expected.count > Self.fillerLines)
    }
}
