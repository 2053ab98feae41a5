/*
 * test_timewait.c — TIME-WAIT records (timewait.c): an orphan's TIME-WAIT goes on as a small record that
 * answers every segment as the socket did.
 *
 * Most tests are differential: two stacks built from the same seed make the same connection and close it
 * actively the same way, one with brisk_shutdown_write (the application keeps the socket: it stays whole in
 * TIME-WAIT) and one with brisk_close (an orphan: a record replaces it). Both then get the same segments at
 * the same times, and must send the same segments back — header, options, window, TOS — and move the same
 * counters: a retransmitted FIN (re-ACKed, the 2 MSL wait restarted), segments in and outside the window, a
 * RST outside the window, inside it and at RCV.NXT, a SYN reusing the tuple, a PAWS failure, each under
 * brisk's profile and linux-6.x's (whose rate limit on invalid segments has per-connection state). The rest
 * check what only the record has: that it replaces the socket, that its expiry frees it and the tuple, its
 * size, and the memory of many under tcp_max_tw_buckets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "stack/stack.h"
#include "support/tcpforge.h"
#include "tcp/tcp.h"

#define SYN BRISK_TCP_SYN
#define ACK BRISK_TCP_ACK
#define RST BRISK_TCP_RST
#define FIN BRISK_TCP_FIN

#define TW_WAIT (10 * TF_SEC) /* tcp_time_wait in these tests */

/* One connection closed by the stack: `held` keeps the socket (shutdown), else it is closed (an orphan). */
struct end {
    struct tf t;
    struct tf_peer p;
    brisk_sock *l, *c;
    int held;
    uint32_t d;  /* our sequence number after the FIN */
    uint64_t t2; /* when the peer's FIN arrived (TIME-WAIT began) */
    struct brisk_counters base;
};

static const char *const brisk_sets[] = {"tcp_time_wait=10s", NULL};
static const char *const linux_sets[] = {"profile=linux-6.x", "tcp_time_wait=10s", NULL};

static void end_open(struct end *e, const char *const *sets, int held)
{
    memset(e, 0, sizeof(*e));
    e->held = held;
    tf_init(&e->t, sets);
    e->l = tf_listen(&e->t, 80);
    tf_peer_init(&e->p, &e->t, 40000, 80, 1000);
    e->c = tf_open_passive(&e->p, e->l, NULL, 0, 10 * TF_MS);
    uint32_t d = e->p.l_iss + 1;
    uint64_t t1 = TF_SEC;
    if (held)
        assert_int_equal(brisk_shutdown_write(e->c, t1), BRISK_OK);
    else
        assert_int_equal(brisk_close(e->c, t1), BRISK_OK);
    TF_EXPECT(&e->t, t1, FIN | ACK, d, 1001, 0);
    e->p.ack = d + 1;
    tf_peer_send(&e->p, ACK, NULL, 0, t1 + 10 * TF_MS);
    e->t2 = t1 + 20 * TF_MS;
    tf_peer_send(&e->p, FIN | ACK, NULL, 0, e->t2);
    TF_EXPECT(&e->t, e->t2, ACK, d + 1, 1002, 0);
    e->d = d + 1;
    /* Past the FIN's lazily cleared retransmission entry, the last thing that kept an orphan whole. */
    tf_run(&e->t, e->t2 + 2 * TF_SEC);
    TF_EXPECT_NONE(&e->t);
    e->base = tf_counters(&e->t);
}

static struct tcp_tw *record(struct end *e)
{
    return tcp_tw_lookup(&e->t.st->net, TCP_TUPLE4(TF_LOCAL_IP, 80, TF_PEER_IP, 40000));
}

/* TIME-WAIT in either form. */
static int in_time_wait(struct end *e)
{
    if (e->held)
        return tf_info(e->c).state == BRISK_TCP_TIME_WAIT;
    assert_null(tcp_conn_lookup(&e->t.st->net, TCP_TUPLE4(TF_LOCAL_IP, 80, TF_PEER_IP, 40000)));
    return record(e) != NULL;
}

static void end_close(struct end *e)
{
    while (tf_pending(&e->t))
        tf_take(&e->t);
    if (e->held)
        brisk_close(e->c, e->t.st->net.now);
    brisk_abort(e->l, e->t.st->net.now);
    tf_run(&e->t, e->t.st->net.now + 3600 * TF_SEC);
    assert_int_equal(e->t.st->tcp->nsocks, 0);
    assert_int_equal(e->t.st->tcp->tw.count, 0);
    tf_free(&e->t);
}

