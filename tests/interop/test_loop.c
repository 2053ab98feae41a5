/* tests for src/drivers/loop.c: hooks and their deadlines, descriptor watches, the stack's timers driven by
 * the timerfd (re-armed only when a deadline moves earlier), stopping (from a callback, by a signal, by a
 * time limit), the clock update from a callback, busy polling, and bad arguments. Real time, but
 * only ordering is asserted ("not before the deadline"), never speed. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "brisk/loop.h"
#include "support/fakedev.h"

#define MS BRISK_NSEC_PER_MSEC

struct env {
    brisk_stack *st;
    brisk_loop *l;
};

static struct env *env_new(void)
{
    struct env *e = calloc(1, sizeof(*e));
    e->st = brisk_stack_new(NULL);
    assert_non_null(e->st);
    int err = 1;
    e->l = brisk_loop_new(e->st, &err);
    assert_non_null(e->l);
    assert_int_equal(err, BRISK_OK);
    return e;
}

static void env_free(struct env *e)
{
    brisk_loop_free(e->l);
    brisk_stack_free(e->st);
    free(e);
}

struct ticker {
    int calls;
    int stop_after;
    uint64_t want;     /* absolute time asked for next */
    uint64_t late_min; /* smallest (call time - asked time) seen, to check "never early" */
    int early;
    uint64_t step;
};

static uint64_t tick(void *ctx, brisk_loop *l, uint64_t now)
{
    struct ticker *t = ctx;
    if (t->calls > 0 && now < t->want)
        t->early++; /* the loop may run a hook early only when something else woke it: nothing does here */
    t->calls++;
    if (t->calls == t->stop_after) {
        brisk_loop_stop(l);
        return BRISK_TIME_NONE;
    }
    t->want = now + t->step;
    return t->want;
}

/* A hook's deadline wakes the loop (timerfd), not earlier; stop from inside a hook returns BRISK_OK. */
static void test_hook_deadlines(void **state)
{
    (void)state;
    struct env *e = env_new();
    struct ticker t = {.stop_after = 6, .step = 2 * MS};
    int id = brisk_loop_add_hook(e->l, tick, &t);
    assert_true(id >= 0);
    uint64_t t0 = brisk_loop_clock();
    assert_int_equal(brisk_loop_run(e->l, t0 + 10 * BRISK_NSEC_PER_SEC), BRISK_OK);
    uint64_t t1 = brisk_loop_clock();
    assert_int_equal(t.calls, 6);
    assert_int_equal(t.early, 0);
    assert_true(t1 - t0 >= 5 * 2 * MS); /* five waits of 2 ms each */
    struct brisk_loop_stats s;
    brisk_loop_get_stats(e->l, &s);
    assert_true(s.wakeups_timer >= 5);
    assert_true(s.polls == s.iterations);
    assert_false(brisk_loop_stopping(e->l)); /* cleared on return */
    assert_int_equal(brisk_loop_remove_hook(e->l, id), BRISK_OK);
    assert_int_equal(brisk_loop_remove_hook(e->l, id), BRISK_ERR_NOENT);
    env_free(e);
}

/* Without any deadline, run returns at `until` with BRISK_ERR_TIMEDOUT, not before. */
static void test_run_until(void **state)
{
    (void)state;
    struct env *e = env_new();
    uint64_t t0 = brisk_loop_clock();
    assert_int_equal(brisk_loop_run(e->l, t0 + 20 * MS), BRISK_ERR_TIMEDOUT);
    assert_true(brisk_loop_clock() - t0 >= 20 * MS);
    struct brisk_loop_stats s;
    brisk_loop_get_stats(e->l, &s);
    assert_true(s.iterations < 100); /* it slept rather than spun */
    env_free(e);
}

struct piper {
    int fds[2];
    int reads;
    int writes_ready;
    char got[16];
};

static void on_pipe(void *ctx, brisk_loop *l, int fd, unsigned ready, uint64_t now)
{
    (void)now;
    struct piper *p = ctx;
    if (ready & BRISK_LOOP_IN) {
        ssize_t n = read(fd, p->got + p->reads, 1);
        assert_int_equal(n, 1);
        p->reads++;
        if (p->reads == 3)
            brisk_loop_stop(l);
    }
    if (ready & BRISK_LOOP_OUT) {
        p->writes_ready++;
        brisk_loop_stop(l);
    }
}

