/*
 * test_ackcomp.c — SACK compression (src/tcp/ackcomp.c, Linux's tcp_comp_sack_*): with tcp_comp_sack_nr at
 * Linux's 44, out-of-order segments past the third duplicate ACK for one RCV.NXT are not acknowledged one by
 * one; one ACK goes min(tcp_comp_sack_delay, 5 % of the RTT) + the slack later with the SACK blocks of all of
 * them, and TCPAckCompressed counts the ACKs never sent. Checked: brisk's default (every one at once), the
 * three duplicates and the timer's moment (5 % of the receiver's RTT; the 1 ms cap), the hole filled ending
 * the compression at once, the tcp_comp_sack_nr cap, quick-ACK mode, and a segment that opens a fifth SACK
 * block sending the held ACK first with the four it had.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stack/stack.h"
#include "support/tcpforge.h"
#include "tcp/tcp.h"

#define ACK BRISK_TCP_ACK
#define US  1000ull

/* A connection accepted at 0 with a 40 ms handshake (so SRTT 40 ms; no timestamps: the SACK option then has
 * room for four blocks), past quick-ACK mode, whose receiver RTT estimate is `rcv_rtt_us` (Linux's
 * rcv_rtt_est, us << 3 in rw.rtt.us). The compression's RTT is the smaller of the two. */
static void open_conn(struct tf_conn *f, const char *const *sets, uint64_t rcv_rtt_us)
{
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 0;
    tf_conn_open(f, sets, NULL, &o, 40 * 1000 * US);
    f->c->ack.quick = 0;
    f->c->ack.pingpong = 0;
    f->c->rw.rtt.us = (uint32_t)(rcv_rtt_us * 8);
}

/* The peer's segment of 100 bytes at stream offset `off` (from its first data byte). */
static void seg_at(struct tf_conn *f, uint32_t off, uint64_t now)
{
    f->p.nxt = f->p.iss + 1 + off;
    tf_peer_send_data(&f->p, 100, now);
}

/* How many ACKs the stack has sent now (taken from the queue); the last in *last (may be NULL). */
static int acks(struct tf_conn *f, struct tf_seg **last)
{
    int n = 0;
    while (tf_pending(&f->t)) {
        struct tf_seg *s = tf_take(&f->t);
        assert_int_equal(s->h.flags, ACK);
        if (last)
            *last = s;
        n++;
    }
    return n;
}

static const char *const comp_sets[] = {"tcp_comp_sack_nr=44", NULL};

/* brisk's profile (tcp_comp_sack_nr=0): RFC 5681 §4.2, one ACK per out-of-order segment. */
static void test_off_acks_every_segment(void **state)
{
    (void)state;
    struct tf_conn f;
    open_conn(&f, NULL, 10000);
    for (uint32_t i = 1; i <= 10; i++)
        seg_at(&f, 100 * i, 100 * 1000 * US);
    assert_int_equal(acks(&f, NULL), 10);
    tf_run(&f.t, 300 * 1000 * US);
    assert_int_equal(acks(&f, NULL), 0);
    assert_int_equal(tf_counters(&f.t).TCPAckCompressed, 0);
    tf_conn_close(&f);
}

/* Three duplicates at once, then one ACK for the other seven at 5 % of a 10 ms RTT (500 us) + 100 us slack,
 * its first SACK block covering all ten segments. */
static void test_three_then_one(void **state)
{
    (void)state;
    struct tf_conn f;
    open_conn(&f, comp_sets, 10000);
    uint64_t t0 = 100 * 1000 * US;
    for (uint32_t i = 1; i <= 10; i++)
        seg_at(&f, 100 * i, t0);
    assert_int_equal(acks(&f, NULL), 3);
    tf_run(&f.t, t0 + 599 * US);
    assert_int_equal(acks(&f, NULL), 0);
    tf_run(&f.t, t0 + 600 * US);
    struct tf_seg *s = NULL;
    assert_int_equal(acks(&f, &s), 1);
    assert_int_equal(s->at, t0 + 600 * US);
    uint32_t r = f.p.iss + 1;
    assert_int_equal(s->h.ack, r);
    assert_int_equal(s->h.opts.nsack, 1);
    assert_int_equal(s->h.opts.sack[0].start, r + 100);
    assert_int_equal(s->h.opts.sack[0].end, r + 1100);
    assert_int_equal(tf_counters(&f.t).TCPAckCompressed, 6);
    tf_run(&f.t, t0 + 100 * 1000 * US);
    assert_int_equal(acks(&f, NULL), 0); /* no delayed ACK after it */
    /* A segment past the same hole later: its duplicates were counted for this RCV.NXT, so it waits too. */
    seg_at(&f, 2000, t0 + 200 * 1000 * US);
    assert_int_equal(acks(&f, NULL), 0);
    tf_run(&f.t, t0 + 200 * 1000 * US + 600 * US);
    assert_int_equal(acks(&f, NULL), 1);
    tf_conn_close(&f);
}

