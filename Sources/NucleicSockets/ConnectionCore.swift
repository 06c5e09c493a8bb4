import CShims
import Glibc
import Synchronization
import NucleicSystem

/// The state of one connection shared by its I/O thread and the tasks using it.
///
/// The thread (`run`) owns the socket: it polls it with the wake-up pipe, reads into a decoder,
/// writes the queue, and closes both descriptors when the connection has ended. Tasks only touch
/// the state under the lock and poke the pipe; `end` records the reason once and wakes everybody.
final class ConnectionCore: Sendable {
    typealias SendWaiter = CheckedContinuation<Result<Void, SocketError>, Never>

    /// One frame (or raw bytes) waiting to be written; `offset` bytes of it are written.
    private struct Outgoing {
        var bytes: [UInt8]
        var offset = 0
        var waiter: SendWaiter?
    }

    private struct State {
        var outgoing: [Outgoing] = []
        var outgoingHead = 0
        /// Bytes queued and not yet written, across `outgoing[outgoingHead...]`.
        var outgoingBytes = 0
        var incoming: [[UInt8]] = []
        var incomingHead = 0
        /// The cost of `incoming[incomingHead...]` (payload bytes plus a per-frame overhead).
        var incomingCost = 0
        /// Consumers waiting for a frame; never non-empty while `incoming` has frames.
        var readers: [(id: UInt64, continuation: CheckedContinuation<[UInt8]?, Never>)] = []
        var nextReaderID: UInt64 = 0
        var endWaiters: [CheckedContinuation<SocketError, Never>] = []
        /// Why the connection ended; set once.
        var end: SocketError?
        /// Set with `end` by `close()`: frames still arriving are dropped instead of buffered.
        var discarding = false
        /// Set by the thread, under the lock, before it closes its descriptors: no poke after it.
        var threadDone = false
        /// Set by the thread once it has closed its descriptors, just before it returns.
        var finished = false
        /// Half-close asked (`shutdownWriting`): once the queue is empty the thread shuts the
        /// socket's write side (the peer reads EOF after the last byte); `writeShut` once done.
        var shutWrite = false
        var writeShut = false
        /// Set by `closeAfterFlush`: the reason the connection will end with, the grace, and when
        /// it ends at the latest (moved on by each write that makes progress). Sends are refused,
        /// received bytes dropped; the thread writes the queue, shuts the write side, reads until
        /// the peer closes, then ends.
        var closing: (reason: SocketError, grace: Duration, deadline: ContinuousClock.Instant)?
        /// Tasks waiting for the queue to drain below their bound (`waitUntilQueued(below:)`).
        var drainWaiters: [(bound: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// Drops the frames received and not yet read.
        mutating func dropIncoming() {
            incoming = []
            incomingHead = 0
            incomingCost = 0
        }

        /// The waiting readers, removed, to be given the end.
        mutating func takeReaders() -> [CheckedContinuation<[UInt8]?, Never>] {
            defer { readers = [] }
            return readers.map(\.continuation)
        }
    }

    /// What a received frame costs against `maxBufferedIncomingBytes` beyond its payload, so a
    /// flood of empty frames is bounded too.
    private static let frameOverhead = 64
    /// Bytes read per `read` call.
    private static let readSize = 256 * 1024
    /// At most this many reads, and this many bytes written, per poll round: a peer that sends
    /// without pause cannot starve the writes, nor the reverse.
    private static let readsPerRound = 16
    private static let writeBytesPerRound = 4 * 1024 * 1024

    let fd: Int32
    let wake: WakePipe
    let label: String
    let options: ConnectionOptions
    /// Raw mode (the TCP transport): each read's bytes are delivered as they come, unframed; the
    /// layer above (the secure channel) does its own framing.
    let raw: Bool
    private let state = Mutex(State())

    init(fd: Int32, wake: WakePipe, label: String, options: ConnectionOptions, raw: Bool = false) {
        self.fd = fd
        self.wake = wake
        self.label = label
        self.options = options
        self.raw = raw
    }

    var endReason: SocketError? { state.withLock { $0.end } }

    /// Shuts the write side once everything queued is written: the peer reads EOF, and reading
    /// goes on (so the peer's last bytes are consumed and closing does not reset the connection).
    func shutdownWriting() {
        state.withLock { state in
            guard state.end == nil, !state.shutWrite else { return }
            state.shutWrite = true
            if !state.threadDone { wake.poke() }
        }
    }

    /// Ends the connection with `reason` once everything queued is written, losing no reply the
    /// caller decided to send: later sends are refused, readers get the end now, and what the
    /// peer still sends is read and dropped until it closes (closing a socket with unread input
    /// makes the kernel reset the connection, which can destroy the last message before the
    /// peer reads it). A peer that reads nothing for `grace` is cut off, with what is left.
    func closeAfterFlush(_ reason: SocketError, grace: Duration) {
        let readers = state.withLock { state -> [CheckedContinuation<[UInt8]?, Never>] in
            guard state.end == nil, state.closing == nil else { return [] }
            state.closing = (reason, grace, ContinuousClock.now + grace)
            state.shutWrite = true
            state.discarding = true
            state.dropIncoming()
            let readers = state.takeReaders()
            if !state.threadDone { wake.poke() }
            return readers
        }
        for reader in readers { reader.resume(returning: nil) }
    }

    /// Returns once fewer than `bound` bytes wait to be written, or the connection has ended: a
    /// sender of many messages (a long backlog) waits here between them, so what it queues stays
    /// bounded whatever the peer's reading speed.
    func waitUntilQueued(below bound: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.end != nil || state.outgoingBytes < bound { return true }
                state.drainWaiters.append((bound, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Takes the drain waiters whose bound the queue is now under (all of them once ended).
    private static func takeDrained(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        guard !state.drainWaiters.isEmpty else { return [] }
        let ended = state.end != nil
        var ready: [CheckedContinuation<Void, Never>] = []
        state.drainWaiters.removeAll { waiter in
            guard ended || state.outgoingBytes < waiter.bound else { return false }
            ready.append(waiter.continuation)
            return true
        }
        return ready
    }

    /// Bytes queued and not yet written.
    var outgoingByteCount: Int { state.withLock { $0.outgoingBytes } }

    // MARK: tasks' side

    /// Queues `bytes` for writing; `waiter` is resumed once they are written or the connection
    /// ends. Returns the error instead (and does not queue) when the connection has ended or the
    /// queue would pass its limit; the latter ends the connection as `tooSlow`.
    func enqueue(_ bytes: [UInt8], waiter: SendWaiter?) -> SocketError? {
        enum Outcome { case queued, ended(SocketError), overLimit(queued: Int) }
        let limit = options.maxQueuedOutgoingBytes
        let outcome = state.withLock { state -> Outcome in
            if let end = state.end { return .ended(end) }
            if let closing = state.closing { return .ended(closing.reason) }
            if state.outgoingBytes + bytes.count > limit { return .overLimit(queued: state.outgoingBytes) }
            let wasEmpty = state.outgoingHead == state.outgoing.count
            state.outgoing.append(Outgoing(bytes: bytes, waiter: waiter))
            state.outgoingBytes += bytes.count
            if wasEmpty, !state.threadDone { wake.poke() }
            return .queued
        }
        switch outcome {
        case .queued:
            return nil
        case .ended(let reason):
            return Self.sendError(reason)
        case .overLimit(let queued):
            end(SocketError(
                .tooSlow,
                "\(label) was closed because the peer is not reading: \(queued) bytes were waiting to be sent "
                    + "and \(bytes.count) more would pass the limit of \(limit) bytes"
            ), discardIncoming: false)
            return Self.sendError(endReason!)
        }
    }

    /// The next received payload, or nil once the connection has ended and every frame received
    /// before has been taken (or at once when the calling task is cancelled).
    func nextFrame() async -> [UInt8]? {
        let id = state.withLock { state -> UInt64 in
            state.nextReaderID += 1
            return state.nextReaderID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[UInt8]?, Never>) in
                enum Outcome { case frame([UInt8]), finished, waiting }
                let high = options.maxBufferedIncomingBytes
                let outcome = state.withLock { state -> Outcome in
                    if state.incomingHead < state.incoming.count {
                        let frame = state.incoming[state.incomingHead]
                        state.incoming[state.incomingHead] = []
                        state.incomingHead += 1
                        if state.incomingHead == state.incoming.count {
                            state.incoming.removeAll(keepingCapacity: state.incoming.count <= 1024)
                            state.incomingHead = 0
                        }
                        let wasPaused = state.incomingCost >= high
                        state.incomingCost -= frame.count + Self.frameOverhead
                        // The thread stopped reading at the limit: tell it there is room again.
                        if wasPaused, state.incomingCost < high, !state.threadDone { wake.poke() }
                        return .frame(frame)
                    }
                    // Task.isCancelled is checked under the lock the cancellation handler takes, so
                    // a cancellation either is seen here or finds the reader registered.
                    if state.end != nil || state.closing != nil || Task.isCancelled { return .finished }
                    state.readers.append((id, continuation))
                    return .waiting
                }
                switch outcome {
                case .frame(let frame): continuation.resume(returning: frame)
                case .finished: continuation.resume(returning: nil)
                case .waiting: break
                }
            }
        } onCancel: {
            let reader = state.withLock { state -> CheckedContinuation<[UInt8]?, Never>? in
                guard let index = state.readers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.readers.remove(at: index).continuation
            }
            reader?.resume(returning: nil)
        }
    }

    /// Waits until the connection has ended and the thread has closed the socket; returns why.
    func ended() async -> SocketError {
        await withCheckedContinuation { continuation in
            let reason = state.withLock { state -> SocketError? in
                if state.finished, let end = state.end { return end }
                state.endWaiters.append(continuation)
                return nil
            }
            if let reason { continuation.resume(returning: reason) }
        }
    }

    /// Ends the connection with `reason` unless it has ended already: fails the queued sends,
    /// finishes the readers (after the frames already received, unless `discardIncoming`), wakes
    /// the thread so it closes the socket (`ended()` waiters are woken by the thread after that).
    func end(_ reason: SocketError, discardIncoming: Bool) {
        let (senders, readers, drained) = state.withLock { state in
            guard state.end == nil else { return ([SendWaiter](), [CheckedContinuation<[UInt8]?, Never>](), [CheckedContinuation<Void, Never>]()) }
            state.end = reason
            state.discarding = discardIncoming
            let senders = state.outgoing[state.outgoingHead...].compactMap(\.waiter)
            state.outgoing = []
            state.outgoingHead = 0
            state.outgoingBytes = 0
            if discardIncoming { state.dropIncoming() }
            // Readers only wait while nothing is buffered: they all get the end.
            let readers = state.takeReaders()
            if !state.threadDone { wake.poke() }
            return (senders, readers, Self.takeDrained(&state))
        }
        let error = Self.sendError(reason)
        for sender in senders { sender.resume(returning: .failure(error)) }
        for reader in readers { reader.resume(returning: nil) }
        for waiter in drained { waiter.resume() }
    }

    /// The error a send gets on a connection that ended with `reason`.
    private static func sendError(_ reason: SocketError) -> SocketError {
        SocketError(reason.code, "cannot send: \(reason.message)", function: reason.function, errno: reason.errno)
    }

    // MARK: the thread

    /// The I/O loop; returns once the connection has ended, after closing the socket and the pipe.
    func run() {
        var decoder = FrameDecoder(maxPayload: options.maxPayload)
        var buffer = [UInt8](repeating: 0, count: Self.readSize)
        loop: while true {
            enum Plan { case stop, close(SocketError), poll(read: Bool, write: Bool, timeout: Int32) }
            let plan = state.withLock { state -> Plan in
                if state.end != nil {
                    state.threadDone = true
                    return .stop
                }
                let write = state.outgoingHead < state.outgoing.count
                guard let closing = state.closing else {
                    return .poll(read: state.incomingCost < options.maxBufferedIncomingBytes, write: write, timeout: -1)
                }
                let left = ContinuousClock.now.duration(to: closing.deadline)
                if left <= .zero {
                    guard state.outgoingBytes > 0 else { return .close(closing.reason) }
                    return .close(SocketError(
                        closing.reason.code,
                        "\(closing.reason.message) (\(state.outgoingBytes) bytes the peer did not read in time were dropped)"))
                }
                let (seconds, attoseconds) = left.components
                let milliseconds = min(Int64(Int32.max), seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
                return .poll(read: true, write: write, timeout: Int32(milliseconds))
            }
            let read: Bool, write: Bool, timeout: Int32
            switch plan {
            case .stop: break loop
            case .close(let reason):
                end(reason, discardIncoming: true)
                continue
            case .poll(let r, let w, let t): (read, write, timeout) = (r, w, t)
            }
            if !write, state.withLock({ $0.shutWrite && !$0.writeShut }) {
                _ = Glibc.shutdown(fd, Int32(SHUT_WR))
                state.withLock { $0.writeShut = true }
            }
            var events: Int16 = 0
            if read { events |= Int16(POLLIN) }
            if write { events |= Int16(POLLOUT) }
            // With nothing to do on the socket it is left out (poll skips a negative descriptor),
            // so a hang-up while reading is paused cannot make this loop spin.
            var fds = [
                pollfd(fd: events == 0 ? -1 : fd, events: events, revents: 0),
                pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&fds, nfds_t(fds.count), timeout) < 0 {
                let number = errno
                if number == EINTR { continue }
                if number == ENOMEM { usleep(10_000); continue }
                end(SocketError(.ioFailed, "\(label) failed: poll: \(errnoName(number))", function: "poll", errno: number), discardIncoming: false)
                continue
            }
            if fds[1].revents != 0 { wake.drain() }
            let revents = Int32(fds[0].revents)
            guard revents != 0 else { continue }
            let broken = revents & Int32(POLLHUP | POLLERR) != 0
            if read, revents & Int32(POLLIN) != 0 || broken, let reason = readAvailable(&decoder, &buffer) {
                end(closingReason(orElse: reason), discardIncoming: false)
                continue
            }
            // A hang-up with writes pending: the write fails with EPIPE and ends the connection.
            if write, revents & Int32(POLLOUT) != 0 || broken, let reason = writeAvailable() {
                end(reason, discardIncoming: false)
            }
        }
        // `threadDone` is set: nobody pokes the pipe any more, nobody else uses the socket.
        _ = Glibc.close(fd)
        wake.close()
        let (reason, waiters) = state.withLock { state in
            state.finished = true
            defer { state.endWaiters = [] }
            return (state.end!, state.endWaiters)
        }
        for waiter in waiters { waiter.resume(returning: reason) }
    }

    /// While closing after a flush, the peer's end (or a framing error in what is dropped anyway)
    /// once everything was written is the planned close; otherwise `reason`.
    private func closingReason(orElse reason: SocketError) -> SocketError {
        state.withLock { state in
            guard let closing = state.closing, state.outgoingHead == state.outgoing.count else { return reason }
            return closing.reason
        }
    }

    /// Reads what the socket has (a bounded amount), delivering complete frames. Returns why the
    /// connection ends, if it does.
    private func readAvailable(_ decoder: inout FrameDecoder, _ buffer: inout [UInt8]) -> SocketError? {
        for _ in 0..<Self.readsPerRound {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count > 0, raw {
                deliver(Array(buffer[0..<count]))
                if !hasRoomForIncoming() { return nil }
                continue
            }
            if count > 0 {
                buffer.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                do {
                    while let frame = try decoder.next() { deliver(frame) }
                } catch {
                    return SocketError(.frameTooLarge, "\(label) was closed because the peer broke the framing: \(error.message)")
                }
                if !hasRoomForIncoming() { return nil }
                continue
            }
            if count == 0 {
                do {
                    try decoder.finish()
                } catch {
                    return SocketError(.truncatedFrame, "\(label) was closed by the peer in the middle of a frame: \(error.message)")
                }
                return SocketError(.peerClosed, "\(label) was closed by the peer")
            }
            let number = errno
            switch number {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return nil
            case ECONNRESET:
                return SocketError(.peerClosed, "\(label) was reset by the peer", function: "read", errno: number)
            default:
                return SocketError(.ioFailed, "reading from \(label) failed: \(errnoName(number))", function: "read", errno: number)
            }
        }
        return nil
    }

    private func hasRoomForIncoming() -> Bool {
        state.withLock { $0.incomingCost < options.maxBufferedIncomingBytes }
    }

    /// Hands `frame` to a waiting reader, or buffers it. Dropped if the connection was closed.
    private func deliver(_ frame: [UInt8]) {
        let reader = state.withLock { state -> CheckedContinuation<[UInt8]?, Never>? in
            if state.discarding { return nil }
            if !state.readers.isEmpty { return state.readers.removeFirst().continuation }
            state.incoming.append(frame)
            state.incomingCost += frame.count + Self.frameOverhead
            return nil
        }
        reader?.resume(returning: frame)
    }

    /// Writes queued bytes until the socket is full or a bounded amount is written. Returns why
    /// the connection ends, if it does.
    private func writeAvailable() -> SocketError? {
        var budget = Self.writeBytesPerRound
        while budget > 0 {
            let head = state.withLock { state -> (bytes: [UInt8], offset: Int)? in
                guard state.outgoingHead < state.outgoing.count else { return nil }
                let item = state.outgoing[state.outgoingHead]
                return (item.bytes, item.offset)
            }
            guard let (bytes, offset) = head else { return nil }
            let written = bytes.withUnsafeBytes {
                nucleic_send_nosignal(fd, $0.baseAddress! + offset, UInt($0.count - offset))
            }
            if written > 0 {
                budget -= written
                var drained: [CheckedContinuation<Void, Never>] = []
                defer { for waiter in drained { waiter.resume() } }
                let finished = state.withLock { state -> SendWaiter?? in
                    // Ended meanwhile (`close()`): the queue was emptied and its senders failed.
                    guard state.end == nil else { return nil }
                    state.outgoing[state.outgoingHead].offset += written
                    state.outgoingBytes -= written
                    drained = Self.takeDrained(&state)
                    // A peer still reading while the connection closes gets the rest.
                    if let closing = state.closing { state.closing!.deadline = ContinuousClock.now + closing.grace }
                    guard state.outgoing[state.outgoingHead].offset == bytes.count else { return nil }
                    let waiter = state.outgoing[state.outgoingHead].waiter
                    state.outgoing[state.outgoingHead] = Outgoing(bytes: [])
                    state.outgoingHead += 1
                    if state.outgoingHead == state.outgoing.count {
                        state.outgoing.removeAll(keepingCapacity: state.outgoing.count <= 1024)
                        state.outgoingHead = 0
                    } else if state.outgoingHead >= 1024 {
                        state.outgoing.removeFirst(state.outgoingHead)
                        state.outgoingHead = 0
                    }
                    return .some(waiter)
                }
                if case .some(.some(let waiter)) = finished { waiter.resume(returning: .success(())) }
                continue
            }
            let number = Int32(-written)
            switch number {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return nil
            case EPIPE, ECONNRESET:
                return SocketError(
                    .peerClosed, "\(label) was closed by the peer before everything sent was written",
                    function: "send", errno: number
                )
            default:
                return SocketError(.ioFailed, "writing to \(label) failed: \(errnoName(number))", function: "send", errno: number)
            }
        }
        return nil
    }
}
