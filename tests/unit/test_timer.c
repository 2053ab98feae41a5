/*
 * test_timer.c — the hierarchical timer wheel against its contract and against a reference priority queue.
 *
 * The directed cases pin down each rule of timer.h (exact expiry, order of equal expiries, callbacks that
 * re-arm / arm in the past / cancel due timers, next() exact vs. lower bound, extreme times). The randomized
 * test runs over a million operations on the wheel and, in lockstep, on a binary heap keyed by
 * (expires, arm sequence): every callback checks that the heap's minimum is the timer firing and that the
 * `now` it sees is right, after every advance nothing due may remain, and the armed counts must agree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timer.h"
#include "support/testutil.h"

#define US BRISK_NSEC_PER_USEC
#define MS BRISK_NSEC_PER_MSEC
#define S  BRISK_NSEC_PER_SEC

/* ---------------------------------------------------------------------------------------------------------
 * Directed tests: a small recorder of fires.
 * ------------------------------------------------------------------------------------------------------- */
#define LOG_MAX 4096

struct rec {
    struct brisk_timer_wheel w;
    int ids[LOG_MAX];       /* fired timer ids in order */
    uint64_t nows[LOG_MAX]; /* `now` each callback saw */
    uint64_t exps[LOG_MAX]; /* expiry of each fired timer */
    size_t n;
};

struct tt {
    struct brisk_timer t; /* first member: the callback casts back */
    struct rec *r;
    int id;
    /* Optional behaviour on fire. */
    uint64_t period; /* re-arm self at expires + period while remaining > 0 */
    int remaining;
    struct tt *arm_other;    /* arm this one ... */
    uint64_t arm_other_at;   /* ... for this expiry */
    struct tt *cancel_other; /* cancel this one */
    int nested_advance;      /* call brisk_timer_advance from the callback */
    uint64_t nested_ret;
};

static void rec_fn(struct brisk_timer *t, void *arg, uint64_t now)
{
    struct tt *x = arg;
    struct rec *r = x->r;
    assert_ptr_equal(&x->t, t);
    assert_false(brisk_timer_armed(t)); /* disarmed before the callback runs */
    assert_true(r->n < LOG_MAX);
    r->ids[r->n] = x->id;
    r->nows[r->n] = now;
    r->exps[r->n] = t->expires;
    r->n++;
    if (x->period && x->remaining > 0) {
        x->remaining--;
        brisk_timer_arm(&r->w, t, t->expires + x->period);
    }
    if (x->arm_other) {
        brisk_timer_arm(&r->w, &x->arm_other->t, x->arm_other_at);
        x->arm_other = NULL;
    }
    if (x->cancel_other) {
        brisk_timer_cancel(&r->w, &x->cancel_other->t);
        x->cancel_other = NULL;
    }
    if (x->nested_advance)
        x->nested_ret = brisk_timer_advance(&r->w, now + S);
}

static void tt_init(struct tt *x, struct rec *r, int id)
{
    memset(x, 0, sizeof(*x));
    x->r = r;
    x->id = id;
    brisk_timer_init(&x->t, rec_fn, x);
}

static struct rec *rec_new(uint64_t now)
{
    struct rec *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    brisk_timer_wheel_init(&r->w, now);
    return r;
}

static void test_empty_wheel(void **state)
{
    (void)state;
    struct rec *r = rec_new(12345);
    assert_int_equal(brisk_timer_count(&r->w), 0);
    assert_true(brisk_timer_next(&r->w) == BRISK_TIME_NONE);
    assert_int_equal(brisk_timer_advance(&r->w, 10 * S), 0);
    assert_true(brisk_timer_wheel_now(&r->w) == 10 * S);
    assert_int_equal(brisk_timer_wheel_check(&r->w), 0);
    struct tt a;
    tt_init(&a, r, 1);
    assert_false(brisk_timer_armed(&a.t));
    brisk_timer_cancel(&r->w, &a.t); /* no-op when not armed */
    assert_int_equal(r->w.stats.cancels, 0);
    assert_int_equal(r->w.stats.arms, 0);
    free(r);
}

static void test_fires_exactly_at_expiry(void **state)
{
    (void)state;
    struct rec *r = rec_new(1000);
    struct tt a;
    tt_init(&a, r, 1);
    brisk_timer_arm(&r->w, &a.t, 5000);
    assert_true(brisk_timer_armed(&a.t));
    assert_int_equal(brisk_timer_count(&r->w), 1);
    assert_int_equal(brisk_timer_next(&r->w), 5000);
    assert_int_equal(brisk_timer_advance(&r->w, 4999), 0);
    assert_int_equal(r->n, 0);
    assert_int_equal(brisk_timer_next(&r->w), 5000);
    assert_int_equal(brisk_timer_advance(&r->w, 5000), 1);
    assert_int_equal(r->n, 1);
    assert_int_equal(r->nows[0], 5000);
    assert_false(brisk_timer_armed(&a.t));
    assert_int_equal(brisk_timer_count(&r->w), 0);
    assert_int_equal(brisk_timer_advance(&r->w, 1 * S), 0); /* not twice */
    assert_int_equal(r->n, 1);
    /* A later `now` is what the callback sees, not the expiry. */
    brisk_timer_arm(&r->w, &a.t, 2 * S);
    assert_int_equal(brisk_timer_advance(&r->w, 3 * S), 1);
    assert_int_equal(r->nows[1], 3 * S);
    assert_int_equal(r->exps[1], 2 * S);
    assert_int_equal(r->w.stats.arms, 2);
    assert_int_equal(r->w.stats.fires, 2);
    assert_int_equal(r->w.stats.cancels, 0);
    free(r);
}

