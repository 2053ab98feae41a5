/*
 * test_rfc5961.c — blind in-window attack mitigations (RFC 5961) and PAWS (RFC 7323 §5).
 *
 * RST (§3.2): reset only when SEG.SEQ is exactly RCV.NXT; anywhere else in the window a challenge ACK, and
 * the connection survives; outside the window nothing. SYN in a synchronized state (§4.2): a challenge ACK,
 * never a reset. ACK (§5.2): an ACK of data never sent, or older than SND.UNA - MAX.SND.WND, drops the whole
 * segment and is answered with an ACK (the linux-* profiles: not in ESTABLISHED, as Linux 6.x), and leaves
 * TS.Recent alone (RFC 7323 §4.3), as does an ACK below SND.UNA. Challenge ACKs are rate limited per stack
 * (§7, tcp_challenge_ack_limit per second), and under linux-6.x (tcp_invalid_ratelimit, 500 ms) the ACKs to
 * invalid segments are per connection too, as Linux's tcp_oow_rate_limited. PAWS: a segment whose TSval is
 * older than TS.Recent is dropped and acknowledged.
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
    uint32_t d; /* our next sequence number */
};

/* An established connection with all options (timestamps included) and `sent` bytes of ours acknowledged. */
static void setup(struct fix *f, const char *const *sets, const struct brisk_tcp_opts *o, uint32_t sent)
{
    memset(&f->ev, 0, sizeof(f->ev));
    tf_init(&f->t, sets);
    f->l = tf_listen(&f->t, 80);
    tf_peer_init(&f->p, &f->t, 40000, 80, 1000);
    f->c = tf_open_passive(&f->p, f->l, o, 0, 10 * TF_MS);
    brisk_sock_set_callback(f->c, tf_events_cb, &f->ev);
    f->d = f->p.l_iss + 1;
    uint8_t buf[1460];
    for (uint32_t off = 0; off < sent; off += 1000) {
        uint32_t n = sent - off < 1000 ? sent - off : 1000;
        tf_pattern(buf, n, off);
        assert_int_equal(brisk_send(f->c, buf, n, 0, 20 * TF_MS), n);
        tf_take(&f->t);
        f->d += n;
        f->p.ack = f->d;
        tf_peer_send(&f->p, ACK, NULL, 0, 20 * TF_MS);
    }
    TF_EXPECT_NONE(&f->t);
}

static void teardown(struct fix *f)
{
    if (f->c)
        brisk_abort(f->c, f->t.st->net.now);
    while (tf_pending(&f->t))
        tf_take(&f->t);
    brisk_close(f->l, f->t.st->net.now);
    assert_int_equal(f->t.st->tcp->nsocks, 0);
    tf_free(&f->t);
}

/* A RST from the peer with sequence number seq (timestamps as the peer sends them). */
static void send_rst(struct fix *f, uint32_t seq, uint64_t now)
{
    struct brisk_tcp_repr h = tf_peer_hdr(&f->p, RST, now);
    h.seq = seq;
    tf_inject(&f->t, &h, NULL, 0, now);
}

static void test_rst_in_window_gets_challenge_ack(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL, NULL, 0);
    uint32_t rn = f.p.nxt; /* RCV.NXT */
    uint64_t now = TF_SEC;
    /* In the window but not at RCV.NXT: challenge ACK (SEQ = SND.NXT, ACK = RCV.NXT), nothing else. */
    send_rst(&f, rn + 1, now);
    struct tf_seg *s = TF_EXPECT(&f.t, now, ACK, f.d, rn, 0);
    assert_true(s->h.opts.ts_ok);
    send_rst(&f, rn + 1000000, now + TF_MS);
    TF_EXPECT(&f.t, now + TF_MS, ACK, f.d, rn, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_ESTABLISHED);
    assert_int_equal(f.ev.all, 0);
    struct brisk_counters k = tf_counters(&f.t);
    assert_int_equal(k.TCPRSTChallenge, 2);
    assert_int_equal(k.TCPChallengeACK, 2);
    /* RST|ACK counts the same. */
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, RST | ACK, now + 2 * TF_MS);
    h.seq = rn + 5;
    tf_inject(&f.t, &h, NULL, 0, now + 2 * TF_MS);
    TF_EXPECT(&f.t, now + 2 * TF_MS, ACK, f.d, rn, 0);
    /* The connection still carries data both ways. */
    tf_peer_send_data(&f.p, 100, now + 3 * TF_MS);
    TF_EXPECT(&f.t, now + 3 * TF_MS, ACK, f.d, rn + 100, 0);
    teardown(&f);
}

