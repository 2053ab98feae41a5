/*
 * test_ipv6.c — the IPv6 fixed header and the extension header walker (src/wire/ipv6.c, RFC 8200 §3-4).
 *
 * The reference packets were captured from Linux on lo (tcpdump -xx, link header removed): an echo
 * request `ping -6 ::1`, a UDP datagram sent with IPV6_HOPOPTS (an unknown skippable option 0x1e, two
 * Pad1) and IPV6_DSTOPTS (a PadN) set, the two fragments of a 65,500-byte UDP datagram to ::1 (lo's MTU
 * is 65,536), and the port unreachable the kernel answered the first datagram with. Every other chain is
 * built by hand, one test per malformed case the walker handles, each checked for its reason, its verdict
 * and the parameter problem pointer RFC 8200 / RFC 4443 ask for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "wire/ipv4.h"
#include "wire/ipv6.h"
#include "wire/wire.h"

static size_t unhex(const char *s, uint8_t *out)
{
    size_t n = 0;
    for (; s[0] && s[1]; s += 2) {
        unsigned v;
        char t[3] = {s[0], s[1], 0};
        v = (unsigned)strtoul(t, NULL, 16);
        out[n++] = (uint8_t)v;
    }
    return n;
}

/* ping -6 ::1: echo request, flow label 0x349c1, hop limit 64. */
static const char k_echo[] =
    "600349c100243a400000000000000000000000000000000100000000000000000000000000000001"
    "8000556a5cb900014b8a0f6b00000000e100040000000000726973696272697369627269";
/* UDP ::1.40002 -> ::1.9998 "brisk-ext" with hop-by-hop (0x1e len 2, Pad1, Pad1) and destination options
 * (PadN of 4 data bytes). */
static const char k_ext[] =
    "600b590a0021004000000000000000000000000000000001000000000000000000000000000000013c00"
    "1e02abcd000011000104000000009c42270e00112bee627269736b2d657874";
/* The second fragment of a 65,500-byte UDP datagram: offset 65488, M 0, id 0xac59a118. */
static const char k_frag2[] =
    "600630d5001c2c400000000000000000000000000000000100000000000000000000000000000001"
    "1100ffd0ac59a1187b828990979ea5acb3bac1c8cfd6dde4ebf2f900";
/* The first 66 bytes of its first fragment (payload length 65496): offset 0, M 1, then the UDP header. */
static const char k_frag1[] =
    "600630d5ffd82c400000000000000000000000000000000100000000000000000000000000000001"
    "11000001ac59a1189c44270cffe461f5030a11181f262d343b42";
/* The invoking packet the kernel quoted in its port unreachable for a UDP datagram to ::1.9999. */
static const char k_quote[] =
    "600213030012114000000000000000000000000000000001000000000000000000000000000000019c40"
    "270f00120025627269736b2d75647036";

static const uint8_t global1[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
static const uint8_t global2[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 2};
static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};

/* A packet under construction: the fixed header, then extension headers appended one by one. */
struct pkt {
    uint8_t b[4096];
    size_t len;
    size_t last_nh; /* the Next Header field the next append fills */
};

static void pkt_start(struct pkt *p, const uint8_t dst[16])
{
    memset(p, 0, sizeof *p);
    struct brisk_ipv6_repr r = {.hop_limit = 64, .next_header = BRISK_IP_PROTO_NONE};
    memcpy(r.src, global1, 16);
    memcpy(r.dst, dst, 16);
    brisk_ipv6_emit(p->b, &r);
    p->len = BRISK_IPV6_HLEN;
    p->last_nh = 6;
}

/* Appends a header of type nh whose bytes (next header byte included, overwritten later) are h[0, n). */
static void pkt_add(struct pkt *p, uint8_t nh, const uint8_t *h, size_t n)
{
    p->b[p->last_nh] = nh;
    memcpy(p->b + p->len, h, n);
    p->last_nh = p->len;
    p->b[p->len] = BRISK_IP_PROTO_NONE;
    p->len += n;
}

/* Ends the chain with upper-layer protocol `proto` and n bytes of its header (zeros); fixes the length. */
static void pkt_end(struct pkt *p, uint8_t proto, size_t n)
{
    p->b[p->last_nh] = proto;
    memset(p->b + p->len, 0, n);
    p->len += n;
    brisk_put16(p->b + 4, (uint16_t)(p->len - BRISK_IPV6_HLEN));
}

static int walk(const struct pkt *p, struct brisk_ipv6_ext *x)
{
    struct brisk_ipv6_repr r;
    int rc = brisk_ipv6_parse(p->b, p->len, &r);
    assert_int_equal(rc, BRISK_IPV6_HLEN);
    /* An exactly-sized copy: ASan sees any read past the end. */
    uint8_t *c = malloc(p->len);
    assert_non_null(c);
    memcpy(c, p->b, p->len);
    rc = brisk_ipv6_ext_walk(c, p->len, &r, x);
    free(c);
    return rc;
}

