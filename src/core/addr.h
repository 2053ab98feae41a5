/*
 * addr.h (internal) — struct brisk_addr's fast helpers for the per-packet paths: building one from a
 * received header's address and comparing two, inline (the public brisk_addr_v4 / brisk_addr_equal in
 * ipaddr.c are calls, and accept any reserved bytes). Every address the stack stores is built here, so its
 * reserved bytes and, for IPv4, the unused twelve bytes of the union are zero.
 */
#ifndef BRISK_CORE_ADDR_H
#define BRISK_CORE_ADDR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "brisk/brisk.h"

_Static_assert(offsetof(struct brisk_addr, u) == 4 && sizeof(struct brisk_addr) == 20,
               "brisk_addr_same_fast reads family, reserved bytes and an IPv4 address as one 8-byte word");

static inline struct brisk_addr brisk_addr4(uint32_t v4)
{
    struct brisk_addr a = {.family = BRISK_AF_INET};
    a.u.v4 = v4;
    return a;
}

static inline struct brisk_addr brisk_addr6(const uint8_t v6[16])
{
    struct brisk_addr a = {.family = BRISK_AF_INET6};
    memcpy(a.u.v6, v6, 16);
    return a;
}

/* brisk_addr_equal (ipaddr.c) for two addresses built here (their reserved bytes and an IPv4 address's unused twelve
 * zero, as every address the stack stores or looks up): family, reserved bytes and IPv4 address are one
 * 64-bit word, and only IPv6 needs the other twelve bytes. The per-segment lookups use it. */
static inline int brisk_addr_same_fast(const struct brisk_addr *a, const struct brisk_addr *b)
{
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    if (x != y)
        return 0;
    return a->family != BRISK_AF_INET6 || memcmp(a->u.v6 + 4, b->u.v6 + 4, 12) == 0;
}

#endif
