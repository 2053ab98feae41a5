/*
 * iperf_server.c — the iperf3 server as a state machine over brisk sockets.
 *
 * One listener on the port takes every connection. A new connection first sends a 37-byte cookie; until it
 * has, it waits in a small pending table. Then:
 *   - with no test running, it becomes the control connection of a new test: PARAM_EXCHANGE is sent and the
 *     client's parameters awaited;
 *   - while the test waits for its streams (after CREATE_STREAMS), a connection with the test's cookie
 * becomes the next data stream — numbered 1, 3, 4, ... in arrival order, as iperf3 numbers them;
 *   - anything else gets ACCESS_DENIED and is closed (iperf3 tells a second client the server is busy).
 * When all -P streams are there the server sends TEST_START and TEST_RUNNING and, with -R, starts writing.
 * The client ends the test with TEST_END: the server closes the data streams (like iperf3; unread data makes
 * that a reset), sends EXCHANGE_RESULTS, reads the client's results, sends its own and DISPLAY_RESULTS, and
 * waits for IPERF_DONE or the client's close. A watchdog ends a test that outlives its duration by 5 s (as
 * iperf3's server timer does), so a vanished client cannot hold the server forever.
 *
 * A UDP test (iperf3 -u) has no data connections: at the parameters the server binds one UDP socket to the
 * port on the control connection's local address, and each stream opens with a 4-byte connect datagram from
 * a new client port, answered with the reply datagram (udp.c); streams are numbered in arrival order like
 * connections. iperf3 binds a fresh socket per stream with SO_REUSEADDR; brisk has no port sharing for UDP,
 * and needs none: one socket receives every stream's datagrams and the sender's address names the stream.
 * Datagrams from no stream of the test are counted (udp_strays) and dropped. With -R the server paces each
 * stream's datagrams at -b and sends them to the stream's client port.
 */
#include <stdlib.h>
#include <string.h>

#include "perf/interval.h"
#include "perf/iperf_proto.h"
#include "perf/stream.h"

enum sstate {
    S_IDLE,         /* no test */
    S_WAIT_PARAMS,  /* PARAM_EXCHANGE sent */
    S_STREAMS,      /* CREATE_STREAMS sent, accepting streams */
    S_RUNNING,      /* TEST_RUNNING sent */
    S_WAIT_RESULTS, /* EXCHANGE_RESULTS sent, waiting for the client's results */
    S_WAIT_DONE,    /* DISPLAY_RESULTS sent, waiting for IPERF_DONE */
};

#define PENDING_MAX  (PERF_MAX_STREAMS + 8)
#define WATCHDOG_NS  (5 * BRISK_NSEC_PER_SEC)
#define HANDSHAKE_NS (30 * BRISK_NSEC_PER_SEC) /* a test must reach TEST_RUNNING within this */
#define COOKIE_NS    (10 * BRISK_NSEC_PER_SEC) /* a new connection must send its cookie within this */
#define SCRATCH      (256u * 1024u)
#define UDP_BURST    64u /* datagrams one stream sends per step at most: the loop polls in between */

struct pending {
    brisk_sock *s;
    uint8_t cookie[IPERF_COOKIE_SIZE];
    uint32_t got;
    uint64_t expires; /* a connection that has not sent its cookie by then is aborted */
};

struct perf_iperf_server {
    struct perf_env env;
    brisk_sock *listener;
    uint16_t port;
    int once, finished;
    struct pending pending[PENDING_MAX];
    /* the current test */
    enum sstate state;
    struct iperf_ctrl ctrl;
    uint8_t cookie[IPERF_COOKIE_SIZE];
    struct perf_params p;
    struct perf_stream streams[PERF_MAX_STREAMS];
    uint32_t nstreams;
    uint64_t accepted_ns, start_ns, end_ns;
    uint64_t watchdog; /* BRISK_TIME_NONE when off */
    uint64_t sent, received;
    struct iperf_stream_result remote[PERF_MAX_STREAMS];
    struct iperf_udp_result remote_udp[PERF_MAX_STREAMS];
    size_t nremote;
    int error;
    char err[PERF_ERR_LEN];
    uint8_t *block;
    uint32_t block_len;
    uint8_t *scratch;
    /* finished tests */
    uint32_t tests;
    struct perf_report last;
    int have_last;
    void (*on_report)(void *ctx, const struct perf_report *r);
    void *report_ctx;
    int in_step, again;
    uint64_t last_deadline; /* as last reported through env.kick */
    /* the current test, for the report's start and end objects */
    struct perf_intervals iv;
    struct perf_cpu_sample cpu0; /* at TEST_START */
    struct perf_cpu_util cpu;
    int have_cpu;
    struct iperf_results_meta remote_meta;
    int have_remote_meta;
    struct brisk_conn_info ctrl_info; /* the control connection when it was accepted */
    uint64_t sndbuf, rcvbuf;
    char congestion[16];
    /* UDP tests */
    brisk_udp *udp;      /* bound to the port for the current UDP test (all its streams) */
    uint64_t udp_strays; /* datagrams that belonged to no stream of the test */
    int udp_blocked;     /* a send was refused for room: wait for WRITABLE, not the pacing deadline */
};

