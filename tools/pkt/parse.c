/*
 * parse.c — a packetdrill script: option lines, then events.
 *
 *   script   := option* event*
 *   event    := time action
 *   time     := '+' T ['~' '+' T] | T ['~' T] | '*'          T = seconds, INT or FLOAT
 *   action   := packet | syscall | `command` | %{ code }%
 *   packet   := ('<' | '>') [ip-info] [port '>' port] (tcp | 'icmp' type [code] ['mtu' N] ['[' seq ']'])
 *   tcp      := flags seq ['ack' N] ['win' N] ['urg' N] ['<' options '>' | '<' '...' '>']
 *   flags    := WORD ['.'] | '.' | '-'        (letters of "FSRPUEW", '.' is ACK)
 *   seq      := N ':' N '(' N ')'             (start, end, payload length; end = start + length)
 *   options  := option (',' option)*         nop eol | mss N | wscale N | sackOK | sack a:b ... |
 *                                            TS val N ecr N | opt KIND ['len' N] [BYTE ...]
 *   syscall  := ['...' T] NAME '(' [expr (',' expr)*] ')' '=' expr [ERRNO ['(' text ')']] ['(' note ')']
 *   expr     := ['-'] primary ('|' primary)*  INT, WORD, WORD(args), "string", ..., [list], {struct}, and
 *                                            name=value inside a struct
 *
 * Times become microseconds exactly from their decimal text. Inbound TCP options are kept as raw bytes in
 * script order (a script may send options in any order and that order must reach the stack), outbound ones
 * as the bytes to compare against. Every error is "file:line:col: error: what was expected", and nothing a
 * script contains can crash the parser (tests/fuzz/fuzz_pkt.c).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt/pkt.h"
#include "wire/tcp.h"

struct ps {
    const char *path;
    struct tok *t;
    size_t n, i;
    char *err;
    size_t errlen;
    struct pkt_script *out;
    int depth; /* expression nesting, bounded */
};

#define EXPR_DEPTH_MAX 32

static struct tok *peek(struct ps *p)
{
    return &p->t[p->i];
}

static struct tok *peek2(struct ps *p)
{
    return &p->t[p->i + 1 < p->n ? p->i + 1 : p->n - 1];
}

static struct tok *next(struct ps *p)
{
    struct tok *t = &p->t[p->i];
    if (t->kind != TOK_EOF)
        p->i++;
    return t;
}

static int is_punct(const struct tok *t, char c)
{
    return t->kind == TOK_PUNCT && t->punct == c;
}

static int is_word(const struct tok *t, const char *w)
{
    return t->kind == TOK_WORD && strcmp(t->text, w) == 0;
}

static const char *tok_desc(const struct tok *t, char *buf, size_t n)
{
    switch (t->kind) {
    case TOK_EOF:
        return "end of file";
    case TOK_INT:
        snprintf(buf, n, "'%lld'", (long long)t->num);
        return buf;
    case TOK_PUNCT:
        snprintf(buf, n, "'%c'", t->punct);
        return buf;
    case TOK_ELLIPSIS:
        return "'...'";
    case TOK_BACKQ:
        return "a `command`";
    case TOK_CODE:
        return "a %{ code }% block";
    case TOK_STRING:
        return "a string";
    case TOK_OPTION:
        snprintf(buf, n, "option '--%.40s'", t->text);
        return buf;
    default:
        snprintf(buf, n, "'%.40s'", t->text);
        return buf;
    }
}

static int perr(struct ps *p, const struct tok *t, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    char d[64];
    snprintf(p->err, p->errlen, "%s:%d:%d: error: %s, found %s", p->path, t->line, t->col, what,
             tok_desc(t, d, sizeof(d)));
    return -1;
}

/* A semantic error at token t: what is wrong, without the "found" of a syntax error. */
static int serr(struct ps *p, const struct tok *t, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(p->err, p->errlen, "%s:%d:%d: error: %s", p->path, t->line, t->col, what);
    return -1;
}

static int expect_punct(struct ps *p, char c)
{
    if (!is_punct(peek(p), c))
        return perr(p, peek(p), "expected '%c'", c);
    next(p);
    return 0;
}

static int expect_u32(struct ps *p, const char *what, uint32_t *out)
{
    struct tok *t = peek(p);
    if (t->kind != TOK_INT || t->num < 0 || t->num > (int64_t)UINT32_MAX)
        return perr(p, t, "expected %s (an integer 0..4294967295)", what);
    *out = (uint32_t)t->num;
    next(p);
    return 0;
}

