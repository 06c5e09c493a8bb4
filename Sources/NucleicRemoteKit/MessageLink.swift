public import NucleicProtocol

/// Whole application messages (CBOR bytes) in and out: what `Connection` talks through once a
/// link is up. `SecureLink` is the Noise one (a paired device over TCP); a local client's link
/// over the daemon's Unix socket, where the kernel vouches for the peer, is another.
///
/// ### Invariants
/// - Messages arrive whole and in order, or the link ends: `receive()` returns nil at a clean
///   end, throws on anything malformed; every later `send` fails.
/// - `close()` is idempotent and wakes a blocked `receive()`.
public protocol MessageLink: AnyObject, Sendable {
    func send(_ message: [UInt8]) async throws(RemoteError)
    func receive() async throws(RemoteError) -> [UInt8]?
    func close() async
}

extension SecureLink: MessageLink {}

/// Opens a link to the host for one connection attempt (called again after every drop).
/// Throws `hostUnreachable` when nothing listens ("host offline"), anything else to retry.
public typealias LinkOpener = @Sendable () async throws(RemoteError) -> any MessageLink
