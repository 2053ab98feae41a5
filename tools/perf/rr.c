/*
 * rr.c — request/response: a client that measures transaction latency and an echo server to answer it.
 *
 * The client keeps one transaction outstanding per connection (netperf's TCP_RR): it writes a request of
 * req_size bytes, waits until resp_size bytes have come back, records the time between the two, and sends the
 * next request at once. TCP_NODELAY is on by default — a small write must leave at once, which is what the
 * test is about (Nagle and auto-corking are what would delay it). The run ends after the duration or the
 * transaction count; the report gives transactions per second and latency percentiles (nearest rank).
 *
 * The echo server writes back every byte it reads. When the send buffer refuses, it keeps the rest and stops
 * reading from that connection until WRITABLE, so a fast writer cannot make it buffer without bound. It
 * closes its side after the client's FIN once everything is echoed.
 */
#include <stdlib.h>
#include <string.h>

#include "perf/perf.h"

/* ---- client ---- */

#define RR_GRACE_NS (10 * BRISK_NSEC_PER_SEC) /* after the duration, how long an answer may still take */

struct rr_conn {
    struct perf_rr_client *c;
    brisk_sock *s;
    int connected;
    uint32_t req_off;  /* bytes of the current request written */
    uint32_t resp_got; /* bytes of the current response read */
    uint64_t sent_at;  /* when the request's first byte was written */
    int busy;          /* a transaction is outstanding */
};

struct perf_rr_client {
    struct perf_env env;
    struct perf_rr_params p;
    struct rr_conn *conns;
    uint8_t *req, *resp;
    uint64_t *lat; /* one latency per transaction */
    uint64_t nlat, cap;
    uint64_t start_ns, last_ns, end_at;
    int stopping, done, complete, error;
    char err[PERF_ERR_LEN];
    int in_step, again;
    uint64_t last_deadline; /* as last reported through env.kick */
};

static void rr_step(struct perf_rr_client *c, uint64_t now);

static void rr_event(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    (void)s;
    (void)ev;
    rr_step(((struct rr_conn *)ctx)->c, now);
}

static void rr_stop(struct perf_rr_client *c, int error, const char *why, uint64_t now)
{
    if (c->done)
        return;
    c->done = 1;
    c->complete = error == 0;
    if (error) {
        c->error = error;
        snprintf(c->err, sizeof(c->err), "%s", why);
        if (c->env.log)
            fprintf(c->env.log, "brisk-perf rr: %s\n", why);
    }
    for (uint32_t i = 0; i < c->p.parallel; i++) {
        if (c->conns[i].s) {
            brisk_sock *s = c->conns[i].s;
            c->conns[i].s = NULL;
            if (error || c->conns[i].busy)
                brisk_abort(s, now);
            else
                brisk_close(s, now);
        }
    }
}

static int record(struct perf_rr_client *c, uint64_t lat)
{
    if (c->nlat == c->cap) {
        uint64_t n = c->cap ? c->cap * 2 : 4096;
        uint64_t *p = realloc(c->lat, n * sizeof(*p));
        if (!p)
            return BRISK_ERR_NOMEM;
        c->lat = p;
        c->cap = n;
    }
    c->lat[c->nlat++] = lat;
    return BRISK_OK;
}

static uint64_t stamp(const struct perf_rr_client *c, uint64_t now)
{
    return c->env.clock ? c->env.clock(c->env.clock_ctx) : now;
}

