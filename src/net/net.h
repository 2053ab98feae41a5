/*
 * net.h — the network layer's instance: what one stack's IP layer and everything above it share. It is to
 * brisk what Linux's `struct net` is to a network namespace: the settings (Linux keeps its sysctls there),
 * the counters (its MIBs), the packet pool, the timer wheel, the PRNG and the clock, then the devices, the
 * routes, the ARP cache, receive coalescing, reassembly and ICMP's state.
 *
 * The layers, bottom up, and what each may include (scripts/layering.sh checks it in `make test`):
 *
 *   core   utilities with no stack in them: pool, slab, timer wheel, PRNG, settings, units, event queue
 *   wire   parsers and emitters of packet formats
 *   net    this struct; devices, ARP and ND, IPv4 and IPv6 in and out, ICMP and ICMPv6, GRO / GSO,
 *          reassembly, path MTUs
 *   tcp    the transports, given a struct brisk_net to run on; udp beside it (neither includes the other)
 *   stack  struct brisk_stack (src/stack/): creation, the entry points, event delivery
 *
 * A layer calls down directly and up only through what the layer above registered: the transport protocols
 * sit in `ip_proto`, a table indexed by IP protocol number that the stack fills at creation (TCP's and UDP's
 * entries), which ip_input.c, ip6_input.c, icmp.c and gro.c call through. A protocol's per-stack state is the table entry's
 * `ctx` (as Linux's net_generic slots): TCP finds its own with tcp_of() (tcp.h).
 */
#ifndef BRISK_NET_NET_H
#define BRISK_NET_NET_H

#include <stddef.h>
#include <stdint.h>

#include "brisk/brisk.h"
#include "brisk/netdev.h"
#include "core/pktbuf.h"
#include "core/rand.h"
#include "core/timer.h"
#include "net/ndisc.h"
#include "net/neigh.h"
#include "net/netdev.h"
#include "net/pmtu.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"
#include "wire/tcp.h"

#define BRISK_MAX_NETDEVS 8

struct brisk_gro_piece;

/* What a transport protocol gives the IP layer. Every handler gets the entry's ctx. */
struct brisk_ip_proto_ops {
    /* A datagram for us, whole (p is its transport header, len its transport bytes); `rx_flags`:
     * BRISK_RX_* from the device. */
    void (*input)(void *ctx, const struct brisk_ipv4_repr *ip, const uint8_t *p, size_t len,
                  unsigned rx_flags, uint64_t now);
    /* An ICMP error quoting a datagram of this protocol: `quoted` its IPv4 header, `l4` the first `len`
     * (>= 8) bytes after it; `info` the next-hop MTU of a "fragmentation needed" (RFC 1191), else 0. */
    void (*icmp_error)(void *ctx, uint8_t type, uint8_t code, uint32_t info, const struct brisk_ipv4_repr *quoted,
                       const uint8_t *l4, size_t len, uint64_t now);
    /* Receive coalescing's merged segment (net/gro.c: TCP only, either family), `id` its connection seen
     * from here (laddr the destination; the ports are seg's): 0 when nobody takes it whole — the caller then
     * hands each frame to input / input6 — else 1. NULL: the protocol's datagrams are never coalesced. */
    int (*gro_input)(void *ctx, const struct brisk_tuple *id, const struct brisk_tcp_repr *seg,
                     const struct brisk_gro_piece *pieces, uint32_t n, uint64_t now);
    /* Datagrams to a broadcast address are address errors, not input (TCP: RFC 1122 §4.2.3.10). */
    uint8_t unicast_only;
    /* An IPv6 packet for us (net/ip6_input.c): p its upper-layer header, len its bytes (extension headers
     * walked). NULL: the protocol does not run over IPv6 yet — parameter problem code 1, as for a
     * protocol nobody registered. */
    void (*input6)(void *ctx, const struct brisk_ipv6_repr *ip, const uint8_t *p, size_t len,
                   unsigned rx_flags, uint64_t now);
    /* An ICMPv6 error (RFC 4443) quoting an IPv6 packet of this protocol: `quoted` its fixed header, `l4` the
     * first `len` (>= 8) bytes of its upper-layer header (extension headers walked); `info` the MTU of a
     * packet too big, the pointer of a parameter problem, else 0. NULL: errors are counted and dropped. */
    void (*icmp6_error)(void *ctx, uint8_t type, uint8_t code, uint32_t info, const struct brisk_ipv6_repr *quoted,
                        const uint8_t *l4, size_t len, uint64_t now);
};

