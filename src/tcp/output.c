/*
 * output.c — everything TCP sends, through one transmit function.
 *
 * tcp_write_xmit() is THE transmit function (docs/design.md principle 4): the application path (send, close),
 * the ACK path (a window opened, data was acknowledged), the timer path (retransmission, pacing) and the
 * resume after a TX completion all call it, saying why (enum tcp_xmit_why), and it always reads the
 * connection's current Nagle / cork / MSG_MORE state. Per segment it asks, in order:
 *   1. is there data (or a FIN) not yet sent?
 *   2. does the peer's window allow it (rwnd), with sender-side silly-window avoidance (RFC 9293 §3.8.6.2.1)?
 *   3. does the congestion window allow it (cwnd, RFC 5681)?
 *   4. is a partial last segment to be held — TCP_CORK or MSG_MORE, auto-corking, Nagle (the small-tail
 *      decision, tail.c)?
 *   5. is the connection over its TCP Small Queues budget (bytes below TCP, tsq.c), before its pacing
 *      departure time (pacing.c), or is the device's queue stopped (byte queue limits)?
 * and then cuts the segment from the send buffer at transmit time (the buffer is a byte stream, so a segment
 * is any size the answers allow — one MSS, or a TSO burst sized by tso.c — short of a record boundary:
 * BRISK_MSG_EOR, mark.c) and hands it to tcp_transmit(). When it stops with data waiting it records which
 * answer stopped it (the hold reason, hold.c). Step 2 follows tcp_sws_partial: RFC 9293's half-window rule,
 * or Linux's whole-segment test (tcp_snd_wnd_test) with the persist timer sending what fits. Step 4 is never
 * indefinite (RFC 9293 MUST-60): TCP_CORK's and MSG_MORE's timer (tcp_cork_arm) ends it, and a probe-timer
 * call (TCP_XMIT_PROBE) sends the head whatever holds it. PSH follows tcp_push_each_write (tcp_psh): the
 * segment that empties the queue or ends a record (RFC 9293 MUST-61), or Linux's per-write marks.
 *
 * Under tcp_sw_gso (linux-6.x) new data leaves the way Linux's tcp_write_xmit sends it, in packets cut from
 * write-time pieces, whatever the device (piece.c, tcp_xmit_packets); this file keeps the segment-by-segment
 * loop (xmit_segments) for brisk's own profile, for what an RTO rewound, and for the probe timer's segment.
 *
 * tcp_transmit() builds one segment: header and options (MSS / window scale / SACK-permitted / timestamps on
 * SYNs, timestamps and SACK blocks afterwards: RFC 7323, RFC 2018, RFC 2883), the advertised window (rwin.c:
 * RFC 9293's receiver silly-window avoidance or Linux's tcp_select_window), the payload copied straight
 * from the send buffer into the packet, and the checksum (left partial for a device that offloads it). Every
 * segment carries an ACK except the first SYN, so it also settles any delayed ACK.
 *
 * Resets to segments without a connection (RFC 9293 §3.10.7.1) and challenge ACKs (RFC 5961, rate limited
 * per stack) are built here too.
 */
#include <assert.h>
#include <string.h>

#include "tcp/tcp.h"

uint32_t tcp_ts_now(const brisk_sock *c, uint64_t now)
{
    return (uint32_t)(now / BRISK_NSEC_PER_MSEC) + c->opt.ts_offset;
}

uint32_t tcp_local_mss(const brisk_sock *c)
{
    uint32_t mss = c->rt.dev ? c->rt.dev->cfg.mtu - tcp_hdrs_len(c) : TCP_DEFAULT_MSS;
    if (c->opt.mss_clamp && c->opt.mss_clamp < mss)
        mss = c->opt.mss_clamp;
    return mss;
}

uint32_t tcp_snd_mss(const brisk_sock *c)
{
    uint32_t mss = tcp_local_mss(c);
    if (c->opt.peer_mss < mss)
        mss = c->opt.peer_mss;
    if (c->net->pmtu.used && c->rt.dev) { /* a path MTU below the device's, learnt from ICMP (net/pmtu.c) */
        uint32_t dev = c->rt.dev->cfg.mtu, path = brisk_pmtu_get(c->net, &c->id.raddr, dev, c->net->now);
        if (path < dev && path - tcp_hdrs_len(c) < mss)
            mss = path - tcp_hdrs_len(c);
    }
    /* A peer announcing a tiny MSS would make every segment carry a few bytes for a 40-byte header, and
     * queues of thousands of them (the 2019 SACK-panic family): RFC 9293 MUST-16 is overridden by a floor,
     * tcp_min_snd_mss (Linux __tcp_mtu_to_mss: applied before the option bytes come off). */
    if (mss < c->net->s.tcp_min_snd_mss)
        mss = c->net->s.tcp_min_snd_mss;
    if (c->opt.ts)
        mss -= 12; /* TCPOLEN_TSTAMP_ALIGNED rides on every segment */
    return mss;
}

