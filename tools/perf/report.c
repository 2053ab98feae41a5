/*
 * report.c — brisk-perf's output: a table like iperf3's summary, or JSON (--json) laid out like iperf3's
 * own --json so the same scripts read both: end.sum_sent and end.sum_received with bytes, seconds and
 * bits_per_second, end.streams[] with a sender and a receiver object each.
 *
 * Which side measured what: the sender's bytes are what its socket accepted, the receiver's what it read. A
 * report combines the local figures with the peer's from the results exchange, so both sides print both rows.
 */
#include <inttypes.h>
#include <jansson.h>
#include <string.h>

#include "common/fmt.h"
#include "perf/perf.h"

struct side {
    uint64_t bytes;
    double seconds;
    int64_t retransmits; /* -1 unknown */
};

/* Sender and receiver figures of one stream (or of the sum when s is NULL). */
static void sides(const struct perf_report *r, const struct perf_stream_report *s, struct side *snd,
                  struct side *rcv)
{
    double local = (double)r->duration_ns / 1e9;
    if (s) {
        const int local_sends = s->sender;
        double remote = s->remote_seconds > 0 ? s->remote_seconds : local;
        struct side l = {s->bytes, local, local_sends ? (int64_t)s->retransmits : -1};
        struct side p = {s->remote_bytes, remote, local_sends ? -1 : s->remote_retrans};
        *snd = local_sends ? l : p;
        *rcv = local_sends ? p : l;
        return;
    }
    memset(snd, 0, sizeof(*snd));
    memset(rcv, 0, sizeof(*rcv));
    snd->retransmits = rcv->retransmits = -1;
    for (uint32_t i = 0; i < r->nstreams; i++) {
        struct side a, b;
        sides(r, &r->streams[i], &a, &b);
        snd->bytes += a.bytes;
        rcv->bytes += b.bytes;
        if (a.seconds > snd->seconds)
            snd->seconds = a.seconds;
        if (b.seconds > rcv->seconds)
            rcv->seconds = b.seconds;
        if (a.retransmits >= 0)
            snd->retransmits = (snd->retransmits < 0 ? 0 : snd->retransmits) + a.retransmits;
    }
}

static double bps(const struct side *s)
{
    return s->seconds > 0 ? (double)s->bytes * 8.0 / s->seconds : 0;
}

static void print_row(FILE *f, const char *id, const struct side *s, const char *what)
{
    char size[FMT_LEN], rate[FMT_LEN], retr[24] = "";
    if (s->retransmits >= 0)
        snprintf(retr, sizeof(retr), "%" PRId64, s->retransmits);
    fprintf(f, "[%4s]  0.00-%-6.2f sec  %12s  %16s  %6s  %s\n", id, s->seconds, fmt_size(size, s->bytes),
            fmt_rate(rate, bps(s)), retr, what);
}

void perf_report_print(FILE *f, const struct perf_report *r)
{
    fprintf(f, "brisk-perf %s: %u stream%s, %s, %s\n", r->role == 'c' ? "client" : "server", r->nstreams,
            r->nstreams == 1 ? "" : "s", r->reverse ? "reverse (server sends)" : "client sends",
            r->complete ? "complete" : "FAILED");
    if (r->error)
        fprintf(f, "error: %s (%s)\n", r->err, brisk_strerror(r->error));
    fprintf(f, "[  ID] Interval          Transfer          Bitrate    Retr\n");
    for (uint32_t i = 0; i < r->nstreams; i++) {
        struct side snd, rcv;
        char id[12];
        snprintf(id, sizeof(id), "%d", r->streams[i].id);
        sides(r, &r->streams[i], &snd, &rcv);
        print_row(f, id, &snd, "sender");
        print_row(f, id, &rcv, "receiver");
    }
    if (r->nstreams > 1) {
        struct side snd, rcv;
        sides(r, NULL, &snd, &rcv);
        print_row(f, "SUM", &snd, "sender");
        print_row(f, "SUM", &rcv, "receiver");
    }
    for (uint32_t i = 0; i < r->nstreams; i++) {
        if (r->streams[i].mss && r->streams[i].sender) { /* a pure receiver has no RTT samples */
            char t[FMT_LEN];
            fprintf(f, "stream %d: mss %u, srtt %s\n", r->streams[i].id, r->streams[i].mss,
                    fmt_time(t, r->streams[i].srtt_ns));
        }
    }
}

