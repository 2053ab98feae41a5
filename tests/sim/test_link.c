/*
 * test_link.c — link timing and drop-tail queues, seen from raw ports.
 *
 * Every expected time here is worked out by hand from the model in sim.h: a B-byte frame on an idle link of
 * rate R arrives ceil(B * 8e9 / R) + delay ns after it was sent; frames sent together leave back to back; the
 * queue holds every accepted frame until its serialization ends, the one on the wire included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "brisk/sim.h"
#include "support/testutil.h"

#define MAX_RX 64

struct rx_log {
    size_t n;
    uint64_t t[MAX_RX];
    uint32_t len[MAX_RX];
    uint32_t id[MAX_RX];
};

static void rx_record(void *ctx, brisk_sim_port *p, const uint8_t *frame, size_t len, uint64_t now)
{
    (void)p;
    struct rx_log *log = ctx;
    assert_true(log->n < MAX_RX);
    assert_true(len >= 18);
    log->t[log->n] = now;
    log->len[log->n] = (uint32_t)len;
    log->id[log->n] =
        (uint32_t)frame[14] << 24 | (uint32_t)frame[15] << 16 | (uint32_t)frame[16] << 8 | frame[17];
    log->n++;
}

/* Sends a frame of `len` bytes (>= 18) carrying `id` right after the Ethernet header. */
static void send_id(brisk_sim_port *p, size_t len, uint32_t id)
{
    uint8_t buf[9100];
    assert_true(len >= 18 && len <= sizeof(buf));
    memset(buf, 0xa5, len);
    memset(buf, 0xff, 6);
    buf[12] = 0x88;
    buf[13] = 0xb5;
    buf[14] = (uint8_t)(id >> 24);
    buf[15] = (uint8_t)(id >> 16);
    buf[16] = (uint8_t)(id >> 8);
    buf[17] = (uint8_t)id;
    assert_int_equal(brisk_sim_raw_send(p, buf, len), BRISK_OK);
}

struct pair {
    brisk_sim_world *w;
    brisk_sim_port *a, *b;
    brisk_sim_link *l;
    struct rx_log ra, rb;
};

static void pair_open(struct pair *pr, const struct brisk_sim_link_config *c)
{
    memset(pr, 0, sizeof(*pr));
    pr->w = brisk_sim_world_new(1);
    assert_non_null(pr->w);
    pr->a = brisk_sim_raw_port_add(pr->w, "a", rx_record, &pr->ra);
    pr->b = brisk_sim_raw_port_add(pr->w, "b", rx_record, &pr->rb);
    assert_non_null(pr->a);
    assert_non_null(pr->b);
    pr->l = brisk_sim_link_connect(pr->w, pr->a, pr->b, c);
    assert_non_null(pr->l);
}

static void test_idle_link_delivery_time(void **state)
{
    (void)state;
    /* bytes, rate, delay, serialization time worked out by hand */
    static const struct {
        uint32_t bytes;
        uint64_t rate, delay, ser;
    } cases[] = {
        {64, 10000000000ull, 0, 52},           /* 51.2 ns -> 52 */
        {1514, 10000000000ull, 5000, 1212},    /* 1211.2 -> 1212 */
        {1514, 1000000000ull, 100000, 12112},  /* exact */
        {1500, 1000000000ull, 0, 12000},       /* exact, no rounding up */
        {60, 7000000ull, 3, 68572},            /* 68571.43 -> 68572 */
        {9014, 100000000000ull, 1000000, 722}, /* 721.12 -> 722 */
        {9000, 400000000000ull, 7, 180},       /* exact */
        {18, 1ull, 0, 144000000000ull},        /* 1 bit/s: 144 s */
        {1000, 3000000000ull, 250, 2667},      /* 2666.67 -> 2667 */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct brisk_sim_link_config c;
        brisk_sim_link_config_symmetric(&c, cases[i].rate, cases[i].delay);
        struct pair pr;
        pair_open(&pr, &c);
        uint64_t t0 = 1000 + 17 * i;
        brisk_sim_run_until(pr.w, t0);
        assert_int_equal(brisk_sim_now(pr.w), t0);
        send_id(pr.a, cases[i].bytes, (uint32_t)i);
        brisk_sim_run_until(pr.w, BRISK_TIME_NONE);
        assert_int_equal(pr.rb.n, 1);
        assert_int_equal(pr.rb.t[0], t0 + cases[i].ser + cases[i].delay);
        assert_int_equal(pr.rb.len[0], cases[i].bytes);
        assert_int_equal(pr.rb.id[0], i);
        assert_int_equal(pr.ra.n, 0);
        struct brisk_sim_link_stats s;
        brisk_sim_link_stats(pr.l, 0, &s);
        assert_int_equal(s.frames_in, 1);
        assert_int_equal(s.frames_sent, 1);
        assert_int_equal(s.bytes_sent, cases[i].bytes);
        assert_int_equal(s.delivered, 1);
        assert_int_equal(s.queue_max_bytes, cases[i].bytes);
        brisk_sim_world_free(pr.w);
    }
}

