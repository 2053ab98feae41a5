/*
 * test_ipv4.c — IPv4 header parse/emit (src/wire/ipv4.c): known headers, random round trips, and a table of
 * malformed headers — truncation at every length, every bad version, IHL and total length, a flipped bit in
 * every checksummed byte, invalid source addresses — each with the reason code it must produce. Also the
 * ICMP-quote parser and the address helpers. Every parse reads from an exactly-sized heap copy so ASan sees
 * any out-of-bounds read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "support/testutil.h"
#include "wire/csum.h"
#include "wire/ipv4.h"
#include "wire/wire.h"

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int repr_equal(const struct brisk_ipv4_repr *a, const struct brisk_ipv4_repr *b)
{
    return a->hdr_len == b->hdr_len && a->tos == b->tos && a->total_len == b->total_len && a->id == b->id &&
           a->df == b->df && a->mf == b->mf && a->frag_off == b->frag_off && a->ttl == b->ttl &&
           a->proto == b->proto && a->src == b->src && a->dst == b->dst;
}

/* Parses a heap copy of exactly len bytes. */
static int parse_exact(const uint8_t *b, size_t len, struct brisk_ipv4_repr *r)
{
    uint8_t *p = malloc(len ? len : 1);
    assert_non_null(p);
    if (len)
        memcpy(p, b, len);
    int rc = brisk_ipv4_parse(p, len, r);
    free(p);
    return rc;
}

static void fix_csum(uint8_t *h)
{
    size_t hlen = (size_t)(h[0] & 0x0f) * 4;
    if (hlen < 20)
        hlen = 20;
    brisk_put16(h + 10, 0);
    brisk_put16(h + 10, brisk_csum_buf(h, hlen));
}

/* The widely reproduced example header: UDP, 192.168.0.1 -> 192.168.0.199, total length 115, DF. */
static const uint8_t udp_hdr[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                    0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};

/* A 60-byte datagram: a valid 20-byte header (TCP, 10.0.0.1 -> 10.0.0.2) and 40 payload bytes. */
static void make_datagram(uint8_t *b)
{
    struct brisk_ipv4_repr r = {.tos = 0x10,
                                .total_len = 60,
                                .id = 0x1234,
                                .df = 1,
                                .ttl = 64,
                                .proto = BRISK_IP_PROTO_TCP,
                                .src = 0x0a000001,
                                .dst = 0x0a000002};
    brisk_ipv4_emit(b, &r);
    for (int i = 20; i < 60; i++)
        b[i] = (uint8_t)(i * 7);
}

static void test_known_header(void **state)
{
    (void)state;
    uint8_t dg[115] = {0};
    memcpy(dg, udp_hdr, 20);
    struct brisk_ipv4_repr r;
    assert_int_equal(parse_exact(dg, sizeof dg, &r), 20);
    assert_int_equal(r.hdr_len, 20);
    assert_int_equal(r.tos, 0);
    assert_int_equal(r.total_len, 115);
    assert_int_equal(r.id, 0);
    assert_int_equal(r.df, 1);
    assert_int_equal(r.mf, 0);
    assert_int_equal(r.frag_off, 0);
    assert_int_equal(r.ttl, 64);
    assert_int_equal(r.proto, BRISK_IP_PROTO_UDP);
    assert_int_equal(r.src, 0xc0a80001);
    assert_int_equal(r.dst, 0xc0a800c7);
    assert_false(brisk_ipv4_is_fragment(&r));

    /* Emit reproduces the header byte for byte, checksum included. */
    uint8_t out[20];
    r.hdr_len = 0; /* ignored */
    assert_int_equal(brisk_ipv4_emit(out, &r), 20);
    assert_memory_equal(out, udp_hdr, 20);
}

