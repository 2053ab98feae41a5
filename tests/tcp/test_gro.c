/*
 * test_gro.c — receive coalescing (src/net/gro.c, brisk_stack_input_batch, brisk_tcp_input_gro): a batch of
 * in-order segments of one connection becomes one segment for TCP — one ACK, every byte in order — and
 * anything that would change the meaning (a gap, a different header, PSH, a bad checksum, no socket) splits
 * the run or takes the per-frame path. The ACKs a batch owes for in-order data are held to its end: one
 * cumulative ACK per connection, unless something needs one at once. Each case also checks the bytes the
 * application reads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "brisk/netdev.h"
#include "stack/stack.h"
#include "support/tcpforge.h"
#include "tcp/tcp.h"

#define ACK BRISK_TCP_ACK
#define PSH BRISK_TCP_PSH
#define M   1448u /* the peer's segments: MSS 1460 less the timestamp option */

struct batch {
    uint8_t *frame[64];
    struct brisk_rx_frame v[64];
    size_t n;
};

/* Peer p's segment [off, off + len) of its stream (pattern bytes), with `flags`, as the next frame. */
static void add_from(struct batch *b, struct tf *t, const struct tf_peer *p, uint32_t off, uint32_t len,
                     uint8_t flags, uint16_t csum_xor, uint64_t now)
{
    struct brisk_tcp_repr h = tf_peer_hdr(p, flags, now);
    h.seq = p->iss + 1 + off;
    uint8_t *data = malloc(len ? len : 1);
    assert_non_null(data);
    tf_pattern(data, len, off);
    b->frame[b->n] = tf_frame(t, &h, data, len, csum_xor, &b->v[b->n].len);
    b->v[b->n].data = b->frame[b->n];
    b->v[b->n].flags = 0;
    b->n++;
    free(data);
}

/* The same from the fixture's peer. */
static void add(struct batch *b, struct tf_conn *f, uint32_t off, uint32_t len, uint8_t flags,
                uint16_t csum_xor, uint64_t now)
{
    add_from(b, &f->t, &f->p, off, len, flags, csum_xor, now);
}

/* A second connection, from peer port 40001 (ISS 5000), accepted at 100 ms. */
static brisk_sock *second(struct tf_conn *f, struct tf_peer *q)
{
    tf_peer_init(q, &f->t, 40001, 80, 5000);
    return tf_open_passive(q, f->l, NULL, 100 * TF_MS, 10 * TF_MS);
}

static void feed(struct batch *b, struct tf_conn *f, uint64_t now)
{
    assert_int_equal(brisk_stack_input_batch(f->t.st, f->t.f.dev, b->v, b->n, now), BRISK_OK);
    tf_collect(&f->t);
    for (size_t i = 0; i < b->n; i++)
        free(b->frame[i]);
    b->n = 0;
}

/* The application reads exactly `len` bytes, the peer's stream from `off`. */
static void expect_read(brisk_sock *c, uint64_t off, size_t len, uint64_t now)
{
    uint8_t *got = malloc(len + 1), *want = malloc(len + 1);
    assert_non_null(got);
    assert_non_null(want);
    assert_int_equal(brisk_recv(c, got, len + 1, now), (int)len);
    tf_pattern(want, len, off);
    assert_memory_equal(got, want, len);
    free(got);
    free(want);
}

static struct brisk_netdev_stats dev_stats(struct tf_conn *f)
{
    struct brisk_netdev_stats s;
    brisk_netdev_get_stats(f->t.f.dev, &s);
    return s;
}

static void setup(struct tf_conn *f, const char *const *sets)
{
    tf_conn_open(f, sets, NULL, NULL, 10 * TF_MS);
}

/* Ten back-to-back segments: one segment for TCP, one ACK for all of them (a 14 KB segment carries more than
 * two full-sized segments), every counter still counting frames. With gro off the same batch is ten
 * segments: ten ACKs (quick-ACK mode after the handshake). */
