/*
 * iperf_client.c — the iperf3 client as a state machine over brisk sockets.
 *
 * The client opens the control connection, sends its cookie and then follows the server's state bytes
 * (iperf_proto.c has the whole exchange): it answers PARAM_EXCHANGE with its parameters, opens the data
 * streams on CREATE_STREAMS — one after the other, each beginning with the cookie, so the server numbers them
 * in the same order as the client (iperf3 matches results by stream id) — starts the clock at TEST_START and
 * moves data from TEST_RUNNING on. It decides when the test ends: when the duration has passed, or when -n
 * bytes were sent (or, with -R, received). Then it sends TEST_END, trades results on EXCHANGE_RESULTS, and on
 * DISPLAY_RESULTS closes the streams, sends IPERF_DONE and closes the control connection.
 *
 * With -R the client keeps reading its streams after TEST_END until the server closes them, as iperf3 does:
 * a server blocked on a full pipe must still get to read the control connection.
 *
 * With -u each stream is a UDP socket connected to the server's port: it opens with the 4-byte connect
 * datagram and is open when the server's reply comes back (udp.c), again one stream after the other. A
 * sending stream paces its datagrams at -b from TEST_RUNNING on, catching up in bursts of at most UDP_BURST
 * when the loop was late, as iperf3's throttle does; a receiving one counts datagrams only while the test
 * runs (iperf3 stops counting at TEST_END). Without -l the datagram length is the control connection's send
 * MSS, as iperf3 picks it, so that a datagram fits the path without fragments. A refused send waits for
 * WRITABLE (udp_blocked) instead of spinning on the pacing deadline.
 *
 * Every socket event and every tick run the same `step`, which does whatever the current state allows; a
 * re-entrancy guard makes a callback raised inside a socket call (brisk delivers events at the end of socket
 * calls made outside a callback) run the step again afterwards instead of nesting it.
 */
#include <stdlib.h>
#include <string.h>

#include "perf/interval.h"
#include "perf/iperf_proto.h"
#include "perf/stream.h"

enum cstate {
    C_CONNECTING,   /* control connection being opened */
    C_WAIT_PARAMS,  /* cookie sent, waiting for PARAM_EXCHANGE */
    C_WAIT_CREATE,  /* parameters sent */
    C_STREAMS,      /* opening data streams */
    C_WAIT_START,   /* streams open, waiting for TEST_START / TEST_RUNNING */
    C_RUNNING,      /* moving data */
    C_ENDING,       /* TEST_END sent, waiting for EXCHANGE_RESULTS */
    C_WAIT_RESULTS, /* our results sent, waiting for the server's */
    C_WAIT_DISPLAY, /* waiting for DISPLAY_RESULTS */
    C_SERVER_ERROR, /* SERVER_ERROR read, waiting for its two error numbers */
    C_DONE,
};

struct perf_iperf_client {
    struct perf_env env;
    struct perf_params p;
    struct brisk_addr server;
    enum cstate state;
    struct iperf_ctrl ctrl;
    char cookie[IPERF_COOKIE_SIZE];
    struct perf_stream streams[PERF_MAX_STREAMS];
    uint32_t nstreams; /* streams opened (or being opened) */
    int test_started;  /* TEST_START seen */
    uint64_t start_ns; /* TEST_START */
    uint64_t end_ns;   /* TEST_END sent */
    uint64_t end_at;   /* start + duration (BRISK_TIME_NONE if by bytes) */
    uint64_t sent, received;
    struct iperf_stream_result remote[PERF_MAX_STREAMS];
    struct iperf_udp_result remote_udp[PERF_MAX_STREAMS];
    size_t nremote;
    int complete, error;
    char err[PERF_ERR_LEN];
    uint8_t *block;   /* the data block written on every stream */
    uint8_t *scratch; /* receive buffer, discarded */
    int in_step, again;
    uint64_t last_deadline;  /* as last reported through env.kick */
    enum cstate guard_state; /* the state the guard timer watches */
    uint64_t guard_at;       /* outside C_RUNNING: fail if the state has not changed by then */
    struct perf_intervals iv;
    struct perf_cpu_sample cpu0; /* at TEST_START */
    struct perf_cpu_util cpu;    /* TEST_START to our results */
    int have_cpu;
    struct iperf_results_meta remote_meta; /* the server's cpu and congestion control */
    int have_remote_meta;
    struct brisk_conn_info ctrl_info; /* the control connection at TEST_START */
    uint64_t sndbuf, rcvbuf;
    char congestion[16];
    int udp_blocked; /* a UDP send was refused for room: wait for WRITABLE, not the pacing deadline */
};

