/*
 * rand.h — brisk's deterministic pseudo-random numbers and keyed hash.
 *
 * Every random decision in brisk (initial sequence numbers, port choice, the simulator's loss and jitter)
 * draws from a struct brisk_rand seeded from the stack's or world's seed, so the same seed gives the same
 * run. Not for cryptography: SipHash-2-4 is the keyed hash for anything an attacker could probe (RFC 6528
 * ISNs, hash-table buckets); xoshiro256** is the fast generator for everything else.
 */
#ifndef BRISK_CORE_RAND_H
#define BRISK_CORE_RAND_H

#include <stddef.h>
#include <stdint.h>

/* xoshiro256** state. Never all zero once seeded. */
struct brisk_rand {
    uint64_t s[4];
};

/* Seeds from any 64-bit value (0 included) by expanding it with splitmix64. */
void brisk_rand_seed(struct brisk_rand *r, uint64_t seed);

/* The next 64 random bits (xoshiro256**). */
uint64_t brisk_rand_u64(struct brisk_rand *r);

/* The next 32 random bits (the high half of a 64-bit draw). */
uint32_t brisk_rand_u32(struct brisk_rand *r);

/* Uniform in [0, n) without bias (Lemire's multiply-and-reject); 0 when n == 0. Usually one draw, rarely
 * more. */
uint64_t brisk_rand_below(struct brisk_rand *r, uint64_t n);

/* Uniform in [0, 1) with 53 random bits: a multiple of 2^-53. One draw. */
double brisk_rand_double(struct brisk_rand *r);

/* 1 with probability p, else 0: p <= 0 (or NaN) never, p >= 1 always. Always consumes exactly one draw, so
 * changing a probability does not shift the rest of a random stream. */
int brisk_rand_chance(struct brisk_rand *r, double p);

/* SipHash-2-4 of `len` bytes under a 128-bit key (Aumasson & Bernstein, 2012). */
uint64_t brisk_siphash24(const uint8_t key[16], const void *data, size_t len);

/* The splitmix64 finalizer: a bijective 64-bit mixer (brisk_mix64(0) == 0), for deriving independent seeds,
 * e.g. brisk_mix64(world_seed ^ host_index * constant). */
uint64_t brisk_mix64(uint64_t x);

#endif
