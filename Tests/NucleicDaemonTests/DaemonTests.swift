import Foundation
import NucleicDaemon
import NucleicProtocol
import NucleicRuntime
import NucleicSockets
import NucleicSync
import NucleicTestSupport
import Synchronization
import Testing

/// A client of the daemon's local socket, speaking the message set as the CLI does.
struct SocketClient {
    let connection: LocalConnection
    private var nextID: Int64 = 0
    private var frames: AsyncStream<[UInt8]>.AsyncIterator

    init(path: String) throws {
        connection = try UnixClient.connect(path: path)
        frames = connection.frames.makeAsyncIterator()
    }

    /// Sends `body` and returns the reply to it (pushed messages in between are skipped).
    mutating func call(_ body: ClientMsg.Body) async throws -> HostMsg.Body {
        nextID += 1
        try await connection.send(WireMessages.encode(ClientMsg(body, requestID: nextID)))
        while let frame = await frames.next() {
            let message = try WireMessages.decodeHost(frame)
            if message.requestID == nextID { return message.body }
        }
        throw FixtureError("the daemon closed the connection before answering \(body)")
    }

    /// Whether the daemon ended the connection (reading what is left until it does).
    mutating func ended() async -> Bool {
        while await frames.next() != nil {}
        return true
    }
}

/// A daemon run in this process over a temporary NUCLEIC_HOME with a real git repository; its
/// agents are real (the replay agent under a real shim, both the built `nucleic`).
@Suite struct DaemonTests {
    let root: String

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-daemon-\(UUID().uuidString.prefix(8))").path
        let repo = root + "/shop"
        try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        try "# shop\n".write(toFile: repo + "/README.md", atomically: true, encoding: .utf8)
        for args in [["init", "-q", "-b", "main"], ["config", "user.name", "Nucleic Tests"], ["config", "user.email", "tests@localhost"],
                     ["add", "README.md"], ["commit", "-qm", "initial"]] {
            try TestGit.run(args, in: repo)
        }
    }

    var home: String { root + "/home" }

    func configuration(listen: Daemon.ListenAddress? = nil, observer: @escaping @Sendable (ServiceGroup.Event) -> Void = { _ in }) -> Daemon.Configuration {
        // No reaper and no signal handlers: this process runs other tests beside the daemon.
        var host = SessionHost.Configuration(home: NucleicHome(path: home), adapters: [:], selfExecutable: NucleicBinary.path, replaySpeed: "max")
        host.environment["NUCLEIC_NOTIFY_DESKTOP"] = "off"  // off the developer's desktop
        return Daemon.Configuration(host: host, listen: listen, hostVersion: "test", reapsOrphans: false, shutdownSignals: [], observer: observer)
    }

    /// The pids of processes whose command line mentions this test's folder (shims, agents).
    func processesUnderRoot() -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: data, as: UTF8.self).contains(root)
        }
    }

    @Test func stopDaemonOverTheSocketStopsServicesInReverseOrderAndLeavesNothing() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let events = Mutex<[ServiceGroup.Event]>([])
        let daemon = Daemon(configuration(listen: .init(host: "127.0.0.1", port: 0)) { event in events.withLock { $0.append(event) } })
        let running = Task { try await daemon.run() }
        let socket = try #require(await daemon.waitUntilServing())

        var client = try SocketClient(path: socket)
        guard case .welcome(let version, let scope, _, let hostVersion, _) = try await client.call(.hello(protocolVersion: 1, client: "test")) else {
            Issue.record("no welcome")
            return
        }
        #expect(version == LocalServer.protocolVersion && scope == .control && hostVersion == "test")
        guard case .projectList(let projects) = try await client.call(.addProject(path: root + "/shop", name: "shop")) else {
            Issue.record("no project")
            return
        }
        #expect(projects.map(\.name) == ["shop"])
        let start = ClientMsg.StartSession(prompt: "Create hello.txt", backend: "replay",
                                           fixture: Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path)
        guard case .sessionCreated(let summary) = try await client.call(.startSession(start)) else {
            Issue.record("no session")
            return
        }
        #expect(summary.sessionID.rawValue.isEmpty == false)
        #expect(!processesUnderRoot().isEmpty, "the session's shim runs")

        #expect(try await client.call(.shutdown(killSessions: true)) == .ok)
        #expect(await client.ended(), "the daemon ends the connection when it stops")
        try await running.value

        #expect(events.withLock { $0 } == [
            .shutdownBegan(reason: "stop-daemon --kill-sessions"),
            .stopping("remote listener"), .returned("remote listener"),
            .stopping("notifier"), .returned("notifier"),
            .stopping("session host"), .returned("session host"),
            .stopping("local socket"), .returned("local socket"),
        ])
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket file is removed")
        // The shims and agents were killed; a killed shim is gone once its parent (the shim's own
        // parent is not us: it runs in a session of its own) or init has reaped it.
        var left = processesUnderRoot()
        for _ in 0..<200 where !left.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
            left = processesUnderRoot().filter { pid in
                let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
                return !stat.contains(") Z ")
            }
        }
        #expect(left.isEmpty, "processes left: \(left)")

        // The home's lock is free: the next daemon serves it, and stops when asked before serving.
        let next = Daemon(configuration())
        await next.stop(reason: "test")
        try await next.run()
    }

    @Test func aSecondDaemonOnTheSameHomeIsRefusedAndTheFirstKeepsServing() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let first = Daemon(configuration())
        let running = Task { try await first.run() }
        let socket = try #require(await first.waitUntilServing())

        let second = Daemon(configuration())
        await #expect(throws: SocketError.self) { try await second.run() }
        #expect(await second.waitUntilServing() == nil)

        var client = try SocketClient(path: socket)
        _ = try await client.call(.hello(protocolVersion: LocalServer.protocolVersion, client: "test"))
        #expect(try await client.call(.ping) == .pong)
        await first.stop(reason: "test")
        try await running.value
        #expect(await client.ended())
    }
}
