/*
 * cc.c — the registry of congestion-control algorithms and the window arithmetic they share.
 *
 * A connection picks its algorithm by name (the "congestion control" setting) with brisk_cc_find() and from
 * then on only calls through the const ops table: the registry is a const array, so there is no global
 * mutable state and adding an algorithm is one line here plus its own file (cc_newreno.c, cc_cubic.c).
 *
 * The shared helpers encode the parts of RFC 5681 (slow start, congestion avoidance, loss window, restart
 * window), RFC 3465 (appropriate byte counting, L = 2 by default) and RFC 6582 (NewReno fast recovery) that
 * do not depend on the algorithm's growth function or its multiplicative decrease. An algorithm chooses *how
 * much* to back off (ssthresh) and *how fast* to grow in congestion avoidance; these functions apply the
 * choice the way the RFCs lay it down:
 *   brisk_cc_loss_ssthresh   RFC 5681 eq. (4), max(FlightSize / 2, 2 SMSS)
 *   brisk_cc_slow_start      RFC 5681 3.1 + RFC 3465 2.2 (byte counting with L = 2 SMSS per ACK, or Linux's
 *                            count of every whole segment acknowledged: the abc_limit field, from the
 *                            tcp_abc_limit setting), capped at ssthresh, handing the surplus to congestion
 *                            avoidance like Linux does (brisk_cc_ss_increase is the per-ACK credit)
 *   brisk_cc_cong_avoid      RFC 3465 2.1: one SMSS each time a window's worth of bytes has been acked
 *   brisk_cc_recovery_enter / _ack / _exit    RFC 5681 3.2 steps 3-4 and RFC 6582 3.2 steps 2-5
 *   brisk_cc_rto_collapse    RFC 5681 3.1: loss window of one SMSS, ssthresh held on repeated timeouts
 *   brisk_cc_idle_restart    RFC 5681 4.1 restart window (+ RFC 2861's remembered ssthresh)
 *   brisk_cc_idle_restart_halving   Linux's tcp_cwnd_restart: halved per RTO idle (RFC 2861 3's decay)
 * Every addition saturates: a window never wraps, whatever the caller feeds in.
 */
#include "tcp/cc.h"

#include <string.h>

static const struct brisk_cc_ops *const algorithms[] = {
    &brisk_cc_newreno,
    &brisk_cc_cubic, /* the order is the index of the tcp_congestion setting (settings.c) */
};

#define N_ALGORITHMS (sizeof(algorithms) / sizeof(algorithms[0]))

const struct brisk_cc_ops *brisk_cc_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (unsigned i = 0; i < N_ALGORITHMS; i++)
        if (strcmp(algorithms[i]->name, name) == 0)
            return algorithms[i];
    return NULL;
}

unsigned brisk_cc_count(void)
{
    return (unsigned)N_ALGORITHMS;
}

const struct brisk_cc_ops *brisk_cc_get(unsigned i)
{
    return i < N_ALGORITHMS ? algorithms[i] : NULL;
}

uint32_t brisk_cc_initial_window(uint32_t mss, uint32_t initial_cwnd_segs)
{
    uint64_t segs = initial_cwnd_segs ? initial_cwnd_segs : 1;
    return brisk_cc_add(0, segs * (mss ? mss : 1));
}

