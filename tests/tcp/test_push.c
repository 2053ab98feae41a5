/*
 * test_push.c — when a write's bytes leave and what marks them: MSG_MORE's and TCP_CORK's timers, TCP_NODELAY
 * over TCP_CORK, TCP_NOTSENT_LOWAT's partial writes and writable events, MSG_EOR record boundaries, PSH, and
 * sender silly-window avoidance — under brisk's defaults and under the linux-6.x profile where the two
 * deliberately differ (tcp_push_each_write, tcp_cork_probe_timer, tcp_sws_partial).
 *
 * Every connection here is the passive open of tests/tcp's usual fixture with a peer that announces MSS 1000
 * and no timestamps, so segments are 1000 bytes exactly: the numbers read like the Linux packetdrill scripts
 * these behaviours come from (tools/testing/selftests/net/packetdrill: tcp_nagle_sendmsg_msg_more.pkt,
 * tcp_nagle_sockopt_cork_nodelay.pkt, tcp_eor_no-coalesce-*.pkt), with sequence numbers counted from the
 * first data byte. The linux-6.x profile is applied whole, then TSQ and auto-corking are turned off as
 * tf_init does for every white-box test (the fake device completes frames only when a test collects them).
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
#define PSH BRISK_TCP_PSH
#define FIN BRISK_TCP_FIN

enum { BRISK, LINUX };

/* The settings of a row: brisk's defaults, or the linux-6.x profile's. */
static const char *const *profile_sets(int profile)
{
    return profile == BRISK ? NULL : tf_profile_sets("linux-6.x");
}

/* The connection, accepted at 0 after a handshake of `rtt`, from a peer with MSS 1000, SACK, no timestamps,
 * window scaling only if `wscale` (then 7), and the raw window `win` in every segment it sends. */
static void open_conn_opts(struct tf_conn *f, int profile, uint16_t win, int wscale, uint64_t rtt, int sack)
{
    struct brisk_tcp_opts o = tf_opts_full();
    o.mss = 1000;
    o.ts_ok = 0;
    o.sack_perm = (uint8_t)(sack != 0);
    o.wscale_ok = (uint8_t)(wscale != 0);
    memset(f, 0, sizeof(*f));
    tf_init(&f->t, profile_sets(profile));
    assert_int_equal(brisk_settings_set(&f->t.st->net.s, "tcp_tsq=0"), BRISK_OK);
    assert_int_equal(brisk_settings_set(&f->t.st->net.s, "tcp_autocorking=0"), BRISK_OK);
    f->l = tf_listen(&f->t, 80);
    tf_peer_init(&f->p, &f->t, 40000, 80, 1000);
    f->p.win = win;
    f->c = tf_open_passive(&f->p, f->l, &o, 0, rtt);
    f->d = f->p.l_iss + 1;
    assert_int_equal(tf_info(f->c).mss, 1000);
}

static void open_conn(struct tf_conn *f, int profile, uint16_t win, int wscale, uint64_t rtt)
{
    open_conn_opts(f, profile, win, wscale, rtt, 1);
}

static void send_at(struct tf_conn *f, uint64_t off, size_t len, unsigned flags, uint64_t now)
{
    uint8_t buf[64000];
    assert_true(len <= sizeof(buf));
    tf_pattern(buf, len, off);
    assert_int_equal(brisk_send(f->c, buf, len, flags, now), (int64_t)len);
}

static void ack_to(struct tf_conn *f, uint32_t off, uint64_t now)
{
    f->p.ack = f->d + off;
    tf_peer_send(&f->p, ACK, NULL, 0, now);
}

/* The probe timer's base in Linux: max(RTO, TCP_RTO_MIN). */
static uint64_t probe_base(brisk_sock *c)
{
    uint64_t rto = tf_info(c).rto_ns;
    return rto > 200 * TF_MS ? rto : 200 * TF_MS;
}

/* RFC 9293 MUST-60: a MSG_MORE tail with no later write must still leave. brisk: 200 ms after the hold began.
 * Linux (tcp_nagle_sendmsg_msg_more.pkt: "+.21~+.215 > P. 1:41(40)" after a 10 ms handshake): the probe
 * timer, max(RTO, 200 ms), and its segment carries PSH (tcp_write_wakeup); an ACK from the peer restarts it
 * (tcp_ack_probe). Before the fix the tail stayed queued for ever. */
