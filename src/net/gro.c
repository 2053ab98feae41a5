/*
 * gro.c — receive coalescing (Linux's GRO, "generic receive offload", in software): a batch of frames from
 * one poll of a device, with each connection's in-order TCP segments joined into one segment before TCP
 * processes it.
 *
 * Why: a bulk receiver otherwise does its whole per-segment work for every 1448 bytes — connection lookup,
 * PAWS and window checks, ACK processing, the delayed-ACK decision — and owes the sender an ACK for every
 * second segment (RFC 5681 §4.2), which the sender must process in turn. A device hands frames over in
 * batches anyway (a NAPI poll, a read loop on a TAP); frames of one flow that arrive in the same batch are
 * joined, and TCP takes them as the one segment the peer could have sent had its MSS been larger: one
 * lookup, one ACK processed, one ACK owed for up to 64 KB (input.c counts such a segment as the full-sized
 * segments it carries, so that ACK goes out at once).
 *
 * What may join (the conditions under which the joined segment means exactly what the frames meant):
 *   - a frame is a candidate when it is unicast to this device, IPv4 without options or fragmentation to one
 *     of the stack's addresses, or IPv6 with TCP as its first next header (no extension header: Linux's
 *     ipv6_gro_receive pulls none it would have to compare either) to one of this device's addresses, TCP
 *     with exactly ACK (PSH allowed), carrying text, with a good checksum (verified here unless the device
 *     vouched for it: BRISK_RX_CSUM_VALID);
 *   - it joins its connection's run (up to 8 connections have one open at a time, as in Linux) when it is
 *     of the same TOS (ECN bits included) — over IPv6 the same first word (version, traffic class, flow
 *     label) and hop limit, as Linux compares them —, starts at the sequence number where the run ends, and its TCP
 *     header is byte for byte the run's first header but for the sequence number, the checksum and PSH:
 *     same acknowledgment, window and options (so the same timestamp — RFC 7323 processing of the joined
 *     segment is that of each frame); frames of other connections in between do not matter;
 *   - a run ends at 64 frames, at 64 KB of text (an IPv4 datagram's limit, and IPv6's without a jumbogram), after a frame with PSH (the
 *     sender marked a boundary: deliver it now), at a frame of its connection that does not join (the run
 *     goes to TCP first, then that frame starts the next), when its slot is needed for a ninth connection
 *     (the oldest run goes), at any frame that is not a candidate (every run goes first: such a frame may
 *     belong to any of them), and at the end of the batch (oldest first). So each connection's segments
 *     reach TCP in the order they came; only segments of different connections may pass each other.
 * Everything else — ARP, pure ACKs, SYN / FIN / RST, IP options, bad checksums, frames for a listener or no
 * socket — goes through brisk_net_rx_one() unchanged, where the errors are counted in the usual places.
 * Counters still count frames (EthInFrames, IpInReceives or Ip6InReceives, TcpInSegs: Linux counts a GRO segment's gso_segs
 * too); the device counts rx_gro_segs (joined segments) and rx_gro_merged (frames that joined an earlier
 * one).
 *
 * brisk_stack_input_batch brackets the batch with TCP's brisk_tcp_batch_begin / _end (input.c): the ACKs
 * it owes for in-order data are held to its end, one per connection. gro.c itself knows no protocol above IP:
 * a run goes to the gro_input handler of the table entry for its protocol (net.h).
 *
 * The runs live in the stack (struct brisk_gro, allocated with it: nothing is allocated per batch).
 */
#include <stdlib.h>
#include <string.h>

#include "core/addr.h"
#include "net/gro.h"
#include "net/ip.h"
#include "net/net.h"
#include "net/netdev.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"
#include "wire/tcp.h"
#include "wire/wire.h"

#define GRO_MAX_FRAMES 64u
#define GRO_MAX_FLOWS  8u
#define GRO_MAX_TEXT   65535u /* the text of one IP datagram cannot exceed this (less the headers) */

