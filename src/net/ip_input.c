/*
 * ip_input.c — IPv4 receive (RFC 791, RFC 1122 §3.2.1 and §3.3).
 *
 * brisk is a host, not a router: a datagram is accepted when its destination is one of the stack's addresses
 * (the weak host model of RFC 1122 §3.3.4.2: any of them, whichever device it came in on), the limited
 * broadcast 255.255.255.255, or the directed broadcast of the receiving device's prefix. Everything else is
 * counted (IpInAddrErrors) and dropped — never forwarded.
 *
 * Header validation is brisk_ipv4_parse()'s job (version, lengths, checksum); a failure is counted by reason
 * (IpInTruncated when the frame is shorter than the declared total length, IpInAddrErrors for a source that
 * cannot be a single host — RFC 1122 §3.2.1.3, checked by the parser — IpInHdrErrors otherwise). A fragment
 * for us goes to reassembly (ipfrag.c, RFC 1122 §3.3.2); the datagram it completes comes back whole and is
 * delivered here as any other, its checksums verified in software (the device's verdict was about one
 * fragment).
 *
 * Delivery trims Ethernet padding (frames shorter than 60 bytes are padded on the wire) by handing the
 * protocol exactly total_len - hdr_len bytes. A protocol without a handler gets an ICMP protocol-unreachable,
 * unless the datagram was a broadcast (RFC 1122 §3.2.2).
 */
#include <stdlib.h>

#include "net/ip.h"
#include "net/ipfrag.h"
#include "net/netdev.h"
#include "wire/icmp.h"
#include "wire/wire.h"

/* A datagram for us, whole: to its protocol. Inline in both callers, so the per-datagram path keeps its
 * shape; the reassembled one's is cold. */
__attribute__((always_inline)) static inline void deliver(struct brisk_net *net, brisk_netdev *dev,
                                                          const struct brisk_ipv4_repr *ip, const uint8_t *p,
                                                          int bcast, unsigned rx_flags, uint64_t now)
{
    const uint8_t *l4 = p + ip->hdr_len;
    size_t l4_len = (size_t)ip->total_len - (size_t)ip->hdr_len;
    if (ip->proto == BRISK_IP_PROTO_ICMP) { /* part of IP itself (RFC 792) */
        net->c.IpInDelivers++;
        brisk_icmp_input(net, dev, ip, l4, l4_len, bcast, now);
        return;
    }
    const struct brisk_ip_proto *tp = &net->ip_proto[ip->proto];
    if (!tp->ops) {
        net->c.IpInUnknownProtos++;
        if (!bcast)
            brisk_icmp_send_error(net, BRISK_ICMP_DEST_UNREACH, 2 /* protocol unreachable */, p,
                                  ip->total_len, now);
        return;
    }
    if (bcast && tp->ops->unicast_only) {
        net->c.IpInAddrErrors++;
        return;
    }
    net->c.IpInDelivers++;
    tp->ops->input(tp->ctx, ip, l4, l4_len, rx_flags | (bcast ? BRISK_IP_RX_BCAST : 0u), now);
}

void brisk_ip_input(struct brisk_net *net, brisk_netdev *dev, const uint8_t *p, size_t len, int l2_bcast,
                    unsigned rx_flags, uint64_t now)
{
    net->c.IpInReceives++;
    struct brisk_ipv4_repr ip;
    int hl = brisk_ipv4_parse(p, len, &ip);
    if (hl < 0) {
        if (hl == BRISK_WIRE_TRUNCATED && len >= BRISK_IPV4_HLEN)
            net->c.IpInTruncated++;
        else if (hl == BRISK_WIRE_BAD_ADDR) /* a source no host may use (the parser's rule) */
            net->c.IpInAddrErrors++;
        else
            net->c.IpInHdrErrors++;
        return;
    }
    int bcast = brisk_netdev_is_broadcast(dev, ip.dst);
    if (!bcast && !brisk_netdev_is_local(net, ip.dst)) {
        net->c.IpInAddrErrors++;
        return;
    }
    bcast |= l2_bcast;
    if (__builtin_expect(brisk_ipv4_is_fragment(&ip), 0)) {
        size_t whole_len;
        uint8_t *whole = brisk_ipfrag_input(net, &ip, p, bcast, &whole_len, now);
        if (!whole)
            return; /* held, or dropped (counted there) */
        struct brisk_ipv4_repr wip;
        if (brisk_ipv4_parse(whole, whole_len, &wip) >= 0)
            deliver(net, dev, &wip, whole, bcast, 0, now);
        free(whole);
        return;
    }
    deliver(net, dev, &ip, p, bcast, rx_flags, now);
}
