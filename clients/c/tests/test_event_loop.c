/* libframerate's event-loop API and reconnect rule against the real framerated:
 * fr_dispatch with tick, event and reply callbacks; the Watch API; the fd
 * generation across a reconnect; calls that fail at once while the daemon is
 * gone; the backoff (docs/protocol.md, "Reconnecting") as a pure function and
 * against a stopped daemon; a restart under a live event loop. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include "daemon.h"

#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>

/* One turn of the documented loop: poll fr_fd() for at most fr_timeout_ms()
 * (capped at `cap_ms`), then fr_dispatch. Returns fr_dispatch's result. */
static int loop_once(fr_conn *conn, int cap_ms) {
    int timeout = fr_timeout_ms(conn);
    if (timeout < 0 || timeout > cap_ms) timeout = cap_ms;
    struct pollfd p = { fr_fd(conn), POLLIN, 0 };
    poll(&p, 1, timeout);
    return fr_dispatch(conn);
}

/* Runs the loop until *flag is set or `seconds` pass; returns *flag. */
static int loop_until(fr_conn *conn, const int *flag, double seconds) {
    double deadline = now_s() + seconds;
    while (!*flag && now_s() < deadline)
        if (loop_once(conn, 100) != FR_OK) break;
    return *flag;
}

typedef struct tick_log {
    int count;
    int ended;
    fr_tick first, last;
    int sequence_ok;        /* every tick kept sequence == previous + skipped + 1 */
    int after_restart;      /* a tick timestamped after daemon_.started_at arrived */
    fr_tick before, after;  /* the ticks on both sides of the restart */
    double restart_at;
} tick_log;

static void on_tick(fr_link *link, const fr_tick *tick, void *user) {
    tick_log *log = user;
    if (tick == NULL) {
        log->ended = 1;
        return;
    }
    CHECK(tick->link == fr_link_id(link));
    if (log->count == 0) {
        log->first = *tick;
        log->sequence_ok = 1;
    } else if (tick->sequence != log->last.sequence + tick->skipped + 1) {
        log->sequence_ok = 0;
    }
    if (log->restart_at > 0 && !log->after_restart && tick->timestamp > log->restart_at) {
        log->after_restart = 1;
        log->before = log->last;
        log->after = *tick;
    }
    log->last = *tick;
    log->count++;
    CHECK(fr_frame_done(link, tick->sequence) == FR_OK); /* allowed from a callback */
}

typedef struct event_log {
    int count;
    int link_added;
    uint64_t added_link;
    int resynchronized;
    int ended;
    char resync_json_prefix[64];
    uint64_t watch_id;
} event_log;

static void on_event(fr_watch *watch, const fr_event *event, void *user) {
    event_log *log = user;
    if (event == NULL) {
        log->ended = 1;
        return;
    }
    log->count++;
    CHECK(event->watch == fr_watch_id(watch) && event->params_json && event->params_json[0] == '{');
    if (strcmp(event->kind, "linkAdded") == 0 && !log->link_added) {
        log->link_added = 1;
        log->added_link = event->link;
        CHECK(event->display == 0 && strstr(event->params_json, "\"kind\":\"linkAdded\""));
    }
    if (strcmp(event->kind, "resynchronized") == 0) {
        log->resynchronized++;
        snprintf(log->resync_json_prefix, sizeof log->resync_json_prefix, "%s", event->params_json);
        CHECK(strstr(event->params_json, "\"state\":{\"displays\":[") != NULL);
        CHECK(event->display == -1);
    }
    CHECK(fr_unwatch(watch) == FR_EINVAL); /* not from a callback */
}

typedef struct reply_log {
    int count;
    int rc;
    char status[32];
    int serving;
} reply_log;

static void on_reply(fr_conn *conn, int rc, const char *result, const fr_error *error, void *user) {
    (void)conn;
    reply_log *log = user;
    log->count++;
    log->rc = rc;
    if (rc == FR_OK) log->serving = strstr(result, "\"SERVING\"") != NULL;
    if (rc == FR_ERPC) snprintf(log->status, sizeof log->status, "%s", error->status);
}

