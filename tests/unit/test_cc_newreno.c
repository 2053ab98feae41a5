/*
 * test_cc_newreno.c — NewReno congestion control (src/tcp/cc_newreno.c) and the shared window arithmetic of
 * src/tcp/cc.c, white-box, against a synthetic ACK clock: slow start doubles cwnd per RTT with per-segment
 * and with delayed ACKs and grows 1.5x with stretch ACKs (RFC 3465 L = 2), or by every whole segment with
 * abc_limit 0 (Linux's packet counting, the linux-* profiles), stops at ssthresh handing the surplus to
 * congestion avoidance, which adds exactly one MSS per RTT; application-limited ACKs grow nothing; each
 * fast-recovery transition gives RFC 5681 / RFC 6582's exact numbers; an RTO sets cwnd to one MSS and
 * ssthresh to half the flight (never below 2 MSS, held on a repeated timeout); the idle restart window; the
 * registry by name; saturation at UINT32_MAX; and a random event sequence that must keep the invariants.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/rand.h"
#include "support/testutil.h"
#include "tcp/cc.h"

#define MSS 1448u

static const struct brisk_cc_ops *nr(void)
{
    const struct brisk_cc_ops *ops = brisk_cc_find("newreno");
    assert_non_null(ops);
    return ops;
}

static void init(struct brisk_cc_state *s, uint32_t mss, uint32_t iw)
{
    memset(s, 0xa5, sizeof(*s)); /* init must not depend on the previous contents */
    nr()->init(s, mss, iw);
}

/* One RTT of a sender that fills cwnd: `per_ack` segments per ACK (the last ACK may cover fewer). */
static void rtt_round(struct brisk_cc_state *s, uint32_t mss, uint32_t per_ack)
{
    uint32_t flight = s->cwnd;
    uint32_t left = flight;
    while (left) {
        uint32_t acked = per_ack * mss < left ? per_ack * mss : left;
        nr()->on_ack(s, acked, left, 0, 0, 0);
        left -= acked;
    }
}

static void test_find(void **state)
{
    (void)state;
    assert_ptr_equal(brisk_cc_find("newreno"), &brisk_cc_newreno);
    assert_string_equal(brisk_cc_newreno.name, "newreno");
    assert_null(brisk_cc_find("no-such-algorithm"));
    assert_null(brisk_cc_find("NewReno")); /* names are exact, like Linux's */
    assert_null(brisk_cc_find(""));
    assert_null(brisk_cc_find(NULL));
    assert_true(brisk_cc_count() >= 1);
    for (unsigned i = 0; i < brisk_cc_count(); i++) {
        const struct brisk_cc_ops *ops = brisk_cc_get(i);
        assert_non_null(ops);
        assert_ptr_equal(brisk_cc_find(ops->name), ops);
        assert_non_null(ops->init);
        assert_non_null(ops->on_ack);
        assert_non_null(ops->on_enter_recovery);
        assert_non_null(ops->on_recovery_ack);
        assert_non_null(ops->on_exit_recovery);
        assert_non_null(ops->on_rto);
        assert_non_null(ops->on_idle_restart);
    }
    assert_null(brisk_cc_get(brisk_cc_count()));
}

static void test_init(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    init(&s, MSS, 10);
    assert_int_equal(s.mss, MSS);
    assert_int_equal(s.cwnd, 10 * MSS); /* RFC 6928 IW10 */
    assert_int_equal(s.ssthresh, UINT32_MAX);
    assert_int_equal(s.bytes_acked_ca, 0);
    assert_int_equal(s.in_recovery, 0);
    assert_int_equal(s.in_loss, 0);
    assert_int_equal(s.recover, 0);
    for (int i = 0; i < 8; i++)
        assert_int_equal(s.priv.words[i], 0);
    init(&s, MSS, 0);
    assert_int_equal(s.cwnd, MSS); /* 0 segments count as 1 */
    init(&s, 0x80000000u, 10);
    assert_int_equal(s.cwnd, UINT32_MAX); /* saturates */
}

