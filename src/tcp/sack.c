/*
 * sack.c — the sender's SACK scoreboard (RFC 6675 §3, RFC 2018, RFC 2883).
 *
 * Everything the sender knows about the bytes in flight: for each segment sent and not yet cumulatively
 * acknowledged, its sequence range, when it was last sent, and whether the peer holds it (SACKed), it is
 * considered lost, or it was retransmitted after that. RACK (rack.c) decides what is lost from the send
 * times; recovery (recovery.c) retransmits the lost records and sizes the window from RFC 6675's "pipe".
 *
 * Representation. Records live in a ring ordered by sequence number, one per segment of at most one MSS (a
 * TSO burst is recorded as its wire segments, so a SACK never has to split a record): appending is O(1), the
 * cumulative ACK drops records from the head, and a SACK block finds its first record by binary search, so an
 * ACK costs O(log n + records it changes) with thousands of segments in flight. The ring doubles when full —
 * a handful of times in a connection's life, never in steady state; if it cannot grow, the connection gives
 * the scoreboard up and recovers as NewReno (sb.failed), losing speed, not correctness. Byte totals (SACKed,
 * lost, lost-and-retransmitted) are kept as records change state, so pipe is O(1).
 *
 * SACK blocks are hints (RFC 2018 §8: a receiver may renege), so SACKed data is only freed by the cumulative
 * ACK, and after an RTO every record not SACKed is marked lost. A block is ignored where it does not cover a
 * whole record. A D-SACK block (RFC 2883 §4: the first block below the cumulative ACK, or inside the second
 * block) reports a duplicate, not new data: it is passed to RACK, which widens its reordering window, and
 * to undo (undo.c), which counts the episode's retransmissions it covers.
 */
#include <stdlib.h>
#include <string.h>

#include "tcp/tcp.h"

#define SB_INITIAL 64u
#define SB_MAX     (1u << 22)

struct tcp_sb_rec *tcp_sb_at(const brisk_sock *c, uint32_t i)
{
    return &c->sb.r[(c->sb.head + i) & (c->sb.cap - 1)];
}

static uint32_t rec_len(const struct tcp_sb_rec *r)
{
    return r->end - r->seq;
}

void tcp_sb_free(brisk_sock *c)
{
    free(c->sb.r);
    memset(&c->sb, 0, sizeof(c->sb));
}

static int grow(brisk_sock *c)
{
    uint32_t cap = c->sb.cap ? c->sb.cap * 2 : SB_INITIAL;
    struct tcp_sb_rec *n = cap <= SB_MAX ? malloc((size_t)cap * sizeof(*n)) : NULL;
    if (!n)
        return -1;
    for (uint32_t i = 0; i < c->sb.len; i++)
        n[i] = *tcp_sb_at(c, i);
    free(c->sb.r);
    c->sb.r = n;
    c->sb.cap = cap;
    c->sb.head = 0;
    return 0;
}

/* Gives the scoreboard up: counters zero, the connection recovers as NewReno from now on. */
static void give_up(brisk_sock *c)
{
    tcp_sb_free(c);
    c->sb.failed = 1;
}

