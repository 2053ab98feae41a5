/*
 * test_syncookie.c — SYN cookies (src/tcp/syncookie.c, RFC 4987 §3.6), white-box with forged segments: a SYN
 * that finds the SYN queue full gets a stateless cookie SYN-ACK; the peer's ACK with the right cookie makes
 * an ESTABLISHED child on the accept queue with the MSS, window scale, SACK and timestamps the cookie
 * carried; a wrong, aged or misdirected cookie is refused and counted; tcp_syncookies=2 answers every SYN
 * with a cookie and 0 never does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "stack/stack.h"
#include "support/tcpforge.h"
#include "tcp/syncookie.h"
#include "tcp/tcp.h"

#define SYN BRISK_TCP_SYN
#define ACK BRISK_TCP_ACK
#define RST BRISK_TCP_RST
#define PSH BRISK_TCP_PSH

/* The peer's SYN with options `o` at `now`; returns the SYN-ACK (asserted to acknowledge the SYN). */
static struct tf_seg *syn_to(struct tf_peer *p, const struct brisk_tcp_opts *o, uint32_t tsval, uint64_t now)
{
    p->nxt = p->iss;
    struct brisk_tcp_repr h = tf_peer_hdr(p, SYN, now);
    h.opts = *o;
    h.opts.ts_val = tsval;
    h.opts.ts_ecr = 0;
    tf_inject(p->t, &h, NULL, 0, now);
    p->nxt = p->iss + 1;
    struct tf_seg *sa = tf_take(p->t);
    assert_int_equal(sa->h.flags, SYN | ACK);
    assert_int_equal(sa->h.ack, p->iss + 1);
    assert_int_equal(sa->at, now);
    return sa;
}

/* The peer's third segment: ACK of `cookie`, echoing `tsecr` when the peer uses timestamps. */
static void ack_cookie(struct tf_peer *p, uint32_t cookie, int ts, uint32_t tsval, uint32_t tsecr,
                       uint64_t now)
{
    p->ack = cookie + 1;
    struct brisk_tcp_repr h = tf_peer_hdr(p, ACK, now);
    if (ts) {
        h.opts.ts_ok = 1;
        h.opts.ts_val = tsval;
        h.opts.ts_ecr = tsecr;
    }
    tf_inject(p->t, &h, NULL, 0, now);
}