static void test_directions_are_independent(void **state)
{
    (void)state;
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, 1000000000ull, 1000);
    c.ba.rate_bps = 100000000ull; /* 100 Mbit/s back */
    c.ba.delay_ns = 7000;
    struct pair pr;
    pair_open(&pr, &c);
    send_id(pr.a, 1000, 1);
    send_id(pr.b, 1000, 2);
    brisk_sim_run_until(pr.w, BRISK_TIME_NONE);
    assert_int_equal(pr.rb.n, 1);
    assert_int_equal(pr.rb.t[0], 8000 + 1000);
    assert_int_equal(pr.ra.n, 1);
    assert_int_equal(pr.ra.t[0], 80000 + 7000);
    assert_int_equal(pr.ra.id[0], 2);
    struct brisk_sim_link_stats s0, s1;
    brisk_sim_link_stats(pr.l, 0, &s0);
    brisk_sim_link_stats(pr.l, 1, &s1);
    assert_int_equal(s0.delivered, 1);
    assert_int_equal(s1.delivered, 1);
    brisk_sim_world_free(pr.w);
}

static void test_back_to_back_spacing(void **state)
{
    (void)state;
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, 1000000000ull, 10000);
    struct pair pr;
    pair_open(&pr, &c);
    uint64_t t0 = 5000;
    brisk_sim_run_until(pr.w, t0);
    send_id(pr.a, 100, 0);  /* 800 ns */
    send_id(pr.a, 1514, 1); /* 12112 ns */
    send_id(pr.a, 60, 2);   /* 480 ns */
    /* Sent while frame 1 is on the wire: waits for frame 2 to finish. */
    brisk_sim_run_until(pr.w, t0 + 5000);
    send_id(pr.a, 200, 3); /* 1600 ns */
    /* Sent after the link went idle: leaves at once. */
    brisk_sim_run_until(pr.w, t0 + 100000);
    send_id(pr.a, 125, 4); /* 1000 ns */
    brisk_sim_run_until(pr.w, BRISK_TIME_NONE);
    assert_int_equal(pr.rb.n, 5);
    uint64_t e0 = t0 + 800, e1 = e0 + 12112, e2 = e1 + 480, e3 = e2 + 1600, e4 = t0 + 100000 + 1000;
    uint64_t want[5] = {e0, e1, e2, e3, e4};
    for (uint32_t i = 0; i < 5; i++) {
        assert_int_equal(pr.rb.id[i], i);
        assert_int_equal(pr.rb.t[i], want[i] + 10000);
    }
    struct brisk_sim_link_stats s;
    brisk_sim_link_stats(pr.l, 0, &s);
    /* Highest when frame 3 joined: frame 0 had left, 1 was on the wire, 2 and 3 waiting. */
    assert_int_equal(s.queue_max_bytes, 1514 + 60 + 200);
    assert_int_equal(s.bytes_in, 100 + 1514 + 60 + 200 + 125);
    brisk_sim_world_free(pr.w);
}

static void test_queue_packet_limit(void **state)
{
    (void)state;
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, 1000000000ull, 2000);
    c.ab.queue_packets = 5;
    struct pair pr;
    pair_open(&pr, &c);
    const uint64_t ser = 8000; /* 1000 bytes at 1 Gbit/s */
    for (uint32_t i = 0; i < 12; i++)
        send_id(pr.a, 1000, i);
    struct brisk_sim_link_stats s;
    brisk_sim_link_stats(pr.l, 0, &s);
    assert_int_equal(s.frames_in, 12);
    assert_int_equal(s.queue_drops, 7);
    /* Just after the second frame has left, three are still held: room for two more. */
    brisk_sim_run_until(pr.w, 2 * ser + 1);
    for (uint32_t i = 100; i < 104; i++)
        send_id(pr.a, 1000, i);
    brisk_sim_run_until(pr.w, BRISK_TIME_NONE);
    brisk_sim_link_stats(pr.l, 0, &s);
    assert_int_equal(s.queue_drops, 9);
    assert_int_equal(s.frames_sent, 7);
    assert_int_equal(s.delivered, 7);
    assert_int_equal(s.queue_max_bytes, 5000);
    uint32_t want[7] = {0, 1, 2, 3, 4, 100, 101};
    assert_int_equal(pr.rb.n, 7);
    for (uint32_t i = 0; i < 7; i++) {
        assert_int_equal(pr.rb.id[i], want[i]);
        assert_int_equal(pr.rb.t[i], (i + 1) * ser + 2000);
    }
    brisk_sim_world_free(pr.w);
}

