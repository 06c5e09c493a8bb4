#if canImport(Glibc)
import Glibc
import Dispatch
import Foundation
import Synchronization

/// A TCP connection on POSIX sockets, for Linux (the `nucleic remote` client and the tests).
///
/// An iOS app supplies its own `Transport` over `NWConnection` instead (docs/CLIENTS.md): the
/// same three calls, `send` → `connection.send(content:completion:)`, `receive` →
/// `connection.receive(minimumIncompleteLength: 1, maximumLength: 65536)`, `close` →
/// `connection.cancel()`.
///
/// ### Invariants
/// - Blocking calls run off the Swift concurrency pool: `recv` on a thread of this connection's
///   own (a reader blocked for hours must not hold one of Dispatch's few workers), `send` on a
///   serial dispatch queue, `connect` on a thread of its own.
/// - `close()` shuts the socket down (waking the blocked `recv`); the descriptor itself is closed
///   once both the reader thread has finished and the transport is released, so a reused
///   descriptor number is never read, written or shut down.
/// - Writes use `MSG_NOSIGNAL`: a peer that went away is an error, never SIGPIPE.
public final class TCPTransport: Transport, @unchecked Sendable {
    // @unchecked: `fd` is immutable; `closed` is atomic; the queues serialize reads and writes.
    let fd: Int32
    private let writeQueue = DispatchQueue(label: "nucleic.remote.tcp.write")
    private let closed = Atomic<Bool>(false)
    /// Chunks read by the reader thread; nil ends the stream, an error ends it too.
    private let chunks = ChunkQueue()
    /// `host:port` of the peer, for messages.
    public let address: String

    private let descriptor: Descriptor

    init(fd: Int32, address: String) {
        self.fd = fd
        self.address = address
        let descriptor = Descriptor(fd: fd)
        self.descriptor = descriptor
        let reader = Reader(fd: fd, address: address)
        let chunks = self.chunks
        // The thread holds the reader, the queue and the descriptor's owner, not the transport.
        Thread.detachNewThread {
            reader.run(chunks)
            descriptor.readerFinished()
        }
    }

    deinit { descriptor.ownerReleased() }

    /// Closes the descriptor when both its users are done with it.
    final class Descriptor: Sendable {
        let fd: Int32
        let state = Mutex((readerDone: false, ownerGone: false))
        init(fd: Int32) { self.fd = fd }

        func readerFinished() {
            if state.withLock({ $0.readerDone = true; return $0.ownerGone }) { _ = Glibc.close(fd) }
        }

        /// The transport is gone: wake the reader if it still reads, close if it is done.
        func ownerReleased() {
            // Shut down under the lock: the reader cannot close the descriptor meanwhile.
            let readerDone = state.withLock { s in
                s.ownerGone = true
                if !s.readerDone { _ = shutdown(fd, Int32(SHUT_RDWR)) }
                return s.readerDone
            }
            if readerDone { _ = Glibc.close(fd) }
        }
    }

    /// Reads until the end of the stream or an error, on its own thread.
    struct Reader: Sendable {
        let fd: Int32
        let address: String

