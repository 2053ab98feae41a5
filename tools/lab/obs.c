/*
 * obs.c — a run's bulk flows seen as `ss -ti` and as time-sequence graphs with hold bands (obs.h).
 *
 * The time-sequence graph. The sender's NIC port is observed (brisk_sim_port_observe): a frame the sender
 * starts serializing that carries payload or a FIN is a segment, drawn as a vertical bar from its first to
 * its last sequence number at the moment it went on the wire; a segment that starts below the highest
 * sequence number sent so far is a retransmission, drawn in red. A frame of the flow delivered to the
 * sender's port with ACK set gives the ACK line (its acknowledgment number) and the receive window's right
 * edge (acknowledgment + window << the receiver's scale, RFC 7323 §2.3, once both SYNs carried the option).
 * Sequence numbers are relative to the sender's ISN + 1, so the first byte of data is 0, and unwrapped to
 * 64 bits. The window starts at the SYN that opened the connection + START and lasts LEN (by default 50
 * round trips of the handshake, at least 20 ms); the graph is bounded
 * (OBS_MAX_POINTS segments, ACKs and bands: a 10 GB transfer gives a graph of its window, never of all of
 * it — if the bound comes first the window ends there and the report says "truncated").
 *
 * The hold bands. After every simulator event while the window is open the sender's brisk_conn_info says
 * which reason holds it now (enum brisk_hold: none, cwnd, rwnd, nagle, cork, tsq, autocork, pacing, device;
 * docs/transmit-engine.md); a change starts a band. So a band is exactly the time the transmit function
 * last declined to send for that reason — the same accounting as hold_ns in the tables, cut to the window.
 *
 * The ss lines. At the end, both ends of each flow from the bulk result's brisk_conn_info (the sockets may
 * be closed by then); sampled, every --ss-every of virtual time, both ends found by a walk of their hosts'
 * sockets (brisk_stack_foreach_socket: read-only) until every flow is done, at most OBS_MAX_SAMPLES per
 * flow. The JSON objects and lines are brisk-ss's own (ssjson.h).
 */
#include "lab/obs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "lab/flow.h"
#include "lab/ssjson.h"

#define OBS_MAX_FLOWS   16
#define OBS_MAX_POINTS  50000u /* per series of one graph: about 50 per pixel column already */
#define OBS_MAX_SAMPLES 10000u /* ss samples per flow */
#define OBS_TSEQ_LEN    (20 * BRISK_NSEC_PER_MSEC) /* the default window: at least this long ... */
#define OBS_TSEQ_RTTS   50                         /* ... and at least this many handshake round trips */

int lab_obs_options(struct lab_run *r, const char *tseq, const char *ss_every, int out)
{
    r->tseq = out;
    r->tseq_from_ns = 0;
    r->tseq_len_ns = 0; /* the default: from the handshake's round trip (each_event) */
    if (tseq && !strcmp(tseq, "off")) {
        r->tseq = 0;
    } else if (tseq) {
        char buf[64];
        const char *plus = strchr(tseq, '+');
        uint64_t from = 0, len = 0;
        int ok = strlen(tseq) < sizeof(buf);
        if (ok && plus) {
            memcpy(buf, tseq, (size_t)(plus - tseq));
            buf[plus - tseq] = '\0';
            ok = brisk_parse_time(buf, &from) == BRISK_OK;
        }
        ok = ok && brisk_parse_time(plus ? plus + 1 : tseq, &len) == BRISK_OK && len > 0;
        if (!ok) {
            fprintf(stderr,
                    "brisk-lab run: --tseq takes LEN or START+LEN of virtual time from the flow's SYN (20ms, "
                    "1s+5ms) or off, got '%s'\n",
                    tseq);
            return 2;
        }
        if (!out) {
            fprintf(stderr, "brisk-lab run: --tseq draws into the --out directory: give --out DIR\n");
            return 2;
        }
        r->tseq = 1;
        r->tseq_from_ns = from;
        r->tseq_len_ns = len;
    }
    if (ss_every && (brisk_parse_time(ss_every, &r->ss_every_ns) != BRISK_OK || r->ss_every_ns == 0)) {
        fprintf(stderr,
                "brisk-lab run: --ss-every takes an interval of virtual time (1ms, 100us), got '%s'\n",
                ss_every);
        return 2;
    }
    return 0;
}