/* What a candidate's IP header says that a run must share: the connection (ours as laddr) and the header
 * fields that must not change within a run — IPv4's TOS; IPv6's first word (version, traffic class, flow
 * label) and hop limit. */
struct gro_l3 {
    struct brisk_tuple id; /* lport / rport unused: the TCP header bytes are compared */
    uint64_t word;
    uint8_t v6;
};

/* A run being built: its first frame's headers, and every frame with its text. */
struct gro_run {
    uint32_t n;          /* frames; 0 = the slot is free */
    size_t first;        /* batch index of the first frame: runs go to TCP oldest first */
    uint32_t next_seq;   /* where the run's text ends */
    const uint8_t *tcph; /* the first frame's TCP header, for the byte comparison */
    struct gro_l3 l3;
    struct brisk_tcp_repr seg; /* the first frame's header; payload_len: the run's text */
    const struct brisk_rx_frame *frame[GRO_MAX_FRAMES];
    struct brisk_gro_piece text[GRO_MAX_FRAMES];
};

struct brisk_gro {
    struct gro_run run[GRO_MAX_FLOWS];
};

int brisk_gro_init(struct brisk_net *net)
{
    net->gro = calloc(1, sizeof(*net->gro));
    return net->gro ? BRISK_OK : BRISK_ERR_NOMEM;
}

void brisk_gro_destroy(struct brisk_net *net)
{
    free(net->gro);
    net->gro = NULL;
}

