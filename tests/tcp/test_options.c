/*
 * test_options.c — option negotiation (RFC 9293 §3.7.1 MSS, RFC 6691; RFC 7323 window scale and timestamps;
 * RFC 2018 SACK-permitted): each option can be switched off by its setting (tcp_sack, tcp_timestamps,
 * tcp_window_scaling) and is then neither offered nor used; an option the peer did not offer is not used
 * either; the MSS we announce is clamped by the device MTU and by BRISK_SO_MAXSEG; the MSS we send with is
 * the smaller of both ends', at least tcp_min_snd_mss, minus the timestamp option; window scales above 14 are
 * taken as 14.
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

/* The peer's SYN with options `o` to a listener on port 80; returns the SYN-ACK (asserted to be one). With
 * `c`, the peer's ACK completes the handshake and *c gets the accepted connection. */
static struct tf_seg *passive(struct tf *t, struct tf_peer *p, brisk_sock *l, const struct brisk_tcp_opts *o,
                              brisk_sock **c)
{
    tf_peer_init(p, t, 40000, 80, 1000);
    struct brisk_tcp_repr h = tf_peer_hdr(p, SYN, 0);
    h.opts = *o;
    tf_inject(t, &h, NULL, 0, 0);
    struct tf_seg *sa = tf_take(t);
    assert_int_equal(sa->h.flags, SYN | ACK);
    p->nxt = 1001;
    p->l_iss = sa->h.seq;
    p->ack = p->l_iss + 1;
    p->ts = o->ts_ok && sa->h.opts.ts_ok;
    if (c) {
        size_t idx = (size_t)(sa - t->q); /* the queue may move while injecting */
        tf_peer_send(p, ACK, NULL, 0, TF_MS);
        int err;
        *c = brisk_accept(l, &err);
        assert_non_null(*c);
        return &t->q[idx];
    }
    return sa;
}

/* connect(); returns the SYN. */
static struct tf_seg *active(struct tf *t, brisk_sock **s, uint64_t maxseg, uint64_t rcvbuf)
{
    int err;
    *s = brisk_socket(t->st, &err);
    assert_non_null(*s);
    if (maxseg)
        assert_int_equal(brisk_setsockopt(*s, BRISK_SO_MAXSEG, maxseg, 0), BRISK_OK);
    if (rcvbuf)
        assert_int_equal(brisk_setsockopt(*s, BRISK_SO_RCVBUF, rcvbuf, 0), BRISK_OK);
    assert_int_equal(brisk_connect(*s, TF_PEER_IP, 443, 0), BRISK_ERR_INPROGRESS);
    struct tf_seg *syn = tf_take(t);
    assert_int_equal(syn->h.flags, SYN);
    return syn;
}

static void done(struct tf *t, brisk_sock *a, brisk_sock *b)
{
    if (a)
        brisk_abort(a, t->st->net.now);
    if (b)
        brisk_abort(b, t->st->net.now);
    while (tf_pending(t))
        tf_take(t);
    assert_int_equal(t->st->tcp->nsocks, 0);
    tf_free(t);
}

static void test_sack_off(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, (const char *const[]){"tcp_sack=0", NULL});
    brisk_sock *s;
    struct tf_seg *syn = active(&t, &s, 0, 0);
    assert_false(syn->h.opts.sack_perm);
    assert_true(syn->h.opts.ts_ok && syn->h.opts.wscale_ok && syn->h.opts.mss_ok);
    brisk_abort(s, 0);
    /* Offered by the peer, still not used. */
    brisk_sock *l = tf_listen(&t, 80), *c;
    struct tf_peer p;
    struct brisk_tcp_opts o = tf_opts_full();
    struct tf_seg *sa = passive(&t, &p, l, &o, &c);
    assert_false(sa->h.opts.sack_perm);
    assert_true(sa->h.opts.ts_ok && sa->h.opts.wscale_ok);
    assert_false(tf_info(c).sack_ok);
    /* Out-of-order data: the duplicate ACK carries no SACK block. */
    p.nxt += 1000;
    tf_peer_send_data(&p, 100, 2 * TF_MS);
    struct tf_seg *a = TF_EXPECT(&t, 2 * TF_MS, ACK, p.l_iss + 1, 1001, 0);
    assert_int_equal(a->h.opts.nsack, 0);
    /* Nor a D-SACK for a duplicate. */
    p.nxt = 1001;
    tf_peer_send_data(&p, 100, 3 * TF_MS);
    TF_EXPECT(&t, 3 * TF_MS, ACK, p.l_iss + 1, 1101, 0);
    p.nxt = 1001;
    tf_peer_send_data(&p, 100, 4 * TF_MS);
    a = TF_EXPECT(&t, 4 * TF_MS, ACK, p.l_iss + 1, 1101, 0);
    assert_int_equal(a->h.opts.nsack, 0);
    brisk_close(l, 5 * TF_MS);
    done(&t, c, NULL);
}

