/* libframerate: connection, links, requests, reconnect. See include/framerate.h. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include "fr_internal.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define M_REGISTER "framerate.v1.DisplayLink/Register"
#define M_TICK "framerate.v1.DisplayLink/Tick"
#define M_UPDATE "framerate.v1.DisplayLink/Update"
#define M_INVALIDATE "framerate.v1.DisplayLink/Invalidate"
#define M_FRAME_DONE "framerate.v1.DisplayLink/FrameDone"
#define M_PRESENT "framerate.v1.DisplayLink/Present"
#define M_PRESENTED "framerate.v1.DisplayLink/Presented"
#define M_BOOST "framerate.v1.DisplayLink/Boost"
#define M_CLOSED "framerate.v1.DisplayLink/Closed"
#define M_EVENT "framerate.v1.Compositor/Event"
#define M_WATCH "framerate.v1.Compositor/Watch"
#define M_UNWATCH "framerate.v1.Compositor/Unwatch"

#define READ_CHUNK 65536
/* Reads one fr_dispatch makes at most before it calls back (bounds its latency). */
#define DISPATCH_READS 16

enum { GAP_NONE, GAP_RECONNECTED, GAP_RESUMED };

struct fr_link {
    fr_conn *conn;
    fr_link *next;
    uint64_t app_id;         /* the application's id: the daemon's at the first registration */
    uint64_t daemon_id;      /* the id on the current socket's daemon (valid while bound) */
    int bound;               /* registered on the current socket */
    fr_range range;
    int64_t display;
    int paused;
    int high_frame_rate;
    int adaptive;
    int timelines;           /* 1 to 7 */
    int frame_latency;       /* 1 or 2 */
    char *label;
    double refresh_rate;
    double callback_rate;
    fr_tick queue[FR_TICK_QUEUE];
    unsigned head;
    unsigned count;
    fr_presented presented[FR_TICK_QUEUE]; /* Presented reports, a ring like queue */
    unsigned presented_head;
    unsigned presented_count;
    /* Renumbering across re-registrations, as the Swift client's TickSequencer:
     * application sequence = app_base + (daemon sequence - daemon_base), and the
     * first tick after a re-registration closes the gap. */
    int gap;
    uint64_t app_base;
    uint64_t daemon_base;
    int have_last;
    uint64_t last_sequence;  /* the last tick received, application numbering */
    double last_timestamp;
    int have_delivered;
    uint64_t last_delivered;
    int ended;
    fr_error why;
    int refused;             /* the reconnect attempt under way was refused this link: */
    fr_error refusal;        /* it ends with `refusal` if that attempt succeeds */
    fr_tick_fn tick_fn;      /* fr_set_tick_callback: ticks go to it from fr_dispatch */
    void *tick_user;
    int end_reported;        /* tick_fn was told that the link ended */
};

/* One queued event of a watch (owned strings). */
typedef struct queued_event {
    fr_event event;
    char *kind;
    char *json;
} queued_event;

struct fr_watch {
    fr_conn *conn;
    fr_watch *next;
    uint64_t app_id;         /* the daemon's id at the first subscription, kept */
    uint64_t daemon_id;      /* the id on the current socket's daemon (valid while bound) */
    int bound;
    queued_event queue[FR_EVENT_QUEUE];
    unsigned head;
    unsigned count;
    size_t queued_bytes;     /* the JSON of the queued events */
    uint64_t lost;           /* events dropped since the last one queued */
    queued_event current;    /* the event fr_next_event returned last (owned until the next call) */
    fr_event_fn fn;
    void *user;
    int ended;
    int end_reported;
    int refused;             /* as fr_link's */
    uint64_t evictions;      /* events dropped from a full queue, ever */
    unsigned attempt_count;  /* count, evictions and lost when the reconnect attempt */
    uint64_t attempt_evictions; /* under way began: what a failed attempt queued */
    uint64_t attempt_lost;   /* is taken back (unqueue_attempt) */
};

/* A request of fr_call_async awaiting its answer (or its callback). */
typedef struct async_call {
    struct async_call *next;
    uint64_t id;
    fr_reply_fn fn;
    void *user;
    int64_t deadline;        /* CLOCK_MONOTONIC ms by which the answer must come (the request
                              * timeout when sent), or -1: none */
    int is_register;         /* a Register: a reply after the deadline is invalidated */
    int done;
    int rc;
    char *result;            /* FR_OK: the result's JSON */
    fr_error error;          /* FR_ERPC */
} async_call;

/* How the socket path was chosen (docs/protocol.md, "Finding the daemon"). */
enum { SRC_EXPLICIT, SRC_ENVIRONMENT, SRC_PER_USER, SRC_SYSTEM };

struct fr_conn {
    int fd;
    int has_path;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    int source;              /* SRC_*: how path was chosen */
    char per_user[PATH_MAX]; /* SRC_SYSTEM: the per-user path looked at first (no socket there), or "" */
    char *buf;
    size_t len;
    size_t cap;
    size_t scanned;          /* bytes at the start of buf known to hold no '\n' */
    uint64_t next_id;
    fr_link *links;
    fr_watch *watches;
    async_call *asyncs;
    int in_callback;         /* fr_dispatch is calling the application */
    int close_requested;     /* fr_close was called from a callback: fr_dispatch frees the connection */
    unsigned fd_generation;  /* +1 on every change of fd */
    fr_error last_error;
    int reconnect_enabled;
    int reconnect_timeout_ms;
    int request_timeout_ms;
    unsigned reconnects;
    int lost;                /* the socket closed; reconnecting */
    int healthy;             /* the current socket delivered an answer or a tick */
    int64_t lost_at;
    int64_t next_attempt;    /* CLOCK_MONOTONIC ms of the next reconnect attempt */
    unsigned attempt;        /* the number of the next attempt in this outage (0 first) */
    fr_reconnect_policy policy;
    int fatal;               /* closed for good */
    int fatal_err;
    unsigned seed;
    uint64_t waiting;        /* the id whose answer is awaited, or 0 */
    /* Register requests that timed out on this socket: a late reply's link is
     * invalidated, or it would vote on the daemon with nobody reading its ticks. The
     * oldest is forgotten past eight. */
    uint64_t abandoned[8];
    unsigned abandoned_count;
    int answered;
    fr_msg answer;
    int has_unsolicited;
    fr_error unsolicited;
    int has_refusal;         /* the daemon refused the connection (e.g. its connection limit) */
    fr_error refusal;
};

/* ---- small helpers ------------------------------------------------------ */

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void copy_text(char *dst, size_t size, const char *src, size_t len) {
    if (size == 0) return;
    if (len >= size) len = size - 1;
    if (len) memcpy(dst, src, len);
    dst[len] = '\0';
}

static const char *const grpc_names[] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
    "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
};

int fr__grpc_code(const char *status) {
    for (int i = 0; i < (int)(sizeof grpc_names / sizeof grpc_names[0]); i++)
        if (strcmp(status, grpc_names[i]) == 0) return i;
    return FR_GRPC_UNKNOWN;
}

static void set_error(fr_error *e, int grpc, const char *fmt, ...) {
    memset(e, 0, sizeof *e);
    e->grpc_code = grpc;
    e->code = grpc;
    copy_text(e->status, sizeof e->status, grpc_names[grpc], strlen(grpc_names[grpc]));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
}

const char *fr_strerror(int err) {
    switch (err) {
    case FR_OK: return "success";
    case FR_EINVAL: return "invalid argument";
    case FR_ENOMEM: return "out of memory";
    case FR_ENOTRUNNING:
        return "framerated is not running: nothing listens on the socket (fr_connect_error() names every path tried "
               "and what to do)";
    case FR_EACCES: return "permission denied connecting to the framerated socket";
    case FR_ECONNECT: return "cannot connect to the framerated socket (path too long, or not a socket)";
    case FR_EIO: return "input/output error on the framerated socket";
    case FR_EPROTO: return "framerated sent a malformed line";
    case FR_ETIMEDOUT: return "timed out";
    case FR_ECLOSED: return "the connection to framerated is closed";
    case FR_ERPC: return "framerated answered with an error (see fr_last_error)";
    case FR_EENDED: return "the display link has ended (see fr_link_error)";
    case FR_EUNTRUSTED:
        return "the process listening on the socket runs as a user that is neither root, the framerated service user "
               "nor you (fr_connect_error() names its uid)";
    case FR_ERECONNECTING:
        return "the daemon went away and the connection is reconnecting: the call was not made or its answer was lost; "
               "call again once it is back";
    case FR_EFREED: return "a callback closed the connection, and it is freed: do not use it again";
    default: return "unknown error";
    }
}

/* ---- finding the daemon, and who answers ------------------------------------- */

#define SYSTEM_SOCKET "/run/framerated/framerated.sock"
#define PER_USER_NAME "framerated.sock"
#define SERVICE_USER "framerated"

/* The latest connect failure of this thread, as a sentence (fr_connect_error). */
static _Thread_local char connect_error[PATH_MAX + 1024];

static int is_socket(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* The rule: explicit, else $FRAMERATED_SOCKET, else $XDG_RUNTIME_DIR/framerated.sock
 * when a socket exists there, else the system socket. *source gets SRC_*; per_user
 * (if not NULL) the per-user path looked at and passed over, or "". */
static int find_socket(const char *explicit_path, char *buf, size_t size, int *source, char *per_user, size_t per_user_size) {
    if (buf == NULL || size == 0) return FR_EINVAL;
    if (per_user && per_user_size) per_user[0] = '\0';
    const char *env, *chosen;
    char candidate[PATH_MAX];
    int from;
    if (explicit_path && *explicit_path) {
        chosen = explicit_path;
        from = SRC_EXPLICIT;
    } else if ((env = getenv("FRAMERATED_SOCKET")) && *env) {
        chosen = env;
        from = SRC_ENVIRONMENT;
    } else {
        chosen = SYSTEM_SOCKET;
        from = SRC_SYSTEM;
        if ((env = getenv("XDG_RUNTIME_DIR")) && *env) {
            size_t len = strlen(env);
            int n = snprintf(candidate, sizeof candidate, "%s%s" PER_USER_NAME, env, env[len - 1] == '/' ? "" : "/");
            if (n > 0 && (size_t)n < sizeof candidate) {
                if (is_socket(candidate)) {
                    chosen = candidate;
                    from = SRC_PER_USER;
                } else if (per_user && per_user_size) {
                    snprintf(per_user, per_user_size, "%s", candidate);
                }
            }
        }
    }
    if (source) *source = from;
    int n = snprintf(buf, size, "%s", chosen);
    return (n < 0 || (size_t)n >= size) ? FR_EINVAL : FR_OK;
}

int fr_socket_path(const char *explicit_path, char *buf, size_t size) {
    return find_socket(explicit_path, buf, size, NULL, NULL, 0);
}

const char *fr_connect_error(void) { return connect_error; }

int fr__trusts_uid(unsigned peer_uid, unsigned own_uid, int has_service_uid, unsigned service_uid) {
    return peer_uid == 0 || peer_uid == own_uid || (has_service_uid && peer_uid == service_uid);
}

/* The framerated service user's uid (getpwnam_r); 0 when there is no such user. */
static int service_uid(uid_t *uid) {
    struct passwd entry, *found = NULL;
    char buffer[16384];
    if (getpwnam_r(SERVICE_USER, &entry, buffer, sizeof buffer, &found) != 0 || found == NULL) return 0;
    *uid = entry.pw_uid;
    return 1;
}

/* The uid of the process listening at the other end of `fd` (SO_PEERCRED);
 * struct ucred is declared here because glibc hides it behind _GNU_SOURCE. */
static int peer_uid(int fd, uid_t *uid) {
    struct {
        pid_t pid;
        uid_t uid;
        gid_t gid;
    } credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0 || length != sizeof credentials) return -1;
    *uid = credentials.uid;
    return 0;
}

