/*
 * hystart.c — HyStart++ (RFC 9406): a slow start that stops doubling when the path's queue starts to fill.
 *
 * Standard slow start doubles cwnd every round trip until a loss, so it ends by overshooting the path's
 * capacity by up to a whole window: a burst of losses, often an RTO. HyStart++ watches the minimum RTT of
 * each round instead. Queueing delay shows up as a rising minimum well before the queue overflows:
 *
 *   rounds        a round begins when an ACK passes windowEnd, the SND.NXT at the start of the previous one
 *                 (RFC 9406 4.2), so each round's samples are those of the data the previous round sent.
 *                 brisk measures it in cumulative acknowledged bytes: windowEnd = bytes acked so far + bytes
 *                 outstanding up to SND.NXT, which is the same point in the sequence space and needs nothing
 *                 from the connection beyond the ACK's size and the flight.
 *   slow start    each round keeps currentRoundMinRTT; once N_RTT_SAMPLE (8) samples are in and the previous
 *                 round had one too, an increase of at least RttThresh = clamp(lastRoundMinRTT / 8, 4 ms,
 *                 16 ms) moves to Conservative Slow Start, remembering cssBaselineMinRtt.
 *   CSS           growth is a quarter of slow start's (CSS_GROWTH_DIVISOR). If the RTT falls back below the
 *                 baseline (after 8 samples of a round) the increase was a transient: back to slow start.
 *                 After CSS_ROUNDS (5) rounds in CSS, slow start is over: the caller sets ssthresh = cwnd and
 *                 continues in congestion avoidance.
 *   loss          ends HyStart++ for good (brisk_hystart_stop): RFC 9406 recommends it for the initial slow
 *                 start only; later slow starts end at the ssthresh the loss set.
 * The thresholds cap the reaction at 4..16 ms of added delay, so on a 100 µs data-centre path only real
 * queueing (milliseconds) ends slow start early; a flat RTT never does.
 *
 * The window arithmetic stays with the caller (slow start with RFC 3465 byte counting in cc.c, divided by
 * CSS_GROWTH_DIVISOR in CSS); this file only decides the phase. Nothing allocates; all times are ns.
 *
 * Linux's HyStart (brisk_hystart_linux_*, for cc_cubic_linux.c): the original of Ha and Rhee, which Linux
 * 6.x's CUBIC still runs (hystart_detect = 3) — it has no Conservative Slow Start, and it leaves slow start
 * for good (ssthresh = cwnd) on either of two signals, once cwnd is at least 16 packets:
 *   delay         the minimum of the round's first samples (the check starts with the ninth) exceeds the
 *                 connection's minimum RTT (delay_min, over its whole life, not the last round's) by
 *                 delay_min / 8 clamped to 4..16 ms;
 *   ACK train     ACKs arriving at most 2 ms apart from the start of a round have kept coming for more than
 *                 half of delay_min (plus a small allowance for TSO/GRO aggregation): the window already
 *                 spans half the path's round trip of back-to-back packets, a full pipe at the next doubling.
 * Rounds start at the first sampled ACK past the previous round's SND.NXT, measured here as in HyStart++.
 */
#include "tcp/hystart.h"

#include <string.h>

void brisk_hystart_init(struct brisk_hystart *h)
{
    memset(h, 0, sizeof(*h));
    h->last_round_min_rtt = UINT64_MAX;
    h->current_round_min_rtt = UINT64_MAX;
    h->css_baseline_min_rtt = UINT64_MAX;
    h->phase = BRISK_HYSTART_SS;
}

void brisk_hystart_stop(struct brisk_hystart *h)
{
    h->phase = BRISK_HYSTART_DONE;
}

/* RFC 9406 4.2: RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH)). */
static uint64_t rtt_thresh(uint64_t last_round_min_rtt)
{
    uint64_t t = last_round_min_rtt / BRISK_HYSTART_MIN_RTT_DIVISOR;
    if (t > BRISK_HYSTART_MAX_RTT_THRESH)
        t = BRISK_HYSTART_MAX_RTT_THRESH;
    return t < BRISK_HYSTART_MIN_RTT_THRESH ? BRISK_HYSTART_MIN_RTT_THRESH : t;
}

