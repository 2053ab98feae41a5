/*
 * test_tcp_options.c — malformed TCP options (src/wire/tcp.c and its callers in the stack): issue 18 found
 * that a SYN with one bad option got no answer from brisk (dropped, TcpInErrs) while Linux answers it.
 *
 * Linux's tcp_parse_options, and now brisk's parse_options, treat a malformed option in one of two ways:
 *   - the list cannot be walked past it — a length byte below 2 (Linux's "silly options"), a length running
 *     past the header, a kind in the last byte without its length byte: parsing stops, what came before
 *     stands;
 *   - it can — a known kind with the wrong length (SACK-permitted of length 3, MSS of length 5, TS of 9):
 *     that option alone is ignored and parsing goes on.
 * The first part checks brisk_tcp_parse on each case issue 18 names and a few around them; the second sends
 * the same SYNs to a listener under the brisk and linux-6.x profiles and checks the SYN-ACK (the options it
 * answers with are the ones taken), the MSS the connection sends with, and TcpInBadOptions; the third sends
 * data and ACKs with bad options on an established connection: they are processed, the option ignored.
 * The conformance scripts tests/conformance/handshake/syn-bad-option-*.pkt check the same cases against
 * Linux itself (brisk-pkt --kernel).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "support/fakedev.h"
#include "support/tcpforge.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"
#include "wire/wire.h"

#define LO 0x7f000001u

/* What a parse of an option list must give. */
struct want {
    int mss;      /* -1: no MSS taken, else its value */
    int wscale;   /* -1: no window scale taken */
    int sack_perm;
    int ts;       /* timestamps taken */
    unsigned bad; /* opts.bad */
};

struct opt_case {
    const char *name;
    uint8_t opts[40];
    uint8_t len; /* a multiple of 4 */
    struct want w;
};

/* Each case of issue 18, with options on both sides of the bad one so that "stop" and "skip" differ. */
static const struct opt_case cases[] = {
    {"unknown kind of length 0 (stops: SACK-permitted before it taken, WS after it not)",
     {2, 4, 0x03, 0xe8, 4, 2, 30, 0, 1, 3, 3, 7}, 12, {1000, -1, 1, 0, 1}},
    {"MSS of length 0 (stops: no MSS, no WS)", {4, 2, 2, 0, 0x05, 0xb4, 1, 3, 3, 7, 1, 1}, 12, {-1, -1, 1, 0, 1}},
    {"MSS of length 1 (stops)", {4, 2, 2, 1, 0x05, 0xb4, 1, 3, 3, 7, 1, 1}, 12, {-1, -1, 1, 0, 1}},
    {"an option running past the header (stops: everything before it taken)",
     {2, 4, 0x03, 0xe8, 4, 2, 1, 3, 3, 7, 30, 10, 0, 0, 0, 0}, 16, {1000, 7, 1, 0, 1}},
    {"SACK-permitted of length 3 (ignored, parsing goes on: WS after it taken)",
     {2, 4, 0x03, 0xe8, 4, 3, 0, 1, 3, 3, 7, 1}, 12, {1000, 7, 0, 0, 1}},
    {"window scale of length 255 (runs past the header: stops)",
     {2, 4, 0x03, 0xe8, 4, 2, 3, 255, 7, 1, 1, 1}, 12, {1000, -1, 1, 0, 1}},
    {"window scale of length 4 (ignored, goes on)", {3, 4, 7, 0, 4, 2, 2, 4, 0x03, 0xe8, 1, 1}, 12,
     {1000, -1, 1, 0, 1}},
    {"MSS of length 5 (ignored, goes on)", {2, 5, 0x03, 0xe8, 0, 4, 2, 1, 3, 3, 7, 1}, 12, {-1, 7, 1, 0, 1}},
    {"timestamps of length 9 (ignored, goes on)", {8, 9, 0, 0, 0, 1, 0, 0, 0, 3, 3, 7, 2, 4, 0x03, 0xe8}, 16,
     {1000, 7, 0, 0, 1}},
    {"SACK of length 11 (ignored, goes on)", {5, 11, 0, 0, 0, 1, 0, 0, 0, 2, 0, 4, 2, 1, 1, 1}, 16,
     {-1, -1, 1, 0, 1}},
    {"a kind in the last byte, no room for its length (stops)", {2, 4, 0x03, 0xe8, 4, 2, 1, 30}, 8,
     {1000, -1, 1, 0, 1}},
    {"two wrong lengths, both ignored", {4, 3, 0, 3, 4, 7, 0, 2, 4, 0x03, 0xe8, 1}, 12, {1000, -1, 0, 0, 2}},
    {"every option well-formed: nothing bad",
     {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7}, 20, {1460, 7, 1, 1, 0}},
};