/* Outside the running test every state waits for the server; one that waits this long has lost it. */
#define GUARD_NS (30 * BRISK_NSEC_PER_SEC)

#define SCRATCH   (256u * 1024u)
#define UDP_BURST 64u /* datagrams one stream sends per step at most: the loop polls in between */

static void step(struct perf_iperf_client *c, uint64_t now);

static void logf_(struct perf_iperf_client *c, const char *msg)
{
    if (c->env.log)
        fprintf(c->env.log, "brisk-perf client: %s\n", msg);
}

static void fail(struct perf_iperf_client *c, int error, const char *what, uint64_t now)
{
    if (c->state == C_DONE)
        return;
    c->error = error ? error : BRISK_ERR_INVAL;
    snprintf(c->err, sizeof(c->err), "%s", what);
    logf_(c, what);
    c->state = C_DONE;
    perf_intervals_finish(&c->iv, c->streams, now);
    for (uint32_t i = 0; i < c->nstreams; i++)
        perf_stream_close(&c->streams[i], now);
    if (c->ctrl.s) {
        brisk_sock *s = c->ctrl.s;
        c->ctrl.s = NULL;
        brisk_abort(s, now);
    }
}

static void on_event(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    (void)s;
    (void)ev;
    step(ctx, now);
}

static void on_udp_event(void *ctx, brisk_udp *u, unsigned ev, uint64_t now)
{
    (void)u;
    (void)ev;
    step(ctx, now); /* WRITABLE included: every step tries a blocked send again */
}

static uint64_t fine_now(const struct perf_env *e, uint64_t now)
{
    return e->clock ? e->clock(e->clock_ctx) : now;
}

/* Opens UDP stream i: a socket connected to the server's port; the connect datagram goes out from
 * pump_streams_open. */
static int open_udp_stream(struct perf_iperf_client *c, struct perf_stream *st)
{
    int err;
    st->udp = 1;
    st->u = brisk_udp_socket(c->env.st, &err);
    if (!st->u)
        return err;
    brisk_udp_set_callback(st->u, on_udp_event, c);
    if (c->p.window)
        brisk_udp_setsockopt(st->u, BRISK_SO_RCVBUF, c->p.window);
    int rc = brisk_udp_connect(st->u, &c->server, c->p.port);
    if (rc < 0)
        return rc;
    struct brisk_tuple t;
    brisk_udp_tuple(st->u, &t);
    st->laddr = t.laddr;
    st->lport = t.lport;
    struct brisk_conn_info ci; /* an unbound socket picks its source per send: the control's, same route */
    if (brisk_addr_is_any(&st->laddr) && c->ctrl.s && brisk_conn_info(c->ctrl.s, &ci) == BRISK_OK)
        st->laddr = ci.tuple.laddr;
    st->peer = c->server;
    st->peer_port = c->p.port;
    return BRISK_OK;
}

/* A UDP stream's opening: 1 when the server's reply came, 0 while waiting, or the error. Datagrams before the
 * reply (a -R server that already sends) are dropped, as iperf3 drops them. */
static int udp_stream_opened(struct perf_iperf_client *c, struct perf_stream *st, uint64_t now)
{
    if (!st->cookie_done) {
        int64_t n = brisk_udp_send(st->u, perf_udp_connect_msg, PERF_UDP_CONNECT_LEN, now);
        if (n == BRISK_ERR_AGAIN)
            return 0;
        if (n < 0)
            return (int)n;
        st->cookie_done = PERF_UDP_CONNECT_LEN;
    }
    while (!st->udp_open) {
        int64_t n = brisk_udp_recvfrom(st->u, c->scratch, SCRATCH, NULL, NULL, NULL);
        if (n == BRISK_ERR_AGAIN)
            return 0;
        if (n < 0)
            return (int)n; /* ICMP port unreachable: nothing listens for UDP there */
        st->udp_open = perf_udp_is_connect_reply(c->scratch, (size_t)n);
    }
    st->connected = 1;
    return 1;
}

