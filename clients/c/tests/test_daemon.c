/* libframerate against the real framerated: this program starts the daemon
 * ($FRAMERATED_BIN_DIR/framerated) on a socket in a fresh temporary directory,
 * waits for it to answer (polling with backoff), runs every call, and restarts
 * the daemon on the same path under a live client to test the reconnect. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include "fr_internal.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

static int register_rc(fr_conn *conn, double minimum, double maximum, double preferred, int64_t display, const char *label) {
    fr_link_options opt = FR_LINK_OPTIONS_INIT;
    opt.range = (fr_range){ minimum, maximum, preferred };
    opt.display = display;
    opt.label = label;
    fr_link *link = NULL;
    return fr_register(conn, &opt, &link);
}

/* Compositor/GetState, parsed. */
static fr_json_doc *get_state(fr_conn *conn) {
    char *json = NULL;
    int rc = fr_call(conn, "framerate.v1.Compositor/GetState", NULL, &json);
    CHECK_MSG(rc == FR_OK, "GetState: %s", fr_strerror(rc));
    fr_json_doc *doc = NULL;
    if (rc == FR_OK) CHECK(fr_json_parse(json, strlen(json), &doc, NULL) == 0);
    fr_free(json);
    return doc;
}

static const fr_json *state_link(const fr_json_doc *doc, const char *label) {
    const fr_json *displays = fr_json_get(fr_json_root(doc), "displays");
    for (const fr_json *d = displays ? displays->u.kids.first : NULL; d; d = d->next) {
        const fr_json *links = fr_json_get(d, "links");
        for (const fr_json *l = links ? links->u.kids.first : NULL; l; l = l->next) {
            const fr_json *name = fr_json_get(l, "label");
            if (name && name->type == FR_JSON_STRING && strcmp(name->u.str.s, label) == 0) return l;
        }
    }
    return NULL;
}

static size_t state_link_count(const fr_json_doc *doc) {
    const fr_json *displays = fr_json_get(fr_json_root(doc), "displays");
    size_t n = 0;
    for (const fr_json *d = displays ? displays->u.kids.first : NULL; d; d = d->next) {
        const fr_json *links = fr_json_get(d, "links");
        n += links ? links->u.kids.count : 0;
    }
    return n;
}

static double num(const fr_json *object, const char *key) {
    double v = NAN;
    fr_json_double(fr_json_get(object, key), &v);
    return v;
}

static int is_true(const fr_json *object, const char *key) {
    const fr_json *v = fr_json_get(object, key);
    return v && v->type == FR_JSON_TRUE;
}

static void drain(fr_link *link) {
    fr_tick tick;
    while (fr_next_tick(link, &tick, 200) == FR_OK) {
    }
}

/* ---- tests -------------------------------------------------------------------- */

/* Sets `name` to `value`, or unsets it for NULL. */
static void env_set(const char *name, const char *value) {
    if (value) setenv(name, value, 1);
    else unsetenv(name);
}

/* A socket listening at `path`, or -1. */
static int listen_at(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    if (fd < 0 || strlen(path) >= sizeof addr.sun_path) return -1;
    memcpy(addr.sun_path, path, strlen(path) + 1);
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 4) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int path_is_socket(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

#define SYSTEM_SOCKET "/run/framerated/framerated.sock"

/* docs/protocol.md, "Finding the daemon": explicit, $FRAMERATED_SOCKET, the
 * per-user socket when one exists, else the system socket; root alike. */
static void test_socket_discovery(void) {
    char *saved_socket = getenv("FRAMERATED_SOCKET") ? strdup(getenv("FRAMERATED_SOCKET")) : NULL;
    char *saved_runtime = getenv("XDG_RUNTIME_DIR") ? strdup(getenv("XDG_RUNTIME_DIR")) : NULL;
    char runtime[64] = "/tmp/frxdg-XXXXXX", per_user[128], slash[80], path[256];
    CHECK(mkdtemp(runtime) != NULL);
    snprintf(per_user, sizeof per_user, "%s/framerated.sock", runtime);
    snprintf(slash, sizeof slash, "%s/", runtime);

    setenv("FRAMERATED_SOCKET", "/x/env.sock", 1);
    setenv("XDG_RUNTIME_DIR", runtime, 1);
    CHECK(fr_socket_path("/explicit.sock", path, sizeof path) == FR_OK && strcmp(path, "/explicit.sock") == 0);
    CHECK(fr_socket_path(NULL, path, sizeof path) == FR_OK && strcmp(path, "/x/env.sock") == 0);
    CHECK(fr_socket_path("", path, sizeof path) == FR_OK && strcmp(path, "/x/env.sock") == 0);
    setenv("FRAMERATED_SOCKET", "", 1);
    /* No socket at the per-user path (nothing, then a regular file): the system daemon. */
    CHECK(fr_socket_path(NULL, path, sizeof path) == FR_OK && strcmp(path, SYSTEM_SOCKET) == 0);
    FILE *file = fopen(per_user, "w");
    CHECK(file != NULL);
    if (file) fclose(file);
    CHECK(fr_socket_path(NULL, path, sizeof path) == FR_OK && strcmp(path, SYSTEM_SOCKET) == 0);
    unlink(per_user);
    /* A per-user socket: chosen (with or without a trailing slash on the directory). */
    int listener = listen_at(per_user);
    CHECK(listener >= 0);
    CHECK(fr_socket_path(NULL, path, sizeof path) == FR_OK && strcmp(path, per_user) == 0);
    setenv("XDG_RUNTIME_DIR", slash, 1);
    CHECK(fr_socket_path(NULL, path, sizeof path) == FR_OK && strcmp(path, per_user) == 0);
    /* No runtime directory (root's usual case): the system socket; no /tmp fallback. */
    unsetenv("XDG_RUNTIME_DIR");
    CHECK(fr_socket_path(NULL, path, sizeof path) == FR_OK && strcmp(path, SYSTEM_SOCKET) == 0);
    CHECK(fr_socket_path("/a/rather/long/path.sock", path, 8) == FR_EINVAL);

    /* A stale per-user socket (its daemon is gone) is still the one tried, and the error says so. */
    setenv("XDG_RUNTIME_DIR", runtime, 1);
    close(listener);
    fr_conn *conn = (fr_conn *)1;
    CHECK(fr_connect(NULL, &conn) == FR_ENOTRUNNING && conn == NULL);
    snprintf(path, sizeof path, "nothing is listening on %s, your per-user daemon's socket", per_user);
    CHECK_MSG(strstr(fr_connect_error(), path) != NULL, "%s", fr_connect_error());
    CHECK(strstr(fr_connect_error(), "systemctl") == NULL);
    unlink(per_user);
    /* Nothing per-user: both paths are named (unless a system daemon runs on this machine). */
    if (!path_is_socket(SYSTEM_SOCKET)) {
        CHECK(fr_connect(NULL, &conn) == FR_ENOTRUNNING && conn == NULL);
        snprintf(path, sizeof path, "tried %s (no socket there: no per-user daemon) and " SYSTEM_SOCKET " (nothing listening",
                 per_user);
        CHECK_MSG(strstr(fr_connect_error(), path) != NULL, "%s", fr_connect_error());
        CHECK(strstr(fr_connect_error(), "systemctl start framerated.socket") != NULL);
        unsetenv("XDG_RUNTIME_DIR");
        CHECK(fr_connect(NULL, &conn) == FR_ENOTRUNNING && conn == NULL);
        CHECK_MSG(strstr(fr_connect_error(), "tried " SYSTEM_SOCKET " (nothing listening: no system daemon; XDG_RUNTIME_DIR "
                                             "is not set") != NULL, "%s", fr_connect_error());
    }
    rmdir(runtime);

    /* The per-user daemon is found: the test daemon's socket is <dir>/framerated.sock. */
    unsetenv("FRAMERATED_SOCKET");
    setenv("XDG_RUNTIME_DIR", daemon_.dir, 1);
    char *result = NULL;
    CHECK(fr_connect(NULL, &conn) == FR_OK && strcmp(fr_conn_path(conn), daemon_.socket) == 0);
    CHECK(*fr_connect_error() == '\0');
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", NULL, &result) == FR_OK && strncmp(result, "{\"status\":\"SERVING\"", 19) == 0);
    fr_free(result);
    fr_close(conn);
    /* $FRAMERATED_SOCKET finds the daemon. */
    unsetenv("XDG_RUNTIME_DIR");
    setenv("FRAMERATED_SOCKET", daemon_.socket, 1);
    CHECK(fr_connect(NULL, &conn) == FR_OK && strcmp(fr_conn_path(conn), daemon_.socket) == 0);
    result = NULL;
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", NULL, &result) == FR_OK && strncmp(result, "{\"status\":\"SERVING\"", 19) == 0);
    fr_free(result);
    fr_close(conn);
    env_set("FRAMERATED_SOCKET", saved_socket);
    env_set("XDG_RUNTIME_DIR", saved_runtime);
    free(saved_socket);
    free(saved_runtime);
}

