import Glibc
import NucleicSystem

/// One connection on the local socket: length-prefixed frames in both directions.
///
/// Payloads are opaque bytes (the caller encodes messages). Everything blocking runs on one
/// dedicated thread per connection, which polls the socket and a wake-up pipe: it reads into a
/// `FrameDecoder` and writes the queued frames, so a peer that does not read never blocks the
/// cooperative pool, and a connection being closed never leaves a thread blocked.
///
/// ### Invariants
/// - Only the connection's thread closes the socket, after it has stopped using it; other threads
///   never touch the descriptor, so a closed number is never read, written or shut down after it
///   has been reused.
/// - Frames are written whole and in the order `send`/`enqueue` were called; they never
///   interleave.
/// - Memory is bounded: at most `maxQueuedOutgoingBytes` wait to be sent (past that the connection
///   closes as `tooSlow`), and reading pauses while `maxBufferedIncomingBytes` of frames wait for
///   the consumer.
/// - A write to a peer that has gone fails with `peerClosed`; it never raises SIGPIPE.
/// - Releasing the last reference (the object and every `frames` stream made from it) closes the
///   connection.
public final class LocalConnection: Sendable, CustomStringConvertible {
    /// Who is at the other end, as the kernel recorded it.
    public let peer: PeerCredentials
    /// Names the connection in messages, e.g. `the connection from pid 1234 (uid 1000)`.
    public let label: String
    /// The limits this connection enforces.
    public let options: ConnectionOptions

    let core: ConnectionCore

    private init(peer: PeerCredentials, label: String, options: ConnectionOptions, core: ConnectionCore) {
        self.peer = peer
        self.label = label
        self.options = options
        self.core = core
    }

    /// Takes ownership of `fd` (a connected, non-blocking, close-on-exec Unix stream socket) and
    /// starts its thread. `label(peer)` names the connection. Closes `fd` on failure.
    static func start(
        fd: Int32, options: ConnectionOptions, label: (PeerCredentials) -> String
    ) throws(SocketError) -> LocalConnection {
        let peer: PeerCredentials
        let wake: WakePipe
        do throws(SocketError) {
            peer = try PeerCredentials.of(fd)
            wake = try WakePipe.open()
        } catch {
            _ = Glibc.close(fd)
            throw error
        }
        let name = label(peer)
        let core = ConnectionCore(fd: fd, wake: wake, label: name, options: options)
        try wake.startThread(name: "nucleic-conn", owning: fd, "start a thread for \(name)") { core.run() }
        return LocalConnection(peer: peer, label: name, options: options, core: core)
    }

    deinit {
        core.end(SocketError(.closed, "\(label) was closed: the connection object was released"), discardIncoming: true)
    }

    // MARK: receiving

    /// The payloads of the frames received, in order; the stream ends when the connection does
    /// (`endReason` then says why: `peerClosed` for a clean end, `truncatedFrame` when the peer
    /// went away inside a frame, `frameTooLarge`, `ioFailed`, or `closed` after `close()`).
    ///
    /// Frames received before the peer's end or error are still delivered; after `close()` the
    /// stream ends at once. One consumer at a time: each frame goes to one reader. Each access
    /// makes a new stream over the same frames, which keeps the connection alive while iterated.
    /// Cancelling the iterating task ends that stream, not the connection.
    public var frames: AsyncStream<[UInt8]> {
        let connection = self
        return AsyncStream(unfolding: { await connection.core.nextFrame() })
    }

    // MARK: sending

    /// Sends `payload` as one frame and waits until it has been written to the socket (into the
    /// kernel's buffer, not necessarily read by the peer).
    ///
    /// Writes are serialized with every other `send` and `enqueue`. A peer that reads slowly makes
    /// this wait; the task is not interrupted by cancellation (the frame is already queued).
    /// - Throws: `payloadTooLarge` (the connection stays open); `peerClosed` when the peer has gone;
    ///   `tooSlow` when the queue is over its limit; or the reason the connection ended before the
    ///   frame was written.
    public func send(_ payload: [UInt8]) async throws(SocketError) {
        let frame = try encode(payload)
        let result = await withCheckedContinuation { (waiter: CheckedContinuation<Result<Void, SocketError>, Never>) in
            if let error = core.enqueue(frame, waiter: waiter) { waiter.resume(returning: .failure(error)) }
        }
        try result.get()
    }

    /// Queues `payload` as one frame and returns without waiting for the write.
    ///
    /// For a sender that must not be held up by one slow peer (the daemon pushing events): the
    /// queue absorbs bursts, and a peer that lets more than `maxQueuedOutgoingBytes` pile up is
    /// disconnected as `tooSlow` instead of making the sender's memory grow. A write failure after
    /// this returns ends the connection and is reported by `endReason` and later sends.
    public func enqueue(_ payload: [UInt8]) throws(SocketError) {
        let frame = try encode(payload)
        if let error = core.enqueue(frame, waiter: nil) { throw error }
    }

    /// Sends raw bytes that need not be a whole frame (tests use it to send broken streams).
    func sendRaw(_ bytes: [UInt8]) async throws(SocketError) {
        precondition(!bytes.isEmpty)
        let result = await withCheckedContinuation { (waiter: CheckedContinuation<Result<Void, SocketError>, Never>) in
            if let error = core.enqueue(bytes, waiter: waiter) { waiter.resume(returning: .failure(error)) }
        }
        try result.get()
    }

    private func encode(_ payload: [UInt8]) throws(SocketError) -> [UInt8] {
        guard payload.count <= options.maxPayload else {
            throw SocketError(
                .payloadTooLarge,
                "cannot send a payload of \(payload.count) bytes on \(label): the limit is \(options.maxPayload) bytes"
            )
        }
        return FrameEncoder.encode(payload)
    }

    // MARK: ending

    /// Closes the connection now: queued frames not yet written are dropped (their `send`s throw
    /// `closed`), `frames` ends, and the thread closes the socket, so the peer sees EOF.
    /// Idempotent; never blocks. To close after the last messages, use `closeAfterFlush`.
    public func close() {
        core.end(SocketError(.closed, "\(label) was closed by this side"), discardIncoming: true)
    }

    /// Closes once every frame queued so far is written, so a reply decided before the close
    /// reaches the peer: later sends are refused, `frames` ends now, and the socket is closed when
    /// the peer has read everything and closed its end, or once it has read nothing for `grace`
    /// (then with what is left dropped). Idempotent; never blocks; `ended()` waits for it.
    public func closeAfterFlush(grace: Duration = .seconds(2)) {
        core.closeAfterFlush(SocketError(.closed, "\(label) was closed by this side"), grace: grace)
    }

    /// Returns once fewer than `bound` bytes wait to be written, or the connection has ended.
    public func waitUntilQueued(below bound: Int) async {
        await core.waitUntilQueued(below: bound)
    }

    /// Why the connection ended, or nil while it is open.
    public var endReason: SocketError? { core.endReason }

    /// Whether the connection is still open.
    public var isOpen: Bool { core.endReason == nil }

    /// Waits until the connection has ended and its socket is closed (the peer sees EOF, the
    /// descriptor is released, the thread has finished), and returns why. Ignores cancellation.
    public func ended() async -> SocketError {
        await core.ended()
    }

    public var description: String { label }
}