/* Seconds as written ("0.100", "2", ".5") to microseconds, truncating below 1 us as packetdrill does. */
static int time_us(struct ps *p, int64_t *out)
{
    struct tok *t = peek(p);
    if (t->kind == TOK_INT) {
        if (t->num > INT64_MAX / 1000000)
            return serr(p, t, "time out of range");
        *out = t->num * 1000000;
        next(p);
        return 0;
    }
    if (t->kind != TOK_FLOAT)
        return perr(p, t, "expected a time in seconds");
    const char *s = t->text;
    int64_t whole = 0, frac = 0;
    int fd = 0;
    for (; isdigit((unsigned char)*s); s++) {
        if (whole > (INT64_MAX / 1000000 - 9) / 10)
            return serr(p, t, "time out of range");
        whole = whole * 10 + (*s - '0');
    }
    if (*s == '.')
        s++;
    for (; isdigit((unsigned char)*s); s++) {
        if (fd < 6) {
            frac = frac * 10 + (*s - '0');
            fd++;
        }
    }
    for (; fd < 6; fd++)
        frac *= 10;
    *out = whole * 1000000 + frac;
    next(p);
    return 0;
}

/* ---- expressions ---- */

static void expr_free(struct expr *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nkids; i++)
        expr_free(e->kids[i]);
    free(e->kids);
    free(e->text);
    free(e);
}

static struct expr *expr_new(enum expr_kind k, const struct tok *t)
{
    struct expr *e = calloc(1, sizeof(*e));
    if (e) {
        e->kind = k;
        e->line = t->line;
        e->col = t->col;
    }
    return e;
}

static int expr_add(struct expr *e, struct expr *kid)
{
    struct expr **k = realloc(e->kids, (e->nkids + 1) * sizeof(*k));
    if (!k) {
        expr_free(kid);
        return -1;
    }
    e->kids = k;
    e->kids[e->nkids++] = kid;
    return 0;
}

static struct expr *parse_expr(struct ps *p);

/* Comma-separated expressions up to `close`; inside a struct, "x = value" pairs. */
static int parse_list(struct ps *p, struct expr *e, char close, int allow_assign)
{
    if (is_punct(peek(p), close)) {
        next(p);
        return 0;
    }
    for (;;) {
        struct expr *x = parse_expr(p);
        if (!x)
            return -1;
        if (allow_assign && is_punct(peek(p), '=')) {
            struct tok *eq = next(p);
            struct expr *a = expr_new(EX_ASSIGN, eq);
            if (!a) {
                expr_free(x);
                return perr(p, eq, "out of memory");
            }
            if (expr_add(a, x) < 0) {
                expr_free(a);
                return perr(p, eq, "out of memory");
            }
            struct expr *v = parse_expr(p);
            if (!v) {
                expr_free(a);
                return -1;
            }
            if (expr_add(a, v) < 0) {
                expr_free(a);
                return perr(p, eq, "out of memory");
            }
            x = a;
        }
        if (expr_add(e, x) < 0)
            return perr(p, peek(p), "out of memory");
        if (is_punct(peek(p), ',')) {
            next(p);
            continue;
        }
        if (is_punct(peek(p), close)) {
            next(p);
            return 0;
        }
        return perr(p, peek(p), "expected ',' or '%c'", close);
    }
}

static struct expr *parse_primary(struct ps *p)
{
    struct tok *t = peek(p);
    struct expr *e = NULL;
    if (t->kind == TOK_INT) {
        next(p);
        if ((e = expr_new(EX_INT, t)))
            e->num = t->num;
    } else if (is_punct(t, '-') && peek2(p)->kind == TOK_INT) {
        next(p);
        struct tok *n = next(p);
        if ((e = expr_new(EX_INT, t)))
            e->num = -n->num;
    } else if (t->kind == TOK_ELLIPSIS) {
        next(p);
        e = expr_new(EX_ELLIPSIS, t);
    } else if (t->kind == TOK_STRING || t->kind == TOK_IPV4) {
        next(p);
        if ((e = expr_new(EX_STRING, t)) && !(e->text = strdup(t->text))) {
            expr_free(e);
            e = NULL;
        }
        /* "string"... (a buffer starting with these bytes): the string is what matters. */
        if (e && peek(p)->kind == TOK_ELLIPSIS)
            next(p);
    } else if (t->kind == TOK_WORD) {
        next(p);
        int call = is_punct(peek(p), '(');
        if ((e = expr_new(call ? EX_CALL : EX_WORD, t)) && !(e->text = strdup(t->text))) {
            expr_free(e);
            return NULL;
        }
        if (e && call) {
            next(p);
            if (parse_list(p, e, ')', 0) < 0) {
                expr_free(e);
                return NULL;
            }
        }
    } else if (is_punct(t, '[') || is_punct(t, '{')) {
        next(p);
        int list = t->punct == '[';
        if ((e = expr_new(list ? EX_LIST : EX_STRUCT, t)) && parse_list(p, e, list ? ']' : '}', !list) < 0) {
            expr_free(e);
            return NULL;
        }
    } else {
        perr(p, t, "expected an expression");
        return NULL;
    }
    if (!e)
        perr(p, t, "out of memory");
    return e;
}