/* Root, the framerated user and the caller are trusted; nobody else. */
static void test_trust_rule(void) {
    CHECK(fr__trusts_uid(0, 1000, 1, 999) && fr__trusts_uid(1000, 1000, 1, 999) && fr__trusts_uid(999, 1000, 1, 999));
    CHECK(!fr__trusts_uid(1001, 1000, 1, 999) && !fr__trusts_uid(65534, 1000, 1, 999));
    CHECK(fr__trusts_uid(0, 1000, 0, 0) && fr__trusts_uid(1000, 1000, 0, 0));
    CHECK(!fr__trusts_uid(999, 1000, 0, 999)); /* no framerated user: its would-be uid is nobody's */
    CHECK(!fr__trusts_uid(1000, 0, 0, 0));
}

/* A listener run as uid 65534 (the test runs as root): refused, naming the uid and path. */
static void test_untrusted_daemon(void) {
    if (geteuid() != 0) {
        printf("     (not root: cannot run a listener as another user)\n");
        return;
    }
    char dir[64] = "/tmp/frfake-XXXXXX", path[128];
    CHECK(mkdtemp(dir) != NULL);
    CHECK(chmod(dir, 0755) == 0 && chown(dir, 65534, 65534) == 0);
    snprintf(path, sizeof path, "%s/framerated.sock", dir);
    int ready[2];
    CHECK(pipe(ready) == 0);
    pid_t child = fork();
    if (child == 0) {
        close(ready[0]);
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
        int fd = listen_at(path);
        if (fd < 0) _exit(4);
        if (write(ready[1], "r", 1) != 1) _exit(5);
        for (;;) pause();
    }
    close(ready[1]);
    char byte = 0;
    CHECK(child > 0 && read(ready[0], &byte, 1) == 1 && byte == 'r');
    close(ready[0]);

    char expected[400];
    snprintf(expected, sizeof expected, "refusing the daemon at %s: the process listening there runs as uid 65534, "
             "which is neither root, the framerated service user nor you", path);
    fr_conn *conn = (fr_conn *)1;
    CHECK(fr_connect(path, &conn) == FR_EUNTRUSTED && conn == NULL);
    CHECK_MSG(strncmp(fr_connect_error(), expected, strlen(expected)) == 0, "%s", fr_connect_error());
    char *saved = getenv("FRAMERATED_SOCKET") ? strdup(getenv("FRAMERATED_SOCKET")) : NULL;
    setenv("FRAMERATED_SOCKET", path, 1);
    CHECK(fr_connect(NULL, &conn) == FR_EUNTRUSTED && conn == NULL);
    CHECK_MSG(strncmp(fr_connect_error(), expected, strlen(expected)) == 0, "%s", fr_connect_error());
    env_set("FRAMERATED_SOCKET", saved);
    free(saved);
    CHECK(strstr(fr_strerror(FR_EUNTRUSTED), "neither root, the framerated service user nor you") != NULL);

    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    unlink(path);
    rmdir(dir);
}

static void test_connect_failures(void) {
    char path[200];
    fr_conn *conn = (fr_conn *)1;
    snprintf(path, sizeof path, "%s/nobody-home.sock", daemon_.dir);
    CHECK(fr_connect(path, &conn) == FR_ENOTRUNNING && conn == NULL);
    char expected[600];
    snprintf(expected, sizeof expected, "framerated is not running: nothing is listening on %s (the socket asked for). "
             "Start a daemon there with `framerated --socket %s`", path, path);
    CHECK_MSG(strncmp(fr_connect_error(), expected, strlen(expected)) == 0, "%s", fr_connect_error());
    CHECK(strstr(fr_connect_error(), "systemctl") == NULL); /* only that path was tried */
    snprintf(path, sizeof path, "%s/framerated-0.log", daemon_.dir); /* a regular file */
    CHECK(fr_connect(path, &conn) == FR_ECONNECT);
    CHECK_MSG(strstr(fr_connect_error(), "the path exists but is not a socket") != NULL, "%s", fr_connect_error());
    char long_path[300];
    memset(long_path, 'x', sizeof long_path - 1);
    long_path[0] = '/';
    long_path[sizeof long_path - 1] = '\0';
    CHECK(fr_connect(long_path, &conn) == FR_ECONNECT);
    CHECK(fr_connect(NULL, NULL) == FR_EINVAL);
    for (int e = 0; e >= FR_EUNTRUSTED - 1; e--) CHECK(fr_strerror(e) != NULL && *fr_strerror(e));
}

