/*
 * cc_cubic.h — the state CUBIC (cc_cubic.c) keeps in each connection, in the private area of its
 * congestion-control state (struct brisk_cc_state.priv, cc.h): a union member, so that the per-ACK code works
 * on it in place. A copy in and out of a byte array costs a store-to-load forwarding stall per ACK (the copy
 * back reloads as 16-byte vectors what the ACK's code had just stored as 8-byte fields).
 */
#ifndef BRISK_TCP_CC_CUBIC_H
#define BRISK_TCP_CC_CUBIC_H

#include <stdint.h>

#include "tcp/hystart.h"

struct brisk_cubic_saved { /* what on_undo restores */
    uint64_t k, t_epoch, w_est;
    uint32_t cwnd, ssthresh, w_max, cwnd_prior, cwnd_epoch;
    uint8_t epoch, hystart_phase, valid;
};

struct brisk_cubic {
    /* First: on_ack never reads or writes it, and it is what the connection keeps in a cold cache line
     * (cc.h, tcp.h). */
    struct brisk_cubic_saved saved;
    struct brisk_hystart hs;    /* HyStart++ of the initial slow start */
    uint64_t t_epoch;           /* ns: start of the epoch, moved later by application-limited time */
    uint64_t k;                 /* ns: K of the epoch */
    uint64_t srtt;              /* ns: smoothed RTT for W_cubic(t + RTT), 0 = no sample */
    uint64_t app_limited_since; /* ns: when the current application-limited period began */
    uint64_t w_est;             /* bytes << WEST_SHIFT: the Reno-friendly window estimate */
    uint32_t w_max;             /* bytes: RFC 9438 W_max, 0 = none */
    uint32_t cwnd_prior;        /* bytes: cwnd before the last reduction */
    uint32_t cwnd_epoch;        /* bytes: cwnd when the epoch began */
    uint8_t epoch;              /* an epoch is running (t_epoch, k, cwnd_epoch, w_est valid) */
    uint8_t app_limited;        /* the sender is application-limited since app_limited_since */
};
#endif
