/*
 * test_icmp6.c — ICMPv6 and Neighbour Discovery parse / emit (src/wire/icmp6.c, RFC 4443, RFC 4861).
 *
 * Reference messages, each from an implementation other than brisk's:
 *   - the echo request `ping -6 ::1` sent and the reply Linux answered with, and the port unreachable it
 *     sent for a UDP datagram to a closed port of ::1 (captured on lo with tcpdump -xx);
 *   - NS, NA, RS, RA, redirect, packet too big, parameter problem and time exceeded messages as brisk's
 *     emitters write them, written to a pcap and read back by tcpdump -vv, which verified every checksum
 *     ("icmp6 sum ok") and decoded every field to the values the test asserts; the bytes are the vectors.
 * Then RFC 4861's validity rules one by one (each makes a valid message invalid by one change, with its
 * checksum repaired so that the rule, not the checksum, is what rejects it), option handling, truncation
 * at every length and a flipped bit anywhere.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "wire/csum.h"
#include "wire/icmp6.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"
#include "wire/wire.h"

static size_t unhex(const char *s, uint8_t *out)
{
    size_t n = 0;
    for (; s[0] && s[1]; s += 2) {
        char t[3] = {s[0], s[1], 0};
        out[n++] = (uint8_t)strtoul(t, NULL, 16);
    }
    return n;
}

static const uint8_t lo6[16] = {[15] = 1};
static const uint8_t mac_host[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t mac_router[6] = {0x02, 0, 0, 0, 0, 1};
static const uint8_t ll_host[16] = {0xfe, 0x80, 0,    0,    0,    0,    0,    0,
                                    0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x56};
static const uint8_t ll_router[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 0, 0, 1};
static const uint8_t target[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}; /* 2001:db8::1 */
static const uint8_t global2[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 2};
static const uint8_t dest5[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 5};  /* 2001:db8:1::5 */
static const uint8_t sn_target[16] = {0xff, 0x02, [11] = 1, 0xff, 0, 0, 1}; /* ff02::1:ff00:1 */
static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};
static const uint8_t all_routers[16] = {0xff, 0x02, [15] = 2};
static const uint8_t unspec[16];

/* Linux on lo. */
static const char k_echo_req[] = "8000556a5cb900014b8a0f6b00000000e100040000000000726973696272697369627269";
static const char k_echo_rep[] = "8100546a5cb900014b8a0f6b00000000e100040000000000726973696272697369627269";
static const char k_port_unreach[] =
    "010499ef00000000600213030012114000000000000000000000000000000001000000000000000000"
    "000000000000019c40270f00120025627269736b2d75647036";
/* Checked by tcpdump -vv (see the file comment). */
static const char v_ns[] = "870042ea0000000020010db80000000000000000000000010101525400123456";
static const char v_na[] = "8800e628e000000020010db80000000000000000000000010201020000000001";
static const char v_rs[] = "850071b5000000000101525400123456";
static const char v_ra[] =
    "8600751140c0070800007530000003e8010102000000000105010000000005dc030440c000278d0000093a80"
    "0000000020010db8000000000000000000000000";
static const char v_redirect[] =
    "8900c79200000000fe80000000000000000000fffe00000120010db8000100000000000000000005"
    "0201020000000001";
static const char v_ptb[] =
    "02003d0c00000500600000000578064020010db800000000000000000000000220010db80001000000000000"
    "0000000501bbc35001020304";
static const char v_pp[] =
    "04020fa30000002a600000000578064020010db800000000000000000000000220010db80001000000000000"
    "0000000501bbc35001020304";
static const char v_te[] =
    "030110ce00000000600000000578064020010db800000000000000000000000220010db80001000000000000"
    "0000000501bbc35001020304";

/* Parses from an exactly-sized heap copy (ASan sees any over-read); *keep gets the copy when wanted. */
static int parse_exact(const uint8_t *b, size_t len, const uint8_t *src, const uint8_t *dst,
                       struct brisk_icmp6_repr *r, uint8_t **keep)
{
    uint8_t *p = malloc(len ? len : 1);
    assert_non_null(p);
    memcpy(p, b, len);
    int rc = brisk_icmp6_parse(p, len, src, dst, r);
    if (keep)
        *keep = p;
    else
        free(p);
    return rc;
}

/* Recomputes the checksum of a message edited by hand. */
static void fix_csum(uint8_t *b, size_t len, const uint8_t *src, const uint8_t *dst)
{
    brisk_put16(b + 2, 0);
    uint32_t s = brisk_csum_pseudo6(src, dst, BRISK_IP_PROTO_ICMPV6, (uint32_t)len);
    brisk_put16(b + 2, brisk_csum_fold(brisk_csum_add(s, b, len)));
}

/* ---- echo and errors ---- */

