/*
 * test_cc_cubic.c — CUBIC (src/tcp/cc_cubic.c, RFC 9438) white-box against a synthetic ACK clock: the
 * fixed-point curve and K against the formulas in double precision; cwnd following W_cubic(t) = C (t - K)^3 +
 * W_max after a loss, concave below W_max and convex above it; the multiplicative decrease to 0.7 and fast
 * convergence; the Reno-friendly region at a small BDP; at most 1.5x growth per RTT; no growth and no time
 * while application-limited; RTO (K = 0 afterwards, ssthresh held on a repeated timeout); undo; HyStart++
 * leaving slow start on a rising RTT (with and without the connection's sequence numbers); slow start's
 * counting of stretch ACKs (RFC 3465 L = 2, or every segment as Linux); the idle restart; and invariants
 * under random events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/rand.h"
#include "support/testutil.h"
#include "tcp/cc.h"
#include "tcp/hystart.h"

#define MSS 1448u
#define MS  1000000ull
#define SEC 1000000000ull

static const struct brisk_cc_ops *cu(void)
{
    const struct brisk_cc_ops *ops = brisk_cc_find("cubic");
    assert_non_null(ops);
    return ops;
}

static struct brisk_cc_cubic_info info(const struct brisk_cc_state *s)
{
    struct brisk_cc_cubic_info i;
    brisk_cc_cubic_get_info(s, &i);
    return i;
}

/* The RFC's formulas in segments and seconds, in double precision. */
static double k_exact(double w_max_segs, double cwnd_epoch_segs)
{
    return cbrt((w_max_segs - cwnd_epoch_segs) / 0.4);
}

static double w_exact(double w_max_segs, double k, double t)
{
    return 0.4 * (t - k) * (t - k) * (t - k) + w_max_segs;
}

/* The ACK clock: a sender that fills cwnd, one ACK per segment spread evenly over the RTT, every ACK
 * carrying the RTT as its sample. Advances *now by one RTT. */
static void round_trip(struct brisk_cc_state *s, uint64_t *now, uint64_t rtt, int app_limited)
{
    uint32_t flight = s->cwnd;
    uint32_t n = (flight + MSS - 1) / MSS;
    uint64_t step = rtt / n, end = *now + rtt;
    uint32_t left = flight;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t acked = left < MSS ? left : MSS;
        *now += step;
        cu()->on_ack(s, acked, left, rtt, app_limited, *now);
        left -= acked;
    }
    *now = end;
}

/* A connection in congestion avoidance right after a loss at a window of w_max_segs segments: cwnd = 0.7 of
 * it, the epoch not begun. */
static void after_loss(struct brisk_cc_state *s, uint32_t w_max_segs)
{
    memset(s, 0xa5, sizeof(*s));
    cu()->init(s, MSS, 10);
    s->cwnd = w_max_segs * MSS; /* as if slow start had got there */
    cu()->on_enter_recovery(s, s->cwnd, 12345, 0);
    assert_int_equal(s->ssthresh, w_max_segs * MSS * 7 / 10);
    cu()->on_exit_recovery(s, s->ssthresh, 0);
    assert_int_equal(s->cwnd, s->ssthresh);
    assert_false(s->in_recovery);
}

static void test_registry(void **state)
{
    (void)state;
    assert_ptr_equal(brisk_cc_find("cubic"), &brisk_cc_cubic);
    assert_ptr_equal(brisk_cc_find("newreno"), &brisk_cc_newreno);
    assert_true(brisk_cc_count() >= 2);
    /* Index 1 is what the tcp_congestion setting stores for "cubic" (test_settings checks the names). */
    assert_ptr_equal(brisk_cc_get(1), &brisk_cc_cubic);
    assert_null(brisk_cc_find("Cubic"));
    assert_non_null(brisk_cc_cubic.on_undo);
}

static void test_init(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    memset(&s, 0xa5, sizeof(s));
    cu()->init(&s, MSS, 10);
    assert_int_equal(s.cwnd, 10 * MSS);
    assert_int_equal(s.ssthresh, UINT32_MAX);
    assert_int_equal(s.mss, MSS);
    assert_false(s.in_recovery || s.in_loss);
    struct brisk_cc_cubic_info i = info(&s);
    assert_int_equal(i.w_max, 0);
    assert_int_equal(i.t_epoch, 0);
    assert_int_equal(i.hystart, BRISK_HYSTART_SS);
    cu()->init(&s, 0, 0); /* degenerate arguments still give a usable window */
    assert_int_equal(s.mss, 1);
    assert_int_equal(s.cwnd, 1);
}

