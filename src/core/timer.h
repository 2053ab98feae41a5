/*
 * timer.h — the hierarchical timer wheel: one per stack, intrusive timers embedded in their owners.
 *
 * Keys are uint64 nanoseconds on the caller's monotonic clock; the wheel never reads a clock. A timer is
 * armed for an absolute expiry, fires from brisk_timer_advance() once the wheel's time reaches it, and is
 * then no longer armed. Firing order is exactly (expires, arm sequence): the order a priority queue would
 * give. See timer.c for the design; this header is the contract.
 */
#ifndef BRISK_CORE_TIMER_H
#define BRISK_CORE_TIMER_H

#include <stddef.h>
#include <stdint.h>

#include "brisk/brisk.h"

/* Geometry. The finest level resolves 1024 ns ("ticks"); each level has 64 slots and covers 6 more bits of
 * the tick, so 9 levels cover the 54 tick bits of a uint64 nanosecond time. */
#define BRISK_TIMER_TICK_SHIFT 10
#define BRISK_TIMER_LEVEL_BITS 6
#define BRISK_TIMER_SLOTS      64
#define BRISK_TIMER_LEVELS     9

struct brisk_timer;

/* Called from brisk_timer_advance() with the timer already disarmed, so it may re-arm itself. `now` is the
 * time passed to advance (or the wheel's time if that was smaller). The callback may arm and cancel any timer
 * of the same wheel, but must not call brisk_timer_advance() (such a call returns 0 and does nothing). */
typedef void (*brisk_timer_fn)(struct brisk_timer *t, void *arg, uint64_t now);

/* 48 bytes. The slot a timer sits in is not stored: it is a function of its expiry and the wheel's time (see
 * timer.c), so a connection's five timers cost no more than they must. */
struct brisk_timer {
    struct brisk_timer *next, *prev; /* slot list links (private) */
    uint64_t expires;                /* ns; valid while armed */
    uint64_t seq;                    /* arm order, breaks ties; 0 = not armed (private) */
    brisk_timer_fn fn;               /* callback; may be NULL (the timer then only counts as fired) */
    void *arg;                       /* passed to fn */
};

struct brisk_timer_stats {
    uint64_t arms;     /* brisk_timer_arm calls, re-arms included */
    uint64_t cancels;  /* brisk_timer_cancel calls that found the timer armed */
    uint64_t fires;    /* callbacks run by brisk_timer_advance */
    uint64_t cascades; /* timers moved from a coarse level down to a finer one */
};

/* One slot: a doubly linked list of timers (sorted by (expires, seq) on level 0, arm order elsewhere). */
struct brisk_timer_slot {
    struct brisk_timer *head, *tail;
};

/* The wheel. All fields are private except `stats`; it holds no pointers to outside memory besides the armed
 * timers themselves, so it may be embedded anywhere (about 9 KB). */
struct brisk_timer_wheel {
    uint64_t now;                          /* the wheel's time: every placement is relative to it */
    uint64_t next_seq;                     /* arm sequence for the next brisk_timer_arm (from 1) */
    size_t count;                          /* armed timers */
    int advancing;                         /* inside brisk_timer_advance (re-entry guard) */
    uint64_t occupied[BRISK_TIMER_LEVELS]; /* bit s set <=> slot[level][s] is non-empty */
    struct brisk_timer_slot slot[BRISK_TIMER_LEVELS][BRISK_TIMER_SLOTS];
    struct brisk_timer_stats stats; /* operation counts, a benchmark figure */
};

/* Initialises an empty wheel whose time is `now`. */
void brisk_timer_wheel_init(struct brisk_timer_wheel *w, uint64_t now);

/* Initialises a timer as not armed. Must be called once before the first arm. */
void brisk_timer_init(struct brisk_timer *t, brisk_timer_fn fn, void *arg);

/* Arms `t` to fire at `expires` (ns), first disarming it if it was armed; the timer then ranks after every
 * timer armed before it for the same expiry. An expiry at or before the wheel's time fires at the next
 * brisk_timer_advance() (within the current one when called from a callback). O(1) (see timer.c for the one
 * exception: many timers within the same 1 µs armed out of order). */
void brisk_timer_arm(struct brisk_timer_wheel *w, struct brisk_timer *t, uint64_t expires);

/* Moves the armed timer `from` into `to` (initialised, not armed) where it stands: same expiry, same rank
 * among timers of that expiry, no arm or cancel counted; `to` keeps its own callback. `from` is left not
 * armed. For an object that hands its pending deadline to a smaller successor (TCP's TIME-WAIT record). */
void brisk_timer_move(struct brisk_timer_wheel *w, struct brisk_timer *to, struct brisk_timer *from);

/* Disarms `t`; a no-op if it is not armed. O(1). */
void brisk_timer_cancel(struct brisk_timer_wheel *w, struct brisk_timer *t);

/* Non-zero while `t` is armed. */
static inline int brisk_timer_armed(const struct brisk_timer *t)
{
    return t->seq != 0;
}

/* Moves the wheel's time to `now` (a smaller `now` counts as the wheel's current time) and fires, one at a
 * time, every timer whose expiry is <= now, in (expires, arm sequence) order — including timers the callbacks
 * arm for <= now. Returns the number of callbacks run (0 when called from inside a callback). */
uint64_t brisk_timer_advance(struct brisk_timer_wheel *w, uint64_t now);

/* A time at or before the earliest armed expiry, BRISK_TIME_NONE when nothing is armed: exactly the earliest
 * expiry when that timer sits in the finest level (always when it is overdue or lies in the same aligned
 * 65.536 µs block as the wheel's time), otherwise the start of the earliest non-empty coarse slot; advancing
 * to that time makes the answer exact or moves it later. O(levels). A timer armed for BRISK_TIME_NONE itself
 * is indistinguishable from "nothing armed" here (it still fires when advanced to UINT64_MAX). */
uint64_t brisk_timer_next(const struct brisk_timer_wheel *w);

/* Number of armed timers. */
size_t brisk_timer_count(const struct brisk_timer_wheel *w);

/* The wheel's time: the largest `now` it was initialised or advanced with. */
uint64_t brisk_timer_wheel_now(const struct brisk_timer_wheel *w);

/* Checks the wheel's internal invariants (list links, occupancy bits, placement of each timer relative to the
 * wheel's time, order within finest-level slots, count). O(armed timers): for tests and debugging. Returns 0
 * when consistent, or a negative number identifying the first broken invariant. */
int brisk_timer_wheel_check(const struct brisk_timer_wheel *w);

#endif
