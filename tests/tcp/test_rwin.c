/*
 * test_rwin.c — the receive window each segment advertises, under brisk's rules (tcp_rcv_window=rfc9293: the
 * free payload space of the buffer) and the linux-6.x profile's (tcp_rcv_window=linux: Linux 6.x's window
 * from receive memory, src/tcp/rwin.c), where the two deliberately differ: the handshake's windows and scale,
 * SO_RCVBUF, the window's growth as data arrives and its shrinking while it waits, the zero window and what a
 * read reopens, a segment past the right edge, autotuning, and small segments that overrun a buffer.
 *
 * The Linux figures are those the kernel oracle measured on Linux 6.18 (tests/conformance/window/, each
 * script passing against the kernel with brisk-pkt --kernel): a passive open from a peer with MSS 1460,
 * window scale 7, SACK and timestamps (tests/tcp's usual fixture) and 1000-byte segments, so 1728 bytes of
 * memory for a segment's own buffer and 1472 for one that joins the previous buffer. The linux-6.x profile is
 * applied whole on top of tf_init's settings.
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
#define SYN BRISK_TCP_SYN

enum { BRISK, LINUX };

/* The settings of a row: brisk's defaults, or the linux-6.x profile's. */
static const char *const *profile_sets(int profile)
{
    return profile == BRISK ? NULL : tf_profile_sets("linux-6.x");
}

/* A listener under `profile`, with SO_RCVBUF `rcvbuf` first unless 0. */
static void listen_at(struct tf_conn *f, int profile, uint64_t rcvbuf)
{
    memset(f, 0, sizeof(*f));
    tf_init(&f->t, profile_sets(profile));
    f->l = tf_listen(&f->t, 80);
    if (rcvbuf)
        assert_int_equal(brisk_setsockopt(f->l, BRISK_SO_RCVBUF, rcvbuf, 0), BRISK_OK);
    tf_peer_init(&f->p, &f->t, 40000, 80, 1000);
}

/* The passive open with the peer's SYN options `o`; returns the SYN-ACK's window field and scale option. */
static void open_passive(struct tf_conn *f, const struct brisk_tcp_opts *o, uint16_t *win, int *wscale)
{
    f->c = tf_open_passive(&f->p, f->l, o, 0, 10 * TF_MS);
    f->d = f->p.l_iss + 1;
    struct tf_seg *sa = &f->t.q[f->t.nq - 1]; /* the SYN-ACK, the last segment sent */
    assert_true(sa->h.flags & SYN);
    *win = sa->h.window;
    *wscale = sa->h.opts.wscale_ok ? sa->h.opts.wscale : -1;
}

/* The peer sends `len` bytes at `now`; returns the window field of the ACK sent at once. */
static uint16_t data_acked(struct tf_conn *f, size_t len, uint64_t now)
{
    tf_peer_send_data(&f->p, len, now);
    struct tf_seg *a = TF_EXPECT(&f->t, now, ACK, f->d, f->p.nxt, 0);
    return a->h.window;
}

/* Reads `n` bytes at `now` (asserted all there). */
static void read_n(brisk_sock *c, size_t n, uint64_t now)
{
    static uint8_t buf[1 << 16];
    assert_true(n <= sizeof(buf));
    assert_int_equal(brisk_recv(c, buf, n, now), (int64_t)n);
}

/* The handshake's windows. Linux (tcp_select_initial_window): half of the 128 KB default buffer in whole
 * segments, 45 x 1448 = 65160 with timestamps, 44 x 1460 = 64240 without, scale 7 from tcp_rmem[2] (6 MB).
 * brisk: the free space of its 4 MB buffer, 65535 in the field, the smallest scale for 4 MB, 7. Without the
 * peer's scale option neither scales. On main the linux-6.x profile offered 65535. */
