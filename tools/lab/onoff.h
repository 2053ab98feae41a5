/*
 * onoff.h — an on/off source between two simulated hosts: the client connects at its start time, then
 * alternates an ON period (writing as fast as its socket takes the bytes, until `burst` bytes are written
 * and / or `on` has passed) and an OFF period (idle for `off`), `cycles` times. A burst is complete when the
 * server has read its last byte; the OFF period starts then. Each burst's time is its first write -> its
 * last byte read by the server. The classic source for what happens at the start of a burst after idle:
 * restart after idle (tcp_slow_start_after_idle), TSQ and auto-corking at a burst's first writes, pacing
 * from a cwnd that was kept or reset.
 */
#ifndef BRISK_LAB_ONOFF_H
#define BRISK_LAB_ONOFF_H

#include "brisk/sim.h"

struct lab_onoff_config {
    uint64_t burst;    /* bytes per ON period (0: bounded by on_ns alone) */
    uint64_t on_ns;    /* the ON period's length (0: bounded by burst alone); at least one of the two */
    uint64_t off_ns;   /* idle between a burst's completion and the next burst's first write */
    uint32_t cycles;   /* bursts (1 ... 1000000) */
    uint64_t start_ns; /* virtual time of the connect */
    uint16_t port;     /* the server's (0: 7001) */
};

struct lab_onoff_result {
    int ok;              /* every burst completed without a socket error (and the run was not cut off) */
    uint32_t done;       /* bursts completed */
    uint64_t delivered;  /* bytes the server read */
    uint64_t on_ns;      /* the completed bursts' times, summed */
    uint64_t first_ns;   /* the first burst's time (a fresh connection's: no idle before it); 0 if none */
    const uint64_t *lat; /* the completed bursts' times, sorted (done of them; owned by the source) */
    const uint32_t *cwnd; /* the sender's cwnd (bytes) just after each burst's first write, sorted */
    struct brisk_conn_info client; /* the sender's connection (its hold reasons), at the end */
};

typedef struct lab_onoff lab_onoff;
/* Schedules the connect at c->start_ns (and listens on the server now). NULL: out of memory, a bad
 * configuration, or a socket the settings do not allow. */
lab_onoff *lab_onoff_start(brisk_sim_world *w, brisk_sim_host *client, brisk_sim_host *server,
                           const struct brisk_addr *server_addr,
                           const struct lab_onoff_config *c);
int lab_onoff_done(const lab_onoff *x);           /* every burst completed, or the source failed */
uint64_t lab_onoff_delivered(const lab_onoff *x); /* bytes the server has read so far */
void lab_onoff_result(lab_onoff *x, int interrupted, struct lab_onoff_result *out);
void lab_onoff_free(lab_onoff *x, uint64_t now); /* before the world; aborts what is open */

#endif
