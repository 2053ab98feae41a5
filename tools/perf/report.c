/*
 * report.c — brisk-perf's output: iperf3's text (interval lines and the summary table), or JSON (--json) in
 * iperf3 3.12's schema so the same scripts read both: start (connected[], timestamp, test_start, ...),
 * intervals[] (streams[] and sum), end (streams[] with a sender and a receiver object, sum_sent,
 * sum_received, cpu_utilization_percent, the congestion controls). docs/brisk-perf.md lists where each value
 * comes from. Keys iperf3 does not have are extras (the per-stream "brisk" object, "complete", start.role);
 * none of iperf3's is left out for the modes brisk-perf runs.
 *
 * Which side measured what: the sender's bytes are what its socket accepted, the receiver's what it read. A
 * report combines the local figures with the peer's from the results exchange, so both sides print both rows.
 * "sender" inside each object is iperf3's flag: this side sends on the stream.
 *
 * A UDP test (iperf3 -u) has iperf3's UDP shapes instead: the "Jitter  Lost/Total Datagrams" columns,
 * interval records with packets (and on the receiving side jitter_ms, lost_packets, lost_percent), one "udp"
 * object per stream in end.streams[] and end.sum beside sum_sent / sum_received. The loss and jitter are
 * always the receiver's (measured here, or the peer's from the results); the packet count of a stream is the
 * sender's.
 */
#include <inttypes.h>
#include <jansson.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

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

/* One UDP stream's (or, s NULL, the test's) figures as iperf3 assembles them: the sender's and the
 * receiver's bytes and times (sides()), the datagrams the sender sent and the highest number the receiver
 * saw, the receiver's losses, reorderings and jitter (the sum's jitter is the streams' mean, as iperf3's). */
struct udp_fig {
    struct side snd, rcv;
    uint64_t snd_packets, rcv_packets, lost, ooo;
    double jitter; /* seconds */
};