/* Whether a FIN is held out of order: it occupies sequence number fin_seq, which the SACK blocks report. */
int tcp_fin_held(const brisk_sock *c)
{
    return c->rcv.fin_pending && brisk_seq_gt(c->rcv.fin_seq, c->rcv.nxt);
}

int tcp_sack_blocks(const brisk_sock *c, uint32_t (*blocks)[2], int max)
{
    int n = max > 0 ? brisk_reass_sack(&c->rcv.ooo, blocks, max) : 0;
    if (!tcp_fin_held(c) || max <= 0)
        return n;
    uint32_t f = c->rcv.fin_seq;
    for (int i = 0; i < n; i++) {
        if (blocks[i][1] == f) {
            blocks[i][1] = f + 1;
            return n;
        }
    }
    if (c->rcv.ooo.nsegs == 0) {
        blocks[0][0] = f;
        blocks[0][1] = f + 1;
        return 1;
    }
    if (n < max) {
        blocks[n][0] = f;
        blocks[n][1] = f + 1;
        n++;
    }
    return n;
}

void tcp_sync_mss(brisk_sock *c)
{
    uint32_t mss = c->mss_full ? c->mss_full : c->snd.mss;
    if (c->net->s.tcp_half_window_mss) {
        /* Linux's tcp_bound_to_half_wnd: half the largest window, the whole of one under 536 bytes, never
         * below 68 bytes of header and data. */
        uint32_t w = c->snd.max_wnd;
        uint32_t cutoff = w > TCP_DEFAULT_MSS ? w / 2 : w;
        uint32_t floor = 68u - BRISK_TCP_HLEN - (c->opt.ts ? 12u : 0u);
        if (cutoff && mss > cutoff)
            mss = cutoff > floor ? cutoff : floor;
    }
    uint32_t old = c->snd.mss;
    if (mss == old)
        return;
    c->snd.mss = mss;
    if (c->cc.mss && old) {
        /* After the handshake: Linux's window counts segments, so it holds as many of the new size. */
        c->cc.cwnd = (uint32_t)((uint64_t)c->cc.cwnd * mss / old);
        if (c->cc.ssthresh != UINT32_MAX)
            c->cc.ssthresh = (uint32_t)((uint64_t)c->cc.ssthresh * mss / old);
        c->cc.mss = mss;
    }
}

/* Whether an ACK may carry SACK blocks at all: something held out of order, a D-SACK to report, or a FIN
 * (tcp_fin_held needs fin_pending). Without any, tcp_sack_blocks finds none (brisk_reass_sack reports the
 * runs of held pieces), so the common case is this one test inline. */
static inline int sack_any(const brisk_sock *c)
{
    return c->rcv.ooo.nsegs != 0 || c->rcv.dsack || c->rcv.fin_pending;
}

/* SACK blocks the next ACK-bearing segment will carry, and the option bytes they take (NOP, NOP, kind, len,
 * 8 per block), so data segments can leave room for them as Linux's tcp_current_mss does. The common case,
 * nothing held out of order and no D-SACK, is sack_any inline (sack_opt_bytes); the count is out of line. */
__attribute__((noinline)) static uint32_t sack_opt_count(brisk_sock *c)
{
    if (c->rcv.ooo.nsegs == 0 && !c->rcv.dsack && !tcp_fin_held(c))
        return 0;
    uint32_t blocks[BRISK_TCP_MAX_SACK][2];
    int max = c->opt.ts ? 3 : 4;
    int n = (c->rcv.dsack ? 1 : 0) + tcp_sack_blocks(c, blocks, max);
    if (n > max)
        n = max;
    return n ? 4u + 8u * (uint32_t)n : 0;
}

static inline uint32_t sack_opt_bytes(brisk_sock *c)
{
    if (!c->opt.sack || !sack_any(c))
        return 0;
    return sack_opt_count(c);
}

uint32_t tcp_mss_now(brisk_sock *c)
{
    return c->snd.mss - sack_opt_bytes(c);
}

