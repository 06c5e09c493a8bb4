import NucleicProtocol
@testable import NucleicRemoteKit
import NucleicWire
import Synchronization
import Testing

/// A host, a network to it, and clients paired with it.
struct Rig {
    let host = TestHost()
    let network: InMemoryNetwork
    let clock = TestClock()

    init() {
        let host = self.host
        network = InMemoryNetwork { _, transport in host.accept(transport) }
    }

    /// A device the host knows, and a connection for it (not started).
    func client(label: String = "phone", scope: Scope = .approve, autoSubscribe: Bool = true, identity: NoiseKeyPair = .generate(),
                network: InMemoryNetwork? = nil, heartbeat: Int64? = nil) async -> Connection {
        let id = await host.pairDevice(publicKey: identity.publicKey, label: label, scope: scope)
        let paired = PairedHost(hostKey: host.key.publicKey, addresses: ["127.0.0.1:7800"], hostName: "test-host", deviceID: id, scope: scope, label: label)
        return Connection(host: paired, identity: identity, dialer: network ?? self.network,
                          options: .init(clientName: "test", autoSubscribe: autoSubscribe ? (.full, .beginning) : nil, heartbeatMilliseconds: heartbeat),
                          clock: clock, jitter: { 0.5 })
    }

    /// Two sessions with a turn each, an approval pending in the first; a long message so that
    /// some application messages span several frames.
    func populate() async {
        await host.addSession(Fx.s1, title: "fix-build", updatedAtSecond: 1)
        await host.addSession(Fx.s2, title: "docs", updatedAtSecond: 2)
        await host.append(Fx.turn(approval: Fx.approval(Fx.a1, risk: .execute)), to: Fx.s1)
        let long = String(repeating: "0123456789abcdef", count: 5000)  // 80 000 bytes: two frames
        await host.append([.userInput(text: "write docs"), .assistantText(text: long, isPartial: false),
                           .runFinished(RunFinished(isError: false, stopReason: "end_turn"))], to: Fx.s2)
    }

    /// Waits until `client` is live, caught up, and has every event the host has.
    func caughtUp(_ client: Connection) async -> RemoteState {
        let s1 = await host.lastSeq(Fx.s1), s2 = await host.lastSeq(Fx.s2)
        return await client.waitUntil { s in
            guard case .connected(_, 0) = s.connection else { return false }
            return s.mirror.transcripts[Fx.s1]?.cursor == s1 && s.mirror.transcripts[Fx.s2]?.cursor == s2
                && s.mirror.summary(Fx.s1)?.lastSeq == s1 && s.mirror.summary(Fx.s2)?.lastSeq == s2
        }
    }
}

