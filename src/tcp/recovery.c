/*
 * recovery.c — SACK-based loss recovery: RACK decides what is lost (rack.c), the scoreboard knows what is in
 * flight (sack.c), PRR sizes the window (prr.c), and this file puts them together (RFC 6675 §5, RFC 8985 §6,
 * RFC 6937).
 *
 * After every ACK on a SACK connection (and when the RACK reordering deadline expires) the connection runs
 * RACK. The first loss it marks starts a recovery episode, unless an RTO already put the connection in loss
 * recovery: congestion control picks ssthresh once (the algorithm's on_enter_recovery), `recover` is snd.max,
 * and PRR drives cwnd from then on. The episode ends when the cumulative ACK reaches `recover`; cwnd is then
 * ssthresh (RFC 6937 §3). Lost segments go out before any new data, in sequence order, while pipe is below
 * cwnd (tcp_retransmit_lost, called first thing by the one transmit function).
 *
 * Connections without SACK recover on duplicate ACKs, one of two ways (docs/recovery.md). By default as RFC
 * 5681 / 6582 say (input.c): the third duplicate retransmits the head, cwnd is inflated by each further one
 * and deflated by partial ACKs, each of which retransmits the next hole; before that, RFC 3042's limited
 * transmit lets the first two duplicates each send a new segment (tcp_reno_pipe). With tcp_nosack_prr (the
 * linux-* profiles) as Linux 6.x does (tcp_reno_ack): each duplicate ACK counts as a segment that left the
 * network (tcp_add_reno_sack), which gives the same limited transmit; the third marks the head lost and
 * starts recovery with ssthresh from cwnd; PRR (tcp_cwnd_reduction, counted in segments) sizes the window on
 * every ACK; every partial ACK marks the new head lost, and the head goes again when the window allows,
 * before any new data. An ACK below snd.una is ignored (input.c) — it neither counts as a duplicate nor
 * sends anything.
 */
#include "tcp/tcp.h"

/* A new recovery episode, if losses are marked and none is running. */
static void maybe_enter(brisk_sock *c, uint32_t prior_cwnd, uint64_t now)
{
    if (!c->cc.in_recovery && !c->cc.in_loss && c->sb.lost > 0) {
        /* The reduction is from the window (as Linux does), not RFC 5681's FlightSize: with SACK, snd.nxt -
         * snd.una also counts everything SACKed above the holes and everything just marked lost — after a
         * slow-start overshoot twice what the path holds — and a CUBIC-style 0.7 x that keeps pipe above the
         * path's capacity for the whole episode (measured: ssthresh growing from one episode to the next).
         * PRR's RecoverFS is pipe for the same reason (the RFC 6937 update does the same). */
        uint32_t pipe_before = tcp_pipe(c) + c->sb.lost - c->sb.retrans; /* lost ones were in flight so far */
        tcp_undo_begin(c, prior_cwnd); /* a new episode: what may be undone is this one */
        c->cc_ops->on_enter_recovery(&c->cc, prior_cwnd, c->snd.max, now);
        tcp_set_ca_state(c, TCP_CA_RECOVERY);
        c->cc.recover = c->snd.max;
        c->net->c.TCPFastRetrans++;
        c->stat.fast_retransmits++;
        tcp_prr_start(c, pipe_before, prior_cwnd);
        if (c->net->s.tcp_loss_timers == BRISK_COMPAT_LINUX)
            c->timer.tlp_on = 0; /* Linux's tcp_init_cwnd_reduction ends the probe episode */
    }
}

void tcp_recovery_check(brisk_sock *c, uint32_t prior_cwnd, uint64_t now)
{
    if (!tcp_sb_active(c))
        return;
    if (c->sb.len == 0) {
        /* Nothing outstanding, so nothing to judge, mark or enter (the usual ACK of a request / response
         * exchange): what a detection pass would conclude, without making one. */
        c->rack.advanced = 0;
        return;
    }
    uint64_t wait = 0;
    /* Linux (tcp_rack_mark_lost) scans only when a delivery moved RACK since the last scan. */
    if (c->net->s.tcp_loss_timers != BRISK_COMPAT_LINUX || c->rack.advanced)
        tcp_rack_detect(c, now, &wait);
    maybe_enter(c, prior_cwnd, now);
    if (wait)
        tcp_arm_reo(c, now + wait);
}

void tcp_recovery_reo_timeout(brisk_sock *c, uint64_t now)
{
    /* Linux's tcp_rack_reo_timeout: mark what expired (the next reordering deadline is armed by a later
     * ACK, not here), enter recovery, one packet's worth of PRR credit, retransmit; then the RTO, counted
     * from the oldest segment's last transmission. */
    uint64_t wait;
    if (tcp_sb_active(c) && tcp_rack_detect(c, now, &wait)) {
        int was = c->cc.in_recovery;
        maybe_enter(c, c->cc.cwnd, now);
        if (!was && c->cc.in_recovery)
            tcp_prr_ack(c, c->snd.mss); /* entering: tcp_cwnd_reduction with one packet delivered */
        tcp_write_xmit(c, TCP_XMIT_TIMER, now);
    }
    if (c->timer.rtx_kind != TCP_RTX_RTO)
        tcp_rearm_rto_linux(c, now, 1);
}

