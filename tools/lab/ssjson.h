/*
 * ssjson.h — a simulated connection's `ss -ti` description for brisk-lab (obs.c): the socket object brisk-ss
 * reads from a live process (tools/introspect/ctl.h, ctl_conn_json) and the lines brisk-ss prints from it
 * (ssline.h), made from a brisk_conn_info. A file of its own because jansson's names and the lab's JSON
 * writer's (common/json.h) cannot meet in one translation unit.
 */
#ifndef BRISK_LAB_SSJSON_H
#define BRISK_LAB_SSJSON_H

#include <stdint.h>
#include <stdio.h>

#include "brisk/brisk.h"

/* The socket object as compact JSON text, with two more members: "ss" (the State / Recv-Q / Send-Q /
 * addresses line) and "info" (the -i line's text); allocated (free() it), NULL when out of memory. now_ns:
 * the clock of the info's time stamps (the virtual time it was taken at). */
char *lab_ss_json(const struct brisk_conn_info *i, const char *cc, uint64_t now_ns);
/* brisk-ss -i's two lines for it, each line after `indent`; with header, its column heads first. Returns 0,
 * or nonzero when out of memory (nothing printed). */
int lab_ss_print(FILE *f, const char *indent, const struct brisk_conn_info *i, const char *cc,
                 uint64_t now_ns, int header);

#endif
