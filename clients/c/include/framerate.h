/* libframerate: the C client for framerated, the Linux frame-rate hint broker.
 *
 * One connection (fr_conn) to the daemon's Unix socket carries display links
 * (fr_link, the CADisplayLink analog). Every call blocks; the library never
 * starts threads or installs signal handlers (it writes with MSG_NOSIGNAL).
 * A connection and its links must be used from one thread at a time.
 * Numbers are written in the "C" locale whatever the program's (setlocale(LC_ALL, "")
 * with a decimal comma, or ps_AF's two-byte point, changes nothing on the wire).
 *
 * Times: fr_tick.timestamp and .target_timestamp are seconds on CLOCK_MONOTONIC,
 * the clock clock_gettime(CLOCK_MONOTONIC, ...) reads, so
 *     target_timestamp - now   is the working time left for a frame.
 *
 * Errors: functions return FR_OK (0) or a negative fr_err. FR_ERPC means the
 * daemon answered with an error: fr_last_error(conn) has its gRPC status
 * (code, name), message and the offending field.
 *
 * Reconnect (on by default) follows the rule every framerated client follows
 * (docs/protocol.md, "Reconnecting"): when the daemon goes away, attempt n
 * (0 first) waits min(1 s, 10 ms * 2^n) stretched by a random factor in
 * [0.9, 1.1] (at most 1 s), see fr_reconnect_delay_ms; the library gives up
 * after 30 s (fr_set_reconnect) or a number of failed attempts
 * (fr_set_reconnect_policy). Calls that were waiting for an answer when the
 * connection dropped, and calls made while it is down, fail at once with
 * FR_ERECONNECTING (a call made while down first makes the reconnect attempt
 * if one is due). fr_next_tick waits through the outage; fr_dispatch makes
 * the attempts when fr_timeout_ms says one is due. After a reconnect every
 * live link is registered again with its latest range, paused flag, label,
 * display and entitlement, and every live watch again (its first event is
 * "resynchronized", carrying the new state). The fr_link pointers, their
 * fr_link_id and their tick numbering stay the same (only fr_link_daemon_id
 * changes); the first tick after the reconnect reports the outage as one gap:
 * skipped = max(1, round((timestamp - last.timestamp) * callback_rate) - 1),
 * rounding half away from zero (0 for a link that was paused), and
 * sequence == previous.sequence + skipped + 1 keeps holding, as in the Swift
 * and Python clients.
 *
 * The socket descriptor changes on a reconnect: fr_fd() is -1 while the
 * connection is down and a new descriptor after it is back, and
 * fr_fd_generation() counts every such change. An event loop either builds
 * its poll set from fr_fd() before every wait (poll ignores -1), or, with
 * epoll, compares fr_fd_generation() after each fr_* call and re-adds fr_fd():
 *
 *     int rc;
 *     do {
 *         struct pollfd p = { fr_fd(conn), POLLIN, 0 };
 *         poll(&p, 1, fr_timeout_ms(conn));         // wakes for a reconnect attempt too
 *     } while ((rc = fr_dispatch(conn)) == FR_OK);  // ticks, events, replies -> callbacks
 *     if (rc != FR_EFREED) fr_close(conn);          // FR_EFREED: a callback closed it
 *
 *     fr_conn *conn;
 *     fr_link *link;
 *     fr_link_options opt = FR_LINK_OPTIONS_INIT;
 *     opt.range = (fr_range){80, 120, 120};
 *     opt.high_frame_rate = 1;
 *     if (fr_connect(NULL, &conn) != FR_OK || fr_register(conn, &opt, &link) != FR_OK) ...
 *     fr_tick tick;
 *     while (fr_next_tick(link, &tick, 1000) == FR_OK) { ... fr_frame_done(link, tick.sequence); }
 *     fr_close(conn);
 */
#ifndef FRAMERATE_H
#define FRAMERATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(FR_BUILDING_LIBRARY)
#define FR_API __attribute__((visibility("default")))
#else
#define FR_API
#endif

