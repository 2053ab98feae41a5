/*
 * pktbuf.c — the packet-buffer pool.
 *
 * Every packet a stack builds or queues lives in a buffer from its pool: a brisk_pkt descriptor followed by
 * BRISK_PKT_HEADROOM bytes for headers and `room` bytes of frame. Buffers come in three size classes (a
 * 1500-byte frame, a jumbo frame, a 64 KB GSO super-frame) so a small packet does not pin 64 KB.
 *
 * Allocation is a pop from the class's free list; freeing is a push. Memory is carved from slabs that hold
 * many buffers at once and is returned to the system only when the stack is destroyed, so the per-packet path
 * never calls malloc once the pool has warmed up to the working set. The pool's total is bounded by the
 * pkt_pool_bytes setting: past it, allocation fails (counted), which callers treat as a drop — a flood can
 * exhaust a stack's buffers but never the process's memory.
 *
 * brisk_pkt_alloc / brisk_pkt_free are the whole interface; push / pull / put (pktbuf.h) move the data window
 * inside a buffer.
 */
#include "core/pktbuf.h"

#include "core/slab.h"

#include <stdlib.h>

static const uint32_t class_room[BRISK_PKT_CLASSES] = {BRISK_PKT_ROOM_SMALL, BRISK_PKT_ROOM_MEDIUM,
                                                       BRISK_PKT_ROOM_LARGE};
static const uint32_t class_per_slab[BRISK_PKT_CLASSES] = {64, 8, 2};

void brisk_pktpool_init(struct brisk_pktpool *p, uint64_t bytes_limit)
{
    memset(p, 0, sizeof(*p));
    for (int i = 0; i < BRISK_PKT_CLASSES; i++) {
        p->cls[i].room = class_room[i];
        p->cls[i].per_slab = class_per_slab[i];
    }
    p->bytes_limit = bytes_limit;
}

void brisk_pktpool_destroy(struct brisk_pktpool *p)
{
    for (size_t i = 0; i < p->nslabs; i++)
        free(p->slabs[i]);
    free(p->slabs);
    memset(p, 0, sizeof(*p));
}

static size_t buf_size(const struct brisk_pktpool_class *c)
{
    return BRISK_PKT_DESC_SIZE + BRISK_PKT_HEADROOM + c->room;
}

/* Carves one more slab for class `ci`; returns 0 on success. */
static int grow(struct brisk_pktpool *p, int ci)
{
    struct brisk_pktpool_class *c = &p->cls[ci];
    size_t one = buf_size(c);
    size_t n;
    uint8_t *slab = brisk_slab_carve(&p->slabs, &p->nslabs, &p->slab_cap, &p->bytes, p->bytes_limit, one,
                                     c->per_slab, &n);
    if (!slab)
        return -1;
    for (size_t i = 0; i < n; i++) {
        brisk_pkt *pkt = (brisk_pkt *)(void *)(slab + i * one);
        memset(pkt, 0, sizeof(*pkt));
        pkt->head = (uint8_t *)pkt + BRISK_PKT_DESC_SIZE;
        pkt->cap = BRISK_PKT_HEADROOM + c->room;
        pkt->pool_class = (uint16_t)ci;
        pkt->next = c->free;
        c->free = pkt;
    }
    c->nfree += n;
    c->ntotal += n;
    return 0;
}

/* brisk_pkt_alloc sets every field by name: one added to brisk_pkt must be added there. */
_Static_assert(sizeof(brisk_pkt) == 88, "a new brisk_pkt field needs its reset in brisk_pkt_alloc");

brisk_pkt *brisk_pkt_alloc(struct brisk_pktpool *p, uint32_t room)
{
    int ci = 0;
    while (ci < BRISK_PKT_CLASSES && p->cls[ci].room < room)
        ci++;
    if (ci == BRISK_PKT_CLASSES) {
        p->alloc_fails++;
        return NULL;
    }
    struct brisk_pktpool_class *c = &p->cls[ci];
    if (!c->free && grow(p, ci) != 0) {
        p->alloc_fails++;
        return NULL;
    }
    brisk_pkt *pkt = c->free;
    c->free = pkt->next;
    c->nfree--;
    p->in_use++;

    /* Field by field: the compiler makes a memset (or an initializer) of this size a `rep stos`, whose
     * start-up cost was the largest in a request/response exchange's packet path. head, cap and pool_class
     * belong to the buffer and stay. */
    pkt->data = pkt->head + BRISK_PKT_HEADROOM;
    pkt->len = 0;
    pkt->flags = pkt->gso_size = pkt->csum_start = pkt->csum_offset = 0;
    pkt->gso_segs = 1;
    pkt->truesize = 0;
    pkt->xmit_time = pkt->wire_done = 0;
    pkt->owner = NULL;
    pkt->seq = pkt->end_seq = 0;
    pkt->next = NULL;
    return pkt;
}

void brisk_pkt_free(struct brisk_pktpool *p, brisk_pkt *pkt)
{
    if (!pkt)
        return;
    assert(pkt->pool_class < BRISK_PKT_CLASSES);
    assert(p->in_use > 0);
    if (pkt->owner && p->owned_free)
        p->owned_free(p->owned_ctx, pkt);
    struct brisk_pktpool_class *c = &p->cls[pkt->pool_class];
    pkt->next = c->free;
    c->free = pkt;
    c->nfree++;
    p->in_use--;
}