static void test_backoff_is_the_protocol_rule(void) {
    fr_reconnect_policy policy = FR_RECONNECT_POLICY_DEFAULT;
    const double expected[] = { 10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000 };
    for (unsigned n = 0; n < 10; n++)
        CHECK_MSG(fr_reconnect_delay_ms(&policy, n, 0.5) == expected[n], "attempt %u: %g", n, fr_reconnect_delay_ms(&policy, n, 0.5));
    CHECK(fabs(fr_reconnect_delay_ms(&policy, 0, 0.0) - 9.0) < 1e-9);   /* -10 % */
    CHECK(fabs(fr_reconnect_delay_ms(&policy, 0, 1.0) - 11.0) < 1e-9);  /* +10 % */
    CHECK(fabs(fr_reconnect_delay_ms(&policy, 3, 0.25) - 76.0) < 1e-9); /* 80 * 0.95 */
    CHECK(fr_reconnect_delay_ms(&policy, 7, 1.0) == 1000);                /* the jitter never passes the maximum */
    CHECK(fabs(fr_reconnect_delay_ms(&policy, 7, 0.0) - 900.0) < 1e-9);
    CHECK(fr_reconnect_delay_ms(&policy, 4000000000u, 0.5) == 1000);      /* no overflow */
    fr_reconnect_policy flat = { 5, 5, 1, 0, 3 };
    CHECK(fr_reconnect_delay_ms(&flat, 9, 0.9) == 5);
    fr_conn *conn = connect_ok();
    fr_reconnect_policy bad[] = {
        { -1, 10, 2, 0.1, 0 }, { 20, 10, 2, 0.1, 0 }, { 10, 1000, 0.5, 0.1, 0 },
        { 10, 1000, 2, 1.5, 0 }, { 10, 1000, 2, 0.1, -1 }, { 10, INFINITY, 2, 0.1, 0 }, { 10, 1000, NAN, 0.1, 0 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK_MSG(fr_set_reconnect_policy(conn, &bad[i]) == FR_EINVAL, "bad[%zu]", i);
    CHECK(fr_set_reconnect_policy(conn, &policy) == FR_OK && fr_set_reconnect_policy(conn, NULL) == FR_EINVAL);
    fr_close(conn);
}

static void test_dispatch_routes_ticks_events_and_replies(void) {
    fr_conn *conn = connect_ok();
    CHECK(fr_timeout_ms(conn) == -1); /* connected, nothing buffered */
    event_log events = { 0 };
    fr_watch *watch = NULL;
    char *state = NULL;
    CHECK(fr_watch_start(conn, on_event, &events, &watch, &state) == FR_OK);
    CHECK(state && strncmp(state, "{\"displays\":[", 13) == 0);
    fr_free(state);
    CHECK(fr_watch_id(watch) >= 1);
    fr_link *link = register_ok(conn, 30, 60, 60, 0, 0, "c-loop");
    tick_log ticks = { 0 };
    CHECK(fr_set_tick_callback(link, on_tick, &ticks) == FR_OK);
    reply_log reply = { 0 }, bad = { 0 };
    CHECK(fr_call_async(conn, "grpc.health.v1.Health/Check", NULL, on_reply, &reply) == FR_OK);
    CHECK(fr_call_async(conn, "framerate.v1.DisplayLink/Update", "{\"link\":999999}", on_reply, &bad) == FR_OK);
    CHECK(fr_call_async(conn, "x", "{\n}", on_reply, &bad) == FR_EINVAL);
    CHECK(fr_call_async(conn, "x", NULL, NULL, NULL) == FR_EINVAL);
    CHECK(loop_until(conn, &events.link_added, 5));
    CHECK(events.added_link == fr_link_daemon_id(link));
    double deadline = now_s() + 5;
    while ((ticks.count < 10 || reply.count == 0 || bad.count == 0) && now_s() < deadline) loop_once(conn, 100);
    CHECK(reply.count == 1 && reply.rc == FR_OK && reply.serving);
    CHECK_MSG(bad.count == 1 && bad.rc == FR_ERPC && strcmp(bad.status, "NOT_FOUND") == 0, "%d %d %s", bad.count, bad.rc, bad.status);
    CHECK(ticks.count >= 10 && ticks.sequence_ok);
    /* A blocking call in between leaves lines in the buffer: fr_timeout_ms says 0 until dispatched. */
    CHECK(fr_call(conn, "framerate.v1.Compositor/GetState", NULL, NULL) == FR_OK);
    int before = ticks.count;
    deadline = now_s() + 2;
    while (ticks.count == before && now_s() < deadline) loop_once(conn, 100);
    CHECK(ticks.count > before);
    /* A watch without a callback: fr_next_event. */
    fr_watch *plain = NULL;
    CHECK(fr_watch_start(conn, NULL, NULL, &plain, NULL) == FR_OK && fr_watch_id(plain) != fr_watch_id(watch));
    fr_link *other = register_ok(conn, 30, 60, 30, 0, 0, "c-other");
    fr_event event;
    int found = 0;
    while (!found && fr_next_event(plain, &event, 2000) == FR_OK)
        found = strcmp(event.kind, "linkAdded") == 0 && event.link == fr_link_daemon_id(other);
    CHECK(found && event.watch == fr_watch_id(plain) && event.lost == 0);
    CHECK(fr_unwatch(plain) == FR_OK);
    CHECK(fr_invalidate(other) == FR_OK);
    CHECK(fr_invalidate(link) == FR_OK);
    CHECK(fr_unwatch(watch) == FR_OK);
    fr_close(conn);
}

static void test_event_queue_keeps_the_newest(void) {
    fr_conn *conn = connect_ok();
    fr_watch *watch = NULL;
    CHECK(fr_watch_start(conn, NULL, NULL, &watch, NULL) == FR_OK);
    /* 300 capsChanged events, unread while the SetCaps answers are read. */
    for (int i = 0; i < 300; i++)
        CHECK(fr_call(conn, "framerate.v1.Compositor/SetCaps", i % 2 ? "{\"lowPowerMode\":true}" : "{\"lowPowerMode\":false}", NULL) == FR_OK);
    fr_event event;
    int count = 0;
    uint64_t lost = 0;
    while (fr_next_event(watch, &event, 0) == FR_OK) {
        if (strcmp(event.kind, "capsChanged") == 0) count++;
        lost += event.lost;
    }
    CHECK_MSG(count == FR_EVENT_QUEUE && lost == 300 - FR_EVENT_QUEUE, "%d kept, %llu lost", count, (unsigned long long)lost);
    CHECK(fr_call(conn, "framerate.v1.Compositor/SetCaps", "{\"lowPowerMode\":false}", NULL) == FR_OK);
    CHECK(fr_unwatch(watch) == FR_OK);
    fr_close(conn);
}

static void test_calls_fail_at_once_while_the_daemon_is_gone(void) {
    fr_conn *conn = connect_ok();
    fr_link *link = register_ok(conn, 30, 60, 60, 0, 0, "c-outage");
    tick_log ticks = { 0 };
    CHECK(fr_set_tick_callback(link, on_tick, &ticks) == FR_OK);
    event_log events = { 0 };
    fr_watch *watch = NULL;
    CHECK(fr_watch_start(conn, on_event, &events, &watch, NULL) == FR_OK);
    uint64_t watch_id = fr_watch_id(watch);
    CHECK(loop_until(conn, &ticks.count, 2));
    unsigned generation = fr_fd_generation(conn);
    int old_fd = fr_fd(conn);

    /* A request in flight when the connection drops fails at once: the daemon
     * is frozen (no answer), then killed. */
    reply_log pending = { 0 };
    kill(daemon_.pid, SIGSTOP);
    int status;
    CHECK(waitpid(daemon_.pid, &status, WUNTRACED) == daemon_.pid && WIFSTOPPED(status)); /* stopped now */
    CHECK(fr_call_async(conn, "grpc.health.v1.Health/Check", NULL, on_reply, &pending) == FR_OK);
    kill(daemon_.pid, SIGKILL);
    waitpid(daemon_.pid, NULL, 0);
    daemon_.pid = 0;
    double lost_at = now_s();
    CHECK(loop_until(conn, &pending.count, 2));
    CHECK_MSG(pending.rc == FR_ERECONNECTING, "%s", fr_strerror(pending.rc));
    CHECK(fr_fd(conn) == -1 && fr_fd_generation(conn) == generation + 1);
    int timeout = fr_timeout_ms(conn);
    CHECK_MSG(timeout >= 0 && timeout <= 1000, "%d", timeout); /* the next attempt is scheduled */

    /* Calls made during the outage fail at once; a FrameDone is dropped. */
    double started = now_s();
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL) == FR_ERECONNECTING);
    CHECK(fr_pause(link) == FR_ERECONNECTING);
    CHECK(fr_call_async(conn, "grpc.health.v1.Health/Check", NULL, on_reply, &pending) == FR_ERECONNECTING);
    fr_link *none = NULL;
    fr_link_options opt = FR_LINK_OPTIONS_INIT;
    opt.range = (fr_range){ 30, 60, 60 };
    CHECK(fr_register(conn, &opt, &none) == FR_ERECONNECTING && none == NULL);
    CHECK(fr_frame_done(link, ticks.last.sequence) == FR_OK);
    CHECK_MSG(now_s() - started < 1.0, "%.3f s", now_s() - started);
    CHECK(fr_link_error(link, NULL) == FR_OK); /* the link lives on */

    /* The loop keeps attempting (fr_timeout_ms) and comes back with the daemon. */
    sleep_s(0.3); /* an outage of a few attempts, so that the gap shows */
    ticks.restart_at = now_s();
    daemon_start(&daemon_);
    CHECK(loop_until(conn, &ticks.after_restart, 10));
    CHECK(fr_fd(conn) >= 0 && fr_fd_generation(conn) == generation + 2);
    printf("     fd %d -> %d after %.0f ms; generation %u -> %u\n", old_fd, fr_fd(conn), (now_s() - lost_at) * 1000,
           generation, fr_fd_generation(conn));
    CHECK(ticks.sequence_ok && ticks.after.link == fr_link_id(link));
    double gap = (ticks.after.timestamp - ticks.before.timestamp) * ticks.after.callback_rate;
    long expected = lround(gap) - 1;
    CHECK_MSG((long)ticks.after.skipped == (expected < 1 ? 1 : expected) && ticks.after.skipped >= 10,
              "skipped %llu for %.0f ms", (unsigned long long)ticks.after.skipped,
              (ticks.after.timestamp - ticks.before.timestamp) * 1000);
    CHECK(loop_until(conn, &events.resynchronized, 5));
    CHECK(fr_watch_id(watch) == watch_id);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "{\"watch\":%llu,\"kind\":\"resynchronized\",\"state\":", (unsigned long long)watch_id);
    CHECK_MSG(strncmp(events.resync_json_prefix, prefix, strlen(prefix)) == 0, "%s", events.resync_json_prefix);
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL) == FR_OK);
    CHECK(fr_reconnects(conn) == 1);
    /* Nothing left unread at the close (no reset for the daemon; see the report of
     * the debug daemon's NIO assertion on reset connections). */
    CHECK(fr_unwatch(watch) == FR_OK);
    CHECK(fr_invalidate(link) == FR_OK);
    fr_close(conn);
}