static void test_rst_out_of_window_ignored(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL, NULL, 0);
    uint32_t rn = f.p.nxt;
    uint32_t wnd = tf_info(f.c).rcv_wnd;
    uint64_t now = TF_SEC;
    send_rst(&f, rn - 1, now);
    send_rst(&f, rn - 100000, now);
    send_rst(&f, rn + wnd, now); /* the first byte past the window */
    send_rst(&f, rn + wnd + 12345, now);
    send_rst(&f, rn + 0x80000000u, now);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_ESTABLISHED);
    assert_int_equal(tf_counters(&f.t).TCPChallengeACK, 0);
    /* The last byte in the window is in the window: challenge. */
    send_rst(&f, rn + wnd - 1, now + TF_MS);
    TF_EXPECT(&f.t, now + TF_MS, ACK, f.d, rn, 0);
    teardown(&f);
}

static void test_rst_exact_resets(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL, NULL, 3000);
    uint32_t rn = f.p.nxt;
    uint64_t now = TF_SEC;
    /* Unacknowledged data of ours is outstanding: the reset does not care. */
    uint8_t buf[100] = {0};
    assert_int_equal(brisk_send(f.c, buf, 100, 0, now), 100);
    tf_take(&f.t);
    /* A RST with an old timestamp still resets (PAWS does not apply to RSTs, RFC 7323 §5.3). */
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, RST, now + TF_MS);
    h.opts.ts_val -= 100000;
    tf_inject(&f.t, &h, NULL, 0, now + TF_MS);
    TF_EXPECT_NONE(&f.t); /* never answer a RST */
    assert_int_equal(f.ev.all, BRISK_EV_ERROR | BRISK_EV_CLOSED);
    assert_int_equal(f.ev.at[5], now + TF_MS);
    assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_RESET);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_CLOSED);
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), now + TF_MS), BRISK_ERR_RESET);
    assert_int_equal(brisk_send(f.c, buf, 10, 0, now + TF_MS), BRISK_ERR_RESET);
    assert_int_equal(tf_counters(&f.t).TcpEstabResets, 1);
    (void)rn;
    /* No timer survives: nothing is retransmitted. */
    tf_run(&f.t, now + 100 * TF_SEC);
    TF_EXPECT_NONE(&f.t);
    /* Segments for the dead connection's 4-tuple get the closed-port treatment once it is released. */
    brisk_close(f.c, now + 100 * TF_SEC);
    f.c = NULL;
    TF_EXPECT_NONE(&f.t);
    f.p.ack = f.d + 100;
    tf_peer_send(&f.p, ACK, NULL, 0, now + 101 * TF_SEC);
    TF_EXPECT(&f.t, now + 101 * TF_SEC, RST, f.d + 100, 0, 0);
    teardown(&f);
}