/* Level-triggered input: three bytes written at once are read one per callback, one iteration each. */
static void test_fd_watch(void **state)
{
    (void)state;
    struct env *e = env_new();
    struct piper p;
    memset(&p, 0, sizeof(p));
    assert_int_equal(pipe(p.fds), 0);
    assert_int_equal(brisk_loop_watch_fd(e->l, p.fds[0], BRISK_LOOP_IN, on_pipe, &p), BRISK_OK);
    assert_int_equal(brisk_loop_watch_fd(e->l, p.fds[0], BRISK_LOOP_IN, on_pipe, &p), BRISK_ERR_EXIST);
    assert_int_equal(write(p.fds[1], "abc", 3), 3);
    uint64_t t0 = brisk_loop_clock();
    assert_int_equal(brisk_loop_run(e->l, t0 + 5 * BRISK_NSEC_PER_SEC), BRISK_OK);
    assert_int_equal(p.reads, 3);
    assert_memory_equal(p.got, "abc", 3);

    /* Writability on the other end, then unwatch: nothing more is delivered. */
    assert_int_equal(brisk_loop_watch_fd(e->l, p.fds[1], BRISK_LOOP_IN, on_pipe, &p), BRISK_OK);
    assert_int_equal(brisk_loop_modify_fd(e->l, p.fds[1], BRISK_LOOP_OUT), BRISK_OK);
    assert_int_equal(brisk_loop_run(e->l, brisk_loop_clock() + 5 * BRISK_NSEC_PER_SEC), BRISK_OK);
    assert_int_equal(p.writes_ready, 1);
    assert_int_equal(brisk_loop_unwatch_fd(e->l, p.fds[1]), BRISK_OK);
    assert_int_equal(brisk_loop_unwatch_fd(e->l, p.fds[1]), BRISK_ERR_NOENT);
    assert_int_equal(brisk_loop_modify_fd(e->l, p.fds[1], BRISK_LOOP_IN), BRISK_ERR_NOENT);
    assert_int_equal(brisk_loop_run(e->l, brisk_loop_clock() + 10 * MS), BRISK_ERR_TIMEDOUT);
    assert_int_equal(p.writes_ready, 1);

    /* brisk_loop_fds: the loop's own three (epoll, timerfd, eventfd; no signalfd asked for) and the one
     * still watched, all open; cut at max. */
    int fds[8];
    assert_int_equal(brisk_loop_fds(e->l, fds, 8), 4);
    int seen_watched = 0;
    for (int i = 0; i < 4; i++) {
        assert_true(fcntl(fds[i], F_GETFD) >= 0);
        assert_int_not_equal(fds[i], p.fds[1]); /* unwatched */
        seen_watched += fds[i] == p.fds[0];
    }
    assert_int_equal(seen_watched, 1);
    assert_int_equal(brisk_loop_fds(e->l, fds, 2), 2);
    assert_int_equal(brisk_loop_fds(NULL, fds, 8), 0);
    close(p.fds[0]);
    close(p.fds[1]);
    env_free(e);
}

/* The stack's own timers run from the loop: ARP retransmissions every arp_retrans, then failure. */
static void test_stack_timers(void **state)
{
    (void)state;
    struct brisk_settings s;
    brisk_settings_default(&s);
    assert_int_equal(brisk_settings_set(&s, "arp_retrans=5ms"), BRISK_OK);
    assert_int_equal(brisk_settings_set(&s, "arp_retries=3"), BRISK_OK);
    brisk_stack *st = brisk_stack_new(&s);
    assert_non_null(st);
    struct fakedev f;
    fakedev_init(&f, st, 1, IP4(10, 0, 0, 1), 24);
    int err;
    brisk_loop *l = brisk_loop_new(st, &err);
    assert_non_null(l);
    uint64_t t0 = brisk_loop_clock();
    assert_int_equal(brisk_stack_resolve(st, IP4(10, 0, 0, 9), t0), BRISK_ERR_AGAIN);
    assert_int_equal(f.ntx, 1);
    assert_int_equal(brisk_loop_run(l, t0 + 60 * MS), BRISK_ERR_TIMEDOUT);
    struct brisk_counters c;
    brisk_stack_get_counters(st, &c);
    assert_int_equal(c.ArpOutRequests, 3);
    assert_int_equal(c.ArpResolveFailed, 1);
    assert_int_equal(f.ntx, 3);
    assert_true(f.tx[1].at - f.tx[0].at >= 5 * MS); /* never before the stack's deadline */
    assert_true(f.tx[2].at - f.tx[1].at >= 5 * MS);
    brisk_loop_free(l);
    fakedev_destroy(&f, brisk_loop_clock());
    brisk_stack_free(st);
}

