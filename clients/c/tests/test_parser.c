/* The line reader: unit cases, then a deterministic fuzz of the JSON parser and
 * the line decoder (mutated daemon lines, garbage, deep nesting, huge values),
 * and garbage fed to a live fr_conn through a socketpair. Built and run under
 * -fsanitize=address,undefined: the property is "never crash, never read out
 * of bounds, and answer FR_OK or FR_EPROTO". */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include "fr_internal.h"
#include "test.h"

#include <locale.h>
#include <math.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- deterministic pseudo-random numbers (xorshift64*) ---------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static size_t rng_below(size_t n) { return n ? (size_t)(rng() % n) : 0; }

/* ---- the daemon's real lines (docs/protocol.md) ----------------------------- */

static const char *const corpus[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"link\":1,\"refreshRate\":120.0,\"callbackRate\":120.0,\"display\":0}}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"framerate.v1.DisplayLink/Tick\",\"params\":{\"link\":1,\"sequence\":1,\"timestamp\":1133.089876383,"
    "\"targetTimestamp\":1133.098209716,\"duration\":0.008333333,\"refreshRate\":120.0,\"callbackRate\":120.0,\"skipped\":0}}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"framerate.v1.DisplayLink/Closed\",\"params\":{\"link\":3,\"status\":\"UNAVAILABLE\","
    "\"message\":\"framerated is shutting down\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":10,\"error\":{\"code\":-32602,\"message\":\"invalid range: maximum (60 Hz) must be at least minimum (90 Hz)\","
    "\"data\":{\"status\":\"INVALID_ARGUMENT\",\"field\":\"range.maximum\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":8,\"message\":\"framerated already serves 2 connections (the limit); close idle "
    "clients or raise --max-connections\",\"data\":{\"status\":\"RESOURCE_EXHAUSTED\"}}}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"framerate.v1.Compositor/Event\",\"params\":{\"watch\":1,\"kind\":\"refreshRateChanged\",\"display\":0,"
    "\"from\":120.0,\"to\":60.0,\"reason\":\"60 Hz is the lowest rate that serves every link exactly; a lower rate would not serve link 2 "
    "'video' (30, 60, 60)\"}}",
    "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"status\":\"SERVING\"}},{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":5,\"message\":\"watch 99 "
    "does not exist on this connection\",\"data\":{\"status\":\"NOT_FOUND\"}}}]",
    "{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890123,\"result\":{\"status\":\"SERVING\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1.50,\"result\":{\"status\":\"SERVING\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32602,\"message\":\"thermalState must be one of \\\"nominal\\\", \\\"fair\\\", "
    "\\\"serious\\\", \\\"critical\\\", got \\\"hot\\\"\",\"data\":{\"status\":\"INVALID_ARGUMENT\",\"field\":\"thermalState\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"displays\":[{\"id\":0,\"profile\":\"promotion-phone\",\"supportedRates\":[120.0,80.0,60.0,"
    "48.0,40.0,30.0,24.0,20.0,16.0,15.0,12.0,10.0],\"refreshRate\":120.0,\"reason\":\"r\",\"caps\":{\"lowPowerMode\":false,"
    "\"limitFrameRate\":false,\"thermalState\":\"nominal\"},\"links\":[{\"link\":1,\"range\":{\"minimum\":30.0,\"maximum\":60.0,"
    "\"preferred\":60.0},\"paused\":false,\"callbackRate\":60.0,\"label\":\"caf\\u00e9 \\ud83d\\ude00\",\"highFrameRate\":true,"
    "\"pid\":9271,\"uid\":0,\"command\":null}]}]}}",
};
#define CORPUS_N (sizeof corpus / sizeof corpus[0])

/* Whether `kept` (from fr_json_parse_bounded keeping `keep` levels) is `full` at
 * `level`: the same type, key, text and value, the same members while level < keep,
 * and an elided container without members below that. */
static int same_tree(const fr_json *full, const fr_json *kept, int level, int keep) {
    if (full->type != kept->type || full->raw_len != kept->raw_len || memcmp(full->raw, kept->raw, full->raw_len) != 0) return 0;
    if ((full->key == NULL) != (kept->key == NULL)) return 0;
    if (full->key && (full->key_len != kept->key_len || memcmp(full->key, kept->key, full->key_len) != 0)) return 0;
    switch (full->type) {
    case FR_JSON_STRING:
        return full->u.str.len == kept->u.str.len && memcmp(full->u.str.s, kept->u.str.s, full->u.str.len) == 0;
    case FR_JSON_NUMBER:
        return memcmp(&full->u.num, &kept->u.num, sizeof full->u.num) == 0;
    case FR_JSON_OBJECT:
    case FR_JSON_ARRAY:
        break;
    default:
        return 1;
    }
    if (full->elided) return 0;
    if (level >= keep) return kept->elided && kept->u.kids.first == NULL && kept->u.kids.count == 0;
    if (kept->elided || full->u.kids.count != kept->u.kids.count) return 0;
    const fr_json *a = full->u.kids.first, *b = kept->u.kids.first;
    for (; a && b; a = a->next, b = b->next)
        if (!same_tree(a, b, level + 1, keep)) return 0;
    return a == NULL && b == NULL;
}

/* fr_json_parse's result, checked against fr_json_parse_bounded at every depth the
 * library uses and below: the same verdict and error offset, the same values where kept
 * (so every fuzz input here tests the bounded parser too). */
