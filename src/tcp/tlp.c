/*
 * tlp.c — tail loss probes (RFC 8985 §7).
 *
 * Fast recovery needs ACKs to notice a loss; a loss at the tail of a burst — the last segments of a response
 * — leaves nothing behind it to provoke them, and without a probe the sender waits for the RTO (200 ms
 * minimum, a thousand round trips on a data-centre path) and then collapses cwnd to one segment. A tail loss
 * probe fires after about two round trips instead: it sends one segment — new data if the peer's window
 * allows, so that the probe is useful either way, else the last segment again — whose ACK (or SACK) exposes
 * the loss to the normal machinery, or repairs it outright.
 *
 * Arming (§7.2). While data is outstanding on a SACK connection that is not already recovering, the
 * retransmit deadline becomes a probe deadline PTO = max(2 x SRTT, SRTT + 4 x RTTVAR) after each send of new
 * data and each ACK of new data, plus the worst-case delayed-ACK time (tcp_delack_max) when only one segment
 * is in flight — the peer may be holding its ACK for a second one — and never later than the RTO would be:
 * when the PTO is longer the probe fires at the RTO's time instead, so a lost lone segment (a request, a
 * response) is resent by a probe, which repairs it with one cwnd reduction instead of the RTO's collapse and
 * backoff. It is the same deadline the RTO uses, multiplexed by kind (timer.c), so probing costs no extra
 * timer. The RTTVAR term is RFC 9002's (§6.2.1, QUIC's PTO; RFC 8985 allows a PTO longer than 2 x SRTT): on a
 * steady path it changes nothing, but where the RTT swings — request / response connections behind a bulk
 * flow's queue — 2 x SRTT fired ahead of ACKs that were only late (examples/scenario.yaml: 208 spurious
 * probes on a lossless link, none with it), and each such probe costs a segment and returns a D-SACK that
 * RACK takes for reordering, widening its window for the next real loss. Linux's answer is 2 x SRTT + 2 ms.
 *
 * In fast recovery too (brisk, tcp_recovery_probe; not RFC 8985, which arms no probe there, nor Linux).
 * RACK repairs a lost retransmission from the SACKs of what was sent after it, so recovery needs no probe
 * while ACKs flow. But when the retransmission that fills the last hole is the last segment sent — PRR sends
 * only as ACKs arrive, and a receiver that coalesces (a Linux receiver fed offloaded frames) answers the hole
 * filling with one cumulative ACK — that one ACK is the episode's only feedback, and losing it costs an RTO:
 * 200 ms, a window of one segment and the backoff, measured over a TAP against the kernel at 1 % loss both
 * ways (every RTO of a 4 s run was this). The probe there is one segment of new data, within the peer's
 * window but beyond cwnd as a TLP is, after the same PTO of silence: its ACK ends the episode when the hole
 * was filled (the lost ACK's news, a PTO late instead of 200 ms), or SACKs it past a retransmission that was
 * itself lost, which RACK then marks. A probe that finds no new data to send is not sent (a retransmission
 * of SACKed bytes would return a D-SACK that RACK would take for reordering); the RTO stays behind it. The
 * episode is already reducing its window, so such a probe's ACK never reduces it again (§7.4's rule is for
 * probes in the open state).
 *
 * Firing (§7.3). One probe per episode: TLP.end_seq records snd.max, and until an ACK reaches it no other
 * probe is armed; the RTO takes over the deadline.
 *
 * Detecting (§7.4). When an ACK covers TLP.end_seq the episode ends. If the probe carried new data there is
 * nothing to learn (a loss before it shows up through SACK / duplicate ACKs). If it retransmitted, a D-SACK
 * for it means both copies arrived — no loss; otherwise the probe repaired a loss and congestion control must
 * still react: one reduction, as for a recovery episode, but without the RTO's collapse to one segment.
 */
#include "tcp/tcp.h"

