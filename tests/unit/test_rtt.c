/*
 * test_rtt.c — the RFC 6298 estimator (src/tcp/rtt.c): the first-sample rules and hand-computed second
 * samples, RFC 7323 appendix G gains, a floating-point reference of the RFC's equations over random sample
 * sequences (srtt / rttvar within half a nanosecond, RTO within one), exact convergence on a steady path (no
 * drift), clamping of samples and RTO, backoff doubling and its saturation at rto_max, the RFC 6298 5.7 3 s
 * fallback, Linux 6.x's estimator (the linux-* profiles) on a hand-computed sample sequence, and the windowed
 * min-RTT filter: expiry, promotion, and a randomized comparison with a brute-force windowed minimum.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "core/rand.h"
#include "support/testutil.h"
#include "tcp/rtt.h"

#define US BRISK_NSEC_PER_USEC
#define MS BRISK_NSEC_PER_MSEC
#define S  BRISK_NSEC_PER_SEC

static void test_initial_state(void **state)
{
    (void)state;
    struct brisk_rtt r;
    brisk_rtt_init(&r, 1 * S, 200 * MS, 120 * S);
    assert_int_equal(brisk_rtt_srtt(&r), 0);
    assert_int_equal(brisk_rtt_rttvar(&r), 0);
    assert_int_equal(r.samples, 0);
    assert_int_equal(brisk_rtt_min(&r), 0);
    assert_int_equal(r.backoff, 0);
    assert_int_equal(r.rto, 1 * S); /* RFC 6298 2.1 */
    assert_int_equal(brisk_rtt_rto(&r), 1 * S);
    assert_int_equal(r.rto_min, 200 * MS);
    assert_int_equal(r.rto_max, 120 * S);
    assert_int_equal(r.min_rtt_win, BRISK_RTT_MIN_RTT_WIN_DEFAULT);
}

static void test_init_clamps(void **state)
{
    (void)state;
    struct brisk_rtt r;
    brisk_rtt_init(&r, 100 * MS, 200 * MS, 60 * S);
    assert_int_equal(r.rto, 200 * MS);
    brisk_rtt_init(&r, 100 * S, 200 * MS, 60 * S);
    assert_int_equal(r.rto, 60 * S);
    /* A ceiling below the floor is raised to it. */
    brisk_rtt_init(&r, 1 * S, 2 * S, 1 * S);
    assert_int_equal(r.rto_max, 2 * S);
    assert_int_equal(r.rto, 2 * S);
}

static void test_first_sample(void **state)
{
    (void)state;
    struct brisk_rtt r;
    brisk_rtt_init(&r, 1 * S, 0, 120 * S);
    brisk_rtt_sample(&r, 100 * MS, 5 * S);
    assert_int_equal(brisk_rtt_srtt(&r), 100 * MS);  /* SRTT = R */
    assert_int_equal(brisk_rtt_rttvar(&r), 50 * MS); /* RTTVAR = R / 2 */
    assert_int_equal(r.rto, 300 * MS);               /* SRTT + 4 RTTVAR */
    assert_int_equal(brisk_rtt_min(&r), 100 * MS);
    assert_int_equal(r.samples, 1);

    /* A tiny first sample: 4 RTTVAR = 400 ns is below G = 1 us, so G is added instead. */
    brisk_rtt_init(&r, 1 * S, 0, 120 * S);
    brisk_rtt_sample(&r, 200, 0);
    assert_int_equal(brisk_rtt_srtt(&r), 200);
    assert_int_equal(brisk_rtt_rttvar(&r), 100);
    assert_int_equal(r.rto, 200 + BRISK_RTT_GRANULARITY);
}

