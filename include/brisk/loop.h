/*
 * loop.h — brisk_loop, the real-time event loop that runs one brisk stack on one thread.
 *
 * The stack is sans-IO (brisk.h): it never waits and never reads a clock. The loop supplies both. It sleeps
 * in epoll_wait over the file descriptors that drivers and tools register (a TAP device, a signalfd, a tool's
 * own descriptors) plus one timerfd armed, with absolute CLOCK_MONOTONIC time, at the earliest of
 * brisk_stack_next_deadline() and the deadlines the registered hooks ask for. Time everywhere is
 * CLOCK_MONOTONIC in nanoseconds (brisk_loop_clock()), the `now` every brisk call takes.
 *
 * One iteration of brisk_loop_run():
 *   1. wait until a descriptor is ready or the earliest deadline passes (no wait if one already has);
 *   2. now = brisk_loop_clock();
 *   3. call the callback of every ready descriptor (a driver reads frames into brisk_stack_input, writes its
 *      backlog when the device is writable again, ...);
 *   4. call every hook (brisk_loop_add_hook) in registration order: drivers report TX completions here, tools
 *      run their own logic (start a connection, end a test after its duration, print a report);
 *   5. brisk_stack_poll(stack, now): deferred senders, due timers; socket callbacks (brisk_sock_set_callback)
 *      run inside 3, 4 and 5 as the stack delivers events;
 *   6. stop if brisk_loop_stop() was called, else go to 1, re-arming the timer if the earliest deadline is
 *      now earlier than the one it holds (a later one waits until the timer fires: one early wakeup rather
 *      than a timerfd_settime each time a deadline moves on).
 *
 * Shutdown: brisk_loop_stop() may be called from any callback, from a signal handler (it only stores to a
 * flag and writes to an eventfd, both async-signal-safe) or, for SIGINT / SIGTERM, by the loop itself after
 * brisk_loop_stop_on_signals(). brisk_loop_run() then returns after finishing the current iteration.
 *
 * The loop owns no stack and no device: the caller creates the stack, the loop, then the devices
 * (brisk_tap_open registers its descriptor and hook here), and frees them in reverse order after run returns:
 * brisk_stack_free, brisk_tap_close, brisk_loop_free. Nothing here is thread-safe except brisk_loop_stop().
 */
#ifndef BRISK_LOOP_H
#define BRISK_LOOP_H

#include "brisk/brisk.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct brisk_loop brisk_loop;

/* CLOCK_MONOTONIC in nanoseconds: the `now` for every brisk call made outside a loop callback. */
uint64_t brisk_loop_clock(void);

/* Creates a loop for stack `st` (which must outlive the loop's use: run, hooks, devices). Returns NULL with
 * *err = BRISK_ERR_INVAL (st NULL) or BRISK_ERR_NOMEM (allocation, or epoll / timerfd / eventfd creation
 * failed: errno tells which). */
brisk_loop *brisk_loop_new(brisk_stack *st, int *err);

/* Closes the loop's descriptors (epoll, timerfd, eventfd, signalfd) and frees it. Registered descriptors
 * belong to whoever registered them and are not closed. NULL is a no-op. */
void brisk_loop_free(brisk_loop *l);

brisk_stack *brisk_loop_stack(const brisk_loop *l);

/* The time at which the current iteration started (step 2 above), or the later time a callback set with
 * brisk_loop_update_now(): what callbacks should pass as `now`, and what every later callback, hook and the
 * poll of the iteration are given. Before the first iteration it is brisk_loop_clock() at brisk_loop_new().
 */
uint64_t brisk_loop_now(const brisk_loop *l);

/* Re-reads the clock from inside a callback that has spent time in system calls since the iteration began
 * (a driver that reads on after writing: the write may have let the peer run) and makes the result, never
 * less than before, brisk_loop_now(): the time the rest of the iteration (later callbacks, hooks, the
 * stack's poll) is given. Returns it. */
uint64_t brisk_loop_update_now(brisk_loop *l);

/* Readiness flags for descriptors (map to EPOLLIN / EPOLLOUT / EPOLLERR|EPOLLHUP). */
#define BRISK_LOOP_IN  0x1u
#define BRISK_LOOP_OUT 0x2u
#define BRISK_LOOP_ERR 0x4u /* reported whether asked for or not */

/* Called in step 3 with the flags that are ready. */
typedef void (*brisk_loop_fd_fn)(void *ctx, brisk_loop *l, int fd, unsigned ready, uint64_t now);

/* Watches `fd` (which the caller keeps open and non-blocking) for `events` (BRISK_LOOP_IN | BRISK_LOOP_OUT).
 * Level-triggered: the callback runs every iteration while the condition holds, so a callback that reads
 * only a budget of frames is called again next iteration without sleeping. Returns BRISK_OK,
 * BRISK_ERR_EXIST (fd already watched), BRISK_ERR_TOOMANY (more than 64 descriptors), BRISK_ERR_INVAL. */