static void step(struct perf_iperf_server *s, uint64_t now);

static void logf_(struct perf_iperf_server *s, const char *msg)
{
    if (s->env.log)
        fprintf(s->env.log, "brisk-perf server: %s\n", msg);
}

static void on_event(void *ctx, brisk_sock *sk, unsigned ev, uint64_t now)
{
    (void)sk;
    (void)ev;
    step(ctx, now);
}

static void on_udp_event(void *ctx, brisk_udp *u, unsigned ev, uint64_t now)
{
    (void)u;
    (void)ev;
    step(ctx, now); /* WRITABLE included: every step tries a blocked send again */
}

static void build_report(const struct perf_iperf_server *s, struct perf_report *r)
{
    memset(r, 0, sizeof(*r));
    r->role = 's';
    r->reverse = s->p.reverse;
    r->complete = s->error == 0;
    r->error = s->error;
    snprintf(r->err, sizeof(r->err), "%s", s->err);
    r->params = s->p;
    r->nstreams = s->nstreams;
    r->duration_ns = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
    r->sent = s->sent;
    r->received = s->received;
    snprintf(r->cookie, sizeof(r->cookie), "%.*s", IPERF_COOKIE_SIZE - 1, (const char *)s->cookie);
    r->ctrl_laddr = s->ctrl_info.tuple.laddr;
    r->ctrl_lport = s->ctrl_info.lport;
    r->ctrl_raddr = s->ctrl_info.tuple.raddr;
    r->ctrl_rport = s->ctrl_info.rport;
    r->sndbuf = s->sndbuf;
    r->rcvbuf = s->rcvbuf;
    r->timestamp_s = s->cpu0.unix_s;
    r->have_cpu = s->have_cpu;
    r->cpu = s->cpu;
    r->have_remote_cpu = s->have_remote_meta;
    r->remote_cpu = s->remote_meta.cpu;
    snprintf(r->congestion, sizeof(r->congestion), "%s", s->congestion);
    snprintf(r->remote_congestion, sizeof(r->remote_congestion), "%s", s->remote_meta.congestion);
    perf_intervals_view(&s->iv, &r->intervals);
    r->udp_strays = s->udp_strays;
    for (uint32_t i = 0; i < s->nstreams; i++)
        perf_stream_report_fill(&s->streams[i], s->remote, s->remote_udp, s->nremote, r, &r->streams[i]);
}

/* Ends the current test (complete when error == 0), reports it and returns to idle. */
static void end_test(struct perf_iperf_server *s, int error, const char *why, uint64_t now)
{
    if (s->state == S_IDLE)
        return;
    if (error && !s->error) {
        s->error = error;
        snprintf(s->err, sizeof(s->err), "%s", why);
        logf_(s, why);
    }
    if (!s->end_ns)
        s->end_ns = now;
    perf_intervals_finish(&s->iv, s->streams, now);
    for (uint32_t i = 0; i < s->nstreams; i++)
        perf_stream_close(&s->streams[i], now);
    if (s->udp) {
        brisk_udp_close(s->udp);
        s->udp = NULL;
    }
    if (s->ctrl.s) {
        brisk_sock *c = s->ctrl.s;
        s->ctrl.s = NULL;
        /* Gracefully: a SERVER_ERROR queued just before must still reach the client. */
        brisk_close(c, now);
    }
    build_report(s, &s->last);
    s->have_last = 1;
    s->tests++;
    if (!error)
        logf_(s, "test complete");
    if (s->on_report)
        s->on_report(s->report_ctx, &s->last);
    iperf_ctrl_free(&s->ctrl);
    s->state = S_IDLE;
    s->nstreams = 0;
    s->nremote = 0;
    s->sent = s->received = 0;
    s->error = 0;
    s->err[0] = '\0';
    s->start_ns = s->end_ns = s->accepted_ns = 0;
    s->watchdog = BRISK_TIME_NONE;
    s->have_cpu = s->have_remote_meta = 0;
    memset(&s->cpu0, 0, sizeof(s->cpu0));
    memset(&s->remote_meta, 0, sizeof(s->remote_meta));
    s->congestion[0] = '\0';
    s->sndbuf = s->rcvbuf = 0;
    s->udp_strays = 0;
    s->udp_blocked = 0;
    if (s->once)
        s->finished = 1;
}

