/*
 * test_sockopt.c — the socket options Linux applications use, with Linux's semantics (times in ns):
 * TCP_USER_TIMEOUT (RFC 5482; Linux tcp_write_timeout, tcp_clamp_rto_to_user_timeout, tcp_probe_timer,
 * tcp_keepalive_timer) on retransmissions, SYNs, zero-window probes and keepalive; TCP_INQ (what a read
 * returns now, the FIN not counted: tcp_inq); IP_TOS on every datagram a connection sends, the ECN bits kept
 * clear (__ip_sock_set_tos); SO_LINGER: 0 aborts (tcp_disconnect's RST rule), a time makes close keep the
 * handle until the FIN is acknowledged (the core's half of sk_stream_wait_close).
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

struct fix {
    struct tf t;
    struct tf_peer p;
    brisk_sock *l, *c;
    struct tf_events ev;
    uint32_t d; /* our first data byte */
};

/* A connection accepted at 0 (handshake RTT 100 ms: RTO 300 ms) from a peer without timestamps or SACK, so
 * the RTO alone retransmits (no tail loss probes). */
static void setup(struct fix *f, const char *const *sets)
{
    memset(f, 0, sizeof(*f));
    tf_init(&f->t, sets);
    f->l = tf_listen(&f->t, 80);
    tf_peer_init(&f->p, &f->t, 40000, 80, 1000);
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 0;
    o.sack_perm = 0;
    f->c = tf_open_passive(&f->p, f->l, &o, 0, 100 * TF_MS);
    brisk_sock_set_callback(f->c, tf_events_cb, &f->ev);
    f->d = f->p.l_iss + 1;
    assert_int_equal(tf_info(f->c).rto_ns, 300 * TF_MS);
}

static brisk_sock *lookup(struct fix *f);

static void finish(struct fix *f)
{
    if (f->c)
        brisk_abort(f->c, f->t.st->net.now);
    brisk_sock *orphan = lookup(f); /* a connection the test closed and left finishing */
    if (orphan)
        brisk_abort(orphan, f->t.st->net.now);
    while (tf_pending(&f->t))
        tf_take(&f->t);
    brisk_close(f->l, f->t.st->net.now);
    assert_int_equal(brisk_stack_sockets(f->t.st), 0);
    tf_free(&f->t);
}

static brisk_sock *lookup(struct fix *f)
{
    return tcp_conn_lookup(&f->t.st->net, TCP_TUPLE4(TF_LOCAL_IP, 80, TF_PEER_IP, 40000));
}

/* Runs to `at` and expects the retransmission of the first 100 data bytes then, not before. */
static void expect_rtx(struct fix *f, uint64_t at)
{
    tf_run(&f->t, at - 1);
    TF_EXPECT_NONE(&f->t);
    tf_run(&f->t, at);
    TF_EXPECT(&f->t, at, ACK | PSH, f->d, 1001, 100);
}

/* The connection failed at exactly `at` with BRISK_ERR_TIMEDOUT, sending nothing. */
static void expect_timeout_at(struct fix *f, uint64_t at)
{
    tf_run(&f->t, at - 1);
    assert_int_equal(f->ev.all & BRISK_EV_ERROR, 0);
    tf_run(&f->t, at);
    TF_EXPECT_NONE(&f->t);
    assert_true(f->ev.all & BRISK_EV_ERROR);
    assert_int_equal(f->ev.at[5], at);
    assert_int_equal(brisk_sock_error(f->c), BRISK_ERR_TIMEDOUT);
    assert_int_equal(tf_counters(&f->t).TCPAbortOnTimeout, 1);
}

/* TCP_USER_TIMEOUT = 2 s with tcp_retries2 = 2. The user timeout replaces the count: the third expiry,
 * which tcp_retries2 would have ended the connection at, retransmits, and the abort comes 2 s after the
 * first retransmission (Linux's retrans_stamp), the last deadline brought forward to it: retransmissions
 * at +300, +900, +2100 ms, then the abort at +2300 ms instead of the RTO's +4500. */
