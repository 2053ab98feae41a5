/*
 * pktbuf.h — packet buffers from a per-stack pool (see pktbuf.c).
 */
#ifndef BRISK_CORE_PKTBUF_H
#define BRISK_CORE_PKTBUF_H

#include <assert.h>
#include <string.h>

#include "brisk/netdev.h"

/* Bytes reserved in front of the payload: Ethernet (14) + IPv4 with options (60) + TCP with options (60),
 * rounded up so the payload stays cache-line aligned. */
#define BRISK_PKT_HEADROOM 192u

/* Size classes: a class holds buffers of `room` bytes after the headroom. The largest takes a whole GSO
 * super-frame (64 KB of IP datagram plus the Ethernet header). */
#define BRISK_PKT_CLASSES     3
#define BRISK_PKT_ROOM_SMALL  2048u
#define BRISK_PKT_ROOM_MEDIUM 16384u
#define BRISK_PKT_ROOM_LARGE  (65536u + 64u)

/* A buffer is laid out as descriptor, headroom, room; the descriptor is rounded to a cache line so the
 * headroom (and with it the payload) starts aligned. */
#define BRISK_PKT_DESC_SIZE ((sizeof(brisk_pkt) + 63u) & ~(size_t)63u)

struct brisk_pktpool_class {
    uint32_t room;     /* usable bytes after the headroom */
    uint32_t per_slab; /* buffers carved from one slab allocation */
    brisk_pkt *free;   /* free list (pkt->next) */
    uint64_t nfree;    /* buffers on the free list */
    uint64_t ntotal;   /* buffers ever carved */
};

struct brisk_pktpool {
    struct brisk_pktpool_class cls[BRISK_PKT_CLASSES];
    void **slabs; /* every slab, freed with the pool */
    size_t nslabs, slab_cap;
    uint64_t bytes;       /* bytes of all slabs */
    uint64_t bytes_limit; /* bound from settings (pkt_pool_bytes) */
    uint64_t in_use;      /* buffers handed out and not returned */
    uint64_t alloc_fails; /* allocations refused by the bound or by malloc */
    /* Called for every freed packet that has an owner (pkt->owner != NULL), whichever path frees it (TX
     * completion, a refused xmit, a dropped ARP queue, teardown): TCP uncharges its below-TCP bytes here. */
    void (*owned_free)(void *ctx, brisk_pkt *pkt);
    void *owned_ctx;
};

void brisk_pktpool_init(struct brisk_pktpool *p, uint64_t bytes_limit);
void brisk_pktpool_destroy(struct brisk_pktpool *p);

/* A buffer with at least `room` bytes after the headroom; data = head + headroom, len = 0. NULL when the pool
 * bound is reached or memory is short (counted in alloc_fails). */
brisk_pkt *brisk_pkt_alloc(struct brisk_pktpool *p, uint32_t room);
void brisk_pkt_free(struct brisk_pktpool *p, brisk_pkt *pkt);

/* The whole memory a buffer occupies (descriptor + headroom + room), however little of it holds data: what a
 * queue that keeps the buffer should be charged. */
static inline uint32_t brisk_pkt_truesize(const brisk_pkt *pkt)
{
    return (uint32_t)(BRISK_PKT_DESC_SIZE + pkt->cap);
}

/* Bytes available in front of data / after data + len. */
static inline uint32_t brisk_pkt_headroom(const brisk_pkt *pkt)
{
    return (uint32_t)(pkt->data - pkt->head);
}
static inline uint32_t brisk_pkt_tailroom(const brisk_pkt *pkt)
{
    return pkt->cap - brisk_pkt_headroom(pkt) - pkt->len;
}

/* Prepends n bytes (a header) and returns their start. The caller sized the headroom: asserted. A partial
 * checksum's start is relative to data, so it moves with it. */
static inline uint8_t *brisk_pkt_push(brisk_pkt *pkt, uint32_t n)
{
    assert(brisk_pkt_headroom(pkt) >= n);
    pkt->data -= n;
    pkt->len += n;
    pkt->csum_start = (uint16_t)(pkt->csum_start + n);
    return pkt->data;
}

/* Removes n bytes from the front. */
static inline uint8_t *brisk_pkt_pull(brisk_pkt *pkt, uint32_t n)
{
    assert(pkt->len >= n);
    pkt->data += n;
    pkt->len -= n;
    pkt->csum_start = (uint16_t)(pkt->csum_start - n);
    return pkt->data;
}

/* Appends n bytes and returns their start. */
static inline uint8_t *brisk_pkt_put(brisk_pkt *pkt, uint32_t n)
{
    assert(brisk_pkt_tailroom(pkt) >= n);
    uint8_t *p = pkt->data + pkt->len;
    pkt->len += n;
    return p;
}

#endif