static void expect_bad(const struct pkt *p, enum brisk_ipv6_bad why, int icmp, uint8_t code, uint16_t ptr)
{
    struct brisk_ipv6_ext x;
    int rc = walk(p, &x);
    if (rc != BRISK_WIRE_BAD_EXTHDR || x.bad != why)
        fail_msg("got %d (%s) bad %s, want bad_exthdr %s", rc, brisk_wire_err_name(rc),
                 brisk_ipv6_bad_name(x.bad), brisk_ipv6_bad_name(why));
    assert_int_equal(x.discard, 1);
    assert_int_equal(x.icmp, icmp);
    if (icmp) {
        assert_int_equal(x.icmp_code, code);
        assert_int_equal(x.icmp_ptr, ptr);
    }
}

/* ---- fixed header ---- */

static void test_parse_kernel_echo(void **state)
{
    (void)state;
    uint8_t b[128];
    size_t n = unhex(k_echo, b);
    struct brisk_ipv6_repr r;
    /* From ::1: a source no packet on a link may carry (RFC 4291 §2.5.3). */
    assert_int_equal(brisk_ipv6_parse(b, n, &r), BRISK_WIRE_BAD_ADDR);
    assert_int_equal(brisk_ipv6_parse_quoted(b, n, &r), BRISK_IPV6_HLEN);
    assert_int_equal(r.traffic_class, 0);
    assert_int_equal(r.flow_label, 0x349c1);
    assert_int_equal(r.payload_len, 36);
    assert_int_equal(r.next_header, BRISK_IP_PROTO_ICMPV6);
    assert_int_equal(r.hop_limit, 64);
    assert_true(brisk_ipv6_is_loopback(r.src));
    assert_true(brisk_ipv6_is_loopback(r.dst));
    /* Emitting the repr gives back the kernel's 40 bytes. */
    uint8_t out[40];
    assert_int_equal(brisk_ipv6_emit(out, &r), 40);
    assert_memory_equal(out, b, 40);

    /* The same packet from a link-local source parses. */
    static const uint8_t ll[16] = {0xfe, 0x80, [15] = 1};
    memcpy(b + 8, ll, 16);
    assert_int_equal(brisk_ipv6_parse(b, n, &r), BRISK_IPV6_HLEN);
    assert_memory_equal(r.src, ll, 16);
}

static void test_emit_round_trip(void **state)
{
    (void)state;
    struct brisk_ipv6_repr in = {.traffic_class = 0xb9,
                                 .flow_label = 0xfedcb,
                                 .payload_len = 0,
                                 .next_header = BRISK_IP_PROTO_TCP,
                                 .hop_limit = 1};
    memcpy(in.src, global1, 16);
    memcpy(in.dst, all_nodes, 16);
    uint8_t b[40];
    assert_int_equal(brisk_ipv6_emit(b, &in), 40);
    assert_int_equal(b[0], 0x6b); /* version 6, the traffic class's high nibble */
    assert_int_equal(b[1], 0x9f);
    struct brisk_ipv6_repr out;
    assert_int_equal(brisk_ipv6_parse(b, 40, &out), 40);
    assert_int_equal(out.traffic_class, in.traffic_class);
    assert_int_equal(out.flow_label, in.flow_label);
    assert_int_equal(out.payload_len, 0);
    assert_int_equal(out.next_header, BRISK_IP_PROTO_TCP);
    assert_int_equal(out.hop_limit, 1);
    assert_memory_equal(out.src, in.src, 16);
    assert_memory_equal(out.dst, in.dst, 16);
    /* A flow label wider than 20 bits does not spill into the traffic class. */
    in.flow_label = 0xfffffff;
    brisk_ipv6_emit(b, &in);
    assert_int_equal(brisk_ipv6_parse(b, 40, &out), 40);
    assert_int_equal(out.flow_label, 0xfffff);
    assert_int_equal(out.traffic_class, 0xb9);
}

static void test_parse_lengths(void **state)
{
    (void)state;
    struct pkt p;
    pkt_start(&p, global2);
    pkt_end(&p, BRISK_IP_PROTO_UDP, 8);
    struct brisk_ipv6_repr r;
    for (size_t len = 0; len <= p.len; len++) {
        uint8_t *c = malloc(len ? len : 1);
        memcpy(c, p.b, len);
        int rc = brisk_ipv6_parse(c, len, &r);
        int want = len < p.len ? BRISK_WIRE_TRUNCATED : BRISK_IPV6_HLEN;
        free(c);
        if (rc != want)
            fail_msg("len %zu: got %d, want %d", len, rc, want);
    }
    /* Ethernet padding after the payload is allowed and ignored. */
    assert_int_equal(brisk_ipv6_parse(p.b, p.len + 12, &r), BRISK_IPV6_HLEN);
    assert_int_equal(r.payload_len, 8);
    /* The quoted parser wants only the fixed header. */
    assert_int_equal(brisk_ipv6_parse_quoted(p.b, 39, &r), BRISK_WIRE_TRUNCATED);
    assert_int_equal(brisk_ipv6_parse_quoted(p.b, 40, &r), BRISK_IPV6_HLEN);
}