static void deny(brisk_sock *sk, uint64_t now)
{
    uint8_t b = (uint8_t)(signed char)IPERF_ACCESS_DENIED;
    brisk_send(sk, &b, 1, 0, now);
    brisk_close(sk, now);
}

static void start_test(struct perf_iperf_server *s, struct pending *pd, uint64_t now)
{
    s->state = S_WAIT_PARAMS;
    memcpy(s->cookie, pd->cookie, IPERF_COOKIE_SIZE);
    iperf_ctrl_init(&s->ctrl, pd->s);
    /* Control messages are small writes the peer waits for: Nagle would hold one behind an unacknowledged
     * other until a delayed ACK (40 ms), and a UDP -R test's first datagrams would count as lost. */
    brisk_setsockopt(pd->s, BRISK_SO_NODELAY, 1, now);
    memset(&s->ctrl_info, 0, sizeof(s->ctrl_info));
    brisk_conn_info(pd->s, &s->ctrl_info);
    s->iv.n = 0; /* the previous test's intervals are gone from here on */
    s->accepted_ns = now;
    s->watchdog = now + HANDSHAKE_NS;
    s->error = 0;
    s->err[0] = '\0';
    if (iperf_ctrl_put_state(&s->ctrl, IPERF_PARAM_EXCHANGE, now) < 0)
        end_test(s, s->ctrl.error, "control connection failed", now);
    logf_(s, "new test");
}

static void start_running(struct perf_iperf_server *s, uint64_t now);

static void add_stream(struct perf_iperf_server *s, struct pending *pd, uint64_t now)
{
    struct perf_stream *st = &s->streams[s->nstreams];
    memset(st, 0, sizeof(*st));
    st->s = pd->s;
    st->id = iperf_stream_id(s->nstreams);
    st->sender = s->p.reverse;
    st->connected = 1;
    memcpy(st->cookie, pd->cookie, IPERF_COOKIE_SIZE);
    st->cookie_done = IPERF_COOKIE_SIZE;
    if (s->p.nodelay)
        brisk_setsockopt(st->s, BRISK_SO_NODELAY, 1, now);
    if (s->p.window)
        brisk_setsockopt(st->s, BRISK_SO_SNDBUF, s->p.window, now);
    s->nstreams++;
    if (s->nstreams == s->p.parallel)
        start_running(s, now);
}

/* All the streams are there: TEST_START and TEST_RUNNING, and the clocks of the test start. */
static void start_running(struct perf_iperf_server *s, uint64_t now)
{
    s->start_ns = now;
    s->state = S_RUNNING;
    perf_intervals_start(&s->iv, s->env.interval_ns, s->nstreams, now);
    if (s->env.cpu)
        s->env.cpu(s->env.cpu_ctx, &s->cpu0);
    if (s->p.udp) {
        brisk_udp_getsockopt(s->udp, BRISK_SO_RCVBUF, &s->rcvbuf);
        for (uint32_t i = 0; i < s->nstreams; i++)
            s->streams[i].pace_start = now;
    } else {
        brisk_getsockopt(s->streams[0].s, BRISK_SO_SNDBUF, &s->sndbuf);
        brisk_getsockopt(s->streams[0].s, BRISK_SO_RCVBUF, &s->rcvbuf);
        const char *cc = brisk_get_congestion(s->streams[0].s);
        snprintf(s->congestion, sizeof(s->congestion), "%s", cc ? cc : "");
    }
    s->watchdog = s->p.duration_ns ? now + s->p.duration_ns + WATCHDOG_NS : BRISK_TIME_NONE;
    /* Both states in one segment: a -R UDP client counts datagrams only once it runs, so TEST_RUNNING must
     * not trail behind the data (the control connection is NODELAY for the same reason). */
    const uint8_t go[2] = {(uint8_t)IPERF_TEST_START, (uint8_t)IPERF_TEST_RUNNING};
    if (iperf_ctrl_put_raw(&s->ctrl, go, sizeof(go), now) < 0)
        end_test(s, s->ctrl.error, "control connection failed", now);
    else
        logf_(s, "test running");
}

