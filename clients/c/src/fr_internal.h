/* libframerate internals shared with the tests; not installed. */
#ifndef FR_INTERNAL_H
#define FR_INTERNAL_H

#include "framerate.h"
#include "fr_json.h"

/* Longest line accepted from the daemon. */
#define FR_MAX_LINE ((size_t)16 << 20)
/* Lines at least this long are decoded only FR_KEPT_LEVELS levels deep (fr__decode_line):
 * the deepest values the library reads are a tick's timelines entries' fields
 * (params.timelines[i].vsyncId, level 4). */
#define FR_KEEP_WHOLE_BELOW ((size_t)64 << 10)
#define FR_KEPT_LEVELS 4
/* Undelivered ticks kept per link (the newest). */
#define FR_TICK_QUEUE 16
/* Undelivered events kept per watch (the newest): at most this many, and at most
 * FR_EVENT_QUEUE_BYTES of event JSON (a resynchronized event carries a whole state). */
#define FR_EVENT_QUEUE 256
#define FR_EVENT_QUEUE_BYTES ((size_t)32 << 20)

typedef enum fr_msg_kind {
    FR_MSG_IGNORED,          /* valid, but nothing for this library (batch replies, other ids, unknown notifications) */
    FR_MSG_TICK,
    FR_MSG_PRESENTED,
    FR_MSG_CLOSED,
    FR_MSG_EVENT,
    FR_MSG_RESULT,
    FR_MSG_ERROR,
    FR_MSG_UNSOLICITED_ERROR /* an error with id null (connection limit, shutting down, bad line) */
} fr_msg_kind;

typedef struct fr_msg {
    fr_msg_kind kind;
    fr_json_doc *doc;        /* owned (RESULT keeps it for `result`) */
    uint64_t id;             /* RESULT, ERROR */
    const fr_json *result;   /* RESULT */
    fr_error error;          /* ERROR, UNSOLICITED_ERROR, CLOSED (status and message) */
    fr_tick tick;            /* TICK */
    fr_presented presented;  /* PRESENTED */
    uint64_t link;           /* CLOSED; EVENT: the link id of linkAdded/linkUpdated/linkRemoved, else 0 */
    /* EVENT */
    uint64_t watch;          /* the daemon's watch id */
    char event_kind[48];     /* truncated if longer */
    int64_t display;         /* -1 when absent */
    double from, to;         /* refreshRateChanged, Hz */
    char *event_json;        /* owned: the params object's text, NUL-terminated */
} fr_msg;

/* Decodes one line from the daemon (without its "\n"). Returns FR_OK (msg
 * filled; release with fr__msg_clear), FR_EPROTO for a malformed line or
 * FR_ENOMEM. Never reads outside line[0..len). */
int fr__decode_line(const char *line, size_t len, fr_msg *msg);
void fr__msg_clear(fr_msg *msg);

/* A connection over an already connected stream socket (tests); reconnect is off. */
int fr__conn_from_fd(int fd, fr_conn **out);

/* Whether a daemon running as peer_uid is trusted by a client running as own_uid:
 * root, own_uid, or the framerated service user's uid (when that user exists). */
int fr__trusts_uid(unsigned peer_uid, unsigned own_uid, int has_service_uid, unsigned service_uid);

/* The wait before reconnect attempt `attempt`, ms (fr_reconnect_delay_ms) for a
 * policy known to be valid; and whether a policy is valid. */
int fr__policy_valid(const fr_reconnect_policy *policy);

/* gRPC status number of a status name (FR_GRPC_UNKNOWN if unknown). */
int fr__grpc_code(const char *status);

#endif
