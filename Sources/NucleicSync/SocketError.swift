import Glibc

/// Why the local socket could not be set up, reached or used, or why a connection ended.
///
/// `code` is what callers match on; `message` is a sentence for a person (what happened, to which
/// path or peer, what to do next). The path, C function and errno are diagnostics and are not part
/// of equality. `Connection.endReason` uses the same type: `peerClosed` and `closed` are the
/// ordinary ends, the other codes say what went wrong.
public struct SocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure; extend with new static members as the transport grows.
    public struct Code: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        // Setting up and reaching the socket.

        /// Nothing listens at the path (no socket file, or a stale one): the daemon is not running.
        public static let notRunning = Code(rawValue: "notRunning")
        /// Another listener holds the path: a daemon is already running for this home.
        public static let alreadyRunning = Code(rawValue: "alreadyRunning")
        /// The path does not fit in `sockaddr_un.sun_path` (107 bytes and a NUL).
        public static let pathTooLong = Code(rawValue: "pathTooLong")
        /// A folder on the way is not ours, not a folder, or writable by others.
        public static let unsafeDirectory = Code(rawValue: "unsafeDirectory")
        /// Something other than a socket sits at the socket path; it is left alone.
        public static let notASocket = Code(rawValue: "notASocket")
        /// The socket exists but we may not connect to it (another user's daemon).
        public static let permissionDenied = Code(rawValue: "permissionDenied")
        /// A system call failed for another reason (descriptors, memory, threads).
        public static let systemCallFailed = Code(rawValue: "systemCallFailed")

        // Why a connection ended, or why a send failed.

        /// The peer closed the connection (EOF at a frame boundary, EPIPE, ECONNRESET).
        public static let peerClosed = Code(rawValue: "peerClosed")
        /// `close()` was called on this side (or the connection object was released).
        public static let closed = Code(rawValue: "closed")
        /// The peer announced a frame over the payload limit; the stream cannot be trusted.
        public static let frameTooLarge = Code(rawValue: "frameTooLarge")
        /// The peer closed the connection in the middle of a frame.
        public static let truncatedFrame = Code(rawValue: "truncatedFrame")
        /// The peer did not read: more than the outgoing limit was waiting to be sent.
        public static let tooSlow = Code(rawValue: "tooSlow")
        /// `read` or `send` failed for another reason.
        public static let ioFailed = Code(rawValue: "ioFailed")
        /// A payload over the connection's limit was given to `send`; the connection stays open.
        public static let payloadTooLarge = Code(rawValue: "payloadTooLarge")

        public static func < (lhs: Code, rhs: Code) -> Bool { lhs.rawValue < rhs.rawValue }
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence for a person: what happened, to what, and what to do next.
    public let message: String
    /// The socket or folder path involved, if any. Diagnostic only.
    public let path: String?
    /// The C function that failed, e.g. `bind`. Diagnostic only.
    public let function: String?
    /// The errno the C function reported. Diagnostic only.
    public let errno: Int32?

    /// Creates an error; `path`, `function` and `errno` are diagnostics, not part of equality.
    public init(_ code: Code, _ message: String, path: String? = nil, function: String? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.function = function
        self.errno = errno
    }

    public static func == (lhs: SocketError, rhs: SocketError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public var description: String {
        var text = message
        if let function, let errno { text += " [\(function): \(errnoName(errno))]" }
        return text
    }

    /// A failed system call on `path` (or on no path), phrased as "cannot <what>: <strerror>".
    static func system(_ what: String, _ function: String, _ number: Int32, path: String? = nil) -> SocketError {
        SocketError(
            .systemCallFailed, "cannot \(what): \(String(cString: strerror(number)))",
            path: path, function: function, errno: number
        )
    }
}

/// `strerror(errno)` with the number, e.g. `No such file or directory (errno 2)`.
func errnoName(_ number: Int32) -> String {
    "\(String(cString: strerror(number))) (errno \(number))"
}
