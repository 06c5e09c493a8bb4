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

struct PeerFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum PeerPython {
    static var path: String? {
        guard let path = ProcessInfo.processInfo.environment["NUCLEIC_PEERS_PYTHON"], FileManager.default.isExecutableFile(atPath: path) else { return nil }
        return path
    }

    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }
}

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

    static func make(options: RemoteServer.Options = RemoteServer.Options(handshakeTimeout: .seconds(10)), sendBufferSize: Int? = nil) async throws -> RemoteRig {
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
        let server = LocalServer(host: host, listener: unix, hostVersion: "test", pairing: pairing) { _ in }
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
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Peers/remote_client.py").path

    private let process = Process()
    private let input: FileHandle
    private let output: FileHandle
    private let errors: URL
    private var buffered: [UInt8] = []

    init() throws {
        guard let python = PeerPython.path else {
            throw PeerFailure("NUCLEIC_PEERS_PYTHON is not set or not executable: run `eval \"$(scripts/peers.sh)\"` first")
        }
        errors = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-remote-peer-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let stdin = Pipe()
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Self.script]
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading
        let pid = process.processIdentifier
        let running = process
        DispatchQueue.global().asyncAfter(deadline: .now() + 120) {
            if running.isRunning { kill(pid, SIGKILL) }
        }
    }

    static func randomKey() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// Sends one command and returns its answer (an `error` answer throws). The blocking pipe read
    /// runs on a Dispatch thread, never on the cooperative pool the host's tasks need.
    func call(_ command: [String: Any]) async throws -> [String: Any] {
        let data = try JSONSerialization.data(withJSONObject: command)
        let box = UncheckedBox(self)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<UncheckedBox<[String: Any]>, PeerFailure>, Never>) in
            DispatchQueue.global().async {
                do { continuation.resume(returning: .success(UncheckedBox(try box.value.callBlocking(data)))) } catch {
                    continuation.resume(returning: .failure(error as? PeerFailure ?? PeerFailure("\(error)")))
                }
            }
        }
        return try result.get().value
    }

    private func callBlocking(_ data: Data) throws -> [String: Any] {
        try input.write(contentsOf: data + Data("\n".utf8))
        while true {
            if let newline = buffered.firstIndex(of: 0x0a) {
                let line = Data(buffered[..<newline])
                buffered.removeSubrange(...newline)
                guard let answer = try JSONSerialization.jsonObject(with: line) as? [String: Any] else { throw PeerFailure("not an object") }
                if let error = answer["error"] { throw PeerFailure("remote_client.py: \(error) \(stderr())") }
                return answer
            }
            let chunk = output.availableData
            guard !chunk.isEmpty else { throw PeerFailure("remote_client.py ended: \(stderr())") }
            buffered += chunk
        }
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

    func stderr() -> String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }

    func close() async {
        _ = try? await call(["op": "quit"])
        try? input.close()
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: errors)
    }
}

/// Carries a non-Sendable value across a Dispatch hop whose two sides never use it at once.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
