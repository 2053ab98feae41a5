/*
 * input.c — segment arrival, RFC 9293 §3.10.7, with RFC 5961 (blind-attack mitigations), RFC 7323 (PAWS,
 * timestamps, window scale), RFC 2018 / 2883 (SACK, D-SACK as a receiver), RFC 5681 / 6582 (duplicate ACKs,
 * fast retransmit, NewReno recovery) and RFC 1122 §4.2.3.2 (delayed ACKs).
 *
 * brisk_tcp_input() checks the segment (bounds, checksum, options: src/wire/tcp.c) and finds its connection
 * by 4-tuple, else a listener by port, else answers with a RST. Then, per state: listen_input()    LISTEN: a
 * SYN makes a child in SYN-RECEIVED (bounded by tcp_max_syn_backlog and the accept backlog) and answers
 * SYN-ACK; an ACK gets a RST; a RST is ignored. syn_sent_input()  SYN-SENT: the SYN-ACK completes the open
 * (or a bare SYN starts a simultaneous open). conn_input()      every synchronized state, in the RFC's order:
 * PAWS, sequence acceptability, RST (exact match resets, in-window gets a challenge ACK), SYN (challenge
 * ACK), ACK (window, RTT, congestion control, state changes on our FIN), segment text (in order to the
 * receive buffer, out of order to reassembly, duplicates reported as D-SACK), FIN. Afterwards the connection
 * runs the one transmit function (ACKs may have opened the windows) and sends any ACK still owed at once;
 * ACKs that may wait go to the delayed-ACK timer.
 */
#include <assert.h>
#include <string.h>

#include "tcp/syncookie.h"
#include "tcp/tcp.h"
#include "wire/wire.h"

static void deliver_to_rcvbuf(void *ctx, const uint8_t *data, uint32_t n)
{
    brisk_sock *c = ctx;
    size_t got = brisk_sbuf_append(&tcp_of(c->net)->chunks, &c->rcv.buf, data, n);
    assert(got == n); /* tcp_rcv_drain_ooo pops no more than brisk_sbuf_room() says fits */
    (void)got;
}

/* Inline in both callers: conn_input's is every data segment's path, and the SYN-ACK's text (syn_sent_input)
 * made it a function of two callers that LTO no longer inlined (callgrind rr 1 flow: +3 M instructions). */
__attribute__((always_inline)) static inline int text_input(brisk_sock *c, const struct brisk_tcp_repr *seg,
                                                            const struct brisk_gro_piece *pieces,
                                                            uint32_t npieces, uint64_t now);

/* Options both ends agreed on, from the peer's SYN (or SYN-ACK). */
static void negotiate(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now)
{
    const struct brisk_settings *s = &c->net->s;
    const struct brisk_tcp_opts *o = &seg->opts;
    c->opt.peer_mss = o->mss_ok && o->mss ? o->mss : TCP_DEFAULT_MSS;
    c->opt.ws = s->tcp_window_scaling && o->wscale_ok;
    if (c->opt.ws) {
        c->snd.wscale = o->wscale > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : o->wscale;
    } else {
        c->snd.wscale = 0;
        c->rcv.wscale = 0;
    }
    c->opt.sack = s->tcp_sack && o->sack_perm;
    c->opt.ts = s->tcp_timestamps && o->ts_ok;
    if (c->opt.ts) {
        c->opt.ts_recent = o->ts_val;
        c->opt.ts_recent_age = now;
    }
    c->mss_full = tcp_snd_mss(c);
    c->snd.mss = c->mss_full;
}

/* The connection becomes ESTABLISHED: windows, congestion control, the first RTT sample. */
static void establish(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now)
{
    tcp_set_state(c, BRISK_TCP_ESTABLISHED, now);
    brisk_rtt_established(&c->rtt); /* RFC 6298 §5.7: 3 s if the SYN timed out and gave no sample */
    c->snd.una = seg->ack;
    c->snd.wnd = (uint32_t)seg->window << (seg->flags & BRISK_TCP_SYN ? 0 : c->snd.wscale);
    c->snd.max_wnd = c->snd.wnd;
    tcp_sync_mss(c); /* half that window may bound the MSS (tcp_half_window_mss) */
    c->snd.wl1 = seg->seq;
    c->snd.wl2 = seg->ack;
    c->snd.sml = c->snd.una;
    /* Karn: the handshake gives a sample only if the SYN was not retransmitted. */
    if (c->timer.retries == 0 && c->rtt_probe.at != BRISK_TIME_NONE) {
        uint64_t rtt = now - c->rtt_probe.at;
        brisk_rtt_sample_ack(&c->rtt, rtt, rtt, now, 1, c->snd.una, c->snd.max);
    }
    c->rtt_probe.at = BRISK_TIME_NONE;
    c->timer.retries = 0;
    tcp_clear_rtx(c);
    c->cc_ops->init(&c->cc, c->snd.mss, c->net->s.tcp_initial_cwnd);
    c->cc.abc_limit = (uint8_t)c->net->s.tcp_abc_limit; /* slow-start counting (cc.h; <= 64 by settings.c) */
    c->cc.recover = c->snd.iss; /* RFC 6582 §3: "initialized to the initial send sequence number" */
    c->ack.quick = 16;
    tcp_keepalive_reset(c, now);
    tcp_rwin_established(c, now); /* the receive window's state once open (rwin.c) */
}

static void listen_input(brisk_sock *l, const struct brisk_tuple *id, const struct brisk_tcp_repr *seg,
                         uint64_t now)
{
    struct brisk_net *net = l->net;
    if (seg->flags & BRISK_TCP_RST)
        return;
    if (seg->flags & BRISK_TCP_ACK) {
        tcp_send_rst_for(net, id, seg, now);
        return;
    }
    if (!(seg->flags & BRISK_TCP_SYN) || (seg->flags & BRISK_TCP_FIN))
        return;
    if (brisk_syncookie_use(l)) { /* SYN queue full (or cookies always): answer statelessly, RFC 4987 */
        brisk_syncookie_send(l, id, seg, now);
        return;
    }
    if (l->lq.syn_count >= net->s.tcp_max_syn_backlog || l->lq.len >= l->lq.backlog) {
        net->c.ListenOverflows++;
        return;
    }
    brisk_sock *c = tcp_child_new(l, id, seg);
    if (!c)
        return;

    c->rcv.irs = seg->seq;
    c->rcv.nxt = seg->seq + 1;
    negotiate(c, seg, now);
    tcp_rwin_open(c, 1, 0);   /* the SYN-ACK's window and scale (rwin.c) */
    c->snd.wnd = seg->window; /* never scaled in a SYN */
    c->listener = l;
    l->lq.syn_count++;
    net->c.TcpPassiveOpens++;
    tcp_open(c, BRISK_TCP_SYN_RECEIVED, now);
}

/* A SYN-ACK (or RST) in SYN-SENT whose ACK is acceptable but whose timestamp echo names no TSval we sent —
 * not one between our first SYN's and now — did not answer our SYN: an old duplicate or a blind forgery
 * (RFC 7323 §5's aim, for the one segment PAWS cannot check since TS.Recent is not set yet). Linux's
 * tcp_rcv_synsent_state_process rejects it so (PAWSActiveRejected) and answers with a RST, without the early
 * SYN an unacceptable ACK brings; every profile does the same. */
static int synack_ts_bogus(const brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now)
{
    if (!c->net->s.tcp_timestamps || !seg->opts.ts_ok || !seg->opts.ts_ecr)
        return 0;
    if (c->rtt_probe.at == BRISK_TIME_NONE)
        return 0;
    uint32_t first = tcp_ts_now(c, c->rtt_probe.at);
    return seg->opts.ts_ecr - first > tcp_ts_now(c, now) - first;
}

static void syn_sent_input(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now)
{
    if (seg->flags & BRISK_TCP_ACK) {
        if (brisk_seq_leq(seg->ack, c->snd.iss) || brisk_seq_gt(seg->ack, c->snd.max)) {
            if (!(seg->flags & BRISK_TCP_RST)) {
                tcp_send_rst_for(c->net, &c->id, seg, now);
            }
            tcp_syn_rtx_soon(c, now); /* the peer may have held a stale connection: try again soon */
            return;
        }
        if (synack_ts_bogus(c, seg, now)) {
            c->net->c.PAWSActive++;
            if (!(seg->flags & BRISK_TCP_RST)) {
                tcp_send_rst_for(c->net, &c->id, seg, now);
            }
            return;
        }
    }
    if (seg->flags & BRISK_TCP_RST) {
        if (seg->flags & BRISK_TCP_ACK)
            tcp_conn_fail(c, BRISK_ERR_CONNREFUSED, now);
        return;
    }
    if (!(seg->flags & BRISK_TCP_SYN))
        return;
    c->rcv.irs = seg->seq;
    c->rcv.nxt = seg->seq + 1;
    negotiate(c, seg, now);
    tcp_rwin_synack(c); /* the window our SYN offered now counts from the peer's ISN (rwin.c) */
    if (seg->flags & BRISK_TCP_ACK) {
        establish(c, seg, now);
        tcp_raise(c, BRISK_EV_CONNECTED | BRISK_EV_WRITABLE);
        if ((seg->payload_len || (seg->flags & BRISK_TCP_FIN)) && c->net->s.tcp_synack_data) {
            /* RFC 9293 §3.10.7.3: with our SYN acknowledged, "continue processing at the sixth step": the
             * text (and a FIN) after the SYN's sequence number is queued like any in-order text, and the ACK
             * below acknowledges it. Linux without Fast Open discards it (tcp_rcv_state_process frees the
             * SYN-ACK after tcp_rcv_synsent_state_process) and the peer must send it again. */
            struct brisk_tcp_repr text = *seg;
            text.seq = seg->seq + 1;
            text.flags = (uint8_t)(seg->flags & ~BRISK_TCP_SYN);
            text_input(c, &text, NULL, 0, now);
        }
        tcp_send_ack(c, now);
        return;
    }
    /* Simultaneous open (RFC 9293 §3.5, figure 7). */
    c->snd.wnd = seg->window;
    tcp_set_state(c, BRISK_TCP_SYN_RECEIVED, now);
    tcp_send_syn(c, now);
    tcp_rearm_rto(c, now);
}

