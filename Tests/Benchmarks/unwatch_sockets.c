/*
 * unwatch_sockets.c: a measuring tool, not part of framerated or of `make bench`.
 *
 * Takes every socket out of a running process's largest epoll set (framerated's: NIO's
 * event loop, where each connection is watched for requests), from outside the process,
 * once that set holds at least MINIMUM entries (its eventfd and timerfd count too) and
 * 0.3 s more have passed (so that the last connections are in and their Register read). From then on the daemon still writes ticks
 * to those connections but no longer reads them: what the daemon would be with a socket
 * for ticks that nothing watches. Its purpose is to measure what the watching costs the
 * clients that read the ticks (docs/performance-log.md, 2026-12-02). The connections'
 * requests go unread afterwards, so run it only against a daemon started for the
 * measurement, with framebench's probes off:
 *
 *   gcc -O2 -Wall -o /tmp/unwatch_sockets Tests/Benchmarks/unwatch_sockets.c
 *   B=$(swift build -c release --show-bin-path)
 *   $B/framebench load --spawn-daemon --links 2000 --duration 10 --processes 2 --probe-interval 0 --json > run.json &
 *   until p=$(pgrep -nx framerated); do sleep 0.01; done; /tmp/unwatch_sockets "$p" 2000; wait
 *
 * (as root, or with CAP_SYS_PTRACE over the daemon: pidfd_getfd needs ptrace rights)
 *
 * How: pidfd_getfd (Linux 5.6) fetches the epoll set and each
 * watched socket; a socket is moved to the descriptor number the daemon registered it
 * under, since epoll finds an entry by file and number, then removed with EPOLL_CTL_DEL.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { MAX_ENTRIES = 70000, HIGH_FD = 19000 };

/* The descriptors epoll set `fd` of `pid` watches (its fdinfo's "tfd:" lines), up to `max` into `out`. */
static int watched(int pid, int fd, int *out, int max) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", pid, fd);
    FILE *file = fopen(path, "r");
    if (!file) return 0;
    char line[256];
    int count = 0;
    while (fgets(line, sizeof line, file)) {
        int target;
        if (sscanf(line, "tfd: %d", &target) == 1) {
            if (out && count < max) out[count] = target;
            count++;
        }
    }
    fclose(file);
    return count;
}

/* Whether descriptor `fd` of `pid` links to something starting with `prefix`. */
static int links_to(int pid, int fd, const char *prefix) {
    char path[64], target[128];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd);
    ssize_t length = readlink(path, target, sizeof target - 1);
    if (length <= 0) return 0;
    target[length] = 0;
    return strncmp(target, prefix, strlen(prefix)) == 0;
}

/* The descriptor of `pid`'s epoll set with the most entries, and that count. */
static int largest_epoll_set(int pid, int *entries) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", pid);
    DIR *dir = opendir(path);
    if (!dir) { perror("opendir /proc/PID/fd"); exit(1); }
    int best = -1;
    *entries = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        int fd = atoi(entry->d_name);
        if (entry->d_name[0] == '.' || !links_to(pid, fd, "anon_inode:[eventpoll]")) continue;
        int count = watched(pid, fd, NULL, 0);
        if (count > *entries) { *entries = count; best = fd; }
    }
    closedir(dir);
    return best;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s PID MINIMUM\n", argv[0]); return 2; }
    int pid = atoi(argv[1]), minimum = atoi(argv[2]);
    /* The daemon's descriptor numbers must be usable here too. */
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) { perror("getrlimit"); return 1; }
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) { perror("setrlimit"); return 1; }
    if (limit.rlim_cur <= HIGH_FD + 1) {
        fprintf(stderr, "RLIMIT_NOFILE's hard limit %llu leaves no room above %d\n", (unsigned long long)limit.rlim_cur, HIGH_FD);
        return 1;
    }

    int entries = 0, set = -1;
    for (int tries = 0; tries < 30000 && entries < minimum; tries++) {  /* a minute or more */
        set = largest_epoll_set(pid, &entries);
        if (entries < minimum) usleep(2000);
    }
    if (entries < minimum) { fprintf(stderr, "the largest epoll set has %d entries, fewer than %d\n", entries, minimum); return 1; }
    usleep(300000);

    static int targets[MAX_ENTRIES];
    int count = watched(pid, set, targets, MAX_ENTRIES);
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) { perror("pidfd_open"); return 1; }
    int epoll = (int)syscall(SYS_pidfd_getfd, pidfd, set, 0);
    if (epoll < 0) { perror("pidfd_getfd (the epoll set)"); return 1; }
    /* Moved out of the way of the daemon's numbers, which the sockets take below. */
    int high_pidfd = fcntl(pidfd, F_DUPFD_CLOEXEC, HIGH_FD);
    int high_epoll = fcntl(epoll, F_DUPFD_CLOEXEC, HIGH_FD + 1);
    if (high_pidfd < 0 || high_epoll < 0) { perror("fcntl F_DUPFD"); return 1; }
    close(pidfd);
    close(epoll);
    pidfd = high_pidfd;
    epoll = high_epoll;

    int removed = 0, beyond = 0;
    for (int i = 0; i < count && i < MAX_ENTRIES; i++) {
        int target = targets[i];
        if (target < 3 || !links_to(pid, target, "socket:")) continue;
        if (target >= HIGH_FD) { beyond++; continue; }
        int fd = (int)syscall(SYS_pidfd_getfd, pidfd, target, 0);
        if (fd < 0) { perror("pidfd_getfd (a socket)"); continue; }
        if (fd != target) {
            if (dup2(fd, target) < 0) { perror("dup2"); close(fd); continue; }
            close(fd);
        }
        if (epoll_ctl(epoll, EPOLL_CTL_DEL, target, NULL) == 0) removed++;
        else perror("EPOLL_CTL_DEL");
        close(target);
    }
    fprintf(stderr, "epoll set %d of pid %d watched %d descriptors; %d sockets removed\n", set, pid, count, removed);
    if (beyond > 0) fprintf(stderr, "%d sockets numbered %d or more were left watched\n", beyond, HIGH_FD);
    return removed > 0 ? 0 : 1;
}
