/*
 * app_bulk.c — a scripted bulk-transfer application on top of real brisk sockets (sim.h).
 *
 * Two endpoints, a client and a server, each a small state machine driven by its socket's events: on
 * WRITABLE it writes the next piece of its stream until `bytes` are queued, then shuts down its sending side;
 * on READABLE it reads everything available, hashing it, until the peer's FIN; when both are done it closes.
 * The stream is a pure function of (seed, position) — byte i is one byte of mix64(seed ^ (i / 8)) — so a
 * piece refused by a full send buffer is regenerated identically later, and the receiver's hash can be
 * compared with the sender's for a byte-exact verdict without keeping the data.
 */
#include <stdlib.h>
#include <string.h>

#include "brisk/sim.h"
#include "core/rand.h"

#define FNV_INIT 0xcbf29ce484222325ull

struct endpoint {
    brisk_sim_bulk *b;
    brisk_sim_host *h;
    brisk_sock *s;
    int client;
    uint64_t to_send;       /* bytes this side sends */
    uint64_t expect;        /* bytes this side should receive */
    uint64_t stream_seed;   /* its outgoing stream */
    int shut, fin_seen, closed;
    struct brisk_sim_bulk_side r;
};

struct brisk_sim_bulk {
    brisk_sim_world *w;
    struct brisk_sim_bulk_config c;
    uint32_t server_ip;
    brisk_sock *listener;
    struct endpoint cli, srv;
    uint64_t connected_at, first_byte_at, last_byte_at;
    uint8_t *wbuf, *rbuf;
};

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void gen(uint64_t seed, uint64_t pos, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t p = pos + i;
        out[i] = (uint8_t)(brisk_mix64(seed ^ (p >> 3)) >> (8 * (p & 7)));
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
    /* Read everything there is. */
    while (!e->fin_seen) {
        int64_t n = brisk_recv(e->s, b->rbuf, b->c.read_size, now);
        if (n > 0) {
            e->r.hash_received = fnv(e->r.hash_received, b->rbuf, (size_t)n);
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
        size_t n = left < b->c.write_size ? (size_t)left : b->c.write_size;
        gen(e->stream_seed, e->r.sent, b->wbuf, n);
        int64_t k = brisk_send(e->s, b->wbuf, n, 0, now);
        if (k <= 0) {
            if (k != BRISK_ERR_AGAIN)
                e->r.error = (int)k;
            break;
        }
        e->r.hash_sent = fnv(e->r.hash_sent, b->wbuf, (size_t)k);
        e->r.sent += (uint64_t)k;
    }
    if (!e->r.error && !e->shut && e->r.sent == e->to_send) {
        e->shut = 1;
        brisk_shutdown_write(e->s, now);
    }
    if (e->r.error || (e->shut && e->fin_seen)) {
        finish_side(e);
        e->closed = 1;
        brisk_sock *s = e->s;
        e->s = NULL;
        brisk_close(s, now);
    }
}

static void on_event(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct endpoint *e = ctx;
    (void)s;
    if ((ev & BRISK_EV_CONNECTED) && e->client)
        e->b->connected_at = now;
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
    int rc = brisk_connect(b->cli.s, b->server_ip, b->c.port, now);
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
    b->server_ip = server_ip;
    b->first_byte_at = b->last_byte_at = BRISK_TIME_NONE;
    b->wbuf = malloc(b->c.write_size);
    b->rbuf = malloc(b->c.read_size);
    int err;
    b->listener = brisk_socket(brisk_sim_host_stack(server), &err);
    if (!b->wbuf || !b->rbuf || !b->listener || brisk_bind(b->listener, server_ip, c->port) != BRISK_OK ||
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
        e->r.hash_sent = e->r.hash_received = FNV_INIT;
        e->r.done_at = BRISK_TIME_NONE;
        e->stream_seed = brisk_mix64(c->seed * 2 + (uint64_t)i + 1);
    }
    b->cli.to_send = (c->dir & BRISK_SIM_BULK_UP) ? c->bytes : 0;
    b->srv.to_send = (c->dir & BRISK_SIM_BULK_DOWN) ? c->bytes : 0;
    b->cli.expect = b->srv.to_send;
    b->srv.expect = b->cli.to_send;
    if (brisk_sim_at(w, c->start_at > brisk_sim_now(w) ? c->start_at : brisk_sim_now(w), start, b) != BRISK_OK) {
        brisk_sim_bulk_free(b);
        return NULL;
    }
    return b;
}

int brisk_sim_bulk_done(const brisk_sim_bulk *b)
{
    return b->cli.closed && b->srv.closed;
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
    o->hash_ok = o->complete && b->cli.r.hash_received == b->srv.r.hash_sent &&
                 b->srv.r.hash_received == b->cli.r.hash_sent;
}

void brisk_sim_bulk_free(brisk_sim_bulk *b)
{
    if (!b)
        return;
    uint64_t now = brisk_sim_now(b->w);
    if (b->cli.s)
        brisk_abort(b->cli.s, now);
    if (b->srv.s)
        brisk_abort(b->srv.s, now);
    if (b->listener)
        brisk_close(b->listener, now);
    free(b->wbuf);
    free(b->rbuf);
    free(b);
}
