/* tests for src/drivers/fault.c: probability bounds, seeded determinism, per-direction independence, and a
 * loss rate that matches the configured probability. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "drivers/fault.h"

static void test_bounds(void **state)
{
    (void)state;
    struct brisk_fault f;
    struct brisk_fault_config c = {.tx_loss = 0.01, .rx_loss = 0, .seed = 1};
    assert_int_equal(brisk_fault_init(&f, &c), BRISK_OK);
    c.tx_loss = 1.5;
    assert_int_equal(brisk_fault_init(&f, &c), BRISK_ERR_RANGE);
    c.tx_loss = -0.1;
    assert_int_equal(brisk_fault_init(&f, &c), BRISK_ERR_RANGE);
    c.tx_loss = 0;
    c.rx_loss = NAN;
    assert_int_equal(brisk_fault_init(&f, &c), BRISK_ERR_RANGE);
    /* NULL: no loss at all. */
    assert_int_equal(brisk_fault_init(&f, NULL), BRISK_OK);
    for (int i = 0; i < 1000; i++) {
        assert_false(brisk_fault_drop_tx(&f));
        assert_false(brisk_fault_drop_rx(&f));
    }
    /* Probability 1 drops everything. */
    c.rx_loss = 1;
    c.tx_loss = 1;
    assert_int_equal(brisk_fault_init(&f, &c), BRISK_OK);
    for (int i = 0; i < 100; i++) {
        assert_true(brisk_fault_drop_tx(&f));
        assert_true(brisk_fault_drop_rx(&f));
    }
    assert_int_equal(f.tx_dropped, 100);
    assert_int_equal(f.rx_seen, 100);
}

/* 1 % over 200000 frames: the count lies within 5 standard deviations (sd = 44.5) of 2000. */
static void test_rate(void **state)
{
    (void)state;
    struct brisk_fault f;
    struct brisk_fault_config c = {.tx_loss = 0.01, .rx_loss = 0.01, .seed = 42};
    assert_int_equal(brisk_fault_init(&f, &c), BRISK_OK);
    int tx = 0, rx = 0;
    for (int i = 0; i < 200000; i++) {
        tx += brisk_fault_drop_tx(&f);
        rx += brisk_fault_drop_rx(&f);
    }
    assert_true(tx > 2000 - 223 && tx < 2000 + 223);
    assert_true(rx > 2000 - 223 && rx < 2000 + 223);
    assert_int_not_equal(tx, 0);
}

/* Same seed, same decisions; the n-th TX decision does not depend on how many RX frames came between. */
static void test_determinism(void **state)
{
    (void)state;
    struct brisk_fault a, b, c2;
    struct brisk_fault_config c = {.tx_loss = 0.1, .rx_loss = 0.1, .seed = 7};
    assert_int_equal(brisk_fault_init(&a, &c), BRISK_OK);
    assert_int_equal(brisk_fault_init(&b, &c), BRISK_OK);
    c.seed = 8;
    assert_int_equal(brisk_fault_init(&c2, &c), BRISK_OK);
    int differs = 0;
    for (int i = 0; i < 5000; i++) {
        int da = brisk_fault_drop_tx(&a);
        for (int k = 0; k < i % 3; k++)
            brisk_fault_drop_rx(&b); /* interleaved receive traffic on b only */
        assert_int_equal(da, brisk_fault_drop_tx(&b));
        differs += da != brisk_fault_drop_tx(&c2);
    }
    assert_true(differs > 100); /* another seed is another sequence */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_determinism),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
