/*
 * test_impair_hold.c — brisk-impair's held-packet heap (tools/impair/hold.c): release in time order, equal
 * times in arrival order (a plain delay never reorders), nothing before its time, a hard capacity.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/rand.h"
#include "impair/hold.h"

static void test_time_order_then_arrival_order(void **state)
{
    (void)state;
    struct impair_hold h;
    assert_int_equal(impair_hold_init(&h, 16), 0);
    assert_true(impair_hold_next(&h) == UINT64_MAX);
    uint64_t t[] = {30, 10, 20, 10, 10, 5, 30};
    for (uint32_t i = 0; i < 7; i++)
        assert_int_equal(impair_hold_push(&h, t[i], i), 0);
    uint32_t want[] = {5, 1, 3, 4, 2, 0, 6};
    struct impair_held e;
    assert_false(impair_hold_pop(&h, 4, &e)); /* nothing due yet */
    for (int i = 0; i < 7; i++) {
        assert_true(impair_hold_pop(&h, 100, &e));
        assert_int_equal(e.id, want[i]);
    }
    assert_false(impair_hold_pop(&h, UINT64_MAX, &e));
    impair_hold_free(&h);
}

static void test_capacity_is_hard(void **state)
{
    (void)state;
    struct impair_hold h;
    assert_int_equal(impair_hold_init(&h, 3), 0);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(impair_hold_push(&h, 1, i), 0);
    assert_int_equal(impair_hold_push(&h, 0, 99), -1);
    assert_int_equal(h.len, 3);
    struct impair_held e;
    assert_true(impair_hold_pop(&h, 1, &e));
    assert_int_equal(e.id, 0); /* the refused push left nothing behind */
    impair_hold_free(&h);
}

/* Many random times: popped in non-decreasing (time, seq) order and only when due. */
static void test_random_heap_order(void **state)
{
    (void)state;
    struct impair_hold h;
    struct brisk_rand r;
    brisk_rand_seed(&r, 1);
    assert_int_equal(impair_hold_init(&h, 5000), 0);
    for (uint32_t i = 0; i < 5000; i++)
        assert_int_equal(impair_hold_push(&h, brisk_rand_below(&r, 100), i), 0);
    struct impair_held e, prev = {0, 0, 0};
    int n = 0;
    for (uint64_t now = 0; now < 100; now++) {
        while (impair_hold_pop(&h, now, &e)) {
            assert_true(e.release_ns <= now);
            assert_true(e.release_ns > prev.release_ns || (e.release_ns == prev.release_ns && e.seq >= prev.seq));
            prev = e;
            n++;
        }
    }
    assert_int_equal(n, 5000);
    impair_hold_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_order_then_arrival_order),
        cmocka_unit_test(test_capacity_is_hard),
        cmocka_unit_test(test_random_heap_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
