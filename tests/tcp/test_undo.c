/*
 * test_undo.c — undoing spurious congestion responses (src/tcp/undo.c): F-RTO (RFC 5682) tells a timeout that
 * fired on a stalled but loss-free path from a real one by the first ACK after it; D-SACK (RFC 3708) undoes a
 * fast retransmit that reordering provoked once the receiver reports the retransmission as a duplicate (a
 * block counting as many segments as it covers); timestamps (Eifel, RFC 3522) undo it at the ACK whose echo
 * shows the hole was filled by the late original.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "stack/stack.h"
#include "support/tcpforge.h"
#include "tcp/tcp.h"

#define ACK BRISK_TCP_ACK
#define M   1460u

/* SACK on, no timestamps, handshake RTT 10 ms (RTO 200 ms), NewReno, no tail loss probes (the RTO alone). */
static void setup(struct tf_conn *f, const char *const *sets)
{
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 0;
    tf_conn_open(f, sets, (const char *const[]){"tcp_congestion=newreno", "tcp_tlp=0", NULL}, &o, 10 * TF_MS);
}

static void finish(struct tf_conn *f)
{
    tf_conn_close(f);
}

/* Four segments, then the path stalls for 205 ms: the RTO resends only the first (F-RTO). The original ACK
 * then arrives covering all four — three of them never retransmitted — so the timeout was spurious: cwnd,
 * ssthresh and the RTO come back. */
static void test_frto_spurious_timeout_undone(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 4 * M, t1);
    for (int k = 0; k < 4; k++)
        tf_take(&f.t);
    struct brisk_conn_info before = tf_info(f.c);
    tf_run(&f.t, t1 + 200 * TF_MS);
    TF_EXPECT(&f.t, t1 + 200 * TF_MS, ACK, f.d, 1001, M);
    TF_EXPECT_NONE(&f.t); /* only the first segment: the rest is judged by the next ACK */
    assert_int_equal(tf_info(f.c).cwnd, M);
    tf_peer_sack(&f.p, f.d + 4 * M, 0, 0, t1 + 205 * TF_MS);
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(tf_counters(&f.t).TCPSpuriousRTOs, 1);
    assert_int_equal(i.undos, 1);
    assert_int_equal(i.cwnd, before.cwnd);
    assert_int_equal(i.ssthresh, before.ssthresh);
    assert_int_equal(i.rto_ns, before.rto_ns); /* the backoff is gone too */
    assert_int_equal(i.rto_count, 1);
    finish(&f);
}

/* A real timeout: the first ACK after it covers only the retransmitted segment. The rest is lost after all,
 * goes again in order as the (one-segment, slow-starting) window allows, and nothing is undone. */
static void test_frto_real_timeout(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 4 * M, t1);
    for (int k = 0; k < 4; k++)
        tf_take(&f.t);
    tf_run(&f.t, t1 + 200 * TF_MS);
    TF_EXPECT(&f.t, t1 + 200 * TF_MS, ACK, f.d, 1001, M);
    tf_peer_sack(&f.p, f.d + M, 0, 0, t1 + 210 * TF_MS);
    TF_EXPECT(&f.t, t1 + 210 * TF_MS, ACK, f.d + M, 1001, M);
    TF_EXPECT(&f.t, t1 + 210 * TF_MS, ACK, f.d + 2 * M, 1001, M);
    TF_EXPECT_NONE(&f.t);
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(tf_counters(&f.t).TCPSpuriousRTOs, 0);
    assert_int_equal(i.undos, 0);
    assert_int_equal(i.cwnd, 2 * M);
    finish(&f);
}

/* Reordering: segment 0 arrives 3 ms late, after its fast retransmission (at the third SACK, the
 * duplicate-ACK threshold). The receiver then reports the retransmission as a duplicate (D-SACK): the
 * episode's only retransmission was unnecessary, and the reduction is undone. */