static void test_msg_more_tail_leaves(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 32792, 0, 10 * TF_MS);
        assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_NODELAY, 1, 10 * TF_MS), BRISK_OK);
        uint64_t t1 = 10 * TF_MS;
        send_at(&f, 0, 40, BRISK_MSG_MORE, t1); /* MSG_MORE holds even with TCP_NODELAY */
        TF_EXPECT_NONE(&f.t);
        uint64_t due = profile == BRISK ? t1 + 200 * TF_MS : t1 + probe_base(f.c);
        tf_run(&f.t, due - 1);
        TF_EXPECT_NONE(&f.t);
        tf_run(&f.t, due);
        TF_EXPECT(&f.t, due, ACK | PSH, f.d, 1001, 40);
        ack_to(&f, 40, due + 10 * TF_MS);
        /* An ACK releases a MSG_MORE tail (the hold is for its call only, as in Linux). */
        uint64_t t2 = TF_SEC;
        send_at(&f, 40, 40, BRISK_MSG_MORE, t2);
        tf_peer_send_data(&f.p, 10, t2 + 100 * TF_MS);
        TF_EXPECT(&f.t, t2 + 100 * TF_MS, profile == LINUX ? ACK : ACK | PSH, f.d + 40, 1011, 40);
        ack_to(&f, 80, t2 + 110 * TF_MS);
        /* TCP_CORK's tail is not released by the peer's segments; under Linux each one restarts the probe
         * timer (tcp_ack_probe clears it, the push that follows re-arms it). */
        uint64_t t3 = 2 * TF_SEC;
        assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_CORK, 1, t3), BRISK_OK);
        send_at(&f, 80, 40, 0, t3);
        tf_peer_send_data(&f.p, 10, t3 + 100 * TF_MS);
        TF_EXPECT(&f.t, t3 + 100 * TF_MS, ACK, f.d + 80, 1021, 0); /* quick ACK of the peer's data */
        due = profile == BRISK ? t3 + 200 * TF_MS : t3 + 100 * TF_MS + probe_base(f.c);
        tf_run(&f.t, due - 1);
        TF_EXPECT_NONE(&f.t);
        tf_run(&f.t, due);
        TF_EXPECT(&f.t, due, ACK | PSH, f.d + 80, 1021, 40);
        TF_EXPECT_NONE(&f.t);
        tf_conn_close(&f);
    }
}

/* MSG_MORE with data in flight needs no timer: the ACK releases the tail (Linux's MSG_MORE cork lasts for its
 * call); with a small segment in flight Nagle still waits for its ACK. A later write without MSG_MORE sends
 * everything at once, and the timer armed for the first tail does not fire afterwards. */
static void test_msg_more_released(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 32792, 0, 10 * TF_MS);
        uint64_t t1 = 10 * TF_MS;
        send_at(&f, 0, 3100, BRISK_MSG_MORE, t1); /* three full segments go, the 100-byte tail waits */
        /* Linux (measured, 6.18): a 2-segment packet, PSH on its last, then one segment cut from the piece
         * before the tail TCP_NAGLE_CORK holds (tcp_mss_split_point), without. */
        TF_EXPECT(&f.t, t1, ACK, f.d, 1001, 1000);
        TF_EXPECT(&f.t, t1, profile == LINUX ? ACK | PSH : ACK, f.d + 1000, 1001, 1000);
        TF_EXPECT(&f.t, t1, ACK, f.d + 2000, 1001, 1000);
        TF_EXPECT_NONE(&f.t);
        ack_to(&f, 3000, t1 + 10 * TF_MS);
        /* The tail never got a PSH mark (MSG_MORE): Linux sends it without ("note that PUSH is reset"). */
        TF_EXPECT(&f.t, t1 + 10 * TF_MS, profile == LINUX ? ACK : ACK | PSH, f.d + 3000, 1001, 100);
        ack_to(&f, 3100, t1 + 20 * TF_MS);
        uint64_t t2 = 100 * TF_MS;
        send_at(&f, 3100, 20, BRISK_MSG_MORE, t2);
        send_at(&f, 3120, 20, 0, t2 + 50 * TF_MS);
        TF_EXPECT(&f.t, t2 + 50 * TF_MS, ACK | PSH, f.d + 3100, 1001, 40);
        ack_to(&f, 3140, t2 + 60 * TF_MS);
        tf_run(&f.t, 2 * TF_SEC);
        TF_EXPECT_NONE(&f.t);
        tf_conn_close(&f);
    }
}

