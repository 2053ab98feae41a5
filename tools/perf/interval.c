/*
 * interval.c — iperf3's interval reports, measured in the engine.
 *
 * iperf3 runs a timer every -i seconds from the test's start and, for each stream, reports the bytes moved
 * since the previous report and, on a sending stream, the retransmissions in between and the TCP state at the
 * report (tcp_info's snd_cwnd, snd_wnd, rtt, rttvar, pmtu). Over UDP a sending stream reports the datagrams
 * it sent, a receiving one how far the packet numbers advanced, the datagrams counted lost in between and the
 * jitter as it stands at the report. A last partial interval closes when the test ends, so the intervals tile
 * the test and their bytes add up to the stream's total.
 *
 * Here the boundaries are origin + k * period (so late ticks do not drift the grid), the engines close an
 * interval from their tick when its boundary has passed, and they close the last one when their counters
 * freeze (perf_intervals_finish). Each interval stores one record per stream in arrays that grow by doubling:
 * memory is allocated once per many intervals, never per packet. If memory runs out the later intervals are
 * dropped and `truncated` says so; the test itself goes on.
 */
#include "perf/interval.h"

#include <stdlib.h>
#include <string.h>

void perf_intervals_start(struct perf_intervals *v, uint64_t period_ns, uint32_t nstreams, uint64_t now)
{
    v->n = 0;
    v->nstreams = nstreams;
    v->period_ns = period_ns;
    v->origin_ns = v->last_ns = now;
    v->running = 1;
    v->truncated = 0;
    v->next_at = period_ns ? now + period_ns : BRISK_TIME_NONE;
    memset(v->last_bytes, 0, sizeof(v->last_bytes));
    memset(v->last_retr, 0, sizeof(v->last_retr));
    memset(v->last_packets, 0, sizeof(v->last_packets));
    memset(v->last_lost, 0, sizeof(v->last_lost));
}

uint64_t perf_intervals_deadline(const struct perf_intervals *v)
{
    return v->running ? v->next_at : BRISK_TIME_NONE;
}

static int grow(struct perf_intervals *v)
{
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 16;
        struct perf_interval *iv = realloc(v->iv, (size_t)cap * sizeof(*iv));
        if (!iv)
            return 0;
        v->iv = iv;
        v->cap = cap;
    }
    size_t need = ((size_t)v->n + 1) * v->nstreams;
    if (need > v->st_cap) {
        size_t cap = v->st_cap * 2 > need ? v->st_cap * 2 : need * 16;
        struct perf_interval_stream *st = realloc(v->st, cap * sizeof(*st));
        if (!st)
            return 0;
        v->st = st;
        v->st_cap = cap;
    }
    return 1;
}

/* Closes [last_ns, now) as one interval. */
static void close_interval(struct perf_intervals *v, const struct perf_stream *streams, uint64_t now)
{
    if (v->truncated || !grow(v)) {
        v->truncated = 1;
        v->last_ns = now;
        return;
    }
    struct perf_interval *iv = &v->iv[v->n];
    iv->start_ns = v->last_ns - v->origin_ns;
    iv->end_ns = now - v->origin_ns;
    struct perf_interval_stream *out = &v->st[(size_t)v->n * v->nstreams];
    for (uint32_t i = 0; i < v->nstreams; i++) {
        const struct perf_stream *s = &streams[i];
        struct perf_interval_stream *o = &out[i];
        memset(o, 0, sizeof(*o));
        o->id = s->id;
        o->sender = s->sender;
        o->bytes = s->bytes - v->last_bytes[i];
        v->last_bytes[i] = s->bytes;
        if (s->udp) {
            /* iperf3's figures are deltas of the counters: packets sent, or the highest number seen. */
            uint64_t packets = s->sender ? s->packets : s->rx.packet_count;
            o->have_udp = 1;
            o->packets = packets - v->last_packets[i];
            o->lost = (int64_t)(s->rx.lost - v->last_lost[i]); /* a late datagram takes one back */
            o->jitter = s->rx.jitter;
            v->last_packets[i] = packets;
            v->last_lost[i] = s->rx.lost;
            continue;
        }
        struct brisk_conn_info info;
        const struct brisk_conn_info *in = NULL;
        if (s->s && brisk_conn_info(s->s, &info) == BRISK_OK)
            in = &info;
        else if (s->info_ok)
            in = &s->info;
        if (s->sender && in) {
            o->have_tcp = 1;
            o->retransmits = in->retransmits - v->last_retr[i];
            v->last_retr[i] = in->retransmits;
            o->snd_cwnd = in->cwnd;
            o->snd_wnd = in->snd_wnd;
            o->rtt_us = (uint32_t)(in->srtt_ns / 1000);
            o->rttvar_us = (uint32_t)(in->rttvar_ns / 1000);
            o->pmtu = in->mss ? in->mss + 40 : 0;
        }
    }
    v->n++;
    v->last_ns = now;
}

void perf_intervals_tick(struct perf_intervals *v, const struct perf_stream *streams, uint64_t now)
{
    if (!v->running || v->next_at == BRISK_TIME_NONE || now < v->next_at)
        return;
    close_interval(v, streams, now);
    while (v->next_at <= now) /* a tick later than a whole period skips the missed boundaries */
        v->next_at += v->period_ns;
}

void perf_intervals_finish(struct perf_intervals *v, const struct perf_stream *streams, uint64_t now)
{
    if (!v->running)
        return;
    int moved = 0;
    for (uint32_t i = 0; i < v->nstreams; i++)
        moved |= streams[i].bytes != v->last_bytes[i];
    /* iperf3 prints the last partial interval too; an empty zero-length one adds nothing. */
    if (v->period_ns && (now > v->last_ns || moved))
        close_interval(v, streams, now);
    v->running = 0;
}

void perf_intervals_view(const struct perf_intervals *v, struct perf_intervals_view *out)
{
    out->iv = v->iv;
    out->st = v->st;
    out->n = v->n;
    out->nstreams = v->nstreams;
    out->truncated = v->truncated;
}

void perf_intervals_free(struct perf_intervals *v)
{
    free(v->iv);
    free(v->st);
    v->iv = NULL;
    v->st = NULL;
    v->n = v->cap = 0;
    v->st_cap = 0;
}

void perf_cpu_util_between(const struct perf_cpu_sample *a, const struct perf_cpu_sample *b,
                           struct perf_cpu_util *out)
{
    memset(out, 0, sizeof(*out));
    if (b->mono_ns <= a->mono_ns)
        return;
    double wall = (double)(b->mono_ns - a->mono_ns);
    double user = b->user_ns >= a->user_ns ? (double)(b->user_ns - a->user_ns) : 0;
    double sys = b->system_ns >= a->system_ns ? (double)(b->system_ns - a->system_ns) : 0;
    out->user = user * 100.0 / wall;
    out->system = sys * 100.0 / wall;
    out->total = out->user + out->system;
}
