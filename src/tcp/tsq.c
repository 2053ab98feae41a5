/*
 * tsq.c — what sits below TCP, and how much may: below-TCP accounting, TCP Small Queues, the pacing rate the
 * budget is derived from, and the hold reasons that explain every byte the transmit function keeps back.
 *
 * Accounting. Every packet a connection hands down with data, SYN or FIN (pure ACKs are not charged) is
 * charged its truesize — frame bytes plus tcp_buf_overhead, like an skb — in tsq.wmem, and stays charged
 * until the packet's buffer is freed: normally when the device reports TX completion, or when it is dropped
 * on the way (device refusal, ARP failure). The pool calls brisk_tcp_pkt_released() for every owned packet it
 * frees, whatever the path, so the charge can never leak. A connection freed while packets are below it
 * becomes a zombie whose struct outlives it until the last of them returns (Linux holds a socket reference
 * per skb).
 *
 * TSQ (linux-tx-path.md §1). Before each segment, tcp_write_xmit asks tcp_tsq_holds(): is wmem over the
 * budget? The budget follows tcp_tsq_rule:
 *   0  static cap                            tcp_limit_output_bytes (Linux 3.12)
 *   1  max(cap, rate x hold)                 (3.13: the cap was a floor)
 *   2  min(cap, max(2 x buffer, rate x hold)) (3.19 on: the cap became a ceiling — the xen-netfront
 * regression) doubled while retransmitting. hold = 1 s >> tcp_pacing_shift (≈1 ms), and — brisk's addition,
 * with tcp_tsq_adaptive — at least tcp_tsq_latency_factor x the device's smoothed TX-completion overhead, so
 * a device that completes late (Xen netfront, coalescing NICs) does not starve the flow while a fast one
 * keeps queues short. The overhead is the completion latency minus the time the packet waited for the wire
 * behind frames queued before it (netdev.c estimates it from the link speed). Using the raw latency would
 * feed back: a budget of rate x 2 x latency lets the ring hold more, which raises the latency, which raises
 * the budget — four flows on an immediate-completion NIC filled a 4096-descriptor ring (44 ms of queue) that
 * way. With tcp_tsq_shortcut a connection with at most one segment unacknowledged is never held (Linux
 * f921a4a5bffa). When it holds, the connection is marked throttled first and the budget re-checked, the
 * discipline that closes the completion race on SMP (here a completion may also arrive in the same poll). The
 * resume path never transmits from the completion: it parks the connection on the stack's deferred list and
 * brisk_stack_poll runs it through the one transmit function, with its current Nagle / cork mode.
 *
 * Auto-corking (linux-tx-path.md §2). On the application's send, a small tail (less than a segment) is held
 * when tcp_autocorking is on, something is in flight (never the first packet; the compat knob
 * tcp_autocork_first_packet restores the 3.14-rc behaviour), and data of this connection is below TCP — its
 * completion resumes the connection through the same path as TSQ, by which time more data may have joined
 * the tail. The resume runs the one transmit function with the connection's current Nagle mode; the compat
 * knob tcp_resume_nagle forces Nagle on there, the 2014 bug behind the iSCSI seed.
 *
 * TSO autosizing (linux-tx-path.md §4). On a device that segments (CAP_GSO), tcp_size_goal() sizes each
 * super-segment at transmit time: about rate >> tcp_pacing_shift bytes (≈1 ms of data), at least
 * tcp_min_tso_segs segments, within the device's gso_max_size, and at most half the congestion window.
 * tcp_write_goal() is the other size Linux has: that of the pieces the application's writes fill (skbs,
 * sized at write time), which brisk_send needs for the low-water mark and forced pushes. Under tcp_sw_gso
 * every device is treated as one that segments, and the packets are sized by piece.c instead (Linux's
 * tcp_tso_autosize and tcp_cwnd_test, which tcp_size_goal approximates for brisk's own profile).
 *
 * Hold reasons (docs/design.md principle 5). tcp_hold() records why the transmit function stopped with data
 * waiting — cwnd, rwnd, nagle, cork, tsq, device — counting each stop and accumulating the time each reason
 * was in force, for brisk_conn_info() and the tools.
 */
