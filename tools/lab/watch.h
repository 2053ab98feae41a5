/*
 * watch.h — long runs seen from outside: progress on stderr once a run has taken two seconds of wall-clock
 * time, and SIGINT / SIGTERM stopping the run so that its scenario reports what it has (partial figures,
 * marked as such) instead of dying silently.
 *
 * A scenario hands brisk_sim_run_while lab_watch_done with a struct lab_watch that wraps its own predicate.
 * The watch reads the wall clock only every few thousand simulator events and prints nothing for a run that
 * ends within two seconds, so it changes neither the simulation (virtual time, every figure, the pcap) nor
 * the output of short runs.
 */
#ifndef BRISK_LAB_WATCH_H
#define BRISK_LAB_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "brisk/sim.h"

struct lab_watch {
    int (*done)(void *ctx); /* the run's own predicate */
    void *ctx;
    /* Optional: one line on how far the run got ("3.2 GB of 10 GB delivered"). */
    void (*describe)(void *ctx, char *buf, size_t n);
    const char *what; /* the scenario's name, for the progress line */
    brisk_sim_world *w;
    struct timespec next; /* the next progress report (the first one two seconds after the start) */
    uint32_t calls;
    int reported;    /* a progress line is on stderr (lab_watch_end finishes it) */
    int interrupted; /* the run stopped because of a signal */
    /* Optional: called after every simulator event, before the predicate (obs.c reads the senders' hold
     * reasons there). It must only read the world. */
    void (*each)(void *ctx);
    void *each_ctx;
};

void lab_watch_init(struct lab_watch *wt, brisk_sim_world *w, const char *what, int (*done)(void *ctx),
                    void *ctx, void (*describe)(void *ctx, char *buf, size_t n));
/* The predicate for brisk_sim_run_while: the run's own, or a signal arrived (then wt->interrupted). */
int lab_watch_done(void *wt);
/* After the run: ends the progress line, if one was printed. */
void lab_watch_end(struct lab_watch *wt);

/* SIGINT and SIGTERM stop the running simulation (lab_watch_done) rather than the process. */
void lab_signals_install(void);
/* The signal that asked the runs to stop, or 0. */
int lab_signalled(void);

#endif
