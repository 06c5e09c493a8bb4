import Glibc
import NucleicProtocol
import NucleicStore
import NucleicSystem
import NucleicWire
import Synchronization
public import NucleicSockets

/// The daemon's TCP side: paired devices over Noise (docs/PROTOCOL.md, "Remote transport").
///
/// Each connection runs one handshake — XXpsk3 to pair with the pending invite, IK to connect as
/// a paired device, told apart by the length of the first message (48 and 96 bytes) — then
/// `hello`/`welcome`, then the same message handling as the local socket (`LocalServer`), with
/// the device's scope.
///
/// ### Invariants
/// - Anything malformed (a frame, a handshake message, a first message that is not `hello`)
///   closes the connection and logs why; nothing a peer sends crashes the daemon.
/// - A connection that has not been welcomed within `handshakeTimeout` is closed.
/// - Outgoing messages are encrypted and queued in order under one lock; a client whose queue
///   would pass `maxQueuedBytes` gets `error {code: backpressure}` and is disconnected, so each
///   connection costs at most that much memory, and at most `maxConnections` are served.
public final class RemoteServer: Sendable {
    public struct Options: Sendable {
        public var handshakeTimeout: Duration
        public var maxQueuedBytes: Int
        /// Connections of paired devices served at once.
        public var maxConnections: Int
        /// Connections that have not yet proved a paired device's key: in all, and per source
        /// address (see `Admission`: a new one over either evicts the oldest).
        public var maxPendingHandshakes: Int
        public var maxPendingHandshakesPerAddress: Int
        /// Connection attempts one address may make at once, and per second after.
        public var handshakeAttemptBurst: Int
        public var handshakeAttemptsPerSecond: Int

        public init(handshakeTimeout: Duration = .seconds(10), maxQueuedBytes: Int = 17 * 1024 * 1024, maxConnections: Int = 64,
                    maxPendingHandshakes: Int = 32, maxPendingHandshakesPerAddress: Int = 8,
                    handshakeAttemptBurst: Int = 64, handshakeAttemptsPerSecond: Int = 32) {
            self.handshakeTimeout = handshakeTimeout
            self.maxQueuedBytes = maxQueuedBytes
            self.maxConnections = maxConnections
            self.maxPendingHandshakes = maxPendingHandshakes
            self.maxPendingHandshakesPerAddress = maxPendingHandshakesPerAddress
            self.handshakeAttemptBurst = handshakeAttemptBurst
            self.handshakeAttemptsPerSecond = handshakeAttemptsPerSecond
        }

        var admissionLimits: Admission.Limits {
            Admission.Limits(maxPending: maxPendingHandshakes, maxPendingPerAddress: maxPendingHandshakesPerAddress,
                             maxAuthenticated: maxConnections, attemptBurst: Double(handshakeAttemptBurst),
                             attemptsPerSecond: Double(handshakeAttemptsPerSecond))
        }
    }

    public let server: LocalServer
    public let pairing: Pairing
    public let listener: TCPListener
    public let options: Options
    private let admission: Mutex<Admission>
    private let overflows = Counter()

    /// Connections closed so far because their client did not read fast enough.
    public var backpressureDisconnects: Int { overflows.value }
    private let live = Mutex<[ObjectIdentifier: TCPConnection]>([:])

    public init(server: LocalServer, pairing: Pairing, listener: TCPListener, options: Options = Options()) async {
        self.server = server
        self.pairing = pairing
        self.listener = listener
        self.options = options
        admission = Mutex(Admission(limits: options.admissionLimits))
        await pairing.setListening(listener.address)
    }

    /// The connection options for a listener serving with `options`: room for the queue limit
    /// plus the last `backpressure` error.
    public static func connectionOptions(_ options: Options) -> ConnectionOptions {
        ConnectionOptions(maxPayload: 0, maxQueuedOutgoingBytes: options.maxQueuedBytes + 64 * 1024, maxBufferedIncomingBytes: 1 << 20)
    }

