/*
 * timer.c — a hierarchical timer wheel with exact, priority-queue-identical firing order.
 *
 * The mechanism (Varghese & Lauck's hierarchical wheel, in the "highest differing digit" form). Times are
 * uint64 ns; a tick is 1024 ns (t >> 10), leaving 54 tick bits, read as nine 6-bit digits. Level L has 64
 * slots indexed by digit L. A timer expiring at tick E, armed while the wheel's time is at tick P, goes to
 *   - level 0, slot digit0(P)            if E <= P (due or overdue: "the current slot"),
 *   - level L, slot digitL(E)            otherwise, where L is the highest digit in which E and P differ.
 * So a timer on level L shares every digit above L with P and has a larger digit L: its slot covers a range
 * of 64^L ticks that starts after P, and the ranges of all occupied slots are disjoint and ordered first by
 * level (a level-L range lies inside P's level-(L+1) block, a level-(L+1) range beyond it) and then by slot.
 * The earliest timer therefore sits in the lowest non-empty level, in its lowest occupied slot, which one
 * count-trailing-zeros on that level's 64-bit occupancy bitmap finds: brisk_timer_next() and each step of
 * brisk_timer_advance() cost O(levels), whatever the number of timers and however long the idle gap.
 *
 * When the wheel's time reaches the start of a coarse slot (lower levels are then necessarily empty), the
 * slot's timers are "cascaded": re-placed relative to the new time, each landing on a finer level (counted in
 * stats.cascades). A timer is cascaded at most once per level above the one it ends on: 2 times for a 200 ms
 * RTO, at most once for a 40 µs pacing deadline.
 *
 * Exact order. Level-0 slots hold the timers of one 1024-ns tick (the current slot also the overdue ones),
 * and they are kept sorted by (expires, seq): brisk_timer_arm inserts walking back from the tail, which is
 * O(1) in practice because timers of one microsecond are nearly always armed in order (equal expiries always
 * are: the newest arm has the largest seq). The one way to make an arm cost more is to arm many timers in the
 * same 1 µs out of order — it then costs the number of later timers in that microsecond. Cascades could feed
 * a level-0 slot out of order, so a cascaded list is first checked and, if needed, merge-sorted (no
 * allocation); appended in sorted order to the (empty) finer levels, every level-0 slot stays sorted at O(1)
 * per timer. brisk_timer_advance(now) then simply repeats: pop the current slot's head while its expiry is <=
 * now; when the slot is empty move the wheel's time to the start of the earliest occupied slot (cascading if
 * it is coarse), stopping when that start is beyond `now`. Every timer elsewhere in the wheel expires after
 * every timer in the current slot, so this pops the global minimum each time — the same sequence as a binary
 * heap keyed by (expires, seq), including timers a callback arms for <= now (they are placed in the current
 * or a later slot like any other timer, ahead of the wheel's time) and timers a callback cancels (unlinked
 * before the loop looks at them). While callbacks run, the wheel's time lies within the tick being processed
 * and before every pending timer's slot, so their arms are placed correctly; after the loop the wheel's time
 * becomes `now`.
 *
 * No RFC defines a timer wheel; this one carries the stack's RFC 6298 retransmission, RFC 8985 RACK / TLP,
 * delayed-ACK (RFC 9293 3.8.6.3), keepalive, TIME_WAIT, pacing and ARP timers.
 *
 * Functions: brisk_timer_wheel_init, brisk_timer_init, brisk_timer_arm (place), brisk_timer_cancel (unlink),
 * brisk_timer_advance (drain the current slot, move, cascade), brisk_timer_next, brisk_timer_count,
 * brisk_timer_wheel_now, brisk_timer_wheel_check (invariants, for tests).
 */
#include "core/timer.h"

#include <string.h>

#define DIGIT_MASK ((uint64_t)BRISK_TIMER_SLOTS - 1)

static inline uint64_t tick_of(uint64_t t)
{
    return t >> BRISK_TIMER_TICK_SHIFT;
}

static inline unsigned high_bit(uint64_t x) /* x != 0 */
{
    return 63u - (unsigned)__builtin_clzll(x);
}

