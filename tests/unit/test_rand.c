/*
 * test_rand.c — xoshiro256**, splitmix64 seeding, bounded draws and SipHash-2-4.
 *
 * Known-answer vectors come from the algorithms' published references: xoshiro256** from the state
 * {1, 2, 3, 4} (the reference C implementation's output, as used by e.g. Rust's rand_xoshiro), splitmix64's
 * first outputs from state 0, and the 64 SipHash-2-4 vectors of the SipHash paper (key 00..0f, message
 * 00..n-1 for n = 0..63). The statistical checks use loose bounds (several sigma) and a fixed seed that
 * BRISK_TEST_SEED can override; on failure they print the seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/rand.h"
#include "support/testutil.h"

#define CHECK_SEED(c, seed)                                                                                  \
    do {                                                                                                     \
        if (!(c))                                                                                            \
            fail_msg("%s:%d: %s (seed %" PRIu64 ")", __FILE__, __LINE__, #c, (uint64_t)(seed));              \
    } while (0)

static void test_xoshiro_reference_vector(void **state)
{
    (void)state;
    struct brisk_rand r = {{1, 2, 3, 4}};
    static const uint64_t want[] = {
        11520u,
        0u,
        1509978240u,
        UINT64_C(1215971899390074240),
        UINT64_C(1216172134540287360),
        UINT64_C(607988272756665600),
        UINT64_C(16172922978634559625),
        UINT64_C(8476171486693032832),
        UINT64_C(10595114339597558777),
        UINT64_C(2904607092377533576),
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_true(brisk_rand_u64(&r) == want[i]);
}

static void test_seed_is_splitmix64(void **state)
{
    (void)state;
    struct brisk_rand r;
    brisk_rand_seed(&r, 0);
    /* splitmix64's first four outputs from state 0. */
    assert_true(r.s[0] == UINT64_C(0xe220a8397b1dcdaf));
    assert_true(r.s[1] == UINT64_C(0x6e789e6aa1b965f4));
    assert_true(r.s[2] == UINT64_C(0x06c45d188009454f));
    assert_true(r.s[3] == UINT64_C(0xf88bb8a8724c81ec));
    assert_true(brisk_mix64(UINT64_C(0x9e3779b97f4a7c15)) == UINT64_C(0xe220a8397b1dcdaf));
    assert_true(brisk_mix64(0) == 0);
}

static void test_determinism(void **state)
{
    (void)state;
    struct brisk_rand a, b, c;
    brisk_rand_seed(&a, 42);
    brisk_rand_seed(&b, 42);
    brisk_rand_seed(&c, 43);
    int differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = brisk_rand_u64(&a), y = brisk_rand_u64(&b), z = brisk_rand_u64(&c);
        assert_true(x == y);
        differ += x != z;
    }
    assert_true(differ > 990);
    /* Seed 0 and all-ones are ordinary seeds: the stream is not stuck. */
    const uint64_t seeds[] = {0, UINT64_MAX};
    for (size_t k = 0; k < 2; k++) {
        struct brisk_rand r;
        brisk_rand_seed(&r, seeds[k]);
        uint64_t first = brisk_rand_u64(&r), or_all = first;
        int same = 0;
        for (int i = 0; i < 100; i++) {
            uint64_t v = brisk_rand_u64(&r);
            same += v == first;
            or_all |= v;
        }
        assert_int_equal(same, 0);
        assert_true(or_all == UINT64_MAX);
    }
}

static void test_u32_is_high_half(void **state)
{
    (void)state;
    struct brisk_rand a, b;
    brisk_rand_seed(&a, 7);
    brisk_rand_seed(&b, 7);
    for (int i = 0; i < 100; i++)
        assert_true(brisk_rand_u32(&a) == (uint32_t)(brisk_rand_u64(&b) >> 32));
}

/* Lemire's method written with the compiler's 128-bit type, to check the portable product in rand.c. */
#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 u128;
static uint64_t below_reference(struct brisk_rand *r, uint64_t n)
{
    if (n == 0)
        return 0;
    u128 m = (u128)brisk_rand_u64(r) * n;
    if ((uint64_t)m < n) {
        uint64_t t = (0 - n) % n;
        while ((uint64_t)m < t)
            m = (u128)brisk_rand_u64(r) * n;
    }
    return (uint64_t)(m >> 64);
}
#endif

