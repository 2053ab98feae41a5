/*
 * test_piece.c — how a write's bytes are cut into packets and segments under Linux's software GSO
 * (tcp_sw_gso, src/tcp/piece.c) against brisk's segment-by-segment sending, and the half-window MSS
 * (tcp_half_window_mss): packets of tcp_tso_autosize's size with PSH on their last segment, the quota of half
 * the congestion window, a partial segment at the window's edge inside a packet, a head piece grown from the
 * next (tcp_grow_skb), TSO deferral, TCP_NOTSENT_LOWAT measured in skbs, MSG_MORE's partial segment, and the
 * tail loss probe's last segment of a packet.
 *
 * Each case is a script measured on Linux 6.18 with brisk-pkt --kernel, replayed here under linux-6.x, and
 * the same input under brisk's defaults where the two differ. The peer announces MSS 1000 without
 * timestamps; sequence numbers count from the first data byte.
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

enum { BRISK, LINUX };

/* The settings of a row: brisk's defaults, or the linux-6.x profile's. */
static const char *const *profile_sets(int profile)
{
    return profile == BRISK ? NULL : tf_profile_sets("linux-6.x");
}

/* Accepted at 0 after a handshake of `rtt`: MSS 1000, SACK, no timestamps, window scale 7 if `wscale`, and
 * the raw window `win` in the peer's segments (its ACK's window is the largest it offered so far). */
static void open_conn(struct tf_conn *f, int profile, uint16_t win, int wscale, uint64_t rtt)
{
    struct brisk_tcp_opts o = tf_opts_full();
    o.mss = 1000;
    o.ts_ok = 0;
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
}

static void send_at(struct tf_conn *f, uint64_t off, size_t len, unsigned flags, uint64_t now)
{
    static uint8_t buf[64000];
    assert_true(len <= sizeof(buf));
    tf_pattern(buf, len, off);
    assert_int_equal(brisk_send(f->c, buf, len, flags, now), (int64_t)len);
}

static void ack_to(struct tf_conn *f, uint32_t off, uint64_t now)
{
    f->p.ack = f->d + off;
    tf_peer_send(&f->p, ACK, NULL, 0, now);
}

/* `n` 1000-byte segments from offset `off` at `at`, PSH on those whose index (from 0) `psh` says. */
static void expect_run(struct tf_conn *f, uint64_t at, uint32_t off, uint32_t n, int (*psh)(uint32_t k))
{
    for (uint32_t k = 0; k < n; k++) {
        struct tf_seg *s = TF_EXPECT(&f->t, at, psh(k) ? ACK | PSH : ACK, f->d + off + k * 1000, 1001, 1000);
        assert_true(tf_payload_is(s, off + k * 1000));
    }
}

static int none(uint32_t k)
{
    (void)k;
    return 0;
}

static int odd(uint32_t k)
{
    return k % 2 == 1;
}

static int fifth(uint32_t k)
{
    return k % 5 == 4;
}

/* The initial window of a 15000-byte write. Linux, on a 10 ms path: packets of tcp_tso_autosize's minimum,
 * 2 segments (the pacing rate, 2 MB/s, gives a millisecond under one), PSH on each packet's last; the ACK of
 * two segments lets two packets more. On a 1 ms path the autosizing's min-RTT term (tcp_tso_rtt_log 9: half
 * of 64 KB) lifts the limit past the quota, half of cwnd: packets of 5. brisk: no PSH until the queue
 * empties. Before tcp_sw_gso every segment went alone, without PSH. */
static void test_packets_of_the_quota(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 257, 1, 10 * TF_MS);
        uint64_t t = 10 * TF_MS;
        send_at(&f, 0, 15000, 0, t);
        expect_run(&f, t, 0, 10, profile == LINUX ? odd : none);
        TF_EXPECT_NONE(&f.t);
        ack_to(&f, 2000, t + 10 * TF_MS);
        expect_run(&f, t + 10 * TF_MS, 10000, 4, profile == LINUX ? odd : none);
        TF_EXPECT_NONE(&f.t);
        tf_conn_close(&f);

        open_conn(&f, profile, 257, 1, TF_MS);
        send_at(&f, 0, 15000, 0, TF_MS);
        expect_run(&f, TF_MS, 0, 10, profile == LINUX ? fifth : none);
        TF_EXPECT_NONE(&f.t);
        tf_conn_close(&f);
    }
}