#define NCASES (sizeof cases / sizeof cases[0])

/* A SYN header from 10.0.0.2:40000 to 80 carrying `opts` raw, in an exactly-sized heap buffer. */
static uint8_t *syn_with(const uint8_t *opts, size_t olen, size_t *len)
{
    struct brisk_tcp_repr h;
    memset(&h, 0, sizeof h);
    h.sport = 40000;
    h.dport = 80;
    h.seq = 1000;
    h.flags = BRISK_TCP_SYN;
    h.window = 65535;
    uint8_t *b = malloc(BRISK_TCP_HLEN + olen);
    assert_non_null(b);
    assert_int_equal(brisk_tcp_emit(b, &h), BRISK_TCP_HLEN);
    memcpy(b + BRISK_TCP_HLEN, opts, olen);
    b[12] = (uint8_t)((BRISK_TCP_HLEN + olen) / 4 << 4);
    *len = BRISK_TCP_HLEN + olen;
    return b;
}

static void check_want(const char *name, const struct brisk_tcp_opts *o, const struct want *w)
{
    if ((w->mss < 0 ? o->mss_ok != 0 : !o->mss_ok || o->mss != w->mss) ||
        (w->wscale < 0 ? o->wscale_ok != 0 : !o->wscale_ok || o->wscale != w->wscale) ||
        o->sack_perm != w->sack_perm || o->ts_ok != w->ts || o->bad != w->bad)
        fail_msg("%s: got mss %d/%u ws %d/%u sackOK %u ts %u bad %u", name, o->mss_ok, o->mss, o->wscale_ok,
                 o->wscale, o->sack_perm, o->ts_ok, o->bad);
}

/* ---- the parser ---- */

static void test_parse_each_case(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCASES; i++) {
        size_t len;
        uint8_t *b = syn_with(cases[i].opts, cases[i].len, &len);
        brisk_tcp_csum_fill(b, len, LO, LO);
        struct brisk_tcp_repr r;
        for (int verify = 0; verify <= 1; verify++) {
            memset(&r, 0xa5, sizeof r);
            int rc = brisk_tcp_parse(b, len, LO, LO, verify, &r);
            if (rc != (int)len)
                fail_msg("%s: parse returned %d (%s), want %zu", cases[i].name, rc, brisk_wire_err_name(rc), len);
            check_want(cases[i].name, &r.opts, &cases[i].w);
            assert_int_equal(r.sport, 40000);
            assert_int_equal(r.flags, BRISK_TCP_SYN);
            assert_int_equal(r.payload_len, 0);
        }
        free(b);
    }
}

/* A bad option stops or skips exactly as the cases say whatever follows: payload stays payload. */
static void test_parse_payload_after_bad_options(void **state)
{
    (void)state;
    static const uint8_t opts[] = {1, 1, 30, 0, 2, 4, 0x05, 0xb4}; /* silly option, then an MSS not taken */
    uint8_t seg[BRISK_TCP_HLEN + sizeof opts + 5];
    size_t len;
    uint8_t *b = syn_with(opts, sizeof opts, &len);
    memcpy(seg, b, len);
    free(b);
    memcpy(seg + len, "hello", 5);
    struct brisk_tcp_repr r;
    assert_int_equal(brisk_tcp_parse(seg, sizeof seg, LO, LO, 0, &r), 28);
    assert_int_equal(r.payload_len, 5);
    assert_memory_equal(r.payload, "hello", 5);
    assert_false(r.opts.mss_ok);
    assert_int_equal(r.opts.bad, 1);
}

/* ---- through the stack ---- */

static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x02}; /* tcpforge's peer */

