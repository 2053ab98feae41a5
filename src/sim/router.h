/*
 * router.h — the simulated router's state, shared by its IPv4 half (router.c: ARP, IPv4 forwarding, the
 * ports' output) and its IPv6 half (router6.c: Neighbour Discovery, IPv6 forwarding). Internal to src/sim.
 *
 * One neighbour table serves both families: an entry is keyed by (port, family, address), and holds the
 * frames waiting for its resolution whichever protocol resolves it (an ARP request or a neighbour
 * solicitation); the ports, their queues and the ICMP rate limit are the router's, not a family's.
 */
#ifndef BRISK_SIM_ROUTER_H
#define BRISK_SIM_ROUTER_H

#include "sim/internal.h"

#define PORTS_MAX  64u
#define ROUTES_MAX 256u
#define NEIGH_MAX  256u
#define HOLD_MAX   16u
#define ARP_RETRY  BRISK_NSEC_PER_SEC /* an unanswered ARP request or solicitation is sent again after this */
#define ICMP_GAP   BRISK_NSEC_PER_MSEC /* at most one ICMP error a millisecond (Linux: icmp_msgs_per_sec 1000) */
#define ICMP_QUOTE 548u                /* of the datagram: an error of at most 576 bytes (RFC 1812 §4.3.2.3) */

struct route {
    uint32_t prefix, mask;
    uint8_t len;
    uint32_t gateway; /* 0: connected */
    uint32_t port;
};

struct route6 {
    uint8_t prefix[16]; /* masked to len */
    uint8_t len;
    uint8_t has_gateway; /* 0: connected */
    uint8_t gateway[16];
    uint32_t port;
};

struct neigh {
    uint8_t v6;      /* the key's family: ip (IPv4) or ip6 */
    uint32_t ip;
    uint8_t ip6[16];
    uint32_t port;
    int resolved;
    uint8_t mac[6];
    struct sim_frame *hold_head, *hold_tail;
    uint32_t held;
    uint64_t asked_at;
};

struct brisk_sim_router {
    brisk_sim_world *w;
    char name[32];
    uint32_t index;
    struct sim_rport *ports[PORTS_MAX];
    uint32_t nports;
    struct route routes[ROUTES_MAX + PORTS_MAX]; /* connected routes count apart from the added ones */
    uint32_t nroutes, nadded;
    struct route6 routes6[ROUTES_MAX + PORTS_MAX]; /* the same for IPv6 (router6.c) */
    uint32_t nroutes6, nadded6;
    struct neigh neigh[NEIGH_MAX];
    uint32_t nneigh;
    uint64_t icmp_next; /* the earliest time of the next ICMP error (of either family) */
    struct brisk_sim_router_stats st;
    brisk_sim_router *next;
};

/* Queues f on rp's queueing discipline and feeds the link (router.c). */
void brisk_sim_router_enqueue(struct sim_rport *rp, struct sim_frame *f);

/* The neighbour entry for (port, family, address) — v6 selects ip6, else ip — or NULL; with create, a new
 * unresolved one when there is none (NULL when the table is full). */
struct neigh *brisk_sim_router_neigh(brisk_sim_router *r, uint32_t port, int v6, uint32_t ip, const uint8_t *ip6,
                                     int create);
/* The next hop's MAC became known (or changed): record it and send what waited for it. */
void brisk_sim_router_neigh_resolved(brisk_sim_router *r, struct neigh *n, const uint8_t *mac);
/* Sends f (its Ethernet header to be written) to neighbour n out of its port, or holds it until n resolves
 * (asking with an ARP request or a neighbour solicitation, at most once per ARP_RETRY); `fwd`: count it as
 * forwarded (a datagram of someone else's, not the router's own ICMP). n NULL: the table was full, f is
 * dropped and counted. */
void brisk_sim_router_neigh_output(brisk_sim_router *r, struct neigh *n, struct sim_frame *f, int fwd);

/* IPv6 (router6.c): a frame of EtherType 0x86DD arriving at rp (the router takes it); whether a multicast
 * destination MAC is one rp listens on (the solicited-node groups of its addresses, all-nodes); a
 * neighbour solicitation for n's address out of n's port. */
void brisk_sim_router_rx6(struct sim_rport *rp, struct sim_frame *f);
int brisk_sim_router_mac_wanted6(const struct sim_rport *rp, const uint8_t *mac);
void brisk_sim_router_ns_send(brisk_sim_router *r, const struct neigh *n);

#endif
