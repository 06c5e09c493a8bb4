#include "CShimsTCP.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fill_address(const char *host, int port, struct sockaddr_storage *storage, socklen_t *length) {
    memset(storage, 0, sizeof(*storage));
    if (port < 0 || port > 65535) return -EINVAL;
    struct sockaddr_in *v4 = (struct sockaddr_in *)storage;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((unsigned short)port);
        *length = sizeof(*v4);
        return AF_INET;
    }
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)storage;
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((unsigned short)port);
        *length = sizeof(*v6);
        return AF_INET6;
    }
    return -EINVAL;
}

int nucleic_tcp_listen(const char *host, int port, int backlog, int *bound_port) {
    struct sockaddr_storage address;
    socklen_t length = 0;
    int family = fill_address(host, port, &address, &length);
    if (family < 0) return family;
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&address, length) != 0 || listen(fd, backlog) != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    struct sockaddr_storage bound;
    socklen_t bound_length = sizeof(bound);
    if (getsockname(fd, (struct sockaddr *)&bound, &bound_length) == 0) {
        *bound_port = bound.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&bound)->sin_port)
                                                 : ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
    }
    return fd;
}

int nucleic_tcp_accept(int fd, char *peer, int capacity) {
    struct sockaddr_storage address;
    socklen_t length = sizeof(address);
    int client = accept4(fd, (struct sockaddr *)&address, &length, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (client < 0) return -errno;
    int one = 1;
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    char text[INET6_ADDRSTRLEN] = "?";
    if (capacity > 0) {
        if (address.ss_family == AF_INET) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)&address)->sin_addr, text, sizeof(text));
            snprintf(peer, (size_t)capacity, "%s:%d", text, ntohs(((struct sockaddr_in *)&address)->sin_port));
        } else {
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&address)->sin6_addr, text, sizeof(text));
            snprintf(peer, (size_t)capacity, "[%s]:%d", text, ntohs(((struct sockaddr_in6 *)&address)->sin6_port));
        }
    }
    return client;
}

int nucleic_tcp_connect(const char *host, int port) {
    struct sockaddr_storage address;
    socklen_t length = 0;
    int family = fill_address(host, port, &address, &length);
    if (family < 0) return family;
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int rc;
    do { rc = connect(fd, (struct sockaddr *)&address, length); } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}