/* A peer whose largest window is 1000 bytes: Linux bounds the MSS to half of it (tcp_bound_to_half_wnd from
 * tcp_sync_mss; tcpi_snd_mss 500), so two 500-byte segments are in flight, one packet of 2 (PSH on its
 * last), and the FIN rides on the last when the window opens. brisk sends one 1000-byte segment. When the
 * window grows past twice the MSS, the MSS is the options' again, and the congestion window keeps its count
 * of segments. */
static void test_half_window_mss(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 1000, 0, 100 * TF_MS);
        uint64_t t = 100 * TF_MS;
        assert_int_equal(tf_info(f.c).mss, profile == LINUX ? 500 : 1000);
        send_at(&f, 0, 2000, 0, t);
        if (profile == LINUX) {
            TF_EXPECT(&f.t, t, ACK, f.d, 1001, 500);
            TF_EXPECT(&f.t, t, ACK | PSH, f.d + 500, 1001, 500);
        } else {
            TF_EXPECT(&f.t, t, ACK, f.d, 1001, 1000);
        }
        TF_EXPECT_NONE(&f.t);
        assert_int_equal(brisk_shutdown_write(f.c, t), BRISK_OK);
        ack_to(&f, 1000, t + 100 * TF_MS);
        if (profile == LINUX) {
            TF_EXPECT(&f.t, t + 100 * TF_MS, ACK, f.d + 1000, 1001, 500);
            TF_EXPECT(&f.t, t + 100 * TF_MS, ACK | PSH | BRISK_TCP_FIN, f.d + 1500, 1001, 500);
        } else {
            TF_EXPECT(&f.t, t + 100 * TF_MS, ACK | PSH | BRISK_TCP_FIN, f.d + 1000, 1001, 1000);
        }
        TF_EXPECT_NONE(&f.t);
        tf_conn_close(&f);
    }
    struct tf_conn f;
    open_conn(&f, LINUX, 1000, 0, 100 * TF_MS);
    assert_int_equal(tf_info(f.c).cwnd, 10 * 500);
    f.p.win = 30000;
    ack_to(&f, 0, 150 * TF_MS);
    assert_int_equal(tf_info(f.c).mss, 1000);
    assert_int_equal(tf_info(f.c).cwnd, 10 * 1000);
    tf_conn_close(&f);
}

/* The window's edge inside a packet: 5120 bytes (40 << 7) take two packets of two and then 1000 + 120 bytes
 * as one — Linux's tcp_snd_wnd_test asks only the packet's first segment to fit, and tcp_mss_split_point cuts
 * it at the window, the partial segment included while no small one is unacknowledged (Nagle). brisk
 * (tcp_sws_partial) holds the 120 while segments are in flight, under half the largest window. The probe
 * that follows: Linux resends the 120-byte segment as it went (the last packet's last segment) — without
 * PSH, which was the packet's, not its piece's; brisk sends the 120 as new data. */
static void test_window_edge_in_a_packet(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 40, 1, 100 * TF_MS);
        uint64_t t = 100 * TF_MS;
        send_at(&f, 0, 8000, 0, t);
        expect_run(&f, t, 0, 4, profile == LINUX ? odd : none);
        TF_EXPECT(&f.t, t, ACK, f.d + 4000, 1001, 1000);
        if (profile == LINUX)
            TF_EXPECT(&f.t, t, ACK | PSH, f.d + 5000, 1001, 120);
        TF_EXPECT_NONE(&f.t);
        assert_true(tf_run_to_seg(&f.t, 2 * TF_SEC));
        struct tf_seg *s = tf_take(&f.t);
        assert_int_equal(s->h.seq, f.d + 5000);
        assert_int_equal(s->len, 120);
        assert_int_equal(s->h.flags, ACK);
        assert_int_equal(tf_info(f.c).retransmits, profile == LINUX ? 1 : 0);
        tf_conn_close(&f);
    }
}

