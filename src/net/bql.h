/*
 * bql.h — byte queue limits: a dynamic byte limit on a device's transmit ring (bql.c has the essay).
 */
#ifndef BRISK_NET_BQL_H
#define BRISK_NET_BQL_H

#include <stdint.h>

struct brisk_bql {
    /* Free-running byte counters (64-bit: they never wrap in practice). */
    uint64_t queued;    /* bytes handed to the driver */
    uint64_t completed; /* bytes the driver reported done */
    uint32_t limit;     /* bytes that may be in progress before the queue stops */
    uint32_t last_obj;  /* size of the packet queued last */
    /* Completions of the current event, not yet judged: drivers report packet by packet, the limit adapts
     * once per completion event (all reports with the same `now`), like an interrupt's worth in Linux. */
    uint64_t batch;
    uint64_t batch_time;
    /* Snapshot taken at the previous completion event. */
    uint64_t prev_queued;   /* `queued` then */
    uint32_t prev_over;     /* how far past the limit the queue was then (0: it was not stopped) */
    uint32_t prev_last_obj; /* `last_obj` then */
    /* Shrinking: the smallest slack seen since slack_start; applied once hold_ns has passed. */
    uint32_t lowest_slack;
    uint64_t slack_start;
    /* Configuration. */
    uint32_t limit_min, limit_max;
    uint64_t hold_ns;
    /* Statistics. */
    uint64_t grows, shrinks;
};

/* A limit starting at limit_min. min > max is clamped to max. */
void brisk_bql_init(struct brisk_bql *b, uint32_t limit_min, uint32_t limit_max, uint64_t hold_ns,
                    uint64_t now);

/* Bytes that may still be queued before the limit (negative when over it: the queue is stopped). */
int64_t brisk_bql_avail(const struct brisk_bql *b);

/* `bytes` were handed to the driver. Returns nonzero when the queue is now over its limit (stop it). */
int brisk_bql_sent(struct brisk_bql *b, uint32_t bytes);

/* The driver completed a packet of `bytes` at `now`. Reports with the same `now` form one completion event;
 * the limit adapts when the event is over (the next report at another time, or the next brisk_bql_sent). */
void brisk_bql_done(struct brisk_bql *b, uint32_t bytes, uint64_t now);

/* Judges the pending completion event now (tests; the two calls above do it themselves). */
void brisk_bql_flush(struct brisk_bql *b);

#endif
