/*
 * test_udp.c — UDP parse / emit and checksums over IPv4 and IPv6 (src/wire/udp.c, RFC 768, RFC 8200 §8.1).
 *
 * The checksum vectors come from Linux, captured on lo with tcpdump -xx: a datagram sent with socat to
 * 127.0.0.1 and one to ::1 (lo offloads their checksums: the field holds the kernel's pseudo-header seed,
 * and the right checksum is the one tcpdump computed, 0x21cb and 0x1fcb), and one sent to ::1 with
 * extension headers, whose checksum the kernel computed itself (0x2bee, "udp sum ok" per tcpdump). The
 * seeds double as vectors for the pseudo-header sums: the kernel stores exactly the folded, uncomplemented
 * pseudo-header sum there. Then the rules: zero means "none" over IPv4 and is invalid over IPv6, a computed
 * zero is sent as 0xffff, and the length field against the buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "wire/csum.h"
#include "wire/ipv4.h"
#include "wire/udp.h"
#include "wire/wire.h"

#define LO4 0x7f000001u
static const uint8_t lo6[16] = {[15] = 1};
static const uint8_t g1[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
static const uint8_t g2[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 2};

static size_t unhex(const char *s, uint8_t *out)
{
    size_t n = 0;
    for (; s[0] && s[1]; s += 2) {
        char t[3] = {s[0], s[1], 0};
        out[n++] = (uint8_t)strtoul(t, NULL, 16);
    }
    return n;
}

/* 127.0.0.1.40001 -> 127.0.0.1.9999 "brisk-udp4", checksum field as captured (the offload seed). */
static const char k_udp4[] = "9c41270f0012fe25627269736b2d75647034";
/* ::1.40000 -> ::1.9999 "brisk-udp6", likewise. */
static const char k_udp6[] = "9c40270f00120025627269736b2d75647036";
/* ::1.40002 -> ::1.9998 "brisk-ext", checksum computed by the kernel. */
static const char k_udp6_ext[] = "9c42270e00112bee627269736b2d657874";

static int parse4_exact(const uint8_t *b, size_t len, int verify, struct brisk_udp_repr *r)
{
    uint8_t *p = malloc(len ? len : 1);
    assert_non_null(p);
    memcpy(p, b, len);
    int rc = brisk_udp_parse(p, len, LO4, LO4, verify, r);
    free(p);
    return rc;
}

static int parse6_exact(const uint8_t *b, size_t len, const uint8_t *src, const uint8_t *dst, int verify,
                        struct brisk_udp_repr *r)
{
    uint8_t *p = malloc(len ? len : 1);
    assert_non_null(p);
    memcpy(p, b, len);
    int rc = brisk_udp_parse6(p, len, src, dst, verify, r);
    free(p);
    return rc;
}

static void test_pseudo_header_seeds(void **state)
{
    (void)state;
    /* What Linux left in the checksum field for the device to finish: the pseudo-header sum, folded. */
    assert_int_equal((uint16_t)~brisk_csum_fold(brisk_csum_pseudo(LO4, LO4, BRISK_IP_PROTO_UDP, 18)), 0xfe25);
    assert_int_equal((uint16_t)~brisk_csum_fold(brisk_csum_pseudo6(lo6, lo6, BRISK_IP_PROTO_UDP, 18)),
                     0x0025);
    /* RFC 8200 §8.1's length is 32 bits: a length above 65535 adds its high half. */
    assert_int_equal(brisk_csum_pseudo6(lo6, lo6, 0, 0x10002) - brisk_csum_pseudo6(lo6, lo6, 0, 2), 1);
    /* Every address word counts: ::1 -> 2001:db8::2 differs from ::1 -> ::1 by 0x2001 + 0x0db8 + 2 - 1. */
    assert_int_equal(brisk_csum_pseudo6(lo6, g2, 17, 8) - brisk_csum_pseudo6(lo6, lo6, 17, 8),
                     0x2001 + 0x0db8 + 1);
}

static void test_kernel_ipv4(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = unhex(k_udp4, b);
    struct brisk_udp_repr r;
    /* The seed is not a checksum: wrong when verified, accepted when the device already verified. */
    assert_int_equal(parse4_exact(b, n, 1, &r), BRISK_WIRE_BAD_CSUM);
    assert_int_equal(parse4_exact(b, n, 0, &r), BRISK_UDP_HLEN);
    /* Filling it gives what tcpdump computed; that parses. */
    brisk_udp_csum_fill(b, n, LO4, LO4);
    assert_int_equal(brisk_get16(b + 6), 0x21cb);
    assert_int_equal(parse4_exact(b, n, 1, &r), BRISK_UDP_HLEN);
    assert_int_equal(r.sport, 40001);
    assert_int_equal(r.dport, 9999);
    assert_int_equal(r.len, 18);
    assert_int_equal(r.csum, 0x21cb);
    assert_int_equal(r.payload_len, 10);
    /* The emitter writes the same header. */
    uint8_t out[64];
    struct brisk_udp_repr e = {.sport = 40001, .dport = 9999, .payload_len = 10};
    assert_int_equal(brisk_udp_emit(out, &e), 8);
    memcpy(out + 8, "brisk-udp4", 10);
    brisk_udp_csum_fill(out, 18, LO4, LO4);
    assert_memory_equal(out, b, 18);
}