int tcp_transmit(brisk_sock *c, uint32_t seq, uint32_t len, uint8_t flags, uint64_t now)
{
    struct brisk_net *net = c->net;
    struct brisk_tcp_repr h = {
        .sport = c->id.lport,
        .dport = c->id.rport,
        .seq = seq,
        .flags = flags,
    };
    int syn = (flags & BRISK_TCP_SYN) != 0;
    if (flags & BRISK_TCP_ACK)
        h.ack = c->rcv.nxt;
    if (syn) {
        h.opts.mss_ok = 1;
        h.opts.mss = (uint16_t)tcp_local_mss(c);
        if (net->s.tcp_window_scaling && (c->state == BRISK_TCP_SYN_SENT || c->opt.ws)) {
            h.opts.wscale_ok = 1;
            h.opts.wscale = c->rcv.wscale;
        }
        if (net->s.tcp_sack && (c->state == BRISK_TCP_SYN_SENT || c->opt.sack))
            h.opts.sack_perm = 1;
        if (net->s.tcp_timestamps && (c->state == BRISK_TCP_SYN_SENT || c->opt.ts)) {
            h.opts.ts_ok = 1;
            h.opts.ts_val = tcp_ts_now(c, now);
            h.opts.ts_ecr = c->state == BRISK_TCP_SYN_SENT ? 0 : c->opt.ts_recent;
        }
    } else {
        if (c->opt.ts) {
            h.opts.ts_ok = 1;
            h.opts.ts_val = tcp_ts_now(c, now);
            h.opts.ts_ecr = c->opt.ts_recent;
        }
        if (c->opt.sack && (flags & BRISK_TCP_ACK) && sack_any(c)) {
            h.opts.nsack = BRISK_TCP_MAX_SACK; /* ask how many blocks fit beside the other options */
            int max = (int)brisk_tcp_sack_fit(&h.opts);
            int n = 0;
            if (c->rcv.dsack && max > 0) {
                h.opts.sack[0].start = c->rcv.dsack_start;
                h.opts.sack[0].end = c->rcv.dsack_end;
                n = 1;
            }
            uint32_t blocks[BRISK_TCP_MAX_SACK][2];
            int k = tcp_sack_blocks(c, blocks, max - n);
            for (int i = 0; i < k; i++) {
                h.opts.sack[n].start = blocks[i][0];
                h.opts.sack[n].end = blocks[i][1];
                n++;
            }
            h.opts.nsack = (uint8_t)n;
        }
    }
    h.window = tcp_rwin_select(c, syn); /* the receive window (rwin.c) */

    size_t hlen = BRISK_TCP_HLEN + brisk_tcp_opts_len(&h.opts);
    /* A TSO burst (len over what one MTU-sized frame carries with these options) is cut by the device into
     * segments of seg_payload bytes, each repeating the options. A single segment never exceeds the MTU:
     * SACK blocks yield to payload (a caller that sized len for them never gets here). */
    uint32_t mtu = c->rt.dev->cfg.mtu;
    uint32_t l3 = (uint32_t)brisk_route_l3_hlen(&c->rt);
    int gso = (c->rt.dev->cfg.caps & BRISK_NETDEV_CAP_GSO) && len > c->snd.mss;
    while (!gso && h.opts.nsack > 0 && hlen + len + l3 > mtu) {
        h.opts.nsack--;
        hlen = BRISK_TCP_HLEN + brisk_tcp_opts_len(&h.opts);
    }
    uint32_t seg_payload = mtu - l3 - (uint32_t)hlen;
    /* ... and never more than the MSS allows with these options (the peer's may be below the MTU's). */
    uint32_t opt_extra = (uint32_t)hlen - BRISK_TCP_HLEN - (c->opt.ts ? 12u : 0u);
    if (gso && c->snd.mss > opt_extra && c->snd.mss - opt_extra < seg_payload)
        seg_payload = c->snd.mss - opt_extra;
    brisk_pkt *pkt = brisk_pkt_alloc(&net->pool, (uint32_t)(hlen + len + l3 + BRISK_ETH_HLEN));
    if (!pkt) {
        net->c.IpOutDiscards++;
        net->tx_wake_wanted = 1;
        return BRISK_ERR_NOBUFS;
    }
    uint8_t *b = brisk_pkt_put(pkt, (uint32_t)(hlen + len));
    brisk_tcp_emit(b, &h);
    if (gso && len > seg_payload) {
        pkt->gso_size = (uint16_t)seg_payload;
        pkt->gso_segs = (uint16_t)((len + seg_payload - 1) / seg_payload);
    }
    if (len) {
        size_t got = brisk_sbuf_copyout(&c->snd.buf, seq - c->snd.una, b + hlen, len);
        assert(got == len); /* callers only send bytes the buffer holds */
        (void)got;
    }
    if (c->rt.dev->cfg.caps & BRISK_NETDEV_CAP_CSUM) {
        tcp_csum_fill(b, hlen + len, &c->rt.src, &c->id.raddr, 1);
        pkt->flags |= BRISK_PKT_CSUM_PARTIAL;
        pkt->csum_start = 0;
        pkt->csum_offset = BRISK_TCP_CSUM_OFF;
    } else {
        tcp_csum_fill(b, hlen + len, &c->rt.src, &c->id.raddr, 0);
    }

    uint32_t pkt_segs = pkt->gso_segs ? pkt->gso_segs : 1;
    if (len || (flags & (BRISK_TCP_SYN | BRISK_TCP_FIN)))
        tcp_charge(c, pkt); /* below-TCP bytes, released when the buffer is freed (tsq.c) */
    int rc = brisk_route_output(net, &c->rt, &c->id.raddr, BRISK_IP_PROTO_TCP, c->tos, pkt, now); /* IP_TOS */
    if (rc == BRISK_ERR_BUSY || rc == BRISK_ERR_NOBUFS)
        return rc;                   /* not sent: the caller keeps the bytes unsent */
    assert(rc != BRISK_ERR_MSGSIZE); /* segments are sized to the MTU above */
    if (flags & BRISK_TCP_ACK)
        c->rcv.wup = h.ack; /* Last.ACK.sent: which segments may set TS.Recent (input.c) */

    c->stat.segs_out += pkt_segs;
    if (net->s.tcp_sw_gso)
        c->pieces.wstamp = now; /* Linux's tcp_wstamp_ns, for TSO deferral (piece.c) */
    int rtx = len > 0 && brisk_seq_lt(seq, c->snd.max);
    if (rtx || (syn && c->timer.retries > 0)) {
        net->c.TcpRetransSegs += pkt_segs;
        c->stat.retransmits += pkt_segs;
    } else {
        net->c.TcpOutSegs += pkt_segs;
        if (len)
            net->c.TCPOrigDataSent += pkt_segs;
    }
    c->stat.bytes_sent += len;
    if (len) {
        tcp_sb_sent(c, seq, seq + len, now); /* the scoreboard's record of it (sack.c) */
        if (c->cc.in_recovery)
            c->prr.out += len;
    }
    if (len && !rtx && c->txt.len < TCP_TX_TIMES) {
        tcp_txt_push(c, seq + len, now);
    } else if (rtx) {
        tcp_undo_retransmitted(c, now);
        /* Karn: an ACK of these bytes cannot tell which transmission it answers. */
        if (!c->txt.rtx_valid || brisk_seq_gt(seq + len, c->txt.rtx_high))
            c->txt.rtx_high = seq + len;
        c->txt.rtx_valid = 1;
    }
    if (flags & BRISK_TCP_ACK)
        tcp_ack_sent(c);
    if (len)
        c->timer.last_tx = now;
    return BRISK_OK;
}

