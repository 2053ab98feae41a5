/*
 * code.c — the language of "%{ ... }%" blocks: assertions on the connection's tcp_info.
 *
 * packetdrill hands these blocks to Python with the socket's tcp_info fields as variables. brisk-pkt has no
 * Python: it evaluates the subset such blocks use, itself, at the block's time in the script:
 *
 *   statement  := 'assert' expr [',' expr] | 'print' ['('] [expr (',' expr)*] [')'] | NAME '=' expr |
 *                 'import' ... | 'from' ... | expr            (one per line, or separated by ';')
 *   expr       := Python's precedence: or, and, not, chained comparisons (a <= b < c), + -, * / // %, unary
 *                 - +, **, parentheses, numbers, strings, names, abs() min() max() int(), and a string's
 *                 % formatting (%d %i %u %x %s %f) of one value or a parenthesized tuple
 *
 * Names are the tcpi_* fields brisk can fill (run.c), the constants of sym.c (TCP_CA_Open, ...), and the
 * block's own assignments. A name brisk does not have is "unsupported" (the script needs a field this stack
 * does not keep), never a silent zero. A failed assert reports its expression's text and the message value.
 * Integers are 64-bit; '/' is true division, as in Python 3.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt/pkt.h"

enum vkind { V_INT, V_FLT, V_STR, V_TUPLE };

#define TUPLE_MAX 8
#define STR_MAX   256

struct val {
    enum vkind k;
    int64_t i;
    double f;
    char s[STR_MAX];
    struct val *items; /* V_TUPLE: owned by the run's arena (struct cx.tuples), freed when it ends */
    size_t nitems;
};

#define LOCALS_MAX 16
#define TUPLES_MAX 64

struct cx {
    const char *src;
    size_t i;
    const struct pkt_var *vars;
    size_t nvars;
    struct {
        char name[32];
        struct val v;
    } loc[LOCALS_MAX];
    size_t nloc;
    char *out;
    size_t outlen, outn;
    char *err;
    size_t errlen;
    int status; /* PKT_PASS until an error */
    int depth;
    struct val *tuples[TUPLES_MAX]; /* every tuple's items, freed together at the end of the run */
    size_t ntuples;
};

/* Values own nothing (tuples live in the run's arena): forgetting one is all there is to freeing it. */
static void vfree(struct val *v)
{
    v->items = NULL;
    v->nitems = 0;
}

static int cfail(struct cx *c, int status, const char *fmt, ...)
{
    if (c->status != PKT_PASS)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    c->status = status;
    return -1;
}

static void skip_ws(struct cx *c)
{
    while (c->src[c->i] == ' ' || c->src[c->i] == '\t' || c->src[c->i] == '\r' ||
           (c->src[c->i] == '\\' && c->src[c->i + 1] == '\n'))
        c->i += c->src[c->i] == '\\' ? 2 : 1;
}

static int at(struct cx *c, const char *s)
{
    skip_ws(c);
    return strncmp(c->src + c->i, s, strlen(s)) == 0;
}

/* A keyword: the word followed by a non-identifier character. */
static int at_kw(struct cx *c, const char *kw)
{
    skip_ws(c);
    size_t n = strlen(kw);
    if (strncmp(c->src + c->i, kw, n) != 0)
        return 0;
    char nx = c->src[c->i + n]; /* within the string: the n characters before it matched */
    return !isalnum((unsigned char)nx) && nx != '_';
}

static int eat(struct cx *c, const char *s)
{
    if (!at(c, s))
        return 0;
    c->i += strlen(s);
    return 1;
}

static double num(const struct val *v)
{
    return v->k == V_INT ? (double)v->i : v->f;
}

/* A double as an integer, saturating (and 0 for NaN), as no C conversion of an out-of-range value may be. */
static int64_t to_i64(double d)
{
    if (!(d == d))
        return 0;
    if (d >= 9.2233720368547758e18)
        return INT64_MAX;
    if (d <= -9.2233720368547758e18)
        return INT64_MIN;
    return (int64_t)d;
}