static void test_kernel_echo(void **state)
{
    (void)state;
    uint8_t req[64], rep[64];
    size_t n = unhex(k_echo_req, req);
    assert_int_equal(unhex(k_echo_rep, rep), n);
    struct brisk_icmp6_repr r;
    uint8_t *copy;
    assert_int_equal(parse_exact(req, n, lo6, lo6, &r, &copy), 8);
    assert_int_equal(r.type, BRISK_ICMP6_ECHO_REQUEST);
    assert_int_equal(r.code, 0);
    assert_int_equal(r.id, 0x5cb9);
    assert_int_equal(r.seq, 1);
    assert_int_equal(r.nd, 0);
    assert_int_equal(r.payload_len, 28);
    assert_ptr_equal(r.payload, copy + 8);
    assert_memory_equal(r.payload + 16, "risibrisibri", 12); /* ping -p 6272697369 */
    /* Emitting the parsed repr elsewhere gives the kernel's bytes back. */
    uint8_t out[64];
    assert_int_equal(brisk_icmp6_emit(out, &r, lo6, lo6), n);
    assert_memory_equal(out, req, n);
    free(copy);

    /* The reply, built in place over the request as a stack answers a ping: Linux's own reply. */
    assert_int_equal(brisk_icmp6_parse(req, n, lo6, lo6, &r), 8);
    r.type = BRISK_ICMP6_ECHO_REPLY;
    assert_int_equal(brisk_icmp6_emit(req, &r, lo6, lo6), n);
    assert_memory_equal(req, rep, n);
    assert_int_equal(parse_exact(rep, n, lo6, lo6, &r, NULL), 8);
    assert_int_equal(r.type, BRISK_ICMP6_ECHO_REPLY);

    /* The checksum covers the pseudo-header: the same bytes from another source fail. */
    assert_int_equal(parse_exact(rep, n, global2, lo6, &r, NULL), BRISK_WIRE_BAD_CSUM);
}

static void test_kernel_port_unreachable(void **state)
{
    (void)state;
    uint8_t b[128];
    size_t n = unhex(k_port_unreach, b);
    struct brisk_icmp6_repr r;
    assert_int_equal(parse_exact(b, n, lo6, lo6, &r, NULL), 8);
    assert_int_equal(r.type, BRISK_ICMP6_DEST_UNREACH);
    assert_int_equal(r.code, BRISK_ICMP6_UNREACH_PORT);
    assert_int_equal(r.payload_len, 58);
    /* The quote: an IPv6 header and the UDP datagram we "sent". */
    assert_int_equal(brisk_icmp6_parse(b, n, lo6, lo6, &r), 8);
    struct brisk_ipv6_repr q;
    struct brisk_ipv6_ext x;
    assert_int_equal(brisk_ipv6_parse_quoted(r.payload, r.payload_len, &q), 40);
    assert_int_equal(brisk_ipv6_ext_walk(r.payload, r.payload_len, &q, &x), 40);
    assert_int_equal(x.proto, BRISK_IP_PROTO_UDP);
    assert_int_equal(brisk_get16(r.payload + 40), 40000);
    assert_int_equal(brisk_get16(r.payload + 42), 9999);
    /* Re-emitting reproduces it. */
    uint8_t out[128];
    assert_int_equal(brisk_icmp6_emit(out, &r, lo6, lo6), n);
    assert_memory_equal(out, b, n);
}

/* The invoking packet the error vectors quote: 48 bytes of a TCP segment 2001:db8::2.443 -> 2001:db8:1::5. */
static void quoted_packet(uint8_t q[48])
{
    memset(q, 0, 48);
    struct brisk_ipv6_repr qi = {.payload_len = 1400, .next_header = BRISK_IP_PROTO_TCP, .hop_limit = 64};
    memcpy(qi.src, global2, 16);
    memcpy(qi.dst, dest5, 16);
    brisk_ipv6_emit(q, &qi);
    brisk_put16(q + 40, 443);
    brisk_put16(q + 42, 50000);
    brisk_put32(q + 44, 0x01020304);
}