/* SACK on, but the peer does not offer it: not used. */
static void test_sack_not_offered(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    brisk_sock *l = tf_listen(&t, 80), *c;
    struct tf_peer p;
    struct brisk_tcp_opts o = tf_opts_full();
    o.sack_perm = 0;
    struct tf_seg *sa = passive(&t, &p, l, &o, &c);
    assert_false(sa->h.opts.sack_perm);
    assert_true(sa->h.opts.ts_ok && sa->h.opts.wscale_ok);
    p.nxt += 1000;
    tf_peer_send_data(&p, 100, 2 * TF_MS);
    struct tf_seg *a = TF_EXPECT(&t, 2 * TF_MS, ACK, p.l_iss + 1, 1001, 0);
    assert_int_equal(a->h.opts.nsack, 0);
    brisk_close(l, 3 * TF_MS);
    done(&t, c, NULL);
}

static void test_timestamps_off(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, (const char *const[]){"tcp_timestamps=0", NULL});
    brisk_sock *s;
    struct tf_seg *syn = active(&t, &s, 0, 0);
    assert_false(syn->h.opts.ts_ok);
    assert_true(syn->h.opts.sack_perm && syn->h.opts.wscale_ok);
    brisk_abort(s, 0);
    brisk_sock *l = tf_listen(&t, 80), *c;
    struct tf_peer p;
    struct brisk_tcp_opts o = tf_opts_full();
    struct tf_seg *sa = passive(&t, &p, l, &o, &c);
    assert_false(sa->h.opts.ts_ok);
    assert_true(sa->h.opts.sack_perm && sa->h.opts.wscale_ok);
    struct brisk_conn_info i = tf_info(c);
    assert_false(i.ts_ok);
    assert_int_equal(i.mss, 1460); /* no option space to set aside */
    /* Full-sized segments without options: a 20-byte header. */
    uint8_t buf[3000];
    tf_pattern(buf, sizeof(buf), 0);
    assert_int_equal(brisk_send(c, buf, sizeof(buf), 0, 2 * TF_MS), 3000);
    struct tf_seg *d = TF_EXPECT(&t, 2 * TF_MS, ACK, p.l_iss + 1, 1001, 1460);
    assert_int_equal(d->h.hdr_len, 20);
    assert_false(d->h.opts.ts_ok);
    TF_EXPECT(&t, 2 * TF_MS, ACK, p.l_iss + 1461, 1001, 1460);
    TF_EXPECT(&t, 2 * TF_MS, ACK | PSH, p.l_iss + 2921, 1001, 80);
    /* The peer's timestamps are ignored: no PAWS, an "older" TSval is accepted. */
    struct brisk_tcp_repr h = tf_peer_hdr(&p, ACK | PSH, 3 * TF_MS);
    h.opts.ts_ok = 1;
    h.opts.ts_val = 100;
    tf_inject(&t, &h, buf, 10, 3 * TF_MS);
    h.opts.ts_val = 50;
    h.seq += 10;
    tf_inject(&t, &h, buf, 10, 3 * TF_MS);
    struct tf_seg *a = TF_EXPECT(&t, 3 * TF_MS, ACK, p.l_iss + 3001, 1011, 0);
    assert_false(a->h.opts.ts_ok);
    TF_EXPECT(&t, 3 * TF_MS, ACK, p.l_iss + 3001, 1021, 0);
    assert_int_equal(tf_counters(&t).PAWSEstab, 0);
    brisk_close(l, 4 * TF_MS);
    done(&t, c, NULL);
}