// Generous: the whole suite runs beside other test runs on 2 cores (alone it takes seconds).
@Suite(.timeLimit(.minutes(6))) struct ConnectionTests {
    /// One run: the client's first connection is cut by `fault`; after reconnecting and the live
    /// part of the turn, its mirror must equal a fresh client's that subscribed from seq 0.
    func converge(_ fault: InMemoryTransport.Fault, overlap: Int = 0) async -> (RemoteState, RemoteState, Connection, Int) {
        let rig = Rig()
        await rig.populate()
        await rig.host.setOverlap(overlap)
        rig.network.inject([fault])
        let client = await rig.client()
        await client.start()
        _ = await rig.caughtUp(client)
        await rig.host.append(Fx.after, to: Fx.s1)
        let state = await rig.caughtUp(client)
        let fresh = await rig.client(label: "fresh", network: InMemoryNetwork { _, t in rig.host.accept(t) })
        await fresh.start()
        let reference = await rig.caughtUp(fresh)
        await client.stop()
        await fresh.stop()
        return (state, reference, client, rig.network.attempts)
    }

    @Test func freshClientFollowsTheWholeTurn() async {
        let (state, reference, client, _) = await converge(.none)
        #expect(state.mirror == reference.mirror)
        #expect(await client.connects == 1)
        let rows = state.mirror.transcripts[Fx.s1]!.rows
        #expect(rows.map(\.id) == ["seq:1", "seq:2", "seq:3", "seq:6", "tool:toolu_1", "approval:\(Fx.a1.rawValue)", "seq:15", "seq:17"])
        #expect(state.mirror.sessions.map(\.sessionID) == [Fx.s1, Fx.s2])  // NEEDS YOU first
        #expect(state.mirror.badge == 1)
        #expect(state.host?.hostName == "test-host" && state.host?.deviceID != nil)
    }

    @Test func dropsAtEveryHandshakeStepAndMessageConvergeToAFreshClient() async {
        var faults: [InMemoryTransport.Fault] = []
        // The client's sends on its first connection: IK message 1, hello, listSessions, two subscribes.
        for n in 0..<5 { faults += [.atClientSend(n)] }
        // The host's: IK message 2, welcome, the session list, backlog events (2 a message), pushes.
        for n in 0..<12 { faults += [.atHostSend(n)] }
        // Inside and around each handshake message (IK message 1 is 2 + 96 bytes, message 2 is
        // 2 + 48), then every 5th byte through hello/welcome and the first messages.
        let clientEdges = [0, 1, 2, 3, 50, 97, 98, 99, 100]
        let hostEdges = [0, 1, 2, 3, 25, 49, 50, 51, 52]
        for n in Set(clientEdges + Array(stride(from: 0, through: 200, by: 5))).sorted() { faults += [.afterClientBytes(n)] }
        for n in Set(hostEdges + Array(stride(from: 0, through: 160, by: 5))).sorted() { faults += [.afterHostBytes(n)] }
        for fault in faults {
            let (state, reference, client, attempts) = await converge(fault)
            #expect(state.mirror == reference.mirror, "after \(fault)")
            // Exactly one reconnect; welcomed once or twice depending on where the cut fell.
            #expect(attempts == 2, "after \(fault)")
            #expect(await (1...2).contains(client.connects), "after \(fault)")
        }
    }

    @Test func dropsMidStreamAtEveryMessageBoundaryAndInsideFramesConverge() async {
        // A clean run tells where the host's messages fall in its byte stream.
        let rig = Rig()
        await rig.populate()
        let probe = await rig.client()
        await probe.start()
        _ = await rig.caughtUp(probe)
        await rig.host.append(Fx.after, to: Fx.s1)
        _ = await rig.caughtUp(probe)
        let sizes = rig.network.transports[0].chunkSizes.host
        await probe.stop()
        var offsets: Set<Int> = []
        var total = 0
        for size in sizes {
            for d in [-1, 0, 1, 2, 3, 17, size / 2] { offsets.insert(total + d) }
            total += size
        }
        for stride in Swift.stride(from: 0, to: total, by: max(1, total / 32)) { offsets.insert(stride) }
        var reconnected = 0
        for offset in offsets.sorted() where offset >= 0 {
            let (state, reference, client, _) = await converge(.afterHostBytes(offset))
            #expect(state.mirror == reference.mirror, "cut after host byte \(offset) of \(total)")
            if await client.connects == 2 { reconnected += 1 }
        }
        #expect(reconnected > 30)
    }

    @Test func overlappingCatchUpIsDeduplicatedOnSessionAndSeq() async {
        let (state, reference, client, _) = await converge(.afterHostBytes(3000), overlap: 4)
        #expect(state.mirror == reference.mirror)
        #expect(await client.connects == 2)
        #expect(await client.duplicateEventsDropped > 0)
    }

    @Test func backoffGrowsWhileTheHostIsOfflineAndResetsAfterWelcome() async {
        let rig = Rig()
        await rig.populate()
        rig.network.setOffline(true)
        let client = await rig.client()
        await client.start()
        let offline = await client.waitUntil { if case .hostOffline(_, let n, _) = $0.connection { n >= 6 } else { false } }
        guard case .hostOffline(nil, _, let reason) = offline.connection else { Issue.record("\(offline.connection)"); return }
        #expect(reason.contains("unreachable"))
        #expect(!offline.actionsEnabled)
        rig.network.setOffline(false)
        _ = await rig.caughtUp(client)
        let delays = await client.backoffDelays
        let backoff = Backoff()
        #expect(Array(delays.prefix(6)) == (0..<6).map { backoff.delay(attempt: $0, jitter: 0.5) })
        #expect(Array(delays.prefix(6)) == [187, 375, 750, 1500, 3000, 6000])
        // A drop after a welcome starts again from the first delay, and the data is stamped.
        let before = await client.backoffDelays.count
        await rig.host.dropAll()
        _ = await client.waitUntil { $0.connection.isLive == false }
        _ = await rig.caughtUp(client)
        #expect(await client.backoffDelays.count == before + 1)
        #expect(await client.backoffDelays.last == 187)
        await client.stop()
        #expect(await client.state.connection == .disconnected(asOf: rig.clock.now()))
    }

    @Test func aSilentLinkIsDroppedByTheHeartbeatAndReplaced() async {
        let rig = Rig()
        await rig.populate()
        let client = await rig.client(heartbeat: 1000)
        await client.start()
        _ = await rig.caughtUp(client)
        // The host goes quiet (it reads, answers nothing, not even pings): the heartbeat, whose
        // test clock moves a whole interval per sleep, gives the link up and reconnects.
        await rig.host.setSilent(true)
        _ = await client.waitUntil { !$0.connection.isLive }
        #expect(await client.silentLinksDropped >= 1)
        await rig.host.setSilent(false)
        let s = await rig.caughtUp(client)
        let connects = await client.connects
        #expect(s.connection.isLive && connects >= 2)
        await client.stop()
    }

    @Test func stopReturnsWhileAHostThatNeverAnswersHoldsTheHandshake() async {
        let held = Mutex<[InMemoryTransport]>([])
        let network = InMemoryNetwork { _, t in held.withLock { $0.append(t) } }  // accepted, never answered
        let paired = PairedHost(hostKey: NoiseKeyPair.generate().publicKey, addresses: ["a:1"], hostName: "h", deviceID: nil, scope: .approve, label: "x")
        let client = Connection(host: paired, identity: .generate(), dialer: network, clock: TestClock(), jitter: { 0 })
        await client.start()
        while network.attempts == 0 { await Task.yield() }
        await client.stop()
        #expect(await client.state.connection == .disconnected(asOf: nil))
        #expect(held.withLock { $0.allSatisfy(\.isClosed) })
    }

    @Test func anUnknownDeviceIsToldSoAndStopsRetrying() async {
        let rig = Rig()
        let stranger = NoiseKeyPair.generate()
        let paired = PairedHost(hostKey: rig.host.key.publicKey, addresses: ["127.0.0.1:7800"], hostName: "h", deviceID: nil, scope: .approve, label: "x")
        let client = Connection(host: paired, identity: stranger, dialer: rig.network, clock: rig.clock, jitter: { 0 })
        await client.start()
        let s = await client.waitUntil { if case .unauthorized = $0.connection { true } else { false } }
        #expect(s.connection.chip() == "○ This device was removed on the host")
        await client.stop()
        #expect(rig.network.attempts == 1)
    }

    @Test func aWrongPinnedHostKeyNeverGetsWelcomed() async {
        let rig = Rig()
        let identity = NoiseKeyPair.generate()
        _ = await rig.host.pairDevice(publicKey: identity.publicKey, label: "x")
        let impostor = NoiseKeyPair.generate().publicKey
        let paired = PairedHost(hostKey: impostor, addresses: ["a:1"], hostName: "h", deviceID: nil, scope: .approve, label: "x")
        let client = Connection(host: paired, identity: identity, dialer: rig.network, clock: rig.clock, jitter: { 0 })
        await client.start()
        let s = await client.waitUntil { if case .reconnecting(_, let n, _) = $0.connection { n >= 3 } else { false } }
        await client.stop()
        #expect(s.host == nil && !s.actionsEnabled)
        #expect(await client.connects == 0)
    }
}