/* The library's version; its soname is libframerate.so.FR_VERSION_MAJOR. The major
 * number changes whenever a struct the caller allocates (fr_tick, fr_link_options,
 * fr_presented, ...) changes size or layout: 1 added frame timelines and frame latency
 * to fr_tick and fr_link_options, so programs built against 0.x must be rebuilt. */
#define FR_VERSION_MAJOR 1
#define FR_VERSION_MINOR 0
#define FR_VERSION_PATCH 0

/* Error codes: FR_OK, or a negative value. */
typedef enum fr_err {
    FR_OK = 0,
    FR_EINVAL = -1,      /* a bad argument (e.g. a non-finite rate, a NULL pointer) */
    FR_ENOMEM = -2,      /* out of memory */
    FR_ENOTRUNNING = -3, /* nothing listens on the socket: the daemon is not running */
    FR_EACCES = -4,      /* this user may not connect to the socket */
    FR_ECONNECT = -5,    /* another connect failure (path too long, not a socket, ...) */
    FR_EIO = -6,         /* reading or writing the socket failed */
    FR_EPROTO = -7,      /* the daemon sent a malformed line (or one too long) */
    FR_ETIMEDOUT = -8,   /* no tick or answer within the timeout */
    FR_ECLOSED = -9,     /* the connection is closed and will not reconnect */
    FR_ERPC = -10,       /* the daemon answered with an error: see fr_last_error() */
    FR_EENDED = -11,     /* the link has ended: see fr_link_error() */
    FR_EUNTRUSTED = -12, /* the process on the socket is not root, the framerated user or you: see fr_connect_error() */
    FR_ERECONNECTING = -13, /* the daemon went away and the connection is reconnecting: the call was not made,
                             * or its answer was lost with the old connection; call again once it is back */
    FR_EFREED = -14        /* fr_dispatch only: a callback called fr_close, and the connection is freed now:
                            * do not use (or fr_close) the pointer again */
} fr_err;

/* gRPC status codes, as fr_error.grpc_code. */
enum {
    FR_GRPC_OK = 0, FR_GRPC_CANCELLED = 1, FR_GRPC_UNKNOWN = 2, FR_GRPC_INVALID_ARGUMENT = 3,
    FR_GRPC_DEADLINE_EXCEEDED = 4, FR_GRPC_NOT_FOUND = 5, FR_GRPC_ALREADY_EXISTS = 6,
    FR_GRPC_PERMISSION_DENIED = 7, FR_GRPC_RESOURCE_EXHAUSTED = 8, FR_GRPC_FAILED_PRECONDITION = 9,
    FR_GRPC_ABORTED = 10, FR_GRPC_OUT_OF_RANGE = 11, FR_GRPC_UNIMPLEMENTED = 12, FR_GRPC_INTERNAL = 13,
    FR_GRPC_UNAVAILABLE = 14, FR_GRPC_DATA_LOSS = 15, FR_GRPC_UNAUTHENTICATED = 16
};

/* An error the daemon reported (or, for links, why the link ended). */
typedef struct fr_error {
    int code;            /* JSON-RPC "code" as sent: the gRPC number, or -32602 etc. */
    int grpc_code;       /* the gRPC status number of `status` (FR_GRPC_*) */
    char status[32];     /* the gRPC status name, e.g. "NOT_FOUND" (data.status) */
    char message[512];   /* the daemon's sentence for people (truncated) */
    char field[128];     /* data.field, the offending parameter (e.g. "range.minimum"), or "" */
} fr_error;

/* A CAFrameRateRange, Hz. preferred 0 = no preference. */
typedef struct fr_range {
    double minimum;
    double maximum;
    double preferred;
} fr_range;

/* The most frame timelines a tick lists (fr_link_options.timelines is 1 to 7). */
#define FR_MAX_TIMELINES 7

/* One future frame of a tick (its `timelines` entry; Android's FrameTimeline). */
typedef struct fr_frame_timeline {
    uint64_t vsync_id;        /* the display's vsync index of presentation_time: fr_present_vsync aims at it */
    double deadline;          /* commit the frame by then, s, CLOCK_MONOTONIC */
    double presentation_time; /* the vsync where a frame committed by deadline is shown, s, CLOCK_MONOTONIC */
} fr_frame_timeline;

