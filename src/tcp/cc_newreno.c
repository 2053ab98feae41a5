/*
 * cc_newreno.c — NewReno congestion control: RFC 5681 with RFC 3465 byte counting and RFC 6582 recovery.
 *
 * The algorithm, per event (the window arithmetic itself lives in cc.c's shared helpers):
 *   init               cwnd = IW (RFC 6928: 10 segments by default, the caller's choice), ssthresh
 *                      "arbitrarily high" (UINT32_MAX, RFC 5681 3.1).
 *   on_ack             below ssthresh, slow start: cwnd += min(acked, 2 SMSS) per ACK (RFC 3465's L = 2,
 *                      which lets delayed ACKs, each covering two segments, still double cwnd per RTT; the
 *                      linux-* profiles credit every whole segment acknowledged, as Linux's packet-counting
 *                      tcp_slow_start does: cc.c's abc_limit), stopping at ssthresh; at or above it,
 *                      congestion avoidance by appropriate byte counting: each cwnd's worth of acknowledged
 *                      bytes adds one SMSS (RFC 3465 2.1), i.e. one SMSS per RTT whatever the ACK pattern,
 *                      where counting ACKs would reward receivers that ACK more. While the sender is
 *                      application-limited the window does not grow at all: an ACK for a flight smaller than
 *                      cwnd proves nothing about whether the network could carry cwnd, and a window grown
 *                      that way is released as a line-rate burst when the application speeds up (the
 *                      reasoning of RFC 7661 / RFC 2861; Linux's tcp_is_cwnd_limited).
 *   on_enter_recovery  ssthresh = max(FlightSize / 2, 2 SMSS), cwnd = ssthresh + 3 SMSS, recover = snd_nxt
 *                      (RFC 5681 3.2 steps 2-3, RFC 6582 3.2 step 2).
 *   on_recovery_ack    duplicate ACK: cwnd += SMSS (RFC 5681 3.2 step 4). Partial ACK: cwnd -= acked, then +=
 *                      SMSS if acked >= SMSS (RFC 6582 3.2 step 5). The connection retransmits the next hole.
 *   on_exit_recovery   full ACK: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS) (RFC 6582 3.2 step 3,
 *                      the option that cannot release a burst).
 *   on_rto             ssthresh = max(FlightSize / 2, 2 SMSS) unless this is a repeated timeout of the same
 *                      retransmission, then cwnd = 1 SMSS (RFC 5681 3.1 eq. 4 and the loss window).
 *   on_idle_restart    cwnd = min(IW, cwnd) after an idle period longer than the RTO (RFC 5681 4.1).
 * NewReno keeps no private state; the ACK the RFCs call "new" versus "duplicate" and the choice between
 * partial and full ACK are the connection's (it holds snd_una and `recover`).
 */
#include "tcp/cc.h"

#include <string.h>

static void newreno_init(struct brisk_cc_state *s, uint32_t mss, uint32_t initial_cwnd_segs)
{
    memset(s, 0, sizeof(*s));
    s->mss = mss ? mss : 1;
    s->cwnd = brisk_cc_initial_window(s->mss, initial_cwnd_segs);
    s->ssthresh = UINT32_MAX;
    s->abc_limit = BRISK_CC_ABC_L;
}

static void newreno_on_ack(struct brisk_cc_state *s, uint32_t acked, uint32_t flight, uint64_t rtt,
                           int app_limited, uint64_t now)
{
    (void)flight;
    (void)rtt;
    (void)now;
    /* Recovery ACKs go through on_recovery_ack. */
    if (s->in_recovery || acked == 0)
        return;
    s->in_loss = 0; /* snd_una moved: whatever an RTO retransmitted got through */
    if (app_limited)
        return;
    if (s->cwnd < s->ssthresh) {
        acked = brisk_cc_slow_start(s, acked);
        if (acked == 0)
            return;
    }
    brisk_cc_cong_avoid(s, s->cwnd, acked);
}

static void newreno_on_enter_recovery(struct brisk_cc_state *s, uint32_t flight, uint32_t snd_nxt,
                                      uint64_t now)
{
    (void)now;
    if (s->in_recovery)
        return; /* one reduction per window of data (RFC 6582) */
    brisk_cc_recovery_enter(s, brisk_cc_loss_ssthresh(flight, s->mss), snd_nxt);
}

static void newreno_on_rto(struct brisk_cc_state *s, uint32_t flight, uint64_t now)
{
    (void)now;
    brisk_cc_rto_collapse(s, brisk_cc_loss_ssthresh(flight, s->mss));
}

static void newreno_on_idle_restart(struct brisk_cc_state *s, uint32_t initial_cwnd_segs)
{
    brisk_cc_idle_restart(s, initial_cwnd_segs);
}

const struct brisk_cc_ops brisk_cc_newreno = {
    .name = "newreno",
    .init = newreno_init,
    .on_ack = newreno_on_ack,
    .on_enter_recovery = newreno_on_enter_recovery,
    .on_recovery_ack = brisk_cc_op_recovery_ack,
    .on_exit_recovery = brisk_cc_op_exit_recovery,
    .on_rto = newreno_on_rto,
    .on_idle_restart = newreno_on_idle_restart,
};