static void test_syn_in_established_gets_challenge_ack(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL, NULL, 0);
    uint32_t rn = f.p.nxt;
    uint64_t now = TF_SEC;
    /* A SYN in the window, one at RCV.NXT, one out of the window: each answered with an ACK, no reset. */
    uint32_t seqs[] = {rn + 10, rn, rn - 5000};
    for (int k = 0; k < 3; k++) {
        struct brisk_tcp_repr h = tf_peer_hdr(&f.p, SYN, now);
        h.seq = seqs[k];
        h.opts.mss_ok = 1;
        h.opts.mss = 1460;
        tf_inject(&f.t, &h, NULL, 0, now);
        struct tf_seg *s = TF_EXPECT(&f.t, now, ACK, f.d, rn, 0);
        assert_false(s->h.opts.mss_ok);
        now += TF_MS;
    }
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_ESTABLISHED);
    assert_int_equal(f.ev.all, 0);
    assert_int_equal(tf_counters(&f.t).TCPSYNChallenge, 3); /* out of the window too (RFC 5961 §4.2) */
    /* A SYN-ACK too. */
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, SYN | ACK, now);
    tf_inject(&f.t, &h, NULL, 0, now);
    TF_EXPECT(&f.t, now, ACK, f.d, rn, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_ESTABLISHED);
    tf_peer_send_data(&f.p, 10, now + TF_MS);
    TF_EXPECT(&f.t, now + TF_MS, ACK, f.d, rn + 10, 0);
    teardown(&f);
}

static void test_ack_of_unsent_data_dropped(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL, NULL, 1000);
    uint32_t rn = f.p.nxt;
    uint64_t now = TF_SEC;
    /* Data whose ACK field acknowledges bytes we never sent: the whole segment is dropped, an ACK goes back
     * (RFC 5961 §5.2, RFC 9293 §3.10.7.4), and the data is not delivered. */
    uint8_t data[100];
    tf_pattern(data, sizeof(data), 0);
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, ACK | PSH, now);
    h.ack = f.d + 1;
    tf_inject(&f.t, &h, data, sizeof(data), now);
    TF_EXPECT(&f.t, now, ACK, f.d, rn, 0);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_counters(&f.t).TCPACKOutOfWindow, 1);
    uint8_t buf[200];
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), now), BRISK_ERR_AGAIN);
    assert_int_equal(tf_info(f.c).bytes_received, 0);
    assert_int_equal(f.ev.all, 0);
    /* A FIN on such a segment is dropped too. */
    h = tf_peer_hdr(&f.p, ACK | FIN, now + TF_MS);
    h.ack = f.d + 100000;
    tf_inject(&f.t, &h, NULL, 0, now + TF_MS);
    TF_EXPECT(&f.t, now + TF_MS, ACK, f.d, rn, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_ESTABLISHED);
    /* The same data with a valid ACK is taken. */
    tf_peer_send(&f.p, ACK | PSH, data, sizeof(data), now + 2 * TF_MS);
    TF_EXPECT(&f.t, now + 2 * TF_MS, ACK, f.d, rn + 100, 0);
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), now + 2 * TF_MS), 100);
    teardown(&f);
}

/* RFC 7323 §4.3: TS.Recent is recorded only from a segment that is accepted. A segment whose ACK covers data
 * never sent is dropped, so its TSval must not become what our next segments echo. */
