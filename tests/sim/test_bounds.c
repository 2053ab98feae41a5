/*
 * test_bounds.c — memory bounds under hostile load (issue 9): TIME-WAIT buckets (tcp_max_tw_buckets) and a
 * flood of tiny out-of-order segments (tcp_ooo_max_segs, the receive buffer's reassembly memory, the packet
 * pool bound).
 *
 * TIME-WAIT. Each connection that closes first waits 2 MSL in TIME-WAIT, a whole connection struct held for
 * a minute; a host that closes many connections (or a peer that makes it) would hold them without bound. As
 * in Linux, at most tcp_max_tw_buckets connections wait; one that would exceed the bound skips TIME-WAIT —
 * freed at once, counted TCPTimeWaitOverflow.
 *
 * Out-of-order flood. A peer (or an attacker in the window) sends one-byte segments with a gap between each,
 * so none is ever in order and each is a separate reassembly piece. The receiver holds at most
 * tcp_ooo_max_segs pieces and at most twice its free receive buffer in piece memory, drops the rest
 * (TCPOFODrop), keeps the packet pool within its bound — and, once the real data arrives, delivers the stream
 * byte-exact.
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
#define FIN BRISK_TCP_FIN

/* The stack closes first: FIN out, the peer ACKs it and sends its own FIN, the stack ACKs (TIME-WAIT). */
static void active_close(struct tf *t, struct tf_peer *p, brisk_sock *c, uint64_t now)
{
    assert_int_equal(brisk_close(c, now), BRISK_OK);
    TF_EXPECT(t, now, FIN | ACK, p->l_iss + 1, p->nxt, 0);
    p->ack = p->l_iss + 2;
    tf_peer_send(p, FIN | ACK, NULL, 0, now + TF_MS);
    TF_EXPECT(t, now + TF_MS, ACK, p->l_iss + 2, p->nxt, 0);
}

static void test_time_wait_buckets_bounded(void **state)
{
    (void)state;
    static const char *const sets[] = {"tcp_max_tw_buckets=2", "tcp_time_wait=60s", NULL};
    struct tf t;
    tf_init(&t, sets);
    brisk_sock *l = tf_listen(&t, 80);
    struct tf_peer p[5];
    brisk_sock *c[5];
    for (int i = 0; i < 5; i++) {
        tf_peer_init(&p[i], &t, (uint16_t)(40000 + i), 80, 1000u * (uint32_t)(i + 1));
        c[i] = tf_open_passive(&p[i], l, NULL, (uint64_t)(i + 1) * 10 * TF_MS, TF_MS);
    }
    assert_int_equal(brisk_stack_sockets(t.st), 6); /* the listener and five connections */
    /* Two close into TIME-WAIT: within the bound. */
    uint64_t now = TF_SEC;
    for (int i = 0; i < 2; i++)
        active_close(&t, &p[i], c[i], now + (uint64_t)i * 10 * TF_MS);
    tf_run(&t, now + 100 * TF_MS);
    assert_int_equal(t.st->tcp->tw_count, 2);
    assert_int_equal(tf_counters(&t).TCPTimeWaitOverflow, 0);
    assert_int_equal(brisk_stack_sockets(t.st), 6);
    /* The third and fourth find the buckets full: their final ACK still goes out, then they are freed at
     * once (the same virtual instant), counted. */
    for (int i = 2; i < 4; i++) {
        uint64_t at = now + 200 * TF_MS + (uint64_t)i * 10 * TF_MS;
        active_close(&t, &p[i], c[i], at);
        tf_run(&t, at + TF_MS);
    }
    assert_int_equal(tf_counters(&t).TCPTimeWaitOverflow, 2);
    assert_int_equal(t.st->tcp->tw_count, 2);
    assert_int_equal(brisk_stack_sockets(t.st), 4);
    /* The freed ones are gone: the peer's retransmitted FIN meets no connection and is reset. */
    struct brisk_tcp_repr h = tf_peer_hdr(&p[3], FIN | ACK, now + 400 * TF_MS);
    h.seq = p[3].nxt - 1;
    tf_inject(&t, &h, NULL, 0, now + 400 * TF_MS);
    struct tf_seg *s = tf_take(&t);
    assert_true(s->h.flags & BRISK_TCP_RST);
    /* The first two leave TIME-WAIT after 2 MSL; then there is room again. */
    tf_run(&t, now + 61 * TF_SEC);
    assert_int_equal(t.st->tcp->tw_count, 0);
    assert_int_equal(brisk_stack_sockets(t.st), 2);
    active_close(&t, &p[4], c[4], now + 62 * TF_SEC);
    tf_run(&t, now + 62 * TF_SEC + 10 * TF_MS);
    assert_int_equal(t.st->tcp->tw_count, 1);
    assert_int_equal(tf_counters(&t).TCPTimeWaitOverflow, 2);
    assert_int_equal(brisk_stack_sockets(t.st), 2);
    tf_run(&t, now + 130 * TF_SEC);
    assert_int_equal(brisk_stack_sockets(t.st), 1);
    brisk_close(l, t.st->net.now);
    tf_free(&t);
}

