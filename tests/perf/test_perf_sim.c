/*
 * test_perf_sim.c — brisk-perf's engines end to end in the simulator: an iperf3 client engine on host a and
 * the server engine on host b (10.0.0.2) run the whole iperf3 exchange over simulated links; the request/
 * response client runs against the echo server. Virtual time makes the test's end exact and the figures
 * reproducible, so the assertions can be tight: the test lasts exactly its duration, byte counts agree
 * between what one side measured and what the other reported, the JSON output parses back to the same
 * numbers, a second client is refused while a test runs, and a hostile control message ends only its test.
 * The interval reports tile the test on the -i grid and add up to the totals; the CPU figures are computed
 * from a scripted CPU clock and cross the results exchange.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "perf/iperf_proto.h"
#include "perf/perf.h"
#include "support/simnet.h"

#define GBIT 1000000000ull
#define US   BRISK_NSEC_PER_USEC
#define MS   BRISK_NSEC_PER_MSEC
#define SEC  BRISK_NSEC_PER_SEC

/* Drives one engine in the world: its kick schedules a world event at the engine's deadline. */
struct drive {
    brisk_sim_world *w;
    brisk_sim_host *h;
    void *e;
    uint64_t (*deadline)(void *e);
    void (*tick)(void *e, uint64_t now);
    uint64_t user_div, sys_div; /* the scripted CPU clock: user time now / user_div, system now / sys_div */
};

/* A CPU clock whose use is an exact share of virtual time: user 1/user_div, system 1/sys_div. */
/* The server's address as the engines take it (IPv4 here), and "any" for servers that listen on it. */
static const struct brisk_addr b_addr = {.family = BRISK_AF_INET, .u.v4 = SIMNET_B_IP};
static const struct brisk_addr any_addr = {.family = BRISK_AF_INET};

static void sim_cpu(void *ctx, struct perf_cpu_sample *out)
{
    struct drive *d = ctx;
    uint64_t now = brisk_sim_now(d->w);
    out->mono_ns = now;
    out->unix_s = 1700000000 + now / BRISK_NSEC_PER_SEC;
    out->user_ns = now / d->user_div;
    out->system_ns = now / d->sys_div;
}

static uint64_t cli_deadline(void *e)
{
    return perf_iperf_client_deadline(e);
}
static void cli_tick(void *e, uint64_t now)
{
    perf_iperf_client_tick(e, now);
}
static uint64_t srv_deadline(void *e)
{
    return perf_iperf_server_deadline(e);
}
static void srv_tick(void *e, uint64_t now)
{
    perf_iperf_server_tick(e, now);
}
static uint64_t rr_deadline(void *e)
{
    return perf_rr_client_deadline(e);
}
static void rr_tick(void *e, uint64_t now)
{
    perf_rr_client_tick(e, now);
}

static void fire(void *ctx, uint64_t now)
{
    struct drive *d = ctx;
    if (d->e && now >= d->deadline(d->e))
        d->tick(d->e, now);
}

static void kick(void *ctx)
{
    struct drive *d = ctx;
    brisk_sim_host_kick(d->h);
    if (!d->e)
        return;
    uint64_t t = d->deadline(d->e), now = brisk_sim_now(d->w);
    if (t != BRISK_TIME_NONE)
        brisk_sim_at(d->w, t > now ? t : now, fire, d);
}

static struct perf_env env_for(struct drive *d, brisk_sim_host *h, brisk_sim_world *w, uint64_t seed)
{
    d->w = w;
    d->h = h;
    struct perf_env env = {.st = brisk_sim_host_stack(h), .kick = kick, .kick_ctx = d, .seed = seed};
    env.interval_ns = 50 * BRISK_NSEC_PER_MSEC;
    if (getenv("BRISK_PERF_VERBOSE"))
        env.log = stderr;
    return env;
}

static int client_done(void *ctx)
{
    return perf_iperf_client_done(ctx);
}

struct pair {
    struct simnet n;
    struct drive dc, ds;
    struct perf_iperf_client *c;
    struct perf_iperf_server *s;
    struct perf_report rc, rs;
    int have_rs;
};

/* Runs one iperf3 test of parameters p over a symmetric link of `rate` and one-way `delay`, with interval
 * reports every interval_ns and the scripted CPU clocks: the client uses 25 % user + 12.5 % system, the
 * server 50 % + 10 %. */