static inline unsigned low_bit(uint64_t x) /* x != 0 */
{
    return (unsigned)__builtin_ctzll(x);
}

/* Strict (expires, seq) order: the priority-queue key. */
static inline int timer_before(const struct brisk_timer *a, const struct brisk_timer *b)
{
    return a->expires < b->expires || (a->expires == b->expires && a->seq < b->seq);
}

/* First tick of slot `s` on `level` when the wheel is at tick `pt`: pt's digits above the level, digit `s`,
 * zeros below. */
static inline uint64_t slot_start_tick(uint64_t pt, unsigned level, unsigned s)
{
    unsigned lo = level * BRISK_TIMER_LEVEL_BITS;
    uint64_t above = pt & ~((UINT64_C(1) << (lo + BRISK_TIMER_LEVEL_BITS)) - 1);
    return above | ((uint64_t)s << lo);
}

static void slot_append(struct brisk_timer_slot *sl, struct brisk_timer *t)
{
    t->next = NULL;
    t->prev = sl->tail;
    if (sl->tail)
        sl->tail->next = t;
    else
        sl->head = t;
    sl->tail = t;
}

/* Inserts keeping (expires, seq) order, walking back from the tail: the new timer is usually the last. */
static void slot_insert_sorted(struct brisk_timer_slot *sl, struct brisk_timer *t)
{
    struct brisk_timer *p = sl->tail;
    while (p && timer_before(t, p))
        p = p->prev;
    if (!p) {
        t->prev = NULL;
        t->next = sl->head;
        if (sl->head)
            sl->head->prev = t;
        else
            sl->tail = t;
        sl->head = t;
        return;
    }
    t->prev = p;
    t->next = p->next;
    if (p->next)
        p->next->prev = t;
    else
        sl->tail = t;
    p->next = t;
}

/* The slot a timer expiring at `expires` belongs in relative to the wheel's time: level * 64 + slot. A timer
 * does not store it. Placement keeps it true for every armed timer until the timer leaves the wheel — the
 * wheel's time only moves forward within the block the timer was placed in, and a coarse slot is cascaded
 * (re-placed) when the time reaches its start (brisk_timer_wheel_check verifies this) — so unlinking
 * recomputes it from the expiry. */
static unsigned slot_index(const struct brisk_timer_wheel *w, uint64_t expires)
{
    uint64_t pt = tick_of(w->now), et = tick_of(expires);
    if (et <= pt)
        return (unsigned)(pt & DIGIT_MASK);
    unsigned level = high_bit(et ^ pt) / BRISK_TIMER_LEVEL_BITS;
    return level * BRISK_TIMER_SLOTS + (unsigned)((et >> (level * BRISK_TIMER_LEVEL_BITS)) & DIGIT_MASK);
}

/* Links an (unlinked) timer into the slot its expiry selects relative to the wheel's time. */
static void place(struct brisk_timer_wheel *w, struct brisk_timer *t)
{
    unsigned where = slot_index(w, t->expires);
    unsigned level = where / BRISK_TIMER_SLOTS, s = where % BRISK_TIMER_SLOTS;
    struct brisk_timer_slot *sl = &w->slot[level][s];
    if (level == 0)
        slot_insert_sorted(sl, t);
    else
        slot_append(sl, t); /* coarse slots are sorted when they cascade, not before */
    w->occupied[level] |= UINT64_C(1) << s;
}

static void unlink_timer(struct brisk_timer_wheel *w, struct brisk_timer *t)
{
    if (t->prev && t->next) { /* in the middle of its slot's list: the slot itself is not touched */
        t->prev->next = t->next;
        t->next->prev = t->prev;
    } else {
        unsigned where = slot_index(w, t->expires);
        unsigned level = where / BRISK_TIMER_SLOTS, s = where % BRISK_TIMER_SLOTS;
        struct brisk_timer_slot *sl = &w->slot[level][s];
        if (t->prev)
            t->prev->next = t->next;
        else
            sl->head = t->next;
        if (t->next)
            t->next->prev = t->prev;
        else
            sl->tail = t->prev;
        if (!sl->head)
            w->occupied[level] &= ~(UINT64_C(1) << s);
    }
    t->next = t->prev = NULL;
    t->seq = 0; /* not armed */
}