/* An fr_call_async to a daemon that is stopped (SIGSTOP: it keeps the connection and
 * never answers) completes with FR_ETIMEDOUT after the request timeout: fr_timeout_ms
 * counts down to it, and fr_dispatch calls back. It used to wait for ever (fr_timeout_ms
 * said -1 while connected). */
static void test_async_call_to_a_stopped_daemon_times_out(void) {
    fr_conn *conn = connect_ok();
    CHECK(fr_set_request_timeout(conn, 300) == FR_OK);
    kill(daemon_.pid, SIGSTOP);
    int status;
    CHECK(waitpid(daemon_.pid, &status, WUNTRACED) == daemon_.pid && WIFSTOPPED(status));
    reply_log reply = { 0 }, later = { 0 };
    double sent = now_s();
    CHECK(fr_call_async(conn, "grpc.health.v1.Health/Check", NULL, on_reply, &reply) == FR_OK);
    CHECK(fr_set_request_timeout(conn, 5000) == FR_OK); /* the timeout in force at the send counts */
    int timeout = fr_timeout_ms(conn);
    CHECK_MSG(timeout >= 0 && timeout <= 300, "fr_timeout_ms %d", timeout);
    CHECK(fr_call_async(conn, "grpc.health.v1.Health/Check", NULL, on_reply, &later) == FR_OK);
    timeout = fr_timeout_ms(conn);
    CHECK_MSG(timeout >= 0 && timeout <= 300, "fr_timeout_ms %d: the earliest deadline counts", timeout);
    /* Only fr_timeout_ms decides how long the loop sleeps. */
    while (reply.count == 0 && now_s() - sent < 3) {
        int wait = fr_timeout_ms(conn);
        struct pollfd p = { fr_fd(conn), POLLIN, 0 };
        poll(&p, 1, wait < 0 || wait > 3000 ? 3000 : wait);
        CHECK(fr_dispatch(conn) == FR_OK);
    }
    double elapsed = now_s() - sent;
    CHECK_MSG(reply.count == 1 && reply.rc == FR_ETIMEDOUT, "%d calls back, %s", reply.count, fr_strerror(reply.rc));
    CHECK_MSG(elapsed >= 0.29 && elapsed < 2, "timed out after %.3f s", elapsed);
    CHECK(later.count == 0); /* its own timeout (5 s) has not passed */
    kill(daemon_.pid, SIGCONT);
    /* Back: the second call is answered; the first one's late answer is ignored. */
    CHECK(loop_until(conn, &later.count, 5));
    CHECK_MSG(later.rc == FR_OK && later.serving && reply.count == 1, "%s", fr_strerror(later.rc));
    CHECK(fr_timeout_ms(conn) == -1 && fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL) == FR_OK);
    fr_close(conn);
}

