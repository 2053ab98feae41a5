/*
 * expr.c — scenario-file expressions (expr.h): a recursive-descent evaluator over doubles.
 *
 * Each level of the grammar is one function; the evaluation happens as the text is read, with no tree: a
 * file's expressions are a line each, evaluated a few times per run. Both arms of ?: and both sides of && and
 * || are evaluated (they are pure, and an unknown name in the arm not taken is still an error the file should
 * hear about at `check` time).
 */
#include "lab/expr.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPR_MAX_DEPTH 48
#define EXPR_NAME      96

struct ex {
    const char *s, *start;
    lab_expr_lookup lookup;
    void *ctx;
    char *err;
    size_t errlen;
    int failed, depth;
};

static double fail(struct ex *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static double fail(struct ex *e, const char *fmt, ...)
{
    if (!e->failed && e->err && e->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->err, e->errlen, fmt, ap);
        va_end(ap);
    }
    e->failed = 1;
    return 0;
}

static void skip(struct ex *e)
{
    while (*e->s == ' ' || *e->s == '\t' || *e->s == '\n')
        e->s++;
}

/* Consumes op (after blanks) if it is next. */
static int eat(struct ex *e, const char *op)
{
    skip(e);
    size_t n = strlen(op);
    if (strncmp(e->s, op, n) != 0)
        return 0;
    e->s += n;
    return 1;
}

static int is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9') || c == '.';
}

static double cond(struct ex *e);

static double primary(struct ex *e)
{
    skip(e);
    if (eat(e, "(")) {
        double v = cond(e);
        if (!eat(e, ")"))
            return fail(e, "expected ')' at '%.20s'", e->s);
        return v;
    }
    if ((*e->s >= '0' && *e->s <= '9') || *e->s == '.') {
        char *end;
        double v = strtod(e->s, &end);
        if (end == e->s)
            return fail(e, "expected a number at '%.20s'", e->s);
        e->s = end;
        if (is_name_start(*e->s))
            return fail(e, "a number followed by '%c' (no units inside ${...}: write 10e6 for 10ms in ns)", *e->s);
        return v;
    }
    if (!is_name_start(*e->s))
        return fail(e, "expected a number, a name or '(' at '%.20s'", *e->s ? e->s : "the end");
    char name[EXPR_NAME];
    size_t n = 0;
    while (is_name_char(*e->s)) {
        if (n + 1 >= sizeof(name))
            return fail(e, "a name longer than %d characters", EXPR_NAME - 1);
        name[n++] = *e->s++;
    }
    name[n] = '\0';
    if (eat(e, "(")) {
        int fmin = !strcmp(name, "min"), fmax = !strcmp(name, "max"), ffloor = !strcmp(name, "floor");
        if (!fmin && !fmax && !ffloor)
            return fail(e, "unknown function '%s' (min, max, floor)", name);
        double acc = cond(e);
        int args = 1;
        while (eat(e, ",")) {
            double v = cond(e);
            acc = fmin ? (v < acc ? v : acc) : (v > acc ? v : acc);
            args++;
        }
        if (!eat(e, ")"))
            return fail(e, "expected ')' closing %s(", name);
        if (ffloor && args != 1)
            return fail(e, "floor takes one argument");
        return ffloor ? floor(acc) : acc;
    }
    double v = 0;
    if (e->lookup(e->ctx, name, &v) != 0)
        return fail(e, "unknown name '%s'", name);
    return v;
}

static double unary(struct ex *e)
{
    if (++e->depth > EXPR_MAX_DEPTH)
        return fail(e, "nested too deeply");
    double v;
    if (eat(e, "-"))
        v = -unary(e);
    else if (eat(e, "!"))
        v = unary(e) == 0;
    else
        v = primary(e);
    e->depth--;
    return v;
}

static double mul(struct ex *e)
{
    double v = unary(e);
    for (;;) {
        if (eat(e, "*"))
            v = v * unary(e);
        else if (eat(e, "/"))
            v = v / unary(e);
        else
            return v;
    }
}

static double add(struct ex *e)
{
    double v = mul(e);
    for (;;) {
        if (eat(e, "+"))
            v = v + mul(e);
        else if (eat(e, "-"))
            v = v - mul(e);
        else
            return v;
    }
}