static void test_second_sample_exact(void **state)
{
    (void)state;
    struct brisk_rtt r;
    brisk_rtt_init(&r, 1 * S, 0, 120 * S);
    brisk_rtt_sample(&r, 100 * MS, 0);
    brisk_rtt_sample(&r, 200 * MS, 1 * S);
    /* RTTVAR = 3/4 * 50 + 1/4 * |100 - 200| = 62.5 ms (with the old SRTT); SRTT = 7/8 100 + 1/8 200 = 112.5
     */
    assert_int_equal(brisk_rtt_rttvar(&r), 62500 * US);
    assert_int_equal(brisk_rtt_srtt(&r), 112500 * US);
    assert_int_equal(r.rto, 362500 * US);
    assert_int_equal(brisk_rtt_min(&r), 100 * MS);

    /* Downwards: 112.5 -> R = 12.5 ms: RTTVAR = 3/4 62.5 + 1/4 100 = 71.875; SRTT = 112.5 - 100/8 = 100. */
    brisk_rtt_sample(&r, 12500 * US, 2 * S);
    assert_int_equal(brisk_rtt_rttvar(&r), 71875 * US);
    assert_int_equal(brisk_rtt_srtt(&r), 100 * MS);
    assert_int_equal(r.rto, 100 * MS + 4 * 71875 * US);
    assert_int_equal(brisk_rtt_min(&r), 12500 * US);
}

static void test_sample_n_gains(void **state)
{
    (void)state;
    struct brisk_rtt r;
    brisk_rtt_init(&r, 1 * S, 0, 120 * S);
    brisk_rtt_sample_n(&r, 100 * MS, 0, 4); /* the first sample ignores the divisor */
    assert_int_equal(brisk_rtt_srtt(&r), 100 * MS);
    assert_int_equal(brisk_rtt_rttvar(&r), 50 * MS);
    brisk_rtt_sample_n(&r, 200 * MS, 1, 4);
    /* beta' = 1/16: 50 + (100 - 50) / 16 = 53.125; alpha' = 1/32: 100 + 100 / 32 = 103.125 */
    assert_int_equal(brisk_rtt_rttvar(&r), 53125 * US);
    assert_int_equal(brisk_rtt_srtt(&r), 103125 * US);

    /* expected = 0 counts as 1, i.e. brisk_rtt_sample(). */
    struct brisk_rtt a, b;
    brisk_rtt_init(&a, 1 * S, 0, 120 * S);
    brisk_rtt_init(&b, 1 * S, 0, 120 * S);
    brisk_rtt_sample(&a, 10 * MS, 0);
    brisk_rtt_sample_n(&b, 10 * MS, 0, 0);
    brisk_rtt_sample(&a, 30 * MS, 1);
    brisk_rtt_sample_n(&b, 30 * MS, 1, 0);
    assert_int_equal(brisk_rtt_srtt(&a), brisk_rtt_srtt(&b));
    assert_int_equal(brisk_rtt_rttvar(&a), brisk_rtt_rttvar(&b));
    assert_int_equal(a.rto, b.rto);
}

static void test_expected_samples(void **state)
{
    (void)state;
    assert_int_equal(brisk_rtt_expected_samples(0, 1448), 1);
    assert_int_equal(brisk_rtt_expected_samples(1448, 1448), 1);
    assert_int_equal(brisk_rtt_expected_samples(2896, 1448), 1);
    assert_int_equal(brisk_rtt_expected_samples(2897, 1448), 2);
    assert_int_equal(brisk_rtt_expected_samples(10 * 1448, 1448), 5);
    assert_int_equal(brisk_rtt_expected_samples(1000, 0), 1);
    assert_int_equal(brisk_rtt_expected_samples(UINT32_MAX, 1), 2147483648u);
    assert_int_equal(brisk_rtt_expected_samples(UINT32_MAX, UINT32_MAX), 1);
}

/* ---------------------------------------------------------------------------------------------------------
 * The RFC's equations in double precision, against the fixed-point implementation.
 * ------------------------------------------------------------------------------------------------------- */