static void test_run_joins(void **state)
{
    (void)state;
    for (int gro = 1; gro >= 0; gro--) {
        struct tf_conn f;
        setup(&f, gro ? NULL : (const char *const[]){"gro=0", NULL});
        struct brisk_counters c0 = tf_counters(&f.t);
        struct batch b = {.n = 0};
        uint64_t t1 = TF_SEC;
        for (uint32_t k = 0; k < 10; k++)
            add(&b, &f, k * M, M, ACK, 0, t1);
        feed(&b, &f, t1);
        if (gro) {
            TF_EXPECT(&f.t, t1, ACK, f.d, 1001 + 10 * M, 0);
        } else {
            for (uint32_t k = 1; k <= 10; k++)
                TF_EXPECT(&f.t, t1, ACK, f.d, 1001 + k * M, 0);
        }
        TF_EXPECT_NONE(&f.t);
        struct brisk_counters c1 = tf_counters(&f.t);
        assert_int_equal(c1.TcpInSegs - c0.TcpInSegs, 10);
        assert_int_equal(c1.EthInFrames - c0.EthInFrames, 10);
        assert_int_equal(c1.IpInDelivers - c0.IpInDelivers, 10);
        struct brisk_netdev_stats ds = dev_stats(&f);
        assert_int_equal(ds.rx_gro_segs, gro ? 1 : 0);
        assert_int_equal(ds.rx_gro_merged, gro ? 9 : 0);
        assert_int_equal(tf_info(f.c).segs_in, 1 + 10); /* the handshake's ACK, then ten */
        expect_read(f.c, 0, 10 * M, t1);
        tf_conn_close(&f);
    }
}

/* PSH ends a run (the sender marked a boundary), and a run never passes 64 KB of text; the batch still owes
 * one ACK, sent at its end. */
static void test_psh_and_size_end_runs(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    struct batch b = {.n = 0};
    uint64_t t1 = TF_SEC;
    for (uint32_t k = 0; k < 6; k++)
        add(&b, &f, k * M, M, k == 3 ? ACK | PSH : ACK, 0, t1);
    feed(&b, &f, t1);
    TF_EXPECT(&f.t, t1, ACK, f.d, 1001 + 6 * M, 0);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(dev_stats(&f).rx_gro_segs, 2);
    assert_int_equal(dev_stats(&f).rx_gro_merged, 4);
    /* 50 segments of 1448 bytes: the first 45 fit 64 KB (65,160 bytes), the other 5 are the next run. */
    uint64_t t2 = 2 * TF_SEC;
    for (uint32_t k = 6; k < 56; k++)
        add(&b, &f, k * M, M, ACK, 0, t2);
    feed(&b, &f, t2);
    TF_EXPECT(&f.t, t2, ACK, f.d, 1001 + 56 * M, 0);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(dev_stats(&f).rx_gro_segs, 4);
    assert_int_equal(dev_stats(&f).rx_gro_merged, 4 + 44 + 4);
    expect_read(f.c, 0, 56 * M, t2);
    tf_conn_close(&f);
}

/* Headers that differ in anything but the sequence number split the run: another window, another
 * acknowledgment, another timestamp. Each part is still one segment, in order. */
static void test_header_change_splits(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    struct batch b = {.n = 0};
    uint64_t t1 = TF_SEC;
    add(&b, &f, 0, M, ACK, 0, t1);
    add(&b, &f, M, M, ACK, 0, t1);
    /* a new window */
    f.p.win = 1000;
    add(&b, &f, 2 * M, M, ACK, 0, t1);
    add(&b, &f, 3 * M, M, ACK, 0, t1);
    /* a later timestamp */
    add(&b, &f, 4 * M, M, ACK, 0, t1 + 5 * TF_MS);
    feed(&b, &f, t1 + 5 * TF_MS);
    TF_EXPECT(&f.t, t1 + 5 * TF_MS, ACK, f.d, 1001 + 5 * M, 0); /* three segments, one ACK */
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(dev_stats(&f).rx_gro_segs, 2);
    assert_int_equal(dev_stats(&f).rx_gro_merged, 2);
    assert_int_equal(tf_info(f.c).snd_wnd, 1000u << 7); /* the window of the segments that carried it */
    expect_read(f.c, 0, 5 * M, t1 + 5 * TF_MS);
    tf_conn_close(&f);
}

/* A gap: the run before it goes in order, the run after it to reassembly as one segment (one SACK block for
 * both frames), and its ACK goes at once — carrying the one the first run owed; the frame that fills the
 * hole brings everything in order. */