/* A peer segment: flags, sequence number relative to the peer's next, optional payload, TSval override. */
static void peer_seg(struct end *e, uint8_t flags, int32_t seq_off, size_t len, int ts_back, uint64_t now)
{
    static const uint8_t payload[64];
    struct brisk_tcp_repr h = tf_peer_hdr(&e->p, flags, now);
    h.seq += (uint32_t)seq_off;
    if (ts_back && h.opts.ts_ok)
        h.opts.ts_val -= (uint32_t)ts_back;
    if (flags & SYN) { /* a new connection's SYN: its own options, no ACK */
        h.opts = tf_opts_full();
        h.opts.ts_val = e->p.ts_base + (uint32_t)(now / TF_MS);
    }
    tf_inject(&e->t, &h, len ? payload : NULL, len, now);
}

/* Both ends sent the same: same segments (the bytes that matter on the wire) at the same times. */
static void same_output(struct end *a, struct end *b, int want)
{
    assert_int_equal(tf_pending(&a->t), tf_pending(&b->t));
    assert_int_equal(tf_pending(&b->t), want);
    while (tf_pending(&a->t)) {
        struct tf_seg *x = tf_take(&a->t), *y = tf_take(&b->t);
        assert_int_equal(x->at, y->at);
        assert_int_equal(x->h.flags, y->h.flags);
        assert_int_equal(x->h.seq, y->h.seq);
        assert_int_equal(x->h.ack, y->h.ack);
        assert_int_equal(x->h.window, y->h.window);
        assert_int_equal(x->h.opts.ts_ok, y->h.opts.ts_ok);
        assert_int_equal(x->h.opts.ts_val, y->h.opts.ts_val);
        assert_int_equal(x->h.opts.ts_ecr, y->h.opts.ts_ecr);
        assert_int_equal(x->h.opts.nsack, y->h.opts.nsack);
        assert_int_equal(x->len, y->len);
        assert_int_equal(tf_seg_tos(x), tf_seg_tos(y));
        size_t flen = 14 + 20 + BRISK_TCP_HLEN + brisk_tcp_opts_len(&x->h.opts);
        assert_memory_equal(x->frame, y->frame, flen); /* checksum included */
    }
}

/* Both moved every counter by the same amount since their TIME-WAIT began. */
static void same_counters(struct end *a, struct end *b)
{
    struct brisk_counters ca = tf_counters(&a->t), cb = tf_counters(&b->t);
    const uint64_t *xa = (const uint64_t *)&ca, *xb = (const uint64_t *)&cb;
    const uint64_t *ba = (const uint64_t *)&a->base, *bb = (const uint64_t *)&b->base;
    for (size_t i = 0; i < sizeof(ca) / sizeof(uint64_t); i++)
        assert_int_equal(xa[i] - ba[i], xb[i] - bb[i]);
}

typedef void (*script_fn)(struct end *e, int step);

/* Runs `script` step by step on a held socket and on an orphan's record; after each step their output
 * (want[step] segments each) and counters must match, and `check` (may be NULL) sees both. */
static void differential(const char *const *sets, script_fn script, int steps, const int *want,
                         void (*check)(struct end *held, struct end *orphan, int step))
{
    static struct end a, b; /* big: not on the stack */
    end_open(&a, sets, 1);
    end_open(&b, sets, 0);
    assert_non_null(record(&b)); /* the orphan is a record now, the held one a socket */
    assert_int_equal(b.t.st->tcp->tw.settled, 1);
    assert_int_equal(a.t.st->tcp->tw.settled, 0);
    same_counters(&a, &b);
    for (int i = 0; i < steps; i++) {
        script(&a, i);
        script(&b, i);
        same_output(&a, &b, want[i]);
        same_counters(&a, &b);
        if (check)
            check(&a, &b, i);
    }
    end_close(&a);
    end_close(&b);
}

/* The peer's FIN again, 5 s in (our ACK was lost): ACKed, and the wait restarts from it. */
static void s_refin(struct end *e, int step)
{
    uint64_t t = e->t2 + 5 * TF_SEC;
    if (step == 0) {
        e->p.nxt--;
        tf_peer_send(&e->p, FIN | ACK, NULL, 0, t);
    } else if (step == 1) {
        tf_run(&e->t, t + TW_WAIT - 1);
    } else {
        tf_run(&e->t, t + TW_WAIT);
    }
}

