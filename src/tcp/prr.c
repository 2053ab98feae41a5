/*
 * prr.c — proportional rate reduction during loss recovery (RFC 6937).
 *
 * When recovery begins, congestion control picks a smaller window (ssthresh). Setting cwnd to it at once
 * stops the sender for half a round trip and then releases a burst; letting it drift down one segment per
 * ACK (RFC 6675's pipe rule alone) can leave it far below ssthresh after a burst of losses. PRR spreads the
 * reduction over the recovery round: while pipe is above ssthresh, it sends ssthresh / RecoverFS of what
 * each ACK reports delivered (so exactly ssthresh has been sent when the round ends); once pipe falls below
 * ssthresh, it slow-starts back up to it but never sends more than was delivered plus one segment per ACK
 * (the "slow start reduction bound", PRR-SSRB). The connection calls tcp_prr_ack for every ACK in recovery
 * and counts what it sends in prr.out (tcp_transmit); cwnd is set to pipe + what may be sent now.
 *
 * Linux's tcp_cwnd_reduction (tcp_loss_timers=linux, the linux-* profiles) differs in three ways, each seen
 * on Linux 6.18 (tests/conformance/recovery/sack-prr.pkt): RecoverFS is the congestion window when recovery
 * began (prior_cwnd), not pipe; it counts whole packets, rounding the proportional share up per packet
 * (ceil(delivered x ssthresh / prior_cwnd) packets, so the fourth SACK of a ten-packet window already sends
 * one where brisk's bytes wait for the fifth); and the slow-start bound adds its extra packet only when the
 * ACK advanced snd.una and marked nothing newly lost.
 */
#include "tcp/tcp.h"

void tcp_prr_start(brisk_sock *c, uint32_t flight, uint32_t prior_cwnd)
{
    int linux_rules = c->net->s.tcp_loss_timers == BRISK_COMPAT_LINUX;
    uint32_t fs = linux_rules ? prior_cwnd : flight;
    c->prr.recover_fs = fs ? fs : 1;
    c->prr.delivered = 0;
    c->prr.out = 0;
}

void tcp_prr_linux(brisk_sock *c, uint32_t in_flight, uint32_t delivered, int advanced, int newly_lost)
{
    if (delivered == 0)
        return; /* an ACK that delivered nothing leaves the window as it is */
    uint32_t mss = c->snd.mss ? c->snd.mss : 1;
    c->prr.delivered += delivered;
    int64_t ssthresh = c->cc.ssthresh / mss;
    int64_t prior = c->prr.recover_fs / mss, out = (c->prr.out + mss - 1) / mss;
    int64_t delta = ssthresh - (int64_t)in_flight, sndcnt;
    if (prior < 1)
        prior = 1;
    if (delta < 0) {
        sndcnt = (ssthresh * c->prr.delivered + prior - 1) / prior - out;
    } else {
        sndcnt = (int64_t)c->prr.delivered - out;
        if (sndcnt < (int64_t)delivered)
            sndcnt = delivered;
        if (advanced && !newly_lost)
            sndcnt++;
        if (sndcnt > delta)
            sndcnt = delta;
    }
    if (sndcnt < (out ? 0 : 1))
        sndcnt = out ? 0 : 1; /* the fast retransmit itself always goes */
    c->cc.cwnd = (uint32_t)((uint64_t)((int64_t)in_flight + sndcnt) * mss);
}

void tcp_prr_ack(brisk_sock *c, uint32_t delivered)
{
    tcp_prr_ack_ex(c, delivered, 0, 0);
}

void tcp_prr_ack_ex(brisk_sock *c, uint32_t delivered, int una_advanced, int newly_lost)
{
    if (c->net->s.tcp_loss_timers == BRISK_COMPAT_LINUX) { /* in packets: pipe and delivery rounded up */
        uint32_t mss = c->snd.mss ? c->snd.mss : 1;
        tcp_prr_linux(c, (tcp_pipe(c) + mss - 1) / mss, (delivered + mss - 1) / mss, una_advanced, newly_lost);
        return;
    }
    uint32_t mss = c->snd.mss;
    c->prr.delivered += delivered;
    uint64_t pipe = tcp_pipe(c), ssthresh = c->cc.ssthresh;
    int64_t sndcnt;
    if (pipe > ssthresh) {
        uint64_t target = ((uint64_t)c->prr.delivered * ssthresh + c->prr.recover_fs - 1) / c->prr.recover_fs;
        sndcnt = (int64_t)target - (int64_t)c->prr.out;
    } else {
        int64_t limit = (int64_t)c->prr.delivered - (int64_t)c->prr.out;
        if (limit < (int64_t)delivered)
            limit = delivered;
        limit += mss;
        sndcnt = (int64_t)(ssthresh - pipe);
        if (sndcnt > limit)
            sndcnt = limit;
    }
    if (c->prr.out == 0 && sndcnt < (int64_t)mss)
        sndcnt = mss; /* the fast retransmit itself always goes */
    if (sndcnt < 0)
        sndcnt = 0;
    c->cc.cwnd = (uint32_t)(pipe + (uint64_t)sndcnt);
}