/* An input flag the IP layer adds to the device's: the datagram came to a broadcast address or MAC (never
 * answer it with an ICMP error, RFC 1122 §3.2.2). */
#define BRISK_IP_RX_BCAST 0x80000000u

struct brisk_ip_proto {
    const struct brisk_ip_proto_ops *ops; /* NULL: no such protocol here (ICMP protocol unreachable) */
    void *ctx;
};

struct brisk_net {
    struct brisk_settings s;        /* copied at creation */
    struct brisk_counters c;        /* event counters (timer counts come from the wheel) */
    struct brisk_pktpool pool;      /* every packet buffer */
    struct brisk_timer_wheel wheel; /* every timer */
    struct brisk_rand rand;         /* seeded from s.seed */
    uint64_t now;                   /* latest time seen by an entry point */

    brisk_netdev devs[BRISK_MAX_NETDEVS];
    uint32_t ndevs;
    uint32_t gateway; /* default gateway, 0 = none */

    struct brisk_neigh_table neigh; /* ARP cache */
    struct brisk_gro *gro;          /* receive coalescing's open runs (net/gro.c) */
    struct brisk_ipfrag *ipfrag;    /* IPv4 reassembly (net/ipfrag.c) */
    struct brisk_ipfrag *ip6frag;   /* IPv6 reassembly (net/ipfrag.c too: its own bound and timeout) */
    struct brisk_pmtu pmtu;         /* path MTUs ICMP taught (net/pmtu.c) */
    uint8_t tx_wake_wanted;         /* a sender was refused (device busy, no buffer): wake it on completion */
    uint8_t tx_wake;                /* a completion came since: the stack's poll runs the refused senders */

    struct {
        uint16_t next_id; /* IPv4 identification counter */
    } ip;

    struct {
        brisk_echo_fn echo_fn; /* echo-reply callback (tools) */
        void *echo_ctx;
        uint64_t tokens_ns; /* error rate limit bucket, in ns of credit */
        uint64_t tokens_at; /* time the bucket was last refilled */
    } icmp;

    /* IPv6 (net/ip6_*.c, icmp6.c, ndisc.c), while the ipv6 setting is on. */
    struct brisk_nd_table nd; /* the neighbour cache */
    struct {
        brisk_netdev *gw_dev;       /* default router's device, NULL = none */
        uint8_t gw[16];             /* default router (usually link-local) */
        uint8_t gw_static;          /* set by brisk_stack_set_gateway6: an RA does not replace it */
        uint64_t gw_expires;        /* an RA's router lifetime; UINT64_MAX for a static router */
        brisk_echo_addr_fn echo_fn; /* echo-reply callback of either family (tools) */
        void *echo_ctx;
        uint64_t tokens_ns; /* ICMPv6 error rate limit bucket (icmp_ratelimit, its own bucket) */
        uint64_t tokens_at;
    } ip6;

    struct brisk_ip_proto ip_proto[256]; /* transport protocols by IP protocol number */
};

/* The layer's state from `s` (checked: brisk_settings_check), its pool, wheel and PRNG, ARP, GRO and
 * reassembly: BRISK_OK, BRISK_ERR_RANGE or BRISK_ERR_NOMEM. destroy is safe after a failed init. */
int brisk_net_init(struct brisk_net *net, const struct brisk_settings *s);
void brisk_net_destroy(struct brisk_net *net);

/* Registers `proto`'s handlers (BRISK_ERR_INVAL if ops has no input, BRISK_ERR_EXIST if taken). */
int brisk_net_proto_add(struct brisk_net *net, uint8_t proto, const struct brisk_ip_proto_ops *ops,
                        void *ctx);

/* Advances the layer's notion of time (never backwards) and returns it. */
static inline uint64_t brisk_net_clock(struct brisk_net *net, uint64_t now)
{
    if (now > net->now)
        net->now = now;
    return net->now;
}

/* One received frame through Ethernet, ARP / IPv4 and up, counted (arguments checked and clock advanced by
 * the caller; socket events are left for the caller to deliver). */
void brisk_net_rx_one(struct brisk_net *net, brisk_netdev *dev, const uint8_t *frame, size_t len,
                      unsigned flags, uint64_t now);

#endif