static void test_window_scaling_off(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, (const char *const[]){"tcp_window_scaling=0", NULL});
    brisk_sock *s;
    struct tf_seg *syn = active(&t, &s, 0, 0);
    assert_false(syn->h.opts.wscale_ok);
    assert_true(syn->h.opts.sack_perm && syn->h.opts.ts_ok);
    brisk_abort(s, 0);
    brisk_sock *l = tf_listen(&t, 80), *c;
    struct tf_peer p;
    struct brisk_tcp_opts o = tf_opts_full();
    struct tf_seg *sa = passive(&t, &p, l, &o, &c);
    assert_false(sa->h.opts.wscale_ok);
    assert_int_equal(sa->h.window, 65535);
    struct brisk_conn_info i = tf_info(c);
    assert_false(i.ws_ok);
    assert_int_equal(i.snd_wscale, 0);
    assert_int_equal(i.rcv_wscale, 0);
    /* The peer's windows are taken as they are, though it offered a scale of 7. */
    p.win = 1000;
    tf_peer_send(&p, ACK, NULL, 0, 2 * TF_MS);
    assert_int_equal(tf_info(c).snd_wnd, 1000);
    /* Ours never exceed 65535 with a 4 MB buffer. */
    tf_peer_send_data(&p, 2000, 3 * TF_MS);
    struct tf_seg *a = TF_EXPECT(&t, 3 * TF_MS, ACK, p.l_iss + 1, 3001, 0);
    assert_int_equal(a->h.window, 65535);
    brisk_close(l, 4 * TF_MS);
    done(&t, c, NULL);
}

/* Window scaling on, but the peer does not offer it: neither side scales. */
static void test_window_scaling_not_offered(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    brisk_sock *l = tf_listen(&t, 80), *c;
    struct tf_peer p;
    struct brisk_tcp_opts o = tf_opts_full();
    o.wscale_ok = 0;
    struct tf_seg *sa = passive(&t, &p, l, &o, &c);
    assert_false(sa->h.opts.wscale_ok);
    struct brisk_conn_info i = tf_info(c);
    assert_int_equal(i.rcv_wscale, 0);
    assert_int_equal(i.snd_wscale, 0);
    tf_peer_send_data(&p, 2000, 2 * TF_MS);
    struct tf_seg *a = TF_EXPECT(&t, 2 * TF_MS, ACK, p.l_iss + 1, 3001, 0);
    assert_int_equal(a->h.window, 65535);
    brisk_close(l, 3 * TF_MS);
    done(&t, c, NULL);
}

/* RFC 7323 §2.3: a shift above 14 is taken as 14. */
static void test_window_scale_clamped_to_14(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    brisk_sock *l = tf_listen(&t, 80), *c;
    struct tf_peer p;
    struct brisk_tcp_opts o = tf_opts_full();
    o.wscale = 15;
    passive(&t, &p, l, &o, &c);
    assert_int_equal(tf_info(c).snd_wscale, 14);
    p.win = 3;
    tf_peer_send(&p, ACK, NULL, 0, 2 * TF_MS);
    assert_int_equal(tf_info(c).snd_wnd, 3u << 14);
    brisk_close(l, 3 * TF_MS);
    done(&t, c, NULL);
}

/* Only what the peer offered comes back in the SYN-ACK, each option alone. */
static void test_synack_echoes_only_offered(void **state)
{
    (void)state;
    for (int k = 0; k < 4; k++) {
        struct tf t;
        tf_init(&t, NULL);
        brisk_sock *l = tf_listen(&t, 80);
        struct tf_peer p;
        struct brisk_tcp_opts o = {0};
        if (k == 0)
            o.mss_ok = 1, o.mss = 1200;
        if (k == 1)
            o.wscale_ok = 1, o.wscale = 3;
        if (k == 2)
            o.sack_perm = 1;
        if (k == 3)
            o.ts_ok = 1, o.ts_val = 42;
        struct tf_seg *sa = passive(&t, &p, l, &o, NULL);
        assert_true(sa->h.opts.mss_ok);
        assert_int_equal(sa->h.opts.mss, 1460);
        assert_int_equal(sa->h.opts.wscale_ok, k == 1);
        assert_int_equal(sa->h.opts.sack_perm, k == 2);
        assert_int_equal(sa->h.opts.ts_ok, k == 3);
        if (k == 3)
            assert_int_equal(sa->h.opts.ts_ecr, 42);
        brisk_close(l, TF_MS); /* and the half-open child with it */
        while (tf_pending(&t))
            tf_take(&t);
        assert_int_equal(t.st->tcp->nsocks, 0);
        tf_free(&t);
    }
}

