/*
 * gso.c — generic segmentation offload in software: turns one TCP super-frame into MSS-sized wire frames the
 * way a NIC with TCP segmentation offload does (Microsoft's "Large Send Offload" description and Linux's
 * tcp_gso_segment are the de-facto specification; no RFC covers it).
 *
 * The stack builds one super-frame of up to 64 KB with a single set of headers; the device (or this code,
 * when the device lacks BRISK_NETDEV_CAP_GSO, or in the simulator's NIC model) replicates the headers in
 * front of each gso_size slice of the payload and fixes what differs per frame:
 *   IPv4: total length, identification (original + i, as NICs do, so every wire frame has its own id),
 *         header checksum;
 *   IPv6: payload length (no identification, no header checksum; the TCP checksum's pseudo-header is RFC
 *         8200 §8.1's);
 *   TCP:  sequence number (+ offset of the slice); FIN and PSH belong to the end of the data, so they stay
 *         only on the last frame; CWR acknowledges one ECE once (RFC 3168 §6.1.2), so it stays only on the
 *         first; the urgent pointer is an offset from the sequence number, so it is rebased, and URG cleared
 *         on frames past the urgent data; the checksum is computed in full over each frame.
 * SYN and RST segments are never cut: a SYN occupies a sequence number before the data, and a super-frame is
 * by definition data. brisk_gso_segment checks everything before emitting anything, so a caller never sees
 * half a super-frame.
 */
#include "net/gso.h"

#include <string.h>

#include "brisk/brisk.h"
#include "wire/csum.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"
#include "wire/tcp.h"
#include "wire/wire.h"

/* The TCP flags of slice i of n. */
static uint8_t slice_flags(uint8_t flags, size_t i, size_t n)
{
    if (i + 1 < n)
        flags = (uint8_t)(flags & ~(BRISK_TCP_FIN | BRISK_TCP_PSH));
    if (i > 0)
        flags = (uint8_t)(flags & ~BRISK_TCP_CWR);
    return flags;
}

/* A super-frame's network header: IPv4 (options included) or IPv6 (the fixed header, TCP right behind it:
 * what brisk's TCP sends, and what a TSO6 device accepts). */
struct l3 {
    int v6;
    size_t hlen;
    struct brisk_ipv4_repr ip4;
    struct brisk_ipv6_repr ip6;
};

/* The pseudo-header sum of one frame's TCP bytes (tcp_len fits 16 bits). */
static uint32_t l3_pseudo(const struct l3 *l, size_t tcp_len)
{
    if (l->v6)
        return brisk_csum_pseudo6(l->ip6.src, l->ip6.dst, BRISK_IP_PROTO_TCP, (uint32_t)tcp_len);
    return brisk_csum_pseudo(l->ip4.src, l->ip4.dst, BRISK_IP_PROTO_TCP, (uint16_t)tcp_len);
}

/* Parses and checks a super-frame (everything but the caller's buffer sizes); *hdrs: its header bytes. */
static int parse_super(const uint8_t *frame, size_t len, uint16_t gso_size, struct l3 *l,
                       struct brisk_tcp_repr *th, size_t *hdrs)
{
    struct brisk_eth_repr eth;
    int rc = brisk_eth_parse(frame, len, &eth);
    if (rc < 0)
        return rc;
    const uint8_t *ip = frame + BRISK_ETH_HLEN;
    l->v6 = eth.type == BRISK_ETH_P_IPV6;
    if (l->v6) {
        rc = brisk_ipv6_parse(ip, len - BRISK_ETH_HLEN, &l->ip6);
        if (rc < 0)
            return rc;
        if (l->ip6.next_header != BRISK_IP_PROTO_TCP)
            return BRISK_ERR_INVAL;
        l->hlen = BRISK_IPV6_HLEN;
        rc = brisk_tcp_parse6(ip + BRISK_IPV6_HLEN, l->ip6.payload_len, l->ip6.src, l->ip6.dst, 0, th);
    } else {
        if (eth.type != BRISK_ETH_P_IPV4)
            return BRISK_ERR_INVAL;
        rc = brisk_ipv4_parse(ip, len - BRISK_ETH_HLEN, &l->ip4);
        if (rc < 0)
            return rc;
        if (l->ip4.proto != BRISK_IP_PROTO_TCP || brisk_ipv4_is_fragment(&l->ip4))
            return BRISK_ERR_INVAL;
        l->hlen = l->ip4.hdr_len;
        rc = brisk_tcp_parse(ip + l->ip4.hdr_len, l->ip4.total_len - l->ip4.hdr_len, l->ip4.src, l->ip4.dst, 0,
                             th);
    }
    if (rc < 0)
        return rc;
    if (th->opts.bad) /* ours, so a bug upstream: every frame would repeat it */
        return BRISK_WIRE_BAD_OPTION;
    if ((th->flags & (BRISK_TCP_SYN | BRISK_TCP_RST)) && th->payload_len > gso_size)
        return BRISK_ERR_INVAL;
    *hdrs = BRISK_ETH_HLEN + l->hlen + th->hdr_len;
    return 0;
}