static void test_backoff_against_a_stopped_daemon(void) {
    fr_conn *conn = connect_ok();
    fr_reconnect_policy policy = { 10, 1000, 2, 0.1, 4 }; /* waits 10, 20, 40, 80 ms (+-10 %), then gives up */
    CHECK(fr_set_reconnect_policy(conn, &policy) == FR_OK);
    fr_link *link = register_ok(conn, 30, 60, 60, 0, 0, "c-backoff");
    tick_log ticks = { 0 };
    CHECK(fr_set_tick_callback(link, on_tick, &ticks) == FR_OK);
    CHECK(loop_until(conn, &ticks.count, 2));
    daemon_stop(&daemon_);
    double stopped = now_s();
    int rc = FR_OK;
    double deadline = now_s() + 10;
    while (rc == FR_OK && now_s() < deadline) rc = loop_once(conn, 100);
    double elapsed = now_s() - stopped;
    CHECK_MSG(rc == FR_ENOTRUNNING, "%s", fr_strerror(rc));
    /* Four attempts after 10 + 20 + 40 + 80 ms = 150 ms less 10 % jitter at least; far less than 1 s. */
    CHECK_MSG(elapsed >= 0.135 && elapsed < 3, "gave up after %.3f s", elapsed);
    CHECK(ticks.ended); /* the tick callback heard that the link ended */
    fr_error why;
    CHECK(fr_link_error(link, &why) == FR_EENDED && why.grpc_code == FR_GRPC_UNAVAILABLE);
    CHECK_MSG(strstr(why.message, "after 4 attempts") != NULL, "%s", why.message);
    CHECK(fr_timeout_ms(conn) == 0 && fr_dispatch(conn) == FR_ENOTRUNNING);
    printf("     gave up after 4 attempts, %.0f ms: %.80s...\n", elapsed * 1000, why.message);
    fr_close(conn);
    daemon_start(&daemon_);
}