static void test_cancel(void **state)
{
    (void)state;
    struct rec *r = rec_new(0);
    struct tt a, b;
    tt_init(&a, r, 1);
    tt_init(&b, r, 2);
    brisk_timer_arm(&r->w, &a.t, 10 * US);
    brisk_timer_arm(&r->w, &b.t, 20 * S);
    brisk_timer_cancel(&r->w, &a.t);
    assert_false(brisk_timer_armed(&a.t));
    assert_int_equal(brisk_timer_count(&r->w), 1);
    brisk_timer_cancel(&r->w, &a.t); /* second cancel: not counted */
    assert_int_equal(r->w.stats.cancels, 1);
    assert_true(brisk_timer_next(&r->w) > 10 * US);
    assert_int_equal(brisk_timer_advance(&r->w, 19 * S), 0);
    brisk_timer_cancel(&r->w, &b.t);
    assert_int_equal(brisk_timer_count(&r->w), 0);
    assert_true(brisk_timer_next(&r->w) == BRISK_TIME_NONE);
    assert_int_equal(brisk_timer_advance(&r->w, 100 * S), 0);
    assert_int_equal(r->n, 0);
    assert_int_equal(r->w.stats.cancels, 2);
    assert_int_equal(brisk_timer_wheel_check(&r->w), 0);
    free(r);
}

static void test_rearm_earlier_and_later(void **state)
{
    (void)state;
    struct rec *r = rec_new(0);
    struct tt a, b;
    tt_init(&a, r, 1);
    tt_init(&b, r, 2);
    brisk_timer_arm(&r->w, &a.t, 1 * S);
    brisk_timer_arm(&r->w, &b.t, 500 * MS);
    brisk_timer_arm(&r->w, &a.t, 100 * MS); /* earlier */
    assert_int_equal(brisk_timer_count(&r->w), 2);
    assert_int_equal(brisk_timer_advance(&r->w, 100 * MS - 1), 0);
    assert_int_equal(brisk_timer_advance(&r->w, 100 * MS), 1);
    assert_int_equal(r->ids[0], 1);
    brisk_timer_arm(&r->w, &b.t, 900 * MS); /* later */
    assert_int_equal(brisk_timer_advance(&r->w, 899 * MS), 0);
    assert_int_equal(brisk_timer_advance(&r->w, 2 * S), 1);
    assert_int_equal(r->ids[1], 2);
    assert_int_equal(r->nows[1], 2 * S);
    assert_int_equal(r->exps[1], 900 * MS);
    assert_int_equal(r->w.stats.arms, 4);
    assert_int_equal(r->w.stats.cancels, 0); /* a re-arm is not a cancel */
    free(r);
}

/* Arming for the wheel's time or before fires at the next advance, even one with a smaller `now`; the
 * callback sees the wheel's time. */
