/*
 * lex.c — tokens of a packetdrill script.
 *
 * The language is token-based, not line-based: an event may span lines. Comments are "//" to the end of the
 * line and C's block comments. Numbers need care because the language packs them tightly: "1:1001(1000)" is
 * INT ':' INT '(' INT ')', "0...0.2" is INT ELLIPSIS FLOAT, ".1" is a FLOAT, "192.0.2.1" is an address, and
 * "+0.1~+0.2" is '+' FLOAT '~' '+' FLOAT. A float keeps its text so times are converted exactly (microseconds
 * from the decimal digits, never through a double). Backquoted shell commands and "%{ ... }%" code blocks are
 * single tokens holding their text. "--name=value" at the start of a line is an option token (packetdrill's
 * option lines at the top of a script).
 *
 * Every token records its line and column for error messages ("file:line:col: error: ..."). Input is
 * untrusted: every read is bounded by the NUL terminator, and a malformed token is an error, never a crash.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt/pkt.h"

struct lx {
    const char *path, *s;
    size_t i;
    int line, col;
    struct tok *t;
    size_t n, cap;
    char *err;
    size_t errlen;
};

static void adv(struct lx *l)
{
    if (l->s[l->i] == '\n') {
        l->line++;
        l->col = 1;
    } else {
        l->col++;
    }
    l->i++;
}

static int fail(struct lx *l, int line, int col, const char *msg)
{
    snprintf(l->err, l->errlen, "%s:%d:%d: error: %s", l->path, line, col, msg);
    return -1;
}

static struct tok *push(struct lx *l, enum tok_kind k, int line, int col)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        struct tok *t = realloc(l->t, cap * sizeof(*t));
        if (!t)
            return NULL;
        l->t = t;
        l->cap = cap;
    }
    struct tok *t = &l->t[l->n++];
    memset(t, 0, sizeof(*t));
    t->kind = k;
    t->line = line;
    t->col = col;
    return t;
}

static char *dup_range(const char *s, size_t a, size_t b)
{
    char *p = malloc(b - a + 1);
    if (p) {
        memcpy(p, s + a, b - a);
        p[b - a] = 0;
    }
    return p;
}

/* Skips whitespace and comments; returns -1 on an unterminated block comment. */
static int skip_space(struct lx *l)
{
    for (;;) {
        char c = l->s[l->i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
            adv(l);
        } else if (c == '/' && l->s[l->i + 1] == '/') {
            while (l->s[l->i] && l->s[l->i] != '\n')
                adv(l);
        } else if (c == '/' && l->s[l->i + 1] == '*') {
            int line = l->line, col = l->col;
            adv(l);
            adv(l);
            while (l->s[l->i] && !(l->s[l->i] == '*' && l->s[l->i + 1] == '/'))
                adv(l);
            if (!l->s[l->i])
                return fail(l, line, col, "unterminated comment");
            adv(l);
            adv(l);
        } else {
            return 0;
        }
    }
}

/* Whether the text before position i on its line is only whitespace. */
static int at_line_start(const struct lx *l)
{
    size_t j = l->i;
    while (j > 0 && (l->s[j - 1] == ' ' || l->s[j - 1] == '\t'))
        j--;
    return j == 0 || l->s[j - 1] == '\n';
}

static int lex_number(struct lx *l)
{
    int line = l->line, col = l->col;
    size_t a = l->i;
    const char *s = l->s;
    if (s[a] == '0' && (s[a + 1] == 'x' || s[a + 1] == 'X') && isxdigit((unsigned char)s[a + 2])) {
        adv(l);
        adv(l);
        uint64_t v = 0;
        int digits = 0;
        while (isxdigit((unsigned char)s[l->i])) {
            char c = s[l->i];
            unsigned d = (unsigned)(isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10));
            if (++digits > 16 || (v << 4 | d) > (uint64_t)INT64_MAX)
                return fail(l, line, col, "number out of range");
            v = v << 4 | d;
            adv(l);
        }
        struct tok *t = push(l, TOK_INT, line, col);
        if (!t)
            return fail(l, line, col, "out of memory");
        t->num = (int64_t)v;
        return 0;
    }
    int dots = 0;
    while (isdigit((unsigned char)s[l->i]))
        adv(l);
    /* A '.' continues the number only when a digit or end-of-number follows and it is not "...". */
    while (s[l->i] == '.' && !(s[l->i + 1] == '.' && s[l->i + 2] == '.')) {
        if (dots > 0 && !isdigit((unsigned char)s[l->i + 1]))
            break;
        dots++;
        adv(l);
        while (isdigit((unsigned char)s[l->i]))
            adv(l);
    }
    if (isalpha((unsigned char)s[l->i]) || s[l->i] == '_')
        return fail(l, line, col, "malformed number");
    if (dots == 3) {
        struct tok *t = push(l, TOK_IPV4, line, col);
        if (!t || !(t->text = dup_range(s, a, l->i)))
            return fail(l, line, col, "out of memory");
        return 0;
    }
    if (dots > 1)
        return fail(l, line, col, "malformed number");
    if (dots == 1) {
        struct tok *t = push(l, TOK_FLOAT, line, col);
        if (!t || !(t->text = dup_range(s, a, l->i)))
            return fail(l, line, col, "out of memory");
        return 0;
    }
    uint64_t v = 0;
    for (size_t j = a; j < l->i; j++) {
        unsigned d = (unsigned)(s[j] - '0');
        if (v > (UINT64_MAX - d) / 10 || v * 10 + d > (uint64_t)INT64_MAX)
            return fail(l, line, col, "number out of range");
        v = v * 10 + d;
    }
    struct tok *t = push(l, TOK_INT, line, col);
    if (!t)
        return fail(l, line, col, "out of memory");
    t->num = (int64_t)v;
    return 0;
}