static void test_errors(void **state)
{
    (void)state;
    uint8_t q[48], m[128], want[128];
    quoted_packet(q);
    struct brisk_icmp6_repr r;

    struct brisk_icmp6_repr ptb = {
        .type = BRISK_ICMP6_PKT_TOO_BIG, .mtu = 1280, .payload = q, .payload_len = 48};
    size_t n = brisk_icmp6_emit(m, &ptb, ll_router, global2);
    assert_int_equal(n, 56);
    assert_int_equal(unhex(v_ptb, want), n);
    assert_memory_equal(m, want, n);
    assert_int_equal(parse_exact(m, n, ll_router, global2, &r, NULL), 8);
    assert_int_equal(r.type, BRISK_ICMP6_PKT_TOO_BIG);
    assert_int_equal(r.mtu, 1280);
    assert_int_equal(r.pointer, 0);
    assert_int_equal(r.payload_len, 48);

    struct brisk_icmp6_repr pp = {.type = BRISK_ICMP6_PARAM_PROB,
                                  .code = BRISK_IPV6_PP_OPTION,
                                  .pointer = 42,
                                  .payload = q,
                                  .payload_len = 48};
    n = brisk_icmp6_emit(m, &pp, dest5, global2);
    assert_int_equal(unhex(v_pp, want), n);
    assert_memory_equal(m, want, n);
    assert_int_equal(parse_exact(m, n, dest5, global2, &r, NULL), 8);
    assert_int_equal(r.pointer, 42);
    assert_int_equal(r.code, 2);
    assert_int_equal(r.mtu, 0);

    struct brisk_icmp6_repr te = {.type = BRISK_ICMP6_TIME_EXCEEDED,
                                  .code = BRISK_ICMP6_TIME_REASSEMBLY,
                                  .payload = q,
                                  .payload_len = 48};
    n = brisk_icmp6_emit(m, &te, dest5, global2);
    assert_int_equal(unhex(v_te, want), n);
    assert_memory_equal(m, want, n);
    assert_int_equal(parse_exact(m, n, dest5, global2, &r, NULL), 8);
    assert_int_equal(r.type, BRISK_ICMP6_TIME_EXCEEDED);
    assert_int_equal(r.code, 1);
    /* The 4 unused bytes of time exceeded are not read as anything. */
    m[7] = 0x55;
    fix_csum(m, n, dest5, global2);
    assert_int_equal(parse_exact(m, n, dest5, global2, &r, NULL), 8);
    assert_int_equal(r.mtu, 0);
    assert_int_equal(r.pointer, 0);

    /* An unknown error type has the error shape (RFC 4443 §2.4 (a)); an unknown informational one 4 bytes. */
    struct brisk_icmp6_repr unk = {.type = 100, .payload = q, .payload_len = 48};
    n = brisk_icmp6_emit(m, &unk, dest5, global2);
    assert_int_equal(n, 56);
    assert_int_equal(parse_exact(m, n, dest5, global2, &r, NULL), 8);
    unk.type = 200;
    n = brisk_icmp6_emit(m, &unk, dest5, global2);
    assert_int_equal(n, 52);
    assert_int_equal(parse_exact(m, n, dest5, global2, &r, NULL), 4);
    assert_int_equal(brisk_icmp6_parse(m, n, dest5, global2, &r), 4);
    assert_int_equal(r.payload_len, 48);
    assert_memory_equal(r.payload, q, 48);

    /* How much of an invoking packet an error carries: a 1280-byte packet at most (Linux's port
     * unreachable for a 1548-byte datagram to ::1 was 1240 bytes: 8 + 1232). */
    assert_int_equal(BRISK_ICMP6_QUOTE_MAX, 1232);
    assert_int_equal(brisk_icmp6_quote_len(1548), 1232);
    assert_int_equal(brisk_icmp6_quote_len(100), 100);
}

static void test_emit_overlapping_payload(void **state)
{
    (void)state;
    uint8_t pattern[100];
    for (size_t i = 0; i < sizeof pattern; i++)
        pattern[i] = (uint8_t)(i * 5 + 3);
    static const size_t src_at[] = {0, 3, 8, 13, 24, 30, 60};
    static const uint8_t types[] = {BRISK_ICMP6_ECHO_REQUEST, BRISK_ICMP6_ND_NS, BRISK_ICMP6_ND_REDIRECT};
    for (size_t t = 0; t < sizeof types; t++) {
        for (size_t k = 0; k < sizeof src_at / sizeof src_at[0]; k++) {
            uint8_t buf[256];
            memset(buf, 0xcc, sizeof buf);
            memcpy(buf + src_at[k], pattern, sizeof pattern);
            struct brisk_icmp6_repr r = {.type = types[t], .payload = buf + src_at[k], .payload_len = 100};
            size_t fixed = brisk_icmp6_fixed_len(types[t]);
            assert_int_equal(brisk_icmp6_emit(buf, &r, global2, dest5), fixed + 100);
            assert_memory_equal(buf + fixed, pattern, 100);
            uint32_t s = brisk_csum_pseudo6(global2, dest5, BRISK_IP_PROTO_ICMPV6, (uint32_t)(fixed + 100));
            assert_int_equal(brisk_csum_fold(brisk_csum_add(s, buf, fixed + 100)), 0);
        }
    }
}

/* ---- Neighbour Discovery ---- */