enum brisk_hystart_phase brisk_hystart_on_ack(struct brisk_hystart *h, uint32_t acked, uint32_t outstanding,
                                              uint64_t rtt)
{
    if (h->phase == BRISK_HYSTART_DONE)
        return BRISK_HYSTART_DONE;
    h->acked += acked;
    if (h->acked > h->window_end) {
        /* A new round: this ACK is for data sent after the round began (the ACK reaching windowEnd exactly
         * covers the last byte sent before it, so it still belongs to the old round). What the last round
         * measured becomes the reference. */
        h->last_round_min_rtt = h->current_round_min_rtt;
        h->current_round_min_rtt = UINT64_MAX;
        h->rtt_sample_count = 0;
        h->window_end = h->acked + outstanding;
        h->rounds++;
        if (h->phase == BRISK_HYSTART_CSS && ++h->css_rounds >= BRISK_HYSTART_CSS_ROUNDS) {
            h->phase = BRISK_HYSTART_DONE; /* RFC 9406 4.2: CSS_ROUNDS rounds of CSS end slow start */
            return BRISK_HYSTART_DONE;
        }
    }
    if (rtt) {
        if (rtt < h->current_round_min_rtt)
            h->current_round_min_rtt = rtt;
        h->rtt_sample_count++;
    }
    if (h->rtt_sample_count < BRISK_HYSTART_N_RTT_SAMPLE || h->current_round_min_rtt == UINT64_MAX)
        return (enum brisk_hystart_phase)h->phase;
    if (h->phase == BRISK_HYSTART_SS) {
        if (h->last_round_min_rtt != UINT64_MAX &&
            h->current_round_min_rtt >= h->last_round_min_rtt + rtt_thresh(h->last_round_min_rtt)) {
            h->css_baseline_min_rtt = h->current_round_min_rtt;
            h->css_rounds = 0;
            h->phase = BRISK_HYSTART_CSS;
        }
    } else if (h->current_round_min_rtt < h->css_baseline_min_rtt) {
        /* The delay increase was not the queue building: the RTT fell below where CSS began. */
        h->css_baseline_min_rtt = UINT64_MAX;
        h->phase = BRISK_HYSTART_SS;
    }
    return (enum brisk_hystart_phase)h->phase;
}

void brisk_hystart_linux_reset(struct brisk_hystart_linux *h, uint32_t outstanding, uint32_t now_us, int all)
{
    h->round_start = h->last_ack = now_us;
    h->end = h->acked + outstanding;
    h->curr_rtt = UINT32_MAX;
    h->sample_cnt = 0;
    if (all)
        h->found = 0;
}

int brisk_hystart_linux_update(struct brisk_hystart_linux *h, uint32_t cwnd, uint32_t rtt_us,
                               uint32_t delay_min, uint32_t ack_delay, uint32_t outstanding, uint32_t now_us)
{
    if ((int32_t)(h->acked - h->end) > 0)
        brisk_hystart_linux_reset(h, outstanding, now_us, 0); /* this ACK is past the round: a new one */
    if (h->found || cwnd < BRISK_HYSTART_LINUX_LOW_WINDOW)
        return 0;
    if ((int32_t)(now_us - h->last_ack) <= (int32_t)BRISK_HYSTART_LINUX_ACK_DELTA_US) {
        /* Still a train. Half the path's delay: an unpaced sender's window leaves back to back, so its ACKs
         * spread over what the window adds to the queue; once that is half the RTT, the pipe is full. */
        h->last_ack = now_us;
        uint32_t threshold = (delay_min + ack_delay) >> 1;
        if ((int32_t)(now_us - h->round_start) > (int32_t)threshold) {
            h->found = 1;
            return 1;
        }
    }
    if (h->curr_rtt > rtt_us)
        h->curr_rtt = rtt_us;
    if (h->sample_cnt < BRISK_HYSTART_LINUX_MIN_SAMPLES) {
        h->sample_cnt++;
        return 0;
    }
    uint32_t thresh = delay_min >> 3;
    if (thresh < BRISK_HYSTART_LINUX_DELAY_MIN_US)
        thresh = BRISK_HYSTART_LINUX_DELAY_MIN_US;
    if (thresh > BRISK_HYSTART_LINUX_DELAY_MAX_US)
        thresh = BRISK_HYSTART_LINUX_DELAY_MAX_US;
    if ((uint64_t)h->curr_rtt > (uint64_t)delay_min + thresh) {
        h->found = 1;
        return 1;
    }
    return 0;
}