/* Advances one connection as far as it can go; returns an error or BRISK_OK. */
static int rr_conn_pump(struct perf_rr_client *c, struct rr_conn *k, uint64_t now)
{
    int e = brisk_sock_error(k->s);
    if (e)
        return e;
    for (;;) {
        if (!k->busy) {
            if (c->stopping)
                return BRISK_OK;
            k->busy = 1;
            k->req_off = 0;
            k->resp_got = 0;
            k->sent_at = stamp(c, now);
            if (!c->start_ns) {
                c->start_ns = k->sent_at;
                if (c->p.duration_ns && !c->p.count)
                    c->end_at = now + c->p.duration_ns;
            }
        }
        while (k->req_off < c->p.req_size) {
            int64_t n = brisk_send(k->s, c->req + k->req_off, c->p.req_size - k->req_off, 0, now);
            if (n == BRISK_ERR_AGAIN)
                return BRISK_OK;
            if (n < 0)
                return (int)n;
            k->connected = 1;
            k->req_off += (uint32_t)n;
        }
        while (k->resp_got < c->p.resp_size) {
            int64_t n = brisk_recv(k->s, c->resp, c->p.resp_size - k->resp_got, now);
            if (n == BRISK_ERR_AGAIN)
                return BRISK_OK;
            if (n == 0)
                return BRISK_ERR_RESET; /* the server closed in the middle of a transaction */
            if (n < 0)
                return (int)n;
            k->resp_got += (uint32_t)n;
        }
        k->busy = 0;
        uint64_t t = stamp(c, now);
        c->last_ns = t;
        int rc = record(c, t > k->sent_at ? t - k->sent_at : 0);
        if (rc < 0)
            return rc;
        if (c->p.count && c->nlat >= c->p.count)
            c->stopping = 1;
    }
}

static void rr_step(struct perf_rr_client *c, uint64_t now)
{
    if (c->in_step) {
        c->again = 1;
        return;
    }
    c->in_step = 1;
    do {
        c->again = 0;
        if (c->done)
            break;
        if (c->end_at != BRISK_TIME_NONE && now >= c->end_at)
            c->stopping = 1;
        if (c->end_at != BRISK_TIME_NONE && now >= c->end_at + RR_GRACE_NS) {
            rr_stop(c, BRISK_ERR_TIMEDOUT, "no response within 10 s after the end of the test", now);
            break;
        }
        int busy = 0;
        for (uint32_t i = 0; i < c->p.parallel && !c->done; i++) {
            struct rr_conn *k = &c->conns[i];
            if (!k->s)
                continue;
            int rc = rr_conn_pump(c, k, now);
            if (rc < 0) {
                rr_stop(c, rc,
                        rc == BRISK_ERR_RESET ? "the server closed or reset a connection"
                                              : brisk_strerror(rc),
                        now);
                break;
            }
            busy |= k->busy;
        }
        if (!c->done && c->stopping && !busy)
            rr_stop(c, 0, NULL, now);
    } while (c->again);
    c->in_step = 0;
    /* Tell the driver when the deadline moved inside a socket callback, so it does not sleep past it. */
    uint64_t d = perf_rr_client_deadline(c);
    if (d != c->last_deadline) {
        c->last_deadline = d;
        if (c->env.kick)
            c->env.kick(c->env.kick_ctx);
    }
}

void perf_rr_params_default(struct perf_rr_params *p)
{
    memset(p, 0, sizeof(*p));
    p->port = PERF_DEFAULT_PORT;
    p->req_size = p->resp_size = 64;
    p->duration_ns = 10 * BRISK_NSEC_PER_SEC;
    p->parallel = 1;
    p->nodelay = 1;
}

struct perf_rr_client *perf_rr_client_new(const struct perf_env *env, const struct perf_rr_params *p,
                                          const struct brisk_addr *server, uint64_t now, int *err)
{
    int dummy;
    if (!err)
        err = &dummy;
    if (!env || !env->st || !p || !p->parallel || p->parallel > PERF_MAX_STREAMS || !p->req_size ||
        !p->resp_size || p->req_size > (1u << 24) || p->resp_size > (1u << 24) ||
        (!p->duration_ns && !p->count)) {
        *err = BRISK_ERR_INVAL;
        return NULL;
    }
    struct perf_rr_client *c = calloc(1, sizeof(*c));
    if (!c) {
        *err = BRISK_ERR_NOMEM;
        return NULL;
    }
    c->env = *env;
    c->p = *p;
    c->end_at = BRISK_TIME_NONE;
    c->conns = calloc(p->parallel, sizeof(*c->conns));
    c->req = malloc(p->req_size);
    c->resp = malloc(p->resp_size);
    if (!c->conns || !c->req || !c->resp) {
        *err = BRISK_ERR_NOMEM;
        perf_rr_client_free(c, now);
        return NULL;
    }
    for (uint32_t i = 0; i < p->req_size; i++)
        c->req[i] = (uint8_t)('a' + i % 26);
    for (uint32_t i = 0; i < p->parallel; i++) {
        struct rr_conn *k = &c->conns[i];
        k->c = c;
        k->s = brisk_socket(env->st, err);
        if (!k->s) {
            perf_rr_client_free(c, now);
            return NULL;
        }
        brisk_sock_set_callback(k->s, rr_event, k);
        if (p->nodelay)
            brisk_setsockopt(k->s, BRISK_SO_NODELAY, 1, now);
        int rc = brisk_connect_addr(k->s, server, p->port, now);
        if (rc != BRISK_ERR_INPROGRESS) {
            *err = rc;
            perf_rr_client_free(c, now);
            return NULL;
        }
    }
    *err = BRISK_OK;
    return c;
}

