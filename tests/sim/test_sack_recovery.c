/*
 * test_sack_recovery.c — SACK-based recovery (scoreboard, RACK, PRR: src/tcp/sack.c, rack.c, prr.c,
 * recovery.c) against NewReno without SACK, in the simulator: bulk transfers over 10 Gbit/s and 1 Gbit/s with
 * random and burst (Gilbert-Elliott) loss of 0.1 %, 1 % and 5 %. Every transfer is byte-exact, and SACK +
 * RACK moves at least as much as NewReno at every point (both printed). Then brisk beside the linux-6.x
 * profile on what a real path does to offloaded traffic at 10 Gbit/s, 1 ms: reordering by time displacement,
 * and whole super-frames (45 segments) lost.
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
#include "support/simnet.h"

#define GBIT 1000000000ull
#define US   BRISK_NSEC_PER_USEC
#define SEC  BRISK_NSEC_PER_SEC

static int bulk_done(void *ctx)
{
    return brisk_sim_bulk_done(ctx);
}

struct res {
    double goodput;
    int ok;
    uint64_t rto, rtx;
};

/* One bulk transfer of `bytes` from a to b over `lc` with settings `s`: goodput, completion, RTOs, rtx. */
static struct res run(const struct brisk_settings *s, const struct brisk_sim_link_config *lc, uint64_t bytes,
                      uint64_t seed)
{
    struct simnet n;
    simnet_init(&n, seed, s, 0, 0, 0, lc);
    struct brisk_sim_bulk_config c = {.bytes = bytes, .dir = BRISK_SIM_BULK_UP, .port = 5001, .seed = seed};
    brisk_sim_bulk *b = brisk_sim_bulk_start(n.w, n.a, n.b, SIMNET_B_IP, &c);
    assert_non_null(b);
    int fin = brisk_sim_run_while(n.w, bulk_done, b, 3600 * SEC);
    struct brisk_sim_bulk_result r;
    brisk_sim_bulk_result(b, &r);
    struct res out = {
        .goodput = (double)bytes * 8e9 / (double)(r.last_byte_at - r.connected_at),
        .ok = fin && r.hash_ok,
        .rto = r.client.info.rto_count,
        .rtx = r.client.info.retransmits,
    };
    brisk_sim_bulk_free(b);
    simnet_free(&n);
    return out;
}

static struct res transfer(uint64_t rate, double loss, int burst, int sack, uint64_t bytes, uint64_t seed)
{
    struct brisk_settings s;
    brisk_settings_default(&s);
    s.tcp_sack = (uint32_t)sack;
    if (!sack) /* the baseline: NewReno without SACK; SACK + RACK runs with the default (CUBIC) */
        assert_int_equal(brisk_settings_set(&s, "tcp_congestion=newreno"), BRISK_OK);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, rate, 50 * US);
    struct brisk_sim_impair *d = &lc.ab.impair; /* data direction only: ACK loss is another test */
    if (burst) {
        /* Gilbert-Elliott: bursts of about 4 frames (p_bad_to_good 0.25), 50 % lost inside a burst, so the
         * long-run loss rate is `loss`. */
        d->loss_model = BRISK_SIM_LOSS_GILBERT;
        d->ge_p_bad_to_good = 0.25;
        d->ge_loss_bad = 0.5;
        d->ge_loss_good = 0;
        double pi_bad = loss / d->ge_loss_bad; /* stationary share of the bad state */
        d->ge_p_good_to_bad = pi_bad * d->ge_p_bad_to_good / (1 - pi_bad);
    } else {
        d->loss_model = BRISK_SIM_LOSS_RANDOM;
        d->loss = loss;
    }
    return run(&s, &lc, bytes, seed);
}

static void matrix(uint64_t rate, uint64_t bytes)
{
    static const double losses[] = {0.001, 0.01, 0.05};
    for (int burst = 0; burst < 2; burst++) {
        for (size_t i = 0; i < sizeof(losses) / sizeof(losses[0]); i++) {
            uint64_t sz = losses[i] >= 0.05 ? bytes / 4 : bytes;
            struct res sack = transfer(rate, losses[i], burst, 1, sz, 41 + i);
            struct res reno = transfer(rate, losses[i], burst, 0, sz, 41 + i);
            printf("# %2.0fG %-6s %4.1f%% loss, %3" PRIu64 " MB: SACK+RACK %8.1f Mbit/s (rto %3" PRIu64
                   " rtx %5" PRIu64 ")   NewReno %8.1f Mbit/s (rto %3" PRIu64 " rtx %5" PRIu64 ")\n",
                   (double)rate / 1e9, burst ? "burst" : "random", losses[i] * 100, sz >> 20,
                   sack.goodput / 1e6, sack.rto, sack.rtx, reno.goodput / 1e6, reno.rto, reno.rtx);
            assert_true(sack.ok);
            assert_true(reno.ok);
            assert_true(sack.goodput >= reno.goodput);
        }
    }
}