static void test_parse_version_and_source(void **state)
{
    (void)state;
    struct pkt p;
    pkt_start(&p, global2);
    pkt_end(&p, BRISK_IP_PROTO_NONE, 0);
    struct brisk_ipv6_repr r;
    for (unsigned v = 0; v < 16; v++) {
        p.b[0] = (uint8_t)(v << 4);
        int want = v == 6 ? BRISK_IPV6_HLEN : BRISK_WIRE_BAD_VERSION;
        assert_int_equal(brisk_ipv6_parse(p.b, p.len, &r), want);
        assert_int_equal(brisk_ipv6_parse_quoted(p.b, p.len, &r), want);
    }
    p.b[0] = 0x60;
    p.b[8] = 0xff; /* a multicast source */
    assert_int_equal(brisk_ipv6_parse(p.b, p.len, &r), BRISK_WIRE_BAD_ADDR);
    memset(p.b + 8, 0, 16); /* the unspecified source (DAD, RS) is the stack's to judge */
    assert_int_equal(brisk_ipv6_parse(p.b, p.len, &r), BRISK_IPV6_HLEN);
}

/* ---- the walker on the kernel's packets ---- */

static void test_walk_kernel_options(void **state)
{
    (void)state;
    struct pkt p;
    memset(&p, 0, sizeof p);
    p.len = unhex(k_ext, p.b);
    p.b[23] = 2; /* source ::2: the walk does not care, the parser refuses ::1 */
    struct brisk_ipv6_ext x;
    assert_int_equal(walk(&p, &x), 56);
    assert_int_equal(x.proto, BRISK_IP_PROTO_UDP);
    assert_int_equal(x.proto_off, 56);
    assert_int_equal(x.nh_ptr, 48); /* the destination options header's Next Header */
    assert_int_equal(x.nhdrs, 2);
    assert_int_equal(x.nopts, 1); /* 0x1e: type bits 00, skipped */
    assert_int_equal(x.discard, 0);
    assert_int_equal(x.frag, 0);
    assert_int_equal(x.rh, 0);
    assert_int_equal(brisk_get16(p.b + x.proto_off), 40002);

    /* The same packet cut at every payload length: the chain is malformed until the UDP header starts. */
    for (uint16_t plen = 0; plen < 16; plen++) {
        struct pkt q = p;
        brisk_put16(q.b + 4, plen);
        q.len = 40 + plen;
        int rc = walk(&q, &x);
        if (rc != BRISK_WIRE_BAD_EXTHDR || x.bad != BRISK_IPV6_BAD_LEN || x.icmp)
            fail_msg("payload %u: got %d bad %s", plen, rc, brisk_ipv6_bad_name(x.bad));
    }
}

static void test_walk_kernel_fragments(void **state)
{
    (void)state;
    uint8_t b[128];
    struct brisk_ipv6_repr r;
    struct brisk_ipv6_ext x;

    size_t n = unhex(k_frag2, b);
    assert_int_equal(brisk_ipv6_parse_quoted(b, n, &r), 40);
    assert_int_equal(r.payload_len, 28);
    assert_int_equal(brisk_ipv6_ext_walk(b, n, &r, &x), 48);
    assert_int_equal(x.frag, 1);
    assert_int_equal(x.frag_off, 65488);
    assert_int_equal(x.frag_mf, 0);
    assert_int_equal(x.frag_atomic, 0);
    assert_int_equal(x.frag_id, 0xac59a118u);
    assert_int_equal(x.frag_nh, BRISK_IP_PROTO_UDP);
    assert_int_equal(x.frag_hdr_off, 40);
    assert_int_equal(x.frag_prev_nh, 6);
    assert_int_equal(x.proto, BRISK_IP_PROTO_UDP); /* of the reassembled packet; these bytes are data */
    assert_int_equal(x.proto_off, 48);
    assert_int_equal(x.discard, 0);

    /* The first fragment: walked through to its UDP header (its chain is complete, RFC 7112). Only
     * 66 bytes of it are here: the walk reads no further than the buffer. */
    n = unhex(k_frag1, b);
    assert_int_equal(brisk_ipv6_parse_quoted(b, n, &r), 40);
    assert_int_equal(r.payload_len, 65496);
    assert_int_equal(brisk_ipv6_ext_walk(b, n, &r, &x), 48);
    assert_int_equal(x.frag, 1);
    assert_int_equal(x.frag_off, 0);
    assert_int_equal(x.frag_mf, 1);
    assert_int_equal(x.frag_atomic, 0);
    assert_int_equal(x.frag_id, 0xac59a118u);
    assert_int_equal(x.proto, BRISK_IP_PROTO_UDP);
    assert_int_equal(x.nh_ptr, 40);
    assert_int_equal(brisk_get16(b + 48), 40004);
    assert_int_equal(brisk_get16(b + 52), 65508); /* the UDP length: 65488 + 20, the two fragments' data */
}

