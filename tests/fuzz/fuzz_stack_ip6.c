/*
 * fuzz_stack_ip6.c — the IPv6 input path through the stack (net.c's 0x86DD dispatch, ip6_input.c, the
 * extension-header walker's verdicts, icmp6.c, ndisc.c, TCP's and UDP's input6) under any sequence of
 * packets and of the stack's own echo requests, with time passing (NUD timers, resolution giving up, the
 * ICMPv6 error bucket).
 *
 * Input: [mode u8] then records [delay u16][kind u8][sel u8][hops u8][nh u8][len u16][len bytes]
 * (big-endian):
 *   mode   bit 0: repair the ICMPv6, TCP or UDP checksum of every packet whose chain reaches one of them (so
 *          mutations reach echo, errors, ND, TCP's state machine and UDP's sockets instead of dying at the
 *          checksum; a UDP length field within the packet bounds the sum); bit 1: arp_unres_max 4 and
 *          unres_qlen 2, so the neighbour cache's resolving bounds are hit; bit 2: ip6frag_high_thresh
 *          16 KB and ip6frag_time 2 s, so reassembly's bound and timeouts are hit.
 *   delay  milliseconds of virtual time to run first.
 *   kind   0: a packet from the peer whose fixed header is built here (payload the record's bytes, Next Header
 *          nh, hop limit hops); 1: the record's bytes are the whole Ethernet payload (any IPv6 header at
 *          all); 2: the stack sends an echo request to the address sel picks (len bytes of payload); 3: a
 *          fragment from the peer to kind 0's destination — a fragment header with Next Header nh, the
 *          identification 1 + (hops & 3) (few, so fragments meet), M = hops bit 7, the offset the record's
 *          first two bytes give (& 0xfff8), then the rest of the record as its data (net/ipfrag.c).
 *   sel    low 3 bits, the destination of kind 0 (ours link-local, ours global, all-nodes, our solicited-node
 *          group, another solicited-node group, a foreign unicast, ff02::2, ::) or of kind 2 (the peer's
 *          link-local, a global on-link neighbour sel>>3 of 32, an off-link address, ...); bits 3-7 vary the
 *          source of kind 0 (the peer, another on-link host, the unspecified address, a multicast one).
 * Besides the harness's IPv4 listener on 0.0.0.0:80, one on [::]:81 takes TCP over IPv6 (its children stay
 * on the accept queue: SYN-RECEIVED, cookies, RSTs, ICMPv6 errors about them, all over IPv6), and a UDP
 * socket on [::]:81 (4 KB receive buffer) takes UDP over IPv6: after every record it echoes what it holds to
 * each sender, and every UDP datagram that leaves at once must parse with its checksum (never 0); its queue
 * keeps its count and bound, and the Udp6 counters never exceed Ip6InDelivers. Every other port is closed:
 * ICMPv6 port unreachable through brisk_icmp6_send_error_l4, for whole, extension-headed and reassembled
 * packets alike.
 * After every record the harness's invariants hold, every frame the stack sent parses (the harness checks
 * IPv6 and its ICMPv6 checksum too), the neighbour cache keeps its bounds — entries within gc_thresh3,
 * resolving ones within arp_unres_max, each queue within unres_qlen — and so does reassembly: its table's
 * invariants (brisk_ipfrag_check) and the bytes held within ip6frag_high_thresh. At the end everything is freed
 * (ASan: no leak).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/harness.h"
#include "net/ipfrag.h"
#include "net/ndisc.h"
#include "stack/stack.h"
#include "udp/udp.h"
#include "wire/csum.h"
#include "wire/eth.h"
#include "wire/icmp6.h"
#include "wire/ipv6.h"
#include "wire/udp.h"
#include "wire/wire.h"

#define MAX_RECORDS 256
#define PAYLOAD_MAX 1460

static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x02};

static void nd_check(const struct brisk_net *net)
{
    const struct brisk_nd_table *t = &net->nd;
    if (t->count > t->size || t->unres_count > net->s.arp_unres_max || t->unres_count > t->count)
        fh_fail("nd: %u entries (%u resolving) in %u slots", t->count, t->unres_count, t->size);
    uint32_t used = 0, unres = 0;
    for (uint32_t i = 0; i < t->size; i++) {
        const struct brisk_nd_entry *n = &t->e[i];
        if (n->state == BRISK_ND_FREE)
            continue;
        used++;
        if (n->state == BRISK_ND_INCOMPLETE)
            unres++;
        else if (n->qlen)
            fh_fail("nd: a resolved entry holds %u packets", n->qlen);
        if (n->qlen > net->s.unres_qlen)
            fh_fail("nd: %u packets queued, bound %u", n->qlen, net->s.unres_qlen);
    }
    if (used != t->count || unres != t->unres_count)
        fh_fail("nd: counted %u / %u, found %u / %u", t->count, t->unres_count, used, unres);
}

/* The [::] socket's turn: each datagram it holds goes back to its sender (bounded by the queue), and every
 * UDP datagram over IPv6 the device holds now — sent at once, its neighbour known — must parse with a
 * checksum that is right and not 0 (RFC 8200 §8.1). */
