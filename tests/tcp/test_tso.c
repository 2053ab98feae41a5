/*
 * test_tso.c — white-box tests of TSO autosizing (src/tcp/tso.c): super-segments of whole segments, sized by
 * the pacing rate, the device's limit, half the congestion window and tcp_min_tso_segs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>
#include <cmocka.h>

#include "stack/stack.h"
#include "support/tcpforge.h"
#include "support/txconn.h"
#include "tcp/tcp.h"

#define ACK               TXC_ACK
#define PSH               TXC_PSH
#define TRUESIZE(payload) TXC_TRUESIZE(payload)

/* TSO autosizing: on a GSO device the transmit function sends bursts of whole segments — at least
 * tcp_min_tso_segs, about a pacing interval of data, at most half the congestion window. */
static void test_tso_size_goal(void **state)
{
    (void)state;
    struct tf_conn f;
    txc_open(&f, NULL);
    brisk_sock *c = f.c;
    assert_int_equal(tcp_size_goal(c, 1460), 1460); /* no GSO on the device: one segment */
    f.t.f.dev->cfg.caps |= BRISK_NETDEV_CAP_GSO;
    f.t.f.dev->cfg.gso_max_size = 65535;
    /* cwnd 10 segments: half is 5, below the rate-based size, so bursts of 5 x 1460. */
    assert_int_equal(c->cc.cwnd, 14600);
    assert_int_equal(tcp_size_goal(c, 1460), 5 * 1460);
    txc_send(c, 20000, TF_MS);
    tf_collect(&f.t);
    struct tf_seg *s1 = tf_take(&f.t), *s2 = tf_take(&f.t);
    assert_int_equal(s1->len, 5 * 1460);
    assert_int_equal(s2->len, 5 * 1460);
    TF_EXPECT_NONE(&f.t); /* the congestion window is full */
    /* A big window: the rate-based size, capped by the device's 64 KB. */
    c->cc.cwnd = 1000 * 1460;
    c->rtt.srtt_fp = TF_MS << 16; /* SRTT 1 ms (fixed point, rtt.h) */
    uint64_t bytes = tcp_pacing_rate(c) >> 10;
    uint32_t want = (uint32_t)(bytes < 65455 ? bytes : 65455) / 1460 * 1460;
    assert_int_equal(tcp_size_goal(c, 1460), want);
    /* A slow path: never below tcp_min_tso_segs. */
    c->rtt.srtt_fp = 10 * TF_SEC << 16;
    assert_int_equal(tcp_size_goal(c, 1460), 2 * 1460);
    tf_conn_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tso_size_goal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