/* RFC 9293 §3.10.7.4 "first": is the segment (partly) inside the receive window? */
static int acceptable(const brisk_sock *c, uint32_t seq, uint32_t seglen)
{
    /* Linux's rules then refuse one that ends past the right edge while data is queued. */
    return tcp_seq_acceptable(c->rcv.nxt, c->rcv.adv, seq, seglen) &&
           (seglen == 0 || !tcp_rwin_linux(c) || tcp_rwin_acceptable(c, seq, seglen));
}

static void enter_time_wait(brisk_sock *c, uint64_t now)
{
    tcp_set_state(c, BRISK_TCP_TIME_WAIT, now);
    tcp_clear_rtx(c);
    /* A delayed ACK is settled by the one the peer's FIN gets at once (from fin_input's caller) — but not an
     * ACK the device refused: the connection is parked for it (tcp_block), brisk_tcp_run_blocked sends it on
     * the next wake, and it may be the only ACK of the peer's FIN (a simultaneous close, whose ACK of our
     * FIN brings us here). Dropped, the peer would sit in CLOSING until its RTO resent the FIN. */
    if (!c->ack.refused)
        c->ack.pending = 0;
    tcp_timer_cancel(c, &c->timer.delack);
    tcp_raise(c, BRISK_EV_CLOSED);
    tcp_of(c->net)->tw_enter = c; /* a record replaces it once this segment is answered (timewait.c) */
    if (tcp_of(c->net)->tw_count > c->net->s.tcp_max_tw_buckets) {
        /* No bucket left (Linux's tcp_max_tw_buckets): skip the 2 MSL wait. The expiry fires at this same
         * instant, from the stack's next poll, after the ACK of the peer's FIN has gone out. */
        c->net->c.TCPTimeWaitOverflow++;
        tcp_arm_misc(c, TCP_MISC_TIMEWAIT, now);
        return;
    }
    tcp_arm_misc(c, TCP_MISC_TIMEWAIT, now + c->net->s.tcp_time_wait_ns);
}

/* Our FIN was acknowledged: advance the closing states. Returns 0 if the connection is gone. */
static int our_fin_acked(brisk_sock *c, uint64_t now)
{
    tcp_raise(c, BRISK_EV_FIN_ACKED); /* what a lingering close waits for (socket.c) */
    switch (c->state) {
    case BRISK_TCP_FIN_WAIT_1:
        tcp_set_state(c, BRISK_TCP_FIN_WAIT_2, now);
        if (c->orphan)
            tcp_arm_misc(c, TCP_MISC_FINWAIT2, now + c->net->s.tcp_fin_timeout_ns);
        return 1;
    case BRISK_TCP_CLOSING:
        enter_time_wait(c, now);
        return 1;
    case BRISK_TCP_LAST_ACK:
        tcp_set_state(c, BRISK_TCP_CLOSED, now);
        tcp_raise(c, BRISK_EV_CLOSED);
        tcp_conn_done(c, now);
        return 0;
    default:
        return 1;
    }
}

/* The RTT sample an ACK gives: the send time of the newest timed segment it covers (0 if none, or if the
 * covered bytes were retransmitted — Karn's rule); *oldest gets the time since the oldest one it covers
 * (Linux's tcp_clean_rtx_queue feeds that one, first_ackt, to its estimator). Covered records are dropped. */
static uint64_t rtt_from_ack(brisk_sock *c, uint32_t ack, uint64_t now, uint64_t *oldest)
{
    uint64_t at = 0, first = 0;
    uint32_t end = 0;
    while (c->txt.len && brisk_seq_leq(c->txt.end[c->txt.head], ack)) {
        at = tcp_txt_at(c, c->txt.head);
        if (!first)
            first = at;
        end = c->txt.end[c->txt.head];
        c->txt.head = (uint8_t)((c->txt.head + 1) % TCP_TX_TIMES);
        c->txt.len--;
    }
    if (!at)
        return 0;
    if (c->txt.rtx_valid) {
        if (brisk_seq_leq(end, c->txt.rtx_high))
            return 0;
        if (brisk_seq_geq(ack, c->txt.rtx_high))
            c->txt.rtx_valid = 0; /* everything retransmitted is acknowledged */
    }
    *oldest = now > first ? now - first : 1;
    return now > at ? now - at : 1;
}

/* TS.Recent (RFC 7323 §4.3) from a segment that passed every check so far — PAWS, the window, and the ACK
 * field — and starts at or before Last.ACK.sent, the RCV.NXT of our last ACK: of the segments one delayed ACK
 * covers, the first sets it, so the echo tells the sender the RTT including the delay (§4.3 case A). Not
 * RCV.NXT: with two segments waiting for a delayed ACK the second would set it, a later one with a TSval
 * between the two would fail PAWS, and its data would be dropped (brisk did so until checked against Linux
 * 6.18). Recording it before the ACK field was checked would let a segment that is then dropped
 * (an ACK of data never sent) decide what our next segments echo (Linux: tcp_ack records it only after
 * rejecting such ACKs and old ones, tcp_replace_ts_recent, with rcv_wup). */
static void ts_recent_update(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now)
{
    if (c->opt.ts && seg->opts.ts_ok && brisk_seq_leq(seg->seq, c->rcv.wup))
        c->opt.ts_recent = seg->opts.ts_val, c->opt.ts_recent_age = now;
}

/* An ACK of `acked` new bytes outside recovery; `flight` was in flight before it. cwnd grows only when it was
 * what limited the flight (RFC 7661 spirit; Linux's tcp_is_cwnd_limited): not when the application or the
 * peer's window held the sender back. */
__attribute__((always_inline)) static inline void grow_cwnd(brisk_sock *c, uint32_t acked, uint32_t flight,
                                                            uint64_t rtt, uint64_t now)
{
    int cwnd_limited =
        flight + c->snd.mss > c->cc.cwnd || (c->cc.cwnd < c->cc.ssthresh && c->cc.cwnd < 2 * flight);
    int app_limited = !cwnd_limited;
    c->cc_ops->on_ack(&c->cc, acked, flight, rtt, app_limited, now);
}

/*
 * The ACK field: RFC 9293 §3.10.7.4 "fifth", in its steps — acceptability (ack_acceptable: RFC 5961's
 * bounds, old ACKs, TS.Recent), the cumulative advance (ack_advance: the send buffer, SND.UNA, the RTT
 * sample), the congestion response (ack_congestion for an ACK that advanced, ack_dupack for a duplicate; the
 * scoreboard, RACK and PRR after both), and the window update (ack_window). ack_input runs them in that
 * order; struct ack_ctx carries what one step learned to the next.
 */
struct ack_ctx {
    uint32_t ack, win;   /* SEG.ACK, and SEG.WND scaled */
    uint32_t flight;     /* in flight before the ACK */
    uint32_t prior_cwnd; /* cwnd before the ACK */
    uint32_t delivered;  /* bytes newly acked or SACKed (tcp_sb_ack) */
    int old, advanced;   /* SEG.ACK < SND.UNA; SEG.ACK > SND.UNA */
    uint64_t sack_rtt;   /* Linux's estimator: the SACKed originals' samples (0: none) */
    uint64_t sack_ca_rtt;
    uint64_t rtt;            /* the cumulative part's sample (0: none) */
    struct tcp_sb_news news; /* what the scoreboard learned */
};

/* Acceptability: 1 to process the ACK field, 0 to skip it (an old ACK without SACK blocks: RFC 9293 "it can
 * be ignored"; the text is processed as usual), -1 to drop the segment (its ACK is outside SND.UNA -
 * MAX.SND.WND .. SND.MAX, after the challenge ACK RFC 5961 §5.2 asks for). */
static int ack_acceptable(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now)
{
    struct brisk_net *net = c->net;
    uint32_t ack = seg->ack;
    if (brisk_seq_gt(ack, c->snd.max)) { /* acks data never sent */
        net->c.TCPACKOutOfWindow++;
        /* RFC 9293 §3.10.7.4 and RFC 5961 §5.2: send an ACK, drop the segment. Linux 6.x does (measured on
         * 6.18, rate limited as its other invalid-segment answers); the 3.x kernels dropped it silently in
         * ESTABLISHED (tcp_ack's invalid_ack path) and answered only in the other states. */
        if (c->state != BRISK_TCP_ESTABLISHED || net->s.tcp_unsent_ack_reply)
            tcp_send_challenge_ack(c, now);
        return -1; /* the whole segment goes, data and FIN included; TS.Recent is not touched */
    }
    if (brisk_seq_lt(ack, c->snd.una - c->snd.max_wnd)) { /* too old: RFC 5961 §5.2, drop and ACK */
        tcp_send_challenge_ack(c, now);
        return -1;
    }
    /* An ACK below SND.UNA is old news: it neither records TS.Recent, nor updates the window (only SND.UNA =<
     * SEG.ACK =< SND.NXT may), nor counts as a duplicate ACK; without SACK blocks nothing else in it concerns
     * the sender (Linux: tcp_ack's old_ack path, which only runs the SACK blocks). */
    int old = brisk_seq_lt(ack, c->snd.una);
    if (old && seg->opts.nsack == 0)
        return 0;
    if (!old)
        ts_recent_update(c, seg, now);
    return 1;
}

