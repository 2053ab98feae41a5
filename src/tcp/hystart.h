/*
 * hystart.h — HyStart++ (RFC 9406): leaving slow start on a rising round-trip time instead of a loss.
 *
 * A congestion-control algorithm embeds a struct brisk_hystart in its private state, calls
 * brisk_hystart_on_ack() for every ACK of the initial slow start, and grows the window as the returned phase
 * says: standard slow start, Conservative Slow Start (growth divided by BRISK_HYSTART_CSS_GROWTH_DIVISOR), or
 * "done" — set ssthresh = cwnd and continue in congestion avoidance. See hystart.c for the algorithm.
 *
 * Linux's CUBIC (cc_cubic_linux.c, the linux-* profiles) has the older HyStart instead, struct
 * brisk_hystart_linux below: no conservative phase, slow start simply ends (ssthresh = cwnd) on a delay
 * increase or a long ACK train.
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

/* Linux's HyStart (tcp_cubic.c with hystart_detect = 3: ACK train and delay), all times µs. */
#define BRISK_HYSTART_LINUX_LOW_WINDOW   16u   /* hystart_low_window: no detection below 16 packets */
#define BRISK_HYSTART_LINUX_ACK_DELTA_US 2000u /* hystart_ack_delta_us: ACKs this close form a train */
#define BRISK_HYSTART_LINUX_MIN_SAMPLES  8u    /* HYSTART_MIN_SAMPLES: the round's minimum of 8 samples */
#define BRISK_HYSTART_LINUX_DELAY_MIN_US 4000u /* the delay threshold, delay_min / 8 clamped to 4..16 ms */
#define BRISK_HYSTART_LINUX_DELAY_MAX_US 16000u

struct brisk_hystart_linux {
    uint32_t acked;       /* cumulative bytes acknowledged: the position `end` is in */
    uint32_t end;         /* the round ends once `acked` passes this (Linux's end_seq, the round's SND.NXT) */
    uint32_t round_start; /* µs (wrapping): when the round began */
    uint32_t last_ack;    /* µs: the last ACK of the current train */
    uint32_t curr_rtt;    /* µs: the round's minimum RTT so far, UINT32_MAX = none */
    uint8_t sample_cnt;   /* samples in curr_rtt, up to MIN_SAMPLES */
    uint8_t found;        /* slow start's exit was found: HyStart does nothing more until reset */
};

/* Starts a round now: it ends once the `outstanding` bytes (up to SND.NXT) are acknowledged. Also clears
 * `found` when `all` (Linux's reset after an RTO: HyStart applies to the slow start that follows). */
void brisk_hystart_linux_reset(struct brisk_hystart_linux *h, uint32_t outstanding, uint32_t now_us, int all);

/* One ACK in slow start with an RTT sample `rtt_us` (the ACK's `acked` bytes already added to h->acked).
 * cwnd in packets, delay_min = the connection's minimum RTT including this sample, ack_delay = Linux's
 * hystart_ack_delay allowance, outstanding as for reset. Returns 1 when slow start should end here: the
 * caller sets ssthresh = cwnd. */
int brisk_hystart_linux_update(struct brisk_hystart_linux *h, uint32_t cwnd, uint32_t rtt_us,
                               uint32_t delay_min, uint32_t ack_delay, uint32_t outstanding, uint32_t now_us);

#endif
