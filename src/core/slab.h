/*
 * slab.h — carving memory for the fixed-size object pools (packet buffers, TCP stream chunks).
 */
#ifndef BRISK_CORE_SLAB_H
#define BRISK_CORE_SLAB_H

#include <stddef.h>
#include <stdint.h>

/* Allocates one 64-byte-aligned slab of up to `want` objects of `size` bytes — fewer near the bound, so that
 * *bytes + the slab stays within `limit` — and records it in the growable array (*slabs, *nslabs, *cap) for
 * the pool to free. Returns the slab and sets *got, or NULL when nothing fits or memory is short. */
uint8_t *brisk_slab_carve(void ***slabs, size_t *nslabs, size_t *cap, uint64_t *bytes, uint64_t limit,
                          size_t size, size_t want, size_t *got);

#endif
