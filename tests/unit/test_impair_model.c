/*
 * test_impair_model.c — brisk-impair's path model (tools/impair/model.c): every mechanism's decisions against
 * the figures it must give, and the determinism the real-network comparisons rely on (same seed, same
 * verdicts; one mechanism switched on does not move another's decisions).
 *
 * Statistical checks use bounds of several sigma over fixed seeds, so they are exact regressions here and
 * would still hold for any seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "impair/model.h"

#define N 100000

static void test_perfect_path_passes_everything_at_once(void **state)
{
    (void)state;
    struct impair_params p = {0};
    struct impair_state s;
    impair_model_init(&s, 7);
    assert_null(impair_model_check(&p));
    for (int i = 0; i < 1000; i++) {
        struct impair_verdict v = impair_model_decide(&s, &p, 1500, (uint64_t)i * 1000);
        assert_int_equal(v.drop, IMPAIR_CAUSE_NONE);
        assert_true(v.hold_ns == 0);
        assert_false(v.duplicate);
        assert_false(v.reordered);
    }
    assert_true(s.stats.seen == 1000 && s.stats.passed == 1000 && s.stats.delayed == 0);
}

static void test_random_loss_rate_and_count(void **state)
{
    (void)state;
    struct impair_params p = {.loss = 0.01};
    struct impair_state s;
    impair_model_init(&s, 1);
    uint64_t lost = 0;
    for (int i = 0; i < N; i++)
        lost += impair_model_decide(&s, &p, 1500, 0).drop == IMPAIR_CAUSE_LOSS;
    /* mean 1000, sigma ~31.5 */
    assert_in_range(lost, 850, 1150);
    assert_true(s.stats.dropped[IMPAIR_CAUSE_LOSS] == lost);
    assert_true(s.stats.passed == N - lost);
}

static void test_same_seed_same_verdicts_other_seed_differs(void **state)
{
    (void)state;
    struct impair_params p = {.loss = 0.1, .reorder = 0.1, .reorder_delay_ns = 1000000, .duplicate = 0.1};
    struct impair_state a, b, c;
    impair_model_init(&a, 42);
    impair_model_init(&b, 42);
    impair_model_init(&c, 43);
    int differ = 0;
    for (int i = 0; i < 10000; i++) {
        struct impair_verdict va = impair_model_decide(&a, &p, 1500, 0);
        struct impair_verdict vb = impair_model_decide(&b, &p, 1500, 0);
        struct impair_verdict vc = impair_model_decide(&c, &p, 1500, 0);
        assert_int_equal(va.drop, vb.drop); /* field by field: the struct has padding */
        assert_int_equal(va.hold_ns, vb.hold_ns);
        assert_int_equal(va.duplicate, vb.duplicate);
        assert_int_equal(va.reordered, vb.reordered);
        differ |= memcmp(&va, &vc, sizeof(va)) != 0;
    }
    assert_true(differ);
}

/* Five draws per packet whatever is on: adding duplication and reordering leaves the loss pattern as it was. */
static void test_mechanisms_do_not_shift_each_other(void **state)
{
    (void)state;
    struct impair_params only_loss = {.loss = 0.05};
    struct impair_params all = {.loss = 0.05, .duplicate = 0.3, .reorder = 0.2, .reorder_delay_ns = 1000,
                                .delay_ns = 5000, .gilbert = 1, .ge_p_gb = 0.1, .ge_p_bg = 0.5};
    struct impair_state a, b;
    impair_model_init(&a, 9);
    impair_model_init(&b, 9);
    for (int i = 0; i < 10000; i++) {
        int la = impair_model_decide(&a, &only_loss, 1500, 0).drop == IMPAIR_CAUSE_LOSS;
        int lb = impair_model_decide(&b, &all, 1500, 0).drop == IMPAIR_CAUSE_LOSS;
        assert_int_equal(la, lb);
    }
}