static void run_pair_iv(struct pair *x, const struct perf_params *p, uint64_t rate, uint64_t delay,
                        uint64_t seed, uint64_t interval_ns)
{
    memset(x, 0, sizeof(*x));
    simnet_init(&x->n, seed, NULL, BRISK_NETDEV_CAP_GSO | BRISK_NETDEV_CAP_CSUM, rate, delay, NULL);
    struct perf_env es = env_for(&x->ds, x->n.b, x->n.w, seed + 1);
    struct perf_env ec = env_for(&x->dc, x->n.a, x->n.w, seed + 2);
    es.interval_ns = ec.interval_ns = interval_ns;
    x->dc.user_div = 4;
    x->dc.sys_div = 8;
    x->ds.user_div = 2;
    x->ds.sys_div = 10;
    ec.cpu = es.cpu = sim_cpu;
    ec.cpu_ctx = &x->dc;
    es.cpu_ctx = &x->ds;
    int err;
    x->s = perf_iperf_server_new(&es, &b_addr, p->port, 1, &err);
    assert_non_null(x->s);
    x->ds.e = x->s;
    x->ds.deadline = srv_deadline;
    x->ds.tick = srv_tick;
    x->c = perf_iperf_client_new(&ec, p, &b_addr, brisk_sim_now(x->n.w), &err);
    assert_non_null(x->c);
    x->dc.e = x->c;
    x->dc.deadline = cli_deadline;
    x->dc.tick = cli_tick;
    brisk_sim_host_kick(x->n.a);
    assert_true(brisk_sim_run_while(x->n.w, client_done, x->c, 60 * SEC));
    /* Let the server read IPERF_DONE and close. */
    brisk_sim_run_until(x->n.w, brisk_sim_now(x->n.w) + 10 * MS);
    perf_iperf_client_report(x->c, &x->rc);
    x->have_rs = perf_iperf_server_last_report(x->s, &x->rs);
}

static void run_pair(struct pair *x, const struct perf_params *p, uint64_t rate, uint64_t delay,
                     uint64_t seed)
{
    run_pair_iv(x, p, rate, delay, seed, 50 * MS);
}

/* A report's intervals tile [0, its last end) on the grid of `period` (all but the last end on a multiple of
 * it), and each stream's interval bytes add up to its total. Returns the number of intervals. */
static uint32_t check_intervals(const struct perf_report *r, uint64_t period)
{
    const struct perf_intervals_view *v = &r->intervals;
    assert_int_equal(v->truncated, 0);
    assert_int_equal(v->nstreams, r->nstreams);
    assert_true(v->n >= 1);
    assert_int_equal(v->iv[0].start_ns, 0);
    for (uint32_t i = 0; i < v->n; i++) {
        assert_true(v->iv[i].end_ns > v->iv[i].start_ns);
        if (i > 0)
            assert_int_equal(v->iv[i].start_ns, v->iv[i - 1].end_ns);
        if (i + 1 < v->n)
            assert_int_equal(v->iv[i].end_ns, (uint64_t)(i + 1) * period);
    }
    for (uint32_t k = 0; k < r->nstreams; k++) {
        uint64_t sum = 0;
        for (uint32_t i = 0; i < v->n; i++) {
            const struct perf_interval_stream *s = &v->st[(size_t)i * v->nstreams + k];
            assert_int_equal(s->id, r->streams[k].id);
            assert_int_equal(s->sender, r->streams[k].sender);
            /* TCP state only on a stream this side sends on, as in iperf3's intervals */
            assert_int_equal(s->have_tcp, r->streams[k].sender);
            if (s->have_tcp) {
                assert_true(s->snd_cwnd > 0);
                assert_true(s->snd_wnd > 0);
                assert_true(s->rtt_us >= 100); /* the path's round trip is 100 us */
                assert_int_equal(s->pmtu, r->streams[k].mss + 40);
            }
            sum += s->bytes;
        }
        assert_int_equal(sum, r->streams[k].bytes);
    }
    return v->n;
}

static void check_cpu(double got, double want)
{
    if (got < want - 1e-6 || got > want + 1e-6)
        fail_msg("cpu %.9f, expected %.9f", got, want);
}

static void free_pair(struct pair *x)
{
    uint64_t now = brisk_sim_now(x->n.w);
    perf_iperf_client_free(x->c, now);
    perf_iperf_server_free(x->s, now);
    x->dc.e = x->ds.e = NULL;
    simnet_free(&x->n);
}

