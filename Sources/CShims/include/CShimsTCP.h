// TCP helpers for NucleicSync's remote listener (IPv4 and IPv6 literals only, no name lookup).
// Compiled with _GNU_SOURCE. Every function returns -errno on failure (-EINVAL for an address
// that is not a numeric IPv4 or IPv6 literal).
#ifndef NUCLEIC_CSHIMS_TCP_H
#define NUCLEIC_CSHIMS_TCP_H

/// socket + SO_REUSEADDR + bind(host, port) + listen(backlog), non-blocking and close-on-exec.
/// `port` 0 picks a free port; `*bound_port` receives the port bound. Returns the descriptor.
int nucleic_tcp_listen(const char *host, int port, int backlog, int *bound_port);

/// accept4(fd, SOCK_CLOEXEC | SOCK_NONBLOCK) with TCP_NODELAY set on the new socket; writes the
/// peer's address as "a.b.c.d:port" or "[v6]:port" into `peer` (`capacity` bytes, NUL-terminated).
/// Returns the new descriptor.
int nucleic_tcp_accept(int fd, char *peer, int capacity);

/// A blocking, close-on-exec TCP connection to host:port (a numeric literal), TCP_NODELAY set.
/// Returns the descriptor.
int nucleic_tcp_connect(const char *host, int port);

#endif
