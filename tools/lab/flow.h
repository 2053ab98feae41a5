/*
 * flow.h — one simulated bulk transfer between host a (client, 10.0.0.1 / 2001:db8::1) and host b (server,
 * 10.0.0.2 / 2001:db8::2): build
 * the world, run the transfer, return the figures. Shared by the scenarios that run flows (bulk, and the seed
 * comparisons that run the same path once per profile).
 */
#ifndef BRISK_LAB_FLOW_H
#define BRISK_LAB_FLOW_H

#include "brisk/sim.h"

struct lab_run;
struct lab_obs;

/*
 * The lab's address plan. Every host has IPv4 10.0.X.Y (one link: 10.0.0.1 and 10.0.0.2; a topology's link i:
 * 10.0.(i + 1).1 and .2); with family 6 it also has 2001:db8:0:X::Y/64 (the documentation prefix, RFC 3849)
 * on the same NIC, as a dual-stack host, and the scenario's flows and echoes address its IPv6 one.
 */
/* The address of the node at v4 in the family (4: v4 itself; 6: 2001:db8:0:X::Y). */
struct brisk_addr lab_addr(int family, uint32_t v4);
/* With family 6, gives the host NIC at port p its IPv6 address (lab_addr of v4, /64); nothing with 4.
 * Returns 0, or nonzero after a message (IPv6 off: --set ipv6=0, or an MTU below 1280). */
int lab_nic_family(brisk_sim_port *p, int family, uint32_t v4);
/* An address as it stands before ":port": IPv4 dotted, IPv6 in brackets (RFC 3986 §3.2.2). buf holds at
 * least BRISK_ADDR_STRLEN + 2 bytes; returns it. */
char *lab_addr_text(const struct brisk_addr *a, char *buf);

/*
 * Throughput over time: every `every_ns` of virtual time the sampler reads how many bytes the application
 * has delivered so far (bytes(ctx)) and records the rate over the last interval, until done(ctx). Samples
 * live in growing arrays (a tool, not the stack: allocating here is fine); when memory runs out it stops
 * sampling and keeps what it has.
 */
struct lab_timeline {
    uint64_t every_ns;
    uint64_t (*bytes)(void *ctx);
    int (*done)(void *ctx);
    void *ctx;
    brisk_sim_world *w;
    uint64_t last_bytes;
    double *t_ms, *mbps; /* sample time (ms of virtual time) and Mbit/s over the interval ending there */
    double *kbytes;      /* KB delivered by the sample time (cumulative) */
    size_t n, cap;
};

/* Schedules the first sample one interval from now. Returns 0, or nonzero (every_ns 0, no event). */
int lab_timeline_start(struct lab_timeline *tl, brisk_sim_world *w);
void lab_timeline_free(struct lab_timeline *tl);

struct lab_flow {
    uint64_t rate_bps, rtt_ns, bytes, seed;
    int family;                     /* 4 (0 too) or 6: which of b's addresses a connects to */
    enum brisk_sim_bulk_dir dir;    /* 0 = BRISK_SIM_BULK_UP */
    uint32_t write_size;            /* bytes per send(); 0 = the application's default */
    struct brisk_sim_txc txc;       /* host a's NIC completion model */
    uint32_t tx_ring;               /* host a's NIC descriptors */
    uint32_t gso_max;               /* host a's NIC segments super-frames up to this size (GSO + checksum
                                       offload, as a TSO NIC); 0 = MTU-sized frames only */
    struct brisk_sim_impair impair; /* applied to both link directions (BURST: see flow.c) */
    uint64_t limit_ns;              /* give up after this much virtual time; 0 = one hour */
    /* Optional: called once the world and the transfer exist, before it runs (captures, samplers).
     * Returns 0, or nonzero to abort the run. */
    int (*prepare)(void *ctx, brisk_sim_world *w, brisk_sim_port *a, brisk_sim_bulk *bulk);
    void *ctx;
    /* Optional: sample the bytes the receivers read every timeline->every_ns (the flow sets bytes, done,
     * ctx and w; the caller frees the samples with lab_timeline_free). */
    struct lab_timeline *timeline;
    const char *what; /* the scenario, for progress lines on stderr (NULL: "flow") */
    /* Optional: look at the flow as the run asks (obs.h: ss lines, time-sequence graph); the result's obs
     * then holds it for lab_obs_report (the caller frees it with lab_obs_free). */
    const struct lab_run *observe;
};

struct lab_flow_result {
    int finished;    /* the run ended before the limit: the transfer completed or failed */
    int interrupted; /* a signal stopped the run (SIGINT, SIGTERM: watch.h); the figures are partial */
    int complete; /* every byte arrived and both sides saw the FIN, without a socket error */
    int correct;  /* every byte received so far equals the one sent (a partial transfer can be correct) */
    int hash_ok;  /* complete and correct */
    uint64_t expected;  /* bytes the receivers were to read (both directions together) */
    uint64_t delivered; /* bytes they read */
    double goodput_bps; /* per direction: bytes delivered over connection established to last byte read
                           (0 when no byte was delivered) */
    uint64_t elapsed_ns;
    uint64_t span_ns;                  /* connection established to last byte read */
    struct brisk_sim_bulk_result bulk; /* both sides: bytes, errors, brisk_conn_info */
    struct brisk_conn_info sender;     /* host a's connection at the end (hold reasons, TSQ budget, RTT) */
    struct brisk_counters counters;    /* host a's stack */
    struct lab_obs *obs;               /* with lab_flow.observe (NULL otherwise, or out of memory) */
};

/* Runs the flow; host a uses settings `a`, host b `b` (NULL: defaults). Returns 0, or nonzero after a
 * message on stderr. */
int lab_flow_run(const struct lab_flow *f, const struct brisk_settings *a, const struct brisk_settings *b,
                 struct lab_flow_result *out);

#endif