static struct expr *parse_expr(struct ps *p)
{
    if (++p->depth > EXPR_DEPTH_MAX) {
        perr(p, peek(p), "expression nested too deeply");
        p->depth--;
        return NULL;
    }
    struct expr *e = parse_primary(p);
    while (e && is_punct(peek(p), '|')) {
        struct tok *bar = next(p);
        struct expr *r = parse_primary(p);
        if (!r) {
            expr_free(e);
            e = NULL;
            break;
        }
        struct expr *o = expr_new(EX_OR, bar);
        if (!o) {
            expr_free(e);
            expr_free(r);
            perr(p, bar, "out of memory");
            e = NULL;
            break;
        }
        if (expr_add(o, e) < 0) { /* expr_add freed e */
            expr_free(o);
            expr_free(r);
            perr(p, bar, "out of memory");
            e = NULL;
            break;
        }
        if (expr_add(o, r) < 0) {
            expr_free(o);
            perr(p, bar, "out of memory");
            e = NULL;
            break;
        }
        e = o;
    }
    p->depth--;
    return e;
}

/* ---- packets ---- */

static int opt_put(struct ps *p, struct pkt_tcp *tcp, const uint8_t *b, size_t n)
{
    if (tcp->opts_len + n > PKT_OPTS_MAX)
        return perr(p, peek(p), "TCP options longer than 40 bytes");
    memcpy(tcp->opts + tcp->opts_len, b, n);
    tcp->opts_len = (uint8_t)(tcp->opts_len + n);
    return 0;
}

static void put32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24);
    b[1] = (uint8_t)(v >> 16);
    b[2] = (uint8_t)(v >> 8);
    b[3] = (uint8_t)v;
}

