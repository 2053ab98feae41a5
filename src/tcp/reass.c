/*
 * reass.c — out-of-order data waiting for a hole to fill, and the SACK blocks that describe it.
 *
 * RFC 9293 §3.10.7.4 ("seventh, process the segment text") lets a receiver keep segments that arrive beyond
 * rcv_nxt and deliver them once the gap before them fills; RFC 2018 §4 asks it to report what it holds as
 * SACK blocks, most recent arrival first. The caller (tcp input) appends in-order data to the receive stream
 * itself, hands everything past rcv_nxt to brisk_reass_insert(), and after every advance of rcv_nxt calls
 * brisk_reass_pop() to drain whatever became contiguous — as much of it as the receive stream can take: the
 * rest stays held (its front piece trimmed) until the next pop, so no delivered byte is ever dropped.
 *
 * Storage: the bytes are copied into packet-pool buffers ("pieces": pkt->seq / end_seq give the range,
 * pkt->next links them) kept in one singly linked list sorted by sequence, never overlapping — existing bytes
 * win, so a retransmission only fills the gaps it covers. A gap is cut into pieces greedily: a full buffer of
 * the largest size class whose room the remaining gap fills, then the smallest class that takes the rest; so
 * an MSS segment is one small buffer, and a jumbo segment wastes at most one partly filled small buffer
 * rather than most of a 16 KB one. Memory is bounded twice: max_mem counts each buffer's full size (truesize:
 * descriptor + headroom + room) and max_segs counts pieces, so a flood of 1-byte segments stops at a known
 * cost. A segment is planned first (walk the list, count the pieces and memory it needs), its buffers
 * allocated all at once, then committed by a second walk: a failure leaves the store untouched.
 *
 * Runs: adjacent pieces stay separate buffers, but the list also knows its runs — maximal contiguous held
 * ranges, i.e. SACK blocks — through bookkeeping kept in each piece's headroom (struct piece_meta; the
 * headroom is unused since pieces never become frames). A run's first piece points to its last and the last
 * to the first, and the first carries the run's arrival stamp. Linking a piece next to a neighbour merges
 * runs in O(1), a walk skips a whole run in one step, and the SACK blocks are read off without scanning.
 *
 * SACK order: recent[] keeps the first pieces of the BRISK_REASS_RECENT runs with the latest arrivals, newest
 * first (the invariant: no run outside it arrived later than one inside it). An arrival moves its run to the
 * front and drops the entries of runs it merged; when a merge or a pop leaves recent[] short while more runs
 * exist, the next latest are found by a scan of the runs (refill()).
 *
 * Costs, n = pieces held, k = runs held: appending past the highest piece and filling the first hole (the
 * common cases: in-order flight after a loss, and the retransmission that repairs it) are O(1). Otherwise an
 * insert steps over the k' runs before the segment one run at a time and then over the pieces the segment
 * overlaps: O(k + overlapped pieces), at most O(n). A merge or pop that shortens recent[] costs O(k) for the
 * refill. pop is O(pieces freed + 1); brisk_reass_sack is O(blocks); brisk_reass_holds and
 * brisk_reass_overlap are O(k).
 *
 *   brisk_reass_insert   plan → allocate → commit (walk(), fill_gap(), link_piece()), then arrived()
 *   brisk_reass_pop      deliver up to a limit and free from the front (drop_front())
 *   brisk_reass_sack     recent[] (plus a scan of older runs when more blocks are asked for)
 *   brisk_reass_holds    run lookup for D-SACK (RFC 2883)
 *   brisk_reass_overlap  the part of a segment the first run it overlaps already holds (D-SACK, RFC 2883)
 */
#include "tcp/reass.h"

#include <assert.h>
#include <string.h>

#include "brisk/brisk.h"
#include "wire/tcp.h"

/* Per-piece run bookkeeping, stored at pkt->head (in the headroom). Valid only at a run's first and last
 * pieces; interior pieces carry stale values that are never read. */