static void test_handshake_windows(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        static const struct {
            int ts, ws;
            uint16_t win[2]; /* brisk, linux */
            int scale;
        } cases[] = {
            {1, 1, {65535, 65160}, 7},
            {0, 1, {65535, 64240}, 7},
            {1, 0, {65535, 65160}, -1},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            struct tf_conn f;
            listen_at(&f, profile, 0);
            struct brisk_tcp_opts o = tf_opts_full();
            o.ts_ok = (uint8_t)cases[i].ts;
            o.wscale_ok = (uint8_t)cases[i].ws;
            uint16_t win;
            int ws;
            open_passive(&f, &o, &win, &ws);
            assert_int_equal(win, cases[i].win[profile]);
            assert_int_equal(ws, cases[i].scale);
            struct brisk_conn_info ci = tf_info(f.c);
            if (profile == LINUX) {
                /* tcp_init_buffer_space: window_clamp keeps a segment back, rcv_ssthresh is bounded by it. */
                assert_int_equal(ci.rcv_ssthresh, cases[i].ts ? 64088 : 64076);
                assert_int_equal(ci.rcv_space, cases[i].ts ? 14480 : 14600);
                assert_int_equal(ci.advmss, cases[i].ts ? 1448 : 1460);
            }
            tf_conn_close(&f);
        }
    }
}

/* connect(): Linux's SYN offers 44 x 1460 = 64240 (no timestamp is known yet, so the whole MSS), and its
 * handshake ACK the scale unit above it (502 << 7); TCP_MAXSEG 1000 makes it 65 x 1000. SO_RCVBUF 16384 is
 * doubled (32768 reported) and bounds the window at 16384: 11 x 1460 = 16060, scale 0. brisk: the space of
 * its buffer, 65535 or SO_RCVBUF's 16384 itself. */
static void test_connect_windows(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        static const struct {
            uint64_t maxseg, rcvbuf;
            uint16_t syn[2], ack[2];
            int scale;
            uint64_t reported[2];
        } cases[] = {
            {0, 0, {65535, 64240}, {32768, 502}, 7, {4u << 20, 131072}},
            {1000, 0, {65535, 65000}, {32768, 508}, 7, {4u << 20, 131072}},
            {0, 16384, {16384, 16060}, {16384, 16060}, 0, {16384, 32768}},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            struct tf t;
            tf_init(&t, profile_sets(profile));
            int err;
            brisk_sock *s = brisk_socket(t.st, &err);
            assert_non_null(s);
            if (cases[i].maxseg)
                assert_int_equal(brisk_setsockopt(s, BRISK_SO_MAXSEG, cases[i].maxseg, 0), BRISK_OK);
            if (cases[i].rcvbuf)
                assert_int_equal(brisk_setsockopt(s, BRISK_SO_RCVBUF, cases[i].rcvbuf, 0), BRISK_OK);
            uint64_t v = 0;
            assert_int_equal(brisk_getsockopt(s, BRISK_SO_RCVBUF, &v), BRISK_OK);
            assert_int_equal(v, cases[i].reported[profile]);
            assert_int_equal(brisk_connect(s, TF_PEER_IP, 80, 0), BRISK_ERR_INPROGRESS);
            struct tf_seg *syn = tf_take(&t);
            assert_int_equal(syn->h.flags, SYN);
            assert_int_equal(syn->h.window, cases[i].syn[profile]);
            assert_int_equal(syn->h.opts.wscale, cases[i].scale);
            uint32_t iss = syn->h.seq, tsval = syn->h.opts.ts_val; /* the queue may move as we inject */
            struct tf_peer p;
            tf_peer_init(&p, &t, 80, syn->h.sport, 5000);
            p.ack = iss + 1;
            struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN | ACK, 10 * TF_MS);
            h.opts = tf_opts_full();
            h.opts.wscale = 8;
            h.opts.ts_val = 200;
            h.opts.ts_ecr = tsval;
            tf_inject(&t, &h, NULL, 0, 10 * TF_MS);
            struct tf_seg *a = TF_EXPECT(&t, 10 * TF_MS, ACK, iss + 1, 5001, 0);
            assert_int_equal(a->h.window, cases[i].ack[profile]);
            brisk_abort(s, 10 * TF_MS);
            while (tf_pending(&t))
                tf_take(&t);
            tf_free(&t);
        }
    }
}

/* The window as unread 1000-byte segments arrive. Linux: each grows rcv_ssthresh by two segments (2 x 1448,
 * tcp_grow_window) from the 65160 the SYN-ACK offered, while memory allows (532, 555, then the free space:
 * 571), after which each segment's 1472 bytes of memory take 851 bytes of window (565, 558, ... << 7).
 * brisk: the space left in its 4 MB buffer, 1000 bytes less per segment (rounded to the 128-byte unit). */
