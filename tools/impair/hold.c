/*
 * hold.c — the held-packet heap of brisk-impair: a binary min-heap on (release time, arrival sequence).
 *
 * Delayed and reordered packets stay in the kernel's queue until brisk-impair gives their verdict (NFQUEUE
 * allows verdicts in any order); this heap remembers which id is due when. The arrival sequence breaks ties,
 * so packets with the same hold (a plain --delay) leave in the order they came and only --reorder reorders.
 * The array is allocated once at start (--max-held); the per-packet path allocates nothing.
 */
#include "impair/hold.h"

#include <stdlib.h>

int impair_hold_init(struct impair_hold *h, size_t cap)
{
    *h = (struct impair_hold){0};
    h->heap = calloc(cap ? cap : 1, sizeof(*h->heap));
    if (!h->heap)
        return -1;
    h->cap = cap;
    return 0;
}

void impair_hold_free(struct impair_hold *h)
{
    free(h->heap);
    *h = (struct impair_hold){0};
}

static int before(const struct impair_held *a, const struct impair_held *b)
{
    return a->release_ns != b->release_ns ? a->release_ns < b->release_ns : a->seq < b->seq;
}

int impair_hold_push(struct impair_hold *h, uint64_t release_ns, uint32_t id)
{
    if (h->len >= h->cap)
        return -1;
    struct impair_held e = {release_ns, h->next_seq++, id};
    size_t i = h->len++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!before(&e, &h->heap[up]))
            break;
        h->heap[i] = h->heap[up];
        i = up;
    }
    h->heap[i] = e;
    return 0;
}

uint64_t impair_hold_next(const struct impair_hold *h) { return h->len ? h->heap[0].release_ns : UINT64_MAX; }

int impair_hold_pop(struct impair_hold *h, uint64_t now_ns, struct impair_held *out)
{
    if (!h->len || h->heap[0].release_ns > now_ns)
        return 0;
    *out = h->heap[0];
    struct impair_held last = h->heap[--h->len];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->len)
            break;
        if (c + 1 < h->len && before(&h->heap[c + 1], &h->heap[c]))
            c++;
        if (!before(&h->heap[c], &last))
            break;
        h->heap[i] = h->heap[c];
        i = c;
    }
    if (h->len)
        h->heap[i] = last;
    return 1;
}
