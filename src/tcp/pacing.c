/*
 * pacing.c — pacing: every packet of a connection gets an earliest departure time (Linux's EDT model, fq's
 * and tcp_internal_pacing's), and one that is early waits for it (hold reason `pacing`).
 *
 * The rate (tcp_pacing_rate, pacing.h) is the window — or the flight, when larger — per smoothed RTT,
 * scaled by tcp_pacing_ss_ratio (200 %) in slow start and tcp_pacing_ca_ratio (120 %) after, as Linux's
 * tcp_update_pacing_rate; without an RTT sample there is no rate and nothing is paced. The rate is also the
 * base of the TSQ budget (tsq.c) and of TSO autosizing (tso.c), which is why it is one inline function.
 *
 * The departure time (tcp_pace_sent, pacing.h): a packet of `len` payload bytes in `segs` segments occupies
 * len + 66 x segs wire bytes (Ethernet, IPv4 and TCP headers with timestamps), which at the rate gives the
 * interval to the next departure. Time not used since the last departure is not banked — an idle connection
 * does not earn a burst — except when the sender was waiting for this departure (it last stopped for
 * pacing) and the pacing timer fired late: then the schedule stands, and what the timer is late by, up to
 * tcp_pacing_catchup, goes out back to back. A timer that wakes a userspace loop tens of microseconds late
 * would otherwise cap the rate at one packet per wakeup (MTU frames over a TAP device: ~0.8 Gbit/s whatever
 * the window), where Linux's in-kernel hrtimer is microseconds late and its 64 KB TSO bursts hide the rest.
 *
 * The hold (tcp_pace_holds, pacing.h) is one of the checks below TCP that the transmit function makes
 * before each segment or packet, after TSQ's and before the device's (output.c, tcp_below_holds); it arms
 * the connection's pacing timer for the departure time, and the timer runs the transmit function again.
 */
#include "tcp/tcp.h"

void tcp_pace_fired(struct brisk_timer *t, void *arg, uint64_t now)
{
    (void)t;
    tcp_write_xmit(arg, TCP_XMIT_TIMER, now); /* the departure time came */
}