uint64_t tcp_tlp_timeout(const brisk_sock *c)
{
    const struct brisk_settings *s = &c->net->s;
    if (!s->tcp_tlp || !c->opt.sack || c->timer.tlp_on || c->cc.in_loss)
        return 0;
    if (c->cc.in_recovery && !s->tcp_recovery_probe)
        return 0;
    /* Any synchronized state with data or a FIN outstanding: a tail loss is as likely after close() as
     * before, and Linux's tcp_schedule_loss_probe asks nothing about the state either. */
    switch (c->state) {
    case BRISK_TCP_ESTABLISHED:
    case BRISK_TCP_CLOSE_WAIT:
    case BRISK_TCP_FIN_WAIT_1:
    case BRISK_TCP_CLOSING:
    case BRISK_TCP_LAST_ACK:
        break;
    default:
        return 0; /* the handshake has its own retransmissions; nothing else is outstanding */
    }
    uint64_t srtt = brisk_rtt_srtt(&c->rtt);
    if (srtt == 0)
        return 0; /* no estimate yet: the RTO alone (the RFC's 1 s PTO would be no earlier) */
    uint64_t pto = 2 * srtt;
    uint64_t var = srtt + 4 * brisk_rtt_rttvar(&c->rtt); /* RFC 9002 §6.2.1 (the essay) */
    if (var > pto)
        pto = var;
    if (tcp_flight(c) <= c->snd.mss)
        pto += s->tcp_delack_max_ns; /* WCDelAckT: a lone segment may wait for the peer's delayed ACK */
    return pto;
}

static int linux_timers(const brisk_sock *c)
{
    return c->net->s.tcp_loss_timers == BRISK_COMPAT_LINUX;
}

/* Segments outstanding as Linux's packets_out counts them: the scoreboard's records, and a FIN sent alone. */
static uint32_t packets_out(const brisk_sock *c)
{
    uint32_t fin = c->snd.fin_sent && c->snd.fin_alone ? 1u : 0u;
    if (tcp_sb_active(c))
        return c->sb.len + fin;
    uint32_t mss = c->snd.mss ? c->snd.mss : 1;
    uint32_t data = c->snd.max - c->snd.una - (c->snd.fin_sent ? 1u : 0u);
    return (data + mss - 1) / mss + fin;
}

uint64_t tcp_tlp_timeout_linux(const brisk_sock *c, uint64_t rto_delta)
{
    /* tcp_schedule_loss_probe: SACK connections with data out, in the Open or CWR state — not while SACKed
     * or lost data is outstanding (Disorder), in recovery, or after an RTO (Loss). It does not ask whether a
     * probe is already out: tcp_send_loss_probe declines the second one when the timer fires. */
    const struct brisk_settings *s = &c->net->s;
    if (!s->tcp_tlp || !c->opt.sack || c->cc.in_recovery || c->cc.in_loss || c->sb.sacked || c->sb.lost)
        return 0;
    switch (c->state) {
    case BRISK_TCP_ESTABLISHED:
    case BRISK_TCP_CLOSE_WAIT:
    case BRISK_TCP_FIN_WAIT_1:
    case BRISK_TCP_CLOSING:
    case BRISK_TCP_LAST_ACK:
        break;
    default:
        return 0;
    }
    uint32_t n = packets_out(c);
    if (n == 0)
        return 0;
    uint64_t pto;
    uint64_t srtt = brisk_rtt_srtt(&c->rtt);
    if (srtt == 0) {
        pto = BRISK_NSEC_PER_SEC; /* no sample yet: TCP_TIMEOUT_INIT */
    } else {
        /* 2 x SRTT in Linux's microseconds (srtt_us >> 2), plus the minimum RTO for a lone segment (the
         * peer's delayed ACK) or 2 ms (TCP_TIMEOUT_MIN_US) otherwise, rounded up to the 1 ms tick. */
        uint64_t us = srtt * 8 / BRISK_NSEC_PER_USEC >> 2;
        us += n == 1 ? s->tcp_rto_min_ns / BRISK_NSEC_PER_USEC : 2000;
        pto = (us + 999) / 1000 * BRISK_NSEC_PER_MSEC;
    }
    if (rto_delta) {
        uint64_t rto = (rto_delta + BRISK_NSEC_PER_MSEC - 1) / BRISK_NSEC_PER_MSEC * BRISK_NSEC_PER_MSEC;
        if (rto < pto)
            pto = rto; /* the RTO would come first: probe then */
    }
    return pto;
}