/* One tick of a link (framerate.v1.DisplayLink/Tick). */
typedef struct fr_tick {
    uint64_t link;            /* the link's id, fr_link_id (kept across reconnects) */
    uint64_t sequence;        /* sequence == previous.sequence + skipped + 1, across reconnects too */
    double timestamp;         /* the vsync starting this interval, s, CLOCK_MONOTONIC */
    double target_timestamp;  /* the deadline for this frame, s, CLOCK_MONOTONIC */
    double duration;          /* the display's refresh period, 1 / refresh_rate, s */
    double refresh_rate;      /* the display's (panel's) rate in force, Hz; below the grid while a
                                 link's content velocity lowers the panel (fr_frame_done_velocity) */
    double callback_rate;     /* this link's rate on the grid, Hz: refresh_rate / n, except that it may
                                 exceed refresh_rate while content velocity lowers the panel */
    uint64_t skipped;         /* intervals without a tick since the previous one delivered */
    int boosted;              /* 1 while the link is boosted (fr_boost), else 0 */
    double target_presentation_timestamp; /* where a frame started now and done by target_timestamp
                                 is shown: timestamp + preferred_frame_latency / callback_rate, s */
    int timeline_count;       /* entries in timelines: 0 unless the link asked for timelines > 1 */
    fr_frame_timeline timelines[FR_MAX_TIMELINES]; /* the next frames, earliest first */
} fr_tick;

/* What became of one presented frame (framerate.v1.DisplayLink/Presented). */
typedef struct fr_presented {
    uint64_t link;            /* the link's id, fr_link_id */
    uint64_t sequence;        /* the tick whose frame it was (the link's tick numbering) */
    double presented_time;    /* the vsync that showed it, s, CLOCK_MONOTONIC; 0 if dropped */
    double expected_time;     /* when it should have been shown, s, CLOCK_MONOTONIC: the tick's
                                 target_presentation_timestamp (its target_timestamp at frame
                                 latency 1), or, after fr_present_vsync, that timeline entry's
                                 presentation_time */
    double hitch;             /* max(0, presented_time - expected_time), s; 0 if dropped */
    int dropped;              /* 1: a newer fr_present replaced it before a vsync showed it */
} fr_presented;

typedef struct fr_link_options {
    fr_range range;
    int64_t display;          /* display id, or -1 for the default display */
    int paused;               /* start paused */
    int high_frame_rate;      /* declare the high-frame-rate entitlement (> 60 Hz on phones) */
    const char *label;        /* shown by framectl status; NULL for none; copied; UTF-8 (else FR_EINVAL) */
    int adaptive;             /* step down to a lower, even rate while frames keep missing
                                 their deadline (tick to fr_frame_done), back up once they fit */
    int timelines;            /* future frames each tick lists, 1 to 7 (0 counts as 1) */
    int preferred_frame_latency; /* 1 or 2 intervals until a frame is shown (0 counts as 1) */
} fr_link_options;

#define FR_LINK_OPTIONS_INIT { { 0, 0, 0 }, -1, 0, 0, NULL, 0, 1, 1 }

/* How a connection comes back after the daemon goes away (the rule of
 * docs/protocol.md, "Reconnecting", the same as the Swift client's
 * ReconnectPolicy): attempt n (0 first) waits
 * min(maximum_delay_ms, initial_delay_ms * multiplier^n) times a random factor
 * in [1 - jitter, 1 + jitter], at most maximum_delay_ms. */
typedef struct fr_reconnect_policy {
    double initial_delay_ms;  /* the wait before the first attempt, ms (default 10) */
    double maximum_delay_ms;  /* the longest wait, ms, jitter included (default 1000) */
    double multiplier;        /* the factor each wait grows by, >= 1 (default 2) */
    double jitter;            /* the random stretch, a fraction in [0, 1] (default 0.1: +-10 %) */
    int maximum_attempts;     /* failed attempts in a row before giving up; 0: no limit (default) */
} fr_reconnect_policy;

#define FR_RECONNECT_POLICY_DEFAULT { 10, 1000, 2, 0.1, 0 }

