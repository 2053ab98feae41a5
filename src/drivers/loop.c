/*
 * loop.c — brisk_loop (loop.h): one thread, one stack, epoll + one timerfd.
 *
 * The stack says when it next needs the CPU (brisk_stack_next_deadline); hooks say when they do; devices say
 * when they have frames (their descriptors become readable). The loop sleeps in epoll_wait until the first of
 * those, with the deadline armed as an absolute CLOCK_MONOTONIC time on a timerfd, so wakeups are at
 * nanosecond resolution rather than epoll_wait's milliseconds. The timerfd is re-armed only when the wanted
 * deadline moves earlier than the armed one (arm_timer), so deadlines that keep moving later — an RTO
 * restarted by every ACK — cost no system call until the old time comes.
 *
 * Each iteration runs: ready descriptors' callbacks (frames in), hooks (TX completions, tool logic), then one
 * brisk_stack_poll — after the batch of input and completions, as brisk.h asks — so senders that a completion
 * released resume in the same iteration.
 *
 * Stopping is a flag plus an eventfd write: both are async-signal-safe, so brisk_loop_stop() can be called
 * from a signal handler or another thread and still interrupts a sleeping epoll_wait. For SIGINT / SIGTERM
 * the loop can instead own a signalfd, which needs no handler and no global state.
 *
 * Descriptor slots carry a generation number in the epoll cookie so that an event read in the same batch as
 * an unwatch (or an unwatch + watch reusing the slot) is recognized as stale and ignored.
 */
#define _GNU_SOURCE
#include "brisk/loop.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS    64
#define MAX_HOOKS  16
#define MAX_EVENTS 64

/* epoll cookies for the loop's own descriptors; watched descriptors use slot | generation << 8. */
#define TAG_TIMER  0xffff0001u
#define TAG_EVENT  0xffff0002u
#define TAG_SIGNAL 0xffff0003u

struct fd_slot {
    int fd;          /* -1 when free */
    unsigned events; /* BRISK_LOOP_IN | BRISK_LOOP_OUT */
    uint32_t gen;    /* bumped on every watch, see the cookie above */
    brisk_loop_fd_fn fn;
    void *ctx;
};

struct hook_slot {
    brisk_loop_hook_fn fn; /* NULL when free */
    void *ctx;
    uint64_t next; /* what the hook last asked for (0 after brisk_loop_wake_hook) */
    int fresh;     /* added during this iteration: first runs in the next one */
};

struct brisk_loop {
    brisk_stack *st;
    int epfd, tfd, efd, sfd;
    atomic_int stop;
    int signo;
    uint64_t now;
    uint64_t armed; /* absolute time the timerfd is set to, BRISK_TIME_NONE when disarmed */
    uint64_t spin_ns;
    uint64_t active; /* when a descriptor was last ready: busy polling spins for spin_ns after it */
    struct fd_slot fds[MAX_FDS];
    struct hook_slot hooks[MAX_HOOKS];
    struct brisk_loop_stats stats;
};

uint64_t brisk_loop_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * BRISK_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static int epoll_add(int epfd, int fd, uint32_t events, uint64_t cookie)
{
    struct epoll_event ev = {.events = events, .data.u64 = cookie};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

brisk_loop *brisk_loop_new(brisk_stack *st, int *err)
{
    int dummy;
    if (!err)
        err = &dummy;
    if (!st) {
        *err = BRISK_ERR_INVAL;
        return NULL;
    }
    brisk_loop *l = calloc(1, sizeof(*l));
    if (!l) {
        *err = BRISK_ERR_NOMEM;
        return NULL;
    }
    l->st = st;
    l->sfd = -1;
    l->armed = BRISK_TIME_NONE;
    atomic_init(&l->stop, 0);
    for (int i = 0; i < MAX_FDS; i++)
        l->fds[i].fd = -1;
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->epfd < 0 || l->tfd < 0 || l->efd < 0 || epoll_add(l->epfd, l->tfd, EPOLLIN, TAG_TIMER) < 0 ||
        epoll_add(l->epfd, l->efd, EPOLLIN, TAG_EVENT) < 0) {
        int e = errno;
        brisk_loop_free(l);
        errno = e;
        *err = BRISK_ERR_NOMEM;
        return NULL;
    }
    l->now = brisk_loop_clock();
    *err = BRISK_OK;
    return l;
}

