/*
 * test_csum.c — the Internet checksum (src/wire/csum.c): RFC 1071's worked example, known answers from
 * headers captured off a Linux host (tcpdump -vv verified every one), the fast path against a naive 16-bit
 * loop at every length 0..2000 and every alignment 0..7, RFC 1624 incremental updates against recomputation
 * (including the 0x0000 result RFC 1624 §4 is about), and the device side of checksum offload.
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
#include "wire/wire.h"

static uint64_t rng_next(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The textbook loop: big-endian 16-bit words into a 32-bit accumulator, odd byte padded, fold, complement. */
static uint16_t naive_csum(uint32_t init, const uint8_t *p, size_t len)
{
    uint64_t s = init;
    for (size_t i = 0; i + 1 < len; i += 2)
        s += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (len & 1)
        s += (uint32_t)p[len - 1] << 8;
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

static void test_rfc1071_example(void **state)
{
    (void)state;
    /* RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to 2ddf0, which folds to ddf2. */
    const uint8_t b[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    assert_int_equal(brisk_csum_fold(brisk_csum_add(0, b, sizeof b)), (uint16_t)~0xddf2);
    assert_int_equal(brisk_csum_buf(b, sizeof b), 0x220d);
    /* Byte-order independence works on any split too: the same data in two calls. */
    assert_int_equal(brisk_csum_fold(brisk_csum_add(brisk_csum_add(0, b, 2), b + 2, 6)), 0x220d);
}

/* The header checksum of hdr (len bytes) with the field at csum_at taken as zero. */
static uint16_t csum_with_zero_field(const uint8_t *hdr, size_t len, size_t csum_at)
{
    uint8_t tmp[64];
    assert_true(len <= sizeof tmp);
    memcpy(tmp, hdr, len);
    tmp[csum_at] = tmp[csum_at + 1] = 0;
    return brisk_csum_buf(tmp, len);
}

static void test_known_ipv4_headers(void **state)
{
    (void)state;
    /* Captured on lo: the Linux SYN from 127.0.0.1:45936 to 127.0.0.1:40123 (id 0x5d96, DF, TTL 64). */
    const uint8_t syn_ip[20] = {0x45, 0x00, 0x00, 0x3c, 0x5d, 0x96, 0x40, 0x00, 0x40, 0x06,
                                0xdf, 0x23, 0x7f, 0x00, 0x00, 0x01, 0x7f, 0x00, 0x00, 0x01};
    /* Captured on lo: the kernel's ICMP echo reply (id 0xcde8, no DF). */
    const uint8_t reply_ip[20] = {0x45, 0x00, 0x00, 0x38, 0xcd, 0xe8, 0x00, 0x00, 0x40, 0x01,
                                  0xae, 0xda, 0x7f, 0x00, 0x00, 0x01, 0x7f, 0x00, 0x00, 0x01};
    /* The UDP datagram 192.168.0.1 -> 192.168.0.199 of the widely reproduced IPv4 checksum example. */
    const uint8_t udp_ip[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    assert_int_equal(csum_with_zero_field(syn_ip, 20, 10), 0xdf23);
    assert_int_equal(csum_with_zero_field(reply_ip, 20, 10), 0xaeda);
    assert_int_equal(csum_with_zero_field(udp_ip, 20, 10), 0xb861);
    /* A correct header sums to zero with its checksum in place. */
    assert_int_equal(brisk_csum_buf(syn_ip, 20), 0);
    assert_int_equal(brisk_csum_buf(reply_ip, 20), 0);
    assert_int_equal(brisk_csum_buf(udp_ip, 20), 0);
}

static void test_known_icmp(void **state)
{
    (void)state;
    /* The echo reply Linux built for a 28-byte "brisk-ping-0123456789abcdef!" request (id 0x4242, seq 7). */
    uint8_t reply[36] = {0x00, 0x00, 0x43, 0x82, 0x42, 0x42, 0x00, 0x07};
    memcpy(reply + 8, "brisk-ping-0123456789abcdef!", 28);
    assert_int_equal(csum_with_zero_field(reply, sizeof reply, 2), 0x4382);
    assert_int_equal(brisk_csum_buf(reply, sizeof reply), 0);
    /* The request: same data, type 8 — the checksum differs by exactly the type byte. */
    reply[0] = 8;
    assert_int_equal(csum_with_zero_field(reply, sizeof reply, 2), 0x3b82);
}

/* The Linux SYN captured on lo (40 bytes: MSS 65495, SACK-permitted + timestamps, NOP, WS 10). Its checksum
 * field holds Linux's CHECKSUM_PARTIAL seed 0xfe30; tcpdump computed the full checksum as 0xc2c2. */
static const uint8_t linux_syn[40] = {0xb3, 0x70, 0x9c, 0xbb, 0xb7, 0xff, 0x2e, 0x87, 0x00, 0x00,
                                      0x00, 0x00, 0xa0, 0x02, 0xff, 0xd7, 0xfe, 0x30, 0x00, 0x00,
                                      0x02, 0x04, 0xff, 0xd7, 0x04, 0x02, 0x08, 0x0a, 0x21, 0xd4,
                                      0x34, 0xb5, 0x00, 0x00, 0x00, 0x00, 0x01, 0x03, 0x03, 0x0a};

static void test_known_tcp_pseudo(void **state)
{
    (void)state;
    const uint32_t lo = 0x7f000001;
    uint8_t seg[40];
    memcpy(seg, linux_syn, sizeof seg);
    /* Linux's seed is the folded, uncomplemented pseudo-header sum. */
    assert_int_equal((uint16_t)~brisk_csum_fold(brisk_csum_pseudo(lo, lo, 6, 40)), 0xfe30);
    seg[16] = seg[17] = 0;
    assert_int_equal(brisk_csum_fold(brisk_csum_add(brisk_csum_pseudo(lo, lo, 6, 40), seg, 40)), 0xc2c2);

    /* The pseudo-header equals summing its 12 bytes as RFC 9293 §3.1 lays them out. */
    const uint8_t ph[12] = {10, 1, 2, 3, 192, 168, 77, 254, 0, 6, 0x05, 0xdc};
    assert_int_equal(brisk_csum_fold(brisk_csum_pseudo(0x0a010203, 0xc0a84dfe, 6, 1500)),
                     naive_csum(0, ph, 12));
}

static void test_complete_partial(void **state)
{
    (void)state;
    /* A device finishing Linux's CHECKSUM_PARTIAL SYN produces the checksum tcpdump computed. */
    uint8_t frame[2 + 40];
    frame[0] = 0xaa;
    frame[1] = 0x55; /* bytes before csum_start must not count */
    memcpy(frame + 2, linux_syn, 40);
    brisk_csum_complete_partial(frame, sizeof frame, 2, 16);
    assert_int_equal(brisk_get16(frame + 2 + 16), 0xc2c2);
    assert_int_equal(frame[0], 0xaa);

    /* Fields out of range: nothing is written. */
    uint8_t before[sizeof frame];
    memcpy(before, frame, sizeof frame);
    brisk_csum_complete_partial(frame, sizeof frame, 2, 39);       /* field would straddle the end */
    brisk_csum_complete_partial(frame, sizeof frame, 43, 0);       /* start past the end */
    brisk_csum_complete_partial(frame, sizeof frame, 2, SIZE_MAX); /* offset overflow */
    assert_memory_equal(frame, before, sizeof frame);
    brisk_csum_complete_partial(frame, sizeof frame, 2, 38); /* the last two bytes: allowed */
    assert_memory_not_equal(frame, before, sizeof frame);
}

static void test_random_vs_naive(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(0x1071);
    uint64_t rs = seed;
    enum { MAXLEN = 2000 };
    uint8_t src[MAXLEN + 8];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)rng_next(&rs);
    for (size_t align = 0; align < 8; align++) {
        for (size_t len = 0; len <= MAXLEN; len++) {
            /* An exactly-sized allocation, so ASan catches a read one byte past the end. */
            uint8_t *block = malloc(align + len + 1);
            assert_non_null(block);
            memcpy(block + align, src + align, len);
            uint32_t init = (uint32_t)rng_next(&rs);
            if (len % 3 == 0)
                init = 0;
            uint16_t want = naive_csum(init, block + align, len);
            uint16_t got = brisk_csum_fold(brisk_csum_add(init, block + align, len));
            if (got != want)
                fail_msg("seed %llu: len %zu align %zu init %08x: got %04x want %04x",
                         (unsigned long long)seed, len, align, init, got, want);
            /* Splitting at an even offset and chaining gives the same sum. */
            size_t cut = len ? (size_t)(rng_next(&rs) % (len + 1)) & ~(size_t)1 : 0;
            uint16_t chained = brisk_csum_fold(
                brisk_csum_add(brisk_csum_add(init, block + align, cut), block + align + cut, len - cut));
            if (chained != want)
                fail_msg("seed %llu: len %zu cut %zu: chained %04x want %04x", (unsigned long long)seed, len,
                         cut, chained, want);
            free(block);
        }
    }
}

/* The header fast path agrees with the textbook loop for every header size (20 ... 60 bytes), any
 * alignment, random contents, all-zero and all-ones headers included. */
static void test_header_sum(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(0x4500);
    uint64_t rs = seed;
    uint8_t buf[64 + 8];
    for (int round = 0; round < 20000; round++) {
        size_t len = 20 + 4 * (size_t)(rng_next(&rs) % 11), align = (size_t)(rng_next(&rs) % 8);
        int kind = round % 50;
        for (size_t i = 0; i < len; i++)
            buf[align + i] = kind == 0 ? 0 : kind == 1 ? 0xff : (uint8_t)rng_next(&rs);
        uint16_t want = naive_csum(0, buf + align, len);
        uint16_t got = brisk_csum_hdr(buf + align, len);
        if (got != want)
            fail_msg("seed %llu: len %zu align %zu: got %04x want %04x", (unsigned long long)seed, len, align,
                     got, want);
    }
}

static void test_extreme_buffers(void **state)
{
    (void)state;
    /* All-ones words push every carry path; all zeros is the one input whose sum folds to 0. */
    enum { N = 1 << 20 };
    uint8_t *b = malloc(N + 1);
    assert_non_null(b);
    memset(b, 0xff, N + 1);
    for (size_t len = N - 9; len <= N + 1; len++)
        assert_int_equal(brisk_csum_fold(brisk_csum_add(0xffffffffu, b, len)),
                         naive_csum(0xffffffffu, b, len));
    memset(b, 0, N);
    assert_int_equal(brisk_csum_buf(b, N), 0xffff);
    assert_int_equal(brisk_csum_buf(b, 0), 0xffff);
    assert_int_equal(brisk_csum_add(0, b, N), 0);
    b[N - 1] = 1; /* the odd byte is the high half of the last word */
    assert_int_equal(brisk_csum_buf(b, N), (uint16_t)~1);
    assert_int_equal(brisk_csum_buf(b + N - 1, 1), (uint16_t)~0x0100);
    free(b);

    /* fold of a large unfolded sum. */
    assert_int_equal(brisk_csum_fold(0xffffffffu), 0x0000);
    assert_int_equal(brisk_csum_fold(0x0001fffeu), 0x0000);
    assert_int_equal(brisk_csum_fold(0), 0xffff);
}

static void test_rfc1624_example(void **state)
{
    (void)state;
    /* RFC 1624 §4: the other words sum to 0xcd7a; m = 0x5555 gives HC = 0xdd2f; m' = 0x3285 makes the sum
     * 0xffff, so the right checksum is 0x0000. Eqn. 2 of RFC 1141 would give 0xffff. */
    assert_int_equal(brisk_csum_update16(0xdd2f, 0x5555, 0x3285), 0x0000);
    /* And back: from a checksum of 0x0000. */
    assert_int_equal(brisk_csum_update16(0x0000, 0x3285, 0x5555), 0xdd2f);
    /* Same through the 32-bit form with an unchanged upper half. */
    assert_int_equal(brisk_csum_update32(0xdd2f, 0x12345555, 0x12343285), 0x0000);
}

/* The header's checksum recomputed from scratch (field at 10 zeroed). */
static uint16_t recompute(uint8_t *h)
{
    brisk_put16(h + 10, 0);
    return brisk_csum_buf(h, 20);
}

static void test_rfc1624_random(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(0x1624);
    uint64_t rs = seed;
    uint8_t h[20];
    for (size_t i = 0; i < sizeof h; i++)
        h[i] = (uint8_t)rng_next(&rs);
    h[0] = 0x45;
    uint16_t csum = recompute(h);
    brisk_put16(h + 10, csum);
    unsigned zero_results = 0;
    for (int it = 0; it < 200000; it++) {
        uint64_t r = rng_next(&rs);
        int wide = (r & 1) != 0;
        /* Even offsets not touching the checksum field (10..11), nor the version byte: an all-zero header is
         * the one input whose recomputed checksum is 0xffff where eqn. 3 says 0x0000, and an IPv4 header can
         * never be all zeros. */
        static const size_t off16[] = {2, 4, 6, 8, 12, 14, 16, 18};
        static const size_t off32[] = {2, 4, 6, 12, 14, 16};
        size_t off = wide ? off32[(r >> 8) % 6] : off16[(r >> 8) % 8];
        uint32_t oldv = wide ? brisk_get32(h + off) : brisk_get16(h + off);
        uint32_t newv = (uint32_t)(r >> 32);
        switch ((r >> 16) % 8) {
        case 0: /* choose the new value so the header sums to 0xffff: checksum 0x0000 */
        {
            uint8_t t[20];
            memcpy(t, h, 20);
            brisk_put16(t + 10, 0);
            if (wide)
                brisk_put32(t + off, newv & 0xffff0000u);
            else
                brisk_put16(t + off, 0);
            uint16_t others = (uint16_t)~brisk_csum_buf(t, 20); /* folded sum of the rest, 1..0xffff */
            uint16_t fill = (uint16_t)(0xffff - others);
            newv = wide ? (newv & 0xffff0000u) | fill : fill;
            break;
        }
        case 1:
            newv = 0;
            break;
        case 2:
            newv = 0xffffffffu;
            break;
        default:
            break;
        }
        if (!wide)
            newv &= 0xffff;
        uint16_t inc = wide ? brisk_csum_update32(csum, oldv, newv)
                            : brisk_csum_update16(csum, (uint16_t)oldv, (uint16_t)newv);
        if (wide)
            brisk_put32(h + off, newv);
        else
            brisk_put16(h + off, (uint16_t)newv);
        uint16_t full = recompute(h);
        if (inc != full)
            fail_msg("seed %llu iteration %d: %s edit at %zu %x -> %x: incremental %04x, recomputed %04x",
                     (unsigned long long)seed, it, wide ? "32-bit" : "16-bit", off, oldv, newv, inc, full);
        if (full == 0)
            zero_results++;
        csum = full;
        brisk_put16(h + 10, csum);
    }
    /* The corner the RFC is about must have been exercised, many times over. */
    assert_true(zero_results > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc1071_example),  cmocka_unit_test(test_known_ipv4_headers),
        cmocka_unit_test(test_known_icmp),       cmocka_unit_test(test_known_tcp_pseudo),
        cmocka_unit_test(test_complete_partial), cmocka_unit_test(test_random_vs_naive),
        cmocka_unit_test(test_extreme_buffers),  cmocka_unit_test(test_rfc1624_example),
        cmocka_unit_test(test_rfc1624_random),   cmocka_unit_test(test_header_sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