/* A connect datagram from a new client port while the test waits for its streams: the next stream. The reply
 * goes out from send_replies (now, or when the stack has room). */
static void add_udp_stream(struct perf_iperf_server *s, const struct brisk_addr *from, uint16_t port)
{
    struct perf_stream *st = &s->streams[s->nstreams];
    memset(st, 0, sizeof(*st));
    st->udp = 1;
    st->id = iperf_stream_id(s->nstreams);
    st->sender = s->p.reverse;
    st->connected = 1;
    st->laddr = s->ctrl_info.tuple.laddr;
    st->lport = s->port;
    st->peer = *from;
    st->peer_port = port;
    s->nstreams++;
}

/* Sends the connect replies still owed; starts the test when every stream has had its reply. */
static void send_replies(struct perf_iperf_server *s, uint64_t now)
{
    uint32_t open = 0;
    for (uint32_t i = 0; i < s->nstreams; i++) {
        struct perf_stream *st = &s->streams[i];
        if (!st->udp_open && brisk_udp_sendto(s->udp, perf_udp_connect_reply, PERF_UDP_CONNECT_LEN, &st->peer,
                                              st->peer_port, now) == PERF_UDP_CONNECT_LEN)
            st->udp_open = 1;
        open += (uint32_t)st->udp_open;
    }
    if (s->state == S_STREAMS && open == s->p.parallel)
        start_running(s, now);
}

static struct perf_stream *udp_stream_of(struct perf_iperf_server *s, const struct brisk_addr *from,
                                         uint16_t port)
{
    for (uint32_t i = 0; i < s->nstreams; i++)
        if (s->streams[i].peer_port == port && brisk_addr_equal(&s->streams[i].peer, from))
            return &s->streams[i];
    return NULL;
}

static uint64_t fine_now(const struct perf_env *e, uint64_t now)
{
    return e->clock ? e->clock(e->clock_ctx) : now;
}

/* Reads every queued datagram of the UDP test: connect datagrams open streams, data counts while the test
 * runs (iperf3 counts in TEST_RUNNING only) and is drained otherwise. */
static void udp_pump(struct perf_iperf_server *s, uint64_t now)
{
    while (s->udp) {
        struct brisk_addr from;
        uint16_t port;
        int64_t n = brisk_udp_recvfrom(s->udp, s->scratch, SCRATCH, &from, &port, NULL);
        if (n == BRISK_ERR_AGAIN)
            break;
        if (n < 0) /* an unconnected socket has no peer to report errors about; nothing else is pending */
            continue;
        int connect = perf_udp_is_connect_msg(s->scratch, (size_t)n);
        struct perf_stream *st = udp_stream_of(s, &from, port);
        if (!st && connect && s->state == S_STREAMS && s->nstreams < s->p.parallel) {
            add_udp_stream(s, &from, port);
        } else if (st && connect && st->udp_open && !st->bytes) {
            st->udp_open = 0; /* a client that asks again (its reply was lost) gets it again */
        } else if (st && !st->sender) {
            perf_stream_udp_datagram(st, s->scratch, (size_t)n, s->p.counters64, s->state == S_RUNNING,
                                     fine_now(&s->env, now), now);
        } else {
            s->udp_strays++;
        }
    }
    if (s->udp)
        send_replies(s, now);
}

/* The UDP test's socket, at the parameters: bound to the port on the address the client reached us at. */
static int udp_open_socket(struct perf_iperf_server *s)
{
    int err;
    s->udp = brisk_udp_socket(s->env.st, &err);
    if (!s->udp)
        return err;
    int rc = brisk_udp_bind(s->udp, &s->ctrl_info.tuple.laddr, s->port);
    /* iperf3 has a socket, and so a receive buffer, per stream; this one socket holds them all: -w or the
     * default, times the streams (up to the option's 1 GB). */
    uint64_t buf = s->p.window;
    if (rc == BRISK_OK && !buf && brisk_udp_getsockopt(s->udp, BRISK_SO_RCVBUF, &buf) != BRISK_OK)
        buf = 0;
    buf *= s->p.parallel;
    if (rc == BRISK_OK && buf)
        rc = brisk_udp_setsockopt(s->udp, BRISK_SO_RCVBUF, buf < (1u << 30) ? buf : (1u << 30));
    if (rc == BRISK_OK)
        rc = brisk_udp_set_callback(s->udp, on_udp_event, s);
    if (rc < 0) {
        brisk_udp_close(s->udp);
        s->udp = NULL;
    }
    return rc;
}

