/*
 * input.c — UDP receive over IPv4 and IPv6 (RFC 768; RFC 1122 §4.1.3; RFC 8200 §8.1): demultiplexing, the
 * per-socket receive queue, ICMP and ICMPv6 port unreachable for a port nobody has, and ICMP and ICMPv6
 * errors about datagrams we sent.
 *
 * Counters. Each datagram counts in its family's MIB, as Linux counts by the packet and not by the socket:
 * UdpInDatagrams, UdpNoPorts, UdpInErrors, UdpRcvbufErrors, UdpInCsumErrors for IPv4 (a datagram taken by
 * a socket on :: included), Udp6* (Linux's /proc/net/snmp6 names) for IPv6.
 *
 * Checks. The header is parsed with bounds (wire/udp.h): a datagram shorter than its length field or with a
 * length below 8 is malformed (UdpInErrors); bytes after the length field's end are not UDP's and are
 * ignored. The checksum is verified unless the device vouched for it (BRISK_RX_CSUM_VALID); a wrong one
 * drops the datagram, counted in UdpInCsumErrors and UdpInErrors as Linux counts it (RFC 1122 §4.1.3.4: a
 * datagram with a bad checksum MUST be discarded silently). A checksum field of 0 is "none" over IPv4 (RFC
 * 768) and accepted; over IPv6 the checksum is mandatory (RFC 8200 §8.1), and a zero field is dropped
 * whatever the device said, in Udp6InCsumErrors and Udp6InErrors and without an ICMPv6 error, as Linux's
 * __udp6_lib_rcv drops it (brisk has no RFC 6935 zero-checksum tunnels). A length field of 0 is malformed
 * too: Linux reads it as a jumbogram's (RFC 2675) and takes the IPv6 payload's length; brisk takes no
 * jumbograms.
 *
 * No socket. A datagram for a port with no socket is counted (UdpNoPorts, Udp6NoPorts) and answered with
 * ICMP port unreachable (RFC 1122 §4.1.3.1) or ICMPv6 destination unreachable code 4 (RFC 4443 §3.1),
 * through the network layer's error senders and their rate limits — except a datagram that came to a
 * broadcast address or a broadcast MAC (RFC 1122 §3.2.2: never an error about one), which the IP layer flags
 * in rx_flags (BRISK_IP_RX_BCAST; for IPv6 a link-layer multicast frame, RFC 4443 §2.4 (e.3)), or to an
 * IPv6 multicast group (RFC 4443 §2.4 (e.2), icmp6.c's rule).
 * Linux counts those in UdpIgnoredMulti / Udp6IgnoredMulti; brisk in the NoPorts counters.
 *
 * The receive queue holds pool packets, each the sender then the payload, copied from the frame (the stack
 * keeps no frame after input returns). It is charged their truesize against the socket's rcvbuf with
 * Linux's rule (__udp_enqueue_schedule_skb): a datagram is taken while what is queued does not exceed
 * rcvbuf, so the queue overshoots it by one datagram at most and a buffer smaller than a datagram still
 * takes one. Beyond, or with the pool exhausted, the datagram is dropped: UdpRcvbufErrors and UdpInErrors.
 *
 * ICMP errors (RFC 1122 §4.1.3.3: UDP MUST pass them to the application; RFC 4443 §3 for ICMPv6). The
 * quoted datagram names the socket: our address and port as its source, the peer's as its destination. As
 * Linux does for a socket without IP_RECVERR / IPV6_RECVERR, only a connected socket whose peer the quote
 * names is told, and only of the hard errors — icmp_err_convert's and icmpv6_err_convert's "fatal" ones:
 * over IPv4 port or protocol unreachable, an administratively prohibited or unknown destination, a parameter
 * problem; over IPv6 port unreachable (ECONNREFUSED), administratively prohibited, source address policy or
 * reject route (Linux's EACCES, BRISK_ERR_UNREACH here), an unknown code and a parameter problem (EPROTO):
 * the error is kept on the socket, read once, and BRISK_EV_ERROR raised. Soft ones (net or host
 * unreachable, time exceeded; IPv6's no route, beyond scope, address unreachable) are transient and a
 * datagram protocol has no retransmission to fail, so they are dropped. "Fragmentation needed" (RFC 1191)
 * and Packet Too Big (RFC 8201) lower the path MTU (net/pmtu.c), which the next larger send meets as
 * BRISK_ERR_MSGSIZE, and a connected socket is told EMSGSIZE at once, as Linux tells one whose
 * IP_MTU_DISCOVER / IPV6_MTU_DISCOVER is its default "want". A quote that names no socket of ours is
 * counted (IcmpInErrors, Icmp6InErrors), as Linux's __udp4_lib_err and __udp6_lib_err count it.
 */