void brisk_loop_free(brisk_loop *l)
{
    if (!l)
        return;
    if (l->epfd >= 0)
        close(l->epfd);
    if (l->tfd >= 0)
        close(l->tfd);
    if (l->efd >= 0)
        close(l->efd);
    if (l->sfd >= 0)
        close(l->sfd);
    free(l);
}

int brisk_loop_fds(const brisk_loop *l, int *out, int max)
{
    int n = 0;
    if (!l || !out)
        return 0;
    const int own[] = {l->epfd, l->tfd, l->efd, l->sfd};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (own[i] >= 0 && n < max)
            out[n++] = own[i];
    for (int i = 0; i < MAX_FDS; i++)
        if (l->fds[i].fd >= 0 && n < max)
            out[n++] = l->fds[i].fd;
    return n;
}

brisk_stack *brisk_loop_stack(const brisk_loop *l)
{
    return l ? l->st : NULL;
}

uint64_t brisk_loop_now(const brisk_loop *l)
{
    return l ? l->now : 0;
}

uint64_t brisk_loop_update_now(brisk_loop *l)
{
    if (!l)
        return 0;
    uint64_t now = brisk_loop_clock();
    if (now > l->now)
        l->now = now; /* never backwards, whatever the clock source does */
    return l->now;
}

static uint32_t epoll_events(unsigned events)
{
    return ((events & BRISK_LOOP_IN) ? EPOLLIN : 0u) | ((events & BRISK_LOOP_OUT) ? EPOLLOUT : 0u);
}

static struct fd_slot *find_fd(brisk_loop *l, int fd)
{
    for (int i = 0; i < MAX_FDS; i++)
        if (l->fds[i].fd == fd)
            return &l->fds[i];
    return NULL;
}

static uint64_t slot_cookie(const brisk_loop *l, const struct fd_slot *s)
{
    return (uint64_t)(s - l->fds) | (uint64_t)s->gen << 8;
}

int brisk_loop_watch_fd(brisk_loop *l, int fd, unsigned events, brisk_loop_fd_fn fn, void *ctx)
{
    if (!l || fd < 0 || !fn || (events & ~(BRISK_LOOP_IN | BRISK_LOOP_OUT)))
        return BRISK_ERR_INVAL;
    if (find_fd(l, fd))
        return BRISK_ERR_EXIST;
    struct fd_slot *s = find_fd(l, -1);
    if (!s)
        return BRISK_ERR_TOOMANY;
    s->gen++;
    if (epoll_add(l->epfd, fd, epoll_events(events), slot_cookie(l, s)) < 0)
        return BRISK_ERR_INVAL;
    s->fd = fd;
    s->events = events;
    s->fn = fn;
    s->ctx = ctx;
    return BRISK_OK;
}

int brisk_loop_modify_fd(brisk_loop *l, int fd, unsigned events)
{
    if (!l || fd < 0 || (events & ~(BRISK_LOOP_IN | BRISK_LOOP_OUT)))
        return BRISK_ERR_INVAL;
    struct fd_slot *s = find_fd(l, fd);
    if (!s)
        return BRISK_ERR_NOENT;
    if (s->events == events)
        return BRISK_OK;
    struct epoll_event ev = {.events = epoll_events(events), .data.u64 = slot_cookie(l, s)};
    if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
        return BRISK_ERR_INVAL;
    s->events = events;
    return BRISK_OK;
}

int brisk_loop_unwatch_fd(brisk_loop *l, int fd)
{
    if (!l || fd < 0)
        return BRISK_ERR_INVAL;
    struct fd_slot *s = find_fd(l, fd);
    if (!s)
        return BRISK_ERR_NOENT;
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
    s->fd = -1;
    s->fn = NULL;
    s->ctx = NULL;
    s->gen++; /* events of this batch for the old registration are now stale */
    return BRISK_OK;
}

