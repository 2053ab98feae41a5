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

#include "core/addr.h"
#include "net/neigh.h"
#include "net/netdev.h"

int brisk_ip_route(struct brisk_net *net, uint32_t dst, struct brisk_route *rt)
{
    brisk_netdev *dev = brisk_netdev_for_addr(net, dst);
    uint32_t nexthop = dst;
    if (!dev && net->gateway) {
        dev = brisk_netdev_for_addr(net, net->gateway);
        nexthop = net->gateway;
    }
    if (!dev && dst == 0xffffffffu && net->ndevs > 0 && net->devs[0].cfg.ip)
        dev = &net->devs[0];
    if (!dev)
        return BRISK_ERR_NOROUTE;
    rt->dev = dev;
    rt->nexthop = brisk_addr4(nexthop);
    rt->src = brisk_addr4(dev->cfg.ip);
    return BRISK_OK;
}

int brisk_ip_output(struct brisk_net *net, const struct brisk_route *rt, uint32_t dst, uint8_t proto,
                    uint8_t tos, brisk_pkt *pkt, uint64_t now)
{
    struct brisk_route local;
    if (!rt) {
        if (brisk_ip_route(net, dst, &local) != BRISK_OK) {
            net->c.IpOutNoRoutes++;
            brisk_pkt_free(&net->pool, pkt);
            return BRISK_ERR_NOROUTE;
        }
        rt = &local;
    }
    brisk_netdev *dev = rt->dev;
    uint32_t total = pkt->len + BRISK_IPV4_HLEN;
    int gso = pkt->gso_size && (dev->cfg.caps & BRISK_NETDEV_CAP_GSO);
    if (total > 65535 || (total > dev->cfg.mtu && !(gso && total <= dev->cfg.gso_max_size))) {
        net->c.IpOutDiscards++;
        brisk_pkt_free(&net->pool, pkt);
        return BRISK_ERR_MSGSIZE;
    }
    struct brisk_ipv4_repr ip = {
        .hdr_len = BRISK_IPV4_HLEN,
        .tos = tos,
        .total_len = (uint16_t)total,
        .id = net->ip.next_id++,
        .df = 1,
        .ttl = (uint8_t)net->s.ip_default_ttl,
        .proto = proto,
        .src = rt->src.u.v4,
        .dst = dst,
    };
    brisk_ipv4_emit(brisk_pkt_push(pkt, BRISK_IPV4_HLEN), &ip);
    net->c.IpOutRequests++;
    return brisk_neigh_output(net, dev, rt->nexthop.u.v4, pkt, now);
}