#include <string.h>

#include "core/addr.h"
#include "net/ip.h"
#include "net/ip6.h"
#include "net/iproute.h"
#include "udp/udp.h"
#include "wire/icmp.h"
#include "wire/icmp6.h"
#include "wire/udp.h"
#include "wire/wire.h"

void udp_rq_purge(brisk_udp *u)
{
    while (u->rq_head) {
        brisk_pkt *p = u->rq_head;
        u->rq_head = p->next;
        brisk_pkt_free(&u->net->pool, p);
    }
    u->rq_tail = NULL;
    u->rq_bytes = 0;
    u->rq_len = 0;
}

/* A datagram's counters: Linux's UDP MIB for one carried by IPv4 (to a socket bound to :: too, as Linux
 * counts by the datagram, not the socket), its UDP6 MIB for one carried by IPv6. */
#define COUNT(net, v6, name) ((v6) ? (net)->c.Udp6##name++ : (net)->c.Udp##name++)

static void enqueue(brisk_udp *u, const struct brisk_addr *from, const struct brisk_udp_repr *r, int v6)
{
    struct brisk_net *net = u->net;
    if (u->rq_bytes > u->rcvbuf) {
        COUNT(net, v6, RcvbufErrors);
        COUNT(net, v6, InErrors);
        return;
    }
    uint32_t n = (uint32_t)(sizeof(struct brisk_udp_meta) + r->payload_len);
    brisk_pkt *pkt = brisk_pkt_alloc(&net->pool, n);
    if (!pkt) {
        COUNT(net, v6, RcvbufErrors);
        COUNT(net, v6, InErrors);
        return;
    }
    struct brisk_udp_meta m = {.from = *from, .port = r->sport};
    uint8_t *d = brisk_pkt_put(pkt, n);
    memcpy(d, &m, sizeof(m));
    if (r->payload_len)
        memcpy(d + sizeof(m), r->payload, r->payload_len);
    pkt->next = NULL;
    if (u->rq_tail)
        u->rq_tail->next = pkt;
    else
        u->rq_head = pkt;
    u->rq_tail = pkt;
    u->rq_bytes += brisk_pkt_truesize(pkt);
    u->rq_len++;
    COUNT(net, v6, InDatagrams);
    udp_raise(u, BRISK_EV_READABLE);
}

static void udp_input(void *ctx, const struct brisk_ipv4_repr *ip, const uint8_t *p, size_t len,
                      unsigned rx_flags, uint64_t now)
{
    struct brisk_udp_table *t = ctx;
    struct brisk_net *net = t->net;
    struct brisk_udp_repr r;
    int rc = brisk_udp_parse(p, len, ip->src, ip->dst, !(rx_flags & BRISK_RX_CSUM_VALID), &r);
    if (rc < 0) {
        if (rc == BRISK_WIRE_BAD_CSUM)
            net->c.UdpInCsumErrors++;
        net->c.UdpInErrors++;
        return;
    }
    struct brisk_addr src = brisk_addr4(ip->src), dst = brisk_addr4(ip->dst);
    brisk_udp *u = udp_lookup(t, &dst, r.dport, &src, r.sport);
    if (u) {
        enqueue(u, &src, &r, 0);
        return;
    }
    net->c.UdpNoPorts++;
    if (rx_flags & BRISK_IP_RX_BCAST)
        return;
    /* The IP layer hands us the transport bytes of a datagram it holds whole: its header is the hdr_len
     * bytes before them (ip_input.c's deliver), which the error quotes. */
    brisk_icmp_send_error(net, BRISK_ICMP_DEST_UNREACH, BRISK_ICMP_UNREACH_PORT, p - ip->hdr_len,
                          ip->total_len, now);
}