static int truthy(const struct val *v)
{
    switch (v->k) {
    case V_INT:
        return v->i != 0;
    case V_FLT:
        return v->f != 0;
    case V_STR:
        return v->s[0] != 0;
    default:
        return v->nitems != 0;
    }
}

static void vint(struct val *v, int64_t i)
{
    memset(v, 0, sizeof(*v));
    v->k = V_INT;
    v->i = i;
}

static int expr(struct cx *c, struct val *v);

static int lookup(struct cx *c, const char *name, struct val *v)
{
    for (size_t i = 0; i < c->nloc; i++) {
        if (strcmp(c->loc[i].name, name) == 0) {
            *v = c->loc[i].v;
            v->items = NULL;
            v->nitems = 0;
            if (c->loc[i].v.k == V_TUPLE)
                return cfail(c, PKT_UNSUPPORTED, "code: tuple variables are not supported");
            return 0;
        }
    }
    for (size_t i = 0; i < c->nvars; i++) {
        if (strcmp(c->vars[i].name, name) == 0) {
            vint(v, c->vars[i].value);
            return 0;
        }
    }
    int64_t s;
    if (pkt_sym(name, &s)) {
        vint(v, s);
        return 0;
    }
    if (strcmp(name, "True") == 0 || strcmp(name, "False") == 0) {
        vint(v, name[0] == 'T');
        return 0;
    }
    if (strncmp(name, "tcpi_", 5) == 0)
        return cfail(c, PKT_UNSUPPORTED, "code: tcp_info field %s is not kept by brisk", name);
    return cfail(c, PKT_UNSUPPORTED, "code: unknown name '%s'", name);
}

/* "fmt % value": the conversions scripts use. */
static int format(struct cx *c, const char *fmt, const struct val *args, size_t nargs, struct val *out)
{
    memset(out, 0, sizeof(*out));
    out->k = V_STR;
    size_t n = 0, a = 0;
    for (const char *p = fmt; *p && n + 1 < STR_MAX; p++) {
        if (*p != '%') {
            out->s[n++] = *p;
            continue;
        }
        p++;
        while (*p && strchr("-+ 0#123456789.l", *p))
            p++;
        if (*p == '%') {
            out->s[n++] = '%';
            continue;
        }
        if (a >= nargs)
            return cfail(c, PKT_BAD_SCRIPT, "code: not enough arguments for format string");
        const struct val *v = &args[a++];
        char buf[STR_MAX];
        switch (*p) {
        case 'd':
        case 'i':
        case 'u':
            snprintf(buf, sizeof(buf), "%lld", v->k == V_INT ? (long long)v->i : (long long)to_i64(num(v)));
            break;
        case 'x':
            snprintf(buf, sizeof(buf), "%llx", (unsigned long long)(v->k == V_INT ? v->i : to_i64(num(v))));
            break;
        case 'f':
        case 'g':
            snprintf(buf, sizeof(buf), *p == 'f' ? "%f" : "%g", num(v));
            break;
        case 's':
            if (v->k == V_STR)
                snprintf(buf, sizeof(buf), "%s", v->s);
            else if (v->k == V_INT)
                snprintf(buf, sizeof(buf), "%lld", (long long)v->i);
            else
                snprintf(buf, sizeof(buf), "%g", num(v));
            break;
        default:
            return cfail(c, PKT_UNSUPPORTED, "code: format conversion '%%%c'", *p ? *p : '?');
        }
        for (const char *b = buf; *b && n + 1 < STR_MAX; b++)
            out->s[n++] = *b;
    }
    out->s[n] = 0;
    return 0;
}

