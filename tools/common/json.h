/*
 * json.h — a small streaming JSON writer for the tools' --json output (RFC 8259): objects, arrays, numbers,
 * strings with escaping. Keys are given with each value; pass NULL inside arrays and at the top level.
 */
#ifndef BRISK_TOOLS_JSON_H
#define BRISK_TOOLS_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
    FILE *f;
    int depth;
    int count[JSON_MAX_DEPTH]; /* values written at each open level, for commas */
};

void json_init(struct json *j, FILE *f);
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_double(struct json *j, const char *key, double v); /* non-finite values are written as null */
void json_bool(struct json *j, const char *key, int v);
void json_str(struct json *j, const char *key, const char *s);
void json_null(struct json *j, const char *key);
/* A value already written as JSON text by another writer (jansson's json_dumps), copied as it is. */
void json_raw(struct json *j, const char *key, const char *text);
/* Ends the document with a newline. */
void json_finish(struct json *j);

#endif