static void check_agreement(const struct pair *x)
{
    const struct perf_report *c = &x->rc, *s = &x->rs;
    assert_true(c->complete);
    assert_int_equal(c->error, 0);
    assert_true(x->have_rs);
    assert_true(s->complete);
    assert_true(perf_iperf_server_done(x->s));
    assert_int_equal(perf_iperf_server_tests(x->s), 1);
    assert_int_equal(c->nstreams, c->params.parallel);
    assert_int_equal(s->nstreams, c->nstreams);
    /* Each side's own figures equal what the other side reported for them, stream by stream. */
    for (uint32_t i = 0; i < c->nstreams; i++) {
        assert_int_equal(c->streams[i].id, iperf_stream_id(i));
        assert_int_equal(s->streams[i].id, c->streams[i].id);
        assert_int_equal(c->streams[i].sender, !c->reverse);
        assert_int_equal(s->streams[i].sender, c->reverse);
        assert_int_equal(c->streams[i].remote_bytes, s->streams[i].bytes);
        assert_int_equal(s->streams[i].remote_bytes, c->streams[i].bytes);
        assert_true(c->streams[i].bytes > 0);
    }
    assert_int_equal(c->remote_received + c->remote_sent, s->sent + s->received);
    /* Nothing is received that was not sent. */
    uint64_t sent = c->reverse ? s->sent : c->sent, recv = c->reverse ? c->received : s->received;
    assert_true(recv <= sent);
}

static void test_forward_one_stream(void **state)
{
    (void)state;
    struct perf_params p;
    perf_params_default(&p);
    p.duration_ns = 200 * MS;
    struct pair x;
    run_pair(&x, &p, 1 * GBIT, 50 * US, 1);
    check_agreement(&x);
    /* The client ends the test exactly when its duration has passed (virtual time). */
    assert_int_equal(x.rc.duration_ns, 200 * MS);
    /* 1 Gbit/s for 200 ms is 25 MB; slow start and the 100 us RTT cost little. The server counts until
     * TEST_END reaches it, behind the data queued on the link, so its span is longer than 200 ms; the wire
     * still caps what it can have received in that span. */
    printf("# forward: received %llu bytes in %llu ns\n", (unsigned long long)x.rs.received,
           (unsigned long long)x.rs.duration_ns);
    assert_true(x.rs.received > 18000000);
    assert_true(x.rs.duration_ns >= 200 * MS);
    assert_true((double)x.rs.received * 8 <= 1e9 * (double)x.rs.duration_ns / 1e9);
    free_pair(&x);
}

static void test_reverse_three_streams(void **state)
{
    (void)state;
    struct perf_params p;
    perf_params_default(&p);
    p.duration_ns = 300 * MS;
    p.parallel = 3;
    p.reverse = 1;
    p.blksize = 16384;
    struct pair x;
    run_pair(&x, &p, 1 * GBIT, 50 * US, 2);
    check_agreement(&x);
    assert_int_equal(x.rc.duration_ns, 300 * MS);
    for (int i = 0; i < 3; i++)
        assert_true(x.rc.streams[i].bytes > 1000000); /* every stream moved data */
    free_pair(&x);
}

static void test_bytes_bounded(void **state)
{
    (void)state;
    struct perf_params p;
    perf_params_default(&p);
    p.duration_ns = 0;
    p.bytes = 5000000;
    p.blksize = 100000;
    p.nodelay = 1;
    struct pair x;
    run_pair(&x, &p, 10 * GBIT, 20 * US, 3);
    check_agreement(&x);
    assert_int_equal(x.rc.sent, 5000000); /* -n is exact: the last block is cut to fit */
    assert_true(x.rc.params.nodelay);
    assert_true(x.rs.params.nodelay); /* the flag went through the parameter exchange */
    assert_int_equal(x.rs.params.blksize, 100000);
    free_pair(&x);
}