static void test_round_trip_random(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(791);
    uint64_t rs = seed;
    uint8_t buf[300];
    for (int it = 0; it < 20000; it++) {
        uint64_t a = rng_next(&rs), b = rng_next(&rs);
        struct brisk_ipv4_repr in = {
            .hdr_len = 20,
            .tos = (uint8_t)a,
            .total_len = (uint16_t)(20 + (a >> 8) % 280),
            .id = (uint16_t)(a >> 24),
            .df = (uint8_t)((a >> 40) & 1),
            .mf = (uint8_t)((a >> 41) & 1),
            .frag_off = (uint16_t)(((a >> 42) & 0x1fff) * 8),
            .ttl = (uint8_t)(a >> 56),
            .proto = (uint8_t)b,
            .src = (uint32_t)(b >> 8) % 0xdf000000u + 0x01000000u, /* 1.0.0.0 .. 223.255.255.255 */
            .dst = (uint32_t)(b >> 32),
        };
        if ((in.src >> 24) == 127)
            in.src ^= 0x80000000u; /* not loopback */
        memset(buf, 0xee, sizeof buf);
        assert_int_equal(brisk_ipv4_emit(buf, &in), 20);
        struct brisk_ipv4_repr out;
        memset(&out, 0x5a, sizeof out);
        int rc = parse_exact(buf, in.total_len, &out);
        if (rc != 20 || !repr_equal(&in, &out))
            fail_msg("seed %llu iteration %d: round trip differs (rc %d %s)", (unsigned long long)seed, it,
                     rc, brisk_wire_err_name(rc));
        assert_int_equal(brisk_ipv4_is_fragment(&out), in.mf || in.frag_off);
    }
}

static void test_truncated_every_length(void **state)
{
    (void)state;
    uint8_t dg[70];
    make_datagram(dg);
    memset(dg + 60, 0, 10); /* Ethernet padding after total_len */
    struct brisk_ipv4_repr r;
    for (size_t len = 0; len <= sizeof dg; len++) {
        int want = len < 60 ? BRISK_WIRE_TRUNCATED : 20;
        int rc = parse_exact(dg, len, &r);
        if (rc != want)
            fail_msg("len %zu: got %d (%s), want %d", len, rc, brisk_wire_err_name(rc), want);
        if (rc > 0)
            assert_int_equal(r.total_len, 60); /* the padding is not part of the datagram */
    }

    /* A header with options: shorter than IHL * 4 is truncated, even when total_len would fit. */
    uint8_t opt[60];
    memset(opt, 0, sizeof opt);
    make_datagram(opt);
    opt[0] = 0x4f; /* IHL 15: 40 bytes of options (zeros: EOL) */
    brisk_put16(opt + 2, 60);
    fix_csum(opt);
    for (size_t len = 0; len <= sizeof opt; len++) {
        int want = len < 60 ? BRISK_WIRE_TRUNCATED : 60;
        assert_int_equal(parse_exact(opt, len, &r), want);
    }
}

static void test_bad_version(void **state)
{
    (void)state;
    uint8_t dg[60];
    struct brisk_ipv4_repr r;
    for (unsigned v = 0; v < 16; v++) {
        make_datagram(dg);
        dg[0] = (uint8_t)(v << 4 | 5);
        fix_csum(dg); /* the checksum is right: only the version is wrong */
        int want = v == 4 ? 20 : BRISK_WIRE_BAD_VERSION;
        assert_int_equal(parse_exact(dg, sizeof dg, &r), want);
    }
}

static void test_bad_ihl(void **state)
{
    (void)state;
    uint8_t dg[60];
    struct brisk_ipv4_repr r;
    for (unsigned ihl = 0; ihl < 16; ihl++) {
        make_datagram(dg);
        memset(dg + 20, 1, 40); /* NOP options, if IHL says there are any */
        dg[0] = (uint8_t)(0x40 | ihl);
        fix_csum(dg);
        int want = ihl < 5 ? BRISK_WIRE_BAD_HDRLEN : (int)ihl * 4;
        int rc = parse_exact(dg, sizeof dg, &r);
        if (rc != want)
            fail_msg("IHL %u: got %d (%s), want %d", ihl, rc, brisk_wire_err_name(rc), want);
        if (rc > 0) {
            /* Options are skipped; the fields are still read right. */
            assert_int_equal(r.hdr_len, ihl * 4);
            assert_int_equal(r.src, 0x0a000001);
            assert_int_equal(r.dst, 0x0a000002);
            assert_int_equal(r.id, 0x1234);
        }
    }
    /* IHL 15 in a 40-byte buffer: the header runs past the buffer. */
    make_datagram(dg);
    dg[0] = 0x4f;
    brisk_put16(dg + 2, 40);
    assert_int_equal(parse_exact(dg, 40, &r), BRISK_WIRE_TRUNCATED);
}