/* Opens data stream i: options first (the MSS and buffers are fixed at connect), then the connect. */
static int open_stream(struct perf_iperf_client *c, uint32_t i, uint64_t now)
{
    struct perf_stream *st = &c->streams[i];
    memset(st, 0, sizeof(*st));
    st->id = iperf_stream_id(i);
    st->sender = !c->p.reverse;
    memcpy(st->cookie, c->cookie, IPERF_COOKIE_SIZE);
    if (c->p.udp) {
        c->nstreams = i + 1; /* counted at once: a failed socket is closed with the others */
        return open_udp_stream(c, st);
    }
    int err;
    st->s = brisk_socket(c->env.st, &err);
    if (!st->s)
        return err;
    brisk_sock_set_callback(st->s, on_event, c);
    if (c->p.nodelay)
        brisk_setsockopt(st->s, BRISK_SO_NODELAY, 1, now);
    if (c->p.mss)
        brisk_setsockopt(st->s, BRISK_SO_MAXSEG, c->p.mss, now);
    if (c->p.window) {
        brisk_setsockopt(st->s, BRISK_SO_SNDBUF, c->p.window, now);
        brisk_setsockopt(st->s, BRISK_SO_RCVBUF, c->p.window, now);
    }
    int rc = brisk_connect_addr(st->s, &c->server, c->p.port, now);
    if (rc != BRISK_ERR_INPROGRESS)
        return rc;
    c->nstreams = i + 1;
    return BRISK_OK;
}

/* Streams open one at a time: the next connect starts when the previous one has sent its whole cookie. */
static void pump_streams_open(struct perf_iperf_client *c, uint64_t now)
{
    while (c->state == C_STREAMS) {
        struct perf_stream *st = &c->streams[c->nstreams - 1];
        if (st->error) {
            fail(c, st->error, "a data stream failed to connect", now);
            return;
        }
        if (st->udp) {
            int rc = udp_stream_opened(c, st, now);
            if (rc < 0) {
                fail(c, rc, "a UDP stream failed to open (connect datagram or the server's reply)", now);
                return;
            }
            if (rc == 0)
                return;
        } else if (st->cookie_done < IPERF_COOKIE_SIZE) {
            int64_t n =
                brisk_send(st->s, st->cookie + st->cookie_done, IPERF_COOKIE_SIZE - st->cookie_done, 0, now);
            if (n == BRISK_ERR_AGAIN)
                return; /* not connected yet, or no room */
            if (n < 0) {
                fail(c, (int)n, "a data stream failed before its cookie was sent", now);
                return;
            }
            st->cookie_done += (uint32_t)n;
            st->connected = 1;
            if (st->cookie_done < IPERF_COOKIE_SIZE)
                return;
        }
        if (c->nstreams == c->p.parallel) {
            c->state = C_WAIT_START;
            return;
        }
        int rc = open_stream(c, c->nstreams, now);
        if (rc < 0) {
            fail(c, rc, "cannot open a data stream", now);
            return;
        }
    }
}

static void send_test_end(struct perf_iperf_client *c, uint64_t now)
{
    c->end_ns = now;
    /* Sending stops here; with -R over TCP the client still counts what arrives until EXCHANGE_RESULTS (over
     * UDP it stops counting here, as iperf3 does). */
    if (!c->p.reverse || c->p.udp)
        perf_intervals_finish(&c->iv, c->streams, now);
    c->state = C_ENDING;
    if (iperf_ctrl_put_state(&c->ctrl, IPERF_TEST_END, now) < 0)
        fail(c, c->ctrl.error, "control connection failed sending TEST_END", now);
}