void tcp_send_ack(brisk_sock *c, uint64_t now)
{
    c->ack.pending = 1;
    /* snd.max, not snd.nxt: after an RTO rewound snd.nxt, a pure ACK with the old sequence number would be
     * outside the peer's window and dropped (Linux's tcp_acceptable_seq has the same purpose). */
    if (tcp_transmit(c, c->snd.max, 0, BRISK_TCP_ACK, now) < 0) {
        c->ack.refused = 1;
        tcp_block(c); /* resent from brisk_tcp_run_blocked */
    }
}

void tcp_send_syn(brisk_sock *c, uint64_t now)
{
    uint8_t flags = BRISK_TCP_SYN;
    if (c->state == BRISK_TCP_SYN_RECEIVED)
        flags |= BRISK_TCP_ACK;
    if (tcp_transmit(c, c->snd.iss, 0, flags, now) < 0) {
        /* The device ring or the pool refused it: send it again when a TX completion makes room, not at the
         * 1 s initial RTO (a SYN behind a busy bulk flow's full ring would otherwise wait that long). */
        c->snd.syn_refused = 1;
        tcp_block(c);
    }
    c->snd.nxt = c->snd.iss + 1;
    if (brisk_seq_lt(c->snd.max, c->snd.nxt))
        c->snd.max = c->snd.nxt;
}