/* TCP_CORK's ceiling with data in flight. brisk: 200 ms after the hold began, in flight or not. Linux: the
 * probe timer is armed only once the flight has emptied, and runs max(RTO, 200 ms) from that ACK. */
static void test_cork_ceiling_with_flight(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 32792, 0, 10 * TF_MS);
        uint64_t t1 = 10 * TF_MS;
        assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_CORK, 1, t1), BRISK_OK);
        send_at(&f, 0, 1100, 0, t1);
        TF_EXPECT(&f.t, t1, ACK, f.d, 1001, 1000);
        TF_EXPECT_NONE(&f.t);
        uint64_t t_ack = t1 + 150 * TF_MS;
        ack_to(&f, 1000, t_ack);
        TF_EXPECT_NONE(&f.t);
        uint64_t due = profile == BRISK ? t1 + 200 * TF_MS : t_ack + probe_base(f.c);
        tf_run(&f.t, due - 1);
        TF_EXPECT_NONE(&f.t);
        tf_run(&f.t, due);
        TF_EXPECT(&f.t, due, ACK | PSH, f.d + 1000, 1001, 100);
        TF_EXPECT_NONE(&f.t);
        tf_conn_close(&f);
    }
}

/* Setting TCP_NODELAY pushes what TCP_CORK holds (Linux __tcp_sock_set_nodelay: TCP_NAGLE_PUSH, then
 * tcp_push_pending_frames; tcp_nagle_sockopt_cork_nodelay.pkt). Before the fix the tail waited for the cork's
 * 200 ms timer. A later write starts a new piece and is corked again. */
static void test_nodelay_pushes_cork(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 32792, 0, 10 * TF_MS);
        uint64_t t1 = 10 * TF_MS;
        assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_CORK, 1, t1), BRISK_OK);
        send_at(&f, 0, 40, 0, t1);
        send_at(&f, 40, 40, 0, t1 + 50 * TF_MS);
        TF_EXPECT_NONE(&f.t);
        assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_NODELAY, 1, t1 + 60 * TF_MS), BRISK_OK);
        TF_EXPECT(&f.t, t1 + 60 * TF_MS, ACK | PSH, f.d, 1001, 80);
        ack_to(&f, 80, t1 + 70 * TF_MS);
        /* Still corked; MSG_MORE writes leave no PSH mark under Linux, which then sends ". 81:161(80)". */
        send_at(&f, 80, 40, BRISK_MSG_MORE, t1 + 70 * TF_MS);
        send_at(&f, 120, 40, BRISK_MSG_MORE, t1 + 120 * TF_MS);
        TF_EXPECT_NONE(&f.t);
        assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_NODELAY, 1, t1 + 130 * TF_MS), BRISK_OK);
        TF_EXPECT(&f.t, t1 + 130 * TF_MS, profile == LINUX ? ACK : ACK | PSH, f.d + 80, 1001, 80);
        ack_to(&f, 160, t1 + 140 * TF_MS);
        /* A new write is a new piece: the cork holds it again. */
        send_at(&f, 160, 40, 0, t1 + 150 * TF_MS);
        TF_EXPECT_NONE(&f.t);
        tf_run(&f.t, t1 + 150 * TF_MS + 199 * TF_MS);
        TF_EXPECT_NONE(&f.t);
        tf_conn_close(&f);
    }
}

/* TCP_NOTSENT_LOWAT ends a write where a new segment-sized piece would start with at least that many bytes
 * unsent (Linux: sk_stream_memory_free before each new skb), returning the partial count; the writable event
 * comes when an ACK's sends leave fewer than half of it unsent (tcp_stream_memory_free with wake = 1). Before
 * the fix the check was made only when a write began, so one write queued everything. */