static void test_register_and_ticks(void) {
    fr_conn *conn = connect_ok();
    fr_link *link = register_ok(conn, 80, 120, 120, 1, 0, "c-ticks");
    fr_link_state st;
    CHECK(fr_link_get(link, &st) == FR_OK && st.id >= 1 && st.display == 0 && !st.ended && !st.paused);
    CHECK(st.refresh_rate == 120.0 && st.callback_rate == 120.0);
    fr_tick ticks[20];
    for (int i = 0; i < 20; i++) {
        int rc = fr_next_tick(link, &ticks[i], 2000);
        CHECK_MSG(rc == FR_OK, "%s", fr_strerror(rc));
        if (rc != FR_OK) break;
        double now = now_s();
        CHECK_MSG(fabs(ticks[i].timestamp - now) < 0.5, "timestamp %.6f vs CLOCK_MONOTONIC %.6f", ticks[i].timestamp, now);
        CHECK(ticks[i].link == st.id);
        if (i) {
            CHECK(ticks[i].sequence == ticks[i - 1].sequence + ticks[i].skipped + 1);
            CHECK(ticks[i].timestamp > ticks[i - 1].timestamp);
        }
    }
    fr_tick *t = &ticks[19];
    CHECK(t->refresh_rate == 120.0 && t->callback_rate == 120.0);
    CHECK(fabs(t->duration - 1.0 / 120) < 1e-6);
    CHECK(fabs(t->target_timestamp - t->timestamp - 1.0 / t->callback_rate) < 1e-6);
    fr_json_doc *state = get_state(conn);
    const fr_json *entry = state_link(state, "c-ticks");
    uint64_t pid = 0;
    CHECK(entry && fr_json_u64(fr_json_get(entry, "pid"), &pid) == 0 && pid == (uint64_t)getpid());
    CHECK(entry && is_true(entry, "highFrameRate"));
    fr_json_free(state);
    /* Without the entitlement the phone profile gives 60 Hz. */
    fr_link *plain = register_ok(conn, 80, 120, 120, 0, 0, "c-plain");
    CHECK(fr_link_get(plain, &st) == FR_OK && st.callback_rate == 60.0);
    fr_close(conn);
}

static void test_register_errors(void) {
    fr_conn *conn = connect_ok();
    const fr_error *e = fr_last_error(conn);
    CHECK(register_rc(conn, 0, 120, 0, -1, NULL) == FR_ERPC);
    CHECK(e->code == -32602 && e->grpc_code == FR_GRPC_INVALID_ARGUMENT && strcmp(e->status, "INVALID_ARGUMENT") == 0);
    CHECK(strcmp(e->field, "range.minimum") == 0 && strstr(e->message, "minimum") != NULL);
    CHECK(register_rc(conn, 90, 60, 0, -1, NULL) == FR_ERPC && strcmp(e->field, "range.maximum") == 0);
    CHECK(register_rc(conn, 60, 2000, 0, -1, NULL) == FR_ERPC && strcmp(e->field, "range.maximum") == 0);
    CHECK(register_rc(conn, 30, 60, 120, -1, NULL) == FR_ERPC && strcmp(e->field, "range.preferred") == 0);
    CHECK(register_rc(conn, NAN, 60, 0, -1, NULL) == FR_EINVAL);
    CHECK(register_rc(conn, 30, INFINITY, 0, -1, NULL) == FR_EINVAL);
    CHECK(register_rc(conn, 30, 60, 0, 7, NULL) == FR_ERPC && e->code == 5 && e->grpc_code == FR_GRPC_NOT_FOUND);
    char label[301];
    memset(label, 'x', 300);
    label[300] = '\0';
    CHECK(register_rc(conn, 30, 60, 0, -1, label) == FR_ERPC && strcmp(e->field, "label") == 0);
    /* Not UTF-8 (Latin-1 e-acute): refused here, at once, not sent for the daemon to
     * answer with a parse error that names no request (the call used to time out). */
    CHECK(register_rc(conn, 30, 60, 0, -1, "caf\xe9") == FR_EINVAL);
    CHECK(register_rc(conn, 30, 60, 0, -1, "\xed\xa0\x80") == FR_EINVAL); /* a UTF-16 surrogate */
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check\xff", NULL, NULL) == FR_EINVAL);
    char *health = NULL; /* the connection is unharmed: no stray error waits on it */
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", NULL, &health) == FR_OK && strncmp(health, "{\"status\":\"SERVING\"", 19) == 0);
    free(health);
    CHECK(register_rc(conn, 30, 60, 0, -1, "caf\xc3\xa9 \"quoted\" \\ \t") == FR_OK);
    fr_json_doc *state = get_state(conn);
    CHECK(state_link(state, "caf\xc3\xa9 \"quoted\" \\ \t") != NULL);
    fr_json_free(state);
    fr_close(conn);
}

/* A Register that timed out leaves no link behind: its late reply is answered with an
 * Invalidate (the link would otherwise vote on the daemon with nobody reading it). */
static void test_timed_out_register_is_invalidated(void) {
    fr_conn *conn = connect_ok();
    int rc = FR_OK;
    /* With no time to wait, the reply usually comes after the call gave up; when it
     * happens to be read in time, that link is ended and the call tried again. */
    for (int attempt = 0; attempt < 100; attempt++) {
        CHECK(fr_set_request_timeout(conn, 0) == FR_OK);
        fr_link_options opt = FR_LINK_OPTIONS_INIT;
        opt.range = (fr_range){ 30, 60, 0 };
        opt.label = "c-abandoned";
        fr_link *link = NULL;
        rc = fr_register(conn, &opt, &link);
        CHECK(fr_set_request_timeout(conn, 5000) == FR_OK);
        if (rc != FR_OK) break;
        CHECK(fr_invalidate(link) == FR_OK);
    }
    CHECK_MSG(rc == FR_ETIMEDOUT, "register: %s", fr_strerror(rc));
    /* The first GetState reads the late reply first (and sends the Invalidate); the
     * second sees the daemon after it. */
    fr_json_free(get_state(conn));
    fr_json_doc *state = get_state(conn);
    CHECK(state_link(state, "c-abandoned") == NULL);
    fr_json_free(state);
    fr_close(conn);
}

static void test_update_pause_resume(void) {
    fr_conn *conn = connect_ok();
    fr_link *link = register_ok(conn, 80, 120, 120, 1, 0, "c-update");
    fr_tick tick;
    CHECK(fr_next_tick(link, &tick, 2000) == FR_OK);
    fr_range range = { 30, 60, 30 };
    fr_link_state st;
    CHECK(fr_update(link, &range, -1) == FR_OK);
    CHECK(fr_link_get(link, &st) == FR_OK && st.callback_rate == 30.0 && st.range.preferred == 30.0);
    fr_range bad = { 30, 60, 90 };
    CHECK(fr_update(link, &bad, -1) == FR_ERPC && strcmp(fr_last_error(conn)->field, "range.preferred") == 0);
    CHECK(fr_link_get(link, &st) == FR_OK && st.range.preferred == 30.0);
    CHECK(fr_update(link, NULL, 2) == FR_EINVAL);
    CHECK(fr_update(link, NULL, -2) == FR_EINVAL); /* only -1 keeps the flag */
    CHECK(fr_pause(link) == FR_OK && fr_link_get(link, &st) == FR_OK && st.paused);
    fr_json_doc *state = get_state(conn);
    const fr_json *entry = state_link(state, "c-update");
    CHECK(entry && is_true(entry, "paused"));
    CHECK(entry && num(fr_json_get(entry, "range"), "preferred") == 30.0);
    fr_json_free(state);
    drain(link);
    CHECK(fr_next_tick(link, &tick, 300) == FR_ETIMEDOUT);
    CHECK(fr_resume(link) == FR_OK);
    CHECK(fr_next_tick(link, &tick, 2000) == FR_OK && tick.callback_rate > 0);
    fr_close(conn);
}