static double cmp(struct ex *e)
{
    double v = add(e);
    if (eat(e, "=="))
        return v == add(e);
    if (eat(e, "!="))
        return v != add(e);
    if (eat(e, "<="))
        return v <= add(e);
    if (eat(e, ">="))
        return v >= add(e);
    if (eat(e, "<"))
        return v < add(e);
    if (eat(e, ">"))
        return v > add(e);
    return v;
}

static double and_(struct ex *e)
{
    double v = cmp(e);
    while (eat(e, "&&")) {
        double w = cmp(e);
        v = v != 0 && w != 0;
    }
    return v;
}

static double or_(struct ex *e)
{
    double v = and_(e);
    while (eat(e, "||")) {
        double w = and_(e);
        v = v != 0 || w != 0;
    }
    return v;
}

static double cond(struct ex *e)
{
    if (++e->depth > EXPR_MAX_DEPTH)
        return fail(e, "nested too deeply");
    double c = or_(e);
    if (eat(e, "?")) {
        double a = cond(e);
        if (!eat(e, ":"))
            return fail(e, "expected ':' of '?'");
        double b = cond(e);
        c = c != 0 ? a : b;
    }
    e->depth--;
    return c;
}

int lab_expr_eval(const char *text, lab_expr_lookup lookup, void *ctx, double *out, char *err, size_t errlen)
{
    struct ex e = {.s = text, .start = text, .lookup = lookup, .ctx = ctx, .err = err, .errlen = errlen};
    double v = cond(&e);
    skip(&e);
    if (!e.failed && *e.s)
        fail(&e, "unexpected '%.20s'", e.s);
    if (e.failed)
        return -1;
    *out = v;
    return 0;
}

/* Whether fmt is one printf conversion of a double: %[flags][width][.precision](f|e|g). */
static int double_format(const char *fmt)
{
    const char *p = fmt;
    if (*p++ != '%')
        return 0;
    while (*p && strchr("-+ #0", *p))
        p++;
    for (int i = 0; i < 3 && *p >= '0' && *p <= '9'; i++)
        p++;
    if (*p == '.') {
        p++;
        for (int i = 0; i < 2 && *p >= '0' && *p <= '9'; i++)
            p++;
    }
    return (*p == 'f' || *p == 'e' || *p == 'g') && p[1] == '\0';
}

int lab_expr_format(const char *text, lab_expr_lookup lookup, void *ctx, char *out, size_t cap, char *err,
                    size_t errlen)
{
    size_t n = 0;
    if (cap == 0)
        return -1;
    out[0] = '\0';
    for (const char *p = text; *p;) {
        if (*p != '{') {
            if (n + 1 < cap)
                out[n++] = *p;
            p++;
            continue;
        }
        const char *close = strchr(p, '}');
        if (!close) {
            snprintf(err, errlen, "a '{' without its '}'");
            return -1;
        }
        char field[256], fmt[16] = "%g";
        size_t len = (size_t)(close - p - 1);
        if (len >= sizeof(field)) {
            snprintf(err, errlen, "a {...} field longer than %zu characters", sizeof(field) - 1);
            return -1;
        }
        memcpy(field, p + 1, len);
        field[len] = '\0';
        char *colon = strrchr(field, ':');
        if (colon && colon[1] == '%') {
            if (strlen(colon + 1) >= sizeof(fmt) || !double_format(colon + 1)) {
                snprintf(err, errlen, "'%s' is not a number format like %%.1f, %%+.1f, %%g", colon + 1);
                return -1;
            }
            snprintf(fmt, sizeof(fmt), "%s", colon + 1);
            *colon = '\0';
        }
        double v;
        if (lab_expr_eval(field, lookup, ctx, &v, err, errlen) != 0)
            return -1;
        char num[64];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        snprintf(num, sizeof(num), fmt, v); /* fmt checked: one conversion of a double */
#pragma GCC diagnostic pop
        for (const char *q = num; *q; q++)
            if (n + 1 < cap)
                out[n++] = *q;
        p = close + 1;
    }
    out[n] = '\0';
    return 0;
}