static void test_walk_kernel_quote(void **state)
{
    (void)state;
    uint8_t b[128];
    size_t n = unhex(k_quote, b);
    struct brisk_ipv6_repr r;
    struct brisk_ipv6_ext x;
    assert_int_equal(brisk_ipv6_parse_quoted(b, n, &r), 40);
    assert_int_equal(brisk_ipv6_ext_walk(b, n, &r, &x), 40);
    assert_int_equal(x.proto, BRISK_IP_PROTO_UDP);
    assert_int_equal(brisk_get16(b + 40), 40000);
    assert_int_equal(brisk_get16(b + 42), 9999);
    /* A quote cut inside the fixed header cannot be walked. */
    assert_int_equal(brisk_ipv6_ext_walk(b, 39, &r, &x), BRISK_WIRE_TRUNCATED);
}

/* ---- options ---- */

static void test_options_actions(void **state)
{
    (void)state;
    /* An unknown option of each action, to a unicast and to a multicast destination, in either options
     * header. Its type byte sits at offset 44, after the header's first two bytes and two Pad1. */
    static const uint8_t hdrs[] = {BRISK_IP_PROTO_HOPOPTS, BRISK_IP_PROTO_DSTOPTS};
    static const struct {
        uint8_t type;
        int discard, icmp_ucast, icmp_mcast;
    } cases[] = {
        {0x1e, 0, 0, 0}, /* 00: skip */
        {0x5e, 1, 0, 0}, /* 01: discard */
        {0x9e, 1, 1, 1}, /* 10: discard, ICMP even to multicast */
        {0xde, 1, 1, 0}, /* 11: discard, ICMP only to unicast */
        {0xc2, 1, 1, 0}, /* the jumbo payload option: brisk takes no jumbograms (RFC 2675) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int mc = 0; mc <= 1; mc++) {
            for (size_t h = 0; h < sizeof hdrs; h++) {
                uint8_t hdr = hdrs[h];
                struct pkt p;
                pkt_start(&p, mc ? all_nodes : global2);
                const uint8_t opts[8] = {0, 0, 0, 0, cases[i].type, 2, 0xab, 0xcd};
                pkt_add(&p, hdr, opts, 8);
                pkt_end(&p, BRISK_IP_PROTO_UDP, 8);
                struct brisk_ipv6_ext x;
                int rc = walk(&p, &x);
                assert_true(rc >= 40);
                int icmp = mc ? cases[i].icmp_mcast : cases[i].icmp_ucast;
                if (x.discard != cases[i].discard || x.icmp != icmp)
                    fail_msg("type %#x mc %d hdr %u: discard %u icmp %u", cases[i].type, mc, hdr, x.discard,
                             x.icmp);
                if (cases[i].discard) {
                    assert_int_equal(x.opt_type, cases[i].type);
                    assert_int_equal(x.opt_action, cases[i].type >> 6);
                    assert_int_equal(x.opt_action, brisk_ipv6_opt_action(cases[i].type));
                    assert_int_equal(x.bad, BRISK_IPV6_BAD_NONE);
                } else {
                    assert_int_equal(x.proto, BRISK_IP_PROTO_UDP);
                    assert_int_equal(x.nopts, 1);
                }
                if (icmp) {
                    assert_int_equal(x.icmp_code, BRISK_IPV6_PP_OPTION);
                    assert_int_equal(x.icmp_ptr, 44); /* the option's type byte */
                }
            }
        }
    }
    /* The first option that asks for a discard decides; a skippable one before it is skipped. */
    struct pkt p;
    pkt_start(&p, global2);
    const uint8_t opts[16] = {0, 1, 0x1e, 0, 0x5e, 0, 0x9e, 0, 1, 2, 0, 0, 0, 0, 0, 0};
    pkt_add(&p, BRISK_IP_PROTO_DSTOPTS, opts, 16);
    pkt_end(&p, BRISK_IP_PROTO_TCP, 20);
    struct brisk_ipv6_ext x;
    assert_int_equal(walk(&p, &x), 40);
    assert_int_equal(x.opt_type, 0x5e);
    assert_int_equal(x.icmp, 0);
}

