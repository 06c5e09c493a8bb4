#include "CShims.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

// P_PIDFD is 3 since Linux 5.4; older glibc headers do not name it.
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

extern char **environ;

pid_t nucleic_spawn(const char *path, char *const argv[], char *const envp[], const char *cwd,
                    int stdin_fd, int stdout_fd, int stderr_fd, int flags) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) return -rc;
    rc = posix_spawnattr_init(&attr);
    if (rc != 0) { posix_spawn_file_actions_destroy(&actions); return -rc; }

    // A descriptor at 0-2 (a host started with its stdio closed) would be clobbered by an
    // earlier dup2 or keep O_CLOEXEC when dup2'ed onto itself: move such ones above 2 first.
    int fds[3] = {stdin_fd, stdout_fd, stderr_fd};
    int moved[3] = {-1, -1, -1};
    for (int i = 0; i < 3; i++) {
        if (fds[i] >= 0 && fds[i] < 3) {
            moved[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
            if (moved[i] < 0) { rc = errno; break; }
            fds[i] = moved[i];
        }
    }
    for (int target = 0; target < 3 && rc == 0; target++) {
        if (fds[target] < 0) {
            rc = posix_spawn_file_actions_addopen(&actions, target, "/dev/null",
                                                  target == 0 ? O_RDONLY : O_WRONLY, 0);
        } else {
            rc = posix_spawn_file_actions_adddup2(&actions, fds[target], target);
        }
    }
    // Nothing else crosses over: a descriptor some library or caller left without O_CLOEXEC
    // would otherwise live on in every shim and agent (a test runner's pipe among them, which
    // then waits for a shim that outlives its daemon by design).
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (rc == 0 && cwd != NULL) rc = posix_spawn_file_actions_addchdir_np(&actions, cwd);

    sigset_t empty, all;
    sigemptyset(&empty);
    sigfillset(&all);
    short attr_flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (flags & NUCLEIC_SPAWN_NEW_SESSION) {
        attr_flags |= POSIX_SPAWN_SETSID;
    } else if (flags & NUCLEIC_SPAWN_NEW_PGROUP) {
        attr_flags |= POSIX_SPAWN_SETPGROUP;
        if (rc == 0) rc = posix_spawnattr_setpgroup(&attr, 0);
    }
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attr, &empty);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr, &all);
    if (rc == 0) rc = posix_spawnattr_setflags(&attr, attr_flags);

    pid_t pid = -1;
    if (rc == 0) {
        char *const *env = envp ? envp : environ;
        if (strchr(path, '/') != NULL) rc = posix_spawn(&pid, path, &actions, &attr, argv, env);
        else rc = posix_spawnp(&pid, path, &actions, &attr, argv, env);
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    for (int i = 0; i < 3; i++) if (moved[i] >= 0) close(moved[i]);
    return rc == 0 ? pid : -rc;
}

int nucleic_pipe_cloexec(int fds[2], int nonblocking) {
    return pipe2(fds, O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0)) == 0 ? 0 : -errno;
}

int nucleic_pidfd_open(pid_t pid) {
    long fd = syscall(SYS_pidfd_open, pid, 0);
    return fd >= 0 ? (int)fd : -errno;
}

int nucleic_pidfd_send_signal(int pidfd, int sig) {
    return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) == 0 ? 0 : -errno;
}

int nucleic_reap_pidfd(int pidfd, int *signaled, int *value) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, WEXITED) != 0) return -errno;
    *signaled = (info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED) ? 1 : 0;
    *value = info.si_status;
    return 0;
}

void nucleic_set_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }
void nucleic_get_thread_name(char *buffer) { buffer[0] = 0; prctl(PR_GET_NAME, buffer, 0, 0, 0); buffer[15] = 0; }

int nucleic_set_child_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : -errno;
}

void nucleic_ignore_sigpipe(void) { signal(SIGPIPE, SIG_IGN); }

int nucleic_wifexited(int status) { return WIFEXITED(status); }
int nucleic_wexitstatus(int status) { return WEXITSTATUS(status); }
int nucleic_wifsignaled(int status) { return WIFSIGNALED(status); }
int nucleic_wtermsig(int status) { return WTERMSIG(status); }