/* fr_close from a callback (a tick callback here) is safe: the socket closes at once, calls
 * made after it in the same callback fail (FR_ECLOSED on the connection, FR_EENDED on a
 * link, at once: fr_next_tick used to wait for ever there), no other callback follows,
 * and fr_dispatch frees the connection when the callback returns (ASan reports any use
 * after that) and returns FR_EFREED. The daemon releases the links with the socket. */
typedef struct closing_log {
    fr_conn *conn;
    int calls;
    int call_after_close;
    int frame_done_after_close;
    int next_tick_after_close;
    double next_tick_seconds;
} closing_log;

static void close_from_tick(fr_link *link, const fr_tick *tick, void *user) {
    closing_log *log = user;
    log->calls++;
    fr_close(log->conn);
    fr_close(log->conn); /* twice in a callback: still one close */
    log->call_after_close = fr_call(log->conn, "grpc.health.v1.Health/Check", NULL, NULL);
    log->frame_done_after_close = fr_frame_done(link, tick->sequence);
    double started = now_s();
    fr_tick queued;
    int rc;
    while ((rc = fr_next_tick(link, &queued, 2000)) == FR_OK) { /* ticks read before the close */
    }
    log->next_tick_after_close = rc;
    log->next_tick_seconds = now_s() - started;
    log->conn = NULL; /* freed when fr_dispatch returns */
}