int brisk_loop_add_hook(brisk_loop *l, brisk_loop_hook_fn fn, void *ctx)
{
    if (!l || !fn)
        return BRISK_ERR_INVAL;
    for (int i = 0; i < MAX_HOOKS; i++) {
        struct hook_slot *h = &l->hooks[i];
        if (h->fn)
            continue;
        h->fn = fn;
        h->ctx = ctx;
        h->next = 0; /* runs in the next iteration */
        h->fresh = 1;
        return i;
    }
    return BRISK_ERR_TOOMANY;
}

int brisk_loop_remove_hook(brisk_loop *l, int id)
{
    if (!l || id < 0 || id >= MAX_HOOKS || !l->hooks[id].fn)
        return BRISK_ERR_NOENT;
    memset(&l->hooks[id], 0, sizeof(l->hooks[id]));
    return BRISK_OK;
}

int brisk_loop_wake_hook(brisk_loop *l, int id)
{
    if (!l || id < 0 || id >= MAX_HOOKS || !l->hooks[id].fn)
        return BRISK_ERR_NOENT;
    l->hooks[id].next = 0;
    return BRISK_OK;
}

void brisk_loop_stop(brisk_loop *l)
{
    if (!l)
        return;
    atomic_store(&l->stop, 1);
    uint64_t one = 1;
    ssize_t n = write(l->efd, &one, sizeof(one)); /* wakes epoll_wait; overflow means already woken */
    (void)n;
}

int brisk_loop_stopping(const brisk_loop *l)
{
    return l ? atomic_load(&((brisk_loop *)l)->stop) : 0;
}

int brisk_loop_stop_on_signals(brisk_loop *l)
{
    if (!l)
        return BRISK_ERR_INVAL;
    if (l->sfd >= 0)
        return BRISK_OK;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
        return BRISK_ERR_INVAL;
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0)
        return BRISK_ERR_INVAL;
    if (epoll_add(l->epfd, fd, EPOLLIN, TAG_SIGNAL) < 0) {
        close(fd);
        return BRISK_ERR_INVAL;
    }
    l->sfd = fd;
    return BRISK_OK;
}

int brisk_loop_signal(const brisk_loop *l)
{
    return l ? l->signo : 0;
}

void brisk_loop_set_busy_poll(brisk_loop *l, uint64_t spin_ns)
{
    if (l)
        l->spin_ns = spin_ns;
}

void brisk_loop_get_stats(const brisk_loop *l, struct brisk_loop_stats *out)
{
    if (l && out)
        *out = l->stats;
}

/* The earliest time anything needs to run: the stack, a hook, or the caller's limit. */
static uint64_t next_deadline(const brisk_loop *l, uint64_t limit)
{
    uint64_t d = brisk_stack_next_deadline(l->st);
    for (int i = 0; i < MAX_HOOKS; i++)
        if (l->hooks[i].fn && l->hooks[i].next < d)
            d = l->hooks[i].next;
    return limit < d ? limit : d;
}

/* Points the timerfd at `when` (absolute) if that is earlier than what it holds. A deadline that moved later
 * (an RTO restarted by every ACK, a delayed ACK that a reply carried instead) leaves the timer where it is:
 * it fires early, the iteration finds nothing due, and only then is the timer set to the later time. That
 * is one spurious wakeup per armed time instead of one timerfd_settime per move, and the wakeup never comes
 * late. Nothing to wait for leaves an armed timer armed for the same reason. */
