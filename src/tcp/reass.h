/*
 * reass.h — TCP out-of-order reassembly and the SACK blocks it implies (see reass.c).
 */
#ifndef BRISK_TCP_REASS_H
#define BRISK_TCP_REASS_H

#include <stdint.h>

#include "core/pktbuf.h"

/* Runs (maximal contiguous held ranges) remembered in order of most recent arrival: the SACK blocks a TCP
 * option can carry (RFC 2018 §3: at most 4 in 40 option bytes). */
#define BRISK_REASS_RECENT 4

struct brisk_reass {
    /* The counts first: an in-order segment reads them (and only them) to learn there is nothing held, so a
     * connection that embeds this struct can keep these 16 bytes with its per-segment state (tcp.h). */
    uint32_t nsegs;         /* pieces held */
    uint32_t bytes;         /* payload bytes held */
    uint32_t nruns;         /* maximal contiguous held ranges */
    uint32_t nrecent;       /* entries in recent[] */
    brisk_pkt *head, *tail; /* pieces sorted by sequence, never overlapping; pkt->seq / end_seq / next */
    uint64_t mem;           /* buffer memory held: each piece's truesize */
    brisk_pkt *recent[BRISK_REASS_RECENT]; /* first pieces of the most recently arrived-at runs, newest
                                              first: always the nrecent runs with the latest arrivals */
    uint64_t arrivals;                     /* arrival stamps handed out */
    uint64_t walk_steps;                   /* runs and pieces stepped over by inserts: a cost counter */
};

void brisk_reass_init(struct brisk_reass *r);

/* Stores the part of [seq, seq+len) that lies after rcv_nxt and is not already held (existing bytes win on
 * overlap; a fully duplicate segment stores nothing). The caller has trimmed the segment to the receive
 * window. Data is copied into buffers from `pool`, one buffer per stored piece, the smallest waste class
 * chosen per piece (reass.c). Records the segment as the most recent arrival (for SACK order) unless it lies
 * entirely before rcv_nxt or the call fails. Returns the bytes newly stored (>= 0), or
 *   BRISK_ERR_NOMEM   storing would exceed max_mem bytes of buffer memory (truesize) or max_segs pieces;
 *   BRISK_ERR_NOBUFS  the packet pool is exhausted;
 *   BRISK_ERR_INVAL   len >= 2^31;
 * on error nothing is stored: the caller counts a drop (the peer will retransmit). */
int brisk_reass_insert(struct brisk_pktpool *pool, struct brisk_reass *r, uint32_t rcv_nxt, uint32_t seq,
                       const uint8_t *data, uint32_t len, uint64_t max_mem, uint32_t max_segs);

/* If held data starts at or before rcv_nxt, delivers the contiguous bytes from rcv_nxt on, at most max of
 * them, through deliver(ctx, data, n) (possibly several calls, in order, each with n > 0; none when nothing
 * is delivered), frees what was delivered, and returns the number of bytes delivered (the caller advances
 * rcv_nxt by that). Bytes before rcv_nxt are discarded whatever max is. What the limit leaves over stays
 * held, starting exactly at the new rcv_nxt: pop again when there is room. Call it whenever rcv_nxt advances,
 * so that nothing held lies before rcv_nxt when SACK blocks are built. */
uint32_t brisk_reass_pop(struct brisk_pktpool *pool, struct brisk_reass *r, uint32_t rcv_nxt, uint32_t max,
                         void (*deliver)(void *ctx, const uint8_t *data, uint32_t n), void *ctx);

/* SACK blocks per RFC 2018 §4: each block a maximal contiguous held range [start, end); the first block
 * contains the most recently received segment; then the other blocks in order of most recent arrival.
 * Writes at most max blocks; returns the count. O(max) for max <= BRISK_REASS_RECENT, O(max x runs) above. */
int brisk_reass_sack(const struct brisk_reass *r, uint32_t (*blocks)[2], int max);

/* Whether [seq, seq+len) is entirely held already (for D-SACK, RFC 2883); 0 for len == 0. */
int brisk_reass_holds(const struct brisk_reass *r, uint32_t seq, uint32_t len);

/* The duplicate part of [seq, seq+len) for a D-SACK block (RFC 2883 §4): its intersection with the lowest held
 * run it overlaps, in [*start, *end). Returns 0 (and leaves both alone) when it overlaps nothing held. */
int brisk_reass_overlap(const struct brisk_reass *r, uint32_t seq, uint32_t len, uint32_t *start, uint32_t *end);

/* Frees every piece; the store is empty (as after init, but walk_steps keeps counting). */
void brisk_reass_clear(struct brisk_pktpool *pool, struct brisk_reass *r);

#endif