/* Feeds the peer's segment h (its options ignored) with the raw option bytes `opts` instead. */
static void inject_raw(struct tf *t, const struct brisk_tcp_repr *h, const uint8_t *opts, size_t olen,
                       const void *payload, size_t plen, uint64_t now)
{
    struct brisk_tcp_repr bare = *h;
    memset(&bare.opts, 0, sizeof bare.opts);
    uint8_t seg[BRISK_TCP_HLEN_MAX + 2048];
    assert_true(olen % 4 == 0 && olen <= BRISK_TCP_OPTS_MAX && plen <= 2048);
    assert_int_equal(brisk_tcp_emit(seg, &bare), BRISK_TCP_HLEN);
    memcpy(seg + BRISK_TCP_HLEN, opts, olen);
    seg[12] = (uint8_t)((BRISK_TCP_HLEN + olen) / 4 << 4);
    if (plen)
        memcpy(seg + BRISK_TCP_HLEN + olen, payload, plen);
    size_t slen = BRISK_TCP_HLEN + olen + plen;
    brisk_tcp_csum_fill(seg, slen, TF_PEER_IP, TF_LOCAL_IP);
    uint8_t frame[BRISK_ETH_HLEN + BRISK_IPV4_HLEN + sizeof seg];
    size_t n = fakedev_ipv4_frame(frame, t->f.cfg.mac, peer_mac, TF_PEER_IP, TF_LOCAL_IP, BRISK_IP_PROTO_TCP,
                                  seg, slen);
    brisk_stack_input(t->st, t->f.dev, frame, n, now);
    tf_collect(t);
}

static void syn_cases_under(const char *profile)
{
    for (size_t i = 0; i < NCASES; i++) {
        const struct opt_case *k = &cases[i];
        struct tf t;
        tf_init(&t, tf_profile_sets(profile));
        brisk_sock *l = tf_listen(&t, 80);
        struct tf_peer p;
        tf_peer_init(&p, &t, 40000, 80, 1000);
        struct brisk_tcp_repr h = tf_peer_hdr(&p, BRISK_TCP_SYN, 0);
        inject_raw(&t, &h, k->opts, k->len, NULL, 0, 0);
        if (tf_pending(&t) != 1)
            fail_msg("%s, %s: the SYN got %zu segments, want a SYN-ACK", profile, k->name, tf_pending(&t));
        struct tf_seg *sa = tf_take(&t);
        if (sa->h.flags != (BRISK_TCP_SYN | BRISK_TCP_ACK) || sa->h.ack != 1001)
            fail_msg("%s, %s: not a SYN-ACK of the SYN", profile, k->name);
        /* Offered back exactly what was taken from the SYN. */
        if (sa->h.opts.sack_perm != k->w.sack_perm || sa->h.opts.wscale_ok != (k->w.wscale >= 0) ||
            sa->h.opts.ts_ok != k->w.ts || !sa->h.opts.mss_ok)
            fail_msg("%s, %s: SYN-ACK options sackOK %u ws %u ts %u", profile, k->name, sa->h.opts.sack_perm,
                     sa->h.opts.wscale_ok, sa->h.opts.ts_ok);
        struct brisk_counters cn = tf_counters(&t);
        assert_int_equal(cn.TcpInBadOptions, k->w.bad);
        assert_int_equal(cn.TcpInErrs, 0);
        /* The handshake completes; the connection sends with the MSS taken (536 without one, RFC 9293
         * §3.7.1), less the timestamp option when it was negotiated. */
        p.nxt = 1001;
        p.l_iss = sa->h.seq;
        p.ack = p.l_iss + 1;
        p.ts = (uint8_t)k->w.ts;
        tf_peer_send(&p, BRISK_TCP_ACK, NULL, 0, TF_MS);
        int err;
        brisk_sock *c = brisk_accept(l, &err);
        if (!c)
            fail_msg("%s, %s: no connection accepted", profile, k->name);
        struct brisk_conn_info ci = tf_info(c);
        uint32_t want_mss = (uint32_t)(k->w.mss < 0 ? 536 : k->w.mss) - (k->w.ts ? 12u : 0u);
        if (ci.mss != want_mss || ci.sack_ok != k->w.sack_perm || ci.ws_ok != (k->w.wscale >= 0))
            fail_msg("%s, %s: connection mss %u sack %u ws %u, want mss %u", profile, k->name, ci.mss, ci.sack_ok,
                     ci.ws_ok, want_mss);
        brisk_abort(c, 2 * TF_MS);
        brisk_close(l, 2 * TF_MS);
        while (tf_pending(&t))
            tf_take(&t);
        tf_free(&t);
    }
}

static void test_syn_answered_brisk(void **state)
{
    (void)state;
    syn_cases_under("brisk");
}

static void test_syn_answered_linux(void **state)
{
    (void)state;
    syn_cases_under("linux-6.x");
}