/* A link's state as the library knows it. */
typedef struct fr_link_state {
    uint64_t id;              /* fr_link_id: the daemon's id at the first registration, kept */
    uint64_t daemon_id;       /* the daemon's id now (0 while reconnecting) */
    int64_t display;
    fr_range range;           /* as last registered or updated */
    int paused;
    double refresh_rate;      /* from the latest Register/Update answer */
    double callback_rate;
    int ended;                /* 1 once the link ended (see fr_link_error) */
} fr_link_state;

typedef struct fr_conn fr_conn;
typedef struct fr_link fr_link;
typedef struct fr_watch fr_watch;

/* One compositor event (framerate.v1.Compositor/Event), or the library's
 * "resynchronized" event after a reconnect. The strings are valid until the
 * callback returns, or until the next fr_next_event/fr_unwatch on the watch. */
typedef struct fr_event {
    uint64_t watch;           /* fr_watch_id (kept across reconnects) */
    const char *kind;         /* refreshRateChanged, linkAdded, linkUpdated, linkRemoved, capsChanged,
                               * resynchronized; ignore kinds you do not know */
    int64_t display;          /* the display id, or -1 when the event has none */
    uint64_t link;            /* linkAdded/linkUpdated/linkRemoved: the daemon's link id; else 0 */
    double from;              /* refreshRateChanged: the old rate, Hz; else 0 */
    double to;                /* refreshRateChanged: the new rate, Hz; else 0 */
    uint64_t lost;            /* older undelivered events dropped to queue this one (the queue was full) */
    const char *params_json;  /* the notification's params as compact JSON (ids inside are the
                               * daemon's); resynchronized: {"watch":ID,"kind":"resynchronized","state":STATE} */
} fr_event;

/* Callbacks fr_dispatch calls. From a callback you may call fr_frame_done,
 * fr_update, fr_pause, fr_resume, fr_call and the getters; fr_invalidate and
 * fr_unwatch return FR_EINVAL there: do those after fr_dispatch returns.
 * fr_close from a callback closes the socket at once and ends every link and watch:
 * no callback follows, and until the callback returns calls on the connection fail
 * with FR_ECLOSED and those on its links and watches with FR_EENDED. fr_dispatch
 * then frees the connection with its links and watches and returns FR_EFREED, which
 * it returns for nothing else: the pointer is gone (unlike FR_ECLOSED, a connection
 * closed for good that the application must still fr_close). */
/* A tick of `link`; tick is NULL once the link has ended (fr_link_error says why). */
typedef void (*fr_tick_fn)(fr_link *link, const fr_tick *tick, void *user);
/* An event of `watch`; event is NULL once the watch has ended. */
typedef void (*fr_event_fn)(fr_watch *watch, const fr_event *event, void *user);
/* The answer to fr_call_async: rc FR_OK with result_json (compact JSON), FR_ERPC
 * with error, FR_ETIMEDOUT when no answer came within the request timeout, or
 * FR_ERECONNECTING / FR_ECLOSED when the connection dropped first. */
typedef void (*fr_reply_fn)(fr_conn *conn, int rc, const char *result_json, const fr_error *error, void *user);

/* A sentence for an fr_err. */
FR_API const char *fr_strerror(int err);

/* The socket path by the rule framectl uses (docs/protocol.md, "Finding the
 * daemon"), the same for root: explicit_path if non-empty, else
 * $FRAMERATED_SOCKET, else $XDG_RUNTIME_DIR/framerated.sock when a socket
 * exists there (the per-user daemon), else /run/framerated/framerated.sock
 * (the system daemon). Returns FR_OK, or FR_EINVAL when buf is too small. */
FR_API int fr_socket_path(const char *explicit_path, char *buf, size_t size);

/* Connects; path NULL or "" finds it with fr_socket_path. The process listening
 * there must be root, the `framerated` service user or this process's effective
 * user (SO_PEERCRED; checked on every reconnect too), else FR_EUNTRUSTED.
 * On failure fr_connect_error() says why: for FR_ENOTRUNNING, every path tried. */
FR_API int fr_connect(const char *path, fr_conn **out);
/* A sentence for the latest failed connect in this thread (fr_connect, or a
 * reconnect attempt): the paths tried, the untrusted uid and path, ...; "" after
 * a connect that succeeded. Valid until the thread's next connect. */