/* Sends lost record r again; returns nonzero if the device or the pool refused it (the connection is parked).
 */
static int resend(brisk_sock *c, const struct tcp_sb_rec *r, uint64_t now)
{
    /* A record sent before the path MTU shrank (tcp_simple_retransmit) is larger than the MSS now: it goes
     * again in segments of the MSS, all at once (the first marks the record retransmitted). */
    uint32_t seq = r->seq, end = r->end, mss = c->snd.mss ? c->snd.mss : 1;
    while (seq != end) {
        uint32_t len = end - seq < mss ? end - seq : mss;
        uint8_t flags = BRISK_TCP_ACK | tcp_psh(c, seq, len); /* PSH as the rule gives it (output.c) */
        if (seq + len == tcp_data_end(c) && c->snd.fin_sent && c->snd.max == seq + len + 1)
            flags |= BRISK_TCP_FIN; /* the last data byte: the FIN too if it went */
        if (brisk_netdev_stopped(c->rt.dev) || tcp_transmit(c, seq, len, flags, now) < 0) {
            tcp_block(c); /* resumed by the TX completion that frees the device or the pool */
            return -1;
        }
        seq += len;
    }
    return 0;
}

void tcp_retransmit_first_lost(brisk_sock *c, uint64_t now)
{
    const struct tcp_sb_rec *r = tcp_sb_next_lost(c);
    if (r)
        resend(c, r, now);
}

int tcp_retransmit_lost(brisk_sock *c, uint64_t now)
{
    const struct tcp_sb_rec *r;
    while ((r = tcp_sb_next_lost(c)) != NULL) {
        /* A whole segment may go while pipe is below cwnd (Linux counts packets the same way); demanding
         * room for all of it would wedge a one-segment loss window behind a FIN's sequence number. */
        if (tcp_pipe(c) >= c->cc.cwnd)
            return BRISK_HOLD_CWND;
        if (resend(c, r, now) != 0)
            return BRISK_HOLD_DEVICE;
    }
    return BRISK_HOLD_NONE;
}

void tcp_retransmit_head(brisk_sock *c, uint64_t now)
{
    uint32_t sent = c->snd.max - c->snd.una;
    if (c->snd.fin_sent && sent > 0)
        sent--; /* the FIN's sequence number is not a buffer byte */
    uint32_t len = sent < c->snd.mss ? sent : c->snd.mss;
    if (len && c->snd.marks)
        len = tcp_mark_eor_clip(c, c->snd.una, len); /* never across a record boundary (mark.c) */
    if (len == 0)
        return;
    tcp_transmit(c, c->snd.una, len, BRISK_TCP_ACK | tcp_psh(c, c->snd.una, len), now);
}

uint32_t tcp_reno_pipe(const brisk_sock *c)
{
    uint32_t flight = tcp_flight(c), gone = 0;
    if (c->cc.in_loss)
        return flight; /* after a timeout everything goes again from snd.una (timer.c) */
    if (c->net->s.tcp_nosack_prr) {
        /* Linux's packets in flight: out - sacked_out - lost_out + retrans_out, in segments of one MSS. */
        gone = c->reno_sacked + (c->reno.lost && !c->reno.retrans ? 1u : 0u);
    } else if (!c->cc.in_recovery) {
        /* RFC 3042: with one or two duplicate ACKs, up to cwnd + 2 SMSS may be outstanding. */
        gone = c->dupacks < 2 ? c->dupacks : 2;
    }
    uint64_t out = (uint64_t)gone * c->snd.mss;
    return flight > out ? flight - (uint32_t)out : 0;
}

/* Segments in flight as Linux counts them (tcp_packets_in_flight), one per MSS of sequence space. */
static uint32_t reno_in_flight(const brisk_sock *c)
{
    return (tcp_reno_pipe(c) + c->snd.mss - 1) / c->snd.mss;
}

/* Linux's tcp_newreno_mark_lost: the segment at snd.una is lost. */
static int reno_mark_head_lost(brisk_sock *c)
{
    if (c->reno.lost || c->snd.una == c->snd.max)
        return 0;
    c->reno.lost = 1;
    c->reno.retrans = 0;
    return 1;
}

/* Linux's tcp_cwnd_reduction (RFC 6937 PRR, prr.c), in segments: `delivered` segments left the network. */
static void reno_prr(brisk_sock *c, uint32_t delivered, int advanced, int newly_lost)
{
    tcp_prr_linux(c, reno_in_flight(c), delivered, advanced, newly_lost);
}