static void test_options_padding(void **state)
{
    (void)state;
    struct brisk_ipv6_ext x;
    struct pkt p;
    /* Six Pad1; a PadN of 6 bytes; Pad1 + PadN of 5: each a full 8-byte header, valid. */
    static const uint8_t good[][8] = {
        {0, 0, 0, 0, 0, 0, 0, 0},
        {0, 0, 1, 4, 0, 0, 0, 0},
        {0, 0, 0, 1, 3, 0, 0, 0},
    };
    for (size_t i = 0; i < 3; i++) {
        pkt_start(&p, global2);
        pkt_add(&p, BRISK_IP_PROTO_HOPOPTS, good[i], 8);
        pkt_end(&p, BRISK_IP_PROTO_UDP, 8);
        assert_int_equal(walk(&p, &x), 48);
        assert_int_equal(x.nopts, 0);
    }
    /* Eight padding bytes in a row: a 16-byte header of Pad1s, or PadN 6 then Pad1 Pad1 (RFC 8504 §5.3). */
    static const uint8_t too_much[][16] = {
        {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0, 1, 1, 4, 0, 0, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0},
        {0, 1, 1, 6, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0},
    };
    for (size_t i = 0; i < 3; i++) {
        pkt_start(&p, global2);
        pkt_add(&p, BRISK_IP_PROTO_DSTOPTS, too_much[i], 16);
        pkt_end(&p, BRISK_IP_PROTO_UDP, 8);
        expect_bad(&p, BRISK_IPV6_BAD_PAD, 0, 0, 0);
    }
    /* An option between two runs resets the count: 6 + option + 4 is fine. */
    const uint8_t split[16] = {0, 1, 0, 0, 0, 0, 0, 0, 0x1e, 0, 1, 2, 0, 0, 0, 0};
    pkt_start(&p, global2);
    pkt_add(&p, BRISK_IP_PROTO_DSTOPTS, split, 16);
    pkt_end(&p, BRISK_IP_PROTO_UDP, 8);
    assert_int_equal(walk(&p, &x), 56);
    /* PadN whose data is not zero. */
    const uint8_t dirty[8] = {0, 0, 1, 4, 0, 0, 0x20, 0};
    pkt_start(&p, global2);
    pkt_add(&p, BRISK_IP_PROTO_HOPOPTS, dirty, 8);
    pkt_end(&p, BRISK_IP_PROTO_UDP, 8);
    expect_bad(&p, BRISK_IPV6_BAD_PAD, 0, 0, 0);
}

static void test_options_malformed(void **state)
{
    (void)state;
    struct pkt p;
    /* An option whose length runs past its header; a type byte last, with no room for its length. */
    const uint8_t past[8] = {0, 0, 0x1e, 5, 0, 0, 0, 0};
    pkt_start(&p, global2);
    pkt_add(&p, BRISK_IP_PROTO_HOPOPTS, past, 8);
    pkt_end(&p, BRISK_IP_PROTO_UDP, 8);
    expect_bad(&p, BRISK_IPV6_BAD_OPT_LEN, 0, 0, 0);
    const uint8_t last[8] = {0, 0, 1, 3, 0, 0, 0, 0x1e};
    pkt_start(&p, global2);
    pkt_add(&p, BRISK_IP_PROTO_DSTOPTS, last, 8);
    pkt_end(&p, BRISK_IP_PROTO_UDP, 8);
    expect_bad(&p, BRISK_IPV6_BAD_OPT_LEN, 0, 0, 0);

    /* Eight skippable options pass, nine are too many. Each is 0x1e of length 0 (2 bytes). */
    for (int n = 8; n <= 9; n++) {
        uint8_t h[24] = {0, 2};
        for (int i = 0; i < n; i++)
            h[2 + 2 * i] = 0x1e;
        for (int i = 2 + 2 * n; i < 24; i++)
            h[i] = 0; /* Pad1 to the end: 22 - 2n bytes, at most 6 */
        pkt_start(&p, global2);
        pkt_add(&p, BRISK_IP_PROTO_DSTOPTS, h, 24);
        pkt_end(&p, BRISK_IP_PROTO_UDP, 8);
        if (n == 8) {
            struct brisk_ipv6_ext x;
            assert_int_equal(walk(&p, &x), 64);
            assert_int_equal(x.nopts, 8);
        } else {
            expect_bad(&p, BRISK_IPV6_BAD_OPT_COUNT, 0, 0, 0);
        }
    }
}

/* ---- the chain ---- */

static void test_hbh_not_first(void **state)
{
    (void)state;
    const uint8_t pad[8] = {0};
    struct pkt p;
    for (int mc = 0; mc <= 1; mc++) {
        pkt_start(&p, mc ? all_nodes : global2);
        pkt_add(&p, BRISK_IP_PROTO_DSTOPTS, pad, 8);
        pkt_add(&p, BRISK_IP_PROTO_HOPOPTS, pad, 8);
        pkt_end(&p, BRISK_IP_PROTO_UDP, 8);
        /* An unrecognised Next Header (RFC 8200 §4): code 1 at the destination options' Next Header
         * field, byte 40 — but no ICMP to a multicast destination (RFC 4443 §2.4 (e.3)). */
        expect_bad(&p, BRISK_IPV6_BAD_HBH_POS, !mc, BRISK_IPV6_PP_NEXTHDR, 40);
    }
    /* Two hop-by-hop headers: the second is not first either. */
    pkt_start(&p, global2);
    pkt_add(&p, BRISK_IP_PROTO_HOPOPTS, pad, 8);
    pkt_add(&p, BRISK_IP_PROTO_HOPOPTS, pad, 8);
    pkt_end(&p, BRISK_IP_PROTO_UDP, 8);
    expect_bad(&p, BRISK_IPV6_BAD_HBH_POS, 1, BRISK_IPV6_PP_NEXTHDR, 40);
}

