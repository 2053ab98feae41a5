/*
 * txconn.h — the transmit engine's white-box fixture (tests/tcp/test_tsq.c, test_pacing.c, test_tso.c,
 * test_tail.c): tcpforge's connection with TSQ on and the test's settings after it, no timestamps (MSS
 * 1460 exactly), a 100 us handshake; and a send of patterned bytes that must be taken whole.
 */
#ifndef BRISK_TEST_TXCONN_H
#define BRISK_TEST_TXCONN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/tcpforge.h"

#define TXC_ACK BRISK_TCP_ACK
#define TXC_PSH BRISK_TCP_PSH
/* A packet's truesize: TCP + IP + Ethernet headers + tcp_buf_overhead (790) besides the payload. */
#define TXC_TRUESIZE(payload) ((payload) + 20u + 20u + 14u + 790u)

static inline void txc_open(struct tf_conn *f, const char *const *sets)
{
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 0;
    tf_conn_open(f, (const char *const[]){"tcp_tsq=1", NULL}, sets, &o, 100 * TF_US);
}

static inline void txc_send(brisk_sock *c, size_t len, uint64_t now)
{
    static uint8_t buf[200000];
    tf_pattern(buf, len, 0);
    assert_int_equal(brisk_send(c, buf, len, 0, now), (int64_t)len);
}

#endif