static void test_nd_ns(void **state)
{
    (void)state;
    uint8_t o[16], m[64], want[64];
    size_t on = brisk_nd_opt_lla_emit(o, BRISK_ND_OPT_SLLA, mac_host);
    assert_int_equal(on, 8);
    struct brisk_icmp6_repr ns = {.type = BRISK_ICMP6_ND_NS, .payload = o, .payload_len = on};
    memcpy(ns.target, target, 16);
    size_t n = brisk_icmp6_emit(m, &ns, ll_host, sn_target);
    assert_int_equal(unhex(v_ns, want), n);
    assert_memory_equal(m, want, n);

    struct brisk_icmp6_repr r;
    assert_int_equal(parse_exact(want, n, ll_host, sn_target, &r, NULL), 24);
    assert_int_equal(r.type, BRISK_ICMP6_ND_NS);
    assert_int_equal(r.nd, 1);
    assert_memory_equal(r.target, target, 16);
    assert_int_equal(r.opts.have_sll, 1);
    assert_memory_equal(r.opts.sll, mac_host, 6);
    assert_int_equal(r.opts.have_tll, 0);
    assert_int_equal(r.opts.bad, 0);

    /* DAD (RFC 4862 §5.4.2): from ::, to the solicited-node address, no SLLA: valid. */
    ns.payload_len = 0;
    n = brisk_icmp6_emit(m, &ns, unspec, sn_target);
    assert_int_equal(parse_exact(m, n, unspec, sn_target, &r, NULL), 24);
    /* ... to any other address, or with an SLLA, invalid (§7.1.1). */
    n = brisk_icmp6_emit(m, &ns, unspec, target);
    assert_int_equal(parse_exact(m, n, unspec, target, &r, NULL), BRISK_WIRE_BAD_ND);
    ns.payload_len = on;
    n = brisk_icmp6_emit(m, &ns, unspec, sn_target);
    assert_int_equal(parse_exact(m, n, unspec, sn_target, &r, NULL), BRISK_WIRE_BAD_ND);
    /* A multicast target (§7.1.1). */
    memcpy(ns.target, all_nodes, 16);
    n = brisk_icmp6_emit(m, &ns, ll_host, sn_target);
    assert_int_equal(parse_exact(m, n, ll_host, sn_target, &r, NULL), BRISK_WIRE_BAD_ND);
    /* A unicast NS (NUD, RFC 4861 §7.3.1) is fine. */
    memcpy(ns.target, target, 16);
    n = brisk_icmp6_emit(m, &ns, ll_host, target);
    assert_int_equal(parse_exact(m, n, ll_host, target, &r, NULL), 24);
}

static void test_nd_na(void **state)
{
    (void)state;
    uint8_t o[16], m[64], want[64];
    size_t on = brisk_nd_opt_lla_emit(o, BRISK_ND_OPT_TLLA, mac_router);
    struct brisk_icmp6_repr na = {.type = BRISK_ICMP6_ND_NA,
                                  .na_router = 1,
                                  .na_solicited = 1,
                                  .na_override = 1,
                                  .payload = o,
                                  .payload_len = on};
    memcpy(na.target, target, 16);
    size_t n = brisk_icmp6_emit(m, &na, ll_router, ll_host);
    assert_int_equal(unhex(v_na, want), n);
    assert_memory_equal(m, want, n);
    struct brisk_icmp6_repr r;
    assert_int_equal(parse_exact(want, n, ll_router, ll_host, &r, NULL), 24);
    assert_int_equal(r.na_router, 1);
    assert_int_equal(r.na_solicited, 1);
    assert_int_equal(r.na_override, 1);
    assert_memory_equal(r.target, target, 16);
    assert_int_equal(r.opts.have_tll, 1);
    assert_memory_equal(r.opts.tll, mac_router, 6);

    /* Each flag on its own, at its bit (RFC 4861 §4.4: R 0x80, S 0x40, O 0x20). */
    for (int f = 0; f < 3; f++) {
        struct brisk_icmp6_repr one = {
            .type = BRISK_ICMP6_ND_NA, .na_router = f == 0, .na_solicited = f == 1, .na_override = f == 2};
        memcpy(one.target, target, 16);
        n = brisk_icmp6_emit(m, &one, ll_router, ll_host);
        assert_int_equal(m[4], 0x80 >> f);
        assert_int_equal(parse_exact(m, n, ll_router, ll_host, &r, NULL), 24);
        assert_int_equal(r.na_router, f == 0);
        assert_int_equal(r.na_solicited, f == 1);
        assert_int_equal(r.na_override, f == 2);
    }
    /* Unsolicited to all-nodes: valid; solicited to a multicast address: invalid (§7.1.2). */
    na.na_solicited = 0;
    n = brisk_icmp6_emit(m, &na, ll_router, all_nodes);
    assert_int_equal(parse_exact(m, n, ll_router, all_nodes, &r, NULL), 24);
    na.na_solicited = 1;
    n = brisk_icmp6_emit(m, &na, ll_router, all_nodes);
    assert_int_equal(parse_exact(m, n, ll_router, all_nodes, &r, NULL), BRISK_WIRE_BAD_ND);
    /* A multicast target. */
    na.na_solicited = 0;
    memcpy(na.target, sn_target, 16);
    n = brisk_icmp6_emit(m, &na, ll_router, ll_host);
    assert_int_equal(parse_exact(m, n, ll_router, ll_host, &r, NULL), BRISK_WIRE_BAD_ND);
}