/* The fixed-point K and W_cubic against the formulas. */
static void test_k_and_curve_arithmetic(void **state)
{
    (void)state;
    static const uint32_t mss[] = {536, 1448, 8948, 65483};
    static const uint32_t w_segs[] = {2, 10, 87, 1000, 33333, 100000};
    for (size_t a = 0; a < sizeof(mss) / sizeof(mss[0]); a++) {
        for (size_t b = 0; b < sizeof(w_segs) / sizeof(w_segs[0]); b++) {
            uint64_t w_max64 = (uint64_t)w_segs[b] * mss[a];
            if (w_max64 > UINT32_MAX)
                continue;
            uint32_t w_max = (uint32_t)w_max64;
            uint32_t epoch = (uint32_t)((uint64_t)w_max * 7 / 10);
            uint64_t k = brisk_cc_cubic_k(mss[a], w_max, epoch);
            double ke = k_exact((double)w_max / mss[a], (double)epoch / mss[a]);
            /* One curve time unit (2^-12 s = 244 us). */
            if (fabs((double)k / 1e9 - ke) > 245e-6)
                fail_msg("mss %u w_max %u: K %" PRIu64 " ns, formula %.9f s", mss[a], w_max, k, ke);
            /* W_cubic(K) = W_max; elsewhere within 0.1 % + one segment's rounding. */
            assert_int_equal(brisk_cc_cubic_window(mss[a], w_max, k, k), w_max);
            for (double t = 0; t < 3 * ke + 2; t += 0.37) {
                double we = w_exact((double)w_max / mss[a], (double)k / 1e9, t) * mss[a];
                if (we < 0)
                    we = 0;
                if (we > UINT32_MAX)
                    we = UINT32_MAX;
                double got = brisk_cc_cubic_window(mss[a], w_max, k, (uint64_t)(t * 1e9));
                double tol = 1e-3 * (double)w_max + 0.4 * 3 * (t - ke) * (t - ke) * 245e-6 * mss[a] + mss[a];
                if (fabs(got - we) > tol)
                    fail_msg("mss %u w_max %u t %.2f: W %.0f, formula %.0f", mss[a], w_max, t, got, we);
            }
        }
    }
    /* No K when the epoch starts at or above W_max; saturation at both ends. */
    assert_int_equal(brisk_cc_cubic_k(MSS, 100 * MSS, 100 * MSS), 0);
    assert_int_equal(brisk_cc_cubic_k(MSS, 100 * MSS, 200 * MSS), 0);
    assert_int_equal(brisk_cc_cubic_window(MSS, 100 * MSS, 0, 3600 * SEC), UINT32_MAX);
    assert_int_equal(brisk_cc_cubic_window(MSS, 100 * MSS, 3600 * SEC, 0), 0);
    assert_int_equal(brisk_cc_cubic_window(MSS, 100 * MSS, 0, UINT64_MAX), UINT32_MAX);
    assert_int_equal(brisk_cc_cubic_window(MSS, 100 * MSS, 500 * SEC, UINT64_MAX), UINT32_MAX);
    assert_int_equal(brisk_cc_cubic_window(MSS, 100 * MSS, UINT64_MAX, UINT64_MAX), 100 * MSS);
    uint64_t kmax = brisk_cc_cubic_k(1, UINT32_MAX, 0); /* 4e9 one-byte segments: K ~ 2154 s, capped */
    assert_true(kmax > 500 * SEC && kmax < 600 * SEC);
}

/* The central property: after a loss, cwnd follows the cubic curve over a real ACK clock. W_max = 1000
 * segments at 100 ms: the cubic growth dominates the Reno-friendly estimate throughout. */