static void test_cookie_when_syn_queue_full(void **state)
{
    (void)state;
    struct tf t;
    const char *sets[] = {"tcp_max_syn_backlog=2", NULL};
    tf_init(&t, sets);
    brisk_sock *l = tf_listen(&t, 80);
    struct brisk_tcp_opts full = tf_opts_full();
    /* Two SYNs fill the SYN queue the ordinary way. */
    struct tf_peer p1, p2, p3;
    tf_peer_init(&p1, &t, 40001, 80, 1000);
    tf_peer_init(&p2, &t, 40002, 80, 2000);
    syn_to(&p1, &full, 10, TF_MS);
    syn_to(&p2, &full, 10, TF_MS);
    assert_int_equal(brisk_stack_sockets(t.st), 3);
    assert_int_equal(tf_counters(&t).SyncookiesSent, 0);

    /* The third gets a cookie: a SYN-ACK, and no state. */
    tf_peer_init(&p3, &t, 40003, 80, 0x7ffffff0u);
    uint64_t t0 = 2 * TF_MS;
    struct tf_seg *sa = syn_to(&p3, &full, 5555, t0);
    assert_int_equal(brisk_stack_sockets(t.st), 3);
    struct brisk_counters c = tf_counters(&t);
    assert_int_equal(c.SyncookiesSent, 1);
    assert_int_equal(c.ListenOverflows, 0);
    assert_int_equal(c.TcpPassiveOpens, 2);
    /* It offers what it will honour: our MSS, our scale, SACK, and a TSval carrying the peer's scale (7)
     * and SACK-permitted (bit 4) in its low bits, never ahead of the clock. */
    assert_true(sa->h.opts.mss_ok);
    assert_int_equal(sa->h.opts.mss, 1460);
    assert_true(sa->h.opts.wscale_ok);
    assert_int_equal(sa->h.opts.wscale, 7);
    assert_true(sa->h.opts.sack_perm);
    assert_true(sa->h.opts.ts_ok);
    assert_int_equal(sa->h.opts.ts_ecr, 5555);
    assert_int_equal(sa->h.opts.ts_val & 0x1f, 7 | 0x10);
    assert_int_equal(sa->h.window, 65535);
    uint32_t cookie = sa->h.seq;
    uint32_t cookie_tsval = sa->h.opts.ts_val;
    assert_int_equal((cookie >> 27) & 7, 7); /* MSS index: 1460 */
    TF_EXPECT_NONE(&t);

    /* The ACK, 10 ms later: an ESTABLISHED child with every option, on the accept queue. */
    uint64_t t1 = t0 + 10 * TF_MS;
    ack_cookie(&p3, cookie, 1, 5556, cookie_tsval, t1);
    TF_EXPECT_NONE(&t);
    c = tf_counters(&t);
    assert_int_equal(c.SyncookiesRecv, 1);
    assert_int_equal(c.SyncookiesFailed, 0);
    assert_int_equal(c.TcpPassiveOpens, 3);
    int err;
    brisk_sock *s = brisk_accept(l, &err);
    assert_non_null(s);
    struct brisk_conn_info i = tf_info(s);
    assert_int_equal(i.state, BRISK_TCP_ESTABLISHED);
    assert_int_equal(i.rport, 40003);
    assert_true(i.ts_ok && i.sack_ok && i.ws_ok);
    assert_int_equal(i.snd_wscale, 7);
    assert_int_equal(i.rcv_wscale, 7);
    assert_int_equal(i.mss, 1460 - 12);
    assert_int_equal(i.snd_wnd, 65535u << 7);
    /* The other two are still half-open: the SYN queue is untouched. */
    assert_null(brisk_accept(l, &err));

    /* It works as any connection: data in is acknowledged with a scaled window and a TSval that continues
     * from the SYN-ACK's; data out goes in 1448-byte segments from the cookie ISN + 1. */
    p3.ts = 1;
    p3.ts_base = 5556 - (uint32_t)(t1 / TF_MS);
    uint64_t t2 = t1 + TF_MS;
    tf_peer_send_data(&p3, 100, t2);
    struct tf_seg *a = TF_EXPECT(&t, t2, ACK, cookie + 1, p3.nxt, 0);
    assert_true(a->h.opts.ts_ok);
    assert_true((int32_t)(a->h.opts.ts_val - cookie_tsval) >= 0);
    assert_true(a->h.opts.ts_val - cookie_tsval <= 32 + 12);
    assert_int_equal(a->h.window, (4u << 20) >> 7);
    uint8_t buf[3000];
    tf_pattern(buf, sizeof(buf), 0);
    assert_int_equal(brisk_send(s, buf, sizeof(buf), 0, t2), 3000);
    struct tf_seg *d = TF_EXPECT(&t, t2, ACK, cookie + 1, p3.nxt, 1448);
    assert_true(tf_payload_is(d, 0));
    TF_EXPECT(&t, t2, ACK, cookie + 1 + 1448, p3.nxt, 1448);
    TF_EXPECT(&t, t2, ACK | PSH, cookie + 1 + 2896, p3.nxt, 104);
    brisk_abort(s, t2);
    TF_EXPECT(&t, t2, RST | ACK, cookie + 3001, p3.nxt, 0);
    brisk_close(l, t2);
    tf_free(&t);
}