static void test_nd_rs(void **state)
{
    (void)state;
    uint8_t o[16], m[64], want[64];
    size_t on = brisk_nd_opt_lla_emit(o, BRISK_ND_OPT_SLLA, mac_host);
    struct brisk_icmp6_repr rs = {.type = BRISK_ICMP6_ND_RS, .payload = o, .payload_len = on};
    size_t n = brisk_icmp6_emit(m, &rs, ll_host, all_routers);
    assert_int_equal(unhex(v_rs, want), n);
    assert_memory_equal(m, want, n);
    struct brisk_icmp6_repr r;
    assert_int_equal(parse_exact(want, n, ll_host, all_routers, &r, NULL), 8);
    assert_int_equal(r.opts.have_sll, 1);
    assert_memory_equal(r.opts.sll, mac_host, 6);
    /* From :: with an SLLA: invalid (§6.1.1); without: valid. */
    n = brisk_icmp6_emit(m, &rs, unspec, all_routers);
    assert_int_equal(parse_exact(m, n, unspec, all_routers, &r, NULL), BRISK_WIRE_BAD_ND);
    rs.payload_len = 0;
    n = brisk_icmp6_emit(m, &rs, unspec, all_routers);
    assert_int_equal(parse_exact(m, n, unspec, all_routers, &r, NULL), 8);
}

static void build_ra_opts(uint8_t *o, size_t *on, const struct brisk_nd_prefix *p)
{
    *on = brisk_nd_opt_lla_emit(o, BRISK_ND_OPT_SLLA, mac_router);
    *on += brisk_nd_opt_mtu_emit(o + *on, 1500);
    *on += brisk_nd_opt_prefix_emit(o + *on, p);
}

static void test_nd_ra(void **state)
{
    (void)state;
    uint8_t o[128], m[256], want[256];
    size_t on;
    struct brisk_nd_prefix p = {.prefix_len = 64,
                                .onlink = 1,
                                .autonomous = 1,
                                .valid_lifetime = 2592000,
                                .preferred_lifetime = 604800,
                                .prefix = {0x20, 0x01, 0x0d, 0xb8}};
    build_ra_opts(o, &on, &p);
    struct brisk_icmp6_repr ra = {.type = BRISK_ICMP6_ND_RA,
                                  .ra_hop_limit = 64,
                                  .ra_managed = 1,
                                  .ra_other = 1,
                                  .ra_lifetime = 1800,
                                  .ra_reachable = 30000,
                                  .ra_retrans = 1000,
                                  .payload = o,
                                  .payload_len = on};
    size_t n = brisk_icmp6_emit(m, &ra, ll_router, all_nodes);
    assert_int_equal(unhex(v_ra, want), n);
    assert_memory_equal(m, want, n);

    struct brisk_icmp6_repr r;
    uint8_t *copy;
    assert_int_equal(parse_exact(want, n, ll_router, all_nodes, &r, &copy), 16);
    assert_int_equal(r.ra_hop_limit, 64);
    assert_int_equal(r.ra_managed, 1);
    assert_int_equal(r.ra_other, 1);
    assert_int_equal(r.ra_flags, 0xc0);
    assert_int_equal(r.ra_lifetime, 1800);
    assert_int_equal(r.ra_reachable, 30000);
    assert_int_equal(r.ra_retrans, 1000);
    assert_int_equal(r.opts.have_sll, 1);
    assert_memory_equal(r.opts.sll, mac_router, 6);
    assert_int_equal(r.opts.have_mtu, 1);
    assert_int_equal(r.opts.mtu, 1500);
    assert_int_equal(r.opts.nprefix, 1);
    assert_int_equal(r.opts.bad, 0);
    /* The prefix through the iterator. */
    size_t pos = 0;
    struct brisk_nd_opt opt;
    int found = 0;
    while (brisk_nd_opt_next(r.payload, r.payload_len, &pos, &opt) > 0) {
        if (opt.type != BRISK_ND_OPT_PREFIX)
            continue;
        struct brisk_nd_prefix got;
        assert_int_equal(brisk_nd_opt_prefix(&opt, &got), 0);
        assert_int_equal(got.prefix_len, 64);
        assert_int_equal(got.onlink, 1);
        assert_int_equal(got.autonomous, 1);
        assert_int_equal(got.valid_lifetime, 2592000);
        assert_int_equal(got.preferred_lifetime, 604800);
        assert_memory_equal(got.prefix, p.prefix, 16);
        found++;
    }
    assert_int_equal(found, 1);
    assert_int_equal(pos, r.payload_len);
    free(copy);

    /* Each M / O flag alone. */
    for (int f = 0; f < 2; f++) {
        struct brisk_icmp6_repr one = {.type = BRISK_ICMP6_ND_RA, .ra_managed = f == 0, .ra_other = f == 1};
        n = brisk_icmp6_emit(m, &one, ll_router, all_nodes);
        assert_int_equal(m[5], 0x80 >> f);
        assert_int_equal(parse_exact(m, n, ll_router, all_nodes, &r, NULL), 16);
        assert_int_equal(r.ra_managed, f == 0);
        assert_int_equal(r.ra_other, f == 1);
    }
    /* From a global address: not a router on this link (§6.1.2). */
    n = brisk_icmp6_emit(m, &ra, global2, all_nodes);
    assert_int_equal(parse_exact(m, n, global2, all_nodes, &r, NULL), BRISK_WIRE_BAD_ND);
}

