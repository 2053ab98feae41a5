/*
 * app_bulk.c — a scripted bulk-transfer application on top of real brisk sockets (sim.h).
 *
 * Two endpoints, a client and a server, each a small state machine driven by its socket's events: on
 * WRITABLE it writes the next piece of its stream until `bytes` are queued, then shuts down its sending side;
 * on READABLE it reads everything available, hashing it, until the peer's FIN; when both are done it closes.
 * The stream is a pure function of (seed, position). Byte p of a stream is byte (p mod P) of a seeded
 * sequence — bytes 8k..8k+7 of the sequence are mix64(seed ^ k), little-endian — where the period P is the
 * stream's length when that is at most PERIOD_MAX, and otherwise PERIOD_MAX, a prime (1,048,573), so that no
 * plausible mistake (an offset off by a power of two, a 2^32 sequence wrap) lands on a whole number of
 * periods. Each stream is generated once into a table of P bytes plus one I/O's worth repeated at the end,
 * so any write or read of the stream is one contiguous slice of it: the sender writes straight from the
 * table and the receiver compares against it with memcmp, byte for byte, without either side generating
 * anything per byte. (The application's own cost is in every benchmark figure that uses it, so it is kept
 * to one compare per received byte.)
 */
#include <stdlib.h>
#include <string.h>

#include "brisk/sim.h"
#include "core/rand.h"

/* Streams longer than this repeat with this period (a prime, see above). */
#define PERIOD_MAX 1048573u

/* One direction's data: the period and the table (period + span bytes, the start repeated at the end). */
struct stream {
    uint64_t seed;
    uint32_t period; /* 0: the stream is empty */
    uint8_t *tab;
};

struct endpoint {
    brisk_sim_bulk *b;
    brisk_sim_host *h;
    brisk_sock *s;
    int client;
    uint64_t to_send; /* bytes this side sends */
    uint64_t expect;  /* bytes this side should receive */
    int shut, fin_seen, closed;
    int finished; /* the connection is over: BRISK_EV_CLOSED came */
    const struct stream *out, *in; /* the stream it sends, the one it receives */
    struct brisk_sim_bulk_side r;
};

struct brisk_sim_bulk {
    brisk_sim_world *w;
    struct brisk_sim_bulk_config c;
    struct brisk_addr server;
    brisk_sock *listener;
    struct endpoint cli, srv;
    uint64_t connected_at, first_byte_at, last_byte_at;
    struct stream streams[2]; /* client -> server, server -> client */
};

/* Bytes [pos, pos + n) of the stream `seed`. Whole 8-byte blocks are stored as one little-endian word. */
static void gen(uint64_t seed, uint64_t pos, uint8_t *out, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint64_t p = pos + i;
        uint64_t w = brisk_mix64(seed ^ (p >> 3));
        unsigned off = (unsigned)(p & 7);
        size_t take = 8 - off < n - i ? 8 - off : n - i;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (take == 8) {
            memcpy(out + i, &w, 8);
            i += 8;
            continue;
        }
#endif
        for (size_t k = 0; k < take; k++)
            out[i + k] = (uint8_t)(w >> (8 * (off + k)));
        i += take;
    }
}

/* Bytes [pos, pos + n) of a stream, n <= the span the table was built for: one slice of its table. */
static const uint8_t *slice(const struct stream *st, uint64_t pos)
{
    return st->tab + pos % st->period;
}

/* Fills a stream's table: its period, then the first `span` bytes again so every slice is contiguous. */
static int stream_init(struct stream *st, uint64_t seed, uint64_t bytes, uint32_t span)
{
    st->seed = seed;
    if (!bytes)
        return 0;
    st->period = bytes < PERIOD_MAX ? (uint32_t)bytes : PERIOD_MAX;
    st->tab = malloc((size_t)st->period + span);
    if (!st->tab)
        return -1;
    gen(seed, 0, st->tab, st->period);
    for (uint32_t done = 0; done < span;) { /* span may exceed a short period: repeat it as often as needed */
        uint32_t n = span - done < st->period ? span - done : st->period;
        memcpy(st->tab + st->period + done, st->tab, n);
        done += n;
    }
    return 0;
}

/* Checks received bytes, stream position pos on, against the peer's stream; records the first difference. */
static void check(struct endpoint *e, uint64_t pos, const uint8_t *data, size_t n)
{
    if (e->r.bad_at != UINT64_MAX)
        return;
    if (pos + n > e->expect) { /* more than the peer sends: the first extra byte is wrong */
        e->r.bad_at = e->expect > pos ? e->expect : pos;
        return;
    }
    const uint8_t *exp = slice(e->in, pos);
    if (memcmp(exp, data, n) == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        if (exp[i] != data[i]) {
            e->r.bad_at = pos + i;
            return;
        }
    }
}