/* New data for the probe: at most one segment, within the peer's window (not cwnd: §7.3). */
static int probe_new_data(brisk_sock *c, uint64_t now)
{
    uint32_t notsent = tcp_notsent(c);
    uint32_t wnd_end = c->snd.una + c->snd.wnd;
    if (notsent == 0 || c->snd.nxt != c->snd.max || !brisk_seq_gt(wnd_end, c->snd.nxt))
        return 0;
    uint32_t len = notsent < c->snd.mss ? notsent : c->snd.mss;
    if (len > wnd_end - c->snd.nxt)
        len = wnd_end - c->snd.nxt;
    if (c->snd.marks)
        len = tcp_mark_eor_clip(c, c->snd.nxt, len); /* not across a record boundary (mark.c) */
    uint8_t flags = BRISK_TCP_ACK | tcp_psh(c, c->snd.nxt, len);
    if (len == notsent && c->snd.fin_queued)
        flags |= BRISK_TCP_FIN;
    if (tcp_transmit(c, c->snd.nxt, len, flags, now) < 0)
        return 0;
    tcp_advance_nxt(c, len, flags, c->snd.mss);
    return 1;
}

/* The last segment again, as it was sent (RFC 8985 §7.3: "the highest-sequence segment sent"; Linux's
 * tcp_send_loss_probe retransmits the last skb, cut to its last segment): a FIN that went out on its own is
 * resent alone (Linux's tcp_send_fin gives it an skb of its own once all data has been sent); otherwise the
 * last data segment as recorded on the scoreboard (the tail of a TSO burst may be short of an MSS), with PSH
 * as its first transmission had it and the FIN if it rode on it. Without a scoreboard: up to one MSS ending
 * at the highest byte sent. */
static int probe_last_segment(brisk_sock *c, uint64_t now)
{
    if (c->snd.fin_sent && c->snd.fin_alone)
        return tcp_transmit(c, c->snd.max - 1, 0, BRISK_TCP_ACK | BRISK_TCP_FIN, now) == BRISK_OK;
    uint32_t end = c->snd.max - (c->snd.fin_sent ? 1u : 0u);
    uint32_t len = end - c->snd.una;
    if (len > c->snd.mss)
        len = c->snd.mss;
    if (tcp_sb_active(c) && c->sb.len && tcp_sb_at(c, c->sb.len - 1)->end == end) {
        const struct tcp_sb_rec *r = tcp_sb_at(c, c->sb.len - 1);
        len = r->end - r->seq;
    }
    if (len && c->snd.marks && brisk_seq_gt(tcp_mark_eor_before(c, end), end - len))
        len = end - tcp_mark_eor_before(c, end); /* the last record's bytes only (mark.c) */
    uint8_t flags = BRISK_TCP_ACK | tcp_psh(c, end - len, len) | (c->snd.fin_sent ? BRISK_TCP_FIN : 0);
    if (len == 0 && !c->snd.fin_sent)
        return 0;
    return tcp_transmit(c, end - len, len, flags, now) == BRISK_OK;
}

/* No probe after all: the RTO, for Linux's timers counted from the oldest segment (its "rearm_timer"). */
static void no_probe(brisk_sock *c, uint64_t now)
{
    if (linux_timers(c))
        tcp_rearm_rto_linux(c, now, 1);
    else
        tcp_rearm_rto(c, now);
}