/* The JSON report parses back to the report's own figures, in iperf3's layout. */
static void test_json_report(void **state)
{
    (void)state;
    struct perf_params p;
    perf_params_default(&p);
    p.duration_ns = 100 * MS;
    struct pair x;
    run_pair(&x, &p, 1 * GBIT, 50 * US, 4);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    perf_report_json(f, &x.rc);
    fclose(f);
    json_error_t e;
    json_t *j = json_loads(buf, 0, &e);
    assert_non_null(j);
    json_int_t sent =
        json_integer_value(json_object_get(json_object_get(json_object_get(j, "end"), "sum_sent"), "bytes"));
    json_int_t recv = json_integer_value(
        json_object_get(json_object_get(json_object_get(j, "end"), "sum_received"), "bytes"));
    assert_int_equal(sent, x.rc.sent);
    assert_int_equal(recv, x.rs.received);
    assert_true(json_is_true(json_object_get(json_object_get(j, "end"), "complete")));
    json_t *streams = json_object_get(json_object_get(j, "end"), "streams");
    assert_int_equal(json_array_size(streams), 1);
    /* brisk's own object on the sending stream: the congestion state and, per hold reason, events and time
     * (a 1 Gbit/s link from a 10 Gbit/s-capable sender: the window, not the device, holds it back). */
    json_t *b = json_object_get(json_array_get(streams, 0), "brisk");
    assert_non_null(b);
    assert_true(json_integer_value(json_object_get(b, "cwnd")) > 0);
    assert_int_equal(json_integer_value(json_object_get(b, "rtos")), 0);
    json_t *holds = json_object_get(b, "holds");
    assert_int_equal(json_object_size(holds), BRISK_HOLD_COUNT - 1);
    json_int_t held = 0;
    for (int k = BRISK_HOLD_NONE + 1; k < BRISK_HOLD_COUNT; k++) {
        json_t *h = json_object_get(holds, brisk_hold_name(k));
        assert_non_null(h);
        held += json_integer_value(json_object_get(h, "ns"));
    }
    assert_true(held > 0);
    /* iperf3's intervals[]: two of 50 ms, streams[] and sum, bytes adding up to sum_sent. */
    json_t *iv = json_object_get(j, "intervals");
    assert_int_equal(json_array_size(iv), 2);
    json_int_t isum = 0;
    for (size_t i = 0; i < json_array_size(iv); i++) {
        json_t *sum = json_object_get(json_array_get(iv, i), "sum");
        json_t *s0 = json_array_get(json_object_get(json_array_get(iv, i), "streams"), 0);
        assert_int_equal(json_integer_value(json_object_get(s0, "bytes")),
                         json_integer_value(json_object_get(sum, "bytes")));
        assert_true(json_is_true(json_object_get(s0, "sender")));
        assert_true(json_integer_value(json_object_get(s0, "rtt")) >= 100); /* us, like iperf3 */
        assert_true(json_is_false(json_object_get(s0, "omitted")));
        isum += json_integer_value(json_object_get(sum, "bytes"));
    }
    assert_int_equal(isum, sent);
    /* start: connected[] and the test's parameters; end: the CPU object (the scripted clock's shares) */
    json_t *start = json_object_get(j, "start");
    json_t *c0 = json_array_get(json_object_get(start, "connected"), 0);
    assert_string_equal(json_string_value(json_object_get(c0, "remote_host")), "10.0.0.2");
    assert_int_equal(json_integer_value(json_object_get(c0, "remote_port")), 5201);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(start, "test_start"), "num_streams")),
                     1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(start, "timestamp"), "time")),
                        "Tue, 14 Nov 2023 22:13:20 GMT");
    json_t *cpu = json_object_get(json_object_get(j, "end"), "cpu_utilization_percent");
    assert_true(json_real_value(json_object_get(cpu, "host_total")) > 37.4);
    assert_true(json_real_value(json_object_get(cpu, "remote_total")) > 59.9);
    assert_true(json_is_string(json_object_get(json_object_get(j, "end"), "sender_tcp_congestion")));
    json_decref(j);
    free(buf);
    free_pair(&x);
}