#include <stdlib.h>

#include "tcp/tcp.h"

static const char *const hold_names[BRISK_HOLD_COUNT] = {"none", "cwnd",     "rwnd",   "nagle", "cork",
                                                         "tsq",  "autocork", "pacing", "device"};

const char *brisk_hold_name(int reason)
{
    return reason >= 0 && reason < BRISK_HOLD_COUNT ? hold_names[reason] : "?";
}

void tcp_charge(brisk_sock *c, brisk_pkt *pkt)
{
    pkt->owner = c;
    pkt->truesize = pkt->len + BRISK_IPV4_HLEN + 14u + c->st->s.tcp_buf_overhead;
    c->tsq.wmem += pkt->truesize;
    c->tsq.pkts++;
}

void brisk_tcp_pkt_released(void *ctx, brisk_pkt *pkt)
{
    (void)ctx;
    brisk_sock *c = pkt->owner;
    pkt->owner = NULL;
    c->tsq.wmem -= pkt->truesize <= c->tsq.wmem ? pkt->truesize : c->tsq.wmem;
    c->tsq.pkts--;
    if (c->tsq.zombie) {
        if (c->tsq.pkts == 0) {
            brisk_sock **pp = &c->st->tcp->zombies;
            while (*pp && *pp != c)
                pp = &(*pp)->hnext;
            if (*pp)
                *pp = c->hnext;
            c->st->tcp->nsocks--;
            free(c);
        }
        return;
    }
    if (c->tsq.throttled) {
        /* Room below TCP again. Never transmit from here: park it for the stack's next poll. */
        c->tsq.throttled = 0;
        c->st->c.TSQResumes++;
        tcp_block(c);
        c->st->tx_wake = 1;
    }
}

/* The budget; tcp_tsq_over inlines it (a bulk sender asks it several times per segment it sends). */
static inline uint64_t tsq_limit(const brisk_sock *c)
{
    const struct brisk_settings *s = &c->st->s;
    uint64_t cap = s->tcp_limit_output_bytes;
    if (s->tcp_tsq_rule == 0)
        return cap;
    uint64_t hold = BRISK_NSEC_PER_SEC >> s->tcp_pacing_shift;
    if (s->tcp_tsq_adaptive && c->rt.dev) {
        uint64_t lat = c->rt.dev->stats.tx_done_overhead_ns * s->tcp_tsq_latency_factor;
        if (lat > hold)
            hold = lat;
    }
    uint64_t rate = tcp_pacing_rate(c);
    uint64_t by_rate = rate == UINT64_MAX ? UINT64_MAX : tcp_muldiv(rate, hold, BRISK_NSEC_PER_SEC);
    if (s->tcp_tsq_rule == 1)
        return by_rate > cap ? by_rate : cap;
    uint64_t two = tcp_tsq_two_bufs(c);
    uint64_t want = by_rate > two ? by_rate : two;
    return want < cap ? want : cap;
}

uint64_t tcp_tsq_limit(const brisk_sock *c)
{
    return tsq_limit(c);
}

/* tcp_tsq_holds (tcp.h) past its floor: the budget itself. */
int tcp_tsq_over(brisk_sock *c)
{
    const struct brisk_settings *s = &c->st->s;
    uint64_t limit = tsq_limit(c);
    if (brisk_seq_lt(c->snd.nxt, c->snd.max))
        limit *= 2; /* retransmissions get twice the room (Linux tcp_xmit_retransmit_queue) */
    if (c->tsq.wmem <= limit)
        return 0;
    if (s->tcp_tsq_shortcut && c->snd.max - c->snd.una <= c->snd.mss)
        return 0;
    c->tsq.throttled = 1;
    if (c->tsq.wmem <= limit) { /* re-check after marking: a completion may have come in between */
        c->tsq.throttled = 0;
        return 0;
    }
    c->st->c.TSQThrottles++;
    return 1;
}

