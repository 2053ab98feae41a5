/*
 * test_bql.c — the byte-queue-limit algorithm (src/net/bql.c) driven by hand: stop and wake thresholds,
 * growth on starvation, shrinking only after a hold time of slack, bounds, and per-event batching.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "net/bql.h"
#include "stack/stack.h"

#define MS 1000000ull

/* The limit is soft: the packet that crosses it is accepted and the queue reports "stop". */
static void test_stop_threshold(void **state)
{
    (void)state;
    struct brisk_bql b;
    brisk_bql_init(&b, 3000, 1u << 30, 1000 * MS, 0);
    assert_int_equal(brisk_bql_avail(&b), 3000);
    assert_false(brisk_bql_sent(&b, 1500));
    assert_false(brisk_bql_sent(&b, 1500)); /* exactly at the limit: still open */
    assert_true(brisk_bql_sent(&b, 1500));  /* over: stop */
    assert_int_equal(brisk_bql_avail(&b), -1500);
    brisk_bql_done(&b, 1500, 1 * MS);
    assert_int_equal(brisk_bql_avail(&b), 0); /* pending completions count at once for waking */
}

/* Stopped, and the completion empties the ring: the device starved while the stack was held back, so the
 * limit grows by what was queued since the previous completion plus the overshoot. */
static void test_grows_on_starvation(void **state)
{
    (void)state;
    struct brisk_bql b;
    brisk_bql_init(&b, 0, 1u << 30, 1000 * MS, 0);
    assert_true(brisk_bql_sent(&b, 1500)); /* limit 0: the first packet already stops the queue */
    brisk_bql_done(&b, 1500, 1 * MS);
    brisk_bql_flush(&b);
    assert_int_equal(b.limit, 1500);
    assert_int_equal(b.grows, 1);
    /* Now two packets (one over), both completed in one event: starved again, grows again. */
    assert_false(brisk_bql_sent(&b, 1500));
    assert_true(brisk_bql_sent(&b, 1500));
    brisk_bql_done(&b, 1500, 2 * MS);
    brisk_bql_done(&b, 1500, 2 * MS);
    brisk_bql_flush(&b);
    assert_int_equal(b.grows, 2);
    assert_true(b.limit > 1500);
}

/* Work remains in the ring at every completion: slack. The limit shrinks by the smallest slack seen, but only
 * once the slack has lasted a whole hold time. */
static void test_shrinks_after_hold(void **state)
{
    (void)state;
    struct brisk_bql b;
    brisk_bql_init(&b, 0, 1u << 30, 100 * MS, 0);
    b.limit = 30000;
    for (int i = 0; i < 20; i++) /* 20 frames queued: 30000 bytes, at the limit */
        brisk_bql_sent(&b, 1500);
    uint64_t t = 0;
    for (; t < 100 * MS; t += 10 * MS) { /* one frame completes per event, one is queued behind it */
        brisk_bql_done(&b, 1500, t + 1);
        brisk_bql_sent(&b, 1500);
    }
    assert_int_equal(b.shrinks, 0); /* not yet: the hold time has only just passed */
    brisk_bql_done(&b, 1500, t + 1);
    brisk_bql_sent(&b, 1500);
    assert_int_equal(b.shrinks, 1);
    assert_true(b.limit < 30000);
    assert_true(b.limit >= 3000); /* slack is limit - 2 x completed per event: two frames stay */
}

/* The limit never leaves [min, max]. */
static void test_bounds(void **state)
{
    (void)state;
    struct brisk_bql b;
    brisk_bql_init(&b, 0, 4000, 1000 * MS, 0);
    for (int i = 0; i < 10; i++) { /* starve repeatedly with big bursts */
        for (int j = 0; j < 8; j++)
            brisk_bql_sent(&b, 1500);
        for (int j = 0; j < 8; j++)
            brisk_bql_done(&b, 1500, (uint64_t)(i + 1) * MS);
        brisk_bql_flush(&b);
    }
    assert_int_equal(b.limit, 4000);
    brisk_bql_init(&b, 9000, 4000, 1000 * MS, 0); /* min > max: clamped */
    assert_int_equal(b.limit, 4000);
}

/* Reports with the same time are one event: sixteen coalesced completions that empty the ring are one
 * starvation (one growth), not sixteen judgments of one frame each. */
static void test_batches_by_time(void **state)
{
    (void)state;
    struct brisk_bql b;
    brisk_bql_init(&b, 3000, 1u << 30, 1000 * MS, 0);
    for (int i = 0; i < 16; i++)
        brisk_bql_sent(&b, 1500);
    for (int i = 0; i < 16; i++)
        brisk_bql_done(&b, 1500, 10 * MS);
    assert_int_equal(b.grows, 0); /* judged when the event is over */
    assert_int_equal(brisk_bql_avail(&b), 3000);
    brisk_bql_sent(&b, 1500); /* the refill ends the event first */
    assert_int_equal(b.grows, 1);
    assert_int_equal(b.limit, 3000 + 16 * 1500); /* grew by everything queued since the last event */
}

/* A driver completing more than it was given cannot push the counters past each other. */
static void test_overcompletion_is_clamped(void **state)
{
    (void)state;
    struct brisk_bql b;
    brisk_bql_init(&b, 3000, 1u << 30, 1000 * MS, 0);
    brisk_bql_sent(&b, 1500);
    brisk_bql_done(&b, 9000, 1 * MS);
    brisk_bql_flush(&b);
    assert_int_equal(b.completed, b.queued);
    assert_true(brisk_bql_avail(&b) <= (int64_t)b.limit);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_threshold),     cmocka_unit_test(test_grows_on_starvation),
        cmocka_unit_test(test_shrinks_after_hold), cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_batches_by_time),    cmocka_unit_test(test_overcompletion_is_clamped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