void tcp_send_rst(brisk_sock *c, uint64_t now)
{
    c->net->c.TcpOutRsts++;
    tcp_transmit(c, c->snd.max, 0, BRISK_TCP_RST | BRISK_TCP_ACK, now);
}

void tcp_send_bare(struct brisk_net *net, const struct brisk_route *rt, const struct brisk_addr *dst,
                   const struct brisk_tcp_repr *h, uint8_t tos, uint64_t now)
{
    size_t hlen = BRISK_TCP_HLEN + brisk_tcp_opts_len(&h->opts);
    brisk_pkt *pkt = brisk_pkt_alloc(&net->pool, (uint32_t)(hlen + brisk_route_l3_hlen(rt) + BRISK_ETH_HLEN));
    if (!pkt) {
        net->c.IpOutDiscards++;
        return;
    }
    uint8_t *b = brisk_pkt_put(pkt, (uint32_t)hlen);
    brisk_tcp_emit(b, h);
    tcp_csum_fill(b, hlen, &rt->src, dst, 0);
    net->c.TcpOutSegs++;
    brisk_route_output(net, rt, dst, BRISK_IP_PROTO_TCP, tos, pkt, now);
}

void tcp_send_rst_for(struct brisk_net *net, const struct brisk_tuple *id,
                      const struct brisk_tcp_repr *seg, uint64_t now)
{
    if (seg->flags & BRISK_TCP_RST)
        return;
    struct brisk_route rt;
    if (brisk_route_lookup(net, &id->raddr, &rt) != BRISK_OK)
        return;
    rt.src = id->laddr;
    struct brisk_tcp_repr h = {.sport = seg->dport, .dport = seg->sport, .flags = BRISK_TCP_RST};
    if (seg->flags & BRISK_TCP_ACK) {
        h.seq = seg->ack;
    } else {
        h.flags |= BRISK_TCP_ACK;
        h.ack = seg->seq + (uint32_t)seg->payload_len + ((seg->flags & BRISK_TCP_SYN) ? 1u : 0u) +
                ((seg->flags & BRISK_TCP_FIN) ? 1u : 0u);
    }
    net->c.TcpOutRsts++;
    tcp_send_bare(net, &rt, &id->raddr, &h, 0, now);
}

/* Linux bounds, per connection, the ACKs it sends in answer to segments it will not accept — outside the
 * window, failing PAWS, and challenge ACKs (tcp_oow_rate_limited, tcp_invalid_ratelimit = 500 ms): two
 * endpoints that disagree about each other's window (a lost or forged reset, a middlebox) would otherwise
 * answer each other's ACKs for ever. RFC 5961 §7 asks for challenge-ACK throttling and brisk has it per stack
 * (tcp_challenge_ack_limit); the per-connection interval is the linux-* profiles' (0 in brisk's, where every
 * invalid segment is answered, RFC 9293 §3.10.7.4). */
int tcp_oow_limited(brisk_sock *c, uint64_t *skipped, uint64_t now)
{
    uint64_t iv = c->net->s.tcp_invalid_ratelimit_ns;
    if (!iv)
        return 0;
    if (c->oow_ack_at != BRISK_TIME_NONE && now >= c->oow_ack_at && now - c->oow_ack_at < iv) {
        (*skipped)++;
        return 1;
    }
    c->oow_ack_at = now;
    return 0;
}

void tcp_send_challenge_ack(brisk_sock *c, uint64_t now)
{
    struct brisk_tcp *t = tcp_of(c->net);
    if (tcp_oow_limited(c, &c->net->c.TCPACKSkippedChallenge, now))
        return; /* Linux: the per-socket limit first, whatever the segment carried */
    if (now - t->challenge.window_start >= BRISK_NSEC_PER_SEC) {
        t->challenge.window_start = now;
        t->challenge.count = 0;
    }
    if (t->challenge.count >= c->net->s.tcp_challenge_ack_limit) {
        c->net->c.TCPChallengeACKLimited++;
        return;
    }
    t->challenge.count++;
    c->net->c.TCPChallengeACK++;
    tcp_send_ack(c, now);
}

__attribute__((always_inline)) static inline void advance_nxt(brisk_sock *c, uint32_t len, uint8_t flags,
                                                              uint32_t mss)
{
    c->snd.nxt += len;
    if (flags & BRISK_TCP_FIN) {
        c->snd.fin_sent = 1;
        c->snd.fin_alone = len == 0;
        c->snd.nxt++;
    }
    if (len < mss)
        c->snd.sml = c->snd.nxt; /* Minshall: the end of the last small segment */
    if (brisk_seq_lt(c->snd.max, c->snd.nxt))
        c->snd.max = c->snd.nxt;
    if (c->net->s.tcp_sw_gso && c->pieces.head_set) /* settings are hot, the pieces cold */
        tcp_piece_advance(c);
}

