/*
 * output.c — UDP send (RFC 768; RFC 8085 §3.2 on message size).
 *
 * A send is one datagram, built in a pool packet and handed to IP at once; UDP keeps nothing. brisk does
 * not fragment outgoing datagrams (every datagram carries DF, ip_output.c), so a datagram larger than the
 * path MTU less the IPv4 and UDP headers — the device MTU, or what ICMP "fragmentation needed" taught
 * (net/pmtu.c) — is refused with BRISK_ERR_MSGSIZE, RFC 8085 §3.2's advice to applications made a rule.
 *
 * The checksum is always computed here, in software (RFC 1122 §4.1.3.4: on by default): the device's
 * partial-checksum path stores the folded sum as it comes, and a sum of 0 would go out as 0 — "no checksum"
 * to the receiver — where UDP must send 0xffff (RFC 768). brisk_udp_csum_fill does that substitution.
 *
 * No packet buffer, or a device with no room, is BRISK_ERR_AGAIN: the socket is marked, and the stack's poll
 * after the next TX completion raises BRISK_EV_WRITABLE on it (socket.c's brisk_udp_run_blocked). There is
 * no send buffer to fill: what IP took is the device's or ARP's, bounded there.
 */
#include <string.h>

#include "net/ip.h"
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

int64_t brisk_udp_sendto(brisk_udp *u, const void *buf, size_t len, const struct brisk_addr *dst,
                         uint16_t port, uint64_t now)
{
    if (!u || (!buf && len))
        return BRISK_ERR_INVAL;
    struct brisk_net *net = u->net;
    now = brisk_net_clock(net, now);
    uint32_t daddr;
    uint16_t dport;
    if (!dst) {
        if (!u->rport)
            return BRISK_ERR_NOTCONN;
        daddr = u->raddr;
        dport = u->rport;
    } else {
        int rc = udp_addr_v4(dst, 0, &daddr);
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
    if (len > 65535u - BRISK_IPV4_HLEN - BRISK_UDP_HLEN)
        return BRISK_ERR_MSGSIZE;
    struct brisk_route rt;
    if (brisk_ip_route(net, daddr, &rt) != BRISK_OK) {
        net->c.IpOutNoRoutes++;
        return BRISK_ERR_NOROUTE;
    }
    if (u->laddr)
        rt.src.u.v4 = u->laddr;
    uint32_t mtu = brisk_pmtu_get(net, &(struct brisk_addr){.family = BRISK_AF_INET, .u.v4 = daddr}, rt.dev->cfg.mtu, now);
    if (BRISK_IPV4_HLEN + BRISK_UDP_HLEN + len > mtu)
        return BRISK_ERR_MSGSIZE;
    if (!u->bound) {
        int rc = udp_bind_port(u, 0, 0);
        if (rc != BRISK_OK)
            return rc;
    }
    uint32_t n = (uint32_t)(BRISK_UDP_HLEN + len);
    brisk_pkt *pkt = brisk_pkt_alloc(&net->pool, n);
    if (!pkt) {
        net->c.IpOutDiscards++;
        return refused(u);
    }
    uint8_t *d = brisk_pkt_put(pkt, n);
    struct brisk_udp_repr r = {.sport = u->lport, .dport = dport, .payload_len = len};
    brisk_udp_emit(d, &r);
    if (len)
        memcpy(d + BRISK_UDP_HLEN, buf, len);
    brisk_udp_csum_fill(d, n, rt.src.u.v4, daddr);
    int rc = brisk_ip_output(net, &rt, daddr, BRISK_IP_PROTO_UDP, u->tos, pkt, now);
    if (rc == BRISK_ERR_BUSY)
        return refused(u);
    if (rc != BRISK_OK)
        return rc;
    net->c.UdpOutDatagrams++;
    return (int64_t)len;
}

int64_t brisk_udp_send(brisk_udp *u, const void *buf, size_t len, uint64_t now)
{
    return brisk_udp_sendto(u, buf, len, NULL, 0, now);
}