static void test_nd_redirect(void **state)
{
    (void)state;
    uint8_t o[16], m[128], want[128];
    size_t on = brisk_nd_opt_lla_emit(o, BRISK_ND_OPT_TLLA, mac_router);
    struct brisk_icmp6_repr rd = {.type = BRISK_ICMP6_ND_REDIRECT, .payload = o, .payload_len = on};
    memcpy(rd.target, ll_router, 16);
    memcpy(rd.dest, dest5, 16);
    size_t n = brisk_icmp6_emit(m, &rd, ll_router, ll_host);
    assert_int_equal(unhex(v_redirect, want), n);
    assert_memory_equal(m, want, n);
    struct brisk_icmp6_repr r;
    assert_int_equal(parse_exact(want, n, ll_router, ll_host, &r, NULL), 40);
    assert_memory_equal(r.target, ll_router, 16);
    assert_memory_equal(r.dest, dest5, 16);
    assert_int_equal(r.opts.have_tll, 1);

    /* The destination is on-link: target == destination, valid. */
    memcpy(rd.target, dest5, 16);
    n = brisk_icmp6_emit(m, &rd, ll_router, ll_host);
    assert_int_equal(parse_exact(m, n, ll_router, ll_host, &r, NULL), 40);
    /* A global target other than the destination; a multicast destination; a global source (§8.1). */
    memcpy(rd.target, global2, 16);
    n = brisk_icmp6_emit(m, &rd, ll_router, ll_host);
    assert_int_equal(parse_exact(m, n, ll_router, ll_host, &r, NULL), BRISK_WIRE_BAD_ND);
    memcpy(rd.target, ll_router, 16);
    memcpy(rd.dest, all_nodes, 16);
    n = brisk_icmp6_emit(m, &rd, ll_router, ll_host);
    assert_int_equal(parse_exact(m, n, ll_router, ll_host, &r, NULL), BRISK_WIRE_BAD_ND);
    memcpy(rd.dest, dest5, 16);
    n = brisk_icmp6_emit(m, &rd, global2, ll_host);
    assert_int_equal(parse_exact(m, n, global2, ll_host, &r, NULL), BRISK_WIRE_BAD_ND);

    /* The redirected header option: 8 bytes of header, then the packet. */
    uint8_t q[48], opts[64];
    quoted_packet(q);
    opts[0] = BRISK_ND_OPT_REDIR;
    opts[1] = 7;
    memset(opts + 2, 0, 6);
    memcpy(opts + 8, q, 48);
    rd.payload = opts;
    rd.payload_len = 56;
    n = brisk_icmp6_emit(m, &rd, ll_router, ll_host);
    uint8_t *copy;
    assert_int_equal(parse_exact(m, n, ll_router, ll_host, &r, &copy), 40);
    assert_int_equal(r.opts.have_redir, 1);
    assert_int_equal(r.opts.redir_len, 48);
    assert_ptr_equal(r.opts.redir, copy + 48);
    assert_memory_equal(r.opts.redir, q, 48);
    free(copy);
}

