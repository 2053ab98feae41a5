/*
 * test_perf_udp.c — brisk-perf's iperf3 -u (tools/perf/udp.c and the engines' UDP paths).
 *
 * The arithmetic with exact inputs: the connect datagrams' bytes (today's and the legacy values), the data
 * header in both widths and a datagram too short for it, loss / out-of-order / jitter as iperf3 counts them
 * (a gap counts as loss, a late datagram is out of order and takes a loss back, the RFC 3550 smoothing of
 * transit differences), and the pacing times. Then the engines end to end in the simulator: a UDP test
 * forward, reversed and with two streams over a clean link, where nothing may be lost and both sides must
 * agree datagram for datagram; a paced stream sends exactly rate * time; a bad parameter (a -l below the
 * header) is refused by the server.
 */
#include <jansson.h>
#include <math.h>
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
#include "perf/udp.h"
#include "support/simnet.h"

#define MS  BRISK_NSEC_PER_MSEC
#define US  BRISK_NSEC_PER_USEC
#define SEC BRISK_NSEC_PER_SEC

/* ---- the arithmetic ---- */

static void test_connect_datagrams(void **state)
{
    (void)state;
    /* What Debian's iperf3 3.12 puts on the wire (captured): "9876" from the client, "6789" back. */
    const uint8_t msg[4] = {0x39, 0x38, 0x37, 0x36}, reply[4] = {0x36, 0x37, 0x38, 0x39};
    assert_memory_equal(perf_udp_connect_msg, msg, 4);
    assert_memory_equal(perf_udp_connect_reply, reply, 4);
    assert_true(perf_udp_is_connect_msg(msg, 4));
    assert_false(perf_udp_is_connect_msg(reply, 4)); /* the two are distinct: a reply is no new stream */
    assert_true(perf_udp_is_connect_reply(reply, 4));
    assert_false(perf_udp_is_connect_reply(msg, 4));
    /* 123456789 / 987654321 from older iperf3s, either byte order */
    const uint8_t lm_le[4] = {0x15, 0xcd, 0x5b, 0x07}, lm_be[4] = {0x07, 0x5b, 0xcd, 0x15};
    const uint8_t lr_le[4] = {0xb1, 0x68, 0xde, 0x3a}, lr_be[4] = {0x3a, 0xde, 0x68, 0xb1};
    assert_true(perf_udp_is_connect_msg(lm_le, 4) && perf_udp_is_connect_msg(lm_be, 4));
    assert_true(perf_udp_is_connect_reply(lr_le, 4) && perf_udp_is_connect_reply(lr_be, 4));
    /* a data datagram that starts with the same bytes is no connect message: the length must be 4 */
    uint8_t longer[12] = {0x39, 0x38, 0x37, 0x36};
    assert_false(perf_udp_is_connect_msg(longer, sizeof(longer)));
    assert_false(perf_udp_is_connect_msg(msg, 3));
}