static void test_ack_of_unsent_data_keeps_ts_recent(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL, NULL, 1000);
    uint32_t rn = f.p.nxt;
    uint64_t now = TF_SEC;
    tf_peer_send_data(&f.p, 100, now);
    struct tf_seg *s = TF_EXPECT(&f.t, now, ACK, f.d, rn + 100, 0);
    uint32_t recent = f.p.ts_base + (uint32_t)(now / TF_MS);
    assert_int_equal(s->h.opts.ts_ecr, recent);
    /* A newer TSval on a segment that acknowledges unsent data: the ACK it gets echoes the old TS.Recent. */
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, ACK, now + 50 * TF_MS);
    h.ack = f.d + 1;
    tf_inject(&f.t, &h, NULL, 0, now + 50 * TF_MS);
    s = TF_EXPECT(&f.t, now + 50 * TF_MS, ACK, f.d, rn + 100, 0);
    assert_int_equal(s->h.opts.ts_ecr, recent);
    /* So does the duplicate ACK for out-of-order data (which does not record TS.Recent either). */
    f.p.nxt += 100;
    tf_peer_send_data(&f.p, 100, now + 60 * TF_MS);
    s = TF_EXPECT(&f.t, now + 60 * TF_MS, ACK, f.d, rn + 100, 0);
    assert_int_equal(s->h.opts.ts_ecr, recent);
    /* An old ACK (below SND.UNA) is accepted with its text, but does not record TS.Recent either (Linux:
     * tcp_ack's old_ack path returns before tcp_replace_ts_recent). */
    f.p.nxt = rn + 100;
    h = tf_peer_hdr(&f.p, ACK | PSH, now + 70 * TF_MS);
    h.ack = f.d - 500;
    uint8_t data[100];
    tf_pattern(data, sizeof(data), 100);
    tf_inject(&f.t, &h, data, sizeof(data), now + 70 * TF_MS);
    f.p.nxt = rn + 300;
    s = TF_EXPECT(&f.t, now + 70 * TF_MS, ACK, f.d, rn + 300, 0); /* the hole filled: ACK at once */
    assert_int_equal(s->h.opts.ts_ecr, recent);
    /* An acceptable segment records it. */
    tf_peer_send_data(&f.p, 100, now + 80 * TF_MS);
    s = TF_EXPECT(&f.t, now + 80 * TF_MS, ACK, f.d, rn + 400, 0);
    assert_int_equal(s->h.opts.ts_ecr, f.p.ts_base + (uint32_t)((now + 80 * TF_MS) / TF_MS));
    teardown(&f);
}

/* The 3.x kernels dropped an ACK of unsent data silently in ESTABLISHED (tcp_ack's invalid_ack path) and
 * answered it only in the other synchronized states; the linux-3.x profiles do the same
 * (tcp_unsent_ack_reply=0). Linux 6.x answers it as brisk does (measured on 6.18: the conformance script
 * rst/ack-unsent-answered.pkt; brisk's profile, the previous test). */
static void test_ack_of_unsent_data_linux(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL, NULL, 1000);
    assert_int_equal(brisk_settings_apply_profile(&f.t.st->net.s, "linux-3.19"), BRISK_OK);
    uint32_t rn = f.p.nxt;
    uint64_t now = TF_SEC;
    uint8_t data[100];
    tf_pattern(data, sizeof(data), 0);
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, ACK | PSH, now);
    h.ack = f.d + 1;
    tf_inject(&f.t, &h, data, sizeof(data), now);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_counters(&f.t).TCPACKOutOfWindow, 1);
    assert_int_equal(tf_info(f.c).bytes_received, 0);
    /* In CLOSE-WAIT it is answered. */
    tf_peer_send(&f.p, ACK | FIN, NULL, 0, now + TF_MS);
    TF_EXPECT(&f.t, now + TF_MS, ACK, f.d, rn + 1, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_CLOSE_WAIT);
    h = tf_peer_hdr(&f.p, ACK, now + 2 * TF_MS);
    h.ack = f.d + 1;
    tf_inject(&f.t, &h, NULL, 0, now + 2 * TF_MS);
    TF_EXPECT(&f.t, now + 2 * TF_MS, ACK, f.d, rn + 1, 0);
    assert_int_equal(tf_counters(&f.t).TCPACKOutOfWindow, 2);
    teardown(&f);
}