/* Merges two sorted singly linked (via next) lists; ties keep a's element first (stable). */
static struct brisk_timer *merge_lists(struct brisk_timer *a, struct brisk_timer *b)
{
    struct brisk_timer *head = NULL, **tailp = &head;
    while (a && b) {
        if (timer_before(b, a)) {
            *tailp = b;
            b = b->next;
        } else {
            *tailp = a;
            a = a->next;
        }
        tailp = &(*tailp)->next;
    }
    *tailp = a ? a : b;
    return head;
}

/* Sorts a singly linked list by (expires, seq): bottom-up merge sort keeping one pending run per power of two
 * (like a binary counter), so it needs no allocation and no recursion. Already-sorted lists (the common case:
 * timers armed at a constant offset from a rising clock) are detected by the caller and skip this. */
static struct brisk_timer *sort_list(struct brisk_timer *list)
{
    struct brisk_timer *runs[64] = {0};
    unsigned max = 0;
    while (list) {
        struct brisk_timer *one = list;
        list = list->next;
        one->next = NULL;
        unsigned i = 0;
        for (; i < max && runs[i]; i++) {
            one = merge_lists(runs[i], one); /* runs[i] holds older elements: it goes first */
            runs[i] = NULL;
        }
        runs[i] = one;
        if (i == max)
            max++;
    }
    struct brisk_timer *out = NULL;
    for (unsigned i = 0; i < max; i++)
        if (runs[i])
            out = out ? merge_lists(runs[i], out) : runs[i];
    return out;
}

/* Re-places every timer of coarse slot (level, s) relative to the wheel's time, which has just reached the
 * slot's start. All finer levels are empty at this point, so appending in (expires, seq) order leaves every
 * level-0 slot sorted. */
static void cascade(struct brisk_timer_wheel *w, unsigned level, unsigned s)
{
    struct brisk_timer_slot *sl = &w->slot[level][s];
    struct brisk_timer *list = sl->head;
    sl->head = sl->tail = NULL;
    w->occupied[level] &= ~(UINT64_C(1) << s);

    int sorted = 1;
    for (struct brisk_timer *t = list; t && t->next; t = t->next)
        if (timer_before(t->next, t)) {
            sorted = 0;
            break;
        }
    if (!sorted)
        list = sort_list(list);
    while (list) {
        struct brisk_timer *t = list;
        list = list->next;
        place(w, t);
        w->stats.cascades++;
    }
}

void brisk_timer_wheel_init(struct brisk_timer_wheel *w, uint64_t now)
{
    memset(w, 0, sizeof(*w));
    w->now = now;
    w->next_seq = 1; /* seq 0 marks a timer that is not armed */
}

void brisk_timer_init(struct brisk_timer *t, brisk_timer_fn fn, void *arg)
{
    t->next = t->prev = NULL;
    t->expires = 0;
    t->seq = 0; /* not armed */
    t->fn = fn;
    t->arg = arg;
}

void brisk_timer_arm(struct brisk_timer_wheel *w, struct brisk_timer *t, uint64_t expires)
{
    if (brisk_timer_armed(t))
        unlink_timer(w, t);
    else
        w->count++;
    t->expires = expires;
    t->seq = w->next_seq++;
    place(w, t);
    w->stats.arms++;
}

void brisk_timer_move(struct brisk_timer_wheel *w, struct brisk_timer *to, struct brisk_timer *from)
{
    if (!brisk_timer_armed(from))
        return;
    to->expires = from->expires;
    to->seq = from->seq;
    to->prev = from->prev;
    to->next = from->next;
    unsigned where = slot_index(w, from->expires);
    struct brisk_timer_slot *sl = &w->slot[where / BRISK_TIMER_SLOTS][where % BRISK_TIMER_SLOTS];
    if (to->prev)
        to->prev->next = to;
    else
        sl->head = to;
    if (to->next)
        to->next->prev = to;
    else
        sl->tail = to;
    from->next = from->prev = NULL;
    from->seq = 0;
}