static void test_cookie_without_timestamps(void **state)
{
    (void)state;
    struct tf t;
    const char *sets[] = {"tcp_syncookies=2", NULL};
    tf_init(&t, sets);
    brisk_sock *l = tf_listen(&t, 80);
    struct tf_peer p;
    tf_peer_init(&p, &t, 40010, 80, 77);
    /* MSS 1380, scale and SACK but no timestamps: the cookie keeps the MSS (the table's 1360) and the
     * SYN-ACK offers neither scale nor SACK, which it could not remember. */
    struct brisk_tcp_opts o = {.mss_ok = 1, .mss = 1380, .wscale_ok = 1, .wscale = 5, .sack_perm = 1};
    struct tf_seg *sa = syn_to(&p, &o, 0, TF_MS);
    assert_int_equal(brisk_stack_sockets(t.st), 1);
    assert_true(sa->h.opts.mss_ok);
    assert_false(sa->h.opts.wscale_ok);
    assert_false(sa->h.opts.sack_perm);
    assert_false(sa->h.opts.ts_ok);
    uint32_t cookie = sa->h.seq;
    assert_int_equal(brisk_syncookie_mss[(cookie >> 27) & 7], 1360);
    p.win = 30000;
    ack_cookie(&p, cookie, 0, 0, 0, 2 * TF_MS);
    int err;
    brisk_sock *s = brisk_accept(l, &err);
    assert_non_null(s);
    struct brisk_conn_info i = tf_info(s);
    assert_int_equal(i.state, BRISK_TCP_ESTABLISHED);
    assert_false(i.ts_ok || i.sack_ok || i.ws_ok);
    assert_int_equal(i.mss, 1360);
    assert_int_equal(i.snd_wnd, 30000);
    /* A peer MSS below every table entry but the first gets the first. */
    struct tf_peer q;
    tf_peer_init(&q, &t, 40011, 80, 99);
    o.mss = 500;
    sa = syn_to(&q, &o, 0, 3 * TF_MS);
    assert_int_equal(brisk_syncookie_mss[(sa->h.seq >> 27) & 7], 216);
    brisk_abort(s, 3 * TF_MS);
    tf_pending(&t);
    brisk_close(l, 3 * TF_MS);
    tf_free(&t);
}

static void test_bad_cookies_rejected(void **state)
{
    (void)state;
    struct tf t;
    const char *sets[] = {"tcp_syncookies=2", NULL};
    tf_init(&t, sets);
    brisk_sock *l = tf_listen(&t, 80);
    struct brisk_tcp_opts full = tf_opts_full();
    struct tf_peer p;
    tf_peer_init(&p, &t, 40020, 80, 5000);
    uint64_t t0 = 1 * TF_SEC;
    struct tf_seg *sa = syn_to(&p, &full, 10, t0);
    uint32_t cookie = sa->h.seq, tsv = sa->h.opts.ts_val;
    int err;

    /* Off by one in the acknowledgment: a RST (as for any stray ACK to a listener), no connection. */
    ack_cookie(&p, cookie + 1, 1, 11, tsv, t0 + TF_MS);
    TF_EXPECT(&t, t0 + TF_MS, RST, cookie + 2, 0, 0);
    assert_int_equal(tf_counters(&t).SyncookiesFailed, 1);
    /* The right cookie from another port (the MAC covers the 4-tuple). */
    struct tf_peer other = p;
    other.port = 40021;
    ack_cookie(&other, cookie, 1, 11, tsv, t0 + TF_MS);
    TF_EXPECT(&t, t0 + TF_MS, RST, cookie + 1, 0, 0);
    /* The right cookie with another initial sequence number of the peer's (the MAC covers it too). */
    p.nxt = p.iss + 2;
    ack_cookie(&p, cookie, 1, 11, tsv, t0 + TF_MS);
    TF_EXPECT(&t, t0 + TF_MS, RST, cookie + 1, 0, 0);
    p.nxt = p.iss + 1;
    /* A different MSS index under the same MAC bits. */
    ack_cookie(&p, cookie ^ (1u << 27), 1, 11, tsv, t0 + TF_MS);
    TF_EXPECT(&t, t0 + TF_MS, RST, (cookie ^ (1u << 27)) + 1, 0, 0);
    assert_int_equal(tf_counters(&t).SyncookiesFailed, 4);
    assert_int_equal(tf_counters(&t).SyncookiesRecv, 0);
    assert_null(brisk_accept(l, &err));
    assert_int_equal(brisk_stack_sockets(t.st), 1);

    /* Aged: the counter ticks every 64 s and a cookie is good for its period and the next. Issued at 1 s
     * (period 0), refused at 129 s (period 2)... */
    uint64_t late = t0 + 128 * TF_SEC;
    ack_cookie(&p, cookie, 1, 11, tsv, late);
    TF_EXPECT(&t, late, RST, cookie + 1, 0, 0);
    assert_int_equal(tf_counters(&t).SyncookiesFailed, 5);
    assert_null(brisk_accept(l, &err));

    brisk_close(l, late);
    tf_free(&t);

    /* ...while a cookie issued at 60 s (period 0) is still accepted at 127 s (period 1). */
    tf_init(&t, sets);
    l = tf_listen(&t, 80);
    struct tf_peer q;
    tf_peer_init(&q, &t, 40022, 80, 6000);
    uint64_t t1 = 60 * TF_SEC;
    sa = syn_to(&q, &full, 10, t1);
    cookie = sa->h.seq;
    tsv = sa->h.opts.ts_val;
    ack_cookie(&q, cookie, 1, 11, tsv, 127 * TF_SEC);
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_counters(&t).SyncookiesRecv, 1);
    brisk_sock *s = brisk_accept(l, &err);
    assert_non_null(s);
    assert_int_equal(tf_info(s).state, BRISK_TCP_ESTABLISHED);
    brisk_abort(s, 127 * TF_SEC);
    tf_pending(&t);
    brisk_close(l, 127 * TF_SEC);
    tf_free(&t);
}

