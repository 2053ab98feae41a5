/*
 * interval.h — iperf3's interval reports: every -i of a running test, each stream's bytes, retransmissions
 * and TCP state (or UDP datagrams, loss and jitter), kept for the JSON's intervals[] and printed live as
 * iperf3's interval lines.
 */
#ifndef BRISK_PERF_INTERVAL_H
#define BRISK_PERF_INTERVAL_H

#include "perf/perf.h"
#include "perf/stream.h"

#include <stddef.h>

struct perf_intervals {
    struct perf_interval *iv;
    struct perf_interval_stream *st;
    uint32_t n, cap, nstreams;
    size_t st_cap;      /* records st holds */
    uint64_t period_ns; /* 0: off */
    uint64_t origin_ns; /* the test's start */
    uint64_t next_at;   /* the next boundary (BRISK_TIME_NONE when off or finished) */
    uint64_t last_ns;   /* where the open interval began */
    int running, truncated;
    uint64_t last_bytes[PERF_MAX_STREAMS], last_retr[PERF_MAX_STREAMS];
    uint64_t last_packets[PERF_MAX_STREAMS], last_lost[PERF_MAX_STREAMS]; /* UDP */
};

/* Starts a test's intervals at `now` (forgetting the previous test's; the arrays are kept for reuse). */
void perf_intervals_start(struct perf_intervals *v, uint64_t period_ns, uint32_t nstreams, uint64_t now);
/* The next boundary, BRISK_TIME_NONE when not running. */
uint64_t perf_intervals_deadline(const struct perf_intervals *v);
/* Closes the open interval at `now` if a boundary has passed. */
void perf_intervals_tick(struct perf_intervals *v, const struct perf_stream *streams, uint64_t now);
/* Closes the last (partial) interval at `now` and stops: the counts are final. */
void perf_intervals_finish(struct perf_intervals *v, const struct perf_stream *streams, uint64_t now);
void perf_intervals_view(const struct perf_intervals *v, struct perf_intervals_view *out);
void perf_intervals_free(struct perf_intervals *v);

#endif