/* Sets connect_error for "nothing listens": the paths tried and the advice that fits them. */
static void explain_not_running(const char *path, int source, const char *per_user) {
    char *e = connect_error;
    size_t n = sizeof connect_error;
    switch (source) {
    case SRC_EXPLICIT:
        snprintf(e, n, "framerated is not running: nothing is listening on %s (the socket asked for). Start a daemon there "
                 "with `framerated --socket %s`, or leave the path out to find the default daemon.", path, path);
        break;
    case SRC_ENVIRONMENT:
        snprintf(e, n, "framerated is not running: nothing is listening on %s (from $FRAMERATED_SOCKET). Start a daemon "
                 "there with `framerated --socket %s`, or unset FRAMERATED_SOCKET to find the default daemon.", path, path);
        break;
    case SRC_PER_USER:
        snprintf(e, n, "framerated is not running: nothing is listening on %s, your per-user daemon's socket "
                 "($XDG_RUNTIME_DIR/framerated.sock; the system daemon is not tried while that socket exists). Start your "
                 "daemon with `framerated`, or remove the stale socket to use the system daemon at " SYSTEM_SOCKET ".", path);
        break;
    default:
        if (per_user && *per_user)
            snprintf(e, n, "framerated is not running: tried %s (no socket there: no per-user daemon) and %s (nothing "
                     "listening: no system daemon). Start the system daemon with `systemctl start framerated.socket`, or "
                     "your own with `framerated`, or name a socket with the path argument or $FRAMERATED_SOCKET.",
                     per_user, path);
        else
            snprintf(e, n, "framerated is not running: tried %s (nothing listening: no system daemon; XDG_RUNTIME_DIR is "
                     "not set, so no per-user daemon was looked for). Start the system daemon with `systemctl start "
                     "framerated.socket`, or your own with `framerated --socket PATH` and name it with the path argument "
                     "or $FRAMERATED_SOCKET.", path);
        break;
    }
}

/* ---- a string builder for requests ------------------------------------- */

typedef struct sb {
    char *p;
    size_t len;
    size_t cap;
    int oom;
} sb;

static void sb_putn(sb *s, const char *text, size_t n) {
    if (s->oom) return;
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap < s->len + n + 1) cap *= 2;
        char *p = realloc(s->p, cap);
        if (p == NULL) { s->oom = 1; return; }
        s->p = p;
        s->cap = cap;
    }
    memcpy(s->p + s->len, text, n);
    s->len += n;
    s->p[s->len] = '\0';
}

static void sb_puts(sb *s, const char *text) { sb_putn(s, text, strlen(text)); }

static void sb_u64(sb *s, uint64_t v) {
    char tmp[24];
    snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    sb_puts(s, tmp);
}

static void sb_i64(sb *s, int64_t v) {
    char tmp[24];
    snprintf(tmp, sizeof tmp, "%lld", (long long)v);
    sb_puts(s, tmp);
}

/* A finite double as JSON, whatever the locale's decimal point. */
/* Appends ,"timelines":t and ,"preferredFrameLatency":l for the values given (each only
 * when `given`): Register sends what differs from the defaults, Update what changes. */
static void sb_frame_timing(sb *s, int send_timelines, int64_t timelines, int send_latency, int64_t latency) {
    if (send_timelines) {
        sb_puts(s, ",\"timelines\":");
        sb_i64(s, timelines);
    }
    if (send_latency) {
        sb_puts(s, ",\"preferredFrameLatency\":");
        sb_i64(s, latency);
    }
}

/* The "C" locale for numbers, made once: JSON wants '.' whatever the program's locale,
 * and a decimal point may be several bytes (ps_AF's U+066B), which no replacement of
 * one byte after the fact can undo. */
static locale_t numeric_c_locale = (locale_t)0;
static pthread_once_t numeric_c_once = PTHREAD_ONCE_INIT;
static void make_numeric_c_locale(void) { numeric_c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

static void sb_double(sb *s, double v) {
    char tmp[40];
    (void)pthread_once(&numeric_c_once, make_numeric_c_locale);
    /* uselocale is per thread: another thread's setlocale cannot change it midway. */
    locale_t previous = numeric_c_locale ? uselocale(numeric_c_locale) : (locale_t)0;
    snprintf(tmp, sizeof tmp, "%.17g", v);
    if (previous) {
        uselocale(previous);
    } else {
        /* No C locale object (out of memory): replace a one-byte decimal point. */
        const char *point = localeconv()->decimal_point;
        if (point && point[0] && point[0] != '.' && !point[1])
            for (char *c = tmp; *c; c++)
                if (*c == point[0]) *c = '.';
    }
    sb_puts(s, tmp);
}

/* Appends "range":{"minimum":…,"maximum":…,"preferred":…} (without a leading comma). */
static void sb_range(sb *s, const fr_range *range) {
    sb_puts(s, "\"range\":{\"minimum\":");
    sb_double(s, range->minimum);
    sb_puts(s, ",\"maximum\":");
    sb_double(s, range->maximum);
    sb_puts(s, ",\"preferred\":");
    sb_double(s, range->preferred);
    sb_puts(s, "}");
}

static void sb_json_string(sb *s, const char *text) {
    sb_putn(s, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        char esc[8];
        switch (*c) {
        case '"': sb_putn(s, "\\\"", 2); break;
        case '\\': sb_putn(s, "\\\\", 2); break;
        case '\n': sb_putn(s, "\\n", 2); break;
        case '\r': sb_putn(s, "\\r", 2); break;
        case '\t': sb_putn(s, "\\t", 2); break;
        default:
            if (*c < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *c);
                sb_puts(s, esc);
            } else {
                sb_putn(s, (const char *)c, 1);
            }
        }
    }
    sb_putn(s, "\"", 1);
}

/* ---- decoding a daemon line ------------------------------------------- */

void fr__msg_clear(fr_msg *msg) {
    fr_json_free(msg->doc);
    free(msg->event_json);
    memset(msg, 0, sizeof *msg);
}

static void decode_error_object(const fr_json *object, fr_error *e) {
    memset(e, 0, sizeof *e);
    int64_t code = FR_GRPC_UNKNOWN;
    const fr_json *v;
    int has_code = fr_json_i64(fr_json_get(object, "code"), &code) == 0;
    if (code > 1000000 || code < -1000000) code = FR_GRPC_UNKNOWN;
    e->code = (int)code;
    if ((v = fr_json_get(object, "message")) && v->type == FR_JSON_STRING)
        copy_text(e->message, sizeof e->message, v->u.str.s, v->u.str.len);
    const fr_json *data = fr_json_get(object, "data");
    if ((v = fr_json_get(data, "status")) && v->type == FR_JSON_STRING) {
        copy_text(e->status, sizeof e->status, v->u.str.s, v->u.str.len);
        e->grpc_code = fr__grpc_code(e->status);
    } else {
        /* No data.status (not this daemon): derive it from the code. */
        int grpc = FR_GRPC_UNKNOWN;
        if (code == -32700 || code == -32600 || code == -32602) grpc = FR_GRPC_INVALID_ARGUMENT;
        else if (code == -32601) grpc = FR_GRPC_UNIMPLEMENTED;
        else if (code == -32603) grpc = FR_GRPC_INTERNAL;
        else if (has_code && code >= 0 && code <= 16) grpc = (int)code;
        e->grpc_code = grpc;
        copy_text(e->status, sizeof e->status, grpc_names[grpc], strlen(grpc_names[grpc]));
    }
    if ((v = fr_json_get(data, "field")) && v->type == FR_JSON_STRING)
        copy_text(e->field, sizeof e->field, v->u.str.s, v->u.str.len);
}

static int decode_tick(const fr_json *params, fr_tick *t) {
    memset(t, 0, sizeof *t);
    if (params == NULL || params->type != FR_JSON_OBJECT) return FR_EPROTO;
    if (fr_json_u64(fr_json_get(params, "link"), &t->link) != 0) return FR_EPROTO;
    if (fr_json_u64(fr_json_get(params, "sequence"), &t->sequence) != 0) return FR_EPROTO;
    if (fr_json_double(fr_json_get(params, "timestamp"), &t->timestamp) != 0) return FR_EPROTO;
    if (fr_json_double(fr_json_get(params, "targetTimestamp"), &t->target_timestamp) != 0) return FR_EPROTO;
    if (fr_json_double(fr_json_get(params, "duration"), &t->duration) != 0) return FR_EPROTO;
    if (fr_json_double(fr_json_get(params, "refreshRate"), &t->refresh_rate) != 0) return FR_EPROTO;
    if (fr_json_double(fr_json_get(params, "callbackRate"), &t->callback_rate) != 0) return FR_EPROTO;
    const fr_json *skipped = fr_json_get(params, "skipped");
    if (skipped && skipped->type != FR_JSON_NULL && fr_json_u64(skipped, &t->skipped) != 0) return FR_EPROTO;
    if (t->sequence > ((uint64_t)1 << 62) || t->skipped > ((uint64_t)1 << 62)) return FR_EPROTO;
    const fr_json *boosted = fr_json_get(params, "boosted");
    t->boosted = boosted && boosted->type == FR_JSON_TRUE;
    const fr_json *presentation = fr_json_get(params, "targetPresentationTimestamp");
    t->target_presentation_timestamp = t->target_timestamp; /* a daemon older than the field */
    if (presentation && fr_json_double(presentation, &t->target_presentation_timestamp) != 0) return FR_EPROTO;
    const fr_json *timelines = fr_json_get(params, "timelines");
    if (timelines && timelines->type != FR_JSON_NULL) {
        if (timelines->type != FR_JSON_ARRAY || timelines->u.kids.count > FR_MAX_TIMELINES) return FR_EPROTO;
        for (const fr_json *entry = timelines->u.kids.first; entry; entry = entry->next) {
            fr_frame_timeline *out = &t->timelines[t->timeline_count++];
            if (fr_json_u64(fr_json_get(entry, "vsyncId"), &out->vsync_id) != 0) return FR_EPROTO;
            if (fr_json_double(fr_json_get(entry, "deadline"), &out->deadline) != 0) return FR_EPROTO;
            if (fr_json_double(fr_json_get(entry, "presentationTime"), &out->presentation_time) != 0) return FR_EPROTO;
        }
    }
    return FR_OK;
}

/* An Event's fields (unknown or missing ones are left 0 / -1). */
static int decode_event(const fr_json *params, fr_msg *msg) {
    const fr_json *kind = fr_json_get(params, "kind");
    if (kind && kind->type == FR_JSON_STRING) copy_text(msg->event_kind, sizeof msg->event_kind, kind->u.str.s, kind->u.str.len);
    int64_t display;
    msg->display = fr_json_i64(fr_json_get(params, "display"), &display) == 0 ? display : -1;
    const fr_json *link = fr_json_get(params, "link");
    if (link && link->type == FR_JSON_OBJECT) link = fr_json_get(link, "link");
    if (fr_json_u64(link, &msg->link) != 0) msg->link = 0;
    double rate;
    msg->from = fr_json_double(fr_json_get(params, "from"), &rate) == 0 ? rate : 0;
    msg->to = fr_json_double(fr_json_get(params, "to"), &rate) == 0 ? rate : 0;
    msg->event_json = malloc(params->raw_len + 1);
    if (msg->event_json == NULL) return FR_ENOMEM;
    memcpy(msg->event_json, params->raw, params->raw_len);
    msg->event_json[params->raw_len] = '\0';
    msg->kind = FR_MSG_EVENT;
    return FR_OK;
}

static int decode_presented(const fr_json *params, fr_presented *p) {
    if (params == NULL || params->type != FR_JSON_OBJECT) return FR_EPROTO;
    if (fr_json_u64(fr_json_get(params, "link"), &p->link) != 0) return FR_EPROTO;
    if (fr_json_u64(fr_json_get(params, "sequence"), &p->sequence) != 0) return FR_EPROTO;
    if (fr_json_double(fr_json_get(params, "presentedTime"), &p->presented_time) != 0) return FR_EPROTO;
    if (fr_json_double(fr_json_get(params, "expectedTime"), &p->expected_time) != 0) return FR_EPROTO;
    if (fr_json_double(fr_json_get(params, "hitch"), &p->hitch) != 0) return FR_EPROTO;
    const fr_json *dropped = fr_json_get(params, "dropped");
    if (dropped == NULL || (dropped->type != FR_JSON_TRUE && dropped->type != FR_JSON_FALSE)) return FR_EPROTO;
    p->dropped = dropped->type == FR_JSON_TRUE;
    if (p->sequence > ((uint64_t)1 << 62)) return FR_EPROTO;
    return FR_OK;
}