void tcp_advance_nxt(brisk_sock *c, uint32_t len, uint8_t flags, uint32_t mss)
{
    advance_nxt(c, len, flags, mss);
}

static int can_send_data(int state)
{
    return state == BRISK_TCP_ESTABLISHED || state == BRISK_TCP_CLOSE_WAIT || state == BRISK_TCP_FIN_WAIT_1 ||
           state == BRISK_TCP_CLOSING || state == BRISK_TCP_LAST_ACK;
}

uint8_t tcp_psh(brisk_sock *c, uint32_t seq, uint32_t len)
{
    if (len == 0)
        return 0;
    uint32_t end = seq + len;
    if (c->net->s.tcp_push_each_write && c->net->s.tcp_sw_gso) {
        /* The segment's piece had PSH: a mark at its end, or at the end of a piece it took all or part of
         * when it grew (tcp_grow_skb leaves the head's flags at its new end), which piece.c moved there. */
        return c->snd.marks && tcp_mark_psh_in(c, seq, end) ? BRISK_TCP_PSH : 0;
    }
    unsigned mark = c->snd.marks ? tcp_mark_at(c, end) : 0;
    if (c->net->s.tcp_push_each_write)
        return (mark & TCP_MARK_PSH) ? BRISK_TCP_PSH : 0;
    return end == tcp_data_end(c) || (mark & TCP_MARK_EOR) ? BRISK_TCP_PSH : 0;
}

/* tcp_psh for the segment loop's segment of len > 0 bytes at snd.nxt, `notsent` bytes being unsent: without
 * marks or per-write PSH (brisk's profile, unless the application ends records), PSH is "this segment empties
 * the queue" (seq + len is the data's end), one comparison. */
static inline uint8_t psh_of(brisk_sock *c, uint32_t seq, uint32_t len, uint32_t notsent)
{
    if (c->snd.marks || c->net->s.tcp_push_each_write)
        return tcp_psh(c, seq, len);
    return len == notsent ? BRISK_TCP_PSH : 0;
}

/* The device, TSQ and pacing checks before a segment or packet goes: the hold reason, or NONE. */
__attribute__((always_inline)) static inline int below_holds(brisk_sock *c, uint64_t now)
{
    if (tcp_tsq_holds(c))
        return BRISK_HOLD_TSQ; /* tsq.c */
    if (tcp_pace_holds(c, now))
        return BRISK_HOLD_PACING; /* not before its departure time: the pacing timer sends it (pacing.c) */
    if (brisk_netdev_stopped(c->rt.dev)) {
        tcp_block(c); /* byte queue limits: the completion that reopens the queue resumes us */
        return BRISK_HOLD_DEVICE;
    }
    return BRISK_HOLD_NONE;
}

/* The exported form for piece.c's packets; the segment loop below calls the static one, which inlines. */
int tcp_below_holds(brisk_sock *c, uint64_t now)
{
    return below_holds(c, now);
}

int tcp_send_fin_alone(brisk_sock *c, uint64_t now, int *sent)
{
    if (!c->snd.fin_queued || c->snd.fin_sent || c->snd.nxt != tcp_data_end(c))
        return BRISK_HOLD_NONE;
    if (tcp_transmit(c, c->snd.nxt, 0, BRISK_TCP_FIN | BRISK_TCP_ACK, now) < 0) {
        tcp_block(c);
        return BRISK_HOLD_DEVICE;
    }
    c->snd.fin_sent = 1;
    c->snd.fin_alone = 1; /* all data had gone: a segment of its own, as Linux's tcp_send_fin */
    c->snd.nxt++;
    if (brisk_seq_lt(c->snd.max, c->snd.nxt))
        c->snd.max = c->snd.nxt;
    *sent = 1;
    return BRISK_HOLD_NONE;
}

/*
 * Segment by segment from snd.nxt up to `stop` (brisk's own path; under tcp_sw_gso the resending of an RTO's
 * go-back-N and the probe timer's segment): the checks of the file's essay, in order. Returns the hold
 * reason. `wake`: a probe timer fired (TCP_XMIT_PROBE), so the head goes, held or not, with PSH. The caller
 * passes it as a constant, so that the loop inlines once without the probe's tests, as every send but the
 * probe's takes it, and once with them.
 */
