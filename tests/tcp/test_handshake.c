/*
 * test_handshake.c — opening connections (RFC 9293 §3.5, §3.10.7.1-3): passive and active open with the exact
 * SYN / SYN-ACK / ACK segments and their options, resets for segments without a connection, refused and
 * timed-out connects (SYN retransmission at 1 s, 2 s, 4 s ... RFC 6298 §5.5 and tcp_syn_retries), SYN-ACK
 * retransmission and the half-open child's end, and simultaneous open (RFC 9293 figure 8). Text and a FIN on
 * a SYN-ACK: queued (§3.10.7.3), or discarded as Linux without Fast Open does in the linux-* profiles.
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

static void test_passive_open_full_options(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    brisk_sock *l = tf_listen(&t, 80);
    struct tf_events lev = {0};
    brisk_sock_set_callback(l, tf_events_cb, &lev);
    struct tf_peer p;
    tf_peer_init(&p, &t, 40000, 80, 1000);

    uint64_t t0 = 5 * TF_MS;
    struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN, t0);
    h.opts = tf_opts_full();
    h.opts.ts_val = 777;
    tf_inject(&t, &h, NULL, 0, t0);
    struct tf_seg *sa = TF_EXPECT(&t, t0, SYN | ACK, t.q[0].h.seq, 1001, 0);
    /* Options answered: MSS from the device (1500 - 40), our scale for a 4 MB buffer, SACK, TS echoing. */
    assert_int_equal(sa->h.window, 65535); /* never scaled in a SYN (RFC 7323 §2.2) */
    assert_true(sa->h.opts.mss_ok);
    assert_int_equal(sa->h.opts.mss, 1460);
    assert_true(sa->h.opts.wscale_ok);
    assert_int_equal(sa->h.opts.wscale, 7);
    assert_true(sa->h.opts.sack_perm);
    assert_true(sa->h.opts.ts_ok);
    assert_int_equal(sa->h.opts.ts_ecr, 777);
    assert_int_equal(sa->h.opts.nsack, 0);
    uint32_t iss = sa->h.seq;
    uint32_t synack_tsval = sa->h.opts.ts_val;
    TF_EXPECT_NONE(&t);
    int err;
    assert_null(brisk_accept(l, &err));
    assert_int_equal(err, BRISK_ERR_AGAIN);
    assert_int_equal(lev.all, 0);

    /* The final ACK, 10 ms later: ESTABLISHED, on the accept queue, BRISK_EV_ACCEPT on the listener. */
    uint64_t t1 = t0 + 10 * TF_MS;
    p.nxt = 1001;
    p.ack = iss + 1;
    h = tf_peer_hdr(&p, ACK, t1);
    h.opts.ts_ok = 1;
    h.opts.ts_val = 778;
    h.opts.ts_ecr = synack_tsval;
    tf_inject(&t, &h, NULL, 0, t1);
    TF_EXPECT_NONE(&t); /* nothing to say to a bare ACK */
    assert_int_equal(lev.all, BRISK_EV_ACCEPT);
    assert_int_equal(lev.at[3], t1);
    brisk_sock *c = brisk_accept(l, &err);
    assert_non_null(c);
    assert_null(brisk_accept(l, &err));
    struct brisk_conn_info i = tf_info(c);
    assert_int_equal(i.state, BRISK_TCP_ESTABLISHED);
    assert_int_equal(i.laddr, TF_LOCAL_IP);
    assert_int_equal(i.raddr, TF_PEER_IP);
    assert_int_equal(i.lport, 80);
    assert_int_equal(i.rport, 40000);
    assert_true(i.ts_ok && i.sack_ok && i.ws_ok);
    assert_int_equal(i.snd_wscale, 7);
    assert_int_equal(i.rcv_wscale, 7);
    assert_int_equal(i.mss, 1460 - 12); /* the timestamp option rides on every segment */
    assert_int_equal(i.snd_wnd, 65535u << 7);
    assert_int_equal(i.srtt_ns, 10 * TF_MS); /* the SYN-ACK was not retransmitted: a valid sample */
    assert_int_equal(tf_counters(&t).TcpPassiveOpens, 1);
    assert_int_equal(tf_counters(&t).TcpOutSegs, 1);

    /* The connection answers data with the negotiated options: TS echo of the data's TSval, scaled window. */
    p.ts = 1;
    uint64_t t2 = t1 + TF_MS;
    tf_peer_send_data(&p, 100, t2);
    struct tf_seg *a = TF_EXPECT(&t, t2, ACK, iss + 1, 1101, 0);
    assert_true(a->h.opts.ts_ok);
    assert_int_equal(a->h.opts.ts_ecr, p.ts_base + t2 / TF_MS);
    /* 4 MB - 100 bytes free, rounded up to the 128-byte scale unit (as Linux's ALIGN does). */
    assert_int_equal(a->h.window, (4u << 20) >> 7);
    uint8_t buf[200];
    assert_int_equal(brisk_recv(c, buf, sizeof(buf), t2), 100);
    brisk_abort(c, t2);
    TF_EXPECT(&t, t2, RST | ACK, iss + 1, 1101, 0);
    brisk_close(l, t2);
    tf_free(&t);
}

static void test_passive_open_minimal_peer(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    brisk_sock *l = tf_listen(&t, 80);
    struct tf_peer p;
    tf_peer_init(&p, &t, 40001, 80, 0xfffffff0u); /* the peer's sequence space wraps during the test */
    /* A peer that offers nothing: no MSS (536 assumed, RFC 9293 §3.7.1), no scale, no SACK, no TS. */
    struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN, 0);
    tf_inject(&t, &h, NULL, 0, 0);
    struct tf_seg *sa = tf_take(&t);
    assert_int_equal(sa->h.flags, SYN | ACK);
    assert_int_equal(sa->h.ack, 0xfffffff1u);
    assert_true(sa->h.opts.mss_ok); /* we always announce ours */
    assert_int_equal(sa->h.opts.mss, 1460);
    assert_false(sa->h.opts.wscale_ok);
    assert_false(sa->h.opts.sack_perm);
    assert_false(sa->h.opts.ts_ok);
    assert_int_equal(sa->h.window, 65535);
    uint32_t iss = sa->h.seq;
    p.nxt = 0xfffffff1u;
    p.ack = iss + 1;
    p.win = 5000;
    tf_peer_send(&p, ACK, NULL, 0, TF_MS);
    int err;
    brisk_sock *c = brisk_accept(l, &err);
    assert_non_null(c);
    struct brisk_conn_info i = tf_info(c);
    assert_false(i.ts_ok || i.sack_ok || i.ws_ok);
    assert_int_equal(i.mss, 536);
    assert_int_equal(i.snd_wnd, 5000); /* unscaled */

    /* Data across the wrap; the ACK carries an unscaled window and no options. The right edge stays where
     * the SYN-ACK put it (65535 bytes on): moving it by 40 bytes is not worth it (receiver SWS avoidance,
     * RFC 9293 §3.8.6.2.2), so the window is 65535 - 40. */
    tf_peer_send_data(&p, 40, 2 * TF_MS);
    struct tf_seg *a = TF_EXPECT(&t, 2 * TF_MS, ACK, iss + 1, 0xfffffff1u + 40, 0);
    assert_int_equal(a->h.window, 65535 - 40);
    assert_false(a->h.opts.ts_ok);
    assert_int_equal(a->h.opts.nsack, 0);
    assert_int_equal(a->h.hdr_len, 20);
    /* Sending: segments of at most 536 bytes, within the peer's 5000-byte window. */
    uint8_t buf[6000];
    tf_pattern(buf, sizeof(buf), 0);
    assert_int_equal(brisk_send(c, buf, sizeof(buf), 0, 3 * TF_MS), 6000);
    uint32_t seq = iss + 1;
    for (int k = 0; k < 9; k++) {
        struct tf_seg *s = TF_EXPECT(&t, 3 * TF_MS, ACK, seq, 0xfffffff1u + 40, 536);
        assert_true(tf_payload_is(s, seq - iss - 1));
        seq += 536;
    }
    /* 9 x 536 = 4824: the 176 bytes left in the window are less than half the largest window: held (sender
     * SWS avoidance, RFC 9293 §3.8.6.2.1). */
    TF_EXPECT_NONE(&t);
    brisk_abort(c, 4 * TF_MS);
    TF_EXPECT(&t, 4 * TF_MS, RST | ACK, seq, 0xfffffff1u + 40, 0);
    brisk_close(l, 4 * TF_MS);
    tf_free(&t);
}

