/* A strict, bounded JSON reader for libframerate (see fr_json.h). Every read is
 * checked against the end of the input; nesting is limited; memory comes from a
 * per-document arena that grows in blocks, so a line costs O(its length), and with
 * fr_json_parse_bounded only the levels kept cost more than the line's copy. */
#define _POSIX_C_SOURCE 200809L
#include "fr_json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

typedef struct fr_block {
    struct fr_block *next;
    size_t used;
    size_t cap;
    max_align_t data[];
} fr_block;

struct fr_json_doc {
    fr_block *blocks;
    size_t bytes;        /* allocated: the copy and the arena's blocks */
    char *copy;          /* the input, NUL-terminated; raw spans point here */
    fr_json *root;
};

#define ALIGN (alignof(max_align_t))

static void *arena_alloc(fr_json_doc *doc, size_t size) {
    size = (size + ALIGN - 1) / ALIGN * ALIGN;
    if (size == 0) size = ALIGN;
    fr_block *block = doc->blocks;
    if (block == NULL || block->cap - block->used < size) {
        size_t cap = block ? block->cap * 2 : 4096;
        if (cap > ((size_t)1 << 20)) cap = (size_t)1 << 20;
        if (cap < size) cap = size;
        fr_block *fresh = malloc(sizeof(fr_block) + cap);
        if (fresh == NULL) return NULL;
        doc->bytes += sizeof(fr_block) + cap;
        fresh->next = block;
        fresh->used = 0;
        fresh->cap = cap;
        doc->blocks = fresh;
        block = fresh;
    }
    void *result = (char *)block->data + block->used;
    block->used += size;
    return result;
}

typedef struct parser {
    fr_json_doc *doc;
    const char *start;
    const char *p;
    const char *end;
    int depth;
    int keep_depth;      /* members deeper than this are checked, not kept */
    int oom;
} parser;

static void skip_ws(parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static int hex4(const char *p, const char *end, unsigned *out) {
    if (end - p < 4) return -1;
    unsigned value = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        value <<= 4;
        if (c >= '0' && c <= '9') value |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') value |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') value |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = value;
    return 0;
}