static void c_refin(struct end *a, struct end *b, int step)
{
    if (step == 0) {
        /* (same_output took the ACKs: one each.) */
        assert_true(in_time_wait(a) && in_time_wait(b));
    } else if (step == 1) {
        assert_true(in_time_wait(a) && in_time_wait(b)); /* past the first FIN's 10 s */
    } else {
        assert_int_equal(tf_info(a->c).state, BRISK_TCP_CLOSED);
        assert_null(record(b)); /* expired: freed */
        assert_int_equal(b->t.st->tcp->tw.count, 0);
        assert_int_equal(b->t.st->tcp->tw_count, 0);
        assert_int_equal(b->t.st->tcp->nsocks, 1); /* the listener */
    }
}

static void test_refin_reacked_and_restarted(void **state)
{
    (void)state;
    differential(brisk_sets, s_refin, 3, (const int[]){1, 0, 0}, c_refin);
    differential(linux_sets, s_refin, 3, (const int[]){1, 0, 0}, c_refin);
}

static void s_window(struct end *e, int step)
{
    uint64_t t = e->t2 + 3 * TF_SEC + (uint64_t)step * 100 * TF_MS;
    switch (step) {
    case 0: /* data far beyond the window */
        peer_seg(e, ACK, 1 << 30, 10, 0, t);
        break;
    case 1: /* old data, below RCV.NXT */
        peer_seg(e, ACK, -20, 10, 0, t);
        break;
    case 2: /* a bare ACK at RCV.NXT: in the window, nothing to say */
        peer_seg(e, ACK, 0, 0, 0, t);
        break;
    case 3: /* a bare ACK beyond the window: a duplicate ACK (rate-limited under linux-6.x) */
        peer_seg(e, ACK, 1 << 30, 0, 0, t);
        break;
    case 4: /* and again within 500 ms */
        peer_seg(e, ACK, 1 << 30, 0, 0, t);
        break;
    case 5: /* data in the window, past the peer's FIN: only its ACK field is looked at (nothing sent) */
        peer_seg(e, ACK, 0, 10, 0, t);
        break;
    default: /* a FIN in the window, past the first one: ACKed, wait restarted */
        peer_seg(e, FIN | ACK, 0, 0, 0, t);
        break;
    }
}

static void test_in_and_out_of_window(void **state)
{
    (void)state;
    differential(brisk_sets, s_window, 7, (const int[]){1, 1, 0, 1, 1, 0, 1}, NULL);
    differential(linux_sets, s_window, 7, (const int[]){1, 1, 0, 1, 0, 0, 1}, NULL);
}

static void s_rst(struct end *e, int step)
{
    uint64_t t = e->t2 + 3 * TF_SEC + (uint64_t)step * TF_SEC;
    switch (step) {
    case 0: /* outside the window: dropped */
        peer_seg(e, RST | ACK, 1 << 30, 0, 0, t);
        break;
    case 1: /* in the window, not at RCV.NXT: a challenge ACK (RFC 5961 §3.2) */
        peer_seg(e, RST | ACK, 100, 0, 0, t);
        break;
    default: /* at RCV.NXT: the end */
        peer_seg(e, RST, 0, 0, 0, t);
        break;
    }
}

static void c_rst(struct end *a, struct end *b, int step)
{
    struct brisk_counters cb = tf_counters(&b->t);
    if (step == 1)
        assert_int_equal(cb.TCPRSTChallenge - b->base.TCPRSTChallenge, 1);
    if (step < 2) {
        assert_true(in_time_wait(a) && in_time_wait(b));
        return;
    }
    assert_int_equal(tf_info(a->c).state, BRISK_TCP_CLOSED);
    assert_null(record(b));
    assert_int_equal(b->t.st->tcp->nsocks, 1);
    assert_int_equal(brisk_timer_count(&b->t.st->net.wheel), brisk_timer_count(&a->t.st->net.wheel));
}

static void test_rst(void **state)
{
    (void)state;
    differential(brisk_sets, s_rst, 3, (const int[]){0, 1, 0}, c_rst);
    differential(linux_sets, s_rst, 3, (const int[]){0, 1, 0}, c_rst);
}

/* A new SYN for the tuple, in and out of the window: a challenge ACK, no new connection (no RFC 6191). */
static void s_syn(struct end *e, int step)
{
    uint64_t t = e->t2 + 3 * TF_SEC + (uint64_t)step * 2 * TF_SEC;
    peer_seg(e, SYN, step == 0 ? 1 << 20 : 0, 0, 0, t);
}

static void c_syn(struct end *a, struct end *b, int step)
{
    (void)step;
    assert_true(in_time_wait(a) && in_time_wait(b));
    assert_true(tf_counters(&b->t).TCPSYNChallenge > b->base.TCPSYNChallenge);
}

