/*
 * undo.c — undoing a congestion response that proved spurious: F-RTO (RFC 5682 §3, the SACK-enhanced
 * algorithm) for retransmission timeouts, D-SACK (RFC 3708) for any recovery episode, and timestamps (Eifel
 * detection, RFC 3522) for a fast retransmit that reordering provoked.
 *
 * A retransmission timeout that fired only because the path stalled (a delay spike, an ACK burst lost) costs
 * the sender its window — cwnd to one segment, ssthresh halved — although nothing was lost; a fast
 * retransmit triggered by reordering costs the same reduction. Both can be recognised afterwards and undone.
 *
 * Bookkeeping. When an episode begins (RACK / three duplicates start recovery, or the first RTO), the window
 * and ssthresh before the reduction are saved and the retransmissions of the episode are counted from zero.
 * An RTO inside an episode keeps the first saved values: undo goes back to before the whole episode.
 *
 * F-RTO. On the first timeout of a SACK connection brisk retransmits only the oldest segment instead of
 * declaring everything lost. The first ACK that advances snd.una decides: if it acknowledges (or SACKs) data
 * that was never retransmitted and had not been SACKed before — the original flight arriving after all — the
 * timeout was spurious and is undone; otherwise (it acknowledges only the retransmission, or is a duplicate)
 * the loss was real and every unSACKed segment is marked lost as usual (RFC 6675 §5.1). This is the SACK
 * variant's decision without its optional probe of two new segments.
 *
 * D-SACK. A D-SACK block reports the segments the receiver got twice — one, or several back to back (a
 * receiver that coalesces arrivals reports two adjacent duplicates in one block), so the block counts by its
 * length in segments (in every profile: Linux's tcp_dsack_seen counts the same way, recovery/dsack-block-
 * undo.pkt on 6.18; until this was found brisk counted one per ACK). When the episode's
 * retransmissions are all reported that way, every one of them was unnecessary, and the reduction is undone.
 *
 * Timestamps (Eifel detection, RFC 3522, as a fast-retransmit undo; brisk's rules). The receiver echoes the
 * TSval of the segment that last advanced its cumulative point (RFC 7323 §4.3; TS.Recent never goes back), so
 * an ACK that advances snd.una with an echo older than the episode's first retransmission says the hole was
 * filled by an original transmission that was only late, and that no retransmission has filled any hole
 * since the episode began. Once no retransmission is outstanding and nothing waits marked lost, the whole
 * episode was reordering: it is undone at that ACK, a round trip before the D-SACKs would tell — and when
 * they do not come at all (ACKs lost, a receiver that coalesces two duplicates into one report). The test
 * runs on the ACKs of a fast recovery from its first retransmission on (an RTO's spurious cases are F-RTO's).
 * An equal echo (the same 1 ms tick as the retransmission) proves nothing; the D-SACK rule still applies.
 * Linux undoes the same way (tcp_packet_delayed in tcp_try_undo_partial / tcp_try_undo_recovery), in the
 * linux-* profiles with its conditions: only a retransmission still out holds the undo back (segments
 * marked lost and not yet resent are unmarked by it), an echo of 0 is none, and the window then grows on the
 * same ACK as in the open state (recovery/ts-undo.pkt: cwnd 10 restored, then 14, on 6.18).
 *
 * Undo restores cwnd and ssthresh (never lowering them) — through the algorithm's on_undo when it has one
 * (CUBIC also restores its curve) — ends recovery / loss state, clears lost marks and the RTO backoff.
 */
#include "tcp/tcp.h"

void tcp_undo_begin(brisk_sock *c, uint32_t prior_cwnd)
{
    c->undo.active = 1;
    c->undo.prior_cwnd = prior_cwnd;
    c->undo.prior_ssthresh = c->cc.ssthresh;
    c->undo.retrans = 0;
    c->undo.eifel = 0;
    c->recov.rtx_sent = 0;
}

