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
 */
#include "tcp/tcp.h"

void tcp_prr_start(brisk_sock *c, uint32_t flight)
{
    c->prr.recover_fs = flight ? flight : 1;
    c->prr.delivered = 0;
    c->prr.out = 0;
}

void tcp_prr_ack(brisk_sock *c, uint32_t delivered)
{
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
