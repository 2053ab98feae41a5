/*
 * hold.c — hold reasons: why a byte that is ready to go has not left (docs/design.md principle 5).
 *
 * Every time the transmit function (output.c) stops with data or a FIN waiting it names the check that
 * stopped it — cwnd, rwnd, nagle, cork, autocork, tsq, pacing, device — and tcp_hold() records the change:
 * the time the previous reason was in force is added to that reason's total, and the new reason's count of
 * stops goes up. A reason that stays in force across calls is one stop and one stretch of time. The totals
 * are what brisk_conn_info(), brisk-ss and the lab report per connection; the reason in force is what the
 * transmit function compares against before calling here (most calls change nothing).
 *
 * Linux has no such record: its chrono stats (tcp_chrono_start, TCP_NLA_BUSY / RWND_LIMITED /
 * SNDBUF_LIMITED) time three of these states; the others were found, historically, by reading code.
 */
#include "tcp/tcp.h"

static const char *const hold_names[BRISK_HOLD_COUNT] = {"none", "cwnd",     "rwnd",   "nagle", "cork",
                                                         "tsq",  "autocork", "pacing", "device"};

const char *brisk_hold_name(int reason)
{
    return reason >= 0 && reason < BRISK_HOLD_COUNT ? hold_names[reason] : "?";
}

void tcp_hold(brisk_sock *c, int reason, uint64_t now)
{
    if (c->hold.reason == reason)
        return;
    if (c->hold.reason != BRISK_HOLD_NONE)
        c->hold.ns[c->hold.reason - 1] += now - c->hold.since;
    if (reason != BRISK_HOLD_NONE)
        c->hold.events[reason - 1]++;
    c->hold.reason = (uint8_t)reason;
    c->hold.since = now;
}