/* Forward progress over IPv6 confirms the next hop to Neighbour Discovery (RFC 4861 §7.3.1), once per tick
 * of 2^30 ns (~1.07 s) at most: NUD's DELAY lasts 5 s, so a connection acknowledged all along confirms
 * within it and its neighbour is never probed. Out of line: IPv4 never comes here, IPv6 rarely does the
 * work (one neighbour lookup per tick). */
__attribute__((noinline, cold)) static void nd_progress(brisk_sock *c, uint64_t now)
{
    uint32_t tick = (uint32_t)(now >> 30);
    if (tick == c->sox.nd_tick)
        return;
    c->sox.nd_tick = tick;
    brisk_route_confirm(c->net, &c->rt, now);
}

/* The cumulative advance: the acknowledged bytes leave the send buffer, SND.UNA moves, and the ACK's RTT
 * sample is taken (x->rtt). Returns whether it acknowledged our FIN. */
__attribute__((always_inline)) static inline int ack_advance(brisk_sock *c, const struct brisk_tcp_repr *seg,
                                                             struct ack_ctx *x, uint64_t now)
{
    struct brisk_net *net = c->net;
    uint32_t ack = x->ack, flight = x->flight;
    uint64_t sack_rtt = x->sack_rtt, sack_ca_rtt = x->sack_ca_rtt;
    uint32_t acked = ack - c->snd.una;
    uint32_t data = (uint32_t)c->snd.buf.len < acked ? (uint32_t)c->snd.buf.len : acked;
    /* The FIN sits right after the data. It is acknowledged when the ACK passes it — even if an RTO rewound
     * snd.nxt (and cleared fin_sent) since it was sent: ack <= snd.max proves it went out. */
    int fin_acked = c->snd.fin_queued && brisk_seq_gt(ack, tcp_data_end(c));
    if (fin_acked)
        c->snd.fin_sent = 1;
    brisk_sbuf_consume(&tcp_of(net)->chunks, &c->snd.buf, data);
    c->snd.una = ack;
    if (c->rt.nexthop.family == BRISK_AF_INET6)
        nd_progress(c, now);
    if (brisk_seq_lt(c->snd.nxt, ack))
        c->snd.nxt = ack;
    c->stat.bytes_acked += data;
    uint64_t oldest = 0;
    uint64_t rtt = rtt_from_ack(c, ack, now, &oldest);
    x->rtt = rtt;
    if (rtt && c->rtt.linux_est) {
        /* Linux: one sample per ACK at full gain, SRTT from the oldest segment acknowledged, min_rtt
         * from the newest (tcp_clean_rtx_queue's seq_rtt_us and ca_rtt_us; the newest SACKed one if the
         * ACK SACKs too). */
        brisk_rtt_sample_ack(&c->rtt, oldest, sack_ca_rtt ? sack_ca_rtt : rtt, now, 1, c->snd.una,
                             c->snd.max);
    } else if (sack_rtt) {
        brisk_rtt_sample_ack(&c->rtt, sack_rtt, sack_ca_rtt, now, 1, c->snd.una, c->snd.max);
    } else if (rtt) {
        /* Many samples per RTT: RFC 7323 Appendix G scales the gains down accordingly. */
        uint32_t expected = brisk_rtt_expected_samples(flight, c->snd.mss);
        brisk_rtt_sample_n(&c->rtt, rtt, now, expected); /* rtt.linux_est is 0 here */
    } else if (c->opt.ts && seg->opts.ts_ok && seg->opts.ts_ecr && c->rtt.backoff) {
        /* Only retransmitted data was acknowledged (Karn forbids a timed sample), but the path works
         * again, so the backed-off RTO is stale: reset it. The echoed timestamp is a sample only when it
         * is that of the latest data sent (RFC 7323 §4) and the 1 ms clock resolves it. An older echo
         * says that an earlier copy arrived and its ACK was lost: the receiver echoes TS.Recent, which
         * the later copies, whole duplicates, do not update (§5.3 rejects them at R2, before R3). Taken
         * as a sample, it would be the time since that copy — minutes after a few backoffs — and
         * would inflate SRTT, and with it the RTO and the pacing interval, for dozens of round trips. */
        uint32_t ticks = tcp_ts_now(c, now) - seg->opts.ts_ecr;
        uint32_t since_last = tcp_ts_now(c, now) - tcp_ts_now(c, c->timer.last_tx);
        if (ticks >= 1 && ticks <= since_last) {
            uint64_t v = (uint64_t)ticks * BRISK_NSEC_PER_MSEC;
            brisk_rtt_sample_ack(&c->rtt, v, v, now, 1, c->snd.una, c->snd.max);
        }
        c->rtt.backoff = 0;
    }
    return fin_acked;
}

/* The congestion response to an ACK that advanced SND.UNA by `acked` bytes: growth outside recovery, the
 * episode's partial and full ACKs in it (RFC 6582, RFC 6675 with PRR below, Eifel's undo, Linux's way
 * without SACK). */
__attribute__((always_inline)) static inline void ack_congestion(brisk_sock *c,
                                                                 const struct brisk_tcp_repr *seg,
                                                                 const struct ack_ctx *x, uint32_t acked,
                                                                 uint64_t now)
{
    struct brisk_net *net = c->net;
    uint32_t ack = x->ack, flight = x->flight, prior_cwnd = x->prior_cwnd, delivered = x->delivered;
    uint64_t rtt = x->rtt;
    if (!tcp_sb_active(c) && net->s.tcp_nosack_prr) {
        tcp_reno_ack(c, acked, 0, prior_cwnd, now); /* recovery.c: Linux's way without SACK */
        /* Growth as Linux's tcp_cong_control: not in recovery; on the ACK that ends it, from ssthresh. */
        if (!c->cc.in_recovery)
            grow_cwnd(c, acked, flight, rtt, now);
    } else if (c->cc.in_recovery && tcp_sb_active(c)) {
        if (c->undo.eifel && tcp_undo_ack(c, seg, now)) {
            /* The hole was filled by its late original: reordering, undone (Eifel, undo.c). Linux's
             * tcp_cong_control then grows the restored window by what the ACK delivered. */
            if (net->s.tcp_loss_timers == BRISK_COMPAT_LINUX)
                grow_cwnd(c, delivered, flight, rtt, now);
        } else if (brisk_seq_geq(ack, c->cc.recover)) { /* RFC 6937 §3: the episode ends at ssthresh */
            c->cc_ops->on_exit_recovery(&c->cc, tcp_flight(c), now);
            tcp_set_ca_state(c, TCP_CA_OPEN);
            c->cc.cwnd = c->cc.ssthresh;
            tcp_rack_recovery_done(c);
            /* Linux (tcp_cong_control after tcp_end_cwnd_reduction) grows the window from ssthresh on
             * the ACK that ends the episode, as on any ACK in the open state (recovery/sack-prr.pkt: 8
             * packets, not 7, on 6.18), by what the ACK delivered (acked_sacked: not what was SACKed
             * before it). */
            if (net->s.tcp_loss_timers == BRISK_COMPAT_LINUX)
                grow_cwnd(c, delivered, flight, rtt, now);
        }
    } else if (c->cc.in_recovery) {
        if (brisk_seq_geq(ack, c->cc.recover)) {
            c->cc_ops->on_exit_recovery(&c->cc, tcp_flight(c), now);
            tcp_set_ca_state(c, TCP_CA_OPEN);
        } else {
            c->cc_ops->on_recovery_ack(&c->cc, acked, 0, tcp_flight(c), now);
            tcp_retransmit_head(c, now); /* partial ACK: the next hole */
        }
    } else {
        grow_cwnd(c, acked, flight, rtt, now);
    }
}

/* A duplicate ACK (RFC 5681 §2): counted, and without SACK the third enters recovery (RFC 6582). */
static void ack_dupack(brisk_sock *c, const struct ack_ctx *x, uint64_t now)
{
    struct brisk_net *net = c->net;
    uint32_t flight = x->flight, prior_cwnd = x->prior_cwnd;
    c->dupacks++;
    if (!tcp_sb_active(c) && net->s.tcp_nosack_prr) {
        tcp_reno_ack(c, 0, 1, prior_cwnd, now); /* recovery.c: Linux's way without SACK */
    } else if (c->cc.in_recovery) {
        if (!tcp_sb_active(c)) /* with a scoreboard, PRR sizes the window (below) */
            c->cc_ops->on_recovery_ack(&c->cc, 0, 1, flight, now);
    } else if (tcp_sb_active(c)) {
        /* RFC 6675 §5 (DupThresh): three duplicates with nothing SACKed (a peer that negotiated SACK but
         * does not send blocks) still mean the first segment is lost. */
        if (c->dupacks == 3 && c->sb.len && c->sb.sacked == 0 && brisk_seq_geq(c->snd.una, c->cc.recover))
            tcp_sb_mark_lost(c, tcp_sb_at(c, 0));
    } else if (c->dupacks == 3 && brisk_seq_geq(c->snd.una, c->cc.recover) && !tcp_sb_active(c)) {
        c->cc_ops->on_enter_recovery(&c->cc, flight, c->snd.max, now);
        tcp_set_ca_state(c, TCP_CA_RECOVERY);
        net->c.TCPFastRetrans++;
        c->stat.fast_retransmits++;
        tcp_retransmit_head(c, now);
        tcp_rearm_rto(c, now);
    }
}