/* Reads the cookie of each pending connection and decides what it is. */
static void pump_pending(struct perf_iperf_server *s, uint64_t now)
{
    for (int i = 0; i < PENDING_MAX; i++) {
        struct pending *pd = &s->pending[i];
        if (!pd->s)
            continue;
        int64_t n = brisk_recv(pd->s, pd->cookie + pd->got, IPERF_COOKIE_SIZE - pd->got, now);
        if (n == BRISK_ERR_AGAIN) {
            /* Idle connections must not hold the table: the slots are few and anyone can connect. */
            if (now >= pd->expires) {
                brisk_abort(pd->s, now);
                pd->s = NULL;
            }
            continue;
        }
        if (n <= 0) { /* closed or failed before its cookie */
            brisk_close(pd->s, now);
            pd->s = NULL;
            continue;
        }
        pd->got += (uint32_t)n;
        if (pd->got < IPERF_COOKIE_SIZE) {
            i--; /* read again: more may be buffered */
            continue;
        }
        struct pending p = *pd;
        pd->s = NULL;
        if (!iperf_cookie_valid(p.cookie)) {
            brisk_abort(p.s, now);
        } else if (s->state == S_IDLE && !s->finished) {
            start_test(s, &p, now);
        } else if (s->state == S_STREAMS && !s->p.udp &&
                   memcmp(p.cookie, s->cookie, IPERF_COOKIE_SIZE) == 0 && s->nstreams < s->p.parallel) {
            add_stream(s, &p, now);
        } else {
            deny(p.s, now);
        }
    }
}

static void accept_all(struct perf_iperf_server *s, uint64_t now)
{
    int err;
    brisk_sock *c;
    while (s->listener && (c = brisk_accept(s->listener, &err)) != NULL) {
        int slot = -1;
        for (int i = 0; i < PENDING_MAX && slot < 0; i++)
            if (!s->pending[i].s)
                slot = i;
        if (slot < 0) {
            brisk_abort(c, now);
            continue;
        }
        s->pending[slot].s = c;
        s->pending[slot].got = 0;
        s->pending[slot].expires = now + COOKIE_NS;
        brisk_sock_set_callback(c, on_event, s);
    }
}

static void server_error(struct perf_iperf_server *s, const char *why, uint64_t now)
{
    /* SERVER_ERROR carries iperf3's error number and errno, big-endian: IEUNIMP (13, "not implemented yet")
     * is what iperf3 prints for a test brisk-perf does not run; errno 0. */
    static const uint8_t tail[8] = {0, 0, 0, 13, 0, 0, 0, 0};
    iperf_ctrl_put_state(&s->ctrl, IPERF_SERVER_ERROR, now);
    iperf_ctrl_put_raw(&s->ctrl, tail, sizeof(tail), now);
    end_test(s, BRISK_ERR_INVAL, why, now);
}

static void on_params(struct perf_iperf_server *s, json_t *j, uint64_t now)
{
    char err[PERF_ERR_LEN - 32], msg[PERF_ERR_LEN];
    struct perf_params p;
    p.port = s->port;
    int rc = iperf_params_from_json(j, &p, err, sizeof(err));
    if (rc < 0) {
        snprintf(msg, sizeof(msg), "client parameters refused: %s", err);
        server_error(s, msg, now);
        return;
    }
    s->p = p;
    if (p.udp) {
        rc = udp_open_socket(s);
        if (rc < 0) {
            snprintf(msg, sizeof(msg), "cannot open the UDP socket on port %u: %s%s", s->port,
                     brisk_strerror(rc),
                     rc == BRISK_ERR_AFNOSUPPORT ? " (IPv6 is off in this stack: the ipv6 setting)" : "");
            server_error(s, msg, now);
            return;
        }
    }
    if (p.reverse && p.blksize != s->block_len) {
        uint8_t *b = realloc(s->block, p.blksize);
        if (!b) {
            server_error(s, "out of memory for the data block", now);
            return;
        }
        s->block = b;
        s->block_len = p.blksize;
        uint64_t x = s->env.seed + 7;
        for (uint32_t i = 0; i < p.blksize; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            b[i] = (uint8_t)(x >> 56);
        }
    }
    s->state = S_STREAMS;
    if (iperf_ctrl_put_state(&s->ctrl, IPERF_CREATE_STREAMS, now) < 0)
        end_test(s, s->ctrl.error, "control connection failed", now);
}

