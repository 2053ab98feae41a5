/*
 * onoff.c — the on/off source (onoff.h): bursts of writes separated by idle time, on one connection.
 *
 * What it exists to show happens below it, at the first write of a burst after an idle period: RFC 5681
 * §4.1 (and Linux's tcp_cwnd_restart) restart a connection that has sent nothing for more than an RTO from
 * min(IW, cwnd), because the ACK clock that justified the old cwnd is gone; tcp_slow_start_after_idle=0
 * keeps it. So whether a burst takes one round trip or a slow start's several is the stack's settings, not
 * this file: it writes each burst as fast as the socket takes it (a full send buffer waits for
 * BRISK_EV_WRITABLE) and measures. The idle time is the OFF period measured from the burst's completion at
 * the receiver (its last byte read), which is the sender's last ACK half a round trip later: an OFF period
 * longer than the RTO (200 ms at least by default) plus half an RTT makes every burst after the first
 * start from idle.
 *
 * Times are events of the world (brisk_sim_at): the connect at the start time, the end of an ON period
 * bounded by time, the end of each OFF period. A burst never starts from inside a socket callback of the
 * other host (the server completing a burst schedules the next one, even with off: 0), so neither stack is
 * re-entered from the other's. The per-burst figures are kept, one slot per cycle, allocated at the start:
 * a tool, not the stack.
 */
#include "lab/onoff.h"

#include <stdlib.h>
#include <string.h>

#include "lab/pdu.h"

enum phase { IDLE, ON, DRAIN, DONE };

struct lab_onoff {
    struct lab_onoff_config c;
    brisk_sim_world *w;
    brisk_sim_host *client, *server;
    struct brisk_addr server_addr;
    uint16_t port;
    brisk_sock *cli, *srv, *listener;
    enum phase phase;
    uint32_t done;        /* bursts completed */
    uint64_t written;     /* bytes the client has queued, every burst's */
    uint64_t burst_bytes; /* bytes queued in the current burst */
    uint64_t delivered;   /* bytes the server has read */
    uint64_t burst_at;    /* the current burst's first write */
    uint64_t on_until;    /* the current ON period's end when bounded by time */
    int first_write;      /* the current burst has written nothing yet */
    uint64_t *lat;        /* per burst: first write -> last byte read */
    uint32_t *cwnd;       /* per burst: the client's cwnd just after its first write */
    uint64_t first_ns, on_ns;
    int failed;
};

#define CHUNK 65536u
static const uint8_t zero[CHUNK]; /* the bytes' contents do not matter; read-only */

static void complete_burst(lab_onoff *x, uint64_t now);

/* The ON period is over: what is queued is the burst; it completes when the server has read it all. */
static void end_on(lab_onoff *x, uint64_t now)
{
    x->phase = DRAIN;
    if (x->delivered >= x->written)
        complete_burst(x, now);
}

/* Writes while the ON period lasts and the socket takes bytes. */
static void pump(lab_onoff *x, uint64_t now)
{
    while (x->phase == ON) {
        uint64_t want = x->c.burst ? x->c.burst - x->burst_bytes : CHUNK;
        size_t n = want < CHUNK ? (size_t)want : CHUNK;
        int64_t r = brisk_send(x->cli, zero, n, 0, now);
        if (r == BRISK_ERR_AGAIN)
            break; /* BRISK_EV_WRITABLE comes back here */
        if (r <= 0) {
            x->failed = 1;
            return;
        }
        if (x->first_write) { /* any restart after idle has happened now: the data is queued */
            struct brisk_conn_info ci;
            brisk_conn_info(x->cli, &ci);
            x->cwnd[x->done] = ci.cwnd;
            x->first_write = 0;
        }
        x->burst_bytes += (uint64_t)r;
        x->written += (uint64_t)r;
        if (x->c.burst && x->burst_bytes == x->c.burst)
            end_on(x, now);
    }
    brisk_sim_host_kick(x->client);
}

static void on_timer(void *ctx, uint64_t now)
{
    lab_onoff *x = ctx;
    /* A burst that ended by its bytes leaves its timer behind: it finds a later burst, not yet due. */
    if (x->phase == ON && now >= x->on_until)
        end_on(x, now);
}

static void begin_burst(void *ctx, uint64_t now)
{
    lab_onoff *x = ctx;
    if (x->failed || x->phase == DONE)
        return;
    x->phase = ON;
    x->burst_at = now;
    x->burst_bytes = 0;
    x->first_write = 1;
    if (x->c.on_ns) {
        x->on_until = now + x->c.on_ns;
        if (brisk_sim_at(x->w, x->on_until, on_timer, x) != BRISK_OK) {
            x->failed = 1;
            return;
        }
    }
    pump(x, now);
}