/* Index of the first record whose end is after seq (len if none). */
static uint32_t find(const brisk_sock *c, uint32_t seq)
{
    uint32_t lo = 0, hi = c->sb.len;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (brisk_seq_gt(tcp_sb_at(c, mid)->end, seq))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void tcp_sb_mark_lost(brisk_sock *c, struct tcp_sb_rec *r)
{
    uint32_t n = rec_len(r);
    if (r->flags & TCP_SB_SACKED)
        return;
    if (r->flags & TCP_SB_RETRANS) { /* the retransmission is lost too: it must go again */
        r->flags &= ~TCP_SB_RETRANS;
        c->sb.retrans -= n;
    }
    if (!(r->flags & TCP_SB_LOST)) {
        r->flags |= TCP_SB_LOST;
        c->sb.lost += n;
    }
}

void tcp_sb_sent(brisk_sock *c, uint32_t seq, uint32_t end, uint64_t now)
{
    if (!tcp_sb_active(c) || seq == end)
        return;
    struct tcp_sb_rec *last = c->sb.len ? tcp_sb_at(c, c->sb.len - 1) : NULL;
    if (!last || !brisk_seq_lt(seq, last->end)) { /* new data: one record per MSS */
        uint32_t mss = c->snd.mss ? c->snd.mss : 1;
        while (seq != end) {
            if (c->sb.len == c->sb.cap && grow(c) != 0) {
                give_up(c);
                return;
            }
            uint32_t n = end - seq < mss ? end - seq : mss;
            struct tcp_sb_rec *r = tcp_sb_at(c, c->sb.len++);
            *r = (struct tcp_sb_rec){.seq = seq, .end = seq + n, .xmit = now};
            seq += n;
        }
        return;
    }
    /* A retransmission: every record it overlaps was sent again now. */
    for (uint32_t i = find(c, seq); i < c->sb.len; i++) {
        struct tcp_sb_rec *r = tcp_sb_at(c, i);
        if (!brisk_seq_lt(r->seq, end))
            break;
        r->xmit = now;
        r->flags |= TCP_SB_EVER_RETRANS;
        if ((r->flags & (TCP_SB_LOST | TCP_SB_RETRANS)) == TCP_SB_LOST) {
            r->flags |= TCP_SB_RETRANS;
            c->sb.retrans += rec_len(r);
        }
    }
}

/* A record leaves the board's accounting (acked) or becomes SACKed: undo its lost / retransmitted bytes. */
static void unaccount(brisk_sock *c, struct tcp_sb_rec *r, uint32_t n)
{
    if (r->flags & TCP_SB_LOST)
        c->sb.lost -= n;
    if (r->flags & TCP_SB_RETRANS)
        c->sb.retrans -= n;
    r->flags &= ~(TCP_SB_LOST | TCP_SB_RETRANS);
}

/* The segments a D-SACK block reports received twice (0: the ACK has none): its length in MSS, rounded up —
 * one block covers every duplicate the receiver got back to back, a GRO-merged pair of retransmissions for
 * example (Linux's tcp_dsack_seen). A block longer than the largest window is no D-SACK any receiver of
 * ours produced: ignored, as Linux does. */
__attribute__((noinline)) static uint32_t dsack_segs(const brisk_sock *c, const struct brisk_tcp_repr *seg)
{
    const struct brisk_tcp_opts *o = &seg->opts;
    uint32_t start = o->sack[0].start, end = o->sack[0].end;
    int below = brisk_seq_leq(end, seg->ack) && brisk_seq_lt(start, end);
    if (!below &&
        !(o->nsack > 1 && brisk_seq_geq(start, o->sack[1].start) && brisk_seq_leq(end, o->sack[1].end)))
        return 0;
    uint32_t mss = c->snd.mss ? c->snd.mss : 1, len = end - start;
    if (len > c->snd.max_wnd)
        return 0;
    return len > mss ? (len + mss - 1) / mss : 1; /* an empty one inside the second block still reports one */
}

/* What one ACK did to the board: bytes newly delivered, the never-retransmitted share, and (Linux timers) the
 * highest sequence SACKed before it, for the reordering evidence (brisk's: sb_check_reordering). */
struct sb_ack {
    uint32_t delivered, delivered_orig;
    uint32_t prior_fack; /* highest SACKed sequence before the ACK (valid if has_fack) */
    int has_fack;
    struct tcp_sb_news *news; /* what the caller learns: D-SACK, originals delivered, SACK send times */
};

/* Record r was delivered by this ACK (cumulatively or by SACK) and was not SACKed before. */
static void delivered(brisk_sock *c, struct sb_ack *a, const struct tcp_sb_rec *r, uint32_t n, uint64_t now)
{
    a->delivered += n;
    if (!(r->flags & TCP_SB_EVER_RETRANS)) {
        a->delivered_orig += n;
        /* A hole filled by its original transmission below data SACKed earlier: the path reordered
         * (Linux's tcp_check_sack_reordering, from tcp_sacktag_one and tcp_clean_rtx_queue). */
        if (a->has_fack && brisk_seq_lt(r->seq, a->prior_fack)) {
            c->rack.reord = 1;
            /* Its degree, in segments, as tcp_check_sack_reordering measures it (capped at Linux's
             * tcp_max_reordering, 300). */
            uint32_t mss = c->snd.mss ? c->snd.mss : 1;
            uint64_t segs = ((uint64_t)(a->prior_fack - r->seq) + mss - 1) / mss;
            if (segs > 300)
                segs = 300;
            if (segs > c->stat.reordering)
                c->stat.reordering = segs;
        }
    }
    tcp_rack_delivered(c, r, now);
}

/* Cumulative: drop every record below ack (a record cut by it keeps its tail). */
__attribute__((always_inline)) static inline void sb_cum_ack(brisk_sock *c, struct sb_ack *a, uint32_t ack,
                                                           uint64_t now)
{
    while (c->sb.len) {
        struct tcp_sb_rec *r = tcp_sb_at(c, 0);
        if (!brisk_seq_gt(ack, r->seq))
            break;
        uint32_t n = brisk_seq_lt(ack, r->end) ? ack - r->seq : rec_len(r);
        if (!(r->flags & TCP_SB_SACKED))
            delivered(c, a, r, n, now);
        if (n < rec_len(r)) {
            /* Partly acknowledged: its totals shrink by the acked part. */
            if (r->flags & TCP_SB_LOST)
                c->sb.lost -= n;
            if (r->flags & TCP_SB_RETRANS)
                c->sb.retrans -= n;
            r->seq = ack;
            break;
        }
        if (r->flags & TCP_SB_SACKED)
            c->sb.sacked -= n;
        unaccount(c, r, n);
        c->sb.head = (c->sb.head + 1) & (c->sb.cap - 1);
        c->sb.len--;
    }
}

/* One SACK block [start, end): every record it covers whole becomes SACKed. */
static void sb_sack_block(brisk_sock *c, struct sb_ack *a, uint32_t start, uint32_t end, uint32_t ack,
                          uint64_t now)
{
    if (!brisk_seq_lt(start, end) || brisk_seq_gt(end, c->snd.max) || brisk_seq_lt(start, ack))
        return; /* empty, beyond what was sent, or (partly) below the cumulative ACK: not news */
    for (uint32_t i = find(c, start); i < c->sb.len; i++) {
        struct tcp_sb_rec *r = tcp_sb_at(c, i);
        if (brisk_seq_gt(r->end, end))
            break;
        if (brisk_seq_lt(r->seq, start) || (r->flags & TCP_SB_SACKED))
            continue; /* not wholly covered, or known already */
        uint32_t n = rec_len(r);
        unaccount(c, r, n);
        r->flags |= TCP_SB_SACKED;
        if (c->sb.sacked == 0 || brisk_seq_gt(r->end, c->recov.fack))
            c->recov.fack = r->end; /* RACK.fack; restarted when nothing was SACKed (it may be stale) */
        c->sb.sacked += n;
        if (!(r->flags & TCP_SB_EVER_RETRANS)) {
            /* Send times of the originals this ACK SACKs, in block order (Linux's first_sackt and
             * last_sackt, whose RTT samples it takes when the cumulative ACK gives none). */
            if (!a->news->first_sackt)
                a->news->first_sackt = r->xmit;
            a->news->last_sackt = r->xmit;
        }
        delivered(c, a, r, n, now);
    }
}

/* RFC 8985 §6.2 step 3 under brisk's rules, for an ACK that arrives with data SACKed already: does it deliver
 * an original transmission below RACK.fack, the highest sequence SACKed before it (so that the order of its
 * blocks does not matter)? Then the path reorders. Run before the ACK is applied, on the records it covers
 * cumulatively or by SACK that are below RACK.fack, not SACKed and never retransmitted; out of line, so that
 * the usual ACK, with nothing SACKed, pays for one test. */
__attribute__((noinline)) static void sb_check_reordering(brisk_sock *c, const struct brisk_tcp_repr *seg,
                                                          unsigned first)
{
    uint32_t fack = c->recov.fack;
    for (unsigned k = first; k <= seg->opts.nsack; k++) {
        uint32_t start = c->snd.una, end = seg->ack; /* k == nsack: the cumulative part */
        if (k < seg->opts.nsack) {
            start = seg->opts.sack[k].start;
            end = seg->opts.sack[k].end;
            if (brisk_seq_lt(start, seg->ack))
                continue; /* not news (sb_sack_block) */
        }
        for (uint32_t i = find(c, start); i < c->sb.len; i++) {
            const struct tcp_sb_rec *r = tcp_sb_at(c, i);
            if (!brisk_seq_lt(r->seq, fack) || brisk_seq_gt(r->end, end))
                break; /* at or above RACK.fack, or past what the ACK covers */
            if (brisk_seq_geq(r->seq, start) && !(r->flags & (TCP_SB_SACKED | TCP_SB_EVER_RETRANS))) {
                c->rack.reord = 1;
                return;
            }
        }
    }
}

uint32_t tcp_sb_ack(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now, struct tcp_sb_news *news)
{
    news->dsack = 0;
    news->delivered_orig = 0;
    news->first_sackt = news->last_sackt = 0;
    if (!tcp_sb_active(c))
        return 0;
    struct sb_ack a = {.news = news};
    uint32_t ack = seg->ack;
    uint32_t dsegs = seg->opts.nsack ? dsack_segs(c, seg) : 0; /* out of line: the usual ACK has no block */
    news->dsack = (int)dsegs;
    unsigned first = dsegs ? 1u : 0u;
    if (c->net->s.tcp_loss_timers == BRISK_COMPAT_LINUX) {
        /* Linux's order, which decides RACK.rtt (rack.c): the SACK blocks first, lowest first (its
         * tcp_sacktag_write_queue sorts them), then the cumulative ACK (tcp_clean_rtx_queue); and its
         * reordering evidence, measured against the highest sequence SACKed before this ACK. */
        for (uint32_t i = c->sb.len; c->sb.sacked && i-- > 0;) {
            const struct tcp_sb_rec *r = tcp_sb_at(c, i);
            if (r->flags & TCP_SB_SACKED) {
                a.prior_fack = r->end;
                a.has_fack = 1;
                break;
            }
        }
        struct {
            uint32_t start, end;
        } b[BRISK_TCP_MAX_SACK];
        unsigned nb = 0;
        for (unsigned k = first; k < seg->opts.nsack && nb < BRISK_TCP_MAX_SACK; k++) {
            unsigned at = nb++;
            while (at > 0 && brisk_seq_lt(seg->opts.sack[k].start, b[at - 1].start)) {
                b[at] = b[at - 1];
                at--;
            }
            b[at].start = seg->opts.sack[k].start;
            b[at].end = seg->opts.sack[k].end;
        }
        for (unsigned k = 0; k < nb; k++)
            sb_sack_block(c, &a, b[k].start, b[k].end, ack, now);
        sb_cum_ack(c, &a, ack, now);
    } else {
        if (__builtin_expect(c->sb.sacked != 0, 0) && !c->rack.reord)
            sb_check_reordering(c, seg, first);
        sb_cum_ack(c, &a, ack, now);
        for (unsigned k = first; k < seg->opts.nsack; k++)
            sb_sack_block(c, &a, seg->opts.sack[k].start, seg->opts.sack[k].end, ack, now);
    }
    news->delivered_orig = a.delivered_orig;
    return a.delivered;
}

uint32_t tcp_pipe_full(const brisk_sock *c)
{
    if (!tcp_sb_active(c))
        return tcp_reno_pipe(c);
    uint32_t flight = tcp_flight(c);
    uint32_t out = c->sb.sacked + c->sb.lost;
    uint32_t pipe = flight > out ? flight - out : 0;
    return pipe + c->sb.retrans;
}

const struct tcp_sb_rec *tcp_sb_next_lost(const brisk_sock *c)
{
    if (c->sb.lost == c->sb.retrans)
        return NULL;
    for (uint32_t i = 0; i < c->sb.len; i++) {
        const struct tcp_sb_rec *r = tcp_sb_at(c, i);
        if ((r->flags & (TCP_SB_LOST | TCP_SB_RETRANS)) == TCP_SB_LOST)
            return r;
    }
    return NULL;
}

void tcp_sb_mark_all_lost(brisk_sock *c)
{
    for (uint32_t i = 0; i < c->sb.len; i++)
        tcp_sb_mark_lost(c, tcp_sb_at(c, i));
}
