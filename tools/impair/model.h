/*
 * model.h — brisk-impair's impairment decisions: what a path does to one packet (drop it, and why; pass it
 * now or hold it for a while; send a copy), as a pure function of the model's state, its seeded random
 * stream, the packet's length and the time it arrived. No I/O: main.c feeds it packets from an NFQUEUE and
 * carries out its verdicts, and tests/unit/test_impair_model.c drives it directly.
 */
#ifndef BRISK_TOOLS_IMPAIR_MODEL_H
#define BRISK_TOOLS_IMPAIR_MODEL_H

#include <stdint.h>

#include "core/rand.h"

/* What the path does; every field 0 means a perfect path (every packet passes at once). */
struct impair_params {
    double loss;                /* --loss: independent loss probability per packet */
    int gilbert;                /* --gilbert given: the Gilbert-Elliott two-state channel below is on */
    double ge_p_gb, ge_p_bg;    /* per packet: good -> bad, bad -> good transition probabilities */
    double ge_loss_good;        /* loss probability in the good state */
    double ge_loss_bad;         /* loss probability in the bad state */
    uint32_t burst;             /* --burst N: a loss (random or Gilbert-Elliott) takes N packets in a row */
    uint64_t delay_ns;          /* --delay: every packet that passes is held this long */
    double reorder;             /* --reorder: probability that a packet is held back further ... */
    uint64_t reorder_delay_ns;  /* ... by this long (--reorder-delay), while the others pass */
    double duplicate;           /* --duplicate: probability that a copy is sent as well */
    uint64_t rate_bps;          /* --rate: token bucket rate in bit/s (0: no limit) */
    uint64_t rate_burst_bytes;  /* --rate-burst: bucket depth (a burst passes at once up to this) */
    uint64_t rate_queue_bytes;  /* --rate-queue: bytes that may wait for tokens; beyond it, dropped */
};

/* Why a packet was dropped. */
enum impair_cause {
    IMPAIR_CAUSE_NONE = 0,
    IMPAIR_CAUSE_LOSS,    /* --loss */
    IMPAIR_CAUSE_GILBERT, /* Gilbert-Elliott state loss */
    IMPAIR_CAUSE_BURST,   /* the rest of a --burst */
    IMPAIR_CAUSE_RATE,    /* the rate limiter's queue was full */
    IMPAIR_CAUSE_COUNT
};

struct impair_stats {
    uint64_t seen;                         /* packets decided */
    uint64_t passed;                       /* not dropped (at once or after a hold) */
    uint64_t dropped[IMPAIR_CAUSE_COUNT];  /* by cause; [IMPAIR_CAUSE_NONE] unused */
    uint64_t delayed;                      /* passed with a hold > 0 (delay, reordering or rate queue) */
    uint64_t reordered;                    /* held back by --reorder-delay */
    uint64_t rate_queued;                  /* waited for the token bucket */
    uint64_t duplicated;                   /* a copy was asked for */
    uint64_t gilbert_bad_packets;          /* packets that found the channel in its bad state */
};

struct impair_state {
    struct brisk_rand rng;
    int ge_bad;              /* Gilbert-Elliott: in the bad state */
    uint32_t burst_left;     /* packets still to drop in the current --burst */
    int rate_started;        /* rate_free_ns is meaningful */
    int64_t rate_free_ns;    /* when the rate limiter has sent every packet it accepted (virtual clock) */
    struct impair_stats stats;
};

struct impair_verdict {
    enum impair_cause drop;  /* IMPAIR_CAUSE_NONE: the packet passes */
    uint64_t hold_ns;        /* passes after this long (0: at once) */
    int duplicate;           /* also send a copy now */
    int reordered;           /* hold_ns includes the reordering displacement */
};

/* Seeds the random stream; the same seed and the same packets (lengths, arrival times) give the same
 * verdicts. */
void impair_model_init(struct impair_state *s, uint64_t seed);

/* Checks a parameter set; NULL when usable, else a message naming what is wrong. */
const char *impair_model_check(const struct impair_params *p);

/* Decides one packet of `len` bytes arriving at `now_ns` (a monotonic clock below 2^62, non-decreasing). Every call
 * draws exactly five random numbers whatever the parameters, so packet k meets the same loss, burst,
 * duplication and reordering draws in every run with the same seed. Updates s->stats. */
struct impair_verdict impair_model_decide(struct impair_state *s, const struct impair_params *p, uint32_t len,
                                          uint64_t now_ns);

const char *impair_cause_name(enum impair_cause c);

#endif