static void test_follows_curve(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    after_loss(&s, 1000);
    uint64_t now = 1 * SEC, rtt = 100 * MS;
    round_trip(&s, &now, rtt, 0);
    struct brisk_cc_cubic_info i = info(&s);
    assert_int_equal(i.w_max, 1000 * MSS);
    assert_int_equal(i.cwnd_prior, 1000 * MSS);
    assert_int_equal(i.cwnd_epoch, 700 * MSS);
    assert_int_equal(i.srtt, rtt);
    double ke = k_exact(1000, 700); /* 9.086 s */
    assert_true(fabs((double)i.k / 1e9 - ke) < 245e-6);
    uint64_t t0 = i.t_epoch;
    double worst = 0;
    while (now - t0 < (uint64_t)(2.2 * ke * 1e9)) {
        round_trip(&s, &now, rtt, 0);
        double t = (double)(now - t0) / 1e9;
        double w = (double)s.cwnd / MSS, we = w_exact(1000, ke, t);
        double err = fabs(w - we) / we;
        if (err > worst)
            worst = err;
        /* Within 1 % of the curve at every round, and never through W_max early. */
        if (err > 0.01)
            fail_msg("t = %.3f s: cwnd %.1f segments, W_cubic(t) %.1f", t, w, we);
        assert_true(info(&s).w_est < s.cwnd); /* the cubic region, not Reno-friendly */
    }
    printf("# W_max 1000 segments, RTT 100 ms, K %.3f s: largest deviation from C(t-K)^3 + W_max %.3f %%\n",
           ke, worst * 100);
}

/* Growth per second falls towards W_max (concave) and rises beyond it (convex). */
static void test_concave_then_convex(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    after_loss(&s, 1000);
    uint64_t now = 1 * SEC, rtt = 100 * MS;
    round_trip(&s, &now, rtt, 0);
    uint64_t k = info(&s).k, t0 = info(&s).t_epoch;
    uint32_t prev = s.cwnd;
    int64_t prev_growth = -1;
    int phase_changes = 0, below = 1;
    for (int sec = 1; sec <= 16; sec++) {
        while (now - t0 < (uint64_t)sec * SEC)
            round_trip(&s, &now, rtt, 0);
        int64_t growth = (int64_t)s.cwnd - prev;
        assert_true(growth >= 0);
        int now_below = now - t0 < k;
        if (prev_growth >= 0 && now_below)
            assert_true(growth <= prev_growth); /* concave */
        if (prev_growth >= 0 && !now_below && !below)
            assert_true(growth >= prev_growth); /* convex */
        if (now_below != below)
            phase_changes++;
        below = now_below;
        if (now_below)
            assert_true(s.cwnd <= 1000 * MSS);
        prev_growth = growth;
        prev = s.cwnd;
    }
    assert_int_equal(phase_changes, 1);
    assert_true(s.cwnd > 1100 * MSS); /* W_cubic(16 s) = 1000 + 0.4 (16 - 9.09)^3 = 1132 segments */
}

static void test_multiplicative_decrease_and_fast_convergence(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    after_loss(&s, 1000); /* ssthresh = cwnd = 700 segments, W_max = 1000 */
    uint64_t now = 1 * SEC;
    for (int r = 0; r < 20; r++)
        round_trip(&s, &now, 100 * MS, 0);
    uint32_t w2 = s.cwnd;
    assert_true(w2 < 1000 * MSS); /* still below W_max: this flow is losing ground */
    cu()->on_enter_recovery(&s, w2, 1, now);
    assert_int_equal(s.ssthresh, (uint64_t)w2 * 7 / 10);
    assert_int_equal(s.cwnd, s.ssthresh + 3 * MSS); /* NewReno recovery inflation with CUBIC's ssthresh */
    struct brisk_cc_cubic_info i = info(&s);
    assert_int_equal(i.cwnd_prior, w2);
    /* Fast convergence: W_max = cwnd (1 + beta) / 2. */
    assert_int_equal(i.w_max, (uint64_t)w2 * 17 / 20);
    /* A second enter while in recovery changes nothing (one reduction per window). */
    uint32_t ss = s.ssthresh;
    cu()->on_enter_recovery(&s, w2 / 2, 1, now);
    assert_int_equal(s.ssthresh, ss);
    cu()->on_exit_recovery(&s, ss, now);
    /* A loss at or above W_max sets W_max to the window itself. */
    s.cwnd = 2000 * MSS;
    cu()->on_enter_recovery(&s, 1500 * MSS, 1, now);
    assert_int_equal(info(&s).w_max, 2000 * MSS);
    assert_int_equal(s.ssthresh, 1050 * MSS); /* beta applies to FlightSize (RFC 9438 4.6) */
    cu()->on_exit_recovery(&s, MSS, now);
    /* Small flight: ssthresh never below 2 segments. */
    cu()->on_enter_recovery(&s, MSS, 1, now);
    assert_int_equal(s.ssthresh, 2 * MSS);
}

