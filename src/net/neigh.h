/*
 * neigh.h — the ARP neighbour cache (see neigh.c).
 */
#ifndef BRISK_NET_NEIGH_H
#define BRISK_NET_NEIGH_H

#include <stddef.h>
#include <stdint.h>

#include "brisk/netdev.h"
#include "core/timer.h"

enum brisk_neigh_state {
    BRISK_NEIGH_FREE = 0,   /* slot unused */
    BRISK_NEIGH_INCOMPLETE, /* resolving: broadcast requests, packets queued */
    BRISK_NEIGH_REACHABLE,  /* confirmed within arp_reachable */
    BRISK_NEIGH_STALE,      /* usable, not recently confirmed: the next use starts a probe */
    BRISK_NEIGH_PROBE,      /* usable, unicast requests outstanding to re-confirm */
};

struct brisk_neigh {
    uint32_t ip;                /* neighbour address, host order */
    uint8_t mac[6];             /* valid unless INCOMPLETE */
    uint8_t state;              /* enum brisk_neigh_state */
    uint8_t probes;             /* requests sent in the current resolution or probe */
    brisk_netdev *dev;          /* device the neighbour is on */
    uint64_t confirmed;         /* last time the mapping was confirmed by an ARP packet from it */
    uint64_t used;              /* last time a datagram went through it or it was confirmed (eviction age) */
    struct brisk_timer timer;   /* retransmit (INCOMPLETE, PROBE) or reachable expiry (REACHABLE) */
    brisk_pkt *q_head, *q_tail; /* packets waiting for resolution (INCOMPLETE only) */
    uint32_t qlen;
    int32_t hnext;              /* hash chain, or free-list link */
    int32_t lru_prev, lru_next; /* on `live` (resolved) or `unres` (INCOMPLETE), most recent first */
};

struct brisk_neigh_list {
    int32_t head, tail; /* slot indices, -1 = empty */
};

struct brisk_neigh_table {
    struct brisk_neigh *e; /* gc_thresh3 slots */
    uint32_t size;
    int32_t *buckets;  /* nbuckets heads of hash chains (-1 = empty) */
    uint32_t nbuckets; /* power of two */
    uint64_t salt;     /* keyed hash: a remote host cannot aim at one chain */
    int32_t free_head;
    struct brisk_neigh_list live;  /* resolved entries by last use: the tail is the eviction candidate */
    struct brisk_neigh_list unres; /* resolving entries by creation: the tail is the oldest */
    uint32_t count;                /* slots in use */
    uint32_t unres_count;          /* of which INCOMPLETE; never above arp_unres_max */
};

struct brisk_net;

int brisk_neigh_init(struct brisk_net *net);
void brisk_neigh_destroy(struct brisk_net *net);

/* Sends an IPv4 datagram (pkt->data at the IP header) to `nexthop` on `dev`: adds the Ethernet header once
 * the neighbour's MAC is known, else queues it behind resolution. Takes ownership of pkt. Returns BRISK_OK
 * (sent or queued), or the device's error. */
int brisk_neigh_output(struct brisk_net *net, brisk_netdev *dev, uint32_t nexthop, brisk_pkt *pkt,
                       uint64_t now);

/* Processes a received ARP packet (the Ethernet payload). */
void brisk_neigh_arp_input(struct brisk_net *net, brisk_netdev *dev, const uint8_t *p, size_t len,
                           uint64_t now);

/* 0 when brisk_neigh_output to `nexthop` on `dev` would surely refuse a datagram now for want of a neighbour
 * entry, counting the refusal as brisk_neigh_output would (NeighUnresolvedLimit or NeighTableOverflow, and
 * IpOutDiscards); else 1. So a stateless reply (a SYN cookie) need not be built only to be dropped. O(1). */
int brisk_neigh_admit(struct brisk_net *net, brisk_netdev *dev, uint32_t nexthop, uint64_t now);

/* For tests and tools: the entry for ip, or NULL. */
const struct brisk_neigh *brisk_neigh_lookup(const struct brisk_net *net, uint32_t ip);

/* brisk_stack_resolve's body: starts (or confirms) resolution of the next hop toward dst. */
int brisk_neigh_resolve(struct brisk_net *net, uint32_t dst, uint64_t now);

#endif
