/*
 * ip6_input.c — IPv6 receive for a host (RFC 8200 §3 – §4, RFC 4291 §2.8, RFC 4443 §3.4).
 *
 * A packet is taken when its destination is one of the receiving device's addresses (link-local ones are
 * only good on their own link), a global address of another device (the weak host model, as IPv4's), or a
 * group the device has joined: all-nodes ff02::1 and the solicited-node group of each of its addresses
 * (RFC 4291 §2.8; net.c takes the frames to their 33:33 MACs). Everything else is Ip6InAddrErrors — never
 * forwarded. The fixed header is brisk_ipv6_parse's (version, lengths, a source no node may use), failures
 * counted by reason as IPv4's are.
 *
 * The extension headers are walked by brisk_ipv6_ext_walk (wire/ipv6.c holds RFC 8200's verdicts and the
 * bounds): a malformed chain is Ip6InHdrErrors, answered with the parameter problem the walker names; an
 * option or routing header that asks for the packet's discard is Ip6InHdrErrors too, with the parameter
 * problem its type bits ask for (RFC 8200 §4.2, §4.4). Errors go through icmp6.c's rules and rate limit.
 *
 * Fragments go to reassembly (net/ipfrag.c, the one IPv4 uses, with IPv6's key, ip6frag_high_thresh and
 * ip6frag_time): the packet it completes comes back whole and goes through the walk again — its
 * fragmentable part's extension headers are seen for the first time — then to delivery, with no checksum
 * verdict from the device. A fragment header in a reassembled packet would be a second one (a source
 * fragments once, as the walker rules within one packet): Ip6InHdrErrors — the walk of the first fragment,
 * which holds the whole chain, already refused it. An atomic fragment (offset 0, M 0) is a
 * whole packet, delivered at once with no queue (RFC 6946 §4), and counted as Linux counts it (one
 * Ip6ReasmReqds, one Ip6ReasmOKs). The walker's per-fragment verdicts (a length not a multiple of 8, past
 * 65,535 bytes, a first fragment without the whole chain: RFC 8200 §4.5, RFC 7112) are parameter
 * problems, Ip6InHdrErrors, and Ip6ReasmReqds as in Linux. brisk itself never fragments.
 *
 * Delivery: ICMPv6 is part of IPv6 (icmp6.c); No Next Header ends the packet (Ip6InDiscards); any other
 * protocol goes through the protocol table's input6 handler with exactly its upper-layer bytes (Ethernet
 * padding and the chain left out; TCP's and UDP's). A protocol with none is Ip6InUnknownProtos, answered with a parameter problem code 1 pointing at the Next Header field that named
 * it (RFC 8200 §4, RFC 4443 §3.4), not to a multicast destination.
 */
#include <stdlib.h>
#include <string.h>

#include "net/ip6.h"
#include "net/ipfrag.h"
#include "net/netdev.h"
#include "wire/wire.h"

static int for_us(struct brisk_net *net, brisk_netdev *dev, const uint8_t dst[16], int *mcast)
{
    *mcast = 0;
    if (brisk_ipv6_is_multicast(dst)) {
        *mcast = 1;
        return brisk_netdev_ip6_joined(dev, dst);
    }
    if (brisk_netdev_ip6_is_mine(dev, dst))
        return 1;
    if (brisk_ipv6_is_link_local(dst))
        return 0;
    for (uint32_t i = 0; i < net->ndevs; i++)
        if (&net->devs[i] != dev && brisk_netdev_ip6_is_mine(&net->devs[i], dst))
            return 1;
    return 0;
}

/* The walker's rulings that are about a fragment: Linux counts such a fragment in Ip6ReasmReqds. */
static int bad_fragment(unsigned bad)
{
    return bad == BRISK_IPV6_BAD_FRAG_LEN || bad == BRISK_IPV6_BAD_FRAG_SIZE || bad == BRISK_IPV6_BAD_FRAG_CHAIN;
}

/* The packet p[0, end) after its destination check: the walk's verdict, reassembly, delivery.
 * `reassembled`: p is what reassembly made of fragments (rx_flags 0). */