/* The window update (RFC 9293 §3.10.7.4): only from a segment newer than the last one that set it; and the
 * probe timers an ACK with nothing in flight restarts. */
static void ack_window(brisk_sock *c, const struct brisk_tcp_repr *seg, const struct ack_ctx *x, uint64_t now)
{
    uint32_t ack = x->ack, win = x->win, flight = x->flight;
    int old = x->old;
    if (!old &&
        (brisk_seq_lt(c->snd.wl1, seg->seq) || (c->snd.wl1 == seg->seq && brisk_seq_leq(c->snd.wl2, ack)))) {
        /* A changed window that lets waiting data go after an idle period restarts cwnd as a write would
         * (RFC 5681 §4.1; Linux's tcp_ack_update_window checks here too). */
        int changed = win != c->snd.wnd;
        c->snd.wnd = win;
        c->snd.wl1 = seg->seq;
        c->snd.wl2 = ack;
        if (win > c->snd.max_wnd) {
            c->snd.max_wnd = win;
            if (c->net->s.tcp_half_window_mss)
                tcp_sync_mss(c); /* Linux: tcp_ack_update_window calls tcp_sync_mss for a larger window */
        }
        if (win > 0 && c->timer.rtx_kind == TCP_RTX_PERSIST) {
            tcp_clear_rtx(c);
            c->rtt.backoff = 0; /* the probes' backoff says nothing about the path (Linux's tcp_ack_probe) */
        }
        if (changed && tcp_notsent(c) > 0)
            tcp_idle_restart(c, now);
    }
    if (flight == 0) {
        tcp_cork_ack(c); /* Linux's tcp_ack_probe: a held tail's probe timer restarts (tail.c) */
        if (!old && c->snd.wnd == 0)
            tcp_persist_ack(c, now); /* and so does the zero-window probe timer */
    }
}

/* The ACK field, step by step (above). Returns 1 to go on with the segment, 0 if the connection is gone, -1
 * if the segment must be dropped. */
static int ack_input(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now)
{
    int acceptable = ack_acceptable(c, seg, now);
    if (acceptable <= 0)
        return acceptable < 0 ? -1 : 1;
    struct brisk_net *net = c->net;
    struct ack_ctx x = {.ack = seg->ack,
                        .win = (uint32_t)seg->window << c->snd.wscale,
                        .flight = tcp_flight(c),
                        .prior_cwnd = c->cc.cwnd,
                        .old = brisk_seq_lt(seg->ack, c->snd.una),
                        .advanced = brisk_seq_gt(seg->ack, c->snd.una)};
    uint32_t ack = x.ack;
    x.delivered = tcp_sb_ack(c, seg, now, &x.news); /* the scoreboard and RACK */
    /* Linux (tcp_clean_rtx_queue, tcp_ack_update_rtt) times the originals an ACK SACKs too: SRTT from the
     * first, min_rtt from the last, when the cumulative part gives no sample (it acknowledged nothing, or
     * only retransmitted data) — on every ACK, duplicates included. */
    if (x.news.first_sackt && c->rtt.linux_est) {
        x.sack_rtt = now > x.news.first_sackt ? now - x.news.first_sackt : 1;
        x.sack_ca_rtt = now > x.news.last_sackt ? now - x.news.last_sackt : 1;
    }
    if (x.news.dsack) {
        tcp_rack_dsack(c);
        tcp_undo_dsack(c, (uint32_t)x.news.dsack, now); /* every retransmission of an episode duplicated */
    }
    if (c->undo.frto) /* spurious: undone, and the ACK proceeds normally */
        tcp_frto_ack(c, x.advanced, x.news.delivered_orig, now);
    if (x.advanced) {
        uint32_t acked = ack - c->snd.una;
        int fin_acked = ack_advance(c, seg, &x, now);
        ack_congestion(c, seg, &x, acked, now);
        /* After the window grew for this ACK (a reduction must not be grown back at once), before the
         * deadline is re-armed (the episode may end here and allow a new probe). */
        tcp_tlp_ack(c, seg, x.prior_cwnd, 0, now);
        c->dupacks = 0;
        c->timer.retries = 0;
        tcp_rearm_rto(c, now); /* RFC 6298 §5.3: restart for the remaining data, or stop */
        if (fin_acked && !our_fin_acked(c, now))
            return 0;
    } else if (ack == c->snd.una && seg->payload_len == 0 && x.win == c->snd.wnd && x.flight > 0 &&
               !(seg->flags & (BRISK_TCP_SYN | BRISK_TCP_FIN))) {
        ack_dupack(c, &x, now);
    }
    if (!x.advanced && x.sack_rtt) /* Linux: a duplicate ACK's SACKs are a sample too (tcp_ack_update_rtt) */
        brisk_rtt_sample_ack(&c->rtt, x.sack_rtt, x.sack_ca_rtt, now, 1, c->snd.una, c->snd.max);
    if (!x.advanced) { /* a D-SACK for the probe ends its episode too, and (Linux) a pure duplicate ACK */
        int dup = seg->payload_len == 0 && x.win == c->snd.wnd && x.delivered == 0 &&
                  !(seg->flags & (BRISK_TCP_SYN | BRISK_TCP_FIN));
        tcp_tlp_ack(c, seg, x.prior_cwnd, dup, now);
    }
    if (tcp_sb_active(c) && (x.delivered || c->cc.in_recovery || c->sb.lost)) {
        uint32_t lost_before = c->sb.lost;
        tcp_recovery_check(c, x.prior_cwnd, now);
        if (c->cc.in_recovery)
            tcp_prr_ack_ex(c, x.delivered, x.advanced, c->sb.lost > lost_before);
    }
    /* Linux re-arms the retransmit deadline on an ACK that moves nothing but SACKs an original sent before
     * the oldest outstanding segment was last sent (tcp_clean_rtx_queue's FLAG_SET_XMIT_TIMER: the path is
     * delivering, so the RTO counts again from now). Measured on 6.18: recovery/last-ack-lost.pkt's RTO
     * comes 275 ms after the last SACK, not 250 ms after the retransmission. */
    if (!x.advanced && x.sack_rtt && net->s.tcp_loss_timers == BRISK_COMPAT_LINUX && c->sb.len &&
        x.sack_rtt > now - tcp_sb_at(c, 0)->xmit)
        tcp_rearm_rto(c, now);
    if (c->timer.rtx_kind == TCP_RTX_PERSIST && !x.old)
        c->timer.retries = 0; /* the peer answers: probing goes on as long as it does (RFC 1122 §4.2.2.17) */
    ack_window(c, seg, &x, now);
    return 1;
}

/* Delayed-ACK timeout estimation from data inter-arrival times (like Linux's tcp_event_data_recv). */
__attribute__((always_inline)) static inline void update_ato(brisk_sock *c, uint64_t now)
{
    const struct brisk_settings *s = &c->net->s;
    uint64_t m = c->ack.last_data_rx ? now - c->ack.last_data_rx : 0;
    c->ack.last_data_rx = now;
    if (m == 0)
        return;
    if (m <= s->tcp_delack_min_ns / 2)
        c->ack.ato = c->ack.ato / 2 + s->tcp_delack_min_ns / 2;
    else if (m < c->ack.ato)
        c->ack.ato = c->ack.ato / 2 + m;
    if (c->ack.ato > s->tcp_delack_max_ns)
        c->ack.ato = s->tcp_delack_max_ns;
}

void tcp_rcv_drain_ooo(brisk_sock *c)
{
    if (c->rcv.ooo.nsegs == 0)
        return;
    struct brisk_net *net = c->net;
    /* Never more than the receive stream can take: a byte popped is a byte acknowledged. */
    size_t room = brisk_sbuf_room(&tcp_of(net)->chunks, &c->rcv.buf);
    uint32_t max = room > UINT32_MAX ? UINT32_MAX : (uint32_t)room;
    uint32_t nxt = c->rcv.nxt;
    uint32_t popped = brisk_reass_pop(&net->pool, &c->rcv.ooo, c->rcv.nxt, max, deliver_to_rcvbuf, c);
    c->rcv.nxt += popped;
    c->stat.bytes_received += popped;
    if (popped && tcp_rwin_linux(c))
        tcp_rwin_ofo_drain(c, nxt); /* Linux's buffers move queues too (rwin.c) */
}

/* A segment's text as a cursor over its pieces: one for a segment as it came, several for a coalesced one
 * (brisk_tcp_input_gro). `skip` bytes of the first piece are already behind the cursor. The helpers below
 * and ack_defer stay out of line: the path of a single frame (request / response) must stay small in the
 * instruction cache — inlined, they cost rr 1 flow ~7 % (cachegrind: I1 misses 1.8 M -> 2.4 M per 20,000
 * transactions; out of line 1.6 M). */
struct tcp_text {
    const struct brisk_gro_piece *v;
    uint32_t n;
    uint32_t skip;
};

__attribute__((cold)) static void text_skip(struct tcp_text *t, uint32_t k)
{
    while (k && t->n) {
        uint32_t left = t->v->len - t->skip;
        if (k < left) {
            t->skip += k;
            return;
        }
        k -= left;
        t->v++;
        t->n--;
        t->skip = 0;
    }
}

/* Appends the first `len` bytes of the text to the receive stream; returns how many fit (fewer only when the
 * stack's buffer memory runs out). */
