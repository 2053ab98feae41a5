/*
 * test_data.c — data transfer on an established connection, both directions.
 *
 * Sending: segmentation at the MSS, Nagle with Minshall's refinement (RFC 9293 §3.7.4), TCP_NODELAY, TCP_CORK
 * and MSG_MORE. Receiving: in-order delivery and the readable event, quick ACKs at the start of a connection,
 * delayed ACKs (RFC 1122 §4.2.3.2 / RFC 9293 §3.8.6.3: at most tcp_delack_max, and every second full-sized
 * segment at once, RFC 5681 §4.2), out-of-order data with SACK blocks (RFC 2018), hole filling and D-SACK
 * (RFC 2883), also for segments that partly repeat held data, and the immediate ACK of an out-of-order FIN.
 * Flow control: the advertised window shrinking as data sits unread, the window update when the application
 * reads, and the sender's persist probes against a zero window (RFC 9293 §3.8.6.1).
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

#define SYN BRISK_TCP_SYN
#define ACK BRISK_TCP_ACK
#define RST BRISK_TCP_RST
#define FIN BRISK_TCP_FIN
#define PSH BRISK_TCP_PSH

/* A connection accepted at time 0 from a peer offering MSS 1460, scale 7 and SACK but no timestamps, so
 * the MSS is a round 1460; the handshake's RTT is `rtt`. */
static brisk_sock *setup(struct tf *t, struct tf_peer *p, brisk_sock **l, uint64_t rtt)
{
    *l = tf_listen(t, 80);
    tf_peer_init(p, t, 40000, 80, 1000);
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 0;
    brisk_sock *c = tf_open_passive(p, *l, &o, 0, rtt);
    assert_int_equal(tf_info(c).mss, 1460);
    return c;
}

static void teardown(struct tf *t, brisk_sock *c, brisk_sock *l)
{
    brisk_abort(c, t->st->net.now);
    while (tf_pending(t))
        tf_take(t);
    brisk_close(l, t->st->net.now);
    assert_int_equal(t->st->tcp->nsocks, 0);
    tf_free(t);
}

static void send_pattern(brisk_sock *c, uint64_t off, size_t len, unsigned flags, uint64_t now)
{
    uint8_t buf[20000];
    assert_true(len <= sizeof(buf));
    tf_pattern(buf, len, off);
    assert_int_equal(brisk_send(c, buf, len, flags, now), (int64_t)len);
}

static void test_send_segments(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, NULL);
    brisk_sock *c = setup(&t, &p, &l, 0);
    uint32_t d = p.l_iss + 1; /* our first data byte */
    uint64_t t1 = 10 * TF_MS;
    send_pattern(c, 0, 3000, 0, t1);
    struct tf_seg *s = TF_EXPECT(&t, t1, ACK, d, 1001, 1460);
    assert_true(tf_payload_is(s, 0));
    assert_int_equal(s->h.window, (4u << 20) >> 7);
    s = TF_EXPECT(&t, t1, ACK, d + 1460, 1001, 1460);
    assert_true(tf_payload_is(s, 1460));
    s = TF_EXPECT(&t, t1, ACK | PSH, d + 2920, 1001, 80); /* the end of what was queued: PSH */
    assert_true(tf_payload_is(s, 2920));
    TF_EXPECT_NONE(&t);
    struct brisk_conn_info i = tf_info(c);
    assert_int_equal(i.unacked, 3000);
    assert_int_equal(i.notsent, 0);
    assert_int_equal(tf_counters(&t).TCPOrigDataSent, 3);

    /* The initial window is 10 segments (RFC 6928): of 20000 more bytes, 7 more full segments leave, and
     * the 1380 bytes left in cwnd are not worth a partial segment while data is in flight. */
    send_pattern(c, 3000, 20000, 0, t1 + TF_MS);
    for (uint32_t k = 0; k < 7; k++) {
        s = TF_EXPECT(&t, t1 + TF_MS, ACK, d + 3000 + k * 1460, 1001, 1460);
        assert_true(tf_payload_is(s, 3000 + k * 1460));
    }
    TF_EXPECT_NONE(&t);
    i = tf_info(c);
    assert_int_equal(i.cwnd, 14600);
    assert_int_equal(i.unacked, 3000 + 7 * 1460);
    /* An ACK of the first 3000 bytes: slow start adds 2 SMSS (RFC 3465 L = 2) and the window moves by 3000,
     * so 5 x 1460 may go: 1380 + 1460 (cwnd was 1380 short) ... exact: flight 10220, cwnd 17520. */
    p.ack = d + 3000;
    tf_peer_send(&p, ACK, NULL, 0, t1 + 20 * TF_MS);
    i = tf_info(c);
    assert_int_equal(i.cwnd, 14600 + 2920);
    uint32_t seq = d + 3000 + 7 * 1460;
    for (int k = 0; k < 5; k++) {
        TF_EXPECT(&t, t1 + 20 * TF_MS, ACK, seq, 1001, 1460);
        seq += 1460;
    }
    TF_EXPECT_NONE(&t);
    teardown(&t, c, l);
}

static void test_nagle(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, NULL);
    brisk_sock *c = setup(&t, &p, &l, 0);
    uint32_t d = p.l_iss + 1;
    uint64_t t1 = 10 * TF_MS;
    /* A small segment with nothing in flight goes at once. */
    send_pattern(c, 0, 100, 0, t1);
    TF_EXPECT(&t, t1, ACK | PSH, d, 1001, 100);
    /* While it is unacknowledged, small writes wait and coalesce (RFC 9293 §3.7.4). */
    send_pattern(c, 100, 100, 0, t1 + TF_MS);
    send_pattern(c, 200, 100, 0, t1 + 2 * TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_info(c).notsent, 200);
    /* A full segment is never held by Nagle, the small tail still is. */
    send_pattern(c, 300, 1400, 0, t1 + 3 * TF_MS);
    struct tf_seg *s = TF_EXPECT(&t, t1 + 3 * TF_MS, ACK, d + 100, 1001, 1460);
    assert_true(tf_payload_is(s, 100));
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_info(c).notsent, 140);
    /* The ACK of the small segment releases the tail (Minshall: no small segment is outstanding now). */
    p.ack = d + 100;
    tf_peer_send(&p, ACK, NULL, 0, t1 + 40 * TF_MS);
    s = TF_EXPECT(&t, t1 + 40 * TF_MS, ACK | PSH, d + 1560, 1001, 140);
    assert_true(tf_payload_is(s, 1560));
    TF_EXPECT_NONE(&t);
    /* The ACK of the full segment alone does not: the 140-byte one is still out. */
    send_pattern(c, 1700, 10, 0, t1 + 41 * TF_MS);
    p.ack = d + 1560;
    tf_peer_send(&p, ACK, NULL, 0, t1 + 42 * TF_MS);
    TF_EXPECT_NONE(&t);
    p.ack = d + 1700;
    tf_peer_send(&p, ACK, NULL, 0, t1 + 43 * TF_MS);
    TF_EXPECT(&t, t1 + 43 * TF_MS, ACK | PSH, d + 1700, 1001, 10);
    teardown(&t, c, l);
}