struct piece_meta {
    brisk_pkt *other; /* at the first piece: the run's last; at the last: the run's first (itself if alone) */
    uint64_t stamp;   /* at the first piece: arrival stamp of the latest segment in the run */
};

_Static_assert(sizeof(struct piece_meta) <= BRISK_PKT_HEADROOM, "run bookkeeping lives in the headroom");

static struct piece_meta *meta(const brisk_pkt *p)
{
    return (struct piece_meta *)(void *)p->head;
}

static brisk_pkt *run_last(const brisk_pkt *first)
{
    return meta(first)->other;
}

/* Buffer memory of one buffer of class c, as pktbuf.c carves it: the truesize the plan must budget before the
 * buffer exists (brisk_pkt_truesize() of the buffer once allocated). */
static uint64_t class_mem(const struct brisk_pktpool *pool, int c)
{
    return BRISK_PKT_DESC_SIZE + BRISK_PKT_HEADROOM + pool->cls[c].room;
}

/* The class for the next piece of a gap of g bytes: a full buffer of the largest class g fills, else the
 * smallest class (which then takes all of g). */
static int piece_class(const struct brisk_pktpool *pool, uint32_t g)
{
    for (int c = BRISK_PKT_CLASSES - 1; c > 0; c--) {
        if (pool->cls[c].room <= g)
            return c;
    }
    return 0;
}

void brisk_reass_init(struct brisk_reass *r)
{
    memset(r, 0, sizeof(*r));
}

/* ---------------------------------------------------------------------------------------------------------
 * Insert: one walk routine, run twice — to plan (count) and to commit (link).
 * ------------------------------------------------------------------------------------------------------- */
struct fill {
    struct brisk_pktpool *pool;
    struct brisk_reass *r;
    const uint8_t *data; /* the segment's bytes from sequence s on */
    uint32_t s;
    int commit; /* 0: only count what the gaps need; 1: store them */
    /* Plan. */
    uint32_t npieces;
    uint64_t mem;
    uint32_t count[BRISK_PKT_CLASSES];
    /* Commit. */
    brisk_pkt *spare[BRISK_PKT_CLASSES]; /* buffers allocated for the plan, by class */
    uint32_t stored;                     /* bytes stored */
    brisk_pkt *prev;                     /* the piece before the walk's position, NULL at the front */
    brisk_pkt *first;                    /* the first piece of prev's run */
};

/* Links the new piece p between f->prev and next, merging it with the runs it touches; p becomes prev. */
static void link_piece(struct fill *f, brisk_pkt *p, brisk_pkt *next)
{
    struct brisk_reass *r = f->r;
    brisk_pkt *prev = f->prev;
    p->next = next;
    if (prev)
        prev->next = p;
    else
        r->head = p;
    if (!next)
        r->tail = p;
    /* A neighbour that touches p is the end of its run: prev its last piece, next its first. */
    brisk_pkt *first = p, *last = p;
    uint32_t runs = r->nruns + 1;
    if (prev && prev->end_seq == p->seq) {
        first = meta(prev)->other;
        runs--;
    }
    if (next && next->seq == p->end_seq) {
        last = meta(next)->other;
        runs--;
    }
    meta(first)->other = last;
    meta(last)->other = first;
    if (first == p)
        meta(p)->stamp = 0; /* the insert stamps its run when it completes */
    r->nruns = runs;
    f->prev = p;
    f->first = first;
}

/* The gap [a, b) between f->prev and next: counted (plan) or stored piece by piece (commit). */
static void fill_gap(struct fill *f, brisk_pkt *next, uint32_t a, uint32_t b)
{
    while (a != b) {
        uint32_t g = b - a;
        int c = piece_class(f->pool, g);
        uint32_t n = g < f->pool->cls[c].room ? g : f->pool->cls[c].room;
        if (!f->commit) {
            f->count[c]++;
            f->npieces++;
            f->mem += class_mem(f->pool, c);
        } else {
            brisk_pkt *p = f->spare[c];
            assert(p);
            f->spare[c] = p->next;
            memcpy(brisk_pkt_put(p, n), f->data + (a - f->s), n);
            p->seq = a;
            p->end_seq = a + n;
            p->truesize = brisk_pkt_truesize(p);
            assert(p->truesize == class_mem(f->pool, c)); /* the plan counted what was allocated */
            link_piece(f, p, next);
            f->stored += n;
        }
        a += n;
    }
}