static void finish_side(struct endpoint *e)
{
    if (e->s)
        brisk_conn_info(e->s, &e->r.info);
}

static void pump(struct endpoint *e, uint64_t now)
{
    brisk_sim_bulk *b = e->b;
    if (!e->s || e->closed)
        return;
    /* Read everything there is, read_size bytes per read. Zero-copy (brisk_recv_peek): the bytes are checked
     * where they lie in the receive stream, then consumed — exactly what a brisk_recv of read_size would
     * have taken, so the stack sees the same reads. */
    while (!e->fin_seen) {
        size_t got = 0;
        int64_t n = 0;
        while (got < b->c.read_size) {
            const uint8_t *p;
            n = brisk_recv_peek(e->s, got, &p);
            if (n <= 0)
                break;
            size_t take = (uint64_t)n < b->c.read_size - got ? (size_t)n : b->c.read_size - got;
            check(e, e->r.received + got, p, take);
            got += take;
        }
        if (got > 0)
            n = brisk_recv_consume(e->s, got, now);
        if (n > 0) {
            e->r.received += (uint64_t)n;
            if (b->first_byte_at == BRISK_TIME_NONE)
                b->first_byte_at = now;
            b->last_byte_at = now;
            continue;
        }
        if (n == 0) {
            e->fin_seen = 1;
            e->r.done_at = now;
        } else if (n != BRISK_ERR_AGAIN) {
            e->r.error = (int)n;
        }
        break;
    }
    /* Write until the buffer refuses. */
    while (!e->r.error && e->r.sent < e->to_send) {
        uint64_t left = e->to_send - e->r.sent;
        uint32_t n = left < b->c.write_size ? (uint32_t)left : b->c.write_size;
        int64_t k = brisk_send(e->s, slice(e->out, e->r.sent), n, 0, now);
        if (k <= 0) {
            if (k != BRISK_ERR_AGAIN)
                e->r.error = (int)k;
            break;
        }
        e->r.sent += (uint64_t)k;
    }
    if (!e->r.error && !e->shut && e->r.sent == e->to_send) {
        e->shut = 1;
        brisk_shutdown_write(e->s, now);
    }
    if (e->r.error) {
        finish_side(e);
        e->closed = 1;
        brisk_sock *s = e->s;
        e->s = NULL;
        brisk_close(s, now);
    } else if (e->shut && e->fin_seen && e->finished) {
        /* Done when the connection is: everything sent was acknowledged, the FIN too. Not when the peer's FIN
         * was read — a receiving side shuts down at once, so a sender sees that FIN while the last send
         * buffer's worth of its data is still queued, and the connection's counters and hold times
         * (brisk_sim_bulk_result) must cover its delivery. The socket stays open until brisk_sim_bulk_free
         * for them; both directions are shut, so holding the handle changes nothing on the wire. */
        e->closed = 1;
    }
}

static void on_event(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct endpoint *e = ctx;
    (void)s;
    if ((ev & BRISK_EV_CONNECTED) && e->client)
        e->b->connected_at = now;
    if (ev & BRISK_EV_CLOSED)
        e->finished = 1;
    if (ev & BRISK_EV_ERROR) {
        e->r.error = brisk_sock_error(e->s);
        finish_side(e);
        e->closed = 1;
        brisk_sock *dead = e->s;
        e->s = NULL;
        brisk_close(dead, now);
        return;
    }
    pump(e, now);
}

static void on_accept(void *ctx, brisk_sock *ls, unsigned ev, uint64_t now)
{
    brisk_sim_bulk *b = ctx;
    if (!(ev & BRISK_EV_ACCEPT))
        return;
    int err;
    brisk_sock *s;
    while ((s = brisk_accept(ls, &err)) != NULL) {
        if (b->srv.s) { /* one transfer per bulk: refuse extras */
            brisk_abort(s, now);
            continue;
        }
        b->srv.s = s;
        brisk_sock_set_callback(s, on_event, &b->srv);
        pump(&b->srv, now);
    }
}

static void start(void *ctx, uint64_t now)
{
    brisk_sim_bulk *b = ctx;
    int err;
    b->cli.s = brisk_socket(brisk_sim_host_stack(b->cli.h), &err);
    if (!b->cli.s) {
        b->cli.r.error = err;
        b->cli.closed = 1;
        return;
    }
    brisk_sock_set_callback(b->cli.s, on_event, &b->cli);
    int rc = brisk_connect_addr(b->cli.s, &b->server, b->c.port, now);
    if (rc != BRISK_ERR_INPROGRESS) {
        b->cli.r.error = rc;
        b->cli.closed = 1;
        brisk_close(b->cli.s, now);
        b->cli.s = NULL;
    }
    brisk_sim_host_kick(b->cli.h);
}