static void test_frame_done_pacing(void) {
    fr_conn *conn = connect_ok();
    fr_link *link = register_ok(conn, 30, 60, 60, 0, 0, "c-pacing");
    fr_tick first, second, tick;
    CHECK(fr_next_tick(link, &first, 2000) == FR_OK);
    CHECK(fr_frame_done(link, first.sequence) == FR_OK);
    CHECK(fr_next_tick(link, &second, 2000) == FR_OK);
    sleep_s(0.06); /* a 60 ms frame: three and a half intervals */
    CHECK(fr_frame_done(link, second.sequence) == FR_OK);
    do CHECK(fr_next_tick(link, &tick, 2000) == FR_OK);
    while (tick.sequence <= second.sequence);
    CHECK_MSG(tick.skipped >= 2, "skipped %llu", (unsigned long long)tick.skipped);
    char params[96];
    snprintf(params, sizeof params, "{\"link\":%llu,\"sequence\":999999}", (unsigned long long)fr_link_daemon_id(link));
    CHECK(fr_call(conn, "framerate.v1.DisplayLink/FrameDone", params, NULL) == FR_ERPC);
    CHECK(fr_last_error(conn)->code == 11 && fr_last_error(conn)->grpc_code == FR_GRPC_OUT_OF_RANGE);
    fr_close(conn);
}

/* fr_present: each frame shows at its target; a 45 ms stall shows one late frame with
 * its hitch; a frame replaced before its vsync is dropped. */
static void test_present_and_presented(void) {
    fr_conn *conn = connect_ok();
    fr_link *link = register_ok(conn, 60, 60, 60, 0, 0, "c-present");
    fr_tick tick, stalled;
    fr_presented frame;
    CHECK(fr_next_tick(link, &tick, 2000) == FR_OK);
    CHECK(fr_next_presented(link, &frame) == FR_ETIMEDOUT);
    CHECK(fr_present(link, tick.sequence, -1, -1) == FR_OK);
    /* Presented comes at the vsync that shows the frame, after that vsync's tick: read
     * ticks (presenting each, so pacing goes on) until it is there. */
    int found = 0;
    for (int i = 0; i < 20 && !found; i++) {
        CHECK(fr_next_tick(link, &stalled, 2000) == FR_OK);
        while (!found && fr_next_presented(link, &frame) == FR_OK) found = frame.sequence == tick.sequence;
        if (!found) CHECK(fr_present(link, stalled.sequence, -1, -1) == FR_OK);
    }
    CHECK_MSG(found, "no Presented for tick %llu", (unsigned long long)tick.sequence);
    CHECK(frame.link == fr_link_id(link) && !frame.dropped);
    /* At the next vsync: at the target, or before it when the display runs faster than the link. */
    CHECK_MSG(frame.hitch == 0 && frame.presented_time <= frame.expected_time && frame.expected_time == tick.target_timestamp,
              "hitch %.9f presented %.9f expected %.9f target %.9f", frame.hitch, frame.presented_time, frame.expected_time,
              tick.target_timestamp);
    sleep_s(0.045); /* later than the next vsync (16.7 ms): the frame misses it */
    CHECK(fr_present(link, stalled.sequence, -1, -1) == FR_OK);
    found = 0;
    for (int i = 0; i < 20 && !found; i++) {
        CHECK(fr_next_tick(link, &tick, 2000) == FR_OK);
        if (fr_present(link, tick.sequence, -1, -1) != FR_OK) break;
        while (fr_next_presented(link, &frame) == FR_OK)
            if (frame.sequence == stalled.sequence) {
                found = 1;
                break;
            }
    }
    CHECK_MSG(found, "no Presented for the stalled tick %llu", (unsigned long long)stalled.sequence);
    CHECK_MSG(frame.hitch > 0.02 && frame.presented_time > frame.expected_time, "hitch %g", frame.hitch);
    /* A replaced frame: dropped at once. */
    CHECK(fr_next_tick(link, &tick, 2000) == FR_OK);
    CHECK(fr_present(link, tick.sequence, -1, -1) == FR_OK);
    CHECK(fr_present(link, tick.sequence, -1, 0.0) == FR_OK);
    int dropped = 0;
    for (int i = 0; i < 10 && !dropped; i++) {
        CHECK(fr_next_tick(link, &stalled, 2000) == FR_OK);
        while (!dropped && fr_next_presented(link, &frame) == FR_OK) dropped = frame.sequence == tick.sequence && frame.dropped;
    }
    CHECK(dropped && frame.presented_time == 0 && frame.hitch == 0);
    double infinity = 1e308 * 10;
    CHECK(fr_present(link, tick.sequence, infinity, -1) == FR_EINVAL);
    fr_close(conn);
}

/* Frame timelines and frame latency: timelines entries one interval apart starting at
 * target_timestamp, target_presentation_timestamp = timestamp + 2 / callback_rate, a
 * frame aimed with fr_present_vsync shown at that entry's presentation_time, and the
 * validation of fr_link_options / fr_set_frame_timing. */
static void test_frame_timelines(void) {
    fr_conn *conn = connect_ok();
    fr_link_options opt = FR_LINK_OPTIONS_INIT;
    opt.range = (fr_range){ 120, 120, 120 };
    opt.high_frame_rate = 1;
    opt.label = "c-timelines";
    opt.timelines = 3;
    opt.preferred_frame_latency = 2;
    fr_link *link = NULL;
    CHECK(fr_register(conn, &opt, &link) == FR_OK);
    if (link == NULL) return;
    fr_tick tick;
    do {
        CHECK(fr_next_tick(link, &tick, 2000) == FR_OK);
    } while (tick.refresh_rate != 120.0);
    CHECK(tick.timeline_count >= 1 && tick.timeline_count <= 3);
    CHECK(fabs(tick.target_presentation_timestamp - tick.timestamp - 2.0 / tick.callback_rate) < 2e-9);
    for (int i = 0; i < tick.timeline_count; i++) {
        CHECK(fabs(tick.timelines[i].presentation_time - tick.timelines[i].deadline - 1.0 / 120) < 2e-9);
        if (i) CHECK(tick.timelines[i].vsync_id == tick.timelines[i - 1].vsync_id + 1);
    }
    if (tick.timeline_count == 3) CHECK(fabs(tick.timelines[0].deadline - tick.target_timestamp) < 2e-9);
    const fr_frame_timeline aim = tick.timelines[tick.timeline_count - 1];
    CHECK(fr_present_vsync(link, tick.sequence, -1, -1, aim.vsync_id) == FR_OK);
    fr_presented frame;
    int found = 0;
    for (int i = 0; i < 60 && !found; i++) {
        fr_tick later;
        if (fr_next_tick(link, &later, 2000) != FR_OK) break;
        fr_frame_done(link, later.sequence);
        while (fr_next_presented(link, &frame) == FR_OK) found |= frame.sequence == tick.sequence;
    }
    CHECK(found);
    if (found) {
        CHECK(fabs(frame.expected_time - aim.presentation_time) < 2e-9);
        CHECK(frame.presented_time >= aim.presentation_time - 2e-9);
    }
    CHECK(fr_set_frame_timing(link, 8, 0) == FR_EINVAL);
    CHECK(fr_set_frame_timing(link, 0, 3) == FR_EINVAL);
    CHECK(fr_set_frame_timing(link, 1, 1) == FR_OK);
    fr_json_doc *state = get_state(conn);
    const fr_json *entry = state_link(state, "c-timelines");
    uint64_t timelines = 0, latency = 0;
    CHECK(entry && fr_json_u64(fr_json_get(entry, "timelines"), &timelines) == 0 && timelines == 1);
    CHECK(entry && fr_json_u64(fr_json_get(entry, "preferredFrameLatency"), &latency) == 0 && latency == 1);
    fr_json_free(state);
    opt.timelines = 8;
    fr_link *refused = NULL;
    CHECK(fr_register(conn, &opt, &refused) == FR_EINVAL);
    fr_close(conn);
}