static void test_bad_total_len(void **state)
{
    (void)state;
    uint8_t dg[60];
    struct brisk_ipv4_repr r;
    for (unsigned ihl = 5; ihl <= 15; ihl += 5) {
        for (unsigned total = 0; total <= 60; total++) {
            make_datagram(dg);
            memset(dg + 20, 1, 40);
            dg[0] = (uint8_t)(0x40 | ihl);
            brisk_put16(dg + 2, (uint16_t)total);
            fix_csum(dg);
            int want = total < ihl * 4 ? BRISK_WIRE_BAD_TOTLEN : (int)ihl * 4;
            int rc = parse_exact(dg, sizeof dg, &r);
            if (rc != want)
                fail_msg("IHL %u total %u: got %d (%s), want %d", ihl, total, rc, brisk_wire_err_name(rc),
                         want);
        }
        /* Total length past the buffer. */
        brisk_put16(dg + 2, 61);
        fix_csum(dg);
        assert_int_equal(parse_exact(dg, sizeof dg, &r), BRISK_WIRE_TRUNCATED);
        brisk_put16(dg + 2, 0xffff);
        fix_csum(dg);
        assert_int_equal(parse_exact(dg, sizeof dg, &r), BRISK_WIRE_TRUNCATED);
    }
}

static void test_bad_checksum_every_bit(void **state)
{
    (void)state;
    uint8_t dg[60];
    struct brisk_ipv4_repr r;
    make_datagram(dg);
    assert_int_equal(parse_exact(dg, sizeof dg, &r), 20);
    /* Bytes 0 and 2..3 are checked before the checksum (version, IHL, total length); any other bit flip
     * must be caught by the checksum alone. */
    for (size_t byte = 1; byte < 20; byte++) {
        if (byte == 2 || byte == 3)
            continue;
        for (int bit = 0; bit < 8; bit++) {
            make_datagram(dg);
            dg[byte] ^= (uint8_t)(1u << bit);
            int rc = parse_exact(dg, sizeof dg, &r);
            if (rc != BRISK_WIRE_BAD_CSUM)
                fail_msg("byte %zu bit %d: got %d (%s)", byte, bit, rc, brisk_wire_err_name(rc));
        }
    }
    /* The checksum covers the header only: payload corruption is not IPv4's business. */
    make_datagram(dg);
    dg[40] ^= 0xff;
    assert_int_equal(parse_exact(dg, sizeof dg, &r), 20);
    /* A checksum off by one. */
    make_datagram(dg);
    uint16_t c = brisk_get16(dg + 10);
    brisk_put16(dg + 10, (uint16_t)(c + 1));
    assert_int_equal(parse_exact(dg, sizeof dg, &r), BRISK_WIRE_BAD_CSUM);
}

static void test_bad_source(void **state)
{
    (void)state;
    static const struct {
        uint32_t src;
        int want_ok;
    } cases[] = {
        {0x00000000, 0}, /* 0.0.0.0 */
        {0x00010203, 0}, /* 0.1.2.3 */
        {0x7f000001, 0}, /* 127.0.0.1 */
        {0x7fffffff, 0}, /* 127.255.255.255 */
        {0xe0000001, 0}, /* 224.0.0.1 */
        {0xefffffff, 0}, /* 239.255.255.255 */
        {0xffffffff, 0}, /* limited broadcast */
        {0x01000000, 1}, /* 1.0.0.0 */
        {0x0a0000ff, 1}, /* 10.0.0.255: maybe a directed broadcast — the stack's call */
        {0x80000000, 1}, /* 128.0.0.0 */
        {0xdfffffff, 1}, /* 223.255.255.255 */
        {0xf0000001, 1}, /* 240.0.0.1: class E is not refused */
        {0xfffffffe, 1}, /* 255.255.255.254 */
    };
    uint8_t dg[60];
    struct brisk_ipv4_repr r;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        make_datagram(dg);
        brisk_put32(dg + 12, cases[i].src);
        fix_csum(dg);
        int want = cases[i].want_ok ? 20 : BRISK_WIRE_BAD_ADDR;
        int rc = parse_exact(dg, sizeof dg, &r);
        if (rc != want)
            fail_msg("src %08x: got %d (%s), want %d", cases[i].src, rc, brisk_wire_err_name(rc), want);
        /* A bad checksum is reported as such even when the source is also bad. */
        dg[1] ^= 1;
        assert_int_equal(parse_exact(dg, sizeof dg, &r), BRISK_WIRE_BAD_CSUM);
    }
    /* Destinations are not checked here: multicast and broadcast destinations parse. */
    make_datagram(dg);
    brisk_put32(dg + 16, 0xffffffff);
    fix_csum(dg);
    assert_int_equal(parse_exact(dg, sizeof dg, &r), 20);
    brisk_put32(dg + 16, 0xe00000fb);
    fix_csum(dg);
    assert_int_equal(parse_exact(dg, sizeof dg, &r), 20);
}

