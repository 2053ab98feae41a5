/*
 * testutil.h — small helpers shared by brisk's tests.
 *
 * Randomized tests take their seed from brisk_test_seed(): a fixed default so CI is reproducible, overridable
 * with BRISK_TEST_SEED=<n> in the environment to explore, and printed on failure by the test itself.
 */
#ifndef BRISK_TESTUTIL_H
#define BRISK_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* BRISK_TEST_SEED from the environment if set and valid, else `dflt`. */
uint64_t brisk_test_seed(uint64_t dflt);

/* FNV-1a 64 over a buffer, chained through `h` (start with BRISK_TEST_FNV_INIT): byte-exact comparisons. */
#define BRISK_TEST_FNV_INIT 0xcbf29ce484222325ull
uint64_t brisk_test_fnv(uint64_t h, const void *p, size_t len);

/* Reads a whole file into a malloc'd buffer; returns NULL on error. */
uint8_t *brisk_test_read_file(const char *path, size_t *len);

#endif
