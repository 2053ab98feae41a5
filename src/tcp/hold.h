/*
 * hold.h (internal) — why the transmit function stopped with data waiting (hold.c).
 *
 * The state a connection keeps: the reason in force (read per segment), when it began, and per reason how
 * many times it stopped the transmit function and how long it held data back.
 */
#ifndef BRISK_TCP_HOLD_H
#define BRISK_TCP_HOLD_H

#include <stdint.h>

#include "brisk/brisk.h"

struct tcp_hold {
    uint64_t since; /* when the reason in force began */
    /* Per reason, at index reason - 1 (BRISK_HOLD_NONE is never counted): times it stopped the transmit
     * function, and time it held data back. */
    uint64_t events[BRISK_HOLD_COUNT - 1];
    uint64_t ns[BRISK_HOLD_COUNT - 1];
    uint8_t reason; /* enum brisk_hold in force (NONE while sending or with nothing to send) */
};

/* Records why the transmit function stopped (BRISK_HOLD_NONE: it is not holding anything back). */
void tcp_hold(brisk_sock *c, int reason, uint64_t now);

#endif