static void udp_input6(void *ctx, const struct brisk_ipv6_repr *ip, const uint8_t *p, size_t len,
                       unsigned rx_flags, uint64_t now)
{
    struct brisk_udp_table *t = ctx;
    struct brisk_net *net = t->net;
    struct brisk_udp_repr r;
    /* A zero checksum field is BRISK_WIRE_BAD_CSUM here whatever the device said (RFC 8200 §8.1). */
    int rc = brisk_udp_parse6(p, len, ip->src, ip->dst, !(rx_flags & BRISK_RX_CSUM_VALID), &r);
    if (rc < 0) {
        if (rc == BRISK_WIRE_BAD_CSUM)
            net->c.Udp6InCsumErrors++;
        net->c.Udp6InErrors++;
        return;
    }
    struct brisk_addr src = brisk_addr6(ip->src), dst = brisk_addr6(ip->dst);
    brisk_udp *u = udp_lookup(t, &dst, r.dport, &src, r.sport);
    if (u) {
        enqueue(u, &src, &r, 1);
        return;
    }
    net->c.Udp6NoPorts++;
    if (rx_flags & BRISK_IP_RX_BCAST)
        return; /* it came in a link-layer multicast frame: no error (RFC 4443 §2.4 (e.3)) */
    /* icmp6.c refuses to answer a packet to a multicast group (RFC 4443 §2.4 (e.2)). */
    brisk_icmp6_send_error_l4(net, BRISK_ICMP6_DEST_UNREACH, BRISK_ICMP6_UNREACH_PORT, 0, ip, p, len, now);
}

/* The error a destination unreachable's code reports to a connected socket, or BRISK_OK for a soft one
 * (Linux's icmp_err_convert with its `fatal` flag). */
static int unreach_error(uint8_t code)
{
    switch (code) {
    case 2: /* protocol unreachable */
        return BRISK_ERR_NOPROTOOPT;
    case 3: /* port unreachable */
        return BRISK_ERR_CONNREFUSED;
    case 6: /* destination network unknown */
    case 9: /* network administratively prohibited */
        return BRISK_ERR_NETUNREACH;
    case 7: /* destination host unknown */
        return BRISK_ERR_HOSTDOWN;
    case 8: /* source host isolated */
        return BRISK_ERR_NONET;
    case 10: /* host administratively prohibited */
    case 13: /* communication administratively prohibited (RFC 1812) */
    case 14: /* host precedence violation */
    case 15: /* precedence cutoff in effect */
        return BRISK_ERR_UNREACH;
    default: /* net / host unreachable (for the TOS), source route failed: soft */
        return BRISK_OK;
    }
}

/* The same for ICMPv6 (Linux's icmpv6_err_convert): the hard errors only, BRISK_OK for the soft ones. */
static int error6(uint8_t type, uint8_t code)
{
    switch (type) {
    case BRISK_ICMP6_DEST_UNREACH:
        switch (code) {
        case BRISK_ICMP6_UNREACH_NOROUTE: /* ENETUNREACH, soft */
        case BRISK_ICMP6_UNREACH_SCOPE:   /* EHOSTUNREACH, soft */
        case BRISK_ICMP6_UNREACH_ADDR:    /* EHOSTUNREACH, soft */
            return BRISK_OK;
        case BRISK_ICMP6_UNREACH_PORT:
            return BRISK_ERR_CONNREFUSED;
        case BRISK_ICMP6_UNREACH_ADMIN:
        case BRISK_ICMP6_UNREACH_POLICY:
        case BRISK_ICMP6_UNREACH_REJECT:
            return BRISK_ERR_UNREACH; /* Linux: EACCES, which brisk has no code for (as TCP's verdict6) */
        default:
            return BRISK_ERR_PROTO; /* an unknown code: EPROTO, hard */
        }
    case BRISK_ICMP6_PARAM_PROB:
        return BRISK_ERR_PROTO;
    default: /* time exceeded: EHOSTUNREACH, soft */
        return BRISK_OK;
    }
}

/* err for the socket u an ICMP or ICMPv6 error names (BRISK_OK: nothing to say): kept, read once, if u is
 * connected (Linux reports to others only with IP_RECVERR). */
static void report(brisk_udp *u, int err)
{
    if (err == BRISK_OK || !u->rport)
        return;
    u->error = err;
    udp_raise(u, BRISK_EV_ERROR);
}

