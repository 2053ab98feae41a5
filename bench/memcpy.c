/*
 * memcpy.c — brisk-bench memcpy: the single-copy limit.
 *
 * A TCP stack that copies each payload byte once (application buffer into the send stream on one side,
 * receive stream into the application buffer on the other: brisk copies twice per transfer, once per side)
 * cannot move bytes faster than memcpy can. This measures memcpy of 1448-byte chunks — the payload of one
 * full-size segment with timestamps at MTU 1500 — through a 1 MB source and destination (L2-resident, like a
 * socket buffer being refilled), in CPU time. `bulk` reports its goodput as a share of this figure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "common/json.h"

#define CHUNK   1448u
#define WORKSET (1u << 20)

double bench_memcpy_gbps(double seconds)
{
    uint8_t *src = malloc(WORKSET), *dst = malloc(WORKSET);
    if (!src || !dst) {
        free(src);
        free(dst);
        return 0;
    }
    memset(src, 1, WORKSET);
    memset(dst, 0, WORKSET);
    uint64_t copied = 0;
    volatile uint8_t sink = 0;
    double c0 = bench_cpu_seconds(), cpu;
    do {
        for (size_t off = 0; off + CHUNK <= WORKSET; off += CHUNK)
            memcpy(dst + off, src + off, CHUNK);
        copied += (WORKSET / CHUNK) * CHUNK;
        /* Read the destination so the copies cannot be optimised away, and vary the source. */
        sink ^= dst[copied % (WORKSET - 1)];
        src[copied % (WORKSET - 1)]++;
        cpu = bench_cpu_seconds() - c0;
    } while (cpu < seconds);
    (void)sink;
    free(src);
    free(dst);
    return (double)copied * 8 / cpu / 1e9;
}

int bench_memcpy(int json, int quick)
{
    double seconds = quick ? 0.1 : 1.0;
    fprintf(stderr, "brisk-bench memcpy: %u-byte chunks through a 1 MB working set for %.1f s CPU...\n",
            CHUNK, seconds);
    double gbps = bench_memcpy_gbps(seconds);
    if (gbps <= 0) {
        fprintf(stderr, "brisk-bench memcpy: out of memory\n");
        return 1;
    }
    if (json) {
        struct json j;
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_str(&j, "bench", "memcpy");
        json_u64(&j, "chunk_bytes", CHUNK);
        json_u64(&j, "working_set_bytes", WORKSET);
        json_double(&j, "min_cpu_s", seconds); /* copied for at least this long */
        json_double(&j, "memcpy_gbps", gbps);
        json_object_end(&j);
        json_finish(&j);
    } else {
        printf(
            "memcpy: %u-byte chunks, 1 MB working set: %.1f Gbit/s per CPU-second (the single-copy limit)\n",
            CHUNK, gbps);
    }
    return 0;
}