static void test_segments_without_connection_get_rst(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    brisk_sock *l = tf_listen(&t, 80);
    struct tf_peer p;

    /* SYN to a closed port: RST|ACK, seq 0, ack = SEG.SEQ + 1 (RFC 9293 §3.10.7.1). */
    tf_peer_init(&p, &t, 40002, 81, 5000);
    tf_peer_send(&p, SYN, NULL, 0, TF_MS);
    struct tf_seg *r = TF_EXPECT(&t, TF_MS, RST | ACK, 0, 5001, 0);
    assert_int_equal(r->h.sport, 81);
    assert_int_equal(r->h.dport, 40002);
    assert_int_equal(r->h.window, 0);
    /* Data with an ACK to a closed port: RST with seq = SEG.ACK and no ACK bit. */
    p.ack = 0x12345678;
    tf_peer_send_data(&p, 10, 2 * TF_MS);
    TF_EXPECT(&t, 2 * TF_MS, RST, 0x12345678, 0, 0);
    /* Data without an ACK: RST|ACK acknowledging all of it (SYN/FIN count, payload counts). */
    tf_peer_send(&p, FIN, "abc", 3, 3 * TF_MS);
    TF_EXPECT(&t, 3 * TF_MS, RST | ACK, 0, p.nxt, 0);
    /* A RST is never answered. */
    tf_peer_send(&p, RST, NULL, 0, 4 * TF_MS);
    tf_peer_send(&p, RST | ACK, NULL, 0, 4 * TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_counters(&t).TcpNoPort, 5);
    assert_int_equal(tf_counters(&t).TcpOutRsts, 3);

    /* An ACK to a listener: RST seq = SEG.ACK, and no connection is made. */
    tf_peer_init(&p, &t, 40003, 80, 9000);
    p.ack = 0xabcdef01;
    tf_peer_send(&p, ACK, NULL, 0, 5 * TF_MS);
    TF_EXPECT(&t, 5 * TF_MS, RST, 0xabcdef01, 0, 0);
    /* A RST or a bare FIN to a listener: silence. */
    tf_peer_send(&p, RST, NULL, 0, 6 * TF_MS);
    tf_peer_send(&p, FIN, NULL, 0, 6 * TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(t.st->tcp->nsocks, 1);
    int err;
    assert_null(brisk_accept(l, &err));
    brisk_close(l, 7 * TF_MS);
    assert_int_equal(t.st->tcp->nsocks, 0);
    tf_free(&t);
}

static void test_active_open(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    struct tf_events ev = {0};
    brisk_sock_set_callback(s, tf_events_cb, &ev);
    uint64_t t0 = 100 * TF_MS;
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 443, t0), BRISK_ERR_INPROGRESS);
    struct tf_seg *syn = tf_take(&t);
    assert_int_equal(syn->at, t0);
    assert_int_equal(syn->h.flags, SYN);
    assert_int_equal(syn->h.ack, 0);
    assert_int_equal(syn->h.dport, 443);
    assert_true(syn->h.sport >= 49152);
    assert_int_equal(syn->h.window, 65535);
    assert_true(syn->h.opts.mss_ok);
    assert_int_equal(syn->h.opts.mss, 1460);
    assert_true(syn->h.opts.wscale_ok);
    assert_int_equal(syn->h.opts.wscale, 7);
    assert_true(syn->h.opts.sack_perm);
    assert_true(syn->h.opts.ts_ok);
    assert_int_equal(syn->h.opts.ts_ecr, 0);
    uint32_t iss = syn->h.seq;
    uint16_t lport = syn->h.sport;
    uint32_t syn_tsval = syn->h.opts.ts_val;
    assert_int_equal(tf_info(s).state, BRISK_TCP_SYN_SENT);
    assert_int_equal(brisk_send(s, "x", 1, 0, t0), BRISK_ERR_AGAIN);
    assert_int_equal(ev.all, 0);

    /* SYN-ACK 30 ms later, with scale 2 and a window of 1000: the ACK goes at once, CONNECTED. */
    struct tf_peer p;
    tf_peer_init(&p, &t, 443, lport, 0x80000000u);
    p.ack = iss + 1;
    p.win = 1000;
    uint64_t t1 = t0 + 30 * TF_MS;
    struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN | ACK, t1);
    h.opts = tf_opts_full();
    h.opts.wscale = 2;
    h.opts.mss = 1400;
    h.opts.ts_val = 5555;
    h.opts.ts_ecr = syn_tsval;
    tf_inject(&t, &h, NULL, 0, t1);
    struct tf_seg *a = TF_EXPECT(&t, t1, ACK, iss + 1, 0x80000001u, 0);
    assert_true(a->h.opts.ts_ok);
    assert_int_equal(a->h.opts.ts_ecr, 5555);
    assert_int_equal(a->h.opts.ts_val - syn_tsval, 30); /* a 1 ms clock */
    assert_int_equal(a->h.window, (4u << 20) >> 7);     /* scaled from now on: the whole 4 MB buffer */
    assert_false(a->h.opts.mss_ok || a->h.opts.wscale_ok || a->h.opts.sack_perm);
    TF_EXPECT_NONE(&t);
    assert_int_equal(ev.all, BRISK_EV_CONNECTED | BRISK_EV_WRITABLE);
    assert_int_equal(ev.at[0], t1);
    struct brisk_conn_info i = tf_info(s);
    assert_int_equal(i.state, BRISK_TCP_ESTABLISHED);
    assert_int_equal(i.snd_wnd, 1000); /* a SYN's window is never scaled */
    assert_int_equal(i.snd_wscale, 2);
    assert_int_equal(i.mss, 1400 - 12);
    assert_int_equal(i.srtt_ns, 30 * TF_MS);
    assert_int_equal(tf_counters(&t).TcpActiveOpens, 1);

    /* Later windows are scaled by 2. */
    p.nxt = 0x80000001u;
    p.ts = 1;
    p.win = 1000;
    tf_peer_send(&p, ACK, NULL, 0, t1 + TF_MS);
    assert_int_equal(tf_info(s).snd_wnd, 4000);
    brisk_abort(s, t1 + TF_MS);
    TF_EXPECT(&t, t1 + TF_MS, RST | ACK, iss + 1, 0x80000001u, 0);
    tf_free(&t);
}