static int decode_object(const fr_json *root, fr_msg *msg) {
    const fr_json *method = fr_json_get(root, "method");
    if (method) {
        if (method->type != FR_JSON_STRING) return FR_EPROTO;
        const fr_json *params = fr_json_get(root, "params");
        const char *name = method->u.str.s;
        if (strcmp(name, M_TICK) == 0) {
            msg->kind = FR_MSG_TICK;
            return decode_tick(params, &msg->tick);
        }
        if (strcmp(name, M_PRESENTED) == 0) {
            msg->kind = FR_MSG_PRESENTED;
            return decode_presented(params, &msg->presented);
        }
        if (strcmp(name, M_CLOSED) == 0) {
            if (params == NULL || params->type != FR_JSON_OBJECT) return FR_EPROTO;
            if (fr_json_u64(fr_json_get(params, "link"), &msg->link) != 0) return FR_EPROTO;
            msg->kind = FR_MSG_CLOSED;
            const fr_json *status = fr_json_get(params, "status");
            const fr_json *message = fr_json_get(params, "message");
            const char *name_text = (status && status->type == FR_JSON_STRING) ? status->u.str.s : "UNKNOWN";
            size_t name_len = (status && status->type == FR_JSON_STRING) ? status->u.str.len : 7;
            copy_text(msg->error.status, sizeof msg->error.status, name_text, name_len);
            msg->error.grpc_code = fr__grpc_code(msg->error.status);
            msg->error.code = msg->error.grpc_code;
            if (message && message->type == FR_JSON_STRING)
                copy_text(msg->error.message, sizeof msg->error.message, message->u.str.s, message->u.str.len);
            else
                copy_text(msg->error.message, sizeof msg->error.message, "the daemon closed the link", 26);
            return FR_OK;
        }
        msg->kind = FR_MSG_IGNORED;
        if (strcmp(name, M_EVENT) == 0 && params && params->type == FR_JSON_OBJECT &&
            fr_json_u64(fr_json_get(params, "watch"), &msg->watch) == 0)
            return decode_event(params, msg);
        return FR_OK;
    }
    const fr_json *id = fr_json_get(root, "id");
    const fr_json *error = fr_json_get(root, "error");
    const fr_json *result = fr_json_get(root, "result");
    if (id == NULL) return FR_EPROTO;
    if ((error != NULL) == (result != NULL)) return FR_EPROTO; /* exactly one of them */
    if (error && error->type != FR_JSON_OBJECT) return FR_EPROTO;
    if (id->type == FR_JSON_NULL) {
        if (error == NULL) return FR_EPROTO;
        msg->kind = FR_MSG_UNSOLICITED_ERROR;
        decode_error_object(error, &msg->error);
        return FR_OK;
    }
    if (fr_json_u64(id, &msg->id) != 0) {
        msg->kind = FR_MSG_IGNORED; /* not an id this library sends */
        return FR_OK;
    }
    if (error) {
        msg->kind = FR_MSG_ERROR;
        decode_error_object(error, &msg->error);
    } else {
        msg->kind = FR_MSG_RESULT;
        msg->result = result;
    }
    return FR_OK;
}

int fr__decode_line(const char *line, size_t len, fr_msg *msg) {
    memset(msg, 0, sizeof *msg);
    if (line == NULL && len) return FR_EINVAL;
    if (len > FR_MAX_LINE) return FR_EPROTO;
    /* A long line (a GetState, a Watch's state: a local user's links and labels make it
     * grow) is kept only as deep as this library reads (FR_KEPT_LEVELS); below, values
     * are checked and left as text, so a line costs about its length rather than a
     * 64-byte node per value. A reader that looked deeper would find nothing and fail
     * the line as malformed, never read a wrong value. */
    int keep = len >= FR_KEEP_WHOLE_BELOW ? FR_KEPT_LEVELS : INT_MAX;
    int rc = fr_json_parse_bounded(line, len, keep, &msg->doc, NULL);
    if (rc == -2) return FR_ENOMEM;
    if (rc != 0) return FR_EPROTO;
    const fr_json *root = fr_json_root(msg->doc);
    if (root->type == FR_JSON_ARRAY) {
        msg->kind = FR_MSG_IGNORED; /* a batch reply: this library sends no batches */
        return FR_OK;
    }
    if (root->type != FR_JSON_OBJECT) {
        fr__msg_clear(msg);
        return FR_EPROTO;
    }
    rc = decode_object(root, msg);
    if (rc != FR_OK) fr__msg_clear(msg);
    else if (msg->kind != FR_MSG_RESULT) {
        fr_json_free(msg->doc); /* everything needed was copied out */
        msg->doc = NULL;
    }
    return rc;
}

/* ---- links ---------------------------------------------------------------- */

static void link_end(fr_link *link, const fr_error *why) {
    if (link->ended) return;
    link->ended = 1;
    link->bound = 0;
    link->why = *why;
}

/* max(1, round((next - previous) * rate) - 1), rounding half away from zero
 * (without libm: x + 0.5 truncated is round(x) for x >= 0). */
static uint64_t skipped_intervals(double previous, double next, double rate) {
    double x = (next - previous) * rate;
    if (!(x >= 2.5)) return 1; /* also NaN: round(x) - 1 <= 1 */
    if (!(x < 9007199254740992.0)) return (uint64_t)9007199254740992ull; /* also +inf */
    uint64_t intervals = (uint64_t)(x + 0.5);
    return intervals - 1 > 1 ? intervals - 1 : 1;
}

static void link_push(fr_link *link, fr_tick tick) {
    uint64_t sequence, skipped;
    if (link->gap == GAP_NONE || !link->have_last) {
        sequence = tick.sequence >= link->daemon_base ? link->app_base + (tick.sequence - link->daemon_base) : link->app_base;
        skipped = tick.skipped;
    } else if (link->gap == GAP_RECONNECTED) {
        skipped = skipped_intervals(link->last_timestamp, tick.timestamp, tick.callback_rate);
        sequence = link->last_sequence + skipped + 1;
    } else { /* re-registered paused: a resume reports no skip */
        sequence = link->last_sequence + 1;
        skipped = 0;
    }
    if (link->gap != GAP_NONE) {
        link->gap = GAP_NONE;
        link->app_base = sequence;
        link->daemon_base = tick.sequence;
    }
    link->have_last = 1;
    link->last_sequence = sequence;
    link->last_timestamp = tick.timestamp;
    tick.link = link->app_id;
    tick.sequence = sequence;
    tick.skipped = skipped;
    if (link->count == FR_TICK_QUEUE) { /* drop the oldest; counted in skipped on delivery */
        link->head = (link->head + 1) % FR_TICK_QUEUE;
        link->count--;
    }
    link->queue[(link->head + link->count) % FR_TICK_QUEUE] = tick;
    link->count++;
}

/* A Presented for `link`, renumbered like its ticks; the oldest is dropped when full. */
static void link_push_presented(fr_link *link, fr_presented frame) {
    frame.link = link->app_id;
    frame.sequence = frame.sequence >= link->daemon_base ? link->app_base + (frame.sequence - link->daemon_base) : link->app_base;
    if (link->presented_count == FR_TICK_QUEUE) {
        link->presented_head = (link->presented_head + 1) % FR_TICK_QUEUE;
        link->presented_count--;
    }
    link->presented[(link->presented_head + link->presented_count) % FR_TICK_QUEUE] = frame;
    link->presented_count++;
}

/* The daemon's sequence for the application's (FrameDone, Present): 0 for one from
 * before the current registration (or while its first tick is awaited), which
 * FrameDone accepts (it only turns overrun pacing on) and Present does not (see present). */
static uint64_t daemon_sequence(const fr_link *link, uint64_t sequence) {
    if (link->gap != GAP_NONE || sequence < link->app_base) return 0;
    return link->daemon_base + (sequence - link->app_base);
}

/* The application's id for a link the daemon numbered `preferred`: that, unless a
 * live link of the connection has it (a restarted daemon numbers from 1 again),
 * then one more than the largest live id. */
static uint64_t claim_id(const fr_conn *conn, uint64_t preferred) {
    uint64_t largest = 0;
    int taken = 0;
    for (const fr_link *link = conn->links; link; link = link->next) {
        if (link->ended || link->app_id == 0) continue;
        if (link->app_id == preferred) taken = 1;
        if (link->app_id > largest) largest = link->app_id;
    }
    return taken ? largest + 1 : preferred;
}

static fr_link *find_link(fr_conn *conn, uint64_t id) {
    for (fr_link *link = conn->links; link; link = link->next)
        if (link->bound && link->daemon_id == id) return link;
    return NULL;
}

static void free_watch(fr_watch *watch) {
    for (unsigned i = 0; i < watch->count; i++) {
        queued_event *q = &watch->queue[(watch->head + i) % FR_EVENT_QUEUE];
        free(q->kind);
        free(q->json);
    }
    free(watch->current.kind);
    free(watch->current.json);
    free(watch);
}

static void free_link(fr_link *link) {
    free(link->label);
    free(link);
}

static void unlink_link(fr_conn *conn, fr_link *link) {
    for (fr_link **p = &conn->links; *p; p = &(*p)->next)
        if (*p == link) {
            *p = link->next;
            return;
        }
}

/* ---- the socket ------------------------------------------------------------ */

/* How long a connect may wait for a daemon whose backlog is full, at most (ms). */
#define CONNECT_TIMEOUT_MS 5000

/* The earlier of two deadlines (CLOCK_MONOTONIC ms; < 0: none). */
static int64_t earlier_deadline(int64_t a, int64_t b) {
    if (a < 0) return b;
    if (b < 0) return a;
    return a < b ? a : b;
}

/* When a request made now must be answered by: the request timeout from now, or -1. */
static int64_t request_deadline(const fr_conn *conn) {
    return conn->request_timeout_ms < 0 ? -1 : now_ms() + conn->request_timeout_ms;
}

/* Connects to conn->path and checks who listens there: root, the framerated user
 * or this process's user. The connect waits at most CONNECT_TIMEOUT_MS, and not past
 * `deadline` (ms, < 0: none), signals included. On failure sets connect_error (this
 * thread) and returns FR_ENOTRUNNING, FR_EACCES, FR_ECONNECT, FR_EUNTRUSTED, FR_ENOMEM or FR_EIO. */
static int open_socket(const fr_conn *conn, int64_t deadline, int *fd_out) {
    const char *path = conn->path;
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof addr.sun_path) {
        snprintf(connect_error, sizeof connect_error, "cannot connect to %s: the path is too long for a Unix socket "
                 "(at most %zu bytes)", path, sizeof addr.sun_path - 1);
        return FR_ECONNECT;
    }
    memcpy(addr.sun_path, path, n);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int err = errno; /* before snprintf, which may change it */
        snprintf(connect_error, sizeof connect_error, "cannot create a socket: %s", strerror(err));
        return err == ENOMEM || err == ENOBUFS ? FR_ENOMEM : FR_EIO;
    }
    /* A daemon that is stopped or wedged stops accepting, its backlog fills, and a
     * blocking connect would wait for good; with SO_SNDTIMEO (which the kernel applies to
     * a Unix connect) it fails with EAGAIN instead. The wait is measured against one
     * deadline, so a signal that interrupts it does not start it over. */
    deadline = earlier_deadline(deadline, now_ms() + CONNECT_TIMEOUT_MS);
    int rc;
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            rc = -1;
            errno = EAGAIN;
            break;
        }
        struct timeval tv = { (time_t)(left / 1000), (long)(left % 1000) * 1000 };
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        rc = connect(fd, (struct sockaddr *)&addr, sizeof addr);
        if (rc == 0 || errno != EINTR) break;
    }
    int err = rc < 0 ? errno : 0;
    /* The writes afterwards keep the connect's bound. */
    struct timeval write_timeout = { CONNECT_TIMEOUT_MS / 1000, 0 };
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &write_timeout, sizeof write_timeout);
    if (rc < 0) {
        close(fd);
        struct stat st;
        switch (err) {
        case ECONNREFUSED:
            if (stat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) break;
            /* fall through */
        case ENOENT:
            explain_not_running(path, conn->source, conn->per_user);
            return FR_ENOTRUNNING;
        case EAGAIN:
            snprintf(connect_error, sizeof connect_error, "cannot connect to %s: the daemon did not accept the connection "
                     "in time (its backlog is full: it is stopped, wedged or overloaded)", path);
            return FR_ECONNECT;
        case EACCES:
        case EPERM:
            snprintf(connect_error, sizeof connect_error, "permission denied connecting to %s: your user may not use "
                     "this daemon's socket. Ask an administrator for access, or run your own daemon with "
                     "`framerated --socket PATH`.", path);
            return FR_EACCES;
        default:
            break;
        }
        snprintf(connect_error, sizeof connect_error, "cannot connect to %s: %s", path,
                 err == ECONNREFUSED || err == ENOTSOCK ? "the path exists but is not a socket" : strerror(err));
        return FR_ECONNECT;
    }
    uid_t uid, service = 0;
    if (peer_uid(fd, &uid) != 0) {
        int err = errno;
        snprintf(connect_error, sizeof connect_error, "cannot connect to %s: cannot tell who is listening (SO_PEERCRED: "
                 "%s), so it is not trusted", path, strerror(err));
        close(fd);
        return FR_ECONNECT;
    }
    int has_service = service_uid(&service);
    if (!fr__trusts_uid(uid, geteuid(), has_service, service)) {
        snprintf(connect_error, sizeof connect_error, "refusing the daemon at %s: the process listening there runs as uid "
                 "%u, which is neither root, the framerated service user nor you, so it may be impersonating framerated. "
                 "Check who owns that socket, and name the real daemon's socket with the path argument or "
                 "$FRAMERATED_SOCKET.", path, (unsigned)uid);
        close(fd);
        return FR_EUNTRUSTED;
    }
    connect_error[0] = '\0';
    *fd_out = fd;
    return FR_OK;
}