static void test_always_and_never(void **state)
{
    (void)state;
    /* Always: the first SYN already gets a cookie, and the whole handshake leaves one socket. */
    struct tf t;
    const char *always[] = {"tcp_syncookies=2", NULL};
    tf_init(&t, always);
    brisk_sock *l = tf_listen(&t, 80);
    struct tf_peer p;
    tf_peer_init(&p, &t, 40030, 80, 123456);
    brisk_sock *s = tf_open_passive(&p, l, NULL, TF_MS, TF_MS);
    struct brisk_counters c = tf_counters(&t);
    assert_int_equal(c.SyncookiesSent, 1);
    assert_int_equal(c.SyncookiesRecv, 1);
    assert_int_equal(brisk_stack_sockets(t.st), 2);
    struct brisk_conn_info i = tf_info(s);
    assert_int_equal(i.state, BRISK_TCP_ESTABLISHED);
    assert_true(i.ts_ok && i.sack_ok && i.ws_ok);
    /* Data on the third segment itself is kept (the ACK is processed as in SYN-RECEIVED). */
    struct tf_peer q;
    tf_peer_init(&q, &t, 40031, 80, 999);
    struct brisk_tcp_opts none = {0};
    struct tf_seg *sa = syn_to(&q, &none, 0, 3 * TF_MS);
    q.ack = sa->h.seq + 1;
    tf_peer_send_data(&q, 50, 4 * TF_MS);
    int err;
    brisk_sock *s2 = brisk_accept(l, &err);
    assert_non_null(s2);
    uint8_t buf[100];
    assert_int_equal(brisk_recv(s2, buf, sizeof(buf), 4 * TF_MS), 50);
    brisk_abort(s, 5 * TF_MS);
    brisk_abort(s2, 5 * TF_MS);
    brisk_close(l, 5 * TF_MS);
    tf_free(&t);

    /* Never: with the SYN queue full, SYNs are dropped and counted. */
    const char *never[] = {"tcp_syncookies=0", "tcp_max_syn_backlog=1", NULL};
    tf_init(&t, never);
    l = tf_listen(&t, 80);
    tf_peer_init(&p, &t, 40032, 80, 1);
    struct brisk_tcp_opts full = tf_opts_full();
    syn_to(&p, &full, 1, TF_MS);
    tf_peer_init(&q, &t, 40033, 80, 1);
    tf_peer_send(&q, SYN, NULL, 0, TF_MS);
    TF_EXPECT_NONE(&t);
    c = tf_counters(&t);
    assert_int_equal(c.ListenOverflows, 1);
    assert_int_equal(c.SyncookiesSent, 0);
    /* And a stray ACK to the listener is not counted as a failed cookie. */
    q.ack = 77;
    tf_peer_send(&q, ACK, NULL, 0, 2 * TF_MS);
    TF_EXPECT(&t, 2 * TF_MS, RST, 77, 0, 0);
    assert_int_equal(tf_counters(&t).SyncookiesFailed, 0);
    brisk_close(l, 2 * TF_MS);
    tf_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cookie_when_syn_queue_full),
        cmocka_unit_test(test_cookie_without_timestamps),
        cmocka_unit_test(test_bad_cookies_rejected),
        cmocka_unit_test(test_always_and_never),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