/* One UDP stream's turn: paced sends, or every queued datagram read (counted while the test runs). */
static void move_udp(struct perf_iperf_client *c, struct perf_stream *st, uint64_t now)
{
    if (st->sender) {
        if (c->state != C_RUNNING || c->udp_blocked || (c->p.bytes && c->sent >= c->p.bytes))
            return;
        int64_t n = perf_stream_udp_send(st, st->u, NULL, 0, c->block, c->p.blksize, c->p.counters64,
                                         c->p.rate, UDP_BURST, now, fine_now(&c->env, now));
        if (n > 0)
            c->sent += (uint64_t)n;
        if (!st->error && perf_stream_udp_due(st, c->p.rate) <= now && n < (int64_t)UDP_BURST * c->p.blksize)
            c->udp_blocked = 1; /* still due after a short burst: the stack had no room */
        return;
    }
    while (st->u && !st->error) {
        int64_t n = brisk_udp_recvfrom(st->u, c->scratch, SCRATCH, NULL, NULL, NULL);
        if (n == BRISK_ERR_AGAIN)
            break;
        if (n < 0) {
            st->error = (int)n;
            break;
        }
        uint64_t before = st->bytes;
        perf_stream_udp_datagram(st, c->scratch, (size_t)n, c->p.counters64, c->state == C_RUNNING,
                                 fine_now(&c->env, now), now);
        c->received += st->bytes - before;
    }
}

static void move_data(struct perf_iperf_client *c, uint64_t now)
{
    for (uint32_t i = 0; i < c->nstreams; i++) {
        struct perf_stream *st = &c->streams[i];
        if (st->udp) {
            move_udp(c, st, now);
            if (st->error && c->state == C_RUNNING) {
                char msg[PERF_ERR_LEN];
                snprintf(msg, sizeof(msg), "a UDP stream failed: %s%s", brisk_strerror(st->error),
                         st->error == BRISK_ERR_MSGSIZE
                             ? " (the datagram is over the path MTU: brisk does not "
                               "fragment; use a smaller -l)"
                             : "");
                fail(c, st->error, msg, now);
                return;
            }
            continue;
        }
        if (!st->s)
            continue;
        if (st->sender) {
            if (c->state != C_RUNNING)
                continue;
            uint64_t budget = UINT64_MAX;
            if (c->p.bytes)
                budget = c->sent < c->p.bytes ? c->p.bytes - c->sent : 0;
            int64_t n = perf_stream_send(st, c->block, c->p.blksize, budget, now);
            if (n > 0)
                c->sent += (uint64_t)n;
        } else {
            /* After our results went out the bytes are drained, not counted: the figures stay the ones the
             * server was told. */
            int count = c->state < C_WAIT_RESULTS;
            int64_t n = perf_stream_recv(st, c->scratch, SCRATCH, count, now);
            if (n > 0 && count)
                c->received += (uint64_t)n;
        }
        /* A stream that fails while the test runs ends the test; after TEST_END the server closes them. */
        if (st->error && c->state == C_RUNNING) {
            fail(c, st->error, "a data stream failed during the test", now);
            return;
        }
    }
    if (c->state == C_RUNNING) {
        int by_time = c->end_at != BRISK_TIME_NONE && now >= c->end_at;
        int by_bytes = c->p.bytes && (c->sent >= c->p.bytes || c->received >= c->p.bytes);
        if (by_time || by_bytes)
            send_test_end(c, now);
    }
}