/* long double: near the 2^44 ns sample ceiling a double's own rounding (2^-8 ns per operation, accumulated
 * over the 8n samples the EWMA remembers) would be a large part of the half-nanosecond being checked. */
struct ref {
    long double srtt, rttvar;
    int have;
};

static long double ref_sample(struct ref *f, long double rtt, long double n, long double rto_min,
                              long double rto_max)
{
    if (!f->have) {
        f->srtt = rtt;
        f->rttvar = rtt / 2;
        f->have = 1;
    } else {
        long double beta = 0.25L / n, alpha = 0.125L / n;
        f->rttvar = (1 - beta) * f->rttvar + beta * fabsl(f->srtt - rtt);
        f->srtt = (1 - alpha) * f->srtt + alpha * rtt;
    }
    long double g = (long double)BRISK_RTT_GRANULARITY, k = 4 * f->rttvar;
    long double rto = f->srtt + (k > g ? k : g);
    return rto < rto_min ? rto_min : rto > rto_max ? rto_max : rto;
}

/* Draws a sample from one of several shapes: steady with jitter, uniform over decades, spikes, huge. */
static uint64_t draw_rtt(struct brisk_rand *g, int shape, uint64_t base)
{
    switch (shape) {
    case 0: /* steady path with +-10 % jitter */
        return base - base / 10 + brisk_rand_below(g, base / 5 + 1);
    case 1: /* anywhere from 1 ns to 10 s, log-uniform */
        return (uint64_t)exp(brisk_rand_double(g) * log(10.0 * (double)S)) + 1;
    case 2: /* steady with occasional 50x spikes (a queue filling) */
        return brisk_rand_chance(g, 0.05) ? base * 50 : base + brisk_rand_below(g, base / 100 + 1);
    default: /* near the sample ceiling */
        return BRISK_RTT_SAMPLE_MAX - brisk_rand_below(g, BRISK_RTT_SAMPLE_MAX / 4);
    }
}

static void test_random_vs_float_reference(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(6298);
    struct brisk_rand g;
    brisk_rand_seed(&g, seed);
    double worst_srtt = 0, worst_var = 0, worst_rto = 0;
    for (int run = 0; run < 400; run++) {
        int shape = run % 4;
        uint32_t n = run % 3 == 0 ? 1 : (uint32_t)(1 + brisk_rand_below(&g, 64));
        uint64_t base = 1 * US + brisk_rand_below(&g, 500 * MS);
        uint64_t rto_min = brisk_rand_chance(&g, 0.5) ? 0 : 200 * MS;
        uint64_t rto_max = shape == 3 ? UINT64_MAX : 120 * S;
        struct brisk_rtt r;
        struct ref f = {0};
        brisk_rtt_init(&r, 1 * S, rto_min, rto_max);
        uint64_t now = brisk_rand_u64(&g) >> 8;
        for (int i = 0; i < 500; i++) {
            uint64_t rtt = draw_rtt(&g, shape, base);
            now += rtt;
            uint32_t nn = n == 1 ? 1 : (uint32_t)(1 + brisk_rand_below(&g, n));
            if (nn == 1)
                brisk_rtt_sample(&r, rtt, now);
            else
                brisk_rtt_sample_n(&r, rtt, now, nn);
            long double rto =
                ref_sample(&f, (long double)rtt, nn, (long double)rto_min, (long double)rto_max);
            double es = (double)fabsl((long double)brisk_rtt_srtt(&r) - f.srtt);
            double ev = (double)fabsl((long double)brisk_rtt_rttvar(&r) - f.rttvar);
            double eo = (double)fabsl((long double)r.rto - rto);
            /* The reference's own error where long double is no wider than double. */
            double slack = (double)(16.0L * nn * LDBL_EPSILON * (f.srtt + 4 * f.rttvar));
            worst_srtt = es > worst_srtt ? es : worst_srtt;
            worst_var = ev > worst_var ? ev : worst_var;
            worst_rto = eo > worst_rto ? eo : worst_rto;
            /* Rounded to ns from a state a tiny fraction of a ns off the exact recurrence. */
            if (es > 0.51 + slack || ev > 0.51 + slack || eo > 1.01 + slack || r.backoff != 0)
                fail_msg("seed %" PRIu64 " run %d sample %d (R=%" PRIu64 ", n=%u): srtt %" PRIu64
                         " vs %.3f, rttvar %" PRIu64 " vs %.3f, rto %" PRIu64 " vs %.3f",
                         seed, run, i, rtt, nn, brisk_rtt_srtt(&r), (double)f.srtt, brisk_rtt_rttvar(&r),
                         (double)f.rttvar, r.rto, (double)rto);
        }
        assert_int_equal(r.samples, UINT8_MAX); /* the count saturates: only whether there was one matters */
    }
    print_message("rtt vs float (seed %" PRIu64 "): worst error srtt %.4f ns, rttvar %.4f ns, rto %.4f ns\n",
                  seed, worst_srtt, worst_var, worst_rto);
}