static void test_nd_code_nonzero(void **state)
{
    (void)state;
    static const char *const vs[] = {v_ns, v_na, v_rs, v_ra, v_redirect};
    static const uint8_t *const srcs[] = {ll_host, ll_router, ll_host, ll_router, ll_router};
    static const uint8_t *const dsts[] = {sn_target, ll_host, all_routers, all_nodes, ll_host};
    for (size_t i = 0; i < 5; i++) {
        uint8_t m[128];
        size_t n = unhex(vs[i], m);
        struct brisk_icmp6_repr r;
        assert_true(parse_exact(m, n, srcs[i], dsts[i], &r, NULL) > 0);
        for (unsigned code = 1; code < 256; code += 37) {
            m[1] = (uint8_t)code;
            fix_csum(m, n, srcs[i], dsts[i]);
            assert_int_equal(parse_exact(m, n, srcs[i], dsts[i], &r, NULL), BRISK_WIRE_BAD_ND);
        }
        /* Shorter than the type's minimum (RFC 4861: 8, 16, 24, 24, 40): truncated. */
        m[1] = 0;
        size_t fixed = brisk_icmp6_fixed_len(m[0]);
        fix_csum(m, fixed - 1, srcs[i], dsts[i]);
        assert_int_equal(parse_exact(m, fixed - 1, srcs[i], dsts[i], &r, NULL), BRISK_WIRE_TRUNCATED);
        /* Exactly the minimum, no options: valid. */
        fix_csum(m, fixed, srcs[i], dsts[i]);
        assert_int_equal(parse_exact(m, fixed, srcs[i], dsts[i], &r, NULL), (int)fixed);
        assert_int_equal(r.payload_len, 0);
    }
    static const uint8_t expect_fixed[] = {8, 16, 24, 24, 40};
    for (int t = 0; t < 5; t++)
        assert_int_equal(brisk_icmp6_fixed_len((uint8_t)(BRISK_ICMP6_ND_RS + t)), expect_fixed[t]);
}

/* An NS to the solicited-node address carrying `opts` raw. */
static int ns_with(const uint8_t *opts, size_t on, struct brisk_icmp6_repr *r)
{
    uint8_t m[256];
    struct brisk_icmp6_repr ns = {.type = BRISK_ICMP6_ND_NS, .payload = opts, .payload_len = on};
    memcpy(ns.target, target, 16);
    size_t n = brisk_icmp6_emit(m, &ns, ll_host, sn_target);
    return parse_exact(m, n, ll_host, sn_target, r, NULL);
}