static int parse(const char *text, size_t len) {
    fr_json_doc *doc = NULL;
    size_t offset = 0;
    int rc = fr_json_parse(text, len, &doc, &offset);
    for (int keep = 0; keep <= 4 && rc != -2; keep++) {
        fr_json_doc *bounded = NULL;
        size_t bounded_offset = 0;
        int bounded_rc = fr_json_parse_bounded(text, len, keep, &bounded, &bounded_offset);
        CHECK_MSG(bounded_rc == rc && bounded_offset == offset, "keep %d: %d at %zu, full %d at %zu", keep, bounded_rc,
                  bounded_offset, rc, offset);
        if (rc == 0 && bounded_rc == 0) CHECK_MSG(same_tree(fr_json_root(doc), fr_json_root(bounded), 0, keep), "keep %d", keep);
        fr_json_free(bounded);
    }
    fr_json_free(doc);
    return rc;
}

static int parse_s(const char *text) { return parse(text, strlen(text)); }

/* ---- unit cases -------------------------------------------------------------- */

static void test_valid_json(void) {
    static const char *const valid[] = {
        "0", "-0", "1", "-1", "1.5", "1e5", "1E+5", "1e-5", "-0.0e0", "123456789012345678901234567890", "1e400", "-1e400",
        "true", "false", "null", "\"\"", "\"a\"", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\u0000\"", "\"\\u00e9\\uD83D\\uDE00\"",
        "\"caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac\"", "[]", "{}", "[1,2,3]", " [ 1 , [ ] , { } ] ", "{\"a\":{\"b\":[null]}}",
        "{\"a\":1,\"a\":2}", "\t\r\n 7 \t\r\n", "[\"\\u007f\"]", "\"\xed\x9f\xbf\"", "\"\xef\xbf\xbf\"", "\"\xf4\x8f\xbf\xbf\"",
    };
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) CHECK_MSG(parse_s(valid[i]) == 0, "%s", valid[i]);
    for (size_t i = 0; i < CORPUS_N; i++) CHECK_MSG(parse_s(corpus[i]) == 0, "corpus %zu", i);
}

static void test_invalid_json(void) {
    static const char *const invalid[] = {
        "", " ", "{", "}", "[", "]", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{a:1}", "{'a':1}", "[1 2]",
        "01", "-", "+1", "1.", ".5", "1e", "1e+", "0x10", "NaN", "Infinity", "-Infinity", "tru", "truex", "nul", "nulll",
        "\"", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\uD83D\"", "\"\\uDE00\"", "\"\\uD83D\\u0041\"",
        "\"a\nb\"", "\"\x01\"", "\"\x80\"", "\"\xc0\xaf\"", "\"\xc3\"", "\"\xe0\x80\xaf\"", "\"\xed\xa0\x80\"", "\"\xf5\x80\x80\x80\"",
        "\"\xf0\x8f\xbf\xbf\"", "\"\xf4\x90\x80\x80\"", "\"\xff\"", "1 2", "{} {}", "[]x", "\"a\"\"b\"", "[\"\\\"]", "{\"a\" 1}",
        "{\"a\":1 \"b\":2}", "{,}", "[-]", "[1e]", "[\"\\u\"]", "\xef\xbb\xbf{}", "{\"\\uDFFF\":1}",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) CHECK_MSG(parse_s(invalid[i]) == -1, "%s", invalid[i]);
    CHECK(parse("[1]\0", 4) == -1);       /* a NUL byte is not whitespace */
    CHECK(parse("\"a\0b\"", 5) == -1);    /* nor allowed raw in a string */
    CHECK(parse(NULL, 0) == -1);
}

static void test_strings_decode(void) {
    fr_json_doc *doc;
    const char *text = "{\"s\":\"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\" \\\\ \\/ \\b\\f\\n\\r\\t \\u0000end\",\"k\\u0041\":1}";
    CHECK(fr_json_parse(text, strlen(text), &doc, NULL) == 0);
    const fr_json *s = fr_json_get(fr_json_root(doc), "s");
    static const char expected[] = "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\" \\ / \b\f\n\r\t \0end";
    CHECK(s && s->type == FR_JSON_STRING && s->u.str.len == sizeof expected - 1 && memcmp(s->u.str.s, expected, sizeof expected - 1) == 0);
    CHECK(fr_json_get(fr_json_root(doc), "kA") != NULL);
    fr_json_free(doc);
    text = "{\"a\":1,\"a\":2}";
    CHECK(fr_json_parse(text, strlen(text), &doc, NULL) == 0);
    uint64_t v = 0;
    CHECK(fr_json_u64(fr_json_get(fr_json_root(doc), "a"), &v) == 0 && v == 2); /* the last one wins */
    fr_json_free(doc);
}

static int number(const char *text, double *out) {
    fr_json_doc *doc;
    if (fr_json_parse(text, strlen(text), &doc, NULL) != 0) return -9;
    int rc = fr_json_double(fr_json_root(doc), out);
    fr_json_free(doc);
    return rc;
}

static int u64_of(const char *text, uint64_t *out) {
    fr_json_doc *doc;
    if (fr_json_parse(text, strlen(text), &doc, NULL) != 0) return -9;
    int rc = fr_json_u64(fr_json_root(doc), out);
    fr_json_free(doc);
    return rc;
}

