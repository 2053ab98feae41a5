/*
 * ndisc.h — the IPv6 neighbour cache and Neighbour Discovery (see ndisc.c).
 */
#ifndef BRISK_NET_NDISC_H
#define BRISK_NET_NDISC_H

#include <stddef.h>
#include <stdint.h>

#include "brisk/netdev.h"
#include "core/timer.h"
#include "net/neigh.h"

/* Neighbour Unreachability Detection states (RFC 4861 §7.3.2). */
enum brisk_nd_state {
    BRISK_ND_FREE = 0,   /* slot unused */
    BRISK_ND_INCOMPLETE, /* resolving: multicast solicitations, packets queued */
    BRISK_ND_REACHABLE,  /* confirmed within arp_reachable */
    BRISK_ND_STALE,      /* usable, not recently confirmed: the next use starts DELAY */
    BRISK_ND_DELAY,      /* used while stale: a probe follows unless something confirms it first */
    BRISK_ND_PROBE,      /* usable, unicast solicitations outstanding to re-confirm */
};

struct brisk_nd_entry {
    uint8_t addr[16];           /* neighbour address, network order */
    uint8_t mac[6];             /* valid unless INCOMPLETE */
    uint8_t state;              /* enum brisk_nd_state */
    uint8_t probes;             /* solicitations sent in the current resolution or probe */
    uint8_t router;             /* the IsRouter flag its last advertisement carried */
    brisk_netdev *dev;          /* device the neighbour is on */
    uint64_t confirmed;         /* last reachability confirmation (a solicited advertisement) */
    uint64_t used;              /* last use or confirmation (eviction age) */
    struct brisk_timer timer;   /* retransmit (INCOMPLETE, PROBE), DELAY's end, or REACHABLE's expiry */
    brisk_pkt *q_head, *q_tail; /* packets waiting for resolution (INCOMPLETE only) */
    uint32_t qlen;
    int32_t hnext;              /* hash chain, or free-list link */
    int32_t lru_prev, lru_next; /* on `live` (resolved) or `unres` (INCOMPLETE), most recent first */
};

struct brisk_nd_table {
    struct brisk_nd_entry *e; /* gc_thresh3 slots; NULL while IPv6 is off */
    uint32_t size;
    int32_t *buckets;  /* nbuckets heads of hash chains (-1 = empty) */
    uint32_t nbuckets; /* power of two */
    uint64_t salt;     /* keyed hash (derived from the ARP table's key: no draw from the stack's PRNG) */
    int32_t free_head;
    struct brisk_neigh_list live;  /* resolved entries by last use: the tail is the eviction candidate */
    struct brisk_neigh_list unres; /* resolving entries by creation: the tail is the oldest */
    uint32_t count;                /* slots in use */
    uint32_t unres_count;          /* of which INCOMPLETE; never above arp_unres_max */
};

struct brisk_net;
struct brisk_ipv6_repr;
struct brisk_icmp6_repr;

int brisk_nd_init(struct brisk_net *net);
void brisk_nd_destroy(struct brisk_net *net);

/* Sends an IPv6 packet (pkt->data at the IPv6 header) to `nexthop` on `dev`: a multicast next hop goes to
 * its 33:33 MAC at once, a unicast one once its MAC is known, else it is queued behind resolution. Takes
 * ownership of pkt. Returns BRISK_OK (sent or queued), BRISK_ERR_TOOMANY (the bounds refused a new entry)
 * or the device's error. */
int brisk_nd_output(struct brisk_net *net, brisk_netdev *dev, const uint8_t nexthop[16], brisk_pkt *pkt,
                    uint64_t now);

/* A Neighbour Discovery message (RS, RA, NS, NA, redirect: icmp->nd set) that arrived on dev, already
 * parsed and checksummed; the hop limit is checked here. */
void brisk_nd_input(struct brisk_net *net, brisk_netdev *dev, const struct brisk_ipv6_repr *ip,
                    const struct brisk_icmp6_repr *icmp, uint64_t now);

/* For tests and tools: the entry for addr, or NULL. */
const struct brisk_nd_entry *brisk_nd_lookup(const struct brisk_net *net, const uint8_t addr[16]);
/* Upper-layer reachability confirmation (RFC 4861 §7.3.1): a transport saw forward progress through the
 * neighbour addr (TCP: new data acknowledged). A resolved entry becomes REACHABLE for arp_reachable from now
 * (a DELAY or PROBE in progress ends without another solicitation); an unknown or INCOMPLETE one is left
 * alone. */
void brisk_nd_confirm(struct brisk_net *net, const uint8_t addr[16], uint64_t now);

#endif