/* SIGTERM stops the loop through its signalfd, with no handler installed. */
static void test_stop_on_signal(void **state)
{
    (void)state;
    struct env *e = env_new();
    assert_int_equal(brisk_loop_stop_on_signals(e->l), BRISK_OK);
    assert_int_equal(brisk_loop_signal(e->l), 0);
    raise(SIGTERM); /* blocked: stays pending until the loop reads it */
    assert_int_equal(brisk_loop_run(e->l, brisk_loop_clock() + 5 * BRISK_NSEC_PER_SEC), BRISK_OK);
    assert_int_equal(brisk_loop_signal(e->l), SIGTERM);
    env_free(e);
}

struct selfwake {
    int id, n;
};

static uint64_t wake_self(void *ctx, brisk_loop *l, uint64_t now)
{
    (void)now;
    struct selfwake *w = ctx;
    if (++w->n == 5)
        brisk_loop_stop(l);
    else
        brisk_loop_wake_hook(l, w->id); /* wins over the BRISK_TIME_NONE returned below */
    return BRISK_TIME_NONE;
}

static uint64_t idle(void *ctx, brisk_loop *l, uint64_t now)
{
    (void)l;
    (void)now;
    ++*(int *)ctx;
    return BRISK_TIME_NONE;
}

/* A hook that asks for nothing lets the loop sleep; one that wakes itself keeps it running. */
static void test_wake_and_limits(void **state)
{
    (void)state;
    struct env *e = env_new();
    int n = 0;
    int id = brisk_loop_add_hook(e->l, idle, &n);
    assert_true(id >= 0);
    assert_int_equal(brisk_loop_run(e->l, brisk_loop_clock() + 20 * MS), BRISK_ERR_TIMEDOUT);
    assert_true(n >= 1 && n <= 3); /* its first run, perhaps the wakeup at the limit; no spinning */
    assert_int_equal(brisk_loop_remove_hook(e->l, id), BRISK_OK);

    struct selfwake w = {0};
    w.id = brisk_loop_add_hook(e->l, wake_self, &w);
    assert_true(w.id >= 0);
    /* Were the wake lost, the loop would sleep for the whole minute and return BRISK_ERR_TIMEDOUT. */
    assert_int_equal(brisk_loop_run(e->l, brisk_loop_clock() + 60 * BRISK_NSEC_PER_SEC), BRISK_OK);
    assert_int_equal(w.n, 5);
    assert_int_equal(brisk_loop_wake_hook(e->l, 99), BRISK_ERR_NOENT);

    /* The hook table is bounded. */
    int ids = 1, rc = 0;
    while ((rc = brisk_loop_add_hook(e->l, idle, &n)) >= 0)
        ids++;
    assert_int_equal(rc, BRISK_ERR_TOOMANY);
    assert_int_equal(ids, 16);
    /* run_once does one iteration. */
    struct brisk_loop_stats a, b;
    brisk_loop_get_stats(e->l, &a);
    assert_int_equal(brisk_loop_run_once(e->l, 0), BRISK_OK);
    brisk_loop_get_stats(e->l, &b);
    assert_int_equal(b.iterations, a.iterations + 1);
    env_free(e);
}

/* ---- the timerfd re-arm rule, the clock update, busy polling ------------------------------------------- */

struct mover {
    int fds[2];
    int calls;
    uint64_t step;      /* each call asks for now + step (plus a growing offset: always later) ... */
    int earlier;        /* ... or, when set, for a time earlier than the previous answer */
    uint64_t last_want; /* what the last call asked for */
    uint64_t stop_at;   /* stop at the first call at or after this time (0: never) */
    uint64_t stopped;   /* when it stopped */
};

static void on_byte(void *ctx, brisk_loop *l, int fd, unsigned ready, uint64_t now)
{
    (void)ctx;
    (void)l;
    (void)now;
    char c;
    if (ready & BRISK_LOOP_IN)
        assert_int_equal(read(fd, &c, 1), 1); /* one byte per iteration: level-triggered */
}

static uint64_t move(void *ctx, brisk_loop *l, uint64_t now)
{
    struct mover *m = ctx;
    m->calls++;
    if (m->stop_at && now >= m->stop_at) {
        m->stopped = now;
        brisk_loop_stop(l);
        return BRISK_TIME_NONE;
    }
    if (m->stop_at && m->calls > 20) {
        m->last_want = m->stop_at; /* the pipe is drained: wait for the end */
        return m->last_want;
    }
    if (m->earlier)
        m->last_want = m->last_want ? m->last_want - MS : now + m->step;
    else
        m->last_want = now + m->step + (uint64_t)m->calls * MS;
    return m->last_want;
}

