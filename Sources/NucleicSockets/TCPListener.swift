import CShims
import Glibc
import Synchronization
import NucleicSystem

/// A TCP listening socket for the remote transport (`nucleic serve --listen ADDR:PORT`).
///
/// One thread polls the socket and a wake-up pipe and accepts connections, each a
/// `TCPConnection` with its own I/O thread, delivered on `connections`.
///
/// ### Invariants
/// - Only the accept thread closes the listening socket, after `close()` woke it; `connections`
///   then finishes.
/// - A connection whose setup fails is closed and skipped; running out of descriptors pauses
///   accepting instead of spinning.
public final class TCPListener: Sendable, CustomStringConvertible {
    /// The address asked for and the port actually bound (useful with port 0).
    public let host: String
    public let port: Int
    public let connections: AsyncStream<TCPConnection>
    private let core: TCPListenerCore

    /// `sendBufferSize`: the kernel send buffer of each accepted socket (SO_SNDBUF), nil for the
    /// system's autotuning; small values make a non-reading client reach the host's own queue
    /// limit sooner (tests of backpressure).
    public init(host: String, port: Int, options: ConnectionOptions = ConnectionOptions(), sendBufferSize: Int? = nil) throws(SocketError) {
        var bound: Int32 = 0
        let fd = nucleic_tcp_listen(host, Int32(port), SOMAXCONN, &bound)
        if fd < 0 {
            if fd == -EINVAL {
                throw SocketError(.systemCallFailed, "cannot listen on \(host):\(port): the address must be a numeric IPv4 or IPv6 address")
            }
            throw SocketError.system("listen on \(host):\(port)", "bind/listen", -fd)
        }
        let wake = try WakePipe.open(owning: fd)
        let (stream, continuation) = AsyncStream.makeStream(of: TCPConnection.self)
        let core = TCPListenerCore(fd: fd, wake: wake, options: options, sendBufferSize: sendBufferSize, continuation: continuation)
        try wake.startThread(name: "nucleic-tcp-accept", owning: fd, "start the accept thread") { core.run() }
        self.host = host
        self.port = Int(bound)
        self.connections = stream
        self.core = core
    }

    deinit { core.close() }

    /// Stops accepting; idempotent. Connections already accepted stay open.
    public func close() { core.close() }

    /// `host:port` as bound.
    public var address: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    public var description: String { "the TCP listener on \(address)" }
}

final class TCPListenerCore: Sendable {
    private struct State {
        var closing = false
        var threadDone = false
    }

    let fd: Int32
    let wake: WakePipe
    let options: ConnectionOptions
    let sendBufferSize: Int?
    let continuation: AsyncStream<TCPConnection>.Continuation
    private let state = Mutex(State())

    init(fd: Int32, wake: WakePipe, options: ConnectionOptions, sendBufferSize: Int?, continuation: AsyncStream<TCPConnection>.Continuation) {
        self.fd = fd
        self.wake = wake
        self.options = options
        self.sendBufferSize = sendBufferSize
        self.continuation = continuation
    }

    func close() {
        state.withLock { state in
            guard !state.closing else { return }
            state.closing = true
            if !state.threadDone { wake.poke() }
        }
    }

    func run() {
        while true {
            let closing = state.withLock { state -> Bool in
                if state.closing { state.threadDone = true }
                return state.closing
            }
            if closing { break }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 2, -1) < 0 { continue }
            if fds[1].revents != 0 { wake.drain() }
            if fds[0].revents != 0 { acceptReady() }
        }
        _ = Glibc.close(fd)
        wake.close()
        continuation.finish()
    }

    private func acceptReady() {
        for _ in 0..<64 {
            var peer = [CChar](repeating: 0, count: 64)
            let client = nucleic_tcp_accept(fd, &peer, Int32(peer.count))
            if client >= 0 {
                let name = String(cString: peer)
                if let sendBufferSize {
                    var size = Int32(sendBufferSize)
                    _ = setsockopt(client, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
                }
                if let connection = try? TCPConnection(fd: client, peer: name, options: options) {
                    continuation.yield(connection)
                }
                continue
            }
            switch -client {
            case EINTR, ECONNABORTED, EPROTO: continue
            case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                var wakeOnly = [pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
                _ = poll(&wakeOnly, 1, 100)
                return
            default: return
            }
        }
    }
}
