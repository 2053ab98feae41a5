/*
 * isn.c — initial sequence numbers per RFC 6528: ISN = M + F(4-tuple, secret), where M is a clock that ticks
 * every 4 µs (RFC 9293 §3.4.1) and F a keyed hash (SipHash-2-4 under the stack's secret, which derives from
 * its seed — so the simulator stays deterministic while a real stack, seeded randomly, is unpredictable to an
 * off-path attacker). Successive connections of the same 4-tuple get increasing ISNs, which keeps old
 * duplicates out of a new incarnation's window.
 */
#include "tcp/tcp.h"

uint32_t tcp_isn(struct brisk_net *net, const struct brisk_tuple *id, uint64_t now)
{
    /* Domain-separated from the connection table's use of the same keyed hash. */
    uint64_t f = tcp_tuple_hash(tcp_of(net), id) ^ 0x69736e00ull;
    return (uint32_t)(now / 4000u) + (uint32_t)brisk_mix64(f);
}