static int parse_tcp_options(struct ps *p, struct pkt_tcp *tcp)
{
    next(p); /* '<' */
    if (peek(p)->kind == TOK_ELLIPSIS) {
        next(p);
        tcp->opts_any = 1;
        return expect_punct(p, '>');
    }
    for (;;) {
        struct tok *t = peek(p);
        if (t->kind != TOK_WORD)
            return perr(p, t, "expected a TCP option (nop, eol, mss, wscale, sackOK, sack, TS, opt)");
        next(p);
        uint8_t b[40];
        uint32_t v, w;
        if (strcmp(t->text, "nop") == 0) {
            b[0] = BRISK_TCPOPT_NOP;
            if (opt_put(p, tcp, b, 1) < 0)
                return -1;
        } else if (strcmp(t->text, "eol") == 0) {
            b[0] = BRISK_TCPOPT_EOL;
            if (opt_put(p, tcp, b, 1) < 0)
                return -1;
        } else if (strcmp(t->text, "mss") == 0) {
            if (expect_u32(p, "the MSS", &v) < 0)
                return -1;
            if (v > 65535)
                return serr(p, t, "mss value out of range");
            b[0] = BRISK_TCPOPT_MSS;
            b[1] = 4;
            b[2] = (uint8_t)(v >> 8);
            b[3] = (uint8_t)v;
            if (opt_put(p, tcp, b, 4) < 0)
                return -1;
        } else if (strcmp(t->text, "wscale") == 0) {
            if (expect_u32(p, "the window scale", &v) < 0)
                return -1;
            if (v > 255)
                return serr(p, t, "window scale shift count out of range");
            b[0] = BRISK_TCPOPT_WSCALE;
            b[1] = 3;
            b[2] = (uint8_t)v;
            if (opt_put(p, tcp, b, 3) < 0)
                return -1;
        } else if (strcmp(t->text, "sackOK") == 0) {
            b[0] = BRISK_TCPOPT_SACK_PERM;
            b[1] = 2;
            if (opt_put(p, tcp, b, 2) < 0)
                return -1;
        } else if (strcmp(t->text, "sack") == 0) {
            size_t nb = 0;
            b[0] = BRISK_TCPOPT_SACK;
            while (peek(p)->kind == TOK_INT) {
                if (nb == 4)
                    return perr(p, peek(p), "more than 4 SACK blocks");
                if (expect_u32(p, "a SACK block start", &v) < 0 || expect_punct(p, ':') < 0 ||
                    expect_u32(p, "a SACK block end", &w) < 0)
                    return -1;
                put32(b + 2 + 8 * nb, v);
                put32(b + 6 + 8 * nb, w);
                nb++;
            }
            if (nb == 0)
                return perr(p, peek(p), "expected a SACK block start:end");
            b[1] = (uint8_t)(2 + 8 * nb);
            tcp->opts_map |= 1ull << tcp->opts_len;
            if (opt_put(p, tcp, b, b[1]) < 0)
                return -1;
        } else if (strcmp(t->text, "TS") == 0) {
            if (!is_word(peek(p), "val"))
                return perr(p, peek(p), "expected 'val'");
            next(p);
            if (expect_u32(p, "the TS value", &v) < 0)
                return -1;
            if (!is_word(peek(p), "ecr"))
                return perr(p, peek(p), "expected 'ecr'");
            next(p);
            if (expect_u32(p, "the TS echo reply", &w) < 0)
                return -1;
            b[0] = BRISK_TCPOPT_TS;
            b[1] = 10;
            put32(b + 2, v);
            put32(b + 6, w);
            tcp->opts_map |= 1ull << tcp->opts_len;
            if (opt_put(p, tcp, b, 10) < 0)
                return -1;
        } else if (strcmp(t->text, "opt") == 0) {
            /* Any option, well-formed or not, as raw bytes: "opt 30 len 0" (a zero length), "opt 2 len 1 5
             * 180" (an MSS of length 1), "opt 3 len 255 7" (a length past the header), "opt 254 1 2" (an
             * unknown kind, length 4 counted from its bytes). Nothing in it is mapped to live values. */
            if (expect_u32(p, "the option kind", &v) < 0)
                return -1;
            if (v > 255)
                return serr(p, t, "option kind out of range");
            b[0] = (uint8_t)v;
            int has_len = is_word(peek(p), "len");
            if (has_len) {
                next(p);
                if (expect_u32(p, "the option length", &w) < 0)
                    return -1;
                if (w > 255)
                    return serr(p, t, "option length out of range");
                b[1] = (uint8_t)w;
            }
            size_t nb = 2;
            while (peek(p)->kind == TOK_INT) {
                if (nb == PKT_OPTS_MAX)
                    return perr(p, peek(p), "TCP options longer than 40 bytes");
                if (expect_u32(p, "an option byte", &w) < 0)
                    return -1;
                if (w > 255)
                    return serr(p, t, "option byte out of range (0..255)");
                b[nb++] = (uint8_t)w;
            }
            if (!has_len)
                b[1] = (uint8_t)nb;
            tcp->opts_raw = 1;
            if (opt_put(p, tcp, b, nb) < 0)
                return -1;
        } else {
            snprintf(p->err, p->errlen, "%s:%d:%d: unsupported: TCP option '%s'", p->path, t->line, t->col,
                     t->text);
            return -2;
        }
        if (is_punct(peek(p), ',')) {
            next(p);
            continue;
        }
        if (is_punct(peek(p), '>')) {
            next(p);
            break;
        }
        return perr(p, peek(p), "expected ',' or '>' in the option list");
    }
    if (tcp->opts_len % 4)
        return serr(p, peek(p), "TCP options are not padded to a multiple of 4 bytes (%u bytes)", tcp->opts_len);
    return 0;
}

/* "seq:end(len)" */
static int parse_seq(struct ps *p, uint32_t *seq, uint32_t *end, uint32_t *len)
{
    struct tok *t = peek(p);
    if (expect_u32(p, "a sequence number", seq) < 0 || expect_punct(p, ':') < 0 ||
        expect_u32(p, "the end sequence number", end) < 0 || expect_punct(p, '(') < 0 ||
        expect_u32(p, "the payload length", len) < 0 || expect_punct(p, ')') < 0)
        return -1;
    if (*len > 65535)
        return serr(p, t, "TCP payload size out of range");
    if (*end != *seq + *len)
        return serr(p, t, "inconsistent TCP sequence numbers and payload size");
    return 0;
}

