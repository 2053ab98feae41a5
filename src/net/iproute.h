/*
 * iproute.h (internal) — where a packet to a destination leaves, for either family: the device, the next hop
 * on its link and our source address there. IPv4's lookup is ip_output.c's (a connected prefix, else the
 * default gateway), IPv6's ip6_output.c's (link-local scope, an on-link prefix, else the default router);
 * a transport that holds a route (TCP caches one per connection) calls the family-generic pair below and
 * never branches on the family itself.
 */
#ifndef BRISK_NET_IPROUTE_H
#define BRISK_NET_IPROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "brisk/brisk.h"
#include "core/pktbuf.h"
#include "net/netdev.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"

struct brisk_net;

struct brisk_route {
    brisk_netdev *dev;
    struct brisk_addr nexthop; /* the neighbour the frame goes to: the destination itself, or a router */
    struct brisk_addr src;     /* our address toward the destination (its family is the route's) */
};

/* The route to dst (BRISK_AF_INET or BRISK_AF_INET6): BRISK_OK, BRISK_ERR_NOROUTE, or BRISK_ERR_AFNOSUPPORT
 * for an unspecified family or IPv6 while the ipv6 setting is off. */
int brisk_route_lookup(struct brisk_net *net, const struct brisk_addr *dst, struct brisk_route *rt);

/* Sends pkt (pkt->data at the transport header, len = transport bytes) to dst along rt (of dst's family),
 * with IPv4's TOS or IPv6's traffic class `tos`: brisk_ip_output or brisk_ip6_output. Takes ownership of
 * pkt; their return values. */
int brisk_route_output(struct brisk_net *net, const struct brisk_route *rt, const struct brisk_addr *dst,
                       uint8_t proto, uint8_t tos, brisk_pkt *pkt, uint64_t now);

/* 0 when a packet along rt would surely be refused now for want of a neighbour entry (counted as the
 * refusal would be), else 1: a stateless reply (a SYN cookie) need not be built only to be dropped. IPv4's
 * ARP knows (brisk_neigh_admit); IPv6's ND queues or refuses at output, so it says 1. */
int brisk_route_admit(struct brisk_net *net, const struct brisk_route *rt, uint64_t now);

/* Forward progress along rt (a transport's reachability confirmation, RFC 4861 §7.3.1): IPv6's neighbour
 * entry for the next hop is confirmed (brisk_nd_confirm). IPv4's ARP takes no upper-layer confirmation yet:
 * a no-op. */
void brisk_route_confirm(struct brisk_net *net, const struct brisk_route *rt, uint64_t now);

/* The network header's length on this route (IPv4 without options, or IPv6's fixed header). */
static inline size_t brisk_route_l3_hlen(const struct brisk_route *rt)
{
    return rt->src.family == BRISK_AF_INET6 ? BRISK_IPV6_HLEN : BRISK_IPV4_HLEN;
}

#endif