static void test_steady_path_converges_exactly(void **state)
{
    (void)state;
    /* Integer ns EWMAs that truncate would stop up to 7 ns short of R; brisk must land on it exactly, from
     * above and from below, and RTTVAR must decay to nothing, leaving RTO = R + G. */
    const uint64_t starts[] = {1 * S, 1 * MS, 9 * MS + 999999};
    for (size_t k = 0; k < sizeof(starts) / sizeof(starts[0]); k++) {
        struct brisk_rtt r;
        brisk_rtt_init(&r, 1 * S, 0, 120 * S);
        brisk_rtt_sample(&r, starts[k], 0);
        const uint64_t R = 10 * MS + 7;
        for (int i = 0; i < 2000; i++)
            brisk_rtt_sample(&r, R, (uint64_t)(i + 1) * MS);
        assert_int_equal(brisk_rtt_srtt(&r), R);
        assert_int_equal(brisk_rtt_rttvar(&r), 0);
        assert_int_equal(r.rto, R + BRISK_RTT_GRANULARITY);
    }
}

static void test_clamping(void **state)
{
    (void)state;
    struct brisk_rtt r;
    /* The floor: a 1 ms path still gets rto_min. */
    brisk_rtt_init(&r, 1 * S, 200 * MS, 60 * S);
    for (int i = 0; i < 100; i++)
        brisk_rtt_sample(&r, 1 * MS, (uint64_t)i * MS);
    assert_int_equal(brisk_rtt_srtt(&r), 1 * MS);
    assert_int_equal(r.rto, 200 * MS);
    assert_int_equal(brisk_rtt_rto(&r), 200 * MS);

    /* The ceiling. */
    brisk_rtt_sample(&r, 100 * S, 1 * S);
    assert_int_equal(r.rto, 60 * S);

    /* Absurd samples are clamped, nothing overflows. */
    brisk_rtt_init(&r, 1 * S, 0, UINT64_MAX);
    brisk_rtt_sample(&r, UINT64_MAX, 0);
    assert_int_equal(brisk_rtt_srtt(&r), BRISK_RTT_SAMPLE_MAX);
    assert_int_equal(brisk_rtt_rttvar(&r), BRISK_RTT_SAMPLE_MAX / 2);
    assert_int_equal(r.rto, 3 * BRISK_RTT_SAMPLE_MAX);
    brisk_rtt_sample(&r, 1, 1);
    brisk_rtt_sample(&r, UINT64_MAX, 2);
    assert_true(brisk_rtt_srtt(&r) <= BRISK_RTT_SAMPLE_MAX && r.rto > brisk_rtt_srtt(&r));

    /* A zero sample counts as 1 ns (the clock's resolution): SRTT is never 0 after a sample. */
    brisk_rtt_init(&r, 1 * S, 0, 60 * S);
    brisk_rtt_sample(&r, 0, 0);
    assert_int_equal(brisk_rtt_srtt(&r), 1);
    assert_int_equal(r.rto, 1 + BRISK_RTT_GRANULARITY);
}