static void test_slow_start_doubles_per_rtt(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    /* One ACK per segment, two (delayed ACKs: L = 2 still doubles), and stretch ACKs of four. */
    for (uint32_t per_ack = 1; per_ack <= 2; per_ack++) {
        init(&s, MSS, 10);
        for (int k = 1; k <= 10; k++) {
            rtt_round(&s, MSS, per_ack);
            assert_int_equal(s.cwnd, (10u << k) * MSS);
        }
        assert_int_equal(s.bytes_acked_ca, 0);
    }
    init(&s, MSS, 10);
    rtt_round(&s, MSS, 4); /* 2 ACKs of 4 segments and one of 2: each credited at most 2 MSS */
    assert_int_equal(s.cwnd, 16 * MSS);
    /* A single ACK for a whole window credits 2 MSS only. */
    init(&s, MSS, 10);
    nr()->on_ack(&s, 10 * MSS, 10 * MSS, 0, 0, 0);
    assert_int_equal(s.cwnd, 12 * MSS);
    /* A sub-MSS ACK credits what it acked. */
    nr()->on_ack(&s, 100, 12 * MSS, 0, 0, 0);
    assert_int_equal(s.cwnd, 12 * MSS + 100);
}

static void test_slow_start_stops_at_ssthresh(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    init(&s, MSS, 10);
    s.ssthresh = 10 * MSS + 500;
    nr()->on_ack(&s, 2 * MSS, 10 * MSS, 0, 0, 0);
    assert_int_equal(s.cwnd, 10 * MSS + 500);          /* capped */
    assert_int_equal(s.bytes_acked_ca, 2 * MSS - 500); /* the rest counts toward CA */
    /* Now in congestion avoidance (cwnd == ssthresh): byte counting from there. */
    nr()->on_ack(&s, 8 * MSS + 1000, 10 * MSS, 0, 0, 0);
    assert_int_equal(s.cwnd, 11 * MSS + 500);
    assert_int_equal(s.bytes_acked_ca, 2 * MSS - 500 + 8 * MSS + 1000 - (10 * MSS + 500));
}

/* abc_limit 0 (the linux-* profiles; Linux's tcp_slow_start counts packets): a stretch ACK credits every
 * whole segment it covers, a partial one waits until its last byte is acknowledged, and what passes ssthresh
 * goes to congestion avoidance. */
static void test_slow_start_counts_every_segment(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    init(&s, MSS, 10);
    assert_int_equal(s.abc_limit, BRISK_CC_ABC_L); /* init's default: RFC 3465 */
    s.abc_limit = 0;
    nr()->on_ack(&s, 4 * MSS, 10 * MSS, 0, 0, 0); /* one ACK for four segments: +4, where L = 2 gives +2 */
    assert_int_equal(s.cwnd, 14 * MSS);
    nr()->on_ack(&s, 6 * MSS, 6 * MSS, 0, 0, 0); /* the rest of the window: IW10 doubled in one round */
    assert_int_equal(s.cwnd, 20 * MSS);
    /* Half a segment earns nothing yet; the ACK of its other half earns the segment. */
    nr()->on_ack(&s, MSS / 2, 20 * MSS, 0, 0, 0);
    assert_int_equal(s.cwnd, 20 * MSS);
    assert_int_equal(s.ss_credit, MSS / 2);
    nr()->on_ack(&s, MSS - MSS / 2 + 3 * MSS, 20 * MSS, 0, 0, 0);
    assert_int_equal(s.cwnd, 24 * MSS);
    assert_int_equal(s.ss_credit, 0);
    /* A whole window in one ACK: all of it, up to ssthresh, the surplus (credit included) to CA. */
    init(&s, MSS, 10);
    s.abc_limit = 0;
    s.ssthresh = 16 * MSS;
    nr()->on_ack(&s, 300, 10 * MSS, 0, 0, 0);
    nr()->on_ack(&s, 10 * MSS - 300, 10 * MSS, 0, 0, 0);
    assert_int_equal(s.cwnd, 16 * MSS);
    assert_int_equal(s.bytes_acked_ca, 4 * MSS);
    assert_int_equal(s.ss_credit, 0);
    /* RFC 3465 with a larger L caps there. */
    init(&s, MSS, 10);
    s.abc_limit = 3;
    nr()->on_ack(&s, 10 * MSS, 10 * MSS, 0, 0, 0);
    assert_int_equal(s.cwnd, 13 * MSS);
}