static void test_nodelay(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, NULL);
    brisk_sock *c = setup(&t, &p, &l, 0);
    uint32_t d = p.l_iss + 1;
    send_pattern(c, 0, 100, 0, TF_MS);
    TF_EXPECT(&t, TF_MS, ACK | PSH, d, 1001, 100);
    send_pattern(c, 100, 50, 0, 2 * TF_MS);
    TF_EXPECT_NONE(&t);
    /* Setting NODELAY pushes what Nagle held, at once. */
    assert_int_equal(brisk_setsockopt(c, BRISK_SO_NODELAY, 1, 3 * TF_MS), BRISK_OK);
    TF_EXPECT(&t, 3 * TF_MS, ACK | PSH, d + 100, 1001, 50);
    /* And small writes go out one by one with small segments in flight. */
    send_pattern(c, 150, 7, 0, 4 * TF_MS);
    TF_EXPECT(&t, 4 * TF_MS, ACK | PSH, d + 150, 1001, 7);
    send_pattern(c, 157, 9, 0, 5 * TF_MS);
    TF_EXPECT(&t, 5 * TF_MS, ACK | PSH, d + 157, 1001, 9);
    uint64_t v;
    assert_int_equal(brisk_getsockopt(c, BRISK_SO_NODELAY, &v), BRISK_OK);
    assert_int_equal(v, 1);
    teardown(&t, c, l);
}

static void test_cork(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, NULL);
    brisk_sock *c = setup(&t, &p, &l, 0);
    uint32_t d = p.l_iss + 1;
    assert_int_equal(brisk_setsockopt(c, BRISK_SO_CORK, 1, TF_MS), BRISK_OK);
    /* Corked, with nothing in flight: partial segments wait... */
    send_pattern(c, 0, 40, 0, TF_MS);
    send_pattern(c, 40, 40, 0, 2 * TF_MS);
    TF_EXPECT_NONE(&t);
    tf_run(&t, 100 * TF_MS);
    TF_EXPECT_NONE(&t);
    /* ...and uncorking pushes them as one segment. */
    assert_int_equal(brisk_setsockopt(c, BRISK_SO_CORK, 0, 100 * TF_MS), BRISK_OK);
    struct tf_seg *s = TF_EXPECT(&t, 100 * TF_MS, ACK | PSH, d, 1001, 80);
    assert_true(tf_payload_is(s, 0));
    p.ack = d + 80;
    tf_peer_send(&p, ACK, NULL, 0, 101 * TF_MS);
    /* The 200 ms ceiling: a corked tail leaves on its own 200 ms after the hold began (Linux tcp(7)). */
    assert_int_equal(brisk_setsockopt(c, BRISK_SO_CORK, 1, TF_SEC), BRISK_OK);
    send_pattern(c, 80, 40, 0, TF_SEC);
    send_pattern(c, 120, 40, 0, TF_SEC + 50 * TF_MS);
    tf_run(&t, TF_SEC + 199 * TF_MS);
    TF_EXPECT_NONE(&t);
    tf_run(&t, TF_SEC + 200 * TF_MS);
    s = TF_EXPECT(&t, TF_SEC + 200 * TF_MS, ACK | PSH, d + 80, 1001, 80);
    assert_true(tf_payload_is(s, 80));
    assert_int_equal(brisk_setsockopt(c, BRISK_SO_CORK, 0, 2 * TF_SEC), BRISK_OK);
    p.ack = d + 160;
    tf_peer_send(&p, ACK, NULL, 0, 2 * TF_SEC);
    d += 80; /* the rest of the test continues 80 bytes further on */
    /* Corked, full segments still leave; only the partial tail waits. */
    assert_int_equal(brisk_setsockopt(c, BRISK_SO_CORK, 1, 6 * TF_SEC), BRISK_OK);
    send_pattern(c, 160, 3000, 0, 6 * TF_SEC);
    TF_EXPECT(&t, 6 * TF_SEC, ACK, d + 80, 1001, 1460);
    TF_EXPECT(&t, 6 * TF_SEC, ACK, d + 1540, 1001, 1460);
    TF_EXPECT_NONE(&t);
    /* An ACK for everything sent does not release a corked tail either. */
    p.ack = d + 3000;
    tf_peer_send(&p, ACK, NULL, 0, 6 * TF_SEC + TF_MS);
    TF_EXPECT_NONE(&t);
    send_pattern(c, 3160, 1380, 0, 6 * TF_SEC + 2 * TF_MS); /* 80 + 1380 = a full segment: it goes */
    s = TF_EXPECT(&t, 6 * TF_SEC + 2 * TF_MS, ACK | PSH, d + 3000, 1001, 1460);
    assert_true(tf_payload_is(s, 3080));
    assert_int_equal(brisk_setsockopt(c, BRISK_SO_CORK, 0, 7 * TF_SEC), BRISK_OK);
    TF_EXPECT_NONE(&t); /* nothing left to push */
    teardown(&t, c, l);
}

