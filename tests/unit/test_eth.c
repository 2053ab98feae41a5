/*
 * test_eth.c — Ethernet II parse/emit (src/wire/eth.c) and the wire error names (src/wire/wire.h):
 * a known frame, random round trips, truncation at every length, VLAN tags refused, address helpers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "support/testutil.h"
#include "wire/eth.h"
#include "wire/wire.h"

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* An exactly-sized heap copy, so that ASan flags any read past len. */
static uint8_t *dup_exact(const uint8_t *b, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    assert_non_null(p);
    if (len)
        memcpy(p, b, len);
    return p;
}

/* A broadcast ARP request frame from 02:00:00:00:00:01, padded to the 60-byte minimum. */
static const uint8_t arp_frame[60] = {
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, /* Ethernet */
    0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01,                                     /* ARP */
    0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x01,                         /* sender */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x02,                         /* target */
};

static void test_parse_known(void **state)
{
    (void)state;
    struct brisk_eth_repr r;
    assert_int_equal(brisk_eth_parse(arp_frame, sizeof arp_frame, &r), BRISK_ETH_HLEN);
    const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x01};
    assert_memory_equal(r.dst, bcast, 6);
    assert_memory_equal(r.src, src, 6);
    assert_int_equal(r.type, BRISK_ETH_P_ARP);
    assert_true(brisk_eth_is_broadcast(r.dst));
    assert_true(brisk_eth_is_multicast(r.dst));
    assert_false(brisk_eth_is_broadcast(r.src));
    assert_false(brisk_eth_is_multicast(r.src));

    /* Emitting the repr reproduces the bytes. */
    uint8_t out[BRISK_ETH_HLEN];
    brisk_eth_emit(out, &r);
    assert_memory_equal(out, arp_frame, BRISK_ETH_HLEN);
}

static void test_round_trip_random(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(894);
    uint64_t rs = seed;
    for (int it = 0; it < 10000; it++) {
        struct brisk_eth_repr in, out;
        for (int k = 0; k < 6; k++) {
            in.dst[k] = (uint8_t)rng_next(&rs);
            in.src[k] = (uint8_t)rng_next(&rs);
        }
        in.type = (uint16_t)rng_next(&rs);
        if (in.type == BRISK_ETH_P_VLAN || in.type == BRISK_ETH_P_QINQ || in.type == 0x9100)
            in.type = BRISK_ETH_P_IPV4;
        uint8_t b[BRISK_ETH_HLEN];
        brisk_eth_emit(b, &in);
        assert_int_equal(brisk_get16(b + 12), in.type);
        if (brisk_eth_parse(b, sizeof b, &out) != BRISK_ETH_HLEN || memcmp(in.dst, out.dst, 6) ||
            memcmp(in.src, out.src, 6) || in.type != out.type)
            fail_msg("seed %llu iteration %d: round trip differs (type %04x)", (unsigned long long)seed, it,
                     in.type);
    }
}

static void test_truncated_every_length(void **state)
{
    (void)state;
    struct brisk_eth_repr r;
    for (size_t len = 0; len < BRISK_ETH_HLEN; len++) {
        uint8_t *b = dup_exact(arp_frame, len);
        assert_int_equal(brisk_eth_parse(b, len, &r), BRISK_WIRE_TRUNCATED);
        free(b);
    }
    for (size_t len = BRISK_ETH_HLEN; len <= sizeof arp_frame; len++) {
        uint8_t *b = dup_exact(arp_frame, len);
        assert_int_equal(brisk_eth_parse(b, len, &r), BRISK_ETH_HLEN);
        free(b);
    }
}

static void test_vlan_unsupported(void **state)
{
    (void)state;
    static const uint16_t tags[] = {0x8100, 0x88a8, 0x9100};
    uint8_t b[18];
    memcpy(b, arp_frame, 12);
    struct brisk_eth_repr r;
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
        brisk_put16(b + 12, tags[i]);
        brisk_put16(b + 14, 0x0005); /* VID 5 */
        brisk_put16(b + 16, BRISK_ETH_P_IPV4);
        assert_int_equal(brisk_eth_parse(b, sizeof b, &r), BRISK_WIRE_UNSUPPORTED);
    }
    /* Other EtherTypes (IPv6, an 802.3 length) parse: the stack decides what it handles. */
    brisk_put16(b + 12, 0x86dd);
    assert_int_equal(brisk_eth_parse(b, sizeof b, &r), BRISK_ETH_HLEN);
    assert_int_equal(r.type, 0x86dd);
    brisk_put16(b + 12, 0x002e);
    assert_int_equal(brisk_eth_parse(b, sizeof b, &r), BRISK_ETH_HLEN);
    assert_int_equal(r.type, 0x002e);
}

static void test_multicast_helpers(void **state)
{
    (void)state;
    const uint8_t ipv4mc[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb};
    const uint8_t almost[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
    assert_true(brisk_eth_is_multicast(ipv4mc));
    assert_false(brisk_eth_is_broadcast(ipv4mc));
    assert_true(brisk_eth_is_multicast(almost));
    assert_false(brisk_eth_is_broadcast(almost));
}

static void test_err_names(void **state)
{
    (void)state;
    assert_string_equal(brisk_wire_err_name(0), "ok");
    assert_string_equal(brisk_wire_err_name(60), "ok");
    assert_string_equal(brisk_wire_err_name(BRISK_WIRE_TRUNCATED), "truncated");
    assert_string_equal(brisk_wire_err_name(BRISK_WIRE_BAD_VERSION), "bad_version");
    assert_string_equal(brisk_wire_err_name(BRISK_WIRE_BAD_HDRLEN), "bad_hdrlen");
    assert_string_equal(brisk_wire_err_name(BRISK_WIRE_BAD_TOTLEN), "bad_totlen");
    assert_string_equal(brisk_wire_err_name(BRISK_WIRE_BAD_CSUM), "bad_csum");
    assert_string_equal(brisk_wire_err_name(BRISK_WIRE_BAD_OPTION), "bad_option");
    assert_string_equal(brisk_wire_err_name(BRISK_WIRE_UNSUPPORTED), "unsupported");
    assert_string_equal(brisk_wire_err_name(BRISK_WIRE_BAD_ADDR), "bad_addr");
    assert_string_equal(brisk_wire_err_name(BRISK_WIRE_BAD_EXTHDR), "bad_exthdr");
    assert_string_equal(brisk_wire_err_name(BRISK_WIRE_BAD_ND), "bad_nd");
    assert_string_equal(brisk_wire_err_name(-11), "unknown");
    /* Big-endian helpers at an odd address. */
    uint8_t b[7] = {0};
    brisk_put32(b + 1, 0x01020304);
    brisk_put16(b + 5, 0xa0b0);
    assert_int_equal(b[1], 1);
    assert_int_equal(b[4], 4);
    assert_int_equal(b[5], 0xa0);
    assert_int_equal(brisk_get32(b + 1), 0x01020304);
    assert_int_equal(brisk_get16(b + 5), 0xa0b0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_known),
        cmocka_unit_test(test_round_trip_random),
        cmocka_unit_test(test_truncated_every_length),
        cmocka_unit_test(test_vlan_unsupported),
        cmocka_unit_test(test_multicast_helpers),
        cmocka_unit_test(test_err_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
