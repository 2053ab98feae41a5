/*
 * stack.h — the stack instance, private to the library. Everything a stack owns hangs off this struct; there
 * is no other state, so any number of stacks live side by side in one process.
 */
#ifndef BRISK_CORE_STACK_H
#define BRISK_CORE_STACK_H

#include "brisk/brisk.h"
#include "brisk/netdev.h"
#include "core/pktbuf.h"
#include "core/rand.h"
#include "core/timer.h"
#include "net/bql.h"
#include "net/neigh.h"

#define BRISK_MAX_NETDEVS 8

struct brisk_tcp;

struct brisk_netdev {
    brisk_stack *st;                /* owner */
    struct brisk_netdev_config cfg; /* as registered */
    uint32_t mask;                  /* netmask of cfg.prefix_len, host order */
    const struct brisk_netdev_ops *ops;
    void *driver;
    struct brisk_netdev_stats stats;
    struct brisk_bql bql;  /* byte queue limits, when bql_on */
    uint64_t speed_bps;    /* link speed, 0 = unknown */
    uint64_t wire_ns_fp;   /* ns per byte on the wire at that speed, in units of 2^-16 ns */
    uint64_t wire_free_at; /* when the frames handed over so far should all have left the wire */
    uint8_t bql_on;
    uint8_t xoff;      /* stopped by BQL until a completion brings the ring under its limit */
    uint8_t drv_xoff;  /* stopped by the driver (brisk_netdev_stop_queue) until it wakes the queue */
    uint8_t busy_xoff; /* xmit refused a packet (BRISK_ERR_BUSY): stopped until the next completion */
};

struct brisk_stack {
    struct brisk_settings s;        /* copied at creation */
    struct brisk_counters c;        /* event counters (timer counts come from the wheel) */
    struct brisk_pktpool pool;      /* every packet buffer */
    struct brisk_timer_wheel wheel; /* every timer */
    struct brisk_rand rand;         /* seeded from s.seed */
    uint64_t now;                   /* latest time seen by an entry point */

    brisk_netdev devs[BRISK_MAX_NETDEVS];
    uint32_t ndevs;
    uint32_t gateway; /* default gateway, 0 = none */

    struct brisk_neigh_table neigh; /* ARP cache */
    struct brisk_gro *gro;          /* receive coalescing's open runs (net/gro.c) */
    struct brisk_ipfrag *ipfrag;    /* IPv4 reassembly (net/ipfrag.c) */
    struct brisk_tcp *tcp;          /* TCP: connection tables, buffer memory, pending events */
    uint8_t tx_wake_wanted;         /* a sender was refused (device busy, no buffer): wake it on completion */
    uint8_t tx_wake;                /* a completion came since: poll runs the refused senders now */

    struct {
        uint16_t next_id; /* IPv4 identification counter */
    } ip;

    struct {
        brisk_echo_fn echo_fn; /* echo-reply callback (tools) */
        void *echo_ctx;
        uint64_t tokens_ns; /* error rate limit bucket, in ns of credit */
        uint64_t tokens_at; /* time the bucket was last refilled */
    } icmp;
};

/* Every field of s within bounds: BRISK_OK or BRISK_ERR_RANGE. (settings.c) */
int brisk_settings_check(const struct brisk_settings *s);

/* Advances the stack's notion of time (never backwards) and returns it. */
static inline uint64_t brisk_stack_clock(brisk_stack *st, uint64_t now)
{
    if (now > st->now)
        st->now = now;
    return st->now;
}

/* One received frame through Ethernet, ARP / IPv4 and up, counted (the body of brisk_stack_input_flags,
 * arguments checked and clock advanced by the caller; socket events are left for the caller to deliver). */
void brisk_stack_rx_one(brisk_stack *st, brisk_netdev *dev, const uint8_t *frame, size_t len, unsigned flags,
                        uint64_t now);

/* Receive coalescing (net/gro.c): its state, allocated with the stack; a batch of frames (arguments checked
 * by brisk_stack_input_batch). */
int brisk_gro_init(brisk_stack *st);
void brisk_gro_destroy(brisk_stack *st);
void brisk_gro_receive(brisk_stack *st, brisk_netdev *dev, const struct brisk_rx_frame *frames, size_t n,
                       uint64_t now);

#endif