static void udp6_echo(struct fh *h, brisk_udp *u)
{
    uint8_t buf[PAYLOAD_MAX];
    struct brisk_addr from;
    uint16_t port;
    for (uint32_t k = u->rq_len; k > 0; k--) {
        int64_t n = brisk_udp_recvfrom(u, buf, sizeof(buf), &from, &port, NULL);
        if (n < 0)
            fh_fail("udp6: recvfrom %lld with %u datagrams queued", (long long)n, k);
        int64_t rc = brisk_udp_sendto(u, buf, (size_t)n, &from, port ? port : 7, h->now);
        if (rc != n && rc != BRISK_ERR_AGAIN && rc != BRISK_ERR_NOROUTE && rc != BRISK_ERR_MSGSIZE &&
            rc != BRISK_ERR_INVAL && rc != BRISK_ERR_TOOMANY)
            fh_fail("udp6: echo of %lld bytes returned %lld", (long long)n, (long long)rc);
    }
    for (size_t i = 0; i < h->f.ntx; i++) {
        const uint8_t *d = h->f.tx[i].data;
        size_t len = h->f.tx[i].len;
        struct brisk_ipv6_repr ip;
        struct brisk_udp_repr r;
        if (len < BRISK_ETH_HLEN + BRISK_IPV6_HLEN || brisk_get16(d + 12) != BRISK_ETH_P_IPV6 ||
            brisk_ipv6_parse(d + BRISK_ETH_HLEN, len - BRISK_ETH_HLEN, &ip) < 0 ||
            ip.next_header != BRISK_IP_PROTO_UDP)
            continue;
        int rc =
            brisk_udp_parse6(d + BRISK_ETH_HLEN + BRISK_IPV6_HLEN, ip.payload_len, ip.src, ip.dst, 1, &r);
        if (rc < 0 || r.len != ip.payload_len)
            fh_fail("udp6: the stack sent a datagram that does not parse: %s", brisk_wire_err_name(rc));
    }
    uint32_t n = 0;
    uint64_t bytes = 0;
    for (const brisk_pkt *p = u->rq_head; p; p = p->next) {
        n++;
        bytes += brisk_pkt_truesize(p);
    }
    if (n != u->rq_len || bytes != u->rq_bytes)
        fh_fail("udp6: queue holds %u (%llu bytes), counts say %u (%llu)", n, (unsigned long long)bytes,
                u->rq_len, (unsigned long long)u->rq_bytes);
    struct brisk_counters c;
    brisk_stack_get_counters(h->st, &c);
    if (c.Udp6InDatagrams + c.Udp6NoPorts + c.Udp6InErrors > c.Ip6InDelivers)
        fh_fail("udp6: more datagrams counted than IPv6 delivered");
    if (c.Udp6InCsumErrors > c.Udp6InErrors || c.Udp6RcvbufErrors > c.Udp6InErrors)
        fh_fail("udp6: a checksum or buffer drop outside Udp6InErrors");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned mode = data[0];
    struct fh h;
    fh_init_with(&h, FH_LISTEN, (mode & 2) ? "arp_unres_max=4" : NULL);
    if ((mode & 2) && brisk_settings_set(&h.st->net.s, "unres_qlen=2") != BRISK_OK)
        fh_fail("settings");
    if ((mode & 4) && (brisk_settings_set(&h.st->net.s, "ip6frag_high_thresh=16K") != BRISK_OK ||
                       brisk_settings_set(&h.st->net.s, "ip6frag_time=2s") != BRISK_OK))
        fh_fail("settings");
    brisk_netdev *dev = h.f.dev;
    const struct brisk_addr global = {.family = BRISK_AF_INET6, .u.v6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}};
    if (brisk_netdev_add_addr(dev, &global, 64) != BRISK_OK)
        fh_fail("add_addr");
    int err;
    brisk_sock *l6 = brisk_socket(h.st, &err);
    const struct brisk_addr any6 = {.family = BRISK_AF_INET6};
    if (!l6 || brisk_bind_addr(l6, &any6, FH_PORT + 1) != BRISK_OK || brisk_listen(l6, 8) != BRISK_OK)
        fh_fail("listen on [::]:%u", FH_PORT + 1);
    brisk_udp *u6 = brisk_udp_socket(h.st, &err);
    if (!u6 || brisk_udp_bind(u6, &any6, FH_PORT + 1) != BRISK_OK ||
        brisk_udp_setsockopt(u6, BRISK_SO_RCVBUF, 4096) != BRISK_OK)
        fh_fail("udp bind on [::]:%u", FH_PORT + 1);
    uint8_t us_ll[16], peer_ll[16];
    brisk_ipv6_link_local_from_mac(us_ll, h.f.cfg.mac);
    brisk_ipv6_link_local_from_mac(peer_ll, peer_mac);

    size_t off = 1;
    for (unsigned n = 0; n < MAX_RECORDS && off + 8 <= size; n++) {
        const uint8_t *r = data + off;
        uint16_t delay = brisk_get16(r);
        uint8_t kind = r[2] % 4, sel = r[3], hops = r[4], nh = r[5];
        size_t len = brisk_get16(r + 6);
        off += 8;
        if (len > size - off)
            len = size - off;
        if (len > PAYLOAD_MAX)
            len = PAYLOAD_MAX;
        const uint8_t *body = data + off;
        off += len;
        fh_run(&h, h.now + (uint64_t)delay * BRISK_NSEC_PER_MSEC);

        uint8_t dst[16] = {0}, src[16];
        memcpy(src, peer_ll, 16);
        switch (sel >> 3 & 3) {
        case 1: /* another on-link host */
            memcpy(src, global.u.v6, 16);
            src[15] = (uint8_t)(0x10 + (sel >> 5));
            break;
        case 2:
            memset(src, 0, 16);
            break;
        case 3:
            src[0] = 0xff;
            break;
        default:
            break;
        }
        switch (sel & 7) {
        case 0:
            memcpy(dst, us_ll, 16);
            break;
        case 1:
            memcpy(dst, global.u.v6, 16);
            break;
        case 2:
            dst[0] = 0xff, dst[1] = 0x02, dst[15] = 1;
            break;
        case 3:
            brisk_ipv6_solicited_node(dst, us_ll);
            break;
        case 4:
            brisk_ipv6_solicited_node(dst, peer_ll);
            break;
        case 5:
            memcpy(dst, global.u.v6, 16);
            dst[15] = 0x77;
            break;
        case 6:
            dst[0] = 0xff, dst[1] = 0x02, dst[15] = 2;
            break;
        default:
            break;
        }
        if (kind == 2) {
            struct brisk_addr a = {.family = BRISK_AF_INET6};
            memcpy(a.u.v6, (sel & 1) ? global.u.v6 : peer_ll, 16);
            if (sel & 1)
                a.u.v6[15] = (uint8_t)(0x10 + (sel >> 3));
            if ((sel & 7) == 7)
                a.u.v6[5] = 9; /* off-link: no router, or the one an RA taught */
            brisk_icmp_echo_send_addr(h.st, &a, 1, (uint16_t)n, (uint16_t)len, h.now);
            fh_input(&h, NULL, 0, 0); /* an empty frame: counted, and collects what the echo sent */
        } else {
            uint8_t frame[BRISK_ETH_HLEN + BRISK_IPV6_HLEN + PAYLOAD_MAX];
            uint8_t mac[6];
            if (brisk_ipv6_is_multicast(dst))
                brisk_ipv6_multicast_mac(mac, dst);
            else
                memcpy(mac, h.f.cfg.mac, 6);
            size_t flen;
            if (kind == 3) {
                uint8_t fp[BRISK_IPV6_FRAG_HLEN + PAYLOAD_MAX];
                uint16_t foff = len >= 2 ? (uint16_t)(brisk_get16(body) & 0xfff8) : 0;
                size_t dlen = len >= 2 ? len - 2 : 0;
                brisk_ipv6_frag_emit(fp, nh, foff, hops >> 7, 1u + (hops & 3u));
                memcpy(fp + BRISK_IPV6_FRAG_HLEN, body + (len - dlen), dlen);
                flen = fakedev_ipv6_frame(frame, mac, peer_mac, src, dst, BRISK_IP_PROTO_FRAGMENT, 64, fp,
                                          BRISK_IPV6_FRAG_HLEN + dlen);
            } else if (kind == 0) {
                flen = fakedev_ipv6_frame(frame, mac, peer_mac, src, dst, nh, hops, body, len);
                struct brisk_ipv6_repr ip;
                struct brisk_ipv6_ext x;
                uint8_t *p6 = frame + BRISK_ETH_HLEN;
                if ((mode & 1) && brisk_ipv6_parse(p6, flen - BRISK_ETH_HLEN, &ip) >= 0 &&
                    brisk_ipv6_ext_walk(p6, flen - BRISK_ETH_HLEN, &ip, &x) >= 0 && !x.discard &&
                    (x.proto == BRISK_IP_PROTO_ICMPV6 || x.proto == BRISK_IP_PROTO_TCP ||
                     x.proto == BRISK_IP_PROTO_UDP)) {
                    size_t co = x.proto == BRISK_IP_PROTO_TCP ? 16 : x.proto == BRISK_IP_PROTO_UDP ? 6 : 2;
                    if ((size_t)x.proto_off + co + 2 <= flen - BRISK_ETH_HLEN) {
                        uint8_t *m = p6 + x.proto_off;
                        size_t mlen = flen - BRISK_ETH_HLEN - x.proto_off;
                        if (x.proto == BRISK_IP_PROTO_UDP) { /* over its length field's bytes, never 0 */
                            size_t ulen = brisk_get16(m + 4);
                            brisk_udp_csum_fill6(m, ulen >= BRISK_UDP_HLEN && ulen <= mlen ? ulen : mlen,
                                                 ip.src, ip.dst);
                        } else {
                            brisk_put16(m + co, 0);
                            uint32_t sum = brisk_csum_pseudo6(ip.src, ip.dst, x.proto, (uint32_t)mlen);
                            brisk_put16(m + co, brisk_csum_fold(brisk_csum_add(sum, m, mlen)));
                        }
                    }
                }
            } else {
                struct brisk_eth_repr e = {.type = BRISK_ETH_P_IPV6};
                memcpy(e.dst, mac, 6);
                memcpy(e.src, peer_mac, 6);
                brisk_eth_emit(frame, &e);
                memcpy(frame + BRISK_ETH_HLEN, body, len);
                flen = BRISK_ETH_HLEN + len;
            }
            fh_input(&h, frame, flen, 0);
        }
        udp6_echo(&h, u6);
        fh_check(&h);
        nd_check(&h.st->net);
        const struct brisk_ipfrag *fr = h.st->net.ip6frag;
        int rc = brisk_ipfrag_check(fr);
        if (rc)
            fh_fail("ip6frag: brisk_ipfrag_check %d after record %u", rc, n);
        if (h.st->net.s.ipfrag_evict && brisk_ipfrag_mem(fr) > h.st->net.s.ip6frag_high_thresh)
            fh_fail("ip6frag: %llu bytes held, bound %llu", (unsigned long long)brisk_ipfrag_mem(fr),
                    (unsigned long long)h.st->net.s.ip6frag_high_thresh);
    }
    if (getenv("BRISK_FUZZ_TRACE")) {
        struct brisk_counters c;
        brisk_stack_get_counters(h.st, &c);
        fprintf(stderr,
                "ip6: in %llu hdr %llu addr %llu unknown %llu delivers %llu; icmp6 in %llu err %llu "
                "echo replies %llu parm out %llu; ns %llu/%llu na %llu/%llu resolve failed %llu; "
                "reasm reqds %llu oks %llu fails %llu timeout %llu overlaps %llu; udp6 in %llu noports %llu "
                "err %llu csum %llu out %llu, dest unreach out %llu\n",
                (unsigned long long)c.Ip6InReceives, (unsigned long long)c.Ip6InHdrErrors,
                (unsigned long long)c.Ip6InAddrErrors, (unsigned long long)c.Ip6InUnknownProtos,
                (unsigned long long)c.Ip6InDelivers, (unsigned long long)c.Icmp6InMsgs,
                (unsigned long long)c.Icmp6InErrors, (unsigned long long)c.Icmp6OutEchoReplies,
                (unsigned long long)c.Icmp6OutParmProblems, (unsigned long long)c.Icmp6InNeighborSolicits,
                (unsigned long long)c.Icmp6OutNeighborSolicits, (unsigned long long)c.Icmp6InNeighborAdvertisements,
                (unsigned long long)c.Icmp6OutNeighborAdvertisements, (unsigned long long)c.Nd6ResolveFailed,
                (unsigned long long)c.Ip6ReasmReqds, (unsigned long long)c.Ip6ReasmOKs,
                (unsigned long long)c.Ip6ReasmFails, (unsigned long long)c.Ip6ReasmTimeout,
                (unsigned long long)c.Ip6ReasmOverlaps, (unsigned long long)c.Udp6InDatagrams,
                (unsigned long long)c.Udp6NoPorts, (unsigned long long)c.Udp6InErrors,
                (unsigned long long)c.Udp6InCsumErrors, (unsigned long long)c.Udp6OutDatagrams,
                (unsigned long long)c.Icmp6OutDestUnreachs);
    }
    brisk_close(l6, h.now); /* its children with it; fh_finish checks every socket is gone */
    brisk_udp_close(u6);
    fh_finish(&h);
    return 0;
}