/* At a small BDP (20 segments, 1 ms) Reno's one segment per RTT beats the cubic curve: cwnd = W_est, which
 * grows 9/17 of a segment per RTT up to cwnd_prior and one per RTT after. */
static void test_reno_friendly_region(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    after_loss(&s, 20); /* cwnd 14 segments */
    uint64_t now = 1 * SEC, rtt = 1 * MS;
    uint64_t t0 = 0;
    for (int r = 1; r <= 100; r++) {
        round_trip(&s, &now, rtt, 0);
        if (r == 1)
            t0 = info(&s).t_epoch;
        struct brisk_cc_cubic_info i = info(&s);
        /* The cubic curve is far behind: it needs K = 2.47 s to come back to 20 segments. */
        assert_true(brisk_cc_cubic_window(MSS, i.w_max, i.k, now - t0) < s.cwnd || r < 3);
        assert_true(s.cwnd >= i.w_est && s.cwnd - i.w_est < MSS);
    }
    /* Reno-friendly: (20 - 14) / (9/17) = 11.3 RTTs to reach 20, then + 1 per RTT: 108.7 after 100. */
    double segs = (double)s.cwnd / MSS;
    printf("# Reno-friendly region, W_max 20, 1 ms: cwnd %.2f segments after 100 RTTs (Reno model 108.7)\n",
           segs);
    assert_true(fabs(segs - 108.7) < 2.0);
}

/* W_cubic(t + RTT) far above cwnd (K = 0 after an RTO, 10 s RTT): the target is capped at 1.5 cwnd, so one
 * RTT grows cwnd by at most half. */
static void test_growth_capped_at_1_5x(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    memset(&s, 0, sizeof(s));
    cu()->init(&s, MSS, 10);
    uint64_t now = 1 * SEC, rtt = 10 * SEC;
    cu()->on_rto(&s, 100 * MSS, now);
    assert_int_equal(s.cwnd, MSS);
    assert_int_equal(s.ssthresh, 70 * MSS);
    while (s.cwnd < s.ssthresh)
        round_trip(&s, &now, rtt, 0);
    /* The slow start of the last round may have handed some bytes to the first epoch already. */
    round_trip(&s, &now, rtt, 0);
    struct brisk_cc_cubic_info i = info(&s);
    assert_int_equal(i.k, 0);
    assert_int_equal(i.w_max, i.cwnd_epoch);
    for (int r = 0; r < 4; r++) {
        uint32_t before = s.cwnd;
        round_trip(&s, &now, rtt, 0);
        double ratio = (double)s.cwnd / before;
        if (ratio > 1.5 + (double)MSS / before || ratio < 1.45)
            fail_msg("round %d: cwnd %u -> %u (x%.3f)", r, before, s.cwnd, ratio);
    }
}

/* Application-limited ACKs grow nothing and their time does not count: after a 5 s lull the window goes on
 * exactly as in a run that never paused. */
static void test_app_limited_freeze(void **state)
{
    (void)state;
    struct brisk_cc_state a, b;
    after_loss(&a, 1000);
    after_loss(&b, 1000);
    uint64_t na = 1 * SEC, nb = 1 * SEC, rtt = 100 * MS;
    for (int r = 0; r < 20; r++) {
        round_trip(&a, &na, rtt, 0);
        round_trip(&b, &nb, rtt, 0);
    }
    assert_int_equal(a.cwnd, b.cwnd);
    uint32_t frozen = b.cwnd;
    for (int r = 0; r < 50; r++) /* 5 s of application-limited ACKs */
        round_trip(&b, &nb, rtt, 1);
    assert_int_equal(b.cwnd, frozen);
    assert_int_equal(nb, na + 5 * SEC);
    for (int r = 0; r < 40; r++) {
        round_trip(&a, &na, rtt, 0);
        round_trip(&b, &nb, rtt, 0);
        /* The one RTT-step of slack: the lull is measured from the first limited ACK to the first unlimited.
         */
        if (a.cwnd > b.cwnd + MSS || b.cwnd > a.cwnd + MSS)
            fail_msg("round %d after the lull: %u vs %u without it", r, b.cwnd, a.cwnd);
    }
    /* Counting the lull would have put the paused flow 5 s further along the curve, past W_max. */
    assert_true(b.cwnd < 1000 * MSS);
}