/* A deadline that keeps moving later is not re-armed each time (one timerfd_settime for twenty moves), yet
 * the wait still ends at the final deadline, not before; a deadline that moves earlier is re-armed every
 * time, or the wakeup would come late. */
static void test_timer_rearm_rule(void **state)
{
    (void)state;
    struct env *e = env_new();
    struct mover m = {.step = 200 * MS};
    assert_int_equal(pipe(m.fds), 0);
    assert_int_equal(brisk_loop_watch_fd(e->l, m.fds[0], BRISK_LOOP_IN, on_byte, &m), BRISK_OK);
    assert_true(brisk_loop_add_hook(e->l, move, &m) >= 0);
    assert_int_equal(write(m.fds[1], "012345678901234567890", 21), 21); /* one byte per iteration */
    assert_int_equal(brisk_loop_run_once(e->l, 0), BRISK_OK); /* the hook's first run is the next one */
    for (int i = 0; i < 20; i++)
        assert_int_equal(brisk_loop_run_once(e->l, 10 * BRISK_NSEC_PER_SEC), BRISK_OK); /* byte i */
    assert_int_equal(m.calls, 20);
    struct brisk_loop_stats s;
    brisk_loop_get_stats(e->l, &s);
    assert_int_equal(s.timer_arms, 1); /* moved later 19 times: left alone */
    assert_int_equal(s.wakeups_timer, 0);

    /* Drained: the loop sleeps, wakes at the old (earlier) time, finds nothing due, re-arms for the end. */
    uint64_t t0 = brisk_loop_clock();
    m.stop_at = t0 + 300 * MS;
    assert_int_equal(brisk_loop_run(e->l, t0 + 10 * BRISK_NSEC_PER_SEC), BRISK_OK);
    assert_true(m.stopped >= m.stop_at);
    brisk_loop_get_stats(e->l, &s);
    assert_true(s.timer_arms >= 2 && s.timer_arms <= 4);

    /* Deadlines moving earlier: every one is armed. */
    struct env *e2 = env_new();
    struct mover m2 = {.step = 10 * BRISK_NSEC_PER_SEC, .earlier = 1};
    assert_int_equal(pipe(m2.fds), 0);
    assert_int_equal(brisk_loop_watch_fd(e2->l, m2.fds[0], BRISK_LOOP_IN, on_byte, &m2), BRISK_OK);
    assert_true(brisk_loop_add_hook(e2->l, move, &m2) >= 0);
    assert_int_equal(write(m2.fds[1], "0123456789a", 11), 11);
    assert_int_equal(brisk_loop_run_once(e2->l, 0), BRISK_OK);
    for (int i = 0; i < 10; i++)
        assert_int_equal(brisk_loop_run_once(e2->l, 60 * BRISK_NSEC_PER_SEC), BRISK_OK);
    brisk_loop_get_stats(e2->l, &s);
    assert_int_equal(s.timer_arms, 9); /* each answer is armed by the next iteration: 9 of the 10 so far */
    for (int i = 0; i < 2; i++) {
        close(m.fds[i]);
        close(m2.fds[i]);
    }
    env_free(e2);
    env_free(e);
}

struct clockcheck {
    uint64_t updated, hook_now;
    int calls;
    uint64_t given[2]; /* the `now` each callback was given */
};

static void on_slow_fd(void *ctx, brisk_loop *l, int fd, unsigned ready, uint64_t now)
{
    struct clockcheck *c = ctx;
    char b;
    if (ready & BRISK_LOOP_IN)
        assert_int_equal(read(fd, &b, 1), 1);
    if (c->calls < 2)
        c->given[c->calls] = now;
    c->calls++;
    usleep(3000); /* a callback that spent time in system calls */
    c->updated = brisk_loop_update_now(l);
    assert_true(c->updated >= now + 3 * MS);
    assert_true(brisk_loop_now(l) == c->updated);
}

static uint64_t see_now(void *ctx, brisk_loop *l, uint64_t now)
{
    (void)l;
    ((struct clockcheck *)ctx)->hook_now = now;
    return BRISK_TIME_NONE;
}