brisk_sim_bulk *brisk_sim_bulk_start(brisk_sim_world *w, brisk_sim_host *client, brisk_sim_host *server,
                                     uint32_t server_ip, const struct brisk_sim_bulk_config *c)
{
    if (!w || !client || !server || !c || !c->port || !c->dir)
        return NULL;
    brisk_sim_bulk *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->w = w;
    b->c = *c;
    if (!b->c.write_size)
        b->c.write_size = 65536;
    if (!b->c.read_size)
        b->c.read_size = 65536;
    b->server = c->server_addr.family != BRISK_AF_UNSPEC ? c->server_addr : brisk_addr_v4(server_ip);
    b->first_byte_at = b->last_byte_at = BRISK_TIME_NONE;
    int err;
    b->listener = brisk_socket(brisk_sim_host_stack(server), &err);
    if (!b->listener || brisk_bind_addr(b->listener, &b->server, c->port) != BRISK_OK ||
        brisk_listen(b->listener, 16) != BRISK_OK) {
        brisk_sim_bulk_free(b);
        return NULL;
    }
    brisk_sock_set_callback(b->listener, on_accept, b);
    struct endpoint *ends[2] = {&b->cli, &b->srv};
    for (int i = 0; i < 2; i++) {
        struct endpoint *e = ends[i];
        e->b = b;
        e->client = i == 0;
        e->h = i == 0 ? client : server;
        e->r.bad_at = UINT64_MAX;
        e->r.done_at = BRISK_TIME_NONE;
    }
    b->cli.to_send = (c->dir & BRISK_SIM_BULK_UP) ? c->bytes : 0;
    b->srv.to_send = (c->dir & BRISK_SIM_BULK_DOWN) ? c->bytes : 0;
    uint32_t span = b->c.write_size > b->c.read_size ? b->c.write_size : b->c.read_size;
    for (int i = 0; i < 2; i++) {
        uint64_t seed = brisk_mix64(c->seed * 2 + (uint64_t)i + 1);
        if (stream_init(&b->streams[i], seed, ends[i]->to_send, span) != 0) {
            brisk_sim_bulk_free(b);
            return NULL;
        }
    }
    b->cli.out = b->srv.in = &b->streams[0];
    b->srv.out = b->cli.in = &b->streams[1];
    b->cli.expect = b->srv.to_send;
    b->srv.expect = b->cli.to_send;
    if (brisk_sim_at(w, c->start_at > brisk_sim_now(w) ? c->start_at : brisk_sim_now(w), start, b) !=
        BRISK_OK) {
        brisk_sim_bulk_free(b);
        return NULL;
    }
    return b;
}

int brisk_sim_bulk_done(const brisk_sim_bulk *b)
{
    return b->cli.closed && b->srv.closed;
}

int brisk_sim_bulk_error(const brisk_sim_bulk *b)
{
    return b->cli.r.error != BRISK_OK ? b->cli.r.error : b->srv.r.error;
}

uint64_t brisk_sim_bulk_received(const brisk_sim_bulk *b)
{
    return b->cli.r.received + b->srv.r.received;
}

void brisk_sim_bulk_result(const brisk_sim_bulk *b, struct brisk_sim_bulk_result *o)
{
    memset(o, 0, sizeof(*o));
    o->client = b->cli.r;
    o->server = b->srv.r;
    if (b->cli.s)
        brisk_conn_info(b->cli.s, &o->client.info);
    if (b->srv.s)
        brisk_conn_info(b->srv.s, &o->server.info);
    o->connected_at = b->connected_at;
    o->first_byte_at = b->first_byte_at;
    o->last_byte_at = b->last_byte_at;
    o->complete = b->cli.fin_seen && b->srv.fin_seen && b->cli.r.received == b->cli.expect &&
                  b->srv.r.received == b->srv.expect && b->cli.r.sent == b->cli.to_send &&
                  b->srv.r.sent == b->srv.to_send && !b->cli.r.error && !b->srv.r.error;
    o->hash_ok = o->complete && b->cli.r.bad_at == UINT64_MAX && b->srv.r.bad_at == UINT64_MAX;
}

void brisk_sim_bulk_free(brisk_sim_bulk *b)
{
    if (!b)
        return;
    uint64_t now = brisk_sim_now(b->w);
    struct endpoint *ends[2] = {&b->cli, &b->srv};
    for (int i = 0; i < 2; i++) {
        if (!ends[i]->s)
            continue;
        if (ends[i]->closed)
            brisk_close(ends[i]->s, now); /* finished: both directions already shut */
        else
            brisk_abort(ends[i]->s, now); /* cut short (the run's time limit) */
    }
    if (b->listener)
        brisk_close(b->listener, now);
    free(b->streams[0].tab);
    free(b->streams[1].tab);
    free(b);
}