/* "(tos 0x10)" / "[ect0]" / "[noecn]": TOS checks; ECN codepoints other than "no ECN" are unsupported. */
static int parse_ip_info(struct ps *p, struct pkt_tcp *tcp)
{
    struct tok *o = next(p);
    char close = o->punct == '(' ? ')' : ']';
    struct tok *t = peek(p);
    if (is_word(t, "tos")) {
        next(p);
        struct tok *v = peek(p);
        if (v->kind != TOK_INT || v->num < 0 || v->num > 255)
            return perr(p, v, "expected a TOS byte");
        tcp->tos = (int16_t)v->num;
        next(p);
    } else if (is_word(t, "noecn")) {
        next(p);
    } else if (t->kind == TOK_WORD) {
        snprintf(p->err, p->errlen, "%s:%d:%d: unsupported: IP info '%s' (brisk has no ECN)", p->path, t->line,
                 t->col, t->text);
        return -2;
    } else {
        return perr(p, t, "expected tos, noecn, ect0, ect1 or ce");
    }
    return expect_punct(p, close);
}

static int parse_flags(struct ps *p, uint8_t *flags)
{
    struct tok *t = peek(p);
    *flags = 0;
    if (is_punct(t, '-')) {
        next(p);
        return 0;
    }
    if (t->kind == TOK_WORD) {
        for (const char *c = t->text; *c; c++) {
            switch (*c) {
            case 'F': *flags |= BRISK_TCP_FIN; break;
            case 'S': *flags |= BRISK_TCP_SYN; break;
            case 'R': *flags |= BRISK_TCP_RST; break;
            case 'P': *flags |= BRISK_TCP_PSH; break;
            case 'U': *flags |= BRISK_TCP_URG; break;
            case 'E': *flags |= BRISK_TCP_ECE; break;
            case 'W': *flags |= BRISK_TCP_CWR; break;
            default:
                return perr(p, t, "invalid TCP flag '%c' (expected letters of FSRPUEW and '.')", *c);
            }
        }
        next(p);
        if (!t->space_after && is_punct(peek(p), '.')) {
            next(p);
            *flags |= BRISK_TCP_ACK;
        }
        return 0;
    }
    if (is_punct(t, '.')) {
        next(p);
        *flags |= BRISK_TCP_ACK;
        return 0;
    }
    return perr(p, t, "expected TCP flags (e.g. S, S., P., F., R, .) or 'icmp'");
}

static const struct {
    const char *name;
    uint8_t type;
} icmp_types[] = {
    {"unreachable", 3},
    {"time_exceeded", 11},
    {"source_quench", 4},
};

static const struct {
    const char *name;
    uint8_t code;
} icmp_codes[] = {
    {"net_unreachable", 0},   {"host_unreachable", 1}, {"protocol_unreachable", 2},
    {"port_unreachable", 3},  {"frag_needed", 4},      {"source_route_failed", 5},
    {"net_unknown", 6},       {"host_unknown", 7},     {"source_host_isolated", 8},
    {"net_prohibited", 9},    {"host_prohibited", 10}, {"net_unreachable_for_tos", 11},
    {"host_unreachable_for_tos", 12}, {"packet_filtered", 13},
};

