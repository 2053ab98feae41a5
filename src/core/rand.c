/*
 * rand.c — xoshiro256** with splitmix64 seeding, unbiased bounded draws, and SipHash-2-4.
 *
 * brisk must be deterministic (same seed, same run), so nothing here reads the OS's entropy: every generator
 * is seeded by its owner. The pieces:
 *   - brisk_rand_seed: the 64-bit seed is expanded into xoshiro's 256-bit state by four steps of splitmix64
 *     (Steele, Lea & Flood), the expansion the xoshiro authors recommend. Four consecutive outputs of a
 *     bijective mixer over distinct inputs cannot all be zero, so every seed (0 included) gives a valid
 *     state.
 *   - brisk_rand_u64: xoshiro256** (Blackman & Vigna, 2018): 256 bits of state, period 2^256 - 1, passes
 *     BigCrush, a few cycles per draw.
 *   - brisk_rand_below: Lemire's "nearly divisionless" method (2019): the high half of the 128-bit product
 *     x * n is uniform in [0, n) once the rare products whose low half falls below 2^64 mod n are rejected;
 *     the modulo is computed only in that rare case. The product uses 32-bit halves so the code needs no
 *     compiler extension.
 *   - brisk_rand_double / brisk_rand_chance: the top 53 bits scaled by 2^-53, exact in a double.
 *   - brisk_siphash24: SipHash-2-4 (Aumasson & Bernstein, 2012), the keyed hash RFC 6528 section 3 suggests
 *     for initial sequence numbers, and the defence of hash tables against flooding. Words are read
 *     little-endian byte by byte: no alignment or endianness assumptions.
 *   - brisk_mix64: the splitmix64 output function alone, a bijection with good avalanche.
 */
#include "core/rand.h"

#include <string.h>

static inline uint64_t rotl64(uint64_t x, unsigned k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t brisk_mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

void brisk_rand_seed(struct brisk_rand *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) {
        seed += UINT64_C(0x9e3779b97f4a7c15); /* the golden-ratio increment of splitmix64 */
        r->s[i] = brisk_mix64(seed);
    }
}

uint64_t brisk_rand_u64(struct brisk_rand *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl64(s[3], 45);
    return out;
}

uint32_t brisk_rand_u32(struct brisk_rand *r)
{
    return (uint32_t)(brisk_rand_u64(r) >> 32); /* the high bits are the strongest of any generator */
}

/* Full 64 x 64 -> 128-bit product. */
static inline void mul128(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
    uint64_t a_lo = (uint32_t)a, a_hi = a >> 32, b_lo = (uint32_t)b, b_hi = b >> 32;
    uint64_t ll = a_lo * b_lo, lh = a_lo * b_hi, hl = a_hi * b_lo, hh = a_hi * b_hi;
    uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl; /* < 3 * 2^32: no overflow */
    *lo = (mid << 32) | (uint32_t)ll;
    *hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

uint64_t brisk_rand_below(struct brisk_rand *r, uint64_t n)
{
    if (n == 0)
        return 0;
    uint64_t hi, lo;
    mul128(brisk_rand_u64(r), n, &hi, &lo);
    if (lo < n) {
        uint64_t threshold = (0 - n) % n; /* 2^64 mod n: the size of the biased sliver */
        while (lo < threshold)
            mul128(brisk_rand_u64(r), n, &hi, &lo);
    }
    return hi;
}

double brisk_rand_double(struct brisk_rand *r)
{
    return (double)(brisk_rand_u64(r) >> 11) * 0x1.0p-53;
}

int brisk_rand_chance(struct brisk_rand *r, double p)
{
    double u = brisk_rand_double(r); /* drawn first so every call consumes the same */
    if (!(p > 0))
        return 0;
    if (p >= 1)
        return 1;
    return u < p;
}

static inline uint64_t load_le64(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v; /* one unaligned load on a little-endian host (memcpy: no alignment or aliasing rules) */
    memcpy(&v, p, sizeof v);
    return v;
#else
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
#endif
}

#define SIPROUND(v0, v1, v2, v3)                                                                             \
    do {                                                                                                     \
        v0 += v1;                                                                                            \
        v1 = rotl64(v1, 13);                                                                                 \
        v1 ^= v0;                                                                                            \
        v0 = rotl64(v0, 32);                                                                                 \
        v2 += v3;                                                                                            \
        v3 = rotl64(v3, 16);                                                                                 \
        v3 ^= v2;                                                                                            \
        v0 += v3;                                                                                            \
        v3 = rotl64(v3, 21);                                                                                 \
        v3 ^= v0;                                                                                            \
        v2 += v1;                                                                                            \
        v1 = rotl64(v1, 17);                                                                                 \
        v1 ^= v2;                                                                                            \
        v2 = rotl64(v2, 32);                                                                                 \
    } while (0)

uint64_t brisk_siphash24(const uint8_t key[16], const void *data, size_t len)
{
    const uint8_t *in = data;
    uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
    /* "somepseudorandomlygeneratedbytes" in ASCII: the initialisation constants of the paper. */
    uint64_t v0 = k0 ^ UINT64_C(0x736f6d6570736575);
    uint64_t v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
    uint64_t v2 = k0 ^ UINT64_C(0x6c7967656e657261);
    uint64_t v3 = k1 ^ UINT64_C(0x7465646279746573);

    size_t full = len & ~(size_t)7;
    for (size_t i = 0; i < full; i += 8) {
        uint64_t m = load_le64(in + i);
        v3 ^= m;
        SIPROUND(v0, v1, v2, v3); /* c = 2 compression rounds */
        SIPROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    /* Last block: the remaining 0..7 bytes, little-endian, with len mod 256 in the top byte. */
    uint64_t b = (uint64_t)(len & 0xff) << 56;
    for (size_t i = 0; i < (len & 7); i++)
        b |= (uint64_t)in[full + i] << (8 * i);
    v3 ^= b;
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    v0 ^= b;

    v2 ^= 0xff;
    for (int i = 0; i < 4; i++) /* d = 4 finalization rounds */
        SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}
