/*
 * slab.c — one slab for a fixed-size object pool (slab.h). Pools carve their objects from slabs and keep
 * them on free lists for their whole life, so the per-packet path never calls malloc once a pool has grown to
 * its working set; this is the one place that does call it, bounded by the pool's byte limit.
 */
#include "core/slab.h"

#include <stdlib.h>

uint8_t *brisk_slab_carve(void ***slabs, size_t *nslabs, size_t *cap, uint64_t *bytes, uint64_t limit,
                          size_t size, size_t want, size_t *got)
{
    size_t n = want;
    while (n > 0 && *bytes + (uint64_t)size * n > limit)
        n--; /* near the bound, carve fewer objects rather than none */
    if (n == 0)
        return NULL;
    if (*nslabs == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        void **ns = realloc(*slabs, ncap * sizeof(*ns));
        if (!ns)
            return NULL;
        *slabs = ns;
        *cap = ncap;
    }
    uint8_t *slab = aligned_alloc(64, size * n);
    if (!slab)
        return NULL;
    (*slabs)[(*nslabs)++] = slab;
    *bytes += (uint64_t)size * n;
    *got = n;
    return slab;
}