static void test_below_range_and_exactness(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(1);
    struct brisk_rand r, q;
    brisk_rand_seed(&r, seed);
    assert_true(brisk_rand_below(&r, 0) == 0);
    for (int i = 0; i < 1000; i++)
        CHECK_SEED(brisk_rand_below(&r, 1) == 0, seed);
    const uint64_t ns[] = {2,
                           3,
                           7,
                           10,
                           1000,
                           UINT64_C(1) << 32,
                           (UINT64_C(1) << 32) + 1,
                           UINT64_C(1) << 63,
                           (UINT64_C(1) << 63) + 1,
                           UINT64_MAX - 1,
                           UINT64_MAX};
    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        uint64_t n = ns[k], max = 0;
        for (int i = 0; i < 20000; i++) {
            uint64_t v = brisk_rand_below(&r, n);
            CHECK_SEED(v < n, seed);
            if (v > max)
                max = v;
        }
        CHECK_SEED(max >= n - n / 64 - 1, seed); /* the top of the range is reached */
    }
    /* A power of two needs no rejection: the result is the top bits of one draw. */
    brisk_rand_seed(&r, seed);
    brisk_rand_seed(&q, seed);
    for (int i = 0; i < 1000; i++)
        CHECK_SEED(brisk_rand_below(&r, UINT64_C(1) << 20) == brisk_rand_u64(&q) >> 44, seed);
#ifdef __SIZEOF_INT128__
    /* Random bounds against the 128-bit reference, draw for draw (rejections included). */
    struct brisk_rand nr;
    brisk_rand_seed(&nr, seed ^ 0xabc);
    brisk_rand_seed(&r, seed);
    brisk_rand_seed(&q, seed);
    for (int i = 0; i < 100000; i++) {
        uint64_t n = brisk_rand_u64(&nr) >> brisk_rand_below(&nr, 64);
        CHECK_SEED(brisk_rand_below(&r, n) == below_reference(&q, n), seed);
    }
    CHECK_SEED(brisk_rand_u64(&r) == brisk_rand_u64(&q), seed); /* same number of draws consumed */
#endif
}

/* Chi-square over 7 and 10 buckets: 6 / 9 degrees of freedom, bounds far in the tail (p < 1e-6). */
static void test_below_uniformity(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(2);
    struct brisk_rand r;
    brisk_rand_seed(&r, seed);
    const struct {
        uint64_t n;
        double bound;
    } cases[] = {{7, 40.0}, {10, 46.0}};
    for (size_t k = 0; k < 2; k++) {
        uint64_t counts[10] = {0};
        const int draws = 100000;
        for (int i = 0; i < draws; i++)
            counts[brisk_rand_below(&r, cases[k].n)]++;
        double expect = (double)draws / (double)cases[k].n, chi2 = 0;
        for (uint64_t b = 0; b < cases[k].n; b++)
            chi2 += ((double)counts[b] - expect) * ((double)counts[b] - expect) / expect;
        CHECK_SEED(chi2 < cases[k].bound, seed);
    }
    /* Heavy rejection: n just above 2^63 still splits evenly around n / 2. */
    uint64_t n = (UINT64_C(1) << 63) + 12345, low = 0;
    for (int i = 0; i < 20000; i++)
        low += brisk_rand_below(&r, n) < n / 2;
    CHECK_SEED(low > 9400 && low < 10600, seed); /* 20000 draws: sigma ~ 71 */
}

static void test_double(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(3);
    struct brisk_rand r, q;
    brisk_rand_seed(&r, seed);
    brisk_rand_seed(&q, seed);
    double sum = 0, lo = 1, hi = 0;
    const int draws = 100000;
    for (int i = 0; i < draws; i++) {
        double u = brisk_rand_double(&r);
        CHECK_SEED(u >= 0.0 && u < 1.0, seed);
        CHECK_SEED(u == (double)(brisk_rand_u64(&q) >> 11) / 9007199254740992.0, seed);
        sum += u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
    }
    CHECK_SEED(fabs(sum / draws - 0.5) < 0.005, seed); /* sigma of the mean ~ 0.0009 */
    CHECK_SEED(lo < 0.001 && hi > 0.999, seed);
    /* A zero draw (from the otherwise invalid all-zero state) maps to exactly 0. */
    struct brisk_rand z = {{0, 0, 0, 0}};
    assert_true(brisk_rand_double(&z) == 0.0);
}

