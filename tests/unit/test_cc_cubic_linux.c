/*
 * test_cc_cubic_linux.c — CUBIC as Linux 6.x computes it (src/tcp/cc_cubic_linux.c) against the sequences
 * measured on Linux 6.18 by the scripts of tests/conformance/cc/: ssthresh = cwnd x 717 / 1024 and W_max with
 * fast convergence; after a loss at 20 packets with a 500 ms minimum RTT, one ACK a round for all but the
 * newest segment, cwnd 17, 19, 20 (five rounds), 21, 24; with the flight drained every round the epoch moves
 * on and cwnd stays at 19; the first epoch without W_max grows at most 1/20 a round; an RTO takes ssthresh
 * from cwnd (not again inside a recovery) and forgets W_max; the stack's tcp_cubic setting selects this
 * variant under the name "cubic".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "brisk/brisk.h"
#include "tcp/cc.h"

#define MSS 1000u
#define MS  1000000ull
#define SEC 1000000000ull

static const struct brisk_cc_ops *lc = &brisk_cc_cubic_linux;

static struct brisk_cc_cubic_linux_info info(const struct brisk_cc_state *s)
{
    struct brisk_cc_cubic_linux_info i;
    brisk_cc_cubic_linux_get_info(s, &i);
    return i;
}

/* IW10 acknowledged at 1 s with a 500 ms RTT (Linux's slow start counts all ten: cwnd 20); then the loss
 * and the recovery the connection drives, ending at ssthresh as Linux's PRR does. */
static void after_loss(struct brisk_cc_state *s)
{
    lc->init(s, MSS, 10);
    s->abc_limit = 0;
    lc->on_ack(s, 10 * MSS, 10 * MSS, 500 * MS, 0, SEC);
    assert_int_equal(s->cwnd, 20 * MSS);
    lc->on_enter_recovery(s, 20 * MSS, 0, 3 * SEC / 2);
    assert_int_equal(s->ssthresh, 14 * MSS);
    assert_int_equal(info(s).last_max, 20);
    lc->on_exit_recovery(s, 0, 2 * SEC);
    s->cwnd = s->ssthresh;
}

/* One ACK a round of all but `keep` segments of what is in flight (the previous round's straggler included).
 */
static void rounds(struct brisk_cc_state *s, uint32_t first_acked, unsigned keep, const uint32_t *expect,
                   unsigned n)
{
    uint64_t now = 2 * SEC;
    uint32_t acked = first_acked, flight = first_acked + keep * MSS;
    for (unsigned i = 0; i < n; i++, now += 500 * MS) {
        lc->on_ack(s, acked, flight, 500 * MS, 0, now);
        if (s->cwnd != expect[i] * MSS)
            fail_msg("round %u: cwnd %u, expected %u packets", i + 1, s->cwnd / MSS, expect[i]);
        flight = s->cwnd; /* the ACK's sends fill the window */
        acked = flight - keep * MSS;
    }
}

static void test_concave_plateau_convex(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    after_loss(&s);
    static const uint32_t expect[] = {17, 19, 20, 20, 20, 20, 20, 21, 24};
    rounds(&s, 13 * MSS, 1, expect, 9); /* cc/cubic-concave-convex.pkt */
    assert_int_equal(info(&s).origin, 20);
    assert_int_equal(info(&s).delay_min, 500000);
    assert_int_equal(s.ssthresh, 14 * MSS);
}

static void test_drained_flight_moves_the_epoch(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    after_loss(&s);
    static const uint32_t expect[] = {17, 19, 19, 19, 19};
    rounds(&s, 14 * MSS, 0, expect, 5); /* cc/cubic-drained-flight.pkt */
    /* The same flight drained, then the application writes 2 s later: on_tx_start moves the epoch by the
     * idle time too, so t does not jump ahead (Linux: the target stays 19, no growth). */
    lc->on_tx_start(&s, 4 * SEC, 6 * SEC);
    lc->on_ack(&s, 19 * MSS, 19 * MSS, 500 * MS, 0, 6 * SEC + 500 * MS);
    assert_int_equal(s.cwnd, 19 * MSS);
}

