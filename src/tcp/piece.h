/*
 * piece.h — the send queue as Linux's write queue of skbs: write-time pieces, and the packets the transmit
 * function cuts from them under tcp_sw_gso (see piece.c).
 */
#ifndef BRISK_TCP_PIECE_H
#define BRISK_TCP_PIECE_H

#include <stdint.h>

/* Grids of pieces one connection keeps (see struct tcp_pieces); a power of two. */
#define TCP_RUNS 8

/* What Linux gives TCP as a route's largest GSO packet when the device has the legacy 64 KB limit: 65536
 * less MAX_TCP_HEADER + 1 (sk_setup_caps; 320 + 1 on x86-64), so writes fill skbs of 65 segments of 1000 or
 * 44 of 1460 (measured: a TCP_NOTSENT_LOWAT write of 1 byte's mark takes 65000 and 64240 bytes). */
#define TCP_SW_GSO_MAX 65215u

/* The unsent bytes in pieces, as Linux holds them in skbs of its size goal (tcp_xmit_size_goal). A piece
 * that fills is followed by another of the same size, so the pieces of the queue lie on a few grids: run i
 * has pieces of size[i] from origin[i] on, up to the next run's origin; the last run's last piece is the
 * queue's tail (it may be short and still fill). A new run begins where a piece begins off the grid of the
 * one before: after the tail was sent, after a record (MSG_EOR) ended, or when the size goal changed. Only
 * the head piece, the one at snd.nxt, is ever cut short or lengthened (by the transmit function, the way
 * tso_fragment and tcp_grow_skb change Linux's first unsent skb), and then head_end says where it ends. */
struct tcp_pieces {
    /* First, so that a write's new run (tcp_piece_restart: first, n and slot 0) is one cache line. */
    uint8_t first, n;
    uint8_t head_set;          /* head_end overrides the grid for the piece at snd.nxt */
    uint32_t head_end;         /* the end of the head piece after a grow */
    uint32_t origin[TCP_RUNS]; /* ring slots (first + i) & (TCP_RUNS - 1), in sequence order */
    uint32_t size[TCP_RUNS];
    uint64_t wstamp;    /* when a segment was last sent (Linux tcp_wstamp_ns), for TSO deferral */
    uint64_t forgotten; /* runs merged into their neighbour for lack of room (boundaries then approximate) */
};

struct brisk_sock;

/* The end of the piece that holds byte `x` (snd.nxt <= x < the data end). */
uint32_t tcp_piece_end(struct brisk_sock *c, uint32_t x);
/* Where the queue's last piece begins (the send queue holds unsent bytes). */
uint32_t tcp_piece_tail(struct brisk_sock *c);
/* A write is about to add bytes to a piece beginning at `at` whose size goal is `size` (the tail it joins,
 * or a new piece at the data end): opens a run there unless the last one's grid already has a piece
 * beginning at `at` with that size. */
void tcp_piece_begin(struct brisk_sock *c, uint32_t at, uint32_t size);
/* tcp_piece_begin where `at` is snd.max, in brisk's own mode (no tcp_sw_gso): only a run there is kept. Every
 * byte before it has been sent, and without tcp_sw_gso only tcp_piece_tail reads the pieces, from snd.max on,
 * so the runs behind are never read again. */
void tcp_piece_restart(struct brisk_sock *c, uint32_t at, uint32_t size);
/* snd.nxt moved forward: the head override and runs behind it are dropped. */
void tcp_piece_advance(struct brisk_sock *c);

/* What the route takes in one GSO packet (Linux's sk_gso_max_size): TCP_SW_GSO_MAX, or less where the
 * device that segments takes less. */
uint32_t tcp_gso_limit(const struct brisk_sock *c);
/* tcp_sw_gso's transmit decisions, for the packet at snd.nxt (output.c runs the loop). */
/* Segments a packet may have: Linux's tcp_tso_segs (tcp_tso_autosize: pacing rate >> tcp_pacing_shift, plus
 * the GSO size >> (min_rtt_us >> tcp_tso_rtt_log), at least tcp_min_tso_segs). */
uint32_t tcp_tso_segs(const struct brisk_sock *c, uint32_t mss);
/* Packets the congestion window lets go now, at most `max_segs` (Linux tcp_cwnd_test: never more than half
 * the window in one packet). */
uint32_t tcp_cwnd_quota(const struct brisk_sock *c, uint32_t max_segs);
/* The head piece, made up to `want` bytes with what the next piece holds if it is shorter and may take it
 * (tcp_grow_skb: not past a record's end, not from more than one piece; the head's PSH mark moves to its new
 * end). Returns the head piece's end. */
uint32_t tcp_piece_grow(struct brisk_sock *c, uint32_t want);
/* Whether a multi-segment head piece of `hlen` bytes waits for a later, larger chance to go (Linux
 * tcp_tso_should_defer); *rwnd says the peer's window is what it waits for (else cwnd). */
int tcp_tso_defer(struct brisk_sock *c, uint32_t hlen, int tail, uint32_t max_segs, uint64_t now, int *rwnd);

/* The packets Linux's tcp_write_xmit sends from new data at snd.nxt (= snd.max), `mss` the payload a
 * segment carries now: *sent and *sent_new as the transmit function keeps them. Returns the hold reason
 * (BRISK_HOLD_NONE: nothing left, or the one packet of a TCP_PUSH_ONE call went). */
int tcp_xmit_packets(struct brisk_sock *c, int why, uint32_t mss, uint64_t now, int *sent,
                     uint32_t *sent_new);

#endif