static void test_user_timeout_retransmissions(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, (const char *const[]){"tcp_retries2=2", NULL});
    uint64_t v;
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_USER_TIMEOUT, &v), BRISK_OK);
    assert_int_equal(v, 0);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_USER_TIMEOUT, 2 * TF_SEC, 0), BRISK_OK);
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_USER_TIMEOUT, &v), BRISK_OK);
    assert_int_equal(v, 2 * TF_SEC);
    /* Linux takes a non-negative int of ms. */
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_USER_TIMEOUT, (uint64_t)INT32_MAX * TF_MS + 1, 0),
                     BRISK_ERR_RANGE);
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 100, t1);
    TF_EXPECT(&f.t, t1, ACK | PSH, f.d, 1001, 100);
    expect_rtx(&f, t1 + 300 * TF_MS);
    expect_rtx(&f, t1 + 900 * TF_MS);
    expect_rtx(&f, t1 + 2100 * TF_MS);
    expect_timeout_at(&f, t1 + 2300 * TF_MS);
    assert_int_equal(tf_counters(&f.t).TCPTimeouts, 3);
    finish(&f);
}

/* Progress starts the count over: an ACK of everything retransmitted, then a new loss, counts from its own
 * first retransmission. */
static void test_user_timeout_restarts_after_ack(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_USER_TIMEOUT, 1500 * TF_MS, 0), BRISK_OK);
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 100, t1);
    TF_EXPECT(&f.t, t1, ACK | PSH, f.d, 1001, 100);
    expect_rtx(&f, t1 + 300 * TF_MS);
    expect_rtx(&f, t1 + 900 * TF_MS);
    /* The retransmission arrives; its ACK at +1.0 s gives no RTT sample (Karn), the RTO stays backed off. */
    f.p.ack = f.d + 100;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 1000 * TF_MS);
    uint64_t rto = tf_info(f.c).rto_ns;
    assert_int_equal(rto, 1200 * TF_MS);
    /* New data at 5 s, lost too: retransmitted at 6.2 s, and 1.5 s after that (not after 1.3 s, long past)
     * the abort, the 2.4 s backoff cut short. */
    uint64_t t2 = 5 * TF_SEC;
    tf_send_pattern(f.c, 100, 100, t2);
    TF_EXPECT(&f.t, t2, ACK | PSH, f.d + 100, 1001, 100);
    tf_run(&f.t, t2 + rto);
    TF_EXPECT(&f.t, t2 + rto, ACK | PSH, f.d + 100, 1001, 100);
    expect_timeout_at(&f, t2 + rto + 1500 * TF_MS);
    finish(&f);
}

/* In SYN-SENT the user timeout adds to tcp_syn_retries (Linux 6.x tcp_write_timeout), counted from the first
 * SYN (Linux's retrans_stamp is set by tcp_connect): the SYN at 1 s, then the RTO brought forward to 2.5 s,
 * where the connect fails — the SYN due at 3 s never goes (Linux 6.18 with 1.5 s:
 * tests/conformance/handshake/syn-sent-user-timeout.pkt). Counted from the first retransmission, as brisk
 * did, it failed at 3.5 s after another SYN. */
static void test_user_timeout_syn_sent(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    struct tf_events ev = {0};
    brisk_sock_set_callback(s, tf_events_cb, &ev);
    assert_int_equal(brisk_setsockopt(s, BRISK_SO_USER_TIMEOUT, 2500 * TF_MS, 0), BRISK_OK);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 9, 0), BRISK_ERR_INPROGRESS);
    uint32_t iss = tf_take(&t)->h.seq;
    tf_run(&t, TF_SEC);
    TF_EXPECT(&t, TF_SEC, SYN, iss, 0, 0);
    tf_run(&t, 2500 * TF_MS - 1);
    assert_int_equal(ev.all, 0);
    tf_run(&t, 2500 * TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(ev.all, BRISK_EV_ERROR | BRISK_EV_CLOSED);
    assert_int_equal(brisk_sock_error(s), BRISK_ERR_TIMEDOUT);
    tf_run(&t, 100 * TF_SEC);
    TF_EXPECT_NONE(&t);
    brisk_close(s, 100 * TF_SEC);
    tf_free(&t);
}

