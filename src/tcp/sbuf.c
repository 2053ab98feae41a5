/*
 * sbuf.c — TCP's send and receive queues as chunked byte streams (BSD style).
 *
 * The application appends bytes to the send stream and TCP cuts segments out of it at transmit time, so the
 * segment size is decided as late as possible: a TSO super-segment, a corked burst and a one-byte Nagle
 * probe are all just "how many bytes to read at offset snd_nxt - snd_una". Retransmissions read again at an
 * offset; acknowledged bytes are consumed from the front. The receive stream is the same structure with the
 * roles swapped (TCP appends in-order data, the application consumes it).
 *
 * Memory: a stream is a singly linked list of fixed-size chunks (BRISK_CHUNK_SIZE, sbuf.h explains 16 KB)
 * drawn from a stack-wide brisk_chunkpool. The pool carves chunks from slabs and keeps returned chunks on a
 * free list, so once it has warmed up to the working set, append and consume never call malloc; its total is
 * bounded (bytes_limit), and past the bound an append stores what fits and reports the short count. An empty
 * stream holds no chunk, so idle connections pin no memory.
 *
 * Reads: every chunk but the tail is full, so the chunk holding a stream position is found by stepping
 * whole chunks. To keep the common read patterns O(1) — transmit walks forward from snd_nxt, retransmission
 * walks forward from snd_una or a SACK hole, and the two interleave — the stream remembers its last two read
 * positions (cursors, least recently used replaced) and starts each lookup from the nearest of head, tail
 * and the cursors that lies at or before the target. Cursors hold stream positions that never move, so
 * appends leave them valid and consume drops the ones whose chunk it frees.
 *
 *   brisk_chunkpool_init / _destroy    the pool
 *   brisk_sbuf_append                  copy in at the tail, chunk by chunk
 *   brisk_sbuf_consume                 drop from the front, freeing emptied chunks
 *   brisk_sbuf_span / _copyout         read at an offset (seek() does the lookup)
 *   brisk_sbuf_clear / _mem            teardown and memory accounting
 */
#include "tcp/sbuf.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "core/slab.h"

_Static_assert(BRISK_CHUNK_SIZE % 64 == 0, "chunks are carved from 64-byte aligned slabs");

void brisk_chunkpool_init(struct brisk_chunkpool *p, uint64_t bytes_limit)
{
    memset(p, 0, sizeof(*p));
    p->bytes_limit = bytes_limit;
}

void brisk_chunkpool_destroy(struct brisk_chunkpool *p)
{
    for (size_t i = 0; i < p->nslabs; i++)
        free(p->slabs[i]);
    free(p->slabs);
    memset(p, 0, sizeof(*p));
}

/* Carves one more slab; returns 0 on success. Near the bound it carves fewer chunks rather than none. */
static int pool_grow(struct brisk_chunkpool *p)
{
    size_t n;
    uint8_t *slab = brisk_slab_carve(&p->slabs, &p->nslabs, &p->slab_cap, &p->bytes, p->bytes_limit,
                                     BRISK_CHUNK_SIZE, BRISK_CHUNKS_PER_SLAB, &n);
    if (!slab)
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct brisk_chunk *c = (struct brisk_chunk *)(void *)(slab + i * BRISK_CHUNK_SIZE);
        c->next = p->free;
        p->free = c;
    }
    p->nfree += n;
    p->ntotal += n;
    return 0;
}

static struct brisk_chunk *chunk_alloc(struct brisk_chunkpool *p)
{
    if (!p->free && pool_grow(p) != 0) {
        p->alloc_fails++;
        return NULL;
    }
    struct brisk_chunk *c = p->free;
    p->free = c->next;
    p->nfree--;
    p->in_use++;
    c->next = NULL;
    return c;
}

static void chunk_free(struct brisk_chunkpool *p, struct brisk_chunk *c)
{
    assert(p->in_use > 0);
    c->next = p->free;
    p->free = c;
    p->nfree++;
    p->in_use--;
}

void brisk_sbuf_init(struct brisk_sbuf *b)
{
    memset(b, 0, sizeof(*b));
}

size_t brisk_sbuf_append(struct brisk_chunkpool *p, struct brisk_sbuf *b, const void *data, size_t len)
{
    const uint8_t *src = data;
    size_t done = 0;
    while (done < len) {
        if (!b->tail || b->tail_len == BRISK_CHUNK_DATA) {
            struct brisk_chunk *c = chunk_alloc(p);
            if (!c)
                break;
            if (b->tail)
                b->tail->next = c;
            else
                b->head = c;
            b->tail = c;
            b->tail_len = 0;
            b->nchunks++;
        }
        size_t n = BRISK_CHUNK_DATA - b->tail_len;
        if (n > len - done)
            n = len - done;
        memcpy(b->tail->data + b->tail_len, src + done, n);
        b->tail_len += (uint32_t)n;
        done += n;
    }
    b->len += done;
    return done;
}