static void test_kernel_ipv6(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = unhex(k_udp6, b);
    struct brisk_udp_repr r;
    assert_int_equal(parse6_exact(b, n, lo6, lo6, 1, &r), BRISK_WIRE_BAD_CSUM);
    brisk_udp_csum_fill6(b, n, lo6, lo6);
    assert_int_equal(brisk_get16(b + 6), 0x1fcb);
    assert_int_equal(parse6_exact(b, n, lo6, lo6, 1, &r), BRISK_UDP_HLEN);
    assert_int_equal(r.sport, 40000);
    assert_int_equal(r.payload_len, 10);

    n = unhex(k_udp6_ext, b);
    assert_int_equal(parse6_exact(b, n, lo6, lo6, 1, &r), BRISK_UDP_HLEN);
    assert_int_equal(r.sport, 40002);
    assert_int_equal(r.dport, 9998);
    assert_int_equal(r.csum, 0x2bee);
    uint8_t out[64];
    struct brisk_udp_repr e = {.sport = 40002, .dport = 9998, .payload_len = 9};
    brisk_udp_emit(out, &e);
    memcpy(out + 8, "brisk-ext", 9);
    brisk_udp_csum_fill6(out, 17, lo6, lo6);
    assert_memory_equal(out, b, 17);
    /* The IPv6 pseudo-header is not the IPv4 one. */
    assert_int_equal(brisk_udp_parse(b, n, LO4, LO4, 1, &r), BRISK_WIRE_BAD_CSUM);
    assert_int_equal(parse6_exact(b, n, g1, lo6, 1, &r), BRISK_WIRE_BAD_CSUM);
}

static void test_zero_checksum(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = unhex(k_udp4, b);
    brisk_put16(b + 6, 0);
    struct brisk_udp_repr r;
    /* IPv4: "no checksum" (RFC 768), accepted whether or not the caller verifies. */
    assert_int_equal(parse4_exact(b, n, 1, &r), BRISK_UDP_HLEN);
    assert_int_equal(r.csum, 0);
    assert_int_equal(parse4_exact(b, n, 0, &r), BRISK_UDP_HLEN);
    /* IPv6: invalid (RFC 8200 §8.1), even when a device claims it verified. */
    n = unhex(k_udp6, b);
    brisk_put16(b + 6, 0);
    assert_int_equal(parse6_exact(b, n, lo6, lo6, 1, &r), BRISK_WIRE_BAD_CSUM);
    assert_int_equal(parse6_exact(b, n, lo6, lo6, 0, &r), BRISK_WIRE_BAD_CSUM);
}

/* A datagram from src to dst whose checksum computes to 0: its first payload word is chosen so that the
 * whole sum is 0xffff. */
static size_t zero_sum_datagram(uint8_t *b, int v6)
{
    struct brisk_udp_repr e = {.sport = 1234, .dport = 5678, .payload_len = 6};
    brisk_udp_emit(b, &e);
    memcpy(b + 8, "\0\0abcd", 6);
    uint32_t ps = v6 ? brisk_csum_pseudo6(g1, g2, BRISK_IP_PROTO_UDP, 14)
                     : brisk_csum_pseudo(0x0a000001, 0x0a000002, BRISK_IP_PROTO_UDP, 14);
    uint16_t c = brisk_csum_fold(brisk_csum_add(ps, b, 14));
    brisk_put16(b + 8, c); /* adds ~sum: the sum becomes 0xffff, its checksum 0 */
    assert_int_equal(brisk_csum_fold(brisk_csum_add(ps, b, 14)), 0);
    return 14;
}

static void test_computed_zero_sent_as_ffff(void **state)
{
    (void)state;
    uint8_t b[32];
    struct brisk_udp_repr r;
    size_t n = zero_sum_datagram(b, 0);
    brisk_udp_csum_fill(b, n, 0x0a000001, 0x0a000002);
    assert_int_equal(brisk_get16(b + 6), 0xffff);
    assert_int_equal(brisk_udp_parse(b, n, 0x0a000001, 0x0a000002, 1, &r), BRISK_UDP_HLEN);
    assert_int_equal(r.csum, 0xffff);

    n = zero_sum_datagram(b, 1);
    brisk_udp_csum_fill6(b, n, g1, g2);
    assert_int_equal(brisk_get16(b + 6), 0xffff);
    assert_int_equal(brisk_udp_parse6(b, n, g1, g2, 1, &r), BRISK_UDP_HLEN);
    /* Refilling an already filled datagram gives the same bytes (the field is zeroed first). */
    brisk_udp_csum_fill6(b, n, g1, g2);
    assert_int_equal(brisk_get16(b + 6), 0xffff);
}

