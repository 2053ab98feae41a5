/*
 * tso.c — TSO autosizing: how large a super-segment the transmit function hands a device that segments
 * (docs/transmit-engine.md, "TSO autosizing").
 *
 * On a device with BRISK_NETDEV_CAP_GSO, tcp_size_goal() sizes each super-segment at transmit time: about
 * rate >> tcp_pacing_shift bytes (≈1 ms of data at the pacing rate), at least tcp_min_tso_segs segments,
 * within the device's gso_max_size, and at most half the congestion window, so that two bursts are in
 * flight. A burst sized for the path rather than the device's 64 KB keeps slow flows from sending
 * line-rate trains that a bottleneck queue must absorb (Linux's tcp_tso_autosize, 2013).
 *
 * tcp_write_goal() is the other size Linux has: that of the pieces the application's writes fill (skbs,
 * sized at write time by tcp_xmit_size_goal), which brisk_send needs for the low-water mark and forced
 * pushes. Under tcp_sw_gso every device is treated as one that segments, and the packets are sized by
 * piece.c instead (Linux's tcp_tso_autosize and tcp_cwnd_test, which tcp_size_goal approximates for brisk's
 * own profile).
 */
#include "tcp/tcp.h"

uint32_t tcp_size_goal(const brisk_sock *c, uint32_t mss)
{
    const struct brisk_settings *s = &c->net->s;
    const brisk_netdev *dev = c->rt.dev;
    if (!s->tcp_tso || !dev || !(dev->cfg.caps & BRISK_NETDEV_CAP_GSO) || mss == 0)
        return mss;
    /* About one pacing interval of data (rate >> pacing_shift), as Linux's tcp_tso_autosize... */
    uint64_t rate = tcp_pacing_rate(c);
    uint64_t bytes = rate == UINT64_MAX ? UINT64_MAX : rate >> s->tcp_pacing_shift;
    uint64_t room =
        dev->cfg.gso_max_size > BRISK_TCP_GSO_HDR_ROOM ? dev->cfg.gso_max_size - BRISK_TCP_GSO_HDR_ROOM : mss;
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
    int sw = c->net->s.tcp_sw_gso != 0;
    uint32_t mss = !c->snd.mss ? TCP_DEFAULT_MSS : sw ? tcp_mss_now(c) : c->snd.mss;
    int dev_gso = c->net->s.tcp_tso && dev && (dev->cfg.caps & BRISK_NETDEV_CAP_GSO);
    if (!dev_gso && !sw)
        return mss;
    /* Linux's tcp_xmit_size_goal: the route's GSO limit, bounded to half the largest window the peer offered
     * (tcp_bound_to_half_wnd: the whole window when it is tiny), in whole segments. Unlike tcp_size_goal it
     * ignores the pacing rate: Linux sizes skbs at write time and autosizes TSO bursts at transmit time. */
    uint32_t size = mss;
    if (sw)
        size = tcp_gso_limit(c);
    else if (dev->cfg.gso_max_size > BRISK_TCP_GSO_HDR_ROOM)
        size = dev->cfg.gso_max_size - BRISK_TCP_GSO_HDR_ROOM;
    uint32_t cutoff = c->snd.max_wnd > TCP_DEFAULT_MSS ? c->snd.max_wnd / 2 : c->snd.max_wnd;
    if (cutoff && size > cutoff)
        size = cutoff;
    uint32_t goal = size / mss * mss;
    return goal > mss ? goal : mss;
}