    /// Serves connections until the listener closes; then closes the ones still open once what is
    /// queued for them is written, and returns when every connection has ended.
    public func run() async {
        await withDiscardingTaskGroup { group in
            for await connection in listener.connections {
                let key = ObjectIdentifier(connection)
                let address = Admission.address(ofPeer: connection.peer)
                let now = ContinuousClock.now
                switch admission.withLock({ $0.arrive(key, address: address, now: now) }) {
                case .refuse(let reason):
                    logAdmission(address, now: now, "refused \(connection): \(reason)")
                    connection.close(reason)
                    continue
                case .admit(let evicting):
                    if let evicting, let evicted = live.withLock({ $0[evicting] }) {
                        let reason = "its handshake was pending while newer connections arrived over the budget for \(address)"
                        logAdmission(address, now: now, "closed \(evicted): \(reason)")
                        evicted.close(reason)
                    }
                }
                live.withLock { $0[key] = connection }
                group.addTask {
                    await self.serve(connection)
                    // What the connection's handler queued (replies, a refusal) is still written.
                    connection.closeAfterFlush("served")
                    _ = await connection.ended()
                    self.live.withLock { _ = $0.removeValue(forKey: key) }
                    self.admission.withLock {
                        $0.leave(key)
                        $0.prune(now: .now)
                    }
                }
            }
            for connection in self.live.withLock({ Array($0.values) }) { connection.closeAfterFlush("the daemon is stopping") }
        }
    }

    /// A warning about admitting connections from `address`, at most one line per interval per
    /// address, saying how many were left unsaid since.
    private func logAdmission(_ address: String, now: ContinuousClock.Instant, _ line: String) {
        let (log, unreported) = admission.withLock { $0.shouldLog(address, now: now) }
        guard log else { return }
        HostLog.warning(unreported == 0 ? line : "\(line) (and \(unreported) more from \(address) not logged since the last line)")
    }

    /// Stops accepting connections.
    public func close() { listener.close() }

    // MARK: one connection

    func serve(_ tcp: TCPConnection) async {
        let welcomed = Flag()
        let timeout = options.handshakeTimeout
        let timer = Task {
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled, !welcomed.isSet else { return }
            Self.refuse(tcp, "no handshake and hello within \(timeout)")
        }
        defer { timer.cancel() }
        var splitter = SecureFrameSplitter(minimumFrameSize: 48)
        let first: [UInt8]
        do throws(SecureFrameError) {
            guard let message = try await Self.nextHandshakeMessage(&splitter, tcp) else {
                if tcp.isOpen { HostLog.info("\(tcp) ended before a handshake") }
                return
            }
            first = message
        } catch {
            return Self.refuse(tcp, "broken handshake framing: \(error.message)")
        }
        let outcome: Established?
        switch first.count {
        case NoisePattern.xxpsk3.overhead(ofMessage: 0): outcome = await pair(tcp, first: first, splitter: &splitter)
        case NoisePattern.ik.overhead(ofMessage: 0): outcome = await connect(tcp, first: first, splitter: &splitter)
        default:
            return Self.refuse(tcp, "a first handshake message of \(first.count) bytes is neither pairing (XXpsk3, 48) nor connecting (IK, 96)")
        }
        guard let outcome else { return }
        await proceed(outcome, tcp: tcp, welcomed: welcomed)
    }

    /// A handshake that went through: the channel and who is at the other end.
    struct Established: Sendable {
        let sink: RemoteSink
        let receiver: RemoteReceiver
        /// nil: an unknown or revoked key (IK completed so the refusal can be encrypted).
        let device: DeviceRecord?
        /// Paired on this connection, by an invite that did not name the device (its hello may).
        let mayLabel: Bool
        let paired: Bool
        let refusal: SessionError?
    }

    private func pair(_ tcp: TCPConnection, first: [UInt8], splitter: inout SecureFrameSplitter) async -> Established? {
        guard let secret = await pairing.pendingSecret() else {
            Self.refuse(tcp, "a device tried to pair, but no invite is pending (run `nucleic pair`)")
            return nil
        }
        let channel: SecureChannel
        do {
            var handshake = try HandshakeState(pattern: .xxpsk3, role: .responder, localStatic: pairing.hostKey, psk: secret)
            _ = try handshake.readMessage(first)
            try tcp.enqueue(SecureFrames.frame(handshake.writeMessage()))
            guard let third = try await Self.nextHandshakeMessage(&splitter, tcp) else {
                Self.refuse(tcp, "the device left during pairing")
                return nil
            }
            _ = try handshake.readMessage(third)
            channel = try handshake.finish()
        } catch {
            Self.refuse(tcp, "pairing handshake failed (a wrong or stale invite secret, or a broken message): \(error)")
            return nil
        }
        let established = self.channel(channel, tcp: tcp, leftover: splitter.takeBuffered(), maxQueuedBytes: options.maxQueuedBytes)
        do {
            let (record, labelled) = try await pairing.consumeInvite(secret: secret, publicKey: established.key)
            return Established(sink: established.sink, receiver: established.receiver, device: record, mayLabel: !labelled, paired: true, refusal: nil)
        } catch {
            return Established(sink: established.sink, receiver: established.receiver, device: nil, mayLabel: false, paired: true, refusal: error)
        }
    }