static void test_notsent_lowat(void **state)
{
    (void)state;
    struct tf_conn f;
    open_conn(&f, BRISK, 0, 0, 10 * TF_MS); /* a zero window: nothing leaves */
    struct tf_events ev = {0};
    brisk_sock_set_callback(f.c, tf_events_cb, &ev);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_NOTSENT_LOWAT, 2500, 10 * TF_MS), BRISK_OK);
    uint8_t buf[10000];
    tf_pattern(buf, sizeof(buf), 0);
    uint64_t t1 = 20 * TF_MS;
    /* Pieces of 1000: before the fourth, 3000 bytes are unsent. */
    assert_int_equal(brisk_send(f.c, buf, sizeof(buf), 0, t1), 3000);
    assert_int_equal(brisk_send(f.c, buf + 3000, 100, 0, t1), BRISK_ERR_AGAIN);
    assert_int_equal(tf_info(f.c).notsent, 3000);
    /* The window opens for one segment: 2000 unsent, below the mark but not below half of it. */
    f.p.win = 1000;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 10 * TF_MS);
    TF_EXPECT(&f.t, t1 + 10 * TF_MS, ACK, f.d, 1001, 1000);
    assert_int_equal(ev.all & BRISK_EV_WRITABLE, 0);
    /* The next ACK lets two more go: 0 unsent, writable. */
    f.p.win = 3000;
    ack_to(&f, 1000, t1 + 20 * TF_MS);
    TF_EXPECT(&f.t, t1 + 20 * TF_MS, ACK, f.d + 1000, 1001, 1000);
    TF_EXPECT(&f.t, t1 + 20 * TF_MS, ACK | PSH, f.d + 2000, 1001, 1000);
    assert_int_equal(ev.all & BRISK_EV_WRITABLE, BRISK_EV_WRITABLE);
    assert_int_equal(ev.at[2], t1 + 20 * TF_MS);
    /* With the windows open, pieces go as they fill (Linux: tcp_push_one), so a write takes what cwnd lets
     * leave plus the mark's worth: 10 segments (the initial window; 3000 are in flight, 7000 more go), then
     * three queued pieces. */
    f.p.win = 60000;
    ack_to(&f, 3000, t1 + 30 * TF_MS);
    uint8_t big[20000];
    tf_pattern(big, sizeof(big), 3000);
    int64_t n = brisk_send(f.c, big, sizeof(big), 0, t1 + 40 * TF_MS);
    uint32_t cwnd = tf_info(f.c).cwnd;
    assert_int_equal(n, (int64_t)cwnd + 3000);
    assert_int_equal(tf_info(f.c).notsent, 3000);
    tf_conn_close(&f);
}

/* MSG_EOR: no segment carries both the last byte of a record and a later write's first (Linux: the skb is
 * marked eor, tcp_skb_can_collapse_to refuses appends). Before the fix the flag was ignored and the writes
 * merged. The data before the record's end may share its segment: tcp_eor_no-coalesce-small.pkt's 400-byte
 * tail and 400-byte record go as 800. Under linux-6.x every send is a packet, PSH on its last segment: the
 * initial window in packets of two (a 10 ms path), the record alone, then the ten segments of the next
 * write as one packet (the ACK of ten makes cwnd 20, Linux's slow start, and the 1 ms RTT sample lifts
 * tcp_tso_autosize past the quota of ten) — as Linux 6.18 sends them. */