static void test_backoff_doubles_and_saturates(void **state)
{
    (void)state;
    struct brisk_rtt r;
    brisk_rtt_init(&r, 1 * S, 200 * MS, 60 * S);
    const uint64_t want[] = {1 * S, 2 * S, 4 * S, 8 * S, 16 * S, 32 * S, 60 * S, 60 * S, 60 * S};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        assert_int_equal(brisk_rtt_rto(&r), want[i]);
        brisk_rtt_backoff(&r);
    }
    assert_int_equal(r.backoff, 6); /* stopped incrementing at the ceiling */
    assert_int_equal(r.rto, 1 * S); /* the base is untouched */

    /* A sample resets the backoff (RFC 6298 5.7 with a new ACK). */
    brisk_rtt_sample(&r, 100 * MS, 0);
    assert_int_equal(r.backoff, 0);
    assert_int_equal(brisk_rtt_rto(&r), 300 * MS);

    /* Exactly reaching the ceiling: 1 s << 6 = 64 s = rto_max, then no more. */
    brisk_rtt_init(&r, 1 * S, 0, 64 * S);
    for (int i = 0; i < 100; i++)
        brisk_rtt_backoff(&r);
    assert_int_equal(r.backoff, 6);
    assert_int_equal(brisk_rtt_rto(&r), 64 * S);

    /* No overflow with an unbounded ceiling and a huge base: the result is monotone, then pinned. */
    brisk_rtt_init(&r, 1 * S, 0, UINT64_MAX);
    brisk_rtt_sample(&r, BRISK_RTT_SAMPLE_MAX, 0);
    uint64_t prev = brisk_rtt_rto(&r);
    for (int i = 0; i < 200; i++) {
        brisk_rtt_backoff(&r);
        uint64_t cur = brisk_rtt_rto(&r);
        assert_true(cur >= prev);
        prev = cur;
    }
    assert_int_equal(prev, UINT64_MAX);
    assert_true(r.backoff < 64);

    /* A zero RTO (a test configuration) never grows and the shift stays bounded. */
    brisk_rtt_init(&r, 0, 0, 10 * S);
    for (int i = 0; i < 100; i++)
        brisk_rtt_backoff(&r);
    assert_int_equal(brisk_rtt_rto(&r), 0);
    assert_true(r.backoff <= 63);
}

static void test_syn_timeout_fallback(void **state)
{
    (void)state;
    struct brisk_rtt r;
    /* The SYN times out twice: its own backoff goes 1 s, 2 s, 4 s; data then starts at 3 s. */
    brisk_rtt_init(&r, 1 * S, 200 * MS, 120 * S);
    assert_int_equal(brisk_rtt_rto(&r), 1 * S);
    brisk_rtt_backoff(&r);
    brisk_rtt_syn_timeout(&r);
    assert_int_equal(brisk_rtt_rto(&r), 2 * S);
    brisk_rtt_backoff(&r);
    brisk_rtt_syn_timeout(&r);
    assert_int_equal(brisk_rtt_rto(&r), 4 * S);
    brisk_rtt_established(&r);
    assert_int_equal(r.backoff, 0);
    assert_int_equal(brisk_rtt_rto(&r), BRISK_RTT_SYN_FALLBACK);
    /* The first real sample replaces the fallback. */
    brisk_rtt_sample(&r, 50 * MS, 10 * S);
    assert_int_equal(brisk_rtt_rto(&r), 200 * MS);

    /* A handshake without retransmission keeps the 1 s initial RTO. */
    brisk_rtt_init(&r, 1 * S, 200 * MS, 120 * S);
    brisk_rtt_established(&r);
    assert_int_equal(brisk_rtt_rto(&r), 1 * S);

    /* A valid sample (timestamps) taken during the handshake beats the fallback. */
    brisk_rtt_init(&r, 1 * S, 200 * MS, 120 * S);
    brisk_rtt_backoff(&r);
    brisk_rtt_syn_timeout(&r);
    brisk_rtt_sample(&r, 40 * MS, 1 * S);
    brisk_rtt_established(&r);
    assert_int_equal(brisk_rtt_rto(&r), 200 * MS);

    /* The fallback respects the ceiling, and never lowers a larger initial RTO. */
    brisk_rtt_init(&r, 1 * S, 200 * MS, 2 * S);
    brisk_rtt_syn_timeout(&r);
    brisk_rtt_established(&r);
    assert_int_equal(brisk_rtt_rto(&r), 2 * S);
    brisk_rtt_init(&r, 5 * S, 200 * MS, 120 * S);
    brisk_rtt_syn_timeout(&r);
    brisk_rtt_established(&r);
    assert_int_equal(brisk_rtt_rto(&r), 5 * S);
}