static void test_rto(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    after_loss(&s, 1000);
    uint64_t now = 1 * SEC;
    round_trip(&s, &now, 100 * MS, 0);
    uint32_t cwnd = s.cwnd;
    cu()->on_rto(&s, 600 * MSS, now);
    assert_int_equal(s.cwnd, MSS);
    assert_int_equal(s.ssthresh, 420 * MSS);
    assert_true(s.in_loss);
    assert_int_equal(info(&s).cwnd_prior, cwnd);
    /* The retransmission times out too: ssthresh held (FlightSize is meaningless by now). */
    cu()->on_rto(&s, 1 * MSS, now);
    assert_int_equal(s.ssthresh, 420 * MSS);
    assert_int_equal(info(&s).cwnd_prior, cwnd);
    /* Slow start back to ssthresh (standard: HyStart++ is for the initial slow start only). */
    int rounds = 0;
    while (s.cwnd < s.ssthresh) {
        round_trip(&s, &now, 100 * MS, 0);
        assert_false(s.in_loss);
        rounds++;
    }
    assert_true(rounds <= 10);
    assert_int_equal(info(&s).hystart, BRISK_HYSTART_DONE);
    round_trip(&s, &now, 100 * MS, 0);
    /* The first epoch after the timeout: K = 0, W_max = the window it began at (RFC 9438 4.8). */
    struct brisk_cc_cubic_info i = info(&s);
    assert_int_equal(i.k, 0);
    assert_int_equal(i.w_max, i.cwnd_epoch);
    assert_true(i.cwnd_epoch >= 420 * MSS);
}

static void test_undo(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    after_loss(&s, 1000);
    uint64_t now = 1 * SEC;
    for (int r = 0; r < 10; r++)
        round_trip(&s, &now, 100 * MS, 0);
    struct brisk_cc_state before = s;
    struct brisk_cc_cubic_info ib = info(&s);
    /* A spurious fast retransmit, undone during recovery (e.g. by D-SACK). */
    cu()->on_enter_recovery(&s, s.cwnd, 1, now);
    assert_true(s.cwnd < before.cwnd);
    cu()->on_undo(&s, now);
    assert_false(s.in_recovery);
    assert_int_equal(s.cwnd, before.cwnd);
    assert_int_equal(s.ssthresh, before.ssthresh);
    struct brisk_cc_cubic_info ia = info(&s);
    assert_int_equal(ia.w_max, ib.w_max);
    assert_int_equal(ia.k, ib.k);
    assert_int_equal(ia.t_epoch, ib.t_epoch);
    assert_int_equal(ia.cwnd_prior, ib.cwnd_prior);
    /* A spurious RTO (F-RTO), undone after the first ACK. */
    cu()->on_rto(&s, s.cwnd, now);
    round_trip(&s, &now, 100 * MS, 0);
    cu()->on_undo(&s, now);
    assert_false(s.in_loss);
    assert_int_equal(s.cwnd, before.cwnd);
    assert_int_equal(info(&s).w_max, ib.w_max);
    /* Nothing saved: undo is a no-op. */
    struct brisk_cc_state again = s;
    cu()->on_undo(&s, now);
    assert_memory_equal(&again, &s, sizeof(s));
}

/* HyStart++ inside CUBIC: a queue building up (the RTT rises 20 ms over a 50 ms base) ends slow start without
 * a loss, through CSS; the same with the connection's sequence numbers; a flat RTT goes on doubling. */