static void test_expiry_at_or_before_now(void **state)
{
    (void)state;
    struct rec *r = rec_new(0);
    struct tt a, b, c;
    tt_init(&a, r, 1);
    tt_init(&b, r, 2);
    tt_init(&c, r, 3);
    assert_int_equal(brisk_timer_advance(&r->w, 7 * MS + 123), 0);
    brisk_timer_arm(&r->w, &a.t, 7 * MS + 123); /* exactly now */
    brisk_timer_arm(&r->w, &b.t, 5);            /* long ago */
    brisk_timer_arm(&r->w, &c.t, 7 * MS + 100); /* same tick, earlier */
    assert_int_equal(brisk_timer_next(&r->w), 5);
    assert_int_equal(brisk_timer_wheel_check(&r->w), 0);
    assert_int_equal(brisk_timer_advance(&r->w, 1), 3); /* time does not go backwards */
    assert_int_equal(r->ids[0], 2);
    assert_int_equal(r->ids[1], 3);
    assert_int_equal(r->ids[2], 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal(r->nows[i], 7 * MS + 123);
    assert_int_equal(brisk_timer_wheel_now(&r->w), 7 * MS + 123);
    free(r);
}

static void test_time_zero(void **state)
{
    (void)state;
    struct rec *r = rec_new(0);
    struct tt a, b;
    tt_init(&a, r, 1);
    tt_init(&b, r, 2);
    brisk_timer_arm(&r->w, &b.t, 1);
    brisk_timer_arm(&r->w, &a.t, 0);
    assert_int_equal(brisk_timer_next(&r->w), 0);
    assert_int_equal(brisk_timer_advance(&r->w, 0), 1);
    assert_int_equal(r->ids[0], 1);
    assert_int_equal(r->nows[0], 0);
    assert_int_equal(brisk_timer_next(&r->w), 1);
    assert_int_equal(brisk_timer_advance(&r->w, 1), 1);
    assert_int_equal(r->ids[1], 2);
    free(r);
}

/* Steps a wheel through brisk_timer_next() until something fires; checks the lower-bound rules on the way and
 * returns the number of advance calls it took. */
static int step_until_fire(struct rec *r, uint64_t expect_exp)
{
    size_t before = r->n;
    uint64_t prev = 0;
    int steps = 0;
    while (r->n == before) {
        uint64_t nx = brisk_timer_next(&r->w);
        assert_true(nx <= expect_exp);
        assert_true(steps == 0 || nx > prev); /* a lower bound always moves on */
        prev = nx;
        brisk_timer_advance(&r->w, nx);
        steps++;
        assert_true(steps <= BRISK_TIMER_LEVELS + 1);
    }
    assert_int_equal(r->exps[r->n - 1], expect_exp);
    assert_int_equal(r->nows[r->n - 1], expect_exp); /* woken exactly on time */
    return steps;
}

static void test_far_future(void **state)
{
    (void)state;
    const uint64_t exps[] = {10 * S, 3600 * S, UINT64_C(1) << 62, (UINT64_C(1) << 62) + 1,
                             0x7123456789abcdefull};
    for (size_t i = 0; i < sizeof(exps) / sizeof(exps[0]); i++) {
        struct rec *r = rec_new(1);
        struct tt a;
        tt_init(&a, r, (int)i);
        brisk_timer_arm(&r->w, &a.t, exps[i]);
        assert_true(brisk_timer_next(&r->w) <= exps[i]);
        assert_int_equal(brisk_timer_advance(&r->w, exps[i] - 1), 0);
        assert_int_equal(brisk_timer_advance(&r->w, exps[i]), 1);
        assert_int_equal(r->nows[0], exps[i]);
        /* Cascaded at most once per level it passed through. */
        assert_true(r->w.stats.cascades <= BRISK_TIMER_LEVELS - 1);
        free(r);

        r = rec_new(1);
        tt_init(&a, r, (int)i);
        brisk_timer_arm(&r->w, &a.t, exps[i]);
        step_until_fire(r, exps[i]);
        free(r);
    }
}

static void test_near_uint64_max(void **state)
{
    (void)state;
    const uint64_t base = UINT64_MAX - (UINT64_C(1) << 40);
    struct rec *r = rec_new(base);
    struct tt a, b, c;
    tt_init(&a, r, 1);
    tt_init(&b, r, 2);
    tt_init(&c, r, 3);
    brisk_timer_arm(&r->w, &b.t, UINT64_MAX);
    brisk_timer_arm(&r->w, &a.t, UINT64_MAX - 1);
    brisk_timer_arm(&r->w, &c.t, UINT64_MAX - 1);
    assert_true(brisk_timer_next(&r->w) <= UINT64_MAX - 1);
    assert_int_equal(brisk_timer_advance(&r->w, UINT64_MAX - 2), 0);
    assert_int_equal(brisk_timer_next(&r->w), UINT64_MAX - 1);
    assert_int_equal(brisk_timer_advance(&r->w, UINT64_MAX - 1), 2);
    assert_int_equal(r->ids[0], 1);
    assert_int_equal(r->ids[1], 3);
    assert_int_equal(brisk_timer_count(&r->w), 1);
    assert_int_equal(brisk_timer_advance(&r->w, UINT64_MAX), 1);
    assert_int_equal(r->ids[2], 2);
    assert_int_equal(r->nows[2], UINT64_MAX);
    assert_int_equal(brisk_timer_count(&r->w), 0);
    /* The clock stays at the end; arming there still works. */
    brisk_timer_arm(&r->w, &a.t, UINT64_MAX - 1);
    assert_int_equal(brisk_timer_advance(&r->w, UINT64_MAX), 1);
    free(r);

    r = rec_new(base);
    tt_init(&a, r, 1);
    brisk_timer_arm(&r->w, &a.t, UINT64_MAX - 1);
    step_until_fire(r, UINT64_MAX - 1);
    free(r);
}

/* Many timers at the same ns fire in arm order, whether armed in the finest level or cascaded down from far
 * away, and a re-arm moves a timer to the back of its tie. */
static void test_same_expiry_fires_in_arm_order(void **state)
{
    (void)state;
    enum { N = 1000 };
    static const uint64_t deltas[] = {0, 300, 50 * US, 70 * MS, 90 * S};
    for (size_t d = 0; d < sizeof(deltas) / sizeof(deltas[0]); d++) {
        struct rec *r = rec_new(S);
        struct tt *x = calloc(N, sizeof(*x));
        int *order = malloc(N * sizeof(int));
        assert_non_null(x);
        assert_non_null(order);
        uint64_t seed = 0x1234 + d;
        for (int i = 0; i < N; i++) {
            tt_init(&x[i], r, i);
            order[i] = i;
        }
        for (int i = N - 1; i > 0; i--) { /* shuffle the arm order */
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            int j = (int)((seed >> 33) % (uint64_t)(i + 1));
            int tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
        }
        uint64_t when = S + deltas[d];
        for (int i = 0; i < N; i++)
            brisk_timer_arm(&r->w, &x[order[i]].t, when);
        /* Re-arm the first-armed one: it must now fire last. */
        brisk_timer_arm(&r->w, &x[order[0]].t, when);
        assert_int_equal(brisk_timer_wheel_check(&r->w), 0);
        assert_int_equal(brisk_timer_advance(&r->w, when), N);
        for (int i = 1; i < N; i++)
            assert_int_equal(r->ids[i - 1], order[i]);
        assert_int_equal(r->ids[N - 1], order[0]);
        free(order);
        free(x);
        free(r);
    }
}

/* Timers a few ns apart inside one microsecond, armed in descending order, far enough away to cascade. */
static void test_same_tick_out_of_order(void **state)
{
    (void)state;
    enum { N = 200 };
    struct rec *r = rec_new(0);
    struct tt x[N];
    for (int i = 0; i < N; i++) {
        tt_init(&x[i], r, i);
        brisk_timer_arm(&r->w, &x[i].t, 5 * S + 1000 - (uint64_t)i * 5);
    }
    assert_int_equal(brisk_timer_advance(&r->w, 5 * S + 1000), N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(r->ids[i], N - 1 - i);
        assert_true(i == 0 || r->exps[i] > r->exps[i - 1]);
    }
    free(r);
}

static void test_callback_rearms_itself(void **state)
{
    (void)state;
    struct rec *r = rec_new(0);
    struct tt a, b;
    tt_init(&a, r, 1);
    tt_init(&b, r, 2);
    a.period = 3 * MS;
    a.remaining = 1000000;
    brisk_timer_arm(&r->w, &a.t, 1 * MS);
    brisk_timer_arm(&r->w, &b.t, 7 * MS);
    /* a fires at 1, 4, 7, 10 ms; at 7 ms b goes first: it was armed before a re-armed itself for 7 ms. */
    assert_int_equal(brisk_timer_advance(&r->w, 10 * MS), 5);
    const int ids[] = {1, 1, 2, 1, 1};
    const uint64_t exps[] = {1 * MS, 4 * MS, 7 * MS, 7 * MS, 10 * MS};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(r->ids[i], ids[i]);
        assert_int_equal(r->exps[i], exps[i]);
        assert_int_equal(r->nows[i], 10 * MS);
    }
    assert_true(brisk_timer_armed(&a.t));
    assert_true(brisk_timer_next(&r->w) <= 13 * MS); /* another 65.536 µs block: a lower bound */
    assert_true(brisk_timer_next(&r->w) > 10 * MS);
    /* A long jump runs the periodic timer once per period, each at its own expiry order. */
    r->n = 0;
    assert_int_equal(brisk_timer_advance(&r->w, 10 * MS + 3 * MS * 1000), 1000);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(r->exps[i], 13 * MS + 3 * MS * (uint64_t)i);
    free(r);
}