static int atom(struct cx *c, struct val *v)
{
    if (++c->depth > 64)
        return cfail(c, PKT_BAD_SCRIPT, "code: expression nested too deeply");
    skip_ws(c);
    const char *s = c->src + c->i;
    int rc = 0;
    memset(v, 0, sizeof(*v));
    if (isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))) {
        char *end;
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
            vint(v, (int64_t)strtoull(s, &end, 16));
        } else {
            size_t k = strspn(s, "0123456789");
            if (s[k] == '.' || s[k] == 'e' || s[k] == 'E') {
                v->k = V_FLT;
                v->f = strtod(s, &end);
            } else {
                vint(v, (int64_t)strtoll(s, &end, 10));
            }
        }
        c->i += (size_t)(end - s);
    } else if (*s == '"' || *s == '\'') {
        char q = *s;
        size_t n = 0;
        c->i++;
        v->k = V_STR;
        while (c->src[c->i] && c->src[c->i] != q && c->src[c->i] != '\n') {
            char ch = c->src[c->i++];
            if (ch == '\\' && c->src[c->i]) {
                ch = c->src[c->i++];
                ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch;
            }
            if (n + 1 < STR_MAX)
                v->s[n++] = ch;
        }
        if (c->src[c->i] != q)
            rc = cfail(c, PKT_BAD_SCRIPT, "code: unterminated string");
        else
            c->i++;
        v->s[n] = 0;
    } else if (isalpha((unsigned char)*s) || *s == '_') {
        char name[64];
        size_t n = 0;
        while (isalnum((unsigned char)c->src[c->i]) || c->src[c->i] == '_') {
            if (n + 1 < sizeof(name))
                name[n++] = c->src[c->i];
            c->i++;
        }
        name[n] = 0;
        if (at(c, "(") &&
            (!strcmp(name, "abs") || !strcmp(name, "min") || !strcmp(name, "max") || !strcmp(name, "int"))) {
            eat(c, "(");
            struct val args[TUPLE_MAX];
            size_t na = 0;
            while (!at(c, ")") && c->status == PKT_PASS) {
                if (na == TUPLE_MAX)
                    return cfail(c, PKT_UNSUPPORTED, "code: too many arguments");
                if (expr(c, &args[na]) < 0)
                    return -1;
                if (args[na].k == V_STR || args[na].k == V_TUPLE)
                    return cfail(c, PKT_BAD_SCRIPT, "code: %s() of a non-number", name);
                na++;
                if (!eat(c, ","))
                    break;
            }
            if (!eat(c, ")"))
                return cfail(c, PKT_BAD_SCRIPT, "code: expected ')'");
            if (na == 0 || ((!strcmp(name, "abs") || !strcmp(name, "int")) && na != 1))
                return cfail(c, PKT_BAD_SCRIPT, "code: wrong number of arguments to %s()", name);
            *v = args[0];
            for (size_t k = 1; k < na; k++) {
                int less = num(&args[k]) < num(v);
                if ((!strcmp(name, "min") && less) || (!strcmp(name, "max") && !less && num(&args[k]) != num(v)))
                    *v = args[k];
            }
            if (!strcmp(name, "abs")) {
                if (v->k == V_INT && v->i == INT64_MIN) {
                    v->k = V_FLT;
                    v->f = -(double)v->i;
                } else if (v->k == V_INT)
                    v->i = v->i < 0 ? -v->i : v->i;
                else
                    v->f = fabs(v->f);
            } else if (!strcmp(name, "int") && v->k == V_FLT) {
                vint(v, to_i64(v->f));
            }
        } else {
            rc = lookup(c, name, v);
        }
    } else if (*s == '(') {
        c->i++;
        struct val first;
        if (expr(c, &first) < 0)
            return -1;
        if (at(c, ",")) {
            v->k = V_TUPLE;
            if (c->ntuples == TUPLES_MAX)
                return cfail(c, PKT_UNSUPPORTED, "code: more than %d tuples", TUPLES_MAX);
            v->items = calloc(TUPLE_MAX, sizeof(struct val));
            if (!v->items)
                return cfail(c, PKT_BAD_SCRIPT, "code: out of memory");
            c->tuples[c->ntuples++] = v->items;
            v->items[v->nitems++] = first;
            while (eat(c, ",") && !at(c, ")")) {
                if (v->nitems == TUPLE_MAX)
                    return cfail(c, PKT_UNSUPPORTED, "code: tuple too long");
                if (expr(c, &v->items[v->nitems]) < 0)
                    return -1;
                v->nitems++;
            }
        } else {
            *v = first;
        }
        if (!eat(c, ")"))
            rc = cfail(c, PKT_BAD_SCRIPT, "code: expected ')'");
    } else {
        rc = cfail(c, PKT_BAD_SCRIPT, "code: expected a value at '%.20s'", s);
    }
    c->depth--;
    return rc;
}

