/*
 * tbucket.h — a token bucket in nanoseconds of credit, for rate limits (ICMP and ICMPv6 errors): the credit
 * refills by the time elapsed, up to `burst` intervals, and each message spends one interval.
 */
#ifndef BRISK_CORE_TBUCKET_H
#define BRISK_CORE_TBUCKET_H

#include <stdint.h>

/* Whether one more message may go now (its credit is then spent). `interval` 0: no limit. *tokens is the
 * credit, *at when it was last refilled; start with *tokens = burst * interval (full). */
static inline int brisk_tbucket_take(uint64_t *tokens, uint64_t *at, uint64_t interval, uint32_t burst,
                                     uint64_t now)
{
    if (interval == 0)
        return 1;
    uint64_t cap = (uint64_t)burst * interval;
    uint64_t elapsed = now - *at;
    *at = now;
    *tokens = elapsed >= cap - *tokens ? cap : *tokens + elapsed;
    if (*tokens < interval)
        return 0;
    *tokens -= interval;
    return 1;
}

#endif