/* With SYN cookies in use, the cookie's SYN-ACK answers the same SYNs. */
static void test_syn_answered_by_cookie(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, (const char *const[]){"tcp_syncookies=2", NULL});
    tf_listen(&t, 80);
    for (size_t i = 0; i < NCASES; i++) {
        struct tf_peer p;
        tf_peer_init(&p, &t, (uint16_t)(41000 + i), 80, 1000);
        struct brisk_tcp_repr h = tf_peer_hdr(&p, BRISK_TCP_SYN, 0);
        inject_raw(&t, &h, cases[i].opts, cases[i].len, NULL, 0, 0);
        struct tf_seg *sa = tf_take(&t);
        if (sa->h.flags != (BRISK_TCP_SYN | BRISK_TCP_ACK))
            fail_msg("%s: no cookie SYN-ACK", cases[i].name);
        assert_int_equal(sa->h.opts.sack_perm, cases[i].w.ts && cases[i].w.sack_perm);
    }
    struct brisk_counters cn = tf_counters(&t);
    assert_int_equal(cn.SyncookiesSent, NCASES);
    assert_int_equal(cn.TcpInErrs, 0);
    tf_free(&t);
}

/* Data and ACKs with bad options on an established connection are processed; the option is ignored. */
static void established_under(const char *profile)
{
    struct tf_conn f;
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 0; /* a segment with a bad option then lacks nothing the connection needs */
    tf_conn_open(&f, tf_profile_sets(profile), NULL, &o, TF_MS);
    uint64_t now = 10 * TF_MS;

    /* Data behind a silly option: taken in order and acknowledged. */
    static const uint8_t silly[] = {1, 1, 30, 0};
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, BRISK_TCP_ACK | BRISK_TCP_PSH, now);
    uint8_t data[100];
    tf_pattern(data, sizeof data, 0);
    inject_raw(&f.t, &h, silly, sizeof silly, data, sizeof data, now);
    f.p.nxt += sizeof data;
    now += 500 * TF_MS; /* past any delayed ACK */
    tf_run(&f.t, now);
    struct tf_seg *a = tf_take(&f.t);
    assert_int_equal(a->h.flags, BRISK_TCP_ACK);
    assert_int_equal(a->h.ack, 1101);
    uint8_t got[200];
    assert_int_equal(brisk_recv(f.c, got, sizeof got, now), 100);
    assert_memory_equal(got, data, 100);

    /* An ACK of our data carrying a SACK option of a wrong length: the ACK counts, the SACK does not. */
    now += TF_MS;
    tf_send_pattern(f.c, 0, 1000, now);
    TF_EXPECT(&f.t, now, BRISK_TCP_ACK | BRISK_TCP_PSH, f.d, 1101, 1000);
    now += TF_MS;
    static const uint8_t sack11[] = {5, 11, 0, 0, 0, 1, 0, 0, 0, 2, 0, 1};
    f.p.ack = f.d + 1000;
    h = tf_peer_hdr(&f.p, BRISK_TCP_ACK, now);
    inject_raw(&f.t, &h, sack11, sizeof sack11, NULL, 0, now);
    struct brisk_conn_info ci = tf_info(f.c);
    assert_int_equal(ci.unacked, 0);
    assert_int_equal(ci.bytes_acked, 1000);
    assert_int_equal(ci.sacked_bytes, 0);

    /* A window update past a window scale of length 255 (runs past the header: stops). */
    static const uint8_t ws255[] = {1, 3, 255, 9};
    now += TF_MS;
    h = tf_peer_hdr(&f.p, BRISK_TCP_ACK, now);
    h.window = 1000;
    inject_raw(&f.t, &h, ws255, sizeof ws255, NULL, 0, now);
    ci = tf_info(f.c);
    assert_int_equal(ci.snd_wnd, 1000u << ci.snd_wscale);
    assert_int_equal(ci.snd_wscale, 7); /* a window scale outside the SYN changes nothing */

    struct brisk_counters cn = tf_counters(&f.t);
    assert_int_equal(cn.TcpInBadOptions, 3);
    assert_int_equal(cn.TcpInErrs, 0);
    TF_EXPECT_NONE(&f.t);
    tf_conn_close(&f);
}

static void test_established_brisk(void **state)
{
    (void)state;
    established_under("brisk");
}

static void test_established_linux(void **state)
{
    (void)state;
    established_under("linux-6.x");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_each_case),
        cmocka_unit_test(test_parse_payload_after_bad_options),
        cmocka_unit_test(test_syn_answered_brisk),
        cmocka_unit_test(test_syn_answered_linux),
        cmocka_unit_test(test_syn_answered_by_cookie),
        cmocka_unit_test(test_established_brisk),
        cmocka_unit_test(test_established_linux),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