static int parse_icmp(struct ps *p, struct pkt_event *ev)
{
    struct tok *t = peek(p);
    ev->is_icmp = 1;
    ev->icmp.mtu = -1;
    if (t->kind != TOK_WORD)
        return perr(p, t, "expected an ICMP type (unreachable, time_exceeded, source_quench)");
    size_t i;
    for (i = 0; i < sizeof(icmp_types) / sizeof(icmp_types[0]); i++)
        if (strcmp(icmp_types[i].name, t->text) == 0)
            break;
    if (i == sizeof(icmp_types) / sizeof(icmp_types[0])) {
        snprintf(p->err, p->errlen, "%s:%d:%d: unsupported: ICMP type '%s'", p->path, t->line, t->col, t->text);
        return -2;
    }
    ev->icmp.type = icmp_types[i].type;
    next(p);
    t = peek(p);
    if (t->kind == TOK_WORD && strcmp(t->text, "mtu") != 0 && strcmp(t->text, "id") != 0) {
        for (i = 0; i < sizeof(icmp_codes) / sizeof(icmp_codes[0]); i++)
            if (strcmp(icmp_codes[i].name, t->text) == 0)
                break;
        if (i == sizeof(icmp_codes) / sizeof(icmp_codes[0]))
            return perr(p, t, "expected an ICMP code");
        ev->icmp.code = icmp_codes[i].code;
        next(p);
    }
    if (is_word(peek(p), "mtu")) {
        next(p);
        uint32_t mtu;
        if (expect_u32(p, "the MTU", &mtu) < 0)
            return -1;
        if (mtu > 65535)
            return perr(p, peek(p), "mtu out of range");
        ev->icmp.mtu = (int32_t)mtu;
    }
    if (is_word(peek(p), "id")) {
        next(p);
        uint32_t id;
        if (expect_u32(p, "the echo id", &id) < 0)
            return -1;
    }
    if (is_punct(peek(p), '[')) {
        next(p);
        if (is_word(peek(p), "udp")) {
            t = peek(p);
            snprintf(p->err, p->errlen, "%s:%d:%d: unsupported: UDP (brisk has no UDP yet)", p->path, t->line,
                     t->col);
            return -2;
        }
        if (parse_seq(p, &ev->icmp.seq, &ev->icmp.end, &ev->icmp.len) < 0 || expect_punct(p, ']') < 0)
            return -1;
        ev->icmp.has_echoed = 1;
    }
    return 0;
}

static int parse_packet(struct ps *p, struct pkt_event *ev)
{
    struct tok *d = next(p);
    ev->act = d->punct == '<' ? ACT_INBOUND : ACT_OUTBOUND;
    struct pkt_tcp *tcp = &ev->tcp;
    tcp->win = -1;
    tcp->tos = -1;
    int rc;
    if (is_punct(peek(p), '(') || is_punct(peek(p), '[')) {
        if ((rc = parse_ip_info(p, tcp)) < 0)
            return rc;
    }
    struct tok *t = peek(p);
    if (is_word(t, "icmp"))
        return next(p), parse_icmp(p, ev);
    if (is_word(t, "udp") || is_word(t, "ipv4") || is_word(t, "ipv6") || is_word(t, "gre") ||
        is_word(t, "mpls")) {
        snprintf(p->err, p->errlen, "%s:%d:%d: unsupported: '%s' packets", p->path, t->line, t->col, t->text);
        return -2;
    }
    if (t->kind == TOK_INT && is_punct(peek2(p), '>')) {
        uint32_t sp, dp;
        if (expect_u32(p, "a source port", &sp) < 0 || expect_punct(p, '>') < 0 ||
            expect_u32(p, "a destination port", &dp) < 0)
            return -1;
        if (sp > 65535 || dp > 65535)
            return serr(p, t, "port out of range");
        tcp->sport = (uint16_t)sp;
        tcp->dport = (uint16_t)dp;
    }
    if ((rc = parse_flags(p, &tcp->flags)) < 0)
        return rc;
    if (parse_seq(p, &tcp->seq, &tcp->end, &tcp->len) < 0)
        return -1;
    for (;;) {
        t = peek(p);
        uint32_t v;
        if (is_word(t, "ack")) {
            next(p);
            if (expect_u32(p, "the acknowledgment number", &v) < 0)
                return -1;
            tcp->has_ack = 1;
            tcp->ack = v;
        } else if (is_word(t, "win")) {
            next(p);
            if (expect_u32(p, "the window", &v) < 0)
                return -1;
            if (v > 65535)
                return serr(p, t, "TCP window value out of range");
            tcp->win = (int32_t)v;
        } else if (is_word(t, "urg")) {
            next(p);
            if (expect_u32(p, "the urgent pointer", &v) < 0)
                return -1;
            if (v > 65535)
                return serr(p, t, "urg_ptr value out of range");
            tcp->urg = (uint16_t)v;
        } else if (is_punct(t, '<')) {
            if ((rc = parse_tcp_options(p, tcp)) < 0)
                return rc;
        } else {
            break;
        }
    }
    if (ev->act == ACT_INBOUND && tcp->win < 0)
        return serr(p, d, "window must be specified for inbound packets ('win N')");
    if (ev->act == ACT_INBOUND && tcp->opts_any)
        return serr(p, d, "<...> for TCP options can only be used with outbound packets");
    if (ev->act != ACT_INBOUND && tcp->opts_raw)
        return serr(p, d, "'opt' TCP options can only be used with inbound packets");
    return 0;
}