static void test_dsack_undoes_spurious_fast_retransmit(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    uint64_t t1 = TF_SEC, T = t1 + 10 * TF_MS;
    tf_send_pattern(f.c, 0, 10 * M, t1);
    for (int k = 0; k < 10; k++)
        tf_take(&f.t);
    struct brisk_conn_info before = tf_info(f.c);
    for (uint32_t k = 1; k < 4; k++)
        tf_peer_sack(&f.p, f.d, f.d + M, f.d + (k + 1) * M, T + (k - 1) * 10 * TF_US);
    TF_EXPECT(&f.t, T + 20 * TF_US, ACK, f.d, 1001, M);
    assert_int_equal(tf_info(f.c).ssthresh, 5 * M);
    tf_peer_sack(&f.p, f.d + 10 * M, 0, 0, T + 3 * TF_MS);          /* the original, late */
    tf_peer_sack(&f.p, f.d + 10 * M, f.d, f.d + M, T + 13 * TF_MS); /* D-SACK: the copy */
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(tf_counters(&f.t).TCPDSACKUndo, 1);
    assert_int_equal(i.undos, 1);
    assert_true(i.cwnd >= before.cwnd);
    assert_int_equal(i.ssthresh, before.ssthresh);
    finish(&f);
}

/* Two segments held back, both fast-retransmitted; the receiver gets both copies back to back and reports
 * them in one D-SACK block of two segments (as a receiver that coalesces arrivals does). That block accounts
 * for both retransmissions: the episode is undone without a second D-SACK that never comes. */
static void test_dsack_block_counts_its_segments(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    uint64_t t1 = TF_SEC, T = t1 + 10 * TF_MS;
    tf_send_pattern(f.c, 0, 10 * M, t1);
    for (int k = 0; k < 10; k++)
        tf_take(&f.t);
    struct brisk_conn_info before = tf_info(f.c);
    tf_peer_sack(&f.p, f.d, f.d + 2 * M, f.d + 5 * M, T);
    TF_EXPECT(&f.t, T, ACK, f.d, 1001, M);
    tf_peer_sack(&f.p, f.d, f.d + 2 * M, f.d + 8 * M, T + 10 * TF_US);
    TF_EXPECT(&f.t, T + 10 * TF_US, ACK, f.d + M, 1001, M);
    tf_peer_sack(&f.p, f.d + 10 * M, 0, 0, T + 3 * TF_MS); /* the originals, late */
    assert_int_equal(tf_info(f.c).undos, 0);
    tf_peer_sack(&f.p, f.d + 10 * M, f.d, f.d + 2 * M, T + 13 * TF_MS); /* both copies, one block */
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(tf_counters(&f.t).TCPDSACKUndo, 1);
    assert_int_equal(i.undos, 1);
    assert_true(i.cwnd >= before.cwnd);
    assert_int_equal(i.ssthresh, before.ssthresh);
    finish(&f);
}

/* As setup, with timestamps (which take 12 bytes of each segment). */
#define MT (M - 12u)
static void setup_ts(struct tf_conn *f)
{
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 1;
    tf_conn_open(f, NULL, (const char *const[]){"tcp_congestion=newreno", "tcp_tlp=0", NULL}, &o, 10 * TF_MS);
}

/* An ACK from the peer with the echo given (TS.Recent: the TSval of the segment that last advanced the
 * peer's cumulative point). */
static void ack_echo(struct tf_conn *f, uint32_t ack, uint32_t ecr, uint64_t now)
{
    f->p.ack = ack;
    struct brisk_tcp_repr h = tf_peer_hdr(&f->p, ACK, now);
    h.opts.ts_ecr = ecr;
    tf_inject(&f->t, &h, NULL, 0, now);
}

/* Segment 0 is late by 3 ms, fast-retransmitted at the third SACK. The ACK that its original then produces
 * echoes the original's TSval, older than the retransmission's: the hole was filled by the original (Eifel,
 * RFC 3522), nothing else was retransmitted, and the reduction is undone at that ACK — no D-SACK needed. */
static void test_timestamps_undo_reordering(void **state)
{
    (void)state;
    struct tf_conn f;
    setup_ts(&f);
    uint64_t t1 = TF_SEC, T = t1 + 10 * TF_MS;
    tf_send_pattern(f.c, 0, 10 * MT, t1);
    uint32_t orig_tsval = 0;
    for (int k = 0; k < 10; k++) {
        struct tf_seg *x = tf_take(&f.t);
        assert_true(x->h.opts.ts_ok);
        if (k == 0)
            orig_tsval = x->h.opts.ts_val;
    }
    struct brisk_conn_info before = tf_info(f.c);
    for (uint32_t k = 1; k < 4; k++)
        tf_peer_sack(&f.p, f.d, f.d + MT, f.d + (k + 1) * MT, T + (k - 1) * 10 * TF_US);
    struct tf_seg *rtx = TF_EXPECT(&f.t, T + 20 * TF_US, ACK, f.d, 1001, MT);
    assert_true(rtx->h.opts.ts_val != orig_tsval);
    assert_int_equal(tf_info(f.c).ssthresh, 5 * MT);
    ack_echo(&f, f.d + 10 * MT, orig_tsval, T + 3 * TF_MS);
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(i.undos, 1);
    assert_int_equal(tf_counters(&f.t).TCPFullUndo, 1);
    assert_int_equal(tf_counters(&f.t).TCPDSACKUndo, 0);
    assert_true(i.cwnd >= before.cwnd);
    assert_int_equal(i.ssthresh, before.ssthresh);
    assert_int_equal(i.ca_state, BRISK_CA_OPEN);
    finish(&f);
}