__attribute__((noinline)) static uint32_t text_append(brisk_sock *c, struct tcp_text t, uint32_t len)
{
    uint32_t done = 0;
    for (; len && t.n; t.v++, t.n--, t.skip = 0) {
        uint32_t k = t.v->len - t.skip;
        if (k > len)
            k = len;
        uint32_t got =
            (uint32_t)brisk_sbuf_append(&tcp_of(c->net)->chunks, &c->rcv.buf, t.v->data + t.skip, k);
        done += got;
        len -= got;
        if (got < k)
            break;
    }
    return done;
}

/* Stores the text out of order, piece by piece (each is a contiguous run of sequence space); returns the
 * reassembly store's verdict: the first error, else the bytes newly stored. */
__attribute__((noinline)) static int text_reass(brisk_sock *c, struct tcp_text t, uint32_t seq,
                                                uint64_t max_mem, uint32_t max_segs)
{
    struct brisk_net *net = c->net;
    int stored = 0;
    for (; t.n; t.v++, t.n--, t.skip = 0) {
        uint32_t k = t.v->len - t.skip;
        int rc = brisk_reass_insert(&net->pool, &c->rcv.ooo, c->rcv.nxt, seq, t.v->data + t.skip, k, max_mem,
                                    max_segs);
        if (rc < 0)
            return rc;
        stored += rc;
        seq += k;
    }
    return stored;
}

/* A duplicate [start, end) for the D-SACK block of the next ACK (RFC 2883 §4). The first duplicate a segment
 * reveals sets the block (`*set` becomes 1); a later one extends it only when it touches it, so the block
 * stays one range that was all received twice (Linux: tcp_dsack_set, then tcp_dsack_extend). */
static void dsack_note(brisk_sock *c, uint32_t start, uint32_t end, int *set)
{
    if (!c->opt.sack || !brisk_seq_lt(start, end))
        return;
    if (!*set) {
        *set = 1;
        c->rcv.dsack = 1;
        c->rcv.dsack_start = start;
        c->rcv.dsack_end = end;
        c->net->c.TCPDSACKSent++;
        return;
    }
    if (brisk_seq_gt(start, c->rcv.dsack_end) || brisk_seq_gt(c->rcv.dsack_start, end))
        return;
    if (brisk_seq_lt(start, c->rcv.dsack_start))
        c->rcv.dsack_start = start;
    if (brisk_seq_gt(end, c->rcv.dsack_end))
        c->rcv.dsack_end = end;
}

/* The Ethernet frame a segment of `len` payload bytes came in, as Linux's receive memory charges it. */
static uint32_t rwin_frame(const brisk_sock *c, const struct brisk_tcp_repr *seg, uint32_t len)
{
    return BRISK_ETH_HLEN + (uint32_t)brisk_route_l3_hlen(&c->rt) + seg->hdr_len + len;
}

/* In-order text [seq, seq + len) joined the receive stream: Linux's model charges each frame it came in and
 * measures it (tcp_queue_rcv, tcp_event_data_recv; rwin.c). A coalesced segment came in one frame per
 * piece. Called before update_ato, which tells the first data and the silence before this segment. */
__attribute__((noinline)) static void rwin_charge(brisk_sock *c, const struct brisk_tcp_repr *seg,
                                                  struct tcp_text t, uint32_t seq, uint32_t len, uint64_t now)
{
    int first = c->ack.last_data_rx == 0;
    uint64_t gap = first ? 0 : now - c->ack.last_data_rx;
    for (; len && t.n; t.v++, t.n--, t.skip = 0) {
        uint32_t k = t.v->len - t.skip;
        if (k > len)
            k = len;
        tcp_rwin_data(c, seg, seq, k, rwin_frame(c, seg, t.v->len), first, gap, now);
        first = 0;
        gap = 0;
        seq += k;
        len -= k;
    }
}

/* Segment text (RFC 9293 §3.10.7.4 "seventh"). Returns 1 when an ACK must go out at once, 2 when one is
 * owed for in-order data (a receive batch may hold it to its end), 0 when it may be delayed.
 *
 * Duplicates are reported as one D-SACK block (RFC 2883 §4.2), whatever they duplicate: the part below
 * rcv.nxt; else, for in-order text that runs into data held out of order, the part of the first held run it
 * covers; else, for out-of-order text, its intersection with the first held run it overlaps (all of it when
 * it lies inside one) — Linux's tcp_data_queue / tcp_ofo_queue / tcp_data_queue_ofo report the same ranges.
 * The SACK blocks follow it, the first one covering this segment (RFC 2018 §4). */
__attribute__((always_inline)) static inline int data_input(brisk_sock *c, const struct brisk_tcp_repr *seg,
                                                            struct tcp_text text, uint64_t now)
{
    struct brisk_net *net = c->net;
    uint32_t seq = seg->seq;
    uint32_t len = (uint32_t)seg->payload_len;
    int dsack_set = 0;
    if (brisk_seq_lt(seq, c->rcv.nxt)) { /* the front was received before */
        uint32_t dup = c->rcv.nxt - seq;
        dsack_note(c, seq, seq + (dup < len ? dup : len), &dsack_set);
        if (dup >= len)
            return 1;
        seq += dup;
        text_skip(&text, dup);
        len -= dup;
    }
    int linux_rwin = tcp_rwin_linux(c);
    if (seq == c->rcv.nxt) {
        if (linux_rwin) {
            /* Linux admits a segment whole or not at all: into an open window, if memory allows. */
            int ok = tcp_rwin_admit(c, seg, seq, len);
            if (ok < 0)
                net->c.TCPRcvQDrop++;
            if (ok <= 0)
                return 1;
        } else {
            uint32_t space = tcp_rcv_space(c);
            if (len > space) {
                net->c.TCPRcvQDrop++;
                len = space; /* beyond the window we offered: trim (RFC 9293 §3.10.7.4) */
            }
        }
        if (len == 0)
            return 1;
        uint32_t got = text.n == 1 ? (uint32_t)brisk_sbuf_append(&tcp_of(net)->chunks, &c->rcv.buf,
                                                                 text.v->data + text.skip, len)
                                   : text_append(c, text, len);
        if (got < len) { /* stack-wide buffer memory exhausted: keep what fit, the rest is retransmitted */
            net->c.TCPRcvQDrop++;
            len = got;
            if (len == 0)
                return 1;
        }
        int had_ooo = c->rcv.ooo.nsegs > 0;
        uint32_t dup_start, dup_end;
        if (had_ooo && brisk_reass_overlap(&c->rcv.ooo, seq, len, &dup_start, &dup_end))
            dsack_note(c, dup_start, dup_end, &dsack_set); /* it ran into data held out of order */
        c->rcv.nxt += len;
        c->stat.bytes_received += len;
        if (linux_rwin)
            rwin_charge(c, seg, text, seq, len, now);
        tcp_rcv_drain_ooo(c);
        tcp_raise(c, BRISK_EV_READABLE);
        update_ato(c, now);
        if (had_ooo)
            return 1; /* a hole filled: tell the sender at once (RFC 5681 §4.2) */
        /* A segment longer than the MSS (coalesced here or by the peer's TSO and our device) counts as the
         * full-sized segments it carries, so one never waits for the delayed-ACK timer (Linux: more than one
         * rcv_mss unacknowledged). */
        uint32_t mss = c->snd.mss;
        c->ack.unacked_segs += len < mss ? 0u : len < 2 * mss ? 1u : 2u; /* no division per segment */
        if (linux_rwin ? tcp_rwin_ack_due(c) : c->ack.unacked_segs >= 2)
            return 2; /* at least every second full-sized segment (RFC 5681 §4.2; Linux: while the window
                         keeps up) */
        if (c->ack.quick && !c->ack.pingpong) {
            c->ack.quick--;
            return 2;
        }
        tcp_schedule_ack(c, now);
        return 0;
    }
    /* Data past a FIN we hold contradicts it: forget the FIN (the peer will send its real one). */
    if (c->rcv.fin_pending && brisk_seq_gt(seq + len, c->rcv.fin_seq))
        c->rcv.fin_pending = 0;
    /* Out of order: hold it, and ACK at once so the sender sees the hole (RFC 5681 §4.2, RFC 2018) — or,
     * under tcp_comp_sack_nr, past three duplicate ACKs as one compressed ACK (ackcomp.c). */
    uint32_t dup_start, dup_end;
    if (c->rcv.ooo.nsegs && brisk_reass_overlap(&c->rcv.ooo, seq, len, &dup_start, &dup_end)) {
        dsack_note(c, dup_start, dup_end, &dsack_set);
        if (dup_start == seq && dup_end == seq + len) {
            /* Stores nothing, but records the arrival: the first SACK block must cover it (RFC 2018 §4). */
            text_reass(c, text, seq, UINT64_MAX, UINT32_MAX);
            return tcp_ackcomp_ooo(c, now);
        }
    }
    if (c->ack.comp)
        tcp_ackcomp_new_block(c, seq, len, now);
    uint32_t limit =
        c->rcv.rcvbuf - (uint32_t)(c->rcv.buf.len < c->rcv.rcvbuf ? c->rcv.buf.len : c->rcv.rcvbuf);
    uint64_t max_mem = (uint64_t)limit * 2;
    if (linux_rwin) {
        if (tcp_rwin_admit(c, seg, seq, len) <= 0) { /* Linux's memory bound decides (rwin.c) */
            net->c.TCPOFODrop++;
            return 1;
        }
        max_mem = UINT64_MAX;
    }
    int rc = text_reass(c, text, seq, max_mem, net->s.tcp_ooo_max_segs);
    if (rc < 0) {
        net->c.TCPOFODrop++;
        return 1;
    }
    net->c.TCPOFOQueue++;
    if (linux_rwin)
        tcp_rwin_ofo(c, seq, len, rwin_frame(c, seg, len));
    return tcp_ackcomp_ooo(c, now);
}