static void test_gap_and_reassembly(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    struct batch b = {.n = 0};
    uint64_t t1 = TF_SEC;
    add(&b, &f, 0, M, ACK, 0, t1);
    add(&b, &f, M, M, ACK, 0, t1);
    add(&b, &f, 3 * M, M, ACK, 0, t1); /* [2M, 3M) is missing */
    add(&b, &f, 4 * M, M, ACK, 0, t1);
    add(&b, &f, 5 * M, M, ACK, 0, t1);
    feed(&b, &f, t1);
    struct tf_seg *s = TF_EXPECT(&f.t, t1, ACK, f.d, 1001 + 2 * M, 0);
    assert_int_equal(s->h.opts.nsack, 1);
    assert_int_equal(s->h.opts.sack[0].start, 1001 + 3 * M);
    assert_int_equal(s->h.opts.sack[0].end, 1001 + 6 * M);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(dev_stats(&f).rx_gro_segs, 2);
    assert_int_equal(tf_counters(&f.t).TCPOFOQueue, 1);
    add(&b, &f, 2 * M, M, ACK, 0, t1 + TF_MS);
    feed(&b, &f, t1 + TF_MS);
    TF_EXPECT(&f.t, t1 + TF_MS, ACK, f.d, 1001 + 6 * M, 0);
    TF_EXPECT_NONE(&f.t);
    expect_read(f.c, 0, 6 * M, t1 + TF_MS);
    tf_conn_close(&f);
}

/* A run that starts with bytes already received: the old part is trimmed across the frame boundary (and
 * reported as a D-SACK), the new bytes are appended from the middle of the second frame on. */
static void test_overlap_trimmed_across_frames(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    struct batch b = {.n = 0};
    uint64_t t1 = TF_SEC;
    add(&b, &f, 0, 1400, ACK | PSH, 0, t1);
    feed(&b, &f, t1);
    TF_EXPECT(&f.t, t1, ACK, f.d, 1001 + 1400, 0);
    add(&b, &f, 0, 1000, ACK, 0, t1 + TF_MS);
    add(&b, &f, 1000, 1000, ACK, 0, t1 + TF_MS);
    add(&b, &f, 2000, 1000, ACK, 0, t1 + TF_MS);
    feed(&b, &f, t1 + TF_MS);
    struct tf_seg *s = TF_EXPECT(&f.t, t1 + TF_MS, ACK, f.d, 1001 + 3000, 0);
    assert_int_equal(s->h.opts.nsack, 1); /* D-SACK: the duplicate part */
    assert_int_equal(s->h.opts.sack[0].start, 1001);
    assert_int_equal(s->h.opts.sack[0].end, 1001 + 1400);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(dev_stats(&f).rx_gro_segs, 1);
    expect_read(f.c, 0, 3000, t1 + TF_MS);
    tf_conn_close(&f);
}

/* More than the window offers: the run is trimmed at the window's edge like one large segment would be; the
 * rest comes again. */
static void test_trimmed_at_window(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, (const char *const[]){"tcp_rcvbuf=8192", NULL});
    uint32_t space = tcp_rcv_space(f.c);
    assert_true(space < 8 * M);
    struct batch b = {.n = 0};
    uint64_t t1 = TF_SEC;
    for (uint32_t k = 0; k < 8; k++)
        add(&b, &f, k * M, M, ACK, 0, t1);
    feed(&b, &f, t1);
    TF_EXPECT(&f.t, t1, ACK, f.d, 1001 + space, 0);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_counters(&f.t).TCPRcvQDrop, 1);
    expect_read(f.c, 0, space, t1);
    tf_conn_close(&f);
}

/* Frames that cannot join take the per-frame path: a bad checksum is dropped and counted there, a pure ACK
 * and a FIN end the run before them; nothing is reordered. The FIN's ACK goes at once and acknowledges
 * everything before it too. */
static void test_other_frames_in_order(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    struct batch b = {.n = 0};
    uint64_t t1 = TF_SEC;
    add(&b, &f, 0, M, ACK, 0, t1);
    add(&b, &f, M, M, ACK, 0xbad, t1); /* corrupted */
    add(&b, &f, M, M, ACK, 0, t1);     /* its retransmission, intact */
    add(&b, &f, 2 * M, 0, ACK, 0, t1); /* a pure ACK */
    add(&b, &f, 2 * M, M, ACK, 0, t1);
    add(&b, &f, 3 * M, 0, ACK | BRISK_TCP_FIN, 0, t1);
    feed(&b, &f, t1);
    TF_EXPECT(&f.t, t1, ACK, f.d, 1001 + 3 * M + 1, 0); /* the FIN */
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_counters(&f.t).TcpInCsumErrors, 1);
    assert_int_equal(dev_stats(&f).rx_gro_segs, 0);
    expect_read(f.c, 0, 3 * M, t1);
    assert_int_equal(brisk_recv(f.c, (uint8_t[1]){0}, 1, t1), 0); /* EOF */
    tf_conn_close(&f);
}