/* Numbers go on the wire with '.' whatever the program's locale, also where the decimal
 * point is several bytes: ps_AF's is U+066B (2 bytes in UTF-8). The locale is compiled
 * here with localedef (the `locales` package's sources, which `make deps` installs). */
static void test_numbers_in_a_locale_with_a_multibyte_decimal_point(void) {
    char dir[] = "/tmp/fr-locale-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char command[256];
    snprintf(command, sizeof command, "localedef -c -i ps_AF -f UTF-8 %s/ps_AF.UTF-8 >/dev/null 2>&1", dir);
    (void)system(command); /* -c: warnings do not stop it; whether it worked is checked next */
    CHECK(setenv("LOCPATH", dir, 1) == 0);
    CHECK_MSG(setlocale(LC_NUMERIC, "ps_AF.UTF-8") != NULL, "the ps_AF locale could not be compiled into %s", dir);
    CHECK_MSG(strlen(localeconv()->decimal_point) > 1, "ps_AF's decimal point is not multibyte here");
    fr_conn *conn = connect_ok();
    fr_link *link = register_ok(conn, 10, 120, 60, 1, 0, "c-locale");
    double until = 0;
    CHECK(fr_boost(link, 0.25, NULL, &until) == FR_OK); /* "duration":0.25, not 0\u066b25 */
    fr_range range = { 30.5, 60.5, 48.5 };
    CHECK(fr_update(link, &range, -1) == FR_OK);
    fr_close(conn);
    setlocale(LC_NUMERIC, "C");
    unsetenv("LOCPATH");
    snprintf(command, sizeof command, "rm -rf %s", dir);
    (void)system(command);
}

/* fr_frame_done_velocity: 200 pt/s lowers the panel to 80 Hz (after the 250 ms dwell)
 * while the ticks' callback rate stays 120 Hz; NaN and infinities are FR_EINVAL. */
static void test_content_velocity(void) {
    fr_conn *conn = connect_ok();
    fr_link *link = register_ok(conn, 120, 120, 120, 1, 0, "c-velocity");
    fr_tick tick;
    int lowered = 0;
    double end = now_s() + 0.6;
    while (now_s() < end && fr_next_tick(link, &tick, 2000) == FR_OK) {
        CHECK(tick.callback_rate == 120.0);
        if (tick.refresh_rate == 80.0) lowered++;
        CHECK(fr_frame_done_velocity(link, tick.sequence, 200) == FR_OK);
    }
    CHECK_MSG(lowered > 0, "no tick said the panel is at 80 Hz");
    fr_json_doc *state = get_state(conn);
    const fr_json *displays = fr_json_get(fr_json_root(state), "displays");
    const fr_json *display = displays ? displays->u.kids.first : NULL;
    CHECK(display && num(display, "panelRate") == 80.0 && num(display, "refreshRate") == 120.0);
    fr_json_free(state);
    CHECK(fr_frame_done_velocity(link, tick.sequence, NAN) == FR_EINVAL);
    CHECK(fr_frame_done_velocity(link, tick.sequence, INFINITY) == FR_EINVAL);
    CHECK(fr_frame_done_velocity(link, tick.sequence, -INFINITY) == FR_EINVAL); /* not "none" */
    CHECK(fr_present_velocity(link, tick.sequence, -1, -1, -INFINITY) == FR_EINVAL);
    CHECK(fr_present_velocity(link, tick.sequence, -1, -1, NAN) == FR_EINVAL);
    CHECK(fr_present_velocity(link, tick.sequence, -1, -1, 100) == FR_OK);
    fr_close(conn);
}

static void test_boost(void) {
    fr_conn *conn = connect_ok();
    fr_link *link = register_ok(conn, 10, 120, 60, 1, 0, "c-boost");
    fr_link_state st;
    CHECK(fr_link_get(link, &st) == FR_OK && st.refresh_rate == 60.0);
    double until = 0;
    CHECK(fr_boost(link, 0, NULL, &until) == FR_EINVAL);
    CHECK(fr_boost(link, 5.5, NULL, &until) == FR_EINVAL);
    CHECK(fr_boost(link, NAN, NULL, &until) == FR_EINVAL);
    double before = now_s();
    int rc = fr_boost(link, 0.3, NULL, &until);
    CHECK_MSG(rc == FR_OK, "%s", fr_strerror(rc));
    CHECK_MSG(until >= before + 0.3 - 0.05 && until <= now_s() + 0.3 + 0.05, "boosted until %.6f", until);
    CHECK(fr_link_get(link, &st) == FR_OK && st.refresh_rate == 120.0 && st.callback_rate == 120.0);
    int boosted = 0, after = 0;
    fr_tick tick;
    while (fr_next_tick(link, &tick, 2000) == FR_OK && tick.timestamp < until + 0.1) {
        if (tick.boosted) {
            boosted++;
            CHECK(tick.callback_rate == 120.0);
        } else if (tick.timestamp > until) {
            after++;
            CHECK(tick.callback_rate == 60.0);
        }
    }
    CHECK_MSG(boosted > 0 && after > 0, "%d boosted, %d after", boosted, after);
    fr_range eighty = { 80, 80, 80 };
    CHECK(fr_boost(link, 1, &eighty, NULL) == FR_OK);
    CHECK(fr_link_get(link, &st) == FR_OK && st.refresh_rate == 80.0);
    fr_close(conn);
}