uint32_t tcp_size_goal(const brisk_sock *c, uint32_t mss)
{
    const struct brisk_settings *s = &c->st->s;
    const brisk_netdev *dev = c->rt.dev;
    if (!s->tcp_tso || !dev || !(dev->cfg.caps & BRISK_NETDEV_CAP_GSO) || mss == 0)
        return mss;
    /* About one pacing interval of data (rate >> pacing_shift), as Linux's tcp_tso_autosize... */
    uint64_t rate = tcp_pacing_rate(c);
    uint64_t bytes = rate == UINT64_MAX ? UINT64_MAX : rate >> s->tcp_pacing_shift;
    uint64_t room = dev->cfg.gso_max_size > 20u + 60u ? dev->cfg.gso_max_size - 20u - 60u : mss;
    if (bytes > room)
        bytes = room;
    uint64_t segs = bytes / mss;
    if (segs < s->tcp_min_tso_segs)
        segs = s->tcp_min_tso_segs;
    if ((uint64_t)mss * segs > room) /* ... within what the device takes ... */
        segs = room / mss ? room / mss : 1;
    uint64_t half = c->cc.cwnd / mss / 2; /* ... and at most half the window, so two bursts are in flight */
    if (segs > half)
        segs = half ? half : 1;
    return (uint32_t)(segs * mss);
}

uint32_t tcp_write_goal(brisk_sock *c)
{
    const brisk_netdev *dev = c->rt.dev;
    int sw = c->st->s.tcp_sw_gso != 0;
    uint32_t mss = !c->snd.mss ? TCP_DEFAULT_MSS : sw ? tcp_mss_now(c) : c->snd.mss;
    int dev_gso = c->st->s.tcp_tso && dev && (dev->cfg.caps & BRISK_NETDEV_CAP_GSO);
    if (!dev_gso && !sw)
        return mss;
    /* Linux's tcp_xmit_size_goal: the route's GSO limit, bounded to half the largest window the peer offered
     * (tcp_bound_to_half_wnd: the whole window when it is tiny), in whole segments. Unlike tcp_size_goal it
     * ignores the pacing rate: Linux sizes skbs at write time and autosizes TSO bursts at transmit time. */
    uint32_t size = mss;
    if (sw)
        size = tcp_gso_limit(c);
    else if (dev->cfg.gso_max_size > 20u + 60u)
        size = dev->cfg.gso_max_size - 20u - 60u;
    uint32_t cutoff = c->snd.max_wnd > TCP_DEFAULT_MSS ? c->snd.max_wnd / 2 : c->snd.max_wnd;
    if (cutoff && size > cutoff)
        size = cutoff;
    uint32_t goal = size / mss * mss;
    return goal > mss ? goal : mss;
}

/* tcp_autocork (tcp.h) found it may hold: it does, marked throttled, unless a completion came in between. */
int tcp_autocork_hold(brisk_sock *c)
{
    int was = c->tsq.throttled;
    c->tsq.throttled = 1;
    if (c->tsq.wmem == 0) { /* re-check after marking */
        c->tsq.throttled = (uint8_t)was;
        return 0;
    }
    if (!was)
        c->st->c.TCPAutoCorking++;
    return 1;
}

void tcp_hold(brisk_sock *c, int reason, uint64_t now)
{
    if (c->hold.reason == reason)
        return;
    if (c->hold.reason != BRISK_HOLD_NONE)
        c->hold.ns[c->hold.reason - 1] += now - c->hold.since;
    if (reason != BRISK_HOLD_NONE)
        c->hold.events[reason - 1]++;
    c->hold.reason = (uint8_t)reason;
    c->hold.since = now;
}
