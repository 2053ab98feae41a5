/*
 * ssline.h — the `ss -tin` lines of one socket, written from its JSON object (ctl.h: ctl_socket_json, or
 * ctl_conn_json from a brisk_conn_info): brisk-ss prints them for a live process, brisk-lab for every flow
 * of a run (at its end, and sampled over virtual time), so both say the same thing the same way.
 */
#ifndef BRISK_TOOLS_SSLINE_H
#define BRISK_TOOLS_SSLINE_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* The column heads: State Recv-Q Send-Q Local Address:Port Peer Address:Port. */
void ss_print_header(FILE *f);
/* The socket's line under those heads (a listener's queues print 0, as ss's do; no peer: "*:*"). */
void ss_print_socket(FILE *f, json_t *s);
/* The -i line: a tab, then cc, wscale, rto, rtt, ... hold:, held: (docs/introspection.md), then a newline.
 * now_ns is the clock of the object's *_ns time stamps (lastsnd, lastrcv, lastack are "ms ago"). */
void ss_print_info(FILE *f, json_t *s, int64_t now_ns);
/* The -i line's text alone (no tab, no newline), allocated (free() it), or NULL when out of memory. */
char *ss_info_string(json_t *s, int64_t now_ns);

/* A member of the object: an integer (0 when absent or not one), a string ("?" when absent). */
int64_t ss_num(json_t *o, const char *k);
const char *ss_str(json_t *o, const char *k);

#endif