static void test_window_grows_and_fills(void **state)
{
    (void)state;
    static const uint16_t want[2][8] = {
        {32761, 32754, 32747, 32740, 32733, 32726, 32719, 32712},
        {532, 555, 571, 565, 558, 551, 545, 538},
    };
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        listen_at(&f, profile, 0);
        uint16_t win;
        int ws;
        open_passive(&f, NULL, &win, &ws);
        for (int i = 0; i < 8; i++)
            assert_int_equal(data_acked(&f, 1000, (uint64_t)(20 + 10 * i) * TF_MS), want[profile][i]);
        if (profile == LINUX)
            assert_int_equal(tf_info(f.c).rcv_ssthresh, 73075);
        tf_conn_close(&f);
    }
}

/* SO_RCVBUF 4096 and a zero window. Linux: the buffer is 8192 bytes of memory, the window unscaled and whole
 * segments of the peer's size: 2896, 2000, 2000, 1000, then 0 with less than a segment free; all five
 * segments share one buffer, so reading 2000 bytes frees nothing and sends nothing, and reading the rest
 * reopens the window at once to 3000 (tcp_cleanup_rbuf). brisk: the buffer is 4096 payload bytes, each
 * segment takes its length (4096, 3096, ... 96, 0), and the first read that frees a segment's worth reopens
 * it (2000). Both answer a zero-window probe with window 0. */
static void test_zero_window(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        listen_at(&f, profile, 4096);
        uint16_t win;
        int ws;
        open_passive(&f, NULL, &win, &ws);
        assert_int_equal(ws, 0);
        assert_int_equal(win, profile == LINUX ? 2896 : 4096);
        static const uint16_t want[2][5] = {{3096, 2096, 1096, 96, 0}, {2896, 2000, 2000, 1000, 0}};
        uint64_t now = 20 * TF_MS;
        for (int i = 0; i < 5; i++) {
            tf_peer_send_data(&f.p, profile == BRISK && i == 4 ? 96 : 1000, now);
            assert_true(tf_run_to_seg(&f.t, now + 100 * TF_MS));
            struct tf_seg *a = TF_EXPECT(&f.t, TF_ANY_TIME, ACK, f.d, f.p.nxt, 0);
            assert_int_equal(a->h.window, want[profile][i]);
            now = f.t.st->net.now + 10 * TF_MS;
        }
        /* A zero-window probe: the byte before the window, answered at once with window 0. */
        struct brisk_tcp_repr probe = tf_peer_hdr(&f.p, ACK, now);
        probe.seq = f.p.nxt - 1;
        tf_inject(&f.t, &probe, NULL, 0, now);
        struct tf_seg *a = TF_EXPECT(&f.t, now, ACK, f.d, f.p.nxt, 0);
        assert_int_equal(a->h.window, 0);
        now += 10 * TF_MS;
        read_n(f.c, 2000, now);
        if (profile == LINUX) {
            TF_EXPECT_NONE(&f.t); /* the buffer holding them is not free until all of it is read */
            now += 10 * TF_MS;
            read_n(f.c, 3000, now);
            a = TF_EXPECT(&f.t, now, ACK, f.d, f.p.nxt, 0);
            assert_int_equal(a->h.window, 3000);
        } else {
            a = TF_EXPECT(&f.t, now, ACK, f.d, f.p.nxt, 0);
            assert_int_equal(a->h.window, 2000);
        }
        tf_conn_close(&f);
    }
}

/* A segment that runs past the right edge while data waits to be read. Linux 6.17 on (tcp_sequence): dropped
 * whole, and the ACK repeats the window; brisk: the part inside the window is kept (RFC 9293 §3.10.7.4). */
static void test_beyond_edge(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        listen_at(&f, profile, 4096);
        uint16_t win;
        int ws;
        open_passive(&f, NULL, &win, &ws);
        uint64_t now = 20 * TF_MS;
        uint16_t last = win;
        while (last >= 1000 + (profile == LINUX ? 0 : 1000)) { /* fill until less than a segment is left */
            tf_peer_send_data(&f.p, 1000, now);
            assert_true(tf_run_to_seg(&f.t, now + 100 * TF_MS));
            last = TF_EXPECT(&f.t, TF_ANY_TIME, ACK, f.d, f.p.nxt, 0)->h.window;
            now = f.t.st->net.now + 10 * TF_MS;
        }
        uint32_t before = f.p.nxt;
        uint64_t received = tf_info(f.c).bytes_received;
        tf_peer_send_data(&f.p, last + 448u, now); /* ends 448 bytes past the edge */
        struct tf_seg *a =
            TF_EXPECT(&f.t, TF_ANY_TIME, ACK, f.d, profile == LINUX ? before : before + last, 0);
        (void)a;
        assert_int_equal(tf_info(f.c).bytes_received, received + (profile == LINUX ? 0 : last));
        f.p.nxt = profile == LINUX ? before : before + last;
        tf_conn_close(&f);
    }
}

