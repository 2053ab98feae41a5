/*
 * fmt.c — human-readable figures (fmt.h).
 */
#include "common/fmt.h"

#include <inttypes.h>
#include <stdio.h>

char *fmt_time(char *buf, uint64_t ns)
{
    if (ns == BRISK_TIME_NONE)
        snprintf(buf, FMT_LEN, "never");
    else if (ns < 1000)
        snprintf(buf, FMT_LEN, "%" PRIu64 " ns", ns);
    else if (ns < 1000000)
        snprintf(buf, FMT_LEN, "%.3f us", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, FMT_LEN, "%.3f ms", (double)ns / 1e6);
    else
        snprintf(buf, FMT_LEN, "%.3f s", (double)ns / 1e9);
    return buf;
}

char *fmt_rate(char *buf, double bps)
{
    if (bps >= 1e9)
        snprintf(buf, FMT_LEN, "%.3f Gbit/s", bps / 1e9);
    else if (bps >= 1e6)
        snprintf(buf, FMT_LEN, "%.3f Mbit/s", bps / 1e6);
    else if (bps >= 1e3)
        snprintf(buf, FMT_LEN, "%.3f kbit/s", bps / 1e3);
    else
        snprintf(buf, FMT_LEN, "%.0f bit/s", bps);
    return buf;
}

char *fmt_size(char *buf, uint64_t bytes)
{
    if (bytes >= (1ull << 30))
        snprintf(buf, FMT_LEN, "%.2f GiB", (double)bytes / (double)(1ull << 30));
    else if (bytes >= (1ull << 20))
        snprintf(buf, FMT_LEN, "%.2f MiB", (double)bytes / (double)(1ull << 20));
    else if (bytes >= (1ull << 10))
        snprintf(buf, FMT_LEN, "%.2f KiB", (double)bytes / 1024.0);
    else
        snprintf(buf, FMT_LEN, "%" PRIu64 " B", bytes);
    return buf;
}

/* Largest unit that divides v exactly, so the text parses back to the same value. */
static char *exact(char *buf, uint64_t v, const uint64_t *mult, const char *const *unit, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        if (v >= mult[i] && v % mult[i] == 0) {
            snprintf(buf, FMT_LEN, "%" PRIu64 "%s", v / mult[i], unit[i]);
            return buf;
        }
    }
    snprintf(buf, FMT_LEN, "%" PRIu64 "%s", v, unit[0]);
    return buf;
}

char *fmt_value(char *buf, enum brisk_value_kind kind, uint64_t v)
{
    static const uint64_t tmul[] = {1, 1000, 1000000, 1000000000};
    static const char *const tunit[] = {"ns", "us", "ms", "s"};
    static const uint64_t smul[] = {1, 1ull << 10, 1ull << 20, 1ull << 30};
    static const char *const sunit[] = {"", "K", "M", "G"};
    static const uint64_t rmul[] = {1, 1000, 1000000, 1000000000};
    static const char *const runit[] = {"", "k", "M", "G"};
    switch (kind) {
    case BRISK_VAL_TIME:
        if (v == 0) {
            snprintf(buf, FMT_LEN, "0");
            return buf;
        }
        return exact(buf, v, tmul, tunit, 4);
    case BRISK_VAL_SIZE:
        return exact(buf, v, smul, sunit, 4);
    case BRISK_VAL_RATE:
        return exact(buf, v, rmul, runit, 4);
    case BRISK_VAL_BOOL:
        snprintf(buf, FMT_LEN, "%s", v ? "on" : "off");
        return buf;
    case BRISK_VAL_UINT:
    case BRISK_VAL_CHOICE: /* the index; fmt_setting prints the name */
        break;
    }
    snprintf(buf, FMT_LEN, "%" PRIu64, v);
    return buf;
}

char *fmt_setting(char *buf, size_t i, uint64_t v)
{
    const char *name = brisk_settings_choice(i, v);
    if (name) {
        snprintf(buf, FMT_LEN, "%s", name);
        return buf;
    }
    const struct brisk_setting_desc *d = brisk_settings_desc(i);
    return fmt_value(buf, d ? d->kind : BRISK_VAL_UINT, v);
}