/* The IPv6 half of gro_candidate: p the IPv6 header, f->len checked to hold it and a TCP header. */
static int gro_candidate6(brisk_netdev *dev, const struct brisk_rx_frame *f, const uint8_t *p, struct gro_l3 *l3,
                          struct brisk_tcp_repr *seg, const uint8_t **tcph)
{
    const uint8_t *t = p + BRISK_IPV6_HLEN;
    if ((p[0] >> 4) != 6 || p[6] != BRISK_IP_PROTO_TCP)
        return 0; /* an extension header first, or not TCP */
    if ((t[13] & (uint8_t)~BRISK_TCP_PSH) != BRISK_TCP_ACK)
        return 0;
    uint32_t plen = (uint32_t)p[4] << 8 | p[5];
    if (plen <= (uint32_t)(t[12] >> 4) * 4u)
        return 0; /* no text (a jumbogram's 0 among them) */
    struct brisk_ipv6_repr ip;
    if (memcmp(f->data, dev->cfg.mac, 6) != 0 || brisk_ipv6_parse(p, f->len - BRISK_ETH_HLEN, &ip) < 0 ||
        brisk_ipv6_is_multicast(ip.dst) || !brisk_netdev_ip6_is_mine(dev, ip.dst))
        return 0;
    int csum_valid = (f->flags & BRISK_RX_CSUM_VALID) != 0;
    if (brisk_tcp_parse6(t, plen, ip.src, ip.dst, !csum_valid, seg) < 0 || seg->sport == 0 || seg->dport == 0)
        return 0;
    l3->id.laddr = brisk_addr6(ip.dst);
    l3->id.raddr = brisk_addr6(ip.src);
    l3->word = (uint64_t)ip.hop_limit << 32 | (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    l3->v6 = 1;
    *tcph = t;
    return 1;
}

/* Whether f may join a run (see the opening comment); fills l3, seg and *tcph when it may. The cheap tests
 * on raw bytes come first, so pure ACKs and other frames cost a few loads. */
static int gro_candidate(struct brisk_net *net, brisk_netdev *dev, const struct brisk_rx_frame *f,
                         struct gro_l3 *l3, struct brisk_tcp_repr *seg, const uint8_t **tcph)
{
    const uint8_t *b = f->data;
    if (f->len < BRISK_ETH_HLEN + BRISK_IPV4_HLEN + BRISK_TCP_HLEN)
        return 0;
    const uint8_t *p = b + BRISK_ETH_HLEN;
    const uint8_t *t = p + BRISK_IPV4_HLEN;
    if (b[12] == 0x86 && b[13] == 0xdd)
        return f->len >= BRISK_ETH_HLEN + BRISK_IPV6_HLEN + BRISK_TCP_HLEN && gro_candidate6(dev, f, p, l3, seg, tcph);
    if (b[12] != 0x08 || b[13] != 0x00 || p[0] != 0x45 || p[9] != BRISK_IP_PROTO_TCP)
        return 0; /* not IPv4, IP options, not TCP */
    if ((t[13] & (uint8_t)~BRISK_TCP_PSH) != BRISK_TCP_ACK)
        return 0; /* SYN, FIN, RST, URG, ECE / CWR, or no ACK: TCP takes it on its own */
    uint32_t total = (uint32_t)p[2] << 8 | p[3];
    if (total <= BRISK_IPV4_HLEN + (uint32_t)(t[12] >> 4) * 4u)
        return 0; /* no text (or a malformed length, which the per-frame path counts) */
    if (memcmp(b, dev->cfg.mac, 6) != 0)
        return 0;
    struct brisk_ipv4_repr ip;
    if (brisk_ipv4_parse(p, f->len - BRISK_ETH_HLEN, &ip) < 0 || brisk_ipv4_is_fragment(&ip) ||
        brisk_netdev_is_broadcast(dev, ip.dst) || !brisk_netdev_is_local(net, ip.dst))
        return 0;
    int csum_valid = (f->flags & BRISK_RX_CSUM_VALID) != 0;
    if (brisk_tcp_parse(t, (size_t)ip.total_len - BRISK_IPV4_HLEN, ip.src, ip.dst, !csum_valid, seg) < 0 ||
        seg->sport == 0 || seg->dport == 0)
        return 0;
    l3->id.laddr = brisk_addr4(ip.dst);
    l3->id.raddr = brisk_addr4(ip.src);
    l3->word = ip.tos;
    l3->v6 = 0;
    *tcph = t;
    return 1;
}

/* Whether a candidate belongs to the run's connection (ports first: they differ most). */
static int gro_same_flow(const struct gro_run *r, const struct gro_l3 *l3, const uint8_t *tcph)
{
    return memcmp(tcph, r->tcph, 4) == 0 && brisk_addr_same_fast(&l3->id.raddr, &r->l3.id.raddr) &&
           brisk_addr_same_fast(&l3->id.laddr, &r->l3.id.laddr);
}

/* Whether a candidate of the run's connection (gro_same_flow) continues it: the next sequence number, the
 * same IP header word, and every TCP header byte the same but the sequence number (4..7), the checksum
 * (16..17) and PSH. */
static int gro_joins(const struct gro_run *r, const struct gro_l3 *l3, const struct brisk_tcp_repr *seg,
                     const uint8_t *tcph)
{
    const uint8_t *h = r->tcph;
    return r->n < GRO_MAX_FRAMES && seg->seq == r->next_seq && l3->word == r->l3.word &&
           seg->hdr_len == r->seg.hdr_len && r->seg.payload_len + seg->payload_len <= GRO_MAX_TEXT &&
           memcmp(tcph + 8, h + 8, 5) == 0 && ((tcph[13] ^ h[13]) & (uint8_t)~BRISK_TCP_PSH) == 0 &&
           memcmp(tcph + 14, h + 14, 2) == 0 && memcmp(tcph + 18, h + 18, (size_t)seg->hdr_len - 18) == 0;
}

/* Hands the run to TCP as one segment and counts its frames as the per-frame path would; frames no
 * synchronized connection owns go through that path instead. */
static void gro_flush(struct brisk_net *net, brisk_netdev *dev, struct gro_run *r, uint64_t now)
{
    uint32_t n = r->n;
    if (!n)
        return;
    r->n = 0;
    const struct brisk_ip_proto *tp = &net->ip_proto[BRISK_IP_PROTO_TCP];
    if (!tp->ops || !tp->ops->gro_input || !tp->ops->gro_input(tp->ctx, &r->l3.id, &r->seg, r->text, n, now)) {
        for (uint32_t i = 0; i < n; i++)
            brisk_net_rx_one(net, dev, r->frame[i]->data, r->frame[i]->len, r->frame[i]->flags, now);
        return;
    }
    net->c.EthInFrames += n;
    if (r->l3.v6) {
        net->c.Ip6InReceives += n;
        net->c.Ip6InDelivers += n;
    } else {
        net->c.IpInReceives += n;
        net->c.IpInDelivers += n;
    }
    dev->stats.rx_packets += n;
    for (uint32_t i = 0; i < n; i++) {
        dev->stats.rx_bytes += r->frame[i]->len;
        if (r->frame[i]->flags & BRISK_RX_CSUM_VALID)
            dev->stats.rx_csum_valid++;
    }
    if (n > 1) {
        dev->stats.rx_gro_segs++;
        dev->stats.rx_gro_merged += n - 1;
    }
}

/* Every open run to TCP, oldest first. */
static void gro_flush_all(struct brisk_net *net, brisk_netdev *dev, uint64_t now)
{
    struct gro_run *runs = net->gro->run;
    for (;;) {
        struct gro_run *oldest = NULL;
        for (uint32_t k = 0; k < GRO_MAX_FLOWS; k++)
            if (runs[k].n && (!oldest || runs[k].first < oldest->first))
                oldest = &runs[k];
        if (!oldest)
            return;
        gro_flush(net, dev, oldest, now);
    }
}

void brisk_gro_receive(struct brisk_net *net, brisk_netdev *dev, const struct brisk_rx_frame *frames,
                       size_t n, uint64_t now)
{
    struct gro_run *runs = net->gro->run;
    for (size_t i = 0; i < n; i++) {
        const struct brisk_rx_frame *f = &frames[i];
        struct gro_l3 l3;
        struct brisk_tcp_repr seg;
        const uint8_t *tcph;
        if (!gro_candidate(net, dev, f, &l3, &seg, &tcph)) {
            gro_flush_all(net, dev, now);
            brisk_net_rx_one(net, dev, f->data, f->len, f->flags, now);
            continue;
        }
        /* Its connection's run, else a free slot, else the oldest run's slot. */
        struct gro_run *r = NULL, *free_slot = NULL, *oldest = NULL;
        for (uint32_t k = 0; k < GRO_MAX_FLOWS && !r; k++) {
            struct gro_run *q = &runs[k];
            if (!q->n)
                free_slot = free_slot ? free_slot : q;
            else if (gro_same_flow(q, &l3, tcph))
                r = q;
            else if (!oldest || q->first < oldest->first)
                oldest = q;
        }
        if (r && !gro_joins(r, &l3, &seg, tcph))
            gro_flush(net, dev, r, now); /* the slot stays this connection's */
        if (!r) {
            r = free_slot;
            if (!r) {
                r = oldest;
                gro_flush(net, dev, r, now);
            }
        }
        if (!r->n) {
            r->first = i;
            r->l3 = l3;
            r->seg = seg;
            r->tcph = tcph;
            r->next_seq = seg.seq;
        } else {
            r->seg.payload_len += seg.payload_len;
            r->seg.flags |= seg.flags; /* PSH */
        }
        r->frame[r->n] = f;
        r->text[r->n].data = seg.payload;
        r->text[r->n].len = (uint32_t)seg.payload_len;
        r->n++;
        r->next_seq += (uint32_t)seg.payload_len;
        if (seg.flags & BRISK_TCP_PSH)
            gro_flush(net, dev, r, now);
    }
    gro_flush_all(net, dev, now);
}