static size_t put_utf8(char *dst, unsigned cp) {
    if (cp < 0x80) { dst[0] = (char)cp; return 1; }
    if (cp < 0x800) { dst[0] = (char)(0xC0 | (cp >> 6)); dst[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        dst[0] = (char)(0xE0 | (cp >> 12)); dst[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); dst[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    dst[0] = (char)(0xF0 | (cp >> 18)); dst[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); dst[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
    unsigned char c = p[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* no UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else return 0;
    if ((size_t)(end - p) < n) return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return n;
}

int fr_json_utf8_valid(const char *text) {
    const unsigned char *p = (const unsigned char *)text, *end = p + strlen(text);
    while (p < end) {
        if (*p < 0x80) { p++; continue; }
        size_t n = utf8_len(p, end);
        if (n == 0) return 0;
        p += n;
    }
    return 1;
}

/* At the opening quote. Decodes into arena memory, or (out NULL) only checks. */
static int parse_string(parser *ps, const char **out, size_t *out_len) {
    const char *p = ps->p + 1;
    /* Find the closing quote to size the buffer (decoded <= raw). */
    const char *scan = p;
    while (scan < ps->end && *scan != '"') {
        if (*scan == '\\') {
            scan++;
            if (scan >= ps->end) { ps->p = scan; return -1; }
        }
        scan++;
    }
    if (scan >= ps->end) { ps->p = scan; return -1; }
    /* Checking only, the decoded bytes go to a small scratch buffer, overwritten. */
    char scratch[8];
    char *dst = scratch;
    if (out) {
        dst = arena_alloc(ps->doc, (size_t)(scan - p) + 1);
        if (dst == NULL) { ps->oom = 1; return -1; }
    }
    size_t n = 0;
#define PUT(c) do { dst[out ? n : 0] = (c); n++; } while (0)
    while (p < scan) {
        unsigned char c = (unsigned char)*p;
        if (c == '\\') {
            p++; /* p < scan: the scan above stepped over the escaped byte */
            switch (*p) {
            case '"': PUT('"'); p++; break;
            case '\\': PUT('\\'); p++; break;
            case '/': PUT('/'); p++; break;
            case 'b': PUT('\b'); p++; break;
            case 'f': PUT('\f'); p++; break;
            case 'n': PUT('\n'); p++; break;
            case 'r': PUT('\r'); p++; break;
            case 't': PUT('\t'); p++; break;
            case 'u': {
                unsigned cp;
                if (hex4(p + 1, scan, &cp) != 0) { ps->p = p; return -1; }
                p += 5;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned low;
                    if (scan - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, scan, &low) != 0 || low < 0xDC00 || low > 0xDFFF) {
                        ps->p = p;
                        return -1; /* a lone high surrogate */
                    }
                    p += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    ps->p = p;
                    return -1; /* a lone low surrogate */
                }
                /* \uXXXX is 6 raw bytes and at most 3 decoded; a pair is 12 and 4. */
                n += put_utf8(out ? dst + n : scratch, cp);
                break;
            }
            default:
                ps->p = p;
                return -1;
            }
        } else if (c < 0x20) {
            ps->p = p;
            return -1;
        } else if (c < 0x80) {
            PUT((char)c);
            p++;
        } else {
            size_t len = utf8_len((const unsigned char *)p, (const unsigned char *)scan);
            if (len == 0) { ps->p = p; return -1; }
            if (out) memcpy(dst + n, p, len);
            n += len;
            p += len;
        }
    }
#undef PUT
    if (out) {
        dst[n] = '\0';
        *out = dst;
        *out_len = n;
    }
    ps->p = scan + 1;
    return 0;
}

static int parse_number(parser *ps, fr_json *v) {
    const char *p = ps->p, *end = ps->end, *start = ps->p;
    if (p < end && *p == '-') p++;
    if (p >= end) { ps->p = p; return -1; }
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') { while (p < end && *p >= '0' && *p <= '9') p++; }
    else { ps->p = p; return -1; }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || *p < '0' || *p > '9') { ps->p = p; return -1; }
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') { ps->p = p; return -1; }
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (v == NULL) { /* checked only */
        ps->p = p;
        return 0;
    }
    size_t len = (size_t)(p - start);
    /* Rewritten as "[-]DIGITSeEXP" (no decimal point, so the locale's does not
     * matter) for strtod. Mantissas are cut to 40 significant digits and the
     * exponent adjusted, so conversion stays cheap whatever the input. */
    char small[128];
    char *buf = small;
    if (len + 32 > sizeof small) {
        buf = arena_alloc(ps->doc, len + 32);
        if (buf == NULL) { ps->oom = 1; return -1; }
    }
    size_t o = 0;
    const char *q = start;
    if (*q == '-') buf[o++] = *q++;
    int significant = 0;
    long shift = 0; /* powers of ten to apply for dropped integer digits and kept fraction digits */
    int in_fraction = 0;
    while (q < p && *q != 'e' && *q != 'E') {
        if (*q == '.') {
            in_fraction = 1;
        } else if (significant < 40) {
            if (significant > 0 || *q != '0') significant++;
            if (significant > 0) buf[o++] = *q; /* leading zeros carry no value */
            if (in_fraction) shift--;
        } else if (!in_fraction) {
            shift++;
        }
        q++;
    }
    if (significant == 0) buf[o++] = '0';
    long exponent = 0;
    if (q < p) {
        q++; /* e or E */
        int negative = 0;
        if (*q == '+' || *q == '-') { negative = (*q == '-'); q++; }
        for (; q < p; q++)
            if (exponent < 100000000L) exponent = exponent * 10 + (*q - '0');
        if (negative) exponent = -exponent;
    }
    exponent += shift;
    buf[o++] = 'e';
    {
        char tmp[24];
        size_t t = 0;
        unsigned long magnitude = exponent < 0 ? (unsigned long)(-exponent) : (unsigned long)exponent;
        if (exponent < 0) buf[o++] = '-';
        do { tmp[t++] = (char)('0' + magnitude % 10); magnitude /= 10; } while (magnitude && t < sizeof tmp);
        while (t) buf[o++] = tmp[--t];
    }
    buf[o] = '\0';
    errno = 0;
    double value = strtod(buf, NULL);
    v->type = FR_JSON_NUMBER;
    v->u.num = value;
    ps->p = p;
    return 0;
}

static int parse_value(parser *ps, fr_json *v);

static int expect_literal(parser *ps, const char *word, size_t n) {
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return -1;
    ps->p += n;
    return 0;
}

/* `v` NULL: checked only. Members deeper than keep_depth are checked only too, and
 * their container is marked elided. */
static int parse_container(parser *ps, fr_json *v, int object) {
    char close = object ? '}' : ']';
    if (++ps->depth > FR_JSON_MAX_DEPTH) return -1;
    ps->p++; /* the opening bracket */
    int keep = v != NULL && ps->depth <= ps->keep_depth;
    if (v) {
        v->type = object ? FR_JSON_OBJECT : FR_JSON_ARRAY;
        v->elided = !keep;
        v->u.kids.first = NULL;
        v->u.kids.count = 0;
    }
    fr_json *tail = NULL;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        fr_json *kid = NULL;
        if (keep) {
            kid = arena_alloc(ps->doc, sizeof *kid);
            if (kid == NULL) { ps->oom = 1; return -1; }
            memset(kid, 0, sizeof *kid);
        }
        skip_ws(ps);
        if (object) {
            if (ps->p >= ps->end || *ps->p != '"') return -1;
            if (parse_string(ps, kid ? &kid->key : NULL, kid ? &kid->key_len : NULL) != 0) return -1;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') return -1;
            ps->p++;
        }
        if (parse_value(ps, kid) != 0) return -1;
        if (kid) {
            if (tail) tail->next = kid; else v->u.kids.first = kid;
            tail = kid;
            v->u.kids.count++;
        }
        skip_ws(ps);
        if (ps->p >= ps->end) return -1;
        if (*ps->p == ',') { ps->p++; continue; }
        if (*ps->p == close) { ps->p++; break; }
        return -1;
    }
    ps->depth--;
    return 0;
}

/* `v` NULL: checked only, nothing allocated. */
static int parse_value(parser *ps, fr_json *v) {
    skip_ws(ps);
    if (ps->p >= ps->end) return -1;
    const char *begin = ps->p;
    int rc;
    fr_json_type type = FR_JSON_NULL;
    switch (*ps->p) {
    case '{': type = FR_JSON_OBJECT; rc = parse_container(ps, v, 1); break;
    case '[': type = FR_JSON_ARRAY; rc = parse_container(ps, v, 0); break;
    case '"':
        type = FR_JSON_STRING;
        rc = parse_string(ps, v ? &v->u.str.s : NULL, v ? &v->u.str.len : NULL);
        break;
    case 't': type = FR_JSON_TRUE; rc = expect_literal(ps, "true", 4); break;
    case 'f': type = FR_JSON_FALSE; rc = expect_literal(ps, "false", 5); break;
    case 'n': type = FR_JSON_NULL; rc = expect_literal(ps, "null", 4); break;
    default:
        if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) {
            type = FR_JSON_NUMBER;
            rc = parse_number(ps, v);
        } else {
            rc = -1;
        }
    }
    if (rc == 0 && v) {
        v->type = type;
        v->raw = begin;
        v->raw_len = (size_t)(ps->p - begin);
    }
    return rc;
}