/* Zero-window probes: the user timeout bounds how long the window may stay closed from the first probe,
 * even though every probe is answered (Linux 5.11+ tcp_probe_timer; without it RFC 1122 §4.2.2.17 keeps the
 * connection open). Probes at +300 ms after the window closed, then 600 and 1200 ms after the answer to the
 * last (+950, +2200: each answer restarts the interval, Linux tcp_ack_probe); the next, due 2.4 s after the
 * last answer, is brought forward to the timeout (+2300, 2 s after the first probe), where it fails. */
static void test_user_timeout_zero_window(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_USER_TIMEOUT, 2 * TF_SEC, 0), BRISK_OK);
    f.p.win = 0;
    tf_peer_send(&f.p, ACK, NULL, 0, 150 * TF_MS);
    uint64_t t1 = 200 * TF_MS;
    tf_send_pattern(f.c, 0, 100, t1);
    TF_EXPECT_NONE(&f.t);
    uint64_t probes[] = {t1 + 300 * TF_MS, t1 + 950 * TF_MS, t1 + 2200 * TF_MS};
    for (int k = 0; k < 3; k++) {
        tf_run(&f.t, probes[k] - 1);
        TF_EXPECT_NONE(&f.t);
        tf_run(&f.t, probes[k]);
        TF_EXPECT(&f.t, probes[k], ACK, f.d - 1, 1001, 0);
        tf_peer_send(&f.p, ACK, NULL, 0, probes[k] + 50 * TF_MS); /* answered, window still zero */
    }
    expect_timeout_at(&f, t1 + 2300 * TF_MS);
    finish(&f);
}

/* Keepalive: with a user timeout the idle time decides once a probe is out, not KEEPCNT (Linux
 * tcp_keepalive_timer). Idle 10 s, interval 2 s, 9 probes, user timeout 5 s: the probe at 10 s, then at
 * 12 s (idle 12 s >= 5 s, a probe out) the abort, with its RST — where KEEPCNT alone would have probed until
 * 26 s. */
static void test_user_timeout_keepalive(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPIDLE, 10 * TF_SEC, 0), BRISK_OK);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPINTVL, 2 * TF_SEC, 0), BRISK_OK);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_USER_TIMEOUT, 5 * TF_SEC, 0), BRISK_OK);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPALIVE, 1, 100 * TF_MS), BRISK_OK);
    tf_run(&f.t, 10100 * TF_MS);
    TF_EXPECT(&f.t, 10100 * TF_MS, ACK, f.d - 1, 1001, 0);
    tf_run(&f.t, 12100 * TF_MS - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, 12100 * TF_MS);
    TF_EXPECT(&f.t, 12100 * TF_MS, RST | ACK, f.d, 1001, 0);
    assert_int_equal(f.ev.at[5], 12100 * TF_MS);
    assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_TIMEDOUT);
    assert_int_equal(tf_counters(&f.t).TCPKeepAlive, 1);
    finish(&f);
}

/* TCP_INQ: the bytes a read returns now (Linux tcp_inq, SIOCINQ). The FIN is not counted; a listener has
 * none (BRISK_ERR_INVAL, as SIOCINQ's EINVAL); a connection still opening has 0; read only. */