void tcp_undo_retransmitted(brisk_sock *c, uint64_t now)
{
    if (!c->undo.active)
        return;
    c->undo.retrans++;
    if (!c->recov.rtx_sent) {
        c->recov.rtx_sent = 1;
        c->recov.rtx_tsval = tcp_ts_now(c, now);
        /* Eifel's test needs timestamps on both sides (Linux: retrans_stamp, tcp_packet_delayed). */
        c->undo.eifel = c->opt.ts;
    }
}

static void undo(brisk_sock *c, uint64_t now)
{
    if (c->cc_ops->on_undo)
        c->cc_ops->on_undo(&c->cc, now);
    if (c->cc.cwnd < c->undo.prior_cwnd)
        c->cc.cwnd = c->undo.prior_cwnd;
    if (c->cc.ssthresh < c->undo.prior_ssthresh || c->cc.ssthresh == 0)
        c->cc.ssthresh = c->undo.prior_ssthresh;
    tcp_set_ca_state(c, TCP_CA_OPEN);
    c->cc.in_loss = 0;
    c->undo.active = 0;
    c->undo.frto = 0;
    c->undo.eifel = 0;
    c->rtt.backoff = 0;
    /* Nothing is lost after all: forget the marks (what was retransmitted is simply in flight twice). */
    for (uint32_t i = 0; i < c->sb.len; i++)
        tcp_sb_at(c, i)->flags &= ~(TCP_SB_LOST | TCP_SB_RETRANS);
    c->sb.lost = c->sb.retrans = 0;
    c->stat.undos++;
}

void tcp_undo_dsack(brisk_sock *c, uint32_t segs, uint64_t now)
{
    if (!c->undo.active || c->undo.retrans == 0)
        return;
    c->undo.retrans = segs < c->undo.retrans ? c->undo.retrans - segs : 0;
    if (c->undo.retrans == 0) {
        c->net->c.TCPDSACKUndo++;
        undo(c, now);
    }
}

int tcp_undo_ack(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now)
{
    int linux_rules = c->net->s.tcp_loss_timers == BRISK_COMPAT_LINUX;
    if (!seg->opts.ts_ok || (int32_t)(seg->opts.ts_ecr - c->recov.rtx_tsval) >= 0 ||
        (linux_rules && !seg->opts.ts_ecr)) {
        /* The echo is of a retransmission or later: a hole was repaired, and since TS.Recent never goes
         * back no later ACK can say otherwise. The test is over for this episode. (Linux's
         * tcp_tsopt_ecr_before also takes an echo of 0 for none.) */
        c->undo.eifel = 0;
        return 0;
    }
    /* A retransmission outstanding may still repair a real loss (Linux's tcp_try_undo_partial waits while
     * retrans_out); brisk also waits for segments marked lost and not yet resent, Linux undoes over them. */
    if (c->sb.retrans || (c->sb.lost && !linux_rules))
        return 0;
    if (brisk_seq_lt(seg->ack, c->cc.recover))
        c->net->c.TCPPartialUndo++;
    else
        c->net->c.TCPFullUndo++;
    c->rack.reord = 1; /* the path reordered: a hole filled late by its original (RFC 8985 §6.2 step 3) */
    undo(c, now);
    return 1;
}

void tcp_frto_start(brisk_sock *c)
{
    c->undo.frto = 1;
}

int tcp_frto_ack(brisk_sock *c, int advanced, uint32_t delivered_orig, uint64_t now)
{
    if (!c->undo.frto)
        return 0;
    if (advanced && delivered_orig > 0) {
        c->net->c.TCPSpuriousRTOs++;
        undo(c, now);
        return 1;
    }
    if (!advanced && delivered_orig == 0)
        return 0; /* a window update or an old duplicate: wait for the ACK that decides */
    /* The retransmission alone was acknowledged (or a duplicate reported a hole): a real loss. */
    c->undo.frto = 0;
    tcp_sb_mark_all_lost(c);
    return 0;
}