static void test_too_many_headers(void **state)
{
    (void)state;
    const uint8_t pad[8] = {0};
    for (int n = BRISK_IPV6_EXT_MAX; n <= BRISK_IPV6_EXT_MAX + 1; n++) {
        struct pkt p;
        pkt_start(&p, global2);
        for (int i = 0; i < n; i++)
            pkt_add(&p, BRISK_IP_PROTO_DSTOPTS, pad, 8);
        pkt_end(&p, BRISK_IP_PROTO_TCP, 20);
        if (n == BRISK_IPV6_EXT_MAX) {
            struct brisk_ipv6_ext x;
            assert_int_equal(walk(&p, &x), 40 + 8 * n);
            assert_int_equal(x.nhdrs, n);
            assert_int_equal(x.proto, BRISK_IP_PROTO_TCP);
        } else {
            expect_bad(&p, BRISK_IPV6_BAD_TOO_MANY, 0, 0, 0);
        }
    }
}

static void test_header_past_payload(void **state)
{
    (void)state;
    /* A destination options header claiming 16 bytes in an 8-byte payload; a routing header whose fixed
     * part is cut; a fragment header of 6 bytes. */
    static const uint8_t types[] = {BRISK_IP_PROTO_DSTOPTS, BRISK_IP_PROTO_ROUTING, BRISK_IP_PROTO_FRAGMENT};
    for (size_t i = 0; i < 3; i++) {
        for (size_t cut = 0; cut < 8; cut++) {
            struct pkt p;
            pkt_start(&p, global2);
            uint8_t h[8] = {0, 1};
            pkt_add(&p, types[i], h, 8 - cut);
            pkt_end(&p, BRISK_IP_PROTO_NONE, 0);
            if (cut == 0 && types[i] == BRISK_IP_PROTO_FRAGMENT) {
                struct brisk_ipv6_ext x;
                assert_int_equal(walk(&p, &x), 48); /* a whole atomic fragment: fine */
                continue;
            }
            expect_bad(&p, BRISK_IPV6_BAD_LEN, 0, 0, 0);
        }
    }
}

static void test_no_next_header_and_others(void **state)
{
    (void)state;
    struct pkt p;
    struct brisk_ipv6_ext x;
    pkt_start(&p, global2);
    pkt_end(&p, BRISK_IP_PROTO_NONE, 0);
    assert_int_equal(walk(&p, &x), 40);
    assert_int_equal(x.proto, BRISK_IP_PROTO_NONE);
    assert_int_equal(x.nh_ptr, 6);
    /* ESP, AH and an unknown value end the walk: the caller answers them (code 1 at nh_ptr). */
    static const uint8_t ends[] = {BRISK_IP_PROTO_ESP, BRISK_IP_PROTO_AH, 253, 200};
    const uint8_t pad[8] = {0};
    for (size_t i = 0; i < sizeof ends; i++) {
        pkt_start(&p, global2);
        pkt_add(&p, BRISK_IP_PROTO_DSTOPTS, pad, 8);
        pkt_end(&p, ends[i], 12);
        assert_int_equal(walk(&p, &x), 48);
        assert_int_equal(x.proto, ends[i]);
        assert_int_equal(x.nh_ptr, 40);
        assert_int_equal(x.discard, 0);
    }
}

/* ---- routing ---- */

static void test_routing(void **state)
{
    (void)state;
    struct pkt p;
    struct brisk_ipv6_ext x;
    /* Type 0 with one address and 0 segments left: ignored (RFC 8200 §4.4), reported for the counter. */
    uint8_t rh[24] = {0, 2, 0, 0};
    memcpy(rh + 8, global1, 16);
    pkt_start(&p, global2);
    pkt_add(&p, BRISK_IP_PROTO_ROUTING, rh, 24);
    pkt_end(&p, BRISK_IP_PROTO_TCP, 20);
    assert_int_equal(walk(&p, &x), 64);
    assert_int_equal(x.rh, 1);
    assert_int_equal(x.rh_type, 0);
    assert_int_equal(x.rh_segleft, 0);
    assert_int_equal(x.rh_off, 40);
    assert_int_equal(x.discard, 0);
    assert_int_equal(x.proto, BRISK_IP_PROTO_TCP);

    /* Type 0 with a segment left (RFC 5095 §3) and types 2, 3, 4 alike: discard, code 0 at the type. */
    static const uint8_t rtypes[] = {0, 2, 3, 4, 253};
    for (size_t i = 0; i < sizeof rtypes; i++) {
        for (int mc = 0; mc <= 1; mc++) {
            rh[2] = rtypes[i];
            rh[3] = 1;
            pkt_start(&p, mc ? all_nodes : global2);
            const uint8_t pad[8] = {0};
            pkt_add(&p, BRISK_IP_PROTO_HOPOPTS, pad, 8);
            pkt_add(&p, BRISK_IP_PROTO_ROUTING, rh, 24);
            pkt_end(&p, BRISK_IP_PROTO_TCP, 20);
            assert_int_equal(walk(&p, &x), 48);
            assert_int_equal(x.rh_type, rtypes[i]);
            assert_int_equal(x.rh_segleft, 1);
            assert_int_equal(x.discard, 1);
            assert_int_equal(x.bad, BRISK_IPV6_BAD_NONE);
            assert_int_equal(x.icmp, !mc);
            if (!mc) {
                assert_int_equal(x.icmp_code, BRISK_IPV6_PP_HEADER);
                assert_int_equal(x.icmp_ptr, 50);
            }
        }
    }
}