static void test_congestion_avoidance_one_mss_per_rtt(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    for (uint32_t per_ack = 1; per_ack <= 3; per_ack++) {
        init(&s, MSS, 10);
        s.cwnd = s.ssthresh = 50 * MSS;
        for (uint32_t k = 1; k <= 30; k++) {
            rtt_round(&s, MSS, per_ack);
            assert_int_equal(s.cwnd, (50 + k) * MSS);
            assert_true(s.bytes_acked_ca < s.cwnd);
        }
    }
    /* Arbitrary ACK sizes: still one MSS per window of acknowledged data. */
    uint64_t seed = brisk_test_seed(3465);
    struct brisk_rand g;
    brisk_rand_seed(&g, seed);
    init(&s, MSS, 10);
    s.cwnd = s.ssthresh = 20 * MSS + 17;
    for (uint32_t k = 1; k <= 200; k++) {
        uint32_t left = s.cwnd;
        while (left) {
            uint32_t a = 1 + (uint32_t)brisk_rand_below(&g, 3 * MSS);
            a = a < left ? a : left;
            nr()->on_ack(&s, a, left, 0, 0, 0);
            left -= a;
        }
        if (s.cwnd != 20 * MSS + 17 + k * MSS)
            fail_msg("seed %" PRIu64 " round %u: cwnd %u", seed, k, s.cwnd);
    }
    /* A stretch ACK covering 2.5 windows pays two increments at once. */
    init(&s, 1000, 10);
    s.cwnd = s.ssthresh = 10000;
    brisk_cc_cong_avoid(&s, s.cwnd, 25000);
    assert_int_equal(s.cwnd, 12000);
    assert_int_equal(s.bytes_acked_ca, 5000);
}

static void test_app_limited_does_not_grow(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    init(&s, MSS, 10);
    for (int i = 0; i < 100; i++)
        nr()->on_ack(&s, MSS, 2 * MSS, 0, 1, 0);
    assert_int_equal(s.cwnd, 10 * MSS);
    s.ssthresh = s.cwnd;
    for (int i = 0; i < 100; i++)
        nr()->on_ack(&s, MSS, 2 * MSS, 0, 1, 0);
    assert_int_equal(s.cwnd, 10 * MSS);
    assert_int_equal(s.bytes_acked_ca, 0);
    /* ...and resumes as soon as the window is used. */
    nr()->on_ack(&s, MSS, 10 * MSS, 0, 0, 0);
    assert_int_equal(s.bytes_acked_ca, MSS);
    /* An ACK of nothing changes nothing. */
    init(&s, MSS, 10);
    nr()->on_ack(&s, 0, 10 * MSS, 0, 0, 0);
    assert_int_equal(s.cwnd, 10 * MSS);
}

