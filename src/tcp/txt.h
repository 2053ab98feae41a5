/*
 * txt.h (internal) — send times of new-data segments in flight, for RTT samples (txt.c)
 */
#ifndef BRISK_TCP_TXT_H
#define BRISK_TCP_TXT_H

#include <stdint.h>
#include "brisk/brisk.h"

/* Send-time records per connection (struct tcp_txt). */
#define TCP_TX_TIMES 32

/* Send times of new-data segments still in flight, oldest first: every ACK that covers one gives an RTT
 * sample in ns (timestamps tick in ms, too coarse for 100 µs paths, so they serve PAWS and Karn-safe
 * backoff resets only). When the ring is full, new segments go untimed until it drains. A send time is
 * kept as a 48-bit offset from `base` (tcp_txt_push / tcp_txt_at), as three adjacent 16-bit words (split
 * low / high arrays put one time in two cache lines): exact, since records that would span more than
 * 2^48 ns (78 hours, beyond any RTT sample rtt.h accepts) are not kept. An ACK reads one end[] and one
 * at[] record; the scalars after the arrays are hot (line 30). */
struct tcp_txt {
    uint32_t end[TCP_TX_TIMES];   /* sequence number after the segment */
    uint16_t at[TCP_TX_TIMES][3]; /* when it was sent: the offset from base, low 16-bit word first */
    uint32_t rtx_high;            /* retransmissions happened below this: samples there are ambiguous */
    uint8_t head, len;
    uint8_t rtx_valid;
    uint64_t base; /* send times are base + at, ns */
};

/* Largest offset of a send time from txt.base. */
#define TCP_TXT_SPAN ((UINT64_C(1) << 48) - 1)
/* Re-expresses the ring relative to its earliest time or `now`, dropping records that cannot be. */
void tcp_txt_rebase(brisk_sock *c, uint64_t now);

#endif

#if defined(BRISK_TCP_SOCK_COMPLETE) && !defined(BRISK_TCP_TXT_INLINE)
#define BRISK_TCP_TXT_INLINE

/* The send time of txt record i. */
static inline uint64_t tcp_txt_at(const brisk_sock *c, unsigned i)
{
    const uint16_t *a = c->txt.at[i];
    return c->txt.base + ((uint64_t)a[2] << 32 | (uint64_t)a[1] << 16 | a[0]);
}

/* Stores record i's offset from txt.base (below 2^48). */
static inline void tcp_txt_set_at(brisk_sock *c, unsigned i, uint64_t off)
{
    c->txt.at[i][0] = (uint16_t)off;
    c->txt.at[i][1] = (uint16_t)(off >> 16);
    c->txt.at[i][2] = (uint16_t)(off >> 32);
}

/* Records that new data ending at `end` was sent at `now`; the caller has checked that the ring has room. */
static inline void tcp_txt_push(brisk_sock *c, uint32_t end, uint64_t now)
{
    if (c->txt.len == 0)
        c->txt.base = now;
    else if (now < c->txt.base || now - c->txt.base > TCP_TXT_SPAN)
        tcp_txt_rebase(c, now); /* rare: see txt.c */
    unsigned i = (c->txt.head + c->txt.len++) % TCP_TX_TIMES;
    c->txt.end[i] = end;
    tcp_txt_set_at(c, i, now - c->txt.base);
}

#endif