static void test_adaptive(void) {
    fr_conn *conn = connect_ok();
    fr_link_options opt = FR_LINK_OPTIONS_INIT;
    opt.range = (fr_range){ 120, 120, 120 };
    opt.high_frame_rate = 1;
    opt.adaptive = 1;
    opt.label = "c-adaptive";
    fr_link *link = NULL;
    CHECK(fr_register(conn, &opt, &link) == FR_OK);
    fr_tick tick;
    double deadline = now_s() + 5;
    int stepped = 0;
    while (!stepped && now_s() < deadline && fr_next_tick(link, &tick, 2000) == FR_OK) {
        sleep_s(0.012); /* a 12 ms frame: late at 120 Hz, fits 60 Hz */
        CHECK(fr_frame_done(link, tick.sequence) == FR_OK);
        stepped = tick.callback_rate < 120.0;
    }
    CHECK_MSG(stepped, "the adaptive link was never stepped down");
    fr_json_doc *state = get_state(conn);
    const fr_json *displays = fr_json_get(fr_json_root(state), "displays");
    const fr_json *display = displays ? displays->u.kids.first : NULL;
    const fr_json *limited = fr_json_get(fr_json_get(display, "decision"), "limited");
    const fr_json *first = limited ? limited->u.kids.first : NULL;
    const fr_json *by = fr_json_get(first, "by");
    CHECK(by && by->type == FR_JSON_STRING && by->u.str.len == 7 && memcmp(by->u.str.s, "overrun", 7) == 0);
    fr_json_free(state);
    CHECK(fr_set_adaptive(link, 0) == FR_OK);
    CHECK(fr_set_adaptive(link, 2) == FR_EINVAL);
    fr_close(conn);
}

static void test_ticks_of_two_links_are_queued_per_link(void) {
    fr_conn *conn = connect_ok();
    fr_link *fast = register_ok(conn, 30, 60, 60, 0, 0, "c-fast");
    fr_link *slow = register_ok(conn, 15, 30, 30, 0, 0, "c-slow");
    fr_tick tick, first;
    CHECK(fr_next_tick(slow, &first, 2000) == FR_OK);
    double until = now_s() + 1.0;
    uint64_t last = 0;
    int fast_ticks = 0;
    while (now_s() < until) { /* only `fast` is read: `slow` keeps its newest FR_TICK_QUEUE */
        if (fr_next_tick(fast, &tick, 1000) != FR_OK) break;
        if (last) CHECK(tick.sequence == last + tick.skipped + 1);
        last = tick.sequence;
        fast_ticks++;
    }
    CHECK(fast_ticks > 40);
    CHECK(fr_next_tick(slow, &tick, 2000) == FR_OK);
    CHECK(tick.link == fr_link_id(slow) && tick.callback_rate == 30.0);
    CHECK(tick.sequence == first.sequence + tick.skipped + 1);
    CHECK_MSG(tick.skipped >= 30 - FR_TICK_QUEUE - 4, "skipped %llu", (unsigned long long)tick.skipped);
    fr_close(conn);
}

static void test_foreign_and_unknown_links(void) {
    fr_conn *owner = connect_ok(), *other = connect_ok();
    fr_link *link = register_ok(owner, 30, 60, 60, 0, 0, "c-owned");
    char params[128];
    const char *methods[] = { "framerate.v1.DisplayLink/Update", "framerate.v1.DisplayLink/Invalidate",
                              "framerate.v1.DisplayLink/FrameDone" };
    const char *formats[] = { "{\"link\":%llu,\"paused\":true}", "{\"link\":%llu}", "{\"link\":%llu,\"sequence\":0}" };
    for (int i = 0; i < 3; i++) {
        snprintf(params, sizeof params, formats[i], (unsigned long long)fr_link_daemon_id(link));
        CHECK(fr_call(other, methods[i], params, NULL) == FR_ERPC);
        CHECK(fr_last_error(other)->code == 5 && strcmp(fr_last_error(other)->status, "NOT_FOUND") == 0);
    }
    CHECK(fr_call(owner, "framerate.v1.DisplayLink/Update", "{\"link\":9999,\"paused\":true}", NULL) == FR_ERPC);
    CHECK(fr_last_error(owner)->grpc_code == FR_GRPC_NOT_FOUND);
    fr_tick tick;
    CHECK(fr_next_tick(link, &tick, 2000) == FR_OK); /* untouched */
    fr_close(other);
    fr_close(owner);
}

static void test_raw_calls(void) {
    fr_conn *conn = connect_ok();
    char *result = NULL;
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", "{\"service\":\"framerate.v1.DisplayLink\"}", &result) == FR_OK);
    CHECK(result && strncmp(result, "{\"status\":\"SERVING\"", 19) == 0);
    CHECK(result && strstr(result, "\"version\":\"") != NULL); /* the daemon reports its version */
    fr_free(result);
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", "{\"service\":\"framerate.v2.Nope\"}", NULL) == FR_ERPC);
    CHECK(fr_last_error(conn)->grpc_code == FR_GRPC_NOT_FOUND);
    CHECK(fr_call(conn, "framerate.v1.Reflection/ListServices", NULL, &result) == FR_OK);
    CHECK(result && strstr(result, "\"framerate.v1.DisplayLink/Register\"") != NULL);
    fr_free(result);
    CHECK(fr_call(conn, "framerate.v1.DisplayLink/Frobnicate", NULL, NULL) == FR_ERPC);
    CHECK(fr_last_error(conn)->code == -32601 && fr_last_error(conn)->grpc_code == FR_GRPC_UNIMPLEMENTED);
    CHECK(fr_call(conn, "framerate.v1.Compositor/GetState", "{\"verbose\":true}", NULL) == FR_ERPC);
    CHECK(strcmp(fr_last_error(conn)->field, "verbose") == 0);
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", "{not json", NULL) == FR_EINVAL);
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", "{}\n{}", NULL) == FR_EINVAL);
    fr_close(conn);
}

static void test_invalidate(void) {
    fr_conn *conn = connect_ok();
    fr_link *link = register_ok(conn, 30, 60, 60, 0, 0, "c-gone");
    fr_link *kept = register_ok(conn, 30, 60, 60, 0, 0, "c-kept");
    uint64_t id = fr_link_daemon_id(link);
    CHECK(id == fr_link_id(link)); /* no reconnect yet: the same */
    CHECK(fr_invalidate(link) == FR_OK);
    fr_json_doc *state = get_state(conn);
    CHECK(state_link(state, "c-gone") == NULL && state_link(state, "c-kept") != NULL);
    fr_json_free(state);
    char params[64];
    snprintf(params, sizeof params, "{\"link\":%llu}", (unsigned long long)id);
    CHECK(fr_call(conn, "framerate.v1.DisplayLink/Invalidate", params, NULL) == FR_ERPC);
    CHECK(fr_last_error(conn)->grpc_code == FR_GRPC_NOT_FOUND);
    fr_tick tick;
    CHECK(fr_next_tick(kept, &tick, 2000) == FR_OK && tick.link == fr_link_id(kept));
    fr_close(conn);
    /* Closing released everything. */
    conn = connect_ok();
    state = get_state(conn);
    CHECK(state_link(state, "c-kept") == NULL);
    fr_json_free(state);
    fr_close(conn);
}

/* Reads ticks until the first one of the new daemon (timestamped after it was
 * spawned); checks the sequence invariant on the way; returns 0 and the ticks
 * on both sides of the outage. */
static int ticks_across_restart(fr_link *link, fr_tick last, fr_tick *before, fr_tick *after) {
    for (int i = 0; i < 400; i++) {
        fr_tick tick;
        int rc = fr_next_tick(link, &tick, 15000);
        CHECK_MSG(rc == FR_OK, "fr_next_tick across the restart: %s", fr_strerror(rc));
        if (rc != FR_OK) return -1;
        CHECK(tick.sequence == last.sequence + tick.skipped + 1);
        if (tick.timestamp > daemon_.started_at) {
            *before = last;
            *after = tick;
            return 0;
        }
        last = tick;
    }
    CHECK_MSG(0, "no tick from the new daemon");
    return -1;
}

