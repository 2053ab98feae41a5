/*
 * output.c — UDP send (RFC 768; RFC 8085 §3.2 on message size).
 *
 * A send is one datagram, built in a pool packet and handed to IP at once (brisk_route_output: IPv4 or
 * IPv6 by the destination's family); UDP keeps nothing. brisk does not fragment outgoing datagrams: over
 * IPv4 every datagram carries DF (ip_output.c), and over IPv6 routers never fragment and brisk, the only
 * one that could (RFC 8200 §5), does not. So a datagram larger than the path MTU less the IP and UDP
 * headers (28 bytes over IPv4, 48 over IPv6) — the device MTU, or what ICMP "fragmentation needed" or
 * ICMPv6 Packet Too Big taught (net/pmtu.c; never below 1280 for IPv6, RFC 8201 §4) — is refused with
 * BRISK_ERR_MSGSIZE, RFC 8085 §3.2's advice to applications made a rule. BRISK_SO_TOS is the IPv4 TOS byte
 * and the IPv6 traffic class alike (one byte, as brisk's TCP sends it; Linux has IPV6_TCLASS beside IP_TOS).
 *
 * The checksum is always computed here, in software (RFC 1122 §4.1.3.4: on by default; RFC 8200 §8.1:
 * mandatory over IPv6): the device's partial-checksum path stores the folded sum as it comes, and a sum of
 * 0 would go out as 0 — "no checksum" to an IPv4 receiver, a datagram to discard for an IPv6 one — where
 * UDP must send 0xffff (RFC 768). brisk_udp_csum_fill / brisk_udp_csum_fill6 do that substitution.
 *
 * No packet buffer, or a device with no room, is BRISK_ERR_AGAIN: the socket is marked, and the stack's poll
 * after the next TX completion raises BRISK_EV_WRITABLE on it (socket.c's brisk_udp_run_blocked). There is
 * no send buffer to fill: what IP took is the device's or ARP's, bounded there.
 */
#include <string.h>

#include "net/iproute.h"
#include "net/netdev.h"
#include "net/pmtu.h"
#include "udp/udp.h"
#include "wire/udp.h"

static int64_t refused(brisk_udp *u)
{
    if (!u->send_refused) {
        u->send_refused = 1;
        udp_of(u->net)->refused++;
    }
    u->net->tx_wake_wanted = 1; /* the next completion wakes the stack's poll */
    return BRISK_ERR_AGAIN;
}

/* The largest datagram payload to dst along rt now: the path MTU (the device's, or less where ICMP's
 * "fragmentation needed" or ICMPv6's Packet Too Big taught it, net/pmtu.c) less the IP and UDP headers. */
static size_t max_payload(struct brisk_net *net, const struct brisk_route *rt, const struct brisk_addr *dst,
                          uint64_t now)
{
    uint32_t mtu = brisk_pmtu_get(net, dst, rt->dev->cfg.mtu, now);
    size_t hdrs = brisk_route_l3_hlen(rt) + BRISK_UDP_HLEN;
    return mtu > hdrs ? mtu - hdrs : 0;
}

int64_t brisk_udp_sendto(brisk_udp *u, const void *buf, size_t len, const struct brisk_addr *dst,
                         uint16_t port, uint64_t now)
{
    if (!u || (!buf && len))
        return BRISK_ERR_INVAL;
    struct brisk_net *net = u->net;
    now = brisk_net_clock(net, now);
    struct brisk_addr daddr;
    uint16_t dport;
    if (!dst) {
        if (!u->rport)
            return BRISK_ERR_NOTCONN;
        daddr = u->raddr;
        dport = u->rport;
    } else {
        int rc = udp_addr(net, dst, 0, &daddr);
        if (rc == BRISK_OK)
            rc = udp_family_ok(u, &daddr);
        if (rc != BRISK_OK)
            return rc;
        if (port == 0)
            return BRISK_ERR_INVAL;
        dport = port;
    }
    if (u->error) { /* an ICMP report for the peer: this send is how the application hears of it */
        int e = u->error;
        u->error = BRISK_OK;
        return e;
    }
    int v6 = daddr.family == BRISK_AF_INET6;
    /* The length fields' bound: IPv4's total length, IPv6's payload length (no jumbograms, RFC 2675). */
    if (len > 65535u - (v6 ? 0 : BRISK_IPV4_HLEN) - BRISK_UDP_HLEN)
        return BRISK_ERR_MSGSIZE;
    struct brisk_route rt;
    if (brisk_route_lookup(net, &daddr, &rt) != BRISK_OK) {
        if (v6)
            net->c.Ip6OutNoRoutes++;
        else
            net->c.IpOutNoRoutes++;
        return BRISK_ERR_NOROUTE;
    }
    if (u->bound && !brisk_addr_is_any(&u->laddr))
        rt.src = u->laddr; /* of daddr's family: udp_family_ok */
    if (len > max_payload(net, &rt, &daddr, now))
        return BRISK_ERR_MSGSIZE;
    if (!u->bound) {
        int rc = udp_autobind(u);
        if (rc != BRISK_OK)
            return rc;
    }
    uint32_t n = (uint32_t)(BRISK_UDP_HLEN + len);
    brisk_pkt *pkt = brisk_pkt_alloc(&net->pool, n);
    if (!pkt) {
        if (v6)
            net->c.Ip6OutDiscards++;
        else
            net->c.IpOutDiscards++;
        return refused(u);
    }
    uint8_t *d = brisk_pkt_put(pkt, n);
    struct brisk_udp_repr r = {.sport = u->lport, .dport = dport, .payload_len = len};
    brisk_udp_emit(d, &r);
    if (len)
        memcpy(d + BRISK_UDP_HLEN, buf, len);
    if (v6)
        brisk_udp_csum_fill6(d, n, rt.src.u.v6, daddr.u.v6);
    else
        brisk_udp_csum_fill(d, n, rt.src.u.v4, daddr.u.v4);
    int rc = brisk_route_output(net, &rt, &daddr, BRISK_IP_PROTO_UDP, u->tos, pkt, now);
    if (rc == BRISK_ERR_BUSY)
        return refused(u);
    if (rc != BRISK_OK)
        return rc;
    if (v6)
        net->c.Udp6OutDatagrams++;
    else
        net->c.UdpOutDatagrams++;
    return (int64_t)len;
}

int64_t brisk_udp_send(brisk_udp *u, const void *buf, size_t len, uint64_t now)
{
    return brisk_udp_sendto(u, buf, len, NULL, 0, now);
}