static void test_chance(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(4);
    struct brisk_rand r, q;
    brisk_rand_seed(&r, seed);
    for (int i = 0; i < 10000; i++) {
        CHECK_SEED(brisk_rand_chance(&r, 0.0) == 0, seed);
        CHECK_SEED(brisk_rand_chance(&r, -1.0) == 0, seed);
        CHECK_SEED(brisk_rand_chance(&r, NAN) == 0, seed);
        CHECK_SEED(brisk_rand_chance(&r, 1.0) == 1, seed);
        CHECK_SEED(brisk_rand_chance(&r, 5.0) == 1, seed);
    }
    const double ps[] = {0.3, 0.01, 0.999};
    for (size_t k = 0; k < 3; k++) {
        const int draws = 200000;
        int hits = 0;
        for (int i = 0; i < draws; i++)
            hits += brisk_rand_chance(&r, ps[k]);
        double f = (double)hits / draws, sigma = sqrt(ps[k] * (1 - ps[k]) / draws);
        CHECK_SEED(fabs(f - ps[k]) < 6 * sigma, seed);
    }
    /* Exactly one draw per call, whatever p. */
    brisk_rand_seed(&r, seed);
    brisk_rand_seed(&q, seed);
    brisk_rand_chance(&r, 0.0);
    brisk_rand_chance(&r, 1.0);
    brisk_rand_chance(&r, 0.5);
    for (int i = 0; i < 3; i++)
        brisk_rand_u64(&q);
    assert_true(brisk_rand_u64(&r) == brisk_rand_u64(&q));
}

static void test_siphash_vectors(void **state)
{
    (void)state;
    /* SipHash-2-4 with key 00 01 .. 0f over 00 01 .. (n-1), n = 0..63: the paper's Appendix A vectors. */
    static const uint64_t want[64] = {
        0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d, 0xcf2794e0277187b7,
        0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137, 0x93f5f5799a932462, 0x9e0082df0ba9e4b0,
        0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7, 0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee,
        0xa129ca6149be45e5, 0x3f2acc7f57c29bdb, 0x699ae9f52cbe4794, 0x4bc1b3f0968dd39c, 0xbb6dc91da77961bd,
        0xbed65cf21aa2ee98, 0xd0f2cbb02e3b67c7, 0x93536795e3a33e88, 0xa80c038ccd5ccec8, 0xb8ad50c6f649af94,
        0xbce192de8a85b8ea, 0x17d835b85bbb15f3, 0x2f2e6163076bcfad, 0xde4daaaca71dc9a5, 0xa6a2506687956571,
        0xad87a3535c49ef28, 0x32d892fad841c342, 0x7127512f72f27cce, 0xa7f32346f95978e3, 0x12e0b01abb051238,
        0x15e034d40fa197ae, 0x314dffbe0815a3b4, 0x027990f029623981, 0xcadcd4e59ef40c4d, 0x9abfd8766a33735c,
        0x0e3ea96b5304a7d0, 0xad0c42d6fc585992, 0x187306c89bc215a9, 0xd4a60abcf3792b95, 0xf935451de4f21df2,
        0xa9538f0419755787, 0xdb9acddff56ca510, 0xd06c98cd5c0975eb, 0xe612a3cb9ecba951, 0xc766e62cfcadaf96,
        0xee64435a9752fe72, 0xa192d576b245165a, 0x0a8787bf8ecb74b2, 0x81b3e73d20b49b6f, 0x7fa8220ba3b2ecea,
        0x245731c13ca42499, 0xb78dbfaf3a8d83bd, 0xea1ad565322a1a0b, 0x60e61c23a3795013, 0x6606d7e446282b93,
        0x6ca4ecb15c5f91e1, 0x9f626da15c9625f3, 0xe51b38608ef25f57, 0x958a324ceb064572,
    };
    uint8_t key[16], msg[64], shifted[65];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 64; i++)
        msg[i] = (uint8_t)i;
    for (size_t n = 0; n < 64; n++) {
        assert_true(brisk_siphash24(key, msg, n) == want[n]);
        /* Unaligned input gives the same answer. */
        memcpy(shifted + 1, msg, n);
        assert_true(brisk_siphash24(key, shifted + 1, n) == want[n]);
    }
    /* The key matters. */
    key[15] ^= 1;
    assert_true(brisk_siphash24(key, msg, 8) != want[8]);
}

/* Flipping one input bit of brisk_mix64 flips about half the output bits. */
static void test_mix64_avalanche(void **state)
{
    (void)state;
    uint64_t total = 0, count = 0, x = 0x0123456789abcdefull;
    for (int i = 0; i < 2000; i++) {
        x = brisk_mix64(x + 1);
        for (unsigned b = 0; b < 64; b++) {
            uint64_t d = brisk_mix64(x) ^ brisk_mix64(x ^ (UINT64_C(1) << b));
            total += (uint64_t)__builtin_popcountll(d);
            count++;
        }
    }
    double mean = (double)total / (double)count;
    assert_true(mean > 31.5 && mean < 32.5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xoshiro_reference_vector),
        cmocka_unit_test(test_seed_is_splitmix64),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_u32_is_high_half),
        cmocka_unit_test(test_below_range_and_exactness),
        cmocka_unit_test(test_below_uniformity),
        cmocka_unit_test(test_double),
        cmocka_unit_test(test_chance),
        cmocka_unit_test(test_siphash_vectors),
        cmocka_unit_test(test_mix64_avalanche),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