FR_API const char *fr_connect_error(void);
/* Closes the connection (the daemon releases its links) and frees every fr_link of it. */
FR_API void fr_close(fr_conn *conn);

/* Reconnect on (default) or off, and how long to keep trying after the drop
 * (ms, < 0 forever; default 30000); the policy's maximum_attempts also applies. */
FR_API int fr_set_reconnect(fr_conn *conn, int enabled, int timeout_ms);
/* The backoff and attempt limit (copied); FR_EINVAL unless 0 <= initial <= maximum,
 * multiplier >= 1 and finite, 0 <= jitter <= 1, maximum_attempts >= 0. */
FR_API int fr_set_reconnect_policy(fr_conn *conn, const fr_reconnect_policy *policy);
/* The wait before attempt `attempt` (0 first), ms, for `random` in [0, 1]
 * (0.5: no jitter): min(maximum, initial * multiplier^attempt) * (1 + jitter * (2 * random - 1)),
 * at most maximum_delay_ms. A pure function: the library calls it with a random number. */
FR_API double fr_reconnect_delay_ms(const fr_reconnect_policy *policy, unsigned attempt, double random);
/* How long a request waits for its answer (ms, < 0 forever; default 5000): a blocking
 * call then returns FR_ETIMEDOUT, and its timeout covers the reconnect attempt it
 * makes too (connect, re-registrations, its own request; FR_ERECONNECTING when the
 * attempt took the time); an attempt made by fr_next_tick, fr_next_event or
 * fr_dispatch gets one timeout of its own. An fr_call_async gets FR_ETIMEDOUT from
 * fr_dispatch (the timeout in force when it was sent counts). A Register that times out
 * leaves no link behind: if its reply still comes, the library invalidates the link. */
FR_API int fr_set_request_timeout(fr_conn *conn, int timeout_ms);
FR_API const char *fr_conn_path(const fr_conn *conn);
/* The socket descriptor, for poll(2): -1 while the connection is down; a new one
 * after each reconnect (see fr_fd_generation). */
FR_API int fr_fd(const fr_conn *conn);
/* Counts the changes of fr_fd(): +1 when the connection drops (fd -1) and +1 when
 * it is back (a new fd). Compare it after fr_* calls to know when to re-register
 * the descriptor with epoll. */
FR_API unsigned fr_fd_generation(const fr_conn *conn);
/* How long an event loop may wait before calling fr_dispatch, ms: -1 (wait for
 * fr_fd() to be readable), 0 (call it now: buffered lines, queued callbacks, an
 * fr_call_async past its timeout, or the connection closed for good), the time until
 * the earliest fr_call_async awaiting its answer times out (fr_set_request_timeout),
 * or, while the connection is down, the time until the next reconnect attempt. */
FR_API int fr_timeout_ms(const fr_conn *conn);
/* Reads what the socket has without blocking (or makes a due reconnect attempt)
 * and calls the callbacks: fr_call_async replies (FR_ETIMEDOUT for those whose
 * timeout passed without one), ticks of links with a tick callback, events of
 * watches with an event callback. Returns FR_OK; FR_EFREED after a callback called
 * fr_close (the connection is freed: do not fr_close it); FR_EINVAL for NULL or from
 * a callback; else the error of a connection closed for good (FR_ECLOSED, or the
 * give-up reason), which the application still fr_closes. */
FR_API int fr_dispatch(fr_conn *conn);
/* How many times the connection was re-established. */
FR_API unsigned fr_reconnects(const fr_conn *conn);
/* The latest error: the daemon's answer after FR_ERPC, or what ended a link. */
FR_API const fr_error *fr_last_error(const fr_conn *conn);

/* DisplayLink/Register. On FR_ERPC, fr_last_error has e.g. INVALID_ARGUMENT with
 * field "range.minimum", NOT_FOUND (no such display), RESOURCE_EXHAUSTED.
 * Like every request (fr_update, fr_pause, fr_resume, fr_call, fr_watch_start):
 * FR_ERECONNECTING at once while the daemon is gone, or when the connection
 * dropped before the answer; FR_ECLOSED (or the give-up reason) once it is closed for good. */