struct seg {
    uint64_t t, seq, end;
    int again; /* a retransmission: it starts below the highest sequence number sent before it */
};
struct ackpt {
    uint64_t t, ack, edge;
};
struct band {
    uint64_t t0, t1;
    int reason;
};
struct sample {
    uint64_t t;
    int have[2]; /* client, server found */
    struct brisk_conn_info i[2];
};

/* A growing array (a tool's memory, not the stack's): doubles, and says 0 when memory runs out. */
static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 1;
    size_t c = *cap ? *cap * 2 : 1024;
    void *q = realloc(*p, c * elem);
    if (!q)
        return 0;
    *p = q;
    *cap = c;
    return 1;
}

struct oflow {
    int n; /* the report's flow number, 0: unused */
    struct lab_obs_flow f;
    brisk_sim_port *sport; /* the sender's port */
    int sender_client;
    char cc[2][16];
    /* time-sequence */
    int syn_seen, isn_set, ws_snd, ws_rcv; /* ws_*: the SYN's window scale shift, -1 without the option */
    uint32_t isn;
    uint16_t cport;       /* the client's port, from the first SYN */
    uint64_t syn_at, rtt; /* the SYN that opened it, and the handshake's round trip (0: not yet) */
    uint64_t w0, w1;      /* the window, virtual time */
    int state;            /* 0 not open, 1 open, 2 closed */
    int truncated;
    uint64_t max_end; /* the highest sequence number sent (relative, unwrapped) */
    uint64_t top;     /* the highest sequence number sent in the window */
    struct seg *segs;
    size_t nsegs, capsegs, nrtx;
    struct ackpt *acks;
    size_t nacks, capacks;
    struct band *bands;
    size_t nbands, capbands;
    int reason; /* the hold in force (a band open since `since`) */
    uint64_t since;
    /* ss */
    int have_end;
    struct brisk_conn_info end[2];
    uint64_t end_now;
    struct sample *samples;
    size_t nsamples, capsamples;
    int samples_truncated;
};

struct lab_obs {
    const struct lab_run *r;
    brisk_sim_world *w;
    char row[48];
    struct oflow fl[OBS_MAX_FLOWS];
    int nfl;
    brisk_sim_port *ports[OBS_MAX_FLOWS]; /* observed */
    int nports;
    int sampling;
};

struct lab_obs *lab_obs_new(const struct lab_run *r, brisk_sim_world *w, const char *row_key)
{
    struct lab_obs *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    o->r = r;
    o->w = w;
    snprintf(o->row, sizeof(o->row), "%s", row_key ? row_key : "");
    return o;
}

/* ---- finding a flow's sockets (read-only walk) ---- */

struct find {
    const struct oflow *fl;
    int server; /* 0: the client's socket, 1: the server's */
    struct brisk_conn_info info;
    const char *cc;
    int found;
};

static int find_one(void *ctx, brisk_sock *s)
{
    struct find *fd = ctx;
    struct brisk_conn_info i;
    if (brisk_conn_info(s, &i) != BRISK_OK || i.state == BRISK_TCP_LISTEN)
        return 0;
    const struct lab_obs_flow *f = &fd->fl->f;
    int match = fd->server ? i.lport == f->port && (!fd->fl->cport || i.rport == fd->fl->cport)
                           : i.rport == f->port && brisk_addr_equal(&i.tuple.raddr, &f->server_addr);
    if (!match)
        return 0;
    fd->info = i;
    fd->cc = brisk_get_congestion(s);
    fd->found = 1;
    return 1;
}

static int find(struct oflow *fl, int server, struct brisk_conn_info *out)
{
    struct find fd = {.fl = fl, .server = server};
    brisk_sim_host *h = server ? fl->f.server : fl->f.client;
    brisk_stack_foreach_socket(brisk_sim_host_stack(h), find_one, &fd);
    if (!fd.found)
        return 0;
    if (fd.cc)
        snprintf(fl->cc[server], sizeof(fl->cc[server]), "%s", fd.cc);
    *out = fd.info;
    return 1;
}

/* ---- the time-sequence graph's frames ---- */

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The window scale option of a SYN's options (RFC 7323 §2), -1 without one. Bounds-checked: a malformed
 * option list ends the search. */
static int syn_wscale(const uint8_t *opt, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t kind = opt[i];
        if (kind == 0)
            break;
        if (kind == 1) {
            i++;
            continue;
        }
        if (i + 1 >= len || opt[i + 1] < 2 || i + opt[i + 1] > len)
            break;
        if (kind == 3 && opt[i + 1] == 3)
            return opt[i + 2] > 14 ? 14 : opt[i + 2];
        i += opt[i + 1];
    }
    return -1;
}