void brisk_sbuf_consume(struct brisk_chunkpool *p, struct brisk_sbuf *b, size_t n)
{
    assert(n <= b->len);
    if (n == 0)
        return;
    if (n == b->len) {
        /* Nothing left: give back every chunk, the tail included; positions keep counting. */
        uint64_t base = b->base + n;
        brisk_sbuf_clear(p, b);
        b->base = base;
        return;
    }
    b->len -= n;
    b->base += n;
    /* Every chunk before the tail is full, so whole chunks fall off the front while the offset passes them;
     * the tail itself never does, since bytes remain. */
    uint64_t off = (uint64_t)b->head_off + n;
    while (off >= BRISK_CHUNK_DATA) {
        assert(b->head != b->tail);
        struct brisk_chunk *c = b->head;
        b->head = c->next;
        chunk_free(p, c);
        b->nchunks--;
        off -= BRISK_CHUNK_DATA;
    }
    b->head_off = (uint32_t)off;
    /* A cursor on a freed chunk is one that starts before the new head chunk. */
    uint64_t head_start = b->base - b->head_off;
    for (int i = 0; i < 2; i++) {
        if (b->cur[i].chunk && b->cur[i].start < head_start)
            b->cur[i].chunk = NULL;
    }
}

/*
 * The chunk holding stream position pos (base <= pos < base + len), and the position of its data[0] in
 * *start. Starts from the nearest known chunk at or before pos — head, tail or a cursor — and remembers the
 * result in the cursors, so sequential reads step at most one chunk per BRISK_CHUNK_DATA bytes read.
 */
static struct brisk_chunk *seek(struct brisk_sbuf *b, uint64_t pos, uint64_t *start)
{
    uint64_t head_start = b->base - b->head_off;
    uint64_t tail_start = head_start + (uint64_t)(b->nchunks - 1) * BRISK_CHUNK_DATA;
    if (pos >= tail_start) {
        *start = tail_start;
        return b->tail;
    }
    struct brisk_chunk *c = b->head;
    uint64_t s = head_start;
    int from = -1;
    for (int i = 0; i < 2; i++) {
        if (b->cur[i].chunk && b->cur[i].start <= pos && b->cur[i].start > s) {
            c = b->cur[i].chunk;
            s = b->cur[i].start;
            from = i;
        }
    }
    while (pos - s >= BRISK_CHUNK_DATA) {
        c = c->next;
        s += BRISK_CHUNK_DATA;
        b->walk_steps++;
    }
    /* The cursor used (or, starting from the head, the least recently used one) moves here and becomes the
     * most recent. Reads in the head chunk need no cursor. */
    if (c != b->head) {
        if (from != 0)
            b->cur[1] = b->cur[0];
        b->cur[0].chunk = c;
        b->cur[0].start = s;
    }
    *start = s;
    return c;
}

size_t brisk_sbuf_span(struct brisk_sbuf *b, size_t off, const uint8_t **p)
{
    if (off >= b->len) {
        *p = NULL;
        return 0;
    }
    uint64_t pos = b->base + off;
    uint64_t start;
    struct brisk_chunk *c = seek(b, pos, &start);
    uint32_t in = (uint32_t)(pos - start);
    uint32_t end = c == b->tail ? b->tail_len : BRISK_CHUNK_DATA;
    *p = c->data + in;
    return end - in;
}

size_t brisk_sbuf_copyout(struct brisk_sbuf *b, size_t off, void *dst, size_t n)
{
    if (off >= b->len)
        return 0;
    if (n > b->len - off)
        n = (size_t)(b->len - off);
    uint8_t *out = dst;
    size_t done = 0;
    while (done < n) {
        const uint8_t *src;
        size_t k = brisk_sbuf_span(b, off + done, &src);
        if (k > n - done)
            k = n - done;
        memcpy(out + done, src, k);
        done += k;
    }
    return done;
}

void brisk_sbuf_clear(struct brisk_chunkpool *p, struct brisk_sbuf *b)
{
    struct brisk_chunk *c = b->head;
    while (c) {
        /* The tail's link is known to be NULL and is not read: a send buffer empties when its ACK comes, a
         * round trip after the chunk was written, and with many connections the line has left L1 and L2 by
         * then. The load would stall the ACK's processing; chunk_free's store to the same line does not. */
        struct brisk_chunk *next = c == b->tail ? NULL : c->next;
        chunk_free(p, c);
        c = next;
    }
    /* Field by field, not brisk_sbuf_init's memset: the compiler makes that a `rep stos`, whose start-up
     * cost made this the most expensive instruction of a request/response exchange (every reply empties
     * the send buffer, every read the receive buffer). */
    b->head = b->tail = NULL;
    b->head_off = b->tail_len = b->nchunks = 0;
    b->len = 0;
    b->base = 0;
    for (int i = 0; i < 2; i++)
        b->cur[i] = (struct brisk_sbuf_cursor){NULL, 0};
}

uint64_t brisk_sbuf_mem(const struct brisk_sbuf *b)
{
    return (uint64_t)b->nchunks * BRISK_CHUNK_SIZE;
}

size_t brisk_sbuf_room(const struct brisk_chunkpool *p, const struct brisk_sbuf *b)
{
    uint64_t chunks = p->nfree;
    if (p->bytes < p->bytes_limit)
        chunks += (p->bytes_limit - p->bytes) / BRISK_CHUNK_SIZE;
    uint64_t room = chunks * BRISK_CHUNK_DATA;
    if (b->tail)
        room += BRISK_CHUNK_DATA - b->tail_len;
    return room > SIZE_MAX ? SIZE_MAX : (size_t)room;
}
