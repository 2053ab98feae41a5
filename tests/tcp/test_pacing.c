/*
 * test_pacing.c — white-box tests of pacing (src/tcp/pacing.c): departure times from the pacing rate, the
 * pacing hold and its timer, and the catch-up allowance for a timer that fires late.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>
#include <cmocka.h>

#include "stack/stack.h"
#include "support/tcpforge.h"
#include "support/txconn.h"
#include "tcp/tcp.h"

#define ACK               TXC_ACK
#define PSH               TXC_PSH
#define TRUESIZE(payload) TXC_TRUESIZE(payload)

/* Pacing: each packet's departure time is the previous one's plus its wire bytes at the pacing rate; the
 * pacing timer sends what waits, with hold reason "pacing" meanwhile. */
static void test_pacing_departure_times(void **state)
{
    (void)state;
    struct tf_conn f;
    txc_open(&f, (const char *const[]){"tcp_pacing=1", NULL});
    brisk_sock *c = f.c;
    /* 14600 B cwnd over a 1 ms SRTT in slow start (200 %): 29.2 MB/s, so a 1460-byte segment (1526 bytes
     * with headers) leaves every 52.260 us. */
    c->rtt.srtt_fp = TF_MS << 16; /* SRTT 1 ms (fixed point, rtt.h) */
    assert_int_equal(tcp_pacing_rate(c), 29200000);
    uint64_t gap = 1526ull * BRISK_NSEC_PER_SEC / 29200000;
    uint64_t t0 = TF_SEC;
    txc_send(c, 3 * 1460, t0);
    TF_EXPECT(&f.t, t0, ACK, c->snd.iss + 1, 1001, 1460);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(c).hold, BRISK_HOLD_PACING);
    tf_run(&f.t, t0 + gap - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t0 + gap);
    TF_EXPECT(&f.t, t0 + gap, ACK, c->snd.iss + 1 + 1460, 1001, 1460);
    tf_run(&f.t, t0 + 2 * gap);
    TF_EXPECT(&f.t, t0 + 2 * gap, ACK | PSH, c->snd.iss + 1 + 2920, 1001, 1460);
    assert_true(tf_counters(&f.t).PacingHolds >= 2);
    assert_int_equal(tf_info(c).hold_ns[BRISK_HOLD_PACING], 2 * gap);
    tf_conn_close(&f);
}

/* A pacing timer that fires late (a userspace loop woken tens of microseconds after the deadline): the
 * departures it missed go out at once, up to tcp_pacing_catchup's worth, and the schedule goes on from
 * there; with no allowance the late wakeup sends one segment and the lost time is gone. */
static void test_pacing_late_timer_catches_up(void **state)
{
    (void)state;
    for (int allowance = 0; allowance <= 1; allowance++) {
        struct tf_conn f;
        txc_open(&f, allowance ? (const char *const[]){"tcp_pacing=1", "tcp_pacing_catchup=200us", NULL}
                               : (const char *const[]){"tcp_pacing=1", "tcp_pacing_catchup=0", NULL});
        brisk_sock *c = f.c;
        c->rtt.srtt_fp = TF_MS << 16; /* 29.2 MB/s: a segment every 52.260 us, as above */
        uint64_t gap = 1526ull * BRISK_NSEC_PER_SEC / 29200000;
        uint64_t t0 = TF_SEC;
        txc_send(c, 10 * 1460, t0);
        TF_EXPECT(&f.t, t0, ACK, c->snd.iss + 1, 1001, 1460);
        TF_EXPECT_NONE(&f.t);
        /* The timer was due at t0 + gap; the loop runs 5.5 gaps after t0 (235 us late). */
        uint64_t late = t0 + 5 * gap + gap / 2;
        brisk_stack_poll(f.t.st, late);
        tf_collect(&f.t);
        if (!allowance) {
            TF_EXPECT(&f.t, late, ACK, c->snd.iss + 1 + 1460, 1001, 1460);
            TF_EXPECT_NONE(&f.t);
            assert_int_equal(c->pace.next, late + gap); /* the schedule restarts from the late wakeup */
        } else {
            /* The schedule resumes from late - 200 us = t0 + 1.67 gaps (the missed departure at t0 + gap lies
             * beyond the allowance): departures at 1.67, 2.67, 3.67 and 4.67 gaps are all due by 5.5. */
            for (uint32_t i = 1; i <= 4; i++)
                TF_EXPECT(&f.t, late, ACK, c->snd.iss + 1 + i * 1460, 1001, 1460);
            TF_EXPECT_NONE(&f.t);
            assert_true(c->pace.next > late && c->pace.next <= late + gap);
        }
        tf_conn_close(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pacing_departure_times),
        cmocka_unit_test(test_pacing_late_timer_catches_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
