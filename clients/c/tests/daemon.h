/* The test programs' real framerated: started ($FRAMERATED_BIN_DIR/framerated)
 * on a socket in a temporary directory, waited for by polling Health/Check
 * with backoff, stopped with SIGTERM, restarted on the same path; and the
 * connect and register helpers that fail the test when they fail. */
#ifndef FR_TEST_DAEMON_H
#define FR_TEST_DAEMON_H

#include "fr_internal.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- the daemon -------------------------------------------------------------- */

typedef struct daemon_proc {
    char bin[PATH_MAX];
    char dir[64];
    char socket[128];
    pid_t pid;
    int starts;
    double started_at; /* CLOCK_MONOTONIC when the latest daemon was spawned */
    char *extra[6];    /* more flags, NULL-terminated */
} daemon_proc;

static daemon_proc daemon_;

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void sleep_s(double seconds) {
    struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
    nanosleep(&ts, NULL);
}

/* 1 when a Health/Check on `path` answers SERVING. */
static inline int health_ok(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    size_t n = strlen(path);
    if (n >= sizeof addr.sun_path) {
        close(fd);
        return 0;
    }
    memcpy(addr.sun_path, path, n + 1);
    int ok = 0;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0) {
        const char *req = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"grpc.health.v1.Health/Check\"}\n";
        if (send(fd, req, strlen(req), MSG_NOSIGNAL) == (ssize_t)strlen(req)) {
            char buf[512];
            size_t len = 0;
            struct pollfd pfd = { fd, POLLIN, 0 };
            while (len < sizeof buf - 1 && poll(&pfd, 1, 1000) == 1) {
                ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
                if (n <= 0) break;
                len += (size_t)n;
                if (memchr(buf, '\n', len)) break;
            }
            buf[len] = '\0';
            ok = strstr(buf, "\"SERVING\"") != NULL;
        }
    }
    close(fd);
    return ok;
}

static inline void daemon_start(daemon_proc *d) {
    char log[160];
    snprintf(log, sizeof log, "%s/framerated-%d.log", d->dir, d->starts++);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    char *argv[] = { d->bin, "--socket", d->socket, "--log-target", "stderr", d->extra[0], d->extra[1], d->extra[2],
                    d->extra[3], d->extra[4], NULL };
    d->started_at = now_s();
    if (posix_spawn(&d->pid, d->bin, &actions, NULL, argv, environ) != 0) {
        fprintf(stderr, "cannot start %s: %s (build it with `swift build --product framerated` or set FRAMERATED_BIN_DIR)\n",
                d->bin, strerror(errno));
        exit(2);
    }
    posix_spawn_file_actions_destroy(&actions);
    double deadline = now_s() + 20, delay = 0.005;
    while (!health_ok(d->socket)) {
        int status;
        if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
            fprintf(stderr, "framerated exited during start-up; see %s\n", log);
            exit(2);
        }
        if (now_s() > deadline) {
            fprintf(stderr, "framerated did not answer on %s within 20 s; see %s\n", d->socket, log);
            kill(d->pid, SIGKILL);
            exit(2);
        }
        sleep_s(delay);
        delay = delay * 2 > 0.2 ? 0.2 : delay * 2;
    }
}

/* 1 when the latest daemon's log holds `text`. */
static inline int log_contains(const daemon_proc *d, const char *text) {
    char log[160], buf[65536];
    snprintf(log, sizeof log, "%s/framerated-%d.log", d->dir, d->starts - 1);
    FILE *file = fopen(log, "r");
    if (file == NULL) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, file);
    fclose(file);
    buf[n] = '\0';
    return strstr(buf, text) != NULL;
}

static inline void daemon_stop(daemon_proc *d) {
    if (d->pid <= 0) return;
    kill(d->pid, SIGTERM);
    double deadline = now_s() + 10, delay = 0.005;
    int status;
    while (waitpid(d->pid, &status, WNOHANG) != d->pid) {
        if (now_s() > deadline) {
            kill(d->pid, SIGKILL);
            waitpid(d->pid, &status, 0);
            break;
        }
        sleep_s(delay);
        delay = delay * 2 > 0.1 ? 0.1 : delay * 2;
    }
    d->pid = 0;
}

static inline void daemon_restart(daemon_proc *d) {
    daemon_stop(d);
    daemon_start(d);
}

static inline void cleanup(void) {
    daemon_stop(&daemon_);
    if (daemon_.dir[0]) {
        char command[128];
        snprintf(command, sizeof command, "rm -rf '%s'", daemon_.dir);
        if (system(command) != 0) fprintf(stderr, "could not remove %s\n", daemon_.dir);
    }
}

/* ---- helpers ----------------------------------------------------------------- */

static inline fr_conn *connect_ok(void) {
    fr_conn *conn = NULL;
    int rc = fr_connect(daemon_.socket, &conn);
    CHECK_MSG(rc == FR_OK, "fr_connect: %s", fr_strerror(rc));
    if (rc != FR_OK) exit(1);
    return conn;
}

static inline fr_link *register_ok(fr_conn *conn, double minimum, double maximum, double preferred, int hfr, int paused, const char *label) {
    fr_link_options opt = FR_LINK_OPTIONS_INIT;
    opt.range = (fr_range){ minimum, maximum, preferred };
    opt.high_frame_rate = hfr;
    opt.paused = paused;
    opt.label = label;
    fr_link *link = NULL;
    int rc = fr_register(conn, &opt, &link);
    CHECK_MSG(rc == FR_OK, "fr_register: %s: %s", fr_strerror(rc), fr_last_error(conn)->message);
    if (rc != FR_OK) exit(1);
    return link;
}

/* Starts daemon_ in a fresh temporary directory; removes it at exit. */
static inline void daemon_setup(void) {
    const char *bin_dir = getenv("FRAMERATED_BIN_DIR");
    snprintf(daemon_.bin, sizeof daemon_.bin, "%s/framerated", bin_dir && *bin_dir ? bin_dir : ".build/debug");
    snprintf(daemon_.dir, sizeof daemon_.dir, "/tmp/frc-XXXXXX");
    if (mkdtemp(daemon_.dir) == NULL) {
        perror("mkdtemp");
        exit(2);
    }
    snprintf(daemon_.socket, sizeof daemon_.socket, "%s/framerated.sock", daemon_.dir);
    atexit(cleanup);
    daemon_start(&daemon_);
    printf("framerated %s on %s\n", daemon_.bin, daemon_.socket);
}

#endif