int fr_json_parse(const char *text, size_t len, fr_json_doc **out, size_t *error_offset) {
    return fr_json_parse_bounded(text, len, INT_MAX, out, error_offset);
}

int fr_json_parse_bounded(const char *text, size_t len, int keep_depth, fr_json_doc **out, size_t *error_offset) {
    *out = NULL;
    if (error_offset) *error_offset = 0;
    if (text == NULL && len > 0) return -1;
    fr_json_doc *doc = calloc(1, sizeof *doc);
    if (doc == NULL) return -2;
    doc->copy = malloc(len + 1);
    if (doc->copy == NULL) { free(doc); return -2; }
    doc->bytes = len + 1;
    if (len) memcpy(doc->copy, text, len);
    doc->copy[len] = '\0';
    parser ps = { doc, doc->copy, doc->copy, doc->copy + len, 0, keep_depth < 0 ? 0 : keep_depth, 0 };
    fr_json *root = arena_alloc(doc, sizeof *root);
    int rc = -1;
    if (root == NULL) ps.oom = 1;
    else {
        memset(root, 0, sizeof *root);
        if (parse_value(&ps, root) == 0) {
            skip_ws(&ps);
            if (ps.p == ps.end) rc = 0;
        }
    }
    if (rc != 0) {
        if (error_offset) *error_offset = (size_t)(ps.p - ps.start);
        fr_json_free(doc);
        return ps.oom ? -2 : -1;
    }
    doc->root = root;
    *out = doc;
    return 0;
}