/* After shutdown nothing more will come to fill a partial segment: the piece that goes with the FIN is held
 * neither by Nagle nor by TCP_CORK (Linux: tcp_nagle_test passes a FIN segment, tcp_send_fin pushes with
 * Nagle off). Held, the tail and the FIN would wait for the ACK of the previous small segment — a delayed ACK
 * (up to tcp_delack_max) at the end of every transfer whose last two writes were small — or for the cork
 * timer. */
static void test_fin_takes_held_tail(void **state)
{
    (void)state;
    for (int corked = 0; corked <= 1; corked++) {
        struct tf t;
        struct tf_peer p;
        brisk_sock *l;
        tf_init(&t, NULL);
        brisk_sock *c = setup(&t, &p, &l, 0);
        uint32_t d = p.l_iss + 1;
        uint64_t t1 = 10 * TF_MS;
        if (corked) {
            assert_int_equal(brisk_setsockopt(c, BRISK_SO_CORK, 1, t1), BRISK_OK);
            send_pattern(c, 0, 100, 0, t1);
            TF_EXPECT_NONE(&t); /* corked: the partial segment waits */
        } else {
            send_pattern(c, 0, 100, 0, t1);
            TF_EXPECT(&t, t1, ACK | PSH, d, 1001, 100);
            send_pattern(c, 100, 50, 0, t1 + TF_MS);
            TF_EXPECT_NONE(&t); /* Nagle: a small segment is unacknowledged */
        }
        uint32_t off = corked ? 0 : 100, len = corked ? 100 : 50;
        assert_int_equal(brisk_shutdown_write(c, t1 + 2 * TF_MS), BRISK_OK);
        struct tf_seg *s = TF_EXPECT(&t, t1 + 2 * TF_MS, ACK | PSH | FIN, d + off, 1001, len);
        assert_true(tf_payload_is(s, off));
        TF_EXPECT_NONE(&t);
        teardown(&t, c, l);
    }
}

static void test_msg_more(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, NULL);
    brisk_sock *c = setup(&t, &p, &l, 0);
    uint32_t d = p.l_iss + 1;
    send_pattern(c, 0, 40, BRISK_MSG_MORE, TF_MS);
    send_pattern(c, 40, 40, BRISK_MSG_MORE, 2 * TF_MS);
    TF_EXPECT_NONE(&t);
    /* A send without MSG_MORE ends the hold: one segment with all three writes. */
    send_pattern(c, 80, 40, 0, 3 * TF_MS);
    struct tf_seg *s = TF_EXPECT(&t, 3 * TF_MS, ACK | PSH, d, 1001, 120);
    assert_true(tf_payload_is(s, 0));
    TF_EXPECT_NONE(&t);
    p.ack = d + 120;
    tf_peer_send(&p, ACK, NULL, 0, 4 * TF_MS);
    /* Again, and this time an empty send without the flag is what pushes. */
    send_pattern(c, 120, 40, BRISK_MSG_MORE, 5 * TF_MS);
    send_pattern(c, 160, 40, BRISK_MSG_MORE, 5 * TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(brisk_send(c, "", 0, 0, 6 * TF_MS), 0);
    s = TF_EXPECT(&t, 6 * TF_MS, ACK | PSH, d + 120, 1001, 80);
    assert_true(tf_payload_is(s, 120));
    /* With MSG_MORE, full segments go and only the partial tail waits. */
    p.ack = d + 200;
    tf_peer_send(&p, ACK, NULL, 0, 7 * TF_MS);
    send_pattern(c, 200, 1500, BRISK_MSG_MORE, 8 * TF_MS);
    TF_EXPECT(&t, 8 * TF_MS, ACK, d + 200, 1001, 1460);
    TF_EXPECT_NONE(&t);
    send_pattern(c, 1700, 20, 0, 9 * TF_MS);
    TF_EXPECT(&t, 9 * TF_MS, ACK | PSH, d + 1660, 1001, 60);
    /* MSG_MORE holds only for its call: the ACK that empties the flight releases a held tail (Nagle allows).
     */
    send_pattern(c, 1720, 30, BRISK_MSG_MORE, 10 * TF_MS);
    TF_EXPECT_NONE(&t);
    p.ack = d + 1720;
    tf_peer_send(&p, ACK, NULL, 0, 11 * TF_MS);
    TF_EXPECT(&t, 11 * TF_MS, ACK | PSH, d + 1720, 1001, 30);
    teardown(&t, c, l);
}

static void test_receive_in_order(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, NULL);
    brisk_sock *c = setup(&t, &p, &l, 0);
    struct tf_events ev = {0};
    brisk_sock_set_callback(c, tf_events_cb, &ev);
    uint8_t buf[4000];
    assert_int_equal(brisk_recv(c, buf, sizeof(buf), TF_MS), BRISK_ERR_AGAIN);
    tf_peer_send_data(&p, 500, 2 * TF_MS);
    /* Quick ACK at the start of the connection. */
    TF_EXPECT(&t, 2 * TF_MS, ACK, p.l_iss + 1, 1501, 0);
    assert_int_equal(ev.all, BRISK_EV_READABLE);
    assert_int_equal(ev.at[1], 2 * TF_MS);
    tf_peer_send_data(&p, 700, 3 * TF_MS);
    TF_EXPECT(&t, 3 * TF_MS, ACK, p.l_iss + 1, 2201, 0);
    assert_int_equal(brisk_recv(c, buf, 1000, 4 * TF_MS), 1000);
    uint8_t want[1200];
    tf_pattern(want, sizeof(want), 0);
    assert_memory_equal(buf, want, 1000);
    assert_int_equal(brisk_recv(c, buf, sizeof(buf), 4 * TF_MS), 200);
    assert_memory_equal(buf, want + 1000, 200);
    assert_int_equal(brisk_recv(c, buf, sizeof(buf), 4 * TF_MS), BRISK_ERR_AGAIN);
    assert_int_equal(tf_info(c).bytes_received, 1200);
    TF_EXPECT_NONE(&t); /* reading 1200 bytes of a 4 MB window is no reason for a window update */
    teardown(&t, c, l);
}

/* A segment with a wrong checksum is counted and dropped; with BRISK_RX_CSUM_VALID the device vouched for it
 * and the stack does not look again (the IPv4 header checksum is still checked); unknown flags are refused.
 */