static void test_header(void **state)
{
    (void)state;
    uint8_t b[16];
    struct perf_udp_header h = {.sec = 0x01020304, .usec = 999999, .pcount = 0x1122334455667788ull}, g;
    assert_int_equal(perf_udp_header_put(b, sizeof(b), &h, 1), 16);
    const uint8_t want64[16] = {1,    2,    3,    4,    0,    0x0f, 0x42, 0x3f,
                                0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
    assert_memory_equal(b, want64, 16);
    assert_true(perf_udp_header_parse(b, 16, 1, &g));
    assert_int_equal(g.sec, h.sec);
    assert_int_equal(g.usec, h.usec);
    assert_int_equal(g.pcount, h.pcount);
    /* 32-bit counters: 12 bytes, the count's low half */
    memset(b, 0, sizeof(b));
    assert_int_equal(perf_udp_header_put(b, sizeof(b), &h, 0), 12);
    assert_memory_equal(b + 8, want64 + 12, 4);
    assert_true(perf_udp_header_parse(b, 12, 0, &g));
    assert_int_equal(g.pcount, 0x55667788u);
    /* too short for the header: refused both ways */
    assert_int_equal(perf_udp_header_put(b, 11, &h, 0), 0);
    assert_int_equal(perf_udp_header_put(b, 15, &h, 1), 0);
    assert_false(perf_udp_header_parse(b, 11, 0, &g));
    assert_false(perf_udp_header_parse(b, 15, 1, &g));
    /* the stamp: seconds and microseconds of a ns clock, seconds truncated to 32 bits as iperf3's */
    perf_udp_stamp(((1ull << 32) + 7) * SEC + 123456789, &h);
    assert_int_equal(h.sec, 7);
    assert_int_equal(h.usec, 123456);
}

/* A datagram numbered n, sent at sent_us, arriving at arrive_us (both on one clock). */
static void feed(struct perf_udp_rx *rx, uint64_t n, uint64_t sent_us, uint64_t arrive_us)
{
    uint8_t d[64];
    struct perf_udp_header h = {.pcount = n};
    perf_udp_stamp(sent_us * US, &h);
    memset(d, 0xa5, sizeof(d));
    perf_udp_header_put(d, sizeof(d), &h, 0);
    perf_udp_rx_datagram(rx, d, sizeof(d), 0, arrive_us * US);
}

static void test_loss_and_reordering(void **state)
{
    (void)state;
    struct perf_udp_rx rx;
    memset(&rx, 0, sizeof(rx));
    feed(&rx, 1, 0, 100);
    feed(&rx, 2, 10, 110);
    feed(&rx, 5, 40, 140); /* 3 and 4 missing: two lost */
    assert_int_equal(rx.packet_count, 5);
    assert_int_equal(rx.lost, 2);
    assert_int_equal(rx.out_of_order, 0);
    feed(&rx, 3, 20, 150); /* late: out of order, and one of the two was not lost after all */
    assert_int_equal(rx.out_of_order, 1);
    assert_int_equal(rx.lost, 1);
    assert_int_equal(rx.packet_count, 5); /* the highest stays */
    feed(&rx, 3, 20, 151); /* a duplicate: out of order again (iperf3's arithmetic cannot tell) */
    assert_int_equal(rx.out_of_order, 2);
    assert_int_equal(rx.lost, 0);
    feed(&rx, 1, 0, 152); /* going backwards with no loss left: the loss stays 0, not negative */
    assert_int_equal(rx.out_of_order, 3);
    assert_int_equal(rx.lost, 0);
    feed(&rx, 6, 50, 160);
    assert_int_equal(rx.packet_count, 6);
    assert_int_equal(rx.datagrams, 7);
    assert_int_equal(rx.bytes, 7 * 64);
    /* a datagram shorter than the header changes nothing but its own count */
    struct perf_udp_rx before = rx;
    uint8_t tiny[11] = {0};
    perf_udp_rx_datagram(&rx, tiny, sizeof(tiny), 0, 200 * US);
    assert_int_equal(rx.short_drops, 1);
    assert_int_equal(rx.datagrams, before.datagrams);
    assert_int_equal(rx.bytes, before.bytes);
    assert_int_equal(rx.packet_count, before.packet_count);
    assert_true(rx.jitter == before.jitter);
    /* 64-bit counters: the number's high half counts, and 12 bytes are too short */
    struct perf_udp_rx r64;
    memset(&r64, 0, sizeof(r64));
    uint8_t d[16];
    struct perf_udp_header h = {.pcount = (1ull << 32) + 2};
    perf_udp_header_put(d, 16, &h, 1);
    perf_udp_rx_datagram(&r64, d, 16, 1, 0);
    assert_int_equal(r64.packet_count, (1ull << 32) + 2);
    assert_int_equal(r64.lost, (1ull << 32) + 1);
    perf_udp_rx_datagram(&r64, d, 12, 1, 0);
    assert_int_equal(r64.short_drops, 1);
}

static void test_jitter(void **state)
{
    (void)state;
    struct perf_udp_rx rx;
    memset(&rx, 0, sizeof(rx));
    /* A constant transit (any offset between the clocks) has no jitter. */
    for (uint64_t i = 1; i <= 10; i++)
        feed(&rx, i, i * 1000, i * 1000 + 123456);
    assert_true(rx.jitter == 0);
    /* Transits alternating 100 and 300 us: every |D| is 200 us, J moves a sixteenth of the way each time:
     * after n such datagrams J = 200 us * (1 - (15/16)^n). */
    memset(&rx, 0, sizeof(rx));
    feed(&rx, 1, 0, 100); /* the reference: J stays 0 */
    assert_true(rx.jitter == 0);
    double want = 0;
    for (uint64_t i = 2; i <= 40; i++) {
        feed(&rx, i, i * 1000, i * 1000 + (i % 2 ? 100 : 300));
        want += (200e-6 - want) / 16;
        assert_true(fabs(rx.jitter - want) < 1e-12);
    }
    assert_true(rx.jitter > 0.8 * 200e-6 && rx.jitter < 200e-6);
    /* An arrival stamped before the send (clocks that disagree): iperf3 takes the absolute transit. */
    struct perf_udp_rx neg;
    memset(&neg, 0, sizeof(neg));
    feed(&neg, 1, 1000, 900);  /* transit -100 us, taken as 100 */
    feed(&neg, 2, 2000, 2100); /* +100 us: the same magnitude, no jitter */
    assert_true(neg.jitter == 0);
}

static void test_pacing(void **state)
{
    (void)state;
    /* 1 Mbit/s of 32 KB datagrams: one every 262.144 ms; in a 1 s test datagrams 0..3 go before 1 s and the
     * fifth exactly at it, as iperf3 sends 5. */
    uint64_t t0 = 5 * SEC;
    assert_int_equal(perf_udp_pace_next(PERF_UDP_DEFAULT_RATE, t0, 0), t0);
    assert_int_equal(perf_udp_pace_next(PERF_UDP_DEFAULT_RATE, t0, 32768), t0 + 250 * MS);
    assert_int_equal(perf_udp_pace_next(PERF_UDP_DEFAULT_RATE, t0, 4 * 32768), t0 + SEC);
    /* 100 Mbit/s of 1400 B: 112 us apart */
    assert_int_equal(perf_udp_pace_next(100000000, 0, 1400), 112 * US);
    /* no overflow far past 2^64 / 8e9 bytes: 10 GB at 1 Gbit/s is 80 s */
    assert_int_equal(perf_udp_pace_next(1000000000, 0, 10000000000ull), 80 * SEC);
    /* 0: unlimited, always due */
    assert_int_equal(perf_udp_pace_next(0, t0, 1u << 30), t0);
}

static void test_params(void **state)
{
    (void)state;
    struct perf_params p;
    perf_params_default(&p);
    p.udp = 1;
    p.rate = 100000000;
    p.blksize = 1400;
    p.counters64 = 1;
    json_t *j = iperf_params_to_json(&p);
    assert_non_null(j);
    assert_true(json_is_true(json_object_get(j, "udp")));
    assert_null(json_object_get(j, "tcp"));
    assert_int_equal(json_integer_value(json_object_get(j, "bandwidth")), 100000000);
    assert_int_equal(json_integer_value(json_object_get(j, "udp_counters_64bit")), 1);
    struct perf_params q;
    char err[128];
    q.port = 5201;
    assert_int_equal(iperf_params_from_json(j, &q, err, sizeof(err)), BRISK_OK);
    assert_true(q.udp && q.counters64);
    assert_int_equal(q.rate, 100000000);
    assert_int_equal(q.blksize, 1400);
    /* a length below the header, or over a datagram, is refused with a reason */
    json_object_set_new(j, "len", json_integer(8));
    assert_int_equal(iperf_params_from_json(j, &q, err, sizeof(err)), BRISK_ERR_INVAL);
    assert_non_null(strstr(err, "UDP datagram length 8"));
    json_object_set_new(j, "len", json_integer(PERF_UDP_MAX_LEN + 1));
    assert_int_equal(iperf_params_from_json(j, &q, err, sizeof(err)), BRISK_ERR_INVAL);
    /* without "bandwidth": iperf3's 1 Mbit/s */
    json_object_set_new(j, "len", json_integer(64));
    json_object_del(j, "bandwidth");
    assert_int_equal(iperf_params_from_json(j, &q, err, sizeof(err)), BRISK_OK);
    assert_int_equal(q.rate, PERF_UDP_DEFAULT_RATE);
    json_decref(j);
}

/* ---- the engines in the simulator ---- */

struct drive {
    brisk_sim_world *w;
    brisk_sim_host *h;
    void *e;
    int server;
};

static uint64_t deadline_of(struct drive *d)
{
    return d->server ? perf_iperf_server_deadline(d->e) : perf_iperf_client_deadline(d->e);
}

static void fire(void *ctx, uint64_t now)
{
    struct drive *d = ctx;
    if (!d->e || now < deadline_of(d))
        return;
    if (d->server)
        perf_iperf_server_tick(d->e, now);
    else
        perf_iperf_client_tick(d->e, now);
}

static void kick(void *ctx)
{
    struct drive *d = ctx;
    brisk_sim_host_kick(d->h);
    if (!d->e)
        return;
    uint64_t t = deadline_of(d), now = brisk_sim_now(d->w);
    if (t != BRISK_TIME_NONE)
        brisk_sim_at(d->w, t > now ? t : now, fire, d);
}

static int client_done(void *ctx)
{
    return perf_iperf_client_done(ctx);
}

static const struct brisk_addr b_addr = {.family = BRISK_AF_INET, .u.v4 = SIMNET_B_IP};

struct pair {
    struct simnet n;
    struct drive dc, ds;
    struct perf_iperf_client *c;
    struct perf_iperf_server *s;
    struct perf_report rc, rs;
    int have_rs;
};

/* Runs one test of p over a clean 1 Gbit/s link with 100 us one-way delay. */
static void run_pair(struct pair *x, const struct perf_params *p)
{
    memset(x, 0, sizeof(*x));
    simnet_init(&x->n, 7, NULL, BRISK_NETDEV_CAP_CSUM, 1000000000ull, 100 * US, NULL);
    struct perf_env es = {.st = brisk_sim_host_stack(x->n.b), .kick = kick, .kick_ctx = &x->ds, .seed = 1};
    struct perf_env ec = {.st = brisk_sim_host_stack(x->n.a), .kick = kick, .kick_ctx = &x->dc, .seed = 2};
    es.interval_ns = ec.interval_ns = 100 * MS;
    if (getenv("BRISK_PERF_VERBOSE"))
        es.log = ec.log = stderr;
    x->ds = (struct drive){.w = x->n.w, .h = x->n.b, .server = 1};
    x->dc = (struct drive){.w = x->n.w, .h = x->n.a};
    int err;
    x->s = perf_iperf_server_new(&es, &b_addr, p->port, 1, &err);
    assert_non_null(x->s);
    x->ds.e = x->s;
    x->c = perf_iperf_client_new(&ec, p, &b_addr, brisk_sim_now(x->n.w), &err);
    assert_non_null(x->c);
    x->dc.e = x->c;
    brisk_sim_host_kick(x->n.a);
    assert_true(brisk_sim_run_while(x->n.w, client_done, x->c, 60 * SEC));
    brisk_sim_run_until(x->n.w, brisk_sim_now(x->n.w) + 10 * MS);
    perf_iperf_client_report(x->c, &x->rc);
    x->have_rs = perf_iperf_server_last_report(x->s, &x->rs);
    if (getenv("BRISK_PERF_VERBOSE")) {
        struct brisk_counters ca, cb;
        brisk_stack_get_counters(brisk_sim_host_stack(x->n.a), &ca);
        brisk_stack_get_counters(brisk_sim_host_stack(x->n.b), &cb);
        for (size_t i = 0; i < brisk_counters_count(); i++)
            if (brisk_counter_value(&ca, i) || brisk_counter_value(&cb, i))
                fprintf(stderr, "%s a=%llu b=%llu\n", brisk_counter_name(i),
                        (unsigned long long)brisk_counter_value(&ca, i),
                        (unsigned long long)brisk_counter_value(&cb, i));
    }
}

static void free_pair(struct pair *x)
{
    uint64_t now = brisk_sim_now(x->n.w);
    perf_iperf_client_free(x->c, now);
    perf_iperf_server_free(x->s, now);
    x->dc.e = x->ds.e = NULL;
    assert_int_equal(brisk_stack_udp_sockets(brisk_sim_host_stack(x->n.a)), 0);
    assert_int_equal(brisk_stack_udp_sockets(brisk_sim_host_stack(x->n.b)), 0);
    simnet_free(&x->n);
}

static struct perf_params udp_params(uint64_t rate, uint32_t len, uint32_t streams, int reverse)
{
    struct perf_params p;
    perf_params_default(&p);
    p.udp = 1;
    p.rate = rate;
    p.blksize = len;
    p.parallel = streams;
    p.reverse = reverse;
    p.duration_ns = 1 * SEC;
    return p;
}

/* Both sides complete and agree stream by stream: the receiver saw every datagram the sender sent (a clean
 * link, nothing in flight at TEST_END beyond what it still counts), in order, with a tiny jitter; the
 * sender's rate is -b exactly. */
static void check_udp(const struct pair *x, uint64_t rate)
{
    const struct perf_report *c = &x->rc, *s = &x->rs;
    assert_true(c->complete);
    assert_true(x->have_rs);
    assert_true(s->complete);
    assert_true(c->params.udp && s->params.udp);
    assert_int_equal(s->nstreams, c->params.parallel);
    for (uint32_t i = 0; i < c->nstreams; i++) {
        const struct perf_stream_report *cs = &c->streams[i], *ss = &s->streams[i];
        const struct perf_stream_report *snd = cs->sender ? cs : ss, *rcv = cs->sender ? ss : cs;
        if (getenv("BRISK_PERF_VERBOSE"))
            fprintf(stderr, "stream %d: sent %llu, highest %llu, lost %llu, ooo %llu, bytes %llu\n", cs->id,
                    (unsigned long long)snd->packets, (unsigned long long)rcv->packets,
                    (unsigned long long)rcv->lost, (unsigned long long)rcv->out_of_order,
                    (unsigned long long)rcv->bytes);
        assert_true(cs->udp && ss->udp);
        assert_int_equal(cs->id, ss->id);
        /* each side's figures are what the other was told */
        assert_int_equal(cs->remote_bytes, ss->bytes);
        assert_int_equal(ss->remote_bytes, cs->bytes);
        assert_int_equal(snd->packets, rcv->remote_packets);
        assert_int_equal(rcv->packets, snd->remote_packets);
        assert_int_equal(rcv->lost, snd->remote_lost);
        assert_true(rcv->jitter == snd->remote_jitter);
        /* a clean link: nothing lost, nothing late; a datagram in flight at TEST_END is not counted */
        assert_int_equal(rcv->lost, 0);
        assert_int_equal(rcv->out_of_order, 0);
        /* the receiver stops counting at TEST_END; the sender stops when it reads it, an RTT later: what it
         * sent meanwhile (plus a pacing step) is not counted */
        uint64_t in_flight = rate / 8 / c->params.blksize * 1200 / 1000000 + 2; /* 1.2 ms of datagrams */
        assert_true(rcv->packets <= snd->packets && rcv->packets + in_flight >= snd->packets);
        assert_int_equal(rcv->bytes, rcv->packets * c->params.blksize);
        assert_true(isfinite(rcv->jitter) && rcv->jitter < 50e-6);
        /* paced at -b: datagrams 0 ... k leave by t with k * len * 8 / rate <= t */
        double secs = (double)c->duration_ns / 1e9;
        if (c->reverse)
            secs = (double)s->duration_ns / 1e9;
        double want = (double)rate * secs / 8 / c->params.blksize;
        assert_true(fabs((double)snd->packets - want) <= 2);
    }
}

static void test_sim_forward(void **state)
{
    (void)state;
    struct pair x;
    struct perf_params p = udp_params(100000000, 1400, 1, 0);
    run_pair(&x, &p);
    check_udp(&x, p.rate);
    free_pair(&x);
}

static void test_sim_reverse_two_streams_64bit(void **state)
{
    (void)state;
    struct pair x;
    struct perf_params p = udp_params(20000000, 64, 2, 1);
    p.counters64 = 1;
    run_pair(&x, &p);
    check_udp(&x, p.rate);
    /* the intervals add up to the totals, datagrams too */
    const struct perf_intervals_view *v = &x.rc.intervals;
    assert_true(v->n >= 10);
    for (uint32_t k = 0; k < v->nstreams; k++) {
        uint64_t bytes = 0, packets = 0;
        for (uint32_t i = 0; i < v->n; i++) {
            assert_true(v->st[(size_t)i * v->nstreams + k].have_udp);
            bytes += v->st[(size_t)i * v->nstreams + k].bytes;
            packets += v->st[(size_t)i * v->nstreams + k].packets;
        }
        assert_int_equal(bytes, x.rc.streams[k].bytes);
        assert_int_equal(packets, x.rc.streams[k].packets);
    }
    free_pair(&x);
}

static void test_sim_default_length(void **state)
{
    (void)state;
    /* No -l: the control connection's MSS, so a datagram fills a frame without fragments. */
    struct pair x;
    struct perf_params p = udp_params(PERF_UDP_DEFAULT_RATE, 0, 1, 0);
    run_pair(&x, &p);
    assert_true(x.rc.complete);
    assert_true(x.rc.params.blksize >= 1400 && x.rc.params.blksize <= 1472);
    assert_int_equal(x.rs.params.blksize, x.rc.params.blksize);
    free_pair(&x);
}

static void test_sim_json(void **state)
{
    (void)state;
    struct pair x;
    struct perf_params p = udp_params(10000000, 1000, 1, 0);
    run_pair(&x, &p);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    perf_report_json(f, &x.rs);
    fclose(f);
    json_error_t e;
    json_t *j = json_loads(buf, 0, &e);
    assert_non_null(j);
    json_t *end = json_object_get(j, "end");
    json_t *u = json_object_get(json_array_get(json_object_get(end, "streams"), 0), "udp");
    assert_non_null(u);
    assert_int_equal(json_integer_value(json_object_get(u, "packets")), x.rc.streams[0].packets);
    assert_int_equal(json_integer_value(json_object_get(u, "lost_packets")), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(end, "sum_received"), "bytes")),
                     x.rs.streams[0].bytes);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(j, "start"), "test_start"), "protocol")),
                        "UDP");
    json_decref(j);
    free(buf);
    free_pair(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect_datagrams),
        cmocka_unit_test(test_header),
        cmocka_unit_test(test_loss_and_reordering),
        cmocka_unit_test(test_jitter),
        cmocka_unit_test(test_pacing),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_sim_forward),
        cmocka_unit_test(test_sim_reverse_two_streams_64bit),
        cmocka_unit_test(test_sim_default_length),
        cmocka_unit_test(test_sim_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