static uint32_t slow_start_run(struct brisk_cc_state *s, int rising, int with_seq, int rounds_max)
{
    memset(s, 0, sizeof(*s));
    cu()->init(s, MSS, 10);
    uint64_t now = 1 * SEC;
    uint32_t una = 1000, nxt = una + s->cwnd;
    int r;
    for (r = 0; r < rounds_max && s->cwnd < s->ssthresh; r++) {
        uint64_t rtt = rising && r >= 4 ? 70 * MS : 50 * MS;
        /* The flight of this round: ACK it segment by segment, sending two new segments per ACK in slow start
         * (cwnd permitting), which is what the connection's SND.NXT would do. */
        uint32_t n = (nxt - una) / MSS;
        for (uint32_t k = 0; k < n && s->ssthresh == UINT32_MAX; k++) {
            uint32_t flight = nxt - una;
            una += MSS;
            if (with_seq) {
                s->snd_una = una;
                s->snd_nxt = nxt;
                s->seq_valid = 1;
            }
            now += rtt / n;
            cu()->on_ack(s, MSS, flight, rtt, 0, now);
            while (nxt - una + MSS <= s->cwnd)
                nxt += MSS;
        }
    }
    return (uint32_t)r;
}

static void test_hystart_leaves_slow_start(void **state)
{
    (void)state;
    struct brisk_cc_state s, q;
    uint32_t rounds = slow_start_run(&s, 1, 0, 40);
    struct brisk_cc_cubic_info i = info(&s);
    assert_int_equal(i.hystart, BRISK_HYSTART_DONE);
    /* RFC 9406: ssthresh = the window when CSS ended (the ACK that ended it then counted in congestion
     * avoidance, a few bytes). */
    assert_true(s.ssthresh <= s.cwnd && s.cwnd - s.ssthresh < MSS);
    /* 4 rounds doubling (160 segments), the rise seen in round 5, then CSS_ROUNDS of quarter growth. */
    printf("# HyStart++: left slow start after %u rounds at %u segments\n", rounds, s.cwnd / MSS);
    assert_true(s.cwnd > 160 * MSS && s.cwnd < 1000 * MSS);
    assert_true(rounds >= 10 && rounds <= 12);
    /* The round marker from SND.NXT gives the same answer as the one derived from the flight. */
    slow_start_run(&q, 1, 1, 40);
    assert_int_equal(q.cwnd, s.cwnd);
    assert_int_equal(q.ssthresh, s.ssthresh);
    /* The first epoch starts at that window with K = 0 (no loss to return to). */
    uint64_t now = 100 * SEC;
    round_trip(&s, &now, 70 * MS, 0);
    assert_int_equal(info(&s).k, 0);
    assert_int_equal(info(&s).w_max, info(&s).cwnd_epoch);
    /* A flat RTT: slow start doubles for all 12 rounds. */
    slow_start_run(&s, 0, 0, 12);
    assert_int_equal(info(&s).hystart, BRISK_HYSTART_SS);
    assert_int_equal(s.ssthresh, UINT32_MAX);
    assert_true(s.cwnd >= (10u << 11) * MSS);
}

/* CUBIC's slow start counts like NewReno's (cc.c): RFC 3465 L = 2 by default, every whole segment with
 * abc_limit 0 (Linux: cubictcp_cong_avoid calls the packet-counting tcp_slow_start). */
static void test_slow_start_stretch_acks(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    memset(&s, 0xa5, sizeof(s));
    cu()->init(&s, MSS, 10);
    assert_int_equal(s.abc_limit, BRISK_CC_ABC_L);
    cu()->on_ack(&s, 4 * MSS, 10 * MSS, 0, 0, 1 * MS);
    assert_int_equal(s.cwnd, 12 * MSS); /* L = 2 */
    cu()->init(&s, MSS, 10);
    s.abc_limit = 0;
    cu()->on_ack(&s, 4 * MSS, 10 * MSS, 0, 0, 1 * MS);
    assert_int_equal(s.cwnd, 14 * MSS);
    cu()->on_ack(&s, 6 * MSS + 100, 6 * MSS + 100, 0, 0, 2 * MS); /* 100 bytes of a partial segment wait */
    assert_int_equal(s.cwnd, 20 * MSS);
    assert_int_equal(s.ss_credit, 100);
}