/* Frames of two connections interleaved (A B A B ...): each connection's frames still join its own run —
 * frames of other connections in between do not end it — and each gets one ACK. */
static void test_interleaved_connections(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    struct tf_peer q;
    brisk_sock *c2 = second(&f, &q);
    struct batch b = {.n = 0};
    uint64_t t1 = TF_SEC;
    for (uint32_t k = 0; k < 5; k++) {
        add(&b, &f, k * M, M, ACK, 0, t1);
        add_from(&b, &f.t, &q, k * M, M, ACK, 0, t1);
    }
    feed(&b, &f, t1);
    TF_EXPECT(&f.t, t1, ACK, f.d, 1001 + 5 * M, 0); /* the older run first */
    TF_EXPECT(&f.t, t1, ACK, q.l_iss + 1, 5001 + 5 * M, 0);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(dev_stats(&f).rx_gro_segs, 2);
    assert_int_equal(dev_stats(&f).rx_gro_merged, 8);
    expect_read(f.c, 0, 5 * M, t1);
    expect_read(c2, 0, 5 * M, t1);
    brisk_abort(c2, t1);
    tf_conn_close(&f);
}

/* Eight connections take turns, one frame each, twice: their frames join eight runs. A ninth connection's
 * frame then needs a slot: the oldest run (connection 0's) goes to TCP to make room. Every byte arrives in
 * order; every connection gets one ACK. */
static void test_more_connections_than_runs(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    enum { N = 9 };
    struct tf_peer q[N];
    brisk_sock *c[N];
    for (int i = 0; i < N; i++) {
        tf_peer_init(&q[i], &f.t, (uint16_t)(41000 + i), 80, 7000u + 100000u * (uint32_t)i);
        c[i] = tf_open_passive(&q[i], f.l, NULL, (uint64_t)(100 + 20 * i) * TF_MS, 10 * TF_MS);
    }
    struct batch b = {.n = 0};
    uint64_t t1 = TF_SEC;
    for (uint32_t k = 0; k < 2; k++)
        for (int i = 0; i < N - 1; i++)
            add_from(&b, &f.t, &q[i], k * M, M, ACK, 0, t1);
    add_from(&b, &f.t, &q[N - 1], 0, M, ACK, 0, t1);
    feed(&b, &f, t1);
    struct brisk_netdev_stats ds = dev_stats(&f);
    assert_int_equal(ds.rx_gro_segs, N - 1); /* connections 0..7: two frames each */
    assert_int_equal(ds.rx_gro_merged, N - 1);
    for (int i = 0; i < N; i++) { /* one ACK each, in the order their runs went to TCP */
        struct tf_seg *s = tf_take(&f.t);
        assert_int_equal(s->h.flags, ACK);
        assert_int_equal(s->h.ack, q[i].iss + 1 + (i < N - 1 ? 2 * M : M));
    }
    TF_EXPECT_NONE(&f.t);
    for (int i = 0; i < N; i++) {
        expect_read(c[i], 0, i < N - 1 ? 2 * M : M, t1);
        brisk_abort(c[i], t1);
    }
    tf_conn_close(&f);
}

/* A connection freed in the middle of a batch: closed by the application already, it is reset by the data
 * the batch brings (new data after close: a RST, RFC 1122 §4.2.2.13) and freed there and then, so its later
 * frames find no connection and its memory is not touched after it is gone (the sanitizer build checks).
 * Another connection's held ACK still goes out. */
