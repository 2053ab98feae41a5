/*
 * test_tcp_bulk.c — TCP through the whole stack and the simulator: bulk transfers between two hosts over a
 * 10 Gbit/s link with 100 µs RTT, clean and impaired, each checked byte for byte; many short connections
 * without leaks.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "support/simnet.h"
#include "support/testutil.h"

#define GBIT 1000000000ull
#define US   BRISK_NSEC_PER_USEC
#define SEC  BRISK_NSEC_PER_SEC

static int bulk_done(void *ctx)
{
    return brisk_sim_bulk_done(ctx);
}

struct run {
    struct brisk_sim_bulk_result r;
    uint64_t elapsed;
    int finished;
};

/* One transfer of `bytes` in `dir` over link config lc; returns the result. */
static struct run transfer(uint64_t seed, const struct brisk_sim_link_config *lc, uint64_t bytes, int dir,
                           uint64_t limit)
{
    struct simnet n;
    simnet_init(&n, seed, NULL, 0, 0, 0, lc);
    struct brisk_sim_bulk_config c = {.bytes = bytes, .dir = dir, .port = 5001, .seed = seed};
    brisk_sim_bulk *b = brisk_sim_bulk_start(n.w, n.a, n.b, SIMNET_B_IP, &c);
    assert_non_null(b);
    struct run out;
    out.finished = brisk_sim_run_while(n.w, bulk_done, b, limit);
    brisk_sim_bulk_result(b, &out.r);
    out.elapsed = brisk_sim_now(n.w);
    brisk_sim_bulk_free(b);
    /* Let TIME-WAIT and everything else run out, then check nothing leaked. */
    brisk_sim_run_until(n.w, brisk_sim_now(n.w) + 120 * SEC);
    assert_int_equal(brisk_stack_sockets(brisk_sim_host_stack(n.a)), 0);
    assert_int_equal(brisk_stack_sockets(brisk_sim_host_stack(n.b)), 0);
    assert_int_equal(brisk_stack_tcp_chunks_in_use(brisk_sim_host_stack(n.a)), 0);
    assert_int_equal(brisk_stack_tcp_chunks_in_use(brisk_sim_host_stack(n.b)), 0);
    simnet_free(&n);
    return out;
}

static double goodput(const struct run *x, uint64_t bytes)
{
    return (double)bytes * 8.0 * 1e9 / (double)(x->r.last_byte_at - x->r.connected_at);
}

static void report(const char *what, const struct run *x, uint64_t bytes)
{
    printf("# %-28s %s  %.3f Gbit/s  elapsed %.3f ms  rtx c/s %" PRIu64 "/%" PRIu64 "  rto %" PRIu64
           "/%" PRIu64 "\n",
           what, x->r.hash_ok ? "byte-exact" : "BROKEN", goodput(x, bytes) / 1e9, (double)x->elapsed / 1e6,
           x->r.client.info.retransmits, x->r.server.info.retransmits, x->r.client.info.rto_count,
           x->r.server.info.rto_count);
}

static void test_clean_100mb_each_way(void **state)
{
    (void)state;
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 10 * GBIT, 50 * US);
    uint64_t bytes = 100000000;
    struct run x = transfer(1, &lc, bytes, BRISK_SIM_BULK_BOTH, 60 * SEC);
    report("clean 10G, 100 MB each way", &x, bytes);
    assert_true(x.finished);
    assert_true(x.r.hash_ok);
    assert_int_equal(x.r.client.received, bytes);
    assert_int_equal(x.r.server.received, bytes);
    /* Each direction shares the link with the other's ACKs, still >= 90 % of line rate. */
    assert_true(goodput(&x, bytes) >= 0.9 * 10 * GBIT);
    assert_int_equal(x.r.client.info.retransmits, 0);
    assert_true(x.r.client.info.ts_ok && x.r.client.info.sack_ok && x.r.client.info.ws_ok);
}

