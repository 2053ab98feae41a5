/*
 * test_icmp.c — ICMP parse/emit (src/wire/icmp.c): the echo request and the reply Linux built for it
 * (captured on lo), an echo reply built in place over the request, random round trips of every type brisk
 * uses, memmove-safe payload placement, errors quoting a datagram, truncation at every length and a flipped
 * bit anywhere — each rejected with its reason code.
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
#include "wire/icmp.h"
#include "wire/ipv4.h"
#include "wire/wire.h"

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int parse_exact(const uint8_t *b, size_t len, struct brisk_icmp_repr *r, uint8_t **keep)
{
    uint8_t *p = malloc(len ? len : 1);
    assert_non_null(p);
    if (len)
        memcpy(p, b, len);
    int rc = brisk_icmp_parse(p, len, r);
    if (keep)
        *keep = p; /* r->payload points into it */
    else
        free(p);
    return rc;
}

static const char ping_data[] = "brisk-ping-0123456789abcdef!"; /* 28 bytes */

/* The echo request sent to 127.0.0.1 (id 0x4242, seq 7) and the reply the Linux kernel answered with. */
static void captured(uint8_t *request, uint8_t *reply)
{
    const uint8_t req_hdr[8] = {0x08, 0x00, 0x3b, 0x82, 0x42, 0x42, 0x00, 0x07};
    const uint8_t rep_hdr[8] = {0x00, 0x00, 0x43, 0x82, 0x42, 0x42, 0x00, 0x07};
    memcpy(request, req_hdr, 8);
    memcpy(request + 8, ping_data, 28);
    memcpy(reply, rep_hdr, 8);
    memcpy(reply + 8, ping_data, 28);
}

static void test_known_echo(void **state)
{
    (void)state;
    uint8_t req[36], rep[36];
    captured(req, rep);
    struct brisk_icmp_repr r;
    uint8_t *copy;
    assert_int_equal(parse_exact(rep, sizeof rep, &r, &copy), BRISK_ICMP_HLEN);
    assert_int_equal(r.type, BRISK_ICMP_ECHO_REPLY);
    assert_int_equal(r.code, 0);
    assert_int_equal(r.id, 0x4242);
    assert_int_equal(r.seq, 7);
    assert_int_equal(r.next_hop_mtu, 0);
    assert_int_equal(r.payload_len, 28);
    assert_ptr_equal(r.payload, copy + 8);
    assert_memory_equal(r.payload, ping_data, 28);

    /* Emitting the parsed repr elsewhere reproduces the kernel's bytes. */
    uint8_t out[36];
    assert_int_equal(brisk_icmp_emit(out, &r), 36);
    assert_memory_equal(out, rep, 36);
    free(copy);

    assert_int_equal(parse_exact(req, sizeof req, &r, NULL), BRISK_ICMP_HLEN);
    assert_int_equal(r.type, BRISK_ICMP_ECHO);
}

static void test_reply_in_place(void **state)
{
    (void)state;
    /* The way a stack answers a ping: parse the request, flip the type, emit over the same buffer. The
     * result must be exactly what Linux sent back. */
    uint8_t req[36], rep[36];
    captured(req, rep);
    struct brisk_icmp_repr r;
    assert_int_equal(brisk_icmp_parse(req, sizeof req, &r), BRISK_ICMP_HLEN);
    assert_ptr_equal(r.payload, req + 8);
    r.type = BRISK_ICMP_ECHO_REPLY;
    assert_int_equal(brisk_icmp_emit(req, &r), 36);
    assert_memory_equal(req, rep, 36);
}