static void test_mss_clamped_by_device_mtu(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    t.f.dev->cfg.mtu = 1000; /* white box: the device's MTU as the stack sees it */
    brisk_sock *s;
    struct tf_seg *syn = active(&t, &s, 0, 0);
    assert_int_equal(syn->h.opts.mss, 960);
    brisk_abort(s, 0);
    brisk_sock *l = tf_listen(&t, 80), *c;
    struct tf_peer p;
    struct brisk_tcp_opts o = tf_opts_full();
    struct tf_seg *sa = passive(&t, &p, l, &o, &c);
    assert_int_equal(sa->h.opts.mss, 960);
    assert_int_equal(tf_info(c).mss, 960 - 12); /* the peer's 1460 is larger; timestamps take 12 */
    uint8_t buf[2000];
    tf_pattern(buf, sizeof(buf), 0);
    assert_int_equal(brisk_send(c, buf, sizeof(buf), 0, 2 * TF_MS), 2000);
    struct tf_seg *d = TF_EXPECT(&t, 2 * TF_MS, ACK, p.l_iss + 1, 1001, 948);
    assert_int_equal(d->h.hdr_len + d->len + 20, 1000); /* exactly the MTU */
    TF_EXPECT(&t, 2 * TF_MS, ACK, p.l_iss + 949, 1001, 948);
    TF_EXPECT(&t, 2 * TF_MS, ACK | PSH, p.l_iss + 1897, 1001, 104);
    brisk_close(l, 3 * TF_MS);
    done(&t, c, NULL);
}

static void test_mss_clamped_by_maxseg(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    brisk_sock *s;
    struct tf_seg *syn = active(&t, &s, 1000, 0);
    assert_int_equal(syn->h.opts.mss, 1000);
    brisk_abort(s, 0);
    brisk_sock *l = tf_listen(&t, 80), *c;
    assert_int_equal(brisk_setsockopt(l, BRISK_SO_MAXSEG, 63, 0), BRISK_ERR_RANGE);
    assert_int_equal(brisk_setsockopt(l, BRISK_SO_MAXSEG, 1000, 0), BRISK_OK);
    struct tf_peer p;
    struct brisk_tcp_opts o = tf_opts_full();
    struct tf_seg *sa = passive(&t, &p, l, &o, &c);
    assert_int_equal(sa->h.opts.mss, 1000); /* inherited from the listener */
    assert_int_equal(tf_info(c).mss, 988);
    uint64_t v;
    assert_int_equal(brisk_getsockopt(c, BRISK_SO_MAXSEG, &v), BRISK_OK);
    assert_int_equal(v, 988);
    uint8_t buf[1000];
    tf_pattern(buf, sizeof(buf), 0);
    assert_int_equal(brisk_send(c, buf, sizeof(buf), 0, 2 * TF_MS), 1000);
    TF_EXPECT(&t, 2 * TF_MS, ACK, p.l_iss + 1, 1001, 988);
    TF_EXPECT(&t, 2 * TF_MS, ACK | PSH, p.l_iss + 989, 1001, 12);
    brisk_close(l, 3 * TF_MS);
    done(&t, c, NULL);
}

/* The peer's smaller MSS bounds our segments (timestamps still take their 12 bytes). */
static void test_peer_mss_bounds_segments(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    brisk_sock *l = tf_listen(&t, 80), *c;
    struct tf_peer p;
    struct brisk_tcp_opts o = tf_opts_full();
    o.mss = 536;
    struct tf_seg *sa = passive(&t, &p, l, &o, &c);
    assert_int_equal(sa->h.opts.mss, 1460); /* ours is still ours */
    assert_int_equal(tf_info(c).mss, 524);
    uint8_t buf[1100];
    tf_pattern(buf, sizeof(buf), 0);
    assert_int_equal(brisk_send(c, buf, sizeof(buf), 0, 2 * TF_MS), 1100);
    TF_EXPECT(&t, 2 * TF_MS, ACK, p.l_iss + 1, 1001, 524);
    TF_EXPECT(&t, 2 * TF_MS, ACK, p.l_iss + 525, 1001, 524);
    struct tf_seg *d = TF_EXPECT(&t, 2 * TF_MS, ACK | PSH, p.l_iss + 1049, 1001, 52);
    assert_true(tf_payload_is(d, 1048));
    brisk_close(l, 3 * TF_MS);
    done(&t, c, NULL);
}