static void test_inq(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    uint64_t v = 99;
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_INQ, &v), BRISK_OK);
    assert_int_equal(v, 0);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_INQ, 1, 0), BRISK_ERR_INVAL);
    tf_peer_send_data(&f.p, 100, TF_SEC);
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_INQ, &v), BRISK_OK);
    assert_int_equal(v, 100);
    uint8_t buf[200];
    assert_int_equal(brisk_recv(f.c, buf, 40, TF_SEC), 40);
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_INQ, &v), BRISK_OK);
    assert_int_equal(v, 60);
    assert_int_equal(tf_info(f.c).inq, 60);
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, 2 * TF_SEC);
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_INQ, &v), BRISK_OK);
    assert_int_equal(v, 60); /* the FIN adds nothing a read returns */
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), 2 * TF_SEC), 60);
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_INQ, &v), BRISK_OK);
    assert_int_equal(v, 0);
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), 2 * TF_SEC), 0);
    assert_int_equal(brisk_getsockopt(f.l, BRISK_SO_INQ, &v), BRISK_ERR_INVAL);
    assert_int_equal(tf_info(f.l).inq, 0);
    int err;
    brisk_sock *s = brisk_socket(f.t.st, &err);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 9, 3 * TF_SEC), BRISK_ERR_INPROGRESS);
    assert_int_equal(brisk_getsockopt(s, BRISK_SO_INQ, &v), BRISK_OK);
    assert_int_equal(v, 0);
    brisk_abort(s, 3 * TF_SEC);
    finish(&f);
}

/* IP_TOS: the byte in every datagram the connection sends. The ECN bits are TCP's (Linux masks them on
 * stream sockets), so 0xb9 is stored — and read back, and sent — as 0xb8 (DSCP EF). */
static void test_tos(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    uint64_t v = 1;
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_TOS, &v), BRISK_OK);
    assert_int_equal(v, 0);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_TOS, 256, 0), BRISK_ERR_RANGE);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_TOS, 0xb9, 0), BRISK_OK);
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_TOS, &v), BRISK_OK);
    assert_int_equal(v, 0xb8);
    tf_send_pattern(f.c, 0, 100, TF_SEC);
    assert_int_equal(tf_seg_tos(TF_EXPECT(&f.t, TF_SEC, ACK | PSH, f.d, 1001, 100)), 0xb8);
    /* Retransmissions too (the peer never acknowledged the data), ACKs, and the RST of an abort. */
    tf_run(&f.t, TF_SEC + 300 * TF_MS);
    assert_int_equal(tf_seg_tos(TF_EXPECT(&f.t, TF_SEC + 300 * TF_MS, ACK | PSH, f.d, 1001, 100)), 0xb8);
    tf_peer_send_data(&f.p, 10, 1400 * TF_MS); /* acknowledged at once: quickack at the start */
    assert_int_equal(tf_seg_tos(TF_EXPECT(&f.t, 1400 * TF_MS, ACK, f.d + 100, 1011, 0)), 0xb8);
    brisk_abort(f.c, 3 * TF_SEC);
    f.c = NULL;
    assert_int_equal(tf_seg_tos(TF_EXPECT(&f.t, 3 * TF_SEC, RST | ACK, f.d + 100, 1011, 0)), 0xb8);
    /* An active open: the SYN and the ACK that completes the handshake. */
    int err;
    brisk_sock *s = brisk_socket(f.t.st, &err);
    assert_int_equal(brisk_setsockopt(s, BRISK_SO_TOS, 0x28, 0), BRISK_OK);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 9, 4 * TF_SEC), BRISK_ERR_INPROGRESS);
    struct tf_seg *syn = tf_take(&f.t);
    assert_int_equal(syn->h.flags, SYN);
    assert_int_equal(tf_seg_tos(syn), 0x28);
    brisk_abort(s, 4 * TF_SEC);
    finish(&f);
}

/* A listener's IP_TOS is its SYN-ACKs' (Linux tcp_v4_send_synack: the listener's TOS) and goes to the
 * connections it accepts (the clone copies it); SYN cookies' SYN-ACKs carry it too. */
