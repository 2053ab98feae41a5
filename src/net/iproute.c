/*
 * iproute.c — the family-generic route lookup and output (iproute.h): each is its family's own function,
 * chosen by the destination's family.
 */
#include "net/iproute.h"

#include "net/ip.h"
#include "net/ip6.h"
#include "net/ndisc.h"
#include "net/neigh.h"

int brisk_route_lookup(struct brisk_net *net, const struct brisk_addr *dst, struct brisk_route *rt)
{
    if (dst->family == BRISK_AF_INET)
        return brisk_ip_route(net, dst->u.v4, rt);
    if (dst->family == BRISK_AF_INET6 && net->s.ipv6)
        return brisk_ip6_route(net, dst->u.v6, rt);
    return BRISK_ERR_AFNOSUPPORT;
}

int brisk_route_output(struct brisk_net *net, const struct brisk_route *rt, const struct brisk_addr *dst,
                       uint8_t proto, uint8_t tos, brisk_pkt *pkt, uint64_t now)
{
    if (dst->family == BRISK_AF_INET6)
        return brisk_ip6_output(net, rt, dst->u.v6, proto, 0, tos, pkt, now);
    return brisk_ip_output(net, rt, dst->u.v4, proto, tos, pkt, now);
}

void brisk_route_confirm(struct brisk_net *net, const struct brisk_route *rt, uint64_t now)
{
    if (rt->nexthop.family == BRISK_AF_INET6)
        brisk_nd_confirm(net, rt->nexthop.u.v6, now);
}

int brisk_route_admit(struct brisk_net *net, const struct brisk_route *rt, uint64_t now)
{
    if (rt->nexthop.family == BRISK_AF_INET)
        return brisk_neigh_admit(net, rt->dev, rt->nexthop.u.v4, now);
    return 1;
}