static void fin_input(brisk_sock *c, uint64_t now)
{
    c->rcv.nxt++;
    c->rcv.fin = 1;
    tcp_raise(c, BRISK_EV_READABLE);
    switch (c->state) {
    case BRISK_TCP_SYN_RECEIVED:
    case BRISK_TCP_ESTABLISHED:
        tcp_set_state(c, BRISK_TCP_CLOSE_WAIT, now);
        break;
    case BRISK_TCP_FIN_WAIT_1:
        /* Our FIN not yet acknowledged (else we would be in FIN-WAIT-2): simultaneous close. */
        tcp_set_state(c, BRISK_TCP_CLOSING, now);
        break;
    case BRISK_TCP_FIN_WAIT_2:
        tcp_timer_cancel(c, &c->timer.misc);
        enter_time_wait(c, now);
        break;
    default:
        break;
    }
}

/* The ACK of the FIN that took an ESTABLISHED connection to CLOSE-WAIT, under tcp_fin_delack (the linux-*
 * profiles). Linux's tcp_fin makes such a connection interactive (inet_csk_enter_pingpong_mode), which ends
 * quick-ACK mode, so the FIN waits like any delayed ACK (__tcp_ack_snd_check, tcp_send_delayed_ack) and goes
 * with the application's own FIN or reply if that comes within the ACK timeout — a request / response
 * exchange closes in three segments instead of four. Reasons to ACK at once that do not depend on quick-ACK
 * mode still hold: a hole filled (data_ack 1, or the FIN itself was held out of order: Linux's out-of-order
 * queue emptied), a duplicate, and more than a full segment unacknowledged — Linux counts sequence space
 * (rcv_nxt - rcv_wup > rcv_mss), so a full-sized segment and the FIN after it are acknowledged at once
 * (measured on 6.18: 1000 bytes and a FIN at MSS 1000 at once, 100 or 500 bytes and a FIN after 40 ms). A
 * connection that never received data has no ACK timeout yet (Linux's ato is 0 until the first data, and the
 * delayed-ACK timer then fires at the next tick): it acknowledges at once. RFC 1122 §4.2.3.2 allows the delay
 * (less than 0.5 s); brisk's own profile acknowledges at once so the peer leaves FIN-WAIT-1 without waiting.
 * `data_ack` is data_input's verdict on the text before the FIN (0 when there was none); returns
 * text_input's. */
static int fin_delack(brisk_sock *c, int data_ack, uint64_t now)
{
    c->ack.pingpong = 1;
    if (data_ack == 1 || c->ack.unacked_segs >= 1)
        return data_ack == 2 ? 2 : 1;
    if (data_ack == 2)
        c->ack.quick++; /* the quick ACK data_input counted is not sent (Linux counts those it sends) */
    if (c->stat.bytes_received == 0)
        return 1;
    tcp_schedule_ack(c, now);
    return 0;
}

/* Holds c's ACK for in-order data to the end of the receive batch in progress (the caller checked there is
 * one); 0 when there is no room to remember c: send it now. */
__attribute__((noinline)) static int ack_defer(brisk_sock *c)
{
    struct brisk_tcp *t = tcp_of(c->net);
    for (uint32_t i = 0; i < t->ndeferred; i++)
        if (t->deferred[i] == c)
            return 1;
    if (t->ndeferred == TCP_ACK_DEFER_MAX)
        return 0;
    t->deferred[t->ndeferred++] = c;
    return 1;
}

void tcp_ack_undefer(brisk_sock *c)
{
    struct brisk_tcp *t = tcp_of(c->net);
    for (uint32_t i = 0; i < t->ndeferred; i++)
        if (t->deferred[i] == c)
            t->deferred[i] = NULL;
}

void brisk_tcp_batch_begin(struct brisk_net *net)
{
    tcp_of(net)->ack_defer = 1;
}

void brisk_tcp_batch_end(struct brisk_net *net, uint64_t now)
{
    struct brisk_tcp *t = tcp_of(net);
    t->ack_defer = 0;
    for (uint32_t i = 0; i < t->ndeferred; i++) {
        brisk_sock *c = t->deferred[i];
        if (c && c->ack.pending) /* unless an ACK went out since (data, an immediate ACK) */
            tcp_send_ack(c, now);
    }
    t->ndeferred = 0;
}

/* A simultaneous open (RFC 9293 §3.5, figure 7): in SYN-RECEIVED after our SYN crossed the peer's, the peer's
 * SYN-ACK — its SYN again, now acknowledging ours — lies wholly below RCV.NXT, so the acceptability test
 * would drop it and the figure's step 6 ("ESTABLISHED <-- SYN,ACK") would never happen: the connection waited
 * for its own SYN-ACK's retransmission. Like Linux (tcp_validate_incoming lets exactly this segment through:
 * an active open in SYN-RECV, a bare SYN-ACK at RCV.NXT - 1 acknowledging SND.NXT) it completes the open; the
 * SYN is then a duplicate, acknowledged at once with a D-SACK of its sequence number (tcp_data_queue). */
static int simultaneous_synack(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now)
{
    const uint8_t f = BRISK_TCP_SYN | BRISK_TCP_ACK | BRISK_TCP_RST | BRISK_TCP_FIN;
    if (c->state != BRISK_TCP_SYN_RECEIVED || c->listener ||
        (seg->flags & f) != (BRISK_TCP_SYN | BRISK_TCP_ACK) || seg->payload_len ||
        seg->seq + 1 != c->rcv.nxt || seg->ack != c->snd.nxt)
        return 0;
    c->stat.segs_in++;
    ts_recent_update(c, seg, now);
    establish(c, seg, now); /* the window of a segment with SYN is never scaled (RFC 7323 §2.2) */
    tcp_raise(c, BRISK_EV_CONNECTED | BRISK_EV_WRITABLE);
    int dsack_set = 0;
    dsack_note(c, seg->seq, seg->seq + 1, &dsack_set); /* its SYN was received twice */
    c->ack.pending = 1;
    tcp_write_xmit(c, TCP_XMIT_INPUT, now);
    if (c->ack.pending)
        tcp_send_ack(c, now);
    return 1;
}

/* New data in FIN-WAIT-1 or FIN-WAIT-2 after the application closed (brisk_close: it will never read it):
 * RFC 1122 §4.2.2.13 says the TCP SHOULD send a RST to show the data was lost, and Linux does
 * (tcp_rcv_state_process: the receive side is shut, so tcp_reset and a RST in reply to the segment; an
 * orphan in FIN-WAIT-2 answers from its timewait socket the same way). Returns 1 when it reset. */
static int data_after_close(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now)
{
    if ((c->state != BRISK_TCP_FIN_WAIT_1 && c->state != BRISK_TCP_FIN_WAIT_2) ||
        !(c->orphan || c->sox.lingering) || !seg->payload_len ||
        !brisk_seq_gt(seg->seq + (uint32_t)seg->payload_len, c->rcv.nxt))
        return 0;
    c->net->c.TCPAbortOnData++;
    tcp_send_rst_for(c->net, &c->id, seg, now);
    tcp_conn_fail(c, BRISK_ERR_RESET, now);
    return 1;
}

/* An acceptable RST: the connection is gone. The error is Linux's tcp_reset's (the errno a socket facade
 * reports): connection refused in SYN-RECEIVED of an active open (RFC 9293 §3.10.7.4: simultaneous open),
 * EPIPE in CLOSE-WAIT (the peer had closed; what is left is our sending), reset otherwise; in TIME-WAIT the
 * connection just ends. */
static void reset(brisk_sock *c, uint64_t now)
{
    if (c->state == BRISK_TCP_TIME_WAIT) {
        tcp_set_state(c, BRISK_TCP_CLOSED, now);
        tcp_conn_done(c, now);
        return;
    }
    int err = BRISK_ERR_RESET;
    if (c->state == BRISK_TCP_SYN_RECEIVED && !c->listener)
        err = BRISK_ERR_CONNREFUSED;
    else if (c->state == BRISK_TCP_CLOSE_WAIT)
        err = BRISK_ERR_PIPE;
    tcp_conn_fail(c, err, now);
}

/* tcp_rst_edges (linux-6.x): Linux resets at two sequence numbers besides RFC 5961 §3.2's RCV.NXT
 * (tcp_validate_incoming). RCV.NXT - 1 once the peer's FIN is in (CLOSE-WAIT, CLOSING, LAST-ACK:
 * tcp_reset_check), for stacks that follow their FIN with a RST of the same sequence number and would not
 * answer the challenge ACK (an abortive close seen from macOS); and the right edge of the highest SACK block
 * we advertise, where a peer's RST lands when it sent beyond a hole. */
static int rst_after_fin(const brisk_sock *c, uint32_t seq)
{
    return c->net->s.tcp_rst_edges && seq == c->rcv.nxt - 1 &&
           (c->state == BRISK_TCP_CLOSE_WAIT || c->state == BRISK_TCP_CLOSING ||
            c->state == BRISK_TCP_LAST_ACK);
}

static int rst_at_sack_edge(const brisk_sock *c, uint32_t seq)
{
    if (!c->net->s.tcp_rst_edges || !c->opt.sack || (c->rcv.ooo.nsegs == 0 && !tcp_fin_held(c)))
        return 0;
    uint32_t blocks[BRISK_TCP_MAX_SACK][2];
    int n = tcp_sack_blocks(c, blocks, BRISK_TCP_MAX_SACK);
    if (n <= 0)
        return 0;
    uint32_t edge = blocks[0][1];
    for (int i = 1; i < n; i++)
        if (brisk_seq_gt(blocks[i][1], edge))
            edge = blocks[i][1];
    return seq == edge;
}