static void test_tos_listener(void **state)
{
    (void)state;
    for (int cookies = 0; cookies < 2; cookies++) {
        struct tf t;
        tf_init(&t, (const char *const[]){cookies ? "tcp_syncookies=2" : "tcp_syncookies=0", NULL});
        brisk_sock *l = tf_listen(&t, 80);
        assert_int_equal(brisk_setsockopt(l, BRISK_SO_TOS, 0x10, 0), BRISK_OK);
        struct tf_peer p;
        tf_peer_init(&p, &t, 40000, 80, 1000);
        struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN, 0);
        h.opts = tf_opts_full();
        tf_inject(&t, &h, NULL, 0, 0);
        struct tf_seg *sa = tf_take(&t);
        assert_int_equal(sa->h.flags, SYN | ACK);
        assert_int_equal(tf_seg_tos(sa), 0x10);
        p.nxt = 1001;
        p.ack = sa->h.seq + 1;
        tf_peer_send(&p, ACK, NULL, 0, 10 * TF_MS);
        int err;
        brisk_sock *c = brisk_accept(l, &err);
        assert_non_null(c);
        uint64_t v;
        assert_int_equal(brisk_getsockopt(c, BRISK_SO_TOS, &v), BRISK_OK);
        assert_int_equal(v, 0x10);
        tf_send_pattern(c, 0, 10, 20 * TF_MS);
        struct tf_seg *s = tf_take(&t);
        assert_int_equal(s->len, 10);
        assert_int_equal(tf_seg_tos(s), 0x10);
        brisk_abort(c, 30 * TF_MS);
        brisk_close(l, 30 * TF_MS);
        while (tf_pending(&t))
            tf_take(&t);
        assert_int_equal(brisk_stack_sockets(t.st), 0);
        tf_free(&t);
    }
}

/* SO_LINGER with a time: close sends the FIN and keeps the handle (BRISK_ERR_INPROGRESS) while the FIN is
 * unacknowledged; BRISK_EV_FIN_ACKED says when it is; the second close releases the handle, the connection
 * finishing in FIN-WAIT-2 as after a plain close. */
static void test_linger_waits_for_fin_ack(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, (const char *const[]){"tcp_fin_timeout=5s", NULL});
    uint64_t v = 0;
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_LINGER, &v), BRISK_OK);
    assert_int_equal(v, BRISK_TIME_NONE);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_LINGER, 5 * TF_SEC, 0), BRISK_OK);
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_LINGER, &v), BRISK_OK);
    assert_int_equal(v, 5 * TF_SEC);
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_LINGER0, &v), BRISK_OK);
    assert_int_equal(v, 0);
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 100, t1);
    TF_EXPECT(&f.t, t1, ACK | PSH, f.d, 1001, 100);
    assert_int_equal(brisk_close(f.c, t1 + TF_MS), BRISK_ERR_INPROGRESS);
    TF_EXPECT(&f.t, t1 + TF_MS, FIN | ACK, f.d + 100, 1001, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_FIN_WAIT_1);
    assert_int_equal(brisk_send(f.c, "x", 1, 0, t1 + TF_MS), BRISK_ERR_PIPE);
    /* The data is acknowledged, not yet the FIN: still waiting. */
    f.p.ack = f.d + 100;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 100 * TF_MS);
    assert_int_equal(f.ev.all & BRISK_EV_FIN_ACKED, 0);
    f.p.ack = f.d + 101;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 101 * TF_MS);
    assert_int_equal(f.ev.all & BRISK_EV_FIN_ACKED, BRISK_EV_FIN_ACKED);
    assert_int_equal(f.ev.at[6], t1 + 101 * TF_MS);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_FIN_WAIT_2);
    /* The facade's close() returns; the handle goes, the orphan times out of FIN-WAIT-2. */
    assert_int_equal(brisk_close(f.c, t1 + 101 * TF_MS), BRISK_OK);
    f.c = NULL;
    assert_non_null(lookup(&f));
    tf_run(&f.t, t1 + 101 * TF_MS + 5 * TF_SEC);
    assert_null(lookup(&f));
    TF_EXPECT_NONE(&f.t);
    finish(&f);
}

/* The linger time passes first: the caller closes again, the connection goes on without it (the FIN is
 * still retransmitted), as Linux's close() returns 0 after the wait. A close in a state that is not waiting
 * for our FIN (here FIN-WAIT-2 after shutdown) releases at once. */
