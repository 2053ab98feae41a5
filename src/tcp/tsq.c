/*
 * tsq.c — what sits below TCP, and how much may: below-TCP accounting and TCP Small Queues (TSQ).
 *
 * Accounting. Every packet a connection hands down with data, SYN or FIN (pure ACKs are not charged) is
 * charged its truesize — frame bytes plus tcp_buf_overhead, like an skb — in tsq.wmem, and stays charged
 * until the packet's buffer is freed: normally when the device reports TX completion, or when it is dropped
 * on the way (device refusal, ARP failure). The pool calls brisk_tcp_pkt_released() for every owned packet it
 * frees, whatever the path, so the charge can never leak. A connection freed while packets are below it
 * becomes a zombie whose struct outlives it until the last of them returns (Linux holds a socket reference
 * per skb).
 *
 * Budget (docs/transmit-engine.md, "TCP Small Queues"). Before each segment the transmit function asks
 * tcp_tsq_holds() (tsq.h): is wmem over the budget? The budget is the rule's limit function of three sizes:
 * the cap tcp_limit_output_bytes, `by_rate` = pacing rate x hold, and two full-sized buffers. The rules are
 * the table below, indexed by tcp_tsq_rule (enum brisk_tsq_rule, whose names the setting takes):
 *   cap      the static cap                         (Linux 3.12)
 *   floor    max(cap, rate x hold)                  (3.13, 3.14: the cap was a floor)
 *   ceiling  min(cap, max(2 buffers, rate x hold))  (3.19 on: the cap became a ceiling — the xen-netfront
 *                                                    regression)
 * doubled while retransmitting. hold = 1 s >> tcp_pacing_shift (≈1 ms), and — brisk's addition, with
 * tcp_tsq_adaptive — at least tcp_tsq_latency_factor x the device's smoothed TX-completion overhead, so a
 * device that completes late (Xen netfront, coalescing NICs) does not starve the flow while a fast one keeps
 * queues short. The overhead is the completion latency minus the time the packet waited for the wire behind
 * frames queued before it (netdev.c estimates it from the link speed). Using the raw latency would feed
 * back: a budget of rate x 2 x latency lets the ring hold more, which raises the latency, which raises the
 * budget — four flows on an immediate-completion NIC filled a 4096-descriptor ring (44 ms of queue) that
 * way. A new rule is one entry in the table (with its enum value and name) and its test: every rule must
 * be non-decreasing in the rate and never below min(cap, two buffers), the floor under which the inline
 * check holds nothing without computing the rate (test_tsq checks each entry against both).
 *
 * Throttle and resume. With tcp_tsq_shortcut a connection with at most one segment unacknowledged is never
 * held (Linux f921a4a5bffa). When it holds, the connection is marked throttled first and the budget
 * re-checked, the discipline that closes the completion race on SMP (here a completion may also arrive in
 * the same poll). The resume path never transmits from the completion: it parks the connection on the
 * stack's deferred list and brisk_stack_poll runs it through the one transmit function (TCP_XMIT_RESUME),
 * with its current Nagle / cork mode. Auto-corking (tail.c) holds a small tail with the same mark, so the
 * same completion resumes it.
 */
#include <stdlib.h>

#include "tcp/tcp.h"

static uint64_t rule_cap(uint64_t cap, uint64_t by_rate, uint64_t two)
{
    (void)by_rate;
    (void)two;
    return cap;
}

static uint64_t rule_floor(uint64_t cap, uint64_t by_rate, uint64_t two)
{
    (void)two;
    return by_rate > cap ? by_rate : cap;
}

static uint64_t rule_ceiling(uint64_t cap, uint64_t by_rate, uint64_t two)
{
    uint64_t want = by_rate > two ? by_rate : two;
    return want < cap ? want : cap;
}

const struct tcp_tsq_rule tcp_tsq_rules[BRISK_TSQ_RULES] = {
    [BRISK_TSQ_CAP] = {"3.12", rule_cap},
    [BRISK_TSQ_FLOOR] = {"3.13-3.18", rule_floor},
    [BRISK_TSQ_CEILING] = {"3.19 on", rule_ceiling},
};

void tcp_charge(brisk_sock *c, brisk_pkt *pkt)
{
    pkt->owner = c;
    pkt->truesize = pkt->len + (uint32_t)brisk_route_l3_hlen(&c->rt) + BRISK_ETH_HLEN + c->net->s.tcp_buf_overhead;
    c->tsq.wmem += pkt->truesize;
    c->tsq.pkts++;
}

void brisk_tcp_pkt_released(void *ctx, brisk_pkt *pkt)
{
    (void)ctx;
    brisk_sock *c = pkt->owner;
    pkt->owner = NULL;
    c->tsq.wmem -= pkt->truesize <= c->tsq.wmem ? pkt->truesize : c->tsq.wmem;
    c->tsq.pkts--;
    if (c->tsq.zombie) {
        if (c->tsq.pkts == 0) {
            brisk_sock **pp = &tcp_of(c->net)->zombies;
            while (*pp && *pp != c)
                pp = &(*pp)->hnext;
            if (*pp)
                *pp = c->hnext;
            tcp_of(c->net)->nsocks--;
            free(c);
        }
        return;
    }
    if (c->tsq.throttled) {
        /* Room below TCP again. Never transmit from here: park it for the stack's next poll. */
        c->tsq.throttled = 0;
        c->net->c.TSQResumes++;
        tcp_block(c);
        c->net->tx_wake = 1;
    }
}

/* The budget; tcp_tsq_over inlines it (a bulk sender asks it several times per segment it sends). */
static inline uint64_t tsq_limit(const brisk_sock *c)
{
    const struct brisk_settings *s = &c->net->s;
    uint64_t hold = BRISK_NSEC_PER_SEC >> s->tcp_pacing_shift;
    if (s->tcp_tsq_adaptive && c->rt.dev) {
        uint64_t lat = c->rt.dev->stats.tx_done_overhead_ns * s->tcp_tsq_latency_factor;
        if (lat > hold)
            hold = lat;
    }
    uint64_t rate = tcp_pacing_rate(c);
    uint64_t by_rate = rate == UINT64_MAX ? UINT64_MAX : tcp_muldiv(rate, hold, BRISK_NSEC_PER_SEC);
    /* A settings struct filled in by hand may hold any number: past the table is the ceiling rule. */
    uint32_t rule = s->tcp_tsq_rule < BRISK_TSQ_RULES ? s->tcp_tsq_rule : BRISK_TSQ_CEILING;
    return tcp_tsq_rules[rule].limit(s->tcp_limit_output_bytes, by_rate, tcp_tsq_two_bufs(c));
}

uint64_t tcp_tsq_limit(const brisk_sock *c)
{
    return tsq_limit(c);
}

int tcp_tsq_over(brisk_sock *c)
{
    const struct brisk_settings *s = &c->net->s;
    uint64_t limit = tsq_limit(c);
    if (brisk_seq_lt(c->snd.nxt, c->snd.max))
        limit *= 2; /* retransmissions get twice the room (Linux tcp_xmit_retransmit_queue) */
    if (c->tsq.wmem <= limit)
        return 0;
    if (s->tcp_tsq_shortcut && c->snd.max - c->snd.una <= c->snd.mss)
        return 0;
    c->tsq.throttled = 1;
    if (c->tsq.wmem <= limit) { /* re-check after marking: a completion may have come in between */
        c->tsq.throttled = 0;
        return 0;
    }
    c->net->c.TSQThrottles++;
    return 1;
}