/* A SYN-ACK from `p` (ISS 5000) carrying `len` bytes of text, and FIN when `fin`, to the SYN a connect() at
 * t0 sent; returns the socket and leaves the segments the stack sent in reply queued. */
static brisk_sock *synack_with_text(struct tf *t, struct tf_peer *p, struct tf_events *ev, uint32_t len,
                                    int fin, uint64_t t0)
{
    int err;
    brisk_sock *s = brisk_socket(t->st, &err);
    brisk_sock_set_callback(s, tf_events_cb, ev);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 443, t0), BRISK_ERR_INPROGRESS);
    struct tf_seg *syn = tf_take(t);
    tf_peer_init(p, t, 443, syn->h.sport, 5000);
    p->l_iss = syn->h.seq;
    p->ack = syn->h.seq + 1;
    struct brisk_tcp_repr h = tf_peer_hdr(p, (uint8_t)(SYN | ACK | (fin ? FIN : 0)), t0 + 10 * TF_MS);
    h.opts = tf_opts_full();
    h.opts.ts_ok = 0;
    uint8_t data[100];
    tf_pattern(data, len, 0);
    tf_inject(t, &h, data, len, t0 + 10 * TF_MS);
    return s;
}

/* RFC 9293 §3.10.7.3: text on a SYN-ACK is queued once the SYN is acknowledged, and the ACK covers it. */
static void test_synack_data_queued(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    struct tf_events ev = {0};
    tf_init(&t, NULL);
    uint64_t t1 = 10 * TF_MS;
    brisk_sock *s = synack_with_text(&t, &p, &ev, 3, 0, 0);
    TF_EXPECT(&t, t1, ACK, p.l_iss + 1, 5000 + 1 + 3, 0); /* ack 4, relative */
    TF_EXPECT_NONE(&t);
    assert_int_equal(ev.all, BRISK_EV_CONNECTED | BRISK_EV_WRITABLE | BRISK_EV_READABLE);
    uint8_t buf[10], want[3];
    tf_pattern(want, sizeof(want), 0);
    assert_int_equal(brisk_recv(s, buf, sizeof(buf), t1), 3);
    assert_memory_equal(buf, want, 3);
    assert_int_equal(tf_info(s).state, BRISK_TCP_ESTABLISHED);
    brisk_abort(s, t1);
    tf_take(&t);
    /* With a FIN too: the connection goes straight to CLOSE-WAIT, the ACK covers the FIN. */
    memset(&ev, 0, sizeof(ev));
    s = synack_with_text(&t, &p, &ev, 3, 1, TF_SEC);
    TF_EXPECT(&t, TF_SEC + t1, ACK, p.l_iss + 1, 5000 + 1 + 3 + 1, 0);
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_info(s).state, BRISK_TCP_CLOSE_WAIT);
    assert_int_equal(brisk_recv(s, buf, sizeof(buf), TF_SEC + t1), 3);
    assert_int_equal(brisk_recv(s, buf, sizeof(buf), TF_SEC + t1), 0); /* then the end of the stream */
    brisk_abort(s, TF_SEC + t1);
    tf_take(&t);
    assert_int_equal(t.st->tcp->nsocks, 0);
    tf_free(&t);
}

/* Linux 6.x without Fast Open discards a SYN-ACK's text (tcp_rcv_state_process frees the segment after
 * tcp_rcv_synsent_state_process): the ACK says only the SYN arrived, and the peer sends the text again. The
 * linux-* profiles do the same (tcp_synack_data=0). */
static void test_synack_data_linux(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    struct tf_events ev = {0};
    tf_init(&t, NULL);
    assert_int_equal(brisk_settings_apply_profile(&t.st->net.s, "linux-6.x"), BRISK_OK);
    uint64_t t1 = 10 * TF_MS;
    brisk_sock *s = synack_with_text(&t, &p, &ev, 3, 1, 0);
    TF_EXPECT(&t, t1, ACK, p.l_iss + 1, 5000 + 1, 0); /* ack 1: the text and the FIN are not taken */
    TF_EXPECT_NONE(&t);
    assert_int_equal(ev.all, BRISK_EV_CONNECTED | BRISK_EV_WRITABLE);
    assert_int_equal(tf_info(s).state, BRISK_TCP_ESTABLISHED);
    uint8_t buf[10];
    assert_int_equal(brisk_recv(s, buf, sizeof(buf), t1), BRISK_ERR_AGAIN);
    /* Its retransmission is taken like any in-order data. */
    p.nxt = 5001;
    tf_peer_send_data(&p, 3, t1 + 200 * TF_MS);
    TF_EXPECT(&t, t1 + 200 * TF_MS, ACK, p.l_iss + 1, 5004, 0);
    assert_int_equal(brisk_recv(s, buf, sizeof(buf), t1 + 200 * TF_MS), 3);
    brisk_abort(s, t1 + 200 * TF_MS);
    tf_take(&t);
    tf_free(&t);
}

/* A SYN the device refuses (ring full) goes out when a TX completion makes room — not at the 1 s RTO. */
static void test_refused_syn_resent_on_completion(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    t.hold_completions = 1;
    uint64_t t0 = 100 * TF_MS;
    /* Something of ours in the ring, not completed: an echo request to the peer. */
    assert_int_equal(brisk_icmp_echo_send(t.st, TF_PEER_IP, 1, 1, 8, t0), BRISK_OK);
    (void)tf_pending(&t);
    t.f.busy = 1;
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 443, t0), BRISK_ERR_INPROGRESS);
    TF_EXPECT_NONE(&t);
    assert_true(tf_counters(&t).EthOutBusy >= 1);
    /* The ring drains 2 ms later: the completion wakes the connection and the SYN goes at once. */
    t.f.busy = 0;
    fakedev_complete_all(&t.f, t0 + 2 * TF_MS);
    tf_run(&t, t0 + 2 * TF_MS);
    struct tf_seg *syn = tf_take(&t);
    assert_int_equal(syn->h.flags, SYN);
    assert_int_equal(syn->at, t0 + 2 * TF_MS);
    brisk_abort(s, t0 + 3 * TF_MS);
    while (tf_pending(&t))
        tf_take(&t);
    tf_free(&t);
}