void brisk_timer_cancel(struct brisk_timer_wheel *w, struct brisk_timer *t)
{
    if (!brisk_timer_armed(t))
        return;
    unlink_timer(w, t);
    w->count--;
    w->stats.cancels++;
}

uint64_t brisk_timer_advance(struct brisk_timer_wheel *w, uint64_t now)
{
    if (w->advancing)
        return 0;
    if (now < w->now)
        now = w->now;
    w->advancing = 1;
    uint64_t fired = 0;
    for (;;) {
        uint64_t pt = tick_of(w->now);
        struct brisk_timer_slot *cur = &w->slot[0][pt & DIGIT_MASK];
        struct brisk_timer *t;
        /* The current slot's head is the earliest armed timer; callbacks may change the slot, so re-read. */
        while ((t = cur->head) != NULL && t->expires <= now) {
            unlink_timer(w, t);
            w->count--;
            w->stats.fires++;
            fired++;
            if (t->fn)
                t->fn(t, t->arg, now);
        }
        if (cur->head)
            break; /* the earliest timer is later in this tick, so after `now` */
        unsigned level = 0;
        while (level < BRISK_TIMER_LEVELS && !w->occupied[level])
            level++;
        if (level == BRISK_TIMER_LEVELS)
            break;
        unsigned s = low_bit(w->occupied[level]);
        uint64_t start = slot_start_tick(pt, level, s);
        if (start > tick_of(now))
            break; /* the next occupied slot begins after `now`: nothing else is due */
        w->now = start << BRISK_TIMER_TICK_SHIFT;
        if (level > 0)
            cascade(w, level, s);
    }
    /* Safe: the loop stopped because every remaining timer lies in a slot that starts after `now`, or later
     * in the current tick, so each keeps its placement relative to the new time. */
    w->now = now;
    w->advancing = 0;
    return fired;
}

uint64_t brisk_timer_next(const struct brisk_timer_wheel *w)
{
    if (!w->count)
        return BRISK_TIME_NONE;
    for (unsigned level = 0; level < BRISK_TIMER_LEVELS; level++) {
        if (!w->occupied[level])
            continue;
        unsigned s = low_bit(w->occupied[level]);
        if (level == 0)
            return w->slot[0][s].head->expires;
        return slot_start_tick(tick_of(w->now), level, s) << BRISK_TIMER_TICK_SHIFT;
    }
    return BRISK_TIME_NONE; /* not reached while count is consistent */
}

size_t brisk_timer_count(const struct brisk_timer_wheel *w)
{
    return w->count;
}

uint64_t brisk_timer_wheel_now(const struct brisk_timer_wheel *w)
{
    return w->now;
}

int brisk_timer_wheel_check(const struct brisk_timer_wheel *w)
{
    size_t n = 0;
    for (unsigned level = 0; level < BRISK_TIMER_LEVELS; level++) {
        for (unsigned s = 0; s < BRISK_TIMER_SLOTS; s++) {
            const struct brisk_timer_slot *sl = &w->slot[level][s];
            int bit = (int)((w->occupied[level] >> s) & 1);
            if (bit != (sl->head != NULL) || (sl->head == NULL) != (sl->tail == NULL))
                return -1;
            const struct brisk_timer *prev = NULL;
            for (const struct brisk_timer *t = sl->head; t; prev = t, t = t->next) {
                if (t->prev != prev)
                    return -2;
                if (t->seq == 0)
                    return -3; /* linked, yet marked not armed */
                if (slot_index(w, t->expires) != level * BRISK_TIMER_SLOTS + s)
                    return -4; /* unlinking would look for it elsewhere */
                if (level == 0 && prev && !timer_before(prev, t))
                    return -5;
                if (t->seq >= w->next_seq)
                    return -6;
                if (++n > w->count)
                    return -7;
            }
            if (sl->tail != prev)
                return -8;
        }
    }
    return n == w->count ? 0 : -7;
}