/* A second client while a test runs is refused with ACCESS_DENIED; the first test is unaffected. */
static void test_busy_server_denies(void **state)
{
    (void)state;
    /* A bounded link queue and TSO keep the sender's TX ring from filling, so the second client's SYN is
     * not refused by the device (it would then wait for the 1 s initial RTO). */
    struct simnet n;
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 1 * GBIT, 50 * US);
    lc.ab.queue_bytes = lc.ba.queue_bytes = 256 * 1024;
    simnet_init(&n, 5, NULL, BRISK_NETDEV_CAP_GSO | BRISK_NETDEV_CAP_CSUM, 0, 0, &lc);
    struct drive ds = {0}, d1 = {0}, d2 = {0};
    struct perf_env es = env_for(&ds, n.b, n.w, 11), e1 = env_for(&d1, n.a, n.w, 12),
                    e2 = env_for(&d2, n.a, n.w, 13);
    int err;
    struct perf_iperf_server *s = perf_iperf_server_new(&es, &any_addr, 5201, 0, &err);
    assert_non_null(s);
    ds = (struct drive){n.w, n.b, s, srv_deadline, srv_tick, 0, 0};
    struct perf_params p;
    perf_params_default(&p);
    p.duration_ns = 300 * MS;
    struct perf_iperf_client *c1 = perf_iperf_client_new(&e1, &p, &b_addr, 0, &err);
    d1 = (struct drive){n.w, n.a, c1, cli_deadline, cli_tick, 0, 0};
    brisk_sim_host_kick(n.a);
    brisk_sim_run_until(n.w, 100 * MS);
    struct perf_iperf_client *c2 = perf_iperf_client_new(&e2, &p, &b_addr, brisk_sim_now(n.w), &err);
    assert_non_null(c2);
    d2 = (struct drive){n.w, n.a, c2, cli_deadline, cli_tick, 0, 0};
    brisk_sim_host_kick(n.a);
    assert_true(brisk_sim_run_while(n.w, client_done, c2, brisk_sim_now(n.w) + 100 * MS));
    assert_false(perf_iperf_client_done(c1));
    struct perf_report r2;
    perf_iperf_client_report(c2, &r2);
    assert_false(r2.complete);
    assert_int_equal(r2.error, BRISK_ERR_CONNREFUSED);
    assert_non_null(strstr(r2.err, "ACCESS_DENIED"));
    assert_true(brisk_sim_run_while(n.w, client_done, c1, 5 * SEC));
    struct perf_report r1;
    perf_iperf_client_report(c1, &r1);
    assert_true(r1.complete);
    brisk_sim_run_until(n.w, brisk_sim_now(n.w) + 10 * MS);
    assert_int_equal(perf_iperf_server_tests(s), 1);
    assert_false(perf_iperf_server_done(s)); /* not one-off: serves on */
    uint64_t now = brisk_sim_now(n.w);
    perf_iperf_client_free(c1, now);
    perf_iperf_client_free(c2, now);
    perf_iperf_server_free(s, now);
    ds.e = d1.e = d2.e = NULL;
    simnet_free(&n);
}

/* A raw client sends a valid cookie and then a JSON length of 4 GB: the server ends that test with an error
 * and serves the next client normally. */
struct raw {
    brisk_sock *s;
    int sent;
};
static void raw_event(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct raw *r = ctx;
    if ((ev & BRISK_EV_CONNECTED) && !r->sent) {
        char cookie[IPERF_COOKIE_SIZE];
        iperf_cookie_make(cookie, 99);
        uint8_t huge[4] = {0xff, 0xff, 0xff, 0xff};
        assert_int_equal(brisk_send(s, cookie, sizeof(cookie), 0, now), sizeof(cookie));
        assert_int_equal(brisk_send(s, huge, 4, 0, now), 4);
        r->sent = 1;
    }
}