static int i64_of(const char *text, int64_t *out) {
    fr_json_doc *doc;
    if (fr_json_parse(text, strlen(text), &doc, NULL) != 0) return -9;
    int rc = fr_json_i64(fr_json_root(doc), out);
    fr_json_free(doc);
    return rc;
}

static void test_numbers(void) {
    double d = 0;
    CHECK(number("1133.089876383", &d) == 0 && d == strtod("1133.089876383", NULL));
    CHECK(number("0.008333333", &d) == 0 && d == 0.008333333);
    CHECK(number("120.0", &d) == 0 && d == 120.0);
    CHECK(number("59.94", &d) == 0 && d == 59.94);
    CHECK(number("-2.5e-3", &d) == 0 && d == -0.0025);
    CHECK(number("0.000000000000000000000000000000000000000000000000000001", &d) == 0 && d == 1e-54);
    CHECK(number("123456789012345678901234567890123456789012345678901234567890", &d) == 0 && fabs(d / 1.2345678901234568e59 - 1) < 1e-15);
    CHECK(number("1e400", &d) == -1);   /* parses, but is not finite */
    CHECK(number("1e-400", &d) == 0 && d == 0);
    CHECK(number("1e99999999999999999999", &d) == -1);
    CHECK(number("\"1\"", &d) == -1);
    uint64_t u = 0;
    CHECK(u64_of("18446744073709551615", &u) == 0 && u == UINT64_MAX);
    CHECK(u64_of("18446744073709551616", &u) == -1);
    CHECK(u64_of("12345678901234567890123", &u) == -1);
    CHECK(u64_of("2.0", &u) == 0 && u == 2);
    CHECK(u64_of("2e0", &u) == 0 && u == 2);
    CHECK(u64_of("1.5", &u) == -1);
    CHECK(u64_of("-1", &u) == -1);
    CHECK(u64_of("-0", &u) == 0 && u == 0);
    CHECK(u64_of("true", &u) == -1);
    int64_t i = 0;
    CHECK(i64_of("-9223372036854775808", &i) == 0 && i == INT64_MIN);
    CHECK(i64_of("9223372036854775807", &i) == 0 && i == INT64_MAX);
    CHECK(i64_of("9223372036854775808", &i) == -1);
    CHECK(i64_of("-32602", &i) == 0 && i == -32602);
    /* A locale with a decimal comma changes nothing. */
    if (setlocale(LC_NUMERIC, "de_DE.UTF-8") || setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
        CHECK(number("1.5", &d) == 0 && d == 1.5);
        setlocale(LC_NUMERIC, "C");
    }
}

static void test_nesting(void) {
    char buf[2 * FR_JSON_MAX_DEPTH + 8];
    for (int depth = FR_JSON_MAX_DEPTH - 1; depth <= FR_JSON_MAX_DEPTH + 1; depth++) {
        memset(buf, '[', (size_t)depth);
        memset(buf + depth, ']', (size_t)depth);
        CHECK_MSG(parse(buf, 2 * (size_t)depth) == (depth <= FR_JSON_MAX_DEPTH ? 0 : -1), "depth %d", depth);
    }
    size_t n = 1 << 20; /* a million open brackets: rejected at the depth limit, no stack overflow */
    char *deep = malloc(n);
    memset(deep, '[', n);
    CHECK(parse(deep, n) == -1);
    for (size_t k = 0; k + 5 <= n; k += 5) memcpy(deep + k, "{\"a\":", 5);
    CHECK(parse(deep, n - n % 5) == -1);
    free(deep);
}