static void test_overlapping_payload(void **state)
{
    (void)state;
    uint8_t pattern[100];
    for (size_t i = 0; i < sizeof pattern; i++)
        pattern[i] = (uint8_t)(i * 3 + 1);
    /* The payload sits before b + 8 (overlapping the header) or after it (overlapping its destination). */
    static const size_t src_at[] = {0, 2, 4, 7, 9, 12, 40};
    for (size_t k = 0; k < sizeof src_at / sizeof src_at[0]; k++) {
        uint8_t buf[200];
        memset(buf, 0xcc, sizeof buf);
        memcpy(buf + src_at[k], pattern, sizeof pattern);
        struct brisk_icmp_repr r = {.type = BRISK_ICMP_ECHO,
                                    .id = 1,
                                    .seq = 2,
                                    .payload = buf + src_at[k],
                                    .payload_len = sizeof pattern};
        assert_int_equal(brisk_icmp_emit(buf, &r), 8 + sizeof pattern);
        assert_memory_equal(buf + 8, pattern, sizeof pattern);
        struct brisk_icmp_repr out;
        assert_int_equal(brisk_icmp_parse(buf, 8 + sizeof pattern, &out), BRISK_ICMP_HLEN);
        assert_int_equal(out.id, 1);
        assert_int_equal(out.seq, 2);
    }
    /* No payload at all, NULL pointer. */
    uint8_t b[8];
    struct brisk_icmp_repr r = {.type = BRISK_ICMP_ECHO, .id = 0xffff, .seq = 0};
    assert_int_equal(brisk_icmp_emit(b, &r), 8);
    struct brisk_icmp_repr out;
    assert_int_equal(brisk_icmp_parse(b, 8, &out), BRISK_ICMP_HLEN);
    assert_int_equal(out.payload_len, 0);
    assert_int_equal(out.id, 0xffff);
}

static void test_round_trip_random(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(792);
    uint64_t rs = seed;
    static const uint8_t types[] = {BRISK_ICMP_ECHO_REPLY,
                                    BRISK_ICMP_DEST_UNREACH,
                                    BRISK_ICMP_ECHO,
                                    BRISK_ICMP_TIME_EXCEEDED,
                                    5,
                                    13,
                                    14,
                                    42};
    enum { MAXP = 1480 };
    static uint8_t payload[MAXP], buf[8 + MAXP];
    for (int it = 0; it < 3000; it++) {
        uint64_t a = rng_next(&rs);
        struct brisk_icmp_repr in = {.type = types[a % 8], .code = (uint8_t)((a >> 8) % 16)};
        size_t plen = (size_t)((a >> 16) % (MAXP + 1));
        for (size_t i = 0; i < plen; i++)
            payload[i] = (uint8_t)rng_next(&rs);
        in.payload = payload;
        in.payload_len = plen;
        in.id = (uint16_t)(a >> 32);
        in.seq = (uint16_t)(a >> 48);
        in.next_hop_mtu = (uint16_t)(a >> 40);
        /* What survives the trip depends on the type: id/seq for echoes, MTU for "fragmentation needed". */
        int echo = in.type == BRISK_ICMP_ECHO || in.type == BRISK_ICMP_ECHO_REPLY;
        int mtu = in.type == BRISK_ICMP_DEST_UNREACH && in.code == BRISK_ICMP_UNREACH_FRAG_NEEDED;
        assert_int_equal(brisk_icmp_emit(buf, &in), 8 + plen);
        struct brisk_icmp_repr out;
        uint8_t *copy;
        int rc = parse_exact(buf, 8 + plen, &out, &copy);
        if (rc != BRISK_ICMP_HLEN || out.type != in.type || out.code != in.code ||
            out.id != (echo ? in.id : 0) || out.seq != (echo ? in.seq : 0) ||
            out.next_hop_mtu != (mtu ? in.next_hop_mtu : 0) || out.payload_len != plen ||
            memcmp(out.payload, payload, plen) != 0)
            fail_msg("seed %llu iteration %d: type %u code %u len %zu: round trip differs (rc %d)",
                     (unsigned long long)seed, it, in.type, in.code, plen, rc);
        free(copy);
    }
}

