public import NucleicProtocol
public import NucleicSystem
import Glibc

/// Why the local socket could not be set up, reached or used, or why a connection ended.
///
/// `code` is what callers match on; `message` is a sentence for a person (what happened, to which
/// path or peer, what to do next). The path, C function and errno are diagnostics and are not part
/// of equality. `LocalConnection.endReason` uses the same type: `peerClosed` and `closed` are the
/// ordinary ends, the other codes say what went wrong.
public typealias SocketError = CodedError<SocketFailure>

extension CodedError.Code where Domain == SocketFailure {
    // Setting up and reaching the socket.

    /// Nothing listens at the path (no socket file, or a stale one): the daemon is not running.
    public static var notRunning: Self { Self("notRunning") }
    /// Another listener holds the path: a daemon is already running for this home.
    public static var alreadyRunning: Self { Self("alreadyRunning") }
    /// The path does not fit in `sockaddr_un.sun_path` (107 bytes and a NUL).
    public static var pathTooLong: Self { Self("pathTooLong") }
    /// A folder on the way is not ours, not a folder, or writable by others.
    public static var unsafeDirectory: Self { Self("unsafeDirectory") }
    /// Something other than a socket sits at the socket path; it is left alone.
    public static var notASocket: Self { Self("notASocket") }
    /// The socket exists but we may not connect to it (another user's daemon).
    public static var permissionDenied: Self { Self("permissionDenied") }
    /// A system call failed for another reason (descriptors, memory, threads).
    public static var systemCallFailed: Self { Self("systemCallFailed") }

    // Why a connection ended, or why a send failed.

    /// The peer closed the connection (EOF at a frame boundary, EPIPE, ECONNRESET).
    public static var peerClosed: Self { Self("peerClosed") }
    /// `close()` was called on this side (or the connection object was released).
    public static var closed: Self { Self("closed") }
    /// The peer announced a frame over the payload limit; the stream cannot be trusted.
    public static var frameTooLarge: Self { Self("frameTooLarge") }
    /// The peer closed the connection in the middle of a frame.
    public static var truncatedFrame: Self { Self("truncatedFrame") }
    /// The peer did not read: more than the outgoing limit was waiting to be sent.
    public static var tooSlow: Self { Self("tooSlow") }
    /// `read` or `send` failed for another reason.
    public static var ioFailed: Self { Self("ioFailed") }
    /// A payload over the connection's limit was given to `send`; the connection stays open.
    public static var payloadTooLarge: Self { Self("payloadTooLarge") }
}

/// The domain of ``SocketError``: failures of system calls on sockets and their paths.
public enum SocketFailure: SystemErrorDomain {}

extension CodedError where Domain == SocketFailure {
    /// A failed system call on `path` (or on no path), phrased as "cannot <what>: <strerror>".
    static func system(_ what: String, _ function: String, _ number: Int32, path: String? = nil) -> SocketError {
        SocketError(
            .systemCallFailed, "cannot \(what): \(String(cString: strerror(number)))",
            path: path, function: function, errno: number
        )
    }
}