static void test_huge(void) {
    fr_msg msg;
    size_t n = (size_t)4 << 20;
    char *big = malloc(n + 16);
    /* A 4 MiB string. */
    big[0] = '"';
    for (size_t k = 1; k < n - 1; k++) big[k] = (char)('a' + k % 26);
    big[n - 1] = '"';
    CHECK(parse(big, n) == 0);
    CHECK(parse(big, n - 1) == -1);
    /* A 4 MiB number (cheap: the mantissa is cut to 40 digits). */
    memset(big, '7', n);
    double d;
    fr_json_doc *doc;
    CHECK(fr_json_parse(big, n, &doc, NULL) == 0 && fr_json_double(fr_json_root(doc), &d) == -1); /* overflows to inf */
    fr_json_free(doc);
    big[0] = '0';
    big[1] = '.';
    CHECK(fr_json_parse(big, n, &doc, NULL) == 0 && fr_json_double(fr_json_root(doc), &d) == 0 && fabs(d - 0.7777777777777778) < 1e-15);
    fr_json_free(doc);
    /* An array of a million elements. */
    big[0] = '[';
    size_t k = 1;
    while (k + 2 < n) { big[k++] = '1'; big[k++] = ','; }
    big[k++] = '1';
    big[k++] = ']';
    CHECK(fr_json_parse(big, k, &doc, NULL) == 0 && fr_json_root(doc)->u.kids.count == (k - 1) / 2);
    fr_json_free(doc);
    free(big);
    /* A long line is kept only to the depth the library reads: a GetState of 40,000
     * links costs about its length, not a node (64 bytes) per value. */
    size_t links = 40000;
    char *state = malloc(links * 64 + 256);
    size_t at = (size_t)sprintf(state, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"displays\":[{\"id\":0,\"links\":[");
    for (size_t i = 0; i < links; i++)
        at += (size_t)sprintf(state + at, "%s{\"link\":%zu,\"r\":[1,2,3,4,5,6,7,8]}", i ? "," : "", i + 1);
    at += (size_t)sprintf(state + at, "]}],\"now\":1.5}}");
    CHECK(fr_json_parse(state, at, &doc, NULL) == 0);
    size_t full_bytes = fr_json_doc_bytes(doc);
    fr_json_free(doc);
    CHECK(fr__decode_line(state, at, &msg) == FR_OK && msg.kind == FR_MSG_RESULT && msg.id == 7);
    size_t kept_bytes = fr_json_doc_bytes(msg.doc);
    const fr_json *displays = fr_json_get(msg.result, "displays");
    const fr_json *display = displays && displays->u.kids.count == 1 ? displays->u.kids.first : NULL;
    double now = 0;
    CHECK(fr_json_double(fr_json_get(msg.result, "now"), &now) == 0 && now == 1.5);
    const fr_json *kept_links = display ? fr_json_get(display, "links") : NULL; /* level 4: kept, its members not */
    CHECK(display && !display->elided && kept_links && kept_links->type == FR_JSON_ARRAY && kept_links->elided &&
          kept_links->u.kids.count == 0 && kept_links->raw_len > at - 100);
    CHECK(msg.result->raw_len > at - 40); /* the whole result, as text */
    CHECK_MSG(kept_bytes < 2 * at && full_bytes > 10 * at, "%zu bytes kept, %zu parsed whole, for a line of %zu", kept_bytes,
              full_bytes, at);
    printf("     a %zu-byte GetState: %zu bytes decoded (%zu parsed whole)\n", at, kept_bytes, full_bytes);
    fr__msg_clear(&msg);
    free(state);
    /* The deepest values the library reads, a tick's timelines entries (level 4), are kept
     * in a long line too (whitespace makes this tick 100 KB). */
    char *tick = malloc(128 << 10);
    int head = sprintf(tick, "{\"jsonrpc\":\"2.0\",\"method\":\"framerate.v1.DisplayLink/Tick\",\"params\":{\"link\":3,"
                             "\"sequence\":9,\"timestamp\":10.0,\"targetTimestamp\":10.1,\"duration\":0.1,\"refreshRate\":10.0,"
                             "\"callbackRate\":10.0,\"timelines\":[{\"vsyncId\":7,\"deadline\":10.1,\"presentationTime\":10.2},");
    memset(tick + head, ' ', 100000);
    int tail = sprintf(tick + head + 100000, "{\"vsyncId\":8,\"deadline\":10.2,\"presentationTime\":10.3}],\"skipped\":0}}");
    size_t tick_len = (size_t)head + 100000 + (size_t)tail;
    CHECK(tick_len >= FR_KEEP_WHOLE_BELOW);
    CHECK(fr__decode_line(tick, tick_len, &msg) == FR_OK && msg.kind == FR_MSG_TICK && msg.tick.timeline_count == 2 &&
          msg.tick.timelines[1].vsync_id == 8 && msg.tick.timelines[1].presentation_time == 10.3);
    fr__msg_clear(&msg);
    free(tick);
    /* Lines longer than the limit are refused before parsing. */
    char *huge = malloc(FR_MAX_LINE + 2);
    memset(huge, ' ', FR_MAX_LINE + 1);
    huge[0] = '1';
    CHECK(fr__decode_line(huge, FR_MAX_LINE + 1, &msg) == FR_EPROTO);
    free(huge);
}

/* ---- the line decoder -------------------------------------------------------- */