static void test_idle_restart(void **state)
{
    (void)state;
    struct brisk_cc_state s;
    after_loss(&s, 1000);
    uint64_t now = 1 * SEC;
    round_trip(&s, &now, 100 * MS, 0);
    uint32_t cwnd = s.cwnd, ssthresh = s.ssthresh;
    cu()->on_idle_restart(&s, 10);
    assert_int_equal(s.cwnd, 10 * MSS);
    assert_int_equal(s.ssthresh, ssthresh > cwnd - cwnd / 4 ? ssthresh : cwnd - cwnd / 4);
    assert_int_equal(info(&s).t_epoch, 0); /* the epoch ended */
    /* Back to ssthresh by slow start, then a new epoch towards the old W_max. */
    while (s.cwnd < s.ssthresh)
        round_trip(&s, &now, 100 * MS, 0);
    round_trip(&s, &now, 100 * MS, 0);
    struct brisk_cc_cubic_info i = info(&s);
    assert_int_equal(i.w_max, 1000 * MSS);
    assert_true(i.k > 0);
}

/* Random events: the window stays sane whatever the order. */
static void test_random_events_keep_invariants(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(5);
    struct brisk_rand r;
    brisk_rand_seed(&r, seed);
    for (int run = 0; run < 50; run++) {
        struct brisk_cc_state s;
        uint32_t mss = 500 + (uint32_t)brisk_rand_below(&r, 9000);
        cu()->init(&s, mss, 1 + (uint32_t)brisk_rand_below(&r, 20));
        uint64_t now = 1;
        for (int i = 0; i < 3000; i++) {
            now += brisk_rand_below(&r, 50 * MS);
            uint32_t flight = (uint32_t)brisk_rand_below(&r, (uint64_t)s.cwnd * 2 + 1);
            uint32_t before = s.cwnd;
            switch (brisk_rand_below(&r, 20)) {
            case 0:
                cu()->on_enter_recovery(&s, flight, 7, now);
                break;
            case 1:
                cu()->on_recovery_ack(&s, (uint32_t)brisk_rand_below(&r, 4 * mss),
                                      (int)brisk_rand_below(&r, 2), flight, now);
                break;
            case 2:
                cu()->on_exit_recovery(&s, flight, now);
                break;
            case 3:
                if (brisk_rand_below(&r, 4) == 0)
                    cu()->on_rto(&s, flight, now);
                break;
            case 4:
                cu()->on_idle_restart(&s, 10);
                break;
            case 5:
                cu()->on_undo(&s, now);
                break;
            default: {
                uint32_t acked = 1 + (uint32_t)brisk_rand_below(&r, 3 * mss);
                int limited = brisk_rand_below(&r, 5) == 0;
                uint64_t rtt = brisk_rand_below(&r, 3) ? MS + brisk_rand_below(&r, 200 * MS) : 0;
                int in_rec = s.in_recovery;
                cu()->on_ack(&s, acked, flight, rtt, limited, now);
                /* Outside recovery an ACK never shrinks cwnd, and grows it by at most 1.5x (the cap) or a
                 * slow-start step. */
                if (!in_rec &&
                    (s.cwnd < before || (uint64_t)s.cwnd > (uint64_t)before + before / 2 + 2 * mss))
                    fail_msg("seed %" PRIu64 " run %d op %d: cwnd %u -> %u on ACK of %u", seed, run, i,
                             before, s.cwnd, acked);
                if (limited && !in_rec && s.cwnd != before && s.ssthresh != s.cwnd)
                    fail_msg("seed %" PRIu64 " run %d op %d: grew while application-limited", seed, run, i);
                break;
            }
            }
            if (s.cwnd < mss || s.ssthresh < 2 * mss || (s.in_recovery && s.in_loss))
                fail_msg("seed %" PRIu64 " run %d op %d: cwnd %u ssthresh %u mss %u rec %u loss %u", seed,
                         run, i, s.cwnd, s.ssthresh, mss, s.in_recovery, s.in_loss);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_k_and_curve_arithmetic),
        cmocka_unit_test(test_follows_curve),
        cmocka_unit_test(test_concave_then_convex),
        cmocka_unit_test(test_multiplicative_decrease_and_fast_convergence),
        cmocka_unit_test(test_reno_friendly_region),
        cmocka_unit_test(test_growth_capped_at_1_5x),
        cmocka_unit_test(test_app_limited_freeze),
        cmocka_unit_test(test_rto),
        cmocka_unit_test(test_undo),
        cmocka_unit_test(test_hystart_leaves_slow_start),
        cmocka_unit_test(test_slow_start_stretch_acks),
        cmocka_unit_test(test_idle_restart),
        cmocka_unit_test(test_random_events_keep_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
