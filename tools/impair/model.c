/*
 * model.c — the path model of brisk-impair: loss, burst loss, delay, reordering, duplication and a rate limit,
 * decided per packet, in packet order, from one seeded random stream.
 *
 * A packet meets the mechanisms in the order a real path would apply them: it is lost or not (independent
 * loss, a Gilbert-Elliott channel, or the rest of a burst), then it waits for the bottleneck (a token bucket
 * with a bounded queue, which drops what does not fit), then it crosses the link (a fixed delay; a fraction
 * of packets is held back longer, which reorders them behind the packets that follow: reordering by time
 * displacement, as a path with parallel lanes or a retransmitting link layer does), and a fraction is
 * duplicated.
 *
 * Determinism: impair_model_decide draws exactly five numbers per packet — loss, Gilbert-Elliott transition,
 * Gilbert-Elliott loss, duplication, reordering — whether or not a mechanism is on and whatever it decides,
 * so packet k meets the same draws in every run with the same seed, and switching one mechanism on does not
 * shift the others' decisions (brisk_rand_chance always consumes one draw). Only the rate limiter depends on
 * arrival times and lengths, as a real bottleneck does.
 *
 * The Gilbert-Elliott channel (Gilbert 1960, Elliott 1963): two states, good and bad, each with its own loss
 * probability; before each packet the channel moves good -> bad with probability p_gb and bad -> good with
 * p_bg, so bad periods last 1 / p_bg packets on average and the mean loss rate is
 * (p_bg * loss_good + p_gb * loss_bad) / (p_gb + p_bg). --burst N is the simpler model of a lost offloaded
 * frame: once a packet is lost (by either model), the next N - 1 go with it.
 *
 * The token bucket is kept as a virtual clock: rate_free_ns is when the link will have sent everything it
 * accepted. A full bucket of depth B lets that clock lag `now` by B / rate; each packet advances it by its
 * transmission time and leaves when the clock reaches the new value (at once while the bucket holds enough
 * tokens); the wait (clock - now, in bytes at the rate: the queue ahead of it and itself) is bounded by
 * rate_queue_bytes, and a packet that would exceed it is dropped, as a tail-drop queue drops.
 */
#include "impair/model.h"


void impair_model_init(struct impair_state *s, uint64_t seed)
{
    *s = (struct impair_state){0};
    brisk_rand_seed(&s->rng, seed);
}

static int prob_ok(double p) { return p >= 0.0 && p <= 1.0; } /* false for NaN */

const char *impair_model_check(const struct impair_params *p)
{
    if (!prob_ok(p->loss))
        return "--loss must be a probability in [0, 1]";
    if (p->gilbert && (!prob_ok(p->ge_p_gb) || !prob_ok(p->ge_p_bg) || !prob_ok(p->ge_loss_good) ||
                       !prob_ok(p->ge_loss_bad)))
        return "--gilbert takes four probabilities in [0, 1]: p_gb,p_bg,loss_good,loss_bad";
    if (!prob_ok(p->reorder))
        return "--reorder must be a probability in [0, 1]";
    if (p->reorder > 0 && p->reorder_delay_ns == 0)
        return "--reorder needs --reorder-delay > 0 (how far packets are held back)";
    if (!prob_ok(p->duplicate))
        return "--duplicate must be a probability in [0, 1]";
    if (p->burst > 1 && p->loss == 0 && !p->gilbert)
        return "--burst needs --loss or --gilbert (what starts a burst)";
    if (p->rate_bps && p->rate_bps < 1000)
        return "--rate must be at least 1k (bit/s)";
    if (p->rate_bps && p->rate_queue_bytes == 0)
        return "--rate needs a queue (--rate-queue > 0)";
    return NULL;
}

/* Nanoseconds to send `bytes` at `bps`, split so that bits * 1e9 cannot overflow. */
static uint64_t tx_ns(uint64_t bytes, uint64_t bps)
{
    uint64_t bits = bytes * 8;
    return bits / bps * UINT64_C(1000000000) + bits % bps * UINT64_C(1000000000) / bps;
}

struct impair_verdict impair_model_decide(struct impair_state *s, const struct impair_params *p, uint32_t len,
                                          uint64_t now_ns)
{
    struct impair_verdict v = {0};
    int d_loss = brisk_rand_chance(&s->rng, p->loss);
    double d_trans = brisk_rand_double(&s->rng);
    double d_ge = brisk_rand_double(&s->rng);
    int d_dup = brisk_rand_chance(&s->rng, p->duplicate);
    int d_reorder = brisk_rand_chance(&s->rng, p->reorder);
    s->stats.seen++;

    /* The channel moves before every packet, burst or not, so its state is a function of the packet index. */
    int ge_loss = 0;
    if (p->gilbert) {
        if (s->ge_bad ? d_trans < p->ge_p_bg : d_trans < p->ge_p_gb)
            s->ge_bad = !s->ge_bad;
        if (s->ge_bad)
            s->stats.gilbert_bad_packets++;
        ge_loss = d_ge < (s->ge_bad ? p->ge_loss_bad : p->ge_loss_good);
    }
    if (s->burst_left) {
        s->burst_left--;
        v.drop = IMPAIR_CAUSE_BURST;
    } else if (d_loss || ge_loss) {
        v.drop = d_loss ? IMPAIR_CAUSE_LOSS : IMPAIR_CAUSE_GILBERT;
        if (p->burst > 1)
            s->burst_left = p->burst - 1;
    }

    uint64_t hold = 0;
    if (!v.drop && p->rate_bps) {
        /* Signed: at the start of the clock a full bucket lies before time 0. */
        int64_t full = (int64_t)now_ns - (int64_t)tx_ns(p->rate_burst_bytes, p->rate_bps); /* a full bucket */
        if (!s->rate_started || s->rate_free_ns < full) {
            s->rate_free_ns = full;
            s->rate_started = 1;
        }
        int64_t done = s->rate_free_ns + (int64_t)tx_ns(len, p->rate_bps); /* when its last bit has left */
        uint64_t wait_ns = done > (int64_t)now_ns ? (uint64_t)(done - (int64_t)now_ns) : 0;
        if (wait_ns > tx_ns(p->rate_queue_bytes, p->rate_bps)) {
            v.drop = IMPAIR_CAUSE_RATE; /* tail drop: the clock stays where the queue ends */
        } else {
            s->rate_free_ns = done;
            if (wait_ns) {
                hold = wait_ns;
                s->stats.rate_queued++;
            }
        }
    }
    if (v.drop) {
        s->stats.dropped[v.drop]++;
        return v;
    }

    hold += p->delay_ns;
    if (d_reorder) {
        hold += p->reorder_delay_ns;
        v.reordered = 1;
        s->stats.reordered++;
    }
    v.hold_ns = hold;
    if (hold)
        s->stats.delayed++;
    if (d_dup) {
        v.duplicate = 1;
        s->stats.duplicated++;
    }
    s->stats.passed++;
    return v;
}

const char *impair_cause_name(enum impair_cause c)
{
    switch (c) {
    case IMPAIR_CAUSE_LOSS:
        return "loss";
    case IMPAIR_CAUSE_GILBERT:
        return "gilbert";
    case IMPAIR_CAUSE_BURST:
        return "burst";
    case IMPAIR_CAUSE_RATE:
        return "rate";
    default:
        return "none";
    }
}