/* ---------------------------------------------------------------------------------------------------------
 * The windowed min-RTT filter.
 * ------------------------------------------------------------------------------------------------------- */
/* Linux's estimator (brisk_rtt_use_linux): the exact SRTT, mdev and RTO Linux 6.x's tcp_rtt_estimator and
 * tcp_set_rto compute for a sample sequence (worked by hand from its integer recurrences, in us): RTO =
 * SRTT + rttvar, rttvar the round's largest 4 x mdev and at least rto_min, decaying once per round; samples
 * below SRTT move mdev with gain 1/32; the RTO rounded up to 1 ms. RFC 6298's estimator on the same path for
 * contrast: its RTO drops towards max(rto_min, SRTT) where Linux's stays SRTT + rto_min. */
static void test_linux_estimator(void **state)
{
    (void)state;
    static const struct {
        uint64_t rtt_us;
        int new_round;                     /* the ACK takes snd_una past the snd_nxt the round began at */
        uint64_t srtt_ns, mdev_ns, rto_ms; /* afterwards */
    } steps[] = {
        {100000, 0, 100000000, 50000000, 300}, /* first: SRTT = R, mdev = R / 2, RTO = R + max(2 R, 200) */
        {100000, 0, 100000000, 37500000, 300}, /* RFC 6298 would say 250 here */
        {100000, 1, 100000000, 28125000, 300}, /* steady: SRTT + rto_min, however long it lasts */
        {400000, 1, 137500000, 96093750, 522}, /* a jump: rttvar = the round's largest 4 x mdev */
        {100000, 0, 132812500, 81445500, 518},
        {100000, 1, 128711000, 69287250, 499}, /* new rounds: rttvar decays a quarter of its excess each */
        {100000, 1, 125122125, 59143250, 462},
        {100000, 1, 121981875, 50638000, 425},
        {60000, 1, 114234250, 50992250, 393}, /* below SRTT: mdev grows by 1/32 of the excess, not 1/4 */
    };
    struct brisk_rtt r, rfc;
    brisk_rtt_init(&r, 1 * S, 200 * MS, 120 * S);
    brisk_rtt_init(&rfc, 1 * S, 200 * MS, 120 * S);
    brisk_rtt_use_linux(&r);
    uint32_t round_end = 0, nxt = 1000;
    uint64_t now = 10 * S;
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        /* snd_una reaches the round's end exactly (same round) or passes it (a new one); more is sent. */
        uint32_t una = steps[i].new_round ? round_end + 1 : round_end;
        if (i == 0 || steps[i].new_round)
            round_end = nxt;
        now += steps[i].rtt_us * US;
        brisk_rtt_sample_ack(&r, steps[i].rtt_us * US, steps[i].rtt_us * US, now, 4, una, nxt);
        brisk_rtt_sample_ack(&rfc, steps[i].rtt_us * US, steps[i].rtt_us * US, now, 1, una, nxt);
        nxt += 10000;
        assert_int_equal(brisk_rtt_srtt(&r), steps[i].srtt_ns);
        assert_int_equal(brisk_rtt_rttvar(&r), steps[i].mdev_ns);
        assert_int_equal(r.rto, steps[i].rto_ms * MS);
        assert_int_equal(brisk_rtt_min(&r), i < 8 ? 100 * MS : 60 * MS);
        if (i == 1)
            assert_int_equal(rfc.rto, 250 * MS); /* RFC 6298: 100 + 4 x 37.5 ms, 50 ms before Linux */
    }
    assert_int_equal(r.rttvar_us, 278219);

    /* The RTO is rounded up to whole milliseconds (jiffies), the sample truncated to microseconds. */
    brisk_rtt_init(&r, 1 * S, 200 * MS, 120 * S);
    brisk_rtt_use_linux(&r);
    brisk_rtt_sample_ack(&r, 33333 * US + 999, 33333 * US, 1 * S, 1, 1, 1);
    assert_int_equal(brisk_rtt_srtt(&r), 33333 * US);
    assert_int_equal(r.rto, 234 * MS); /* 33.333 + 200 ms, rounded up */
    /* A long RTT: the first sample's 3 R, capped at rto_max. */
    brisk_rtt_init(&r, 1 * S, 200 * MS, 1 * S);
    brisk_rtt_use_linux(&r);
    brisk_rtt_sample(&r, 400 * MS, 1 * S);
    assert_int_equal(r.rto, 1 * S);
    assert_int_equal(r.backoff, 0);
}