static void test_reconnect_after_restart(void) {
    fr_conn *conn = connect_ok();
    fr_link *link = register_ok(conn, 80, 120, 120, 1, 0, "c-survivor");
    fr_link *sleeper = register_ok(conn, 30, 60, 30, 0, 0, "c-sleeper");
    CHECK(fr_pause(sleeper) == FR_OK);
    fr_range range = { 40, 120, 60 };
    CHECK(fr_update(link, &range, -1) == FR_OK); /* the last range is what is registered again */
    fr_tick last;
    for (int i = 0; i < 3; i++) CHECK(fr_next_tick(link, &last, 2000) == FR_OK);
    uint64_t ids[2] = { fr_link_id(link), fr_link_id(sleeper) };

    daemon_restart(&daemon_);

    fr_tick before, after;
    if (ticks_across_restart(link, last, &before, &after) == 0) {
        double gap = (after.timestamp - before.timestamp) * after.callback_rate;
        long expected = lround(gap) - 1;
        if (expected < 1) expected = 1;
        CHECK_MSG(after.skipped >= 1 && (long)after.skipped == expected, "skipped %llu, expected %ld",
                  (unsigned long long)after.skipped, expected);
        CHECK(after.sequence == before.sequence + after.skipped + 1);
        printf("     restart: %.0f ms without ticks, reported as skipped = %llu (sequence %llu -> %llu)\n",
               (after.timestamp - before.timestamp) * 1000, (unsigned long long)after.skipped,
               (unsigned long long)before.sequence, (unsigned long long)after.sequence);
    }
    fr_tick next;
    CHECK(fr_next_tick(link, &next, 2000) == FR_OK && next.sequence == after.sequence + next.skipped + 1);
    CHECK(fr_reconnects(conn) == 1);
    CHECK(next.link == fr_link_id(link));
    CHECK(fr_link_id(link) == ids[0] && fr_link_id(sleeper) == ids[1]); /* kept; the new daemon numbered them afresh */
    CHECK(fr_link_daemon_id(link) + fr_link_daemon_id(sleeper) == 3);
    CHECK(fr_link_error(link, NULL) == FR_OK && fr_link_error(sleeper, NULL) == FR_OK);
    fr_json_doc *state = get_state(conn);
    CHECK(state_link_count(state) == 2);
    const fr_json *survivor = state_link(state, "c-survivor"), *paused = state_link(state, "c-sleeper");
    uint64_t id = 0;
    CHECK(survivor && fr_json_u64(fr_json_get(survivor, "link"), &id) == 0 && id == fr_link_daemon_id(link));
    CHECK(survivor && num(fr_json_get(survivor, "range"), "minimum") == 40 && num(fr_json_get(survivor, "range"), "preferred") == 60);
    CHECK(survivor && is_true(survivor, "highFrameRate") && !is_true(survivor, "paused"));
    CHECK(paused && is_true(paused, "paused") && num(fr_json_get(paused, "range"), "preferred") == 30);
    fr_json_free(state);
    CHECK(fr_frame_done(link, next.sequence) == FR_OK); /* translated to the new link's numbering */
    CHECK(fr_resume(sleeper) == FR_OK);
    fr_tick tick;
    CHECK(fr_next_tick(sleeper, &tick, 2000) == FR_OK && tick.skipped == 0 && tick.link == ids[1]); /* a resume: no skip */
    CHECK(fr_invalidate(link) == FR_OK);
    fr_close(conn);
}

/* Whether GetState shows the link labelled `label` waiting for a frame (awaitingFrame),
 * polled for up to `seconds` (the state's encoding is reused for up to 100 ms). */
static int awaits_frame(fr_conn *conn, const char *label, double seconds) {
    double deadline = now_s() + seconds;
    for (;;) {
        fr_json_doc *state = get_state(conn);
        const fr_json *entry = state ? state_link(state, label) : NULL;
        const fr_json *awaiting = entry ? fr_json_get(entry, "awaitingFrame") : NULL;
        int waits = awaiting && awaiting->type == FR_JSON_OBJECT;
        fr_json_free(state);
        if (waits || now_s() >= deadline) return waits;
        sleep_s(0.02);
    }
}

/* fr_present of a tick from before a restart: the new daemon never sent it, and Present
 * needs a tick it sent (sequence >= 1; the library used to send 0, which the daemon
 * refuses without a word to a notification). The frame is reported as finished instead
 * (FrameDone 0), which turns pacing on as the Present would have: the link's latest
 * tick, unanswered, holds it back, and GetState says so. */
static void test_present_of_a_tick_from_before_a_restart(void) {
    fr_conn *conn = connect_ok();
    fr_link *link = register_ok(conn, 60, 60, 60, 0, 0, "c-stale-present");
    fr_tick old, before, after;
    CHECK(fr_next_tick(link, &old, 2000) == FR_OK);
    daemon_restart(&daemon_);
    if (ticks_across_restart(link, old, &before, &after) == 0) {
        CHECK(fr_present(link, old.sequence, -1, -1) == FR_OK);
        CHECK_MSG(awaits_frame(conn, "c-stale-present", 5), "the stale frame did not turn pacing on");
        /* The awaited tick is the latest received (no tick came since): presenting it, a
         * tick of this daemon, shows it and lets the link tick again. */
        fr_tick latest = after, tick;
        while (fr_next_tick(link, &tick, 0) == FR_OK) latest = tick;
        CHECK(fr_present(link, latest.sequence, -1, -1) == FR_OK);
        int shown = 0;
        fr_presented frame;
        for (int i = 0; i < 20 && !shown; i++) {
            if (fr_next_tick(link, &tick, 2000) != FR_OK) break;
            while (fr_next_presented(link, &frame) == FR_OK) {
                CHECK_MSG(frame.sequence > old.sequence, "a Presented for tick %llu", (unsigned long long)frame.sequence);
                if (frame.sequence == latest.sequence) shown = !frame.dropped;
            }
            CHECK(fr_present(link, tick.sequence, -1, -1) == FR_OK);
        }
        CHECK_MSG(shown, "no Presented for tick %llu", (unsigned long long)latest.sequence);
    }
    CHECK(fr_invalidate(link) == FR_OK);
    fr_close(conn);
}