static void test_hostile_length(void **state)
{
    (void)state;
    struct simnet n;
    simnet_init(&n, 6, NULL, 0, 1 * GBIT, 50 * US, NULL);
    struct drive ds = {0}, dc = {0};
    struct perf_env es = env_for(&ds, n.b, n.w, 21), ec = env_for(&dc, n.a, n.w, 22);
    int err;
    struct perf_iperf_server *s = perf_iperf_server_new(&es, &any_addr, 5201, 0, &err);
    assert_non_null(s);
    ds = (struct drive){n.w, n.b, s, srv_deadline, srv_tick, 0, 0};
    struct raw r = {0};
    r.s = brisk_socket(brisk_sim_host_stack(n.a), &err);
    brisk_sock_set_callback(r.s, raw_event, &r);
    assert_int_equal(brisk_connect(r.s, SIMNET_B_IP, 5201, 0), BRISK_ERR_INPROGRESS);
    brisk_sim_host_kick(n.a);
    brisk_sim_run_until(n.w, 50 * MS);
    assert_true(r.sent);
    assert_int_equal(perf_iperf_server_tests(s), 1);
    struct perf_report rs;
    assert_true(perf_iperf_server_last_report(s, &rs));
    assert_false(rs.complete);
    assert_int_equal(rs.error, BRISK_ERR_MSGSIZE);
    /* A connection that never completes its cookie is aborted after 10 s, so idle connections cannot
     * exhaust the server's table of new connections. */
    brisk_sock *idle = brisk_socket(brisk_sim_host_stack(n.a), &err);
    assert_int_equal(brisk_connect(idle, SIMNET_B_IP, 5201, brisk_sim_now(n.w)), BRISK_ERR_INPROGRESS);
    brisk_sim_host_kick(n.a);
    brisk_sim_run_until(n.w, brisk_sim_now(n.w) + 20 * MS);
    assert_int_equal(brisk_send(idle, "abc", 3, 0, brisk_sim_now(n.w)), 3);
    brisk_sim_host_kick(n.a);
    brisk_sim_run_until(n.w, brisk_sim_now(n.w) + 9 * SEC);
    assert_int_equal(brisk_sock_error(idle), BRISK_OK);
    brisk_sim_run_until(n.w, brisk_sim_now(n.w) + 2 * SEC);
    assert_int_equal(brisk_sock_error(idle), BRISK_ERR_RESET);
    brisk_close(idle, brisk_sim_now(n.w));
    assert_int_equal(perf_iperf_server_tests(s), 1); /* not a test: never had a cookie */
    /* The next, well-behaved client gets a full test. */
    struct perf_params p;
    perf_params_default(&p);
    p.duration_ns = 100 * MS;
    struct perf_iperf_client *c = perf_iperf_client_new(&ec, &p, &b_addr, brisk_sim_now(n.w), &err);
    dc = (struct drive){n.w, n.a, c, cli_deadline, cli_tick, 0, 0};
    brisk_sim_host_kick(n.a);
    assert_true(brisk_sim_run_while(n.w, client_done, c, brisk_sim_now(n.w) + 5 * SEC)); /* limit: absolute */
    struct perf_report rc;
    perf_iperf_client_report(c, &rc);
    assert_true(rc.complete);
    uint64_t now = brisk_sim_now(n.w);
    brisk_close(r.s, now);
    perf_iperf_client_free(c, now);
    perf_iperf_server_free(s, now);
    ds.e = dc.e = NULL;
    simnet_free(&n);
}

static int rr_done(void *ctx)
{
    return perf_rr_client_done(ctx);
}

/* A server that accepts and then says nothing: the iperf3 client gives up after 30 s in one state, the rr
 * client 10 s after its duration, each with BRISK_ERR_TIMEDOUT, instead of waiting forever. */
struct mute {
    brisk_sock *held[8];
    int n;
};

static void mute_accept(void *ctx, brisk_sock *ls, unsigned ev, uint64_t now)
{
    struct mute *m = ctx;
    (void)ev;
    int err;
    brisk_sock *a;
    while ((a = brisk_accept(ls, &err)) != NULL) { /* accepted and left alone */
        if (m->n < 8)
            m->held[m->n++] = a;
        else
            brisk_abort(a, now);
    }
}

static void test_silent_server(void **state)
{
    (void)state;
    struct simnet n;
    simnet_init(&n, 8, NULL, 0, 1 * GBIT, 50 * US, NULL);
    int err;
    brisk_sock *l = brisk_socket(brisk_sim_host_stack(n.b), &err);
    assert_int_equal(brisk_bind(l, 0, 5201), BRISK_OK);
    assert_int_equal(brisk_listen(l, 8), BRISK_OK);
    struct mute m = {0};
    brisk_sock_set_callback(l, mute_accept, &m);
    struct drive dc = {0}, dr = {0};
    struct perf_env ec = env_for(&dc, n.a, n.w, 41), er = env_for(&dr, n.a, n.w, 42);
    struct perf_params p;
    perf_params_default(&p);
    struct perf_iperf_client *c = perf_iperf_client_new(&ec, &p, &b_addr, 0, &err);
    dc = (struct drive){n.w, n.a, c, cli_deadline, cli_tick, 0, 0};
    struct perf_rr_params q;
    perf_rr_params_default(&q);
    q.port = 5201;
    q.duration_ns = 1 * SEC;
    struct perf_rr_client *r = perf_rr_client_new(&er, &q, &b_addr, 0, &err);
    dr = (struct drive){n.w, n.a, r, rr_deadline, rr_tick, 0, 0};
    brisk_sim_host_kick(n.a);
    assert_true(brisk_sim_run_while(n.w, rr_done, r, 60 * SEC));
    struct perf_rr_report rr;
    perf_rr_client_report(r, &rr);
    assert_int_equal(rr.error, BRISK_ERR_TIMEDOUT);
    assert_int_equal(rr.transactions, 0);
    assert_true(brisk_sim_now(n.w) >= 11 * SEC && brisk_sim_now(n.w) < 12 * SEC);
    assert_false(perf_iperf_client_done(c));
    assert_true(brisk_sim_run_while(n.w, client_done, c, 60 * SEC));
    struct perf_report rc;
    perf_iperf_client_report(c, &rc);
    assert_false(rc.complete);
    assert_int_equal(rc.error, BRISK_ERR_TIMEDOUT);
    assert_true(brisk_sim_now(n.w) >= 30 * SEC && brisk_sim_now(n.w) < 31 * SEC);
    uint64_t now = brisk_sim_now(n.w);
    perf_iperf_client_free(c, now);
    perf_rr_client_free(r, now);
    dc.e = dr.e = NULL;
    brisk_close(l, now);
    for (int i = 0; i < m.n; i++)
        brisk_abort(m.held[i], now);
    simnet_free(&n);
}