static int arith_check(struct cx *c, const struct val *a, const struct val *b)
{
    if (a->k == V_STR || b->k == V_STR || a->k == V_TUPLE || b->k == V_TUPLE)
        return cfail(c, PKT_BAD_SCRIPT, "code: arithmetic on a string or tuple");
    return 0;
}

static int power(struct cx *c, struct val *v);

static int unary(struct cx *c, struct val *v)
{
    if (eat(c, "-")) {
        if (unary(c, v) < 0)
            return -1;
        if (v->k == V_INT && v->i != INT64_MIN)
            v->i = -v->i;
        else if (v->k == V_INT) {
            v->k = V_FLT;
            v->f = -(double)v->i;
        } else if (v->k == V_FLT)
            v->f = -v->f;
        else
            return cfail(c, PKT_BAD_SCRIPT, "code: unary minus of a non-number");
        return 0;
    }
    if (eat(c, "+"))
        return unary(c, v);
    return power(c, v);
}

static int power(struct cx *c, struct val *v)
{
    if (atom(c, v) < 0)
        return -1;
    if (eat(c, "**")) {
        struct val e;
        if (unary(c, &e) < 0 || arith_check(c, v, &e) < 0)
            return -1;
        double r = pow(num(v), num(&e));
        if (v->k == V_INT && e.k == V_INT && e.i >= 0 && fabs(r) < 9.2e18)
            vint(v, (int64_t)r);
        else {
            v->k = V_FLT;
            v->f = r;
        }
    }
    return 0;
}

static int term(struct cx *c, struct val *v)
{
    if (unary(c, v) < 0)
        return -1;
    for (;;) {
        int op;
        if (at(c, "**"))
            return 0;
        if (eat(c, "//"))
            op = 'F';
        else if (eat(c, "*"))
            op = '*';
        else if (eat(c, "/"))
            op = '/';
        else if (eat(c, "%"))
            op = '%';
        else
            return 0;
        struct val b;
        if (unary(c, &b) < 0)
            return -1;
        if (op == '%' && v->k == V_STR) {
            struct val r;
            int rc = b.k == V_TUPLE ? format(c, v->s, b.items, b.nitems, &r) : format(c, v->s, &b, 1, &r);
            vfree(&b);
            if (rc < 0)
                return -1;
            *v = r;
            continue;
        }
        if (arith_check(c, v, &b) < 0)
            return -1;
        if (op == '/' || v->k == V_FLT || b.k == V_FLT) {
            double x = num(v), y = num(&b);
            if (y == 0)
                return cfail(c, PKT_FAIL, "code: division by zero");
            double r = op == '*' ? x * y : op == '/' ? x / y : op == 'F' ? floor(x / y) : fmod(x, y);
            v->k = V_FLT;
            v->f = r;
        } else {
            if (op != '*' && b.i == 0)
                return cfail(c, PKT_FAIL, "code: division by zero");
            int64_t x = v->i, y = b.i, r;
            if (op == '*') {
                if (__builtin_mul_overflow(x, y, &r)) { /* Python's integers do not overflow: go on in floats */
                    v->k = V_FLT;
                    v->f = (double)x * (double)y;
                    continue;
                }
            } else if (x == INT64_MIN && y == -1) { /* the one quotient that does not fit */
                if (op == '%') {
                    vint(v, 0);
                } else {
                    v->k = V_FLT;
                    v->f = -(double)x;
                }
                continue;
            } else {
                /* Python floors the quotient; the remainder takes the divisor's sign. */
                if (op == '%') {
                    r = x % y;
                    if (r != 0 && ((r < 0) != (y < 0)))
                        r += y;
                } else {
                    r = x / y;
                    if ((x % y != 0) && ((x < 0) != (y < 0)))
                        r--;
                }
            }
            v->i = r;
        }
    }
}