static void test_burst_drops_n_in_a_row(void **state)
{
    (void)state;
    struct impair_params p = {.loss = 0.002, .burst = 45};
    struct impair_state s;
    impair_model_init(&s, 3);
    int run = 0, runs = 0;
    for (int i = 0; i < N; i++) {
        struct impair_verdict v = impair_model_decide(&s, &p, 1500, 0);
        if (v.drop) {
            if (run == 0)
                assert_int_equal(v.drop, IMPAIR_CAUSE_LOSS); /* a burst starts with a loss ... */
            run++;
        } else if (run) {
            /* ... and takes 45 packets; a fresh loss right after the burst can lengthen the run */
            assert_int_equal(run % 45, 0);
            runs++;
            run = 0;
        }
    }
    uint64_t starts = s.stats.dropped[IMPAIR_CAUSE_LOSS];
    assert_true(runs > 100);
    /* every start brings 44 more, the last burst perhaps cut short by the end of the run */
    assert_true(s.stats.dropped[IMPAIR_CAUSE_BURST] <= 44 * starts);
    assert_true(s.stats.dropped[IMPAIR_CAUSE_BURST] >= 44 * (starts - 1));
    /* overall about 45 * 0.002 / (1 + 44 * 0.002) = 8.3 % */
    uint64_t all = starts + s.stats.dropped[IMPAIR_CAUSE_BURST];
    assert_in_range(all, 7000, 9600);
}

static void test_gilbert_elliott_mean_loss_and_bursts(void **state)
{
    (void)state;
    /* Bad 1 in 11 of the time on average (p_gb / (p_gb + p_bg)), lossy only there: 9.1 % loss in runs of
     * ~10 packets (1 / p_bg). */
    struct impair_params p = {.gilbert = 1, .ge_p_gb = 0.01, .ge_p_bg = 0.1, .ge_loss_good = 0, .ge_loss_bad = 1};
    struct impair_state s;
    impair_model_init(&s, 5);
    uint64_t lost = 0, runs = 0;
    int prev = 0;
    for (int i = 0; i < N; i++) {
        int l = impair_model_decide(&s, &p, 1500, 0).drop == IMPAIR_CAUSE_GILBERT;
        lost += l;
        runs += l && !prev;
        prev = l;
    }
    assert_true(s.stats.gilbert_bad_packets == lost);
    assert_in_range(lost, 7500, 10700);
    double mean_run = (double)lost / (double)runs;
    assert_true(mean_run > 8.0 && mean_run < 12.0);
}

static void test_delay_holds_every_packet(void **state)
{
    (void)state;
    struct impair_params p = {.delay_ns = 2500000};
    struct impair_state s;
    impair_model_init(&s, 1);
    for (int i = 0; i < 100; i++) {
        struct impair_verdict v = impair_model_decide(&s, &p, 100, 0);
        assert_true(v.hold_ns == 2500000);
        assert_false(v.reordered);
    }
    assert_true(s.stats.delayed == 100 && s.stats.reordered == 0);
}

static void test_reorder_holds_back_a_fraction(void **state)
{
    (void)state;
    struct impair_params p = {.reorder = 0.05, .reorder_delay_ns = 1000000, .delay_ns = 1000};
    struct impair_state s;
    impair_model_init(&s, 11);
    uint64_t back = 0;
    for (int i = 0; i < N; i++) {
        struct impair_verdict v = impair_model_decide(&s, &p, 1500, 0);
        if (v.reordered) {
            assert_true(v.hold_ns == 1001000);
            back++;
        } else {
            assert_true(v.hold_ns == 1000);
        }
    }
    assert_in_range(back, 4500, 5500); /* mean 5000, sigma 69 */
    assert_true(s.stats.reordered == back && s.stats.delayed == N);
}

static void test_duplicate_fraction_and_never_for_a_lost_packet(void **state)
{
    (void)state;
    struct impair_params p = {.duplicate = 0.1, .loss = 0.5};
    struct impair_state s;
    impair_model_init(&s, 2);
    uint64_t dup = 0;
    for (int i = 0; i < N; i++) {
        struct impair_verdict v = impair_model_decide(&s, &p, 1500, 0);
        if (v.drop)
            assert_false(v.duplicate);
        dup += v.duplicate;
    }
    assert_in_range(dup, 4500, 5500); /* 0.5 pass * 0.1 */
    assert_true(s.stats.duplicated == dup);
}

/* 1 Mbit/s: a 1000-byte packet takes 8 ms. A bucket of 2000 bytes passes two at once, then each waits for
 * its tokens; a 4000-byte queue takes four more and drops the rest. */