static void test_active_open_refused(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    struct tf_events ev = {0};
    brisk_sock_set_callback(s, tf_events_cb, &ev);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 22, 0), BRISK_ERR_INPROGRESS);
    struct tf_seg *syn = tf_take(&t);
    uint32_t iss = syn->h.seq;
    struct tf_peer p;
    tf_peer_init(&p, &t, 22, syn->h.sport, 0);

    /* A RST without ACK, and a RST|ACK with an unacceptable ACK: ignored (RFC 9293 §3.10.7.3). */
    p.ack = iss + 1;
    tf_peer_send(&p, RST, NULL, 0, TF_MS);
    p.ack = iss + 2;
    tf_peer_send(&p, RST | ACK, NULL, 0, TF_MS);
    p.ack = iss;
    tf_peer_send(&p, RST | ACK, NULL, 0, TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_info(s).state, BRISK_TCP_SYN_SENT);
    assert_int_equal(ev.all, 0);
    /* A bare ACK with a bad ACK number: RST seq = SEG.ACK, still SYN-SENT. */
    p.ack = iss + 100;
    tf_peer_send(&p, ACK, NULL, 0, TF_MS);
    TF_EXPECT(&t, TF_MS, RST, iss + 100, 0, 0);
    assert_int_equal(tf_info(s).state, BRISK_TCP_SYN_SENT);

    /* The acceptable RST|ACK: connection refused. */
    p.ack = iss + 1;
    tf_peer_send(&p, RST | ACK, NULL, 0, 2 * TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(ev.all, BRISK_EV_ERROR | BRISK_EV_CLOSED);
    assert_int_equal(ev.at[5], 2 * TF_MS);
    assert_int_equal(brisk_sock_error(s), BRISK_ERR_CONNREFUSED);
    assert_int_equal(tf_info(s).state, BRISK_TCP_CLOSED);
    uint8_t b[4];
    assert_int_equal(brisk_recv(s, b, 4, 2 * TF_MS), BRISK_ERR_CONNREFUSED);
    assert_int_equal(brisk_send(s, b, 4, 0, 2 * TF_MS), BRISK_ERR_CONNREFUSED);
    assert_int_equal(tf_counters(&t).TcpAttemptFails, 1);
    /* No timer is left: the SYN is not retransmitted. */
    tf_run(&t, 100 * TF_SEC);
    TF_EXPECT_NONE(&t);
    brisk_close(s, 100 * TF_SEC);
    TF_EXPECT_NONE(&t);
    assert_int_equal(t.st->tcp->nsocks, 0);
    tf_free(&t);
}

static void test_syn_retransmit_then_timeout(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, (const char *const[]){"tcp_syn_retries=3", NULL});
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    struct tf_events ev = {0};
    brisk_sock_set_callback(s, tf_events_cb, &ev);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 80, 0), BRISK_ERR_INPROGRESS);
    struct tf_seg *syn = tf_take(&t);
    uint32_t iss = syn->h.seq;
    /* RFC 6298 §2.1 / §5.5: 1 s, then doubling; the same SYN each time. */
    static const uint64_t at[] = {1, 3, 7};
    for (int k = 0; k < 3; k++) {
        tf_run(&t, at[k] * TF_SEC - 1);
        TF_EXPECT_NONE(&t);
        tf_run(&t, at[k] * TF_SEC);
        struct tf_seg *r = TF_EXPECT(&t, at[k] * TF_SEC, SYN, iss, 0, 0);
        assert_int_equal(r->h.opts.mss, 1460);
        assert_true(r->h.opts.ts_ok && r->h.opts.sack_perm && r->h.opts.wscale_ok);
        assert_int_equal(ev.all, 0);
    }
    assert_int_equal(tf_counters(&t).TcpRetransSegs, 3);
    /* The fourth expiry (7 s + 8 s) gives up: BRISK_ERR_TIMEDOUT, no further SYN. */
    tf_run(&t, 15 * TF_SEC - 1);
    assert_int_equal(ev.all, 0);
    tf_run(&t, 15 * TF_SEC);
    TF_EXPECT_NONE(&t);
    assert_int_equal(ev.all, BRISK_EV_ERROR | BRISK_EV_CLOSED);
    assert_int_equal(ev.at[5], 15 * TF_SEC);
    assert_int_equal(brisk_sock_error(s), BRISK_ERR_TIMEDOUT);
    assert_int_equal(tf_counters(&t).TcpAttemptFails, 1);
    tf_run(&t, 300 * TF_SEC);
    TF_EXPECT_NONE(&t);
    brisk_close(s, 300 * TF_SEC);
    tf_free(&t);
}

/* A SYN retransmitted once: the handshake gives no RTT sample (Karn), and data starts with RTO 3 s. */
static void test_syn_retransmitted_handshake_rto_3s(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 80, 0), BRISK_ERR_INPROGRESS);
    struct tf_seg *syn = tf_take(&t);
    uint32_t iss = syn->h.seq;
    struct tf_peer p;
    tf_peer_init(&p, &t, 80, syn->h.sport, 100);
    tf_run(&t, TF_SEC);
    TF_EXPECT(&t, TF_SEC, SYN, iss, 0, 0);
    p.ack = iss + 1;
    tf_peer_send(&p, SYN | ACK, NULL, 0, TF_SEC + 50 * TF_MS);
    TF_EXPECT(&t, TF_SEC + 50 * TF_MS, ACK, iss + 1, 101, 0);
    struct brisk_conn_info i = tf_info(s);
    assert_int_equal(i.srtt_ns, 0);
    assert_int_equal(i.rto_ns, 3 * TF_SEC); /* RFC 6298 §5.7 */
    uint64_t t1 = 2 * TF_SEC;
    assert_int_equal(brisk_send(s, "hello", 5, 0, t1), 5);
    TF_EXPECT(&t, t1, ACK | PSH, iss + 1, 101, 5);
    tf_run(&t, t1 + 3 * TF_SEC - 1);
    TF_EXPECT_NONE(&t);
    tf_run(&t, t1 + 3 * TF_SEC);
    TF_EXPECT(&t, t1 + 3 * TF_SEC, ACK | PSH, iss + 1, 101, 5);
    brisk_abort(s, t1 + 3 * TF_SEC);
    TF_EXPECT(&t, t1 + 3 * TF_SEC, RST | ACK, iss + 6, 101, 0);
    tf_free(&t);
}

static void test_synsent_bad_synack_gets_rst(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 80, 0), BRISK_ERR_INPROGRESS);
    struct tf_seg *syn = tf_take(&t);
    uint32_t iss = syn->h.seq;
    struct tf_peer p;
    tf_peer_init(&p, &t, 80, syn->h.sport, 100);
    /* A SYN-ACK acknowledging something we never sent (an old duplicate): RST seq = SEG.ACK. */
    p.ack = iss + 7;
    tf_peer_send(&p, SYN | ACK, NULL, 0, TF_MS);
    TF_EXPECT(&t, TF_MS, RST, iss + 7, 0, 0);
    assert_int_equal(tf_info(s).state, BRISK_TCP_SYN_SENT);
    /* The right one still completes the open. */
    p.nxt = 100;
    p.ack = iss + 1;
    tf_peer_send(&p, SYN | ACK, NULL, 0, 2 * TF_MS);
    TF_EXPECT(&t, 2 * TF_MS, ACK, iss + 1, 101, 0);
    assert_int_equal(tf_info(s).state, BRISK_TCP_ESTABLISHED);
    brisk_abort(s, 3 * TF_MS);
    TF_EXPECT(&t, 3 * TF_MS, RST | ACK, iss + 1, 101, 0);
    tf_free(&t);
}