static int arm_timer(brisk_loop *l, uint64_t when)
{
    if (when >= l->armed)
        return 0;
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    if (when != BRISK_TIME_NONE) {
        its.it_value.tv_sec = (time_t)(when / BRISK_NSEC_PER_SEC);
        its.it_value.tv_nsec = (long)(when % BRISK_NSEC_PER_SEC);
        if (when == 0)
            its.it_value.tv_nsec = 1; /* all-zero would disarm */
    }
    if (timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        return -1;
    l->armed = when;
    l->stats.timer_arms++;
    return 0;
}

static void drain(int fd)
{
    uint64_t v;
    while (read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
        ;
}

static void on_signal(brisk_loop *l)
{
    struct signalfd_siginfo si;
    while (read(l->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        l->signo = (int)si.ssi_signo;
        atomic_store(&l->stop, 1);
    }
}

/* One iteration; `limit` is the absolute time after which it must not sleep. */
static int iterate(brisk_loop *l, uint64_t limit)
{
    uint64_t now = brisk_loop_clock();
    uint64_t deadline = next_deadline(l, limit);
    int timeout = -1;
    if (atomic_load(&l->stop) || deadline <= now || (l->spin_ns && deadline - now < l->spin_ns) ||
        (l->spin_ns && now - l->active < l->spin_ns)) {
        timeout = 0;
    } else if (arm_timer(l, deadline) < 0) {
        return BRISK_ERR_INVAL;
    }

    struct epoll_event evs[MAX_EVENTS];
    int n = epoll_wait(l->epfd, evs, MAX_EVENTS, timeout);
    if (n < 0) {
        if (errno != EINTR)
            return BRISK_ERR_INVAL;
        n = 0;
    }
    now = brisk_loop_clock();
    if (now < l->now)
        now = l->now; /* never backwards, whatever the clock source does */
    l->now = now;
    l->stats.iterations++;

    int any_fd = 0;
    for (int i = 0; i < n; i++) {
        uint64_t c = evs[i].data.u64;
        if (c == TAG_TIMER) {
            drain(l->tfd);
            l->armed = BRISK_TIME_NONE; /* one-shot: it fired */
            l->stats.wakeups_timer++;
            continue;
        }
        if (c == TAG_EVENT) {
            drain(l->efd);
            continue;
        }
        if (c == TAG_SIGNAL) {
            on_signal(l);
            continue;
        }
        struct fd_slot *s = &l->fds[c & 0xff];
        if ((c & 0xff) >= MAX_FDS || s->fd < 0 || s->gen != (uint32_t)(c >> 8))
            continue; /* unwatched earlier in this batch */
        unsigned ready = 0;
        if (evs[i].events & EPOLLIN)
            ready |= BRISK_LOOP_IN;
        if (evs[i].events & EPOLLOUT)
            ready |= BRISK_LOOP_OUT;
        if (evs[i].events & (EPOLLERR | EPOLLHUP))
            ready |= BRISK_LOOP_ERR;
        any_fd = 1;
        s->fn(s->ctx, l, s->fd, ready, l->now); /* an earlier callback may have moved it on */
    }
    if (any_fd) {
        l->stats.wakeups_fd++;
        l->active = l->now;
    }

    for (int i = 0; i < MAX_HOOKS; i++) {
        struct hook_slot *h = &l->hooks[i];
        if (!h->fn)
            continue;
        if (h->fresh) {
            h->fresh = 0;
            continue;
        }
        h->next = BRISK_TIME_NONE; /* a wake from inside the hook (or a callback it triggers) survives */
        uint64_t want = h->fn(h->ctx, l, l->now); /* as moved on by a callback (brisk_loop_update_now) */
        if (h->fn && want < h->next)
            h->next = want;
    }

    brisk_stack_poll(l->st, l->now);
    l->stats.polls++;
    return BRISK_OK;
}

int brisk_loop_run(brisk_loop *l, uint64_t until)
{
    if (!l)
        return BRISK_ERR_INVAL;
    int rc = BRISK_OK;
    for (;;) {
        if (atomic_load(&l->stop))
            break;
        if (until != BRISK_TIME_NONE && brisk_loop_clock() >= until) {
            rc = BRISK_ERR_TIMEDOUT;
            break;
        }
        rc = iterate(l, until);
        if (rc != BRISK_OK)
            break;
    }
    atomic_store(&l->stop, 0);
    return rc;
}

int brisk_loop_run_once(brisk_loop *l, uint64_t max_wait_ns)
{
    if (!l)
        return BRISK_ERR_INVAL;
    uint64_t now = brisk_loop_clock();
    uint64_t limit = max_wait_ns >= BRISK_TIME_NONE - now ? BRISK_TIME_NONE : now + max_wait_ns;
    return iterate(l, limit);
}