static void test_ack_too_old_dropped(void **state)
{
    (void)state;
    struct fix f;
    /* A peer without window scaling whose window is 1000 bytes: MAX.SND.WND = 1000. */
    struct brisk_tcp_opts o = tf_opts_full();
    o.wscale_ok = 0;
    memset(&f, 0, sizeof(f));
    f.p.win = 1000;
    tf_init(&f.t, NULL);
    f.l = tf_listen(&f.t, 80);
    tf_peer_init(&f.p, &f.t, 40000, 80, 1000);
    f.p.win = 1000;
    f.c = tf_open_passive(&f.p, f.l, &o, 0, 10 * TF_MS);
    brisk_sock_set_callback(f.c, tf_events_cb, &f.ev);
    f.d = f.p.l_iss + 1;
    uint8_t buf[1000];
    for (int k = 0; k < 3; k++) {
        tf_pattern(buf, 1000, 1000 * (uint64_t)k);
        assert_int_equal(brisk_send(f.c, buf, 1000, 0, 20 * TF_MS), 1000);
        TF_EXPECT(&f.t, 20 * TF_MS, ACK | PSH, f.d, f.p.nxt, 1000);
        f.d += 1000;
        f.p.ack = f.d;
        tf_peer_send(&f.p, ACK, NULL, 0, 20 * TF_MS);
    }
    uint32_t rn = f.p.nxt;
    uint64_t now = TF_SEC;
    /* SND.UNA - MAX.SND.WND = f.d - 1000 is still acceptable (a duplicate ACK): the data is taken. */
    uint8_t data[50];
    tf_pattern(data, sizeof(data), 0);
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, ACK | PSH, now);
    h.ack = f.d - 1000;
    tf_inject(&f.t, &h, data, sizeof(data), now);
    TF_EXPECT(&f.t, now, ACK, f.d, rn + 50, 0);
    f.p.nxt += 50;
    rn += 50;
    /* One byte older: the segment is dropped and answered with an ACK (RFC 5961 §5.2). */
    h = tf_peer_hdr(&f.p, ACK | PSH, now + TF_MS);
    h.ack = f.d - 1001;
    tf_inject(&f.t, &h, data, sizeof(data), now + TF_MS);
    TF_EXPECT(&f.t, now + TF_MS, ACK, f.d, rn, 0);
    assert_int_equal(tf_info(f.c).bytes_received, 50);
    teardown(&f);
}

static void test_challenge_ack_rate_limit(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, (const char *const[]){"tcp_challenge_ack_limit=2", NULL}, NULL, 0);
    uint32_t rn = f.p.nxt;
    uint64_t now = 5 * TF_SEC;
    send_rst(&f, rn + 1, now);
    TF_EXPECT(&f.t, now, ACK, f.d, rn, 0);
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, SYN, now + 100 * TF_MS);
    tf_inject(&f.t, &h, NULL, 0, now + 100 * TF_MS);
    TF_EXPECT(&f.t, now + 100 * TF_MS, ACK, f.d, rn, 0);
    /* The third within the second: suppressed, counted. */
    send_rst(&f, rn + 2, now + 500 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    struct brisk_counters k = tf_counters(&f.t);
    assert_int_equal(k.TCPChallengeACK, 2);
    assert_int_equal(k.TCPChallengeACKLimited, 1);
    assert_int_equal(k.TCPRSTChallenge, 2);
    /* The limit is per stack: another connection is limited too. */
    struct tf_peer p2;
    tf_peer_init(&p2, &f.t, 40001, 80, 50000);
    brisk_sock *c2 = tf_open_passive(&p2, f.l, NULL, now + 600 * TF_MS, 0);
    h = tf_peer_hdr(&p2, RST, now + 700 * TF_MS);
    h.seq += 7;
    tf_inject(&f.t, &h, NULL, 0, now + 700 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_counters(&f.t).TCPChallengeACKLimited, 2);
    /* A second later the budget is back. */
    send_rst(&f, rn + 3, now + 1000 * TF_MS);
    TF_EXPECT(&f.t, now + 1000 * TF_MS, ACK, f.d, rn, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_ESTABLISHED);
    assert_int_equal(tf_info(c2).state, BRISK_TCP_ESTABLISHED);
    brisk_abort(c2, now + 1001 * TF_MS);
    tf_take(&f.t);
    teardown(&f);
}

/* The linux-6.x profile's settings (tcp_invalid_ratelimit=500ms among them). */
static const char *const *linux_sets(void)
{
    for (size_t i = 0; i < brisk_profiles_count(); i++)
        if (strcmp(brisk_profile_name(i), "linux-6.x") == 0)
            return brisk_profile_settings(i);
    fail();
    return NULL;
}

