/*
 * watch.c — progress and interruption of long runs (watch.h).
 *
 * The signal handler only records the signal (an async-signal-safe store); the simulator notices it at its
 * next event through lab_watch_done, so a run stops between two events with every structure consistent and
 * the scenario goes on to report. The flag is the tool's, not the libraries' (they keep no global state).
 */
#include "lab/watch.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#define CHECK_EVERY 4096u /* simulator events between two looks at the wall clock */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

void lab_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int lab_signalled(void)
{
    return stop_signal;
}

static int later(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

void lab_watch_init(struct lab_watch *wt, brisk_sim_world *w, const char *what, int (*done)(void *ctx),
                    void *ctx, void (*describe)(void *ctx, char *buf, size_t n))
{
    memset(wt, 0, sizeof(*wt));
    wt->done = done;
    wt->ctx = ctx;
    wt->describe = describe;
    wt->what = what;
    wt->w = w;
    clock_gettime(CLOCK_MONOTONIC, &wt->next);
    wt->next.tv_sec += 2;
}

int lab_watch_done(void *p)
{
    struct lab_watch *wt = p;
    if (wt->each)
        wt->each(wt->each_ctx);
    if (stop_signal) {
        wt->interrupted = 1;
        return 1;
    }
    if (wt->done(wt->ctx))
        return 1;
    if (++wt->calls % CHECK_EVERY)
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!later(&now, &wt->next))
        return 0;
    char how[160] = "";
    if (wt->describe)
        wt->describe(wt->ctx, how, sizeof(how));
    fprintf(stderr, "\rbrisk-lab %s: %.3f s of virtual time%s%s   ", wt->what,
            (double)brisk_sim_now(wt->w) / 1e9, how[0] ? ", " : "", how);
    fflush(stderr);
    wt->reported = 1;
    wt->next = now;
    wt->next.tv_sec += 1;
    return 0;
}

void lab_watch_end(struct lab_watch *wt)
{
    if (wt->reported)
        fputc('\n', stderr);
    wt->reported = 0;
}