static void test_fast_convergence(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    after_loss(&s);
    lc->on_ack(&s, 13 * MSS, 14 * MSS, 500 * MS, 0, 2 * SEC);
    assert_int_equal(s.cwnd, 17 * MSS);
    lc->on_enter_recovery(&s, 17 * MSS, 0, 5 * SEC / 2);
    assert_int_equal(s.ssthresh, 11 * MSS);  /* 17 x 717 / 1024 */
    assert_int_equal(info(&s).last_max, 14); /* 17 x 1741 / 2048: below the previous 20 */
    /* A loss at or above W_max takes cwnd as it is. */
    lc->on_exit_recovery(&s, 0, 3 * SEC);
    s.cwnd = 100 * MSS;
    lc->on_enter_recovery(&s, 100 * MSS, 0, 4 * SEC);
    assert_int_equal(s.ssthresh, 70 * MSS);
    assert_int_equal(info(&s).last_max, 100);
    /* The floor: 2 packets. */
    lc->on_exit_recovery(&s, 0, 5 * SEC);
    s.cwnd = 2 * MSS;
    lc->on_enter_recovery(&s, 2 * MSS, 0, 6 * SEC);
    assert_int_equal(s.ssthresh, 2 * MSS);
}

static void test_first_epoch_slow(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    lc->init(&s, MSS, 10);
    s.abc_limit = 0;
    s.ssthresh = 40 * MSS; /* e.g. HyStart's exit at 40: congestion avoidance with no W_max */
    s.cwnd = 40 * MSS;
    /* One ACK per packet over a 100 ms round: +1 per 20 acked (cnt capped at 20), two packets a round. */
    uint64_t now = SEC;
    for (unsigned i = 0; i < 40; i++, now += 100 * MS / 40)
        lc->on_ack(&s, MSS, 40 * MSS, 100 * MS, 0, now);
    assert_int_equal(s.cwnd, 42 * MSS);
    assert_int_equal(info(&s).cnt, 20);
    assert_int_equal(info(&s).last_max, 0);
}

static void test_rto(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    after_loss(&s);
    lc->on_ack(&s, 13 * MSS, 14 * MSS, 500 * MS, 0, 2 * SEC);
    /* From the open state: ssthresh from cwnd (17 x 0.7 = 11), everything CUBIC knew forgotten. */
    lc->on_rto(&s, 17 * MSS, 3 * SEC);
    assert_int_equal(s.ssthresh, 11 * MSS);
    assert_int_equal(s.cwnd, MSS);
    assert_int_equal(info(&s).last_max, 0);
    assert_int_equal(info(&s).delay_min, 0);
    assert_false(info(&s).hystart_found);
    /* A repeated timeout holds it. */
    lc->on_rto(&s, 17 * MSS, 4 * SEC);
    assert_int_equal(s.ssthresh, 11 * MSS);
    /* A timeout inside a recovery keeps the recovery's ssthresh (tcp_enter_loss does not recompute it). */
    after_loss(&s);
    s.cwnd = 18 * MSS;
    lc->on_enter_recovery(&s, 18 * MSS, 0, 2 * SEC);
    assert_int_equal(s.ssthresh, 12 * MSS);
    lc->on_rto(&s, 18 * MSS, 3 * SEC);
    assert_int_equal(s.ssthresh, 12 * MSS);
}

static void test_no_growth_when_not_cwnd_limited(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    after_loss(&s);
    lc->on_ack(&s, 13 * MSS, 14 * MSS, 500 * MS, 1, 2 * SEC);
    assert_int_equal(s.cwnd, 14 * MSS);
    assert_false(info(&s).epoch);
}

static void test_selected_by_setting(void **state)
{
    (void)state;
    struct brisk_settings st;
    brisk_settings_default(&st);
    assert_ptr_equal(brisk_cc_for_stack(&st), &brisk_cc_cubic);
    assert_int_equal(brisk_settings_set_kv(&st, "tcp_cubic", "linux"), 0);
    assert_ptr_equal(brisk_cc_for_stack(&st), &brisk_cc_cubic_linux);
    assert_string_equal(brisk_cc_for_stack(&st)->name, "cubic");
    assert_int_equal(brisk_settings_set_kv(&st, "tcp_congestion", "newreno"), 0);
    assert_ptr_equal(brisk_cc_for_stack(&st), &brisk_cc_newreno);
    /* Every linux-* profile has Linux's. */
    for (size_t i = 0; i < brisk_profiles_count(); i++) {
        const char *name = brisk_profile_name(i);
        brisk_settings_default(&st);
        assert_int_equal(brisk_settings_apply_profile(&st, name), 0);
        int linux_profile = strncmp(name, "linux-", 6) == 0;
        assert_ptr_equal(brisk_cc_for_stack(&st), linux_profile ? &brisk_cc_cubic_linux : &brisk_cc_cubic);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concave_plateau_convex),
        cmocka_unit_test(test_drained_flight_moves_the_epoch),
        cmocka_unit_test(test_fast_convergence),
        cmocka_unit_test(test_first_epoch_slow),
        cmocka_unit_test(test_rto),
        cmocka_unit_test(test_no_growth_when_not_cwnd_limited),
        cmocka_unit_test(test_selected_by_setting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