static void test_decode_lines(void) {
    fr_msg m;
    CHECK(fr__decode_line(corpus[0], strlen(corpus[0]), &m) == FR_OK && m.kind == FR_MSG_RESULT && m.id == 1 && m.result &&
          m.result->type == FR_JSON_OBJECT);
    fr__msg_clear(&m);
    CHECK(fr__decode_line(corpus[1], strlen(corpus[1]), &m) == FR_OK && m.kind == FR_MSG_TICK);
    CHECK(m.tick.link == 1 && m.tick.sequence == 1 && m.tick.skipped == 0 && m.tick.timestamp == 1133.089876383 &&
          m.tick.target_timestamp == 1133.098209716 && m.tick.duration == 0.008333333 && m.tick.refresh_rate == 120.0 &&
          m.tick.callback_rate == 120.0);
    fr__msg_clear(&m);
    CHECK(fr__decode_line(corpus[2], strlen(corpus[2]), &m) == FR_OK && m.kind == FR_MSG_CLOSED && m.link == 3 &&
          m.error.grpc_code == FR_GRPC_UNAVAILABLE && strcmp(m.error.message, "framerated is shutting down") == 0);
    fr__msg_clear(&m);
    CHECK(fr__decode_line(corpus[3], strlen(corpus[3]), &m) == FR_OK && m.kind == FR_MSG_ERROR && m.id == 10 &&
          m.error.code == -32602 && m.error.grpc_code == FR_GRPC_INVALID_ARGUMENT &&
          strcmp(m.error.status, "INVALID_ARGUMENT") == 0 && strcmp(m.error.field, "range.maximum") == 0);
    fr__msg_clear(&m);
    CHECK(fr__decode_line(corpus[4], strlen(corpus[4]), &m) == FR_OK && m.kind == FR_MSG_UNSOLICITED_ERROR &&
          m.error.code == 8 && m.error.grpc_code == FR_GRPC_RESOURCE_EXHAUSTED);
    fr__msg_clear(&m);
    CHECK(fr__decode_line(corpus[5], strlen(corpus[5]), &m) == FR_OK && m.kind == FR_MSG_EVENT);
    CHECK(m.watch == 1 && strcmp(m.event_kind, "refreshRateChanged") == 0 && m.display == 0 && m.link == 0 &&
          m.from == 120.0 && m.to == 60.0 && m.event_json && strncmp(m.event_json, "{\"watch\":1,", 11) == 0 &&
          m.event_json[strlen(m.event_json) - 1] == '}');
    fr__msg_clear(&m);
    {
        const char *added = "{\"jsonrpc\":\"2.0\",\"method\":\"framerate.v1.Compositor/Event\",\"params\":{\"watch\":3,"
                            "\"kind\":\"linkAdded\",\"display\":1,\"link\":{\"link\":7,\"paused\":false}}}";
        CHECK(fr__decode_line(added, strlen(added), &m) == FR_OK && m.kind == FR_MSG_EVENT && m.watch == 3 &&
              m.link == 7 && m.display == 1 && strcmp(m.event_kind, "linkAdded") == 0);
        fr__msg_clear(&m);
        const char *removed = "{\"jsonrpc\":\"2.0\",\"method\":\"framerate.v1.Compositor/Event\",\"params\":{\"watch\":3,"
                              "\"kind\":\"linkRemoved\",\"link\":7}}";
        CHECK(fr__decode_line(removed, strlen(removed), &m) == FR_OK && m.kind == FR_MSG_EVENT && m.link == 7 && m.display == -1);
        fr__msg_clear(&m);
        const char *no_watch = "{\"jsonrpc\":\"2.0\",\"method\":\"framerate.v1.Compositor/Event\",\"params\":{\"kind\":\"x\"}}";
        CHECK(fr__decode_line(no_watch, strlen(no_watch), &m) == FR_OK && m.kind == FR_MSG_IGNORED && m.event_json == NULL);
        fr__msg_clear(&m);
    }
    CHECK(fr__decode_line(corpus[6], strlen(corpus[6]), &m) == FR_OK && m.kind == FR_MSG_IGNORED);
    fr__msg_clear(&m);
    CHECK(fr__decode_line(corpus[7], strlen(corpus[7]), &m) == FR_OK && m.kind == FR_MSG_IGNORED); /* not our id */
    fr__msg_clear(&m);

    static const char *const bad[] = {
        "42", "\"x\"", "null", "{}", "{\"jsonrpc\":\"2.0\",\"id\":1}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":7}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}", "{\"method\":7}",
        "{\"method\":\"framerate.v1.DisplayLink/Tick\"}",
        "{\"method\":\"framerate.v1.DisplayLink/Tick\",\"params\":[]}",
        "{\"method\":\"framerate.v1.DisplayLink/Tick\",\"params\":{\"link\":1,\"sequence\":1}}",
        "{\"method\":\"framerate.v1.DisplayLink/Tick\",\"params\":{\"link\":-1,\"sequence\":1,\"timestamp\":1,\"targetTimestamp\":1,"
        "\"duration\":1,\"refreshRate\":1,\"callbackRate\":1}}",
        "{\"method\":\"framerate.v1.DisplayLink/Tick\",\"params\":{\"link\":1,\"sequence\":1,\"timestamp\":\"1\",\"targetTimestamp\":1,"
        "\"duration\":1,\"refreshRate\":1,\"callbackRate\":1}}",
        "{\"method\":\"framerate.v1.DisplayLink/Tick\",\"params\":{\"link\":1,\"sequence\":1,\"timestamp\":1e400,\"targetTimestamp\":1,"
        "\"duration\":1,\"refreshRate\":1,\"callbackRate\":1}}",
        "{\"method\":\"framerate.v1.DisplayLink/Tick\",\"params\":{\"link\":1,\"sequence\":1.5,\"timestamp\":1,\"targetTimestamp\":1,"
        "\"duration\":1,\"refreshRate\":1,\"callbackRate\":1}}",
        "{\"method\":\"framerate.v1.DisplayLink/Tick\",\"params\":{\"link\":1,\"sequence\":1,\"timestamp\":1,\"targetTimestamp\":1,"
        "\"duration\":1,\"refreshRate\":1,\"callbackRate\":1,\"skipped\":-3}}",
        "{\"method\":\"framerate.v1.DisplayLink/Closed\",\"params\":{}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_MSG(fr__decode_line(bad[i], strlen(bad[i]), &m) == FR_EPROTO, "%s", bad[i]);
        CHECK(m.doc == NULL);
    }
    /* Unknown fields are ignored, as the protocol asks. */
    const char *extra = "{\"jsonrpc\":\"2.0\",\"method\":\"framerate.v1.DisplayLink/Tick\",\"params\":{\"link\":2,\"sequence\":9,"
                        "\"timestamp\":1,\"targetTimestamp\":2,\"duration\":1,\"refreshRate\":1,\"callbackRate\":1,\"skipped\":3,"
                        "\"future\":{\"x\":[1,2]}},\"more\":true}";
    CHECK(fr__decode_line(extra, strlen(extra), &m) == FR_OK && m.kind == FR_MSG_TICK && m.tick.skipped == 3 && m.tick.sequence == 9);
    fr__msg_clear(&m);
}