static void send_results(struct perf_iperf_client *c, uint64_t now)
{
    struct iperf_stream_result r[PERF_MAX_STREAMS];
    struct iperf_udp_result u[PERF_MAX_STREAMS];
    double secs = (double)(c->end_ns - c->start_ns) / 1e9;
    for (uint32_t i = 0; i < c->nstreams; i++) {
        struct perf_stream *st = &c->streams[i];
        struct brisk_conn_info info;
        r[i].id = st->id;
        r[i].bytes = st->bytes;
        r[i].retransmits = -1;
        if (st->sender && st->s && brisk_conn_info(st->s, &info) == BRISK_OK)
            r[i].retransmits = (int64_t)info.retransmits;
        r[i].start_time = 0;
        r[i].end_time = secs;
        perf_stream_udp_result(st, &u[i]);
    }
    if (c->env.cpu) {
        struct perf_cpu_sample now_cpu;
        c->env.cpu(c->env.cpu_ctx, &now_cpu);
        perf_cpu_util_between(&c->cpu0, &now_cpu, &c->cpu);
        c->have_cpu = 1;
    }
    struct iperf_results_meta meta = {.cpu = c->cpu};
    snprintf(meta.congestion, sizeof(meta.congestion), "%s", c->congestion);
    /* iperf3's flag: a TCP sender has retransmission counts, a UDP sender none (0), a receiver says -1. */
    int has_retr = c->p.udp ? (c->p.reverse ? -1 : 0) : !c->p.reverse;
    json_t *j = iperf_results_to_json(has_retr, r, c->nstreams);
    if (j && (iperf_results_set_meta(j, &meta) != BRISK_OK ||
              iperf_results_set_udp(j, u, c->nstreams) != BRISK_OK)) {
        json_decref(j);
        j = NULL;
    }
    if (!j) {
        fail(c, BRISK_ERR_NOMEM, "cannot build the results", now);
        return;
    }
    int rc = iperf_ctrl_put_json(&c->ctrl, j, now);
    json_decref(j);
    if (rc < 0)
        fail(c, rc, "control connection failed sending the results", now);
}

static void finish(struct perf_iperf_client *c, uint64_t now)
{
    for (uint32_t i = 0; i < c->nstreams; i++)
        perf_stream_close(&c->streams[i], now);
    iperf_ctrl_put_state(&c->ctrl, IPERF_IPERF_DONE, now);
    brisk_sock *s = c->ctrl.s;
    c->ctrl.s = NULL;
    brisk_close(s, now); /* queued bytes (IPERF_DONE) still go out before the FIN */
    c->complete = 1;
    c->state = C_DONE;
    logf_(c, "test complete");
}

/* TEST_START: the intervals' and the CPU clock's origin, and what the report's start object shows. */
static void test_start(struct perf_iperf_client *c, uint64_t now)
{
    perf_intervals_start(&c->iv, c->env.interval_ns, c->p.parallel, now);
    if (c->env.cpu)
        c->env.cpu(c->env.cpu_ctx, &c->cpu0);
    if (c->ctrl.s)
        brisk_conn_info(c->ctrl.s, &c->ctrl_info);
    const brisk_sock *first = c->streams[0].s;
    if (c->streams[0].u) {
        brisk_udp_getsockopt(c->streams[0].u, BRISK_SO_RCVBUF, &c->rcvbuf);
    } else if (first) {
        brisk_getsockopt(first, BRISK_SO_SNDBUF, &c->sndbuf);
        brisk_getsockopt(first, BRISK_SO_RCVBUF, &c->rcvbuf);
        const char *cc = brisk_get_congestion(first);
        snprintf(c->congestion, sizeof(c->congestion), "%s", cc ? cc : "");
    }
}