/* A relative sequence number, unwrapped near the highest one sent. */
static uint64_t rel(const struct oflow *fl, uint32_t seq)
{
    uint32_t r32 = seq - fl->isn - 1;
    int64_t v = (int64_t)fl->max_end + (int32_t)(r32 - (uint32_t)fl->max_end);
    return v < 0 ? 0 : (uint64_t)v;
}

static void close_window(struct oflow *fl, uint64_t at)
{
    if (fl->state != 1)
        return;
    if (at > fl->w1)
        at = fl->w1;
    if (fl->reason != BRISK_HOLD_NONE && at > fl->since &&
        grow((void **)&fl->bands, &fl->capbands, fl->nbands, sizeof(*fl->bands)))
        fl->bands[fl->nbands++] = (struct band){fl->since, at, fl->reason};
    fl->w1 = at;
    fl->state = 2;
}

/* The bound on a graph's size: the window ends when a series is full (or memory runs out). */
static void full(struct oflow *fl, uint64_t now)
{
    fl->truncated = 1;
    close_window(fl, now);
}

static void flow_frame(struct oflow *fl, const uint8_t *tcp, size_t tlen, int rx, uint64_t now)
{
    uint16_t sport = be16(tcp), dport = be16(tcp + 2);
    uint16_t srv = fl->f.port;
    /* Data leaves the sender; ACKs arrive at it. The server's port is known, the client's from its SYN. */
    int data = !rx && (fl->sender_client ? dport == srv : sport == srv);
    int ack = rx && (fl->sender_client ? sport == srv : dport == srv);
    if (!data && !ack)
        return;
    uint16_t cport = fl->sender_client == data ? sport : dport;
    size_t doff = (size_t)(tcp[12] >> 4) * 4;
    if (doff < 20 || doff > tlen)
        return;
    uint8_t flags = tcp[13];
    uint32_t seq = be32(tcp + 4), ackno = be32(tcp + 8);
    if (flags & 0x02) { /* SYN */
        if (!fl->syn_seen) {
            fl->syn_seen = 1;
            fl->cport = cport;
            fl->ws_snd = fl->ws_rcv = -1;
        }
        if (cport != fl->cport)
            return;
        /* The window is placed from the SYN that opened the connection: the last one before the handshake's
         * answer (a lost SYN's retransmission a second later is where the flow starts). */
        if (!(flags & 0x10) && !fl->rtt)
            fl->syn_at = now;
        int ws = syn_wscale(tcp + 20, doff - 20);
        if (ack && (flags & 0x10) && !fl->rtt && fl->sender_client)
            fl->rtt = now > fl->syn_at ? now - fl->syn_at : 1;
        if (data) {
            fl->isn = seq;
            fl->isn_set = 1;
            fl->ws_snd = ws;
        } else {
            fl->ws_rcv = ws;
        }
        return;
    }
    if (!fl->isn_set || cport != fl->cport)
        return;
    /* The handshake's round trip: the sender's SYN to the SYN-ACK (above: it returned), or the client's SYN
     * to the ACK of the server's SYN-ACK. */
    if (ack && !fl->rtt && fl->sender_client == 0)
        fl->rtt = now > fl->syn_at ? now - fl->syn_at : 1;
    if (data) {
        size_t plen = tlen - doff;
        uint64_t s = rel(fl, seq), e = s + plen + (flags & 0x01 ? 1 : 0);
        if (e == s)
            return; /* a pure ACK of the other direction's data */
        /* The highest sequence number is followed from the start, so a window late in the transfer still
         * tells retransmissions from new data. */
        int again = s < fl->max_end;
        if (e > fl->max_end)
            fl->max_end = e;
        if (fl->state != 1)
            return;
        if (!grow((void **)&fl->segs, &fl->capsegs, fl->nsegs, sizeof(*fl->segs)) ||
            fl->nsegs >= OBS_MAX_POINTS)
            return full(fl, now);
        fl->segs[fl->nsegs++] = (struct seg){now, s, e, again};
        fl->nrtx += (size_t)again;
        if (e > fl->top)
            fl->top = e;
    } else if ((flags & 0x10) && fl->state == 1) {
        if (!grow((void **)&fl->acks, &fl->capacks, fl->nacks, sizeof(*fl->acks)) ||
            fl->nacks >= OBS_MAX_POINTS)
            return full(fl, now);
        uint64_t a = rel(fl, ackno);
        int shift = fl->ws_snd >= 0 && fl->ws_rcv >= 0 ? fl->ws_rcv : 0;
        fl->acks[fl->nacks++] = (struct ackpt){now, a, a + ((uint64_t)be16(tcp + 14) << shift)};
    }
}