static void test_fast_recovery_exact(void **state)
{
    (void)state;
    const struct brisk_cc_ops *o = nr();
    struct brisk_cc_state s;
    init(&s, 1000, 10);
    s.cwnd = 20000;
    s.bytes_acked_ca = 777;
    o->on_enter_recovery(&s, 20000, 123456, 0);
    assert_int_equal(s.in_recovery, 1);
    assert_int_equal(s.recover, 123456);
    assert_int_equal(s.ssthresh, 10000); /* max(FlightSize / 2, 2 SMSS) */
    assert_int_equal(s.cwnd, 13000);     /* ssthresh + 3 SMSS */
    assert_int_equal(s.bytes_acked_ca, 0);

    /* Entering again while in recovery changes nothing (one reduction per window). */
    o->on_enter_recovery(&s, 16000, 200000, 0);
    assert_int_equal(s.ssthresh, 10000);
    assert_int_equal(s.recover, 123456);
    assert_int_equal(s.cwnd, 13000);

    o->on_recovery_ack(&s, 0, 1, 20000, 0); /* further duplicate ACKs inflate by one SMSS each */
    o->on_recovery_ack(&s, 0, 1, 20000, 0);
    assert_int_equal(s.cwnd, 15000);

    o->on_recovery_ack(&s, 3000, 0, 17000, 0); /* partial ACK of 3 SMSS: deflate by 3000, add back 1000 */
    assert_int_equal(s.cwnd, 13000);
    o->on_recovery_ack(&s, 500, 0, 16500, 0); /* partial ACK below one SMSS: no add-back */
    assert_int_equal(s.cwnd, 12500);
    o->on_recovery_ack(&s, 1000, 0, 15500, 0); /* exactly one SMSS: deflate and add back */
    assert_int_equal(s.cwnd, 12500);

    /* New-ACK processing does not touch a window in recovery. */
    o->on_ack(&s, 1000, 16000, 0, 0, 0);
    assert_int_equal(s.cwnd, 12500);

    /* Full ACK with little in flight: min(ssthresh, max(FlightSize, SMSS) + SMSS). */
    o->on_exit_recovery(&s, 4000, 0);
    assert_int_equal(s.in_recovery, 0);
    assert_int_equal(s.cwnd, 5000);
    assert_int_equal(s.ssthresh, 10000);

    /* Recovery ACKs outside recovery are ignored; so is a second exit. */
    o->on_recovery_ack(&s, 0, 1, 4000, 0);
    o->on_exit_recovery(&s, 9000, 0);
    assert_int_equal(s.cwnd, 5000);

    /* Full ACK with much in flight: capped at ssthresh. */
    o->on_enter_recovery(&s, 30000, 1, 0);
    assert_int_equal(s.ssthresh, 15000);
    o->on_exit_recovery(&s, 20000, 0);
    assert_int_equal(s.cwnd, 15000);

    /* Full ACK with nothing in flight: max(0, SMSS) + SMSS. */
    o->on_enter_recovery(&s, 15000, 2, 0);
    o->on_exit_recovery(&s, 0, 0);
    assert_int_equal(s.cwnd, 2000);
    /* ...after which congestion avoidance (cwnd < ssthresh: slow start first) resumes. */
    o->on_ack(&s, 1000, 2000, 0, 0, 0);
    assert_int_equal(s.cwnd, 3000);

    /* A small flight: ssthresh floors at 2 SMSS. */
    init(&s, 1000, 10);
    o->on_enter_recovery(&s, 3000, 9, 0);
    assert_int_equal(s.ssthresh, 2000);
    assert_int_equal(s.cwnd, 5000);

    /* A partial ACK larger than the window never leaves less than one SMSS. */
    o->on_recovery_ack(&s, 20000, 0, 0, 0);
    assert_int_equal(s.cwnd, 1000);
}

static void test_rto(void **state)
{
    (void)state;
    const struct brisk_cc_ops *o = nr();
    struct brisk_cc_state s;
    init(&s, 1000, 10);
    s.cwnd = 30000;
    s.bytes_acked_ca = 123;
    o->on_rto(&s, 30000, 0);
    assert_int_equal(s.cwnd, 1000);      /* the loss window */
    assert_int_equal(s.ssthresh, 15000); /* half the flight */
    assert_int_equal(s.bytes_acked_ca, 0);
    assert_int_equal(s.in_loss, 1);

    /* The retransmission is lost too: ssthresh stays where the first timeout put it. */
    o->on_rto(&s, 1000, 0);
    assert_int_equal(s.ssthresh, 15000);
    assert_int_equal(s.cwnd, 1000);

    /* An ACK gets through: slow start from one segment, and a later timeout recomputes ssthresh, never below
     * 2 SMSS. */
    o->on_ack(&s, 1000, 1000, 0, 0, 0);
    assert_int_equal(s.in_loss, 0);
    assert_int_equal(s.cwnd, 2000);
    o->on_rto(&s, 3000, 0);
    assert_int_equal(s.ssthresh, 2000);
    assert_int_equal(s.cwnd, 1000);

    /* An RTO in fast recovery ends it. */
    init(&s, 1000, 10);
    o->on_enter_recovery(&s, 10000, 5, 0);
    o->on_rto(&s, 8000, 0);
    assert_int_equal(s.in_recovery, 0);
    assert_int_equal(s.ssthresh, 4000);
    assert_int_equal(s.cwnd, 1000);
    /* Recovery entered after an RTO forgets the loss state. */
    o->on_enter_recovery(&s, 10000, 6, 0);
    assert_int_equal(s.in_loss, 0);
}