static void test_receive_checksum_offload(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, NULL);
    brisk_sock *c = setup(&t, &p, &l, 0);
    uint8_t data[100], buf[200];
    tf_pattern(data, sizeof data, 0);
    struct brisk_tcp_repr h = tf_peer_hdr(&p, BRISK_TCP_ACK | BRISK_TCP_PSH, 2 * TF_MS);
    assert_int_equal(tf_inject_rx(&t, &h, data, sizeof data, 0x0101, 0, 2 * TF_MS), BRISK_OK);
    assert_int_equal(tf_counters(&t).TcpInCsumErrors, 1);
    assert_int_equal(brisk_recv(c, buf, sizeof buf, 2 * TF_MS), BRISK_ERR_AGAIN);
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_inject_rx(&t, &h, data, sizeof data, 0x0101, 0x80, 2 * TF_MS), BRISK_ERR_INVAL);
    assert_int_equal(tf_inject_rx(&t, &h, data, sizeof data, 0x0101, BRISK_RX_CSUM_VALID, 3 * TF_MS),
                     BRISK_OK);
    assert_int_equal(tf_counters(&t).TcpInCsumErrors, 1);
    assert_int_equal(brisk_recv(c, buf, sizeof buf, 3 * TF_MS), 100);
    assert_memory_equal(buf, data, 100);
    struct brisk_netdev_stats ds;
    brisk_netdev_get_stats(t.f.dev, &ds);
    assert_int_equal(ds.rx_csum_valid, 1);
    TF_EXPECT(&t, 3 * TF_MS, ACK, p.l_iss + 1, p.nxt + 100, 0); /* quick ACK at the start */
    teardown(&t, c, l);
}

/* Zero-copy receive: peek shows the unread bytes in place, contiguous up to a chunk's end, without consuming
 * them; consume takes them as brisk_recv would; bad arguments are refused; the peer's FIN reads as 0. */
static void test_zero_copy_receive(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, NULL);
    brisk_sock *c = setup(&t, &p, &l, 0);
    const uint8_t *d;
    assert_int_equal(brisk_recv_peek(c, 0, &d), BRISK_ERR_AGAIN);
    uint64_t now = 2 * TF_MS;
    for (int i = 0; i < 12; i++) /* 12 x 1460 = 17,520 bytes: more than one 16 KB chunk */
        tf_peer_send_data(&p, 1460, now);
    while (tf_pending(&t))
        tf_take(&t);
    uint8_t want[17520];
    tf_pattern(want, sizeof want, 0);
    int64_t first = brisk_recv_peek(c, 0, &d);
    assert_true(first > 0 && first < 17520); /* the first chunk's worth */
    assert_memory_equal(d, want, (size_t)first);
    int64_t rest = brisk_recv_peek(c, (size_t)first, &d);
    assert_int_equal(first + rest, 17520);
    assert_memory_equal(d, want + first, (size_t)rest);
    assert_int_equal(brisk_recv_peek(c, 17520, &d), BRISK_ERR_AGAIN); /* nothing beyond */
    assert_int_equal(brisk_recv_peek(c, 0, NULL), BRISK_ERR_INVAL);
    assert_int_equal(brisk_recv_consume(c, 17521, now), BRISK_ERR_INVAL);
    assert_int_equal(tf_info(c).bytes_received, 17520); /* peeking consumed nothing */
    assert_int_equal(brisk_recv_consume(c, 1000, now), 1000);
    assert_int_equal(brisk_recv_peek(c, 0, &d), first - 1000);
    assert_memory_equal(d, want + 1000, 100);
    uint8_t buf[20000];
    assert_int_equal(brisk_recv(c, buf, sizeof buf, now), 16520); /* brisk_recv sees the same stream */
    assert_memory_equal(buf, want + 1000, 16520);
    tf_peer_send(&p, BRISK_TCP_ACK | BRISK_TCP_FIN, NULL, 0, 3 * TF_MS);
    assert_int_equal(brisk_recv_peek(c, 0, &d), 0); /* end of stream */
    assert_int_equal(brisk_recv_consume(c, 0, 3 * TF_MS), 0);
    teardown(&t, c, l);
}

static void test_delayed_ack(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, (const char *const[]){"tcp_delack_min=100ms", "tcp_delack_max=100ms", NULL});
    brisk_sock *c = setup(&t, &p, &l, 0);
    uint32_t d = p.l_iss + 1;
    /* The first 16 segments are acknowledged at once (quickack: the peer's slow start needs the ACKs). */
    uint64_t now = TF_MS;
    for (int k = 0; k < 16; k++) {
        tf_peer_send_data(&p, 100, now);
        TF_EXPECT(&t, now, ACK, d, p.nxt, 0);
        now += TF_MS;
    }
    /* Then ACKs wait for the delayed-ACK timer: exactly 100 ms. */
    tf_peer_send_data(&p, 100, now);
    TF_EXPECT_NONE(&t);
    tf_run(&t, now + 100 * TF_MS - 1);
    TF_EXPECT_NONE(&t);
    tf_run(&t, now + 100 * TF_MS);
    TF_EXPECT(&t, now + 100 * TF_MS, ACK, d, p.nxt, 0);
    assert_int_equal(tf_counters(&t).DelayedACKs, 1);
    /* Two small segments: one ACK, 100 ms after the first. */
    now += TF_SEC;
    tf_peer_send_data(&p, 100, now);
    tf_peer_send_data(&p, 100, now + 30 * TF_MS);
    TF_EXPECT_NONE(&t);
    tf_run(&t, now + 100 * TF_MS);
    TF_EXPECT(&t, now + 100 * TF_MS, ACK, d, p.nxt, 0);
    TF_EXPECT_NONE(&t);
    tf_run(&t, now + 1000 * TF_MS);
    TF_EXPECT_NONE(&t);
    /* Every second full-sized segment is acknowledged at once (RFC 5681 §4.2, RFC 1122 §4.2.3.2). */
    now += 2 * TF_SEC;
    tf_peer_send_data(&p, 1460, now);
    TF_EXPECT_NONE(&t);
    tf_peer_send_data(&p, 1460, now + TF_MS);
    TF_EXPECT(&t, now + TF_MS, ACK, d, p.nxt, 0);
    tf_peer_send_data(&p, 1460, now + 2 * TF_MS);
    TF_EXPECT_NONE(&t);
    tf_peer_send_data(&p, 1460, now + 3 * TF_MS);
    TF_EXPECT(&t, now + 3 * TF_MS, ACK, d, p.nxt, 0);
    /* A lone full segment waits for the timer like a small one. */
    tf_peer_send_data(&p, 1460, now + 4 * TF_MS);
    tf_run(&t, now + 104 * TF_MS);
    TF_EXPECT(&t, now + 104 * TF_MS, ACK, d, p.nxt, 0);
    /* Data of ours carries the owed ACK and settles the timer. */
    tf_peer_send_data(&p, 100, now + 200 * TF_MS);
    send_pattern(c, 0, 10, 0, now + 210 * TF_MS);
    TF_EXPECT(&t, now + 210 * TF_MS, ACK | PSH, d, p.nxt, 10);
    p.ack = d + 10;
    tf_peer_send(&p, ACK, NULL, 0, now + 220 * TF_MS); /* a pure ACK owes no ACK */
    tf_run(&t, now + 1000 * TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_counters(&t).DelayedACKs, 3);
    /* QUICKACK: with an ACK owed, setting it sends the ACK at once. */
    tf_peer_send_data(&p, 100, now + 1100 * TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(brisk_setsockopt(c, BRISK_SO_QUICKACK, 1, now + 1101 * TF_MS), BRISK_OK);
    TF_EXPECT(&t, now + 1101 * TF_MS, ACK, d + 10, p.nxt, 0);
    tf_peer_send_data(&p, 100, now + 1102 * TF_MS); /* and the next ones go at once again */
    TF_EXPECT(&t, now + 1102 * TF_MS, ACK, d + 10, p.nxt, 0);
    teardown(&t, c, l);
}