static void test_fragments(void **state)
{
    (void)state;
    uint8_t dg[60];
    struct brisk_ipv4_repr in = {.total_len = 60,
                                 .id = 7,
                                 .mf = 1,
                                 .frag_off = 0,
                                 .ttl = 1,
                                 .proto = BRISK_IP_PROTO_ICMP,
                                 .src = 0x0a000001,
                                 .dst = 0x0a000002};
    struct brisk_ipv4_repr out;
    brisk_ipv4_emit(dg, &in);
    assert_int_equal(brisk_get16(dg + 6), 0x2000);
    assert_int_equal(parse_exact(dg, sizeof dg, &out), 20);
    assert_true(brisk_ipv4_is_fragment(&out));
    in.mf = 0;
    in.frag_off = 65528; /* the largest offset: field 0x1fff */
    brisk_ipv4_emit(dg, &in);
    assert_int_equal(brisk_get16(dg + 6), 0x1fff);
    assert_int_equal(parse_exact(dg, sizeof dg, &out), 20);
    assert_int_equal(out.frag_off, 65528);
    assert_true(brisk_ipv4_is_fragment(&out));
    in.frag_off = 0;
    in.df = 1;
    brisk_ipv4_emit(dg, &in);
    assert_int_equal(brisk_get16(dg + 6), 0x4000);
    assert_int_equal(parse_exact(dg, sizeof dg, &out), 20);
    assert_false(brisk_ipv4_is_fragment(&out));
    /* The reserved flag bit is ignored on input. */
    dg[6] |= 0x80;
    fix_csum(dg);
    assert_int_equal(parse_exact(dg, sizeof dg, &out), 20);
    assert_int_equal(out.df, 1);
    assert_int_equal(out.mf, 0);
}

static void test_parse_quoted(void **state)
{
    (void)state;
    /* The Linux SYN header captured on lo, followed by the first 8 bytes of its TCP header. */
    uint8_t q[28] = {0x45, 0x00, 0x00, 0x3c, 0x5d, 0x96, 0x40, 0x00, 0x40, 0x06, 0xdf, 0x23, 0x7f, 0x00,
                     0x00, 0x01, 0x7f, 0x00, 0x00, 0x01, 0xb3, 0x70, 0x9c, 0xbb, 0xb7, 0xff, 0x2e, 0x87};
    struct brisk_ipv4_repr r;
    /* As a received datagram it would be refused twice over: cut short, and from loopback. */
    assert_int_equal(brisk_ipv4_parse(q, sizeof q, &r), BRISK_WIRE_TRUNCATED);
    for (size_t len = 0; len <= sizeof q; len++) {
        uint8_t *p = malloc(len ? len : 1);
        assert_non_null(p);
        memcpy(p, q, len);
        int want = len < 28 ? BRISK_WIRE_TRUNCATED : 20;
        assert_int_equal(brisk_ipv4_parse_quoted(p, len, &r), want);
        free(p);
    }
    assert_int_equal(brisk_ipv4_parse_quoted(q, sizeof q, &r), 20);
    assert_int_equal(r.total_len, 60);
    assert_int_equal(r.id, 0x5d96);
    assert_int_equal(r.proto, BRISK_IP_PROTO_TCP);
    assert_int_equal(r.src, 0x7f000001);
    assert_int_equal(r.dst, 0x7f000001);
    assert_int_equal(brisk_get16(q + 20), 45936); /* the quoted source port is at hdr_len */

    /* The quoted checksum is not checked (routers rewrite headers); version and IHL are. */
    q[10] ^= 0xff;
    assert_int_equal(brisk_ipv4_parse_quoted(q, sizeof q, &r), 20);
    q[0] = 0x65;
    assert_int_equal(brisk_ipv4_parse_quoted(q, sizeof q, &r), BRISK_WIRE_BAD_VERSION);
    q[0] = 0x44;
    assert_int_equal(brisk_ipv4_parse_quoted(q, sizeof q, &r), BRISK_WIRE_BAD_HDRLEN);
    q[0] = 0x46; /* 24-byte header: needs 32 bytes */
    assert_int_equal(brisk_ipv4_parse_quoted(q, sizeof q, &r), BRISK_WIRE_TRUNCATED);
}

