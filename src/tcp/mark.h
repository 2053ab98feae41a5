/*
 * mark.h — write boundaries in the send stream: push (PSH) and end-of-record (MSG_EOR) marks (see mark.c).
 */
#ifndef BRISK_TCP_MARK_H
#define BRISK_TCP_MARK_H

#include <stdint.h>

/* Marks one connection keeps (a power of two). */
#define TCP_MARKS 32

#define TCP_MARK_PSH 0x1u /* a segment ending here carries PSH (tcp_push_each_write) */
#define TCP_MARK_EOR 0x2u /* no segment crosses it: the data before it is a record (BRISK_MSG_EOR) */

/* The marks of the bytes from snd.una on, in sequence order: ring slots (head + i) & (TCP_MARKS - 1) for
 * i < the count, which lives in snd.marks (a hot line: 0 lets the transmit path skip this cold struct). Plus
 * the state the application's write needs to place them the way Linux places its skb flags. */
struct tcp_marks {
    uint32_t seq[TCP_MARKS]; /* the sequence number after the marked byte */
    uint8_t kind[TCP_MARKS]; /* TCP_MARK_* */
    uint8_t head;
    uint8_t started;    /* pushed is set (the first write sets it) */
    uint32_t pushed;    /* Linux's pushed_seq: the end of the data last marked PSH (forced-push rule) */
    uint64_t forgotten; /* marks dropped because the ring was full (PSH only: see mark.c) */
};

struct brisk_sock;

/* Adds `kind` at `seq`, in sequence order (merged into a mark already there; writes add at the data end).
 * Returns 0, or -1 when the ring is full of end-of-record marks and `kind` has TCP_MARK_EOR (nothing is
 * changed: the caller refuses the write). A PSH mark that finds the ring full replaces the oldest PSH-only
 * mark, or is dropped when there is none. */
int tcp_mark_add(struct brisk_sock *c, uint32_t seq, unsigned kind);
/* Whether an end-of-record mark could be added now. */
int tcp_mark_eor_room(struct brisk_sock *c);
/* Removes `kind` from the mark at `seq` if the last mark is there (a later write appended to its piece). */
void tcp_mark_clear_last(struct brisk_sock *c, uint32_t seq, unsigned kind);
/* The kinds marked exactly at `seq` (0: none). */
unsigned tcp_mark_at(struct brisk_sock *c, uint32_t seq);
/* Whether a PSH mark lies in (seq, end]. */
int tcp_mark_psh_in(struct brisk_sock *c, uint32_t seq, uint32_t end);
/* `len` shortened so that [seq, seq + len) ends at the first end-of-record mark inside it, if any. */
uint32_t tcp_mark_eor_clip(struct brisk_sock *c, uint32_t seq, uint32_t len);
/* The last end-of-record mark before `end` and after snd.una, or snd.una if there is none: where a segment
 * that ends at `end` may start at the earliest. */
uint32_t tcp_mark_eor_before(struct brisk_sock *c, uint32_t end);
/* The PSH of the mark at `from` moves to `to` (after it): the piece that ended at `from` now ends at `to`
 * (piece.c: the head piece took bytes of the next one, as tcp_grow_skb does). */
void tcp_mark_move(struct brisk_sock *c, uint32_t from, uint32_t to);
/* New data [seq, end) went out: PSH-only marks strictly inside it can no longer end a segment (Linux: the
 * later write appended to that skb, so its flag was cleared). */
void tcp_mark_sent(struct brisk_sock *c, uint32_t seq, uint32_t end);

#endif