/* brisk's own view of a sending stream, beyond iperf3's schema: how loss was repaired (timeouts, fast
 * retransmits, tail loss probes, undone responses) and, per hold reason, how often and how long the transmit
 * function held data back — why the stream did not send faster. */
static json_t *sender_json(const struct brisk_conn_info *in)
{
    json_t *o = json_object();
    json_object_set_new(o, "cwnd", json_integer(in->cwnd));
    json_object_set_new(o, "ssthresh", json_integer(in->ssthresh));
    json_object_set_new(o, "min_rtt_ns", json_integer((json_int_t)in->min_rtt_ns));
    json_object_set_new(o, "rtos", json_integer((json_int_t)in->rto_count));
    json_object_set_new(o, "fast_retransmits", json_integer((json_int_t)in->fast_retransmits));
    json_object_set_new(o, "tlp_probes", json_integer((json_int_t)in->tlp_probes));
    json_object_set_new(o, "tlp_recoveries", json_integer((json_int_t)in->tlp_recoveries));
    json_object_set_new(o, "undos", json_integer((json_int_t)in->undos));
    json_t *h = json_object();
    for (int k = BRISK_HOLD_NONE + 1; k < BRISK_HOLD_COUNT; k++) {
        json_t *e = json_object();
        json_object_set_new(e, "events", json_integer((json_int_t)in->hold_events[k]));
        json_object_set_new(e, "ns", json_integer((json_int_t)in->hold_ns[k]));
        json_object_set_new(h, brisk_hold_name(k), e);
    }
    json_object_set_new(o, "holds", h);
    return o;
}

static json_t *side_json(const struct side *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "start", json_real(0));
    json_object_set_new(o, "end", json_real(s->seconds));
    json_object_set_new(o, "seconds", json_real(s->seconds));
    json_object_set_new(o, "bytes", json_integer((json_int_t)s->bytes));
    json_object_set_new(o, "bits_per_second", json_real(bps(s)));
    if (s->retransmits >= 0)
        json_object_set_new(o, "retransmits", json_integer(s->retransmits));
    return o;
}