static void test_min_rtt_window_expiry(void **state)
{
    (void)state;
    struct brisk_rtt r;
    brisk_rtt_init(&r, 1 * S, 0, 120 * S);
    r.min_rtt_win = 10 * S;
    brisk_rtt_sample(&r, 10 * MS, 0);
    for (uint64_t t = 1; t <= 10; t++) {
        brisk_rtt_sample(&r, 20 * MS + t, t * S);
        assert_int_equal(brisk_rtt_min(&r), 10 * MS); /* still inside the window (age <= win) */
    }
    /* At 11 s the 10 ms sample is older than the window: the best of the later ones takes over. It must be a
     * sample from within the window, and no smaller than any of them. */
    brisk_rtt_sample(&r, 20 * MS + 11, 11 * S);
    assert_true(brisk_rtt_min(&r) >= 20 * MS + 1 && brisk_rtt_min(&r) <= 20 * MS + 11);
    /* The quarter-window refresh kept a second choice from after 2.5 s: at most the 3 s sample. */
    assert_true(brisk_rtt_min(&r) <= 20 * MS + 3);

    /* A new minimum takes over at once. */
    brisk_rtt_sample(&r, 15 * MS, 12 * S);
    assert_int_equal(brisk_rtt_min(&r), 15 * MS);

    /* A sample after a gap longer than the window restarts the filter, even if it is larger. */
    brisk_rtt_sample(&r, 90 * MS, 40 * S);
    assert_int_equal(brisk_rtt_min(&r), 90 * MS);

    /* Rising samples with the window sliding: the minimum follows them up, one window behind. */
    brisk_rtt_init(&r, 1 * S, 0, 120 * S);
    r.min_rtt_win = 4 * S;
    for (uint64_t t = 0; t <= 40; t++) {
        brisk_rtt_sample(&r, (100 + t) * MS, t * S);
        uint64_t lo = t >= 4 ? (100 + t - 4) * MS : 100 * MS, hi = (100 + t) * MS;
        if (brisk_rtt_min(&r) < lo || brisk_rtt_min(&r) > hi)
            fail_msg("t=%" PRIu64 " s: min_rtt %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]", t,
                     brisk_rtt_min(&r), lo, hi);
    }
}

