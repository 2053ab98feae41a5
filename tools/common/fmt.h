/*
 * fmt.h — human-readable figures for the tools' tables: times ("12.345 us"), rates ("9.41 Gbit/s"), sizes.
 * Each writes into a caller's buffer and returns it.
 */
#ifndef BRISK_TOOLS_FMT_H
#define BRISK_TOOLS_FMT_H

#include <stddef.h>
#include <stdint.h>

#include "brisk/brisk.h"

#define FMT_LEN 32

char *fmt_time(char *buf, uint64_t ns);    /* ns, us, ms or s with 3 significant decimals */
char *fmt_rate(char *buf, double bps);     /* bit/s, kbit/s, Mbit/s, Gbit/s */
char *fmt_size(char *buf, uint64_t bytes); /* B, KiB, MiB, GiB */
/* A value of a setting or parameter in the syntax it is set with ("200ms", "64K", "10G"). */
char *fmt_value(char *buf, enum brisk_value_kind kind, uint64_t v);
/* Stack setting `i`'s value v the same way; a choice prints as its name ("cubic"). */
char *fmt_setting(char *buf, size_t i, uint64_t v);

#endif