/* Walks [f->s, e) over the held pieces, handing every gap to fill_gap(). On return (commit) f->first is the
 * first piece of the run that now holds all of [f->s, e). */
static void walk(struct fill *f, uint32_t e)
{
    struct brisk_reass *r = f->r;
    uint32_t s = f->s, cur = s;
    brisk_pkt *p = r->head;
    f->prev = NULL;
    f->first = NULL;
    if (r->tail && brisk_seq_geq(s, r->tail->end_seq)) {
        /* Fast path: at or past the highest byte held (the flight that follows a loss). */
        f->prev = r->tail;
        f->first = meta(r->tail)->other;
        p = NULL;
    } else if (p) {
        /* Skip whole runs that end at or before s; p is always a run's first piece here. A segment in the
         * first hole (the retransmission that repairs a loss) stops at the first run: no step at all. */
        for (;;) {
            brisk_pkt *last = run_last(p);
            if (brisk_seq_gt(last->end_seq, s)) {
                if (brisk_seq_geq(s, last->seq)) {
                    /* s is inside the run's last piece: step over the whole run at once. */
                    f->prev = last;
                    f->first = p;
                    cur = last->end_seq;
                    p = last->next;
                }
                break;
            }
            f->prev = last;
            f->first = p;
            p = last->next;
            r->walk_steps++;
            assert(p); /* the tail ends after s, or the fast path would have been taken */
        }
    }
    while (brisk_seq_lt(cur, e)) {
        if (!p || brisk_seq_geq(p->seq, e)) {
            fill_gap(f, p, cur, e);
            break;
        }
        if (brisk_seq_gt(p->seq, cur)) {
            fill_gap(f, p, cur, p->seq);
            cur = p->seq;
        }
        if (!f->prev || f->prev->end_seq != p->seq)
            f->first = p;
        cur = brisk_seq_max(cur, p->end_seq);
        f->prev = p;
        p = p->next;
        r->walk_steps++;
    }
}

/* The run with the latest arrival stamp below `below`, or NULL: a scan of the runs. */
static brisk_pkt *next_run(const struct brisk_reass *r, uint64_t below)
{
    brisk_pkt *best = NULL;
    uint64_t best_stamp = 0;
    for (brisk_pkt *p = r->head; p; p = run_last(p)->next) {
        uint64_t st = meta(p)->stamp;
        if (st < below && (!best || st > best_stamp)) {
            best = p;
            best_stamp = st;
        }
    }
    return best;
}

/* Tops recent[] up with the next latest runs after a merge or a pop shortened it. */
static void refill(struct brisk_reass *r)
{
    while (r->nrecent < BRISK_REASS_RECENT && r->nrecent < r->nruns) {
        uint64_t below = r->nrecent ? meta(r->recent[r->nrecent - 1])->stamp : UINT64_MAX;
        brisk_pkt *p = next_run(r, below);
        assert(p);
        if (!p)
            break;
        r->recent[r->nrecent++] = p;
    }
}

/* An arrival in the run starting at `first`: that run becomes the newest, runs it absorbed leave recent[]. */
static void arrived(struct brisk_reass *r, brisk_pkt *first)
{
    uint32_t start = first->seq, end = run_last(first)->end_seq;
    meta(first)->stamp = ++r->arrivals;
    brisk_pkt *keep[BRISK_REASS_RECENT];
    uint32_t n = 0;
    keep[n++] = first;
    for (uint32_t i = 0; i < r->nrecent && n < BRISK_REASS_RECENT; i++) {
        brisk_pkt *q = r->recent[i];
        /* An older entry whose first piece now lies inside this run was merged into it (or is it). */
        if (brisk_seq_geq(q->seq, start) && brisk_seq_lt(q->seq, end))
            continue;
        keep[n++] = q;
    }
    memcpy(r->recent, keep, n * sizeof(keep[0]));
    int shortened = n < r->nrecent;
    r->nrecent = n;
    if (shortened)
        refill(r);
}