/* A callback arms timers in the past (before and after its own expiry): they fire in the same advance, in
 * (expires, seq) order among the timers still due. */
static void test_callback_arms_in_the_past(void **state)
{
    (void)state;
    struct rec *r = rec_new(0);
    struct tt a, b, c, d, e;
    tt_init(&a, r, 'A');
    tt_init(&b, r, 'B');
    tt_init(&c, r, 'C');
    tt_init(&d, r, 'D');
    tt_init(&e, r, 'E');
    brisk_timer_arm(&r->w, &a.t, 1000);
    brisk_timer_arm(&r->w, &b.t, 3000);
    brisk_timer_arm(&r->w, &c.t, 5 * MS);
    a.arm_other = &d;
    a.arm_other_at = 2000; /* after A, before B */
    d.arm_other = &e;
    d.arm_other_at = 500; /* before everything that is left */
    assert_int_equal(brisk_timer_advance(&r->w, 10 * MS), 5);
    const int want[] = {'A', 'D', 'E', 'B', 'C'};
    for (int i = 0; i < 5; i++)
        assert_int_equal(r->ids[i], want[i]);
    assert_int_equal(brisk_timer_count(&r->w), 0);

    /* Arming for exactly `now` from a callback also fires now; for now + 1 it does not. */
    r->n = 0;
    brisk_timer_arm(&r->w, &a.t, 20 * MS);
    a.arm_other = &b;
    a.arm_other_at = 30 * MS;
    b.arm_other = &c;
    b.arm_other_at = 30 * MS + 1;
    assert_int_equal(brisk_timer_advance(&r->w, 30 * MS), 2);
    assert_true(brisk_timer_armed(&c.t));
    assert_int_equal(brisk_timer_next(&r->w), 30 * MS + 1);
    free(r);
}

