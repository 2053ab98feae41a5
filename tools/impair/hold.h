/*
 * hold.h — brisk-impair's held packets: NFQUEUE packet ids whose verdict waits for a release time, ordered by
 * that time (ties in arrival order), in a fixed-size heap allocated once.
 */
#ifndef BRISK_TOOLS_IMPAIR_HOLD_H
#define BRISK_TOOLS_IMPAIR_HOLD_H

#include <stddef.h>
#include <stdint.h>

struct impair_held {
    uint64_t release_ns;
    uint64_t seq; /* arrival order: equal release times leave first in, first out */
    uint32_t id;  /* the NFQUEUE packet id to give the verdict for */
};

struct impair_hold {
    struct impair_held *heap;
    size_t len, cap;
    uint64_t next_seq;
};

/* 0, or -1 when the array cannot be allocated. */
int impair_hold_init(struct impair_hold *h, size_t cap);
void impair_hold_free(struct impair_hold *h);
/* 0, or -1 (nothing changed) when `cap` packets are already held. */
int impair_hold_push(struct impair_hold *h, uint64_t release_ns, uint32_t id);
/* The earliest release time, or UINT64_MAX when nothing is held. */
uint64_t impair_hold_next(const struct impair_hold *h);
/* Removes the earliest entry into *out if its release time is <= now_ns (or always, with UINT64_MAX): 1, else
 * 0. */
int impair_hold_pop(struct impair_hold *h, uint64_t now_ns, struct impair_held *out);

#endif