/* Linux's tcp_cwnd_restart (the linux-* profiles): one halving per RTO of idle time beyond the first, in
 * whole segments, never below min(IW, cwnd); ssthresh remembers 3/4 of the window in whole segments. */
static void test_idle_restart_halving(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    init(&s, 1000, 10);
    s.cwnd = 36000;
    brisk_cc_idle_restart_halving(&s, 10, 1);
    assert_int_equal(s.cwnd, 18000);
    assert_int_equal(s.ssthresh, UINT32_MAX); /* max(ssthresh, 27 segments) */
    s.cwnd = 37500;                           /* 37 whole segments */
    s.ssthresh = 10000;
    brisk_cc_idle_restart_halving(&s, 10, 2);
    assert_int_equal(s.cwnd, 10000); /* 37 -> 18 -> 9, raised to the restart window */
    assert_int_equal(s.ssthresh, 27000);
    s.cwnd = 36000;
    brisk_cc_idle_restart_halving(&s, 10, 0); /* no halving: the restart window is a floor, not a cap */
    assert_int_equal(s.cwnd, 36000);
    s.cwnd = 6000; /* below IW: kept */
    brisk_cc_idle_restart_halving(&s, 10, 5);
    assert_int_equal(s.cwnd, 6000);
}

static void test_idle_restart(void **state)
{
    (void)state;
    const struct brisk_cc_ops *o = nr();
    struct brisk_cc_state s;
    init(&s, 1000, 10);
    s.cwnd = 50000;
    s.ssthresh = 20000;
    s.bytes_acked_ca = 999;
    o->on_idle_restart(&s, 10);
    assert_int_equal(s.cwnd, 10000);     /* min(IW, cwnd) */
    assert_int_equal(s.ssthresh, 37500); /* remembers 3/4 of the window it had */
    assert_int_equal(s.bytes_acked_ca, 0);

    /* A window already below IW is kept, and ssthresh with it. */
    s.cwnd = 5000;
    o->on_idle_restart(&s, 10);
    assert_int_equal(s.cwnd, 5000);
    assert_int_equal(s.ssthresh, 37500);

    /* A high ssthresh is not lowered. */
    init(&s, 1000, 10);
    s.cwnd = 80000;
    o->on_idle_restart(&s, 4);
    assert_int_equal(s.cwnd, 4000);
    assert_int_equal(s.ssthresh, UINT32_MAX);
}

static void test_saturation(void **state)
{
    (void)state;
    const struct brisk_cc_ops *o = nr();
    struct brisk_cc_state s;
    init(&s, 65535, 10);
    s.cwnd = UINT32_MAX - 100;
    o->on_ack(&s, 65535, UINT32_MAX, 0, 0, 0); /* slow start toward UINT32_MAX */
    assert_int_equal(s.cwnd, UINT32_MAX);
    s.ssthresh = 1000;
    for (int i = 0; i < 3; i++)
        o->on_ack(&s, UINT32_MAX, UINT32_MAX, 0, 0, 0); /* congestion avoidance */
    assert_int_equal(s.cwnd, UINT32_MAX);
    o->on_enter_recovery(&s, UINT32_MAX, 0, 0);
    assert_int_equal(s.ssthresh, UINT32_MAX / 2);
    assert_int_equal(s.cwnd, UINT32_MAX / 2 + 3 * 65535);
    for (int i = 0; i < 70000; i++)
        o->on_recovery_ack(&s, 0, 1, UINT32_MAX, 0);
    assert_int_equal(s.cwnd, UINT32_MAX);
    o->on_exit_recovery(&s, UINT32_MAX, 0);
    assert_int_equal(s.cwnd, UINT32_MAX / 2);
    assert_int_equal(brisk_cc_loss_ssthresh(UINT32_MAX, UINT32_MAX), UINT32_MAX);
}