static int lex_string(struct lx *l)
{
    int line = l->line, col = l->col;
    adv(l); /* the opening quote */
    size_t cap = 64, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return fail(l, line, col, "out of memory");
    for (;;) {
        char c = l->s[l->i];
        if (!c || c == '\n') {
            free(buf);
            return fail(l, line, col, "unterminated string");
        }
        adv(l);
        if (c == '"')
            break;
        if (c == '\\') {
            char e = l->s[l->i];
            if (!e) {
                free(buf);
                return fail(l, line, col, "unterminated string");
            }
            adv(l);
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e == '0' ? '\0' : e;
        }
        if (n + 2 > cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                return fail(l, line, col, "out of memory");
            }
            buf = nb;
        }
        buf[n++] = c;
    }
    buf[n] = 0;
    struct tok *t = push(l, TOK_STRING, line, col);
    if (!t) {
        free(buf);
        return fail(l, line, col, "out of memory");
    }
    t->text = buf;
    return 0;
}

/* Raw text up to a terminator: backquoted commands (end '`') and code blocks (end "}%"). */
static int lex_raw(struct lx *l, enum tok_kind k, const char *end, size_t skip)
{
    int line = l->line, col = l->col;
    for (size_t j = 0; j < skip; j++)
        adv(l);
    size_t a = l->i, elen = strlen(end);
    while (l->s[l->i] && strncmp(l->s + l->i, end, elen) != 0)
        adv(l);
    if (!l->s[l->i])
        return fail(l, line, col, k == TOK_BACKQ ? "unterminated `command`" : "unterminated %{ code }%");
    struct tok *t = push(l, k, line, col);
    if (!t || !(t->text = dup_range(l->s, a, l->i)))
        return fail(l, line, col, "out of memory");
    for (size_t j = 0; j < elen; j++)
        adv(l);
    return 0;
}

static int lex_one(struct lx *l)
{
    const char *s = l->s;
    char c = s[l->i];
    int line = l->line, col = l->col;
    if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)s[l->i + 1])))
        return lex_number(l);
    if (isalpha((unsigned char)c) || c == '_') {
        size_t a = l->i;
        while (isalnum((unsigned char)s[l->i]) || s[l->i] == '_')
            adv(l);
        struct tok *t = push(l, TOK_WORD, line, col);
        if (!t || !(t->text = dup_range(s, a, l->i)))
            return fail(l, line, col, "out of memory");
        return 0;
    }
    if (c == '"')
        return lex_string(l);
    if (c == '`')
        return lex_raw(l, TOK_BACKQ, "`", 1);
    if (c == '%' && s[l->i + 1] == '{')
        return lex_raw(l, TOK_CODE, "}%", 2);
    if (c == '.' && s[l->i + 1] == '.' && s[l->i + 2] == '.') {
        adv(l);
        adv(l);
        adv(l);
        return push(l, TOK_ELLIPSIS, line, col) ? 0 : fail(l, line, col, "out of memory");
    }
    if (c == '-' && s[l->i + 1] == '-' && (isalpha((unsigned char)s[l->i + 2]) || s[l->i + 2] == '_') &&
        at_line_start(l)) {
        /* "--name" or "--name=value" up to the end of the line (or a comment). */
        adv(l);
        adv(l);
        size_t a = l->i;
        while (s[l->i] && s[l->i] != '\n' && !(s[l->i] == '/' && (s[l->i + 1] == '/' || s[l->i + 1] == '*')))
            adv(l);
        size_t b = l->i;
        while (b > a && isspace((unsigned char)s[b - 1]))
            b--;
        struct tok *t = push(l, TOK_OPTION, line, col);
        if (!t || !(t->text = dup_range(s, a, b)))
            return fail(l, line, col, "out of memory");
        return 0;
    }
    if (c && strchr("+*~<>.,:()[]{}=|-!/%&;'?#@$^", c)) {
        adv(l);
        struct tok *t = push(l, TOK_PUNCT, line, col);
        if (!t)
            return fail(l, line, col, "out of memory");
        t->punct = c;
        return 0;
    }
    char msg[64];
    if (isprint((unsigned char)c))
        snprintf(msg, sizeof(msg), "unexpected character '%c'", c);
    else
        snprintf(msg, sizeof(msg), "unexpected byte 0x%02x", (unsigned char)c);
    return fail(l, line, col, msg);
}

struct tok *pkt_lex(const char *path, const char *src, size_t *ntok, char *err, size_t errlen)
{
    struct lx l = {.path = path, .s = src, .line = 1, .col = 1, .err = err, .errlen = errlen};
    for (;;) {
        if (skip_space(&l) < 0)
            goto bad;
        if (!src[l.i])
            break;
        if (lex_one(&l) < 0)
            goto bad;
        char nx = src[l.i];
        l.t[l.n - 1].space_after = nx == 0 || isspace((unsigned char)nx);
    }
    if (!push(&l, TOK_EOF, l.line, l.col)) {
        fail(&l, l.line, l.col, "out of memory");
        goto bad;
    }
    *ntok = l.n;
    return l.t;
bad:
    pkt_toks_free(l.t, l.n);
    return NULL;
}

void pkt_toks_free(struct tok *t, size_t n)
{
    if (!t)
        return;
    for (size_t i = 0; i < n; i++)
        free(t[i].text);
    free(t);
}