/* Request/response against the echo server: a fixed number of transactions, each at least one round trip,
 * percentiles ordered; with NODELAY a 64-byte exchange takes one round trip plus serialization. */
static void test_rr_echo(void **state)
{
    (void)state;
    struct simnet n;
    simnet_init(&n, 7, NULL, 0, 1 * GBIT, 50 * US, NULL);
    struct drive ds = {0}, dc = {0};
    struct perf_env es = env_for(&ds, n.b, n.w, 31), ec = env_for(&dc, n.a, n.w, 32);
    int err;
    struct perf_echo_server *srv = perf_echo_server_new(&es, &any_addr, 7000, 1, &err);
    assert_non_null(srv);
    struct perf_rr_params p;
    perf_rr_params_default(&p);
    p.port = 7000;
    p.count = 200;
    p.duration_ns = 0;
    p.parallel = 2;
    struct perf_rr_client *c = perf_rr_client_new(&ec, &p, &b_addr, 0, &err);
    assert_non_null(c);
    dc = (struct drive){n.w, n.a, c, rr_deadline, rr_tick, 0, 0};
    brisk_sim_host_kick(n.a);
    assert_true(brisk_sim_run_while(n.w, rr_done, c, 10 * SEC));
    struct perf_rr_report r;
    perf_rr_client_report(c, &r);
    assert_true(r.complete);
    assert_true(r.transactions >= 200 &&
                r.transactions <= 201);    /* the other connection's last one may land */
    assert_true(r.lat_min_ns >= 100 * US); /* one round trip */
    assert_true(r.p50_ns <= r.p90_ns && r.p90_ns <= r.p99_ns && r.p99_ns <= r.lat_max_ns);
    assert_true(r.p99_ns < 200 * US); /* no delayed-ACK or Nagle wait on the path */
    assert_true(r.tps > 2 * 1e9 / 200e3);
    assert_int_equal(perf_echo_server_connections(srv), 2);
    assert_int_equal(perf_echo_server_bytes(srv), r.transactions * 64);
    printf("# rr: %llu transactions, p50 %llu ns, p99 %llu ns, %.0f/s\n", (unsigned long long)r.transactions,
           (unsigned long long)r.p50_ns, (unsigned long long)r.p99_ns, r.tps);
    uint64_t now = brisk_sim_now(n.w);
    perf_rr_client_free(c, now);
    dc.e = NULL;
    brisk_sim_run_until(n.w, now + 10 * MS);
    perf_echo_server_free(srv, brisk_sim_now(n.w));
    simnet_free(&n);
}

/* Intervals every 50 ms of a 200 ms test: the client's four end exactly at TEST_END; the server's run until
 * TEST_END reaches it (behind the queued data) and close there. CPU use is the scripted share, and each side
 * learns the other's through the results. */