static void test_dest_unreach_quote(void **state)
{
    (void)state;
    /* A router's "fragmentation needed, next hop MTU 1400" quoting a TCP segment we sent. */
    uint8_t quote[28];
    struct brisk_ipv4_repr ip = {.total_len = 1500,
                                 .id = 99,
                                 .df = 1,
                                 .ttl = 64,
                                 .proto = BRISK_IP_PROTO_TCP,
                                 .src = 0x0a000001,
                                 .dst = 0xc6336401};
    brisk_ipv4_emit(quote, &ip);
    brisk_put16(quote + 20, 40000); /* sport */
    brisk_put16(quote + 22, 443);   /* dport */
    brisk_put32(quote + 24, 0xdeadbeef);

    uint8_t msg[8 + sizeof quote];
    struct brisk_icmp_repr du = {.type = BRISK_ICMP_DEST_UNREACH,
                                 .code = BRISK_ICMP_UNREACH_FRAG_NEEDED,
                                 .id = 0x1111,
                                 .seq = 0x2222,
                                 .next_hop_mtu = 1400,
                                 .payload = quote,
                                 .payload_len = sizeof quote};
    assert_int_equal(brisk_icmp_emit(msg, &du), sizeof msg);
    /* RFC 1191: unused(16) then the next-hop MTU; id/seq are not written for errors. */
    assert_int_equal(brisk_get16(msg + 4), 0);
    assert_int_equal(brisk_get16(msg + 6), 1400);

    struct brisk_icmp_repr r;
    assert_int_equal(brisk_icmp_parse(msg, sizeof msg, &r), BRISK_ICMP_HLEN);
    assert_int_equal(r.next_hop_mtu, 1400);
    assert_int_equal(r.id, 0);
    struct brisk_ipv4_repr q;
    int hl = brisk_ipv4_parse_quoted(r.payload, r.payload_len, &q);
    assert_int_equal(hl, 20);
    assert_int_equal(q.src, 0x0a000001);
    assert_int_equal(q.dst, 0xc6336401);
    assert_int_equal(q.proto, BRISK_IP_PROTO_TCP);
    assert_int_equal(brisk_get16(r.payload + hl), 40000);
    assert_int_equal(brisk_get16(r.payload + hl + 2), 443);

    /* Port unreachable: the MTU field is not read even if a sender put something there. */
    du.code = BRISK_ICMP_UNREACH_PORT;
    brisk_icmp_emit(msg, &du);
    assert_int_equal(brisk_get16(msg + 6), 0);
    msg[7] = 0x55;
    brisk_put16(msg + 2, 0);
    brisk_put16(msg + 2, brisk_csum_buf(msg, sizeof msg));
    assert_int_equal(brisk_icmp_parse(msg, sizeof msg, &r), BRISK_ICMP_HLEN);
    assert_int_equal(r.next_hop_mtu, 0);
    assert_int_equal(r.code, BRISK_ICMP_UNREACH_PORT);
}

static void test_truncated_every_length(void **state)
{
    (void)state;
    uint8_t req[36], rep[36];
    captured(req, rep);
    struct brisk_icmp_repr r;
    for (size_t len = 0; len <= sizeof rep; len++) {
        /* Shorter than the header: truncated. Longer, but cut: the checksum no longer matches. */
        int want = len < 8 ? BRISK_WIRE_TRUNCATED : len < sizeof rep ? BRISK_WIRE_BAD_CSUM : BRISK_ICMP_HLEN;
        int rc = parse_exact(rep, len, &r, NULL);
        if (rc != want)
            fail_msg("len %zu: got %d (%s), want %d", len, rc, brisk_wire_err_name(rc), want);
    }
}

static void test_bad_checksum_every_bit(void **state)
{
    (void)state;
    uint8_t req[36], rep[36];
    captured(req, rep);
    struct brisk_icmp_repr r;
    for (size_t bit = 0; bit < 8 * sizeof rep; bit++) {
        uint8_t b[36];
        memcpy(b, rep, sizeof b);
        b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int rc = parse_exact(b, sizeof b, &r, NULL);
        if (rc != BRISK_WIRE_BAD_CSUM)
            fail_msg("bit %zu: got %d (%s)", bit, rc, brisk_wire_err_name(rc));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_echo),
        cmocka_unit_test(test_reply_in_place),
        cmocka_unit_test(test_overlapping_payload),
        cmocka_unit_test(test_round_trip_random),
        cmocka_unit_test(test_dest_unreach_quote),
        cmocka_unit_test(test_truncated_every_length),
        cmocka_unit_test(test_bad_checksum_every_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