static void on_frame(void *ctx, brisk_sim_port *p, const uint8_t *f, size_t len, int rx, uint64_t now)
{
    struct lab_obs *o = ctx;
    /* Ethernet II, IPv4, TCP: anything else (ARP, a short or odd frame) is not a segment of a flow. */
    if (len < 14 + 20 || be16(f + 12) != 0x0800 || (f[14] >> 4) != 4)
        return;
    size_t ihl = (size_t)(f[14] & 15) * 4, tot = be16(f + 16);
    if (ihl < 20 || f[14 + 9] != 6 || tot < ihl + 20 || 14 + tot > len)
        return;
    for (int i = 0; i < o->nfl; i++)
        if (o->fl[i].n && o->fl[i].sport == p && o->r->tseq)
            flow_frame(&o->fl[i], f + 14 + ihl, tot - ihl, rx, now);
}

/* After every simulator event: open or close windows, and follow the hold reason inside them. */
static void each_event(void *ctx)
{
    struct lab_obs *o = ctx;
    uint64_t now = brisk_sim_now(o->w);
    for (int k = 0; k < o->nfl; k++) {
        struct oflow *fl = &o->fl[k];
        if (!fl->n || !fl->syn_seen || fl->state == 2)
            continue;
        if (fl->state == 0) {
            if (fl->w1 == 0) { /* the window, from the opening SYN's time */
                uint64_t len = o->r->tseq_len_ns;
                if (!fl->rtt)
                    continue; /* placed once the handshake has completed (its SYN, its round trip) */
                if (!len)
                    len = fl->rtt * OBS_TSEQ_RTTS > OBS_TSEQ_LEN ? fl->rtt * OBS_TSEQ_RTTS : OBS_TSEQ_LEN;
                fl->w0 = fl->syn_at + o->r->tseq_from_ns;
                fl->w1 = fl->w0 + len;
            }
            if (now < fl->w0)
                continue;
            fl->state = 1;
            fl->reason = BRISK_HOLD_NONE;
            fl->since = now;
        }
        if (now > fl->w1) {
            close_window(fl, now);
            continue;
        }
        struct brisk_conn_info i;
        int reason = find(fl, !fl->sender_client, &i) ? i.hold : BRISK_HOLD_NONE;
        if (reason == fl->reason)
            continue;
        if (fl->reason != BRISK_HOLD_NONE && now > fl->since) {
            if (!grow((void **)&fl->bands, &fl->capbands, fl->nbands, sizeof(*fl->bands)) ||
                fl->nbands >= OBS_MAX_POINTS) {
                full(fl, now);
                continue;
            }
            fl->bands[fl->nbands++] = (struct band){fl->since, now, fl->reason};
        }
        fl->reason = reason;
        fl->since = now;
    }
}

/* ---- ss sampling ---- */

static void sample(void *ctx, uint64_t now)
{
    struct lab_obs *o = ctx;
    int more = 0;
    for (int k = 0; k < o->nfl; k++) {
        struct oflow *fl = &o->fl[k];
        if (!fl->n || fl->samples_truncated)
            continue;
        if (fl->nsamples >= OBS_MAX_SAMPLES ||
            !grow((void **)&fl->samples, &fl->capsamples, fl->nsamples, sizeof(*fl->samples))) {
            fl->samples_truncated = 1;
            continue;
        }
        struct sample *s = &fl->samples[fl->nsamples];
        memset(s, 0, sizeof(*s));
        s->t = now;
        for (int side = 0; side < 2; side++)
            s->have[side] = find(fl, side, &s->i[side]);
        if (s->have[0] || s->have[1])
            fl->nsamples++;
        if (!brisk_sim_bulk_done(fl->f.bulk))
            more = 1;
    }
    if (more)
        brisk_sim_at(o->w, now + o->r->ss_every_ns, sample, o);
}