static void test_intervals_and_cpu(void **state)
{
    (void)state;
    struct perf_params p;
    perf_params_default(&p);
    p.duration_ns = 200 * MS;
    struct pair x;
    run_pair(&x, &p, 1 * GBIT, 50 * US, 5);
    check_agreement(&x);
    assert_int_equal(check_intervals(&x.rc, 50 * MS), 4);
    assert_int_equal(x.rc.intervals.iv[3].end_ns, 200 * MS);
    uint32_t ns = check_intervals(&x.rs, 50 * MS);
    assert_true(ns >= 4);
    assert_int_equal(x.rs.intervals.iv[ns - 1].end_ns, x.rs.duration_ns);
    printf("# intervals: client %u, server %u (server span %llu ns)\n", x.rc.intervals.n, ns,
           (unsigned long long)x.rs.duration_ns);
    assert_true(x.rc.have_cpu && x.rs.have_cpu && x.rc.have_remote_cpu && x.rs.have_remote_cpu);
    check_cpu(x.rc.cpu.user, 25);
    check_cpu(x.rc.cpu.system, 12.5);
    check_cpu(x.rc.cpu.total, 37.5);
    check_cpu(x.rs.cpu.user, 50);
    check_cpu(x.rs.cpu.system, 10);
    check_cpu(x.rc.remote_cpu.total, 60);
    check_cpu(x.rs.remote_cpu.total, 37.5);
    assert_int_equal(x.rc.timestamp_s, 1700000000);
    /* Both sides name their congestion control and learn the other's. */
    assert_true(x.rc.congestion[0] != '\0');
    assert_string_equal(x.rc.remote_congestion, x.rs.congestion);
    assert_string_equal(x.rs.remote_congestion, x.rc.congestion);
    assert_string_equal(x.rc.cookie, x.rs.cookie);
    assert_int_equal(x.rc.streams[0].raddr.u.v4, SIMNET_B_IP);
    assert_int_equal(x.rs.streams[0].laddr.u.v4, SIMNET_B_IP);
    assert_int_equal(x.rc.streams[0].lport, x.rs.streams[0].rport);
    free_pair(&x);
}

/* -R with three streams: the server's intervals carry the TCP state, the client's count until the counts
 * freeze at EXCHANGE_RESULTS; both tile and add up. */
static void test_intervals_reverse(void **state)
{
    (void)state;
    struct perf_params p;
    perf_params_default(&p);
    p.duration_ns = 250 * MS;
    p.parallel = 3;
    p.reverse = 1;
    struct pair x;
    run_pair_iv(&x, &p, 1 * GBIT, 50 * US, 6, 100 * MS);
    check_agreement(&x);
    assert_true(check_intervals(&x.rc, 100 * MS) >= 3);
    uint32_t ns = check_intervals(&x.rs, 100 * MS);
    assert_true(ns >= 3);
    /* the sending server's counts freeze at TEST_END: its last interval ends there */
    assert_int_equal(x.rs.intervals.iv[ns - 1].end_ns, x.rs.duration_ns);
    printf("# reverse intervals: client %u, server %u\n", x.rc.intervals.n, ns);
    free_pair(&x);
}

/* -i 0: no interval reports, and the JSON still has iperf3's (empty) intervals array and its CPU object. */
static void test_no_intervals(void **state)
{
    (void)state;
    struct perf_params p;
    perf_params_default(&p);
    p.duration_ns = 100 * MS;
    struct pair x;
    run_pair_iv(&x, &p, 1 * GBIT, 50 * US, 7, 0);
    check_agreement(&x);
    assert_int_equal(x.rc.intervals.n, 0);
    assert_int_equal(x.rs.intervals.n, 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    perf_report_json(f, &x.rc);
    fclose(f);
    json_t *j = json_loads(buf, 0, NULL);
    assert_non_null(j);
    assert_true(json_is_array(json_object_get(j, "intervals")));
    assert_int_equal(json_array_size(json_object_get(j, "intervals")), 0);
    json_t *cpu = json_object_get(json_object_get(j, "end"), "cpu_utilization_percent");
    assert_true(json_is_number(json_object_get(cpu, "host_total")));
    /* the window and RTT summary falls back to the connection's state at its close */
    json_t *snd =
        json_object_get(json_array_get(json_object_get(json_object_get(j, "end"), "streams"), 0), "sender");
    assert_true(json_integer_value(json_object_get(snd, "max_snd_cwnd")) > 0);
    assert_true(json_integer_value(json_object_get(snd, "mean_rtt")) >= 100);
    json_decref(j);
    free(buf);
    free_pair(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_one_stream),
        cmocka_unit_test(test_reverse_three_streams),
        cmocka_unit_test(test_bytes_bounded),
        cmocka_unit_test(test_json_report),
        cmocka_unit_test(test_busy_server_denies),
        cmocka_unit_test(test_hostile_length),
        cmocka_unit_test(test_rr_echo),
        cmocka_unit_test(test_silent_server),
        cmocka_unit_test(test_intervals_and_cpu),
        cmocka_unit_test(test_intervals_reverse),
        cmocka_unit_test(test_no_intervals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