static void test_close_from_a_callback(void) {
    fr_conn *conn = connect_ok();
    closing_log log = { .conn = conn, .call_after_close = FR_OK, .frame_done_after_close = FR_OK, .next_tick_after_close = FR_OK };
    fr_link *first = register_ok(conn, 60, 120, 120, 1, 0, "c-close-1");
    fr_link *second = register_ok(conn, 60, 120, 120, 1, 0, "c-close-2");
    CHECK(fr_set_tick_callback(first, close_from_tick, &log) == FR_OK);
    CHECK(fr_set_tick_callback(second, close_from_tick, &log) == FR_OK);
    /* Both links tick before the first dispatch: two callbacks are due, one is made. */
    fr_conn *watcher = connect_ok();
    fr_link *clock = register_ok(watcher, 60, 120, 120, 1, 0, "c-close-clock");
    fr_tick tick;
    for (int i = 0; i < 3; i++) CHECK(fr_next_tick(clock, &tick, 2000) == FR_OK);
    int rc = FR_OK;
    double deadline = now_s() + 5;
    while (rc == FR_OK && now_s() < deadline) rc = loop_once(conn, 100);
    CHECK_MSG(rc == FR_EFREED, "%s", fr_strerror(rc));
    CHECK_MSG(log.calls == 1, "%d callbacks", log.calls);
    CHECK_MSG(log.call_after_close == FR_ECLOSED, "%s", fr_strerror(log.call_after_close));
    CHECK_MSG(log.frame_done_after_close == FR_EENDED, "%s", fr_strerror(log.frame_done_after_close));
    CHECK_MSG(log.next_tick_after_close == FR_EENDED && log.next_tick_seconds < 1, "%s after %.3f s",
              fr_strerror(log.next_tick_after_close), log.next_tick_seconds);
    CHECK(log.conn == NULL && fr_dispatch(log.conn) == FR_EINVAL);
    fr_close(log.conn); /* NULL: nothing */
    /* The daemon let both links go. */
    int gone = 0;
    for (deadline = now_s() + 5; !gone && now_s() < deadline;) {
        char *state = NULL;
        CHECK(fr_call(watcher, "framerate.v1.Compositor/GetState", NULL, &state) == FR_OK);
        /* The display's links (the residency after them still names the closed ones). */
        const char *links = state ? strstr(state, "\"links\":[") : NULL;
        const char *end = links ? strstr(links, "],\"decision\"") : NULL;
        if (end) {
            int length = (int)(end - links);
            char *list = strndup(links, (size_t)length);
            gone = list && !strstr(list, "c-close-1") && !strstr(list, "c-close-2") && strstr(list, "c-close-clock");
            free(list);
        }
        fr_free(state);
        if (!gone) CHECK(fr_next_tick(clock, &tick, 2000) == FR_OK);
    }
    CHECK(gone);
    fr_close(watcher);
}

/* A stand-in daemon (a thread of this process, so the client trusts it: same uid) that
 * answers the first connection's first `fast` requests at once and then closes it, and
 * every later connection's requests `delay_ms` late: a daemon that came back slow. */
typedef struct slow_daemon {
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    int listener;
    int fast;
    int delay_ms;
    int connections;         /* how many connections it serves (0: 2) */
    int refuse_on;           /* on this connection (> 0), the first Register is refused, and nothing more answered */
    int wedge_on;            /* on this connection (> 0), only the first `wedge_after` requests are answered */
    int wedge_after;
    int flood;               /* on the first connection, events sent for the first watch after its answer */
    pthread_t thread;
} slow_daemon;

static void slow_daemon_answer(int fd, const char *line, uint64_t link, int refuse) {
    const char *at = strstr(line, "\"id\":");
    unsigned long long id = at ? strtoull(at + 5, NULL, 10) : 0;
    char reply[256];
    int n;
    if (refuse)
        n = snprintf(reply, sizeof reply, "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"error\":{\"code\":5,"
                     "\"message\":\"no display 0\",\"data\":{\"status\":\"NOT_FOUND\"}}}\n", id);
    else if (strstr(line, "DisplayLink/Register"))
        n = snprintf(reply, sizeof reply, "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"result\":{\"link\":%llu,\"display\":0,"
                     "\"refreshRate\":60.0,\"callbackRate\":60.0}}\n", id, (unsigned long long)link);
    else if (strstr(line, "Compositor/Watch"))
        n = snprintf(reply, sizeof reply, "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"result\":{\"watch\":%llu,"
                     "\"state\":{\"displays\":[]}}}\n", id, (unsigned long long)link);
    else
        n = snprintf(reply, sizeof reply, "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"result\":{\"status\":\"SERVING\"}}\n", id);
    if (id != 0) (void)!send(fd, reply, (size_t)n, MSG_NOSIGNAL);
}