static void test_queue_byte_limit(void **state)
{
    (void)state;
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, 1000000000ull, 0);
    c.ab.queue_bytes = 4000;
    struct pair pr;
    pair_open(&pr, &c);
    /* Running total: 1500, 3000, (4500: drop), 3900, 4000 (fits exactly), (4600: drop), (4001: drop). */
    uint32_t sizes[7] = {1500, 1500, 1500, 900, 100, 600, 1};
    for (uint32_t i = 0; i < 7; i++)
        send_id(pr.a, sizes[i] < 18 ? 18 : sizes[i], i);
    brisk_sim_run_until(pr.w, BRISK_TIME_NONE);
    struct brisk_sim_link_stats s;
    brisk_sim_link_stats(pr.l, 0, &s);
    assert_int_equal(s.queue_drops, 3);
    assert_int_equal(s.queue_max_bytes, 4000);
    uint32_t want[4] = {0, 1, 3, 4};
    assert_int_equal(pr.rb.n, 4);
    uint64_t end = 0;
    for (uint32_t i = 0; i < 4; i++) {
        end += (uint64_t)sizes[want[i]] * 8;
        assert_int_equal(pr.rb.id[i], want[i]);
        assert_int_equal(pr.rb.t[i], end);
    }
    brisk_sim_world_free(pr.w);
}

static void test_queue_both_limits(void **state)
{
    (void)state;
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, 10000000000ull, 0);
    c.ab.queue_bytes = 100000;
    c.ab.queue_packets = 3; /* binds first */
    c.ba.queue_bytes = 2000;
    c.ba.queue_packets = 100; /* the byte limit binds first */
    struct pair pr;
    pair_open(&pr, &c);
    for (uint32_t i = 0; i < 10; i++) {
        send_id(pr.a, 500, i);
        send_id(pr.b, 500, i);
    }
    brisk_sim_run_until(pr.w, BRISK_TIME_NONE);
    struct brisk_sim_link_stats ab, ba;
    brisk_sim_link_stats(pr.l, 0, &ab);
    brisk_sim_link_stats(pr.l, 1, &ba);
    assert_int_equal(ab.queue_drops, 7);
    assert_int_equal(ba.queue_drops, 6);
    assert_int_equal(pr.rb.n, 3);
    assert_int_equal(pr.ra.n, 4);
    brisk_sim_world_free(pr.w);
}

static void test_rate_zero_is_instant(void **state)
{
    (void)state;
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, 0, 300);
    struct pair pr;
    pair_open(&pr, &c);
    brisk_sim_run_until(pr.w, 50);
    for (uint32_t i = 0; i < 3; i++)
        send_id(pr.a, 1500, i);
    brisk_sim_run_until(pr.w, BRISK_TIME_NONE);
    assert_int_equal(pr.rb.n, 3);
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(pr.rb.id[i], i);
        assert_int_equal(pr.rb.t[i], 350);
    }
    brisk_sim_world_free(pr.w);
}