static void test_out_of_order_sack_and_dsack(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, NULL);
    brisk_sock *c = setup(&t, &p, &l, 0);
    uint32_t d = p.l_iss + 1;
    uint32_t r = 1001;                  /* the peer's first data byte */
    tf_peer_send_data(&p, 1000, TF_MS); /* [0, 1000) */
    TF_EXPECT(&t, TF_MS, ACK, d, r + 1000, 0);
    /* [2000, 3000) arrives before [1000, 2000): an immediate duplicate ACK with one SACK block. */
    p.nxt = r + 2000;
    tf_peer_send_data(&p, 1000, 2 * TF_MS);
    struct tf_seg *s = TF_EXPECT(&t, 2 * TF_MS, ACK, d, r + 1000, 0);
    assert_int_equal(s->h.opts.nsack, 1);
    assert_int_equal(s->h.opts.sack[0].start, r + 2000);
    assert_int_equal(s->h.opts.sack[0].end, r + 3000);
    /* [3000, 3500) extends the block; [4000, 4100) makes a second one, listed first (most recent). */
    tf_peer_send_data(&p, 500, 3 * TF_MS);
    s = TF_EXPECT(&t, 3 * TF_MS, ACK, d, r + 1000, 0);
    assert_int_equal(s->h.opts.nsack, 1);
    assert_int_equal(s->h.opts.sack[0].start, r + 2000);
    assert_int_equal(s->h.opts.sack[0].end, r + 3500);
    p.nxt = r + 4000;
    tf_peer_send_data(&p, 100, 4 * TF_MS);
    s = TF_EXPECT(&t, 4 * TF_MS, ACK, d, r + 1000, 0);
    assert_int_equal(s->h.opts.nsack, 2);
    assert_int_equal(s->h.opts.sack[0].start, r + 4000);
    assert_int_equal(s->h.opts.sack[0].end, r + 4100);
    assert_int_equal(s->h.opts.sack[1].start, r + 2000);
    assert_int_equal(s->h.opts.sack[1].end, r + 3500);
    assert_int_equal(tf_counters(&t).TCPOFOQueue, 3);
    uint8_t buf[8000];
    assert_int_equal(brisk_recv(c, buf, sizeof(buf), 4 * TF_MS), 1000);
    assert_int_equal(brisk_recv(c, buf, sizeof(buf), 4 * TF_MS), BRISK_ERR_AGAIN);
    /* The hole [1000, 2000) fills: at once, an ACK of everything contiguous, the other block remains. */
    p.nxt = r + 1000;
    tf_peer_send_data(&p, 1000, 5 * TF_MS);
    s = TF_EXPECT(&t, 5 * TF_MS, ACK, d, r + 3500, 0);
    assert_int_equal(s->h.opts.nsack, 1);
    assert_int_equal(s->h.opts.sack[0].start, r + 4000);
    assert_int_equal(s->h.opts.sack[0].end, r + 4100);
    p.nxt = r + 3500;
    tf_peer_send_data(&p, 500, 6 * TF_MS);
    s = TF_EXPECT(&t, 6 * TF_MS, ACK, d, r + 4100, 0);
    assert_int_equal(s->h.opts.nsack, 0);
    assert_int_equal(brisk_recv(c, buf, sizeof(buf), 6 * TF_MS), 3100);
    uint8_t want[3100];
    tf_pattern(want, sizeof(want), 1000);
    assert_memory_equal(buf, want, 3100);
    /* Reading 3100 bytes opened the window by more than two segments: a window update. */
    s = TF_EXPECT(&t, 6 * TF_MS, ACK, d, r + 4100, 0);
    assert_int_equal(s->h.opts.nsack, 0);
    /* A duplicate of old data: an immediate ACK whose first block is the D-SACK (RFC 2883 §4). */
    p.nxt = r + 1000;
    tf_peer_send_data(&p, 1000, 7 * TF_MS);
    s = TF_EXPECT(&t, 7 * TF_MS, ACK, d, r + 4100, 0);
    assert_int_equal(s->h.opts.nsack, 1);
    assert_int_equal(s->h.opts.sack[0].start, r + 1000);
    assert_int_equal(s->h.opts.sack[0].end, r + 2000);
    /* A segment partly old, partly new: D-SACK for the old part, the new part delivered. */
    p.nxt = r + 4000;
    tf_peer_send_data(&p, 200, 8 * TF_MS);
    s = TF_EXPECT(&t, 8 * TF_MS, ACK, d, r + 4200, 0);
    assert_int_equal(s->h.opts.nsack, 1);
    assert_int_equal(s->h.opts.sack[0].start, r + 4000);
    assert_int_equal(s->h.opts.sack[0].end, r + 4100);
    /* A duplicate of held out-of-order data: D-SACK first, then the SACK block that holds it. */
    p.nxt = r + 5000;
    tf_peer_send_data(&p, 300, 9 * TF_MS);
    tf_take(&t);
    p.nxt = r + 5000;
    tf_peer_send_data(&p, 300, 10 * TF_MS);
    s = TF_EXPECT(&t, 10 * TF_MS, ACK, d, r + 4200, 0);
    assert_int_equal(s->h.opts.nsack, 2);
    assert_int_equal(s->h.opts.sack[0].start, r + 5000);
    assert_int_equal(s->h.opts.sack[0].end, r + 5300);
    assert_int_equal(s->h.opts.sack[1].start, r + 5000);
    assert_int_equal(s->h.opts.sack[1].end, r + 5300);
    /* The D-SACK is reported once: the next ACK has the plain SACK block only. */
    p.nxt = r + 6000;
    tf_peer_send_data(&p, 100, 11 * TF_MS);
    s = TF_EXPECT(&t, 11 * TF_MS, ACK, d, r + 4200, 0);
    assert_int_equal(s->h.opts.nsack, 2);
    assert_int_equal(s->h.opts.sack[0].start, r + 6000);
    assert_int_equal(s->h.opts.sack[1].start, r + 5000);
    assert_true(tf_counters(&t).TCPDSACKSent >= 3);
    teardown(&t, c, l);
}