uint32_t brisk_cc_loss_ssthresh(uint32_t flight, uint32_t mss)
{
    uint64_t floor = 2 * (uint64_t)mss;
    uint64_t half = flight / 2;
    uint64_t v = half > floor ? half : floor;
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

uint32_t brisk_cc_ss_increase(struct brisk_cc_state *s, uint32_t acked)
{
    uint32_t mss = s->mss ? s->mss : 1;
    if (s->abc_limit) {
        /* RFC 3465 2.2: a stretch ACK must not release a burst of more than L segments. */
        uint64_t limit = (uint64_t)s->abc_limit * mss;
        return acked < limit ? acked : (uint32_t)limit;
    }
    /* Linux counts packets, and a packet only once it is acknowledged whole (its defence against ACK
     * division): in bytes, each whole segment's worth; a partial one waits for the rest of its bytes. */
    uint64_t bytes = (uint64_t)s->ss_credit + acked;
    uint64_t whole = bytes - bytes % mss;
    s->ss_credit = (uint32_t)(bytes - whole);
    return whole > UINT32_MAX ? UINT32_MAX - (UINT32_MAX % mss) : (uint32_t)whole;
}

uint32_t brisk_cc_slow_start(struct brisk_cc_state *s, uint32_t acked)
{
    uint32_t credit = s->ss_credit;
    uint32_t inc = brisk_cc_ss_increase(s, acked);
    uint32_t room = s->cwnd < s->ssthresh ? s->ssthresh - s->cwnd : 0;

    if (inc < room) {
        s->cwnd += inc;
        return 0;
    }
    /* Slow start ends at ssthresh (RFC 5681 3.1 allows either phase at equality; stopping avoids an overshoot
     * of up to L MSS per ACK); the bytes beyond what reached it count toward congestion avoidance, which
     * counts bytes, so a partial segment's credit goes with them. */
    s->cwnd = s->ssthresh;
    s->ss_credit = 0;
    uint64_t left = (s->abc_limit ? 0 : (uint64_t)credit) + acked - room;
    return left > UINT32_MAX ? UINT32_MAX : (uint32_t)left;
}

void brisk_cc_cong_avoid(struct brisk_cc_state *s, uint32_t w, uint32_t acked)
{
    if (w == 0)
        w = 1;
    s->bytes_acked_ca += acked;
    if (s->bytes_acked_ca >= w) {
        /* Usually one step; a stretch ACK (GRO, ACK thinning) can owe more, and the division pays them all at
         * the window the debt was counted against. */
        uint64_t steps = s->bytes_acked_ca / w;
        s->bytes_acked_ca -= steps * w;
        s->cwnd = brisk_cc_add(s->cwnd, steps * s->mss);
    }
}

void brisk_cc_recovery_enter(struct brisk_cc_state *s, uint32_t ssthresh, uint32_t snd_nxt)
{
    s->ssthresh = ssthresh;
    /* The three duplicate ACKs mean three segments have left the network: inflate by them (RFC 5681 3.2). */
    s->cwnd = brisk_cc_add(ssthresh, 3 * (uint64_t)s->mss);
    s->recover = snd_nxt;
    s->in_recovery = 1;
    s->in_loss = 0;
    s->bytes_acked_ca = 0;
}

void brisk_cc_recovery_ack(struct brisk_cc_state *s, uint32_t acked, int dupack)
{
    if (dupack) {
        s->cwnd = brisk_cc_add(s->cwnd, s->mss); /* one more segment has left the network */
        return;
    }
    /* Partial ACK: the bytes it covers left the network but free no new room beyond what the inflation
     * already granted, so deflate by them; adding one SMSS back keeps about ssthresh in flight once the
     * retransmission of the next hole is counted (RFC 6582 3.2 step 5). */
    uint32_t cwnd = s->cwnd > acked ? s->cwnd - acked : 0;
    if (acked >= s->mss)
        cwnd = brisk_cc_add(cwnd, s->mss);
    s->cwnd = cwnd > s->mss ? cwnd : s->mss;
}

void brisk_cc_recovery_exit(struct brisk_cc_state *s, uint32_t flight)
{
    uint32_t base = flight > s->mss ? flight : s->mss;
    uint32_t cwnd = brisk_cc_add(base, s->mss);
    if (cwnd > s->ssthresh)
        cwnd = s->ssthresh;
    s->cwnd = cwnd > s->mss ? cwnd : s->mss;
    s->in_recovery = 0;
    s->bytes_acked_ca = 0;
}

void brisk_cc_rto_collapse(struct brisk_cc_state *s, uint32_t ssthresh)
{
    if (!s->in_loss)
        s->ssthresh = ssthresh;
    s->cwnd = s->mss; /* RFC 5681 3.1: the loss window, LW = 1 SMSS */
    s->in_loss = 1;
    s->in_recovery = 0;
    s->bytes_acked_ca = 0;
}

void brisk_cc_idle_restart(struct brisk_cc_state *s, uint32_t initial_cwnd_segs)
{
    uint32_t iw = brisk_cc_initial_window(s->mss, initial_cwnd_segs);
    if (s->cwnd > iw) {
        uint32_t three_quarters = s->cwnd - s->cwnd / 4; /* remember the operating point (RFC 2861 3) */
        if (s->ssthresh < three_quarters)
            s->ssthresh = three_quarters;
        s->cwnd = iw;
    }
    s->bytes_acked_ca = 0;
}

void brisk_cc_idle_restart_halving(struct brisk_cc_state *s, uint32_t initial_cwnd_segs, uint32_t halvings)
{
    uint32_t mss = s->mss ? s->mss : 1;
    uint32_t w = s->cwnd / mss; /* Linux's window is whole packets */
    if (!s->in_recovery) {
        uint64_t three_quarters = (uint64_t)((w >> 1) + (w >> 2)) * mss;
        if (s->ssthresh < three_quarters)
            s->ssthresh = (uint32_t)three_quarters;
    }
    uint32_t iw = initial_cwnd_segs ? initial_cwnd_segs : 1;
    uint32_t restart = iw < w ? iw : w;
    while (halvings-- > 0 && w > restart)
        w >>= 1;
    if (w < restart)
        w = restart;
    s->cwnd = brisk_cc_add(0, (uint64_t)(w ? w : 1) * mss);
}

void brisk_cc_op_recovery_ack(struct brisk_cc_state *s, uint32_t acked, int dupack, uint32_t flight,
                              uint64_t now)
{
    (void)flight;
    (void)now;
    if (s->in_recovery)
        brisk_cc_recovery_ack(s, acked, dupack);
}

void brisk_cc_op_exit_recovery(struct brisk_cc_state *s, uint32_t flight, uint64_t now)
{
    (void)now;
    if (s->in_recovery)
        brisk_cc_recovery_exit(s, flight);
}