/* The SYN's retransmission times: connect() at 0, the stack run second by second to `until`; returns how many
 * SYNs were sent after the first and their times in at[] (ms). `*failed_at` is when the connect failed. */
static int syn_times(const char *const *sets, uint64_t until, uint64_t *at, int max, uint64_t *failed_at)
{
    struct tf t;
    tf_init(&t, sets);
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    struct tf_events ev = {0};
    brisk_sock_set_callback(s, tf_events_cb, &ev);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 80, 0), BRISK_ERR_INPROGRESS);
    uint32_t iss = tf_take(&t)->h.seq;
    int n = 0;
    while (tf_run_to_seg(&t, until)) {
        struct tf_seg *r = TF_EXPECT(&t, TF_ANY_TIME, SYN, iss, 0, 0);
        assert_true(n < max);
        at[n++] = r->at / TF_MS;
    }
    assert_int_equal(ev.all, BRISK_EV_ERROR | BRISK_EV_CLOSED);
    assert_int_equal(brisk_sock_error(s), BRISK_ERR_TIMEDOUT);
    *failed_at = ev.at[5] / TF_MS;
    brisk_close(s, t.st->net.now);
    tf_free(&t);
    return n;
}

/* tcp_syn_linear_timeouts (Linux 6.18's default 4; 0 in every profile): the first timeouts in SYN-SENT keep
 * the initial RTO (Linux tcp_retransmit_timer doubles it once tp->total_rto exceeds the setting), and they
 * add to tcp_syn_retries' count (tcp_write_timeout) — but the connect still ends once the first SYN is as
 * old as tcp_syn_retries exponential backoffs would make it (retransmits_timed_out, tcp_model_timeout).
 * Linux 6.18 as measured (tests/kernel/syn-linear-timeouts.pkt): SYNs at 1, 2, 3, 4, 5, 7 s, RTO 4 s. With
 * 0 the backoff is RFC 6298's from the first timeout. Before the setting brisk had only the latter. */
static void test_syn_linear_timeouts(void **state)
{
    (void)state;
    uint64_t at[16], failed;
    /* Linux's defaults: tcp_syn_retries 6 + 4 linear: ten SYNs again, the last at 67 s; the eleventh
     * expiry, at 131 s, is both past the count and past the 127 s model. */
    int n =
        syn_times((const char *const[]){"tcp_syn_linear_timeouts=4", NULL}, 200 * TF_SEC, at, 16, &failed);
    static const uint64_t want6[] = {1000, 2000, 3000, 4000, 5000, 7000, 11000, 19000, 35000, 67000};
    assert_int_equal(n, 10);
    assert_memory_equal(at, want6, sizeof(want6));
    assert_int_equal(failed, 131000);
    /* tcp_syn_retries 2: the model (1 + 2 + 4 = 7 s) ends it at the sixth expiry, before the count. */
    n = syn_times((const char *const[]){"tcp_syn_linear_timeouts=4", "tcp_syn_retries=2", NULL}, 200 * TF_SEC,
                  at, 16, &failed);
    static const uint64_t want2[] = {1000, 2000, 3000, 4000, 5000};
    assert_int_equal(n, 5);
    assert_memory_equal(at, want2, sizeof(want2));
    assert_int_equal(failed, 7000);
    /* The default, and every profile's: exponential. */
    n = syn_times((const char *const[]){"tcp_syn_retries=2", NULL}, 200 * TF_SEC, at, 16, &failed);
    assert_int_equal(n, 2);
    assert_int_equal(at[0], 1000);
    assert_int_equal(at[1], 3000);
    assert_int_equal(failed, 7000);
}

/* An unacceptable ACK in SYN-SENT — a RST (ignored) or an ACK (answered with a RST) acknowledging something
 * never sent — may come from a peer holding a stale connection: Linux retransmits the SYN TCP_TIMEOUT_MIN
 * later (tcp_rcv_synsent_state_process, while the SYN has not been retransmitted; 2 jiffies: 2 ms here),
 * an ordinary expiry that doubles the RTO, so the next SYN is 2 s after it. A second bad ACK does not bring
 * it forward again. Every profile (RFC 9293 §3.5.2 figure 10 lets A try again). Before, the SYN waited for
 * the 1 s initial RTO. */
static void test_synsent_bad_ack_resends_syn_soon(void **state)
{
    (void)state;
    for (int rst = 0; rst <= 1; rst++) {
        struct tf t;
        tf_init(&t, NULL);
        int err;
        brisk_sock *s = brisk_socket(t.st, &err);
        assert_int_equal(brisk_connect(s, TF_PEER_IP, 80, 0), BRISK_ERR_INPROGRESS);
        struct tf_seg *syn = tf_take(&t);
        uint32_t iss = syn->h.seq;
        struct tf_peer p;
        tf_peer_init(&p, &t, 80, syn->h.sport, 100);
        p.ack = iss + 77;
        tf_peer_send(&p, rst ? RST | ACK : ACK, NULL, 0, 10 * TF_MS);
        if (!rst)
            TF_EXPECT(&t, 10 * TF_MS, RST, iss + 77, 0, 0);
        TF_EXPECT_NONE(&t);
        tf_run(&t, 12 * TF_MS - 1);
        TF_EXPECT_NONE(&t);
        tf_run(&t, 12 * TF_MS);
        TF_EXPECT(&t, 12 * TF_MS, SYN, iss, 0, 0);
        assert_int_equal(tf_info(s).state, BRISK_TCP_SYN_SENT);
        assert_int_equal(tf_info(s).rto_ns, 2 * TF_SEC);
        tf_peer_send(&p, rst ? RST | ACK : ACK, NULL, 0, 100 * TF_MS);
        if (!rst)
            TF_EXPECT(&t, 100 * TF_MS, RST, iss + 77, 0, 0);
        tf_run(&t, 12 * TF_MS + 2 * TF_SEC - 1);
        TF_EXPECT_NONE(&t);
        tf_run(&t, 12 * TF_MS + 2 * TF_SEC);
        TF_EXPECT(&t, 12 * TF_MS + 2 * TF_SEC, SYN, iss, 0, 0);
        brisk_abort(s, 3 * TF_SEC);
        tf_free(&t);
    }
}

/* A SYN-ACK whose timestamp echo names no TSval we sent (not between our SYN's and now) is rejected with a
 * RST from its ACK, the SYN's timer left alone; the real one then completes the open, and an echo of 0 is no
 * echo (Linux tcp_rcv_synsent_state_process, PAWSActiveRejected; measured on 6.18:
 * tests/conformance/handshake/synack-bad-tsecr.pkt). Before, brisk took the bogus SYN-ACK. */