static void test_msg_eor(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 514, 1, 10 * TF_MS);
        uint64_t t1 = 10 * TF_MS;
        send_at(&f, 0, 10400, 0, t1); /* the initial window takes 10000; 400 wait for cwnd */
        for (uint32_t k = 0; k < 10; k++)
            TF_EXPECT(&f.t, t1, profile == LINUX && k % 2 ? ACK | PSH : ACK, f.d + k * 1000, 1001, 1000);
        send_at(&f, 10400, 400, BRISK_MSG_EOR, t1);
        send_at(&f, 10800, 10000, 0, t1);
        TF_EXPECT_NONE(&f.t);
        ack_to(&f, 10000, t1 + TF_MS);
        struct tf_seg *s = TF_EXPECT(&f.t, t1 + TF_MS, ACK | PSH, f.d + 10000, 1001, 800);
        assert_true(tf_payload_is(s, 10000));
        for (uint32_t k = 0; k < 10; k++)
            TF_EXPECT(&f.t, t1 + TF_MS, k == 9 ? ACK | PSH : ACK, f.d + 10800 + k * 1000, 1001, 1000);
        TF_EXPECT_NONE(&f.t);
        ack_to(&f, 20800, t1 + 2 * TF_MS);
        tf_conn_close(&f);
    }
}

/* Nagle holds a small record only while it is the queue's last piece: once a later write follows it, no more
 * data can join it and it goes (Linux: a skb that is not the last is tested with TCP_NAGLE_PUSH). The last
 * piece still waits. A retransmission cut anew after an RTO (go-back-N, without SACK) does not cross a record
 * boundary either, though the data before a record may join it. */
static void test_msg_eor_nagle_and_rto(void **state)
{
    (void)state;
    struct tf_conn f;
    open_conn_opts(&f, BRISK, 514, 1, 10 * TF_MS, 0);
    uint64_t t1 = 10 * TF_MS;
    send_at(&f, 0, 100, 0, t1);
    TF_EXPECT(&f.t, t1, ACK | PSH, f.d, 1001, 100);
    send_at(&f, 100, 200, BRISK_MSG_EOR, t1 + TF_MS); /* Nagle: a small segment is out */
    TF_EXPECT_NONE(&f.t);
    send_at(&f, 300, 300, BRISK_MSG_EOR, t1 + 2 * TF_MS);
    TF_EXPECT(&f.t, t1 + 2 * TF_MS, ACK | PSH, f.d + 100, 1001, 200);
    TF_EXPECT_NONE(&f.t);
    send_at(&f, 600, 50, 0, t1 + 3 * TF_MS);
    TF_EXPECT(&f.t, t1 + 3 * TF_MS, ACK | PSH, f.d + 300, 1001, 300);
    TF_EXPECT_NONE(&f.t); /* the 50 bytes wait: small segments are unacknowledged */
    /* Nothing is acknowledged. The RTO goes back to snd.una with a window of one MSS: 300 bytes, to the
     * first record's end, then the second record, apart; the tail waits for Nagle again. */
    uint64_t rto = t1 + tf_info(f.c).rto_ns;
    tf_run(&f.t, rto);
    struct tf_seg *s = TF_EXPECT(&f.t, rto, ACK | PSH, f.d, 1001, 300);
    assert_true(tf_payload_is(s, 0));
    TF_EXPECT(&f.t, rto, ACK | PSH, f.d + 300, 1001, 300);
    TF_EXPECT_NONE(&f.t);
    ack_to(&f, 600, rto + 10 * TF_MS);
    TF_EXPECT(&f.t, rto + 10 * TF_MS, ACK | PSH, f.d + 600, 1001, 50);
    TF_EXPECT_NONE(&f.t);
    tf_conn_close(&f);
}

/* The ring of marks is bounded (TCP_MARKS): a write that would end a record while as many records are
 * unacknowledged is refused with BRISK_ERR_AGAIN — a boundary is never given up — while other writes go on;
 * ACKs make room. */