__attribute__((always_inline)) static inline int xmit_segments(brisk_sock *c, int why, uint32_t mss,
                                                               uint32_t goal, uint32_t stop, uint64_t now,
                                                               int *sent, uint32_t *sent_new, int wake)
{
    const struct brisk_settings *set = &c->net->s;
    for (;;) {
        uint32_t notsent = tcp_notsent(c);
        if (notsent == 0)
            return c->snd.fin_queued && !c->snd.fin_sent ? tcp_send_fin_alone(c, now, sent) : BRISK_HOLD_NONE;
        if (brisk_seq_geq(c->snd.nxt, stop))
            return BRISK_HOLD_NONE;
        /* The piece at snd.nxt runs to the end of the queue or to the next record boundary: no segment
         * crosses one (BRISK_MSG_EOR, mark.c). Only the queue's last piece may wait for more data; a record
         * ended by a later write has none coming (Linux: Nagle and cork apply to the last skb only). */
        uint32_t seg = c->snd.marks ? tcp_mark_eor_clip(c, c->snd.nxt, notsent) : notsent;
        int last = seg == notsent;
        if (brisk_seq_gt(c->snd.nxt + seg, stop))
            seg = stop - c->snd.nxt;
        uint32_t flight = tcp_flight(c);
        uint32_t pipe = tcp_pipe(c); /* = flight without a scoreboard */
        uint32_t cwnd_avail = c->cc.cwnd > pipe ? c->cc.cwnd - pipe : 0;
        uint32_t wnd_end = c->snd.una + c->snd.wnd;
        uint32_t wnd_avail = brisk_seq_gt(wnd_end, c->snd.nxt) ? wnd_end - c->snd.nxt : 0;
        if (wnd_avail == 0) {
            if (flight == 0 && c->timer.rtx_kind != TCP_RTX_RTO)
                tcp_arm_persist(c, now);
            return BRISK_HOLD_RWND;
        }
        if (cwnd_avail == 0)
            return BRISK_HOLD_CWND;
        uint32_t len = seg;
        if (len > goal)
            len = goal;
        if (len > cwnd_avail)
            len = cwnd_avail;
        if (len > wnd_avail)
            len = wnd_avail;
        uint32_t head_end = 0;
        if (wake) {
            /* The probe is one segment of the head piece (Linux: tcp_write_wakeup). */
            if (len > mss)
                len = mss;
            if (set->tcp_sw_gso) {
                head_end = tcp_piece_end(c, c->snd.nxt);
                if (len > head_end - c->snd.nxt)
                    len = head_end - c->snd.nxt;
            }
        }
        if (len > mss && len < seg)
            len -= len % mss; /* a burst cut by a window ends on a segment boundary */
        if (len < mss && len < seg && !wake) {
            /* Cut short by a window, not by the data: sender SWS avoidance (RFC 9293 §3.8.6.2.1). */
            int rwnd = len == wnd_avail;
            if (set->tcp_sws_partial) {
                /* A partial segment goes if it is at least half the largest window the peer offered, or
                 * nothing is in flight (no ACK is coming to open the window further). */
                if (flight > 0 && len < c->snd.max_wnd / 2)
                    return len == cwnd_avail ? BRISK_HOLD_CWND : BRISK_HOLD_RWND;
            } else {
                /* Linux: tcp_snd_wnd_test sends a segment only if it fits the window whole; with nothing
                 * in flight the probe timer sends what fits (tcp_write_wakeup), at max(RTO, 200 ms). */
                if (rwnd && flight == 0 && c->timer.rtx_kind != TCP_RTX_RTO)
                    tcp_arm_persist(c, now);
                return rwnd ? BRISK_HOLD_RWND : BRISK_HOLD_CWND;
            }
        } else if (len < mss && last && !c->snd.fin_queued && !wake) {
            /* The last, partial piece of the queue: cork, MSG_MORE, auto-cork and Nagle (tail.c). */
            int tail = tcp_tail_hold(c, why, len, now);
            if (tail != BRISK_HOLD_NONE)
                return tail;
        }
        int below = below_holds(c, now);
        if (below != BRISK_HOLD_NONE)
            return below;
        uint32_t seq = c->snd.nxt;
        uint8_t flags = BRISK_TCP_ACK | (wake ? BRISK_TCP_PSH : psh_of(c, seq, len, notsent));
        if (len == notsent && c->snd.fin_queued)
            flags |= BRISK_TCP_FIN;
        if (tcp_transmit(c, seq, len, flags, now) < 0) {
            tcp_block(c); /* the device or the pool refused: resume on the next TX completion */
            return BRISK_HOLD_DEVICE;
        }
        if (c->snd.marks)
            tcp_mark_sent(c, seq, seq + len);
        if (wake && set->tcp_sw_gso) {
            /* Linux's tcp_write_wakeup flags the head skb PSH before it splits it, and its first part again:
             * both pieces now end with a mark; pushed_seq moves past the whole head skb. The rest leaves in
             * packets (the caller). */
            tcp_mark_add(c, seq + len, TCP_MARK_PSH);
            tcp_mark_add(c, head_end, TCP_MARK_PSH);
            if (brisk_seq_lt(c->mark.pushed, head_end))
                c->mark.pushed = head_end;
        } else if (wake && brisk_seq_lt(c->mark.pushed, seq + len)) {
            c->mark.pushed = seq + len; /* Linux: tcp_write_wakeup moves pushed_seq past what it sent */
        }
        tcp_pace_sent(c, len, now);
        advance_nxt(c, len, flags, mss);
        *sent = 1;
        *sent_new += len;
        if (wake && set->tcp_sw_gso)
            return BRISK_HOLD_NONE;
        wake = 0;
    }
}