/* Skips a parenthesized note ("(Operation now in progress)") whatever its words. */
static int skip_note(struct ps *p)
{
    struct tok *o = next(p);
    int depth = 1;
    while (depth > 0) {
        struct tok *t = next(p);
        if (t->kind == TOK_EOF)
            return perr(p, o, "unterminated '('");
        if (is_punct(t, '('))
            depth++;
        else if (is_punct(t, ')'))
            depth--;
    }
    return 0;
}

static int parse_syscall(struct ps *p, struct pkt_event *ev)
{
    struct pkt_syscall *sc = &ev->sys;
    ev->act = ACT_SYSCALL;
    if (peek(p)->kind == TOK_ELLIPSIS) {
        next(p);
        sc->blocking = 1;
        if (time_us(p, &sc->end_us) < 0)
            return -1;
    }
    struct tok *name = peek(p);
    if (name->kind != TOK_WORD)
        return perr(p, name, "expected a packet ('<' or '>'), a system call, a `command` or %%{ code }%%");
    next(p);
    if (!(sc->name = strdup(name->text)))
        return perr(p, name, "out of memory");
    if (!is_punct(peek(p), '('))
        return perr(p, peek(p), "expected '(' after the system call name");
    next(p);
    struct expr holder = {.kind = EX_LIST};
    if (parse_list(p, &holder, ')', 0) < 0) {
        sc->args = holder.kids;
        sc->nargs = holder.nkids;
        return -1;
    }
    sc->args = holder.kids;
    sc->nargs = holder.nkids;
    if (expect_punct(p, '=') < 0)
        return -1;
    if (!(sc->result = parse_expr(p)))
        return -1;
    struct tok *t = peek(p);
    if (t->kind == TOK_WORD && t->text[0] == 'E' && isupper((unsigned char)t->text[1])) {
        if (!(sc->errno_name = strdup(t->text)))
            return perr(p, t, "out of memory");
        next(p);
    }
    if (is_punct(peek(p), '(') && skip_note(p) < 0)
        return -1;
    return 0;
}

static int parse_event(struct ps *p, struct pkt_event *ev)
{
    struct tok *t = peek(p);
    ev->line = t->line;
    ev->col = t->col;
    if (is_punct(t, '*')) {
        next(p);
        ev->tkind = TIME_ANY;
    } else if (is_punct(t, '+')) {
        next(p);
        if (time_us(p, &ev->t_us) < 0)
            return -1;
        ev->tkind = TIME_REL;
        if (is_punct(peek(p), '~')) {
            next(p);
            if (expect_punct(p, '+') < 0 || time_us(p, &ev->t_end_us) < 0)
                return -1;
            ev->tkind = TIME_REL_RANGE;
        }
    } else if (t->kind == TOK_INT || t->kind == TOK_FLOAT) {
        if (time_us(p, &ev->t_us) < 0)
            return -1;
        ev->tkind = TIME_ABS;
        if (is_punct(peek(p), '~')) {
            next(p);
            if (time_us(p, &ev->t_end_us) < 0)
                return -1;
            ev->tkind = TIME_ABS_RANGE;
        }
    } else {
        return perr(p, t, "expected an event time (0.100, +0.1, +0.1~+0.2 or *)");
    }
    if ((ev->tkind == TIME_ABS_RANGE || ev->tkind == TIME_REL_RANGE) && ev->t_end_us < ev->t_us)
        return serr(p, t, "time range is backwards");
    struct tok *a = peek(p);
    int rc;
    if (is_punct(a, '<') || is_punct(a, '>')) {
        if ((rc = parse_packet(p, ev)) < 0)
            return rc;
    } else if (a->kind == TOK_BACKQ || a->kind == TOK_CODE) {
        next(p);
        ev->act = a->kind == TOK_BACKQ ? ACT_COMMAND : ACT_CODE;
        if (!(ev->text = strdup(a->text)))
            return perr(p, a, "out of memory");
    } else {
        if ((rc = parse_syscall(p, ev)) < 0)
            return rc;
    }
    if (ev->tkind == TIME_ANY && ev->act != ACT_OUTBOUND)
        return serr(p, t, "event time * can only be used with outbound packets");
    if ((ev->tkind == TIME_ABS_RANGE || ev->tkind == TIME_REL_RANGE) && ev->act != ACT_OUTBOUND)
        return serr(p, t, "event time range can only be used with outbound packets");
    return 0;
}