/* Asserts the SACK option of s: n blocks, given as start, end offsets from r. */
static void expect_sack(const struct tf_seg *s, uint32_t r, int n, const uint32_t (*blocks)[2])
{
    assert_int_equal(s->h.opts.nsack, n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(s->h.opts.sack[i].start, r + blocks[i][0]);
        assert_int_equal(s->h.opts.sack[i].end, r + blocks[i][1]);
    }
}

/* RFC 2883 §4.2: a segment that partly duplicates data held out of order gets a D-SACK block for the
 * duplicated part — the intersection with the first held run it overlaps — then the SACK blocks, the first
 * covering the segment. The same ranges as Linux (tcp_data_queue_ofo, tcp_ofo_queue). */
static void test_dsack_partial_overlap(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, NULL);
    brisk_sock *c = setup(&t, &p, &l, 0);
    uint32_t d = p.l_iss + 1;
    uint32_t r = 1001; /* the peer's first data byte; [0, 1000) never arrives until the end */
    /* Held out of order: [2000, 3000) and [4000, 5000). */
    p.nxt = r + 2000;
    tf_peer_send_data(&p, 1000, TF_MS);
    tf_take(&t);
    p.nxt = r + 4000;
    tf_peer_send_data(&p, 1000, 2 * TF_MS);
    tf_take(&t);
    /* [2500, 3500): starts inside the first run, runs past it. D-SACK [2500, 3000). */
    p.nxt = r + 2500;
    tf_peer_send_data(&p, 1000, 3 * TF_MS);
    struct tf_seg *s = TF_EXPECT(&t, 3 * TF_MS, ACK, d, r, 0);
    expect_sack(s, r, 3, (const uint32_t[][2]){{2500, 3000}, {2000, 3500}, {4000, 5000}});
    /* [3800, 4200): starts in a gap, covers the front of the second run. D-SACK [4000, 4200). */
    p.nxt = r + 3800;
    tf_peer_send_data(&p, 400, 4 * TF_MS);
    s = TF_EXPECT(&t, 4 * TF_MS, ACK, d, r, 0);
    expect_sack(s, r, 3, (const uint32_t[][2]){{4000, 4200}, {3800, 5000}, {2000, 3500}});
    /* [1500, 6000): spans both runs and the gap between them. The D-SACK is one range received twice:
     * the first run it overlaps, [2000, 3500); the rest of what it repeats is in the SACK block. */
    p.nxt = r + 1500;
    tf_peer_send_data(&p, 4500, 5 * TF_MS);
    s = TF_EXPECT(&t, 5 * TF_MS, ACK, d, r, 0);
    expect_sack(s, r, 2, (const uint32_t[][2]){{2000, 3500}, {1500, 6000}});
    /* The next ACK carries no D-SACK. */
    p.nxt = r + 7000;
    tf_peer_send_data(&p, 100, 6 * TF_MS);
    s = TF_EXPECT(&t, 6 * TF_MS, ACK, d, r, 0);
    expect_sack(s, r, 2, (const uint32_t[][2]){{7000, 7100}, {1500, 6000}});
    /* In-order text that runs into held data: [0, 2000) overlaps [1500, 6000) by 500 bytes. The ACK covers
     * everything contiguous, the D-SACK (below it, RFC 2883 §4.1) the duplicated part. */
    p.nxt = r;
    tf_peer_send_data(&p, 2000, 7 * TF_MS);
    s = TF_EXPECT(&t, 7 * TF_MS, ACK, d, r + 6000, 0);
    expect_sack(s, r, 2, (const uint32_t[][2]){{1500, 2000}, {7000, 7100}});
    assert_int_equal(tf_counters(&t).TCPDSACKSent, 4);
    uint8_t buf[8000], want[6000];
    assert_int_equal(brisk_recv(c, buf, sizeof(buf), 8 * TF_MS), 6000);
    tf_pattern(want, sizeof(want), 0);
    assert_memory_equal(buf, want, sizeof(want));
    teardown(&t, c, l);
}

/* An out-of-order FIN is acknowledged at once, like any out-of-order segment (RFC 5681 §4.2), its sequence
 * number in a SACK block as Linux reports it (tcp_data_queue_ofo; brisk reported none), and takes effect
 * when the hole before it fills. */
