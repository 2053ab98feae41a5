/*
 * sbuf.h — TCP's byte-stream buffers: a chunk pool and the chunked stream built on it (see sbuf.c).
 */
#ifndef BRISK_TCP_SBUF_H
#define BRISK_TCP_SBUF_H

#include <stddef.h>
#include <stdint.h>

/* One chunk is exactly BRISK_CHUNK_SIZE bytes of memory: a link followed by BRISK_CHUNK_DATA bytes of stream.
 * Why 16 KB: a 64 KB TSO super-segment is cut from at most 5 contiguous spans; the per-chunk link costs
 * 0.05 %; a stream position maps to a chunk with one walk step per 16 KB; yet a connection holding a few
 * bytes pins only 16 KB, and slabs of whole chunks stay page-multiples. */
#define BRISK_CHUNK_SIZE 16384u

struct brisk_chunk {
    struct brisk_chunk *next; /* next chunk of the stream, or of the pool's free list */
    uint8_t data[];           /* BRISK_CHUNK_DATA bytes */
};

#define BRISK_CHUNK_DATA ((uint32_t)(BRISK_CHUNK_SIZE - offsetof(struct brisk_chunk, data)))

/* Chunks carved from one slab allocation (256 KB). */
#define BRISK_CHUNKS_PER_SLAB 16u

/* A stack-wide pool of chunks, shared by every connection's send and receive streams. */
struct brisk_chunkpool {
    struct brisk_chunk *free; /* free list (chunk->next) */
    uint64_t nfree;           /* chunks on the free list */
    uint64_t ntotal;          /* chunks ever carved */
    void **slabs;             /* every slab, freed with the pool */
    size_t nslabs, slab_cap;
    uint64_t bytes;       /* bytes of all slabs */
    uint64_t bytes_limit; /* bound on `bytes` */
    uint64_t in_use;      /* chunks handed out and not returned */
    uint64_t alloc_fails; /* allocations refused by the bound or by malloc */
};

void brisk_chunkpool_init(struct brisk_chunkpool *p, uint64_t bytes_limit);
/* Frees every slab. Chunks still held by streams become invalid: clear the streams first. */
void brisk_chunkpool_destroy(struct brisk_chunkpool *p);

/* A remembered read position: a chunk of the stream and the stream position of its data[0]. */
struct brisk_sbuf_cursor {
    struct brisk_chunk *chunk; /* NULL: unused */
    uint64_t start;            /* stream position of chunk->data[0] */
};

/*
 * A byte stream. Stream positions count every byte ever appended, so they never move; offsets in the API are
 * from the front (the first byte still held): position = base + offset. Every chunk but the tail is full.
 */
struct brisk_sbuf {
    struct brisk_chunk *head, *tail; /* NULL, NULL when empty: an empty sbuf holds no chunk */
    uint32_t head_off;               /* offset in head->data of the front byte */
    uint32_t tail_len;               /* bytes of tail->data in use */
    uint32_t nchunks;                /* chunks held */
    uint64_t len;                    /* bytes held */
    uint64_t base;                   /* stream position of the front byte (bytes consumed so far) */
    struct brisk_sbuf_cursor cur[2]; /* the last two read positions, most recent first */
    uint64_t walk_steps;             /* chunks stepped over to locate reads: a cost counter */
};

void brisk_sbuf_init(struct brisk_sbuf *b);

/* Appends up to len bytes; returns how many were appended (fewer when the pool is exhausted, counted in
 * p->alloc_fails; the caller keeps the rest and retries once memory frees up). */
size_t brisk_sbuf_append(struct brisk_chunkpool *p, struct brisk_sbuf *b, const void *data, size_t len);

/* Drops n <= len bytes from the front (asserted), returning emptied chunks to the pool. */
void brisk_sbuf_consume(struct brisk_chunkpool *p, struct brisk_sbuf *b, size_t n);

/* Copies n bytes starting at offset off (from the front) into dst; returns bytes copied (stops at len). */
size_t brisk_sbuf_copyout(struct brisk_sbuf *b, size_t off, void *dst, size_t n);

/* The contiguous span at offset off: sets *p, returns its length (0 and *p = NULL at/after the end). For
 * zero-extra-copy reads straight into a packet buffer. The span stays valid until its bytes are consumed. */
size_t brisk_sbuf_span(struct brisk_sbuf *b, size_t off, const uint8_t **p);

/* Returns every chunk to the pool; the stream is empty afterwards (positions restart at 0, walk_steps keeps
 * counting). */
void brisk_sbuf_clear(struct brisk_chunkpool *p, struct brisk_sbuf *b);

/* Bytes an append to b could take now: the tail's free space, free chunks, and what the pool may still carve
 * under its bound. */
size_t brisk_sbuf_room(const struct brisk_chunkpool *p, const struct brisk_sbuf *b);
/* Bytes of chunk memory this sbuf holds (for memory accounting). */
uint64_t brisk_sbuf_mem(const struct brisk_sbuf *b);

#endif