static void test_nd_options(void **state)
{
    (void)state;
    struct brisk_icmp6_repr r;
    /* A zero length anywhere invalidates the message (§4.6), even after good options. */
    const uint8_t zero_first[16] = {1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 3, 4, 5, 6};
    const uint8_t zero_after[16] = {1, 1, 1, 2, 3, 4, 5, 6, 200, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(ns_with(zero_first, 16, &r), BRISK_WIRE_BAD_ND);
    assert_int_equal(ns_with(zero_after, 16, &r), BRISK_WIRE_BAD_ND);
    /* An option running past the message, a lone type byte at the end. */
    const uint8_t past[16] = {1, 1, 1, 2, 3, 4, 5, 6, 3, 4, 0, 0, 0, 0, 0, 0};
    assert_int_equal(ns_with(past, 16, &r), BRISK_WIRE_BAD_ND);
    const uint8_t lone[9] = {1, 1, 1, 2, 3, 4, 5, 6, 1};
    assert_int_equal(ns_with(lone, 9, &r), BRISK_WIRE_BAD_ND);

    /* Unknown types are skipped; the first SLLA counts; an SLLA of length 2 (not Ethernet) is ignored
     * and counted; a short prefix option and a long MTU option likewise. */
    uint8_t o[96] = {0};
    size_t on = 0;
    o[on] = 14, o[on + 1] = 1, on += 8;                                 /* nonce (RFC 3971): unknown here */
    o[on] = BRISK_ND_OPT_SLLA, o[on + 1] = 2, on += 16;                 /* wrong length */
    on += brisk_nd_opt_lla_emit(o + on, BRISK_ND_OPT_SLLA, mac_host);   /* counts */
    on += brisk_nd_opt_lla_emit(o + on, BRISK_ND_OPT_SLLA, mac_router); /* duplicate: ignored */
    o[on] = BRISK_ND_OPT_PREFIX, o[on + 1] = 3, on += 24;               /* short prefix */
    o[on] = BRISK_ND_OPT_MTU, o[on + 1] = 2, on += 16;                  /* long MTU */
    assert_int_equal(ns_with(o, on, &r), 24);
    assert_int_equal(r.opts.have_sll, 1);
    assert_memory_equal(r.opts.sll, mac_host, 6);
    assert_int_equal(r.opts.bad, 3);
    assert_int_equal(r.opts.nprefix, 0);
    assert_int_equal(r.opts.have_mtu, 0);

    /* Two prefixes, iterated; a prefix length above 128 is refused by the reader. */
    struct brisk_nd_prefix p1 = {.prefix_len = 64,
                                 .onlink = 1,
                                 .valid_lifetime = BRISK_ND_INFINITY,
                                 .preferred_lifetime = BRISK_ND_INFINITY,
                                 .prefix = {0x20, 0x01, 0x0d, 0xb8}};
    struct brisk_nd_prefix p2 = {
        .prefix_len = 129, .autonomous = 1, .valid_lifetime = 10, .preferred_lifetime = 20, .prefix = {0xfd}};
    on = brisk_nd_opt_prefix_emit(o, &p1);
    on += brisk_nd_opt_prefix_emit(o + on, &p2);
    assert_int_equal(on, 64);
    assert_int_equal(ns_with(o, on, &r), 24);
    assert_int_equal(r.opts.nprefix, 1);
    assert_int_equal(r.opts.bad, 1);
    size_t pos = 0;
    struct brisk_nd_opt opt;
    struct brisk_nd_prefix got;
    assert_int_equal(brisk_nd_opt_next(o, on, &pos, &opt), 1);
    assert_int_equal(brisk_nd_opt_prefix(&opt, &got), 0);
    assert_int_equal(got.onlink, 1);
    assert_int_equal(got.autonomous, 0);
    assert_int_equal(got.valid_lifetime, BRISK_ND_INFINITY);
    assert_int_equal(brisk_nd_opt_next(o, on, &pos, &opt), 1);
    assert_int_equal(brisk_nd_opt_prefix(&opt, &got), BRISK_WIRE_BAD_OPTION);
    assert_int_equal(brisk_nd_opt_next(o, on, &pos, &opt), 0);
    /* Not a prefix option at all. */
    uint8_t lla[8];
    brisk_nd_opt_lla_emit(lla, BRISK_ND_OPT_TLLA, mac_host);
    pos = 0;
    assert_int_equal(brisk_nd_opt_next(lla, 8, &pos, &opt), 1);
    assert_int_equal(brisk_nd_opt_prefix(&opt, &got), BRISK_WIRE_BAD_OPTION);
}

/* ---- robustness ---- */

static void test_truncated_every_length(void **state)
{
    (void)state;
    uint8_t m[128];
    size_t n = unhex(v_ra, m);
    struct brisk_icmp6_repr r;
    for (size_t len = 0; len <= n; len++) {
        /* Below 4: truncated; otherwise the checksum, computed over n bytes, no longer matches. */
        int want = len < 4 ? BRISK_WIRE_TRUNCATED : len < n ? BRISK_WIRE_BAD_CSUM : 16;
        int rc = parse_exact(m, len, ll_router, all_nodes, &r, NULL);
        if (rc != want)
            fail_msg("len %zu: got %d (%s), want %d", len, rc, brisk_wire_err_name(rc), want);
    }
    /* Cut short and re-checksummed: truncated below the fixed part, a bad option inside the options. */
    for (size_t len = 4; len < n; len++) {
        uint8_t c[128];
        memcpy(c, m, n);
        fix_csum(c, len, ll_router, all_nodes);
        int rc = parse_exact(c, len, ll_router, all_nodes, &r, NULL);
        int want = len < 16 ? BRISK_WIRE_TRUNCATED : (len - 16) % 8 == 0 ? 16 : BRISK_WIRE_BAD_ND;
        /* Cut at an option boundary inside the prefix option's 32 bytes: that option runs past the end. */
        if (len > 32 && len < 64)
            want = BRISK_WIRE_BAD_ND;
        if (rc != want)
            fail_msg("len %zu re-checksummed: got %d (%s), want %d", len, rc, brisk_wire_err_name(rc), want);
    }
}

static void test_bad_checksum_every_bit(void **state)
{
    (void)state;
    static const char *const vs[] = {k_echo_rep, v_ns, v_ra};
    static const uint8_t *const srcs[] = {lo6, ll_host, ll_router};
    static const uint8_t *const dsts[] = {lo6, sn_target, all_nodes};
    for (size_t i = 0; i < 3; i++) {
        uint8_t m[128];
        size_t n = unhex(vs[i], m);
        for (size_t bit = 0; bit < 8 * n; bit++) {
            uint8_t c[128];
            memcpy(c, m, n);
            c[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            struct brisk_icmp6_repr r;
            int rc = parse_exact(c, n, srcs[i], dsts[i], &r, NULL);
            if (rc != BRISK_WIRE_BAD_CSUM)
                fail_msg("vector %zu bit %zu: got %d (%s)", i, bit, rc, brisk_wire_err_name(rc));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_echo),
        cmocka_unit_test(test_kernel_port_unreachable),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_emit_overlapping_payload),
        cmocka_unit_test(test_nd_ns),
        cmocka_unit_test(test_nd_na),
        cmocka_unit_test(test_nd_rs),
        cmocka_unit_test(test_nd_ra),
        cmocka_unit_test(test_nd_redirect),
        cmocka_unit_test(test_nd_code_nonzero),
        cmocka_unit_test(test_nd_options),
        cmocka_unit_test(test_truncated_every_length),
        cmocka_unit_test(test_bad_checksum_every_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