int brisk_loop_watch_fd(brisk_loop *l, int fd, unsigned events, brisk_loop_fd_fn fn, void *ctx);
/* Changes the events watched on fd (e.g. add BRISK_LOOP_OUT while a write backlog exists). BRISK_ERR_NOENT
 * if fd is not watched. */
int brisk_loop_modify_fd(brisk_loop *l, int fd, unsigned events);
/* Stops watching fd (call before closing it). BRISK_ERR_NOENT if fd is not watched. */
int brisk_loop_unwatch_fd(brisk_loop *l, int fd);
/* The loop's own descriptors (epoll, timerfd, eventfd, signalfd) and every watched one, up to `max`, into
 * `out`; returns how many. For a fork's child, which inherits them with no thread to serve them, to close
 * (libbrisk_posix, docs/posix.md). */
int brisk_loop_fds(const brisk_loop *l, int *out, int max);

/* A hook runs once per iteration in step 4 and returns the next time it wants to run even if no descriptor
 * becomes ready: BRISK_TIME_NONE for "only when something happens", `now` (or earlier) for "at once again"
 * (the loop then does not sleep), or a future time (a test's end, a report interval, a delayed completion).
 */
typedef uint64_t (*brisk_loop_hook_fn)(void *ctx, brisk_loop *l, uint64_t now);

/* Adds a hook. Returns an id >= 0 for brisk_loop_remove_hook, or BRISK_ERR_TOOMANY (more than 16 hooks) /
 * BRISK_ERR_INVAL. A hook added from a callback first runs in the next iteration. */
int brisk_loop_add_hook(brisk_loop *l, brisk_loop_hook_fn fn, void *ctx);
/* Removes a hook (safe from inside any callback, including the hook itself). BRISK_ERR_NOENT if unknown. */
int brisk_loop_remove_hook(brisk_loop *l, int id);

/* Makes a hook run in the next iteration without sleeping (e.g. after a socket callback queued work for
 * it). Equivalent to the hook having returned `now`. BRISK_ERR_NOENT if unknown. */
int brisk_loop_wake_hook(brisk_loop *l, int id);

/* Runs iterations until brisk_loop_stop() or until `until` (absolute brisk_loop_clock() time;
 * BRISK_TIME_NONE = no limit) has passed. Returns BRISK_OK when stopped, BRISK_ERR_TIMEDOUT when `until`
 * passed first, or BRISK_ERR_INVAL (a system call failed: errno tells which). The stop flag is cleared on
 * return, so the loop can be run again. */
int brisk_loop_run(brisk_loop *l, uint64_t until);

/* Runs exactly one iteration, waiting at most `max_wait_ns` (0 = do not sleep) in step 1. Returns BRISK_OK,
 * or BRISK_ERR_INVAL (a system call failed). For embedding the loop inside another one. */
int brisk_loop_run_once(brisk_loop *l, uint64_t max_wait_ns);

/* Asks brisk_loop_run() to return after the current iteration. Async-signal-safe and thread-safe. */
void brisk_loop_stop(brisk_loop *l);

/* Nonzero once brisk_loop_stop() was called (or a signal from brisk_loop_stop_on_signals arrived) and run
 * has not returned yet; the number of the signal is in brisk_loop_signal(). */
int brisk_loop_stopping(const brisk_loop *l);

/* Blocks SIGINT and SIGTERM in the calling thread and watches them with a signalfd: either one stops the loop
 * (without a handler, without global state). Returns BRISK_OK or BRISK_ERR_INVAL (signalfd failed). */
int brisk_loop_stop_on_signals(brisk_loop *l);
/* The signal that stopped the loop, 0 if none. */
int brisk_loop_signal(const brisk_loop *l);

/* Busy polling, like SO_BUSY_POLL: when > 0, step 1 spins (epoll_wait with timeout 0) instead of sleeping
 * for `spin_ns` after the last iteration in which a descriptor was ready, and whenever the next deadline is
 * less than `spin_ns` away, trading a CPU for latency (rr tests with the peer on another CPU; with both ends
 * on one CPU the spin only competes with the peer). 0 (the default) always sleeps. */
void brisk_loop_set_busy_poll(brisk_loop *l, uint64_t spin_ns);

struct brisk_loop_stats {
    uint64_t iterations;    /* loop iterations run */
    uint64_t wakeups_fd;    /* iterations woken by a ready descriptor */
    uint64_t wakeups_timer; /* iterations woken by the timerfd */
    uint64_t polls;         /* brisk_stack_poll calls */
    uint64_t timer_arms;    /* timerfd_settime calls (only when the deadline moved earlier than armed) */
};
void brisk_loop_get_stats(const brisk_loop *l, struct brisk_loop_stats *out);

#ifdef __cplusplus
}
#endif
#endif
