/*
 * stats.c — names and help texts of the stack counters (struct brisk_counters, declared through the
 * BRISK_COUNTERS table in brisk.h), so tools can print and export every counter without listing them again.
 */
#include <string.h>

#include "brisk/brisk.h"

static const char *const names[] = {
#define NAME(name, help) #name,
    BRISK_COUNTERS(NAME)
#undef NAME
};

static const char *const helps[] = {
#define HELP(name, help) help,
    BRISK_COUNTERS(HELP)
#undef HELP
};

#define NCOUNTERS (sizeof(names) / sizeof(names[0]))
_Static_assert(sizeof(struct brisk_counters) == NCOUNTERS * sizeof(uint64_t), "counters are all uint64_t");

size_t brisk_counters_count(void)
{
    return NCOUNTERS;
}

const char *brisk_counter_name(size_t i)
{
    return i < NCOUNTERS ? names[i] : NULL;
}

const char *brisk_counter_help(size_t i)
{
    return i < NCOUNTERS ? helps[i] : NULL;
}

uint64_t brisk_counter_value(const struct brisk_counters *c, size_t i)
{
    if (i >= NCOUNTERS)
        return 0;
    uint64_t v;
    memcpy(&v, (const uint8_t *)c + i * sizeof(uint64_t), sizeof(v));
    return v;
}