static void test_out_of_order_fin_acked(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, NULL);
    brisk_sock *c = setup(&t, &p, &l, 0);
    uint32_t d = p.l_iss + 1;
    uint32_t r = 1001;
    tf_peer_send_data(&p, 1000, TF_MS);
    TF_EXPECT(&t, TF_MS, ACK, d, r + 1000, 0);
    /* [1000, 2000) is lost; a bare FIN at 2000 arrives: a duplicate ACK at once. */
    p.nxt = r + 2000;
    tf_peer_send(&p, ACK | FIN, NULL, 0, 2 * TF_MS);
    struct tf_seg *s = TF_EXPECT(&t, 2 * TF_MS, ACK, d, r + 1000, 0);
    assert_int_equal(s->h.opts.nsack, 1);
    assert_int_equal(s->h.opts.sack[0].start, r + 2000);
    assert_int_equal(s->h.opts.sack[0].end, r + 2001);
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_info(c).state, BRISK_TCP_ESTABLISHED);
    /* Its retransmission (a duplicate of what is held) is acknowledged at once as well. */
    p.nxt = r + 2000;
    tf_peer_send(&p, ACK | FIN, NULL, 0, 3 * TF_MS);
    TF_EXPECT(&t, 3 * TF_MS, ACK, d, r + 1000, 0);
    /* The hole fills: the FIN takes effect, and one ACK covers both. */
    p.nxt = r + 1000;
    tf_peer_send_data(&p, 1000, 4 * TF_MS);
    TF_EXPECT(&t, 4 * TF_MS, ACK, d, r + 2001, 0);
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_info(c).state, BRISK_TCP_CLOSE_WAIT);
    teardown(&t, c, l);
}

static void test_receive_window_and_update(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    brisk_sock *l = tf_listen(&t, 80);
    assert_int_equal(brisk_setsockopt(l, BRISK_SO_RCVBUF, 8192, 0), BRISK_OK);
    struct tf_peer p;
    tf_peer_init(&p, &t, 40000, 80, 1000);
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 0;
    struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN, 0);
    h.opts = o;
    tf_inject(&t, &h, NULL, 0, 0);
    struct tf_seg *sa = tf_take(&t);
    assert_int_equal(sa->h.window, 8192);
    assert_true(sa->h.opts.wscale_ok);
    assert_int_equal(sa->h.opts.wscale, 0); /* 8 KB needs no scaling */
    p.l_iss = sa->h.seq;
    p.ack = p.l_iss + 1;
    p.nxt = 1001;
    tf_peer_send(&p, ACK, NULL, 0, 0);
    int err;
    brisk_sock *c = brisk_accept(l, &err);
    assert_non_null(c);
    uint32_t d = p.l_iss + 1;
    /* Unread data shrinks the window byte for byte. */
    uint64_t now = TF_MS;
    for (int k = 1; k <= 8; k++) {
        tf_peer_send_data(&p, 1000, now);
        struct tf_seg *s = TF_EXPECT(&t, now, ACK, d, 1001 + 1000 * (uint32_t)k, 0);
        assert_int_equal(s->h.window, 8192 - 1000 * k);
        now += TF_MS;
    }
    assert_int_equal(tf_info(c).rcv_wnd, 192);
    /* The last 192 bytes close it. */
    tf_peer_send_data(&p, 192, now);
    struct tf_seg *s = TF_EXPECT(&t, now, ACK, d, 9193, 0);
    assert_int_equal(s->h.window, 0);
    struct brisk_counters zc = tf_counters(&t);
    /* A zero-window probe (one byte past the window) is not accepted, but answered with the window. */
    now += 200 * TF_MS;
    tf_peer_send_data(&p, 1, now);
    p.nxt--;
    s = TF_EXPECT(&t, now, ACK, d, 9193, 0);
    assert_int_equal(s->h.window, 0);
    assert_int_equal(tf_info(c).bytes_received, 8192);
    /* Reading less than an MSS is no reason to reopen (receiver SWS avoidance)... */
    uint8_t buf[8192];
    now += TF_MS;
    assert_int_equal(brisk_recv(c, buf, 1000, now), 1000);
    TF_EXPECT_NONE(&t);
    /* ...reading past one MSS is: a window update at once. */
    assert_int_equal(brisk_recv(c, buf, 1000, now), 1000);
    s = TF_EXPECT(&t, now, ACK, d, 9193, 0);
    assert_int_equal(s->h.window, 2000);
    struct brisk_counters fc = tf_counters(&t);
    /* Reading the rest: another update once the window grew by two segments. */
    assert_int_equal(brisk_recv(c, buf, sizeof(buf), now), 6192);
    s = TF_EXPECT(&t, now, ACK, d, 9193, 0);
    assert_int_equal(s->h.window, 8192);
    brisk_abort(c, now);
    tf_take(&t);
    brisk_close(l, now);
    tf_free(&t);
    /* The counters of those two transitions (Linux's TCPToZeroWindowAdv / TCPFromZeroWindowAdv). */
    assert_int_equal(zc.TCPToZeroWindowAdv, 1);
    assert_int_equal(fc.TCPFromZeroWindowAdv, 1);
}

/* The peer closes its window: persist probes at RTO, backing off, until it reopens (RFC 9293 §3.8.6.1,
 * RFC 1122 §4.2.2.17). */