/* tcp_grow_skb. Behind a 1000-byte window an 8000-byte write fills pieces of 500 (half the window), every
 * other one flagged by a forced push, and the head piece takes the next one as each push from inside the
 * write finds it short. When the window grows to 30000 the MSS is 1000: the head (1000 bytes, flagged) takes
 * one more piece and goes as a packet of 1000 + 500, then each 1000-byte packet is two pieces, the second's
 * flag at its end; the last 500 wait for the small segment's ACK (Nagle). Measured on Linux 6.18 exactly so.
 * brisk cuts 1000-byte segments from the stream, PSH only on the last. */
static void test_head_piece_grows(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 1000, 0, 100 * TF_MS);
        uint64_t t = 100 * TF_MS;
        send_at(&f, 0, 8000, 0, t);
        if (profile == LINUX) {
            TF_EXPECT(&f.t, t, ACK, f.d, 1001, 500);
            TF_EXPECT(&f.t, t, ACK | PSH, f.d + 500, 1001, 500);
        } else {
            TF_EXPECT(&f.t, t, ACK, f.d, 1001, 1000);
        }
        TF_EXPECT_NONE(&f.t);
        f.p.win = 30000;
        uint64_t t2 = t + 100 * TF_MS;
        ack_to(&f, 1000, t2);
        if (profile == LINUX) {
            TF_EXPECT(&f.t, t2, ACK, f.d + 1000, 1001, 1000);
            TF_EXPECT(&f.t, t2, ACK | PSH, f.d + 2000, 1001, 500);
            for (uint32_t k = 0; k < 5; k++)
                TF_EXPECT(&f.t, t2, ACK | PSH, f.d + 2500 + k * 1000, 1001, 1000);
            TF_EXPECT_NONE(&f.t);
            ack_to(&f, 2500, t2 + 100 * TF_MS);
            TF_EXPECT(&f.t, t2 + 100 * TF_MS, ACK | PSH, f.d + 7500, 1001, 500);
        } else {
            for (uint32_t k = 0; k < 7; k++)
                TF_EXPECT(&f.t, t2, k == 6 ? ACK | PSH : ACK, f.d + 1000 + k * 1000, 1001, 1000);
        }
        TF_EXPECT_NONE(&f.t);
        tf_conn_close(&f);
    }
}

/* tcp_tso_should_defer: right after a packet went, one that the window cuts to a single segment of a longer
 * piece waits when an ACK is due within a millisecond — here the window (3000 more) lets a packet of 2 and
 * then 1000 bytes go; Linux sends the 2 and defers the third, brisk sends all three. */
static void test_tso_deferral(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 20000, 0, 100 * TF_MS);
        uint64_t t = 100 * TF_MS;
        send_at(&f, 0, 30000, 0, t);
        expect_run(&f, t, 0, 10, profile == LINUX ? odd : none);
        TF_EXPECT_NONE(&f.t);
        f.p.win = 10000;
        ack_to(&f, 3000, t + 100 * TF_MS);
        expect_run(&f, t + 100 * TF_MS, 10000, profile == LINUX ? 2 : 3, profile == LINUX ? odd : none);
        TF_EXPECT_NONE(&f.t);
        assert_int_equal(tf_info(f.c).hold, BRISK_HOLD_RWND); /* the window, deferring or full */
        tf_conn_close(&f);
    }
}

/* TCP_NOTSENT_LOWAT is asked before each new piece, and Linux's pieces are skbs of half the window, 16000
 * bytes here: behind a closed window a 40000-byte write takes 16000; once the window opens and the initial
 * window leaves, a write joins what is left of that skb without asking the mark. (brisk's 1000-byte pieces:
 * test_push.c, test_notsent_lowat.) */