/* The same, but the hole was a real loss: the ACK echoes the retransmission's TSval (it filled the hole), and
 * nothing is undone. So is an ACK echoing an old TSval while a retransmission is still outstanding. */
static void test_timestamps_real_loss_not_undone(void **state)
{
    (void)state;
    struct tf_conn f;
    setup_ts(&f);
    uint64_t t1 = TF_SEC, T = t1 + 10 * TF_MS;
    tf_send_pattern(f.c, 0, 12 * MT, t1);
    uint32_t orig_tsval = 0;
    for (int k = 0; k < 10; k++) {
        struct tf_seg *x = tf_take(&f.t);
        if (k == 0)
            orig_tsval = x->h.opts.ts_val;
    }
    /* 0 and 5 missing; 1-4 SACKed: 0 is lost (three SACKed) and goes again. */
    tf_peer_sack(&f.p, f.d, f.d + MT, f.d + 5 * MT, T);
    struct tf_seg *rtx = TF_EXPECT(&f.t, T, ACK, f.d, 1001, MT);
    uint32_t rtx_tsval = rtx->h.opts.ts_val;
    /* 6-9 SACKed too: 5 is lost and goes again as PRR allows. */
    f.p.ack = f.d;
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, ACK, T + 10 * TF_US);
    h.opts.nsack = 2;
    h.opts.sack[0].start = f.d + 6 * MT;
    h.opts.sack[0].end = f.d + 10 * MT;
    h.opts.sack[1].start = f.d + MT;
    h.opts.sack[1].end = f.d + 5 * MT;
    tf_inject(&f.t, &h, NULL, 0, T + 10 * TF_US);
    while (tf_pending(&f.t))
        tf_take(&f.t);
    assert_true(f.c->sb.retrans > 0);
    /* The original of 0 was late: cumulative ACK to 5, old echo, but 5's retransmission is outstanding. */
    ack_echo(&f, f.d + 5 * MT, orig_tsval, T + 3 * TF_MS);
    assert_int_equal(tf_info(f.c).undos, 0);
    /* 5 was really lost: its retransmission fills the hole, and the echo is a retransmission's. */
    ack_echo(&f, f.d + 10 * MT, rtx_tsval + 0, T + 13 * TF_MS);
    assert_int_equal(tf_info(f.c).undos, 0);
    assert_int_equal(tf_counters(&f.t).TCPFullUndo + tf_counters(&f.t).TCPPartialUndo, 0);
    finish(&f);
}

/* With tcp_frto=0 the RTO marks everything lost at once (RFC 6675 §5.1): all it may send goes. */
static void test_frto_off(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, (const char *const[]){"tcp_frto=0", NULL});
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 4 * M, t1);
    for (int k = 0; k < 4; k++)
        tf_take(&f.t);
    tf_run(&f.t, t1 + 200 * TF_MS);
    TF_EXPECT(&f.t, t1 + 200 * TF_MS, ACK, f.d, 1001, M);
    assert_int_equal(f.c->sb.lost, 4 * M);
    tf_peer_sack(&f.p, f.d + 4 * M, 0, 0, t1 + 205 * TF_MS);
    assert_int_equal(tf_counters(&f.t).TCPSpuriousRTOs, 0);
    assert_int_equal(tf_info(f.c).undos, 0);
    finish(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frto_spurious_timeout_undone),
        cmocka_unit_test(test_frto_real_timeout),
        cmocka_unit_test(test_dsack_undoes_spurious_fast_retransmit),
        cmocka_unit_test(test_dsack_block_counts_its_segments),
        cmocka_unit_test(test_timestamps_undo_reordering),
        cmocka_unit_test(test_timestamps_real_loss_not_undone),
        cmocka_unit_test(test_frto_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