static int can_reconnect(const fr_conn *conn) { return conn->has_path && conn->reconnect_enabled && !conn->fatal; }

/* A random number in [0, 1) for the jitter (an LCG seeded per connection). */
static double next_random(fr_conn *conn) {
    conn->seed = conn->seed * 1103515245u + 12345u;
    return (double)((conn->seed >> 8) & 0xFFFFu) / 65536.0;
}

/* Schedules attempt conn->attempt after the policy's delay. */
static void schedule_attempt(fr_conn *conn, int64_t now) {
    double delay = fr_reconnect_delay_ms(&conn->policy, conn->attempt, next_random(conn));
    conn->next_attempt = now + (int64_t)(delay + 0.5); /* delay is in [0, maximum]: rounded to ms */
}

/* Requests of fr_call_async that will get no answer: done with `rc`. */
static void fail_asyncs(fr_conn *conn, int rc) {
    for (async_call *call = conn->asyncs; call; call = call->next)
        if (!call->done) {
            call->done = 1;
            call->rc = rc;
        }
}

static void close_socket(fr_conn *conn) {
    if (conn->fd >= 0) {
        close(conn->fd);
        conn->fd_generation++;
    }
    conn->fd = -1;
    conn->abandoned_count = 0; /* their links end with the socket */
    conn->len = 0;
    conn->scanned = 0;
    for (fr_link *link = conn->links; link; link = link->next) link->bound = 0;
    for (fr_watch *watch = conn->watches; watch; watch = watch->next) watch->bound = 0;
    if (conn->answered) fr__msg_clear(&conn->answer);
    conn->answered = 0;
    fail_asyncs(conn, can_reconnect(conn) ? FR_ERECONNECTING : FR_ECLOSED);
}

static void end_everything(fr_conn *conn, int err, const fr_error *why) {
    conn->fatal = 1;
    conn->fatal_err = err;
    conn->last_error = *why;
    for (fr_link *link = conn->links; link; link = link->next) link_end(link, why);
    for (fr_watch *watch = conn->watches; watch; watch = watch->next) {
        watch->ended = 1;
        watch->bound = 0;
    }
    fail_asyncs(conn, FR_ECLOSED);
}

/* The socket is gone: schedule the reconnect, or end everything. A connection
 * that delivered an answer or a tick starts the backoff again at attempt 0;
 * one that dropped before (accepted, then refused) goes on from where the
 * previous outage stopped, so a refusing daemon is not hammered. */
static void conn_lost(fr_conn *conn, int cause) {
    close_socket(conn);
    if (conn->has_unsolicited) {
        conn->last_error = conn->unsolicited;
        if (conn->unsolicited.grpc_code != FR_GRPC_UNAVAILABLE) {
            conn->refusal = conn->unsolicited;
            conn->has_refusal = 1;
        }
    }
    if (can_reconnect(conn)) {
        if (!conn->lost) {
            int64_t now = now_ms();
            conn->lost = 1;
            conn->lost_at = now;
            if (conn->healthy) conn->attempt = 0;
            schedule_attempt(conn, now);
        }
        return;
    }
    fr_error why;
    if (cause == FR_EPROTO)
        set_error(&why, FR_GRPC_INTERNAL, "framerated sent a malformed line; the connection was dropped");
    else if (conn->has_unsolicited)
        why = conn->unsolicited;
    else
        set_error(&why, FR_GRPC_UNAVAILABLE, "the connection to framerated closed");
    end_everything(conn, FR_ECLOSED, &why);
}

static int write_all(fr_conn *conn, const char *data, size_t len) {
    while (len) {
        ssize_t n = send(conn->fd, data, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return FR_EIO;
        }
        data += n;
        len -= (size_t)n;
    }
    return FR_OK;
}

/* Remembers the Register request `id` that timed out (the oldest goes past the limit). */
static void abandon_register(fr_conn *conn, uint64_t id) {
    size_t limit = sizeof conn->abandoned / sizeof conn->abandoned[0];
    if (conn->abandoned_count == limit) {
        memmove(conn->abandoned, conn->abandoned + 1, (limit - 1) * sizeof conn->abandoned[0]);
        conn->abandoned_count--;
    }
    conn->abandoned[conn->abandoned_count++] = id;
}

/* The late reply to an abandoned Register: ends the link it created, with an Invalidate
 * notification (nothing to wait for). When the notification cannot be sent whole (out of
 * memory, or a send that failed: EAGAIN after SO_SNDTIMEO leaves the socket up), the
 * socket is shut down instead: the daemon then drops every link of the connection, this
 * one with them, and the next read sees the end and reconnects, registering the live
 * links again. Returns whether `msg` was such a reply. */
static int invalidate_abandoned(fr_conn *conn, const fr_msg *msg) {
    for (unsigned i = 0; i < conn->abandoned_count; i++) {
        if (conn->abandoned[i] != msg->id) continue;
        memmove(conn->abandoned + i, conn->abandoned + i + 1, (conn->abandoned_count - i - 1) * sizeof conn->abandoned[0]);
        conn->abandoned_count--;
        uint64_t link;
        if (msg->kind == FR_MSG_RESULT && conn->fd >= 0 && fr_json_u64(fr_json_get(msg->result, "link"), &link) == 0) {
            /* Built as the other notifications are, but written without send_notification:
             * this runs while the read buffer is being processed, where a failed write must
             * not drop the connection under it. `shutdown` leaves the descriptor valid; the
             * next read finds out. */
            sb s = { 0 };
            sb_puts(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"" M_INVALIDATE "\",\"params\":{\"link\":");
            sb_u64(&s, link);
            sb_puts(&s, "}}\n");
            if (s.oom || write_all(conn, s.p, s.len) != FR_OK) (void)shutdown(conn->fd, SHUT_RDWR);
            free(s.p);
        }
        return 1;
    }
    return 0;
}

static fr_watch *find_watch(fr_conn *conn, uint64_t id) {
    for (fr_watch *watch = conn->watches; watch; watch = watch->next)
        if (watch->bound && watch->daemon_id == id) return watch;
    return NULL;
}

static async_call *find_async(fr_conn *conn, uint64_t id) {
    for (async_call *call = conn->asyncs; call; call = call->next)
        if (call->id == id && !call->done) return call;
    return NULL;
}

/* Queues an event (taking `json`); drops the oldest when the queue is full. */
static void watch_push(fr_watch *watch, const char *kind, int64_t display, uint64_t link, double from, double to, char *json) {
    char *kind_copy = strdup(kind);
    if (kind_copy == NULL) { /* out of memory: count it as lost */
        free(json);
        watch->lost++;
        return;
    }
    size_t bytes = strlen(json);
    while (watch->count > 0 && (watch->count == FR_EVENT_QUEUE || watch->queued_bytes + bytes > FR_EVENT_QUEUE_BYTES)) {
        queued_event *old = &watch->queue[watch->head];
        watch->queued_bytes -= strlen(old->json);
        free(old->kind);
        free(old->json);
        watch->head = (watch->head + 1) % FR_EVENT_QUEUE;
        watch->count--;
        watch->lost++;
        watch->evictions++;
    }
    watch->queued_bytes += bytes;
    queued_event *q = &watch->queue[(watch->head + watch->count) % FR_EVENT_QUEUE];
    memset(q, 0, sizeof *q);
    q->kind = kind_copy;
    q->json = json;
    q->event.watch = watch->app_id;
    q->event.display = display;
    q->event.link = link;
    q->event.from = from;
    q->event.to = to;
    q->event.lost = watch->lost;
    watch->lost = 0;
    watch->count++;
}

static void handle_msg(fr_conn *conn, fr_msg *msg) {
    fr_link *link;
    fr_watch *watch;
    async_call *call;
    if (msg->kind == FR_MSG_TICK || msg->kind == FR_MSG_RESULT) conn->healthy = 1;
    switch (msg->kind) {
    case FR_MSG_TICK:
        if ((link = find_link(conn, msg->tick.link)) != NULL) link_push(link, msg->tick);
        break;
    case FR_MSG_PRESENTED:
        if ((link = find_link(conn, msg->presented.link)) != NULL) link_push_presented(link, msg->presented);
        break;
    case FR_MSG_CLOSED:
        if ((link = find_link(conn, msg->link)) != NULL) {
            if (msg->error.grpc_code == FR_GRPC_UNAVAILABLE && can_reconnect(conn))
                link->bound = 0; /* the daemon is stopping: registered again after the reconnect */
            else
                link_end(link, &msg->error);
        }
        break;
    case FR_MSG_EVENT:
        if ((watch = find_watch(conn, msg->watch)) != NULL) {
            watch_push(watch, msg->event_kind, msg->display, msg->link, msg->from, msg->to, msg->event_json);
            msg->event_json = NULL; /* ownership moved */
        }
        break;
    case FR_MSG_RESULT:
    case FR_MSG_ERROR:
        if (invalidate_abandoned(conn, msg)) {
            break;
        } else if (conn->waiting && msg->id == conn->waiting && !conn->answered) {
            conn->answer = *msg;
            memset(msg, 0, sizeof *msg); /* ownership moved */
            conn->answered = 1;
        } else if ((call = find_async(conn, msg->id)) != NULL) {
            call->done = 1;
            if (msg->kind == FR_MSG_ERROR) {
                call->rc = FR_ERPC;
                call->error = msg->error;
            } else if ((call->result = malloc(msg->result->raw_len + 1)) == NULL) {
                call->rc = FR_ENOMEM;
            } else {
                memcpy(call->result, msg->result->raw, msg->result->raw_len);
                call->result[msg->result->raw_len] = '\0';
                call->rc = FR_OK;
            }
        }
        break;
    case FR_MSG_UNSOLICITED_ERROR:
        conn->unsolicited = msg->error;
        conn->has_unsolicited = 1;
        break;
    default:
        break;
    }
    fr__msg_clear(msg);
}

/* Gives back what a long line (a big GetState, up to FR_MAX_LINE) made the read buffer
 * grow to, once what is left fits in a quarter of it: a connection keeps about what
 * its usual lines need, not its largest line's size for as long as it lives. */
static void shrink_buffer(fr_conn *conn) {
    if (conn->cap <= 4 * READ_CHUNK || conn->len > conn->cap / 4) return;
    size_t cap = 2 * READ_CHUNK;
    while (cap - conn->len < READ_CHUNK) cap *= 2;
    char *buf = realloc(conn->buf, cap);
    if (buf == NULL) return; /* keeps the larger buffer */
    conn->buf = buf;
    conn->cap = cap;
}

/* Handles the complete lines in the buffer, stopping right after an awaited
 * answer (so the caller can route the link before its first tick is read). */
static int process_buffer(fr_conn *conn) {
    size_t start = 0;
    int rc = FR_OK;
    while (start < conn->len && !conn->answered) {
        size_t from = start + (start == 0 ? conn->scanned : 0);
        char *nl = from < conn->len ? memchr(conn->buf + from, '\n', conn->len - from) : NULL;
        if (nl == NULL) break;
        size_t end = (size_t)(nl - conn->buf);
        size_t line_len = end - start;
        if (line_len > 0 && conn->buf[end - 1] == '\r') line_len--;
        const char *line = conn->buf + start;
        int blank = 1;
        for (size_t i = 0; i < line_len && blank; i++)
            if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r') blank = 0;
        start = end + 1;
        conn->scanned = 0;
        if (blank) continue;
        fr_msg msg;
        rc = fr__decode_line(line, line_len, &msg);
        if (rc != FR_OK) break;
        handle_msg(conn, &msg);
    }
    if (rc != FR_OK) {
        conn_lost(conn, rc);
        return rc;
    }
    if (start > 0) {
        memmove(conn->buf, conn->buf + start, conn->len - start);
        conn->len -= start;
        conn->scanned = 0;
    }
    if (!conn->answered) conn->scanned = conn->len; /* no '\n' left in the buffer */
    if (conn->len > FR_MAX_LINE) {
        conn_lost(conn, FR_EPROTO);
        return FR_EPROTO;
    }
    shrink_buffer(conn);
    return FR_OK;
}

static int has_line(const fr_conn *conn) {
    return conn->len > conn->scanned && memchr(conn->buf + conn->scanned, '\n', conn->len - conn->scanned) != NULL;
}

/* Reads and handles what arrives before `deadline` (ms, < 0 forever). Returns
 * FR_OK after handling some input, FR_ETIMEDOUT, or the error that dropped
 * the socket (FR_ECLOSED, FR_EIO, FR_EPROTO, FR_ENOMEM). */