static int arith(struct cx *c, struct val *v)
{
    if (term(c, v) < 0)
        return -1;
    for (;;) {
        int op;
        if (eat(c, "+"))
            op = '+';
        else if (at(c, "-") && !at(c, "->"))
            op = (eat(c, "-"), '-');
        else
            return 0;
        struct val b;
        if (term(c, &b) < 0 || arith_check(c, v, &b) < 0)
            return -1;
        int64_t sum;
        if (v->k == V_INT && b.k == V_INT &&
            !(op == '+' ? __builtin_add_overflow(v->i, b.i, &sum) : __builtin_sub_overflow(v->i, b.i, &sum))) {
            v->i = sum;
        } else {
            double d = op == '+' ? num(v) + num(&b) : num(v) - num(&b);
            v->k = V_FLT;
            v->f = d;
        }
    }
}

/* Python's bitwise operators bind tighter than comparisons, looser than + and -: a == B | C is a == (B | C). */
static int bitop(struct cx *c, struct val *v, int level)
{
    static const char ops[] = {'|', '^', '&'};
    if (level == 3)
        return arith(c, v);
    if (bitop(c, v, level + 1) < 0)
        return -1;
    for (;;) {
        skip_ws(c);
        char ch = c->src[c->i];
        if (ch != ops[level] || c->src[c->i + 1] == '=')
            return 0;
        c->i++;
        struct val b;
        if (bitop(c, &b, level + 1) < 0)
            return -1;
        if (v->k != V_INT || b.k != V_INT)
            return cfail(c, PKT_BAD_SCRIPT, "code: '%c' of non-integers", ops[level]);
        v->i = level == 0 ? (v->i | b.i) : level == 1 ? (v->i ^ b.i) : (v->i & b.i);
    }
}

static int compare(struct cx *c, struct val *v)
{
    struct val a;
    if (bitop(c, &a, 0) < 0)
        return -1;
    int result = 1, any = 0;
    for (;;) {
        const char *op = NULL;
        static const char *const ops[] = {"==", "!=", "<=", ">=", "<", ">"};
        for (size_t k = 0; k < 6; k++) {
            if (at(c, ops[k])) {
                op = ops[k];
                break;
            }
        }
        if (!op)
            break;
        c->i += strlen(op);
        struct val b;
        if (bitop(c, &b, 0) < 0)
            return -1;
        int r;
        if (a.k == V_STR || b.k == V_STR) {
            if (a.k != b.k)
                r = op[0] == '!';
            else {
                int d = strcmp(a.s, b.s);
                r = !strcmp(op, "==") ? d == 0 : !strcmp(op, "!=") ? d != 0 : !strcmp(op, "<=") ? d <= 0 :
                    !strcmp(op, ">=") ? d >= 0 : !strcmp(op, "<") ? d < 0 : d > 0;
            }
        } else if (a.k == V_INT && b.k == V_INT) {
            int64_t x = a.i, y = b.i;
            r = !strcmp(op, "==") ? x == y : !strcmp(op, "!=") ? x != y : !strcmp(op, "<=") ? x <= y :
                !strcmp(op, ">=") ? x >= y : !strcmp(op, "<") ? x < y : x > y;
        } else {
            double x = num(&a), y = num(&b);
            r = !strcmp(op, "==") ? x == y : !strcmp(op, "!=") ? x != y : !strcmp(op, "<=") ? x <= y :
                !strcmp(op, ">=") ? x >= y : !strcmp(op, "<") ? x < y : x > y;
        }
        result = result && r;
        any = 1;
        a = b;
    }
    if (!any) {
        *v = a;
        return 0;
    }
    vint(v, result);
    return 0;
}

