/*
 * timer.h (internal) — TCP's timers: the retransmit / persist / probe timer multiplexed by kind, the delayed
 * ACK, the cork and pacing timers, keepalive / TIME-WAIT / FIN-WAIT-2 (timer.c)
 */
#ifndef BRISK_TCP_TIMER_H
#define BRISK_TCP_TIMER_H

#include <stdint.h>
#include "brisk/brisk.h"
#include "core/timer.h"

enum tcp_rtx_kind {
    TCP_RTX_NONE = 0,
    TCP_RTX_RTO,     /* retransmission timeout (RFC 6298) — also SYN / SYN-ACK retransmission */
    TCP_RTX_PERSIST, /* zero-window probe (RFC 9293 §3.8.6.1) */
    TCP_RTX_TLP,     /* tail loss probe (RFC 8985 §7) */
    TCP_RTX_REO,     /* RACK reordering window: a segment becomes lost when it expires (RFC 8985 §6.2) */
};

enum tcp_misc_kind {
    TCP_MISC_NONE = 0,
    TCP_MISC_KEEPALIVE, /* ESTABLISHED idle probing (RFC 1122 §4.2.3.6) */
    TCP_MISC_TIMEWAIT,  /* TIME-WAIT expiry (2 MSL) */
    TCP_MISC_FINWAIT2,  /* orphaned FIN-WAIT-2 timeout */
};

/* The deadlines and the two timers an ACK checks (their expiry and armed words, in line 18) first; the
 * other three timers begin the cold lines 19-23. */
struct tcp_timers {
    uint64_t rtx_deadline;     /* when the retransmit timer should fire; the wheel entry may be earlier
                                  (lazy: it is only moved when the deadline moves earlier) */
    uint64_t delack_deadline;  /* when the owed ACK must go; the wheel entry may be earlier (lazy) */
    uint64_t last_rx;          /* time of the last segment received (keepalive idle) */
    uint64_t last_tx;          /* time of the last data sent (idle restart) */
    uint32_t retries;          /* consecutive timeouts (RTO backoffs, persist probes, SYN resends) */
    uint32_t probes;           /* keepalive probes sent without answer */
    uint32_t tlp_end;          /* TLP.end_seq: snd.max when the outstanding probe was sent (RFC 8985 §7.3) */
    uint8_t rtx_kind;          /* enum tcp_rtx_kind */
    uint8_t tlp_on;            /* a probe is outstanding: no other until its episode ends */
    uint8_t tlp_retrans;       /* the probe retransmitted old data (else it sent new data) */
    uint8_t misc_kind;         /* enum tcp_misc_kind */
    struct brisk_timer rtx;    /* retransmit / persist, multiplexed by kind */
    struct brisk_timer delack; /* the delayed ACK */
    struct brisk_timer cork;   /* TCP_CORK's 200 ms ceiling on a held partial segment */
    struct brisk_timer pace;   /* the next departure time, while pacing holds data */
    struct brisk_timer misc;   /* keepalive / TIME-WAIT / FIN-WAIT-2 */
};

#endif

#if defined(BRISK_TCP_SOCK_COMPLETE) && !defined(BRISK_TCP_TIMER_INLINE)
#define BRISK_TCP_TIMER_INLINE

void tcp_timers_init(brisk_sock *c);
void tcp_timers_stop(brisk_sock *c);
/* The only ways TCP touches the wheel: each call is one counted wheel operation (cancel only if armed). */
void tcp_timer_arm(brisk_sock *c, struct brisk_timer *t, uint64_t at);
void tcp_timer_cancel(brisk_sock *c, struct brisk_timer *t);
/* Sets the retransmit deadline for what is outstanding — a tail loss probe when one is allowed and due before
 * the RTO, else the RTO from now — or clears it when nothing is outstanding. */
void tcp_rearm_rto(brisk_sock *c, uint64_t now);
/* After a send by tcp_write_xmit (`prior_max`: snd.max before it): the RTO is not restarted by a send (RFC
 * 6298 §5.1) but a probe deadline is (RFC 8985 §7.2), and with `eager` the compat discipline re-arms
 * always; with Linux's timers, Linux's rules (tcp_event_new_data_sent, tcp_schedule_loss_probe,
 * tcp_xmit_retransmit_queue: timer.c). */