    private func connect(_ tcp: TCPConnection, first: [UInt8], splitter: inout SecureFrameSplitter) async -> Established? {
        let channel: SecureChannel
        let record: DeviceRecord?
        do {
            var handshake = try HandshakeState(pattern: .ik, role: .responder, localStatic: pairing.hostKey)
            _ = try handshake.readMessage(first)
            record = await pairing.device(publicKey: handshake.remoteStaticKey ?? [])
            try tcp.enqueue(SecureFrames.frame(handshake.writeMessage()))
            channel = try handshake.finish()
        } catch {
            Self.refuse(tcp, "connect handshake failed (another host key, or a broken message): \(error)")
            return nil
        }
        let established = self.channel(channel, tcp: tcp, leftover: splitter.takeBuffered(), maxQueuedBytes: options.maxQueuedBytes)
        let refusal = record == nil ? SessionError(.unauthorized, "this device is not paired with this host, or it was revoked; pair it again") : nil
        return Established(sink: established.sink, receiver: established.receiver, device: record, mayLabel: false, paired: false, refusal: refusal)
    }

    private func channel(_ channel: consuming SecureChannel, tcp: TCPConnection, leftover: [UInt8], maxQueuedBytes: Int)
        -> (sink: RemoteSink, receiver: RemoteReceiver, key: [UInt8])
    {
        let key = channel.remoteStaticKey
        let codec = channel.frameCodec()
        var decoder = codec.decoder
        decoder.append(leftover)
        let sink = RemoteSink(tcp: tcp, encoder: codec.encoder, maxQueuedBytes: maxQueuedBytes, overflows: overflows)
        return (sink, RemoteReceiver(tcp: tcp, decoder: decoder), key)
    }

    private func proceed(_ established: Established, tcp: TCPConnection, welcomed: Flag) async {
        let sink = established.sink
        if let refusal = established.refusal {
            HostLog.warning("refused \(tcp): \(refusal.message)")
            await sink.sendAndClose(HostMsg(.error(code: refusal.code, message: refusal.message, sessionID: nil)), reason: refusal.message)
            return
        }
        guard let device = established.device else { return }
        guard admission.withLock({ $0.authenticate(ObjectIdentifier(tcp)) }) else {
            HostLog.warning("refused \(tcp): \(options.maxConnections) devices are connected already")
            await sink.sendAndClose(HostMsg(.error(code: .notReady, message: "this host serves \(options.maxConnections) device connections already; try again later",
                                                   sessionID: nil)), reason: "no free device slot")
            return
        }
        guard let frame = await established.receiver.next() else { return }
        let hello: ClientMsg
        do { hello = try WireMessages.decodeClient(frame) } catch {
            await sink.sendAndClose(HostMsg(.error(code: .badMessage, message: "the first message must be hello: \(error.message)", sessionID: nil),
                                            requestID: WireMessages.requestID(in: frame)),
                                    reason: "the first message was not hello")
            return
        }
        guard case .hello(let version, let client, let label) = hello.body else {
            await sink.sendAndClose(HostMsg(.error(code: .badMessage, message: "the first message must be hello, not \(hello.type)", sessionID: nil),
                                      requestID: hello.requestID), reason: "the first message was \(hello.type)")
            return
        }
        guard version == LocalServer.protocolVersion else {
            await sink.sendAndClose(HostMsg(.error(code: .protocolVersion, message: "this host speaks protocol \(LocalServer.protocolVersion), not \(version)",
                                             sessionID: nil), requestID: hello.requestID), reason: "protocol version \(version)")
            return
        }
        var deviceLabel = device.label
        if established.mayLabel, let label, !label.isEmpty {
            await pairing.relabel(device.id, label: label)
            deviceLabel = label
        }
        guard await pairing.register(tcp, device: device.id) else {
            await sink.sendAndClose(HostMsg(.error(code: .unauthorized, message: "this device was revoked", sessionID: nil),
                                            requestID: hello.requestID), reason: "revoked")
            return
        }
        defer { Task { await pairing.unregister(tcp, device: device.id) } }
        let identity = ClientIdentity(scope: device.scope, decidedBy: "device:\(device.id)", label: deviceLabel, deviceID: device.id)
        welcomed.set()
        sink.send(HostMsg(server.welcome(identity), requestID: hello.requestID))
        HostLog.info("\(tcp): device \(device.id) (\(deviceLabel), \(client)) \(established.paired ? "paired" : "connected") with scope \(device.scope.rawValue)")
        let receiver = established.receiver
        await server.serve(ClientState(sink: sink, identity: identity), messages: AsyncStream(unfolding: { await receiver.next() }))
    }