static void test_connect_and_send_errors(void **state)
{
    (void)state;
    brisk_sim_world *w = brisk_sim_world_new(3);
    struct rx_log log = {0};
    brisk_sim_port *a = brisk_sim_raw_port_add(w, "a", rx_record, &log);
    brisk_sim_port *b = brisk_sim_raw_port_add(w, "b", rx_record, &log);
    brisk_sim_port *c3 = brisk_sim_raw_port_add(w, "c", NULL, NULL);
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, 1000000000ull, 0);
    assert_null(brisk_sim_link_connect(w, a, a, &c));
    assert_null(brisk_sim_link_connect(w, a, b, NULL));
    c.ab.impair.loss = 1.5;
    assert_null(brisk_sim_link_connect(w, a, b, &c));
    c.ab.impair.loss = 0;
    const uint64_t unsorted[3] = {1, 5, 2};
    c.ba.impair.loss_mask = unsorted;
    c.ba.impair.loss_mask_len = 3;
    assert_null(brisk_sim_link_connect(w, a, b, &c));
    c.ba.impair.loss_mask = NULL;
    assert_null(brisk_sim_link_connect(w, a, b, &c)); /* length without array */
    c.ba.impair.loss_mask_len = 0;

    /* An unconnected port sends into the void. */
    uint8_t frame[64] = {0};
    assert_int_equal(brisk_sim_raw_send(a, frame, sizeof(frame)), BRISK_OK);
    assert_int_equal(brisk_sim_raw_send(a, NULL, 10), BRISK_ERR_INVAL);
    assert_int_equal(brisk_sim_raw_send(a, frame, 0), BRISK_ERR_INVAL);
    assert_int_equal(brisk_sim_raw_send(NULL, frame, 10), BRISK_ERR_INVAL);

    assert_non_null(brisk_sim_link_connect(w, a, b, &c));
    assert_null(brisk_sim_link_connect(w, a, c3, &c)); /* a already connected */
    assert_null(brisk_sim_link_connect(w, c3, b, &c));
    brisk_sim_run_until(w, BRISK_TIME_NONE);
    assert_int_equal(log.n, 0);
    /* A raw port with no receive callback just swallows what arrives. */
    brisk_sim_world *w2 = brisk_sim_world_new(3);
    brisk_sim_port *x = brisk_sim_raw_port_add(w2, NULL, NULL, NULL);
    brisk_sim_port *y = brisk_sim_raw_port_add(w2, NULL, NULL, NULL);
    brisk_sim_link *l2 = brisk_sim_link_connect(w2, x, y, &c);
    assert_non_null(l2);
    assert_int_equal(brisk_sim_raw_send(x, frame, sizeof(frame)), BRISK_OK);
    brisk_sim_run_until(w2, BRISK_TIME_NONE);
    struct brisk_sim_link_stats s;
    brisk_sim_link_stats(l2, 0, &s);
    assert_int_equal(s.delivered, 1);
    struct brisk_sim_nic_stats ns;
    brisk_sim_nic_stats(y, &ns);
    assert_int_equal(ns.rx_frames, 1);
    brisk_sim_nic_stats(x, &ns);
    assert_int_equal(ns.tx_frames, 1);
    assert_null(brisk_sim_port_netdev(x));
    brisk_sim_world_free(w2);
    brisk_sim_world_free(w);
}

static void test_symmetric_config(void **state)
{
    (void)state;
    struct brisk_sim_link_config c;
    memset(&c, 0x5a, sizeof(c));
    brisk_sim_link_config_symmetric(&c, 123456789, 42);
    assert_int_equal(c.ab.rate_bps, 123456789);
    assert_int_equal(c.ba.rate_bps, 123456789);
    assert_int_equal(c.ab.delay_ns, 42);
    assert_int_equal(c.ba.delay_ns, 42);
    assert_int_equal(c.ab.queue_bytes, 0);
    assert_int_equal(c.ba.queue_packets, 0);
    assert_int_equal(c.ab.impair.loss_model, BRISK_SIM_LOSS_NONE);
    assert_null(c.ab.impair.loss_mask);
    assert_true(c.ba.impair.corrupt == 0.0);
}

/* Frames in flight at teardown (queued, on the wire, propagating) are freed without leaks (ASan checks). */
static void test_free_with_frames_in_flight(void **state)
{
    (void)state;
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, 1000000ull, 1000000);
    struct pair pr;
    pair_open(&pr, &c);
    for (uint32_t i = 0; i < 20; i++)
        send_id(pr.a, 1500, i);
    brisk_sim_run_until(pr.w, 30000000); /* a couple delivered, some propagating, most queued */
    assert_true(pr.rb.n > 0 && pr.rb.n < 20);
    brisk_sim_world_free(pr.w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idle_link_delivery_time), cmocka_unit_test(test_directions_are_independent),
        cmocka_unit_test(test_back_to_back_spacing),    cmocka_unit_test(test_queue_packet_limit),
        cmocka_unit_test(test_queue_byte_limit),        cmocka_unit_test(test_queue_both_limits),
        cmocka_unit_test(test_rate_zero_is_instant),    cmocka_unit_test(test_connect_and_send_errors),
        cmocka_unit_test(test_symmetric_config),        cmocka_unit_test(test_free_with_frames_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
