/*
 * json.c — the streaming JSON writer (json.h). Output is indented two spaces per level so a human can read
 * it too; every value goes through one place that writes the separator and the key.
 */
#include "common/json.h"

#include <math.h>

void json_init(struct json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->count[0] = 0;
}

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Separator, newline + indent, and "key": for the next value. */
static void prefix(struct json *j, const char *key)
{
    if (j->count[j->depth]++ > 0)
        fputc(',', j->f);
    if (j->depth > 0) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    if (key) {
        put_string(j->f, key);
        fputs(": ", j->f);
    }
}

static void open_level(struct json *j, const char *key, char c)
{
    prefix(j, key);
    fputc(c, j->f);
    if (j->depth + 1 < JSON_MAX_DEPTH)
        j->depth++;
    j->count[j->depth] = 0;
}

static void close_level(struct json *j, char c)
{
    int had = j->count[j->depth] > 0;
    if (j->depth > 0)
        j->depth--;
    if (had) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(c, j->f);
}

void json_object_begin(struct json *j, const char *key)
{
    open_level(j, key, '{');
}

void json_object_end(struct json *j)
{
    close_level(j, '}');
}

void json_array_begin(struct json *j, const char *key)
{
    open_level(j, key, '[');
}

void json_array_end(struct json *j)
{
    close_level(j, ']');
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
    prefix(j, key);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
    prefix(j, key);
    fprintf(j->f, "%lld", (long long)v);
}

void json_double(struct json *j, const char *key, double v)
{
    prefix(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.17g", v);
    else
        fputs("null", j->f);
}

void json_bool(struct json *j, const char *key, int v)
{
    prefix(j, key);
    fputs(v ? "true" : "false", j->f);
}

void json_str(struct json *j, const char *key, const char *s)
{
    prefix(j, key);
    put_string(j->f, s ? s : "");
}

void json_null(struct json *j, const char *key)
{
    prefix(j, key);
    fputs("null", j->f);
}

void json_finish(struct json *j)
{
    fputc('\n', j->f);
    fflush(j->f);
}

void json_raw(struct json *j, const char *key, const char *text)
{
    prefix(j, key);
    fputs(text, j->f);
}