        func run(_ out: ChunkQueue) {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
                if n > 0 {
                    out.push(.success(Array(buffer[0..<n])))
                    continue
                }
                if n < 0 && errno == EINTR { continue }
                out.push(n == 0 ? .success(nil) : .failure(RemoteError(.closed, "reading from \(address) failed: \(String(cString: strerror(errno)))")))
                return
            }
        }
    }

    /// What the reader thread hands to `receive()`: chunks in order, then the end.
    final class ChunkQueue: Sendable {
        struct State {
            var items: [Result<[UInt8]?, RemoteError>] = []
            var waiter: CheckedContinuation<Result<[UInt8]?, RemoteError>, Never>?
            var ended = false
        }
        let state = Mutex(State())

        func push(_ item: Result<[UInt8]?, RemoteError>) {
            let waiter: CheckedContinuation<Result<[UInt8]?, RemoteError>, Never>? = state.withLock { s in
                if case .success(.some) = item {} else { s.ended = true }
                if let w = s.waiter {
                    s.waiter = nil
                    return w
                }
                s.items.append(item)
                return nil
            }
            waiter?.resume(returning: item)
        }

        func pop() async -> Result<[UInt8]?, RemoteError> {
            await withCheckedContinuation { c in
                let ready: Result<[UInt8]?, RemoteError>? = state.withLock { s in
                    if !s.items.isEmpty { return s.items.removeFirst() }
                    if s.ended { return .success(nil) }
                    s.waiter = c
                    return nil
                }
                if let ready { c.resume(returning: ready) }
            }
        }
    }

    public func send(_ bytes: [UInt8]) async throws(RemoteError) {
        let result: Result<Void, RemoteError> = await withCheckedContinuation { c in
            writeQueue.async { [self] in c.resume(returning: writeAll(bytes)) }
        }
        try result.get()
    }

    public func receive() async throws(RemoteError) -> [UInt8]? {
        let next = await chunks.pop()
        if closed.load(ordering: .acquiring) { return nil }
        return try next.get()
    }

    public func close() async {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { _ = shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func writeAll(_ bytes: [UInt8]) -> Result<Void, RemoteError> {
        if closed.load(ordering: .acquiring) { return .failure(RemoteError(.closed, "the connection to \(address) is closed")) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(RemoteError(.closed, "sending to \(address) failed: \(String(cString: strerror(errno)))"))
            }
            offset += n
        }
        return .success(())
    }
}

/// Connects over TCP with a timeout; keepalive on, Nagle off.
public struct TCPDialer: Dialer {
    /// How long a connect may take before the host counts as unreachable.
    public var connectTimeoutMilliseconds: Int32

    public init(connectTimeoutMilliseconds: Int32 = 5000) {
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
    }

    public func connect(to address: String) async throws(RemoteError) -> any Transport {
        let (host, port) = try Self.split(address)
        let timeout = connectTimeoutMilliseconds
        let result: Result<Int32, RemoteError> = await withCheckedContinuation { c in
            Thread.detachNewThread { c.resume(returning: Self.open(host: host, port: port, address: address, timeout: timeout)) }
        }
        return TCPTransport(fd: try result.get(), address: address)
    }

    /// `host:port`, `[v6]:port`.
    static func split(_ address: String) throws(RemoteError) -> (String, String) {
        var host = Substring(address)
        guard let colon = host.lastIndex(of: ":") else {
            throw RemoteError(.invalidInput, "'\(address)' is not host:port")
        }
        let port = String(host[host.index(after: colon)...])
        host = host[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty, let p = Int(port), (1...65535).contains(p) else {
            throw RemoteError(.invalidInput, "'\(address)' is not host:port")
        }
        return (String(host), port)
    }

    static func open(host: String, port: String, address: String, timeout: Int32) -> Result<Int32, RemoteError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, port, &hints, &list)
        guard rc == 0, let first = list else {
            return .failure(RemoteError(.hostUnreachable, "cannot resolve \(host): \(String(cString: gai_strerror(rc)))"))
        }
        defer { freeaddrinfo(first) }
        var lastError = "no address"
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let info = node {
            node = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { lastError = String(cString: strerror(errno)); continue }
            var ok = Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0
            if !ok, errno == EINPROGRESS {
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                var ready: Int32
                repeat { ready = poll(&p, 1, timeout) } while ready < 0 && errno == EINTR
                if ready == 0 {
                    lastError = "timed out after \(timeout) ms"
                } else {
                    var err: Int32 = 0
                    var len = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
                    ok = err == 0
                    if !ok { lastError = String(cString: strerror(err)) }
                }
            } else if !ok {
                lastError = String(cString: strerror(errno))
            }
            guard ok else { _ = Glibc.close(fd); continue }
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags & ~Int32(O_NONBLOCK))
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, socklen_t(MemoryLayout<Int32>.size))
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            return .success(fd)
        }
        return .failure(RemoteError(.hostUnreachable, "cannot connect to \(address): \(lastError)"))
    }
}
#endif
