/*
 * sack.h (internal) — the SACK scoreboard (sack.c, RFC 6675 §3): one record per segment sent and not
 * cumulatively acknowledged, the byte totals, and what an ACK told it; the inline pipe of the transmit loop
 */
#ifndef BRISK_TCP_SACK_H
#define BRISK_TCP_SACK_H

#include <stdint.h>
#include "brisk/brisk.h"
#include "wire/tcp.h"

/* Scoreboard record flags (sack.c). */
#define TCP_SB_SACKED 0x1u /* the peer holds it (SACK) */
#define TCP_SB_LOST   0x2u /* marked lost (RACK, or everything unSACKed after an RTO) */
#define TCP_SB_RETRANS                                                                                       \
    0x4u /* lost and retransmitted since: counts in sb.retrans until acked or lost again                     \
          */
#define TCP_SB_EVER_RETRANS 0x8u /* retransmitted at least once (its ACK is ambiguous for RTT / RACK) */

/* One segment sent and not yet cumulatively acknowledged: its sequence range and last transmission time. */
struct tcp_sb_rec {
    uint32_t seq, end;
    uint64_t xmit;
    uint32_t flags;
};

/* SACK scoreboard (sack.c, RFC 6675 §3): one record per segment (at most one MSS) in [snd.una, snd.max),
 * in sequence order, in a ring that grows by doubling. Byte totals kept as records change state. */
struct tcp_sb {
    struct tcp_sb_rec *r;
    uint32_t cap, head, len; /* cap a power of two; records r[(head + i) & (cap - 1)], i < len */
    uint32_t sacked;         /* bytes SACKed */
    uint32_t lost;           /* bytes marked lost (retransmitted or not) */
    uint32_t retrans;        /* bytes lost and retransmitted, not yet acknowledged */
    uint8_t failed;          /* the ring could not grow: this connection recovers without it (NewReno) */
};

/* A data segment [seq, end) went out at now (new: appended, one record per MSS; else a retransmission). */
void tcp_sb_sent(brisk_sock *c, uint32_t seq, uint32_t end, uint64_t now);
/* What one ACK told the scoreboard besides the bytes it delivered. */
struct tcp_sb_news {
    int dsack;               /* segments (whole or partial MSS) a D-SACK block reported received twice (RFC
                                2883), 0 without one */
    uint32_t delivered_orig; /* newly acked or SACKed bytes never retransmitted (F-RTO's evidence) */
    uint64_t first_sackt;    /* send time of the first never-retransmitted record its blocks SACKed, in the
                                order the blocks are applied (0: none) */
    uint64_t last_sackt;     /* ... and of the last one */
};
/* Applies an ACK's cumulative point and SACK blocks; feeds RACK. Returns bytes newly acked or SACKed. */
uint32_t tcp_sb_ack(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now, struct tcp_sb_news *news);
/* RFC 6675 pipe: bytes in flight not SACKed and not lost, plus lost bytes retransmitted (tcp_pipe, inline
 * at the end of this file, answers the common case without a call). */
uint32_t tcp_pipe_full(const brisk_sock *c);
/* The first record marked lost and not yet retransmitted, or NULL. */
const struct tcp_sb_rec *tcp_sb_next_lost(const brisk_sock *c);
/* After an RTO: every record not SACKed is lost. */
void tcp_sb_mark_all_lost(brisk_sock *c);
void tcp_sb_mark_lost(brisk_sock *c, struct tcp_sb_rec *r);
struct tcp_sb_rec *tcp_sb_at(const brisk_sock *c, uint32_t i);
void tcp_sb_free(brisk_sock *c);

#endif

#if defined(BRISK_TCP_SOCK_COMPLETE) && !defined(BRISK_TCP_SACK_INLINE)
#define BRISK_TCP_SACK_INLINE

static inline int tcp_sb_active(const struct brisk_sock *c)
{
    return c->opt.sack && !c->sb.failed;
}

/* The transmit loop asks before every segment: with nothing SACKed or marked lost, pipe is the flight plus
 * what was retransmitted (tcp_pipe_full's formula with sacked = lost = 0). */
static inline uint32_t tcp_pipe(const struct brisk_sock *c)
{
    if (tcp_sb_active(c) && (c->sb.sacked | c->sb.lost) == 0)
        return tcp_flight(c) + c->sb.retrans;
    return tcp_pipe_full(c);
}

#endif
