import Synchronization

/// A connected pair of in-memory transports, for tests of everything above the socket, with
/// faults injected at a chosen byte or message.
///
/// ### Invariants
/// - What one end sends, the other receives, in order, in the chunks it was sent (a fault may
///   cut a chunk short).
/// - A fault cuts the link in both directions at once: the bytes before the cut are delivered,
///   then both ends read end-of-stream and every later `send` throws `closed`.
public final class InMemoryTransport: Transport, @unchecked Sendable {
    // @unchecked: every mutable field is behind `link`'s mutex.

    /// Where to cut a link.
    public enum Fault: Sendable, Hashable {
        /// Never.
        case none
        /// When the side that is the client has sent this many bytes in all (a cut inside a
        /// chunk delivers its first part).
        case afterClientBytes(Int)
        /// When the host side has sent this many bytes in all.
        case afterHostBytes(Int)
        /// Just before the client's `send` number `n` (0-based): that chunk is not delivered.
        case atClientSend(Int)
        /// Just before the host's `send` number `n` (0-based).
        case atHostSend(Int)
    }

    /// Both directions of one link.
    final class Link: Sendable {
        struct State {
            var queues: [[[UInt8]]] = [[], []]
            var waiting: [CheckedContinuation<[UInt8]?, Never>?] = [nil, nil]
            var sentBytes = [0, 0]
            var sends = [0, 0]
            /// The size of each chunk delivered, per side.
            var chunkSizes: [[Int]] = [[], []]
            /// Cut the link at this side's next send.
            var cutNext = [false, false]
            var closed = false
        }
        let state = Mutex(State())
        let fault: Fault
        init(fault: Fault) { self.fault = fault }

        /// Delivers `bytes` from `side` (0 client, 1 host); false when the link is (now) closed.
        func send(_ bytes: [UInt8], from side: Int) -> Bool {
            var wake: [(CheckedContinuation<[UInt8]?, Never>, [UInt8]?)] = []
            let ok: Bool = state.withLock { s in
                guard !s.closed else { return false }
                var chunk = bytes
                var cut = false
                switch fault {
                case .atClientSend(let n) where side == 0 && s.sends[0] == n, .atHostSend(let n) where side == 1 && s.sends[1] == n:
                    chunk = []
                    cut = true
                case _ where s.cutNext[side]:
                    chunk = []
                    cut = true
                case .afterClientBytes(let n) where side == 0, .afterHostBytes(let n) where side == 1:
                    if s.sentBytes[side] + chunk.count >= n {
                        chunk = Array(chunk.prefix(max(0, n - s.sentBytes[side])))
                        cut = true
                    }
                default: break
                }
                s.sends[side] += 1
                s.sentBytes[side] += chunk.count
                s.chunkSizes[side].append(chunk.count)
                let peer = 1 - side
                if !chunk.isEmpty {
                    if let c = s.waiting[peer] {
                        s.waiting[peer] = nil
                        wake.append((c, chunk))
                    } else {
                        s.queues[peer].append(chunk)
                    }
                }
                if cut { wake += Self.shut(&s) }
                return !cut
            }
            for (c, value) in wake { c.resume(returning: value) }
            return ok
        }

        func receive(side: Int) async -> [UInt8]? {
            await withCheckedContinuation { (c: CheckedContinuation<[UInt8]?, Never>) in
                let ready: [UInt8]?? = state.withLock { s in
                    if !s.queues[side].isEmpty { return .some(s.queues[side].removeFirst()) }
                    if s.closed { return .some(nil) }
                    s.waiting[side] = c
                    return .none
                }
                if let ready { c.resume(returning: ready) }
            }
        }

        func close() {
            let wake = state.withLock { Self.shut(&$0) }
            for (c, value) in wake { c.resume(returning: value) }
        }

        private static func shut(_ s: inout State) -> [(CheckedContinuation<[UInt8]?, Never>, [UInt8]?)] {
            s.closed = true
            var wake: [(CheckedContinuation<[UInt8]?, Never>, [UInt8]?)] = []
            for side in 0..<2 {
                if let c = s.waiting[side] {
                    s.waiting[side] = nil
                    wake.append((c, nil))
                }
            }
            return wake
        }
    }

    let link: Link
    let side: Int

    init(link: Link, side: Int) {
        self.link = link
        self.side = side
    }

    /// A connected pair: `client` and `host`, cut as `fault` says.
    public static func pair(fault: Fault = .none) -> (client: InMemoryTransport, host: InMemoryTransport) {
        let link = Link(fault: fault)
        return (InMemoryTransport(link: link, side: 0), InMemoryTransport(link: link, side: 1))
    }

    public func send(_ bytes: [UInt8]) async throws(RemoteError) {
        guard link.send(bytes, from: side) else { throw RemoteError(.closed, "the in-memory link is closed") }
    }

    public func receive() async throws(RemoteError) -> [UInt8]? {
        await link.receive(side: side)
    }

    public func close() async { link.close() }

    /// Cuts the link at this end's next `send` (that chunk is not delivered).
    public func cutAtNextSend() { link.state.withLock { $0.cutNext[side] = true } }

    /// The sizes of the chunks each side delivered so far.
    public var chunkSizes: (client: [Int], host: [Int]) { link.state.withLock { ($0.chunkSizes[0], $0.chunkSizes[1]) } }

    /// Whether the link has been cut or closed.
    public var isClosed: Bool { link.state.withLock { $0.closed } }
}

/// A dialer for tests: each `connect` makes a new in-memory pair, hands the host end to
/// `accept`, and cuts it with the next fault of `faults` (then `.none`). While `offline` is set,
/// connecting fails with `hostUnreachable`.
public final class InMemoryNetwork: Dialer, @unchecked Sendable {
    // @unchecked: mutable fields are behind `state`'s mutex.
    struct State {
        var faults: [InMemoryTransport.Fault] = []
        var offline = false
        var attempts = 0
        var connections: [InMemoryTransport] = []
        var all: [InMemoryTransport] = []
    }
    let state = Mutex(State())
    let accept: @Sendable (String, InMemoryTransport) -> Void

    /// `accept(address, hostEnd)` is called for every connection made.
    public init(accept: @escaping @Sendable (String, InMemoryTransport) -> Void) {
        self.accept = accept
    }

    /// Queues faults for the next connections, one each, in order.
    public func inject(_ faults: [InMemoryTransport.Fault]) { state.withLock { $0.faults += faults } }

    /// Makes the host unreachable (or reachable again).
    public func setOffline(_ offline: Bool) { state.withLock { $0.offline = offline } }

    /// The client end of every connection made, in order.
    public var transports: [InMemoryTransport] { state.withLock { $0.all } }

    /// Connect attempts so far, including refused ones.
    public var attempts: Int { state.withLock { $0.attempts } }

    /// Cuts every open connection now (a network change).
    public func cutAll() async {
        let all = state.withLock { s in
            defer { s.connections = [] }
            return s.connections
        }
        for c in all { await c.close() }
    }

    public func connect(to address: String) async throws(RemoteError) -> any Transport {
        let result: (fault: InMemoryTransport.Fault, offline: Bool) = state.withLock { s in
            s.attempts += 1
            if s.offline { return (.none, true) }
            return (s.faults.isEmpty ? .none : s.faults.removeFirst(), false)
        }
        if result.offline { throw RemoteError(.hostUnreachable, "\(address) is unreachable (in-memory network offline)") }
        let (client, host) = InMemoryTransport.pair(fault: result.fault)
        state.withLock {
            $0.connections.append(client)
            $0.all.append(client)
        }
        accept(address, host)
        return client
    }
}