static void test_synack_bogus_ts_echo(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 80, 0), BRISK_ERR_INPROGRESS);
    struct tf_seg *syn = tf_take(&t);
    uint32_t iss = syn->h.seq, tsval = syn->h.opts.ts_val;
    struct tf_peer p;
    tf_peer_init(&p, &t, 80, syn->h.sport, 100);
    for (int k = 0; k < 2; k++) {
        struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN | ACK, 10 * TF_MS);
        h.ack = iss + 1;
        h.opts = tf_opts_full();
        h.opts.ts_ecr = k ? tsval - 1 : tsval + 1000; /* before our SYN, or from the future */
        tf_inject(&t, &h, NULL, 0, 10 * TF_MS);
        TF_EXPECT(&t, 10 * TF_MS, RST, iss + 1, 0, 0);
        assert_int_equal(tf_info(s).state, BRISK_TCP_SYN_SENT);
    }
    assert_int_equal(tf_counters(&t).PAWSActive, 2);
    tf_run(&t, TF_SEC - 1);
    TF_EXPECT_NONE(&t); /* no early SYN */
    struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN | ACK, 20 * TF_MS);
    h.ack = iss + 1;
    h.opts = tf_opts_full();
    h.opts.ts_ecr = tsval;
    tf_inject(&t, &h, NULL, 0, TF_SEC - 1);
    TF_EXPECT(&t, TF_SEC - 1, ACK, iss + 1, 101, 0);
    assert_int_equal(tf_info(s).state, BRISK_TCP_ESTABLISHED);
    brisk_abort(s, TF_SEC);
    tf_free(&t);
}

static void test_synack_retransmit_and_half_open_expiry(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, (const char *const[]){"tcp_synack_retries=2", NULL});
    brisk_sock *l = tf_listen(&t, 80);
    struct tf_events lev = {0};
    brisk_sock_set_callback(l, tf_events_cb, &lev);
    struct tf_peer p;
    tf_peer_init(&p, &t, 40010, 80, 7000);
    struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN, 0);
    h.opts = tf_opts_full();
    tf_inject(&t, &h, NULL, 0, 0);
    struct tf_seg *sa = TF_EXPECT(&t, 0, SYN | ACK, t.q[0].h.seq, 7001, 0);
    uint32_t iss = sa->h.seq;
    assert_int_equal(t.st->tcp->nsocks, 2);
    /* The peer retransmits its SYN: the SYN-ACK goes again at once (it was lost). */
    tf_inject(&t, &h, NULL, 0, 200 * TF_MS);
    sa = TF_EXPECT(&t, 200 * TF_MS, SYN | ACK, iss, 7001, 0);
    assert_true(sa->h.opts.ts_ok && sa->h.opts.wscale_ok && sa->h.opts.sack_perm);
    /* Our own retransmissions: 1 s and 1 + 2 s after the first SYN-ACK (the peer's SYN did not move it). */
    tf_run(&t, TF_SEC);
    sa = TF_EXPECT(&t, TF_SEC, SYN | ACK, iss, 7001, 0);
    assert_true(sa->h.opts.ts_ok && sa->h.opts.wscale_ok && sa->h.opts.sack_perm);
    assert_int_equal(sa->h.opts.mss, 1460);
    tf_run(&t, 3 * TF_SEC);
    TF_EXPECT(&t, 3 * TF_SEC, SYN | ACK, iss, 7001, 0);
    /* tcp_synack_retries = 2: the third expiry (3 + 4 s) drops the child silently. */
    tf_run(&t, 7 * TF_SEC);
    TF_EXPECT_NONE(&t);
    assert_int_equal(t.st->tcp->nsocks, 1);
    assert_int_equal(lev.all, 0);
    /* The peer's late ACK now meets only the listener: RST. */
    p.nxt = 7001;
    p.ack = iss + 1;
    tf_peer_send(&p, ACK, NULL, 0, 8 * TF_SEC);
    TF_EXPECT(&t, 8 * TF_SEC, RST, iss + 1, 0, 0);
    int err;
    assert_null(brisk_accept(l, &err));
    brisk_close(l, 8 * TF_SEC);
    tf_free(&t);
}

/* A RST for a half-open child (RFC 9293 §3.10.7.4: from SYN-RECEIVED of a passive open, back to LISTEN). */
static void test_rst_in_syn_received(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    brisk_sock *l = tf_listen(&t, 80);
    struct tf_peer p;
    tf_peer_init(&p, &t, 40011, 80, 300);
    tf_peer_send(&p, SYN, NULL, 0, 0);
    struct tf_seg *sa = tf_take(&t);
    uint32_t iss = sa->h.seq;
    p.ack = iss + 1;
    tf_peer_send(&p, RST, NULL, 0, TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(t.st->tcp->nsocks, 1);
    tf_run(&t, 10 * TF_SEC);
    TF_EXPECT_NONE(&t); /* no SYN-ACK retransmission for the dead child */
    /* The listener still works for the same peer. */
    tf_peer_init(&p, &t, 40011, 80, 900);
    brisk_sock *c = tf_open_passive(&p, l, NULL, 11 * TF_SEC, 0);
    assert_int_equal(tf_info(c).state, BRISK_TCP_ESTABLISHED);
    brisk_abort(c, 11 * TF_SEC);
    tf_take(&t);
    brisk_close(l, 11 * TF_SEC);
    tf_free(&t);
}

/* The linux-6.x profile's settings (tcp_synrecv_reset=1 among them). */
static const char *const *linux_sets(void)
{
    for (size_t i = 0; i < brisk_profiles_count(); i++)
        if (strcmp(brisk_profile_name(i), "linux-6.x") == 0)
            return brisk_profile_settings(i);
    fail();
    return NULL;
}

/* A SYN with another ISN, in the window of a half-open connection: linux-6.x drops the connection and answers
 * with a RST built from the SYN (SEQ 0, ACK = its end), as Linux's tcp_check_req does (measured on 6.18); the
 * peer's late ACK then gets a RST from the listener. brisk's profile sends RFC 5961 §4.2's challenge ACK and
 * the handshake completes. Before the setting every profile did the latter. A RST in the window but not at
 * RCV.NXT gets a challenge ACK in both (tests/conformance/handshake/syn-received-rst-in-window.pkt). */
static void test_synrecv_syn_in_window(void **state)
{
    (void)state;
    for (int lx = 0; lx <= 1; lx++) {
        struct tf t;
        tf_init(&t, lx ? linux_sets() : NULL);
        brisk_sock *l = tf_listen(&t, 80);
        struct tf_peer p;
        tf_peer_init(&p, &t, 40012, 80, 300);
        tf_peer_send(&p, SYN, NULL, 0, 0);
        uint32_t iss = tf_take(&t)->h.seq;
        struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN, TF_MS);
        h.seq = 400; /* 100 bytes into the window */
        tf_inject(&t, &h, NULL, 0, TF_MS);
        p.ack = iss + 1;
        if (lx) {
            TF_EXPECT(&t, TF_MS, RST | ACK, 0, 401, 0);
            assert_int_equal(t.st->tcp->nsocks, 1); /* the listener alone */
            tf_peer_send(&p, ACK, NULL, 0, 2 * TF_MS);
            TF_EXPECT(&t, 2 * TF_MS, RST, iss + 1, 0, 0);
        } else {
            TF_EXPECT(&t, TF_MS, ACK, iss + 1, 301, 0);
            tf_peer_send(&p, ACK, NULL, 0, 2 * TF_MS);
            TF_EXPECT_NONE(&t);
            int err;
            brisk_sock *c = brisk_accept(l, &err);
            assert_non_null(c);
            brisk_abort(c, 3 * TF_MS);
            tf_take(&t);
        }
        brisk_close(l, 3 * TF_MS);
        assert_int_equal(t.st->tcp->nsocks, 0);
        tf_free(&t);
    }
}