int lab_obs_add(struct lab_obs *o, int n, const struct lab_obs_flow *f)
{
    if (!o)
        return 0;
    if (o->nfl == OBS_MAX_FLOWS)
        return 0; /* a file has at most as many flows */
    struct oflow *fl = &o->fl[o->nfl++];
    memset(fl, 0, sizeof(*fl));
    fl->n = n;
    fl->f = *f;
    fl->sender_client = f->dir != BRISK_SIM_BULK_DOWN;
    fl->sport = fl->sender_client ? f->client_port : f->server_port;
    if (!o->r->tseq)
        return 0;
    for (int i = 0; i < o->nports; i++)
        if (o->ports[i] == fl->sport)
            return 0;
    if (brisk_sim_port_observe(fl->sport, on_frame, o) != BRISK_OK) {
        fprintf(stderr, "brisk-lab: cannot observe flow %d's sender port for its time-sequence graph\n", n);
        return 1;
    }
    o->ports[o->nports++] = fl->sport;
    return 0;
}

void lab_obs_watch(struct lab_obs *o, struct lab_watch *wt)
{
    if (!o)
        return;
    if (o->r->tseq) {
        wt->each = each_event;
        wt->each_ctx = o;
    }
    if (o->r->ss_every_ns && o->nfl)
        brisk_sim_at(o->w, brisk_sim_now(o->w) + o->r->ss_every_ns, sample, o);
}

void lab_obs_end(struct lab_obs *o, int n, const struct brisk_sim_bulk_result *res)
{
    for (int k = 0; o && k < o->nfl; k++) {
        struct oflow *fl = &o->fl[k];
        if (fl->n != n)
            continue;
        fl->have_end = 1;
        fl->end[0] = res->client.info;
        fl->end[1] = res->server.info;
        fl->end_now = brisk_sim_now(o->w);
        /* The congestion control's name comes from a live socket; a flow never found takes the setting's. */
        for (int side = 0; side < 2; side++) {
            struct brisk_conn_info i;
            if (!fl->cc[side][0])
                find(fl, side, &i);
        }
    }
}

/* ---- drawing ---- */

static const char *const band_colour[BRISK_HOLD_COUNT] = {
    [BRISK_HOLD_CWND] = "#ff7f0e",   [BRISK_HOLD_RWND] = "#bcbd22",   [BRISK_HOLD_NAGLE] = "#9467bd",
    [BRISK_HOLD_CORK] = "#8c564b",   [BRISK_HOLD_TSQ] = "#1f77b4",    [BRISK_HOLD_AUTOCORK] = "#e377c2",
    [BRISK_HOLD_PACING] = "#17becf", [BRISK_HOLD_DEVICE] = "#7f7f7f",
};

static void graph_name(const struct lab_obs *o, const struct oflow *fl, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "tseq");
    if (o->row[0] && k < n) {
        k += (size_t)snprintf(buf + k, n - k, "_");
        for (const char *c = o->row; *c && k + 1 < n; c++) /* a row name as a file name */
            buf[k++] = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                               *c == '-' || *c == '.'
                           ? *c
                           : '_';
        buf[k] = '\0';
    }
    if ((o->row[0] || o->nfl > 1) && k < n)
        snprintf(buf + k, n - k, "_flow%d", fl->n);
}

/* The time each reason held the sender in the window (from the bands). */
static void band_totals(const struct oflow *fl, uint64_t *ns)
{
    memset(ns, 0, sizeof(uint64_t) * BRISK_HOLD_COUNT);
    for (size_t i = 0; i < fl->nbands; i++)
        ns[fl->bands[i].reason] += fl->bands[i].t1 - fl->bands[i].t0;
}