void tcp_write_xmit(brisk_sock *c, int why, uint64_t now)
{
    if (!can_send_data(c->state))
        return;
    uint32_t prior_max = c->snd.max;
    uint32_t mss = tcp_mss_now(c); /* room for the SACK blocks our ACKs must carry */
    int sent = 0;
    int hold = BRISK_HOLD_NONE;
    if (tcp_sb_active(c) && c->sb.lost != c->sb.retrans) {
        /* Lost segments go before new data (RFC 6675 §5 step 4, rule 1). */
        uint64_t before = c->stat.bytes_sent;
        hold = tcp_retransmit_lost(c, now);
        sent = c->stat.bytes_sent != before;
        if (hold != BRISK_HOLD_NONE) {
            tcp_hold(c, hold, now);
            if (sent)
                tcp_rearm_sent(c, now, prior_max, 0);
            return;
        }
    }
    const struct brisk_settings *set = &c->net->s;
    uint32_t sent_new = 0;
    /* brisk's own profile: everything goes segment by segment, unless nothing is unsent and no FIN is to go
     * (an ACK that only acknowledged, in request / response the common case). Under tcp_sw_gso only the bytes
     * an RTO rewound and the probe timer's segment do; new data leaves in Linux's packets. The loop inlines
     * here, once for the probe timer's call and once for every other (see xmit_segments). */
    int segments = !set->tcp_sw_gso ? tcp_notsent(c) || (c->snd.fin_queued && !c->snd.fin_sent)
                                    : brisk_seq_lt(c->snd.nxt, c->snd.max) || why == TCP_XMIT_PROBE;
    if (segments) {
        /* brisk: one MSS, or a TSO burst on a GSO device, up to the data's end. */
        uint32_t goal = !set->tcp_sw_gso ? tcp_size_goal(c, mss) : mss;
        uint32_t stop = !set->tcp_sw_gso || why == TCP_XMIT_PROBE ? tcp_data_end(c) : c->snd.max;
        hold = why == TCP_XMIT_PROBE ? xmit_segments(c, why, mss, goal, stop, now, &sent, &sent_new, 1)
                                     : xmit_segments(c, why, mss, goal, stop, now, &sent, &sent_new, 0);
    }
    if (set->tcp_sw_gso && hold == BRISK_HOLD_NONE && c->snd.nxt == c->snd.max)
        hold = tcp_xmit_packets(c, why, mss, now, &sent, &sent_new);
    /* Nothing held: no ceiling to keep. And under Linux's probe timer, data sent means a retransmit timer
     * now owns the slot the probe timer used (its expiry would find data in flight and do nothing). */
    if (brisk_timer_armed(&c->timer.cork) && (tcp_notsent(c) == 0 || (sent_new && set->tcp_cork_probe_timer)))
        tcp_timer_cancel(c, &c->timer.cork);
    if (c->hold.reason != hold)
        tcp_hold(c, hold, now);
    /* RFC 6298 §5.1: a running RTO is not restarted by a send; a probe deadline is (RFC 8985 §7.2). The
     * eager compat discipline re-arms on every send, as Linux did until 2019 (timer.c). */
    if (sent)
        tcp_rearm_sent(c, now, prior_max, 1);
}