/* A path MTU report (RFC 1191, RFC 8201) about a datagram of u's to dst: the cache learns it, and a
 * connected socket is told EMSGSIZE, as Linux tells one whose IP_MTU_DISCOVER is not "don't" (the default
 * "want"). */
static void mtu_report(brisk_udp *u, const struct brisk_addr *dst, uint32_t mtu, uint64_t now)
{
    struct brisk_route rt;
    if (brisk_route_lookup(u->net, dst, &rt) != BRISK_OK)
        return;
    int below_min;
    brisk_pmtu_update(u->net, dst, mtu, rt.dev->cfg.mtu, &below_min, now);
    report(u, BRISK_ERR_MSGSIZE);
}

static void udp_icmp_error(void *ctx, uint8_t type, uint8_t code, uint32_t info,
                           const struct brisk_ipv4_repr *quoted, const uint8_t *l4, size_t len, uint64_t now)
{
    struct brisk_udp_table *t = ctx;
    struct brisk_net *net = t->net;
    (void)len; /* >= 8 (net.h): both ports are there */
    /* Ours: from our address and port (the quote's source) to the peer's (its destination). */
    struct brisk_addr us = brisk_addr4(quoted->src), peer = brisk_addr4(quoted->dst);
    brisk_udp *u = udp_lookup(t, &us, brisk_get16(l4), &peer, brisk_get16(l4 + 2));
    if (!u) {
        net->c.IcmpInErrors++;
        return;
    }
    if (type == BRISK_ICMP_DEST_UNREACH && code == BRISK_ICMP_UNREACH_FRAG_NEEDED)
        mtu_report(u, &peer, info, now);
    else if (type == BRISK_ICMP_DEST_UNREACH)
        report(u, unreach_error(code));
    else if (type == BRISK_ICMP_PARAM_PROB)
        report(u, BRISK_ERR_PROTO);
}

static void udp_icmp6_error(void *ctx, uint8_t type, uint8_t code, uint32_t info,
                            const struct brisk_ipv6_repr *quoted, const uint8_t *l4, size_t len, uint64_t now)
{
    struct brisk_udp_table *t = ctx;
    (void)len; /* >= 8 (net.h) */
    struct brisk_addr us = brisk_addr6(quoted->src), peer = brisk_addr6(quoted->dst);
    brisk_udp *u = udp_lookup(t, &us, brisk_get16(l4), &peer, brisk_get16(l4 + 2));
    if (!u) {
        t->net->c.Icmp6InErrors++; /* as Linux's __udp6_lib_err counts ICMP6_MIB_INERRORS */
        return;
    }
    if (type == BRISK_ICMP6_PKT_TOO_BIG)
        mtu_report(u, &peer, info, now);
    else
        report(u, error6(type, code));
}

const struct brisk_ip_proto_ops brisk_udp_proto = {
    .input = udp_input,
    .icmp_error = udp_icmp_error,
    .unicast_only = 0, /* broadcast and multicast datagrams are UDP's to take (DHCP, discovery protocols) */
    .input6 = udp_input6,
    .icmp6_error = udp_icmp6_error,
};

int64_t brisk_udp_recvfrom(brisk_udp *u, void *buf, size_t len, struct brisk_addr *from, uint16_t *port,
                           unsigned *flags)
{
    if (!u || (!buf && len))
        return BRISK_ERR_INVAL;
    if (flags)
        *flags = 0;
    if (u->error) { /* before the queue, as Linux's __skb_recv_udp reads sock_error first */
        int e = u->error;
        u->error = BRISK_OK;
        return e;
    }
    brisk_pkt *pkt = u->rq_head;
    if (!pkt)
        return BRISK_ERR_AGAIN;
    u->rq_head = pkt->next;
    if (!u->rq_head)
        u->rq_tail = NULL;
    u->rq_bytes -= brisk_pkt_truesize(pkt);
    u->rq_len--;
    struct brisk_udp_meta m;
    memcpy(&m, pkt->data, sizeof(m));
    size_t dlen = pkt->len - sizeof(m), n = dlen < len ? dlen : len;
    if (n)
        memcpy(buf, pkt->data + sizeof(m), n);
    if (n < dlen && flags)
        *flags = BRISK_MSG_TRUNC;
    if (from)
        *from = m.from;
    if (port)
        *port = m.port;
    brisk_pkt_free(&u->net->pool, pkt);
    return (int64_t)n;
}