static void draw(const struct lab_obs *o, const struct oflow *fl)
{
    const char *dir = o->r->plot_dir;
    char name[128], dat[4300], png[4300];
    graph_name(o, fl, name, sizeof(name));
    snprintf(dat, sizeof(dat), "%s/%s.dat", dir, name);
    snprintf(png, sizeof(png), "%s/%s.png", dir, name);
    if (fl->nsegs == 0) {
        fprintf(stderr, "brisk-lab: flow %d%s%s: no segment in its time-sequence window; no %s\n", fl->n,
                o->row[0] ? " of row " : "", o->row, png);
        return;
    }
    /* Units a reader takes in at a glance: bytes, KB or MB of sequence space; ms of virtual time. */
    double unit = fl->top >= 10000000 ? 1e6 : fl->top >= 10000 ? 1e3 : 1;
    const char *uname = unit == 1e6 ? "MB" : unit == 1e3 ? "KB" : "bytes";
    FILE *f = fopen(dat, "w");
    if (!f) {
        fprintf(stderr, "brisk-lab: cannot write %s\n", dat);
        return;
    }
    int block = 0, b_new = -1, b_rtx = -1, b_ack = -1, b_win = -1, b_hold[BRISK_HOLD_COUNT];
    for (int pass = 0; pass < 2; pass++) {
        size_t n = 0;
        for (size_t i = 0; i < fl->nsegs; i++)
            n += fl->segs[i].again == pass;
        if (!n)
            continue;
        fprintf(f, "# %s: time (ms), first and last sequence number (%s)\n",
                pass ? "retransmitted segments" : "segments sent", uname);
        for (size_t i = 0; i < fl->nsegs; i++)
            if (fl->segs[i].again == pass)
                fprintf(f, "%.6f %.6f %.6f\n", (double)fl->segs[i].t / 1e6, (double)fl->segs[i].seq / unit,
                        (double)fl->segs[i].end / unit);
        fprintf(f, "\n\n");
        *(pass ? &b_rtx : &b_new) = block++;
    }
    if (fl->nacks) {
        fprintf(f, "# ACK: time (ms), acknowledgment (%s)\n", uname);
        for (size_t i = 0; i < fl->nacks; i++)
            fprintf(f, "%.6f %.6f\n", (double)fl->acks[i].t / 1e6, (double)fl->acks[i].ack / unit);
        fprintf(f, "\n\n");
        b_ack = block++;
        fprintf(f, "# receive window's right edge: time (ms), acknowledgment + window (%s)\n", uname);
        for (size_t i = 0; i < fl->nacks; i++)
            fprintf(f, "%.6f %.6f\n", (double)fl->acks[i].t / 1e6, (double)fl->acks[i].edge / unit);
        fprintf(f, "\n\n");
        b_win = block++;
    }
    uint64_t held[BRISK_HOLD_COUNT];
    band_totals(fl, held);
    int lanes = 0, lane[BRISK_HOLD_COUNT];
    for (int h = BRISK_HOLD_NONE + 1; h < BRISK_HOLD_COUNT; h++) {
        b_hold[h] = -1;
        if (!held[h])
            continue;
        lane[h] = ++lanes;
        fprintf(f, "# hold %s: from, to (ms)\n", brisk_hold_name(h));
        for (size_t i = 0; i < fl->nbands; i++)
            if (fl->bands[i].reason == h)
                fprintf(f, "%.6f %.6f\n", (double)fl->bands[i].t0 / 1e6, (double)fl->bands[i].t1 / 1e6);
        fprintf(f, "\n\n");
        b_hold[h] = block++;
    }
    fclose(f);

    FILE *g = popen("gnuplot 2>/dev/null", "w");
    if (!g) {
        fprintf(stderr, "brisk-lab: gnuplot not available; %s has the data\n", dat);
        return;
    }
    double x0 = (double)fl->w0 / 1e6, x1 = (double)fl->w1 / 1e6;
    int bands_h = 60 + 26 * (lanes ? lanes : 1);
    fprintf(g, "set terminal pngcairo size 1100,%d noenhanced\nset output '%s'\n", 600 + bands_h, png);
    fprintf(g, "set multiplot\nset lmargin at screen 0.15\nset rmargin at screen 0.97\n");
    fprintf(g, "set xrange [%.6f:%.6f]\nset grid\n", x0, x1);
    double split = (double)bands_h / (600.0 + bands_h);
    /* The graph: segments as bars from first to last byte, retransmissions red, the ACK and window lines. */
    fprintf(g, "set tmargin at screen 0.94\nset bmargin at screen %.4f\n", split + 0.06);
    struct brisk_addr cip = fl->have_end ? fl->end[0].tuple.laddr : brisk_addr_v4(0);
    char ctext[BRISK_ADDR_STRLEN + 2], stext[BRISK_ADDR_STRLEN + 2];
    fprintf(g, "set title \"flow %d%s%s: %s:%u %s %s:%u, time-sequence of %.3f to %.3f ms%s\"\n", fl->n,
            o->row[0] ? ", row " : "", o->row, lab_addr_text(&cip, ctext), fl->cport,
            fl->sender_client ? "->" : "<-", lab_addr_text(&fl->f.server_addr, stext), fl->f.port, x0, x1,
            fl->truncated ? " (cut at the graph's bound)" : "");
    fprintf(g,
            "set ylabel 'sequence number (%s, from the first byte)'\nset format x ''\nset key top left box "
            "opaque\n",
            uname);
    /* The segments set the scale; the window's edge, often far above them while the window is not what
     * limits the sender, leaves the top rather than flattening the picture. */
    uint64_t bottom = fl->segs[0].seq;
    for (size_t i = 0; i < fl->nsegs; i++)
        bottom = fl->segs[i].seq < bottom ? fl->segs[i].seq : bottom;
    double span = (double)(fl->top - bottom) / unit;
    double ymax = (double)fl->top / unit + span * 0.12;
    fprintf(g, "set yrange [%.6f:%.6f]\nplot ", (double)bottom / unit - span * 0.03, ymax);
    int first = 1;
    if (b_win >= 0) {
        int above = 1;
        for (size_t i = 0; i < fl->nacks && above; i++)
            above = (double)fl->acks[i].edge / unit > ymax;
        fprintf(g,
                "'%s' index %d using 1:2 with steps linewidth 1.5 linecolor rgb '#bcbd22' title 'receive "
                "window edge%s'",
                dat, b_win, above ? " (above the graph: not what held the sender)" : "");
        first = 0;
    }
    if (b_ack >= 0) {
        fprintf(g, "%s'%s' index %d using 1:2 with steps linewidth 1.5 linecolor rgb '#2ca02c' title 'ACK'",
                first ? "" : ", ", dat, b_ack);
        first = 0;
    }
    if (b_new >= 0) {
        fprintf(g,
                "%s'%s' index %d using 1:2:(0):($3-$2) with vectors nohead linewidth 1.2 linecolor rgb "
                "'#1f3f9f' title 'segment sent'",
                first ? "" : ", ", dat, b_new);
        first = 0;
    }
    if (b_rtx >= 0)
        fprintf(g,
                "%s'%s' index %d using 1:2:(0):($3-$2) with vectors nohead linewidth 3 linecolor rgb "
                "'#d62728' title 'retransmission (%zu)', '' index %d using 1:2 with points pointtype 7 "
                "pointsize 0.7 linecolor rgb '#d62728' notitle",
                first ? "" : ", ", dat, b_rtx, fl->nrtx, b_rtx);
    fprintf(g, "\n");
    /* The bands: one lane per reason that held the sender in the window, with its total. */
    fprintf(g, "set title ''\nset tmargin at screen %.4f\nset bmargin at screen %.4f\n", split + 0.005,
            60.0 / (600.0 + bands_h));
    fprintf(g, "set format x '%%g'\nset xlabel 'virtual time (ms)'\nset ylabel 'held by'\nunset key\n");
    fprintf(g, "set yrange [0.4:%d.6]\nset ytics (", lanes ? lanes : 1);
    int any = 0;
    for (int h = BRISK_HOLD_NONE + 1; h < BRISK_HOLD_COUNT; h++) {
        if (b_hold[h] < 0)
            continue;
        char t[32];
        double msv = (double)held[h] / 1e6;
        snprintf(t, sizeof(t), msv >= 1 ? "%.1f ms" : "%.3f ms", msv);
        fprintf(g, "%s'%s %s' %d", any ? ", " : "", brisk_hold_name(h), t, lane[h]);
        any = 1;
    }
    if (!any)
        fprintf(g, "'none' 1");
    fprintf(g, ")\nset grid noytics\n");
    if (!any) {
        fprintf(g,
                "set label 1 'no hold reason held the sender in this window' at graph 0.5, graph 0.5 center\n"
                "plot 1/0 notitle\n");
    } else {
        fprintf(g, "plot ");
        any = 0;
        for (int h = BRISK_HOLD_NONE + 1; h < BRISK_HOLD_COUNT; h++) {
            if (b_hold[h] < 0)
                continue;
            fprintf(g,
                    "%s'%s' index %d using (($1+$2)/2):(%d):1:2:(%d-0.4):(%d+0.4) with boxxyerror fillstyle "
                    "solid 1.0 noborder linecolor rgb '%s' notitle",
                    any ? ", " : "", dat, b_hold[h], lane[h], lane[h], lane[h], band_colour[h]);
            any = 1;
        }
        fprintf(g, "\n");
    }
    fprintf(g, "unset multiplot\n");
    int rc = pclose(g);
    if (rc != 0)
        fprintf(stderr, "brisk-lab: gnuplot failed drawing %s (status %d); %s has the data\n", png, rc, dat);
}