/* Simultaneous open, RFC 9293 figure 8 with the third segment a plain ACK. */
static void test_simultaneous_open(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    struct tf_events ev = {0};
    brisk_sock_set_callback(s, tf_events_cb, &ev);
    assert_int_equal(brisk_bind(s, 0, 5000), BRISK_OK);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 6000, 0), BRISK_ERR_INPROGRESS);
    struct tf_seg *syn = tf_take(&t);
    uint32_t iss = syn->h.seq;
    assert_int_equal(syn->h.sport, 5000);
    struct tf_peer p;
    tf_peer_init(&p, &t, 6000, 5000, 300);
    /* The peer's SYN crosses ours: SYN-RECEIVED, and our SYN again, now with ACK (same ISS). */
    struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN, 10 * TF_MS);
    h.opts = tf_opts_full();
    tf_inject(&t, &h, NULL, 0, 10 * TF_MS);
    p.nxt = 301;
    struct tf_seg *sa = TF_EXPECT(&t, 10 * TF_MS, SYN | ACK, iss, 301, 0);
    assert_true(sa->h.opts.mss_ok && sa->h.opts.wscale_ok && sa->h.opts.sack_perm && sa->h.opts.ts_ok);
    assert_int_equal(sa->h.opts.ts_ecr, h.opts.ts_val);
    assert_int_equal(tf_info(s).state, BRISK_TCP_SYN_RECEIVED);
    assert_int_equal(ev.all, 0);
    /* The peer's ACK of our SYN: ESTABLISHED, CONNECTED. */
    p.ts = 1;
    p.ack = iss + 1;
    tf_peer_send(&p, ACK, NULL, 0, 20 * TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_info(s).state, BRISK_TCP_ESTABLISHED);
    assert_true(ev.all & BRISK_EV_CONNECTED);
    assert_int_equal(ev.at[0], 20 * TF_MS);
    brisk_abort(s, 30 * TF_MS);
    TF_EXPECT(&t, 30 * TF_MS, RST | ACK, iss + 1, 301, 0);
    tf_free(&t);
}

/* Simultaneous open exactly as RFC 9293 figure 8: each side's third segment is its SYN-ACK. The SYN-ACK
 * (SEQ = IRS, ACK = ISS + 1) arriving in SYN-RECEIVED must not be answered with yet another SYN-ACK: two such
 * stacks would trade SYN-ACKs forever. It completes the open at once (the figure's line 6; Linux's
 * tcp_validate_incoming lets this one segment through) and its SYN, a duplicate, is acknowledged. Before,
 * brisk answered with an ACK and stayed in SYN-RECEIVED until a later ACK or its own SYN-ACK's timeout. */
static void test_simultaneous_open_crossing_synacks(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    struct tf_events ev = {0};
    brisk_sock_set_callback(s, tf_events_cb, &ev);
    assert_int_equal(brisk_bind(s, 0, 5001), BRISK_OK);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 6001, 0), BRISK_ERR_INPROGRESS);
    uint32_t iss = tf_take(&t)->h.seq;
    struct tf_peer p;
    tf_peer_init(&p, &t, 6001, 5001, 300);
    tf_peer_send(&p, SYN, NULL, 0, 10 * TF_MS);
    TF_EXPECT(&t, 10 * TF_MS, SYN | ACK, iss, 301, 0);
    /* The peer's SYN-ACK (figure 8 line 6). */
    p.nxt = 300;
    p.ack = iss + 1;
    tf_peer_send(&p, SYN | ACK, NULL, 0, 11 * TF_MS);
    struct tf_seg *r = TF_EXPECT(&t, 11 * TF_MS, ACK, iss + 1, 301, 0);
    assert_int_equal(r->h.opts.nsack, 0); /* no SACK negotiated: no D-SACK */
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_info(s).state, BRISK_TCP_ESTABLISHED);
    assert_true(ev.all & BRISK_EV_CONNECTED);
    assert_int_equal(ev.at[0], 11 * TF_MS);
    brisk_abort(s, 30 * TF_MS);
    TF_EXPECT(&t, 30 * TF_MS, RST | ACK, iss + 1, 301, 0);
    tf_free(&t);
}

/* The same with SACK negotiated: the ACK of the duplicate SYN reports it, D-SACK [IRS, IRS + 1), as Linux's
 * does (tcp_data_queue: a segment wholly below RCV.NXT). Data queued since goes at once, with it. */
static void test_simultaneous_open_synack_dsack(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    assert_int_equal(brisk_bind(s, 0, 5003), BRISK_OK);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 6003, 0), BRISK_ERR_INPROGRESS);
    uint32_t iss = tf_take(&t)->h.seq;
    struct tf_peer p;
    tf_peer_init(&p, &t, 6003, 5003, 300);
    struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN, 10 * TF_MS);
    h.opts = tf_opts_full();
    h.opts.ts_ok = 0;
    tf_inject(&t, &h, NULL, 0, 10 * TF_MS);
    TF_EXPECT(&t, 10 * TF_MS, SYN | ACK, iss, 301, 0);
    h = tf_peer_hdr(&p, SYN | ACK, 11 * TF_MS);
    h.seq = 300;
    h.ack = iss + 1;
    h.opts = tf_opts_full();
    h.opts.ts_ok = 0;
    tf_inject(&t, &h, NULL, 0, 11 * TF_MS);
    struct tf_seg *r = TF_EXPECT(&t, 11 * TF_MS, ACK, iss + 1, 301, 0);
    assert_int_equal(r->h.opts.nsack, 1);
    assert_int_equal(r->h.opts.sack[0].start, 300);
    assert_int_equal(r->h.opts.sack[0].end, 301);
    assert_int_equal(tf_info(s).state, BRISK_TCP_ESTABLISHED);
    assert_int_equal(brisk_send(s, "hello", 5, 0, 12 * TF_MS), 5);
    r = TF_EXPECT(&t, 12 * TF_MS, ACK | PSH, iss + 1, 301, 5);
    assert_int_equal(r->h.opts.nsack, 0); /* the D-SACK went once */
    brisk_abort(s, 30 * TF_MS);
    TF_EXPECT(&t, 30 * TF_MS, RST | ACK, iss + 6, 301, 0);
    tf_free(&t);
}

/* RFC 9293 §3.10.7.4: a RST in SYN-RECEIVED reached from SYN-SENT refuses the connection. */
static void test_simultaneous_open_reset_refuses(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    struct tf_events ev = {0};
    brisk_sock_set_callback(s, tf_events_cb, &ev);
    assert_int_equal(brisk_bind(s, 0, 5002), BRISK_OK);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 6002, 0), BRISK_ERR_INPROGRESS);
    uint32_t iss = tf_take(&t)->h.seq;
    struct tf_peer p;
    tf_peer_init(&p, &t, 6002, 5002, 300);
    tf_peer_send(&p, SYN, NULL, 0, 10 * TF_MS);
    TF_EXPECT(&t, 10 * TF_MS, SYN | ACK, iss, 301, 0);
    p.ack = iss + 1;
    tf_peer_send(&p, RST | ACK, NULL, 0, 20 * TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(ev.all, BRISK_EV_ERROR | BRISK_EV_CLOSED);
    assert_int_equal(brisk_sock_error(s), BRISK_ERR_CONNREFUSED);
    assert_int_equal(tf_counters(&t).TcpAttemptFails, 1);
    brisk_close(s, 30 * TF_MS);
    assert_int_equal(t.st->tcp->nsocks, 0);
    tf_free(&t);
}