/* brisk_loop_update_now moves the iteration's time on: the descriptors' callbacks after it and the hooks of
 * that iteration get the new time, never the older one the iteration started with. */
static void test_update_now(void **state)
{
    (void)state;
    struct env *e = env_new();
    struct clockcheck c = {0};
    int fds[2], fds2[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(pipe(fds2), 0);
    assert_int_equal(brisk_loop_watch_fd(e->l, fds[0], BRISK_LOOP_IN, on_slow_fd, &c), BRISK_OK);
    assert_int_equal(brisk_loop_watch_fd(e->l, fds2[0], BRISK_LOOP_IN, on_slow_fd, &c), BRISK_OK);
    assert_true(brisk_loop_add_hook(e->l, see_now, &c) >= 0);
    assert_int_equal(brisk_loop_run_once(e->l, 0), BRISK_OK);
    assert_int_equal(write(fds[1], "x", 1), 1);
    assert_int_equal(write(fds2[1], "y", 1), 1);
    assert_int_equal(brisk_loop_run_once(e->l, BRISK_NSEC_PER_SEC), BRISK_OK); /* both ready at once */
    assert_int_equal(c.calls, 2);
    assert_true(c.given[1] >= c.given[0] + 3 * MS); /* the second callback got the first one's update */
    assert_true(c.updated > 0);
    assert_true(c.hook_now == c.updated);
    assert_int_equal(brisk_loop_update_now(NULL), 0);
    for (int i = 0; i < 2; i++) {
        close(fds[i]);
        close(fds2[i]);
    }
    env_free(e);
}

/* Busy polling spins for spin_ns after a descriptor was ready, with no deadline near, then sleeps again. */
static void test_busy_poll(void **state)
{
    (void)state;
    struct env *e = env_new();
    struct mover m = {0};
    assert_int_equal(pipe(m.fds), 0);
    assert_int_equal(brisk_loop_watch_fd(e->l, m.fds[0], BRISK_LOOP_IN, on_byte, &m), BRISK_OK);
    brisk_loop_set_busy_poll(e->l, 500 * MS);
    assert_int_equal(write(m.fds[1], "x", 1), 1);
    assert_int_equal(brisk_loop_run_once(e->l, 10 * BRISK_NSEC_PER_SEC), BRISK_OK); /* reads it */
    uint64_t t0 = brisk_loop_clock();
    assert_int_equal(brisk_loop_run_once(e->l, 10 * BRISK_NSEC_PER_SEC), BRISK_OK); /* spins: no wait */
    assert_true(brisk_loop_clock() - t0 < 5 * BRISK_NSEC_PER_SEC);
    /* Past the spin time it sleeps (here until the 100 ms limit) rather than spinning. */
    brisk_loop_set_busy_poll(e->l, 20 * MS);
    usleep(30000);
    t0 = brisk_loop_clock();
    assert_int_equal(brisk_loop_run_once(e->l, 100 * MS), BRISK_OK);
    assert_true(brisk_loop_clock() - t0 >= 100 * MS);
    close(m.fds[0]);
    close(m.fds[1]);
    env_free(e);
}

static void test_bad_args(void **state)
{
    (void)state;
    int err = 0;
    assert_null(brisk_loop_new(NULL, &err));
    assert_int_equal(err, BRISK_ERR_INVAL);
    struct env *e = env_new();
    assert_int_equal(brisk_loop_watch_fd(e->l, -1, BRISK_LOOP_IN, on_pipe, NULL), BRISK_ERR_INVAL);
    assert_int_equal(brisk_loop_watch_fd(e->l, 0, BRISK_LOOP_IN, NULL, NULL), BRISK_ERR_INVAL);
    assert_int_equal(brisk_loop_watch_fd(e->l, 0, 0x80, on_pipe, NULL), BRISK_ERR_INVAL);
    assert_int_equal(brisk_loop_add_hook(e->l, NULL, NULL), BRISK_ERR_INVAL);
    assert_int_equal(brisk_loop_run(NULL, 0), BRISK_ERR_INVAL);
    brisk_loop_free(NULL);
    env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hook_deadlines), cmocka_unit_test(test_run_until),
        cmocka_unit_test(test_fd_watch),       cmocka_unit_test(test_stack_timers),
        cmocka_unit_test(test_stop_on_signal), cmocka_unit_test(test_wake_and_limits),
        cmocka_unit_test(test_timer_rearm_rule), cmocka_unit_test(test_update_now),
        cmocka_unit_test(test_busy_poll),        cmocka_unit_test(test_bad_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