void lab_obs_finish(struct lab_obs *o)
{
    if (!o)
        return;
    uint64_t now = brisk_sim_now(o->w);
    for (int i = 0; i < o->nports; i++)
        brisk_sim_port_observe(o->ports[i], NULL, NULL);
    o->nports = 0;
    for (int k = 0; k < o->nfl; k++) {
        struct oflow *fl = &o->fl[k];
        if (!fl->n || !o->r->tseq)
            continue;
        close_window(fl, now);
        if (o->r->plot_dir && fl->state == 2)
            draw(o, fl);
    }
}

/* ---- the report ---- */

static void ss_object(struct lab_run *r, const char *key, const struct brisk_conn_info *i, const char *cc,
                      uint64_t now)
{
    char *text = lab_ss_json(i, cc, now);
    if (text)
        json_raw(&r->j, key, text);
    else
        json_null(&r->j, key);
    free(text);
}

static void json_flow(struct lab_run *r, const struct lab_obs *o, const struct oflow *fl)
{
    json_object_begin(&r->j, NULL);
    if (o->row[0])
        json_str(&r->j, "row", o->row);
    json_u64(&r->j, "flow", (uint64_t)fl->n);
    if (fl->have_end) {
        json_object_begin(&r->j, "end");
        ss_object(r, "client", &fl->end[0], fl->cc[0], fl->end_now);
        ss_object(r, "server", &fl->end[1], fl->cc[1], fl->end_now);
        json_object_end(&r->j);
    }
    if (r->ss_every_ns) {
        json_u64(&r->j, "every_ns", r->ss_every_ns);
        json_bool(&r->j, "samples_truncated", fl->samples_truncated);
        json_array_begin(&r->j, "samples");
        for (size_t k = 0; k < fl->nsamples; k++) {
            const struct sample *s = &fl->samples[k];
            json_object_begin(&r->j, NULL);
            json_u64(&r->j, "t_ns", s->t);
            for (int side = 0; side < 2; side++) {
                if (s->have[side])
                    ss_object(r, side ? "server" : "client", &s->i[side], fl->cc[side], s->t);
                else
                    json_null(&r->j, side ? "server" : "client");
            }
            json_object_end(&r->j);
        }
        json_array_end(&r->j);
    }
    if (r->tseq && fl->state == 2) {
        char name[128];
        uint64_t held[BRISK_HOLD_COUNT];
        graph_name(o, fl, name, sizeof(name));
        band_totals(fl, held);
        json_object_begin(&r->j, "tseq");
        json_str(&r->j, "graph", name);
        json_u64(&r->j, "from_ns", fl->w0);
        json_u64(&r->j, "to_ns", fl->w1);
        json_bool(&r->j, "truncated", fl->truncated);
        json_u64(&r->j, "segments", fl->nsegs);
        json_u64(&r->j, "retransmissions", fl->nrtx);
        json_u64(&r->j, "acks", fl->nacks);
        json_u64(&r->j, "bands", fl->nbands);
        json_object_begin(&r->j, "held_ns");
        for (int h = BRISK_HOLD_NONE + 1; h < BRISK_HOLD_COUNT; h++)
            json_u64(&r->j, brisk_hold_name(h), held[h]);
        json_object_end(&r->j);
        json_object_end(&r->j);
    }
    json_object_end(&r->j);
}

