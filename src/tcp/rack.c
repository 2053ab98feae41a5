/*
 * rack.c — RACK: time-based loss detection (RFC 8985 §6).
 *
 * Counting duplicate ACKs (three, RFC 5681) fails exactly where it matters most: at the tail of a flight
 * there are not three segments behind the hole, a lost retransmission produces no new duplicates at all, and
 * a reordering path produces three without any loss. RACK asks a question about time instead: a segment is
 * lost if a segment sent *after* it has been delivered and more than a round trip plus a reordering window
 * has passed since it was sent. That catches tail losses (with a probe's SACK, tlp.c), lost retransmissions
 * (their new send time is compared like any other) and tolerates reordering up to the window.
 *
 * State (§6.1): RACK.xmit_ts / end_seq — the send time and end of the most recently sent segment known
 * delivered (acked or SACKed), and RACK.rtt, the round trip it measured. A delivered segment that was
 * retransmitted is ignored when its RTT is shorter than the minimum RTT: the ACK was for the original, and
 * taking the retransmission's time would make everything look lost.
 *
 * Reordering (§6.2 step 3): the path reorders when an original transmission is delivered below RACK.fack,
 * the highest sequence SACKed (sack.c), or a D-SACK reports a retransmission that was not needed, or undo
 * (undo.c) finds one by its timestamp echo. Once seen it stays seen.
 *
 * Reordering window (§6.2 step 4): min_rtt / 4 x reo_mult, at most SRTT. reo_mult grows by one per round
 * trip that brings a D-SACK (RACK.dsack_round: not again until snd.una passes what was sent when it grew; a
 * burst of D-SACKs for one episode's retransmissions is one piece of evidence, not sixteen) up to 16, and
 * falls back to 1 after 16 recoveries without one. Until reordering has been seen, the window is zero in
 * fast or RTO recovery (once a loss is known, later holes are losses too) and once DupThresh (3) segments are
 * SACKed: the classic duplicate-ACK rule, which starts the repair of a burst loss at once instead of a
 * quarter of a round trip later. Linux does the same (tcp_rack_reo_wnd).
 *
 * Detection (§6.2 step 5) scans the unSACKed records; the ones sent after RACK.xmit_ts cannot be judged yet.
 * The earliest time a not-yet-lost record would expire is returned, so the connection arms the reordering
 * deadline (kind REO of the one retransmit deadline, timer.c).
 */
#include "tcp/tcp.h"

#define RACK_MAX_MULT           16u
#define TCP_DUPTHRESH           3u
#define RACK_RESET_AFTER_RECOVS 16u

/* Was a sent after b (by time, then by sequence for segments of one burst)? */
static int sent_after(uint64_t a_ts, uint32_t a_end, uint64_t b_ts, uint32_t b_end)
{
    return a_ts > b_ts || (a_ts == b_ts && brisk_seq_gt(a_end, b_end));
}

static int linux_timers(const brisk_sock *c)
{
    return c->net->s.tcp_loss_timers == BRISK_COMPAT_LINUX;
}

/* The retransmitted segment's ACK may be for an earlier copy (§6.2 step 2): then it says nothing. */
static int ambiguous(const brisk_sock *c, const struct tcp_sb_rec *r, uint64_t rtt)
{
    return (r->flags & TCP_SB_EVER_RETRANS) && rtt < brisk_rtt_min(&c->rtt);
}

void tcp_rack_delivered(brisk_sock *c, const struct tcp_sb_rec *r, uint64_t now)
{
    uint64_t rtt = now > r->xmit ? now - r->xmit : 0;
    if (ambiguous(c, r, rtt))
        return;
    int lx = linux_timers(c);
    if (lx) {
        /* Linux's tcp_rack_advance: RACK.rtt from every delivered segment, whether or not it was the most
         * recently sent; what stays is the one its ACK processing meets last. */
        c->rack.advanced = 1;
        c->rack.rtt = rtt;
    }
    if (sent_after(r->xmit, r->end, c->rack.xmit_ts, c->rack.end_seq) || c->rack.xmit_ts == 0) {
        c->rack.xmit_ts = r->xmit;
        c->rack.end_seq = r->end;
        if (!lx)
            c->rack.rtt = rtt;
    }
}

/* Out of line and cold: a D-SACK is rare, and inlined into the ACK path this grew it (callgrind, LTO). */
__attribute__((noinline, cold)) void tcp_rack_dsack(brisk_sock *c)
{
    if (linux_timers(c)) {
        /* Linux (tcp_dsack_seen): a D-SACK widens the window only once reordering has been seen, up to 255
         * steps (the window is capped at SRTT anyway); it does not itself count as reordering. */
        if (!c->rack.reord)
            return;
        c->rack.recoveries_since_dsack = 0;
        if (c->rack.reo_mult < UINT8_MAX)
            c->rack.reo_mult++;
        return;
    }
    c->rack.reord = 1;
    c->rack.recoveries_since_dsack = 0; /* RACK.reo_wnd_persist = 16 */
    if (c->recov.dsack_round_on && brisk_seq_lt(c->snd.una, c->recov.dsack_round))
        return; /* this round trip has widened the window already */
    c->recov.dsack_round_on = 1;
    c->recov.dsack_round = c->snd.nxt;
    if (c->rack.reo_mult == 0)
        c->rack.reo_mult = 1;
    if (c->rack.reo_mult < RACK_MAX_MULT)
        c->rack.reo_mult++;
}