static int conn_pump(fr_conn *conn, int64_t deadline) {
    if (conn->fd < 0) return FR_ECLOSED;
    if (has_line(conn)) return process_buffer(conn);
    for (;;) {
        int timeout = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            if (left < 0) left = 0;
            timeout = left > 1000000 ? 1000000 : (int)left; /* a longer wait is made in slices */
        }
        struct pollfd pfd = { conn->fd, POLLIN, 0 };
        int ready = poll(&pfd, 1, timeout);
        if (ready < 0) {
            if (errno == EINTR) continue;
            conn_lost(conn, FR_EIO);
            return FR_EIO;
        }
        /* A slice (or a poll that woke early) ended before the deadline: wait on. */
        if (ready == 0 && deadline >= 0 && now_ms() < deadline) continue;
        if (ready == 0) return FR_ETIMEDOUT;
        break;
    }
    if (conn->cap - conn->len < READ_CHUNK) {
        size_t cap = conn->cap ? conn->cap * 2 : 2 * READ_CHUNK;
        while (cap - conn->len < READ_CHUNK) cap *= 2;
        char *buf = realloc(conn->buf, cap);
        if (buf == NULL) {
            conn_lost(conn, FR_ENOMEM);
            return FR_ENOMEM;
        }
        conn->buf = buf;
        conn->cap = cap;
    }
    ssize_t n;
    do n = recv(conn->fd, conn->buf + conn->len, conn->cap - conn->len, MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return FR_OK;
        int err = (errno == ECONNRESET || errno == EPIPE) ? FR_ECLOSED : FR_EIO;
        conn_lost(conn, err);
        return err;
    }
    if (n == 0) {
        conn_lost(conn, FR_ECLOSED);
        return FR_ECLOSED;
    }
    conn->len += (size_t)n;
    return process_buffer(conn);
}

/* Writes request `id`. FR_OK, or FR_ECLOSED after handling the drop (reading
 * first what the daemon said, e.g. why it refused us), or FR_ENOMEM. */
static int send_request(fr_conn *conn, uint64_t id, const char *method, const char *params) {
    if (conn->fd < 0) return FR_ECLOSED;
    sb s = { 0 };
    sb_puts(&s, "{\"jsonrpc\":\"2.0\",\"id\":");
    sb_u64(&s, id);
    sb_puts(&s, ",\"method\":");
    sb_json_string(&s, method);
    if (params) {
        sb_puts(&s, ",\"params\":");
        sb_puts(&s, params);
    }
    sb_puts(&s, "}\n");
    if (s.oom) {
        free(s.p);
        return FR_ENOMEM;
    }
    int rc = write_all(conn, s.p, s.len);
    free(s.p);
    if (rc != FR_OK) {
        while (conn->fd >= 0 && conn_pump(conn, now_ms()) == FR_OK) {
        }
        if (conn->fd >= 0) conn_lost(conn, FR_EIO);
        return FR_ECLOSED;
    }
    return FR_OK;
}

/* One request on the current socket, answered by `deadline` (CLOCK_MONOTONIC ms, < 0:
 * no limit). On FR_OK, *answer holds the RESULT (clear it); FR_ERPC fills last_error;
 * FR_ETIMEDOUT: no answer in time; FR_ECLOSED etc. mean the socket dropped. */
static int conn_request(fr_conn *conn, const char *method, const char *params, int64_t deadline, fr_msg *answer) {
    memset(answer, 0, sizeof *answer);
    if (conn->fd < 0) return FR_ECLOSED;
    uint64_t id = conn->next_id++;
    int rc = send_request(conn, id, method, params);
    if (rc != FR_OK) return rc;
    conn->waiting = id;
    conn->answered = 0;
    while (!conn->answered) {
        rc = conn_pump(conn, deadline);
        if (rc == FR_ETIMEDOUT) break;
        if (rc != FR_OK) {
            rc = FR_ECLOSED;
            break;
        }
    }
    conn->waiting = 0;
    if (!conn->answered && rc == FR_ETIMEDOUT && strcmp(method, M_REGISTER) == 0) abandon_register(conn, id);
    if (!conn->answered) return rc == FR_ETIMEDOUT ? FR_ETIMEDOUT : FR_ECLOSED;
    conn->answered = 0;
    *answer = conn->answer;
    memset(&conn->answer, 0, sizeof conn->answer);
    conn->has_refusal = 0; /* this connection works */
    if (answer->kind == FR_MSG_ERROR) {
        conn->last_error = answer->error;
        fr__msg_clear(answer);
        return FR_ERPC;
    }
    return FR_OK;
}

static int write_register_params(const fr_link *link, sb *s) {
    sb_puts(s, "{");
    sb_range(s, &link->range);
    if (link->display >= 0) {
        sb_puts(s, ",\"display\":");
        sb_i64(s, link->display);
    }
    if (link->paused) sb_puts(s, ",\"paused\":true");
    if (link->label) {
        sb_puts(s, ",\"label\":");
        sb_json_string(s, link->label);
    }
    if (link->high_frame_rate) sb_puts(s, ",\"highFrameRate\":true");
    if (link->adaptive) sb_puts(s, ",\"adaptive\":true");
    sb_frame_timing(s, link->timelines > 1, link->timelines, link->frame_latency > 1, link->frame_latency);
    sb_puts(s, "}");
    return s->oom ? FR_ENOMEM : FR_OK;
}

/* Reads a Register/Update result into the link. */
static int read_link_status(fr_link *link, const fr_json *result, int with_id) {
    uint64_t id;
    double refresh, callback;
    if (fr_json_u64(fr_json_get(result, "link"), &id) != 0) return FR_EPROTO;
    if (fr_json_double(fr_json_get(result, "refreshRate"), &refresh) != 0) return FR_EPROTO;
    if (fr_json_double(fr_json_get(result, "callbackRate"), &callback) != 0) return FR_EPROTO;
    int64_t display;
    if (fr_json_i64(fr_json_get(result, "display"), &display) == 0) link->display = display;
    if (with_id) link->daemon_id = id;
    link->refresh_rate = refresh;
    link->callback_rate = callback;
    return FR_OK;
}

static uint64_t claim_watch_id(const fr_conn *conn, uint64_t preferred);
static int start_watch_on_socket(fr_conn *conn, fr_watch *watch, int64_t deadline, char **state_json);

/* Registers every live link, then starts every live watch, again on a fresh socket,
 * all answered by `deadline` (ms, < 0: none): one request timeout for the whole attempt,
 * not one per link, so a slow daemon cannot hold the call that made the attempt for
 * as many timeouts as there are links. */
static int rebind_all(fr_conn *conn, int64_t deadline) {
    for (fr_link *link = conn->links; link; link = link->next) {
        if (link->ended) continue;
        if (link->gap != GAP_RESUMED) link->gap = link->paused ? GAP_RESUMED : GAP_RECONNECTED;
        sb s = { 0 };
        if (write_register_params(link, &s) != FR_OK) {
            free(s.p);
            return FR_ENOMEM;
        }
        fr_msg answer;
        int rc = conn_request(conn, M_REGISTER, s.p, deadline, &answer);
        free(s.p);
        if (rc == FR_OK) {
            rc = read_link_status(link, answer.result, 1);
            fr__msg_clear(&answer);
            if (rc != FR_OK) return rc;
            link->bound = 1;
        } else if (rc == FR_ERPC && conn->last_error.grpc_code != FR_GRPC_UNAVAILABLE) {
            link->refused = 1; /* e.g. the new daemon has no such display */
            link->refusal = conn->last_error;
        } else {
            return rc == FR_ERPC ? FR_ECLOSED : rc;
        }
    }
    for (fr_watch *watch = conn->watches; watch; watch = watch->next) {
        if (watch->ended) continue;
        int rc = start_watch_on_socket(conn, watch, deadline, NULL);
        if (rc == FR_ERPC && conn->last_error.grpc_code != FR_GRPC_UNAVAILABLE) {
            watch->refused = 1; /* refused by the new daemon (e.g. its watch limit) */
        } else if (rc != FR_OK) {
            return rc == FR_ERPC ? FR_ECLOSED : rc;
        }
    }
    return FR_OK;
}

/* Notes where each watch's queue stands as a reconnect attempt begins. */
static void mark_attempt(fr_conn *conn) {
    for (fr_watch *watch = conn->watches; watch; watch = watch->next) {
        watch->attempt_count = watch->count;
        watch->attempt_evictions = watch->evictions;
        watch->attempt_lost = watch->lost;
    }
}

/* Takes back the events queued after mark_attempt: a failed attempt's
 * "resynchronized" (with the state of a daemon the client dropped) and what followed
 * it, which the next attempt's "resynchronized" replaces. No callback or
 * fr_next_event runs during an attempt, so the queue only took events at its tail,
 * and a full one dropped its oldest: the attempt's are the last `pushed`, and the
 * events lost to the application are those it had lost before plus the older ones
 * the attempt's pushed out (its own out-of-memory losses are taken back too). */
static void unqueue_attempt(fr_watch *watch) {
    uint64_t evicted = watch->evictions - watch->attempt_evictions;
    uint64_t pushed = (uint64_t)watch->count + evicted - watch->attempt_count;
    for (uint64_t n = pushed < watch->count ? pushed : watch->count; n > 0; n--) {
        queued_event *q = &watch->queue[(watch->head + watch->count - 1) % FR_EVENT_QUEUE];
        watch->queued_bytes -= strlen(q->json);
        free(q->kind);
        free(q->json);
        memset(q, 0, sizeof *q);
        watch->count--;
    }
    watch->lost = watch->attempt_lost + (evicted < watch->attempt_count ? evicted : watch->attempt_count);
}

/* Settles a reconnect attempt. If it succeeded, ends the links and watches the
 * daemon refused. If it failed, forgets the refusals (the next attempt registers
 * them again, as it does the links whose requests the failure cut short) and takes
 * back the events it queued (unqueue_attempt). */
static void settle_attempt(fr_conn *conn, int attempt_succeeded) {
    for (fr_link *link = conn->links; link; link = link->next) {
        if (link->refused && attempt_succeeded) link_end(link, &link->refusal);
        link->refused = 0;
    }
    for (fr_watch *watch = conn->watches; watch; watch = watch->next) {
        if (watch->refused && attempt_succeeded) watch->ended = 1;
        watch->refused = 0;
        if (!attempt_succeeded) unqueue_attempt(watch);
    }
}

static void give_up(fr_conn *conn, int err, const char *limit) {
    fr_error why;
    int connect_failed = err == FR_ENOTRUNNING || err == FR_EACCES || err == FR_ECONNECT || err == FR_EUNTRUSTED;
    set_error(&why, err == FR_EUNTRUSTED || err == FR_EACCES ? FR_GRPC_PERMISSION_DENIED : FR_GRPC_UNAVAILABLE,
              "framerated did not come back at %s %s: %s", conn->path, limit,
              connect_failed && connect_error[0] ? connect_error : fr_strerror(err));
    end_everything(conn, connect_failed ? err : FR_ECLOSED, &why);
}

/* Makes reconnect attempt conn->attempt now: connect, check who listens, and
 * register every live link and watch again, all by `deadline` (ms, < 0: none) and
 * within one request timeout. On failure schedules the next attempt, or gives up
 * when the policy's attempts or the reconnect timeout are used up. Returns FR_OK
 * when the connection is back. */
static int attempt_reconnect(fr_conn *conn, int64_t deadline) {
    deadline = earlier_deadline(deadline, request_deadline(conn));
    int fd;
    int rc = open_socket(conn, deadline, &fd);
    if (rc == FR_OK) {
        conn->fd = fd;
        conn->fd_generation++;
        conn->healthy = 0;
        conn->len = 0;
        conn->scanned = 0;
        conn->has_unsolicited = 0;
        mark_attempt(conn);
        rc = rebind_all(conn, deadline); /* still `lost`: a drop meanwhile fails this attempt, nothing more */
        settle_attempt(conn, rc == FR_OK && conn->fd >= 0);
        if (rc == FR_OK && conn->fd >= 0) {
            conn->lost = 0;
            conn->attempt++; /* reset to 0 once this connection delivers something (conn_lost) */
            conn->reconnects++;
            return FR_OK;
        }
        if (rc == FR_OK) rc = FR_ECLOSED;
        if (conn->fatal) return conn->fatal_err;
        close_socket(conn);
    }
    conn->attempt++;
    int64_t now = now_ms();
    if (conn->policy.maximum_attempts > 0 && conn->attempt >= (unsigned)conn->policy.maximum_attempts) {
        char limit[64];
        snprintf(limit, sizeof limit, "after %d attempts", conn->policy.maximum_attempts);
        give_up(conn, rc, limit);
        return conn->fatal_err;
    }
    if (conn->reconnect_timeout_ms >= 0 && now - conn->lost_at >= conn->reconnect_timeout_ms) {
        char limit[64];
        snprintf(limit, sizeof limit, "within %d ms", conn->reconnect_timeout_ms);
        give_up(conn, rc, limit);
        return conn->fatal_err;
    }
    schedule_attempt(conn, now);
    if (conn->reconnect_timeout_ms >= 0 && conn->next_attempt > conn->lost_at + conn->reconnect_timeout_ms)
        conn->next_attempt = conn->lost_at + conn->reconnect_timeout_ms; /* the last attempt at the deadline */
    return rc;
}

