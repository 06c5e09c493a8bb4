// What Swift's Glibc module does not import: posix_spawn with chdir/setsid, pidfd, pipe2,
// prctl(PR_SET_CHILD_SUBREAPER) and the wait-status macros. Compiled with _GNU_SOURCE.
#ifndef NUCLEIC_CSHIMS_H
#define NUCLEIC_CSHIMS_H

#include <sys/types.h>

/// Options for `nucleic_spawn`.
enum {
    /// Put the child in a new process group of its own (pgid = pid).
    NUCLEIC_SPAWN_NEW_PGROUP = 1 << 0,
    /// Start a new session (setsid); implies a new process group. Used by detached shims.
    NUCLEIC_SPAWN_NEW_SESSION = 1 << 1,
};

/// Spawns `path` with `argv`/`envp` (NULL-terminated) in `cwd` (NULL: inherit), with the given
/// descriptors as the child's 0, 1 and 2 (-1: /dev/null) and no other descriptor of this process
/// (everything from 3 up is closed in the child). The child gets an empty signal mask and
/// every signal at its default disposition (SIGPIPE included). Searches PATH when `path` has no
/// slash. Returns the pid, or -errno.
pid_t nucleic_spawn(const char *path, char *const argv[], char *const envp[], const char *cwd,
                    int stdin_fd, int stdout_fd, int stderr_fd, int flags);

/// pipe2(fds, O_CLOEXEC [| O_NONBLOCK]). Returns 0 or -errno.
int nucleic_pipe_cloexec(int fds[2], int nonblocking);

/// pidfd_open(2). Returns the descriptor or -errno.
int nucleic_pidfd_open(pid_t pid);

/// pidfd_send_signal(2): signals exactly the process behind `pidfd` (never a recycled pid).
/// Returns 0 or -errno (ESRCH once the process has been reaped).
int nucleic_pidfd_send_signal(int pidfd, int sig);

/// waitid(P_PIDFD, pidfd, WEXITED): reaps exactly the process behind `pidfd`, blocking until it
/// has exited. Sets `*signaled` to 1 and `*value` to the signal if it was killed, else to 0 and
/// the exit code. Returns 0 or -errno (ECHILD: someone else reaped it already).
int nucleic_reap_pidfd(int pidfd, int *signaled, int *value);

/// Names the calling thread (at most 15 bytes are kept), for `top -H` and debuggers.
void nucleic_set_thread_name(const char *name);
/// Copies the calling thread's name (PR_GET_NAME) into `buffer`, which holds at least 16 bytes.
void nucleic_get_thread_name(char *buffer);

/// prctl(PR_SET_CHILD_SUBREAPER, 1). Returns 0 or -errno.
int nucleic_set_child_subreaper(void);

/// Ignore SIGPIPE in this process (a write to a dead agent's stdin must not kill the host).
void nucleic_ignore_sigpipe(void);

int nucleic_wifexited(int status);
int nucleic_wexitstatus(int status);
int nucleic_wifsignaled(int status);
int nucleic_wtermsig(int status);

// Unix-domain socket helpers (NucleicSync).
#include "CShimsSocket.h"
#include "CShimsTCP.h"

#endif