/* tcp_max_tw_buckets=0: no connection waits in TIME-WAIT at all. */
static void test_time_wait_buckets_zero(void **state)
{
    (void)state;
    static const char *const sets[] = {"tcp_max_tw_buckets=0", NULL};
    struct tf t;
    tf_init(&t, sets);
    brisk_sock *l = tf_listen(&t, 80);
    struct tf_peer p;
    tf_peer_init(&p, &t, 40000, 80, 1000);
    brisk_sock *c = tf_open_passive(&p, l, NULL, TF_MS, TF_MS);
    active_close(&t, &p, c, TF_SEC);
    tf_run(&t, TF_SEC + TF_MS);
    assert_int_equal(tf_counters(&t).TCPTimeWaitOverflow, 1);
    assert_int_equal(t.st->tcp->tw_count, 0);
    assert_int_equal(brisk_stack_sockets(t.st), 1);
    brisk_close(l, t.st->net.now);
    tf_free(&t);
}

struct flood {
    struct tf t;
    struct tf_peer p;
    brisk_sock *l, *c;
    uint32_t d; /* the peer's first data sequence number */
};

/* `n` one-byte segments at stream offsets 1, 3, 5, ...: byte 0 never arrives, so none is in order. */
static void flood(struct flood *f, uint32_t n, uint64_t now)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t off = 1 + 2 * i;
        uint8_t b = tf_pattern_byte(off);
        struct brisk_tcp_repr h = tf_peer_hdr(&f->p, ACK, now);
        h.seq = f->d + off;
        tf_inject(&f->t, &h, &b, 1, now);
        while (tf_pending(&f->t))
            tf_take(&f->t); /* the duplicate ACKs with SACK blocks */
    }
}

/* Then the real stream, in order, in 1000-byte segments: what was held is kept, the rest fills the gaps. */
static void deliver_and_check(struct flood *f, uint32_t len, uint64_t now)
{
    static uint8_t buf[1 << 17], got[1 << 17];
    assert_true(len <= sizeof(buf));
    tf_pattern(buf, len, 0);
    for (uint32_t off = 0; off < len; off += 1000) {
        uint32_t n = len - off < 1000 ? len - off : 1000;
        struct brisk_tcp_repr h = tf_peer_hdr(&f->p, ACK, now);
        h.seq = f->d + off;
        tf_inject(&f->t, &h, buf + off, n, now);
        while (tf_pending(&f->t))
            tf_take(&f->t);
    }
    int64_t r = brisk_recv(f->c, got, sizeof(got), now);
    assert_int_equal(r, (int64_t)len);
    assert_memory_equal(got, buf, len);
    assert_int_equal(f->c->rcv.ooo.nsegs, 0);
}

static void flood_setup(struct flood *f, const char *const *sets)
{
    memset(f, 0, sizeof(*f));
    tf_init(&f->t, sets);
    f->l = tf_listen(&f->t, 80);
    tf_peer_init(&f->p, &f->t, 40000, 80, 1000);
    f->c = tf_open_passive(&f->p, f->l, NULL, TF_MS, TF_MS);
    f->d = f->p.nxt;
}

static void flood_finish(struct flood *f)
{
    brisk_abort(f->c, f->t.st->net.now);
    while (tf_pending(&f->t))
        tf_take(&f->t);
    brisk_close(f->l, f->t.st->net.now);
    tf_free(&f->t);
}

/* The piece bound: 20000 tiny segments, at most tcp_ooo_max_segs = 256 held, the rest dropped and counted. */
static void test_ooo_flood_bounded_by_segments(void **state)
{
    (void)state;
    static const char *const sets[] = {"tcp_ooo_max_segs=256", NULL};
    struct flood f;
    flood_setup(&f, sets);
    uint64_t pool_before = f.t.st->net.pool.in_use;
    flood(&f, 20000, TF_SEC);
    assert_int_equal(f.c->rcv.ooo.nsegs, 256);
    assert_int_equal(f.c->rcv.ooo.bytes, 256);
    struct brisk_counters k = tf_counters(&f.t);
    assert_int_equal(k.TCPOFOQueue, 256);
    assert_int_equal(k.TCPOFODrop, 20000 - 256);
    /* Pool use: the held pieces, nothing else accumulates. */
    assert_true(f.t.st->net.pool.in_use <= pool_before + 256);
    assert_true(f.c->rcv.ooo.mem <= 2ull * f.c->rcv.rcvbuf);
    deliver_and_check(&f, 40000, TF_SEC + TF_MS);
    flood_finish(&f);
}

/* The memory bound: with a small receive buffer the piece memory (truesize, not payload) runs out first. */
static void test_ooo_flood_bounded_by_rcvbuf(void **state)
{
    (void)state;
    static const char *const sets[] = {"tcp_rcvbuf=65536", "tcp_ooo_max_segs=100000", NULL};
    struct flood f;
    flood_setup(&f, sets);
    flood(&f, 20000, TF_SEC);
    uint32_t held = f.c->rcv.ooo.nsegs;
    assert_true(held > 0);
    assert_true(held < 20000);
    assert_true(f.c->rcv.ooo.mem <= 2ull * 65536);
    struct brisk_counters k = tf_counters(&f.t);
    assert_int_equal(k.TCPOFOQueue + k.TCPOFODrop, 20000);
    assert_int_equal(k.TCPOFOQueue, held);
    assert_true(f.t.st->net.pool.bytes <= f.t.st->net.pool.bytes_limit);
    assert_int_equal(k.PktAllocFails, 0); /* the connection's bound stopped it, not the pool */
    deliver_and_check(&f, 40000, TF_SEC + TF_MS);
    flood_finish(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_wait_buckets_bounded),
        cmocka_unit_test(test_time_wait_buckets_zero),
        cmocka_unit_test(test_ooo_flood_bounded_by_segments),
        cmocka_unit_test(test_ooo_flood_bounded_by_rcvbuf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
