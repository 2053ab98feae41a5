/*
 * ip6_output.c — IPv6 send: routing, source selection, the fixed header, and the hand-off to Neighbour
 * Discovery (RFC 8200 §3, RFC 4861 §5.2, RFC 6724's rules that matter to a host with few addresses).
 *
 * Routing is a host's (RFC 4861 §5.2's conceptual sending algorithm): a destination in an on-link prefix
 * (one of the device's address prefixes, or one a router advertisement taught) is its own next hop; anything
 * else goes to the default router. Link-local destinations, and link-scope multicast, leave through the
 * first IPv6 device: struct brisk_addr has no zone index, so with several devices a link-local peer is only
 * reachable on the first — a limit docs/ipv6.md states.
 *
 * Source selection keeps to RFC 6724's first rules that a few static addresses exercise: the same scope as
 * the destination (rule 2: link-local to link-local), then the longest matching prefix (rule 8), which for
 * a host is "the address on the destination's subnet".
 *
 * brisk never fragments (RFC 8200 §5: only the source may, and its TCP will size segments to the path): a
 * packet larger than the device MTU is refused with BRISK_ERR_MSGSIZE. The flow label is 0 and the traffic
 * class 0 (RFC 6437 allows 0; a flow label per connection comes with TCP over IPv6).
 */
#include <string.h>

#include "net/ip6.h"

#include "core/addr.h"
#include "net/ndisc.h"
#include "net/netdev.h"

static unsigned common_prefix(const uint8_t a[16], const uint8_t b[16])
{
    unsigned n = 0;
    for (unsigned i = 0; i < 16; i++) {
        uint8_t x = a[i] ^ b[i];
        if (!x) {
            n += 8;
            continue;
        }
        while (!(x & 0x80)) {
            n++;
            x = (uint8_t)(x << 1);
        }
        break;
    }
    return n;
}

void brisk_ip6_select_src(const brisk_netdev *dev, const uint8_t dst[16], uint8_t src[16])
{
    int ll = brisk_ipv6_is_link_local(dst) || (brisk_ipv6_is_multicast(dst) && (dst[1] & 0x0f) <= 2);
    int best = -1;
    unsigned best_len = 0;
    for (uint32_t i = 0; i < dev->nip6; i++) {
        if (brisk_ipv6_is_link_local(dev->ip6[i].addr) != ll)
            continue;
        unsigned l = common_prefix(dev->ip6[i].addr, dst);
        if (best < 0 || l > best_len) {
            best = (int)i;
            best_len = l;
        }
    }
    memcpy(src, dev->ip6[best >= 0 ? best : 0].addr, 16);
}

static brisk_netdev *first_ip6_dev(struct brisk_net *net)
{
    for (uint32_t i = 0; i < net->ndevs; i++)
        if (net->devs[i].nip6)
            return &net->devs[i];
    return NULL;
}

int brisk_ip6_route(struct brisk_net *net, const uint8_t dst[16], struct brisk_route *rt)
{
    brisk_netdev *dev = NULL;
    const uint8_t *nexthop = dst;
    if (brisk_ipv6_is_link_local(dst) || brisk_ipv6_is_multicast(dst)) {
        dev = first_ip6_dev(net);
    } else {
        for (uint32_t i = 0; i < net->ndevs && !dev; i++)
            if (net->devs[i].nip6 && brisk_netdev_ip6_onlink(&net->devs[i], dst, net->now))
                dev = &net->devs[i];
        if (!dev && net->ip6.gw_dev && net->now < net->ip6.gw_expires) {
            dev = net->ip6.gw_dev;
            nexthop = net->ip6.gw;
        }
    }
    if (!dev)
        return BRISK_ERR_NOROUTE;
    rt->dev = dev;
    rt->nexthop = brisk_addr6(nexthop);
    uint8_t src[16];
    brisk_ip6_select_src(dev, dst, src);
    rt->src = brisk_addr6(src); /* whole: its reserved bytes zero (core/addr.h) */
    return BRISK_OK;
}

int brisk_ip6_output(struct brisk_net *net, const struct brisk_route *rt, const uint8_t dst[16], uint8_t proto,
                     uint8_t hop_limit, uint8_t tclass, brisk_pkt *pkt, uint64_t now)
{
    brisk_netdev *dev = rt->dev;
    uint32_t total = pkt->len + BRISK_IPV6_HLEN;
    int gso = pkt->gso_size && (dev->cfg.caps & BRISK_NETDEV_CAP_GSO); /* the device cuts it (as IPv4's) */
    if (pkt->len > 65535 || (total > dev->cfg.mtu && !(gso && total <= dev->cfg.gso_max_size))) {
        net->c.Ip6OutDiscards++;
        brisk_pkt_free(&net->pool, pkt);
        return BRISK_ERR_MSGSIZE;
    }
    struct brisk_ipv6_repr ip = {
        .payload_len = (uint16_t)pkt->len,
        .traffic_class = tclass,
        .next_header = proto,
        .hop_limit = hop_limit ? hop_limit : (uint8_t)net->s.ip_default_ttl,
    };
    memcpy(ip.src, rt->src.u.v6, 16);
    memcpy(ip.dst, dst, 16);
    brisk_ipv6_emit(brisk_pkt_push(pkt, BRISK_IPV6_HLEN), &ip);
    net->c.Ip6OutRequests++;
    return brisk_nd_output(net, dev, rt->nexthop.u.v6, pkt, now);
}
