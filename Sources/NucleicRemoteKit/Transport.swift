public import NucleicProtocol

/// Moves bytes between a client and a host: a TCP connection here, an `NWConnection` in an iOS
/// app, an in-memory pipe in tests. Everything above it (Noise, frames, messages) is the same.
///
/// ### Invariants
/// - Bytes arrive in order, unmodified, or not at all: a transport never reorders or drops bytes
///   in the middle of a live stream. A lost connection ends the stream (`receive()` returns nil or
///   throws) and every later `send` fails.
/// - `receive()` is called by one reader at a time; `send` may be called from any task, and each
///   call's bytes are written whole, never interleaved with another call's.
/// - `close()` is idempotent and wakes a blocked `receive()`.
public protocol Transport: AnyObject, Sendable {
    /// Writes all of `bytes`, or throws (`closed` once the connection is gone).
    func send(_ bytes: [UInt8]) async throws(RemoteError)
    /// The next bytes received (any chunk size), or nil at a clean end of stream.
    func receive() async throws(RemoteError) -> [UInt8]?
    /// Ends the connection in both directions.
    func close() async
}

/// Opens transports to a host address (`host:port`, as the pairing URI's `addr`).
///
/// A failure to reach the host at all throws `hostUnreachable`: the client shows "host offline"
/// rather than "reconnecting".
public protocol Dialer: Sendable {
    func connect(to address: String) async throws(RemoteError) -> any Transport
}

/// An error of the client core. Expected outcomes (an approval already answered elsewhere, an
/// action refused because the link is down) are `ActionOutcome`s, not errors.
public typealias RemoteError = CodedError<RemoteFailure>

/// The domain of ``RemoteError``.
public enum RemoteFailure: ErrorDomain {}

extension CodedError.Code where Domain == RemoteFailure {
    /// The host could not be reached (refused, no route, timed out): "host offline".
    public static var hostUnreachable: Self { Self("hostUnreachable") }
    /// The connection ended (the peer closed it, or it was closed here).
    public static var closed: Self { Self("closed") }
    /// The Noise handshake failed (a wrong pinned key, tampering, a wrong pairing secret).
    public static var handshakeFailed: Self { Self("handshakeFailed") }
    /// A frame could not be decoded; the stream cannot be trusted any more.
    public static var badFrame: Self { Self("badFrame") }
    /// A message that is not what the protocol allows here.
    public static var badMessage: Self { Self("badMessage") }
    /// The host does not (or no longer) know this device: pair again.
    public static var unauthorized: Self { Self("unauthorized") }
    /// The host speaks another protocol version.
    public static var protocolVersion: Self { Self("protocolVersion") }
    /// Input the user gave (a pairing URI, a saved file) is wrong.
    public static var invalidInput: Self { Self("invalidInput") }
    /// A system call failed.
    public static var io: Self { Self("io") }
}