static void test_linger_timeout_then_release(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_LINGER, 2 * TF_SEC, 0), BRISK_OK);
    assert_int_equal(brisk_close(f.c, TF_SEC), BRISK_ERR_INPROGRESS);
    TF_EXPECT(&f.t, TF_SEC, FIN | ACK, f.d, 1001, 0);
    tf_run(&f.t, TF_SEC + 300 * TF_MS);
    TF_EXPECT(&f.t, TF_SEC + 300 * TF_MS, FIN | ACK, f.d, 1001, 0);
    tf_run(&f.t, 3 * TF_SEC);
    TF_EXPECT(&f.t, TF_SEC + 900 * TF_MS, FIN | ACK, f.d, 1001, 0);
    assert_int_equal(f.ev.all, 0);
    assert_int_equal(brisk_close(f.c, 3 * TF_SEC), BRISK_OK);
    f.c = NULL;
    assert_int_equal(lookup(&f)->state, BRISK_TCP_FIN_WAIT_1);
    tf_run(&f.t, 3100 * TF_MS);
    TF_EXPECT(&f.t, TF_SEC + 2100 * TF_MS, FIN | ACK, f.d, 1001, 0);
    f.p.ack = f.d + 1;
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, 3200 * TF_MS);
    TF_EXPECT(&f.t, 3200 * TF_MS, ACK, f.d + 1, 1002, 0);
    assert_int_equal(lookup(&f)->state, BRISK_TCP_TIME_WAIT);
    finish(&f);

    setup(&f, NULL);
    assert_int_equal(brisk_shutdown_write(f.c, TF_SEC), BRISK_OK);
    TF_EXPECT(&f.t, TF_SEC, FIN | ACK, f.d, 1001, 0);
    f.p.ack = f.d + 1;
    tf_peer_send(&f.p, ACK, NULL, 0, TF_SEC + TF_MS);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_LINGER, 2 * TF_SEC, 0), BRISK_OK);
    assert_int_equal(brisk_close(f.c, 2 * TF_SEC), BRISK_OK);
    f.c = NULL;
    assert_int_equal(lookup(&f)->state, BRISK_TCP_FIN_WAIT_2);
    finish(&f);
}

/* A lingering close that the peer resets: BRISK_EV_ERROR, and the second close frees the handle. */
static void test_linger_reset_by_peer(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_LINGER, 2 * TF_SEC, 0), BRISK_OK);
    assert_int_equal(brisk_close(f.c, TF_SEC), BRISK_ERR_INPROGRESS);
    TF_EXPECT(&f.t, TF_SEC, FIN | ACK, f.d, 1001, 0);
    tf_peer_send(&f.p, RST | ACK, NULL, 0, TF_SEC + 10 * TF_MS);
    assert_int_equal(f.ev.all, BRISK_EV_ERROR | BRISK_EV_CLOSED);
    assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_RESET);
    assert_int_equal(brisk_close(f.c, TF_SEC + 20 * TF_MS), BRISK_OK);
    f.c = NULL;
    TF_EXPECT_NONE(&f.t);
    finish(&f);
}

/* SO_LINGER 0 (through either option) discards the connection with Linux's tcp_disconnect rule: a RST from
 * ESTABLISHED, CLOSE-WAIT, FIN-WAIT-1 and FIN-WAIT-2; none from LAST-ACK once the FIN went out. */