static void test_10g(void **state)
{
    (void)state;
    matrix(10 * GBIT, 40u << 20);
}

static void test_1g(void **state)
{
    (void)state;
    matrix(1 * GBIT, 20u << 20);
}

/* One bulk transfer of `bytes` at 10 Gbit/s, 1 ms RTT, with profile `profile` (NULL: brisk's) and the data
 * direction's impairment `d` (the ACK direction gets `acks`). */
static struct res path(const char *profile, const struct brisk_sim_impair *d,
                       const struct brisk_sim_impair *acks, uint64_t bytes, uint64_t seed)
{
    struct brisk_settings s;
    brisk_settings_default(&s);
    if (profile)
        assert_int_equal(brisk_settings_apply_profile(&s, profile), BRISK_OK);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 10 * GBIT, 500 * US);
    lc.ab.impair = *d;
    lc.ba.impair = *acks;
    return run(&s, &lc, bytes, seed);
}

static void show(const char *what, const char *profile, struct res r)
{
    printf("# %-28s %-10s %8.1f Mbit/s (rto %3" PRIu64 " rtx %5" PRIu64 ")\n", what,
           profile ? profile : "brisk", r.goodput / 1e6, r.rto, r.rtx);
}

/* 5 % of the frames, both ways, held back a quarter of the RTT (250 µs: ~200 segments of displacement at
 * 10 Gbit/s), eight seeds. A fast retransmit that this provokes must be undone (timestamps, D-SACK) and the
 * reordering window must then hold: brisk keeps at least 80 % of the goodput it has without reordering with
 * every seed (86 % measured for the worst), and moves more than the linux-6.x profile over the eight. Before
 * the undo counted a D-SACK block's segments and read timestamps, a D-SACK that did not come left cwnd cut
 * for the rest of the transfer: 25 % and 33 % with two seeds of the eight. */
static void test_reordering_keeps_goodput(void **state)
{
    (void)state;
    const uint64_t bytes = 64u << 20;
    struct brisk_sim_impair none = {0}, reo = {.reorder = 0.05, .reorder_delay_ns = 250 * US};
    struct res clean = path(NULL, &none, &none, bytes, 1);
    show("no impairment", NULL, clean);
    assert_true(clean.ok);
    show("no impairment", "linux-6.x", path("linux-6.x", &none, &none, bytes, 1));
    double worst = 1.0, sum = 0, sum_lx = 0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        struct res brisk = path(NULL, &reo, &reo, bytes, seed);
        struct res lx = path("linux-6.x", &reo, &reo, bytes, seed);
        show("5 % reordered by 250 us", NULL, brisk);
        show("5 % reordered by 250 us", "linux-6.x", lx);
        assert_true(brisk.ok && lx.ok);
        assert_int_equal(brisk.rto, 0);
        sum += brisk.goodput;
        sum_lx += lx.goodput;
        if (brisk.goodput / clean.goodput < worst)
            worst = brisk.goodput / clean.goodput;
    }
    printf("# reordering: worst seed %.0f %% of the goodput without it; mean %.1f Mbit/s, linux-6.x %.1f\n",
           worst * 100, sum / 8e6, sum_lx / 8e6);
    assert_true(worst >= 0.80);
    assert_true(sum >= sum_lx);
}

/* Whole 64 KB super-frames lost: 1 % of the data frames, in runs of 45 consecutive segments; 1 % of the ACKs
 * (single frames). Every burst is repaired without a timeout, and brisk moves at least as much as the
 * linux-6.x profile. */
static void test_burst_of_45_repaired(void **state)
{
    (void)state;
    const uint64_t bytes = 40u << 20;
    struct brisk_sim_impair d = {.loss_model = BRISK_SIM_LOSS_BURST, .loss = 0.01, .burst_len = 45};
    struct brisk_sim_impair acks = {.loss_model = BRISK_SIM_LOSS_RANDOM, .loss = 0.01};
    struct res brisk = path(NULL, &d, &acks, bytes, 9);
    struct res lx = path("linux-6.x", &d, &acks, bytes, 9);
    show("1 % lost in bursts of 45", NULL, brisk);
    show("1 % lost in bursts of 45", "linux-6.x", lx);
    assert_true(brisk.ok && lx.ok);
    assert_int_equal(brisk.rto, 0);
    assert_true(brisk.goodput >= lx.goodput);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_10g),
        cmocka_unit_test(test_1g),
        cmocka_unit_test(test_reordering_keeps_goodput),
        cmocka_unit_test(test_burst_of_45_repaired),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