static void test_clean_one_way_line_rate(void **state)
{
    (void)state;
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 10 * GBIT, 50 * US);
    uint64_t bytes = 100000000;
    struct run x = transfer(2, &lc, bytes, BRISK_SIM_BULK_UP, 60 * SEC);
    report("clean 10G, 100 MB up", &x, bytes);
    assert_true(x.r.hash_ok);
    assert_true(goodput(&x, bytes) >= 0.9 * 10 * GBIT);
    /* The sender's figures cover the whole transfer: its last 4 MB (a send buffer) were still queued when
     * its application had written them and seen the receiver's FIN (the receiver shuts down at once). */
    assert_int_equal(x.r.client.info.bytes_acked, bytes);
    assert_true(x.r.client.info.hold_ns[BRISK_HOLD_TSQ] + x.r.client.info.hold_ns[BRISK_HOLD_CWND] +
                    x.r.client.info.hold_ns[BRISK_HOLD_RWND] + x.r.client.info.hold_ns[BRISK_HOLD_DEVICE] +
                    x.r.client.info.hold_ns[BRISK_HOLD_PACING] <=
                x.r.last_byte_at - x.r.connected_at);
    /* 1 Gbit/s too. */
    brisk_sim_link_config_symmetric(&lc, 1 * GBIT, 50 * US);
    bytes = 20000000;
    x = transfer(3, &lc, bytes, BRISK_SIM_BULK_DOWN, 60 * SEC);
    report("clean 1G, 20 MB down", &x, bytes);
    assert_true(x.r.hash_ok);
    assert_true(goodput(&x, bytes) >= 0.9 * 1 * GBIT);
    assert_int_equal(x.r.server.info.bytes_acked, bytes);
}

static void impaired(const char *what, uint64_t seed, double loss, double reorder, double dup, double corrupt,
                     uint64_t bytes)
{
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 10 * GBIT, 50 * US);
    struct brisk_sim_impair *dirs[2] = {&lc.ab.impair, &lc.ba.impair};
    for (int i = 0; i < 2; i++) {
        if (loss > 0) {
            dirs[i]->loss_model = BRISK_SIM_LOSS_RANDOM;
            dirs[i]->loss = loss;
        }
        dirs[i]->reorder = reorder;
        dirs[i]->reorder_delay_ns = 30 * US;
        dirs[i]->duplicate = dup;
        dirs[i]->corrupt = corrupt;
    }
    struct run x = transfer(seed, &lc, bytes, BRISK_SIM_BULK_BOTH, 3600 * SEC);
    report(what, &x, bytes);
    if (!x.r.hash_ok)
        printf("# seed %" PRIu64 ": complete %d, client got %" PRIu64 " bad_at %" PRIu64
               ", server got %" PRIu64 " bad_at %" PRIu64 "\n",
               seed, x.r.complete, x.r.client.received, x.r.client.bad_at, x.r.server.received,
               x.r.server.bad_at);
    assert_true(x.finished);
    assert_true(x.r.hash_ok);
}

static void test_loss_1pct(void **state)
{
    (void)state;
    impaired("1% loss, 100 MB each way", brisk_test_seed(11), 0.01, 0, 0, 0, 100000000);
}

static void test_loss_5pct(void **state)
{
    (void)state;
    impaired("5% loss, 100 MB each way", brisk_test_seed(12), 0.05, 0, 0, 0, 100000000);
}

static void test_reorder(void **state)
{
    (void)state;
    impaired("1% reordering, 100 MB each way", brisk_test_seed(13), 0, 0.01, 0, 0, 100000000);
}

static void test_duplication(void **state)
{
    (void)state;
    impaired("1% duplication, 100 MB each way", brisk_test_seed(14), 0, 0, 0.01, 0, 100000000);
}

static void test_corruption(void **state)
{
    (void)state;
    impaired("1% corruption, 100 MB each way", brisk_test_seed(15), 0, 0, 0, 0.01, 100000000);
}

static void test_everything_at_once(void **state)
{
    (void)state;
    impaired("1% of everything, 100 MB each way", brisk_test_seed(16), 0.01, 0.01, 0.01, 0.01, 100000000);
}

/* Many seeds, harsh mixed impairments: seed-specific bugs (a retransmission carrying new data, a window edge
 * computed before the peer's ISN was known) hid behind single-seed runs before. */
static void test_many_seeds(void **state)
{
    (void)state;
    uint64_t base = brisk_test_seed(300);
    for (uint64_t k = 0; k < 16; k++) {
        char what[64];
        snprintf(what, sizeof(what), "seed %" PRIu64 ": 3%% of everything", base + k);
        impaired(what, base + k, 0.03, 0.03, 0.03, 0.03, 3000000);
    }
}

/* 20 % loss each way, frames and ACKs alike: most of the time goes to RTOs, and most RTOs resend a segment
 * whose earlier copy arrived while its ACK was lost. Their ACKs echo that copy's timestamp, not a round
 * trip's (tests/tcp/test_timers.c); taken as samples they pushed SRTT to seconds or minutes, and the RTO and
 * the pacing interval with it. Before that fix the first of these took 729 s (and `brisk-lab run bulk --set
 * bytes=1M --set loss=0.2`, seeds 1-8: four did not finish in 600 s); now they take 33-111 s. The bounds
 * leave room for other seeds' luck, not for that. */