    /// The next whole handshake message, or nil when the peer closed first.
    static func nextHandshakeMessage(_ splitter: inout SecureFrameSplitter, _ tcp: TCPConnection) async throws(SecureFrameError) -> [UInt8]? {
        while true {
            if let message = try splitter.next() { return message }
            guard let chunk = await tcp.read() else { return nil }
            splitter.append(chunk)
        }
    }

    static func refuse(_ tcp: TCPConnection, _ reason: String) {
        HostLog.warning("closed \(tcp): \(reason)")
        tcp.close(reason)
    }
}

/// The sending half of a secure connection: encrypts each message and queues its frames, in one
/// step under a lock, so frames leave in nonce order.
final class RemoteSink: ClientSink {
    struct State: ~Copyable {
        var encoder: SecureFrameEncoder
        var closing = false
    }

    let tcp: TCPConnection
    let maxQueuedBytes: Int
    let overflows: Counter
    private let state: Mutex<State>

    init(tcp: TCPConnection, encoder: consuming SecureFrameEncoder, maxQueuedBytes: Int, overflows: Counter) {
        self.tcp = tcp
        self.maxQueuedBytes = maxQueuedBytes
        self.overflows = overflows
        state = Mutex(State(encoder: encoder))
    }

    var isOpen: Bool { tcp.isOpen && !state.withLock { $0.closing } }

    func send(encoded bytes: [UInt8]) {
        let overflow = state.withLock { state -> Bool in
            guard !state.closing else { return false }
            do {
                // Checked before encrypting: a message encrypted and not sent would leave a gap in
                // the nonces, and the peer could not decrypt anything after it.
                let size = bytes.count + state.encoder.frameCount(forMessageSize: bytes.count) * (SecureFrames.lengthSize + 1 + Noise.tagSize)
                if tcp.queuedByteCount + size > maxQueuedBytes {
                    state.closing = true
                    let error = HostMsg(.error(code: .backpressure, message: "this client read too slowly: \(tcp.queuedByteCount) bytes were waiting; reconnect and resubscribe with sinceSeq", sessionID: nil))
                    try tcp.enqueue(state.encoder.encode(WireMessages.encode(error)))
                    return true
                }
                try tcp.enqueue(state.encoder.encode(bytes))
            } catch {
                state.closing = true
                tcp.close("sending failed: \(error)")
            }
            return false
        }
        if overflow {
            HostLog.warning("disconnecting \(tcp): backpressure (its queue passed \(maxQueuedBytes) bytes)")
            overflows.increment()
            // A client that resumes reading within the grace gets everything queued and the error.
            Task { await closeAfterFlush("backpressure", grace: .seconds(5)) }
        }
    }

    func waitUntilQueued(below bytes: Int) async {
        await tcp.waitUntilQueued(below: bytes)
    }

    /// Sends a last message, then closes once it is written (or after a second).
    func sendAndClose(_ message: HostMsg, reason: String) async {
        state.withLock { state in
            guard !state.closing else { return }
            state.closing = true
            if let frames = try? state.encoder.encode(WireMessages.encode(message)) { try? tcp.enqueue(frames) }
        }
        await closeAfterFlush(reason)
    }

    /// Closes once the queue is written and the peer has closed its end, or after `grace`
    /// (`TCPConnection.closeAfterFlush`); returns when the socket is closed.
    private func closeAfterFlush(_ reason: String, grace: Duration = .seconds(1)) async {
        tcp.closeAfterFlush(reason, grace: grace)
        _ = await tcp.ended()
    }
}

/// The receiving half: bytes from the socket to whole application messages. One consumer.
final class RemoteReceiver: @unchecked Sendable {  // `next()` is only called by the one task serving the connection
    let tcp: TCPConnection
    private var decoder: SecureFrameDecoder

    init(tcp: TCPConnection, decoder: consuming SecureFrameDecoder) {
        self.tcp = tcp
        self.decoder = decoder
    }

    /// The next message, or nil when the connection ended; a malformed frame closes it (logged).
    func next() async -> [UInt8]? {
        while true {
            do {
                if let message = try decoder.next() { return message }
            } catch {
                RemoteServer.refuse(tcp, "\(error)")
                return nil
            }
            guard let chunk = await tcp.read() else {
                if tcp.endReason?.code == .peerClosed {
                    do { try decoder.finish() } catch { HostLog.warning("\(tcp): \(error)") }
                }
                return nil
            }
            decoder.append(chunk)
        }
    }
}

/// A counter read and bumped from any thread.
final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}

/// A flag set once, read from any thread.
final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