void lab_obs_report(struct lab_run *r, struct lab_obs *const *rows, const char *const *labels, int nrows,
                    int text)
{
    if (r->json_out) {
        json_array_begin(&r->j, "ss");
        for (int k = 0; k < nrows; k++)
            for (int i = 0; rows[k] && i < rows[k]->nfl; i++)
                json_flow(r, rows[k], &rows[k]->fl[i]);
        json_array_end(&r->j);
    }
    for (int t = 0; text && t < r->ntables; t++) {
        FILE *f = r->tables[t];
        int header = 1;
        for (int k = 0; k < nrows; k++) {
            for (int i = 0; rows[k] && i < rows[k]->nfl; i++) {
                const struct oflow *fl = &rows[k]->fl[i];
                if (!fl->have_end)
                    continue;
                if (header)
                    fprintf(f, "  ss -ti at the end of the run (each flow: client, then server)\n");
                fprintf(f, "  flow %d%s%s:\n", fl->n, labels && labels[k] ? ", row " : "",
                        labels && labels[k] ? labels[k] : "");
                lab_ss_print(f, "    ", &fl->end[0], fl->cc[0], fl->end_now, header);
                lab_ss_print(f, "    ", &fl->end[1], fl->cc[1], fl->end_now, 0);
                header = 0;
            }
        }
    }
}

void lab_obs_free(struct lab_obs *o)
{
    if (!o)
        return;
    for (int k = 0; k < o->nfl; k++) {
        free(o->fl[k].segs);
        free(o->fl[k].acks);
        free(o->fl[k].bands);
        free(o->fl[k].samples);
    }
    free(o);
}