static void test_heavy_loss_recovers(void **state)
{
    (void)state;
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 10 * GBIT, 50 * US);
    lc.ab.impair.loss_model = lc.ba.impair.loss_model = BRISK_SIM_LOSS_RANDOM;
    lc.ab.impair.loss = lc.ba.impair.loss = 0.2;
    uint64_t bytes = 1000000, total = 0, base = brisk_test_seed(400);
    for (uint64_t k = 0; k < 8; k++) {
        struct run x = transfer(base + k, &lc, bytes, BRISK_SIM_BULK_UP, 1200 * SEC);
        uint64_t took = x.r.last_byte_at - x.r.connected_at;
        printf("# seed %" PRIu64 ": 20%% loss, 1 MB up in %.1f s\n", base + k, (double)took / 1e9);
        assert_true(x.finished);
        assert_true(x.r.hash_ok);
        assert_true(took <= 300 * SEC);
        total += took;
    }
    assert_true(total <= 8 * 100 * SEC);
}

/* 10,000 connections opened, used (1 KB each way), closed — one after another — with no leak. */
static void test_ten_thousand_connections(void **state)
{
    (void)state;
    struct brisk_settings s;
    brisk_settings_default(&s);
    s.tcp_time_wait_ns = 1 * BRISK_NSEC_PER_MSEC; /* keep TIME-WAIT short so the test stays small */
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 10 * GBIT, 50 * US);
    struct simnet n;
    simnet_init(&n, 21, &s, 0, 0, 0, &lc);
    uint64_t pkts_a = 0, ok = 0;
    for (int i = 0; i < 10000; i++) {
        struct brisk_sim_bulk_config c = {.bytes = 1000,
                                          .dir = BRISK_SIM_BULK_BOTH,
                                          .port = (uint16_t)(6000 + i % 1000),
                                          .seed = (uint64_t)i};
        brisk_sim_bulk *b = brisk_sim_bulk_start(n.w, n.a, n.b, SIMNET_B_IP, &c);
        assert_non_null(b);
        assert_true(brisk_sim_run_while(n.w, bulk_done, b, brisk_sim_now(n.w) + 10 * SEC));
        struct brisk_sim_bulk_result r;
        brisk_sim_bulk_result(b, &r);
        ok += r.hash_ok;
        brisk_sim_bulk_free(b);
        if (i == 100)
            pkts_a = brisk_stack_pkts_in_use(brisk_sim_host_stack(n.a));
    }
    assert_int_equal(ok, 10000);
    brisk_sim_run_until(n.w, brisk_sim_now(n.w) + 10 * SEC);
    brisk_stack *a = brisk_sim_host_stack(n.a), *b = brisk_sim_host_stack(n.b);
    printf("# 10000 connections: sockets left a=%" PRIu64 " b=%" PRIu64 ", packets in use a=%" PRIu64
           " (after 100: %" PRIu64 ")\n",
           brisk_stack_sockets(a), brisk_stack_sockets(b), brisk_stack_pkts_in_use(a), pkts_a);
    assert_int_equal(brisk_stack_sockets(a), 0);
    assert_int_equal(brisk_stack_sockets(b), 0);
    assert_int_equal(brisk_stack_tcp_chunks_in_use(a), 0);
    assert_int_equal(brisk_stack_tcp_chunks_in_use(b), 0);
    assert_int_equal(brisk_stack_pkts_in_use(a), 0);
    assert_int_equal(brisk_stack_pkts_in_use(b), 0);
    struct brisk_counters ca;
    brisk_stack_get_counters(a, &ca);
    assert_int_equal(ca.TcpActiveOpens, 10000);
    simnet_free(&n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_100mb_each_way),
        cmocka_unit_test(test_clean_one_way_line_rate),
        cmocka_unit_test(test_loss_1pct),
        cmocka_unit_test(test_loss_5pct),
        cmocka_unit_test(test_heavy_loss_recovers),
        cmocka_unit_test(test_reorder),
        cmocka_unit_test(test_duplication),
        cmocka_unit_test(test_corruption),
        cmocka_unit_test(test_everything_at_once),
        cmocka_unit_test(test_many_seeds),
        cmocka_unit_test(test_ten_thousand_connections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
