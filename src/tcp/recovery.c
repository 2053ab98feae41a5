/*
 * recovery.c — SACK-based loss recovery: RACK decides what is lost (rack.c), the scoreboard knows what is in
 * flight (sack.c), PRR sizes the window (prr.c), and this file puts them together (RFC 6675 §5, RFC 8985 §6,
 * RFC 6937).
 *
 * After every ACK on a SACK connection (and when the RACK reordering deadline expires) the connection runs
 * RACK. The first loss it marks starts a recovery episode, unless an RTO already put the connection in loss
 * recovery: congestion control picks ssthresh once (the algorithm's on_enter_recovery), `recover` is snd.max,
 * and PRR drives cwnd from then on. The episode ends when the cumulative ACK reaches `recover`; cwnd is then
 * ssthresh (RFC 6937 §3). Lost segments go out before any new data, in sequence order, while pipe is below
 * cwnd (tcp_retransmit_lost, called first thing by the one transmit function). Connections without SACK keep
 * NewReno's duplicate-ACK recovery (input.c).
 */
#include "tcp/tcp.h"

void tcp_recovery_check(brisk_sock *c, uint32_t prior_cwnd, uint64_t now)
{
    if (!tcp_sb_active(c))
        return;
    uint64_t wait;
    tcp_rack_detect(c, now, &wait);
    if (!c->cc.in_recovery && !c->cc.in_loss && c->sb.lost > 0) {
        /* The reduction is from the window (as Linux does), not RFC 5681's FlightSize: with SACK, snd.nxt -
         * snd.una also counts everything SACKed above the holes and everything just marked lost — after a
         * slow-start overshoot twice what the path holds — and a CUBIC-style 0.7 x that keeps pipe above the
         * path's capacity for the whole episode (measured: ssthresh growing from one episode to the next).
         * PRR's RecoverFS is pipe for the same reason (the RFC 6937 update does the same). */
        uint32_t pipe_before = tcp_pipe(c) + c->sb.lost - c->sb.retrans; /* lost ones were in flight so far */
        tcp_undo_begin(c, prior_cwnd); /* a new episode: what may be undone is this one */
        c->cc_ops->on_enter_recovery(&c->cc, prior_cwnd, c->snd.max, now);
        c->cc.in_recovery = 1;
        c->cc.recover = c->snd.max;
        c->st->c.TCPFastRetrans++;
        c->stat.fast_retransmits++;
        tcp_prr_start(c, pipe_before);
    }
    if (wait)
        tcp_arm_reo(c, now + wait);
}

/* Sends lost record r again; returns nonzero if the device or the pool refused it (the connection is parked).
 */
static int resend(brisk_sock *c, const struct tcp_sb_rec *r, uint64_t now)
{
    uint32_t len = r->end - r->seq;
    uint8_t flags = BRISK_TCP_ACK;
    if (r->end == tcp_data_end(c)) { /* the last data byte: PSH as first sent, and the FIN if it went */
        flags |= BRISK_TCP_PSH;
        if (c->snd.fin_sent && c->snd.max == r->end + 1)
            flags |= BRISK_TCP_FIN;
    }
    if (brisk_netdev_stopped(c->rt.dev) || tcp_transmit(c, r->seq, len, flags, now) < 0) {
        tcp_block(c); /* resumed by the TX completion that frees the device or the pool */
        return -1;
    }
    return 0;
}

void tcp_retransmit_first_lost(brisk_sock *c, uint64_t now)
{
    const struct tcp_sb_rec *r = tcp_sb_next_lost(c);
    if (r)
        resend(c, r, now);
}

int tcp_retransmit_lost(brisk_sock *c, uint64_t now)
{
    const struct tcp_sb_rec *r;
    while ((r = tcp_sb_next_lost(c)) != NULL) {
        /* A whole segment may go while pipe is below cwnd (Linux counts packets the same way); demanding
         * room for all of it would wedge a one-segment loss window behind a FIN's sequence number. */
        if (tcp_pipe(c) >= c->cc.cwnd)
            return BRISK_HOLD_CWND;
        if (resend(c, r, now) != 0)
            return BRISK_HOLD_DEVICE;
    }
    return BRISK_HOLD_NONE;
}