/* Serves the connections the test makes (the first, then the reconnects'). */
static void *slow_daemon_run(void *arg) {
    slow_daemon *d = arg;
    for (int connection = 0; connection < (d->connections ? d->connections : 2); connection++) {
        /* Bounded, so that a client that never comes fails the test instead of hanging it. */
        struct pollfd waiting = { d->listener, POLLIN, 0 };
        if (poll(&waiting, 1, 10000) != 1) return NULL;
        int fd = accept(d->listener, NULL, NULL);
        if (fd < 0) return NULL;
        char buf[16384];
        size_t len = 0;
        uint64_t answered = 0;
        for (int open = 1; open;) {
            ssize_t n = recv(fd, buf + len, sizeof buf - len - 1, 0);
            if (n <= 0) break;
            len += (size_t)n;
            buf[len] = '\0';
            char *end;
            while (open && (end = memchr(buf, '\n', len)) != NULL) {
                *end = '\0';
                if (connection > 0) sleep_s(d->delay_ms / 1000.0);
                int refusing = d->refuse_on > 0 && connection == d->refuse_on;
                int wedged = d->wedge_on > 0 && connection == d->wedge_on && answered >= (uint64_t)d->wedge_after;
                if ((!refusing || answered == 0) && !wedged) slow_daemon_answer(fd, buf, ++answered, refusing);
                if (connection == 0 && d->flood > 0 && strstr(buf, "Compositor/Watch")) {
                    char event[160];
                    int n = snprintf(event, sizeof event, "{\"jsonrpc\":\"2.0\",\"method\":\"framerate.v1.Compositor/Event\","
                                     "\"params\":{\"watch\":%llu,\"kind\":\"linkAdded\"}}\n", (unsigned long long)answered);
                    for (int i = 0; i < d->flood; i++) (void)!send(fd, event, (size_t)n, MSG_NOSIGNAL);
                    d->flood = 0;
                }
                len -= (size_t)(end + 1 - buf);
                memmove(buf, end + 1, len);
                buf[len] = '\0';
                if (connection == 0 && answered == (uint64_t)d->fast) open = 0;
            }
        }
        close(fd);
    }
    return NULL;
}

/* Starts the stand-in `d` listening at `name` in the test directory, and connects a
 * client to it with request timeout `timeout_ms`. */
static fr_conn *slow_daemon_start(slow_daemon *d, const char *name, int timeout_ms) {
    snprintf(d->path, sizeof d->path, "%s/%s", daemon_.dir, name);
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    memcpy(addr.sun_path, d->path, strlen(d->path) + 1);
    d->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(d->listener >= 0 && bind(d->listener, (struct sockaddr *)&addr, sizeof addr) == 0 && listen(d->listener, 8) == 0);
    CHECK(pthread_create(&d->thread, NULL, slow_daemon_run, d) == 0);
    fr_conn *conn = NULL;
    CHECK(fr_connect(d->path, &conn) == FR_OK);
    CHECK(fr_set_request_timeout(conn, timeout_ms) == FR_OK);
    return conn;
}

/* Closes `conn`, which ends the stand-in's last connection, and waits for its thread. */
static void slow_daemon_stop(slow_daemon *d, fr_conn *conn) {
    fr_close(conn);
    CHECK(pthread_join(d->thread, NULL) == 0);
    close(d->listener);
    unlink(d->path);
}

/* A reconnect attempt made by a blocking call registers the links again within that
 * call's request timeout, all of them together: a daemon that answers each Register
 * 400 ms late cannot hold a call with a 1 s timeout for 4 x 400 ms and then its own
 * request (2 s in all, as it did). The attempt fails at the deadline; the call says
 * FR_ERECONNECTING. */
static void test_reconnect_keeps_the_call_timeout(void) {
    slow_daemon d = { .fast = 4, .delay_ms = 400 };
    fr_conn *conn = slow_daemon_start(&d, "slow.sock", 1000);
    for (int i = 0; i < 4; i++) register_ok(conn, 30, 60, 60, 0, 0, "c-slow");
    /* The stand-in closed the connection after the fourth answer: the next call learns it. */
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL) == FR_ERECONNECTING);
    while (fr_timeout_ms(conn) > 0) sleep_s(0.005); /* the backoff's first wait (about 10 ms) */
    double started = now_s();
    int rc = fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL);
    double elapsed = now_s() - started;
    CHECK_MSG(rc == FR_ERECONNECTING, "%s", fr_strerror(rc));
    CHECK_MSG(elapsed >= 0.9 && elapsed < 1.5, "the call took %.3f s (timeout 1 s)", elapsed);
    printf("     a call whose reconnect met a slow daemon returned after %.0f ms (timeout 1000 ms)\n", elapsed * 1000);
    slow_daemon_stop(&d, conn);
}

/* A link the daemon refuses during a reconnect attempt that then fails (here: the
 * next link's Register goes unanswered) is not ended: the refusal came from an
 * attempt that did not count, and the next attempt registers it again. It used to
 * end with NOT_FOUND although the daemon that came back for good had its display. */