static void test_lengths(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = unhex(k_udp6_ext, b); /* 17 bytes, length field 17 */
    struct brisk_udp_repr r;
    /* Shorter than the header, or than the length field: truncated. */
    for (size_t len = 0; len < n; len++) {
        int want = BRISK_WIRE_TRUNCATED;
        assert_int_equal(parse6_exact(b, len, lo6, lo6, 0, &r), want);
        assert_int_equal(parse4_exact(b, len, 0, &r), want);
    }
    /* A length field below 8. */
    for (uint16_t ulen = 0; ulen < 8; ulen++) {
        uint8_t c[64];
        memcpy(c, b, n);
        brisk_put16(c + 4, ulen);
        assert_int_equal(parse6_exact(c, n, lo6, lo6, 0, &r), BRISK_WIRE_BAD_HDRLEN);
        assert_int_equal(parse4_exact(c, n, 0, &r), BRISK_WIRE_BAD_HDRLEN);
    }
    /* An IP payload longer than the datagram: the extra bytes are not UDP's, nor in its checksum. */
    uint8_t c[64];
    memcpy(c, b, n);
    memset(c + n, 0x5a, 11);
    assert_int_equal(parse6_exact(c, n + 11, lo6, lo6, 1, &r), BRISK_UDP_HLEN);
    assert_int_equal(brisk_udp_parse6(c, n + 11, lo6, lo6, 1, &r), BRISK_UDP_HLEN);
    assert_int_equal(r.len, 17);
    assert_int_equal(r.payload_len, 9);
    assert_memory_equal(r.payload, "brisk-ext", 9);
    /* A header alone (length 8, no data). */
    struct brisk_udp_repr e = {.sport = 7, .dport = 9};
    assert_int_equal(brisk_udp_emit(c, &e), 8);
    brisk_udp_csum_fill6(c, 8, g1, g2);
    assert_int_equal(parse6_exact(c, 8, g1, g2, 1, &r), BRISK_UDP_HLEN);
    assert_int_equal(r.payload_len, 0);
    assert_int_equal(brisk_get16(c + 4), 8);
}

static void test_bit_flips(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = unhex(k_udp6_ext, b);
    for (size_t bit = 0; bit < 8 * n; bit++) {
        uint8_t c[64];
        memcpy(c, b, n);
        c[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        struct brisk_udp_repr r;
        int rc = parse6_exact(c, n, lo6, lo6, 1, &r);
        if (rc >= 0)
            fail_msg("bit %zu: accepted", bit);
    }
}

static void test_round_trip_random(void **state)
{
    (void)state;
    uint64_t s = 0x768;
    static uint8_t buf[8 + 1472];
    for (int it = 0; it < 2000; it++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        struct brisk_udp_repr e = {.sport = (uint16_t)(s >> 16),
                                   .dport = (uint16_t)(s >> 32),
                                   .payload_len = (size_t)(s >> 48) % 1473};
        brisk_udp_emit(buf, &e);
        for (size_t i = 0; i < e.payload_len; i++)
            buf[8 + i] = (uint8_t)(s >> (i % 56));
        size_t n = 8 + e.payload_len;
        struct brisk_udp_repr r;
        int v6 = it & 1;
        if (v6) {
            brisk_udp_csum_fill6(buf, n, g1, g2);
            assert_int_equal(brisk_udp_parse6(buf, n, g1, g2, 1, &r), BRISK_UDP_HLEN);
        } else {
            brisk_udp_csum_fill(buf, n, 0xc0a80001, 0xc0a80002);
            assert_int_equal(brisk_udp_parse(buf, n, 0xc0a80001, 0xc0a80002, 1, &r), BRISK_UDP_HLEN);
        }
        assert_int_not_equal(r.csum, 0);
        if (r.sport != e.sport || r.dport != e.dport || r.payload_len != e.payload_len ||
            r.payload != buf + 8)
            fail_msg("iteration %d: round trip differs", it);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pseudo_header_seeds),
        cmocka_unit_test(test_kernel_ipv4),
        cmocka_unit_test(test_kernel_ipv6),
        cmocka_unit_test(test_zero_checksum),
        cmocka_unit_test(test_computed_zero_sent_as_ffff),
        cmocka_unit_test(test_lengths),
        cmocka_unit_test(test_bit_flips),
        cmocka_unit_test(test_round_trip_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
