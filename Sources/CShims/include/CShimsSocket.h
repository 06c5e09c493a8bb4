// Unix-domain socket helpers for NucleicSync: what Swift's Glibc module does not import well
// (sockaddr_un filling, accept4, SO_PEERCRED's struct ucred, MSG_NOSIGNAL). Compiled with
// _GNU_SOURCE. Every function returns -errno on failure.
#ifndef NUCLEIC_CSHIMS_SOCKET_H
#define NUCLEIC_CSHIMS_SOCKET_H

#include <sys/types.h>

/// sizeof(((struct sockaddr_un *)0)->sun_path): 108 on Linux, the terminating NUL included.
int nucleic_sun_path_capacity(void);

/// socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC [| SOCK_NONBLOCK], 0). Returns the descriptor.
int nucleic_unix_socket(int nonblocking);

/// bind(2) `fd` to the filesystem path `path`. Returns 0, or -ENAMETOOLONG when `path` does not
/// fit in sun_path with its NUL.
int nucleic_unix_bind(int fd, const char *path);

/// connect(2) `fd` to `path`, retrying on EINTR. Returns 0 (or -EINPROGRESS / -EAGAIN for a
/// non-blocking socket whose listener's backlog is full), or -ENAMETOOLONG.
int nucleic_unix_connect(int fd, const char *path);

/// accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK). Returns the new descriptor.
int nucleic_unix_accept(int fd);

/// getsockopt(SO_PEERCRED): the peer's pid, uid and gid as of connect() / listen(). Returns 0.
int nucleic_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// send(fd, buf, len, MSG_NOSIGNAL): a dead peer gives -EPIPE instead of raising SIGPIPE.
/// Returns the number of bytes written.
long nucleic_send_nosignal(int fd, const void *buf, unsigned long len);

#endif