static void test_address_helpers(void **state)
{
    (void)state;
    assert_int_equal(brisk_ipv4_mask(0), 0);
    assert_int_equal(brisk_ipv4_mask(1), 0x80000000u);
    assert_int_equal(brisk_ipv4_mask(8), 0xff000000u);
    assert_int_equal(brisk_ipv4_mask(24), 0xffffff00u);
    assert_int_equal(brisk_ipv4_mask(31), 0xfffffffeu);
    assert_int_equal(brisk_ipv4_mask(32), 0xffffffffu);
    assert_int_equal(brisk_ipv4_mask(33), 0xffffffffu);
    for (unsigned p = 0; p <= 32; p++)
        assert_int_equal(brisk_ipv4_mask(p), (uint32_t)(0xffffffff00000000ull >> p));
    assert_true(brisk_ipv4_is_multicast(0xe0000000u));
    assert_true(brisk_ipv4_is_multicast(0xefffffffu));
    assert_false(brisk_ipv4_is_multicast(0xdfffffffu));
    assert_false(brisk_ipv4_is_multicast(0xf0000000u));
    assert_true(brisk_ipv4_is_broadcast_limited(0xffffffffu));
    assert_false(brisk_ipv4_is_broadcast_limited(0x0a0000ffu));
    assert_true(brisk_ipv4_is_loopback(0x7f000001u));
    assert_false(brisk_ipv4_is_loopback(0x80000001u));
    assert_true(brisk_ipv4_is_zeronet(0));
    assert_false(brisk_ipv4_is_zeronet(0x01000000u));
}

/* Random bytes with plausible first bytes: the parser must never read out of bounds (ASan), and anything
 * it accepts must be self-consistent. */
static void test_fuzz(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(1122);
    uint64_t rs = seed;
    uint8_t b[80];
    int accepted = 0;
    for (int it = 0; it < 200000; it++) {
        size_t len = (size_t)(rng_next(&rs) % (sizeof b + 1));
        for (size_t i = 0; i < sizeof b; i += 8) {
            uint64_t w = rng_next(&rs);
            memcpy(b + i, &w, 8);
        }
        b[0] = (uint8_t)(0x40 | (b[0] & 0x0f));
        brisk_put16(b + 2, (uint16_t)(brisk_get16(b + 2) % 96));
        if (it & 1)
            fix_csum(b);
        struct brisk_ipv4_repr r;
        int rc = parse_exact(b, len, &r);
        if (rc >= 0) {
            accepted++;
            if (rc != r.hdr_len || r.hdr_len > r.total_len || r.total_len > len)
                fail_msg("seed %llu iteration %d: inconsistent accept", (unsigned long long)seed, it);
        } else if (rc < BRISK_WIRE_BAD_ADDR) {
            fail_msg("seed %llu iteration %d: unknown reason %d", (unsigned long long)seed, it, rc);
        }
    }
    assert_true(accepted > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_header),
        cmocka_unit_test(test_round_trip_random),
        cmocka_unit_test(test_truncated_every_length),
        cmocka_unit_test(test_bad_version),
        cmocka_unit_test(test_bad_ihl),
        cmocka_unit_test(test_bad_total_len),
        cmocka_unit_test(test_bad_checksum_every_bit),
        cmocka_unit_test(test_bad_source),
        cmocka_unit_test(test_fragments),
        cmocka_unit_test(test_parse_quoted),
        cmocka_unit_test(test_address_helpers),
        cmocka_unit_test(test_fuzz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
