/*
 * ackcomp.c — compressed ACKs for out-of-order data: Linux's SACK compression (4.18; the duplicate-ACK
 * counter of 5.x), under the tcp_comp_sack_* settings of the linux-6.x profile. brisk's own profile keeps
 * RFC 5681 §4.2's rule (tcp_comp_sack_nr=0): every out-of-order segment is acknowledged at once.
 *
 * Why Linux does it: behind a hole, every arriving segment makes the receiver send a duplicate ACK that only
 * grows a SACK block; on a fast path with a burst lost or reordered, that is an ACK per segment the sender
 * must process, most of them saying nothing new. So after the first TCP_ACKCOMP_DUPACKS duplicates for a
 * given RCV.NXT (the sender's fast retransmit must still see three), further out-of-order segments are not
 * answered one by one: the ACK waits min(tcp_comp_sack_delay_ns, 5 % of the RTT) — the RTT being the
 * receiver's estimate (rwin.c's rcv_rtt, as Linux's rcv_rtt_est) or the smoothed RTT when that is smaller —
 * and then one ACK carries every SACK block (Linux's __tcp_ack_snd_check, tcp_compressed_ack_kick). At most
 * tcp_comp_sack_nr ACKs are held in a row; any ACK sent meanwhile (the hole filled, data of ours, a window
 * update) ends the compression, and TCPAckCompressed counts the ACKs that were never sent. A segment that
 * would open a fifth SACK block first sends the held ACK with the four blocks it had (tcp_sack_new_ofo_skb's
 * tcp_sack_compress_send_ack), so no block is pushed out of the option before the sender heard of it.
 *
 * Linux arms a high-resolution timer with a slack of tcp_comp_sack_slack_ns; on an otherwise idle CPU it
 * fires at the end of that range, which is where brisk fires it (the delay plus the slack). The timer here
 * is the delayed-ACK timer with an earlier deadline: sending the compressed ACK also answers any delayed one,
 * as Linux's tcp_event_ack_sent cancels both. Not applied: in quick-ACK mode, without SACK, or when more than
 * one full segment of in-order data is unacknowledged (Linux's first reasons to ACK at once).
 */
#include "tcp/ackcomp.h"

#include "tcp/tcp.h"

void tcp_ackcomp_new_block(brisk_sock *c, uint32_t seq, uint32_t len, uint64_t now)
{
    uint32_t s, e;
    if (!c->ack.comp || c->rcv.ooo.nruns < 4 || brisk_reass_overlap(&c->rcv.ooo, seq - 1, len + 2, &s, &e))
        return; /* nothing held, room for a block, or it extends one (touching counts, as tcp_sack_extend) */
    c->ack.comp--; /* the ACK that goes is not one of those never sent */
    tcp_send_ack(c, now);
}

int tcp_ackcomp_ooo(brisk_sock *c, uint64_t now)
{
    const struct brisk_settings *s = &c->net->s;
    if (!s->tcp_comp_sack_nr || !c->opt.sack || (c->ack.quick && !c->ack.pingpong) || c->ack.unacked_segs >= 2)
        return 1;
    if (c->ack.comp >= s->tcp_comp_sack_nr)
        return 1;
    if (c->ackcomp_nxt != c->rcv.nxt) { /* a new hole (or the old one moved): count its duplicates again */
        c->ackcomp_nxt = c->rcv.nxt;
        c->ack.comp_dup &= (uint8_t)TCP_ACKCOMP_ARMED;
    }
    if ((c->ack.comp_dup & ~TCP_ACKCOMP_ARMED) < TCP_ACKCOMP_DUPACKS) {
        c->ack.comp_dup++;
        return 1;
    }
    if (c->ack.comp++)
        return 0; /* the timer is running */
    /* rw.rtt.us is Linux's rcv_rtt_est.rtt_us (us << 3); Linux takes the smoothed RTT when it is smaller. */
    uint64_t rtt_sc = c->rw.rtt.us, srtt_sc = brisk_rtt_srtt(&c->rtt) * 8 / 1000;
    if (srtt_sc && srtt_sc < rtt_sc)
        rtt_sc = srtt_sc;
    uint64_t delay = rtt_sc * 125 / 20; /* 5 % of the RTT, in ns */
    if (delay > s->tcp_comp_sack_delay_ns)
        delay = s->tcp_comp_sack_delay_ns;
    uint64_t at = now + delay + s->tcp_comp_sack_slack_ns;
    if (c->ack.pending && c->timer.delack_deadline <= at)
        return 0; /* an ordinary delayed ACK is due first: it carries the blocks */
    c->ack.pending = 1;
    c->ack.comp_dup |= (uint8_t)TCP_ACKCOMP_ARMED;
    c->timer.delack_deadline = at;
    if (!brisk_timer_armed(&c->timer.delack) || c->timer.delack.expires > at)
        tcp_timer_arm(c, &c->timer.delack, at);
    return 0;
}

int tcp_ackcomp_fired(brisk_sock *c, uint64_t now)
{
    if (!(c->ack.comp_dup & TCP_ACKCOMP_ARMED))
        return 0;
    if (c->ack.comp)
        c->ack.comp--; /* this one is sent */
    tcp_send_ack(c, now);
    return 1;
}