static void send_results(struct perf_iperf_server *s, uint64_t now)
{
    struct iperf_stream_result r[PERF_MAX_STREAMS];
    struct iperf_udp_result u[PERF_MAX_STREAMS];
    double secs = (double)(s->end_ns - s->start_ns) / 1e9;
    for (uint32_t i = 0; i < s->nstreams; i++) {
        const struct perf_stream *st = &s->streams[i];
        r[i].id = st->id;
        r[i].bytes = st->bytes;
        r[i].retransmits = st->sender && st->info_ok ? (int64_t)st->info.retransmits : -1;
        r[i].start_time = 0;
        r[i].end_time = secs;
        perf_stream_udp_result(st, &u[i]);
    }
    if (s->env.cpu) {
        struct perf_cpu_sample now_cpu;
        s->env.cpu(s->env.cpu_ctx, &now_cpu);
        perf_cpu_util_between(&s->cpu0, &now_cpu, &s->cpu);
        s->have_cpu = 1;
    }
    struct iperf_results_meta meta = {.cpu = s->cpu};
    snprintf(meta.congestion, sizeof(meta.congestion), "%s", s->congestion);
    /* iperf3's flag: a TCP sender has retransmission counts, a UDP sender none (0), a receiver says -1. */
    int has_retr = s->p.udp ? (s->p.reverse ? 0 : -1) : s->p.reverse;
    json_t *j = iperf_results_to_json(has_retr, r, s->nstreams);
    if (j && (iperf_results_set_meta(j, &meta) != BRISK_OK ||
              iperf_results_set_udp(j, u, s->nstreams) != BRISK_OK)) {
        json_decref(j);
        j = NULL;
    }
    int rc = j ? iperf_ctrl_put_json(&s->ctrl, j, now) : BRISK_ERR_NOMEM;
    json_decref(j);
    if (rc == BRISK_OK)
        rc = iperf_ctrl_put_state(&s->ctrl, IPERF_DISPLAY_RESULTS, now);
    if (rc < 0) {
        end_test(s, rc, "control connection failed sending the results", now);
        return;
    }
    s->state = S_WAIT_DONE;
}

static void on_test_end(struct perf_iperf_server *s, uint64_t now)
{
    s->end_ns = now;
    udp_pump(s, now); /* the datagrams already queued still count */
    /* Count what already arrived, then close the streams, as iperf3's server does at TEST_END. */
    for (uint32_t i = 0; i < s->nstreams; i++) {
        struct perf_stream *st = &s->streams[i];
        if (!st->sender) {
            int64_t n = perf_stream_recv(st, s->scratch, SCRATCH, 1, now);
            if (n > 0)
                s->received += (uint64_t)n;
        }
    }
    perf_intervals_finish(&s->iv, s->streams, now); /* the counts are final: the last interval ends here */
    for (uint32_t i = 0; i < s->nstreams; i++)
        perf_stream_close(&s->streams[i], now);
    s->state = S_WAIT_RESULTS;
    s->watchdog = now + HANDSHAKE_NS;
    if (iperf_ctrl_put_state(&s->ctrl, IPERF_EXCHANGE_RESULTS, now) < 0)
        end_test(s, s->ctrl.error, "control connection failed", now);
}

