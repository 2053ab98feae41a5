/*
 * txt.c — the send-time ring: when each new-data segment still in flight was sent, for RTT samples.
 *
 * An ACK that covers a timed segment gives an RTT sample in ns (input.c's rtt_from_ack, Karn's rule applied
 * there): the ring in struct brisk_sock.txt holds up to TCP_TX_TIMES records (sequence number after the
 * segment, send time), oldest first; output.c pushes one per new-data segment while there is room, and an RTO
 * empties it (everything in flight is then ambiguous).
 *
 * Memory. A record's send time is not stored whole: every connection carries the ring, so it keeps one 64-bit
 * base and a 48-bit offset per record (10 bytes per record instead of 12 with the sequence number, 64 bytes
 * less per connection). Offsets are exact. When a new time does not fit — the ring was empty, the clock
 * stepped back below the base, or the base is 2^48 ns old — the ring is rebased on its earliest record.
 * Only records more than 2^48 ns (78 hours) older than the newest could still not fit: they are dropped
 * (those segments go untimed, as when the ring is full). Their sample would have been longer than
 * BRISK_RTT_SAMPLE_MAX (about 4.9 hours), which rtt.h does not take for a round trip; no configurable RTO
 * comes near it.
 *
 * Functions: tcp_txt_rebase (the slow path). tcp_txt_push (append) and tcp_txt_at (a record's time) are
 * inline in tcp.h: they run per segment.
 */
#include "tcp/tcp.h"

/* Re-expresses the ring relative to the earliest of its times and `now`, first dropping the oldest records
 * while the span they and `now` cover exceeds TCP_TXT_SPAN. O(records); runs only when `now` does not fit. */
void tcp_txt_rebase(brisk_sock *c, uint64_t now)
{
    uint64_t lo, hi;
    for (;;) {
        lo = hi = now;
        for (unsigned k = 0; k < c->txt.len; k++) {
            uint64_t t = tcp_txt_at(c, (c->txt.head + k) % TCP_TX_TIMES);
            lo = t < lo ? t : lo;
            hi = t > hi ? t : hi;
        }
        if (hi - lo <= TCP_TXT_SPAN)
            break;
        c->txt.head = (uint8_t)((c->txt.head + 1) % TCP_TX_TIMES); /* too old to time: drop it */
        c->txt.len--;
    }
    for (unsigned k = 0; k < c->txt.len; k++) {
        unsigned i = (c->txt.head + k) % TCP_TX_TIMES;
        tcp_txt_set_at(c, i, tcp_txt_at(c, i) - lo);
    }
    c->txt.base = lo;
}
