/* A small JSON reader for the daemon's lines: RFC 8259 values (objects, arrays,
 * strings with every escape, numbers, true/false/null), strict, bounded.
 * Internal to libframerate; not installed. */
#ifndef FR_JSON_H
#define FR_JSON_H

#include <stddef.h>
#include <stdint.h>

/* Deepest nesting accepted (the daemon itself rejects more than 64 levels). */
#define FR_JSON_MAX_DEPTH 128

typedef enum fr_json_type {
    FR_JSON_NULL,
    FR_JSON_FALSE,
    FR_JSON_TRUE,
    FR_JSON_NUMBER,
    FR_JSON_STRING,
    FR_JSON_ARRAY,
    FR_JSON_OBJECT
} fr_json_type;

typedef struct fr_json fr_json;
struct fr_json {
    fr_json_type type;
    int elided;           /* an object or array whose members were checked, not kept
                           * (fr_json_parse_bounded): no kids, fr_json_get finds nothing */
    const char *key;      /* member name (decoded, NUL-terminated) inside an object, else NULL */
    size_t key_len;
    fr_json *next;        /* next element or member */
    const char *raw;      /* the value's text in the document's copy of the input */
    size_t raw_len;
    union {
        struct { const char *s; size_t len; } str;   /* decoded UTF-8, NUL-terminated */
        double num;                                   /* may be +-HUGE_VAL for huge exponents */
        struct { fr_json *first; size_t count; } kids;
    } u;
};

typedef struct fr_json_doc fr_json_doc;

/* Parses exactly one JSON value (surrounded by optional whitespace) from
 * text[0..len). Returns 0 and a document, or -1 for any malformed input
 * (syntax, bad escapes, lone surrogates, invalid UTF-8, control characters
 * in strings, nesting deeper than FR_JSON_MAX_DEPTH, trailing bytes) or -2
 * when out of memory. On error, *error_offset (if not NULL) is the byte offset
 * where parsing stopped. */
int fr_json_parse(const char *text, size_t len, fr_json_doc **out, size_t *error_offset);
/* fr_json_parse that keeps only the values at most `keep_depth` levels below the root
 * (the root's members are level 1). Deeper values are checked just as strictly but cost
 * no memory: the container holding them is `elided`, with its raw text. Same results
 * and error offsets as fr_json_parse for every input. */
int fr_json_parse_bounded(const char *text, size_t len, int keep_depth, fr_json_doc **out, size_t *error_offset);
/* Bytes the document holds (its copy of the input and its arena), for tests. */
size_t fr_json_doc_bytes(const fr_json_doc *doc);
void fr_json_free(fr_json_doc *doc);
const fr_json *fr_json_root(const fr_json_doc *doc);

/* Member `key` of an object (the last one when repeated), or NULL. */
const fr_json *fr_json_get(const fr_json *object, const char *key);
/* A non-negative integer that fits uint64_t (written as digits, or as a number
 * whose value is an exact integer below 2^53). Returns 0 on success, -1 otherwise. */
int fr_json_u64(const fr_json *value, uint64_t *out);
/* A signed integer in int64_t range, same rules. */
int fr_json_i64(const fr_json *value, int64_t *out);
/* A finite number. */
int fr_json_double(const fr_json *value, double *out);

/* Whether the NUL-terminated `text` is valid UTF-8 (no overlong forms, no UTF-16
 * surrogates, nothing above U+10FFFF): what a string the client sends must be, since the
 * daemon answers a line that is not with a parse error that names no request. */
int fr_json_utf8_valid(const char *text);

#endif
