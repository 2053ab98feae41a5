/*
 * test_undo.c — undoing spurious congestion responses (src/tcp/undo.c): F-RTO (RFC 5682) tells a timeout that
 * fired on a stalled but loss-free path from a real one by the first ACK after it; D-SACK (RFC 3708) undoes a
 * fast retransmit that reordering provoked once the receiver reports the retransmission as a duplicate.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

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

/* Reordering beyond RACK's window: segment 0 arrives 3 ms late, after its fast retransmission (at 2.58 ms).
 * The receiver then reports the retransmission as a duplicate (D-SACK): the episode's only retransmission was
 * unnecessary, and the reduction is undone. */
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
    for (uint32_t k = 1; k < 10; k++)
        tf_peer_sack(&f.p, f.d, f.d + M, f.d + (k + 1) * M, T + (k - 1) * 10 * TF_US);
    tf_run(&f.t, T + 2580 * TF_US);
    TF_EXPECT(&f.t, T + 2580 * TF_US, ACK, f.d, 1001, M);
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
        cmocka_unit_test(test_frto_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