/* Handles one state byte from the server. */
static void on_state(struct perf_iperf_client *c, int state, uint64_t now)
{
    char msg[96];
    switch (state) {
    case IPERF_PARAM_EXCHANGE: {
        if (c->state != C_WAIT_PARAMS)
            break;
        if (c->p.udp && !c->p.blksize) {
            /* iperf3's UDP default: the control connection's MSS, so datagrams need no fragments */
            struct brisk_conn_info ci;
            uint32_t mss = brisk_conn_info(c->ctrl.s, &ci) == BRISK_OK ? ci.mss : 0;
            c->p.blksize = mss >= PERF_UDP_MIN_LEN && mss <= PERF_UDP_MAX_LEN ? mss : PERF_UDP_DEFAULT_LEN;
        }
        json_t *j = iperf_params_to_json(&c->p);
        int rc = j ? iperf_ctrl_put_json(&c->ctrl, j, now) : BRISK_ERR_NOMEM;
        json_decref(j);
        if (rc < 0) {
            fail(c, rc, "cannot send the parameters", now);
            return;
        }
        c->state = C_WAIT_CREATE;
        return;
    }
    case IPERF_CREATE_STREAMS: {
        if (c->state != C_WAIT_CREATE)
            break;
        c->state = C_STREAMS;
        int rc = open_stream(c, 0, now);
        if (rc < 0)
            fail(c, rc, "cannot open a data stream", now);
        return;
    }
    case IPERF_TEST_START:
        if (c->state != C_WAIT_START && c->state != C_STREAMS)
            break;
        c->test_started = 1;
        c->start_ns = now;
        c->end_at = c->p.duration_ns ? now + c->p.duration_ns : BRISK_TIME_NONE;
        test_start(c, now);
        return;
    case IPERF_TEST_RUNNING:
        if (!c->test_started || (c->state != C_WAIT_START && c->state != C_STREAMS))
            break;
        c->state = C_RUNNING;
        for (uint32_t i = 0; i < c->nstreams; i++)
            c->streams[i].pace_start = now;
        logf_(c, "test running");
        return;
    case IPERF_EXCHANGE_RESULTS:
        if (c->state != C_ENDING)
            break;
        c->state = C_WAIT_RESULTS;
        perf_intervals_finish(&c->iv, c->streams, now); /* from here on nothing is counted */
        send_results(c, now);
        return;
    case IPERF_DISPLAY_RESULTS:
        if (c->state != C_WAIT_DISPLAY)
            break;
        finish(c, now);
        return;
    case IPERF_ACCESS_DENIED:
        fail(c, BRISK_ERR_CONNREFUSED, "the server is busy running a test (ACCESS_DENIED)", now);
        return;
    case IPERF_SERVER_ERROR:
        c->state = C_SERVER_ERROR;
        return;
    case IPERF_SERVER_TERMINATE:
        fail(c, BRISK_ERR_RESET, "the server terminated the test (SERVER_TERMINATE)", now);
        return;
    default:
        break;
    }
    snprintf(msg, sizeof(msg), "unexpected control state %d (%s)", state, iperf_state_name(state));
    fail(c, BRISK_ERR_INVAL, msg, now);
}

