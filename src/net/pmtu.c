/*
 * pmtu.c — path MTU discovery's memory (RFC 1191 §6.3): per destination, the MTU an ICMP "fragmentation
 * needed" (destination unreachable, code 4) reported for a datagram of ours.
 *
 * brisk sends every datagram with DF (ip_output.c), so a router whose next link is smaller than a segment
 * drops it and says how large its next hop is (RFC 1191 §4: the "next-hop MTU" field; RFC 1812 §5.2.7.1).
 * TCP validates the message against the connection it names first (RFC 5927 §4.1: a sequence number in
 * flight; icmp_err.c), then the path MTU of that destination is lowered here and the connection's segments
 * shrink (tcp_snd_mss reads it). The rules are Linux's (__ip_rt_update_pmtu, its route exceptions): a
 * reported MTU below `route_min_pmtu` (552) is taken as that floor — a forged ICMP cannot make a connection
 * send 68-byte datagrams; if the path really is smaller, the connection keeps a soft EMSGSIZE error —, an MTU
 * is never raised by a report (only lowered), and an entry expires after `route_mtu_expires` (10 minutes,
 * RFC 1191 §6.3's suggestion), when the device MTU applies again. A report of 0 (a router older than RFC
 * 1191) counts as below the floor, as in Linux (which dropped RFC 1191's plateau table). IPv6's Packet Too
 * Big (RFC 8201, icmp6.c) feeds the same memory: its floor is the IPv6 minimum link MTU, 1280 (RFC 8200 §5),
 * and there is no soft error below it (a smaller report is simply taken as 1280, as Linux does since RFC
 * 8021 retired atomic fragments).
 *
 * A small array per stack, searched linearly: it is read when a connection computes its MSS (its handshake,
 * an ICMP message) and not per packet; with nothing learnt, `used` 0 answers at once. When full, an expired
 * entry or else the one that would expire first makes room.
 */
#include "net/pmtu.h"

#include "core/addr.h"
#include "net/net.h"

#define IPV6_MIN_MTU 1280u

static struct brisk_pmtu_entry *find(struct brisk_pmtu *p, const struct brisk_addr *dst)
{
    for (uint32_t i = 0; i < p->used; i++)
        if (brisk_addr_equal(&p->e[i].dst, dst))
            return &p->e[i];
    return NULL;
}

uint32_t brisk_pmtu_get(struct brisk_net *net, const struct brisk_addr *dst, uint32_t dev_mtu, uint64_t now)
{
    if (!net->pmtu.used)
        return dev_mtu;
    const struct brisk_pmtu_entry *e = find(&net->pmtu, dst);
    if (!e || now >= e->expires || e->mtu >= dev_mtu)
        return dev_mtu;
    return e->mtu;
}

uint32_t brisk_pmtu_update(struct brisk_net *net, const struct brisk_addr *dst, uint32_t mtu, uint32_t dev_mtu,
                           int *below_min, uint64_t now)
{
    struct brisk_pmtu *p = &net->pmtu;
    uint32_t old = brisk_pmtu_get(net, dst, dev_mtu, now);
    *below_min = 0;
    if (dst->family == BRISK_AF_INET6) {
        if (mtu < IPV6_MIN_MTU)
            mtu = IPV6_MIN_MTU;
    } else if (mtu < net->s.route_min_pmtu) {
        *below_min = 1;
        mtu = old < net->s.route_min_pmtu ? old : net->s.route_min_pmtu;
    }
    if (mtu >= old)
        return old; /* a report never raises the path MTU (nor restates it) */
    struct brisk_pmtu_entry *e = find(p, dst);
    if (!e && p->used < BRISK_PMTU_SLOTS)
        e = &p->e[p->used++];
    if (!e) {
        e = &p->e[0];
        for (uint32_t i = 1; i < BRISK_PMTU_SLOTS && e->expires > now; i++)
            if (p->e[i].expires < e->expires)
                e = &p->e[i];
    }
    e->dst = *dst;
    e->mtu = (uint16_t)mtu;
    e->locked = (uint16_t)*below_min;
    e->expires = now + net->s.route_mtu_expires_ns;
    net->c.PmtuLowered++;
    return mtu;
}