static void read_ctrl(struct perf_iperf_server *s, uint64_t now)
{
    iperf_ctrl_read(&s->ctrl, now);
    while (s->state != S_IDLE) {
        if (s->state == S_WAIT_PARAMS || s->state == S_WAIT_RESULTS) {
            json_t *j = NULL;
            int rc = iperf_ctrl_take_json(&s->ctrl, &j);
            if (rc == 0)
                break;
            if (rc < 0) {
                end_test(s, rc, "the client sent a malformed JSON message", now);
                return;
            }
            if (s->state == S_WAIT_PARAMS) {
                on_params(s, j, now);
            } else {
                char err[PERF_ERR_LEN - 32], msg[PERF_ERR_LEN];
                rc = iperf_results_from_json(j, s->remote, PERF_MAX_STREAMS, &s->nremote, err, sizeof(err));
                if (rc == BRISK_OK) {
                    iperf_results_get_meta(j, &s->remote_meta);
                    iperf_results_get_udp(j, s->remote_udp, s->nremote);
                    s->have_remote_meta = 1;
                }
                if (rc < 0) {
                    snprintf(msg, sizeof(msg), "client results: %s", err);
                    json_decref(j);
                    end_test(s, rc, msg, now);
                    return;
                }
                send_results(s, now);
            }
            json_decref(j);
            continue;
        }
        int state;
        if (!iperf_ctrl_take_state(&s->ctrl, &state))
            break;
        if (state == IPERF_TEST_END && (s->state == S_RUNNING || s->state == S_STREAMS)) {
            on_test_end(s, now);
        } else if (state == IPERF_IPERF_DONE && s->state == S_WAIT_DONE) {
            end_test(s, 0, NULL, now);
            return;
        } else if (state == IPERF_CLIENT_TERMINATE) {
            end_test(s, BRISK_ERR_RESET, "the client terminated the test (CLIENT_TERMINATE)", now);
            return;
        } else {
            char msg[96];
            snprintf(msg, sizeof(msg), "unexpected control state %d (%s)", state, iperf_state_name(state));
            end_test(s, BRISK_ERR_INVAL, msg, now);
            return;
        }
    }
    if (s->state == S_IDLE)
        return;
    if (s->ctrl.error) {
        end_test(s, s->ctrl.error, "the control connection failed", now);
    } else if (s->ctrl.eof) {
        /* A client that closes after DISPLAY_RESULTS without IPERF_DONE has still finished. */
        if (s->state == S_WAIT_DONE)
            end_test(s, 0, NULL, now);
        else
            end_test(s, BRISK_ERR_RESET, "the client closed the control connection", now);
    }
}

static void move_data(struct perf_iperf_server *s, uint64_t now)
{
    for (uint32_t i = 0; i < s->nstreams; i++) {
        struct perf_stream *st = &s->streams[i];
        if (st->udp && st->sender && s->state == S_RUNNING && !s->udp_blocked) {
            int64_t n =
                perf_stream_udp_send(st, s->udp, &st->peer, st->peer_port, s->block, s->p.blksize,
                                     s->p.counters64, s->p.rate, UDP_BURST, now, fine_now(&s->env, now));
            if (n > 0)
                s->sent += (uint64_t)n;
            /* Still due after the send returned short of its burst: the stack had no room. */
            if (!st->error && perf_stream_udp_due(st, s->p.rate) <= now &&
                n < (int64_t)UDP_BURST * s->p.blksize)
                s->udp_blocked = 1;
            if (st->error) {
                char msg[PERF_ERR_LEN];
                snprintf(msg, sizeof(msg), "a UDP stream failed to send a %u-byte datagram: %s%s",
                         s->p.blksize, brisk_strerror(st->error),
                         st->error == BRISK_ERR_MSGSIZE ? " (over the path MTU: brisk does not fragment)"
                                                        : "");
                end_test(s, st->error, msg, now);
                return;
            }
            continue;
        }
        if (st->udp) /* a receiver: udp_pump reads the one socket for every stream */
            continue;
        if (!st->s)
            continue;
        if (st->sender) {
            if (s->state != S_RUNNING)
                continue;
            uint64_t budget = UINT64_MAX;
            if (s->p.bytes)
                budget = s->sent < s->p.bytes ? s->p.bytes - s->sent : 0;
            int64_t n = perf_stream_send(st, s->block, s->p.blksize, budget, now);
            if (n > 0)
                s->sent += (uint64_t)n;
        } else {
            int64_t n = perf_stream_recv(st, s->scratch, SCRATCH, 1, now);
            if (n > 0)
                s->received += (uint64_t)n;
        }
        if (st->error && s->state == S_RUNNING) {
            end_test(s, st->error, "a data stream failed during the test", now);
            return;
        }
    }
}

static void step(struct perf_iperf_server *s, uint64_t now)
{
    if (s->in_step) {
        s->again = 1;
        return;
    }
    s->in_step = 1;
    do {
        s->again = 0;
        s->udp_blocked = 0; /* set again below if the stack still has no room */
        accept_all(s, now);
        pump_pending(s, now);
        if (s->state != S_IDLE) {
            iperf_ctrl_flush(&s->ctrl, now);
            read_ctrl(s, now);
        }
        if (s->udp)
            udp_pump(s, now); /* connect datagrams, data, and the drain after TEST_END */
        if (s->state == S_STREAMS || s->state == S_RUNNING)
            move_data(s, now);
        if (s->state == S_RUNNING)
            perf_intervals_tick(&s->iv, s->streams, now);
        if (s->state != S_IDLE && s->watchdog != BRISK_TIME_NONE && now >= s->watchdog)
            end_test(s, BRISK_ERR_TIMEDOUT, "the test outlived its duration (watchdog)", now);
    } while (s->again);
    s->in_step = 0;
    /* Tell the driver when the deadline moved inside a socket callback, so it does not sleep past it. */
    uint64_t d = perf_iperf_server_deadline(s);
    if (d != s->last_deadline) {
        s->last_deadline = d;
        if (s->env.kick)
            s->env.kick(s->env.kick_ctx);
    }
}

