import CShims
import Glibc
import NucleicSystem

/// One TCP connection as a byte stream: the same I/O thread as the local socket's `LocalConnection`
/// (`ConnectionCore` in raw mode), without framing — the secure channel frames its own bytes.
///
/// ### Invariants
/// - Bytes are written whole and in the order `enqueue` was called; memory waiting to be written is
///   bounded by `options.maxQueuedOutgoingBytes` (past it the connection closes as `tooSlow`), and
///   reading pauses while `maxBufferedIncomingBytes` of received bytes wait for the reader.
/// - Only the connection's thread closes the socket.
public final class TCPConnection: Sendable, CustomStringConvertible {
    /// The peer's address, `a.b.c.d:port`.
    public let peer: String
    let core: ConnectionCore

    init(fd: Int32, peer: String, options: ConnectionOptions) throws(SocketError) {
        let wake = try WakePipe.open(owning: fd)
        let core = ConnectionCore(fd: fd, wake: wake, label: "the TCP connection from \(peer)", options: options, raw: true)
        try wake.startThread(name: "nucleic-tcp", owning: fd, "start a thread for \(peer)") { core.run() }
        self.peer = peer
        self.core = core
    }

    /// A client connection to `host:port` (tests and the benchmark). Blocking connect.
    public static func connect(host: String, port: Int, options: ConnectionOptions = ConnectionOptions()) throws(SocketError) -> TCPConnection {
        let fd = nucleic_tcp_connect(host, Int32(port))
        if fd < 0 { throw SocketError.system("connect to \(host):\(port)", "connect", -fd) }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        return try TCPConnection(fd: fd, peer: "\(host):\(port)", options: options)
    }

    deinit {
        core.end(SocketError(.closed, "the TCP connection with \(peer) was released"), discardIncoming: true)
    }

    /// The next bytes received (any amount), nil once the connection has ended.
    public func read() async -> [UInt8]? { await core.nextFrame() }

    /// Queues bytes to write; throws when the connection has ended or the queue is over its limit.
    public func enqueue(_ bytes: [UInt8]) throws(SocketError) {
        if let error = core.enqueue(bytes, waiter: nil) { throw error }
    }

    /// Queues bytes and waits until they are written (or the connection ends).
    public func send(_ bytes: [UInt8]) async throws(SocketError) {
        let result = await withCheckedContinuation { (waiter: CheckedContinuation<Result<Void, SocketError>, Never>) in
            if let error = core.enqueue(bytes, waiter: waiter) { waiter.resume(returning: .failure(error)) }
        }
        try result.get()
    }

    /// Half-closes once everything queued is written: the peer reads EOF; reading goes on.
    public func shutdownWriting() { core.shutdownWriting() }

    /// Bytes queued and not yet written.
    public var queuedByteCount: Int { core.outgoingByteCount }

    /// Returns once fewer than `bound` bytes wait to be written, or the connection has ended.
    public func waitUntilQueued(below bound: Int) async {
        await core.waitUntilQueued(below: bound)
    }

    /// Closes now; queued bytes are dropped.
    public func close(_ reason: String = "closed by this side") {
        core.end(SocketError(.closed, "the TCP connection with \(peer) was closed: \(reason)"), discardIncoming: true)
    }

    /// Closes once everything queued so far is written (see `LocalConnection.closeAfterFlush`):
    /// the write side is shut after the last byte and what the peer still sends is read and
    /// dropped until it closes, so the kernel does not reset the connection over unread input
    /// and destroy the last message; a peer that reads nothing for `grace` is cut off.
    public func closeAfterFlush(_ reason: String, grace: Duration = .seconds(1)) {
        core.closeAfterFlush(SocketError(.closed, "the TCP connection with \(peer) was closed: \(reason)"), grace: grace)
    }

    public var isOpen: Bool { core.endReason == nil }
    public var endReason: SocketError? { core.endReason }

    /// Waits until the socket is closed.
    public func ended() async -> SocketError { await core.ended() }

    public var description: String { "the TCP connection with \(peer)" }
}
