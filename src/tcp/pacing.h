/*
 * pacing.h (internal) — the pacing rate, each packet's earliest departure time, and the pacing hold
 * (pacing.c has the mechanism's essay and the timer).
 *
 * Like every mechanism header of src/tcp, it has two parts: the state and interface struct brisk_sock
 * needs (first), and the inline fast paths, which need struct brisk_sock complete (second, emitted once
 * tcp.h has defined it: tcp.h includes every mechanism header again at its end).
 */
#ifndef BRISK_TCP_PACING_H
#define BRISK_TCP_PACING_H

#include <stdint.h>

#include "brisk/brisk.h"
#include "core/timer.h"
#include "wire/tcp.h"

struct tcp_pace {
    uint64_t next; /* earliest departure time of the next packet (EDT), ns */
};

/* The pacing timer (struct brisk_sock.timer.pace) fired: the departure time came. */
void tcp_pace_fired(struct brisk_timer *t, void *arg, uint64_t now);

#endif

#if defined(BRISK_TCP_SOCK_COMPLETE) && !defined(BRISK_TCP_PACING_INLINE)
#define BRISK_TCP_PACING_INLINE

/* The pacing rate in bytes/s: the window (or the flight, if larger) per SRTT, scaled by the slow start or
 * congestion avoidance ratio; UINT64_MAX without an RTT. Inline: every segment sent asks it (the departure
 * time), and every TSQ budget and TSO size. */
static inline uint64_t tcp_pacing_rate(const brisk_sock *c)
{
    uint64_t srtt = brisk_rtt_srtt(&c->rtt);
    if (srtt == 0)
        return UINT64_MAX; /* no RTT yet: no rate-derived bound */
    const struct brisk_settings *s = &c->net->s;
    uint64_t w = c->cc.cwnd > tcp_flight(c) ? c->cc.cwnd : tcp_flight(c);
    uint32_t ratio = c->cc.cwnd < c->cc.ssthresh / 2 ? s->tcp_pacing_ss_ratio : s->tcp_pacing_ca_ratio;
    /* bytes/s = w * 1e9 / srtt_ns * ratio / 100, without overflow for any realistic w. */
    return tcp_muldiv((uint64_t)w * ratio, BRISK_NSEC_PER_SEC, 100u * srtt);
}

/* `len` bytes just went: the next packet's earliest departure time (pacing.c's essay: EDT, no banking of
 * idle time, the catch-up allowance for a late timer). Both ways new data leaves call it, output.c's
 * segments and piece.c's packets. */
__attribute__((always_inline)) static inline void tcp_pace_sent(brisk_sock *c, uint32_t len, uint64_t now)
{
    if (!c->net->s.tcp_pacing)
        return; /* before the rate: its division is the costliest part of this step */
    uint64_t rate = tcp_pacing_rate(c);
    if (rate == UINT64_MAX || rate == 0)
        return;
    /* One segment without a division (most sends); a burst counts its segments. */
    uint32_t segs =
        c->snd.mss && len <= c->snd.mss ? 1 : (len + c->snd.mss - 1) / (c->snd.mss ? c->snd.mss : 1);
    uint64_t bytes = (uint64_t)len + (uint64_t)(segs ? segs : 1) *
                                         BRISK_TCP_SEG_WIRE_HDRS; /* payload + headers per segment */
    uint64_t interval = tcp_muldiv(bytes, BRISK_NSEC_PER_SEC, rate);
    uint64_t base = c->pace.next > now ? c->pace.next : now;
    if (c->pace.next < now && c->hold.reason == BRISK_HOLD_PACING) {
        /* Late, not idle: keep the schedule, within the catch-up allowance. */
        uint64_t catchup = c->net->s.tcp_pacing_catchup_ns;
        uint64_t floor = now > catchup ? now - catchup : 0;
        base = c->pace.next > floor ? c->pace.next : floor;
    }
    c->pace.next = base + interval;
}

/* Whether pacing holds the next packet now: before its departure time the pacing timer is armed for it and
 * the hold counted (PacingHolds). */
__attribute__((always_inline)) static inline int tcp_pace_holds(brisk_sock *c, uint64_t now)
{
    if (!c->net->s.tcp_pacing || now >= c->pace.next)
        return 0;
    if (!brisk_timer_armed(&c->timer.pace) || c->timer.pace.expires > c->pace.next)
        tcp_timer_arm(c, &c->timer.pace, c->pace.next);
    c->net->c.PacingHolds++;
    return 1;
}

#endif
