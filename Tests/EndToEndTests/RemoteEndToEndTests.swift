import Foundation
import NucleicHarness
import Glibc
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// `nucleic remote` against the real daemon over TCP on 127.0.0.1: a replay session
/// with an approval, two terminal clients paired as devices; one answers, the other's card says
/// "approved on <label>"; a watch killed and restarted resumes from its last seq with nothing
/// missed and nothing doubled.
@Suite(.serialized, .timeLimit(.minutes(3))) struct RemoteEndToEndTests {
    static let toolAllow = Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path

    /// A free TCP port on 127.0.0.1 (bound, read, released).
    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw PeerError("cannot find a free port") }
        return UInt16(bigEndian: addr.sin_port)
    }

    /// `nucleic remote …` as a device whose config lives in `config`.
    func remote(_ d: DaemonHarness, _ config: String, _ arguments: [String]) async throws -> DaemonHarness.Run {
        try await d.start(["remote"] + arguments, environment: ["XDG_CONFIG_HOME": config]).finish()
    }

    /// A running `nucleic remote watch`, its output read line by line.
    final class Watch: Sendable {
        let command: NucleicCommand

        init(_ d: DaemonHarness, config: String) throws {
            command = try d.start(["remote", "watch"], environment: ["XDG_CONFIG_HOME": config], keepStdin: true)
        }

        /// The lines it has printed so far.
        var lines: [String] { command.all }

        /// A line containing `text` it has printed, else reads until one; nil if the output ends first.
        func line(containing text: String) async -> String? {
            if let seen = lines.first(where: { $0.contains(text) }) { return seen }
            return await command.waitForLine(containing: text)
        }

        func kill() async {
            _ = try? command.process.signal(SIGKILL)
            _ = await command.wait()
        }
    }

    @Test func twoDevicesOneAnswersTheOtherSeesWhoAndARestartedWatchResumes() async throws {
        let address = "127.0.0.1:\(try Self.freePort())"
        try await DaemonHarness.with(serve: ["--listen", address, "--replay-speed", "max"]) { d in
            let phone = d.root + "/phone", laptop = d.root + "/laptop"
            var devices: [String] = []
            for (config, label) in [(phone, "Ana's iPhone"), (laptop, "laptop")] {
                let invite = try await d.json(["pair"])
                let uri = try #require(invite["uri"]?.stringValue)
                let paired = try await remote(d, config, ["pair", uri, "--label", label])
                #expect(paired.status == .exited(0), "\(paired)")
                #expect(paired.stdout.contains("as \"\(label)\""))
                if let range = paired.stdout.range(of: "(device ") {
                    devices.append(String(paired.stdout[range.upperBound...].prefix { $0 != "," }))
                }
                let mode = try FileManager.default.attributesOfItem(atPath: config + "/nucleic/remote.json")[.posixPermissions] as? NSNumber
                #expect(mode?.intValue == 0o600)
            }
            let id = try await d.start("make hello", ["--backend", "replay", "--fixture", Self.toolAllow, "--title", "hello"])
            let approval = try await d.approval(id)

            let list = try await remote(d, phone, ["ls"])
            #expect(list.status == .exited(0) && list.stdout.contains("NEEDS YOU (1)") && list.stdout.contains("hello"), "\(list)")

            let watch = try Watch(d, config: laptop)
            #expect(await watch.line(containing: "! [1] approval \(approval.id.rawValue.prefix(13))") != nil, "\(watch.lines)")

            let answered = try await remote(d, phone, ["approve", String(approval.id.rawValue.prefix(13))])
            #expect(answered.status == .exited(0), "\(answered)")
            let shown = await watch.line(containing: "✓ [1] approval")
            #expect(shown?.hasSuffix("approved on Ana's iPhone") == true, "\(watch.lines)")
            #expect(await watch.line(containing: "■ turn ended") != nil, "\(watch.lines)")
            let late = try await remote(d, laptop, ["deny", String(approval.id.rawValue.prefix(13))])
            #expect(late.status == .exited(0) && late.stdout.contains("already resolved"), "\(late)")

            // Killed; the session gets a follow-up meanwhile (the replay agent, at the end of its
            // recording, says so: an error); restarted, the watch shows what came after its last
            // seq, once. Its cursor is saved right after it prints: kill it once that is done.
            let shownSeq = try await d.events(id).last!.seq
            _ = try await eventually { () -> Bool? in
                let saved = try? String(contentsOfFile: laptop + "/nucleic/remote-cursors.json", encoding: .utf8)
                return saved?.contains("\"\(id)\":\(shownSeq)") == true ? true : nil
            }
            let before = watch.lines
            await watch.kill()
            let sent = try await remote(d, phone, ["send", String(id.prefix(13)), "and now a README"])
            #expect(sent.status == .exited(0), "\(sent)")
            let later = try await eventually { () -> [SequencedEvent]? in
                let events = try await d.events(id).filter { $0.seq > shownSeq }
                return events.contains(where: { if case .error = $0.event { true } else { false } }) ? events : nil
            }
            let expected = later.filter {
                switch $0.event {
                case .userInput, .error: true
                default: false
                }
            }.map(\.seq)
            let again = try Watch(d, config: laptop)
            #expect(await again.line(containing: "[hello #\(expected.last!)]") != nil, "\(again.lines)")
            await again.kill()
            let rows = { (lines: [String]) in lines.filter { $0.hasPrefix("[hello #") } }
            let seqs = rows(again.lines).compactMap { Int64($0.dropFirst("[hello #".count).prefix { $0.isNumber }) }
            #expect(seqs == expected, "\(rows(again.lines))")
            #expect(rows(again.lines).first == "[hello #\(expected[0])] you › and now a README")
            #expect(Set(rows(before)).isDisjoint(with: rows(again.lines)))

            // Revoked on the host: the phone is told to pair again.
            #expect(devices.count == 2)
            _ = try await d.ok(["revoke", devices[0]])
            let refused = try await remote(d, phone, ["ls"])
            #expect(refused.status == .exited(1) && refused.stderr.contains("pair again"), "\(refused)")
            #expect(try await remote(d, laptop, ["ls"]).status == .exited(0))
        }
    }
}