static void test_held_ack_of_reset_connection(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    struct tf_peer q;
    brisk_sock *c2 = second(&f, &q);
    struct batch b = {.n = 0};
    uint64_t t1 = TF_SEC;
    assert_int_equal(brisk_close(f.c, t1), BRISK_OK);
    TF_EXPECT(&f.t, t1, ACK | BRISK_TCP_FIN, f.d, 1001, 0);
    f.c = NULL; /* orphaned: the reset below frees it in the middle of the batch */
    assert_int_equal(brisk_stack_sockets(f.t.st), 3);
    add(&b, &f, 0, M, ACK, 0, t1);
    add(&b, &f, M, M, ACK, 0, t1);
    add(&b, &f, 2 * M, 0, BRISK_TCP_RST, 0, t1);
    /* the other connection's segments, after the reset */
    add_from(&b, &f.t, &q, 0, M, ACK, 0, t1);
    add_from(&b, &f.t, &q, M, M, ACK, 0, t1);
    feed(&b, &f, t1);
    TF_EXPECT(&f.t, t1, BRISK_TCP_RST, f.d, 0, 0); /* the coalesced data: a RST in reply (SEQ = its ACK) */
    TF_EXPECT(&f.t, t1, ACK, q.l_iss + 1, 5001 + 2 * M, 0);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(brisk_stack_sockets(f.t.st), 2); /* the listener and c2 */
    expect_read(c2, 0, 2 * M, t1);
    brisk_abort(c2, t1);
    tf_conn_close(&f);
}

/* No connection owns the run: each frame is answered on its own (a RST each), as without coalescing. */
static void test_no_socket_per_frame(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    struct batch b = {.n = 0};
    uint64_t t1 = TF_SEC;
    f.p.lport = 81; /* nobody listens */
    for (uint32_t k = 0; k < 3; k++)
        add(&b, &f, k * M, M, ACK, 0, t1);
    struct brisk_counters c0 = tf_counters(&f.t);
    feed(&b, &f, t1);
    for (uint32_t k = 0; k < 3; k++)
        TF_EXPECT(&f.t, t1, BRISK_TCP_RST, f.p.ack, 0, 0);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_counters(&f.t).TcpNoPort - c0.TcpNoPort, 3);
    assert_int_equal(dev_stats(&f).rx_gro_segs, 0);
    f.p.lport = 80;
    tf_conn_close(&f);
}

/* Bad arguments are refused before any frame is taken. */
static void test_bad_arguments(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    struct batch b = {.n = 0};
    add(&b, &f, 0, M, ACK, 0, TF_SEC);
    add(&b, &f, M, M, ACK, 0, TF_SEC);
    struct brisk_counters c0 = tf_counters(&f.t);
    b.v[1].flags = 0x80;
    assert_int_equal(brisk_stack_input_batch(f.t.st, f.t.f.dev, b.v, b.n, TF_SEC), BRISK_ERR_INVAL);
    b.v[1].flags = 0;
    b.v[1].data = NULL;
    assert_int_equal(brisk_stack_input_batch(f.t.st, f.t.f.dev, b.v, b.n, TF_SEC), BRISK_ERR_INVAL);
    b.v[1].data = b.frame[1];
    assert_int_equal(brisk_stack_input_batch(f.t.st, f.t.f.dev, NULL, 1, TF_SEC), BRISK_ERR_INVAL);
    assert_int_equal(brisk_stack_input_batch(NULL, f.t.f.dev, b.v, b.n, TF_SEC), BRISK_ERR_INVAL);
    assert_int_equal(brisk_stack_input_batch(f.t.st, NULL, b.v, b.n, TF_SEC), BRISK_ERR_INVAL);
    assert_int_equal(brisk_stack_input_batch(f.t.st, f.t.f.dev, NULL, 0, TF_SEC), BRISK_OK);
    assert_int_equal(tf_counters(&f.t).EthInFrames, c0.EthInFrames);
    TF_EXPECT_NONE(&f.t);
    feed(&b, &f, TF_SEC);
    TF_EXPECT(&f.t, TF_SEC, ACK, f.d, 1001 + 2 * M, 0);
    expect_read(f.c, 0, 2 * M, TF_SEC);
    tf_conn_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_joins),
        cmocka_unit_test(test_psh_and_size_end_runs),
        cmocka_unit_test(test_header_change_splits),
        cmocka_unit_test(test_gap_and_reassembly),
        cmocka_unit_test(test_overlap_trimmed_across_frames),
        cmocka_unit_test(test_trimmed_at_window),
        cmocka_unit_test(test_other_frames_in_order),
        cmocka_unit_test(test_held_ack_of_reset_connection),
        cmocka_unit_test(test_interleaved_connections),
        cmocka_unit_test(test_more_connections_than_runs),
        cmocka_unit_test(test_no_socket_per_frame),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
