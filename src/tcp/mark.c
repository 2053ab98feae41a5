/*
 * mark.c — where one write ends in the send stream, for the two things that need to know: PSH and records.
 *
 * The send buffer is a byte stream (sbuf.c) and segments are cut from it at transmit time, so nothing in it
 * says where the application's writes began and ended. Two rules need those boundaries:
 *
 *   - PSH, Linux style (tcp_push_each_write, the linux-* profiles). Linux flags the skb that ends a write
 *     (tcp_sendmsg_locked ends with tcp_push, which calls tcp_mark_push on the tail skb unless MSG_MORE), and
 *     a mid-write skb when more than half the largest window was written since the last push (forced_push).
 *     The flag stays with the last piece when the skb is split for transmission (tso_fragment, tcp_fragment)
 *     and with a retransmission of it; a later write that appends to the same unsent skb clears it first
 *     (tcp_sendmsg_locked: "if (!copied) ... &= ~TCPHDR_PSH"). So a segment carries PSH when it ends where a
 *     write ended and no later write joined that piece: a PSH mark at its end. Under tcp_sw_gso a mark is a
 *     piece's flag (piece.c): a packet of several segments carries PSH on its last anyway, one segment
 *     carries it when a mark lies in it or at its end — the head piece that grew into the next keeps its
 *     flag at its new end (tcp_grow_skb), where tcp_mark_move puts the mark.
 *   - MSG_EOR (BRISK_MSG_EOR, every profile). Linux sets the eor bit on the write's last skb, and neither a
 *     later write (tcp_skb_can_collapse_to) nor retransmission collapsing (tcp_skb_can_collapse) appends to
 *     it. So no segment — first transmission or retransmission, however it is cut — crosses an EOR mark.
 *
 * A mark is a sequence number (the byte after the marked one) and a kind, kept in a ring of TCP_MARKS in the
 * connection, in sequence order, from snd.una on: no allocation, and a connection that never uses either
 * rule never touches the ring (the count, snd.marks, sits in a hot line; 0 skips everything here). Marks at
 * or below snd.una are dropped lazily by whichever call looks next. A PSH mark strictly inside a segment
 * already sent can never end one again and is dropped when the segment goes (tcp_mark_sent), so the ring
 * holds about one PSH mark per segment in flight, plus those of unsent data.
 *
 * When the ring is full. A new PSH mark replaces the oldest PSH-only mark — almost always one of data long
 * sent, whose only use left was to give a retransmission of that segment PSH — and is itself dropped if
 * every mark is an EOR mark; either case is counted in `forgotten`. An EOR mark is never dropped, since a
 * record boundary is a promise to the application: a write with BRISK_MSG_EOR that finds TCP_MARKS records
 * in flight is refused with BRISK_ERR_AGAIN (brisk_send), and ACKs make room.
 *
 *   tcp_mark_add / _clear_last       a write places or withdraws a mark
 *   tcp_mark_at / _psh_in / _eor_clip / _eor_before   the transmit paths ask
 *   tcp_mark_sent                    compaction as segments go out
 *   tcp_mark_move                    a piece grew past its mark (piece.c, Linux's tcp_grow_skb)
 */
#include "tcp/tcp.h"

static uint32_t slot(const brisk_sock *c, uint32_t i)
{
    return (c->mark.head + i) & (TCP_MARKS - 1);
}

/* Drops marks the cumulative ACK passed: no segment can end at or before snd.una any more. */
static void trim(brisk_sock *c)
{
    while (c->snd.marks && brisk_seq_leq(c->mark.seq[c->mark.head], c->snd.una)) {
        c->mark.head = (uint8_t)((c->mark.head + 1) & (TCP_MARKS - 1));
        c->snd.marks--;
    }
}

/* Removes ring entry i (0 = oldest), keeping the order of the rest. */
static void remove_at(brisk_sock *c, uint32_t i)
{
    for (uint32_t k = i; k + 1 < c->snd.marks; k++) {
        c->mark.seq[slot(c, k)] = c->mark.seq[slot(c, k + 1)];
        c->mark.kind[slot(c, k)] = c->mark.kind[slot(c, k + 1)];
    }
    c->snd.marks--;
}

int tcp_mark_eor_room(brisk_sock *c)
{
    trim(c);
    if (c->snd.marks < TCP_MARKS)
        return 1;
    for (uint32_t i = 0; i < c->snd.marks; i++) {
        if (!(c->mark.kind[slot(c, i)] & TCP_MARK_EOR))
            return 1; /* a PSH-only mark can make way */
    }
    return 0;
}

/* Puts `kind` at ring position i (0 = oldest), after the marks before it. */
static void insert_at(brisk_sock *c, uint32_t i, uint32_t seq, unsigned kind)
{
    for (uint32_t k = c->snd.marks; k > i; k--) {
        c->mark.seq[slot(c, k)] = c->mark.seq[slot(c, k - 1)];
        c->mark.kind[slot(c, k)] = c->mark.kind[slot(c, k - 1)];
    }
    c->mark.seq[slot(c, i)] = seq;
    c->mark.kind[slot(c, i)] = (uint8_t)kind;
    c->snd.marks++;
}