static int add_option(struct ps *p, const struct tok *t)
{
    struct pkt_script *s = p->out;
    char **nn = realloc(s->opt_name, (s->nopt + 1) * sizeof(char *));
    if (!nn)
        return perr(p, t, "out of memory");
    s->opt_name = nn;
    char **nv = realloc(s->opt_value, (s->nopt + 1) * sizeof(char *));
    if (!nv)
        return perr(p, t, "out of memory");
    s->opt_value = nv;
    const char *eq = strchr(t->text, '=');
    size_t nlen = eq ? (size_t)(eq - t->text) : strlen(t->text);
    char *name = malloc(nlen + 1);
    char *value = strdup(eq ? eq + 1 : "");
    if (!name || !value) {
        free(name);
        free(value);
        return perr(p, t, "out of memory");
    }
    memcpy(name, t->text, nlen);
    name[nlen] = 0;
    s->opt_name[s->nopt] = name;
    s->opt_value[s->nopt] = value;
    s->nopt++;
    return 0;
}

static void event_free(struct pkt_event *ev)
{
    free(ev->text);
    free(ev->sys.name);
    for (size_t i = 0; i < ev->sys.nargs; i++)
        expr_free(ev->sys.args[i]);
    free(ev->sys.args);
    expr_free(ev->sys.result);
    free(ev->sys.errno_name);
}

int pkt_parse(const char *path, const char *src, struct pkt_script *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (!(out->path = strdup(path))) {
        snprintf(err, errlen, "%s: error: out of memory", path);
        return PKT_BAD_SCRIPT;
    }
    struct ps p = {.path = path, .err = err, .errlen = errlen, .out = out};
    p.t = pkt_lex(path, src, &p.n, err, errlen);
    if (!p.t)
        return PKT_BAD_SCRIPT;
    int rc = 0;
    while (peek(&p)->kind == TOK_OPTION) {
        if ((rc = add_option(&p, next(&p))) < 0)
            goto out;
    }
    if (peek(&p)->kind == TOK_BACKQ) {
        struct tok *c = next(&p);
        if (!(out->init_cmd = strdup(c->text))) {
            rc = perr(&p, c, "out of memory");
            goto out;
        }
    }
    size_t cap = 0;
    while (peek(&p)->kind != TOK_EOF) {
        if (peek(&p)->kind == TOK_BACKQ && peek2(&p)->kind == TOK_EOF) {
            next(&p); /* packetdrill's cleanup command: nothing to clean up in a virtual run */
            continue;
        }
        if (peek(&p)->kind == TOK_OPTION) {
            rc = perr(&p, peek(&p), "options (--name=value) must come before the first event");
            goto out;
        }
        if (out->nev == cap) {
            cap = cap ? cap * 2 : 64;
            struct pkt_event *ne = realloc(out->ev, cap * sizeof(*ne));
            if (!ne) {
                rc = perr(&p, peek(&p), "out of memory");
                goto out;
            }
            out->ev = ne;
        }
        struct pkt_event *ev = &out->ev[out->nev++];
        memset(ev, 0, sizeof(*ev));
        if ((rc = parse_event(&p, ev)) < 0)
            goto out;
    }
    if (out->nev > 0 && !(out->ev[0].tkind == TIME_ABS && out->ev[0].t_us == 0) &&
        !(out->ev[0].tkind == TIME_REL && out->ev[0].t_us == 0)) {
        snprintf(err, errlen, "%s:%d:%d: error: first event should be at time 0", path, out->ev[0].line,
                 out->ev[0].col);
        rc = -1;
    }
out:
    pkt_toks_free(p.t, p.n);
    if (rc == -2)
        return PKT_UNSUPPORTED;
    return rc < 0 ? PKT_BAD_SCRIPT : PKT_PASS;
}

void pkt_script_free(struct pkt_script *s)
{
    for (size_t i = 0; i < s->nev; i++)
        event_free(&s->ev[i]);
    free(s->ev);
    for (size_t i = 0; i < s->nopt; i++) {
        free(s->opt_name[i]);
        free(s->opt_value[i]);
    }
    free(s->opt_name);
    free(s->opt_value);
    free(s->init_cmd);
    free(s->path);
    memset(s, 0, sizeof(*s));
}