static void test_callback_cancels_due_timer(void **state)
{
    (void)state;
    struct rec *r = rec_new(0);
    struct tt a, b, c;
    tt_init(&a, r, 1);
    tt_init(&b, r, 2);
    tt_init(&c, r, 3);
    brisk_timer_arm(&r->w, &a.t, 100);
    brisk_timer_arm(&r->w, &b.t, 100); /* same ns, after a */
    brisk_timer_arm(&r->w, &c.t, 2 * MS);
    a.cancel_other = &b;
    assert_int_equal(brisk_timer_advance(&r->w, 5 * MS), 2);
    assert_int_equal(r->ids[0], 1);
    assert_int_equal(r->ids[1], 3);
    assert_false(brisk_timer_armed(&b.t));
    assert_int_equal(r->w.stats.cancels, 1);

    /* A callback re-arms a due timer beyond `now`: it leaves this advance. */
    r->n = 0;
    brisk_timer_arm(&r->w, &a.t, 6 * MS);
    brisk_timer_arm(&r->w, &b.t, 7 * MS);
    a.arm_other = &b;
    a.arm_other_at = 20 * MS;
    assert_int_equal(brisk_timer_advance(&r->w, 10 * MS), 1);
    assert_true(brisk_timer_armed(&b.t));
    assert_int_equal(brisk_timer_advance(&r->w, 20 * MS), 1);
    assert_int_equal(r->ids[1], 2);
    free(r);
}

static void test_nested_advance_is_refused(void **state)
{
    (void)state;
    struct rec *r = rec_new(0);
    struct tt a, b;
    tt_init(&a, r, 1);
    tt_init(&b, r, 2);
    a.nested_advance = 1;
    a.nested_ret = 99;
    brisk_timer_arm(&r->w, &a.t, 10);
    brisk_timer_arm(&r->w, &b.t, 2 * S);
    assert_int_equal(brisk_timer_advance(&r->w, 10), 1);
    assert_int_equal(a.nested_ret, 0);
    assert_true(brisk_timer_armed(&b.t));
    assert_int_equal(brisk_timer_wheel_now(&r->w), 10);
    free(r);
}

/* next(): exact for anything in the finest level, a lower bound otherwise. */
static void test_next_exact_and_lower_bound(void **state)
{
    (void)state;
    const uint64_t base = 1 * S; /* 1e9 ns = tick 976562, digit0 = 18: mid-block */
    struct rec *r = rec_new(base);
    struct tt a, b;
    tt_init(&a, r, 1);
    tt_init(&b, r, 2);
    /* Same 65.536 µs block: exact. */
    uint64_t block_end = ((base >> 16) + 1) << 16;
    brisk_timer_arm(&r->w, &a.t, block_end - 1);
    assert_int_equal(brisk_timer_next(&r->w), block_end - 1);
    brisk_timer_arm(&r->w, &a.t, base + 1);
    assert_int_equal(brisk_timer_next(&r->w), base + 1);
    /* Next block: a lower bound (the block start), then exact after advancing to it. */
    brisk_timer_arm(&r->w, &a.t, block_end + 5000);
    uint64_t nx = brisk_timer_next(&r->w);
    assert_true(nx <= block_end + 5000);
    assert_true(nx > base);
    assert_int_equal(brisk_timer_advance(&r->w, nx), 0);
    assert_int_equal(brisk_timer_next(&r->w), block_end + 5000);
    /* The earliest of several wins, and the bound never passes it. */
    brisk_timer_arm(&r->w, &b.t, block_end + 4999);
    assert_int_equal(brisk_timer_next(&r->w), block_end + 4999);
    brisk_timer_cancel(&r->w, &b.t);
    assert_int_equal(brisk_timer_next(&r->w), block_end + 5000);
    brisk_timer_cancel(&r->w, &a.t);
    assert_true(brisk_timer_next(&r->w) == BRISK_TIME_NONE);

    /* Far ones: stepping from bound to bound reaches the expiry in at most one step per level. */
    const uint64_t far[] = {base + 70 * US, base + 200 * MS, base + 3 * S, base + 86400 * S};
    for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
        brisk_timer_arm(&r->w, &a.t, far[i]);
        int steps = step_until_fire(r, far[i]);
        assert_true(steps >= 1);
        brisk_timer_arm(&r->w, &a.t, brisk_timer_wheel_now(&r->w) + 10 * US);
        assert_true(brisk_timer_next(&r->w) <= brisk_timer_wheel_now(&r->w) + 10 * US);
        brisk_timer_cancel(&r->w, &a.t);
    }
    free(r);
}