static void test_msg_eor_ring_full(void **state)
{
    (void)state;
    struct tf_conn f;
    open_conn(&f, BRISK, 0, 1, 10 * TF_MS); /* a zero window keeps everything queued */
    uint64_t t1 = 10 * TF_MS;
    for (uint32_t k = 0; k < TCP_MARKS; k++)
        send_at(&f, 10 * k, 10, BRISK_MSG_EOR, t1);
    uint8_t buf[10];
    tf_pattern(buf, sizeof(buf), 10 * TCP_MARKS);
    assert_int_equal(brisk_send(f.c, buf, sizeof(buf), BRISK_MSG_EOR, t1), BRISK_ERR_AGAIN);
    send_at(&f, 10 * TCP_MARKS, 10, 0, t1); /* not a record's end: taken, and it joins no record */
    TF_EXPECT_NONE(&f.t);
    f.p.win = 514;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + TF_MS);
    for (uint32_t k = 0; k < TCP_MARKS; k++) {
        struct tf_seg *s = TF_EXPECT(&f.t, t1 + TF_MS, ACK | PSH, f.d + 10 * k, 1001, 10);
        assert_true(tf_payload_is(s, 10 * k));
    }
    TF_EXPECT_NONE(&f.t); /* the last 10 bytes: Nagle */
    ack_to(&f, 10 * TCP_MARKS, t1 + 2 * TF_MS);
    TF_EXPECT(&f.t, t1 + 2 * TF_MS, ACK | PSH, f.d + 10 * TCP_MARKS, 1001, 10);
    send_at(&f, 10 * TCP_MARKS + 10, 10, BRISK_MSG_EOR, t1 + 3 * TF_MS);
    tf_conn_close(&f);
}

/* PSH. brisk: the segment that empties the queue (RFC 9293 MUST-61): the end of a 3000-byte write ("., .,
 * P."). Linux (measured, 6.18): the last segment of every packet of several (__tcp_transmit_skb forces it on
 * GSO packets) and a one-segment packet whose piece ended a write ("., P., P."). Both: two 400-byte writes
 * Nagle held go as one segment; two 1000-byte writes behind a closed window join one piece (the second
 * withdraws the first's mark) and go as one 2-segment packet ("., P."); its tail loss probe resends the last
 * segment with PSH, the RTO the first without. */
static void test_psh(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 514, 1, 10 * TF_MS);
        uint64_t t = 10 * TF_MS;
        send_at(&f, 0, 3000, 0, t);
        TF_EXPECT(&f.t, t, ACK, f.d, 1001, 1000);
        TF_EXPECT(&f.t, t, profile == LINUX ? ACK | PSH : ACK, f.d + 1000, 1001, 1000);
        TF_EXPECT(&f.t, t, ACK | PSH, f.d + 2000, 1001, 1000);
        ack_to(&f, 3000, t + TF_MS);
        t += 10 * TF_MS;
        send_at(&f, 3000, 100, 0, t);
        TF_EXPECT(&f.t, t, ACK | PSH, f.d + 3000, 1001, 100);
        send_at(&f, 3100, 400, 0, t + TF_MS); /* Nagle: the 100 bytes are unacknowledged */
        send_at(&f, 3500, 400, 0, t + TF_MS);
        TF_EXPECT_NONE(&f.t);
        ack_to(&f, 3100, t + 2 * TF_MS);
        TF_EXPECT(&f.t, t + 2 * TF_MS, ACK | PSH, f.d + 3100, 1001, 800);
        ack_to(&f, 3900, t + 3 * TF_MS);
        /* The window closes; two 1000-byte writes queue, and it opens again. */
        t += 10 * TF_MS;
        f.p.win = 0;
        tf_peer_send(&f.p, ACK, NULL, 0, t);
        send_at(&f, 3900, 1000, 0, t);
        send_at(&f, 4900, 1000, 0, t);
        TF_EXPECT_NONE(&f.t);
        f.p.win = 514;
        tf_peer_send(&f.p, ACK, NULL, 0, t + TF_MS);
        TF_EXPECT(&f.t, t + TF_MS, ACK, f.d + 3900, 1001, 1000);
        TF_EXPECT(&f.t, t + TF_MS, ACK | PSH, f.d + 4900, 1001, 1000);
        TF_EXPECT_NONE(&f.t);
        /* Both are lost. The tail loss probe resends the last, with the PSH it had; the RTO then resends the
         * first without (Linux: the packet's first segment has no mark; brisk: more follows it). */
        assert_true(tf_run_to_seg(&f.t, 5 * TF_SEC));
        struct tf_seg *s = tf_take(&f.t);
        assert_int_equal(s->h.seq, f.d + 4900);
        assert_int_equal(s->h.flags, ACK | PSH);
        assert_true(tf_run_to_seg(&f.t, 5 * TF_SEC));
        s = tf_take(&f.t);
        assert_int_equal(s->h.seq, f.d + 3900);
        assert_int_equal(s->len, 1000);
        assert_int_equal(s->h.flags, ACK);
        tf_conn_close(&f);
    }
}