void tcp_tlp_fire(brisk_sock *c, uint64_t now)
{
    if (c->snd.una == c->snd.max)
        return;
    if (c->timer.tlp_on) {
        no_probe(c, now); /* Linux's timers schedule past an outstanding probe; at most one goes */
        return;
    }
    if (brisk_netdev_stopped(c->rt.dev)) {
        /* Our own device queue is full: the tail has not left the host, so it cannot have been lost (Linux's
         * skb_still_in_host_queue). No probe; the RTO stays the safety net. */
        no_probe(c, now);
        return;
    }
    int retrans = 0;
    if (c->cc.in_recovery && c->net->s.tcp_recovery_probe) {
        /* tcp_recovery_probe (the essay): new data or nothing; no second reduction on its ACK. Either way
         * the episode's probe is spent (tlp_on), so what follows is the RTO, not another probe deadline. */
        int sent = probe_new_data(c, now);
        c->timer.tlp_on = 1;
        c->timer.tlp_retrans = 0;
        c->timer.tlp_end = c->snd.max;
        if (sent) {
            c->net->c.TCPLossProbes++;
            c->net->c.TCPRecoveryProbes++;
            c->stat.tlp_probes++;
        }
        tcp_rearm_rto(c, now);
        return;
    }
    if (!probe_new_data(c, now)) {
        if (!probe_last_segment(c, now)) {
            no_probe(c, now); /* nothing could go (device busy): the RTO stays the safety net */
            return;
        }
        retrans = 1;
    }
    c->net->c.TCPLossProbes++;
    c->stat.tlp_probes++;
    c->timer.tlp_on = 1;
    c->timer.tlp_retrans = (uint8_t)retrans;
    c->timer.tlp_end = c->snd.max;
    if (linux_timers(c)) {
        tcp_rearm_rto_linux(c, now, 0); /* tcp_send_loss_probe clears the pending probe: from now */
        return;
    }
    tcp_rearm_rto(c, now); /* a probe is outstanding: this arms the RTO (§7.3) */
}

/* A D-SACK (RFC 2883: the first block lies below the cumulative ACK) for bytes of the probe. */
static int probe_dsacked(const brisk_sock *c, const struct brisk_tcp_repr *seg)
{
    if (!seg->opts.nsack)
        return 0;
    uint32_t s = seg->opts.sack[0].start, e = seg->opts.sack[0].end;
    if (!brisk_seq_leq(e, seg->ack))
        return 0;
    uint32_t probe_start = c->timer.tlp_end - c->snd.mss - 1; /* generous: the probe's bytes and its FIN */
    return brisk_seq_gt(e, probe_start) && brisk_seq_leq(s, c->timer.tlp_end);
}

void tcp_tlp_ack(brisk_sock *c, const struct brisk_tcp_repr *seg, uint32_t prior_cwnd, int dup, uint64_t now)
{
    if (!c->timer.tlp_on)
        return;
    int dsack = c->timer.tlp_retrans && probe_dsacked(c, seg);
    if (linux_timers(c)) {
        /* Linux's tcp_process_tlp_ack: nothing below TLP.end_seq; a probe of new data, a D-SACK for the probe
         * or a pure duplicate ACK (both copies arrived) ends the episode; only an ACK beyond TLP.end_seq
         * proves the probe repaired a loss — one that reaches it exactly keeps the episode open. */
        if (brisk_seq_lt(seg->ack, c->timer.tlp_end))
            return;
        if (!c->timer.tlp_retrans || dsack || dup) {
            c->timer.tlp_on = 0;
            return;
        }
        if (!brisk_seq_gt(seg->ack, c->timer.tlp_end))
            return;
    } else if (brisk_seq_lt(seg->ack, c->timer.tlp_end) && !dsack) {
        return; /* the episode goes on */
    }
    c->timer.tlp_on = 0;
    if (!c->timer.tlp_retrans || dsack)
        return;
    /* The retransmitted probe was needed: reduce once, as a recovery episode would (the algorithm picks
     * ssthresh), and go on at the reduced window — the episode is already over, so RFC 6582's full-ACK
     * deflation to the (now empty) flight would only throw the window away (Linux ends in CWR the same way).
     */
    c->cc_ops->on_enter_recovery(&c->cc, prior_cwnd, c->snd.max, now);
    tcp_set_ca_state(c, TCP_CA_OPEN);
    c->cc.cwnd = c->cc.ssthresh;
    c->net->c.TCPLossProbeRecovery++;
    c->stat.tlp_recoveries++;
}