static void test_min_rtt_zero_window(void **state)
{
    (void)state;
    struct brisk_rtt r;
    brisk_rtt_init(&r, 1 * S, 0, 120 * S);
    r.min_rtt_win = 0; /* degenerate: the minimum is the latest sample */
    brisk_rtt_sample(&r, 10 * MS, 0);
    brisk_rtt_sample(&r, 30 * MS, 1);
    assert_int_equal(brisk_rtt_min(&r), 30 * MS);
    brisk_rtt_sample(&r, 20 * MS, 2);
    assert_int_equal(brisk_rtt_min(&r), 20 * MS);
}

#define HIST 4096

static void test_min_rtt_random_vs_brute_force(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(6298) ^ 0x9e3779b9;
    struct brisk_rand g;
    brisk_rand_seed(&g, seed);
    static uint64_t ht[HIST], hv[HIST];
    uint64_t exact = 0, total = 0;
    for (int run = 0; run < 60; run++) {
        struct brisk_rtt r;
        brisk_rtt_init(&r, 1 * S, 0, 120 * S);
        r.min_rtt_win = (1 + brisk_rand_below(&g, 20)) * S;
        uint64_t now = brisk_rand_below(&g, 1000 * S);
        uint64_t base = 1 * MS + brisk_rand_below(&g, 100 * MS);
        for (int i = 0; i < HIST; i++) {
            /* Gaps from 1 ms to a quarter window, now and then a longer pause; a drifting base. */
            now += brisk_rand_chance(&g, 0.01) ? brisk_rand_below(&g, 2 * r.min_rtt_win)
                                               : 1 * MS + brisk_rand_below(&g, r.min_rtt_win / 4);
            if (brisk_rand_chance(&g, 0.02))
                base = 1 * MS + brisk_rand_below(&g, 100 * MS);
            uint64_t rtt = base + brisk_rand_below(&g, base / 2 + 1);
            brisk_rtt_sample(&r, rtt, now);
            ht[i] = now;
            hv[i] = rtt;
            /* Brute force: the minimum over samples with now - t <= win, and whether min_rtt is one of them.
             */
            uint64_t best = UINT64_MAX;
            int found = 0;
            for (int j = i; j >= 0 && now - ht[j] <= r.min_rtt_win; j--) {
                best = hv[j] < best ? hv[j] : best;
                found |= hv[j] == brisk_rtt_min(&r);
            }
            if (brisk_rtt_min(&r) < best || !found || (rtt <= best && brisk_rtt_min(&r) != rtt))
                fail_msg("seed %" PRIu64 " run %d sample %d: min_rtt %" PRIu64 ", window minimum %" PRIu64
                         ", found %d",
                         seed, run, i, brisk_rtt_min(&r), best, found);
            exact += brisk_rtt_min(&r) == best;
            total++;
        }
    }
    /* Not a contract, but the filter is useless if it is rarely right: in this mix it nearly always is. */
    print_message("min filter (seed %" PRIu64 "): exact %" PRIu64 " of %" PRIu64 "\n", seed, exact, total);
    assert_true(exact * 10 >= total * 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initial_state),
        cmocka_unit_test(test_init_clamps),
        cmocka_unit_test(test_first_sample),
        cmocka_unit_test(test_second_sample_exact),
        cmocka_unit_test(test_sample_n_gains),
        cmocka_unit_test(test_expected_samples),
        cmocka_unit_test(test_random_vs_float_reference),
        cmocka_unit_test(test_steady_path_converges_exactly),
        cmocka_unit_test(test_clamping),
        cmocka_unit_test(test_backoff_doubles_and_saturates),
        cmocka_unit_test(test_syn_timeout_fallback),
        cmocka_unit_test(test_linux_estimator),
        cmocka_unit_test(test_min_rtt_window_expiry),
        cmocka_unit_test(test_min_rtt_zero_window),
        cmocka_unit_test(test_min_rtt_random_vs_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
