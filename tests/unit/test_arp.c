/*
 * test_arp.c — ARP parse/emit (src/wire/arp.c): a known request, request/reply round trips, truncation at
 * every length, and every unsupported field value refused with BRISK_WIRE_UNSUPPORTED.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "support/testutil.h"
#include "wire/arp.h"
#include "wire/wire.h"

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint8_t *dup_exact(const uint8_t *b, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    assert_non_null(p);
    if (len)
        memcpy(p, b, len);
    return p;
}

/* who-has 10.0.0.2 tell 10.0.0.1 (02:00:00:00:00:01), as RFC 826 lays it out; then Ethernet padding. */
static const uint8_t request[46] = {
    0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01,             /* htype, ptype, hlen, plen, op */
    0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x01, /* sha, spa */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x02, /* tha, tpa */
};

static void test_parse_known_request(void **state)
{
    (void)state;
    struct brisk_arp_repr r;
    assert_int_equal(brisk_arp_parse(request, sizeof request, &r), BRISK_ARP_LEN);
    assert_int_equal(r.op, BRISK_ARP_OP_REQUEST);
    const uint8_t sha[6] = {0x02, 0, 0, 0, 0, 0x01}, zero[6] = {0};
    assert_memory_equal(r.sha, sha, 6);
    assert_memory_equal(r.tha, zero, 6);
    assert_int_equal(r.spa, 0x0a000001);
    assert_int_equal(r.tpa, 0x0a000002);

    uint8_t out[BRISK_ARP_LEN];
    assert_int_equal(brisk_arp_emit(out, &r), BRISK_ARP_LEN);
    assert_memory_equal(out, request, BRISK_ARP_LEN);
}

static void test_round_trip(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(826);
    uint64_t rs = seed;
    for (int it = 0; it < 10000; it++) {
        struct brisk_arp_repr in, out;
        in.op = (it & 1) ? BRISK_ARP_OP_REPLY : BRISK_ARP_OP_REQUEST;
        for (int k = 0; k < 6; k++) {
            in.sha[k] = (uint8_t)rng_next(&rs);
            in.tha[k] = (uint8_t)rng_next(&rs);
        }
        in.spa = (uint32_t)rng_next(&rs);
        in.tpa = (uint32_t)rng_next(&rs);
        uint8_t b[BRISK_ARP_LEN];
        assert_int_equal(brisk_arp_emit(b, &in), BRISK_ARP_LEN);
        int rc = brisk_arp_parse(b, sizeof b, &out);
        if (rc != BRISK_ARP_LEN || out.op != in.op || memcmp(out.sha, in.sha, 6) ||
            memcmp(out.tha, in.tha, 6) || out.spa != in.spa || out.tpa != in.tpa)
            fail_msg("seed %llu iteration %d: round trip differs (rc %d)", (unsigned long long)seed, it, rc);
    }
}

static void test_truncated_every_length(void **state)
{
    (void)state;
    struct brisk_arp_repr r;
    for (size_t len = 0; len <= sizeof request; len++) {
        uint8_t *b = dup_exact(request, len);
        int want = len < BRISK_ARP_LEN ? BRISK_WIRE_TRUNCATED : BRISK_ARP_LEN;
        assert_int_equal(brisk_arp_parse(b, len, &r), want);
        free(b);
    }
}

static void test_unsupported_fields(void **state)
{
    (void)state;
    struct {
        size_t at;    /* offset of the edited field */
        size_t width; /* 1 or 2 bytes */
        uint16_t value;
    } bad[] = {
        {0, 2, 0},      {0, 2, 6},      {0, 2, 0x0100}, /* htype: not Ethernet (6 is IEEE 802) */
        {2, 2, 0x86dd}, {2, 2, 0x0008}, {2, 2, 0},      /* ptype: not IPv4 */
        {4, 1, 0},      {4, 1, 8},      {4, 1, 5},      /* hlen */
        {5, 1, 16},     {5, 1, 0},      {5, 1, 6},      /* plen */
        {6, 2, 0},      {6, 2, 3},      {6, 2, 4},      /* op: RARP request/reply, zero */
        {6, 2, 0x0100}, {6, 2, 0x0200}, {6, 2, 0xffff}, /* op in the wrong byte order */
    };
    struct brisk_arp_repr r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t b[BRISK_ARP_LEN];
        memcpy(b, request, sizeof b);
        if (bad[i].width == 2)
            brisk_put16(b + bad[i].at, bad[i].value);
        else
            b[bad[i].at] = (uint8_t)bad[i].value;
        int rc = brisk_arp_parse(b, sizeof b, &r);
        if (rc != BRISK_WIRE_UNSUPPORTED)
            fail_msg("case %zu (offset %zu = %#x): got %d (%s)", i, bad[i].at, bad[i].value, rc,
                     brisk_wire_err_name(rc));
    }
    /* A reply parses. */
    uint8_t b[BRISK_ARP_LEN];
    memcpy(b, request, sizeof b);
    brisk_put16(b + 6, BRISK_ARP_OP_REPLY);
    assert_int_equal(brisk_arp_parse(b, sizeof b, &r), BRISK_ARP_LEN);
    assert_int_equal(r.op, BRISK_ARP_OP_REPLY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_known_request),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_truncated_every_length),
        cmocka_unit_test(test_unsupported_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