void tcp_reno_ack(brisk_sock *c, uint32_t acked, int dupack, uint32_t prior_cwnd, uint64_t now)
{
    uint32_t mss = c->snd.mss, delivered = 0;
    int newly_lost = 0;
    if (c->cc.in_loss) {
        /* After a timeout the connection goes back to snd.una (timer.c): nothing counted before holds. */
        c->reno_sacked = 0;
        c->reno.lost = c->reno.retrans = 0;
        return;
    }
    uint32_t packets_out = (tcp_flight(c) + mss - 1) / mss;
    if (acked) {
        /* tcp_clean_rtx_queue and tcp_remove_reno_sacks: the head left (it was lost or not); one of the
         * acknowledged segments filled the hole, the others were already counted by duplicate ACKs. */
        c->reno.lost = c->reno.retrans = 0;
        uint32_t pkts = (acked + mss - 1) / mss;
        delivered = pkts > c->reno_sacked + 1 ? pkts - c->reno_sacked : 1;
        c->reno_sacked = pkts - 1 >= c->reno_sacked ? 0 : c->reno_sacked - (pkts - 1);
    }
    if (dupack) {
        /* tcp_add_reno_sack, bounded by tcp_limit_reno_sacked: at least one hole stays. */
        uint32_t prior = c->reno_sacked, holes = 1;
        c->reno_sacked++;
        if (holes > packets_out)
            holes = packets_out;
        if (c->reno_sacked + holes > packets_out)
            c->reno_sacked = packets_out - holes;
        if (c->reno_sacked > prior)
            delivered += c->reno_sacked - prior;
    }
    if (c->cc.in_recovery) {
        if (brisk_seq_geq(c->snd.una, c->cc.recover)) {
            c->reno_sacked = 0;
            if (c->snd.una != c->cc.recover) {
                /* tcp_end_cwnd_reduction: recovery ends at ssthresh (Linux holds the state while snd.una
                 * is exactly `recover` — tcp_is_non_sack_preventing_reopen — and ends it on the next). */
                c->cc_ops->on_exit_recovery(&c->cc, tcp_flight(c), now);
                tcp_set_ca_state(c, TCP_CA_OPEN);
                c->cc.cwnd = c->cc.ssthresh;
                return;
            }
        }
        /* A partial ACK: the next hole is lost too. At exactly `recover` the whole window of the loss is
         * acknowledged and nothing above it yet: Linux's tcp_try_undo_recovery holds the state without
         * marking anything (the new head was sent after the loss, not lost with it), and PRR still sizes
         * the window (tcp_cong_control runs tcp_cwnd_reduction while the state is Recovery). */
        if (acked && c->snd.una != c->cc.recover)
            newly_lost = reno_mark_head_lost(c);
    } else {
        if (acked)
            c->reno_sacked = 0; /* tcp_reset_reno_sack: back to Open */
        if (c->reno_sacked >= 3 && !c->cc.in_loss && brisk_seq_geq(c->snd.una, c->cc.recover))
            newly_lost = reno_mark_head_lost(c); /* the reordering threshold (tcp_reordering, 3) */
        if (!c->reno.lost)
            return;
        /* tcp_enter_recovery / tcp_init_cwnd_reduction: ssthresh from cwnd, counted in whole segments. */
        c->cc_ops->on_enter_recovery(&c->cc, prior_cwnd, c->snd.max, now);
        uint32_t ssthresh = c->cc.ssthresh / mss * mss;
        c->cc.ssthresh = ssthresh > 2 * mss ? ssthresh : 2 * mss;
        tcp_set_ca_state(c, TCP_CA_RECOVERY);
        c->cc.recover = c->snd.max;
        c->net->c.TCPFastRetrans++;
        c->stat.fast_retransmits++;
        c->prr.recover_fs = prior_cwnd;
        c->prr.delivered = 0;
        c->prr.out = 0;
    }
    reno_prr(c, delivered, acked != 0, newly_lost);
    /* tcp_xmit_retransmit_queue: the lost head goes first, when the window has room for it. */
    if (c->reno.lost && !c->reno.retrans && reno_in_flight(c) < c->cc.cwnd / mss) {
        tcp_retransmit_head(c, now);
        c->reno.retrans = 1;
        tcp_rearm_rto(c, now);
    }
}

void tcp_simple_retransmit(brisk_sock *c, uint64_t now)
{
    if (c->snd.una == c->snd.nxt)
        return; /* nothing in flight was dropped */
    /* Karn: what goes again gives no RTT sample. */
    c->txt.len = 0;
    c->txt.rtx_high = c->snd.max;
    c->txt.rtx_valid = 1;
    if (tcp_sb_active(c) && c->sb.len > 0) {
        tcp_sb_mark_all_lost(c);
    } else {
        c->snd.nxt = c->snd.una;
        c->snd.fin_sent = 0;
    }
    tcp_write_xmit(c, TCP_XMIT_INPUT, now);
}