static void test_ids_stay_unique_after_a_restart(void) {
    daemon_restart(&daemon_); /* a fresh daemon numbers links from 1 */
    fr_conn *conn = connect_ok();
    fr_link *first = register_ok(conn, 30, 60, 60, 0, 0, "c-first");
    fr_link *second = register_ok(conn, 30, 60, 30, 0, 0, "c-second");
    CHECK(fr_link_id(first) == 1 && fr_link_id(second) == 2);
    CHECK(fr_invalidate(first) == FR_OK);
    fr_tick tick;
    CHECK(fr_next_tick(second, &tick, 2000) == FR_OK);
    daemon_restart(&daemon_);
    while (fr_next_tick(second, &tick, 15000) == FR_OK && tick.timestamp < daemon_.started_at) {
    }
    CHECK(fr_link_id(second) == 2 && fr_link_daemon_id(second) == 1 && tick.link == 2);
    /* The new daemon gives the next link id 2, which `second` already has. */
    fr_link *third = register_ok(conn, 30, 60, 60, 0, 0, "c-third");
    fr_link_state st;
    CHECK(fr_link_get(third, &st) == FR_OK && st.daemon_id == 2 && st.id == 3);
    CHECK(fr_next_tick(third, &tick, 2000) == FR_OK && tick.link == 3);
    fr_close(conn);
}

/* A listener that stopped accepting (a daemon stopped with SIGSTOP, or wedged) with a
 * full backlog: fr_connect fails after its 5 s timeout instead of blocking for good. */
static void test_connect_to_a_full_backlog_times_out(void) {
    char dir[64] = "/tmp/frfull-XXXXXX", path[128];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/framerated.sock", dir);
    int listener = listen_at(path);
    CHECK(listener >= 0 && listen(listener, 0) == 0); /* backlog 0: one pending connection fills it */
    int first = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    memcpy(addr.sun_path, path, strlen(path) + 1);
    CHECK(first >= 0 && connect(first, (struct sockaddr *)&addr, sizeof addr) == 0);
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    fr_conn *conn = (fr_conn *)1;
    CHECK(fr_connect(path, &conn) == FR_ECONNECT && conn == NULL);
    clock_gettime(CLOCK_MONOTONIC, &end);
    CHECK_MSG(strstr(fr_connect_error(), "did not accept the connection") != NULL, "%s", fr_connect_error());
    CHECK(end.tv_sec - start.tv_sec < 60); /* bounded (5 s), not for ever */
    close(first);
    close(listener);
    unlink(path);
    rmdir(dir);
}

static void test_connection_limit_is_reported(void) {
    daemon_proc limited = daemon_;
    limited.pid = 0;
    limited.starts = 100;
    snprintf(limited.socket, sizeof limited.socket, "%s/limited.sock", daemon_.dir);
    limited.extra[0] = "--max-connections";
    limited.extra[1] = "1";
    limited.extra[2] = "--log-level";
    limited.extra[3] = "debug";
    daemon_start(&limited);
    /* The readiness probe's connection holds the only slot until the daemon has seen
     * it close; connecting before that would be refused. Wait for the daemon to say so. */
    double deadline = now_s() + 5, delay = 0.005;
    while (!log_contains(&limited, "client disconnected") && now_s() < deadline) {
        sleep_s(delay);
        delay = delay * 2 > 0.1 ? 0.1 : delay * 2;
    }
    CHECK(log_contains(&limited, "client disconnected"));
    fr_conn *first = NULL, *second = NULL;
    CHECK(fr_connect(limited.socket, &first) == FR_OK);
    CHECK(fr_call(first, "grpc.health.v1.Health/Check", NULL, NULL) == FR_OK);
    CHECK(fr_connect(limited.socket, &second) == FR_OK); /* accepted, then refused */
    double started = now_s();
    CHECK(fr_call(second, "framerate.v1.Compositor/GetState", NULL, NULL) == FR_ERPC);
    CHECK(now_s() - started < 5);
    const fr_error *e = fr_last_error(second);
    CHECK_MSG(e->code == 8 && e->grpc_code == FR_GRPC_RESOURCE_EXHAUSTED && strstr(e->message, "--max-connections"),
              "%d %s %s", e->code, e->status, e->message);
    fr_close(second);
    CHECK(fr_call(first, "grpc.health.v1.Health/Check", NULL, NULL) == FR_OK);
    fr_close(first);
    daemon_stop(&limited);
}

static void test_closed_without_reconnect(void) {
    fr_conn *conn = connect_ok();
    CHECK(fr_set_reconnect(conn, 0, 0) == FR_OK);
    fr_link *link = register_ok(conn, 30, 60, 60, 0, 0, "c-closed");
    fr_tick tick;
    CHECK(fr_next_tick(link, &tick, 2000) == FR_OK);
    daemon_stop(&daemon_);
    int rc;
    while ((rc = fr_next_tick(link, &tick, 5000)) == FR_OK) {
    }
    CHECK_MSG(rc == FR_EENDED, "%s", fr_strerror(rc));
    fr_error why;
    CHECK(fr_link_error(link, &why) == FR_EENDED && why.grpc_code == FR_GRPC_UNAVAILABLE);
    CHECK_MSG(strcmp(why.message, "framerated is shutting down") == 0, "%s", why.message);
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL) == FR_ECLOSED);
    CHECK(fr_update(link, NULL, 1) == FR_EENDED);
    fr_close(conn);
    daemon_start(&daemon_);
}

static void test_reconnect_gives_up(void) {
    fr_conn *conn = connect_ok();
    CHECK(fr_set_reconnect(conn, 1, 500) == FR_OK);
    fr_link *link = register_ok(conn, 30, 60, 60, 0, 0, "c-orphan");
    fr_tick tick;
    CHECK(fr_next_tick(link, &tick, 2000) == FR_OK);
    daemon_stop(&daemon_);
    double started = now_s();
    int rc;
    while ((rc = fr_next_tick(link, &tick, -1)) == FR_OK) {
    }
    CHECK_MSG(rc == FR_EENDED, "%s", fr_strerror(rc));
    CHECK(now_s() - started < 5);
    fr_error why;
    CHECK(fr_link_error(link, &why) == FR_EENDED && why.grpc_code == FR_GRPC_UNAVAILABLE);
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL) == FR_ENOTRUNNING);
    fr_close(conn);
    daemon_start(&daemon_);
}

int main(void) {
    daemon_setup();

    RUN(test_socket_discovery);
    RUN(test_trust_rule);
    RUN(test_untrusted_daemon);
    RUN(test_connect_failures);
    RUN(test_register_and_ticks);
    RUN(test_register_errors);
    RUN(test_timed_out_register_is_invalidated);
    RUN(test_update_pause_resume);
    RUN(test_frame_done_pacing);
    RUN(test_present_and_presented);
    RUN(test_frame_timelines);
    RUN(test_boost);
    RUN(test_content_velocity);
    RUN(test_numbers_in_a_locale_with_a_multibyte_decimal_point);
    RUN(test_adaptive);
    RUN(test_ticks_of_two_links_are_queued_per_link);
    RUN(test_foreign_and_unknown_links);
    RUN(test_raw_calls);
    RUN(test_invalidate);
    RUN(test_reconnect_after_restart);
    RUN(test_present_of_a_tick_from_before_a_restart);
    RUN(test_ids_stay_unique_after_a_restart);
    RUN(test_connection_limit_is_reported);
    RUN(test_connect_to_a_full_backlog_times_out);
    RUN(test_closed_without_reconnect);
    RUN(test_reconnect_gives_up);
    printf("%d checks, %d failed\n", test_checks, test_failures);
    return test_failures ? 1 : 0;
}