/* ---- fuzz -------------------------------------------------------------------- */

static void check_decode(const char *line, size_t len, unsigned long *accepted) {
    fr_msg m;
    int rc = fr__decode_line(line, len, &m);
    CHECK_MSG(rc == FR_OK || rc == FR_EPROTO, "rc %d", rc);
    if (rc == FR_OK) {
        (*accepted)++;
        if (m.kind == FR_MSG_TICK)
            CHECK(isfinite(m.tick.timestamp) && isfinite(m.tick.target_timestamp) && isfinite(m.tick.callback_rate));
        if (m.kind == FR_MSG_RESULT) CHECK(m.result != NULL && m.result->raw != NULL);
        fr__msg_clear(&m);
    } else {
        CHECK(m.doc == NULL);
    }
    fr_json_doc *doc = NULL;
    size_t offset = 0;
    int prc = fr_json_parse(line, len, &doc, &offset);
    CHECK(prc == 0 || prc == -1);
    if (prc == 0) {
        const fr_json *root = fr_json_root(doc);
        CHECK(root->raw_len <= len);
    } else {
        CHECK(offset <= len);
    }
    fr_json_free(doc);
}

static size_t mutate(char *buf, size_t len, size_t cap) {
    static const char interesting[] = "{}[]\",:\\u0123456789eE.-+ tfn\x80\xc3\xed\xf0\xff\x00\n";
    int ops = 1 + (int)rng_below(4);
    for (int op = 0; op < ops; op++) {
        size_t at = rng_below(len + 1);
        switch (rng_below(7)) {
        case 0: if (len) buf[rng_below(len)] ^= (char)(1u << rng_below(8)); break;
        case 1:
            if (len < cap) {
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = interesting[rng_below(sizeof interesting - 1)];
                len++;
            }
            break;
        case 2: if (len && at < len) { memmove(buf + at, buf + at + 1, len - at - 1); len--; } break;
        case 3: len = at; break; /* truncate */
        case 4: if (len) buf[rng_below(len)] = interesting[rng_below(sizeof interesting - 1)]; break;
        case 5: { /* duplicate a slice */
            size_t from = rng_below(len + 1), n = rng_below(32);
            if (from + n > len) n = len - from;
            if (len + n <= cap) {
                memmove(buf + at + n, buf + at, len - at);
                memmove(buf + at, buf + (from < at ? from : from + n), n);
                len += n;
            }
            break;
        }
        default: if (len) buf[rng_below(len)] = (char)rng(); break;
        }
    }
    return len;
}

static void test_fuzz_mutations(void) {
    char buf[4096];
    unsigned long accepted = 0, cases = 0;
    for (int round = 0; round < 20000; round++) {
        const char *seed = corpus[rng_below(CORPUS_N)];
        size_t len = strlen(seed);
        memcpy(buf, seed, len);
        len = mutate(buf, len, sizeof buf);
        check_decode(buf, len, &accepted);
        cases++;
    }
    printf("     %lu mutated lines, %lu still valid\n", cases, accepted);
}

static void test_fuzz_garbage(void) {
    char buf[512];
    static const char json_chars[] = "{}[]\",:\\/u0123456789abcdefABCDEF.-+eE \t\r\ntruefalsenull";
    unsigned long accepted = 0;
    for (int round = 0; round < 20000; round++) {
        size_t len = rng_below(sizeof buf);
        int alphabet = (int)rng_below(3);
        for (size_t k = 0; k < len; k++)
            buf[k] = alphabet == 0 ? (char)rng() : alphabet == 1 ? json_chars[rng_below(sizeof json_chars - 1)] : "[{\"a\":1,"[rng_below(8)];
        check_decode(buf, len, &accepted);
    }
    printf("     20000 garbage lines, %lu valid by chance\n", accepted);
}

