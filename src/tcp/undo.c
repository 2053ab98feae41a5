/*
 * undo.c — undoing a congestion response that proved spurious: F-RTO (RFC 5682 §3, the SACK-enhanced
 * algorithm) for retransmission timeouts, and D-SACK (RFC 3708) for any recovery episode.
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
 * D-SACK. Each D-SACK block reports one segment the receiver got twice. When the episode's retransmissions
 * are all reported that way, every one of them was unnecessary, and the reduction is undone.
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
}

void tcp_undo_retransmitted(brisk_sock *c)
{
    if (c->undo.active)
        c->undo.retrans++;
}

static void undo(brisk_sock *c, uint64_t now)
{
    if (c->cc_ops->on_undo)
        c->cc_ops->on_undo(&c->cc, now);
    if (c->cc.cwnd < c->undo.prior_cwnd)
        c->cc.cwnd = c->undo.prior_cwnd;
    if (c->cc.ssthresh < c->undo.prior_ssthresh || c->cc.ssthresh == 0)
        c->cc.ssthresh = c->undo.prior_ssthresh;
    c->cc.in_recovery = 0;
    c->cc.in_loss = 0;
    c->undo.active = 0;
    c->undo.frto = 0;
    c->rtt.backoff = 0;
    /* Nothing is lost after all: forget the marks (what was retransmitted is simply in flight twice). */
    for (uint32_t i = 0; i < c->sb.len; i++)
        tcp_sb_at(c, i)->flags &= ~(TCP_SB_LOST | TCP_SB_RETRANS);
    c->sb.lost = c->sb.retrans = 0;
    c->stat.undos++;
}

void tcp_undo_dsack(brisk_sock *c, uint64_t now)
{
    if (!c->undo.active || c->undo.retrans == 0)
        return;
    if (--c->undo.retrans == 0) {
        c->st->c.TCPDSACKUndo++;
        undo(c, now);
    }
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
        c->st->c.TCPSpuriousRTOs++;
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