static void test_syn_reuse(void **state)
{
    (void)state;
    differential(brisk_sets, s_syn, 2, (const int[]){1, 1}, c_syn);
    differential(linux_sets, s_syn, 2, (const int[]){1, 1}, c_syn);
}

/* PAWS: a timestamp older than TS.Recent is an old duplicate: a (rate-limited) ACK. Then an acceptable
 * segment moves TS.Recent, which the next ACK echoes. */
static void s_paws(struct end *e, int step)
{
    uint64_t t = e->t2 + 3 * TF_SEC + (uint64_t)step * 100 * TF_MS;
    if (step < 2)
        peer_seg(e, ACK, 0, 0, 100000, t);
    else if (step == 2)
        peer_seg(e, ACK, 0, 0, 0, t); /* TS.Recent moves */
    else
        peer_seg(e, ACK, 1 << 30, 0, 0, t); /* its ACK echoes the new TS.Recent */
}

static void c_paws(struct end *a, struct end *b, int step)
{
    (void)a;
    if (step == 0)
        assert_int_equal(tf_counters(&b->t).PAWSEstab - b->base.PAWSEstab, 1);
}

static void test_paws(void **state)
{
    (void)state;
    differential(brisk_sets, s_paws, 4, (const int[]){1, 1, 0, 1}, c_paws);
    differential(linux_sets, s_paws, 4, (const int[]){1, 0, 0, 0}, c_paws);
}

/* An ICMP error quoting one of our segments: ignored by both forms (not counted as matching nothing). */
static void s_icmp(struct end *e, int step)
{
    (void)step;
    uint64_t t = e->t2 + 3 * TF_SEC;
    peer_seg(e, ACK, 1 << 30, 0, 0, t); /* draws an ACK: the segment of ours to quote */
    struct tf_seg *ours = tf_take(&e->t);
    tf_inject_icmp(&e->t, TF_PEER_IP, 3, 3, ours, 8, NULL, t + TF_MS); /* port unreachable */
}

static void test_icmp_ignored(void **state)
{
    (void)state;
    differential(brisk_sets, s_icmp, 1, (const int[]){0}, NULL);
}

/* The device refuses the ACK of the peer's retransmitted FIN: owed, and sent when a completion wakes the
 * stack. */
static void s_refused(struct end *e, int step)
{
    uint64_t t = e->t2 + 3 * TF_SEC;
    if (step == 0) {
        e->t.hold_completions = 1;
        peer_seg(e, ACK, 1 << 30, 0, 0, t - TF_MS); /* its ACK stays in the ring: a completion to come */
        tf_collect(&e->t);
        e->t.f.busy = 1;
        e->p.nxt--;
        tf_peer_send(&e->p, FIN | ACK, NULL, 0, t);
    } else {
        e->t.f.busy = 0;
        fakedev_complete_all(&e->t.f, t + TF_MS);
        tf_run(&e->t, t + TF_MS);
        e->t.hold_completions = 0;
    }
}

static void c_refused(struct end *a, struct end *b, int step)
{
    (void)a;
    if (step == 0)
        assert_ptr_equal(b->t.st->tcp->tw.refused, record(b));
    else
        assert_null(b->t.st->tcp->tw.refused);
}

static void test_refused_ack_resent(void **state)
{
    (void)state;
    differential(brisk_sets, s_refused, 2, (const int[]){1, 1}, c_refused);
}

/* The record replaces the socket, holds the port, and its expiry gives both back. */
static void test_replaces_socket_and_expires(void **state)
{
    (void)state;
    static struct end e;
    end_open(&e, brisk_sets, 0);
    struct brisk_tcp *t = e.t.st->tcp;
    assert_non_null(record(&e));
    assert_null(tcp_conn_lookup(&e.t.st->net, TCP_TUPLE4(TF_LOCAL_IP, 80, TF_PEER_IP, 40000)));
    assert_int_equal(t->nsocks, 2); /* the listener and the record */
    assert_int_equal(t->tw_count, 1);
    assert_int_equal(t->tw.count, 1);
    assert_true(tcp_port_in_use(&e.t.st->net, TCP_ADDR4(TF_LOCAL_IP), 0, 80) ||
                tcp_tw_port_in_use(&e.t.st->net, TCP_ADDR4(TF_LOCAL_IP), 0, 80));
    assert_true(tcp_tw_port_in_use(&e.t.st->net, TCP_ADDR4(TF_LOCAL_IP), 0, 80));
    assert_true(TCP_TW_SIZE <= 256);
    assert_true(t->tw.bytes >= TCP_TW_SIZE);
    /* The 2 MSL timer moved where it stood: expiry 10 s after the FIN, to the nanosecond. */
    tf_run(&e.t, e.t2 + TW_WAIT - 1);
    assert_non_null(record(&e));
    tf_run(&e.t, e.t2 + TW_WAIT);
    assert_null(record(&e));
    assert_int_equal(t->nsocks, 1);
    assert_int_equal(t->tw_count, 0);
    assert_false(tcp_tw_port_in_use(&e.t.st->net, TCP_ADDR4(TF_LOCAL_IP), 0, 80));
    TF_EXPECT_NONE(&e.t);
    /* The tuple is free again: a SYN opens a new connection, from a reused record slot afterwards. */
    tf_peer_init(&e.p, &e.t, 40000, 80, 500000);
    brisk_sock *c = tf_open_passive(&e.p, e.l, NULL, e.t2 + 11 * TF_SEC, 0);
    assert_non_null(c);
    brisk_abort(c, e.t2 + 11 * TF_SEC);
    end_close(&e);
}