static void test_linger_zero(void **state)
{
    (void)state;
    struct fix f;
    uint64_t v;
    /* FIN-WAIT-2 after a shutdown: a RST, where a plain close would wait for the peer's FIN. */
    setup(&f, NULL);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_LINGER, 0, 0), BRISK_OK);
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_LINGER0, &v), BRISK_OK);
    assert_int_equal(v, 1);
    assert_int_equal(brisk_shutdown_write(f.c, TF_SEC), BRISK_OK);
    TF_EXPECT(&f.t, TF_SEC, FIN | ACK, f.d, 1001, 0);
    f.p.ack = f.d + 1;
    tf_peer_send(&f.p, ACK, NULL, 0, TF_SEC + TF_MS);
    assert_int_equal(brisk_close(f.c, 2 * TF_SEC), BRISK_OK);
    f.c = NULL;
    TF_EXPECT(&f.t, 2 * TF_SEC, RST | ACK, f.d + 1, 1001, 0);
    assert_null(lookup(&f));
    assert_int_equal(tf_counters(&f.t).TCPAbortOnClose, 1);
    finish(&f);
    /* LAST-ACK, our FIN sent: the peer has closed too; gone without a RST. */
    setup(&f, NULL);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_LINGER0, 1, 0), BRISK_OK);
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_LINGER, &v), BRISK_OK);
    assert_int_equal(v, 0);
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, TF_SEC);
    TF_EXPECT(&f.t, TF_SEC, ACK, f.d, 1002, 0);
    assert_int_equal(brisk_shutdown_write(f.c, TF_SEC + TF_MS), BRISK_OK);
    TF_EXPECT(&f.t, TF_SEC + TF_MS, FIN | ACK, f.d, 1002, 0);
    assert_int_equal(brisk_close(f.c, 2 * TF_SEC), BRISK_OK);
    f.c = NULL;
    TF_EXPECT_NONE(&f.t);
    assert_null(lookup(&f));
    finish(&f);
    /* BRISK_SO_LINGER0 = 0 turns lingering off altogether. */
    setup(&f, NULL);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_LINGER, 3 * TF_SEC, 0), BRISK_OK);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_LINGER0, 0, 0), BRISK_OK);
    assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_LINGER, &v), BRISK_OK);
    assert_int_equal(v, BRISK_TIME_NONE);
    assert_int_equal(brisk_close(f.c, TF_SEC), BRISK_OK);
    f.c = NULL;
    TF_EXPECT(&f.t, TF_SEC, FIN | ACK, f.d, 1001, 0);
    finish(&f);
}

/* Unread data lost by a close is a RST in every state that has a peer to tell (RFC 2525 §2.17, RFC 1122
 * §4.2.2.13; Linux __tcp_close checks it first) — FIN-WAIT-2 included, where brisk used to close quietly. */
static void test_close_unread_in_fin_wait_2(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    assert_int_equal(brisk_shutdown_write(f.c, TF_SEC), BRISK_OK);
    TF_EXPECT(&f.t, TF_SEC, FIN | ACK, f.d, 1001, 0);
    f.p.ack = f.d + 1;
    tf_peer_send(&f.p, ACK, NULL, 0, TF_SEC + TF_MS);
    tf_peer_send_data(&f.p, 100, TF_SEC + 2 * TF_MS);
    TF_EXPECT(&f.t, TF_SEC + 2 * TF_MS, ACK, f.d + 1, 1101, 0);
    assert_int_equal(brisk_close(f.c, 2 * TF_SEC), BRISK_OK);
    f.c = NULL;
    TF_EXPECT(&f.t, 2 * TF_SEC, RST | ACK, f.d + 1, 1101, 0);
    assert_null(lookup(&f));
    assert_int_equal(tf_counters(&f.t).TCPAbortOnClose, 1);
    finish(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_user_timeout_retransmissions),
        cmocka_unit_test(test_user_timeout_restarts_after_ack),
        cmocka_unit_test(test_user_timeout_syn_sent),
        cmocka_unit_test(test_user_timeout_zero_window),
        cmocka_unit_test(test_user_timeout_keepalive),
        cmocka_unit_test(test_inq),
        cmocka_unit_test(test_tos),
        cmocka_unit_test(test_tos_listener),
        cmocka_unit_test(test_linger_waits_for_fin_ack),
        cmocka_unit_test(test_linger_timeout_then_release),
        cmocka_unit_test(test_linger_reset_by_peer),
        cmocka_unit_test(test_linger_zero),
        cmocka_unit_test(test_close_unread_in_fin_wait_2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