static void dump(FILE *f, json_t *top)
{
    json_dumpf(top, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(top);
}

void perf_report_json(FILE *f, const struct perf_report *r)
{
    json_t *top = json_object();
    json_t *start = json_object();
    json_t *ts = json_object();
    json_object_set_new(top, "start", start);
    json_object_set_new(start, "version", json_string("brisk-perf"));
    json_object_set_new(start, "role", json_string(r->role == 'c' ? "client" : "server"));
    json_object_set_new(start, "test_start", ts);
    json_object_set_new(ts, "protocol", json_string("TCP"));
    json_object_set_new(ts, "num_streams", json_integer(r->nstreams));
    json_object_set_new(ts, "blksize", json_integer(r->params.blksize));
    json_object_set_new(ts, "duration", json_real((double)r->params.duration_ns / 1e9));
    json_object_set_new(ts, "bytes", json_integer((json_int_t)r->params.bytes));
    json_object_set_new(ts, "reverse", json_integer(r->reverse));
    json_object_set_new(ts, "nodelay", json_integer(r->params.nodelay));

    json_t *end = json_object();
    json_t *streams = json_array();
    json_object_set_new(top, "end", end);
    json_object_set_new(end, "streams", streams);
    for (uint32_t i = 0; i < r->nstreams; i++) {
        struct side snd, rcv;
        sides(r, &r->streams[i], &snd, &rcv);
        json_t *s = json_object();
        json_t *a = side_json(&snd), *b = side_json(&rcv);
        json_object_set_new(a, "id", json_integer(r->streams[i].id));
        json_object_set_new(b, "id", json_integer(r->streams[i].id));
        json_object_set_new(s, "sender", a);
        json_object_set_new(s, "receiver", b);
        if (r->streams[i].mss) {
            json_object_set_new(s, "mss", json_integer(r->streams[i].mss));
            json_object_set_new(s, "srtt_ns", json_integer((json_int_t)r->streams[i].srtt_ns));
        }
        if (r->streams[i].have_info && r->streams[i].sender)
            json_object_set_new(s, "brisk", sender_json(&r->streams[i].info));
        json_array_append_new(streams, s);
    }
    struct side snd, rcv;
    sides(r, NULL, &snd, &rcv);
    json_object_set_new(end, "sum_sent", side_json(&snd));
    json_object_set_new(end, "sum_received", side_json(&rcv));
    json_object_set_new(end, "complete", json_boolean(r->complete));
    if (r->error)
        json_object_set_new(top, "error", json_string(r->err));
    dump(f, top);
}

void perf_rr_report_print(FILE *f, const struct perf_rr_report *r)
{
    char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN], d[FMT_LEN], e[FMT_LEN], g[FMT_LEN];
    fprintf(f, "brisk-perf rr: %u connection%s, request %u B, response %u B, nodelay %s, %s\n",
            r->params.parallel, r->params.parallel == 1 ? "" : "s", r->params.req_size, r->params.resp_size,
            r->params.nodelay ? "on" : "off", r->complete ? "complete" : "FAILED");
    if (r->error)
        fprintf(f, "error: %s (%s)\n", r->err, brisk_strerror(r->error));
    fprintf(f, "transactions     %" PRIu64 " in %s\n", r->transactions, fmt_time(a, r->duration_ns));
    fprintf(f, "rate             %.1f transactions/s\n", r->tps);
    fprintf(f, "latency          min %s  mean %s  max %s\n", fmt_time(a, r->lat_min_ns),
            fmt_time(b, r->lat_mean_ns), fmt_time(c, r->lat_max_ns));
    fprintf(f, "percentiles      p50 %s  p90 %s  p99 %s\n", fmt_time(d, r->p50_ns), fmt_time(e, r->p90_ns),
            fmt_time(g, r->p99_ns));
}

void perf_rr_report_json(FILE *f, const struct perf_rr_report *r)
{
    json_t *top = json_object();
    json_t *p = json_object();
    json_object_set_new(top, "mode", json_string("rr"));
    json_object_set_new(top, "params", p);
    json_object_set_new(p, "connections", json_integer(r->params.parallel));
    json_object_set_new(p, "request_bytes", json_integer(r->params.req_size));
    json_object_set_new(p, "response_bytes", json_integer(r->params.resp_size));
    json_object_set_new(p, "nodelay", json_integer(r->params.nodelay));
    json_object_set_new(top, "complete", json_boolean(r->complete));
    json_object_set_new(top, "transactions", json_integer((json_int_t)r->transactions));
    json_object_set_new(top, "duration_ns", json_integer((json_int_t)r->duration_ns));
    json_object_set_new(top, "transactions_per_second", json_real(r->tps));
    json_t *l = json_object();
    json_object_set_new(top, "latency_ns", l);
    json_object_set_new(l, "min", json_integer((json_int_t)r->lat_min_ns));
    json_object_set_new(l, "mean", json_integer((json_int_t)r->lat_mean_ns));
    json_object_set_new(l, "max", json_integer((json_int_t)r->lat_max_ns));
    json_object_set_new(l, "p50", json_integer((json_int_t)r->p50_ns));
    json_object_set_new(l, "p90", json_integer((json_int_t)r->p90_ns));
    json_object_set_new(l, "p99", json_integer((json_int_t)r->p99_ns));
    if (r->error)
        json_object_set_new(top, "error", json_string(r->err));
    dump(f, top);
}
