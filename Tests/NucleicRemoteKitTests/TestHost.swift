import NucleicProtocol
import NucleicRemoteKit
import NucleicWire
import Synchronization

/// A scripted host that follows the remote wire contract (briefs/wire-contract.md, docs/PROTOCOL.md):
/// the responder side of IK and XXpsk3 on NucleicWire, hello/welcome with `deviceID`, sessions
/// whose events the test appends, subscriptions cold (snapshot) and warm (`sinceSeq`), first-wins
/// approvals, and pushes. Tests drive it over `InMemoryNetwork` or real TCP.
///
/// The pattern is chosen by the length of the first handshake message (payloads are empty:
/// 48 bytes is XXpsk3 message 1, 96 is IK message 1).
actor TestHost {
    struct Device { var id: DeviceID; var label: String; var scope: Scope; var revoked = false }
    struct HostedSession {
        var summary: SessionSummary
        var events: [SequencedEvent] = []
        var pending: [ApprovalID: ApprovalRequest] = [:]
        var resolved: [ApprovalID: ApprovalResolution] = [:]
    }
    final class Client: Sendable {
        let link: SecureLink
        let device: DeviceID
        let label: String
        let outbox: AsyncStream<[UInt8]>.Continuation
        let subscriptions = Mutex<[SessionID: (verbosity: ClientMsg.Verbosity, delivered: Int64)]>([:])
        init(link: SecureLink, device: DeviceID, label: String, outbox: AsyncStream<[UInt8]>.Continuation) {
            self.link = link
            self.device = device
            self.label = label
            self.outbox = outbox
        }
        func send(_ m: HostMsg, deviceID: DeviceID? = nil) { outbox.yield(RemoteWire.encode(m, deviceID: deviceID)) }
    }

    let key = NoiseKeyPair.generate()
    let hostName = "test-host"
    var devices: [[UInt8]: Device] = [:]
    var invite: (psk: [UInt8], scope: Scope)?
    var sessions: [SessionID: HostedSession] = [:]
    var clients: [ObjectIdentifier: Client] = [:]
    /// Events per `events` message when replaying a backlog (small, so drops land between them).
    var backlogChunk = 2
    /// A warm subscribe resends this many events before `sinceSeq` too (duplicates to drop).
    var overlap = 0
    /// Seconds since the epoch of the first event; each event is 1 s later.
    let epoch: Int64 = 1_796_000_000_000
    /// The `denyAlways` of the last answer received.
    var lastDenyAlways: ApprovalScope?
    /// Messages received from clients (type names), for tests of "nothing was sent".
    var received: [String] = []

    // MARK: - Script

    func setBacklogChunk(_ n: Int) { backlogChunk = n }
    func setOverlap(_ n: Int) { overlap = n }
    /// A silent host reads but answers nothing after welcome (a half-open connection).
    var silent = false
    func setSilent(_ on: Bool) { silent = on }

    /// Registers a device as paired.
    func pairDevice(publicKey: [UInt8], label: String, scope: Scope = .approve) -> DeviceID {
        let id = DeviceID.make()
        devices[publicKey] = Device(id: id, label: label, scope: scope)
        return id
    }

    func revoke(_ publicKey: [UInt8]) { devices[publicKey]?.revoked = true }

    /// A one-time pairing invitation (the URI a QR code would carry).
    func makeInvite(scope: Scope = .approve, address: String = "127.0.0.1:7800") -> PairingInvite {
        let psk = (0..<32).map { _ in UInt8.random(in: 0...255) }
        invite = (psk, scope)
        return PairingInvite(hostKey: key.publicKey, secret: psk, addresses: [address], hostName: hostName)
    }

    func addSession(_ id: SessionID, title: String, status: SessionStatus = .running, updatedAtSecond: Int64 = 0) {
        sessions[id] = HostedSession(summary: SessionSummary(
            sessionID: id, projectName: "proj", backend: "replay", status: status, title: title, branch: "nucleic/\(title)",
            lastSeq: 0, updatedAt: Timestamp(millisecondsSince1970: epoch + updatedAtSecond * 1000)))
    }

    /// Appends events to a session's transcript and sends them (and the pushes they imply) live.
    func append(_ events: [AgentEvent], to id: SessionID) {
        guard var s = sessions[id] else { return }
        var fresh: [SequencedEvent] = []
        var pushes: [HostMsg] = []
        for event in events {
            let seq = Int64(s.events.count + 1)
            let e = SequencedEvent(seq: seq, ts: Timestamp(millisecondsSince1970: epoch + seq * 1000), event: event)
            s.events.append(e)
            fresh.append(e)
            switch event {
            case .approvalRequested(let r):
                s.pending[r.id] = r
                pushes.append(HostMsg(.approvalRequested(r)))
            case .approvalResolved(let r):
                s.pending[r.approvalID] = nil
                s.resolved[r.approvalID] = r
                pushes.append(HostMsg(.approvalResolved(sessionID: id, r)))
            case .approvalWithdrawn(let a, _):
                s.pending[a] = nil
            case .runFinished:
                s.summary.status = s.pending.isEmpty ? .finished : .awaitingApproval
            default:
                break
            }
        }
        if !s.pending.isEmpty { s.summary.status = .awaitingApproval } else if s.summary.status == .awaitingApproval { s.summary.status = .running }
        s.summary.lastSeq = Int64(s.events.count)
        s.summary.pendingApprovals = s.pending.count
        s.summary.updatedAt = s.events.last?.ts ?? s.summary.updatedAt
        sessions[id] = s
        for c in clients.values {
            let subscribed: (ClientMsg.Verbosity, Int64)? = c.subscriptions.withLock { subs in
                guard let sub = subs[id] else { return nil }
                subs[id]!.delivered = max(sub.delivered, s.summary.lastSeq)
                return (sub.verbosity, sub.delivered)
            }
            if let (verbosity, delivered) = subscribed {
                let filtered = Self.filter(fresh.filter { $0.seq > delivered }, verbosity)
                if !filtered.isEmpty { c.send(HostMsg(.events(sessionID: id, events: filtered))) }
                for p in pushes { c.send(p) }
            }
            c.send(HostMsg(.sessionUpdated(s.summary)))
        }
    }

    func lastSeq(_ id: SessionID) -> Int64 { sessions[id]?.summary.lastSeq ?? 0 }
    func isPending(_ a: ApprovalID) -> Bool { sessions.values.contains { $0.pending[a] != nil } }
    var clientCount: Int { clients.count }

    /// Resolves an approval without telling anyone (a client that has not heard yet).
    func resolveSilently(_ a: ApprovalID, label: String) {
        for (id, var s) in sessions where s.pending[a] != nil {
            s.pending[a] = nil
            s.resolved[a] = ApprovalResolution(approvalID: a, decision: .allow, decidedBy: "device:0193c000-0000-7000-8000-0000000000ee", decidedByLabel: label)
            sessions[id] = s
        }
    }

    /// Cuts the link of every connected client at the host's next send to it.
    func cutNextHostSend() async {
        for c in clients.values { (c.link.transport as? InMemoryTransport)?.cutAtNextSend() }
    }

    /// Cuts every client's connection (a network change, a host restart).
    func dropAll() async {
        for c in clients.values { await c.link.close() }
    }

    // MARK: - Connections

    nonisolated func accept(_ transport: any Transport) {
        Task { await self.serve(transport) }
    }

    func serve(_ transport: any Transport) async {
        var received: [UInt8] = []
        while received.count < 2 {
            guard let chunk = try? await transport.receive() else { await transport.close(); return }
            received += chunk
        }
        let length = Int(received[0]) << 8 | Int(received[1])
        let pattern: NoisePattern = length == 48 ? .xxpsk3 : .ik
        let pairing = invite
        guard let handshake = try? HandshakeState(
            pattern: pattern, role: .responder, localStatic: key,
            psk: pattern == .xxpsk3 ? SecretBytes(copying: pairing?.psk ?? Array(repeating: 0, count: 32)) : nil)
        else { await transport.close(); return }
        guard let link = try? await Handshake.perform(handshake, over: transport, received: received) else { return }
        let (stream, outbox) = AsyncStream.makeStream(of: [UInt8].self)
        let writer = Task {
            for await bytes in stream {
                do { try await link.send(bytes) } catch { break }
            }
        }
        defer { writer.cancel() }
        // hello first
        guard let first = try? await link.receive(), let incoming = try? RemoteWire.decodeClient(first),
            let version = incoming.helloVersion
        else {
            try? await link.send(RemoteWire.encode(HostMsg(.error(code: .badMessage, message: "the first message must be hello", sessionID: nil))))
            await link.close()
            return
        }
        self.received.append("hello")
        guard version == 1 else {
            try? await link.send(RemoteWire.encode(HostMsg(.error(code: .protocolVersion, message: "this host speaks version 1", sessionID: nil))))
            await link.close()
            return
        }
        let device: Device
        if pattern == .xxpsk3 {
            guard let pairing else { await link.close(); return }
            invite = nil  // single use
            device = Device(id: DeviceID.make(), label: incoming.label ?? "device", scope: pairing.scope)
            devices[link.remoteStaticKey] = device
        } else {
            guard let known = devices[link.remoteStaticKey], !known.revoked else {
                try? await link.send(RemoteWire.encode(HostMsg(.error(code: .unauthorized, message: "this device is not paired with \(hostName)", sessionID: nil))))
                await link.close()
                return
            }
            device = known
        }
        let client = Client(link: link, device: device.id, label: device.label, outbox: outbox)
        clients[ObjectIdentifier(client)] = client
        client.send(HostMsg(.welcome(protocolVersion: 1, scope: device.scope, hostName: hostName, hostVersion: "0.0-test"), requestID: incoming.message.requestID),
                    deviceID: device.id)
        while let bytes = try? await link.receive() {
            guard let message = try? RemoteWire.decodeClient(bytes).message else {
                client.send(HostMsg(.error(code: .badMessage, message: "not a client message", sessionID: nil)))
                continue
            }
            self.received.append(message.type)
            if !silent { handle(message, from: client, scope: device.scope) }
        }
        clients[ObjectIdentifier(client)] = nil
        outbox.finish()
        await link.close()
    }

    func handle(_ m: ClientMsg, from c: Client, scope: Scope) {
        let rid = m.requestID
        guard m.requiredScope <= scope else {
            c.send(HostMsg(.error(code: .forbidden, message: "\(m.type) needs scope \(m.requiredScope.rawValue)", sessionID: nil), requestID: rid))
            return
        }
        switch m.body {
        case .listSessions:
            c.send(HostMsg(.sessionList(sessions.values.map(\.summary).sorted(by: SessionSummary.attentionOrder)), requestID: rid))
        case .subscribe(let id, let since, let verbosity, _):
            guard let s = sessions[id] else {
                c.send(HostMsg(.error(code: .notFound, message: "no session \(id)", sessionID: id), requestID: rid))
                return
            }
            c.subscriptions.withLock { $0[id] = (verbosity, s.summary.lastSeq) }
            if let since {
                let from = max(0, since - Int64(overlap))
                let backlog = Self.filter(s.events.filter { $0.seq > from }, verbosity)
                let chunks = stride(from: 0, to: max(backlog.count, 1), by: max(1, backlogChunk)).map {
                    Array(backlog[$0..<min($0 + max(1, backlogChunk), backlog.count)])
                }
                for (i, chunk) in chunks.enumerated() {
                    c.send(HostMsg(.events(sessionID: id, events: chunk), requestID: i == chunks.count - 1 ? rid : nil))
                }
            } else {
                let tail = Array(s.events.suffix(50))
                c.send(HostMsg(.snapshot(summary: s.summary, events: Self.filter(tail, verbosity),
                                         pendingApprovals: s.pending.values.sorted { $0.id < $1.id }, cursor: s.summary.lastSeq), requestID: rid))
            }
        case .unsubscribe(let id):
            c.subscriptions.withLock { $0[id] = nil }
            c.send(HostMsg(.ok, requestID: rid))
        case .approvalRespond(let approvalID, let decision, let denyAlways):
            lastDenyAlways = denyAlways
            guard let (sid, s) = sessions.first(where: { $0.value.pending[approvalID] != nil || $0.value.resolved[approvalID] != nil }) else {
                c.send(HostMsg(.error(code: .notFound, message: "no approval \(approvalID)", sessionID: nil), requestID: rid))
                return
            }
            if let done = s.resolved[approvalID] {
                c.send(HostMsg(.error(code: .alreadyResolved, message: "already answered on \(done.decidedByLabel ?? done.decidedBy)", sessionID: sid), requestID: rid))
                return
            }
            append([.approvalResolved(ApprovalResolution(approvalID: approvalID, decision: decision, decidedBy: "device:\(c.device.rawValue)", decidedByLabel: c.label))], to: sid)
            c.send(HostMsg(.ok, requestID: rid))
        case .sendInput(let id, let text):
            guard sessions[id] != nil else {
                c.send(HostMsg(.error(code: .notFound, message: "no session \(id)", sessionID: id), requestID: rid))
                return
            }
            append([.userInput(text: text)], to: id)
            c.send(HostMsg(.ok, requestID: rid))
        case .ping:
            c.send(HostMsg(.pong, requestID: rid))
        case .rules(.explain(let tool, _, _, _)):
            c.send(HostMsg(.ruleVerdict(RuleVerdict(risk: .execute, riskReasons: ["\(tool) runs a program"], outcome: .asks, decidedBy: nil,
                                                    rules: [], reasons: ["no rule matches"])), requestID: rid))
        case .listDevices:
            // A reply of a type this client does not know (a newer host's).
            c.outbox.yield(CBOREncoder.encode(CBORValue(["type": "deviceRoster", "requestID": .int(rid ?? 0)] as JSONValue)))
        default:
            c.send(HostMsg(.error(code: .forbidden, message: "not for remote devices", sessionID: nil), requestID: rid))
        }
    }

    /// As the host's: `coalesced` drops partial deltas, `statusOnly` keeps status, approvals, run ends.
    static func filter(_ events: [SequencedEvent], _ verbosity: ClientMsg.Verbosity) -> [SequencedEvent] {
        switch verbosity {
        case .full: events
        case .coalesced:
            events.filter {
                switch $0.event {
                case .assistantText(_, true), .reasoning(_, true), .toolCallInputDelta, .toolCallOutputDelta: false
                default: true
                }
            }
        case .statusOnly:
            events.filter {
                switch $0.event {
                case .statusChanged, .approvalRequested, .approvalResolved, .approvalWithdrawn, .runFinished: true
                default: false
                }
            }
        }
    }
}

/// A clock that never waits: it records each sleep and moves its time forward by it.
final class TestClock: RemoteClock, @unchecked Sendable {
    // @unchecked: `state` is a Mutex.
    let state = Mutex<(now: Int64, sleeps: [Int64])>((1_796_000_000_000, []))
    func now() -> Timestamp { Timestamp(millisecondsSince1970: state.withLock { $0.now }) }
    func sleep(milliseconds: Int64) async throws {
        state.withLock {
            $0.now += milliseconds
            $0.sleeps.append(milliseconds)
        }
        try Task.checkCancellation()
        await Task.yield()
    }
    var sleeps: [Int64] { state.withLock { $0.sleeps } }
}