/* ---- fragments ---- */

static void add_frag(struct pkt *p, uint16_t off, int mf, uint32_t id)
{
    uint8_t f[8];
    assert_int_equal(brisk_ipv6_frag_emit(f, 0, off, mf, id), 8);
    pkt_add(p, BRISK_IP_PROTO_FRAGMENT, f, 8);
}

static void test_fragment_atomic(void **state)
{
    (void)state;
    /* RFC 6946: offset 0, M 0: a whole packet behind a fragment header, walked to its TCP header. */
    struct pkt p;
    pkt_start(&p, global2);
    add_frag(&p, 0, 0, 0x12345678);
    const uint8_t pad[8] = {0};
    pkt_add(&p, BRISK_IP_PROTO_DSTOPTS, pad, 8);
    pkt_end(&p, BRISK_IP_PROTO_TCP, 20);
    struct brisk_ipv6_ext x;
    assert_int_equal(walk(&p, &x), 56);
    assert_int_equal(x.frag, 1);
    assert_int_equal(x.frag_atomic, 1);
    assert_int_equal(x.frag_id, 0x12345678);
    assert_int_equal(x.frag_nh, BRISK_IP_PROTO_DSTOPTS);
    assert_int_equal(x.proto, BRISK_IP_PROTO_TCP);
    assert_int_equal(x.nhdrs, 2);
    /* The emitted header's bytes: next header, reserved, offset | M, identification. */
    assert_int_equal(p.b[40], BRISK_IP_PROTO_DSTOPTS);
    assert_int_equal(brisk_get16(p.b + 42), 0);
    assert_int_equal(brisk_get32(p.b + 44), 0x12345678);
}

static void test_fragment_later_not_walked(void **state)
{
    (void)state;
    /* A later fragment's data is the middle of a packet: what looks like headers there is not read. */
    struct pkt p;
    pkt_start(&p, global2);
    const uint8_t pad[8] = {0};
    pkt_add(&p, BRISK_IP_PROTO_HOPOPTS, pad, 8);
    add_frag(&p, 1448, 1, 7);
    pkt_end(&p, BRISK_IP_PROTO_DSTOPTS, 0);
    memset(p.b + p.len, 0xff, 16); /* "a destination options header" of 2048 bytes */
    p.len += 16;
    brisk_put16(p.b + 4, (uint16_t)(p.len - 40));
    struct brisk_ipv6_ext x;
    assert_int_equal(walk(&p, &x), 56);
    assert_int_equal(x.frag_off, 1448);
    assert_int_equal(x.frag_mf, 1);
    assert_int_equal(x.frag_hdr_off, 48);
    assert_int_equal(x.frag_prev_nh, 40);
    assert_int_equal(x.proto, BRISK_IP_PROTO_DSTOPTS);
    assert_int_equal(x.proto_off, 56);
    assert_int_equal(x.nh_ptr, 48);
}

static void test_fragment_malformed(void **state)
{
    (void)state;
    struct pkt p;
    /* M set and 12 bytes of data: not a multiple of 8 (RFC 8200 §4.5): code 0 at the payload length. */
    pkt_start(&p, global2);
    add_frag(&p, 8, 1, 1);
    pkt_end(&p, BRISK_IP_PROTO_UDP, 12);
    expect_bad(&p, BRISK_IPV6_BAD_FRAG_LEN, 1, BRISK_IPV6_PP_HEADER, 4);
    /* ... and 16 bytes is fine; the last fragment (M 0) may be any length. */
    pkt_start(&p, global2);
    add_frag(&p, 8, 1, 1);
    pkt_end(&p, BRISK_IP_PROTO_UDP, 16);
    struct brisk_ipv6_ext x;
    assert_int_equal(walk(&p, &x), 48);
    pkt_start(&p, global2);
    add_frag(&p, 8, 0, 1);
    pkt_end(&p, BRISK_IP_PROTO_UDP, 13);
    assert_int_equal(walk(&p, &x), 48);
}

static void test_fragment_size(void **state)
{
    (void)state;
    struct pkt p;
    struct brisk_ipv6_ext x;
    /* offset + data: 65520 + 15 = 65535 fits; 65520 + 16 does not (RFC 8200 §4.5): code 0 at the fragment
     * offset, and no ICMP to a multicast destination. */
    pkt_start(&p, global2);
    add_frag(&p, 65520, 0, 1);
    pkt_end(&p, BRISK_IP_PROTO_UDP, 15);
    assert_int_equal(walk(&p, &x), 48);
    for (int mc = 0; mc <= 1; mc++) {
        pkt_start(&p, mc ? all_nodes : global2);
        add_frag(&p, 65520, 0, 1);
        pkt_end(&p, BRISK_IP_PROTO_UDP, 16);
        expect_bad(&p, BRISK_IPV6_BAD_FRAG_SIZE, !mc, BRISK_IPV6_PP_HEADER, 42);
    }
}