void tcp_rack_recovery_done(brisk_sock *c)
{
    if (++c->rack.recoveries_since_dsack >= RACK_RESET_AFTER_RECOVS) {
        c->rack.reo_mult = 1;
        c->rack.recoveries_since_dsack = 0;
    }
}

static uint64_t reo_wnd(const brisk_sock *c)
{
    if (!c->rack.reord) {
        if (c->cc.in_recovery || c->cc.in_loss)
            return 0;
        if (c->sb.sacked >= TCP_DUPTHRESH * c->snd.mss)
            return 0; /* DupThresh segments SACKed (records are at most one MSS: at least three of them) */
    }
    uint64_t mult = c->rack.reo_mult ? c->rack.reo_mult : 1;
    uint64_t w = brisk_rtt_min(&c->rtt) / 4 * mult, srtt = brisk_rtt_srtt(&c->rtt);
    return w < srtt ? w : srtt;
}

/* Linux's tcp_rack_reo_wnd, in us: with no reordering seen, zero in recovery or after an RTO, and zero once
 * three segments are SACKed (the duplicate-ACK threshold, tp->reordering); else min_rtt / 4 per step, at
 * most SRTT. */
static uint64_t linux_reo_wnd_us(const brisk_sock *c)
{
    if (!c->rack.reord) {
        if (c->cc.in_recovery || c->cc.in_loss)
            return 0;
        uint32_t sacked = 0;
        for (uint32_t i = 0; i < c->sb.len && sacked < 3; i++)
            sacked += (tcp_sb_at(c, i)->flags & TCP_SB_SACKED) != 0;
        if (sacked >= 3)
            return 0;
    }
    uint64_t mult = c->rack.reo_mult ? c->rack.reo_mult : 1;
    uint64_t w = brisk_rtt_min(&c->rtt) / BRISK_NSEC_PER_USEC / 4 * mult;
    uint64_t srtt = brisk_rtt_srtt(&c->rtt) / BRISK_NSEC_PER_USEC;
    return w < srtt ? w : srtt;
}

/* Linux's tcp_rack_detect_loss and tcp_rack_mark_lost, in its microseconds: a segment is lost once RACK.rtt +
 * the window have passed since it was sent (remaining <= 0); the timer waits for the last of the others (the
 * largest remaining, not the first), 2 ms more (TCP_TIMEOUT_MIN_US), rounded up to the 1 ms tick. */
static uint32_t linux_detect(brisk_sock *c, uint64_t now, uint64_t *wait)
{
    int64_t win = (int64_t)linux_reo_wnd_us(c), rtt = (int64_t)(c->rack.rtt / BRISK_NSEC_PER_USEC);
    int64_t longest = 0;
    uint32_t marked = 0;
    for (uint32_t i = 0; i < c->sb.len; i++) {
        struct tcp_sb_rec *r = tcp_sb_at(c, i);
        if (r->flags & TCP_SB_SACKED)
            continue;
        if ((r->flags & (TCP_SB_LOST | TCP_SB_RETRANS)) == TCP_SB_LOST)
            continue;
        if (!sent_after(c->rack.xmit_ts, c->rack.end_seq, r->xmit, r->end))
            continue;
        int64_t age = (int64_t)((now > r->xmit ? now - r->xmit : 0) / BRISK_NSEC_PER_USEC);
        int64_t remaining = rtt + win - age;
        if (remaining <= 0) {
            tcp_sb_mark_lost(c, r);
            marked++;
        } else if (remaining > longest) {
            longest = remaining;
        }
    }
    if (longest) {
        uint64_t us = (uint64_t)longest + 2000;
        *wait = (us + 999) / 1000 * BRISK_NSEC_PER_MSEC;
    }
    return marked;
}

uint32_t tcp_rack_detect(brisk_sock *c, uint64_t now, uint64_t *wait)
{
    *wait = 0;
    if (!tcp_sb_active(c) || c->rack.xmit_ts == 0)
        return 0;
    if (linux_timers(c)) {
        c->rack.advanced = 0;
        return linux_detect(c, now, wait);
    }
    if (c->sb.len == 0)
        return 0; /* nothing outstanding: the usual case of an ACK in a request / response exchange */
    uint64_t win = reo_wnd(c);
    uint32_t marked = 0;
    for (uint32_t i = 0; i < c->sb.len; i++) {
        struct tcp_sb_rec *r = tcp_sb_at(c, i);
        if (r->flags & TCP_SB_SACKED)
            continue;
        if ((r->flags & (TCP_SB_LOST | TCP_SB_RETRANS)) == TCP_SB_LOST)
            continue; /* lost and waiting for its retransmission */
        if (!sent_after(c->rack.xmit_ts, c->rack.end_seq, r->xmit, r->end))
            continue; /* sent after the latest delivered segment: nothing to compare with yet */
        uint64_t deadline = r->xmit + c->rack.rtt + win;
        if (deadline <= now) {
            tcp_sb_mark_lost(c, r);
            marked++;
        } else if (*wait == 0 || deadline - now < *wait) {
            *wait = deadline - now;
        }
    }
    return marked;
}
