/*
 * app_rr.c — a scripted request / response application on real brisk sockets (sim.h): many flows of
 * small transactions back to back, like netperf TCP_RR — the workload of seed 004, where re-arming the
 * retransmit timer on every send and ACK made the timer base the bottleneck.
 *
 * Each flow is a client socket and the server socket accept() gave for it. Nothing is sent until every flow
 * is connected, so that the measurement window (all connected -> last response) holds only transactions: no
 * handshakes, no closes. Timer work is read from each host's counters at both ends of the window. A
 * transaction's time runs from the client's send of the request to its read of the last response byte.
 */
#include <stdlib.h>
#include <string.h>

#include "brisk/sim.h"

#define RR_MAX_MSG 65536u

struct rr_flow {
    brisk_sim_rr *r;
    brisk_sock *cs, *ss; /* client socket, server socket */
    uint32_t got;        /* bytes of the current request (server) / response (client) read */
    uint32_t srv_got;
    uint32_t done; /* transactions completed */
    uint64_t sent_at;
    int failed, connected;
};

struct brisk_sim_rr {
    brisk_sim_world *w;
    brisk_sim_host *client, *server;
    struct brisk_sim_rr_config c;
    struct brisk_addr server_addr;
    brisk_sock *listener;
    struct rr_flow *flows;
    uint32_t connected, finished;
    uint64_t *lat; /* flows x transactions */
    uint64_t nlat;
    uint8_t *buf;
    struct brisk_counters cc0, sc0, cc1, sc1; /* client / server counters at the window's ends */
    uint64_t measure_start, measure_end;
    int measured; /* the window closed (its times may be 0 on a zero-delay link) */
};

static void snapshot(brisk_sim_rr *r, struct brisk_counters *c, struct brisk_counters *s)
{
    brisk_stack_get_counters(brisk_sim_host_stack(r->client), c);
    brisk_stack_get_counters(brisk_sim_host_stack(r->server), s);
}

static void flow_fail(struct rr_flow *f)
{
    if (f->failed || f->done == f->r->c.transactions)
        return;
    f->failed = 1;
    f->r->finished++;
}

static void send_request(struct rr_flow *f, uint64_t now)
{
    brisk_sim_rr *r = f->r;
    f->got = 0;
    f->sent_at = now;
    if (brisk_send(f->cs, r->buf, r->c.request_size, 0, now) != (int64_t)r->c.request_size)
        flow_fail(f);
}

static void start_all(brisk_sim_rr *r, uint64_t now)
{
    r->measure_start = now;
    snapshot(r, &r->cc0, &r->sc0);
    for (uint32_t i = 0; i < r->c.flows; i++)
        if (!r->flows[i].failed)
            send_request(&r->flows[i], now);
}

static void drain(brisk_sock *s, brisk_sim_rr *r, uint32_t *got, uint64_t now)
{
    for (;;) {
        int64_t n = brisk_recv(s, r->buf, RR_MAX_MSG, now);
        if (n <= 0)
            return;
        *got += (uint32_t)n;
    }
}

static void on_client(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct rr_flow *f = ctx;
    brisk_sim_rr *r = f->r;
    (void)s;
    if (ev & (BRISK_EV_ERROR | BRISK_EV_CLOSED)) {
        flow_fail(f);
        return;
    }
    if ((ev & BRISK_EV_CONNECTED) && !f->connected) {
        f->connected = 1;
        if (++r->connected == r->c.flows)
            start_all(r, now);
    }
    if (!(ev & BRISK_EV_READABLE) || f->failed)
        return;
    drain(f->cs, r, &f->got, now);
    if (f->got < r->c.response_size || f->done == r->c.transactions)
        return;
    r->lat[r->nlat++] = now - f->sent_at;
    if (++f->done == r->c.transactions) {
        if (++r->finished == r->c.flows) {
            r->measure_end = now;
            r->measured = 1;
            snapshot(r, &r->cc1, &r->sc1);
        }
        return;
    }
    send_request(f, now);
}

static void on_server(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct rr_flow *f = ctx;
    brisk_sim_rr *r = f->r;
    if (ev & (BRISK_EV_ERROR | BRISK_EV_CLOSED)) {
        flow_fail(f);
        return;
    }
    if (!(ev & BRISK_EV_READABLE))
        return;
    drain(s, r, &f->srv_got, now);
    while (f->srv_got >= r->c.request_size) {
        f->srv_got -= r->c.request_size;
        if (brisk_send(s, r->buf, r->c.response_size, 0, now) != (int64_t)r->c.response_size)
            flow_fail(f);
    }
}

static void on_accept(void *ctx, brisk_sock *ls, unsigned ev, uint64_t now)
{
    brisk_sim_rr *r = ctx;
    (void)ev;
    int err;
    brisk_sock *s;
    while ((s = brisk_accept(ls, &err)) != NULL) {
        struct brisk_conn_info ci;
        brisk_conn_info(s, &ci);
        uint32_t i = (uint32_t)(ci.rport - 20000u); /* client ports are 20000 + flow index */
        if (ci.rport < 20000u || i >= r->c.flows || r->flows[i].ss) {
            brisk_abort(s, now);
            continue;
        }
        r->flows[i].ss = s;
        if (r->c.nodelay)
            brisk_setsockopt(s, BRISK_SO_NODELAY, 1, now);
        brisk_sock_set_callback(s, on_server, &r->flows[i]);
    }
}