struct perf_iperf_server *perf_iperf_server_new(const struct perf_env *env, const struct brisk_addr *ip,
                                                uint16_t port, int once, int *err)
{
    int dummy;
    if (!err)
        err = &dummy;
    if (!env || !env->st || !port) {
        *err = BRISK_ERR_INVAL;
        return NULL;
    }
    struct perf_iperf_server *s = calloc(1, sizeof(*s));
    if (!s || !(s->scratch = malloc(SCRATCH))) {
        free(s);
        *err = BRISK_ERR_NOMEM;
        return NULL;
    }
    s->env = *env;
    s->port = port;
    s->once = once;
    s->watchdog = BRISK_TIME_NONE;
    s->listener = brisk_socket(env->st, err);
    if (!s->listener) {
        perf_iperf_server_free(s, 0);
        return NULL;
    }
    int rc = brisk_bind_addr(s->listener, ip, port);
    if (rc == BRISK_OK)
        rc = brisk_listen(s->listener, 64);
    if (rc < 0) {
        *err = rc;
        perf_iperf_server_free(s, 0);
        return NULL;
    }
    brisk_sock_set_callback(s->listener, on_event, s);
    *err = BRISK_OK;
    return s;
}

uint64_t perf_iperf_server_deadline(const struct perf_iperf_server *s)
{
    uint64_t d = s->state == S_IDLE ? BRISK_TIME_NONE : s->watchdog;
    if (s->state == S_RUNNING && perf_intervals_deadline(&s->iv) < d)
        d = perf_intervals_deadline(&s->iv);
    for (uint32_t i = 0; s->state == S_RUNNING && !s->udp_blocked && i < s->nstreams; i++) {
        uint64_t due = perf_stream_udp_due(&s->streams[i], s->p.rate);
        if (due < d)
            d = due;
    }
    for (int i = 0; i < PENDING_MAX; i++)
        if (s->pending[i].s && s->pending[i].expires < d)
            d = s->pending[i].expires;
    return d;
}

void perf_iperf_server_tick(struct perf_iperf_server *s, uint64_t now)
{
    step(s, now);
    if (s->env.kick)
        s->env.kick(s->env.kick_ctx);
}

int perf_iperf_server_done(const struct perf_iperf_server *s)
{
    return s->finished;
}

uint32_t perf_iperf_server_tests(const struct perf_iperf_server *s)
{
    return s->tests;
}

int perf_iperf_server_progress(const struct perf_iperf_server *s, uint64_t *bytes)
{
    *bytes = s->sent + s->received;
    return s->state == S_RUNNING;
}

int perf_iperf_server_last_report(const struct perf_iperf_server *s, struct perf_report *out)
{
    if (!s->have_last)
        return 0;
    *out = s->last;
    return 1;
}

void perf_iperf_server_on_report(struct perf_iperf_server *s,
                                 void (*fn)(void *ctx, const struct perf_report *r), void *ctx)
{
    s->on_report = fn;
    s->report_ctx = ctx;
}

void perf_iperf_server_report(const struct perf_iperf_server *s, struct perf_report *out)
{
    build_report(s, out);
}

void perf_iperf_server_intervals(const struct perf_iperf_server *s, struct perf_intervals_view *out)
{
    perf_intervals_view(&s->iv, out);
}

void perf_iperf_server_free(struct perf_iperf_server *s, uint64_t now)
{
    if (!s)
        return;
    perf_intervals_free(&s->iv);
    for (int i = 0; i < PENDING_MAX; i++)
        if (s->pending[i].s)
            brisk_abort(s->pending[i].s, now);
    for (uint32_t i = 0; i < s->nstreams; i++)
        perf_stream_close(&s->streams[i], now);
    if (s->ctrl.s)
        brisk_abort(s->ctrl.s, now);
    if (s->udp)
        brisk_udp_close(s->udp);
    iperf_ctrl_free(&s->ctrl);
    if (s->listener)
        brisk_close(s->listener, now);
    free(s->block);
    free(s->scratch);
    free(s);
}
