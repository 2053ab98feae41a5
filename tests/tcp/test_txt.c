/*
 * test_txt.c — the send-time ring (src/tcp/txt.c): records keep exact ns send times as 48-bit offsets from a
 * per-connection base, across rebases (an empty ring, a clock stepping back, a base gone stale), and only
 * records 2^48 ns older than the newest are given up. The ring is exercised on a bare struct brisk_sock: it
 * touches nothing else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

#include "stack/stack.h"
#include "tcp/tcp.h"

#define SPAN (UINT64_C(1) << 48) /* offsets reach SPAN - 1 */

/* Pops the oldest record as rtt_from_ack does; returns its time, *end its sequence number. */
static uint64_t pop(brisk_sock *c, uint32_t *end)
{
    assert_true(c->txt.len > 0);
    uint64_t at = tcp_txt_at(c, c->txt.head);
    *end = c->txt.end[c->txt.head];
    c->txt.head = (uint8_t)((c->txt.head + 1) % TCP_TX_TIMES);
    c->txt.len--;
    return at;
}

static void check_all(brisk_sock *c, const uint64_t *at, const uint32_t *end, unsigned n)
{
    assert_int_equal(c->txt.len, n);
    for (unsigned k = 0; k < n; k++) {
        unsigned i = (c->txt.head + k) % TCP_TX_TIMES;
        assert_int_equal(tcp_txt_at(c, i), at[k]);
        assert_int_equal(c->txt.end[i], end[k]);
    }
}

static void test_exact_times_through_wraps(void **state)
{
    (void)state;
    brisk_sock *c = calloc(1, sizeof(*c));
    /* Sub-ns-apart sends, an RTT of 9 hours, a time near the top of the clock: all exact, FIFO order kept
     * while the ring index wraps several times. */
    const uint64_t starts[] = {0, 1, 123456789, (UINT64_C(1) << 32) - 1, UINT64_MAX - 100 * SPAN};
    for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
        uint64_t now = starts[s], want[TCP_TX_TIMES];
        uint32_t ends[TCP_TX_TIMES], seq = 4000000000u;
        unsigned n = 0;
        for (int i = 0; i < 200; i++) {
            if (n == TCP_TX_TIMES || (n > 0 && i % 7 == 3)) {
                uint32_t e;
                assert_int_equal(pop(c, &e), want[0]);
                assert_int_equal(e, ends[0]);
                for (unsigned k = 1; k < n; k++) {
                    want[k - 1] = want[k];
                    ends[k - 1] = ends[k];
                }
                n--;
            }
            now += (i % 5 == 0) ? (UINT64_C(9) * 3600 * BRISK_NSEC_PER_SEC) / 32 : (uint64_t)(i % 3);
            seq += 1448;
            tcp_txt_push(c, seq, now);
            want[n] = now;
            ends[n++] = seq;
            check_all(c, want, ends, n);
        }
        c->txt.len = 0;
    }
    free(c);
}

static void test_clock_steps_back(void **state)
{
    (void)state;
    brisk_sock *c = calloc(1, sizeof(*c));
    tcp_txt_push(c, 1, 5000);
    tcp_txt_push(c, 2, 7000);
    tcp_txt_push(c, 3, 4000); /* below the base: the ring is rebased on it */
    tcp_txt_push(c, 4, 4000 + (UINT64_C(1) << 40));
    check_all(c, (const uint64_t[]){5000, 7000, 4000, 4000 + (UINT64_C(1) << 40)},
              (const uint32_t[]){1, 2, 3, 4}, 4);
    free(c);
}

static void test_records_beyond_the_span_are_dropped(void **state)
{
    (void)state;
    brisk_sock *c = calloc(1, sizeof(*c));
    uint64_t t0 = 1000;
    tcp_txt_push(c, 1, t0);
    tcp_txt_push(c, 2, t0 + 10);
    tcp_txt_push(c, 3, t0 + SPAN / 2);
    /* Exactly SPAN - 1 after the first: everything still fits. */
    tcp_txt_push(c, 4, t0 + SPAN - 1);
    check_all(c, (const uint64_t[]){t0, t0 + 10, t0 + SPAN / 2, t0 + SPAN - 1},
              (const uint32_t[]){1, 2, 3, 4}, 4);
    /* 2^48 + 20 ns after the first (2^48 + 10 after the second): those two records could no longer be
     * expressed; they go untimed. */
    tcp_txt_push(c, 5, t0 + SPAN + 20);
    check_all(c, (const uint64_t[]){t0 + SPAN / 2, t0 + SPAN - 1, t0 + SPAN + 20},
              (const uint32_t[]){3, 4, 5}, 3);
    /* A jump beyond every record: only the new one is kept. */
    tcp_txt_push(c, 6, t0 + 3 * SPAN);
    check_all(c, (const uint64_t[]){t0 + 3 * SPAN}, (const uint32_t[]){6}, 1);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_times_through_wraps),
        cmocka_unit_test(test_clock_steps_back),
        cmocka_unit_test(test_records_beyond_the_span_are_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