/* A NewReno connection through random events: whatever the sequence, the window stays sane. */
static void test_random_events_keep_invariants(void **state)
{
    (void)state;
    const struct brisk_cc_ops *o = nr();
    uint64_t seed = brisk_test_seed(5681);
    struct brisk_rand g;
    brisk_rand_seed(&g, seed);
    for (int run = 0; run < 200; run++) {
        struct brisk_cc_state s;
        uint32_t mss = 500 + (uint32_t)brisk_rand_below(&g, 9000);
        init(&s, mss, 1 + (uint32_t)brisk_rand_below(&g, 20));
        int lost = 0;
        for (int i = 0; i < 2000; i++) {
            uint32_t flight = (uint32_t)brisk_rand_below(&g, (uint64_t)s.cwnd + 1);
            uint32_t acked = (uint32_t)brisk_rand_below(&g, (uint64_t)flight + 1);
            uint32_t before = s.cwnd, ssth = s.ssthresh;
            int in_rec = (int)s.in_recovery;
            switch (brisk_rand_below(&g, 20)) {
            case 0:
                o->on_enter_recovery(&s, flight, i, 0);
                lost = 1;
                break;
            case 1:
                o->on_rto(&s, flight, 0);
                lost = 1;
                if (s.cwnd != mss)
                    fail_msg("seed %" PRIu64 " run %d op %d: cwnd %u after RTO", seed, run, i, s.cwnd);
                break;
            case 2:
                o->on_exit_recovery(&s, flight, 0);
                if (in_rec && s.cwnd > ssth)
                    fail_msg("seed %" PRIu64 " run %d op %d: exit above ssthresh", seed, run, i);
                break;
            case 3:
                o->on_idle_restart(&s, 10);
                break;
            case 4:
            case 5:
                o->on_recovery_ack(&s, acked, (int)brisk_rand_below(&g, 2), flight, 0);
                break;
            default:
                o->on_ack(&s, acked, flight, 0, brisk_rand_chance(&g, 0.1), 0);
                /* Outside recovery an ACK never shrinks the window and grows it by at most 2 MSS. */
                if (!in_rec && (s.cwnd < before || (uint64_t)s.cwnd > (uint64_t)before + 2 * mss))
                    fail_msg("seed %" PRIu64 " run %d op %d: cwnd %u -> %u on ACK of %u", seed, run, i,
                             before, s.cwnd, acked);
                break;
            }
            if (s.cwnd < mss || (lost && s.ssthresh < 2 * mss) || (s.in_recovery && s.in_loss))
                fail_msg("seed %" PRIu64 " run %d op %d: cwnd %u ssthresh %u mss %u rec %u loss %u", seed,
                         run, i, s.cwnd, s.ssthresh, mss, s.in_recovery, s.in_loss);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_slow_start_doubles_per_rtt),
        cmocka_unit_test(test_slow_start_stops_at_ssthresh),
        cmocka_unit_test(test_slow_start_counts_every_segment),
        cmocka_unit_test(test_congestion_avoidance_one_mss_per_rtt),
        cmocka_unit_test(test_app_limited_does_not_grow),
        cmocka_unit_test(test_fast_recovery_exact),
        cmocka_unit_test(test_rto),
        cmocka_unit_test(test_idle_restart),
        cmocka_unit_test(test_idle_restart_halving),
        cmocka_unit_test(test_saturation),
        cmocka_unit_test(test_random_events_keep_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