void fr_json_free(fr_json_doc *doc) {
    if (doc == NULL) return;
    fr_block *block = doc->blocks;
    while (block) {
        fr_block *next = block->next;
        free(block);
        block = next;
    }
    free(doc->copy);
    free(doc);
}

const fr_json *fr_json_root(const fr_json_doc *doc) { return doc ? doc->root : NULL; }

size_t fr_json_doc_bytes(const fr_json_doc *doc) { return doc ? doc->bytes : 0; }

const fr_json *fr_json_get(const fr_json *object, const char *key) {
    if (object == NULL || object->type != FR_JSON_OBJECT) return NULL;
    size_t n = strlen(key);
    const fr_json *found = NULL;
    for (const fr_json *kid = object->u.kids.first; kid; kid = kid->next)
        if (kid->key_len == n && memcmp(kid->key, key, n) == 0) found = kid;
    return found;
}

static int digits_only(const fr_json *v, size_t skip) {
    if (v->raw_len <= skip) return 0;
    for (size_t i = skip; i < v->raw_len; i++)
        if (v->raw[i] < '0' || v->raw[i] > '9') return 0;
    return 1;
}

int fr_json_u64(const fr_json *v, uint64_t *out) {
    if (v == NULL || v->type != FR_JSON_NUMBER) return -1;
    if (digits_only(v, 0)) {
        uint64_t value = 0;
        for (size_t i = 0; i < v->raw_len; i++) {
            unsigned digit = (unsigned)(v->raw[i] - '0');
            if (value > (UINT64_MAX - digit) / 10) return -1;
            value = value * 10 + digit;
        }
        *out = value;
        return 0;
    }
    double d = v->u.num;
    if (!(d >= 0 && d < 9007199254740992.0) || d != (double)(uint64_t)d) return -1;
    *out = (uint64_t)d;
    return 0;
}

int fr_json_i64(const fr_json *v, int64_t *out) {
    if (v == NULL || v->type != FR_JSON_NUMBER) return -1;
    int negative = v->raw_len > 0 && v->raw[0] == '-';
    if (digits_only(v, negative ? 1 : 0)) {
        uint64_t magnitude = 0;
        for (size_t i = negative ? 1 : 0; i < v->raw_len; i++) {
            unsigned digit = (unsigned)(v->raw[i] - '0');
            if (magnitude > (UINT64_MAX - digit) / 10) return -1;
            magnitude = magnitude * 10 + digit;
        }
        if (negative) {
            if (magnitude > (uint64_t)INT64_MAX + 1) return -1;
            *out = magnitude == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)magnitude;
        } else {
            if (magnitude > (uint64_t)INT64_MAX) return -1;
            *out = (int64_t)magnitude;
        }
        return 0;
    }
    double d = v->u.num;
    if (!(d > -9007199254740992.0 && d < 9007199254740992.0) || d != (double)(int64_t)d) return -1;
    *out = (int64_t)d;
    return 0;
}

int fr_json_double(const fr_json *v, double *out) {
    if (v == NULL || v->type != FR_JSON_NUMBER || !isfinite(v->u.num)) return -1;
    *out = v->u.num;
    return 0;
}