/* tcp_synrecv_reset (the linux-* profiles): a SYN in the window of a listener's half-open connection drops
 * it, and is answered with a RST built from it (SEQ 0, ACK = its end), as Linux's request socket does
 * (tcp_check_req, RFC 793's "if the SYN is in the window it is an error"; measured on 6.18); brisk's profile
 * keeps RFC 5961 §4.2's challenge ACK. A RST in the window but not at RCV.NXT gets a challenge ACK in both
 * (Linux 6.18 too). The retransmission of the first SYN never gets here (it lies below the window and gets
 * the SYN-ACK again). Returns 1 when it dropped the connection. */
static int half_open_reset(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now)
{
    if (c->state != BRISK_TCP_SYN_RECEIVED || !c->listener || !c->net->s.tcp_synrecv_reset)
        return 0;
    tcp_send_rst_for(c->net, &c->id, seg, now);
    tcp_conn_fail(c, BRISK_ERR_RESET, now);
    return 1;
}

/* Segments whose duplicate ACK tcp_invalid_ratelimit never holds back: those occupying sequence space (data,
 * a FIN) without a SYN, which cannot be one side of an ACK loop (Linux's tcp_oow_rate_limited). */
static int oow_exempt(const struct brisk_tcp_repr *seg)
{
    return (seg->payload_len || (seg->flags & BRISK_TCP_FIN)) && !(seg->flags & BRISK_TCP_SYN);
}

/* The rest of conn_input is every established segment's path; what only an unusual segment needs (out of the
 * window, a RST or SYN, the handshake's last ACK, TIME-WAIT) is in the cold functions below, out of line so
 * that their registers do not widen that path's frame. */

/* PAWS rejected the segment: an old duplicate. */
__attribute__((cold, noinline)) static void paws_reject(brisk_sock *c, const struct brisk_tcp_repr *seg,
                                                        uint64_t now)
{
    struct brisk_net *net = c->net;
    net->c.PAWSEstab++;
    if (oow_exempt(seg) || !tcp_oow_limited(c, &net->c.TCPACKSkippedPAWS, now))
        tcp_send_ack(c, now);
}

/* A segment outside the receive window (RFC 9293 §3.10.7.4 "first"). */
__attribute__((cold, noinline)) static void unacceptable(brisk_sock *c, const struct brisk_tcp_repr *seg,
                                                         uint64_t now)
{
    struct brisk_net *net = c->net;
    if (seg->flags & BRISK_TCP_RST) {
        if (rst_after_fin(c, seg->seq))
            reset(c, now);
        return;
    }
    if (simultaneous_synack(c, seg, now))
        return;
    net->c.TCPOutOfWindow++;
    /* An old duplicate is reported (RFC 2883), its FIN included: Linux's tcp_data_queue / tcp_send_dupack
     * D-SACK any segment whose sequence space is all below RCV.NXT — a retransmitted FIN in CLOSE-WAIT
     * gets "sack 1:2". Not a SYN (the challenge ACK below says enough), and not in TIME-WAIT, where
     * Linux's timewait socket answers with a bare ACK (tcp_v4_timewait_ack). */
    uint32_t dup = (uint32_t)seg->payload_len + ((seg->flags & BRISK_TCP_FIN) ? 1u : 0u);
    if (dup && !(seg->flags & BRISK_TCP_SYN) && c->state != BRISK_TCP_TIME_WAIT &&
        brisk_seq_leq(seg->seq + dup, c->rcv.nxt)) {
        int dsack_set = 0;
        dsack_note(c, seg->seq, seg->seq + dup, &dsack_set);
    }
    /* Only a bare SYN means the peer lost our SYN-ACK; its SYN-ACK in a simultaneous open gets the ACK
     * below, or two such stacks would trade SYN-ACKs forever (RFC 9293 figure 8). */
    int bare_syn = (seg->flags & (BRISK_TCP_SYN | BRISK_TCP_ACK)) == BRISK_TCP_SYN;
    if (c->state == BRISK_TCP_SYN_RECEIVED && bare_syn && seg->seq == c->rcv.irs) {
        tcp_send_syn(c, now); /* the peer lost our SYN-ACK */
        return;
    }
    /* TIME-WAIT: a retransmission of the peer's FIN (our ACK was lost) restarts the 2 MSL wait. */
    if (c->state == BRISK_TCP_TIME_WAIT && (seg->flags & BRISK_TCP_FIN) &&
        seg->seq + (uint32_t)seg->payload_len + 1 == c->rcv.nxt)
        tcp_arm_misc(c, TCP_MISC_TIMEWAIT, now + net->s.tcp_time_wait_ns);
    if ((seg->flags & BRISK_TCP_SYN) && c->state != BRISK_TCP_SYN_RECEIVED) {
        /* RFC 5961 §4.2: a SYN in a synchronized state gets a (rate-limited) challenge ACK whatever its
         * sequence number. */
        net->c.TCPSYNChallenge++;
        tcp_send_challenge_ack(c, now);
        return;
    }
    if (oow_exempt(seg) || !tcp_oow_limited(c, &net->c.TCPACKSkippedSeq, now))
        tcp_send_ack(c, now);
}

/* An acceptable segment with RST or SYN: it ends here. */
__attribute__((cold, noinline)) static void rst_or_syn(brisk_sock *c, const struct brisk_tcp_repr *seg,
                                                       uint64_t now)
{
    struct brisk_net *net = c->net;
    if (seg->flags & BRISK_TCP_RST) {
        /* RFC 5961 §3.2: only an exact match resets; in-window gets a challenge ACK. */
        if (seg->seq != c->rcv.nxt && !rst_after_fin(c, seg->seq) && !rst_at_sack_edge(c, seg->seq)) {
            net->c.TCPRSTChallenge++;
            tcp_send_challenge_ack(c, now);
            return;
        }
        reset(c, now);
        return;
    }
    if (half_open_reset(c, seg, now))
        return;
    /* RFC 5961 §4.2: a SYN in a synchronized state gets a challenge ACK, never a reset. */
    net->c.TCPSYNChallenge++;
    tcp_send_challenge_ack(c, now);
}

/* SYN-RECEIVED: the ACK of our SYN-ACK establishes the connection. Returns 0 if the segment is dropped. */
__attribute__((cold, noinline)) static int syn_received_ack(brisk_sock *c, const struct brisk_tcp_repr *seg,
                                                            uint64_t now)
{
    if (brisk_seq_leq(seg->ack, c->snd.una) || brisk_seq_gt(seg->ack, c->snd.max)) {
        tcp_send_rst_for(c->net, &c->id, seg, now);
        return 0;
    }
    ts_recent_update(c, seg, now);
    establish(c, seg, now);
    brisk_sock *l = c->listener;
    if (l) { /* to the accept queue */
        l->lq.syn_count--;
        c->in_aq = 1;
        c->aq_next = NULL;
        if (l->lq.tail)
            l->lq.tail->aq_next = c;
        else
            l->lq.head = c;
        l->lq.tail = c;
        l->lq.len++;
        tcp_raise(l, BRISK_EV_ACCEPT);
    } else {
        tcp_raise(c, BRISK_EV_CONNECTED | BRISK_EV_WRITABLE); /* simultaneous open */
    }
    return 1;
}

/* TIME-WAIT: only a retransmitted FIN is expected: acknowledge it and restart the 2 MSL wait. */
__attribute__((cold, noinline)) static void time_wait_ack(brisk_sock *c, const struct brisk_tcp_repr *seg,
                                                          uint64_t now)
{
    ts_recent_update(c, seg, now);
    if (seg->flags & BRISK_TCP_FIN) {
        tcp_send_ack(c, now);
        tcp_arm_misc(c, TCP_MISC_TIMEWAIT, now + c->net->s.tcp_time_wait_ns);
    }
}

/* `pieces`: the text of a coalesced segment (brisk_tcp_input_gro), or NULL for seg->payload. */
static void conn_input(brisk_sock *c, const struct brisk_tcp_repr *seg, const struct brisk_gro_piece *pieces,
                       uint32_t npieces, uint64_t now)
{
    uint32_t seglen = (uint32_t)seg->payload_len + ((seg->flags & BRISK_TCP_SYN) ? 1u : 0u) +
                      ((seg->flags & BRISK_TCP_FIN) ? 1u : 0u);
    int established = c->state == BRISK_TCP_ESTABLISHED; /* before it (Linux: tcp_rcv_established) */

    /* PAWS (RFC 7323 §5.3): an older timestamp than TS.Recent is an old duplicate (24-day validity). */
    if (c->opt.ts && seg->opts.ts_ok && !(seg->flags & BRISK_TCP_RST) &&
        (int32_t)(seg->opts.ts_val - c->opt.ts_recent) < 0 &&
        now - c->opt.ts_recent_age < 24ull * 86400 * BRISK_NSEC_PER_SEC) {
        paws_reject(c, seg, now);
        return;
    }
    if (!acceptable(c, seg->seq, seglen)) {
        unacceptable(c, seg, now);
        return;
    }
    if (seg->flags & (BRISK_TCP_RST | BRISK_TCP_SYN)) {
        rst_or_syn(c, seg, now);
        return;
    }
    if (!(seg->flags & BRISK_TCP_ACK))
        return;
    c->stat.segs_in += pieces ? npieces : 1; /* a coalesced segment counts as the segments it joins */
    tcp_keepalive_reset(c, now);

    if (c->state == BRISK_TCP_SYN_RECEIVED) {
        if (!syn_received_ack(c, seg, now))
            return;
    } else if (c->state == BRISK_TCP_TIME_WAIT) {
        time_wait_ack(c, seg, now);
        return;
    } else if (ack_input(c, seg, now) <= 0) {
        return; /* LAST-ACK finished (the connection is gone), or an unacceptable ACK dropped the segment */
    }
    if (data_after_close(c, seg, now))
        return;

    if (established && tcp_rwin_linux(c))
        tcp_rwin_rtt_ts(c, seg, now); /* Linux's receiver RTT from the echoed timestamp (rwin.c) */
    int ack_now = text_input(c, seg, pieces, npieces, now);
    if (tcp_rwin_linux(c))
        tcp_rwin_seen(c, seg);              /* the peer's window, for Linux's header prediction (rwin.c) */
    tcp_write_xmit(c, TCP_XMIT_INPUT, now); /* data that goes out carries the ACK and clears `pending` */
    tcp_check_writable(c); /* after the sends: they are what brings notsent below a low-water mark */
    if (ack_now && c->ack.pending && !(ack_now == 2 && tcp_of(c->net)->ack_defer && ack_defer(c)))
        tcp_send_ack(c, now);
}