/* Whether the connection is up; if it is down and an attempt is due, makes it, done
 * by `deadline` (ms, < 0: within one request timeout). */
static int conn_check(fr_conn *conn, int64_t deadline) {
    if (conn->fd >= 0 && !conn->lost) return FR_OK;
    if (conn->fatal) return conn->fatal_err;
    if (!can_reconnect(conn)) { /* reconnect was turned off while down */
        fr_error why;
        set_error(&why, FR_GRPC_UNAVAILABLE, "the connection to framerated closed");
        end_everything(conn, FR_ECLOSED, &why);
        return FR_ECLOSED;
    }
    if (now_ms() >= conn->next_attempt && attempt_reconnect(conn, deadline) == FR_OK) return FR_OK;
    return conn->fatal ? conn->fatal_err : FR_ERECONNECTING;
}

/* Waits until the connection is up, making the attempts as they fall due,
 * until `deadline` (ms, < 0: until reconnected or given up). An attempt gets one
 * request timeout whatever is left of `deadline`: a caller polling with a short or
 * zero timeout must not make every attempt fail (and count against the policy). */
static int conn_ensure(fr_conn *conn, int64_t deadline) {
    for (;;) {
        int rc = conn_check(conn, -1);
        if (rc != FR_ERECONNECTING) return rc;
        int64_t now = now_ms();
        if (deadline >= 0 && now >= deadline) return FR_ETIMEDOUT;
        int64_t until = conn->next_attempt;
        if (deadline >= 0 && deadline < until) until = deadline;
        int64_t wait = until - now;
        if (wait > 0) {
            struct timespec ts = { (time_t)(wait / 1000), (long)(wait % 1000) * 1000000L };
            nanosleep(&ts, NULL);
        }
    }
}

typedef int (*params_fn)(const void *ctx, sb *s);

/* One request, under the reconnect rule: while the connection is down it fails
 * at once with FR_ERECONNECTING (after making the reconnect attempt if one is
 * due), and so does a request whose connection dropped before its answer.
 * `link` (may be NULL) must be live and registered. */
static int conn_call(fr_conn *conn, fr_link *link, const char *method, params_fn build, const void *ctx, fr_msg *answer) {
    /* One request timeout for the whole call, a reconnect attempt it makes included. */
    int64_t deadline = request_deadline(conn);
    int rc = conn_check(conn, deadline);
    if (rc != FR_OK) return rc;
    if (link && link->ended) return FR_EENDED;
    if (link && !link->bound) return FR_ERECONNECTING; /* Closed by a stopping daemon: registered again after the reconnect */
    sb s = { 0 };
    if (build && build(ctx, &s) != FR_OK) {
        free(s.p);
        return FR_ENOMEM;
    }
    rc = conn_request(conn, method, s.p, deadline, answer);
    free(s.p);
    if (rc == FR_ECLOSED && conn->has_refusal) { /* refused, not dropped: report why */
        conn->last_error = conn->refusal;
        return FR_ERPC;
    }
    if (rc == FR_ECLOSED && can_reconnect(conn)) return FR_ERECONNECTING;
    if (rc == FR_ECLOSED && conn->fatal) return conn->fatal_err;
    return rc;
}

/* ---- the public API ------------------------------------------------------- */

static fr_conn *conn_new(void) {
    fr_conn *conn = calloc(1, sizeof *conn);
    if (conn == NULL) return NULL;
    conn->fd = -1;
    conn->next_id = 1;
    conn->reconnect_enabled = 1;
    conn->reconnect_timeout_ms = 30000;
    conn->request_timeout_ms = 5000;
    conn->policy = (fr_reconnect_policy)FR_RECONNECT_POLICY_DEFAULT;
    conn->seed = (unsigned)getpid() ^ (unsigned)now_ms();
    return conn;
}

int fr_connect(const char *path, fr_conn **out) {
    if (out == NULL) return FR_EINVAL;
    *out = NULL;
    fr_conn *conn = conn_new();
    if (conn == NULL) return FR_ENOMEM;
    if (find_socket(path, conn->path, sizeof conn->path, &conn->source, conn->per_user, sizeof conn->per_user) != FR_OK) {
        snprintf(connect_error, sizeof connect_error, "cannot connect: the socket path is too long for a Unix socket "
                 "(at most %zu bytes)", sizeof conn->path - 1);
        free(conn);
        return FR_ECONNECT;
    }
    conn->has_path = 1;
    int rc = open_socket(conn, -1, &conn->fd);
    if (rc != FR_OK) {
        free(conn);
        return rc;
    }
    *out = conn;
    return FR_OK;
}

int fr__conn_from_fd(int fd, fr_conn **out) {
    if (out == NULL || fd < 0) return FR_EINVAL;
    fr_conn *conn = conn_new();
    if (conn == NULL) return FR_ENOMEM;
    conn->fd = fd;
    conn->reconnect_enabled = 0;
    *out = conn;
    return FR_OK;
}

/* Frees the connection and everything of it. */
static void free_conn(fr_conn *conn) {
    if (conn->fd >= 0) close(conn->fd);
    fr_link *link = conn->links;
    while (link) {
        fr_link *next = link->next;
        free_link(link);
        link = next;
    }
    fr_watch *watch = conn->watches;
    while (watch) {
        fr_watch *next = watch->next;
        free_watch(watch);
        watch = next;
    }
    async_call *call = conn->asyncs;
    while (call) {
        async_call *next = call->next;
        free(call->result);
        free(call);
        call = next;
    }
    if (conn->answered) fr__msg_clear(&conn->answer);
    free(conn->buf);
    free(conn);
}

void fr_close(fr_conn *conn) {
    if (conn == NULL) return;
    if (conn->in_callback) {
        /* From a callback: fr_dispatch is walking the calls, links and watches that
         * free_conn frees. The socket closes now (the daemon releases the links), no
         * callback follows this one, calls from here fail (FR_ECLOSED on the connection,
         * FR_EENDED on its links and watches), and fr_dispatch frees the rest when the
         * callback returns. */
        if (conn->close_requested) return;
        conn->close_requested = 1;
        conn->reconnect_enabled = 0;
        if (conn->fd >= 0) {
            close(conn->fd);
            conn->fd = -1;
            conn->fd_generation++;
        }
        /* Every link and watch ends (FR_EENDED from their calls; a waiting call such as
         * fr_next_tick returns instead of waiting for a socket that is gone). */
        fr_error why;
        set_error(&why, FR_GRPC_CANCELLED, "the application closed the connection (fr_close)");
        end_everything(conn, FR_ECLOSED, &why);
        return;
    }
    free_conn(conn);
}

int fr_set_reconnect(fr_conn *conn, int enabled, int timeout_ms) {
    if (conn == NULL) return FR_EINVAL;
    conn->reconnect_enabled = enabled != 0;
    conn->reconnect_timeout_ms = timeout_ms < 0 ? -1 : timeout_ms;
    return FR_OK;
}

int fr_set_request_timeout(fr_conn *conn, int timeout_ms) {
    if (conn == NULL) return FR_EINVAL;
    conn->request_timeout_ms = timeout_ms < 0 ? -1 : timeout_ms;
    return FR_OK;
}

const char *fr_conn_path(const fr_conn *conn) { return conn && conn->has_path ? conn->path : NULL; }
int fr_fd(const fr_conn *conn) { return conn ? conn->fd : -1; }
unsigned fr_fd_generation(const fr_conn *conn) { return conn ? conn->fd_generation : 0; }

int fr_set_reconnect_policy(fr_conn *conn, const fr_reconnect_policy *policy) {
    if (conn == NULL || !fr__policy_valid(policy)) return FR_EINVAL;
    conn->policy = *policy;
    return FR_OK;
}
unsigned fr_reconnects(const fr_conn *conn) { return conn ? conn->reconnects : 0; }
const fr_error *fr_last_error(const fr_conn *conn) { return conn ? &conn->last_error : NULL; }

static int valid_range(const fr_range *r) {
    return isfinite(r->minimum) && isfinite(r->maximum) && isfinite(r->preferred);
}

static int build_register(const void *ctx, sb *s) { return write_register_params(ctx, s); }

int fr_register(fr_conn *conn, const fr_link_options *options, fr_link **out) {
    if (conn == NULL || options == NULL || out == NULL || !valid_range(&options->range)) return FR_EINVAL;
    if (options->label && !fr_json_utf8_valid(options->label)) return FR_EINVAL;
    if (options->timelines < 0 || options->timelines > FR_MAX_TIMELINES) return FR_EINVAL;
    if (options->preferred_frame_latency < 0 || options->preferred_frame_latency > 2) return FR_EINVAL;
    *out = NULL;
    fr_link *link = calloc(1, sizeof *link);
    if (link == NULL) return FR_ENOMEM;
    link->conn = conn;
    link->range = options->range;
    link->display = options->display < 0 ? -1 : options->display;
    link->paused = options->paused != 0;
    link->high_frame_rate = options->high_frame_rate != 0;
    link->adaptive = options->adaptive != 0;
    link->timelines = options->timelines > 0 ? options->timelines : 1;
    link->frame_latency = options->preferred_frame_latency > 0 ? options->preferred_frame_latency : 1;
    if (options->label && (link->label = strdup(options->label)) == NULL) {
        free(link);
        return FR_ENOMEM;
    }
    fr_msg answer;
    int rc = conn_call(conn, NULL, M_REGISTER, build_register, link, &answer);
    if (rc == FR_OK) {
        rc = read_link_status(link, answer.result, 1);
        fr__msg_clear(&answer);
    }
    if (rc != FR_OK) {
        free_link(link);
        return rc;
    }
    link->bound = 1;
    link->app_id = claim_id(conn, link->daemon_id);
    /* Kept in registration order: a reconnect registers them again in that order (so
     * the new daemon numbers them as the first did), and fr_dispatch calls back in it. */
    fr_link **tail = &conn->links;
    while (*tail) tail = &(*tail)->next;
    link->next = NULL;
    *tail = link;
    *out = link;
    return FR_OK;
}

/* The oldest queued tick; ticks dropped from the full queue count in its skipped. */
static void pop_tick(fr_link *link, fr_tick *tick) {
    *tick = link->queue[link->head];
    link->head = (link->head + 1) % FR_TICK_QUEUE;
    link->count--;
    if (link->have_delivered && tick->sequence > link->last_delivered)
        tick->skipped = tick->sequence - link->last_delivered - 1;
    link->have_delivered = 1;
    link->last_delivered = tick->sequence;
}

int fr_set_tick_callback(fr_link *link, fr_tick_fn fn, void *user) {
    if (link == NULL) return FR_EINVAL;
    link->tick_fn = fn;
    link->tick_user = user;
    return FR_OK;
}

int fr_next_tick(fr_link *link, fr_tick *tick, int timeout_ms) {
    if (link == NULL || tick == NULL) return FR_EINVAL;
    fr_conn *conn = link->conn;
    int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    for (;;) {
        if (link->count) {
            pop_tick(link, tick);
            return FR_OK;
        }
        if (link->ended) {
            conn->last_error = link->why;
            return FR_EENDED;
        }
        if (conn->fd < 0 || conn->lost) {
            int rc = conn_ensure(conn, deadline);
            if (rc == FR_ETIMEDOUT) return rc;
            if (rc != FR_OK) continue; /* gave up: the link has ended */
        }
        int rc = conn_pump(conn, deadline);
        if (rc == FR_ETIMEDOUT) return rc;
        if (rc != FR_OK && !can_reconnect(conn)) {
            if (link->count) continue;
            return rc; /* what broke the connection; the link has ended (FR_EENDED from now on) */
        }
        if (deadline >= 0 && now_ms() >= deadline && link->count == 0 && !link->ended) return FR_ETIMEDOUT;
    }
}

/* Sends one notification line built in `s` (and frees it). A notification is never
 * retried: when the write fails the connection is lost, and the notification counts as
 * dropped while a reconnect can follow (FR_OK), else FR_ECLOSED. */
static int send_notification(fr_conn *conn, sb *s) {
    if (s->oom) {
        free(s->p);
        return FR_ENOMEM;
    }
    int rc = write_all(conn, s->p, s->len);
    free(s->p);
    if (rc != FR_OK) {
        conn_lost(conn, FR_EIO);
        return can_reconnect(conn) ? FR_OK : FR_ECLOSED;
    }
    return FR_OK;
}