static void udp_fig(const struct perf_report *r, const struct perf_stream_report *s, struct udp_fig *o)
{
    memset(o, 0, sizeof(*o));
    if (!s) {
        for (uint32_t i = 0; i < r->nstreams; i++) {
            struct udp_fig f;
            udp_fig(r, &r->streams[i], &f);
            o->snd_packets += f.snd_packets;
            o->rcv_packets += f.rcv_packets;
            o->lost += f.lost;
            o->ooo += f.ooo;
            o->jitter += f.jitter / r->nstreams;
        }
        sides(r, NULL, &o->snd, &o->rcv);
        return;
    }
    sides(r, s, &o->snd, &o->rcv);
    o->snd_packets = s->sender ? s->packets : s->remote_packets;
    o->rcv_packets = s->sender ? s->remote_packets : s->packets;
    o->lost = s->sender ? s->remote_lost : s->lost;
    o->ooo = s->sender ? 0 : s->out_of_order; /* the results exchange does not carry it */
    o->jitter = s->sender ? s->remote_jitter : s->jitter;
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* iperf3's adaptive units: 1024-based bytes ("2.64 GBytes"), 1000-based bits ("22.7 Gbits/sec"), three
 * significant figures in four columns. */
static char *unit(char *buf, size_t n, double v, int bits)
{
    static const char *const ub[] = {"Bytes", "KBytes", "MBytes", "GBytes", "TBytes"};
    static const char *const ur[] = {"bits/sec", "Kbits/sec", "Mbits/sec", "Gbits/sec", "Tbits/sec"};
    double base = bits ? 1000.0 : 1024.0;
    int k = 0;
    while (v >= base && k < 4) {
        v /= base;
        k++;
    }
    const char *fmt = v < 9.995 ? "%4.2f %s" : v < 99.95 ? "%4.1f %s" : "%4.0f %s";
    snprintf(buf, n, fmt, v, bits ? ur[k] : ub[k]);
    return buf;
}

static void id_str(char *buf, size_t n, int id)
{
    if (id < 0)
        snprintf(buf, n, "SUM");
    else
        snprintf(buf, n, "%3d", id);
}

/* One summary row: "[  1]   0.00-10.00  sec  1.10 GBytes   941 Mbits/sec    0             sender". */
static void print_row(FILE *f, int id, const struct side *s, const char *what)
{
    char ids[12], size[32], rate[32];
    id_str(ids, sizeof(ids), id);
    unit(size, sizeof(size), (double)s->bytes, 0);
    unit(rate, sizeof(rate), bps(s), 1);
    if (s->retransmits >= 0)
        fprintf(f, "[%s] %6.2f-%-6.2f sec  %s  %s  %3" PRId64 "             %s\n", ids, 0.0, s->seconds, size,
                rate, s->retransmits, what);
    else
        fprintf(f, "[%s] %6.2f-%-6.2f sec  %s  %s                  %s\n", ids, 0.0, s->seconds, size, rate,
                what);
}

static const char SEPARATOR[] = "- - - - - - - - - - - - - - - - - - - - - - - - -";
static const char UDP_HEADER[] =
    "[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams";

/* One UDP row: "[  5]   0.00-1.00   sec  1.19 MBytes  10.0 Mbits/sec  0.044 ms  0/893 (0%)  receiver". */
static void print_udp_row(FILE *f, int id, double a, double b, uint64_t bytes, double jitter, int64_t lost,
                          uint64_t packets, const char *what)
{
    char ids[12], size[32], rate[32];
    id_str(ids, sizeof(ids), id);
    unit(size, sizeof(size), (double)bytes, 0);
    unit(rate, sizeof(rate), b - a > 0 ? (double)bytes * 8 / (b - a) : 0, 1);
    fprintf(f, "[%s] %6.2f-%-6.2f sec  %s  %s  %5.3f ms  %" PRId64 "/%" PRIu64 " (%.2g%%)  %s\n", ids, a, b,
            size, rate, jitter * 1000, lost, packets, packets ? 100.0 * (double)lost / (double)packets : 0.0,
            what);
}

/* Interval i of a UDP test: the sender's "Total Datagrams" lines or the receiver's loss and jitter lines. */
static void udp_interval_print(FILE *f, const struct perf_intervals_view *v, uint32_t i, int header)
{
    const struct perf_interval *iv = &v->iv[i];
    const struct perf_interval_stream *st = &v->st[(size_t)i * v->nstreams];
    double a = (double)iv->start_ns / 1e9, b = (double)iv->end_ns / 1e9;
    int sender = st[0].sender;
    if (header)
        fprintf(f, "%s\n",
                sender ? "[ ID] Interval           Transfer     Bitrate         Total Datagrams"
                       : UDP_HEADER);
    uint64_t bytes = 0, packets = 0;
    int64_t lost = 0;
    double jitter = 0;
    char ids[12], size[32], rate[32];
    for (uint32_t k = 0; k <= v->nstreams; k++) {
        int sum = k == v->nstreams;
        if (sum && v->nstreams < 2)
            break;
        uint64_t by = sum ? bytes : st[k].bytes, pk = sum ? packets : st[k].packets;
        if (!sender) {
            print_udp_row(f, sum ? -1 : st[k].id, a, b, by, sum ? jitter / v->nstreams : st[k].jitter,
                          sum ? lost : st[k].lost, pk, "");
        } else {
            id_str(ids, sizeof(ids), sum ? -1 : st[k].id);
            unit(size, sizeof(size), (double)by, 0);
            unit(rate, sizeof(rate), b - a > 0 ? (double)by * 8 / (b - a) : 0, 1);
            fprintf(f, "[%s] %6.2f-%-6.2f sec  %s  %s  %" PRIu64 "  \n", ids, a, b, size, rate, pk);
        }
        if (!sum) {
            bytes += st[k].bytes;
            packets += st[k].packets;
            lost += st[k].lost;
            jitter += st[k].jitter;
        }
    }
    if (v->nstreams > 1)
        fprintf(f, "%s\n", SEPARATOR);
}

/* The UDP summary: per stream a sender row (its datagrams, no loss: iperf3 puts 0 there) and a receiver row
 * (the receiver's jitter and lost / highest number), [SUM] rows with several streams, and iperf3's
 * out-of-order line where datagrams came late. */
static void udp_report_print(FILE *f, const struct perf_report *r)
{
    fprintf(f, "%s\n", UDP_HEADER);
    for (uint32_t i = 0; i <= r->nstreams; i++) {
        int sum = i == r->nstreams;
        if (sum && r->nstreams < 2)
            break;
        struct udp_fig u;
        udp_fig(r, sum ? NULL : &r->streams[i], &u);
        int id = sum ? -1 : r->streams[i].id;
        print_udp_row(f, id, 0, u.snd.seconds, u.snd.bytes, 0, 0, u.snd_packets, "sender");
        print_udp_row(f, id, 0, u.rcv.seconds, u.rcv.bytes, u.jitter, (int64_t)u.lost, u.rcv_packets,
                      "receiver");
        if (u.ooo && !sum)
            fprintf(f, "[SUM] %6.2f-%-6.2f sec  %" PRIu64 " datagrams received out-of-order\n", 0.0,
                    u.rcv.seconds, u.ooo);
    }
}

void perf_interval_print(FILE *f, const struct perf_intervals_view *v, uint32_t i, int header)
{
    if (i >= v->n || !v->nstreams)
        return;
    if (v->st[(size_t)i * v->nstreams].have_udp) {
        udp_interval_print(f, v, i, header);
        return;
    }
    const struct perf_interval *iv = &v->iv[i];
    const struct perf_interval_stream *st = &v->st[(size_t)i * v->nstreams];
    double a = (double)iv->start_ns / 1e9, b = (double)iv->end_ns / 1e9, secs = b - a;
    int tcp = st[0].have_tcp;
    if (header)
        fprintf(f, "[ ID] Interval           Transfer     Bitrate%s\n", tcp ? "         Retr  Cwnd" : "");
    uint64_t sum = 0, retr = 0;
    char ids[12], size[32], rate[32], cwnd[32];
    for (uint32_t k = 0; k < v->nstreams; k++) {
        id_str(ids, sizeof(ids), st[k].id);
        unit(size, sizeof(size), (double)st[k].bytes, 0);
        unit(rate, sizeof(rate), secs > 0 ? (double)st[k].bytes * 8 / secs : 0, 1);
        if (st[k].have_tcp)
            fprintf(f, "[%s] %6.2f-%-6.2f sec  %s  %s  %3" PRIu64 "   %s       \n", ids, a, b, size, rate,
                    st[k].retransmits, unit(cwnd, sizeof(cwnd), st[k].snd_cwnd, 0));
        else
            fprintf(f, "[%s] %6.2f-%-6.2f sec  %s  %s                  \n", ids, a, b, size, rate);
        sum += st[k].bytes;
        retr += st[k].retransmits;
    }
    if (v->nstreams > 1) {
        unit(size, sizeof(size), (double)sum, 0);
        unit(rate, sizeof(rate), secs > 0 ? (double)sum * 8 / secs : 0, 1);
        if (tcp)
            fprintf(f, "[SUM] %6.2f-%-6.2f sec  %s  %s  %3" PRIu64 "             \n", a, b, size, rate, retr);
        else
            fprintf(f, "[SUM] %6.2f-%-6.2f sec  %s  %s                  \n", a, b, size, rate);
        fprintf(f, "%s\n", SEPARATOR);
    }
}

static const char *ip_str(char *b, size_t n, struct brisk_addr ip)
{
    (void)n; /* every caller's buffer holds BRISK_ADDR_STRLEN */
    return brisk_addr_format(&ip, b);
}

void perf_report_print_connected(FILE *f, const struct perf_report *r)
{
    char a[BRISK_ADDR_STRLEN], b[BRISK_ADDR_STRLEN];
    if (r->role == 'c') {
        fprintf(f, "Connecting to host %s, port %u\n", ip_str(a, sizeof(a), r->ctrl_raddr), r->ctrl_rport);
        if (r->reverse)
            fprintf(f, "Reverse mode, remote host %s is sending\n", a);
    } else {
        fprintf(f, "Accepted connection from %s, port %u\n", ip_str(a, sizeof(a), r->ctrl_raddr),
                r->ctrl_rport);
    }
    for (uint32_t i = 0; i < r->nstreams; i++) {
        const struct perf_stream_report *s = &r->streams[i];
        fprintf(f, "[%3d] local %s port %u connected to %s port %u\n", s->id, ip_str(a, sizeof(a), s->laddr),
                s->lport, ip_str(b, sizeof(b), s->raddr), s->rport);
    }
}

void perf_report_print(FILE *f, const struct perf_report *r)
{
    if (r->error)
        fprintf(f, "brisk-perf: error: %s (%s)\n", r->err, brisk_strerror(r->error));
    if (r->nstreams <= 1 || r->intervals.n == 0) /* with several streams the last [SUM] line ended in one */
        fprintf(f, "%s\n", SEPARATOR);
    if (r->params.udp) {
        udp_report_print(f, r);
        goto tail;
    }
    int retr_col = 0;
    for (uint32_t i = 0; i < r->nstreams; i++) {
        struct side snd, rcv;
        sides(r, &r->streams[i], &snd, &rcv);
        retr_col |= snd.retransmits >= 0;
    }
    fprintf(f, "[ ID] Interval           Transfer     Bitrate%s\n", retr_col ? "         Retr" : "");
    for (uint32_t i = 0; i < r->nstreams; i++) {
        struct side snd, rcv;
        sides(r, &r->streams[i], &snd, &rcv);
        print_row(f, r->streams[i].id, &snd, "sender");
        print_row(f, r->streams[i].id, &rcv, "receiver");
    }
    if (r->nstreams > 1) {
        struct side snd, rcv;
        sides(r, NULL, &snd, &rcv);
        print_row(f, -1, &snd, "sender");
        print_row(f, -1, &rcv, "receiver");
    }
    for (uint32_t i = 0; i < r->nstreams; i++) {
        if (r->streams[i].mss && r->streams[i].sender) { /* a pure receiver has no RTT samples */
            char t[FMT_LEN];
            fprintf(f, "[%3d] mss %u, srtt %s\n", r->streams[i].id, r->streams[i].mss,
                    fmt_time(t, r->streams[i].srtt_ns));
        }
    }
tail:
    if (r->have_cpu)
        fprintf(f, "CPU Utilization: local/%s %.1f%% (%.1f%%u/%.1f%%s), remote/%s %.1f%% (%.1f%%u/%.1f%%s)\n",
                r->reverse == (r->role == 's') ? "sender" : "receiver", r->cpu.total, r->cpu.user,
                r->cpu.system, r->reverse == (r->role == 's') ? "receiver" : "sender", r->remote_cpu.total,
                r->remote_cpu.user, r->remote_cpu.system);
    fprintf(f, "\nbrisk-perf %s: %u %s stream%s, %s, %s\n", r->role == 'c' ? "client" : "server", r->nstreams,
            r->params.udp ? "UDP" : "TCP", r->nstreams == 1 ? "" : "s",
            r->reverse ? "reverse (server sends)" : "client sends", r->complete ? "complete" : "FAILED");
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

static json_t *ip_json(struct brisk_addr ip)
{
    char b[BRISK_ADDR_STRLEN];
    return json_string(brisk_addr_format(&ip, b));
}

static void set_int(json_t *o, const char *k, uint64_t v)
{
    json_object_set_new(o, k, json_integer((json_int_t)v));
}

/* start, end, seconds, bytes, bits_per_second — the head of every iperf3 figures object. */
static json_t *figures(int socket, double start, double end, double seconds, uint64_t bytes)
{
    json_t *o = json_object();
    if (socket >= 0)
        json_object_set_new(o, "socket", json_integer(socket));
    json_object_set_new(o, "start", json_real(start));
    json_object_set_new(o, "end", json_real(end));
    json_object_set_new(o, "seconds", json_real(seconds));
    set_int(o, "bytes", bytes);
    json_object_set_new(o, "bits_per_second", json_real(seconds > 0 ? (double)bytes * 8 / seconds : 0));
    return o;
}

static json_t *side_json(int socket, const struct side *s)
{
    json_t *o = figures(socket, 0, s->seconds, s->seconds, s->bytes);
    if (s->retransmits >= 0)
        json_object_set_new(o, "retransmits", json_integer(s->retransmits));
    return o;
}

static json_t *start_json(const struct perf_report *r)
{
    json_t *start = json_object();
    json_t *conn = json_array();
    for (uint32_t i = 0; i < r->nstreams; i++) {
        const struct perf_stream_report *s = &r->streams[i];
        json_t *c = json_object();
        json_object_set_new(c, "socket", json_integer(s->id));
        json_object_set_new(c, "local_host", ip_json(s->laddr));
        json_object_set_new(c, "local_port", json_integer(s->lport));
        json_object_set_new(c, "remote_host", ip_json(s->raddr));
        json_object_set_new(c, "remote_port", json_integer(s->rport));
        json_array_append_new(conn, c);
    }
    json_object_set_new(start, "connected", conn);
    json_object_set_new(start, "version", json_string("brisk-perf"));
    struct utsname u;
    char sys[5 * sizeof(u.sysname) + 8] = "";
    if (uname(&u) == 0)
        snprintf(sys, sizeof(sys), "%s %s %s %s %s", u.sysname, u.nodename, u.release, u.version, u.machine);
    json_object_set_new(start, "system_info", json_string(sys));
    json_t *ts = json_object();
    char when[64] = "";
    time_t t = (time_t)r->timestamp_s;
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof(when), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    json_object_set_new(ts, "time", json_string(when));
    set_int(ts, "timesecs", r->timestamp_s);
    json_object_set_new(start, "timestamp", ts);
    json_t *peer = json_object();
    json_object_set_new(peer, "host", ip_json(r->ctrl_raddr));
    json_object_set_new(peer, "port", json_integer(r->ctrl_rport));
    json_object_set_new(start, r->role == 'c' ? "connecting_to" : "accepted_connection", peer);
    json_object_set_new(start, "cookie", json_string(r->cookie));
    set_int(start, "tcp_mss_default", r->role == 'c' ? r->ctrl_mss : 0);
    set_int(start, "target_bitrate", r->params.udp ? r->params.rate : 0);
    set_int(start, "sock_bufsize", r->params.window);
    set_int(start, "sndbuf_actual", r->sndbuf);
    set_int(start, "rcvbuf_actual", r->rcvbuf);
    json_object_set_new(start, "role", json_string(r->role == 'c' ? "client" : "server"));
    json_t *tst = json_object();
    json_object_set_new(tst, "protocol", json_string(r->params.udp ? "UDP" : "TCP"));
    json_object_set_new(tst, "num_streams", json_integer(r->params.parallel));
    set_int(tst, "blksize", r->params.blksize);
    set_int(tst, "omit", 0);
    if (r->params.duration_ns % BRISK_NSEC_PER_SEC == 0)
        set_int(tst, "duration", r->params.duration_ns / BRISK_NSEC_PER_SEC);
    else
        json_object_set_new(tst, "duration", json_real((double)r->params.duration_ns / 1e9));
    set_int(tst, "bytes", r->params.bytes);
    set_int(tst, "blocks", 0);
    json_object_set_new(tst, "reverse", json_integer(r->reverse));
    set_int(tst, "tos", 0);
    set_int(tst, "target_bitrate", r->params.udp ? r->params.rate : 0);
    json_object_set_new(tst, "nodelay", json_integer(r->params.nodelay));
    json_object_set_new(start, "test_start", tst);
    return start;
}

static void tcp_json(json_t *o, const struct perf_interval_stream *s)
{
    set_int(o, "retransmits", s->retransmits);
    set_int(o, "snd_cwnd", s->snd_cwnd);
    set_int(o, "snd_wnd", s->snd_wnd);
    set_int(o, "rtt", s->rtt_us);
    set_int(o, "rttvar", s->rttvar_us);
    set_int(o, "pmtu", s->pmtu);
}

/* An interval record's UDP keys: a sender's datagrams, or a receiver's jitter, loss and packet numbers. */
static void udp_json(json_t *o, int sender, double jitter, int64_t lost, uint64_t packets)
{
    if (!sender) {
        json_object_set_new(o, "jitter_ms", json_real(jitter * 1000));
        json_object_set_new(o, "lost_packets", json_integer(lost));
    }
    set_int(o, "packets", packets);
    if (!sender)
        json_object_set_new(o, "lost_percent",
                            json_real(packets ? 100.0 * (double)lost / (double)packets : 0));
}

/* An end object of a UDP test (end.streams[].udp, end.sum, sum_sent, sum_received): iperf3's keys. */
static json_t *udp_end_json(int socket, const struct side *sd, uint64_t bytes, double bits, double jitter,
                            uint64_t lost, uint64_t packets, int ooo_key, uint64_t ooo, int sender)
{
    json_t *o = figures(socket, 0, sd->seconds, sd->seconds, bytes);
    json_object_set_new(o, "bits_per_second", json_real(bits));
    json_object_set_new(o, "jitter_ms", json_real(jitter * 1000));
    set_int(o, "lost_packets", lost);
    set_int(o, "packets", packets);
    json_object_set_new(o, "lost_percent", json_real(pct(lost, packets)));
    if (ooo_key)
        set_int(o, "out_of_order", ooo);
    json_object_set_new(o, "sender", json_boolean(sender));
    return o;
}

/* end for a UDP test: one "udp" object per stream (the sender's bytes and packets with the receiver's loss
 * and jitter, as iperf3 folds them), then sum (the same over all streams), sum_sent and sum_received. */
static void udp_end(json_t *end, const struct perf_report *r, int local_sends)
{
    json_t *streams = json_object_get(end, "streams");
    for (uint32_t i = 0; i < r->nstreams; i++) {
        const struct perf_stream_report *sr = &r->streams[i];
        struct udp_fig u;
        udp_fig(r, sr, &u);
        uint64_t packets = u.snd_packets ? u.snd_packets : u.rcv_packets;
        json_t *o = udp_end_json(sr->id, &u.snd, u.snd.bytes, bps(&u.snd), u.jitter, u.lost, packets, 1,
                                 u.ooo, local_sends);
        json_object_set_new(o, "id", json_integer(sr->id));
        if (sr->short_drops) /* brisk-perf's: datagrams too short for iperf3's header */
            set_int(o, "short_datagrams", sr->short_drops);
        json_t *s = json_object();
        json_object_set_new(s, "udp", o);
        json_array_append_new(streams, s);
    }
    struct udp_fig u;
    udp_fig(r, NULL, &u);
    json_object_set_new(end, "sum",
                        udp_end_json(-1, &u.rcv, u.snd.bytes, bps(&u.snd), u.jitter, u.lost,
                                     u.snd_packets ? u.snd_packets : u.rcv_packets, 0, 0, local_sends));
    json_object_set_new(end, "sum_sent",
                        udp_end_json(-1, &u.snd, u.snd.bytes, bps(&u.snd), 0, 0, u.snd_packets, 0, 0, 1));
    json_object_set_new(
        end, "sum_received",
        udp_end_json(-1, &u.rcv, u.rcv.bytes, bps(&u.rcv), u.jitter, u.lost, u.rcv_packets, 0, 0, 0));
    if (r->role == 's')
        set_int(end, "stray_datagrams", r->udp_strays);
}

static json_t *intervals_json(const struct perf_intervals_view *v)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < v->n; i++) {
        const struct perf_interval *iv = &v->iv[i];
        const struct perf_interval_stream *st = &v->st[(size_t)i * v->nstreams];
        double b = (double)iv->start_ns / 1e9, e = (double)iv->end_ns / 1e9;
        json_t *o = json_object(), *streams = json_array();
        uint64_t sum = 0, retr = 0, packets = 0;
        int64_t lost = 0;
        double jitter = 0;
        int tcp = 0, sender = 0, udp = 0;
        for (uint32_t k = 0; k < v->nstreams; k++) {
            json_t *s = figures(st[k].id, b, e, e - b, st[k].bytes);
            if (st[k].have_tcp)
                tcp_json(s, &st[k]);
            if (st[k].have_udp) {
                udp_json(s, st[k].sender, st[k].jitter, st[k].lost, st[k].packets);
                packets += st[k].packets;
                lost += st[k].lost;
                jitter += st[k].jitter / v->nstreams;
                udp = 1;
            }
            json_object_set_new(s, "omitted", json_false());
            json_object_set_new(s, "sender", json_boolean(st[k].sender));
            json_array_append_new(streams, s);
            sum += st[k].bytes;
            retr += st[k].retransmits;
            tcp |= st[k].have_tcp;
            sender |= st[k].sender;
        }
        json_object_set_new(o, "streams", streams);
        json_t *s = figures(-1, b, e, e - b, sum);
        if (tcp)
            set_int(s, "retransmits", retr);
        if (udp)
            udp_json(s, sender, jitter, lost, packets);
        json_object_set_new(s, "omitted", json_false());
        json_object_set_new(s, "sender", json_boolean(sender));
        json_object_set_new(o, "sum", s);
        json_array_append_new(a, o);
    }
    return a;
}