static void test_rate_token_bucket_and_queue(void **state)
{
    (void)state;
    struct impair_params p = {.rate_bps = 1000000, .rate_burst_bytes = 2000, .rate_queue_bytes = 4000};
    struct impair_state s;
    impair_model_init(&s, 1);
    uint64_t t0 = 1000000000;
    uint64_t want[] = {0, 0, 8000000, 16000000, 24000000, 32000000};
    for (int i = 0; i < 6; i++) {
        struct impair_verdict v = impair_model_decide(&s, &p, 1000, t0);
        assert_int_equal(v.drop, IMPAIR_CAUSE_NONE);
        assert_true(v.hold_ns == want[i]);
    }
    assert_int_equal(impair_model_decide(&s, &p, 1000, t0).drop, IMPAIR_CAUSE_RATE);
    assert_true(s.stats.dropped[IMPAIR_CAUSE_RATE] == 1 && s.stats.rate_queued == 4);
    /* 8 ms later one packet has left the queue: room for exactly one more */
    assert_int_equal(impair_model_decide(&s, &p, 1000, t0 + 8000000).drop, IMPAIR_CAUSE_NONE);
    assert_int_equal(impair_model_decide(&s, &p, 1000, t0 + 8000000).drop, IMPAIR_CAUSE_RATE);
    /* idle for a second: the bucket is full again, two pass at once */
    assert_true(impair_model_decide(&s, &p, 1000, t0 + 2000000000).hold_ns == 0);
    assert_true(impair_model_decide(&s, &p, 1000, t0 + 2000000000).hold_ns == 0);
    assert_true(impair_model_decide(&s, &p, 1000, t0 + 2000000000).hold_ns == 8000000);
}

/* A long run at twice the rate: the accepted bytes over the time match the rate. */
static void test_rate_long_run_goodput(void **state)
{
    (void)state;
    struct impair_params p = {.rate_bps = 100000000, .rate_burst_bytes = 16384, .rate_queue_bytes = 100000};
    struct impair_state s;
    impair_model_init(&s, 1);
    uint64_t passed = 0, t = 0;
    for (int i = 0; i < N; i++, t += 60000) /* 1500 B every 60 us = 200 Mbit/s offered */
        passed += impair_model_decide(&s, &p, 1500, t).drop == IMPAIR_CAUSE_NONE;
    double bps = (double)passed * 1500 * 8 / ((double)t / 1e9);
    assert_true(bps > 99e6 && bps < 102e6);
    assert_true(s.stats.dropped[IMPAIR_CAUSE_RATE] > N / 3);
}

static void test_check_names_what_is_wrong(void **state)
{
    (void)state;
    struct impair_params p = {.loss = 1.5};
    assert_non_null(strstr(impair_model_check(&p), "--loss"));
    p = (struct impair_params){.reorder = 0.1};
    assert_non_null(strstr(impair_model_check(&p), "--reorder-delay"));
    p = (struct impair_params){.burst = 10};
    assert_non_null(strstr(impair_model_check(&p), "--burst"));
    p = (struct impair_params){.gilbert = 1, .ge_p_gb = -1};
    assert_non_null(strstr(impair_model_check(&p), "--gilbert"));
    p = (struct impair_params){.rate_bps = 1000000};
    assert_non_null(strstr(impair_model_check(&p), "--rate-queue"));
    p = (struct impair_params){.duplicate = 2};
    assert_non_null(strstr(impair_model_check(&p), "--duplicate"));
    p = (struct impair_params){.burst = 10, .loss = 0.01};
    assert_null(impair_model_check(&p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_perfect_path_passes_everything_at_once),
        cmocka_unit_test(test_random_loss_rate_and_count),
        cmocka_unit_test(test_same_seed_same_verdicts_other_seed_differs),
        cmocka_unit_test(test_mechanisms_do_not_shift_each_other),
        cmocka_unit_test(test_burst_drops_n_in_a_row),
        cmocka_unit_test(test_gilbert_elliott_mean_loss_and_bursts),
        cmocka_unit_test(test_delay_holds_every_packet),
        cmocka_unit_test(test_reorder_holds_back_a_fraction),
        cmocka_unit_test(test_duplicate_fraction_and_never_for_a_lost_packet),
        cmocka_unit_test(test_rate_token_bucket_and_queue),
        cmocka_unit_test(test_rate_long_run_goodput),
        cmocka_unit_test(test_check_names_what_is_wrong),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