int tcp_mark_add(brisk_sock *c, uint32_t seq, unsigned kind)
{
    trim(c);
    uint32_t i = c->snd.marks;
    while (i > 0 && brisk_seq_gt(c->mark.seq[slot(c, i - 1)], seq))
        i--; /* almost always none: writes add at the data end */
    if (i > 0 && c->mark.seq[slot(c, i - 1)] == seq) {
        c->mark.kind[slot(c, i - 1)] |= (uint8_t)kind;
        return 0;
    }
    if (c->snd.marks == TCP_MARKS) {
        uint32_t j = 0;
        while (j < c->snd.marks && (c->mark.kind[slot(c, j)] & TCP_MARK_EOR))
            j++;
        if (j == c->snd.marks) {
            if (kind & TCP_MARK_EOR)
                return -1;
            c->mark.forgotten++; /* PSH only, and no room: this one goes without */
            return 0;
        }
        remove_at(c, j);
        c->mark.forgotten++;
        if (j < i)
            i--;
    }
    insert_at(c, i, seq, kind);
    return 0;
}

void tcp_mark_clear_last(brisk_sock *c, uint32_t seq, unsigned kind)
{
    trim(c);
    uint32_t n = c->snd.marks;
    if (!n || c->mark.seq[slot(c, n - 1)] != seq)
        return;
    c->mark.kind[slot(c, n - 1)] &= (uint8_t)~kind;
    if (!c->mark.kind[slot(c, n - 1)])
        c->snd.marks--;
}

unsigned tcp_mark_at(brisk_sock *c, uint32_t seq)
{
    trim(c);
    for (uint32_t i = 0; i < c->snd.marks; i++) {
        uint32_t m = c->mark.seq[slot(c, i)];
        if (m == seq)
            return c->mark.kind[slot(c, i)];
        if (brisk_seq_gt(m, seq))
            break;
    }
    return 0;
}

int tcp_mark_psh_in(brisk_sock *c, uint32_t seq, uint32_t end)
{
    trim(c);
    for (uint32_t i = 0; i < c->snd.marks; i++) {
        uint32_t m = c->mark.seq[slot(c, i)];
        if (brisk_seq_gt(m, end))
            break;
        if (brisk_seq_gt(m, seq) && (c->mark.kind[slot(c, i)] & TCP_MARK_PSH))
            return 1;
    }
    return 0;
}

uint32_t tcp_mark_eor_clip(brisk_sock *c, uint32_t seq, uint32_t len)
{
    trim(c);
    for (uint32_t i = 0; i < c->snd.marks; i++) {
        uint32_t m = c->mark.seq[slot(c, i)];
        if (brisk_seq_leq(m, seq))
            continue;
        if (brisk_seq_geq(m, seq + len))
            break;
        if (c->mark.kind[slot(c, i)] & TCP_MARK_EOR)
            return m - seq;
    }
    return len;
}

uint32_t tcp_mark_eor_before(brisk_sock *c, uint32_t end)
{
    trim(c);
    uint32_t start = c->snd.una;
    for (uint32_t i = 0; i < c->snd.marks; i++) {
        uint32_t m = c->mark.seq[slot(c, i)];
        if (brisk_seq_geq(m, end))
            break;
        if (c->mark.kind[slot(c, i)] & TCP_MARK_EOR)
            start = m;
    }
    return start;
}

void tcp_mark_move(brisk_sock *c, uint32_t from, uint32_t to)
{
    trim(c);
    uint32_t i = 0;
    while (i < c->snd.marks && c->mark.seq[slot(c, i)] != from)
        i++;
    if (i == c->snd.marks || !(c->mark.kind[slot(c, i)] & TCP_MARK_PSH))
        return;
    c->mark.kind[slot(c, i)] &= (uint8_t)~TCP_MARK_PSH;
    if (!c->mark.kind[slot(c, i)])
        remove_at(c, i);
    else
        i++;
    /* Marks after `from` up to `to`: the one at `to` takes the PSH, any before it stays where it is. */
    while (i < c->snd.marks && brisk_seq_lt(c->mark.seq[slot(c, i)], to))
        i++;
    if (i < c->snd.marks && c->mark.seq[slot(c, i)] == to) {
        c->mark.kind[slot(c, i)] |= TCP_MARK_PSH;
        return;
    }
    if (c->snd.marks == TCP_MARKS) { /* only if `from` kept an end of record: the PSH goes without */
        c->mark.forgotten++;
        return;
    }
    insert_at(c, i, to, TCP_MARK_PSH);
}

void tcp_mark_sent(brisk_sock *c, uint32_t seq, uint32_t end)
{
    trim(c);
    for (uint32_t i = 0; i < c->snd.marks;) {
        uint32_t m = c->mark.seq[slot(c, i)];
        if (brisk_seq_geq(m, end))
            break;
        if (brisk_seq_gt(m, seq) && c->mark.kind[slot(c, i)] == TCP_MARK_PSH)
            remove_at(c, i);
        else
            i++;
    }
}
