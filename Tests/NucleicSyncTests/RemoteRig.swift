import Foundation
import NucleicProtocol
import NucleicRuntime
import NucleicStore
import NucleicTestSupport
import NucleicWire
import Testing
@testable import NucleicSync

#if canImport(Glibc)
import Glibc
import NucleicSockets
#endif

/// A real daemon core in process: a SessionHost with the replay backend over a real repository
/// and SQLite store, the local socket server, and the TCP listener on 127.0.0.1 (a free port).
final class RemoteRig: @unchecked Sendable {  // fields are set once in make()
    let root: String
    let repo: String
    let host: SessionHost
    let pairing: Pairing
    let server: LocalServer
    let remote: RemoteServer
    private var tasks: [Task<Void, Never>] = []

    private init(root: String, repo: String, host: SessionHost, pairing: Pairing, server: LocalServer, remote: RemoteServer) {
        self.root = root
        self.repo = repo
        self.host = host
        self.pairing = pairing
        self.server = server
        self.remote = remote
    }

    /// - Parameter notifications: the notifier the server answers push registrations with, made
    ///   from the rig's home folder (none by default).
    static func make(options: RemoteServer.Options = RemoteServer.Options(handshakeTimeout: .seconds(30)), sendBufferSize: Int? = nil,
                     notifications: (_ home: String) throws -> (any NotificationControl)? = { _ in nil }) async throws -> RemoteRig {
        var template = Array("/tmp/nrem-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { throw PeerFailure("mkdtemp") }
        let root = String(cString: made)
        let repo = root + "/shop"
        try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        try "# shop\n".write(toFile: repo + "/README.md", atomically: true, encoding: .utf8)
        for args in [["init", "-q", "-b", "main"], ["add", "."], ["-c", "user.name=T", "-c", "user.email=t@x", "commit", "-qm", "initial"]] {
            try git(args, in: repo)
        }
        let home = NucleicHome(path: root + "/home")
        let host = try await SessionHost.open(SessionHost.Configuration(
            home: home, adapters: [:], selfExecutable: NucleicBinary.path, maxRunning: 4, replaySpeed: "max"))
        let hostKey = try HostKey.loadOrCreate(path: home.path + "/host.key")
        let pairing = Pairing(hostKey: hostKey, store: host.store, hostName: LocalServer.machineName())
        let unix = try UnixListener(path: root + "/s.sock")
        let server = LocalServer(host: host, listener: unix, hostVersion: "test", pairing: pairing,
                                 notifications: try notifications(home.path)) { _ in }
        let tcp = try TCPListener(host: "127.0.0.1", port: 0, options: RemoteServer.connectionOptions(options), sendBufferSize: sendBufferSize)
        let remote = await RemoteServer(server: server, pairing: pairing, listener: tcp, options: options)
        let rig = RemoteRig(root: root, repo: repo, host: host, pairing: pairing, server: server, remote: remote)
        rig.tasks = [Task { await server.run() }, Task { await remote.run() }]
        return rig
    }

    var port: Int { remote.listener.port }

    /// A session of the replay backend playing `fixture` (Fixtures/claude/…).
    func startSession(_ fixture: String = "claude/tool-allow.jsonl") async throws -> SessionSummary {
        if try await host.projects().isEmpty { _ = try await host.addProject(path: repo, name: nil) }
        return try await host.startSession(.init(prompt: "Create hello.txt", backend: "replay",
                                                 fixture: Fixture.root.appendingPathComponent(fixture).path))
    }

    /// A device paired through the pairing handshake, returned with its peer still connected.
    func pairedPeer(scope: Scope, label: String) async throws -> (peer: RemoteClientPeer, deviceID: String, key: String) {
        let invite = try await pairing.createInvite(scope: scope, label: nil, addresses: [])
        let peer = try RemoteClientPeer()
        let key = RemoteClientPeer.randomKey()
        let answer = try await peer.call(["op": "pair", "uri": invite.uri, "static": key, "label": label])
        guard let welcome = answer["welcome"] as? [String: Any], let id = welcome["deviceID"] as? String else {
            throw PeerFailure("pairing failed: \(answer)")
        }
        return (peer, id, key)
    }

    func connectArguments(_ key: String) -> [String: Any] {
        ["op": "connect", "host": "127.0.0.1", "port": port, "hk": pairing.hostKeyText, "static": key]
    }

    /// Runs `body` with a rig made as `make()` does, and stops the rig after it, when it throws
    /// too (an unstopped rig leaves its session's shim running).
    static func with(_ body: (RemoteRig) async throws -> Void) async throws {
        let rig = try await make()
        do {
            try await body(rig)
        } catch {
            await rig.stop()
            throw error
        }
        await rig.stop()
    }

    func stop() async {
        remote.close()
        server.listener.close()
        await host.shutdown()
        for task in tasks { await task.value }
        try? FileManager.default.removeItem(atPath: root)
    }

    @discardableResult
    static func git(_ arguments: [String], in directory: String) throws -> String {
        try TestGit.run(arguments, in: directory)
    }
}

/// A running `Tests/Peers/remote_client.py`: one JSON command a line, one JSON answer a line.
final class RemoteClientPeer {
    private let peer: LinePeer

    init() throws {
        peer = try LinePeer("remote_client.py", watchdog: 120)
    }

    static func randomKey() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// Sends one command and returns its answer (an `error` answer throws). The blocking pipe read
    /// runs on a Dispatch thread, never on the cooperative pool the host's tasks need.
    func call(_ command: [String: Any]) async throws -> [String: Any] {
        let box = UncheckedBox((peer, command))
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<UncheckedBox<[String: Any]>, PeerFailure>, Never>) in
            DispatchQueue.global().async {
                let (peer, command) = box.value
                do {
                    let answer = try peer.call(command)
                    if let error = answer["error"] { throw PeerFailure("remote_client.py: \(error) \(peer.stderr())") }
                    continuation.resume(returning: .success(UncheckedBox(answer)))
                } catch {
                    continuation.resume(returning: .failure(error as? PeerFailure ?? PeerFailure("\(error)")))
                }
            }
        }
        return try result.get().value
    }

    /// The message of an answer (`until`, `next`).
    func message(_ command: [String: Any]) async throws -> [String: Any] {
        let answer = try await call(command)
        guard let message = answer["message"] as? [String: Any] else { throw PeerFailure("no message: \(answer)") }
        return message
    }

    func until(_ type: String, match: [String: Any] = [:]) async throws -> [String: Any] {
        try await message(["op": "until", "type": type, "match": match])
    }

    func send(_ message: [String: Any]) async throws {
        _ = try await call(["op": "send", "message": message])
    }

    func stderr() -> String { peer.stderr() }

    func close() async {
        _ = try? await call(["op": "quit"])
        peer.close()
    }
}

/// Carries a non-Sendable value across a Dispatch hop whose two sides never use it at once.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
