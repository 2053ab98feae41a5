/*
 * test_tsq_stress.c — no lost wake-up: randomized TX-completion timing (immediate, delayed, coalesced, with
 * random parameters and ring sizes) against randomized TSQ / auto-corking settings and write sizes, both
 * directions at once, with and without TSO, on a loss-free link. A connection that ever sat with sendable
 * data, room below TCP and nothing scheduled would stall until its retransmission timer: so every run must
 * finish byte-exact, quickly, and without a single retransmission timeout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <inttypes.h>
#include <stdio.h>
#include <cmocka.h>

#include "brisk/sim.h"
#include "core/rand.h"
#include "support/testutil.h"

static int done(void *ctx)
{
    return brisk_sim_bulk_done(ctx);
}

static void one(uint64_t seed)
{
    struct brisk_rand rnd;
    brisk_rand_seed(&rnd, seed);
    struct brisk_settings s;
    brisk_settings_default(&s);
    s.seed = 0;
    s.tcp_limit_output_bytes = (uint32_t)(4096 + brisk_rand_below(&rnd, 256 * 1024));
    s.tcp_tsq_rule = (uint32_t)brisk_rand_below(&rnd, BRISK_TSQ_RULES);
    s.tcp_tsq_shortcut = (uint32_t)brisk_rand_below(&rnd, 2);
    s.tcp_tsq_adaptive = (uint32_t)brisk_rand_below(&rnd, 2);
    s.tcp_autocorking = (uint32_t)brisk_rand_below(&rnd, 2);
    s.tcp_autocork_first_packet = (uint32_t)brisk_rand_below(&rnd, 2);
    s.tcp_resume_nagle = 0; /* that knob delays by design: it is the bug, not a lost wake-up */
    brisk_sim_world *w = brisk_sim_world_new(seed);
    brisk_sim_host *h[2];
    brisk_sim_port *p[2];
    char txc_text[2][80];
    for (int i = 0; i < 2; i++) {
        h[i] = brisk_sim_host_add(w, i ? "b" : "a", &s);
        struct brisk_sim_nic_config nc;
        brisk_sim_nic_config_default(&nc);
        nc.dev.ip = 0x0a000001u + (uint32_t)i;
        nc.tx_ring = (uint32_t)(16 + brisk_rand_below(&rnd, 2048));
        if (brisk_rand_chance(&rnd, 0.5)) /* TSO bursts cut by the NIC */
            nc.dev.caps = BRISK_NETDEV_CAP_GSO | BRISK_NETDEV_CAP_CSUM;
        switch (brisk_rand_below(&rnd, 3)) {
        case 0:
            nc.txc.model = BRISK_SIM_TXC_IMMEDIATE;
            break;
        case 1:
            nc.txc.model = BRISK_SIM_TXC_DELAY;
            nc.txc.delay_ns = brisk_rand_below(&rnd, 500 * BRISK_NSEC_PER_USEC);
            break;
        default:
            nc.txc.model = BRISK_SIM_TXC_COALESCE;
            nc.txc.frames = (uint32_t)(1 + brisk_rand_below(&rnd, 64));
            nc.txc.timeout_ns = 1 + brisk_rand_below(&rnd, 10 * BRISK_NSEC_PER_MSEC);
            break;
        }
        if (brisk_rand_chance(&rnd, 0.5)) /* byte queue limits stop the device queue too */
            nc.dev.caps |= BRISK_NETDEV_CAP_BQL;
        snprintf(txc_text[i], sizeof(txc_text[i]),
                 "model %d delay %" PRIu64 " frames %u timeout %" PRIu64 "%s", nc.txc.model, nc.txc.delay_ns,
                 nc.txc.frames, nc.txc.timeout_ns, (nc.dev.caps & BRISK_NETDEV_CAP_BQL) ? " bql" : "");
        p[i] = brisk_sim_nic_add(h[i], &nc);
    }
    struct brisk_sim_link_config lc;
    uint64_t rate = brisk_rand_chance(&rnd, 0.5) ? 10000000000ull : 1000000000ull;
    brisk_sim_link_config_symmetric(&lc, rate, 5000 + brisk_rand_below(&rnd, 100000));
    assert_non_null(brisk_sim_link_connect(w, p[0], p[1], &lc));
    struct brisk_sim_bulk_config bc = {
        .bytes = 200000 + brisk_rand_below(&rnd, 2000000),
        .write_size = (uint32_t)(1 + brisk_rand_below(&rnd, 65536)),
        .read_size = (uint32_t)(1 + brisk_rand_below(&rnd, 65536)),
        .dir = BRISK_SIM_BULK_BOTH,
        .port = 5001,
        .seed = seed,
    };
    brisk_sim_bulk *b = brisk_sim_bulk_start(w, h[0], h[1], 0x0a000002u, &bc);
    assert_non_null(b);
    int finished = brisk_sim_run_while(w, done, b, 60 * BRISK_NSEC_PER_SEC);
    struct brisk_sim_bulk_result r;
    brisk_sim_bulk_result(b, &r);
    if (!finished || !r.hash_ok || r.client.info.rto_count || r.server.info.rto_count) {
        printf("# seed %" PRIu64 ": finished %d hash_ok %d rto %" PRIu64 "/%" PRIu64 " at %" PRIu64
               " ns; cap %u rule %u shortcut %u adaptive %u autocork %u/%u; write %u read %u bytes %" PRIu64
               "\n#   a: %s\n#   b: %s\n",
               seed, finished, r.hash_ok, r.client.info.rto_count, r.server.info.rto_count, brisk_sim_now(w),
               s.tcp_limit_output_bytes, s.tcp_tsq_rule, s.tcp_tsq_shortcut, s.tcp_tsq_adaptive,
               s.tcp_autocorking, s.tcp_autocork_first_packet, bc.write_size, bc.read_size, bc.bytes,
               txc_text[0], txc_text[1]);
    }
    assert_true(finished);
    assert_true(r.hash_ok);
    assert_int_equal(r.client.info.rto_count, 0);
    assert_int_equal(r.server.info.rto_count, 0);
    brisk_sim_bulk_free(b);
    brisk_sim_world_free(w);
}

static void test_no_lost_wakeup(void **state)
{
    (void)state;
    uint64_t base = brisk_test_seed(1000);
    for (uint64_t k = 0; k < 200; k++)
        one(base + k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_lost_wakeup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
