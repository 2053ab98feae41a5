/*
 * input.c — UDP receive (RFC 768; RFC 1122 §4.1.3): demultiplexing, the per-socket receive queue, ICMP
 * port unreachable for a port nobody has, and ICMP errors about datagrams we sent.
 *
 * Checks. The header is parsed with bounds (wire/udp.h): a datagram shorter than its length field or with a
 * length below 8 is malformed (UdpInErrors); bytes after the length field's end are not UDP's and are
 * ignored. The checksum is verified unless the device vouched for it (BRISK_RX_CSUM_VALID); a wrong one
 * drops the datagram, counted in UdpInCsumErrors and UdpInErrors as Linux counts it (RFC 1122 §4.1.3.4: a
 * datagram with a bad checksum MUST be discarded silently). A checksum field of 0 is "none" over IPv4 (RFC
 * 768) and accepted.
 *
 * No socket. A datagram for a port with no socket is counted (UdpNoPorts) and answered with ICMP port
 * unreachable (RFC 1122 §4.1.3.1), through the network layer's error sender and its rate limit — except a
 * datagram that came to a broadcast address or a broadcast MAC (RFC 1122 §3.2.2: never an error about
 * one), which the IP layer flags in rx_flags (BRISK_IP_RX_BCAST).
 *
 * The receive queue holds pool packets, each the sender then the payload, copied from the frame (the stack
 * keeps no frame after input returns). It is charged their truesize against the socket's rcvbuf with
 * Linux's rule (__udp_enqueue_schedule_skb): a datagram is taken while what is queued does not exceed
 * rcvbuf, so the queue overshoots it by one datagram at most and a buffer smaller than a datagram still
 * takes one. Beyond, or with the pool exhausted, the datagram is dropped: UdpRcvbufErrors and UdpInErrors.
 *
 * ICMP errors (RFC 1122 §4.1.3.3: UDP MUST pass them to the application). The quoted datagram names the
 * socket: our address and port as its source, the peer's as its destination. As Linux does for a socket
 * without IP_RECVERR, only a connected socket whose peer the quote names is told, and only of the hard
 * errors (port or protocol unreachable, an administratively prohibited or unknown destination, a parameter
 * problem): the error is kept on the socket, read once, and BRISK_EV_ERROR raised. Soft ones (net or host
 * unreachable, time exceeded) are transient and a datagram protocol has no retransmission to fail, so they
 * are dropped; "fragmentation needed" lowers the path MTU (RFC 1191), which the next send over it meets as
 * BRISK_ERR_MSGSIZE. A quote that names no socket of ours is counted (IcmpInErrors), as Linux's
 * __udp4_lib_err counts it.
 */
#include <string.h>

#include "net/ip.h"
#include "udp/udp.h"
#include "wire/icmp.h"
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

static void enqueue(brisk_udp *u, const struct brisk_ipv4_repr *ip, const struct brisk_udp_repr *r)
{
    struct brisk_net *net = u->net;
    if (u->rq_bytes > u->rcvbuf) {
        net->c.UdpRcvbufErrors++;
        net->c.UdpInErrors++;
        return;
    }
    uint32_t n = (uint32_t)(sizeof(struct brisk_udp_meta) + r->payload_len);
    brisk_pkt *pkt = brisk_pkt_alloc(&net->pool, n);
    if (!pkt) {
        net->c.UdpRcvbufErrors++;
        net->c.UdpInErrors++;
        return;
    }
    struct brisk_udp_meta m = {.from = brisk_addr_v4(ip->src), .port = r->sport};
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
    net->c.UdpInDatagrams++;
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
    brisk_udp *u = udp_lookup(t, ip->dst, r.dport, ip->src, r.sport);
    if (u) {
        enqueue(u, ip, &r);
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

static void udp_icmp_error(void *ctx, uint8_t type, uint8_t code, uint32_t info,
                           const struct brisk_ipv4_repr *quoted, const uint8_t *l4, size_t len, uint64_t now)
{
    struct brisk_udp_table *t = ctx;
    struct brisk_net *net = t->net;
    (void)len; /* >= 8 (net.h): both ports are there */
    uint16_t sport = brisk_get16(l4), dport = brisk_get16(l4 + 2);
    /* Ours: from our address and port (the quote's source) to the peer's (its destination). */
    brisk_udp *u = udp_lookup(t, quoted->src, sport, quoted->dst, dport);
    if (!u) {
        net->c.IcmpInErrors++;
        return;
    }
    int err = BRISK_OK;
    if (type == BRISK_ICMP_DEST_UNREACH && code == BRISK_ICMP_UNREACH_FRAG_NEEDED) { /* RFC 1191 */
        struct brisk_route rt;
        if (brisk_ip_route(net, quoted->dst, &rt) == BRISK_OK) {
            int below_min;
            brisk_pmtu_update(net, &(struct brisk_addr){.family = BRISK_AF_INET, .u.v4 = quoted->dst}, info, rt.dev->cfg.mtu, &below_min, now);
        }
        return;
    }
    if (type == BRISK_ICMP_DEST_UNREACH)
        err = unreach_error(code);
    else if (type == BRISK_ICMP_PARAM_PROB)
        err = BRISK_ERR_PROTO;
    if (err == BRISK_OK || !u->rport)
        return; /* soft, or a socket that named no peer (Linux reports those only with IP_RECVERR) */
    u->error = err;
    udp_raise(u, BRISK_EV_ERROR);
}

const struct brisk_ip_proto_ops brisk_udp_proto = {
    .input = udp_input,
    .icmp_error = udp_icmp_error,
    .unicast_only = 0, /* broadcast datagrams are UDP's to take (a DHCP client, a discovery protocol) */
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