/* Jumping over a long idle gap only touches occupied slots: cascades stay bounded by timers x levels. */
static void test_cascades_are_bounded(void **state)
{
    (void)state;
    enum { N = 2000 };
    struct rec *r = rec_new(0);
    struct tt *x = calloc(N, sizeof(*x));
    assert_non_null(x);
    uint64_t s = 77;
    for (int i = 0; i < N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        tt_init(&x[i], r, i);
        brisk_timer_arm(&r->w, &x[i].t, (s >> 20) % (600 * S));
    }
    uint64_t t = 0;
    uint64_t fired = 0;
    while (t < 600 * S) {
        t += 10 * S;
        fired += brisk_timer_advance(&r->w, t);
        assert_int_equal(brisk_timer_wheel_check(&r->w), 0);
    }
    assert_int_equal(fired, N);
    assert_true(r->w.stats.cascades <= (uint64_t)N * (BRISK_TIMER_LEVELS - 1));
    for (size_t i = 1; i < r->n; i++)
        assert_true(r->exps[i] >= r->exps[i - 1]);
    free(x);
    free(r);
}

/* ---------------------------------------------------------------------------------------------------------
 * Randomized: the wheel against a binary heap, step by step.
 * ------------------------------------------------------------------------------------------------------- */
#define RT_N 1024

struct rt {
    struct brisk_timer t; /* first member */
    struct world *W;
    int id;
    int pos;      /* heap index, -1 when not armed in the reference */
    uint64_t exp; /* reference key */
    uint64_t seq;
};

struct world {
    struct brisk_timer_wheel w;
    struct rt tm[RT_N];
    int heap[RT_N];
    int hn;
    uint64_t seq;     /* mirrors the wheel's arm sequence */
    uint64_t rng;     /* splitmix64 state (local: this test does not depend on rand.c) */
    uint64_t now;     /* the wheel's time as the test understands it */
    uint64_t adv_now; /* the `now` callbacks must see during an advance */
    int in_advance;
    int past_budget; /* bounds callbacks arming <= now, so an advance always ends */
    uint64_t fires_this_advance;
    uint64_t arms, cancels, fires;
    uint64_t seed, op;
    uint64_t fire_hash; /* FNV of (id, now) of every fire: printed, and equal for equal seeds */
};

#define WCHECK(W, c)                                                                                         \
    do {                                                                                                     \
        if (!(c))                                                                                            \
            fail_msg("%s:%d: %s (seed %" PRIu64 ", op %" PRIu64 ", now %" PRIu64 ")", __FILE__, __LINE__,    \
                     #c, (W)->seed, (W)->op, (W)->now);                                                      \
    } while (0)

static uint64_t rnd(struct world *W)
{
    uint64_t z = (W->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rnd_below(struct world *W, uint64_t n) /* slight bias is irrelevant here */
{
    return n ? rnd(W) % n : 0;
}

static int key_less(const struct world *W, int a, int b)
{
    const struct rt *x = &W->tm[a], *y = &W->tm[b];
    return x->exp < y->exp || (x->exp == y->exp && x->seq < y->seq);
}

static void heap_swap(struct world *W, int i, int j)
{
    int a = W->heap[i], b = W->heap[j];
    W->heap[i] = b;
    W->heap[j] = a;
    W->tm[b].pos = i;
    W->tm[a].pos = j;
}

static void heap_up(struct world *W, int i)
{
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!key_less(W, W->heap[i], W->heap[p]))
            break;
        heap_swap(W, i, p);
        i = p;
    }
}

static void heap_down(struct world *W, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < W->hn && key_less(W, W->heap[l], W->heap[m]))
            m = l;
        if (r < W->hn && key_less(W, W->heap[r], W->heap[m]))
            m = r;
        if (m == i)
            return;
        heap_swap(W, i, m);
        i = m;
    }
}

static void heap_remove(struct world *W, int id)
{
    int i = W->tm[id].pos;
    W->tm[id].pos = -1;
    W->hn--;
    if (i == W->hn)
        return;
    W->heap[i] = W->heap[W->hn];
    W->tm[W->heap[i]].pos = i;
    heap_up(W, i);
    heap_down(W, W->tm[W->heap[i]].pos);
}

static void heap_push(struct world *W, int id)
{
    int i = W->hn++;
    W->heap[i] = id;
    W->tm[id].pos = i;
    heap_up(W, i);
}

static void do_arm(struct world *W, int id, uint64_t exp)
{
    struct rt *x = &W->tm[id];
    if (x->pos >= 0)
        heap_remove(W, id);
    x->exp = exp;
    x->seq = W->seq++;
    heap_push(W, id);
    brisk_timer_arm(&W->w, &x->t, exp);
    W->arms++;
    WCHECK(W, brisk_timer_armed(&x->t));
}

