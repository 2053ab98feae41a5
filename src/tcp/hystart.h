/*
 * hystart.h — HyStart++ (RFC 9406): leaving slow start on a rising round-trip time instead of a loss.
 *
 * A congestion-control algorithm embeds a struct brisk_hystart in its private state, calls
 * brisk_hystart_on_ack() for every ACK of the initial slow start, and grows the window as the returned phase
 * says: standard slow start, Conservative Slow Start (growth divided by BRISK_HYSTART_CSS_GROWTH_DIVISOR), or
 * "done" — set ssthresh = cwnd and continue in congestion avoidance. See hystart.c for the algorithm.
 */
#ifndef BRISK_TCP_HYSTART_H
#define BRISK_TCP_HYSTART_H

#include <stdint.h>

/* RFC 9406 section 4.3 constants (all times ns). */
#define BRISK_HYSTART_MIN_RTT_THRESH     4000000ull  /* 4 ms */
#define BRISK_HYSTART_MAX_RTT_THRESH     16000000ull /* 16 ms */
#define BRISK_HYSTART_MIN_RTT_DIVISOR    8u
#define BRISK_HYSTART_N_RTT_SAMPLE       8u
#define BRISK_HYSTART_CSS_GROWTH_DIVISOR 4u
#define BRISK_HYSTART_CSS_ROUNDS         5u

enum brisk_hystart_phase {
    BRISK_HYSTART_SS,   /* standard slow start, watching the per-round minimum RTT */
    BRISK_HYSTART_CSS,  /* Conservative Slow Start: the RTT rose; growth / CSS_GROWTH_DIVISOR */
    BRISK_HYSTART_DONE, /* left slow start (CSS_ROUNDS of CSS, a loss, or never used again): no effect */
};

struct brisk_hystart {
    uint64_t acked;                 /* cumulative bytes acknowledged: the position rounds are measured in */
    uint64_t window_end;            /* a new round begins when `acked` passes this (RFC 9406 windowEnd) */
    uint64_t last_round_min_rtt;    /* ns, UINT64_MAX = none (infinity) */
    uint64_t current_round_min_rtt; /* ns, UINT64_MAX = none */
    uint64_t css_baseline_min_rtt;  /* ns: currentRoundMinRTT when CSS began */
    uint32_t rtt_sample_count;      /* RTT samples in the current round */
    uint32_t css_rounds;            /* rounds started in CSS */
    uint32_t phase;                 /* enum brisk_hystart_phase */
    uint32_t rounds;                /* rounds started since init (for tests and info) */
};

/* Starts in slow start with no round yet: the first ACK begins round one. */
void brisk_hystart_init(struct brisk_hystart *h);

/* One ACK of `acked` new bytes while cwnd < ssthresh. `outstanding` = bytes still unacknowledged after this
 * ACK up to SND.NXT (the round marker: snd_nxt - snd_una), rtt = the ACK's RTT sample in ns or 0 for none.
 * Returns the phase to grow the window by: SS, CSS, or DONE (the caller sets ssthresh = cwnd). */
enum brisk_hystart_phase brisk_hystart_on_ack(struct brisk_hystart *h, uint32_t acked, uint32_t outstanding,
                                              uint64_t rtt);

/* A loss or an RTO: HyStart++ is for the initial slow start only (RFC 9406 4.2 / 4.3), later slow starts are
 * standard and end at the ssthresh the loss set. */
void brisk_hystart_stop(struct brisk_hystart *h);

/* The CSS share of a slow-start increase (RFC 9406 4.2): inc / CSS_GROWTH_DIVISOR. */
static inline uint32_t brisk_hystart_css_increase(uint32_t inc)
{
    return inc / BRISK_HYSTART_CSS_GROWTH_DIVISOR;
}

#endif