FR_API int fr_register(fr_conn *conn, const fr_link_options *options, fr_link **out);

/* The next tick of `link` into *tick. Blocks up to timeout_ms (< 0 forever,
 * 0 just checks), waiting through a reconnect (it makes the attempts). Reads and queues ticks of the connection's other links
 * (each keeps its newest 16; older ones are dropped and counted in skipped).
 * Returns FR_OK, FR_ETIMEDOUT, FR_EENDED (the link ended: fr_link_error), or
 * the error that broke the connection when reconnect is off. */
FR_API int fr_next_tick(fr_link *link, fr_tick *tick, int timeout_ms);

/* Delivers the link's ticks to fn from fr_dispatch instead of queueing them for
 * fr_next_tick (NULL goes back to queueing). */
FR_API int fr_set_tick_callback(fr_link *link, fr_tick_fn fn, void *user);

/* DisplayLink/FrameDone as a notification: the frame for tick `sequence` is done.
 * Dropped (FR_OK) while reconnecting; a tick from before the latest re-registration
 * is sent as sequence 0, which only turns overrun pacing on. */
FR_API int fr_frame_done(fr_link *link, uint64_t sequence);

/* fr_frame_done with `content_velocity`: the speed of the frame's fastest-moving
 * content, points per second (finite; < 0 for none). The panel rate then follows the
 * display profile's velocity table (phone: up to 160 pt/s 60 Hz, up to 320 80 Hz, above
 * 120 Hz; 0 = at rest) while the link's callbacks keep their rate; a report counts for
 * 0.5 s. FR_EINVAL for NaN or an infinity. */
FR_API int fr_frame_done_velocity(fr_link *link, uint64_t sequence, double content_velocity);

/* DisplayLink/Present as a notification: the frame for tick `sequence` is
 * committed now. The daemon shows it at the first vsync at or after the latest of
 * now, `at` (s, CLOCK_MONOTONIC; < 0 for none: present(at:)) and the previous
 * shown frame plus `after_minimum_duration` (s; < 0 for none), and answers with
 * Presented (fr_next_presented). Counts as fr_frame_done. Dropped (FR_OK) while
 * reconnecting. A tick from before the latest re-registration (the daemon now
 * serving the link never sent it; Present names a tick it sent) cannot be
 * presented: its frame is reported as finished instead, as fr_frame_done reports
 * such a tick (FrameDone with sequence 0, and the content velocity), so it is not
 * shown and no Presented comes for it. */
FR_API int fr_present(fr_link *link, uint64_t sequence, double at, double after_minimum_duration);

/* fr_present aimed at one of the tick's timelines (fr_tick.timelines[i].vsync_id):
 * the frame is shown no earlier than that entry's presentation_time and its hitch
 * is measured from it. */
FR_API int fr_present_vsync(fr_link *link, uint64_t sequence, double at, double after_minimum_duration, uint64_t vsync_id);
/* fr_present with `content_velocity` (points per second; < 0 for none), as
 * fr_frame_done_velocity. */
FR_API int fr_present_velocity(fr_link *link, uint64_t sequence, double at, double after_minimum_duration, double content_velocity);

/* Pops the oldest Presented of `link` read so far (fr_next_tick reads them; the
 * newest 16 are kept) into *out. Never blocks: FR_OK, or FR_ETIMEDOUT when none waits. */
FR_API int fr_next_presented(fr_link *link, fr_presented *out);

/* DisplayLink/Update: a new range (NULL keeps it; preferred 0 = none) and/or
 * paused flag (-1 keeps it, 0 resumes, 1 pauses; any other value: FR_EINVAL). */
FR_API int fr_update(fr_link *link, const fr_range *range, int paused);
FR_API int fr_pause(fr_link *link);

/* DisplayLink/Update with adaptive: 1 makes the link adaptive, 0 not. */
FR_API int fr_set_adaptive(fr_link *link, int adaptive);

/* DisplayLink/Update with timelines (1 to 7; 0 keeps it) and/or
 * preferredFrameLatency (1 or 2; 0 keeps it). */