static void do_cancel(struct world *W, int id)
{
    struct rt *x = &W->tm[id];
    WCHECK(W, (x->pos >= 0) == (brisk_timer_armed(&x->t) != 0));
    if (x->pos >= 0) {
        heap_remove(W, id);
        W->cancels++;
    }
    brisk_timer_cancel(&W->w, &x->t);
    WCHECK(W, !brisk_timer_armed(&x->t));
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* An expiry relative to `now` from a mix of scales: same tick, microseconds, RTO-like, minutes, far, past. */
static uint64_t pick_expiry(struct world *W, uint64_t now, int allow_past)
{
    uint64_t k = rnd_below(W, 100);
    if (k < 35)
        return sat_add(now, rnd_below(W, UINT64_C(1) << rnd_below(W, 21)));
    if (k < 65)
        return sat_add(now, rnd_below(W, UINT64_C(1) << (20 + rnd_below(W, 18))));
    if (k < 75)
        return sat_add(now, rnd_below(W, UINT64_C(1) << (38 + rnd_below(W, 26))));
    if (k < 82)
        return sat_add(now, 1 + rnd_below(W, 3));
    if (!allow_past)
        return sat_add(now, 1 + rnd_below(W, UINT64_C(1) << 16));
    if (k < 92) {
        uint64_t back = rnd_below(W, UINT64_C(1) << rnd_below(W, 24));
        return now > back ? now - back : 0;
    }
    if (k < 97)
        return now;
    return rnd(W); /* anywhere */
}

/* Arms from a callback; an expiry <= now fires within the same advance, so those are budgeted per advance to
 * keep every advance finite (the budget is part of the deterministic script, the same for both sides). */
static void arm_from_callback(struct world *W, int id, uint64_t e, uint64_t now)
{
    if (e <= now) {
        if (W->past_budget <= 0)
            return;
        W->past_budget--;
    }
    do_arm(W, id, e);
}

static void rt_fn(struct brisk_timer *t, void *arg, uint64_t now)
{
    struct rt *x = arg;
    struct world *W = x->W;
    WCHECK(W, (void *)t == (void *)x);
    WCHECK(W, W->in_advance);
    WCHECK(W, now == W->adv_now);
    WCHECK(W, W->hn > 0 && W->heap[0] == x->id); /* the reference's minimum is the one firing */
    WCHECK(W, x->exp <= now);
    WCHECK(W, !brisk_timer_armed(t));
    heap_remove(W, x->id);
    W->fires++;
    W->fires_this_advance++;
    W->fire_hash = brisk_test_fnv(W->fire_hash, &x->id, sizeof(x->id));
    W->fire_hash = brisk_test_fnv(W->fire_hash, &now, sizeof(now));

    /* Side effects, identical on both sides. */
    uint64_t k = rnd_below(W, 100);
    if (k < 30) /* re-arm self: mostly in the future, sometimes in the past */
        arm_from_callback(W, x->id, pick_expiry(W, now, k >= 25), now);
    k = rnd_below(W, 100);
    if (k < 20)
        arm_from_callback(W, (int)rnd_below(W, RT_N), pick_expiry(W, now, 1), now);
    else if (k < 35)
        do_cancel(W, (int)rnd_below(W, RT_N)); /* often a due timer not yet fired */
    else if (k < 38 && W->hn > 0)
        do_cancel(W, W->heap[0]); /* exactly the next one to fire */
    WCHECK(W, brisk_timer_count(&W->w) == (size_t)W->hn);
}

static void check_next(struct world *W)
{
    uint64_t nx = brisk_timer_next(&W->w);
    if (W->hn == 0) {
        WCHECK(W, nx == BRISK_TIME_NONE);
        return;
    }
    uint64_t min = W->tm[W->heap[0]].exp;
    WCHECK(W, nx <= min);
    /* Overdue or in the wheel time's 65.536 µs block: the finest level, so exact. */
    if (min <= W->now || (min >> 16) == (W->now >> 16))
        WCHECK(W, nx == min);
}

static void world_advance(struct world *W, uint64_t to)
{
    if (to < W->now)
        to = W->now; /* the wheel treats a smaller now as its current time */
    W->now = to;
    W->adv_now = to;
    W->in_advance = 1;
    W->past_budget = 40;
    W->fires_this_advance = 0;
    uint64_t n = brisk_timer_advance(&W->w, to);
    W->in_advance = 0;
    WCHECK(W, n == W->fires_this_advance);
    WCHECK(W, W->hn == 0 || W->tm[W->heap[0]].exp > to); /* nothing due left behind */
    WCHECK(W, brisk_timer_wheel_now(&W->w) == to);
}

static void run_random(uint64_t seed, uint64_t start, uint64_t ops)
{
    struct world *W = calloc(1, sizeof(*W));
    assert_non_null(W);
    W->seed = seed;
    W->rng = seed;
    W->now = start;
    W->fire_hash = BRISK_TEST_FNV_INIT;
    brisk_timer_wheel_init(&W->w, start);
    for (int i = 0; i < RT_N; i++) {
        W->tm[i].W = W;
        W->tm[i].id = i;
        W->tm[i].pos = -1;
        brisk_timer_init(&W->tm[i].t, rt_fn, &W->tm[i]);
    }
    for (W->op = 0; W->op < ops; W->op++) {
        uint64_t k = rnd_below(W, 100);
        if (k < 40) {
            do_arm(W, (int)rnd_below(W, RT_N), pick_expiry(W, W->now, 1));
        } else if (k < 60) {
            do_cancel(W, (int)rnd_below(W, RT_N));
        } else if (k < 63) {
            /* Wake exactly at next(), like a poll loop does. */
            uint64_t nx = brisk_timer_next(&W->w);
            if (nx != BRISK_TIME_NONE)
                world_advance(W, nx);
        } else {
            /* Advance by 0 ns .. minutes, log-uniformly. */
            uint64_t r = rnd_below(W, 40);
            uint64_t d = r == 0 ? 0 : rnd_below(W, UINT64_C(1) << r);
            world_advance(W, sat_add(W->now, d));
        }
        WCHECK(W, brisk_timer_count(&W->w) == (size_t)W->hn);
        check_next(W);
        if (W->op % 4099 == 0) {
            WCHECK(W, brisk_timer_wheel_check(&W->w) == 0);
            for (int i = 0; i < RT_N; i++)
                WCHECK(W, (W->tm[i].pos >= 0) == (brisk_timer_armed(&W->tm[i].t) != 0));
        }
    }
    /* Drain: everything left fires, in order, at the end of time. */
    world_advance(W, UINT64_MAX);
    WCHECK(W, W->hn == 0);
    WCHECK(W, brisk_timer_count(&W->w) == 0);
    WCHECK(W, brisk_timer_wheel_check(&W->w) == 0);
    WCHECK(W, W->w.stats.arms == W->arms);
    WCHECK(W, W->w.stats.cancels == W->cancels);
    WCHECK(W, W->w.stats.fires == W->fires);
    print_message("random wheel: seed %" PRIu64 " start %" PRIu64 ": %" PRIu64 " arms, %" PRIu64
                  " cancels, %" PRIu64 " fires, %" PRIu64 " cascades, fire hash %016" PRIx64 "\n",
                  seed, start, W->arms, W->cancels, W->fires, W->w.stats.cascades, W->fire_hash);
    free(W);
}

static void test_random_vs_reference(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(20240611);
    run_random(seed, 0, 1000000);
}

static void test_random_vs_reference_high_times(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(20240611) ^ 0x5bd1e995;
    run_random(seed, (UINT64_C(1) << 63) + 123456789, 200000);
    /* Close enough to the end that time saturates at UINT64_MAX during the run. */
    run_random(seed + 1, UINT64_MAX - (UINT64_C(1) << 44), 100000);
}

/* brisk_timer_move: the new timer takes the old one's place — same expiry, same rank among equal expiries,
 * in a fine slot and in a coarse one (head, middle and tail of their lists) — and nothing is counted. */
static void test_move_keeps_place(void **state)
{
    (void)state;
    struct rec *r = rec_new(0);
    struct tt x[6], moved[6];
    for (int i = 0; i < 6; i++) {
        tt_init(&x[i], r, i);
        tt_init(&moved[i], r, 10 + i);
        brisk_timer_arm(&r->w, &x[i].t, i < 3 ? 50 * US : 40 * S); /* a fine slot, then a coarse one */
    }
    struct brisk_timer_stats before = r->w.stats;
    size_t count = brisk_timer_count(&r->w);
    for (int i = 0; i < 6; i++) {
        brisk_timer_move(&r->w, &moved[i].t, &x[i].t);
        assert_false(brisk_timer_armed(&x[i].t));
        assert_true(brisk_timer_armed(&moved[i].t));
        assert_int_equal(brisk_timer_wheel_check(&r->w), 0);
    }
    brisk_timer_move(&r->w, &x[0].t, &x[1].t); /* not armed: nothing */
    assert_false(brisk_timer_armed(&x[0].t));
    assert_int_equal(brisk_timer_count(&r->w), count);
    assert_memory_equal(&r->w.stats, &before, sizeof(before));
    brisk_timer_advance(&r->w, 41 * S);
    assert_int_equal(r->n, 6);
    for (int i = 0; i < 6; i++)
        assert_int_equal(r->ids[i], 10 + i); /* the moved ones, in arm order */
    assert_int_equal(r->exps[0], 50 * US);
    assert_int_equal(r->exps[5], 40 * S);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_wheel),
        cmocka_unit_test(test_fires_exactly_at_expiry),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_rearm_earlier_and_later),
        cmocka_unit_test(test_expiry_at_or_before_now),
        cmocka_unit_test(test_time_zero),
        cmocka_unit_test(test_far_future),
        cmocka_unit_test(test_near_uint64_max),
        cmocka_unit_test(test_same_expiry_fires_in_arm_order),
        cmocka_unit_test(test_same_tick_out_of_order),
        cmocka_unit_test(test_callback_rearms_itself),
        cmocka_unit_test(test_callback_arms_in_the_past),
        cmocka_unit_test(test_callback_cancels_due_timer),
        cmocka_unit_test(test_nested_advance_is_refused),
        cmocka_unit_test(test_next_exact_and_lower_bound),
        cmocka_unit_test(test_cascades_are_bounded),
        cmocka_unit_test(test_random_vs_reference),
        cmocka_unit_test(test_random_vs_reference_high_times),
        cmocka_unit_test(test_move_keeps_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