uint64_t perf_rr_client_deadline(const struct perf_rr_client *c)
{
    if (c->done || c->end_at == BRISK_TIME_NONE)
        return BRISK_TIME_NONE;
    return c->stopping ? c->end_at + RR_GRACE_NS : c->end_at;
}

void perf_rr_client_tick(struct perf_rr_client *c, uint64_t now)
{
    rr_step(c, now);
    if (c->env.kick)
        c->env.kick(c->env.kick_ctx);
}

int perf_rr_client_done(const struct perf_rr_client *c)
{
    return c->done;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static uint64_t rank(const uint64_t *v, uint64_t n, unsigned pct)
{
    uint64_t r = (n * pct + 99) / 100;
    return v[r ? r - 1 : 0];
}

void perf_rr_client_report(const struct perf_rr_client *c, struct perf_rr_report *r)
{
    memset(r, 0, sizeof(*r));
    r->complete = c->complete;
    r->error = c->error;
    snprintf(r->err, sizeof(r->err), "%s", c->err);
    r->params = c->p;
    r->transactions = c->nlat;
    if (!c->nlat)
        return;
    r->duration_ns = c->last_ns - c->start_ns;
    r->tps = r->duration_ns ? (double)c->nlat * 1e9 / (double)r->duration_ns : 0;
    uint64_t *v = malloc(c->nlat * sizeof(*v));
    if (!v)
        return;
    memcpy(v, c->lat, c->nlat * sizeof(*v));
    qsort(v, c->nlat, sizeof(*v), cmp_u64);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < c->nlat; i++)
        sum += v[i];
    r->lat_min_ns = v[0];
    r->lat_max_ns = v[c->nlat - 1];
    r->lat_mean_ns = sum / c->nlat;
    r->p50_ns = rank(v, c->nlat, 50);
    r->p90_ns = rank(v, c->nlat, 90);
    r->p99_ns = rank(v, c->nlat, 99);
    free(v);
}

void perf_rr_client_free(struct perf_rr_client *c, uint64_t now)
{
    if (!c)
        return;
    if (c->conns)
        for (uint32_t i = 0; i < c->p.parallel; i++)
            if (c->conns[i].s)
                brisk_abort(c->conns[i].s, now);
    free(c->conns);
    free(c->req);
    free(c->resp);
    free(c->lat);
    free(c);
}

/* ---- echo server ---- */

#define ECHO_BUF (64u * 1024u)

struct echo_conn {
    struct perf_echo_server *srv;
    brisk_sock *s;
    uint8_t *buf;
    uint32_t off, len; /* bytes read and not yet written back: buf[off, len) */
    int eof, shut;
    struct echo_conn *next;
};

struct perf_echo_server {
    struct perf_env env;
    brisk_sock *listener;
    int nodelay;
    struct echo_conn *conns;
    uint64_t bytes;
    uint32_t accepted;
};

static void echo_release(struct echo_conn *k, int abort_it, uint64_t now)
{
    if (k->s) {
        brisk_sock *s = k->s;
        k->s = NULL;
        if (abort_it)
            brisk_abort(s, now);
        else
            brisk_close(s, now);
    }
}