/* Cuts a parsed, checked super-frame: each frame's headers are built in hdrbuf (room for hdrs bytes). */
static int cut(const uint8_t *frame, uint16_t gso_size, unsigned flags, const struct l3 *l,
               const struct brisk_tcp_repr *th, size_t hdrs, uint8_t *hdrbuf, brisk_gso_piece_fn emit,
               void *ctx)
{
    size_t ip_hlen = l->hlen;
    size_t payload = th->payload_len;

    size_t nseg = payload == 0 ? 1 : (payload + gso_size - 1) / gso_size;
    uint8_t *sip = hdrbuf + BRISK_ETH_HLEN;
    uint8_t *stcp = sip + ip_hlen;
    memcpy(hdrbuf, frame, hdrs);
    /* The IPv4 header checksum changes with the total length and the ID only: sum the rest once and add those
     * per frame (RFC 1624 arithmetic) instead of re-reading the header just written. IPv6 has no header
     * checksum and no ID: only its payload length changes. */
    uint32_t ip_base = 0;
    if (!l->v6) {
        brisk_put16(sip + 2, 0);
        brisk_put16(sip + 4, 0);
        brisk_put16(sip + 10, 0);
        ip_base = ~(uint32_t)brisk_csum_hdr(sip, ip_hlen) & 0xffffu;
    }
    struct brisk_gso_piece pc = {.hdrs = hdrbuf,
                                 .hdr_len = hdrs,
                                 .csum_start = (uint16_t)(BRISK_ETH_HLEN + ip_hlen),
                                 .csum_offset = BRISK_TCP_CSUM_OFF};
    for (size_t i = 0; i < nseg; i++) {
        size_t off = i * gso_size;
        size_t n = payload - off < gso_size ? payload - off : gso_size;

        if (l->v6) {
            brisk_put16(sip + 4, (uint16_t)(th->hdr_len + n));
        } else {
            uint16_t tot = (uint16_t)(ip_hlen + th->hdr_len + n), id = (uint16_t)(l->ip4.id + i);
            brisk_put16(sip + 2, tot);
            brisk_put16(sip + 4, id);
            brisk_put16(sip + 10, brisk_csum_fold(ip_base + tot + id));
        }

        uint8_t fl = slice_flags(th->flags, i, nseg);
        uint16_t urg = th->urg;
        if (fl & BRISK_TCP_URG) {
            if (urg > off) {
                urg = (uint16_t)(urg - off);
            } else {
                fl = (uint8_t)(fl & ~BRISK_TCP_URG);
                urg = 0;
            }
        }
        brisk_put32(stcp + 4, th->seq + (uint32_t)off);
        stcp[13] = fl;
        brisk_put16(stcp + 18, urg);
        /* The pseudo-header sum over this frame's TCP length; the full sum adds the header and payload words
         * (the TCP header is a whole number of 32-bit words, so the two pieces sum independently). */
        uint32_t sum = l3_pseudo(l, th->hdr_len + n);
        brisk_put16(stcp + BRISK_TCP_CSUM_OFF, 0);
        if (flags & BRISK_GSO_CSUM_PARTIAL) {
            brisk_put16(stcp + BRISK_TCP_CSUM_OFF, (uint16_t)~brisk_csum_fold(sum));
        } else {
            sum = brisk_csum_add(sum, stcp, th->hdr_len);
            sum = brisk_csum_add(sum, th->payload + off, n);
            brisk_put16(stcp + BRISK_TCP_CSUM_OFF, brisk_csum_fold(sum));
        }
        pc.payload = th->payload + off;
        pc.payload_len = n;
        emit(ctx, &pc);
    }
    return (int)nseg;
}

int brisk_gso_cut(const uint8_t *frame, size_t len, uint16_t gso_size, unsigned flags, uint8_t *hdrbuf,
                  size_t hdrbuf_len, brisk_gso_piece_fn emit, void *ctx)
{
    if (!frame || !hdrbuf || !emit || gso_size == 0)
        return BRISK_ERR_INVAL;
    struct l3 l;
    struct brisk_tcp_repr th;
    size_t hdrs;
    int rc = parse_super(frame, len, gso_size, &l, &th, &hdrs);
    if (rc < 0)
        return rc;
    if (hdrbuf_len < hdrs)
        return BRISK_ERR_INVAL;
    return cut(frame, gso_size, flags, &l, &th, hdrs, hdrbuf, emit, ctx);
}

/* brisk_gso_segment's adapter: the headers are built at the front of the scratch buffer, each payload slice
 * is copied right behind them, and the whole frame handed on. */
struct assemble {
    uint8_t *scratch;
    brisk_gso_emit_fn emit;
    void *ctx;
};

static void assemble_piece(void *ctx, const struct brisk_gso_piece *pc)
{
    struct assemble *a = ctx;
    memcpy(a->scratch + pc->hdr_len, pc->payload, pc->payload_len);
    a->emit(a->ctx, a->scratch, pc->hdr_len + pc->payload_len);
}

int brisk_gso_segment(const uint8_t *frame, size_t len, uint16_t gso_size, int csum_partial, uint8_t *scratch,
                      size_t scratch_len, brisk_gso_emit_fn emit, void *ctx)
{
    (void)csum_partial; /* the input's checksum is never read: every output frame gets a fresh one */
    if (!frame || !scratch || !emit || gso_size == 0)
        return BRISK_ERR_INVAL;
    /* The scratch buffer must take the headers plus one full slice: check before anything is emitted. */
    struct l3 l;
    struct brisk_tcp_repr th;
    size_t hdrs;
    int rc = parse_super(frame, len, gso_size, &l, &th, &hdrs);
    if (rc < 0)
        return rc;
    size_t slice = th.payload_len < gso_size ? th.payload_len : gso_size;
    if (scratch_len < hdrs + slice)
        return BRISK_ERR_INVAL;
    struct assemble a = {.scratch = scratch, .emit = emit, .ctx = ctx};
    return cut(frame, gso_size, 0, &l, &th, hdrs, scratch, assemble_piece, &a);
}
