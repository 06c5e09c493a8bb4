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
public struct RemoteError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The host could not be reached (refused, no route, timed out): "host offline".
        public static let hostUnreachable = Code(rawValue: "hostUnreachable")
        /// The connection ended (the peer closed it, or it was closed here).
        public static let closed = Code(rawValue: "closed")
        /// The Noise handshake failed (a wrong pinned key, tampering, a wrong pairing secret).
        public static let handshakeFailed = Code(rawValue: "handshakeFailed")
        /// A frame could not be decoded; the stream cannot be trusted any more.
        public static let badFrame = Code(rawValue: "badFrame")
        /// A message that is not what the protocol allows here.
        public static let badMessage = Code(rawValue: "badMessage")
        /// The host does not (or no longer) know this device: pair again.
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// The host speaks another protocol version.
        public static let protocolVersion = Code(rawValue: "protocolVersion")
        /// Input the user gave (a pairing URI, a saved file) is wrong.
        public static let invalidInput = Code(rawValue: "invalidInput")
        /// A system call failed.
        public static let io = Code(rawValue: "io")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