/* The handshake's third segment may carry data: it is delivered with the connection. */
static void test_final_ack_with_data(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    brisk_sock *l = tf_listen(&t, 80);
    struct tf_peer p;
    tf_peer_init(&p, &t, 40020, 80, 100);
    tf_peer_send(&p, SYN, NULL, 0, 0);
    struct tf_seg *sa = tf_take(&t);
    p.l_iss = sa->h.seq;
    p.ack = p.l_iss + 1;
    tf_peer_send_data(&p, 300, 5 * TF_MS);
    TF_EXPECT(&t, 5 * TF_MS, ACK, p.l_iss + 1, 401, 0); /* quick ACK of the data */
    int err;
    brisk_sock *c = brisk_accept(l, &err);
    assert_non_null(c);
    assert_int_equal(tf_info(c).state, BRISK_TCP_ESTABLISHED);
    uint8_t buf[400], want[300];
    tf_pattern(want, sizeof(want), 0);
    assert_int_equal(brisk_recv(c, buf, sizeof(buf), 6 * TF_MS), 300);
    assert_memory_equal(buf, want, 300);
    /* Without window scaling the window is already the largest a header can carry (65535 - 300 after the
     * data): reading cannot open it by a worthwhile amount, so no window update. */
    TF_EXPECT_NONE(&t);
    brisk_abort(c, 7 * TF_MS);
    TF_EXPECT(&t, 7 * TF_MS, RST | ACK, p.l_iss + 1, 401, 0);
    brisk_close(l, 7 * TF_MS);
    tf_free(&t);
}

/* Events that come before the application sets a callback are kept, not dropped: data that arrived between
 * accept and brisk_sock_set_callback raises READABLE as the callback is set (the POSIX facade sets it after
 * accept4 returns), and more data then raises it again as usual. */
static void test_events_kept_until_callback(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    brisk_sock *l = tf_listen(&t, 80);
    struct tf_peer p;
    tf_peer_init(&p, &t, 40030, 80, 100);
    tf_peer_send(&p, SYN, NULL, 0, 0);
    struct tf_seg *sa = tf_take(&t);
    p.l_iss = sa->h.seq;
    p.ack = p.l_iss + 1;
    tf_peer_send(&p, ACK, NULL, 0, 1 * TF_MS);
    int err;
    brisk_sock *c = brisk_accept(l, &err);
    assert_non_null(c);
    tf_peer_send_data(&p, 200, 2 * TF_MS); /* no callback on c yet */
    struct tf_events ev = {0};
    brisk_sock_set_callback(c, tf_events_cb, &ev);
    assert_true(ev.all & BRISK_EV_READABLE);
    assert_int_equal(ev.calls, 1);
    uint8_t buf[300];
    assert_int_equal(brisk_recv(c, buf, sizeof(buf), 3 * TF_MS), 200);
    ev = (struct tf_events){0};
    tf_peer_send_data(&p, 100, 4 * TF_MS);
    assert_true(ev.all & BRISK_EV_READABLE);
    /* Setting the callback again with nothing pending calls nothing. */
    assert_int_equal(brisk_recv(c, buf, sizeof(buf), 5 * TF_MS), 100);
    ev = (struct tf_events){0};
    brisk_sock_set_callback(c, tf_events_cb, &ev);
    assert_int_equal(ev.calls, 0);
    brisk_abort(c, 6 * TF_MS);
    brisk_close(l, 6 * TF_MS);
    tf_free(&t);
}

static void test_listener_backlog_overflow(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    int err;
    brisk_sock *l = brisk_socket(t.st, &err);
    assert_int_equal(brisk_bind(l, 0, 80), BRISK_OK);
    assert_int_equal(brisk_listen(l, 1), BRISK_OK);
    struct tf_peer p1, p2;
    tf_peer_init(&p1, &t, 41000, 80, 10);
    tf_peer_init(&p2, &t, 41001, 80, 20);
    brisk_sock *c1 = NULL;
    tf_peer_send(&p1, SYN, NULL, 0, 0);
    p1.l_iss = tf_take(&t)->h.seq;
    p1.ack = p1.l_iss + 1;
    tf_peer_send(&p1, ACK, NULL, 0, TF_MS);
    /* The accept queue (backlog 1) is full: a second SYN is dropped silently and counted. */
    tf_peer_send(&p2, SYN, NULL, 0, 2 * TF_MS);
    TF_EXPECT_NONE(&t);
    assert_int_equal(tf_counters(&t).ListenOverflows, 1);
    c1 = brisk_accept(l, &err);
    assert_non_null(c1);
    /* Room again: the retransmitted SYN is served. */
    p2.nxt = 20;
    tf_peer_send(&p2, SYN, NULL, 0, TF_SEC);
    TF_EXPECT(&t, TF_SEC, SYN | ACK, t.q[t.head].h.seq, 21, 0);
    brisk_abort(c1, TF_SEC);
    tf_take(&t);
    brisk_close(l, TF_SEC); /* the half-open child goes with its listener, silently (Linux's request sock) */
    TF_EXPECT_NONE(&t);
    assert_int_equal(t.st->tcp->nsocks, 0);
    tf_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_passive_open_full_options),
        cmocka_unit_test(test_passive_open_minimal_peer),
        cmocka_unit_test(test_segments_without_connection_get_rst),
        cmocka_unit_test(test_active_open),
        cmocka_unit_test(test_synack_data_queued),
        cmocka_unit_test(test_synack_data_linux),
        cmocka_unit_test(test_active_open_refused),
        cmocka_unit_test(test_refused_syn_resent_on_completion),
        cmocka_unit_test(test_syn_retransmit_then_timeout),
        cmocka_unit_test(test_syn_retransmitted_handshake_rto_3s),
        cmocka_unit_test(test_syn_linear_timeouts),
        cmocka_unit_test(test_synsent_bad_ack_resends_syn_soon),
        cmocka_unit_test(test_synack_bogus_ts_echo),
        cmocka_unit_test(test_synsent_bad_synack_gets_rst),
        cmocka_unit_test(test_synack_retransmit_and_half_open_expiry),
        cmocka_unit_test(test_rst_in_syn_received),
        cmocka_unit_test(test_synrecv_syn_in_window),
        cmocka_unit_test(test_simultaneous_open),
        cmocka_unit_test(test_simultaneous_open_crossing_synacks),
        cmocka_unit_test(test_simultaneous_open_synack_dsack),
        cmocka_unit_test(test_simultaneous_open_reset_refuses),
        cmocka_unit_test(test_final_ack_with_data),
        cmocka_unit_test(test_listener_backlog_overflow),
        cmocka_unit_test(test_events_kept_until_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