static void process(struct brisk_net *net, brisk_netdev *dev, const struct brisk_ipv6_repr *ip, const uint8_t *p,
                    size_t end, int l2_mcast, int mcast, int reassembled, unsigned rx_flags, uint64_t now)
{
    struct brisk_ipv6_ext x;
    int rc = brisk_ipv6_ext_walk(p, end, ip, &x);
    if (rc < 0 || x.discard) {
        net->c.Ip6InHdrErrors++;
        if (rc < 0 && bad_fragment(x.bad))
            net->c.Ip6ReasmReqds++;
        if (x.icmp) /* the walker applied §2.4 (e.3); code 2 with type bits 10 goes even to multicast */
            brisk_icmp6_send_error(net, dev, BRISK_ICMP6_PARAM_PROB, x.icmp_code, x.icmp_ptr, p, end, l2_mcast,
                                   x.opt_action == BRISK_IPV6_OPT_DISCARD_ICMP, now);
        return;
    }
    if (x.frag && reassembled) { /* fragmented twice: the first fragment's walk (RFC 7112) meets it first */
        net->c.Ip6InHdrErrors++;
        return;
    }
    if (x.frag_atomic) {
        net->c.Ip6ReasmReqds++;
        net->c.Ip6ReasmOKs++;
    } else if (x.frag) {
        size_t whole_len;
        uint8_t *whole = brisk_ip6frag_input(net, dev, ip, &x, p, end, l2_mcast, &whole_len, now);
        if (!whole)
            return; /* held, or dropped (counted there) */
        struct brisk_ipv6_repr wip;
        if (brisk_ipv6_parse(whole, whole_len, &wip) >= 0)
            process(net, dev, &wip, whole, whole_len, l2_mcast, mcast, 1, 0, now);
        free(whole);
        return;
    }
    const uint8_t *l4 = p + x.proto_off;
    size_t l4_len = end - x.proto_off;
    if (x.proto == BRISK_IP_PROTO_ICMPV6) {
        net->c.Ip6InDelivers++;
        brisk_icmp6_input(net, dev, ip, l4, l4_len, now);
        return;
    }
    if (x.proto == BRISK_IP_PROTO_NONE) {
        net->c.Ip6InDiscards++;
        return;
    }
    const struct brisk_ip_proto *tp = &net->ip_proto[x.proto];
    if (!tp->ops || !tp->ops->input6) {
        net->c.Ip6InUnknownProtos++;
        brisk_icmp6_send_error(net, dev, BRISK_ICMP6_PARAM_PROB, BRISK_IPV6_PP_NEXTHDR, x.nh_ptr, p, end,
                               l2_mcast, 0, now);
        return;
    }
    if (mcast && tp->ops->unicast_only) {
        net->c.Ip6InAddrErrors++;
        return;
    }
    net->c.Ip6InDelivers++;
    /* A frame to a link-layer multicast or broadcast MAC is marked, so that no transport answers it with an
     * error (RFC 4443 §2.4 (e.3)) */
    tp->ops->input6(tp->ctx, ip, l4, l4_len, rx_flags | (l2_mcast ? BRISK_IP_RX_BCAST : 0u), now);
}

void brisk_ip6_input(struct brisk_net *net, brisk_netdev *dev, const uint8_t *p, size_t len, int l2_mcast,
                     unsigned rx_flags, uint64_t now)
{
    net->c.Ip6InReceives++;
    struct brisk_ipv6_repr ip;
    int hl = brisk_ipv6_parse(p, len, &ip);
    if (hl < 0) {
        if (hl == BRISK_WIRE_TRUNCATED && len >= BRISK_IPV6_HLEN)
            net->c.Ip6InTruncatedPkts++;
        else if (hl == BRISK_WIRE_BAD_ADDR)
            net->c.Ip6InAddrErrors++;
        else
            net->c.Ip6InHdrErrors++;
        return;
    }
    int mcast;
    if (!for_us(net, dev, ip.dst, &mcast)) {
        net->c.Ip6InAddrErrors++;
        return;
    }
    if (mcast)
        net->c.Ip6InMcastPkts++;
    size_t end = BRISK_IPV6_HLEN + (size_t)ip.payload_len; /* Ethernet padding beyond it is not ours */
    process(net, dev, &ip, p, end, l2_mcast, mcast, 0, rx_flags, now);
}