/* A long RTT (receiver 100 ms, SRTT 40 ms: 5 % is 2 ms): the wait is capped at tcp_comp_sack_delay (1 ms),
 * plus the slack. */
static void test_delay_cap(void **state)
{
    (void)state;
    struct tf_conn f;
    open_conn(&f, comp_sets, 100 * 1000);
    uint64_t t0 = 100 * 1000 * US;
    for (uint32_t i = 1; i <= 5; i++)
        seg_at(&f, 100 * i, t0);
    assert_int_equal(acks(&f, NULL), 3);
    tf_run(&f.t, t0 + 1099 * US);
    assert_int_equal(acks(&f, NULL), 0);
    tf_run(&f.t, t0 + 1100 * US);
    assert_int_equal(acks(&f, NULL), 1);
    tf_conn_close(&f);
}

/* The hole filled: the cumulative ACK goes at once and ends the compression (no timer ACK follows). */
static void test_fill_ends_it(void **state)
{
    (void)state;
    struct tf_conn f;
    open_conn(&f, comp_sets, 10000);
    uint64_t t0 = 100 * 1000 * US;
    for (uint32_t i = 1; i <= 8; i++)
        seg_at(&f, 100 * i, t0);
    assert_int_equal(acks(&f, NULL), 3);
    seg_at(&f, 0, t0 + 100 * US);
    struct tf_seg *s = NULL;
    assert_int_equal(acks(&f, &s), 1);
    assert_int_equal(s->h.ack, f.p.iss + 1 + 900);
    assert_int_equal(s->h.opts.nsack, 0);
    assert_int_equal(tf_counters(&f.t).TCPAckCompressed, 5);
    tf_run(&f.t, t0 + 100 * 1000 * US);
    assert_int_equal(acks(&f, NULL), 0);
    tf_conn_close(&f);
}

/* tcp_comp_sack_nr=4: after three duplicates, four held; the fifth goes at once (and counts the four), then
 * holding starts again. */
static void test_nr_cap(void **state)
{
    (void)state;
    static const char *const sets[] = {"tcp_comp_sack_nr=4", NULL};
    struct tf_conn f;
    open_conn(&f, sets, 10000);
    uint64_t t0 = 100 * 1000 * US;
    for (uint32_t i = 1; i <= 12; i++)
        seg_at(&f, 100 * i, t0);
    assert_int_equal(acks(&f, NULL), 4); /* segments 1-3, then 8 */
    assert_int_equal(tf_counters(&f.t).TCPAckCompressed, 4);
    tf_run(&f.t, t0 + 600 * US);
    assert_int_equal(acks(&f, NULL), 1); /* for 9-12 */
    assert_int_equal(tf_counters(&f.t).TCPAckCompressed, 7);
    tf_conn_close(&f);
}

/* Quick-ACK mode (the connection's start): every out-of-order segment is acknowledged at once. */
static void test_quickack(void **state)
{
    (void)state;
    struct tf_conn f;
    open_conn(&f, comp_sets, 10000);
    f.c->ack.quick = 16;
    for (uint32_t i = 1; i <= 8; i++)
        seg_at(&f, 100 * i, 100 * 1000 * US);
    assert_int_equal(acks(&f, NULL), 8);
    tf_conn_close(&f);
}

/* While ACKs are held, a segment that opens a fifth SACK block sends the held ACK first, with the four blocks
 * it had; the new segment's own ACK is then held again. */
static void test_fifth_block(void **state)
{
    (void)state;
    struct tf_conn f;
    open_conn(&f, comp_sets, 10000);
    uint64_t t0 = 100 * 1000 * US;
    uint32_t r = f.p.iss + 1;
    /* Runs at 200, 400, 600 (three duplicates), then 800: held; then 1000 opens the fifth run. */
    for (uint32_t i = 1; i <= 4; i++)
        seg_at(&f, 200 * i, t0);
    assert_int_equal(acks(&f, NULL), 3);
    seg_at(&f, 1000, t0 + 10 * US);
    struct tf_seg *s = NULL;
    assert_int_equal(acks(&f, &s), 1);
    assert_int_equal(s->at, t0 + 10 * US);
    assert_int_equal(s->h.opts.nsack, 4); /* the four runs before it, the newest first */
    assert_int_equal(s->h.opts.sack[0].start, r + 800);
    assert_int_equal(s->h.opts.sack[3].start, r + 200);
    assert_int_equal(tf_counters(&f.t).TCPAckCompressed, 0); /* the one held ACK is this one */
    tf_run(&f.t, t0 + 10 * US + 600 * US);
    assert_int_equal(acks(&f, &s), 1); /* the fifth run's, compressed */
    assert_int_equal(s->h.opts.sack[0].start, r + 1000);
    tf_conn_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off_acks_every_segment),
        cmocka_unit_test(test_three_then_one),
        cmocka_unit_test(test_delay_cap),
        cmocka_unit_test(test_fill_ends_it),
        cmocka_unit_test(test_nr_cap),
        cmocka_unit_test(test_quickack),
        cmocka_unit_test(test_fifth_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