/* Per connection, one ACK per tcp_invalid_ratelimit answers invalid segments (linux-6.x: 500 ms, Linux's
 * tcp_oow_rate_limited): a RST in the window, a SYN, a PAWS failure and an out-of-window ACK share the one
 * interval; segments with data and no SYN (out of window or duplicates) are always answered. brisk's profile
 * answers every one (0). Linux 6.18 as measured: tests/conformance/rst/invalid-ack-ratelimit*.pkt. Before the
 * setting every profile answered every one. */
static void test_invalid_ack_ratelimit(void **state)
{
    (void)state;
    for (int lx = 0; lx <= 1; lx++) {
        struct fix f;
        setup(&f, lx ? linux_sets() : NULL, NULL, 0);
        uint32_t rn = f.p.nxt;
        uint64_t t1 = 5 * TF_SEC;
        send_rst(&f, rn + 1, t1); /* in the window: a challenge ACK */
        TF_EXPECT(&f.t, t1, ACK, f.d, rn, 0);
        struct brisk_tcp_repr h = tf_peer_hdr(&f.p, SYN, t1 + 100 * TF_MS);
        tf_inject(&f.t, &h, NULL, 0, t1 + 100 * TF_MS);
        h = tf_peer_hdr(&f.p, ACK, t1 + 200 * TF_MS); /* out of the window */
        h.seq = rn + 5000000;
        tf_inject(&f.t, &h, NULL, 0, t1 + 200 * TF_MS);
        h = tf_peer_hdr(&f.p, ACK, t1 + 300 * TF_MS); /* PAWS: an old timestamp */
        h.opts.ts_val = f.c->opt.ts_recent - 1;
        tf_inject(&f.t, &h, NULL, 0, t1 + 300 * TF_MS);
        if (!lx) {
            TF_EXPECT(&f.t, t1 + 100 * TF_MS, ACK, f.d, rn, 0);
            TF_EXPECT(&f.t, t1 + 200 * TF_MS, ACK, f.d, rn, 0);
            TF_EXPECT(&f.t, t1 + 300 * TF_MS, ACK, f.d, rn, 0);
        }
        TF_EXPECT_NONE(&f.t);
        /* Data out of the window, and a duplicate: answered whatever the interval. */
        uint8_t data[100] = {0};
        h = tf_peer_hdr(&f.p, ACK | PSH, t1 + 400 * TF_MS);
        h.seq = rn + 5000000;
        tf_inject(&f.t, &h, data, sizeof(data), t1 + 400 * TF_MS);
        TF_EXPECT(&f.t, t1 + 400 * TF_MS, ACK, f.d, rn, 0);
        /* 500 ms after the challenge ACK the interval is over. */
        send_rst(&f, rn + 1, t1 + 500 * TF_MS);
        TF_EXPECT(&f.t, t1 + 500 * TF_MS, ACK, f.d, rn, 0);
        struct brisk_counters k = tf_counters(&f.t);
        assert_int_equal(k.TCPACKSkippedChallenge, lx ? 1 : 0);
        assert_int_equal(k.TCPACKSkippedSeq, lx ? 1 : 0);
        assert_int_equal(k.TCPACKSkippedPAWS, lx ? 1 : 0);
        assert_int_equal(tf_info(f.c).state, BRISK_TCP_ESTABLISHED);
        teardown(&f);
    }
}

/* Where a RST resets besides RCV.NXT. linux-6.x (tcp_rst_edges=1, Linux's tcp_validate_incoming): at RCV.NXT
 * - 1 once the peer's FIN is in (tcp_reset_check), and at the right edge of the highest SACK block we
 * advertise. brisk's profile keeps RFC 5961 §3.2: the first is outside the window (dropped), the second gets a
 * challenge ACK. A reset in CLOSE-WAIT reports EPIPE in every profile, as Linux's tcp_reset (it reported
 * ECONNRESET). Measured on 6.18: tests/conformance/rst/rst-after-fin*.pkt, rst-at-sack-edge*.pkt. */
