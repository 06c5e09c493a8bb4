import CShims
import Glibc

/// Who is at the other end of a Unix socket, as the kernel recorded it (`SO_PEERCRED`).
///
/// For a connection the daemon accepted, the client's process at `connect()` time; for a client's
/// connection, the daemon's process at `listen()` time. The kernel fills these in: a peer cannot
/// lie about them. The daemon accepts only connections whose `uid` is its own.
public struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The peer's process id (0 if the peer is in another pid namespace).
    public let pid: Int32
    /// The peer's effective user id.
    public let uid: UInt32
    /// The peer's effective group id.
    public let gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// The credentials of the peer of socket `fd`.
    static func of(_ fd: Int32) throws(SocketError) -> PeerCredentials {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        let rc = nucleic_peer_credentials(fd, &pid, &uid, &gid)
        if rc != 0 { throw SocketError.system("read the peer's credentials", "getsockopt(SO_PEERCRED)", -rc) }
        return PeerCredentials(pid: pid, uid: uid, gid: gid)
    }

    public var description: String { "pid \(pid) (uid \(uid))" }
}
