/*
 * pmtu.h (internal) — the path MTU of each destination (pmtu.c): what ICMP "fragmentation needed" taught
 * the stack (RFC 1191), remembered for route_mtu_expires.
 */
#ifndef BRISK_NET_PMTU_H
#define BRISK_NET_PMTU_H

#include <stdint.h>

#include "brisk/brisk.h"

#define BRISK_PMTU_SLOTS 64 /* destinations remembered at once (the oldest learnt goes first) */

struct brisk_pmtu_entry {
    struct brisk_addr dst; /* either family */
    uint16_t mtu;     /* what datagrams to dst may be, whole */
    uint16_t locked;  /* the router reported less than route_min_pmtu: mtu is that floor */
    uint64_t expires; /* when the entry is forgotten (the device MTU applies again) */
};

struct brisk_pmtu {
    struct brisk_pmtu_entry e[BRISK_PMTU_SLOTS];
    uint32_t used; /* slots ever filled: 0 keeps the lookup of every connection's MSS free */
};

struct brisk_net;

/* The largest datagram to dst now: dev_mtu, or less where an unexpired entry says so. */
uint32_t brisk_pmtu_get(struct brisk_net *net, const struct brisk_addr *dst, uint32_t dev_mtu, uint64_t now);
/* A router reported `mtu` (its next hop's, 0 when it did not say: RFC 1191 §4's old routers) for a datagram
 * of ours to dst, whose device MTU is dev_mtu. Linux's rules: for IPv4 (__ip_rt_update_pmtu) below
 * route_min_pmtu the floor is used instead (and *below_min set); for IPv6 (RFC 8201 §4, Linux's
 * __ip6_rt_update_pmtu) below 1280 is taken as 1280; never raised, never above dev_mtu. Returns the path MTU
 * now. */
uint32_t brisk_pmtu_update(struct brisk_net *net, const struct brisk_addr *dst, uint32_t mtu, uint32_t dev_mtu,
                           int *below_min, uint64_t now);

#endif