int brisk_reass_insert(struct brisk_pktpool *pool, struct brisk_reass *r, uint32_t rcv_nxt, uint32_t seq,
                       const uint8_t *data, uint32_t len, uint64_t max_mem, uint32_t max_segs)
{
    if (len >= 0x80000000u)
        return BRISK_ERR_INVAL;
    uint32_t s = seq, e = seq + len;
    if (len == 0 || brisk_seq_leq(e, rcv_nxt))
        return 0; /* nothing after rcv_nxt: not an out-of-order arrival */
    if (brisk_seq_lt(s, rcv_nxt)) {
        data += rcv_nxt - s;
        s = rcv_nxt;
    }
    struct fill f = {.pool = pool, .r = r, .data = data, .s = s};
    walk(&f, e);
    if (f.npieces) {
        if ((uint64_t)r->nsegs + f.npieces > max_segs || r->mem + f.mem > max_mem)
            return BRISK_ERR_NOMEM;
        for (int c = 0; c < BRISK_PKT_CLASSES; c++) {
            for (uint32_t k = 0; k < f.count[c]; k++) {
                brisk_pkt *p = brisk_pkt_alloc(pool, pool->cls[c].room);
                if (!p) {
                    for (int d = 0; d < BRISK_PKT_CLASSES; d++) {
                        while (f.spare[d]) {
                            brisk_pkt *q = f.spare[d];
                            f.spare[d] = q->next;
                            brisk_pkt_free(pool, q);
                        }
                    }
                    return BRISK_ERR_NOBUFS;
                }
                assert(p->pool_class == c);
                p->next = f.spare[c];
                f.spare[c] = p;
            }
        }
    }
    f.commit = 1;
    walk(&f, e);
    for (int c = 0; c < BRISK_PKT_CLASSES; c++)
        assert(!f.spare[c]);
    r->nsegs += f.npieces;
    r->mem += f.mem;
    r->bytes += f.stored;
    arrived(r, f.first);
    return (int)f.stored;
}

/* ---------------------------------------------------------------------------------------------------------
 * Pop, SACK blocks, lookups, teardown.
 * ------------------------------------------------------------------------------------------------------- */

/* Drops a run's first piece p (about to be freed) from recent[]; returns whether it was there. */
static int forget(struct brisk_reass *r, const brisk_pkt *p)
{
    for (uint32_t i = 0; i < r->nrecent; i++) {
        if (r->recent[i] == p) {
            memmove(&r->recent[i], &r->recent[i + 1], (r->nrecent - i - 1) * sizeof(r->recent[0]));
            r->nrecent--;
            return 1;
        }
    }
    return 0;
}

/* Frees the front piece (a run's first). If its run goes on, the next piece becomes the run's first: it takes
 * over the run's bookkeeping and its place in recent[], so a pop that stops inside a run leaves a well-formed
 * run behind. Returns whether recent[] lost an entry (the caller refills once at the end). */
static int drop_front(struct brisk_pktpool *pool, struct brisk_reass *r)
{
    brisk_pkt *p = r->head, *q = p->next;
    int shortened = 0;
    r->head = q;
    if (q && q->seq == p->end_seq) {
        brisk_pkt *last = run_last(p);
        assert(last != p);
        meta(q)->other = last;
        meta(last)->other = q;
        meta(q)->stamp = meta(p)->stamp;
        for (uint32_t i = 0; i < r->nrecent; i++) {
            if (r->recent[i] == p)
                r->recent[i] = q;
        }
    } else {
        r->nruns--;
        shortened = forget(r, p);
    }
    if (!q)
        r->tail = NULL;
    r->nsegs--;
    r->bytes -= p->len;
    r->mem -= p->truesize;
    brisk_pkt_free(pool, p);
    return shortened;
}