/* Autotuning. Linux: reads that take more per receiver RTT than the last measure grow the buffer (twice the
 * new amount plus its slow-start growth, as memory at the measured ratio) and the window with it; brisk's
 * buffer is fixed. The peer sends rounds of 10, 20, 30, 40 1448-byte segments 50 ms apart, each read at once
 * (tests/conformance/window/autotune.pkt, the same figures against Linux). */
static void test_autotune(void **state)
{
    (void)state;
    for (int profile = BRISK; profile <= LINUX; profile++) {
        struct tf_conn f;
        listen_at(&f, profile, 0);
        struct brisk_tcp_opts o = tf_opts_full();
        uint16_t win;
        int ws;
        open_passive(&f, &o, &win, &ws);
        uint64_t now = 10 * TF_MS;
        uint64_t rcvbuf[4];
        for (int r = 0; r < 4; r++) {
            for (int i = 0; i < 10 + 10 * r; i++)
                tf_peer_send_data(&f.p, 1448, now);
            while (tf_pending(&f.t))
                tf_take(&f.t);
            read_n(f.c, (size_t)(10 + 10 * r) * 1448, now);
            assert_int_equal(brisk_getsockopt(f.c, BRISK_SO_RCVBUF, &rcvbuf[r]), BRISK_OK);
            tf_run(&f.t, now + 50 * TF_MS);
            while (tf_pending(&f.t))
                tf_take(&f.t);
            now += 50 * TF_MS;
        }
        if (profile == LINUX) {
            /* The second read's first buffer ends a round of 26 segments read beyond what stays queued
             * (37648 bytes, against 14480): 2 x 37648, plus twice that times 23168 / 14480, at 256 / 170.
             * Later reads take no more per round than that, so the buffer stays; the window grows into it. */
            assert_int_equal(rcvbuf[0], 131072);
            for (int r = 1; r < 4; r++)
                assert_int_equal(rcvbuf[r], 476223);
            assert_int_equal(tf_info(f.c).rcv_space, 37648);
            assert_int_equal(tf_info(f.c).rcv_ssthresh, 271276);
        } else {
            for (int r = 0; r < 4; r++)
                assert_int_equal(rcvbuf[r], 4u << 20);
        }
        tf_conn_close(&f);
    }
}

/* Linux only: 100-byte segments into SO_RCVBUF 4096 take 832 bytes of memory each (576 once joined), more
 * than the 50 % ratio the window assumes; header prediction lets 20 in before a slow-path segment finds the
 * buffer overrun, then the unread data is copied into one compact buffer (tcp_collapse) and the window is
 * what that leaves, 1608. */
static void test_small_segments_collapse(void **state)
{
    (void)state;
    struct tf_conn f;
    listen_at(&f, LINUX, 4096);
    uint16_t win;
    int ws;
    open_passive(&f, NULL, &win, &ws);
    uint64_t now = 11 * TF_MS;
    for (int i = 0; i < 22; i++, now += TF_MS)
        tf_peer_send_data(&f.p, 100, now);
    TF_EXPECT(&f.t, 11 * TF_MS, ACK, f.d, f.p.iss + 101, 0);
    TF_EXPECT(&f.t, 12 * TF_MS, ACK, f.d, f.p.iss + 201, 0);
    TF_EXPECT_NONE(&f.t);
    assert_true(tf_run_to_seg(&f.t, now + 100 * TF_MS));
    struct tf_seg *a = TF_EXPECT(&f.t, TF_ANY_TIME, ACK, f.d, f.p.nxt, 0);
    assert_int_equal(a->h.window, 1608);
    assert_int_equal(tf_counters(&f.t).TCPRcvCollapsed, 2);
    assert_int_equal(tf_counters(&f.t).PruneCalled, 1);
    tf_conn_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handshake_windows),
        cmocka_unit_test(test_connect_windows),
        cmocka_unit_test(test_window_grows_and_fills),
        cmocka_unit_test(test_zero_window),
        cmocka_unit_test(test_beyond_edge),
        cmocka_unit_test(test_autotune),
        cmocka_unit_test(test_small_segments_collapse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