static void start(void *ctx, uint64_t now)
{
    brisk_sim_rr *r = ctx;
    brisk_stack *st = brisk_sim_host_stack(r->client);
    for (uint32_t i = 0; i < r->c.flows; i++) {
        struct rr_flow *f = &r->flows[i];
        int err;
        f->cs = brisk_socket(st, &err);
        if (!f->cs || brisk_bind(f->cs, 0, (uint16_t)(20000u + i)) != BRISK_OK) {
            flow_fail(f);
            continue;
        }
        if (r->c.nodelay)
            brisk_setsockopt(f->cs, BRISK_SO_NODELAY, 1, now);
        brisk_sock_set_callback(f->cs, on_client, f);
        if (brisk_connect_addr(f->cs, &r->server_addr, r->c.port, now) != BRISK_ERR_INPROGRESS)
            flow_fail(f);
    }
    brisk_sim_host_kick(r->client);
}

brisk_sim_rr *brisk_sim_rr_start(brisk_sim_world *w, brisk_sim_host *client, brisk_sim_host *server,
                                 uint32_t server_ip, const struct brisk_sim_rr_config *c)
{
    if (!w || !client || !server || !c || c->flows == 0 || c->flows > 45000 || c->request_size > RR_MAX_MSG ||
        c->response_size > RR_MAX_MSG)
        return NULL;
    brisk_sim_rr *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->w = w;
    r->client = client;
    r->server = server;
    r->server_addr = c->server_addr.family != BRISK_AF_UNSPEC ? c->server_addr : brisk_addr_v4(server_ip);
    r->c = *c;
    if (!r->c.request_size)
        r->c.request_size = 1;
    if (!r->c.response_size)
        r->c.response_size = 1;
    if (!r->c.transactions)
        r->c.transactions = 100;
    if (!r->c.port)
        r->c.port = 5001;
    r->flows = calloc(r->c.flows, sizeof(*r->flows));
    r->lat = calloc((size_t)r->c.flows * r->c.transactions, sizeof(*r->lat));
    r->buf = calloc(1, RR_MAX_MSG);
    int err;
    r->listener = brisk_socket(brisk_sim_host_stack(server), &err);
    if (!r->flows || !r->lat || !r->buf || !r->listener || brisk_bind_addr(r->listener, &r->server_addr, r->c.port) ||
        brisk_listen(r->listener, (int)(r->c.flows < 4096 ? r->c.flows : 4096))) {
        brisk_sim_rr_free(r);
        return NULL;
    }
    memset(r->buf, 'r', RR_MAX_MSG);
    for (uint32_t i = 0; i < r->c.flows; i++)
        r->flows[i].r = r;
    brisk_sock_set_callback(r->listener, on_accept, r);
    uint64_t at = c->start_at > brisk_sim_now(w) ? c->start_at : brisk_sim_now(w);
    if (brisk_sim_at(w, at, start, r) != BRISK_OK) {
        brisk_sim_rr_free(r);
        return NULL;
    }
    return r;
}

int brisk_sim_rr_done(const brisk_sim_rr *r)
{
    return r && r->finished == r->c.flows;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void brisk_sim_rr_result(const brisk_sim_rr *r, struct brisk_sim_rr_result *o)
{
    memset(o, 0, sizeof(*o));
    if (!r)
        return;
    o->transactions = r->nlat;
    for (uint32_t i = 0; i < r->c.flows; i++)
        o->errors += (uint64_t)r->flows[i].failed;
    o->measure_start = r->measure_start;
    o->measure_end = r->measure_end;
    if (r->nlat) {
        qsort(r->lat, r->nlat, sizeof(r->lat[0]), cmp_u64); /* order only: the set is the result */
        o->lat_min = r->lat[0];
        o->lat_p50 = r->lat[r->nlat / 2];
        o->lat_p99 = r->lat[(r->nlat * 99) / 100];
        o->lat_max = r->lat[r->nlat - 1];
    }
    if (r->measured) {
        o->client_wheel_ops = r->cc1.TCPTimerWheelOps - r->cc0.TCPTimerWheelOps;
        o->server_wheel_ops = r->sc1.TCPTimerWheelOps - r->sc0.TCPTimerWheelOps;
        o->client_timer_fires = r->cc1.TimerFires - r->cc0.TimerFires;
        o->server_timer_fires = r->sc1.TimerFires - r->sc0.TimerFires;
        o->tlp_probes =
            r->cc1.TCPLossProbes - r->cc0.TCPLossProbes + r->sc1.TCPLossProbes - r->sc0.TCPLossProbes;
        o->rtos = r->cc1.TCPTimeouts - r->cc0.TCPTimeouts + r->sc1.TCPTimeouts - r->sc0.TCPTimeouts;
    }
}

const uint64_t *brisk_sim_rr_latencies(const brisk_sim_rr *r, size_t *n)
{
    *n = r ? (size_t)r->nlat : 0;
    return r ? r->lat : NULL;
}

void brisk_sim_rr_free(brisk_sim_rr *r)
{
    if (!r)
        return;
    uint64_t now = brisk_sim_now(r->w);
    if (r->flows) {
        for (uint32_t i = 0; i < r->c.flows; i++) {
            if (r->flows[i].cs)
                brisk_abort(r->flows[i].cs, now);
            if (r->flows[i].ss)
                brisk_abort(r->flows[i].ss, now);
        }
    }
    if (r->listener)
        brisk_close(r->listener, now);
    free(r->flows);
    free(r->lat);
    free(r->buf);
    free(r);
}