uint32_t brisk_reass_pop(struct brisk_pktpool *pool, struct brisk_reass *r, uint32_t rcv_nxt, uint32_t max,
                         void (*deliver)(void *ctx, const uint8_t *data, uint32_t n), void *ctx)
{
    uint32_t nxt = rcv_nxt, delivered = 0;
    int shortened = 0;
    brisk_pkt *p;
    /* Once a piece is taken, the next one of its run starts at nxt: the loop drains whole runs unless the
     * limit stops it. */
    while ((p = r->head) && brisk_seq_leq(p->seq, nxt)) {
        if (brisk_seq_gt(p->end_seq, nxt)) {
            uint32_t skip = nxt - p->seq, n = p->end_seq - nxt;
            if (n > max - delivered) {
                /* The limit ends inside this piece: deliver what fits and trim the piece so that it starts
                 * at the first byte not delivered. It stays its run's first piece (the run bookkeeping lives
                 * at pkt->head, which a pull does not move), and it keeps its buffer, hence its truesize. */
                n = max - delivered;
                if (n)
                    deliver(ctx, p->data + skip, n);
                delivered += n;
                brisk_pkt_pull(p, skip + n);
                p->seq = nxt + n;
                r->bytes -= skip + n;
                break;
            }
            deliver(ctx, p->data + skip, n);
            delivered += n;
            nxt = p->end_seq;
        }
        shortened |= drop_front(pool, r);
    }
    if (shortened)
        refill(r);
    return delivered;
}

static void put_block(uint32_t (*blocks)[2], int i, const brisk_pkt *first)
{
    blocks[i][0] = first->seq;
    blocks[i][1] = run_last(first)->end_seq;
}

int brisk_reass_sack(const struct brisk_reass *r, uint32_t (*blocks)[2], int max)
{
    int n = 0;
    for (uint32_t i = 0; i < r->nrecent && n < max; i++)
        put_block(blocks, n++, r->recent[i]);
    /* More blocks than recent[] keeps: older runs, latest first. */
    uint64_t below = r->nrecent ? meta(r->recent[r->nrecent - 1])->stamp : UINT64_MAX;
    while (n < max && (uint32_t)n < r->nruns) {
        const brisk_pkt *p = next_run(r, below);
        if (!p)
            break;
        put_block(blocks, n++, p);
        below = meta(p)->stamp;
    }
    return n;
}

int brisk_reass_holds(const struct brisk_reass *r, uint32_t seq, uint32_t len)
{
    if (len == 0)
        return 0;
    uint32_t e = seq + len;
    /* Runs are disjoint and sorted: only the first one ending after seq can hold it. */
    for (const brisk_pkt *p = r->head; p; p = run_last(p)->next) {
        const brisk_pkt *last = run_last(p);
        if (brisk_seq_leq(last->end_seq, seq))
            continue;
        return brisk_seq_leq(p->seq, seq) && brisk_seq_geq(last->end_seq, e);
    }
    return 0;
}

int brisk_reass_overlap(const struct brisk_reass *r, uint32_t seq, uint32_t len, uint32_t *start, uint32_t *end)
{
    if (len == 0)
        return 0;
    uint32_t e = seq + len;
    for (const brisk_pkt *p = r->head; p; p = run_last(p)->next) {
        const brisk_pkt *last = run_last(p);
        if (brisk_seq_leq(last->end_seq, seq))
            continue; /* wholly before the segment */
        if (brisk_seq_geq(p->seq, e))
            return 0; /* this run and every later one start after it */
        *start = brisk_seq_gt(p->seq, seq) ? p->seq : seq;
        *end = brisk_seq_lt(last->end_seq, e) ? last->end_seq : e;
        return 1;
    }
    return 0;
}

void brisk_reass_clear(struct brisk_pktpool *pool, struct brisk_reass *r)
{
    brisk_pkt *p = r->head;
    while (p) {
        brisk_pkt *next = p->next;
        brisk_pkt_free(pool, p);
        p = next;
    }
    uint64_t steps = r->walk_steps;
    brisk_reass_init(r);
    r->walk_steps = steps;
}
