/*
 * ctl.h — the control socket: a running brisk process (brisk-perf) answers brisk-ss and brisk-nstat about
 * its stack, live (docs/introspection.md).
 *
 * Protocol. A client connects to an AF_UNIX stream socket and writes requests, one per line, each at most
 * CTL_REQ_MAX bytes with its newline; the server answers each with exactly one line: a compact JSON object
 * ending in "\n". Requests (a word, surrounding blanks ignored):
 *   info      {"ok":true,"program":..,"pid":..,"started_ns":..,"now_ns":..,"requests":[..]}
 *   sockets   {"ok":true,.., "sockets":[{one object per socket, brisk_conn_info's fields}, ..]}
 *   counters  {"ok":true,.., "counters":{"EthInFrames":N, .. every stack counter, then the driver's and
 *             the loop's statistics (Tap*, Loop*)}}
 * Anything else — an unknown word, an empty line, bytes that are not printable ASCII — is answered with
 * {"ok":false,"error":"..."} and the connection stays usable; a line longer than CTL_REQ_MAX is answered
 * with an error and the connection is closed. pid and started_ns identify the process, so that brisk-nstat
 * knows when its saved counters belong to an earlier one.
 *
 * ctl.c is sans-IO: ctl_handle builds the answer to one request from a stack, so that the simulator tests
 * drive it exactly as the server does. ctl_server.c owns the socket on a brisk_loop (the stack's thread:
 * every request is answered between two events, without locks). ctl_client.c is the clients' side.
 */
#ifndef BRISK_TOOLS_CTL_H
#define BRISK_TOOLS_CTL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "brisk/brisk.h"
#include "brisk/loop.h"

#define CTL_REQ_MAX  256         /* bytes of one request line, newline included */
#define CTL_RESP_MAX (64u << 20) /* the clients' bound on one answer line */
#define CTL_CLIENTS  8           /* connections served at once; more are answered "busy" and closed */
#define CTL_IDLE_NS  (BRISK_NSEC_PER_SEC) /* ... unless the idlest has been idle this long: it is closed */

/* What the answers are made from. */
struct ctl_source {
    brisk_stack *st;
    const char *program; /* "brisk-perf" */
    uint64_t pid;
    uint64_t started_ns; /* CLOCK_MONOTONIC when the control socket was opened */
    /* Adds the driver's and loop's statistics to the "counters" object (name -> integer); may be NULL. */
    void (*extra)(void *ctx, json_t *counters);
    void *extra_ctx;
};

/* The answer to one request (`req`, `len` bytes, without its newline) at `now`: a NUL-terminated JSON line
 * ending in "\n", allocated (free() it), or NULL when out of memory. */
char *ctl_handle(const struct ctl_source *src, const char *req, size_t len, uint64_t now);

/* An error answer {"ok":false,..,"error":msg} the same way. */
char *ctl_error(const struct ctl_source *src, uint64_t now, const char *msg);

/* The JSON object of one socket (the "sockets" answer's elements), NULL when out of memory. */
json_t *ctl_socket_json(const brisk_sock *s);
/* The same object from a connection's figures taken earlier (and its congestion control's name, NULL: ""):
 * brisk-lab describes a flow whose socket is already closed. */
json_t *ctl_conn_json(const struct brisk_conn_info *i, const char *cc);

/* ---- ctl_server.c: the socket on a loop ---- */
struct ctl_server;
struct brisk_tap;
/* Creates the socket at `path` (mode 0600; a stale socket left by a dead process is replaced, a live one or
 * another file is refused) and watches it on `l`. tap (may be NULL) adds its statistics to "counters".
 * NULL on failure, with a one-line reason in why. */
struct ctl_server *ctl_server_new(brisk_loop *l, struct brisk_tap *tap, const char *path, const char *program,
                                  char *why, size_t why_len);
/* Closes every connection, unwatches and removes the socket file. NULL is a no-op. */
void ctl_server_free(struct ctl_server *s);

/* ---- ctl_client.c: the tools' side ---- */
/* The control socket's path: `opt` (--ctl), else $BRISK_CTL, else NULL. */
const char *ctl_path(const char *opt);
/* Sends one request to the socket at path and parses the answer. Returns the answer's object ("ok" true),
 * or NULL with a one-line reason in why: exit code 1 for a missing socket / dead process / error answer. */
json_t *ctl_request(const char *path, const char *req, char *why, size_t why_len);

#endif
