/*
 * bql.c — byte queue limits (BQL): how many bytes a device's transmit ring may hold, learned from its TX
 * completions.
 *
 * A transmit ring is a queue nobody can see into: bytes waiting in it add latency for every flow behind them,
 * yet a ring that runs dry while the stack has data idles the wire. BQL (Linux 3.3, Tom Herbert's "dynamic
 * queue limits") keeps the ring just deep enough to cover the time between two chances to refill it. The
 * limit is a soft byte budget: the packet that crosses it is still accepted, then the queue stops until
 * completions bring it back under. brisk's TCP checks the stop before building a data segment and holds with
 * reason "device" (the connection resumes from the TX completion that reopens the queue); pure ACKs and
 * control packets are never held by it — there is no qdisc below brisk to park them in, and they are tiny.
 *
 * The limit adapts at each completion event, from two observations:
 *
 *   Starvation — the limit was too small. The queue was stopped (over its limit) and this completion
 *   emptied the ring, or the queue was stopped at the previous completion and everything queued up to then
 *   is now done. Either way the device ran out of work while the stack was being held back. The limit grows
 *   by the bytes that were queued after the previous completion and are already done, plus how far the queue
 *   was over the limit then: roughly what the device could have used.
 *
 *   Slack — the limit was larger than needed. Work remained in the ring across both this and the previous
 *   completion, and the device completed `bytes` in this interval, so about 2 x bytes would have kept it busy
 *   (one interval being sent, one queued behind it). The excess of limit (+ previous overshoot) over that is
 *   slack; the smallest slack seen during hold_ns is removed from the limit once hold_ns has passed, so the
 *   limit shrinks only when it has been too big for a whole hold period.
 *
 * This is the algorithm of Linux's lib/dynamic_queue_limits.c, written anew from its description. Its
 * assumption matters: a completion must mean "these bytes have left the wire". A driver whose completions
 * arrive later for other reasons (Xen netfront's backend round trip, seed 001) makes every completion look
 * like a slow wire with work still queued — slack — and BQL would shrink the ring to a couple of packets and
 * collapse throughput. That is why BQL is a driver opt-in (BRISK_NETDEV_CAP_BQL), as it is in Linux, and why
 * tests/sim/test_bql.c shows the collapse on a delayed-completion NIC that opts in anyway. Coalesced
 * completions (seed 003's mvneta) are fine: an emptied batch is starvation, and the limit grows past the
 * coalescing threshold within a few timer periods.
 */
#include "net/bql.h"

void brisk_bql_init(struct brisk_bql *b, uint32_t limit_min, uint32_t limit_max, uint64_t hold_ns,
                    uint64_t now)
{
    *b = (struct brisk_bql){0};
    if (limit_min > limit_max)
        limit_min = limit_max;
    b->limit_min = limit_min;
    b->limit_max = limit_max;
    b->limit = limit_min;
    b->hold_ns = hold_ns;
    b->lowest_slack = UINT32_MAX;
    b->slack_start = now;
}

int64_t brisk_bql_avail(const struct brisk_bql *b)
{
    return (int64_t)b->limit - (int64_t)(b->queued - b->completed - b->batch);
}

static uint64_t pos_diff(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

static void completed(struct brisk_bql *b, uint64_t bytes, uint64_t now)
{
    uint64_t in_progress_before = b->queued - b->completed;
    uint64_t over = pos_diff(in_progress_before, b->limit); /* stopped just before this completion */
    uint64_t done = b->completed + bytes;
    if (done > b->queued) /* a driver completing more than it was given: trust the queue, not the driver */
        done = b->queued;
    uint64_t in_progress = b->queued - done;
    uint64_t prev_in_progress = pos_diff(b->prev_queued, b->completed);
    int all_prev_done = done >= b->prev_queued;
    uint64_t limit = b->limit;

    if ((over && in_progress == 0) || (b->prev_over && all_prev_done)) {
        limit += pos_diff(done, b->prev_queued) + b->prev_over;
        b->grows++;
        b->lowest_slack = UINT32_MAX;
        b->slack_start = now;
    } else if (in_progress && prev_in_progress && !all_prev_done) {
        uint64_t slack = pos_diff(limit + b->prev_over, 2 * (done - b->completed));
        uint64_t slack_last = b->prev_over ? pos_diff(b->prev_last_obj, b->prev_over) : 0;
        if (slack_last > slack)
            slack = slack_last;
        if (slack < b->lowest_slack)
            b->lowest_slack = (uint32_t)(slack > UINT32_MAX ? UINT32_MAX : slack);
        if (now - b->slack_start > b->hold_ns) {
            if (b->lowest_slack) {
                limit = pos_diff(limit, b->lowest_slack);
                b->shrinks++;
            }
            b->lowest_slack = UINT32_MAX;
            b->slack_start = now;
        }
    }
    if (limit > b->limit_max)
        limit = b->limit_max;
    if (limit < b->limit_min)
        limit = b->limit_min;
    if (limit != b->limit) {
        b->limit = (uint32_t)limit;
        over = 0; /* judged against the old limit; the new one starts clean */
    }
    b->prev_over = (uint32_t)(over > UINT32_MAX ? UINT32_MAX : over);
    b->prev_last_obj = b->last_obj;
    b->completed = done;
    b->prev_queued = b->queued;
}

void brisk_bql_flush(struct brisk_bql *b)
{
    if (b->batch) {
        uint64_t bytes = b->batch;
        b->batch = 0;
        completed(b, bytes, b->batch_time);
    }
}

int brisk_bql_sent(struct brisk_bql *b, uint32_t bytes)
{
    brisk_bql_flush(b); /* the event's snapshot must be taken before the refill it triggers */
    b->queued += bytes;
    b->last_obj = bytes;
    return brisk_bql_avail(b) < 0;
}

void brisk_bql_done(struct brisk_bql *b, uint32_t bytes, uint64_t now)
{
    if (b->batch && now != b->batch_time)
        brisk_bql_flush(b);
    b->batch += bytes;
    b->batch_time = now;
}
