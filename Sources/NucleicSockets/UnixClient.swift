import CShims
import Glibc

/// Connects to the daemon's Unix socket (the CLI's side).
public enum UnixClient {
    /// Connects to the listener at `path` and returns the connection.
    ///
    /// The connect itself is a short blocking call (a Unix socket connects at once, or waits only
    /// while the listener's backlog is full); everything after runs on the connection's thread.
    /// - Throws: `notRunning` when there is no socket at `path` or nobody listens on it,
    ///   `permissionDenied` when the socket is another user's, `pathTooLong`, `systemCallFailed`.
    public static func connect(path: String, options: ConnectionOptions = ConnectionOptions()) throws(SocketError) -> LocalConnection {
        guard SocketPath.fits(path) else {
            throw SocketError(
                .pathTooLong, "cannot connect to \(path): a socket path may be at most \(SocketPath.maxLength) bytes",
                path: path
            )
        }
        let fd = nucleic_unix_socket(0)
        if fd < 0 { throw SocketError.system("create a socket", "socket", -fd) }
        let rc = nucleic_unix_connect(fd, path)
        if rc != 0 {
            _ = Glibc.close(fd)
            throw connectError(path, -rc)
        }
        // Blocking for the connect, non-blocking for the connection's poll loop.
        let flags = fcntl(fd, F_GETFL)
        if flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 {
            let number = errno
            _ = Glibc.close(fd)
            throw SocketError.system("configure the socket for \(path)", "fcntl", number, path: path)
        }
        return try LocalConnection.start(fd: fd, options: options) { _ in "the connection to the daemon at \(path)" }
    }

    private static func connectError(_ path: String, _ number: Int32) -> SocketError {
        switch number {
        case ENOENT, ENOTDIR:
            return SocketError(
                .notRunning,
                "the daemon is not running at \(path): there is no socket there; start it with `nucleic serve`",
                path: path, function: "connect", errno: number
            )
        case ECONNREFUSED:
            return SocketError(
                .notRunning,
                "the daemon is not running at \(path): nothing is listening on the socket "
                    + "(a daemon that stopped without cleaning up); start it with `nucleic serve`",
                path: path, function: "connect", errno: number
            )
        case EACCES, EPERM:
            return SocketError(
                .permissionDenied,
                "cannot connect to the daemon at \(path): permission denied; the socket belongs to another user",
                path: path, function: "connect", errno: number
            )
        default:
            return SocketError.system("connect to the daemon at \(path)", "connect", number, path: path)
        }
    }
}