static void test_lowat_counts_skbs(void **state)
{
    (void)state;
    struct tf_conn f;
    open_conn(&f, LINUX, 257, 1, 100 * TF_MS);
    uint64_t t = 100 * TF_MS;
    f.p.win = 0;
    ack_to(&f, 0, t);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_NOTSENT_LOWAT, 2500, t), BRISK_OK);
    static uint8_t buf[40000];
    tf_pattern(buf, sizeof(buf), 0);
    assert_int_equal(brisk_send(f.c, buf, sizeof(buf), 0, t + 10 * TF_MS), 16000);
    assert_int_equal(brisk_send(f.c, buf, 100, 0, t + 10 * TF_MS), BRISK_ERR_AGAIN);
    f.p.win = 257;
    ack_to(&f, 0, t + 20 * TF_MS);
    expect_run(&f, t + 20 * TF_MS, 0, 10, odd);
    TF_EXPECT_NONE(&f.t);
    send_at(&f, 16000, 100, 0, t + 30 * TF_MS);
    assert_int_equal(tf_info(f.c).notsent, 6100);
    tf_conn_close(&f);
}

/* MSG_MORE (TCP_NAGLE_CORK for its write's push) holds a partial last segment even inside a packet: 5500
 * bytes go as 2 + 2 + 1 segments, the 1000 before the tail cut from its piece without PSH, and the 500 wait
 * for the ACK, then go without PSH (MSG_MORE left no mark). brisk: five segments, the tail with PSH when it
 * empties the queue. */
static void test_msg_more_in_packets(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 257, 1, 100 * TF_MS);
        uint64_t t = 100 * TF_MS;
        send_at(&f, 0, 5500, BRISK_MSG_MORE, t);
        expect_run(&f, t, 0, 5, profile == LINUX ? odd : none);
        TF_EXPECT_NONE(&f.t);
        ack_to(&f, 5000, t + 100 * TF_MS);
        TF_EXPECT(&f.t, t + 100 * TF_MS, profile == LINUX ? ACK : ACK | PSH, f.d + 5000, 1001, 500);
        TF_EXPECT_NONE(&f.t);
        tf_conn_close(&f);
    }
}

/* The tail loss probe resends the last segment as it went (Linux: tcp_send_loss_probe splits the last skb at
 * its last segment; brisk: the scoreboard's last record, in both profiles): after 1000 + 500 and a second
 * write's 1000 + 500, the 500 — with PSH, which the write's end gave it. Under linux-6.x the second write
 * left as one packet of 1000 + 500, with TCP_NODELAY as one would without it. */
static void test_probe_resends_last_segment(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        open_conn(&f, profile, 257, 1, 100 * TF_MS);
        uint64_t t = 100 * TF_MS;
        assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_NODELAY, 1, t), BRISK_OK);
        send_at(&f, 0, 1500, 0, t);
        send_at(&f, 1500, 1500, 0, t);
        TF_EXPECT(&f.t, t, ACK, f.d, 1001, 1000);
        TF_EXPECT(&f.t, t, ACK | PSH, f.d + 1000, 1001, 500);
        TF_EXPECT(&f.t, t, ACK, f.d + 1500, 1001, 1000);
        TF_EXPECT(&f.t, t, ACK | PSH, f.d + 2500, 1001, 500);
        TF_EXPECT_NONE(&f.t);
        assert_true(tf_run_to_seg(&f.t, 2 * TF_SEC));
        struct tf_seg *s = tf_take(&f.t);
        assert_int_equal(s->h.seq, f.d + 2500);
        assert_int_equal(s->len, 500);
        assert_int_equal(s->h.flags, ACK | PSH);
        tf_conn_close(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packets_of_the_quota),
        cmocka_unit_test(test_half_window_mss),
        cmocka_unit_test(test_window_edge_in_a_packet),
        cmocka_unit_test(test_head_piece_grows),
        cmocka_unit_test(test_tso_deferral),
        cmocka_unit_test(test_lowat_counts_skbs),
        cmocka_unit_test(test_msg_more_in_packets),
        cmocka_unit_test(test_probe_resends_last_segment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
