/*
 * flow.h — one simulated bulk flow from host a to host b, for scenarios that compare settings (profiles) on
 * the same path: build the world, run the transfer, return the figures.
 */
#ifndef BRISK_LAB_FLOW_H
#define BRISK_LAB_FLOW_H

#include "brisk/sim.h"

struct lab_flow {
    uint64_t rate_bps, rtt_ns, bytes, seed;
    struct brisk_sim_txc txc; /* the sender NIC's completion model */
    uint32_t tx_ring;         /* sender NIC descriptors */
};

struct lab_flow_result {
    int hash_ok;
    double goodput_bps; /* connection established to last byte read */
    uint64_t elapsed_ns;
    struct brisk_conn_info sender;  /* hold reasons, TSQ budget, RTT at the end */
    struct brisk_counters counters; /* the sender stack's */
};

/* Runs the flow with the sender's settings `s` (the receiver uses defaults). Returns 0, or nonzero after a
 * message on stderr. */
int lab_flow_run(const struct lab_flow *f, const struct brisk_settings *s, struct lab_flow_result *out);

#endif