static int not_test(struct cx *c, struct val *v)
{
    if (at_kw(c, "not")) {
        c->i += 3;
        if (not_test(c, v) < 0)
            return -1;
        int t = truthy(v);
        vfree(v);
        vint(v, !t);
        return 0;
    }
    return compare(c, v);
}

static int and_test(struct cx *c, struct val *v)
{
    if (not_test(c, v) < 0)
        return -1;
    while (at_kw(c, "and")) {
        c->i += 3;
        struct val b;
        if (not_test(c, &b) < 0)
            return -1;
        int r = truthy(v) && truthy(&b);
        vfree(v);
        vfree(&b);
        vint(v, r);
    }
    return 0;
}

static int expr(struct cx *c, struct val *v)
{
    if (and_test(c, v) < 0)
        return -1;
    while (at_kw(c, "or")) {
        c->i += 2;
        struct val b;
        if (and_test(c, &b) < 0)
            return -1;
        int r = truthy(v) || truthy(&b);
        vfree(v);
        vfree(&b);
        vint(v, r);
    }
    return 0;
}

static void vprint(struct cx *c, const struct val *v)
{
    char buf[STR_MAX];
    if (v->k == V_STR)
        snprintf(buf, sizeof(buf), "%s", v->s);
    else if (v->k == V_INT)
        snprintf(buf, sizeof(buf), "%lld", (long long)v->i);
    else if (v->k == V_FLT)
        snprintf(buf, sizeof(buf), "%g", v->f);
    else
        snprintf(buf, sizeof(buf), "(tuple)");
    if (!c->out)
        return;
    int w = snprintf(c->out + c->outn, c->outlen - c->outn, "%s", buf);
    if (w > 0)
        c->outn = c->outn + (size_t)w < c->outlen ? c->outn + (size_t)w : c->outlen - 1;
}

static int end_of_stmt(struct cx *c)
{
    skip_ws(c);
    char ch = c->src[c->i];
    if (ch == '#') {
        while (c->src[c->i] && c->src[c->i] != '\n')
            c->i++;
        ch = c->src[c->i];
    }
    if (ch == 0 || ch == '\n' || ch == ';') {
        if (ch)
            c->i++;
        return 0;
    }
    return cfail(c, PKT_BAD_SCRIPT, "code: unexpected '%.20s'", c->src + c->i);
}