void tcp_rearm_sent_linux(brisk_sock *c, uint64_t now, uint32_t prior_max);
static inline void tcp_rearm_sent(brisk_sock *c, uint64_t now, uint32_t prior_max, int eager)
{
    if (c->net->s.tcp_loss_timers == BRISK_COMPAT_LINUX)
        tcp_rearm_sent_linux(c, now, prior_max);
    else if (c->timer.rtx_kind != TCP_RTX_RTO || (eager && c->net->s.tcp_timer_eager))
        tcp_rearm_rto(c, now);
}
/* Linux's timers: Linux's tcp_rearm_rto — the RTO from now or, re-armed over a probe or reordering deadline
 * (`from_head`), from the oldest outstanding segment's last transmission (tcp_rto_delta_us); cleared when
 * nothing is outstanding. */
void tcp_rearm_rto_linux(brisk_sock *c, uint64_t now, int from_head);
void tcp_arm_persist(brisk_sock *c, uint64_t now);
/* An ACK left the peer's window closed after a probe: the next probe is a full backed-off interval from now
 * (Linux's tcp_ack_probe re-arms its probe timer on every such ACK). */
void tcp_persist_ack(brisk_sock *c, uint64_t now);
/* SYN-SENT took an unacceptable ACK: unless the SYN was retransmitted already, the retransmission timer fires
 * TCP_TIMEOUT_MIN from now (an expiry like any other: it counts and backs off). */
void tcp_syn_rtx_soon(brisk_sock *c, uint64_t now);
void tcp_clear_rtx(brisk_sock *c);
/* The owed ACK's deadline, lazily like the retransmit deadline: an ACK that rides on data clears `pending`
 * and leaves the wheel alone; an entry that fires with nothing owed does nothing, one that fires before the
 * deadline moves there. In a request / response exchange the delayed-ACK timer is then armed about once per
 * ato instead of armed and cancelled once per transaction. Inline: every delayed ACK comes here, and of two
 * callers (input.c) LTO inlined neither. */
static inline void tcp_schedule_ack(brisk_sock *c, uint64_t now)
{
    if (c->ack.pending)
        return; /* already owed: the deadline counts from the first unacknowledged segment */
    c->ack.pending = 1;
    const struct brisk_settings *s = &c->net->s;
    uint64_t ato = c->ack.ato;
    if (ato < s->tcp_delack_min_ns)
        ato = s->tcp_delack_min_ns;
    if (ato > s->tcp_delack_max_ns)
        ato = s->tcp_delack_max_ns;
    c->timer.delack_deadline = now + ato;
    if (s->tcp_timer_eager || !brisk_timer_armed(&c->timer.delack) ||
        c->timer.delack.expires > c->timer.delack_deadline)
        tcp_timer_arm(c, &c->timer.delack, c->timer.delack_deadline);
}

void tcp_ack_sent(brisk_sock *c);
void tcp_arm_misc(brisk_sock *c, int kind, uint64_t at);
/* The RACK reordering deadline, on the retransmit timer (kind REO). */
void tcp_arm_reo(brisk_sock *c, uint64_t at);
void tcp_keepalive_reset(brisk_sock *c, uint64_t now);
/* Data is about to be sent (the application queued some, or a window update frees waiting data): after an
 * idle period longer than the RTO with nothing outstanding, the congestion window restarts as
 * tcp_slow_start_after_idle says. RFC 5681's rule (brisk's) inline, as every write asks; Linux's halvings
 * in timer.c. */
void tcp_idle_restart_linux(brisk_sock *c, uint64_t now);
static inline void tcp_idle_restart(brisk_sock *c, uint64_t now)
{
    const struct brisk_settings *s = &c->net->s;
    if (s->tcp_slow_start_after_idle == BRISK_IDLE_KEEP || c->snd.una != c->snd.max || !c->timer.last_tx)
        return;
    if (s->tcp_slow_start_after_idle != BRISK_IDLE_RFC5681) {
        tcp_idle_restart_linux(c, now);
        return;
    }
    if (now > c->timer.last_tx && now - c->timer.last_tx > brisk_rtt_rto(&c->rtt))
        c->cc_ops->on_idle_restart(&c->cc, s->tcp_initial_cwnd);
}

#endif