static void test_zero_window_persist(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, NULL);
    brisk_sock *c = setup(&t, &p, &l, 100 * TF_MS); /* RTT 100 ms: RTO = 100 + 4 x 50 = 300 ms */
    assert_int_equal(tf_info(c).rto_ns, 300 * TF_MS);
    uint32_t d = p.l_iss + 1;
    /* 2000 bytes in flight, then the peer acknowledges them all with a zero window. */
    uint64_t t1 = 200 * TF_MS;
    send_pattern(c, 0, 2000, 0, t1);
    TF_EXPECT(&t, t1, ACK, d, 1001, 1460);
    TF_EXPECT(&t, t1, ACK | PSH, d + 1460, 1001, 540);
    send_pattern(c, 2000, 500, 0, t1 + TF_MS); /* queued behind the window */
    p.ack = d + 2000;
    p.win = 0;
    uint64_t t2 = t1 + 100 * TF_MS;
    tf_peer_send(&p, ACK, NULL, 0, t2); /* an RTT sample of 100 ms again: RTO stays 300 ms */
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_info(c).snd_wnd, 0);
    assert_int_equal(tf_info(c).rto_ns, 250 * TF_MS); /* RTTVAR 3/4 x 50 ms: 100 + 4 x 37.5 */
    /* Probes: sequence snd.una - 1, no data, an RTO after the window closed, then 2, 4 x RTO after the
     * peer's answer to the last one, which still says zero (an ACK that leaves the window closed starts the
     * interval again, as Linux's tcp_ack_probe does). */
    uint64_t rto = tf_info(c).rto_ns;
    uint64_t at = t2;
    for (int k = 0; k < 3; k++) {
        at += rto << k;
        tf_run(&t, at - 1);
        TF_EXPECT_NONE(&t);
        tf_run(&t, at);
        TF_EXPECT(&t, at, ACK, d + 2000 - 1, 1001, 0);
        at += 50 * TF_MS;
        tf_peer_send(&p, ACK, NULL, 0, at);
        TF_EXPECT_NONE(&t);
    }
    assert_int_equal(tf_counters(&t).TCPWinProbe, 3);
    /* The window reopens: the queued data goes at once. */
    p.win = 1000;
    uint64_t t3 = at + 100 * TF_MS;
    tf_peer_send(&p, ACK, NULL, 0, t3);
    struct tf_seg *s = TF_EXPECT(&t, t3, ACK | PSH, d + 2000, 1001, 500);
    assert_true(tf_payload_is(s, 2000));
    TF_EXPECT_NONE(&t);
    /* No more probes; an RTO for the new data instead. */
    tf_run(&t, t3 + rto - 1);
    TF_EXPECT_NONE(&t);
    teardown(&t, c, l);
}

/* RFC 1122 §4.2.2.17: "as long as the receiving TCP continues to send acknowledgments in response to the
 * probe segments, the sending TCP MUST allow the connection to stay open." */
static void test_zero_window_kept_open_while_answered(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, (const char *const[]){"tcp_retries2=3", "tcp_rto_max=2s", NULL});
    brisk_sock *c = setup(&t, &p, &l, 100 * TF_MS);
    uint32_t d = p.l_iss + 1;
    p.win = 0;
    tf_peer_send(&p, ACK, NULL, 0, 150 * TF_MS);
    send_pattern(c, 0, 100, 0, 200 * TF_MS);
    TF_EXPECT_NONE(&t);
    /* Ten answered probes (more than tcp_retries2), the interval, counted from the answer to the last one,
     * capped by tcp_rto_max. */
    uint64_t now = 200 * TF_MS, gap = 0;
    for (int k = 0; k < 10; k++) {
        assert_true(tf_run_to_seg(&t, now + 3 * TF_SEC));
        assert_int_equal(tf_info(c).state, BRISK_TCP_ESTABLISHED);
        struct tf_seg *s = tf_take(&t);
        assert_int_equal(s->h.seq, d - 1);
        assert_int_equal(s->len, 0);
        TF_EXPECT_NONE(&t);
        /* The interval doubles, up to tcp_rto_max. */
        uint64_t g = s->at - now;
        if (k > 1)
            assert_true(g == 2 * gap || g == 2 * TF_SEC);
        gap = g;
        now = s->at + 10 * TF_MS;
        tf_peer_send(&p, ACK, NULL, 0, now);
    }
    assert_int_equal(tf_info(c).state, BRISK_TCP_ESTABLISHED);
    teardown(&t, c, l);
}

/* Probes nobody answers: after tcp_retries2 of them the connection fails with BRISK_ERR_TIMEDOUT. */
static void test_zero_window_probes_unanswered_abort(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    tf_init(&t, (const char *const[]){"tcp_retries2=3", NULL});
    brisk_sock *c = setup(&t, &p, &l, 100 * TF_MS); /* RTO 300 ms */
    struct tf_events ev = {0};
    brisk_sock_set_callback(c, tf_events_cb, &ev);
    uint32_t d = p.l_iss + 1;
    p.win = 0;
    tf_peer_send(&p, ACK, NULL, 0, 150 * TF_MS);
    send_pattern(c, 0, 100, 0, 200 * TF_MS);
    /* Probes at 200 ms + 300, + 600, + 1200; the fourth expiry (+ 2400) gives up. */
    static const uint64_t at[] = {500, 1100, 2300};
    for (int k = 0; k < 3; k++) {
        tf_run(&t, at[k] * TF_MS);
        TF_EXPECT(&t, at[k] * TF_MS, ACK, d - 1, 1001, 0);
    }
    tf_run(&t, 4700 * TF_MS - 1);
    assert_int_equal(ev.all, 0);
    tf_run(&t, 4700 * TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(ev.all, BRISK_EV_ERROR | BRISK_EV_CLOSED);
    assert_int_equal(brisk_sock_error(c), BRISK_ERR_TIMEDOUT);
    assert_int_equal(tf_counters(&t).TCPWinProbe, 3);
    assert_int_equal(tf_counters(&t).TCPAbortOnTimeout, 1);
    brisk_close(c, 5 * TF_SEC);
    brisk_close(l, 5 * TF_SEC);
    tf_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_send_segments),
        cmocka_unit_test(test_nagle),
        cmocka_unit_test(test_fin_takes_held_tail),
        cmocka_unit_test(test_nodelay),
        cmocka_unit_test(test_cork),
        cmocka_unit_test(test_msg_more),
        cmocka_unit_test(test_receive_in_order),
        cmocka_unit_test(test_receive_checksum_offload),
        cmocka_unit_test(test_zero_copy_receive),
        cmocka_unit_test(test_delayed_ack),
        cmocka_unit_test(test_out_of_order_sack_and_dsack),
        cmocka_unit_test(test_dsack_partial_overlap),
        cmocka_unit_test(test_out_of_order_fin_acked),
        cmocka_unit_test(test_receive_window_and_update),
        cmocka_unit_test(test_zero_window_persist),
        cmocka_unit_test(test_zero_window_kept_open_while_answered),
        cmocka_unit_test(test_zero_window_probes_unanswered_abort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