/* Linux's forced push: a long write gets PSH on the piece where more than half the largest window has been
 * written since the last push (forced_push), so a receiver that waits for PSH is fed at least twice a
 * window. brisk has no such rule: it flags the segment that empties the queue. MSG_MORE does not suppress it
 * (tcp_push marks when forced_push says so). Under linux-6.x the pieces are 2000 bytes (half the window) and
 * leave as 2-segment packets, PSH on each (measured, 6.18: "., P., ., P." then "., P."); the forced push at
 * 4000 is what a one-segment resend of 3000:4000 would carry. */
static void test_forced_push(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 4000, 0, 10 * TF_MS); /* max window 4000: a push at least every 2000 */
        uint64_t t = 10 * TF_MS;
        send_at(&f, 0, 6000, BRISK_MSG_MORE, t);
        TF_EXPECT(&f.t, t, ACK, f.d, 1001, 1000);
        TF_EXPECT(&f.t, t, profile == LINUX ? ACK | PSH : ACK, f.d + 1000, 1001, 1000);
        TF_EXPECT(&f.t, t, ACK, f.d + 2000, 1001, 1000);
        TF_EXPECT(&f.t, t, profile == LINUX ? ACK | PSH : ACK, f.d + 3000, 1001, 1000);
        TF_EXPECT_NONE(&f.t);
        ack_to(&f, 4000, t + TF_MS);
        TF_EXPECT(&f.t, t + TF_MS, ACK, f.d + 4000, 1001, 1000);
        TF_EXPECT(&f.t, t + TF_MS, profile == LINUX ? ACK | PSH : ACK | PSH, f.d + 5000, 1001, 1000);
        TF_EXPECT_NONE(&f.t);
        tf_conn_close(&f);
    }
}

/* Sender SWS avoidance (RFC 9293 §3.8.6.2.1). A 2000-byte window at MSS 1000 takes two full segments in
 * both profiles (the second is a forced push under Linux: half the 2000-byte window was written). A window
 * smaller than the next segment with nothing in flight: brisk sends what fits at once (no ACK is coming to
 * open it further), Linux holds it (tcp_snd_wnd_test) until the probe timer sends what fits, with PSH
 * (tcp_write_wakeup). */
static void test_sws(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 2000, 0, 10 * TF_MS);
        uint64_t t = 10 * TF_MS;
        send_at(&f, 0, 3000, 0, t);
        TF_EXPECT(&f.t, t, ACK, f.d, 1001, 1000);
        TF_EXPECT(&f.t, t, profile == LINUX ? ACK | PSH : ACK, f.d + 1000, 1001, 1000);
        TF_EXPECT_NONE(&f.t);
        /* Everything acknowledged, the window now 500: the 1000 queued bytes do not fit. */
        f.p.win = 500;
        uint64_t t2 = t + 10 * TF_MS;
        ack_to(&f, 2000, t2);
        if (profile == BRISK) {
            TF_EXPECT(&f.t, t2, ACK, f.d + 2000, 1001, 500);
        } else {
            TF_EXPECT_NONE(&f.t);
            uint64_t due = t2 + tf_info(f.c).rto_ns;
            tf_run(&f.t, due - 1);
            TF_EXPECT_NONE(&f.t);
            tf_run(&f.t, due);
            TF_EXPECT(&f.t, due, ACK | PSH, f.d + 2000, 1001, 500);
        }
        TF_EXPECT_NONE(&f.t);
        tf_conn_close(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_msg_more_tail_leaves),
        cmocka_unit_test(test_msg_more_released),
        cmocka_unit_test(test_cork_ceiling_with_flight),
        cmocka_unit_test(test_nodelay_pushes_cork),
        cmocka_unit_test(test_notsent_lowat),
        cmocka_unit_test(test_msg_eor),
        cmocka_unit_test(test_msg_eor_nagle_and_rto),
        cmocka_unit_test(test_msg_eor_ring_full),
        cmocka_unit_test(test_psh),
        cmocka_unit_test(test_forced_push),
        cmocka_unit_test(test_sws),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