/* A socket the application still holds stays whole in TIME-WAIT (it can read its state); closing it there
 * makes it a record. */
static void test_close_in_time_wait(void **state)
{
    (void)state;
    static struct end e;
    end_open(&e, brisk_sets, 1);
    assert_null(record(&e));
    assert_int_equal(tf_info(e.c).state, BRISK_TCP_TIME_WAIT);
    assert_int_equal(brisk_close(e.c, e.t2 + 3 * TF_SEC), BRISK_OK);
    TF_EXPECT_NONE(&e.t);
    e.c = NULL;
    e.held = 0;
    assert_non_null(record(&e));
    assert_int_equal(e.t.st->tcp->nsocks, 2);
    tf_run(&e.t, e.t2 + TW_WAIT);
    assert_null(record(&e));
    end_close(&e);
}

/* Many connections in TIME-WAIT: a record each up to tcp_max_tw_buckets, no wait beyond it (counted
 * TCPTimeWaitOverflow); the records' whole memory, slabs included, within 256 bytes each. */
static void test_many_bounded(void **state)
{
    (void)state;
    enum { N = 300, CAP = 200 };
    static struct tf t;
    tf_init(&t, (const char *const[]){"tcp_time_wait=60s", "tcp_max_tw_buckets=200", NULL});
    brisk_sock *l = tf_listen(&t, 80);
    uint64_t now = 0;
    for (int i = 0; i < N; i++) {
        struct tf_peer p;
        tf_peer_init(&p, &t, (uint16_t)(20000 + i), 80, 1000u + (uint32_t)i);
        brisk_sock *c = tf_open_passive(&p, l, NULL, now, TF_MS);
        now += 2 * TF_MS;
        assert_int_equal(brisk_close(c, now), BRISK_OK);
        struct tf_seg *fin = tf_take(&t);
        assert_int_equal(fin->h.flags, FIN | ACK);
        p.ack = fin->h.seq + 1;
        now += TF_MS;
        tf_peer_send(&p, FIN | ACK, NULL, 0, now);
        while (tf_pending(&t))
            tf_take(&t);
    }
    tf_run(&t, now + 3 * TF_SEC); /* past every FIN's cleared retransmission entry */
    while (tf_pending(&t))
        tf_take(&t);
    struct brisk_tcp *tt = t.st->tcp;
    assert_int_equal(tf_counters(&t).TCPTimeWaitOverflow, N - CAP);
    assert_int_equal(tt->tw_count, CAP);
    assert_int_equal(tt->tw.count, CAP);
    assert_int_equal(tt->nsocks, 1 + CAP); /* the listener and the records: every socket freed */
    assert_true(tt->tw.bytes <= (uint64_t)CAP * 256);
    tf_run(&t, now + 61 * TF_SEC);
    assert_int_equal(tt->tw.count, 0);
    assert_int_equal(tt->nsocks, 1);
    brisk_abort(l, now + 61 * TF_SEC);
    tf_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refin_reacked_and_restarted),
        cmocka_unit_test(test_in_and_out_of_window),
        cmocka_unit_test(test_rst),
        cmocka_unit_test(test_syn_reuse),
        cmocka_unit_test(test_paws),
        cmocka_unit_test(test_icmp_ignored),
        cmocka_unit_test(test_refused_ack_resent),
        cmocka_unit_test(test_replaces_socket_and_expires),
        cmocka_unit_test(test_close_in_time_wait),
        cmocka_unit_test(test_many_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