static void test_rst_edges(void **state)
{
    (void)state;
    for (int lx = 0; lx <= 1; lx++) {
        struct fix f;
        setup(&f, lx ? linux_sets() : NULL, NULL, 0);
        uint64_t t1 = 5 * TF_SEC;
        tf_peer_send(&f.p, FIN | ACK, NULL, 0, t1);
        TF_EXPECT(&f.t, t1, ACK, f.d, f.p.nxt, 0); /* no data yet: at once under either profile */
        send_rst(&f, f.p.nxt - 1, t1 + 100 * TF_MS);
        TF_EXPECT_NONE(&f.t);
        if (lx) {
            assert_int_equal(tf_info(f.c).state, BRISK_TCP_CLOSED);
            assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_PIPE);
        } else {
            assert_int_equal(tf_info(f.c).state, BRISK_TCP_CLOSE_WAIT);
            send_rst(&f, f.p.nxt, t1 + 200 * TF_MS); /* the exact one: EPIPE too */
            assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_PIPE);
        }
        teardown(&f);

        setup(&f, lx ? linux_sets() : NULL, NULL, 0);
        uint32_t rn = f.p.nxt;
        uint8_t data[100] = {0};
        struct brisk_tcp_repr h = tf_peer_hdr(&f.p, ACK | PSH, t1);
        h.seq = rn + 100; /* a hole of 100 bytes before it */
        tf_inject(&f.t, &h, data, sizeof(data), t1);
        struct tf_seg *a = TF_EXPECT(&f.t, t1, ACK, f.d, rn, 0);
        assert_int_equal(a->h.opts.nsack, 1);
        assert_int_equal(a->h.opts.sack[0].end, rn + 200);
        send_rst(&f, rn + 200, t1 + 100 * TF_MS);
        if (lx) {
            TF_EXPECT_NONE(&f.t);
            assert_int_equal(tf_info(f.c).state, BRISK_TCP_CLOSED);
            assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_RESET);
        } else {
            TF_EXPECT(&f.t, t1 + 100 * TF_MS, ACK, f.d, rn, 0); /* the challenge ACK (with its SACK) */
            assert_int_equal(tf_info(f.c).state, BRISK_TCP_ESTABLISHED);
        }
        teardown(&f);
    }
}

/* TS.Recent comes from the first of the segments a delayed ACK covers (RFC 7323 §4.3: SEG.SEQ <= Last.ACK.sent,
 * Linux's rcv_wup), not the latest: after two segments (TSval T and T + 10) wait for one ACK, a segment with
 * TSval T + 5 passes PAWS and its data is taken. brisk took TS.Recent from the second and dropped the third
 * segment's data as an old duplicate (Linux 6.18: tests/conformance/timestamps/ts-recent-last-ack-sent.pkt). */
static void test_ts_recent_from_last_ack_sent(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL, NULL, 0);
    uint32_t rn = f.p.nxt;
    uint64_t t1 = TF_SEC;
    tf_peer_send_data(&f.p, 100, t1); /* quick-ACK mode: acknowledged at once */
    TF_EXPECT(&f.t, t1, ACK, f.d, rn + 100, 0);
    uint8_t buf[400];
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), t1), 100);
    tf_send_pattern(f.c, 0, 100, t1); /* a reply within the ACK timeout: interactive, ACKs are delayed */
    TF_EXPECT(&f.t, t1, ACK | PSH, f.d, rn + 100, 100);
    f.p.ack = f.d + 100;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 10 * TF_MS);
    tf_peer_send_data(&f.p, 100, t1 + 100 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, ACK, t1 + 110 * TF_MS);
    uint32_t second_ts = h.opts.ts_val;
    tf_peer_send_data(&f.p, 100, t1 + 110 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t1 + 140 * TF_MS); /* the delayed ACK, 40 ms after the first of the two */
    TF_EXPECT(&f.t, t1 + 140 * TF_MS, ACK, f.d + 100, rn + 300, 0);
    assert_int_equal(f.c->opt.ts_recent, second_ts - 10);
    /* TSval between the two: newer than TS.Recent, so not an old duplicate. */
    h = tf_peer_hdr(&f.p, ACK | PSH, t1 + 150 * TF_MS);
    h.opts.ts_val = second_ts - 5;
    uint8_t data[100] = {0};
    tf_inject(&f.t, &h, data, sizeof(data), t1 + 150 * TF_MS);
    f.p.nxt += 100;
    /* Taken, and acknowledged at once (the fired delayed ACK ended the interactive mode). */
    TF_EXPECT(&f.t, t1 + 150 * TF_MS, ACK, f.d + 100, rn + 400, 0);
    assert_int_equal(tf_counters(&f.t).PAWSEstab, 0);
    teardown(&f);
}