/* iperf3's end-of-test TCP figures of a sending stream: the largest congestion and send windows and the
 * largest, smallest and mean smoothed RTT (us) over the interval samples — or, without intervals (-i 0), the
 * connection's state at its close. */
static void sender_tcp_summary(json_t *o, const struct perf_report *r, uint32_t idx)
{
    const struct perf_intervals_view *v = &r->intervals;
    uint64_t max_cwnd = 0, max_wnd = 0, max_rtt = 0, min_rtt = 0, sum_rtt = 0, n = 0;
    for (uint32_t i = 0; v->nstreams == r->nstreams && i < v->n; i++) {
        const struct perf_interval_stream *s = &v->st[(size_t)i * v->nstreams + idx];
        if (!s->have_tcp)
            continue;
        if (s->snd_cwnd > max_cwnd)
            max_cwnd = s->snd_cwnd;
        if (s->snd_wnd > max_wnd)
            max_wnd = s->snd_wnd;
        if (s->rtt_us > max_rtt)
            max_rtt = s->rtt_us;
        if (!n || s->rtt_us < min_rtt)
            min_rtt = s->rtt_us;
        sum_rtt += s->rtt_us;
        n++;
    }
    const struct perf_stream_report *sr = &r->streams[idx];
    if (!n && sr->have_info && sr->sender) {
        max_cwnd = sr->info.cwnd;
        max_wnd = sr->info.snd_wnd;
        max_rtt = min_rtt = sum_rtt = sr->info.srtt_ns / 1000;
        n = 1;
    }
    set_int(o, "max_snd_cwnd", max_cwnd);
    set_int(o, "max_snd_wnd", max_wnd);
    set_int(o, "max_rtt", max_rtt);
    set_int(o, "min_rtt", min_rtt);
    set_int(o, "mean_rtt", n ? sum_rtt / n : 0);
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
    json_object_set_new(top, "start", start_json(r));
    json_object_set_new(top, "intervals", intervals_json(&r->intervals));

    json_t *end = json_object();
    json_t *streams = json_array();
    json_object_set_new(top, "end", end);
    json_object_set_new(end, "streams", streams);
    int local_sends = r->reverse == (r->role == 's');
    if (r->params.udp)
        udp_end(end, r, local_sends);
    for (uint32_t i = 0; i < r->nstreams && !r->params.udp; i++) {
        const struct perf_stream_report *sr = &r->streams[i];
        struct side snd, rcv;
        sides(r, sr, &snd, &rcv);
        json_t *s = json_object();
        json_t *a = side_json(sr->id, &snd), *b = side_json(sr->id, &rcv);
        /* The window and RTT figures are the sender's; a receiving side has none (iperf3 puts 0 there). */
        if (snd.retransmits >= 0)
            sender_tcp_summary(a, r, i);
        json_object_set_new(a, "sender", json_boolean(sr->sender));
        json_object_set_new(b, "sender", json_boolean(sr->sender));
        json_object_set_new(a, "id", json_integer(sr->id));
        json_object_set_new(b, "id", json_integer(sr->id));
        json_object_set_new(s, "sender", a);
        json_object_set_new(s, "receiver", b);
        if (sr->mss) {
            json_object_set_new(s, "mss", json_integer(sr->mss));
            json_object_set_new(s, "srtt_ns", json_integer((json_int_t)sr->srtt_ns));
        }
        if (sr->have_info && sr->sender)
            json_object_set_new(s, "brisk", sender_json(&sr->info));
        json_array_append_new(streams, s);
    }
    if (!r->params.udp) {
        struct side snd, rcv;
        sides(r, NULL, &snd, &rcv);
        json_t *ss = side_json(-1, &snd), *sr = side_json(-1, &rcv);
        json_object_set_new(ss, "sender", json_boolean(local_sends));
        json_object_set_new(sr, "sender", json_boolean(local_sends));
        json_object_set_new(end, "sum_sent", ss);
        json_object_set_new(end, "sum_received", sr);
    }
    json_t *cpu = json_object();
    json_object_set_new(cpu, "host_total", json_real(r->cpu.total));
    json_object_set_new(cpu, "host_user", json_real(r->cpu.user));
    json_object_set_new(cpu, "host_system", json_real(r->cpu.system));
    json_object_set_new(cpu, "remote_total", json_real(r->remote_cpu.total));
    json_object_set_new(cpu, "remote_user", json_real(r->remote_cpu.user));
    json_object_set_new(cpu, "remote_system", json_real(r->remote_cpu.system));
    json_object_set_new(end, "cpu_utilization_percent", cpu);
    const char *snd_cc = local_sends ? r->congestion : r->remote_congestion;
    const char *rcv_cc = local_sends ? r->remote_congestion : r->congestion;
    if (snd_cc[0])
        json_object_set_new(end, "sender_tcp_congestion", json_string(snd_cc));
    if (rcv_cc[0])
        json_object_set_new(end, "receiver_tcp_congestion", json_string(rcv_cc));
    json_object_set_new(end, "complete", json_boolean(r->complete));
    if (r->intervals.truncated)
        json_object_set_new(end, "intervals_truncated", json_true());
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