static int present(fr_link *link, uint64_t sequence, double at, double after_minimum_duration, const uint64_t *vsync_id,
                   double content_velocity);

int fr_present(fr_link *link, uint64_t sequence, double at, double after_minimum_duration) {
    return present(link, sequence, at, after_minimum_duration, NULL, -1);
}

int fr_present_vsync(fr_link *link, uint64_t sequence, double at, double after_minimum_duration, uint64_t vsync_id) {
    return present(link, sequence, at, after_minimum_duration, &vsync_id, -1);
}

int fr_present_velocity(fr_link *link, uint64_t sequence, double at, double after_minimum_duration, double content_velocity) {
    return present(link, sequence, at, after_minimum_duration, NULL, content_velocity);
}

/* Appends ,"contentVelocity":v when v >= 0 (checked finite by the caller). */
static void put_content_velocity(sb *s, double content_velocity) {
    if (content_velocity >= 0) {
        sb_puts(s, ",\"contentVelocity\":");
        sb_double(s, content_velocity);
    }
}

/* Present, aimed at `vsync_id` when not NULL, with `content_velocity` when >= 0. */
static int present(fr_link *link, uint64_t sequence, double at, double after_minimum_duration, const uint64_t *vsync_id,
                   double content_velocity) {
    /* x - x == 0 holds for finite x only (NaN and the infinities give NaN). */
    /* `at` and the interval: negative means none (an infinity too). The velocity must be
     * finite whatever its sign, as the header says: -INFINITY is refused, not "none". */
    if (link == NULL || !(at < 0 || at - at == 0) || !(after_minimum_duration < 0 || after_minimum_duration - after_minimum_duration == 0)
        || !(content_velocity - content_velocity == 0))
        return FR_EINVAL;
    if (link->ended) return FR_EENDED;
    fr_conn *conn = link->conn;
    if (conn->fd < 0 || !link->bound) return FR_OK; /* reconnecting: dropped */
    uint64_t wire = daemon_sequence(link, sequence);
    /* A tick from before the latest re-registration: the daemon now serving the link never
     * sent it, and Present needs a tick it sent (sequence >= 1). The frame is reported as
     * finished instead, as fr_frame_done reports such a tick (FrameDone 0, which keeps the
     * pacing a Present gives); it is not shown and gets no Presented. */
    if (wire == 0) return fr_frame_done_velocity(link, sequence, content_velocity);
    sb s = { 0 };
    sb_puts(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"" M_PRESENT "\",\"params\":{\"link\":");
    sb_u64(&s, link->daemon_id);
    sb_puts(&s, ",\"sequence\":");
    sb_u64(&s, wire);
    if (at >= 0) {
        sb_puts(&s, ",\"at\":");
        sb_double(&s, at);
    }
    if (after_minimum_duration >= 0) {
        sb_puts(&s, ",\"afterMinimumDuration\":");
        sb_double(&s, after_minimum_duration);
    }
    if (vsync_id) {
        sb_puts(&s, ",\"vsyncId\":");
        sb_u64(&s, *vsync_id);
    }
    put_content_velocity(&s, content_velocity);
    sb_puts(&s, "}}\n");
    return send_notification(conn, &s);
}

int fr_next_presented(fr_link *link, fr_presented *out) {
    if (link == NULL || out == NULL) return FR_EINVAL;
    if (link->presented_count == 0) return FR_ETIMEDOUT;
    *out = link->presented[link->presented_head];
    link->presented_head = (link->presented_head + 1) % FR_TICK_QUEUE;
    link->presented_count--;
    return FR_OK;
}

int fr_frame_done(fr_link *link, uint64_t sequence) {
    return fr_frame_done_velocity(link, sequence, -1);
}

int fr_frame_done_velocity(fr_link *link, uint64_t sequence, double content_velocity) {
    /* Finite (x - x == 0 holds for finite x only); negative then means none. */
    if (link == NULL || !(content_velocity - content_velocity == 0)) return FR_EINVAL;
    if (link->ended) return FR_EENDED;
    fr_conn *conn = link->conn;
    if (conn->fd < 0 || !link->bound) return FR_OK; /* reconnecting: dropped */
    uint64_t wire = daemon_sequence(link, sequence);
    sb s = { 0 };
    sb_puts(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"" M_FRAME_DONE "\",\"params\":{\"link\":");
    sb_u64(&s, link->daemon_id);
    sb_puts(&s, ",\"sequence\":");
    sb_u64(&s, wire);
    put_content_velocity(&s, content_velocity);
    sb_puts(&s, "}}\n");
    return send_notification(conn, &s);
}

typedef struct update_ctx {
    const fr_link *link;
    const fr_range *range;
    int paused;
    int adaptive;             /* -1 keeps it */
    int timelines;            /* 0 keeps it */
    int frame_latency;        /* 0 keeps it */
} update_ctx;

static int build_update(const void *p, sb *s) {
    const update_ctx *ctx = p;
    sb_puts(s, "{\"link\":");
    sb_u64(s, ctx->link->daemon_id);
    if (ctx->range) {
        sb_puts(s, ",");
        sb_range(s, ctx->range);
    }
    if (ctx->paused >= 0) sb_puts(s, ctx->paused ? ",\"paused\":true" : ",\"paused\":false");
    if (ctx->adaptive >= 0) sb_puts(s, ctx->adaptive ? ",\"adaptive\":true" : ",\"adaptive\":false");
    sb_frame_timing(s, ctx->timelines > 0, ctx->timelines, ctx->frame_latency > 0, ctx->frame_latency);
    sb_puts(s, "}");
    return s->oom ? FR_ENOMEM : FR_OK;
}

int fr_set_adaptive(fr_link *link, int adaptive) {
    if (link == NULL || adaptive < 0 || adaptive > 1) return FR_EINVAL;
    if (link->ended) return FR_EENDED;
    update_ctx ctx = { link, NULL, -1, adaptive, 0, 0 };
    fr_msg answer;
    int rc = conn_call(link->conn, link, M_UPDATE, build_update, &ctx, &answer);
    if (rc != FR_OK) return rc;
    rc = read_link_status(link, answer.result, 0);
    fr__msg_clear(&answer);
    if (rc != FR_OK) return rc;
    link->adaptive = adaptive;
    return FR_OK;
}

int fr_set_frame_timing(fr_link *link, int timelines, int preferred_frame_latency) {
    if (link == NULL || timelines < 0 || timelines > FR_MAX_TIMELINES || preferred_frame_latency < 0 || preferred_frame_latency > 2)
        return FR_EINVAL;
    if (link->ended) return FR_EENDED;
    update_ctx ctx = { link, NULL, -1, -1, timelines, preferred_frame_latency };
    fr_msg answer;
    int rc = conn_call(link->conn, link, M_UPDATE, build_update, &ctx, &answer);
    if (rc != FR_OK) return rc;
    rc = read_link_status(link, answer.result, 0);
    fr__msg_clear(&answer);
    if (rc != FR_OK) return rc;
    if (timelines > 0) link->timelines = timelines;
    if (preferred_frame_latency > 0) link->frame_latency = preferred_frame_latency;
    return FR_OK;
}

typedef struct boost_ctx {
    const fr_link *link;
    double duration;
    const fr_range *range;
} boost_ctx;

static int build_boost(const void *p, sb *s) {
    const boost_ctx *ctx = p;
    sb_puts(s, "{\"link\":");
    sb_u64(s, ctx->link->daemon_id);
    sb_puts(s, ",\"duration\":");
    sb_double(s, ctx->duration);
    if (ctx->range) {
        sb_puts(s, ",");
        sb_range(s, ctx->range);
    }
    sb_puts(s, "}");
    return s->oom ? FR_ENOMEM : FR_OK;
}

int fr_boost(fr_link *link, double duration, const fr_range *range, double *boosted_until) {
    /* `!(a && b)` also refuses NaN. */
    if (link == NULL || !(duration > 0 && duration <= 5) || (range && !valid_range(range))) return FR_EINVAL;
    if (link->ended) return FR_EENDED;
    fr_range copy;
    if (range) copy = *range;
    boost_ctx ctx = { link, duration, range ? &copy : NULL };
    fr_msg answer;
    int rc = conn_call(link->conn, link, M_BOOST, build_boost, &ctx, &answer);
    if (rc != FR_OK) return rc;
    double until = 0;
    rc = read_link_status(link, answer.result, 0);
    if (rc == FR_OK && fr_json_double(fr_json_get(answer.result, "boostedUntil"), &until) != 0) rc = FR_EPROTO;
    fr__msg_clear(&answer);
    if (rc != FR_OK) return rc;
    if (boosted_until) *boosted_until = until;
    return FR_OK;
}

int fr_update(fr_link *link, const fr_range *range, int paused) {
    if (link == NULL || (range && !valid_range(range)) || paused > 1 || paused < -1) return FR_EINVAL;
    if (link->ended) return FR_EENDED;
    fr_range copy;
    if (range) copy = *range;
    update_ctx ctx = { link, range ? &copy : NULL, paused < 0 ? -1 : paused, -1, 0, 0 };
    fr_msg answer;
    int rc = conn_call(link->conn, link, M_UPDATE, build_update, &ctx, &answer);
    if (rc != FR_OK) return rc;
    rc = read_link_status(link, answer.result, 0);
    fr__msg_clear(&answer);
    if (rc != FR_OK) return rc;
    if (range) link->range = copy;
    if (paused >= 0) link->paused = paused;
    if (paused == 1 && link->gap == GAP_RECONNECTED) link->gap = GAP_RESUMED; /* a resume reports no skip */
    return FR_OK;
}

int fr_pause(fr_link *link) { return fr_update(link, NULL, 1); }
int fr_resume(fr_link *link) { return fr_update(link, NULL, 0); }

static int build_link_only(const void *p, sb *s) {
    sb_puts(s, "{\"link\":");
    sb_u64(s, ((const fr_link *)p)->daemon_id);
    sb_puts(s, "}");
    return s->oom ? FR_ENOMEM : FR_OK;
}

int fr_invalidate(fr_link *link) {
    if (link == NULL || link->conn->in_callback) return FR_EINVAL;
    fr_conn *conn = link->conn;
    int rc = FR_OK;
    if (!link->ended && conn->fd >= 0 && !conn->lost && link->bound) {
        sb s = { 0 };
        build_link_only(link, &s);
        fr_msg answer;
        rc = s.oom ? FR_ENOMEM : conn_request(conn, M_INVALIDATE, s.p, request_deadline(conn), &answer);
        free(s.p);
        if (rc == FR_OK) fr__msg_clear(&answer);
        else if (rc == FR_ERPC && conn->last_error.grpc_code == FR_GRPC_UNAVAILABLE) rc = FR_OK; /* stopping */
        else if (rc == FR_ECLOSED) rc = FR_OK; /* a closed socket releases the link too */
    }
    unlink_link(conn, link);
    free_link(link);
    return rc;
}

uint64_t fr_link_id(const fr_link *link) { return link ? link->app_id : 0; }
uint64_t fr_link_daemon_id(const fr_link *link) { return link && link->bound && !link->ended ? link->daemon_id : 0; }

int fr_link_get(const fr_link *link, fr_link_state *out) {
    if (link == NULL || out == NULL) return FR_EINVAL;
    out->id = link->app_id;
    out->daemon_id = link->bound && !link->ended ? link->daemon_id : 0;
    out->display = link->display;
    out->range = link->range;
    out->paused = link->paused;
    out->refresh_rate = link->refresh_rate;
    out->callback_rate = link->callback_rate;
    out->ended = link->ended;
    return FR_OK;
}

int fr_link_error(const fr_link *link, fr_error *why) {
    if (link == NULL) return FR_EINVAL;
    if (!link->ended) {
        if (why) memset(why, 0, sizeof *why);
        return FR_OK;
    }
    if (why) *why = link->why;
    return FR_EENDED;
}

static int build_raw(const void *p, sb *s) {
    if (p) sb_puts(s, p);
    return s->oom ? FR_ENOMEM : FR_OK;
}

int fr_call(fr_conn *conn, const char *method, const char *params_json, char **result_json) {
    if (result_json) *result_json = NULL;
    if (conn == NULL || method == NULL || !fr_json_utf8_valid(method)) return FR_EINVAL;
    if (params_json) { /* must be one JSON value on one line */
        fr_json_doc *doc;
        size_t n = strlen(params_json);
        if (memchr(params_json, '\n', n) || fr_json_parse(params_json, n, &doc, NULL) != 0) return FR_EINVAL;
        fr_json_free(doc);
    }
    fr_msg answer;
    int rc = conn_call(conn, NULL, method, params_json ? build_raw : NULL, params_json, &answer);
    if (rc != FR_OK) return rc;
    if (result_json) {
        char *copy = malloc(answer.result->raw_len + 1);
        if (copy == NULL) {
            fr__msg_clear(&answer);
            return FR_ENOMEM;
        }
        memcpy(copy, answer.result->raw, answer.result->raw_len);
        copy[answer.result->raw_len] = '\0';
        *result_json = copy;
    }
    fr__msg_clear(&answer);
    return FR_OK;
}