/* A tiny MSS from the peer is floored at tcp_min_snd_mss (48, Linux's), before the timestamp option's 12
 * bytes come off, as Linux's __tcp_mtu_to_mss does: MSS 40 gives 48-byte segments, 36 with timestamps; 88
 * is used as announced. brisk used to floor at 64 after the option bytes. Linux 6.18:
 * tests/conformance/mss/. */
static void test_peer_mss_floor(void **state)
{
    (void)state;
    static const struct {
        uint16_t mss;
        uint8_t ts;
        uint32_t want;
    } cases[] = {{40, 0, 48}, {40, 1, 36}, {88, 0, 88}, {88, 1, 76}, {20, 0, 48}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tf t;
        tf_init(&t, NULL);
        brisk_sock *l = tf_listen(&t, 80), *c;
        struct tf_peer p;
        struct brisk_tcp_opts o = tf_opts_full();
        o.mss = cases[i].mss;
        o.ts_ok = cases[i].ts;
        passive(&t, &p, l, &o, &c);
        assert_int_equal(tf_info(c).mss, cases[i].want);
        uint8_t buf[100];
        tf_pattern(buf, sizeof(buf), 0);
        assert_int_equal(brisk_send(c, buf, sizeof(buf), 0, 2 * TF_MS), 100);
        TF_EXPECT(&t, 2 * TF_MS, ACK, p.l_iss + 1, 1001, cases[i].want);
        brisk_close(l, 3 * TF_MS);
        done(&t, c, NULL);
    }
    /* A higher floor is a setting away. */
    struct tf t;
    tf_init(&t, (const char *const[]){"tcp_min_snd_mss=100", NULL});
    brisk_sock *l = tf_listen(&t, 80), *c;
    struct tf_peer p;
    struct brisk_tcp_opts o = tf_opts_full();
    o.mss = 88;
    o.ts_ok = 0;
    passive(&t, &p, l, &o, &c);
    assert_int_equal(tf_info(c).mss, 100);
    brisk_close(l, 3 * TF_MS);
    done(&t, c, NULL);
}

/* The scale we ask for is the smallest that lets a 16-bit window cover the receive buffer. */
static void test_rcvbuf_sets_window_scale(void **state)
{
    (void)state;
    static const struct {
        uint64_t rcvbuf;
        uint8_t ws;
    } cases[] = {{65535, 0}, {65536, 1}, {1 << 20, 5}, {4 << 20, 7}, {1u << 30, 14}};
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct tf t;
        tf_init(&t, NULL);
        brisk_sock *s;
        struct tf_seg *syn = active(&t, &s, 0, cases[k].rcvbuf);
        assert_true(syn->h.opts.wscale_ok);
        assert_int_equal(syn->h.opts.wscale, cases[k].ws);
        assert_int_equal(syn->h.window, cases[k].rcvbuf < 65535 ? cases[k].rcvbuf : 65535);
        brisk_abort(s, 0);
        brisk_sock *l = tf_listen(&t, 80), *c;
        assert_int_equal(brisk_setsockopt(l, BRISK_SO_RCVBUF, cases[k].rcvbuf, 0), BRISK_OK);
        struct tf_peer p;
        struct brisk_tcp_opts o = tf_opts_full();
        struct tf_seg *sa = passive(&t, &p, l, &o, &c);
        assert_int_equal(sa->h.opts.wscale, cases[k].ws);
        assert_int_equal(tf_info(c).rcv_wscale, cases[k].ws);
        brisk_close(l, TF_MS);
        done(&t, c, NULL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sack_off),
        cmocka_unit_test(test_sack_not_offered),
        cmocka_unit_test(test_timestamps_off),
        cmocka_unit_test(test_window_scaling_off),
        cmocka_unit_test(test_window_scaling_not_offered),
        cmocka_unit_test(test_window_scale_clamped_to_14),
        cmocka_unit_test(test_synack_echoes_only_offered),
        cmocka_unit_test(test_mss_clamped_by_device_mtu),
        cmocka_unit_test(test_mss_clamped_by_maxseg),
        cmocka_unit_test(test_peer_mss_bounds_segments),
        cmocka_unit_test(test_peer_mss_floor),
        cmocka_unit_test(test_rcvbuf_sets_window_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