static void complete_burst(lab_onoff *x, uint64_t now)
{
    uint64_t t = now - x->burst_at;
    x->lat[x->done] = t;
    if (x->done == 0)
        x->first_ns = t;
    x->on_ns += t;
    if (++x->done == x->c.cycles) {
        x->phase = DONE;
        return;
    }
    x->phase = IDLE;
    if (brisk_sim_at(x->w, now + x->c.off_ns, begin_burst, x) != BRISK_OK)
        x->failed = 1;
}

static void on_client(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    lab_onoff *x = ctx;
    (void)s;
    if (ev & BRISK_EV_ERROR) {
        x->failed = 1;
        return;
    }
    if (ev & BRISK_EV_CONNECTED)
        begin_burst(x, now);
    else if (ev & BRISK_EV_WRITABLE)
        pump(x, now);
}

static void on_server(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    lab_onoff *x = ctx;
    if (ev & BRISK_EV_ERROR)
        x->failed = 1;
    uint8_t sink[16384]; /* the bytes go nowhere */
    int64_t n;
    while ((n = brisk_recv(s, sink, sizeof(sink), now)) > 0)
        x->delivered += (uint64_t)n;
    if (x->phase == DRAIN && x->delivered >= x->written)
        complete_burst(x, now);
}

static void on_listen(void *ctx, brisk_sock *l, unsigned ev, uint64_t now)
{
    lab_onoff *x = ctx;
    (void)ev;
    (void)now;
    int err;
    brisk_sock *s = brisk_accept(l, &err);
    if (!s)
        return;
    if (x->srv) { /* one connection is the source; another is no part of it */
        brisk_abort(s, now);
        return;
    }
    x->srv = s;
    brisk_sock_set_callback(s, on_server, x);
}

static void do_connect(void *ctx, uint64_t now)
{
    lab_onoff *x = ctx;
    if (brisk_connect_addr(x->cli, &x->server_addr, x->port, now) != BRISK_ERR_INPROGRESS)
        x->failed = 1;
    brisk_sim_host_kick(x->client);
}

lab_onoff *lab_onoff_start(brisk_sim_world *w, brisk_sim_host *client, brisk_sim_host *server,
                           const struct brisk_addr *server_addr,
                           const struct lab_onoff_config *c)
{
    if (!w || !client || !server || c->cycles < 1 || c->cycles > 1000000 || (!c->burst && !c->on_ns))
        return NULL;
    lab_onoff *x = calloc(1, sizeof(*x));
    if (!x)
        return NULL;
    x->c = *c;
    x->w = w;
    x->client = client;
    x->server = server;
    x->server_addr = *server_addr;
    x->port = c->port ? c->port : 7001;
    x->lat = calloc(c->cycles, sizeof(*x->lat));
    x->cwnd = calloc(c->cycles, sizeof(*x->cwnd));
    int err = 0;
    if (x->lat && x->cwnd) {
        x->listener = brisk_socket(brisk_sim_host_stack(server), &err);
        x->cli = brisk_socket(brisk_sim_host_stack(client), &err);
    }
    if (!x->listener || !x->cli || brisk_bind_addr(x->listener, server_addr, x->port) != BRISK_OK ||
        brisk_listen(x->listener, 4) != BRISK_OK) {
        lab_onoff_free(x, 0);
        return NULL;
    }
    brisk_sock_set_callback(x->listener, on_listen, x);
    brisk_sock_set_callback(x->cli, on_client, x);
    uint64_t now = brisk_sim_now(w);
    if (brisk_sim_at(w, c->start_ns > now ? c->start_ns : now, do_connect, x) != BRISK_OK) {
        lab_onoff_free(x, 0);
        return NULL;
    }
    return x;
}

int lab_onoff_done(const lab_onoff *x)
{
    return x->phase == DONE || x->failed;
}

uint64_t lab_onoff_delivered(const lab_onoff *x)
{
    return x->delivered;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

void lab_onoff_result(lab_onoff *x, int interrupted, struct lab_onoff_result *out)
{
    memset(out, 0, sizeof(*out));
    out->ok = x->phase == DONE && !x->failed && !interrupted;
    out->done = x->done;
    out->delivered = x->delivered;
    out->on_ns = x->on_ns;
    out->first_ns = x->first_ns;
    if (x->cli)
        brisk_conn_info(x->cli, &out->client);
    qsort(x->lat, x->done, sizeof(*x->lat), cmp_u64);
    qsort(x->cwnd, x->done, sizeof(*x->cwnd), cmp_u32);
    out->lat = x->lat;
    out->cwnd = x->cwnd;
}

void lab_onoff_free(lab_onoff *x, uint64_t now)
{
    if (!x)
        return;
    lab_pair_end(x->cli, x->srv, x->listener, now);
    free(x->lat);
    free(x->cwnd);
    free(x);
}