static void test_fragment_twice_and_chain(void **state)
{
    (void)state;
    struct pkt p;
    /* Two fragment headers (the first atomic, so the walk reaches the second). */
    pkt_start(&p, global2);
    add_frag(&p, 0, 0, 1);
    add_frag(&p, 0, 0, 2);
    pkt_end(&p, BRISK_IP_PROTO_UDP, 8);
    expect_bad(&p, BRISK_IPV6_BAD_FRAG_TWICE, 0, 0, 0);

    /* A first fragment whose chain stops inside a destination options header (RFC 7112): code 3 at 0.
     * The payload is 8 + 8 bytes: the options header claims 16 of them. */
    pkt_start(&p, global2);
    add_frag(&p, 0, 1, 3);
    const uint8_t big[8] = {0, 1};
    pkt_add(&p, BRISK_IP_PROTO_DSTOPTS, big, 8);
    pkt_end(&p, BRISK_IP_PROTO_NONE, 0);
    expect_bad(&p, BRISK_IPV6_BAD_FRAG_CHAIN, 1, BRISK_IPV6_PP_CHAIN, 0);

    /* A first fragment with 8 bytes of a TCP header: the upper-layer header is part of the chain. With
     * 24 bytes (M set: a multiple of 8) it passes. */
    for (size_t tcp = 8; tcp <= 24; tcp += 16) {
        pkt_start(&p, global2);
        add_frag(&p, 0, 1, 4);
        pkt_end(&p, BRISK_IP_PROTO_TCP, tcp);
        if (tcp < 20) {
            expect_bad(&p, BRISK_IPV6_BAD_FRAG_CHAIN, 1, BRISK_IPV6_PP_CHAIN, 0);
        } else {
            struct brisk_ipv6_ext x;
            assert_int_equal(walk(&p, &x), 48);
            assert_int_equal(x.proto, BRISK_IP_PROTO_TCP);
        }
    }
    /* The same 8 bytes in a whole packet are the transport parser's business, not the walker's. */
    pkt_start(&p, global2);
    pkt_end(&p, BRISK_IP_PROTO_TCP, 8);
    struct brisk_ipv6_ext x;
    assert_int_equal(walk(&p, &x), 40);
}

/* ---- addresses ---- */

static void test_address_helpers(void **state)
{
    (void)state;
    static const uint8_t mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
    uint8_t ll[16], sn[16], m[6];
    brisk_ipv6_link_local_from_mac(ll, mac);
    /* fe80::5054:ff:fe12:3456, what Linux configures for this MAC. */
    static const uint8_t want_ll[16] = {0xfe, 0x80, 0,    0,    0,    0,    0,    0,
                                        0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x56};
    assert_memory_equal(ll, want_ll, 16);
    assert_true(brisk_ipv6_is_link_local(ll));
    assert_false(brisk_ipv6_is_link_local(global1));
    brisk_ipv6_solicited_node(sn, ll);
    static const uint8_t want_sn[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff, 0x12, 0x34, 0x56};
    assert_memory_equal(sn, want_sn, 16);
    assert_true(brisk_ipv6_is_solicited_node(sn));
    assert_true(brisk_ipv6_is_multicast(sn));
    assert_false(brisk_ipv6_is_solicited_node(all_nodes));
    brisk_ipv6_multicast_mac(m, sn);
    static const uint8_t want_m[6] = {0x33, 0x33, 0xff, 0x12, 0x34, 0x56};
    assert_memory_equal(m, want_m, 6);
    static const uint8_t zero[16];
    assert_true(brisk_ipv6_is_unspecified(zero));
    assert_false(brisk_ipv6_is_unspecified(global1));
    assert_false(brisk_ipv6_is_loopback(global1));
    assert_string_equal(brisk_ipv6_bad_name(BRISK_IPV6_BAD_FRAG_CHAIN), "frag_chain");
    assert_string_equal(brisk_ipv6_bad_name(200), "unknown");
    assert_string_equal(brisk_wire_err_name(BRISK_WIRE_BAD_EXTHDR), "bad_exthdr");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_kernel_echo),
        cmocka_unit_test(test_emit_round_trip),
        cmocka_unit_test(test_parse_lengths),
        cmocka_unit_test(test_parse_version_and_source),
        cmocka_unit_test(test_walk_kernel_options),
        cmocka_unit_test(test_walk_kernel_fragments),
        cmocka_unit_test(test_walk_kernel_quote),
        cmocka_unit_test(test_options_actions),
        cmocka_unit_test(test_options_padding),
        cmocka_unit_test(test_options_malformed),
        cmocka_unit_test(test_hbh_not_first),
        cmocka_unit_test(test_too_many_headers),
        cmocka_unit_test(test_header_past_payload),
        cmocka_unit_test(test_no_next_header_and_others),
        cmocka_unit_test(test_routing),
        cmocka_unit_test(test_fragment_atomic),
        cmocka_unit_test(test_fragment_later_not_walked),
        cmocka_unit_test(test_fragment_malformed),
        cmocka_unit_test(test_fragment_size),
        cmocka_unit_test(test_fragment_twice_and_chain),
        cmocka_unit_test(test_address_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