static void read_ctrl(struct perf_iperf_client *c, uint64_t now)
{
    iperf_ctrl_read(&c->ctrl, now);
    while (c->state != C_DONE) {
        if (c->state == C_WAIT_RESULTS) {
            json_t *j = NULL;
            int rc = iperf_ctrl_take_json(&c->ctrl, &j);
            if (rc == 0)
                break;
            if (rc < 0) {
                fail(c, rc, "the server's results are not a valid JSON message", now);
                return;
            }
            char err[PERF_ERR_LEN - 32], msg[PERF_ERR_LEN];
            rc = iperf_results_from_json(j, c->remote, PERF_MAX_STREAMS, &c->nremote, err, sizeof(err));
            if (rc == BRISK_OK) {
                iperf_results_get_meta(j, &c->remote_meta);
                iperf_results_get_udp(j, c->remote_udp, c->nremote);
                c->have_remote_meta = 1;
            }
            json_decref(j);
            if (rc < 0) {
                snprintf(msg, sizeof(msg), "server results: %s", err);
                fail(c, rc, msg, now);
                return;
            }
            c->state = C_WAIT_DISPLAY;
            continue;
        }
        if (c->state == C_SERVER_ERROR) {
            if (c->ctrl.in_len < 8)
                break;
            const uint8_t *b = c->ctrl.in;
            uint32_t ie = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
            uint32_t en = (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
            char msg[PERF_ERR_LEN];
            snprintf(msg, sizeof(msg),
                     "the server reported an error (SERVER_ERROR: iperf error %u, errno %u)", ie, en);
            fail(c, BRISK_ERR_INVAL, msg, now);
            return;
        }
        int state;
        if (!iperf_ctrl_take_state(&c->ctrl, &state))
            break;
        on_state(c, state, now);
    }
    if (c->state == C_DONE)
        return;
    if (c->ctrl.error)
        fail(c, c->ctrl.error, "the control connection failed", now);
    else if (c->ctrl.eof)
        fail(c, BRISK_ERR_RESET, "the server closed the control connection", now);
}

static void step(struct perf_iperf_client *c, uint64_t now)
{
    if (c->in_step) {
        c->again = 1;
        return;
    }
    c->in_step = 1;
    do {
        c->again = 0;
        c->udp_blocked = 0; /* set again in move_data if the stack still has no room */
        if (c->state == C_DONE)
            break;
        if (c->state != C_RUNNING && now >= c->guard_at) {
            char msg[96];
            snprintf(msg, sizeof(msg), "the server did not answer for 30 s (client state %d)", (int)c->state);
            fail(c, BRISK_ERR_TIMEDOUT, msg, now);
            break;
        }
        if (c->state == C_CONNECTING) {
            int e = brisk_sock_error(c->ctrl.s);
            if (e) {
                fail(c, e, "cannot connect to the server", now);
                break;
            }
            /* The cookie is the first thing on the wire; brisk_send refuses until connected. */
            int64_t n = brisk_send(c->ctrl.s, c->cookie, IPERF_COOKIE_SIZE, 0, now);
            if (n == BRISK_ERR_AGAIN)
                continue;
            if (n != IPERF_COOKIE_SIZE) {
                /* A fresh connection's send buffer takes 37 bytes whole; anything else is an error. */
                fail(c, n < 0 ? (int)n : BRISK_ERR_INVAL, "cannot send the cookie", now);
                break;
            }
            c->state = C_WAIT_PARAMS;
        }
        iperf_ctrl_flush(&c->ctrl, now);
        read_ctrl(c, now);
        if (c->state == C_STREAMS)
            pump_streams_open(c, now);
        if (c->state >= C_WAIT_START && c->state <= C_WAIT_DISPLAY)
            move_data(c, now);
        perf_intervals_tick(&c->iv, c->streams, now);
        if (c->state != c->guard_state) {
            c->guard_state = c->state;
            c->guard_at = now + GUARD_NS;
        }
    } while (c->again);
    c->in_step = 0;
    /* Tell the driver when the deadline moved inside a socket callback, so it does not sleep past it. */
    uint64_t d = perf_iperf_client_deadline(c);
    if (d != c->last_deadline) {
        c->last_deadline = d;
        if (c->env.kick)
            c->env.kick(c->env.kick_ctx);
    }
}

struct perf_iperf_client *perf_iperf_client_new(const struct perf_env *env, const struct perf_params *p,
                                                const struct brisk_addr *server, uint64_t now, int *err)
{
    int dummy;
    if (!err)
        err = &dummy;
    if (!env || !env->st || !p || !p->parallel || p->parallel > PERF_MAX_STREAMS ||
        (!p->blksize && !p->udp) ||
        (p->udp && p->blksize && (p->blksize < PERF_UDP_MIN_LEN || p->blksize > PERF_UDP_MAX_LEN)) ||
        (!p->duration_ns && !p->bytes)) {
        *err = BRISK_ERR_INVAL;
        return NULL;
    }
    struct perf_iperf_client *c = calloc(1, sizeof(*c));
    if (!c) {
        *err = BRISK_ERR_NOMEM;
        return NULL;
    }
    c->env = *env;
    c->p = *p;
    c->server = *server;
    c->end_at = BRISK_TIME_NONE;
    iperf_cookie_make(c->cookie, env->seed ^ 0x6272697366ull);
    /* UDP without -l: the length comes with the control connection's MSS; room for the largest. */
    uint32_t block_len = p->udp ? PERF_UDP_MAX_LEN : p->blksize;
    c->block = malloc(block_len);
    c->scratch = malloc(SCRATCH);
    brisk_sock *s = c->block && c->scratch ? brisk_socket(env->st, err) : NULL;
    if (!s) {
        if (!c->block || !c->scratch)
            *err = BRISK_ERR_NOMEM;
        perf_iperf_client_free(c, now);
        return NULL;
    }
    /* iperf3 sends random bytes; any pattern does, but make it not compressible-looking zeros. */
    uint64_t x = env->seed + 1;
    for (uint32_t i = 0; i < block_len; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        c->block[i] = (uint8_t)(x >> 56);
    }
    if (p->udp) {
        /* A family the stack has no UDP for fails here, before the control connection, not at the streams. */
        brisk_udp *probe = brisk_udp_socket(env->st, err);
        int prc = probe ? brisk_udp_connect(probe, server, p->port) : *err;
        brisk_udp_close(probe);
        if (prc < 0) {
            *err = prc;
            brisk_close(s, now);
            perf_iperf_client_free(c, now);
            return NULL;
        }
    }
    iperf_ctrl_init(&c->ctrl, s);
    brisk_sock_set_callback(s, on_event, c);
    brisk_setsockopt(s, BRISK_SO_NODELAY, 1, now); /* small control messages the server waits for */
    int rc = brisk_connect_addr(s, server, p->port, now);
    if (rc != BRISK_ERR_INPROGRESS) {
        *err = rc;
        perf_iperf_client_free(c, now);
        return NULL;
    }
    c->state = c->guard_state = C_CONNECTING;
    c->guard_at = now + GUARD_NS;
    *err = BRISK_OK;
    return c;
}

uint64_t perf_iperf_client_deadline(const struct perf_iperf_client *c)
{
    if (c->state == C_DONE)
        return BRISK_TIME_NONE;
    uint64_t d = c->state == C_RUNNING ? c->end_at : c->guard_at;
    for (uint32_t k = 0; c->state == C_RUNNING && !c->udp_blocked && k < c->nstreams; k++) {
        uint64_t due = perf_stream_udp_due(&c->streams[k], c->p.rate);
        if (due < d && !(c->p.bytes && c->sent >= c->p.bytes))
            d = due;
    }
    uint64_t i = perf_intervals_deadline(&c->iv);
    return i < d ? i : d;
}

void perf_iperf_client_tick(struct perf_iperf_client *c, uint64_t now)
{
    step(c, now);
    if (c->env.kick)
        c->env.kick(c->env.kick_ctx);
}

int perf_iperf_client_done(const struct perf_iperf_client *c)
{
    return c->state == C_DONE;
}

int perf_iperf_client_progress(const struct perf_iperf_client *c, uint64_t *bytes)
{
    *bytes = c->sent + c->received;
    return c->state == C_RUNNING;
}

void perf_iperf_client_report(const struct perf_iperf_client *c, struct perf_report *r)
{
    memset(r, 0, sizeof(*r));
    r->role = 'c';
    r->reverse = c->p.reverse;
    r->complete = c->complete;
    r->error = c->error;
    snprintf(r->err, sizeof(r->err), "%s", c->err);
    r->params = c->p;
    r->nstreams = c->nstreams;
    r->duration_ns = c->end_ns > c->start_ns ? c->end_ns - c->start_ns : 0;
    r->sent = c->sent;
    r->received = c->received;
    snprintf(r->cookie, sizeof(r->cookie), "%.*s", IPERF_COOKIE_SIZE - 1, c->cookie);
    r->ctrl_laddr = c->ctrl_info.tuple.laddr;
    r->ctrl_lport = c->ctrl_info.lport;
    r->ctrl_raddr = c->server;
    r->ctrl_rport = c->p.port;
    r->ctrl_mss = c->ctrl_info.mss;
    r->sndbuf = c->sndbuf;
    r->rcvbuf = c->rcvbuf;
    r->timestamp_s = c->cpu0.unix_s;
    r->have_cpu = c->have_cpu;
    r->cpu = c->cpu;
    r->have_remote_cpu = c->have_remote_meta;
    r->remote_cpu = c->remote_meta.cpu;
    snprintf(r->congestion, sizeof(r->congestion), "%s", c->congestion);
    snprintf(r->remote_congestion, sizeof(r->remote_congestion), "%s", c->remote_meta.congestion);
    perf_iperf_client_intervals(c, &r->intervals);
    for (uint32_t i = 0; i < c->nstreams; i++)
        perf_stream_report_fill(&c->streams[i], c->remote, c->remote_udp, c->nremote, r, &r->streams[i]);
}

void perf_iperf_client_intervals(const struct perf_iperf_client *c, struct perf_intervals_view *out)
{
    perf_intervals_view(&c->iv, out);
}

void perf_iperf_client_free(struct perf_iperf_client *c, uint64_t now)
{
    if (!c)
        return;
    perf_intervals_free(&c->iv);
    for (uint32_t i = 0; i < c->nstreams; i++)
        perf_stream_close(&c->streams[i], now);
    if (c->ctrl.s)
        brisk_abort(c->ctrl.s, now);
    iperf_ctrl_free(&c->ctrl);
    free(c->block);
    free(c->scratch);
    free(c);
}