/* Random valid JSON; every strict prefix of a container must be rejected. */
static void gen_value(char *buf, size_t *len, size_t cap, int depth) {
    if (*len + 64 >= cap) { buf[(*len)++] = '0'; return; }
    int kind = (int)rng_below(depth > 6 ? 4 : 7);
    switch (kind) {
    case 0: { int n = snprintf(buf + *len, cap - *len, "%s", (const char *[]){"true", "false", "null"}[rng_below(3)]); *len += (size_t)n; break; }
    case 1: { int n = snprintf(buf + *len, cap - *len, "%lld.%03u", (long long)(rng() % 2000000) - 1000000, (unsigned)(rng() % 1000)); *len += (size_t)n; break; }
    case 2: { int n = snprintf(buf + *len, cap - *len, "%de%d", (int)(rng() % 100), (int)(rng() % 40) - 20); *len += (size_t)n; break; }
    case 3: {
        static const char *const pieces[] = {"a", "\\\"", "\\\\", "\\n", "\\u00e9", "\\ud83d\\ude00", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", " ", "\\/"};
        buf[(*len)++] = '"';
        int n = (int)rng_below(8);
        for (int k = 0; k < n && *len + 16 < cap; k++) {
            const char *piece = pieces[rng_below(sizeof pieces / sizeof pieces[0])];
            memcpy(buf + *len, piece, strlen(piece));
            *len += strlen(piece);
        }
        buf[(*len)++] = '"';
        break;
    }
    default: {
        int object = kind == 4;
        buf[(*len)++] = object ? '{' : '[';
        int n = (int)rng_below(5);
        for (int k = 0; k < n && *len + 80 < cap; k++) {
            if (k) buf[(*len)++] = ',';
            if (rng_below(4) == 0) buf[(*len)++] = ' ';
            if (object) { int m = snprintf(buf + *len, cap - *len, "\"k%d\":", k); *len += (size_t)m; }
            gen_value(buf, len, cap, depth + 1);
        }
        buf[(*len)++] = object ? '}' : ']';
    }
    }
}

static void test_fuzz_generated(void) {
    char buf[8192];
    unsigned long prefixes = 0;
    for (int round = 0; round < 3000; round++) {
        size_t len = 0;
        buf[len++] = rng_below(2) ? '[' : '{';
        if (buf[0] == '{') { memcpy(buf + len, "\"v\":", 4); len += 4; }
        gen_value(buf, &len, sizeof buf - 8, 1);
        buf[len++] = buf[0] == '[' ? ']' : '}';
        CHECK_MSG(parse(buf, len) == 0, "%.*s", (int)len, buf);
        for (size_t cut = 0; cut < len; cut += 1 + rng_below(4)) {
            CHECK_MSG(parse(buf, cut) == -1, "prefix %zu of %.*s", cut, (int)len, buf);
            prefixes++;
        }
    }
    printf("     3000 generated documents, %lu strict prefixes rejected\n", prefixes);
}

/* ---- garbage through a live connection -------------------------------------- */

static const char register_answer[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"link\":7,\"refreshRate\":60.0,\"callbackRate\":60.0,\"display\":0}}\n";

static const char *tick_line(char *buf, size_t size, uint64_t sequence) {
    snprintf(buf, size,
             "{\"jsonrpc\":\"2.0\",\"method\":\"framerate.v1.DisplayLink/Tick\",\"params\":{\"link\":7,\"sequence\":%llu,"
             "\"timestamp\":%llu.5,\"targetTimestamp\":%llu.51,\"duration\":0.016666667,\"refreshRate\":60.0,\"callbackRate\":60.0,"
             "\"skipped\":0}}\n",
             (unsigned long long)sequence, (unsigned long long)(100 + sequence), (unsigned long long)(100 + sequence));
    return buf;
}

static void test_connection_with_a_fake_daemon(void) {
    /* Valid exchange: register, the request the library wrote, ticks, a skip, Closed. */
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(write(sv[1], register_answer, strlen(register_answer)) == (ssize_t)strlen(register_answer));
    fr_conn *conn;
    CHECK(fr__conn_from_fd(sv[0], &conn) == FR_OK);
    fr_link_options opt = FR_LINK_OPTIONS_INIT;
    opt.range = (fr_range){ 30.5, 60, 60 };
    opt.label = "la\"bel\n\x01";
    opt.high_frame_rate = 1;
    fr_link *link;
    CHECK(fr_register(conn, &opt, &link) == FR_OK && fr_link_id(link) == 7);
    char request[1024] = { 0 };
    ssize_t n = read(sv[1], request, sizeof request - 1);
    CHECK(n > 0 && request[n - 1] == '\n');
    CHECK(strstr(request, "\"method\":\"framerate.v1.DisplayLink/Register\"") != NULL);
    CHECK(strstr(request, "\"range\":{\"minimum\":30.5,\"maximum\":60,\"preferred\":60}") != NULL);
    CHECK(strstr(request, "\"label\":\"la\\\"bel\\n\\u0001\"") != NULL);
    CHECK(strstr(request, "\"highFrameRate\":true") != NULL);
    fr_msg check;
    CHECK(fr__decode_line(request, (size_t)n - 1, &check) == FR_OK && check.kind == FR_MSG_IGNORED); /* valid JSON */
    fr__msg_clear(&check);
    char line[512];
    const char *other = "{\"jsonrpc\":\"2.0\",\"method\":\"framerate.v1.DisplayLink/Tick\",\"params\":{\"link\":99,\"sequence\":1,"
                        "\"timestamp\":1,\"targetTimestamp\":2,\"duration\":1,\"refreshRate\":1,\"callbackRate\":1,\"skipped\":0}}\n\r\n  \n";
    CHECK(write(sv[1], other, strlen(other)) > 0);
    for (uint64_t s = 1; s <= 3; s++) {
        tick_line(line, sizeof line, s);
        CHECK(write(sv[1], line, strlen(line)) > 0);
    }
    tick_line(line, sizeof line, 6);
    CHECK(write(sv[1], line, strlen(line)) > 0);
    fr_tick tick;
    for (uint64_t s = 1; s <= 3; s++) CHECK(fr_next_tick(link, &tick, 1000) == FR_OK && tick.sequence == s && tick.skipped == 0);
    CHECK(fr_next_tick(link, &tick, 1000) == FR_OK && tick.sequence == 6 && tick.skipped == 2 && tick.link == 7);
    CHECK(fr_next_tick(link, &tick, 0) == FR_ETIMEDOUT);
    CHECK(fr_frame_done(link, 6) == FR_OK);
    n = read(sv[1], request, sizeof request - 1);
    CHECK(n > 0 && strstr(request, "\"params\":{\"link\":7,\"sequence\":6}") != NULL);
    /* More than FR_TICK_QUEUE ticks unread: the oldest are dropped and counted. */
    for (uint64_t s = 7; s <= 40; s++) {
        tick_line(line, sizeof line, s);
        CHECK(write(sv[1], line, strlen(line)) > 0);
    }
    const char *closed = "{\"jsonrpc\":\"2.0\",\"method\":\"framerate.v1.DisplayLink/Closed\",\"params\":{\"link\":7,\"status\":\"UNAVAILABLE\",\"message\":\"bye\"}}\n";
    CHECK(write(sv[1], closed, strlen(closed)) > 0);
    uint64_t last = 6, delivered = 0;
    int rc;
    while ((rc = fr_next_tick(link, &tick, 1000)) == FR_OK) {
        CHECK(tick.sequence == last + tick.skipped + 1);
        last = tick.sequence;
        delivered++;
    }
    CHECK(rc == FR_EENDED && last == 40 && delivered <= FR_TICK_QUEUE);
    fr_error why;
    CHECK(fr_link_error(link, &why) == FR_EENDED && why.grpc_code == FR_GRPC_UNAVAILABLE && strcmp(why.message, "bye") == 0);
    CHECK(fr_update(link, NULL, 1) == FR_EENDED);
    CHECK(fr_invalidate(link) == FR_OK);
    fr_close(conn);
    close(sv[1]);

    /* An error answer and a malformed line. */
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    const char *answers = "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"invalid range: minimum must be greater "
                          "than 0 Hz, got 0\",\"data\":{\"status\":\"INVALID_ARGUMENT\",\"field\":\"range.minimum\"}}}\n";
    CHECK(write(sv[1], answers, strlen(answers)) > 0);
    CHECK(write(sv[1], register_answer, strlen(register_answer)) > 0); /* id 1: ignored, already answered */
    CHECK(fr__conn_from_fd(sv[0], &conn) == FR_OK);
    opt.label = NULL;
    CHECK(fr_register(conn, &opt, &link) == FR_ERPC);
    const fr_error *e = fr_last_error(conn);
    CHECK(e->code == -32602 && e->grpc_code == FR_GRPC_INVALID_ARGUMENT && strcmp(e->field, "range.minimum") == 0 &&
          strstr(e->message, "minimum") != NULL);
    const char *answer2 = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"link\":8,\"refreshRate\":60.0,\"callbackRate\":60.0}}\n{\"jsonrpc\":\"2.0\",\"me\n";
    CHECK(write(sv[1], answer2, strlen(answer2)) > 0);
    CHECK(fr_register(conn, &opt, &link) == FR_OK && fr_link_id(link) == 8);
    CHECK(fr_next_tick(link, &tick, 1000) == FR_EPROTO);
    CHECK(fr_next_tick(link, &tick, 1000) == FR_EENDED);
    CHECK(fr_link_error(link, &why) == FR_EENDED && why.grpc_code == FR_GRPC_INTERNAL);
    CHECK(fr_call(conn, "grpc.health.v1.Health/Check", NULL, NULL) == FR_ECLOSED);
    fr_close(conn);
    close(sv[1]);
}

static void test_fuzz_connection(void) {
    char buf[4096], line[512];
    unsigned long ended = 0;
    for (int round = 0; round < 2000; round++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) { CHECK(0); return; }
        CHECK(write(sv[1], register_answer, strlen(register_answer)) > 0);
        fr_conn *conn;
        fr_link *link;
        CHECK(fr__conn_from_fd(sv[0], &conn) == FR_OK);
        fr_link_options opt = FR_LINK_OPTIONS_INIT;
        opt.range = (fr_range){ 30, 60, 60 };
        CHECK(fr_register(conn, &opt, &link) == FR_OK);
        int lines = 1 + (int)rng_below(6);
        for (int k = 0; k < lines; k++) {
            size_t len;
            if (rng_below(2)) {
                tick_line(line, sizeof line, (uint64_t)k + 1);
                len = strlen(line) - 1;
                memcpy(buf, line, len);
            } else {
                const char *seed = corpus[rng_below(CORPUS_N)];
                len = strlen(seed);
                memcpy(buf, seed, len);
            }
            len = mutate(buf, len, sizeof buf - 1);
            buf[len++] = '\n';
            CHECK(write(sv[1], buf, len) == (ssize_t)len);
        }
        if (rng_below(3) == 0) { /* EOF, maybe mid-line */
            close(sv[1]);
            sv[1] = -1;
        }
        fr_tick tick;
        int rc, guard = 0;
        while ((rc = fr_next_tick(link, &tick, 0)) == FR_OK && ++guard < 100) {
        }
        CHECK_MSG(rc == FR_ETIMEDOUT || rc == FR_EPROTO || rc == FR_ECLOSED || rc == FR_EENDED, "rc %d", rc);
        if (rc != FR_ETIMEDOUT) ended++;
        fr_close(conn);
        if (sv[1] >= 0) close(sv[1]);
    }
    printf("     2000 connections fed mutated lines, %lu ended by them\n", ended);
}

int main(void) {
    RUN(test_valid_json);
    RUN(test_invalid_json);
    RUN(test_strings_decode);
    RUN(test_numbers);
    RUN(test_nesting);
    RUN(test_huge);
    RUN(test_decode_lines);
    RUN(test_fuzz_mutations);
    RUN(test_fuzz_garbage);
    RUN(test_fuzz_generated);
    RUN(test_connection_with_a_fake_daemon);
    RUN(test_fuzz_connection);
    printf("%d checks, %d failed\n", test_checks, test_failures);
    return test_failures ? 1 : 0;
}