static void echo_pump(struct echo_conn *k, uint64_t now)
{
    while (k->s) {
        if (k->off < k->len) {
            int64_t n = brisk_send(k->s, k->buf + k->off, k->len - k->off, 0, now);
            if (n == BRISK_ERR_AGAIN)
                return;
            if (n < 0) {
                echo_release(k, 1, now);
                return;
            }
            k->off += (uint32_t)n;
            k->srv->bytes += (uint64_t)n;
            continue;
        }
        k->off = k->len = 0;
        if (k->eof) {
            if (!k->shut) {
                k->shut = 1;
                echo_release(k, 0, now); /* FIN after the echoed bytes */
            }
            return;
        }
        int64_t n = brisk_recv(k->s, k->buf, ECHO_BUF, now);
        if (n == BRISK_ERR_AGAIN)
            return;
        if (n == 0) {
            k->eof = 1;
            continue;
        }
        if (n < 0) {
            echo_release(k, 1, now);
            return;
        }
        k->len = (uint32_t)n;
    }
}

static void echo_event(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    (void)s;
    (void)ev;
    echo_pump(ctx, now);
}

/* Frees connections whose sockets are gone. */
static void echo_reap(struct perf_echo_server *srv)
{
    struct echo_conn **pp = &srv->conns;
    while (*pp) {
        struct echo_conn *k = *pp;
        if (!k->s) {
            *pp = k->next;
            free(k->buf);
            free(k);
        } else {
            pp = &k->next;
        }
    }
}

static void echo_accept(void *ctx, brisk_sock *ls, unsigned ev, uint64_t now)
{
    struct perf_echo_server *srv = ctx;
    (void)ev;
    echo_reap(srv);
    int err;
    brisk_sock *s;
    while ((s = brisk_accept(ls, &err)) != NULL) {
        struct echo_conn *k = calloc(1, sizeof(*k));
        if (k)
            k->buf = malloc(ECHO_BUF);
        if (!k || !k->buf) {
            free(k);
            brisk_abort(s, now);
            continue;
        }
        k->srv = srv;
        k->s = s;
        k->next = srv->conns;
        srv->conns = k;
        srv->accepted++;
        if (srv->nodelay)
            brisk_setsockopt(s, BRISK_SO_NODELAY, 1, now);
        brisk_sock_set_callback(s, echo_event, k);
        echo_pump(k, now);
    }
}

struct perf_echo_server *perf_echo_server_new(const struct perf_env *env, const struct brisk_addr *ip, uint16_t port,
                                              int nodelay, int *err)
{
    int dummy;
    if (!err)
        err = &dummy;
    if (!env || !env->st || !port) {
        *err = BRISK_ERR_INVAL;
        return NULL;
    }
    struct perf_echo_server *srv = calloc(1, sizeof(*srv));
    if (!srv) {
        *err = BRISK_ERR_NOMEM;
        return NULL;
    }
    srv->env = *env;
    srv->nodelay = nodelay;
    srv->listener = brisk_socket(env->st, err);
    if (!srv->listener) {
        free(srv);
        return NULL;
    }
    int rc = brisk_bind_addr(srv->listener, ip, port);
    if (rc == BRISK_OK)
        rc = brisk_listen(srv->listener, 64);
    if (rc < 0) {
        *err = rc;
        perf_echo_server_free(srv, 0);
        return NULL;
    }
    brisk_sock_set_callback(srv->listener, echo_accept, srv);
    *err = BRISK_OK;
    return srv;
}

uint64_t perf_echo_server_bytes(const struct perf_echo_server *s)
{
    return s->bytes;
}

uint32_t perf_echo_server_connections(const struct perf_echo_server *s)
{
    return s->accepted;
}

void perf_echo_server_free(struct perf_echo_server *srv, uint64_t now)
{
    if (!srv)
        return;
    for (struct echo_conn *k = srv->conns; k; k = k->next)
        echo_release(k, 1, now);
    echo_reap(srv);
    if (srv->listener)
        brisk_close(srv->listener, now);
    free(srv);
}