static void test_a_refusal_in_a_failed_attempt_does_not_end_the_link(void) {
    slow_daemon d = { .fast = 2, .connections = 3, .refuse_on = 1 };
    fr_conn *conn = slow_daemon_start(&d, "refusing.sock", 300);
    fr_link *refused = register_ok(conn, 30, 60, 60, 0, 0, "c-refused");
    fr_link *unanswered = register_ok(conn, 30, 60, 60, 0, 0, "c-unanswered");
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL) == FR_ERECONNECTING);
    while (fr_timeout_ms(conn) > 0) sleep_s(0.005);
    /* Attempt 1: the first Register refused, the second never answered. */
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL) == FR_ERECONNECTING);
    fr_error why = { 0 };
    int rc = fr_link_error(refused, &why);
    CHECK_MSG(rc == FR_OK, "the refused link ended: %s", why.message);
    CHECK(fr_link_error(unanswered, NULL) == FR_OK);
    while (fr_timeout_ms(conn) > 0) sleep_s(0.005);
    /* Attempt 2: both registered again. */
    rc = fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL);
    CHECK_MSG(rc == FR_OK, "%s", fr_strerror(rc));
    CHECK_MSG(fr_link_error(refused, &why) == FR_OK && fr_link_daemon_id(refused) == 1, "%llu %s", (unsigned long long)fr_link_daemon_id(refused), why.message);
    CHECK(fr_link_error(unanswered, NULL) == FR_OK && fr_link_daemon_id(unanswered) == 2);
    slow_daemon_stop(&d, conn);
}

/* A reconnect attempt that fails after one watch was subscribed again (the second's
 * Watch goes unanswered) takes back the "resynchronized" it queued: the watch hears
 * one, from the attempt that succeeded, not two, the first with the state of a
 * daemon the client dropped. The first watch's queue is full (256 events the app
 * has not read): the failed attempt's "resynchronized" pushed out the oldest, which
 * stays lost, and taking it back made room for the next one: 255 events and one
 * "resynchronized" that says one was lost. */
static void test_a_failed_attempt_takes_back_its_resynchronized(void) {
    slow_daemon d = { .fast = 3, .connections = 3, .wedge_on = 1, .wedge_after = 2, .flood = 256 };
    fr_conn *conn = slow_daemon_start(&d, "rewatch.sock", 300);
    (void)register_ok(conn, 30, 60, 60, 0, 0, "c-rewatch");
    fr_watch *first = NULL, *second = NULL;
    CHECK(fr_watch_start(conn, NULL, NULL, &first, NULL) == FR_OK);
    CHECK(fr_watch_start(conn, NULL, NULL, &second, NULL) == FR_OK);
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL) == FR_ERECONNECTING);
    while (fr_timeout_ms(conn) > 0) sleep_s(0.005);
    /* Attempt 1: the Register and the first Watch answered, the second Watch not. */
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL) == FR_ERECONNECTING);
    while (fr_timeout_ms(conn) > 0) sleep_s(0.005);
    /* Attempt 2: everything answered. */
    int rc = fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL);
    CHECK_MSG(rc == FR_OK, "%s", fr_strerror(rc));
    fr_watch *watches[2] = { first, second };
    for (int i = 0; i < 2; i++) {
        int resynchronized = 0, events = 0;
        uint64_t lost = 0, lost_by_resynchronized = 0;
        fr_event event;
        while (fr_next_event(watches[i], &event, 0) == FR_OK) {
            events++;
            lost += event.lost;
            if (strcmp(event.kind, "resynchronized") == 0) {
                resynchronized++;
                lost_by_resynchronized = event.lost;
            }
        }
        CHECK_MSG(resynchronized == 1, "watch %d heard %d resynchronized events", i + 1, resynchronized);
        int flooded = i == 0;
        CHECK_MSG(events == (flooded ? 256 : 1), "watch %d: %d events", i + 1, events);
        CHECK_MSG(lost == (flooded ? 1u : 0u) && lost_by_resynchronized == lost, "watch %d: lost %llu", i + 1,
                  (unsigned long long)lost);
    }
    slow_daemon_stop(&d, conn);
}

int main(void) {
    daemon_setup();
    RUN(test_backoff_is_the_protocol_rule);
    RUN(test_dispatch_routes_ticks_events_and_replies);
    RUN(test_event_queue_keeps_the_newest);
    RUN(test_calls_fail_at_once_while_the_daemon_is_gone);
    RUN(test_async_call_to_a_stopped_daemon_times_out);
    RUN(test_backoff_against_a_stopped_daemon);
    RUN(test_close_from_a_callback);
    RUN(test_reconnect_keeps_the_call_timeout);
    RUN(test_a_refusal_in_a_failed_attempt_does_not_end_the_link);
    RUN(test_a_failed_attempt_takes_back_its_resynchronized);
    printf("%d checks, %d failed\n", test_checks, test_failures);
    return test_failures ? 1 : 0;
}
