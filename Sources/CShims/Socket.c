#include "CShimsSocket.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

int nucleic_sun_path_capacity(void) {
    return (int)sizeof(((struct sockaddr_un *)0)->sun_path);
}

int nucleic_unix_socket(int nonblocking) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
    return fd >= 0 ? fd : -errno;
}

static int fill_address(struct sockaddr_un *address, const char *path, socklen_t *length) {
    size_t count = strlen(path);
    if (count == 0 || count >= sizeof address->sun_path) return -ENAMETOOLONG;
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    memcpy(address->sun_path, path, count + 1);
    *length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + count + 1);
    return 0;
}

int nucleic_unix_bind(int fd, const char *path) {
    struct sockaddr_un address;
    socklen_t length;
    int rc = fill_address(&address, path, &length);
    if (rc != 0) return rc;
    return bind(fd, (struct sockaddr *)&address, length) == 0 ? 0 : -errno;
}

int nucleic_unix_connect(int fd, const char *path) {
    struct sockaddr_un address;
    socklen_t length;
    int rc = fill_address(&address, path, &length);
    if (rc != 0) return rc;
    while (connect(fd, (struct sockaddr *)&address, length) != 0) {
        if (errno != EINTR) return -errno;
    }
    return 0;
}

int nucleic_unix_accept(int fd) {
    int client = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    return client >= 0 ? client : -errno;
}

int nucleic_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -errno;
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

long nucleic_send_nosignal(int fd, const void *buf, unsigned long len) {
    ssize_t written = send(fd, buf, len, MSG_NOSIGNAL);
    return written >= 0 ? (long)written : -(long)errno;
}
