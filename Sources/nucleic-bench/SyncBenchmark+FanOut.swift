#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicRuntime
import NucleicStore
import NucleicSync
import NucleicWire
import NucleicSockets

/// A SessionHost (HostRig) with the daemon's local server, its pairing, a RemoteServer on
/// 127.0.0.1 (a free port) and `devices` paired devices written straight into the store.
struct SyncRig {
    let rig: HostRig
    let pairing: Pairing
    let remote: RemoteServer
    let server: LocalServer
    let devices: [NoiseKeyPair]
    let tasks: [Task<Void, Never>]

    var port: Int { remote.listener.port }

    static func make(nucleic: String, devices count: Int) async throws -> SyncRig {
        let rig = try await HostRig.make("nbsync", nucleic: nucleic, maxRunning: 4, speed: "max")
        let pairing = Pairing(hostKey: .generate(), store: rig.host.store, hostName: "bench")
        let unix = try UnixListener(path: rig.scratch.root + "/s.sock")
        let server = LocalServer(host: rig.host, listener: unix, hostVersion: "bench", pairing: pairing) { _ in }
        // Every device connects from loopback at once: one address, so its handshake budget
        // must hold them all; and the handshake rows connect one after another as fast as they
        // can, which the per-address rate limit (32 a second) would refuse: it is not measured.
        let options = RemoteServer.Options(maxConnections: count + 16, maxPendingHandshakes: count + 16, maxPendingHandshakesPerAddress: count + 16,
                                           handshakeAttemptBurst: count + 16, handshakeAttemptsPerSecond: 1_000_000)
        let tcp = try TCPListener(host: "127.0.0.1", port: 0, options: RemoteServer.connectionOptions(options))
        let remote = await RemoteServer(server: server, pairing: pairing, listener: tcp, options: options)
        var keys: [NoiseKeyPair] = []
        for i in 0..<count {
            let key = NoiseKeyPair.generate()
            try await rig.host.store.insert(DeviceRecord(label: "bench \(i)", scope: .view, publicKey: key.publicKey))
            keys.append(key)
        }
        let tasks = [Task { await server.run() }, Task { await remote.run() }]
        return SyncRig(rig: rig, pairing: pairing, remote: remote, server: server, devices: keys, tasks: tasks)
    }

    func finish() async {
        remote.close()
        server.listener.close()
        for task in tasks { await task.value }
        await rig.finish(keep: false)
    }
}

extension SyncBenchmark {
    struct FanOut: Sendable {
        var events = 0
        var delivered = 0
        var seconds = 0.0
        var cpu = 0.0
        var backpressure = 0
    }

    static func fanOut(_ options: Options) async throws -> FanOut {
        let rig = try await SyncRig.make(nucleic: options.nucleic, devices: options.subscribers)
        let fixture = rig.rig.scratch.root + "/fanout.jsonl"
        _ = try SessionFixture.write(to: fixture, deltas: options.events, seed: UInt64(options.seed))
        var clients: [BenchDevice] = []
        for key in rig.devices {
            let client = try await BenchDevice.connect(port: rig.port, hostKey: rig.pairing.hostKey.publicKey, deviceKey: key)
            try await client.send(ClientMsg(.hello(protocolVersion: 1, client: "bench")))
            guard case .welcome = try await client.next()?.body else { throw BenchError(message: "no welcome") }
            clients.append(client)
        }
        // The fixture's one approval is answered as it comes, as a person would.
        let notifications = await rig.rig.host.listen()
        let host = rig.rig.host
        let answering = Task {
            for await notification in notifications {
                if case .approvalRequested(let request) = notification {
                    try? await host.respond(request.id, .allow, decidedBy: "user:nucleic-bench", label: nil)
                }
            }
        }
        let cpuBefore = processCPU()
        let start = monotonicSeconds()
        let id = try await rig.rig.start(fixture, prompt: "fan out")
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for client in clients {
                group.addTask {
                    try await client.send(ClientMsg(.subscribe(sessionID: id, sinceSeq: 0, verbosity: .full)))
                    var seen = 0
                    while let message = try await client.next() {
                        guard case .events(_, let events) = message.body else { continue }
                        seen += events.count
                        if events.contains(where: { if case .runFinished = $0.event { true } else { false } }) { return seen }
                    }
                    return seen
                }
            }
            var all: [Int] = []
            for try await count in group { all.append(count) }
            return all
        }
        var result = FanOut()
        result.seconds = monotonicSeconds() - start
        result.cpu = processCPU() - cpuBefore
        result.delivered = counts.reduce(0, +)
        result.events = counts.max() ?? 0
        result.backpressure = rig.remote.backpressureDisconnects
        answering.cancel()
        for client in clients { client.close() }
        await rig.finish()
        return result
    }

    static func processCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }
}

/// A paired device for the benchmark: IK over TCP, then application messages.
final class BenchDevice: @unchecked Sendable {  // each is used by one task at a time
    let tcp: TCPConnection
    var encoder: SecureFrameEncoder
    var decoder: SecureFrameDecoder

    private init(tcp: TCPConnection, channel: consuming SecureChannel, leftover: [UInt8]) {
        self.tcp = tcp
        let codec = channel.frameCodec()
        encoder = codec.encoder
        decoder = codec.decoder
        decoder.append(leftover)
    }

    static func connect(port: Int, hostKey: [UInt8], deviceKey: NoiseKeyPair) async throws -> BenchDevice {
        let tcp = try TCPConnection.connect(host: "127.0.0.1", port: port)
        var handshake = try HandshakeState(pattern: .ik, role: .initiator, localStatic: deviceKey, remoteStatic: hostKey)
        var splitter = SecureFrameSplitter()
        try await tcp.send(SecureFrames.frame(handshake.writeMessage()))
        while true {
            if let message = try splitter.next() {
                _ = try handshake.readMessage(message)
                break
            }
            guard let bytes = await tcp.read() else { throw BenchError(message: "the host closed during the handshake") }
            splitter.append(bytes)
        }
        return BenchDevice(tcp: tcp, channel: try handshake.finish(), leftover: splitter.takeBuffered())
    }

    func send(_ message: ClientMsg) async throws {
        try await tcp.send(encoder.encode(WireMessages.encode(message)))
    }

    func next() async throws -> HostMsg? {
        while true {
            if let bytes = try decoder.next() { return try WireMessages.decodeHost(bytes) }
            guard let chunk = await tcp.read() else { return nil }
            decoder.append(chunk)
        }
    }

    func close() { tcp.close() }
}
