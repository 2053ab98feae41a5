/*
 * ip_output.c — IPv4 send: routing, the header, and the hand-off to ARP (RFC 791, RFC 1122 §3.3.1).
 *
 * Routing is what a host needs: the device whose prefix holds the destination (longest prefix), else the
 * default gateway through the device whose prefix holds the gateway. The source address is that device's.
 *
 * Every datagram carries DF: brisk never fragments (its TCP sizes segments to the MTU), so a datagram larger
 * than the device MTU is refused with BRISK_ERR_MSGSIZE — except a GSO super-frame (gso_size > 0) on a device
 * that segments, which the device cuts into MTU-sized frames. The identification field increments per
 * datagram from a seeded random start (RFC 6864 allows any value with DF set; a counter keeps captures
 * readable).
 */
#include "net/ip.h"

#include "net/neigh.h"
#include "net/netdev.h"

int brisk_ip_route(brisk_stack *st, uint32_t dst, struct brisk_route *rt)
{
    brisk_netdev *dev = brisk_netdev_for_addr(st, dst);
    uint32_t nexthop = dst;
    if (!dev && st->gateway) {
        dev = brisk_netdev_for_addr(st, st->gateway);
        nexthop = st->gateway;
    }
    if (!dev && dst == 0xffffffffu && st->ndevs > 0 && st->devs[0].cfg.ip)
        dev = &st->devs[0];
    if (!dev)
        return BRISK_ERR_NOROUTE;
    rt->dev = dev;
    rt->nexthop = nexthop;
    rt->src = dev->cfg.ip;
    return BRISK_OK;
}

int brisk_ip_output(brisk_stack *st, const struct brisk_route *rt, uint32_t dst, uint8_t proto, uint8_t tos,
                    brisk_pkt *pkt, uint64_t now)
{
    struct brisk_route local;
    if (!rt) {
        if (brisk_ip_route(st, dst, &local) != BRISK_OK) {
            st->c.IpOutNoRoutes++;
            brisk_pkt_free(&st->pool, pkt);
            return BRISK_ERR_NOROUTE;
        }
        rt = &local;
    }
    brisk_netdev *dev = rt->dev;
    uint32_t total = pkt->len + BRISK_IPV4_HLEN;
    int gso = pkt->gso_size && (dev->cfg.caps & BRISK_NETDEV_CAP_GSO);
    if (total > 65535 || (total > dev->cfg.mtu && !(gso && total <= dev->cfg.gso_max_size))) {
        st->c.IpOutDiscards++;
        brisk_pkt_free(&st->pool, pkt);
        return BRISK_ERR_MSGSIZE;
    }
    struct brisk_ipv4_repr ip = {
        .hdr_len = BRISK_IPV4_HLEN,
        .tos = tos,
        .total_len = (uint16_t)total,
        .id = st->ip.next_id++,
        .df = 1,
        .ttl = (uint8_t)st->s.ip_default_ttl,
        .proto = proto,
        .src = rt->src,
        .dst = dst,
    };
    brisk_ipv4_emit(brisk_pkt_push(pkt, BRISK_IPV4_HLEN), &ip);
    st->c.IpOutRequests++;
    return brisk_neigh_output(st, dev, rt->nexthop, pkt, now);
}