FR_API int fr_set_frame_timing(fr_link *link, int timelines, int preferred_frame_latency);

/* DisplayLink/Boost: for `duration` seconds (0 < duration <= 5, else FR_EINVAL)
 * the link votes *range (NULL: its own maximum as minimum, maximum and
 * preferred) instead of its own range; its ticks have boosted = 1. A later
 * boost only moves the end later: call it per input event (a scroll) to hold
 * the rate while the input lasts. *boosted_until (if not NULL) gets when the
 * boost ends, seconds on CLOCK_MONOTONIC. */
FR_API int fr_boost(fr_link *link, double duration, const fr_range *range, double *boosted_until);
FR_API int fr_resume(fr_link *link);

/* DisplayLink/Invalidate, then frees the link (whatever the result). While the
 * connection is reconnecting it succeeds at once: the link is not registered again. */
FR_API int fr_invalidate(fr_link *link);

/* The link's id for the application: the daemon's id at its first registration
 * (or, when a live link of the connection already has that id after a reconnect,
 * one more than the largest live id). Ticks carry it. */
FR_API uint64_t fr_link_id(const fr_link *link);
/* The id of the link on the daemon it is registered with now (0 while reconnecting). */
FR_API uint64_t fr_link_daemon_id(const fr_link *link);
FR_API int fr_link_get(const fr_link *link, fr_link_state *out);
/* FR_OK while the link is live; FR_EENDED once it ended, with why in *why
 * (if not NULL): e.g. status UNAVAILABLE when the daemon stopped and the
 * library could not (or was told not to) reconnect. */
FR_API int fr_link_error(const fr_link *link, fr_error *why);

/* A raw request: `params_json` is a JSON object or NULL; on FR_OK, *result_json
 * (if not NULL) is the compact JSON of the result, to free with fr_free. Streams
 * started this way (Register, Watch) are not routed. FR_EINVAL for a method name that
 * is not UTF-8 or params that are not one JSON value on one line. */
FR_API int fr_call(fr_conn *conn, const char *method, const char *params_json, char **result_json);
FR_API void fr_free(void *pointer);
/* The same request without waiting: fn gets the answer from fr_dispatch (a blocking
 * call may read it first; fr_dispatch still makes the call). Without an answer within
 * the request timeout (fr_set_request_timeout, as set when sent) fr_dispatch calls fn
 * with FR_ETIMEDOUT, a stopped or wedged daemon included: fr_timeout_ms counts down to
 * that deadline, and a later answer is ignored (a Register's link is invalidated).
 * FR_ERECONNECTING at once while the connection is down; a drop before the answer
 * calls fn with FR_ERECONNECTING (or FR_ECLOSED). fr_close drops pending replies
 * without calling fn. */
FR_API int fr_call_async(fr_conn *conn, const char *method, const char *params_json, fr_reply_fn fn, void *user);

/* Compositor/Watch: subscribes to compositor events. *state_json (if not NULL)
 * gets the GetState result taken with the subscription, to free with fr_free.
 * With fn, fr_dispatch delivers the events to it; without, fr_next_event
 * returns them. The newest 256 undelivered events (at most 32 MiB of JSON) are kept (fr_event.lost
 * counts the dropped). After a reconnect the watch is started again (same
 * fr_watch_id) and its next event is "resynchronized". */
FR_API int fr_watch_start(fr_conn *conn, fr_event_fn fn, void *user, fr_watch **out, char **state_json);
/* The next event into *event (its strings valid until the next call on this
 * watch). Blocks up to timeout_ms (< 0 forever, 0 just checks); FR_OK,
 * FR_ETIMEDOUT, or FR_EENDED once the watch ended (the connection closed for good). */
FR_API int fr_next_event(fr_watch *watch, fr_event *event, int timeout_ms);
/* Compositor/Unwatch, then frees the watch (whatever the result). */
FR_API int fr_unwatch(fr_watch *watch);
/* The watch's id: the daemon's at the first subscription, kept across reconnects. */
FR_API uint64_t fr_watch_id(const fr_watch *watch);

#ifdef __cplusplus
}
#endif

#endif