/* RFC 9293 §3.10.7.4 "seventh" and "eighth": the segment's text and its FIN, once its ACK was accepted.
 * Returns what data_input does (1: an ACK must go at once, 2: one is owed for in-order data, 0: it may be
 * delayed), with `ack.pending` set for 1 and 2. */
static inline int text_input(brisk_sock *c, const struct brisk_tcp_repr *seg,
                             const struct brisk_gro_piece *pieces, uint32_t npieces, uint64_t now)
{
    int ack_now = 0;
    int fin_held = c->rcv.fin_pending; /* from an earlier segment: this one may fill the hole before it */
    if (seg->payload_len) {
        if (c->state == BRISK_TCP_ESTABLISHED || c->state == BRISK_TCP_FIN_WAIT_1 ||
            c->state == BRISK_TCP_FIN_WAIT_2) {
            struct brisk_gro_piece one = {seg->payload, (uint32_t)seg->payload_len};
            struct tcp_text text = {pieces ? pieces : &one, pieces ? npieces : 1, 0};
            ack_now = data_input(c, seg, text, now);
        } else {
            ack_now = 1; /* data after the peer's FIN: acknowledge what we have */
        }
    }
    if ((seg->flags & BRISK_TCP_FIN) && !c->rcv.fin) {
        uint32_t fin_seq = seg->seq + (uint32_t)seg->payload_len;
        if (brisk_seq_gt(fin_seq, c->rcv.nxt)) {
            /* Out of order: keep it with the data before it, rather than making the peer resend it, and
             * acknowledge at once like any out-of-order segment (RFC 5681 §4.2: the duplicate ACK tells the
             * sender about the hole; Linux queues the FIN out of order and ACKs it at once too). */
            c->rcv.fin_pending = 1;
            c->rcv.fin_seq = fin_seq;
            ack_now = 1;
        } else if (fin_seq == c->rcv.nxt) {
            c->rcv.fin_pending = 1;
            c->rcv.fin_seq = fin_seq;
            if (!seg->payload_len && tcp_rwin_linux(c))
                tcp_rwin_data(c, seg, fin_seq, 0, rwin_frame(c, seg, 0), 0, 0, now); /* a buffer for it */
        }
    }
    if (c->rcv.fin_pending && !c->rcv.fin && c->rcv.fin_seq == c->rcv.nxt) {
        int closes_established = c->state == BRISK_TCP_ESTABLISHED;
        int data_ack = fin_held ? 1 : ack_now;
        c->rcv.fin_pending = 0;
        fin_input(c, now);
        ack_now = closes_established && c->net->s.tcp_fin_delack ? fin_delack(c, data_ack, now) : 1;
    }
    if (ack_now)
        c->ack.pending = 1;
    return ack_now;
}

/* The connection this segment took to TIME-WAIT has answered it (the ACK of the peer's FIN is out): a record
 * may replace it (timewait.c). */
__attribute__((cold, noinline)) static void tw_enter_settle(struct brisk_net *net, uint64_t now)
{
    brisk_sock *c = tcp_of(net)->tw_enter;
    tcp_of(net)->tw_enter = NULL;
    tcp_tw_settle(c, now);
}

/* A parsed segment that arrived on the 4-tuple id (laddr ours), either family. Inline in both callers, so
 * that the tuple is built in place (callgrind rr 256 flows x 400: 4.1 M instructions more out of line). */
__attribute__((always_inline)) static inline void segment_input(struct brisk_net *net, const struct brisk_tuple *id, const struct brisk_tcp_repr *seg,
                          uint64_t now)
{
    net->c.TcpInBadOptions += seg->opts.bad; /* ignored as Linux ignores them (wire/tcp.c); no branch */
    if (seg->sport == 0 || seg->dport == 0) {
        net->c.TcpInErrs++;
        return;
    }
    brisk_sock *c = tcp_conn_lookup(net, id);
    if (!c) {
        struct tcp_tw *tw = tcp_tw_lookup(net, id);
        if (tw) {
            tcp_tw_input(tw, seg, now); /* a connection in TIME-WAIT, as a record (timewait.c) */
            return;
        }
        brisk_sock *l = tcp_listener_lookup(net, &id->laddr, seg->dport);
        if (l) {
            /* An ACK that carries a SYN cookie: the child it rebuilds takes the ACK as its third segment. */
            brisk_sock *cc = brisk_syncookie_check(l, id, seg, now);
            if (cc) {
                conn_input(cc, seg, NULL, 0, now);
                brisk_syncookie_settle(net, cc, id, now);
                tcp_of(net)->tw_enter = NULL; /* a child in SYN-RECEIVED cannot reach TIME-WAIT */
                TCP_CHECK_TUPLE(net, id);
                return;
            }
            listen_input(l, id, seg, now);
            TCP_CHECK_TUPLE(net, id);
            return;
        }
        net->c.TcpNoPort++;
        tcp_send_rst_for(net, id, seg, now);
        return;
    }
    if (c->state == BRISK_TCP_SYN_SENT)
        syn_sent_input(c, seg, now);
    else
        conn_input(c, seg, NULL, 0, now);
    if (tcp_of(net)->tw_enter)
        tw_enter_settle(net, now);
    TCP_CHECK_TUPLE(net, id); /* c may be gone: look it up again */
}

static void count_parse_error(struct brisk_net *net, int rc)
{
    if (rc == BRISK_WIRE_BAD_CSUM)
        net->c.TcpInCsumErrors++;
    else
        net->c.TcpInErrs++;
}

void brisk_tcp_input(void *ctx, const struct brisk_ipv4_repr *ip, const uint8_t *p, size_t len,
                     unsigned rx_flags, uint64_t now)
{
    struct brisk_net *net = ((struct brisk_tcp *)ctx)->net;
    net->c.TcpInSegs++;
    struct brisk_tcp_repr seg;
    int rc = brisk_tcp_parse(p, len, ip->src, ip->dst, !(rx_flags & BRISK_RX_CSUM_VALID), &seg);
    if (rc < 0) {
        count_parse_error(net, rc);
        return;
    }
    struct brisk_tuple id = {
        .laddr = brisk_addr4(ip->dst), .raddr = brisk_addr4(ip->src), .lport = seg.dport, .rport = seg.sport};
    segment_input(net, &id, &seg, now);
}

void brisk_tcp_input6(void *ctx, const struct brisk_ipv6_repr *ip, const uint8_t *p, size_t len,
                      unsigned rx_flags, uint64_t now)
{
    struct brisk_net *net = ((struct brisk_tcp *)ctx)->net;
    net->c.TcpInSegs++;
    struct brisk_tcp_repr seg;
    int rc = brisk_tcp_parse6(p, len, ip->src, ip->dst, !(rx_flags & BRISK_RX_CSUM_VALID), &seg);
    if (rc < 0) {
        count_parse_error(net, rc);
        return;
    }
    struct brisk_tuple id = {
        .laddr = brisk_addr6(ip->dst), .raddr = brisk_addr6(ip->src), .lport = seg.dport, .rport = seg.sport};
    segment_input(net, &id, &seg, now);
}

int brisk_tcp_input_gro(void *ctx, const struct brisk_tuple *l3, const struct brisk_tcp_repr *seg,
                        const struct brisk_gro_piece *pieces, uint32_t n, uint64_t now)
{
    struct brisk_net *net = ((struct brisk_tcp *)ctx)->net;
    struct brisk_tuple id = {.laddr = l3->laddr, .raddr = l3->raddr, .lport = seg->dport, .rport = seg->sport};
    brisk_sock *c = tcp_conn_lookup(net, &id);
    if (!c || c->state == BRISK_TCP_SYN_SENT)
        return 0; /* a listener, a RST or an open to answer: frame by frame, as they came */
    net->c.TcpInSegs += n;
    net->c.TcpInBadOptions += (uint64_t)seg->opts.bad * n; /* a run's frames share their option bytes */
    conn_input(c, seg, pieces, n, now);
    if (tcp_of(net)->tw_enter)
        tw_enter_settle(net, now);
    TCP_CHECK_TUPLE(net, &id);
    return 1;
}

const struct brisk_ip_proto_ops brisk_tcp_proto = {
    .input = brisk_tcp_input,
    .icmp_error = brisk_tcp_icmp_error,
    .gro_input = brisk_tcp_input_gro,
    .unicast_only = 1, /* RFC 1122 §4.2.3.10 */
    .input6 = brisk_tcp_input6,
    .icmp6_error = brisk_tcp_icmp6_error,
};
