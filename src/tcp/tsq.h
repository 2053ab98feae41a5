/*
 * tsq.h (internal) — below-TCP accounting and TCP Small Queues (tsq.c).
 *
 * Two parts, as every mechanism header here (pacing.h says why): the state and interface first, the inline
 * check the transmit function makes before every segment once struct brisk_sock is complete.
 */
#ifndef BRISK_TCP_TSQ_H
#define BRISK_TCP_TSQ_H

#include <stdint.h>

#include "brisk/brisk.h"
#include "core/pktbuf.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"

struct tcp_tsq {
    uint64_t wmem; /* truesize of this connection's packets below TCP, not yet completed */
    uint32_t pkts; /* those packets */
    uint8_t
        throttled;  /* TSQ (or auto-corking) held it: resume via the stack's deferred list on a completion */
    uint8_t zombie; /* freed by TCP while packets were below it: the struct dies with the last */
};

/* One TSQ rule (enum brisk_tsq_rule, tcp_tsq_rule): the budget from the cap (tcp_limit_output_bytes), what
 * the pacing rate fills in the hold time (`by_rate`) and two full-sized buffers (`two`). A rule must be
 * non-decreasing in by_rate and never below min(cap, two): the transmit function's shortcut (tcp_tsq_holds)
 * holds nothing below that floor without computing the rate, and test_tsq checks every rule of the table
 * against both. */
struct tcp_tsq_rule {
    const char *since;                                               /* the Linux versions that had it */
    uint64_t (*limit)(uint64_t cap, uint64_t by_rate, uint64_t two); /* the budget, bytes of truesize */
};
extern const struct tcp_tsq_rule tcp_tsq_rules[BRISK_TSQ_RULES];

/* Charges a packet with data, SYN or FIN to its connection until its buffer is freed. */
void tcp_charge(brisk_sock *c, brisk_pkt *pkt);
/* The pool frees an owned packet (completion, drop): uncharge, resume a throttled connection via the
 * stack's poll, free a zombie with its last packet. */
void brisk_tcp_pkt_released(void *ctx, brisk_pkt *pkt);
/* The connection's TSQ budget now (the rule's limit; not doubled for retransmissions). */
uint64_t tcp_tsq_limit(const brisk_sock *c);
/* Whether TSQ holds the connection now, past tcp_tsq_holds' floor (marks it throttled, then re-checks). */
int tcp_tsq_over(brisk_sock *c);

#endif

#if defined(BRISK_TCP_SOCK_COMPLETE) && !defined(BRISK_TCP_TSQ_INLINE)
#define BRISK_TCP_TSQ_INLINE

/* Two full-sized packets' worth of memory: the ceiling rule's floor, and every rule's shortcut floor. */
static inline uint64_t tcp_tsq_two_bufs(const brisk_sock *c)
{
    return 2ull *
           (c->snd.mss + BRISK_ETH_HLEN + (uint32_t)brisk_route_l3_hlen(&c->rt) + BRISK_TCP_HLEN +
            c->net->s.tcp_buf_overhead);
}

/* The transmit function asks before every segment: inline, so that the usual answer costs no call. At or
 * below min(cap, two buffers), which no rule goes under (struct tcp_tsq_rule), nothing is held, without the
 * rate arithmetic. */
static inline int tcp_tsq_holds(brisk_sock *c)
{
    const struct brisk_settings *s = &c->net->s;
    if (!s->tcp_tsq)
        return 0;
    uint64_t floor = s->tcp_limit_output_bytes;
    if (tcp_tsq_two_bufs(c) < floor)
        floor = tcp_tsq_two_bufs(c);
    return c->tsq.wmem > floor && tcp_tsq_over(c);
}

#endif
