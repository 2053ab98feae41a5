/*
 * test_tsq.c — TCP Small Queues through the simulator: the mechanisms of seeds 001 (xen-netfront: slow TX
 * completion capped by the 3.19 rule) and 003 (mvneta: coalesced completion starving a small budget), and
 * brisk's adaptive hold time that keeps line rate without tuning.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "brisk/sim.h"

#define GBIT 1000000000ull
#define US   BRISK_NSEC_PER_USEC
#define MS   BRISK_NSEC_PER_MSEC

static int done(void *ctx)
{
    return brisk_sim_bulk_done(ctx);
}

struct result {
    double goodput_bps;
    int hash_ok;
    struct brisk_conn_info info; /* sender */
    struct brisk_counters sender;
};

/* One bulk transfer a -> b of `bytes` over a link of `rate`, 100 µs RTT, sender NIC completion model `txc`,
 * sender settings from `sets` (NULL-terminated "name=value" list). */
static struct result run(uint64_t rate, const char *txc, const char *const *sets, uint64_t bytes)
{
    brisk_sim_world *w = brisk_sim_world_new(7);
    struct brisk_settings s;
    brisk_settings_default(&s);
    for (; sets && *sets; sets++)
        assert_int_equal(brisk_settings_set(&s, *sets), BRISK_OK);
    s.seed = 0;
    brisk_sim_host *a = brisk_sim_host_add(w, "a", &s);
    brisk_sim_host *b = brisk_sim_host_add(w, "b", NULL);
    struct brisk_sim_nic_config nc;
    brisk_sim_nic_config_default(&nc);
    nc.dev.ip = 0x0a000001u;
    nc.tx_ring = 4096;
    assert_int_equal(brisk_sim_txc_parse(txc, &nc.txc), BRISK_OK);
    brisk_sim_port *pa = brisk_sim_nic_add(a, &nc);
    brisk_sim_port *pb = brisk_sim_nic_add_ip(b, 0x0a000002u, 24, 0);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, rate, 50 * US);
    assert_non_null(brisk_sim_link_connect(w, pa, pb, &lc));
    struct brisk_sim_bulk_config bc = {.bytes = bytes, .dir = BRISK_SIM_BULK_UP, .port = 5001, .seed = 1};
    brisk_sim_bulk *bulk = brisk_sim_bulk_start(w, a, b, 0x0a000002u, &bc);
    assert_non_null(bulk);
    assert_true(brisk_sim_run_while(w, done, bulk, 60 * BRISK_NSEC_PER_SEC));
    struct brisk_sim_bulk_result r;
    brisk_sim_bulk_result(bulk, &r);
    struct result out = {
        .goodput_bps = (double)bytes * 8e9 / (double)(r.last_byte_at - r.connected_at),
        .hash_ok = r.hash_ok,
        .info = r.client.info,
    };
    brisk_stack_get_counters(brisk_sim_host_stack(a), &out.sender);
    brisk_sim_bulk_free(bulk);
    brisk_sim_world_free(w);
    return out;
}

static void show(const char *what, const struct result *x)
{
    printf("# %-44s %6.3f Gbit/s  TSQ throttles %" PRIu64 "  held by tsq %.1f ms, cwnd %.1f ms\n", what,
           x->goodput_bps / 1e9, x->sender.TSQThrottles, (double)x->info.hold_ns[BRISK_HOLD_TSQ] / 1e6,
           (double)x->info.hold_ns[BRISK_HOLD_CWND] / 1e6);
}

/* Seed 001: a 190 µs completion delay at 10 Gbit/s. The 3.19 rule min(128 KB, max(2 bufs, rate >> 10))
 * caps the bytes below TCP at 128 KB of truesize, so the flow moves at most that much per completion
 * latency; brisk's default (4 MB cap, hold >= 2 x measured latency) runs at line rate. */
static void test_xen_slow_completion(void **state)
{
    (void)state;
    const uint64_t bytes = 50000000;
    struct result capped =
        run(10 * GBIT, "delay 190us",
            (const char *const[]){"tcp_limit_output_bytes=128K", "tcp_tsq_adaptive=0", NULL}, bytes);
    struct result dflt = run(10 * GBIT, "delay 190us", NULL, bytes);
    struct result off = run(10 * GBIT, "delay 190us", (const char *const[]){"tcp_tsq=0", NULL}, bytes);
    show("190us completion, 3.19 rule with 128K cap", &capped);
    show("190us completion, brisk default", &dflt);
    show("190us completion, TSQ off", &off);
    assert_true(capped.hash_ok && dflt.hash_ok && off.hash_ok);
    /* 128 KB of truesize holds 128K / (1448 + 66 + 790) segments of 1448 payload bytes below TCP; each is
     * released one completion latency after its serialization ends, and replaced at once, so the flow moves
     * that many segments per (latency + one frame's serialization): 128 KB / latency, scaled by the payload
     * share of the truesize. */
    double segs = 131072.0 / (1448 + 66 + 790);
    double per_round_ns = 190e3 + 1514 * 8 / 10.0;
    double expect = segs * 1448 * 8 / per_round_ns * 1e9;
    printf("# model: %.3f Gbit/s\n", expect / 1e9);
    assert_true(capped.goodput_bps < 1.15 * expect && capped.goodput_bps > 0.85 * expect);
    assert_true(capped.sender.TSQThrottles > 0);
    assert_true(capped.info.hold_ns[BRISK_HOLD_TSQ] > 0);
    assert_true(dflt.goodput_bps >= 0.9 * 10 * GBIT);
}

/* Seed 003: GbE, completions coalesced (16 frames or 10 ms), under the Linux 3.12 rules of the report (a
 * static cap, no one-segment shortcut). With a 32 KB cap fewer than 16 frames fit below TCP, so every batch
 * waits for the 10 ms timer: throughput collapses; 128 KB recovers. brisk's default does not collapse. */
static void test_mvneta_coalesced_completion(void **state)
{
    (void)state;
    const uint64_t bytes = 5000000;
    struct result small =
        run(1 * GBIT, "coalesce 16 10ms",
            (const char *const[]){"tcp_limit_output_bytes=32K", "tcp_tsq_rule=cap", "tcp_tsq_shortcut=0", NULL},
            bytes);
    struct result big = run(
        1 * GBIT, "coalesce 16 10ms",
        (const char *const[]){"tcp_limit_output_bytes=128K", "tcp_tsq_rule=cap", "tcp_tsq_shortcut=0", NULL},
        bytes);
    struct result dflt = run(1 * GBIT, "coalesce 16 10ms", NULL, bytes);
    show("coalesce 16/10ms, 32K cap", &small);
    show("coalesce 16/10ms, 128K cap", &big);
    show("coalesce 16/10ms, brisk default", &dflt);
    assert_true(small.hash_ok && big.hash_ok && dflt.hash_ok);
    assert_true(small.goodput_bps < 0.2 * GBIT);
    assert_true(big.goodput_bps > 0.8 * GBIT);
    assert_true(dflt.goodput_bps >= 0.9 * GBIT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xen_slow_completion),
        cmocka_unit_test(test_mvneta_coalesced_completion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