static int statement(struct cx *c)
{
    skip_ws(c);
    size_t start = c->i;
    if (at_kw(c, "assert")) {
        c->i += 6;
        size_t a = c->i;
        struct val v;
        if (expr(c, &v) < 0)
            return -1;
        size_t b = c->i;
        struct val msg = {0};
        int has_msg = 0;
        if (eat(c, ",")) {
            if (expr(c, &msg) < 0)
                return -1;
            has_msg = 1;
        }
        if (!truthy(&v)) {
            while (b > a && isspace((unsigned char)c->src[b - 1]))
                b--;
            while (a < b && isspace((unsigned char)c->src[a]))
                a++;
            char m[STR_MAX + 8] = "";
            if (has_msg) {
                if (msg.k == V_STR)
                    snprintf(m, sizeof(m), ": %s", msg.s);
                else if (msg.k == V_INT)
                    snprintf(m, sizeof(m), ": %lld", (long long)msg.i);
                else if (msg.k == V_FLT)
                    snprintf(m, sizeof(m), ": %g", msg.f);
            }
            vfree(&v);
            vfree(&msg);
            return cfail(c, PKT_FAIL, "assertion failed: %.*s%s", (int)(b - a), c->src + a, m);
        }
        vfree(&v);
        vfree(&msg);
        return end_of_stmt(c);
    }
    if (at_kw(c, "print")) {
        c->i += 5;
        int paren = eat(c, "(");
        int first = 1;
        while (!(paren ? at(c, ")") : (at(c, "\n") || at(c, ";") || !c->src[c->i]))) {
            struct val v;
            if (expr(c, &v) < 0)
                return -1;
            if (!first && c->out && c->outn + 1 < c->outlen)
                c->out[c->outn++] = ' ';
            vprint(c, &v);
            vfree(&v);
            first = 0;
            if (!eat(c, ","))
                break;
        }
        if (paren && !eat(c, ")"))
            return cfail(c, PKT_BAD_SCRIPT, "code: expected ')' after print's arguments");
        if (c->out && c->outn + 1 < c->outlen) {
            c->out[c->outn++] = '\n';
            c->out[c->outn] = 0;
        }
        return end_of_stmt(c);
    }
    if (at_kw(c, "import") || at_kw(c, "from")) {
        while (c->src[c->i] && c->src[c->i] != '\n' && c->src[c->i] != ';')
            c->i++;
        return end_of_stmt(c);
    }
    static const char *const blocks[] = {"if", "for", "while", "def", "class", "with", "try", "lambda"};
    for (size_t k = 0; k < sizeof(blocks) / sizeof(blocks[0]); k++)
        if (at_kw(c, blocks[k]))
            return cfail(c, PKT_UNSUPPORTED, "code: '%s' statements are not supported", blocks[k]);
    /* NAME = expr (not ==) */
    size_t j = c->i;
    char name[32];
    size_t n = 0;
    while (isalnum((unsigned char)c->src[j]) || c->src[j] == '_') {
        if (n + 1 < sizeof(name))
            name[n++] = c->src[j];
        j++;
    }
    name[n] = 0;
    size_t k = j;
    while (c->src[k] == ' ' || c->src[k] == '\t')
        k++;
    if (n > 0 && !isdigit((unsigned char)name[0]) && c->src[k] == '=' && c->src[k + 1] != '=') {
        c->i = k + 1;
        struct val v;
        if (expr(c, &v) < 0)
            return -1;
        if (v.k == V_TUPLE) {
            vfree(&v);
            return cfail(c, PKT_UNSUPPORTED, "code: tuple assignment is not supported");
        }
        size_t slot = c->nloc;
        for (size_t q = 0; q < c->nloc; q++)
            if (!strcmp(c->loc[q].name, name))
                slot = q;
        if (slot == LOCALS_MAX)
            return cfail(c, PKT_UNSUPPORTED, "code: too many variables");
        snprintf(c->loc[slot].name, sizeof(c->loc[slot].name), "%s", name);
        c->loc[slot].v = v;
        if (slot == c->nloc)
            c->nloc++;
        return end_of_stmt(c);
    }
    c->i = start;
    struct val v;
    if (expr(c, &v) < 0)
        return -1;
    vfree(&v);
    return end_of_stmt(c);
}

int pkt_code_run(const char *code, const struct pkt_var *vars, size_t nvars, char *out, size_t outlen,
                 char *err, size_t errlen)
{
    struct cx c = {.src = code, .vars = vars, .nvars = nvars, .out = out, .outlen = outlen, .err = err,
                   .errlen = errlen, .status = PKT_PASS};
    if (out && outlen)
        out[0] = 0;
    for (;;) {
        while (c.src[c.i] == ' ' || c.src[c.i] == '\t' || c.src[c.i] == '\r' || c.src[c.i] == '\n' ||
               c.src[c.i] == ';')
            c.i++;
        if (c.src[c.i] == '#') {
            while (c.src[c.i] && c.src[c.i] != '\n')
                c.i++;
            continue;
        }
        if (!c.src[c.i])
            break;
        if (statement(&c) < 0)
            break;
    }
    for (size_t i = 0; i < c.ntuples; i++)
        free(c.tuples[i]);
    return c.status;
}