void fr_free(void *pointer) { free(pointer); }

/* ---- watches ---------------------------------------------------------------- */

static uint64_t claim_watch_id(const fr_conn *conn, uint64_t preferred) {
    uint64_t largest = 0;
    int taken = 0;
    for (const fr_watch *watch = conn->watches; watch; watch = watch->next) {
        if (watch->ended || watch->app_id == 0) continue;
        if (watch->app_id == preferred) taken = 1;
        if (watch->app_id > largest) largest = watch->app_id;
    }
    return taken ? largest + 1 : preferred;
}

/* Compositor/Watch for `watch` on the current socket; binds it before the next
 * line is read. A watch started again queues a "resynchronized" event. */
static int start_watch_on_socket(fr_conn *conn, fr_watch *watch, int64_t deadline, char **state_json) {
    fr_msg answer;
    int rc = conn_request(conn, M_WATCH, NULL, deadline, &answer);
    if (rc != FR_OK) return rc;
    uint64_t id;
    const fr_json *state = fr_json_get(answer.result, "state");
    if (fr_json_u64(fr_json_get(answer.result, "watch"), &id) != 0 || state == NULL || state->type != FR_JSON_OBJECT) {
        fr__msg_clear(&answer);
        return FR_EPROTO;
    }
    if (state_json) {
        if ((*state_json = malloc(state->raw_len + 1)) == NULL) {
            fr__msg_clear(&answer);
            return FR_ENOMEM;
        }
        memcpy(*state_json, state->raw, state->raw_len);
        (*state_json)[state->raw_len] = '\0';
    }
    watch->daemon_id = id;
    watch->bound = 1;
    if (watch->app_id == 0) {
        watch->app_id = claim_watch_id(conn, id);
    } else {
        size_t size = state->raw_len + 96;
        char *json = malloc(size);
        if (json == NULL) {
            watch->lost++;
        } else {
            int n = snprintf(json, size, "{\"watch\":%llu,\"kind\":\"resynchronized\",\"state\":%.*s}",
                             (unsigned long long)watch->app_id, (int)state->raw_len, state->raw);
            if (n < 0 || (size_t)n >= size) {
                free(json);
                watch->lost++;
            } else {
                watch_push(watch, "resynchronized", -1, 0, 0, 0, json);
            }
        }
    }
    fr__msg_clear(&answer);
    return FR_OK;
}

int fr_watch_start(fr_conn *conn, fr_event_fn fn, void *user, fr_watch **out, char **state_json) {
    if (state_json) *state_json = NULL;
    if (conn == NULL || out == NULL) return FR_EINVAL;
    *out = NULL;
    int64_t deadline = request_deadline(conn); /* the whole call, a reconnect attempt included */
    int rc = conn_check(conn, deadline);
    if (rc != FR_OK) return rc;
    fr_watch *watch = calloc(1, sizeof *watch);
    if (watch == NULL) return FR_ENOMEM;
    watch->conn = conn;
    watch->fn = fn;
    watch->user = user;
    rc = start_watch_on_socket(conn, watch, deadline, state_json);
    if (rc != FR_OK) {
        free_watch(watch);
        if (rc == FR_ECLOSED && conn->has_refusal) {
            conn->last_error = conn->refusal;
            return FR_ERPC;
        }
        if (rc == FR_ECLOSED && can_reconnect(conn)) return FR_ERECONNECTING;
        return rc;
    }
    fr_watch **tail = &conn->watches; /* in subscription order, as the links */
    while (*tail) tail = &(*tail)->next;
    watch->next = NULL;
    *tail = watch;
    *out = watch;
    return FR_OK;
}

/* Moves the oldest queued event to watch->current (freeing the previous one). */
static void pop_event(fr_watch *watch) {
    free(watch->current.kind);
    free(watch->current.json);
    watch->current = watch->queue[watch->head];
    watch->queued_bytes -= strlen(watch->current.json);
    memset(&watch->queue[watch->head], 0, sizeof watch->queue[watch->head]);
    watch->head = (watch->head + 1) % FR_EVENT_QUEUE;
    watch->count--;
    watch->current.event.kind = watch->current.kind;
    watch->current.event.params_json = watch->current.json;
}

int fr_next_event(fr_watch *watch, fr_event *event, int timeout_ms) {
    if (watch == NULL || event == NULL) return FR_EINVAL;
    fr_conn *conn = watch->conn;
    int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    for (;;) {
        if (watch->count) {
            pop_event(watch);
            *event = watch->current.event;
            return FR_OK;
        }
        if (watch->ended) return FR_EENDED;
        if (conn->fd < 0 || conn->lost) {
            int rc = conn_ensure(conn, deadline);
            if (rc == FR_ETIMEDOUT) return rc;
            if (rc != FR_OK) continue; /* gave up: the watch has ended */
        }
        int rc = conn_pump(conn, deadline);
        if (rc == FR_ETIMEDOUT) return rc;
        if (rc != FR_OK && !can_reconnect(conn) && watch->count == 0) return watch->ended ? FR_EENDED : rc;
        if (deadline >= 0 && now_ms() >= deadline && watch->count == 0 && !watch->ended) return FR_ETIMEDOUT;
    }
}

int fr_unwatch(fr_watch *watch) {
    if (watch == NULL || watch->conn->in_callback) return FR_EINVAL;
    fr_conn *conn = watch->conn;
    int rc = FR_OK;
    if (!watch->ended && watch->bound && conn->fd >= 0 && !conn->lost) {
        char params[48];
        snprintf(params, sizeof params, "{\"watch\":%llu}", (unsigned long long)watch->daemon_id);
        fr_msg answer;
        rc = conn_request(conn, M_UNWATCH, params, request_deadline(conn), &answer);
        if (rc == FR_OK) fr__msg_clear(&answer);
        else if (rc == FR_ERPC && conn->last_error.grpc_code == FR_GRPC_UNAVAILABLE) rc = FR_OK; /* stopping */
        else if (rc == FR_ECLOSED) rc = FR_OK; /* a closed socket ends the watch too */
    }
    for (fr_watch **p = &conn->watches; *p; p = &(*p)->next)
        if (*p == watch) {
            *p = watch->next;
            break;
        }
    free_watch(watch);
    return rc;
}

uint64_t fr_watch_id(const fr_watch *watch) { return watch ? watch->app_id : 0; }

/* ---- the event loop: asynchronous calls, dispatch ------------------------------ */

int fr_call_async(fr_conn *conn, const char *method, const char *params_json, fr_reply_fn fn, void *user) {
    if (conn == NULL || method == NULL || fn == NULL || !fr_json_utf8_valid(method)) return FR_EINVAL;
    if (params_json) {
        fr_json_doc *doc;
        size_t n = strlen(params_json);
        if (memchr(params_json, '\n', n) || fr_json_parse(params_json, n, &doc, NULL) != 0) return FR_EINVAL;
        fr_json_free(doc);
    }
    int rc = conn_check(conn, -1);
    if (rc != FR_OK) return rc;
    async_call *call = calloc(1, sizeof *call);
    if (call == NULL) return FR_ENOMEM;
    call->id = conn->next_id++;
    call->fn = fn;
    call->user = user;
    call->deadline = request_deadline(conn);
    call->is_register = strcmp(method, M_REGISTER) == 0;
    rc = send_request(conn, call->id, method, params_json);
    if (rc != FR_OK) {
        free(call);
        if (rc == FR_ECLOSED) return can_reconnect(conn) ? FR_ERECONNECTING : conn->fatal ? conn->fatal_err : FR_ECLOSED;
        return rc;
    }
    call->next = conn->asyncs;
    conn->asyncs = call;
    return FR_OK;
}

/* Whether fr_dispatch has callbacks to make now. */
static int has_deliveries(const fr_conn *conn) {
    for (const async_call *call = conn->asyncs; call; call = call->next)
        if (call->done) return 1;
    for (const fr_link *link = conn->links; link; link = link->next)
        if (link->tick_fn && (link->count || (link->ended && !link->end_reported))) return 1;
    for (const fr_watch *watch = conn->watches; watch; watch = watch->next)
        if (watch->fn && (watch->count || (watch->ended && !watch->end_reported))) return 1;
    return 0;
}

/* The earliest deadline of an fr_call_async still awaiting its answer, or -1. */
static int64_t earliest_async_deadline(const fr_conn *conn) {
    int64_t earliest = -1;
    for (const async_call *call = conn->asyncs; call; call = call->next)
        if (!call->done && call->deadline >= 0 && (earliest < 0 || call->deadline < earliest)) earliest = call->deadline;
    return earliest;
}

/* fr_call_async requests whose answer did not come by their deadline: done with
 * FR_ETIMEDOUT (a late answer is ignored; a Register's creates a link that is invalidated). */
static void expire_asyncs(fr_conn *conn) {
    int64_t now = -1;
    for (async_call *call = conn->asyncs; call; call = call->next) {
        if (call->done || call->deadline < 0) continue;
        if (now < 0) now = now_ms();
        if (call->deadline > now) continue;
        call->done = 1;
        call->rc = FR_ETIMEDOUT;
        if (call->is_register && conn->fd >= 0) abandon_register(conn, call->id);
    }
}

int fr_timeout_ms(const fr_conn *conn) {
    if (conn == NULL) return -1;
    if (conn->fatal || has_line(conn) || has_deliveries(conn)) return 0;
    int64_t until;
    if (conn->fd >= 0 && !conn->lost) {
        until = earliest_async_deadline(conn); /* an fr_call_async times out then */
        if (until < 0) return -1;
    } else {
        if (!can_reconnect(conn)) return 0;
        until = conn->next_attempt;
    }
    int64_t left = until - now_ms();
    return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

/* Calls the application back: answered asynchronous calls, then each link's
 * queued ticks (as many as were queued when its turn came), then each watch's events. */
static void deliver(fr_conn *conn) {
    conn->in_callback = 1;
    while (!conn->close_requested) {
        async_call **p = &conn->asyncs;
        while (*p && !(*p)->done) p = &(*p)->next;
        if (*p == NULL) break;
        async_call *call = *p;
        *p = call->next; /* unlinked first: the callback may make new calls */
        call->fn(conn, call->rc, call->rc == FR_OK ? call->result : NULL, call->rc == FR_ERPC ? &call->error : NULL, call->user);
        free(call->result);
        free(call);
    }
    for (fr_link *link = conn->links; link && !conn->close_requested; link = link->next) {
        if (link->tick_fn == NULL) continue;
        for (unsigned n = link->count; n > 0 && link->count > 0 && link->tick_fn && !conn->close_requested; n--) {
            fr_tick tick;
            pop_tick(link, &tick);
            link->tick_fn(link, &tick, link->tick_user);
        }
        if (link->tick_fn && link->ended && !link->end_reported && link->count == 0 && !conn->close_requested) {
            link->end_reported = 1;
            link->tick_fn(link, NULL, link->tick_user);
        }
    }
    for (fr_watch *watch = conn->watches; watch && !conn->close_requested; watch = watch->next) {
        if (watch->fn == NULL) continue;
        for (unsigned n = watch->count; n > 0 && watch->count > 0 && !conn->close_requested; n--) {
            pop_event(watch);
            watch->fn(watch, &watch->current.event, watch->user);
        }
        if (watch->ended && !watch->end_reported && watch->count == 0 && !conn->close_requested) {
            watch->end_reported = 1;
            watch->fn(watch, NULL, watch->user);
        }
    }
    conn->in_callback = 0;
}

int fr_dispatch(fr_conn *conn) {
    if (conn == NULL || conn->in_callback) return FR_EINVAL;
    if (conn->fd >= 0 && !conn->lost) {
        for (int i = 0; i < DISPATCH_READS && conn->fd >= 0; i++)
            if (conn_pump(conn, now_ms()) != FR_OK) break; /* nothing more to read now, or the socket dropped */
    } else if (!conn->fatal) {
        conn_check(conn, -1); /* makes the reconnect attempt if one is due */
    }
    expire_asyncs(conn); /* after reading: an answer that came in time is taken */
    deliver(conn);
    if (conn->close_requested) { /* fr_close from a callback */
        free_conn(conn);
        return FR_EFREED;
    }
    return conn->fatal ? conn->fatal_err : FR_OK;
}