static void test_paws(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL, NULL, 0);
    uint32_t rn = f.p.nxt;
    uint64_t now = TF_SEC;
    tf_peer_send_data(&f.p, 100, now);
    struct tf_seg *s = TF_EXPECT(&f.t, now, ACK, f.d, rn + 100, 0);
    uint32_t recent = f.p.ts_base + (uint32_t)(now / TF_MS);
    assert_int_equal(s->h.opts.ts_ecr, recent);
    /* An old duplicate's TSval (one tick older than TS.Recent): dropped, acknowledged (RFC 7323 §5.3). */
    uint8_t data[100];
    tf_pattern(data, sizeof(data), 100);
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, ACK | PSH, now + TF_MS);
    h.opts.ts_val = recent - 1;
    tf_inject(&f.t, &h, data, sizeof(data), now + TF_MS);
    s = TF_EXPECT(&f.t, now + TF_MS, ACK, f.d, rn + 100, 0);
    assert_int_equal(s->h.opts.ts_ecr, recent); /* TS.Recent untouched */
    assert_int_equal(tf_counters(&f.t).PAWSEstab, 1);
    assert_int_equal(tf_info(f.c).bytes_received, 100);
    /* Wrapped far back (2^31 - 1 older) too. */
    h.opts.ts_val = recent - 0x7fffffffu;
    tf_inject(&f.t, &h, data, sizeof(data), now + 2 * TF_MS);
    TF_EXPECT(&f.t, now + 2 * TF_MS, ACK, f.d, rn + 100, 0);
    assert_int_equal(tf_counters(&f.t).PAWSEstab, 2);
    /* An equal TSval is fine (several segments per tick), and so is a newer one. */
    h.opts.ts_val = recent;
    tf_inject(&f.t, &h, data, sizeof(data), now + 3 * TF_MS);
    f.p.nxt += 100;
    s = TF_EXPECT(&f.t, now + 3 * TF_MS, ACK, f.d, rn + 200, 0);
    tf_peer_send_data(&f.p, 100, now + 4 * TF_MS);
    s = TF_EXPECT(&f.t, now + 4 * TF_MS, ACK, f.d, rn + 300, 0);
    assert_int_equal(s->h.opts.ts_ecr, f.p.ts_base + (uint32_t)((now + 4 * TF_MS) / TF_MS));
    assert_int_equal(tf_counters(&f.t).PAWSEstab, 2);
    uint8_t buf[400];
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), now + 5 * TF_MS), 300);
    assert_memory_equal(buf + 100, data, 100);
    teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rst_in_window_gets_challenge_ack),
        cmocka_unit_test(test_rst_out_of_window_ignored),
        cmocka_unit_test(test_rst_exact_resets),
        cmocka_unit_test(test_syn_in_established_gets_challenge_ack),
        cmocka_unit_test(test_ack_of_unsent_data_dropped),
        cmocka_unit_test(test_ack_of_unsent_data_keeps_ts_recent),
        cmocka_unit_test(test_ack_of_unsent_data_linux),
        cmocka_unit_test(test_ack_too_old_dropped),
        cmocka_unit_test(test_challenge_ack_rate_limit),
        cmocka_unit_test(test_invalid_ack_ratelimit),
        cmocka_unit_test(test_rst_edges),
        cmocka_unit_test(test_ts_recent_from_last_ack_sent),
        cmocka_unit_test(test_paws),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
