/*
 * timer.c — TCP's timers: one retransmit deadline multiplexed by kind, the delayed ACK, and one "misc" timer
 * for keepalive, TIME-WAIT and FIN-WAIT-2.
 *
 * Retransmit (RFC 6298). While data, a SYN or a FIN is outstanding the connection keeps one deadline, RTO
 * after the last time the oldest segment was (re)sent or acknowledged progress. The deadline is lazy, as
 * docs/design.md asks: the connection stores the wanted time in rtx_deadline and touches the wheel only when
 * that time moves earlier than the armed entry; an entry that fires early re-arms itself to the stored
 * deadline. So the common case — an ACK that pushes the deadline later — costs no wheel operation. On expiry:
 * exponential backoff (§5.5), congestion window to one segment (RFC 5681 §3.1), and go-back to snd.una
 * (§5.4); after tcp_retries2 backoffs (tcp_retries2_timed: after the time those backoffs would take from
 * tcp_rto_min, Linux's rule) the connection fails with BRISK_ERR_TIMEDOUT. SYN and SYN-ACK use the
 * same timer with their own retry limits.
 *
 * Persist (RFC 9293 §3.8.6.1). When the peer's window is zero and data waits, the same deadline kind-switches
 * to PERSIST and sends window probes (a segment with an old sequence number that forces an ACK carrying the
 * current window), backing off like the RTO; an ACK that leaves the window closed, a probe's answer or not,
 * starts the interval again from it (Linux's tcp_ack_probe re-arms its probe timer so). Probes that go
 * unanswered tcp_retries2 times abort.
 *
 * Delayed ACK (RFC 1122 §4.2.3.2, RFC 9293 §3.8.6.3). An owed ACK waits at most `ato`, which adapts to the
 * peer's inter-arrival time between tcp_delack_min and tcp_delack_max (never above 500 ms).
 *
 * TCP_CORK never holds a partial segment longer than 200 ms (Linux's documented ceiling): the cork timer,
 * armed when a cork hold begins (for a MSG_MORE tail: when nothing is in flight), sends it. Under
 * tcp_cork_probe_timer it behaves as Linux's zero-window probe timer does for a held tail instead: armed at
 * max(RTO, 200 ms) once nothing is in flight (output.c, tcp_cork_arm), idle while data is.
 *
 * Keepalive (RFC 1122 §4.2.3.6): after keepidle without input, probes every keepintvl; keepcnt unanswered
 * probes abort with BRISK_ERR_TIMEDOUT. It runs in every synchronized state but TIME-WAIT — a half-closed
 * connection in FIN-WAIT-2 is probed too — and sends nothing while data or a FIN is outstanding or unsent,
 * which the retransmission and probe timers watch (Linux's tcp_keepalive_timer). TIME-WAIT lasts
 * tcp_time_wait (2 MSL), then the connection is freed.
 *
 * User timeout (TCP_USER_TIMEOUT, RFC 5482 §3: "how long transmitted data may remain unacknowledged"), as
 * Linux 6.x applies it. Retransmission: an expiry that finds the timeouts in progress began at least that
 * long ago — counted from the first retransmission (Linux tcp_write_timeout / retransmits_timed_out from
 * retrans_stamp, which tcp_retransmit_skb sets to the head's time once it is resent) — aborts, and replaces
 * tcp_retries2 (and adds to tcp_syn_retries in SYN-SENT); each backed-off deadline is brought forward to the
 * moment the user timeout runs out (tcp_clamp_rto_to_user_timeout). Zero-window probes: from the first probe
 * of a closed window, however many are answered, the same bound (tcp_probe_timer, the next probe clamped by
 * tcp_clamp_probe0_to_user_timeout, at least 2 ms ahead). Keepalive: an idle time past the user timeout with
 * a probe out aborts (with the RST either abort sends) instead of the KEEPCNT count (tcp_keepalive_timer).
 * A timeout reports the ICMP soft error kept since the peer was last heard from, if any (icmp_err.c), like
 * Linux's tcp_write_err.
 *
 * Restart after idle (tcp_idle_restart, tcp_slow_start_after_idle): data about to go after more than an RTO
 * without sending any — the application writes again, or a window update lets waiting data go — finds the
 * ACK clock gone. RFC 5681 §4.1 (brisk's default) restarts from min(IW, cwnd); Linux halves cwnd once per
 * RTO of idle time beyond the first, down to that (tcp_cwnd_restart); 0 keeps cwnd.
 */
#include "tcp/tcp.h"

static void rtx_fired(struct brisk_timer *t, void *arg, uint64_t now);
static void delack_fired(struct brisk_timer *t, void *arg, uint64_t now);
static void misc_fired(struct brisk_timer *t, void *arg, uint64_t now);

#ifdef BRISK_INVARIANTS
/* Every TCP timer fires through here in checked builds: the callback, then the invariants of the connection
 * (looked up again by its 4-tuple: the callback may have freed it). */
static void checked_fired(struct brisk_timer *t, void *arg, uint64_t now)
{
    brisk_sock *c = arg;
    struct brisk_net *net = c->net;
    struct brisk_tuple id = c->id;
    if (t == &c->timer.rtx)
        rtx_fired(t, arg, now);
    else if (t == &c->timer.delack)
        delack_fired(t, arg, now);
    else if (t == &c->timer.misc)
        misc_fired(t, arg, now);
    else if (t == &c->timer.cork)
        tcp_cork_fired(t, arg, now);
    else
        tcp_pace_fired(t, arg, now);
    tcp_check_tuple(net, &id);
}
#endif

void tcp_timers_init(brisk_sock *c)
{
    brisk_timer_init(&c->timer.cork, tcp_cork_fired, c);
    brisk_timer_init(&c->timer.pace, tcp_pace_fired, c);
    brisk_timer_init(&c->timer.rtx, rtx_fired, c);
    brisk_timer_init(&c->timer.delack, delack_fired, c);
    brisk_timer_init(&c->timer.misc, misc_fired, c);
#ifdef BRISK_INVARIANTS
    brisk_timer_init(&c->timer.cork, checked_fired, c);
    brisk_timer_init(&c->timer.pace, checked_fired, c);
    brisk_timer_init(&c->timer.rtx, checked_fired, c);
    brisk_timer_init(&c->timer.delack, checked_fired, c);
    brisk_timer_init(&c->timer.misc, checked_fired, c);
#endif
}

void tcp_timer_arm(brisk_sock *c, struct brisk_timer *t, uint64_t at)
{
    brisk_timer_arm(&c->net->wheel, t, at);
    c->stat.wheel_ops++;
    c->net->c.TCPTimerWheelOps++;
}

void tcp_timer_cancel(brisk_sock *c, struct brisk_timer *t)
{
    if (!brisk_timer_armed(t))
        return;
    brisk_timer_cancel(&c->net->wheel, t);
    c->stat.wheel_ops++;
    c->net->c.TCPTimerWheelOps++;
}

void tcp_timers_stop(brisk_sock *c)
{
    tcp_timer_cancel(c, &c->timer.rtx);
    tcp_timer_cancel(c, &c->timer.delack);
    tcp_timer_cancel(c, &c->timer.misc);
    tcp_timer_cancel(c, &c->timer.cork);
    tcp_timer_cancel(c, &c->timer.pace);
    c->timer.rtx_kind = TCP_RTX_NONE;
    c->timer.misc_kind = TCP_MISC_NONE;
    c->timer.tlp_on = 0;
    c->ack.pending = 0;
}

/* Sets the retransmit deadline. Lazy (brisk): the wheel moves only when the deadline moves earlier than the
 * armed entry. Eager (tcp_timer_eager, Linux until 2019): every call re-arms, as mod_timer did. */
static void rtx_set(brisk_sock *c, int kind, uint64_t at)
{
    c->timer.rtx_kind = (uint8_t)kind;
    c->timer.rtx_deadline = at;
    if (c->net->s.tcp_timer_eager || !brisk_timer_armed(&c->timer.rtx) || at < c->timer.rtx.expires)
        tcp_timer_arm(c, &c->timer.rtx, at);
}

void tcp_clear_rtx(brisk_sock *c)
{
    /* Lazy cancel: clear the kind; a wheel entry that fires finds nothing to do. */
    c->timer.rtx_kind = TCP_RTX_NONE;
    if (c->net->s.tcp_timer_eager)
        tcp_timer_cancel(c, &c->timer.rtx);
}

static int linux_timers(const brisk_sock *c)
{
    return c->net->s.tcp_loss_timers == BRISK_COMPAT_LINUX;
}

/* Linux arms its timers in jiffies: a delay rounds up to the 1 ms tick (usecs_to_jiffies). */
static uint64_t ceil_ms(uint64_t ns)
{
    return (ns + BRISK_NSEC_PER_MSEC - 1) / BRISK_NSEC_PER_MSEC * BRISK_NSEC_PER_MSEC;
}

/* Linux's tcp_rto_delta_us: how far off the RTO of the oldest outstanding segment is — its last
 * transmission plus the RTO, from now; at least 1 us. A bare FIN has no record: then the full RTO. */
static uint64_t head_rto_delay(const brisk_sock *c, uint64_t now)
{
    uint64_t rto = brisk_rtt_rto(&c->rtt);
    if (!tcp_sb_active(c) || c->sb.len == 0)
        return rto;
    uint64_t due = tcp_sb_at(c, 0)->xmit + rto;
    return due > now + BRISK_NSEC_PER_USEC ? due - now : BRISK_NSEC_PER_USEC;
}

/* Linux's tcp_rearm_rto: the RTO from now, or over a probe or reordering deadline (from_head) from the
 * oldest segment's last transmission, so that replacing one by the other does not postpone the RTO. */
static void linux_rearm_rto(brisk_sock *c, uint64_t now, int from_head)
{
    if (c->snd.una == c->snd.max) {
        if (c->timer.rtx_kind == TCP_RTX_RTO || c->timer.rtx_kind == TCP_RTX_TLP ||
            c->timer.rtx_kind == TCP_RTX_REO)
            tcp_clear_rtx(c);
        return;
    }
    uint64_t delay = from_head ? head_rto_delay(c, now) : brisk_rtt_rto(&c->rtt);
    rtx_set(c, TCP_RTX_RTO, now + ceil_ms(delay));
}

void tcp_rearm_rto_linux(brisk_sock *c, uint64_t now, int from_head)
{
    linux_rearm_rto(c, now, from_head);
}

/* Linux's tcp_set_xmit_timer, for an ACK that acknowledged data: a probe if one may be scheduled (the RTO it
 * is compared with is a full one: the ACK restarts it), else the RTO. */
static void linux_rearm_on_ack(brisk_sock *c, uint64_t now)
{
    int over = c->timer.rtx_kind == TCP_RTX_TLP || c->timer.rtx_kind == TCP_RTX_REO;
    uint64_t pto = c->snd.una == c->snd.max ? 0 : tcp_tlp_timeout_linux(c, brisk_rtt_rto(&c->rtt));
    if (pto)
        rtx_set(c, TCP_RTX_TLP, now + pto);
    else
        linux_rearm_rto(c, now, over);
}

void tcp_rearm_sent_linux(brisk_sock *c, uint64_t now, uint32_t prior_max)
{
    int kind = c->timer.rtx_kind;
    if (kind == TCP_RTX_PERSIST)
        return;
    if (c->snd.max != prior_max) {
        /* New data (tcp_event_new_data_sent): the RTO starts if nothing was out before, and replaces a
         * pending probe (from the oldest segment); then the probe is scheduled again, no later than that
         * RTO (tcp_schedule_loss_probe from tcp_write_xmit). A running RTO or reordering deadline stays. */
        if (c->snd.una == prior_max || kind == TCP_RTX_NONE || kind == TCP_RTX_TLP)
            linux_rearm_rto(c, now, kind == TCP_RTX_TLP);
        uint64_t pto = tcp_tlp_timeout_linux(c, head_rto_delay(c, now));
        if (pto)
            rtx_set(c, TCP_RTX_TLP, now + pto);
        return;
    }
    /* Retransmissions only (tcp_xmit_retransmit_queue): the RTO restarts when the oldest segment went again,
     * unless a reordering deadline is pending. */
    const struct tcp_sb_rec *head = tcp_sb_active(c) && c->sb.len ? tcp_sb_at(c, 0) : NULL;
    if (kind == TCP_RTX_NONE || (kind != TCP_RTX_REO && head && head->xmit == now))
        linux_rearm_rto(c, now, kind == TCP_RTX_TLP);
}

/* Whether something retransmitted is still unacknowledged (Linux tcp_any_retrans_done): a resent SYN or
 * SYN-ACK, else bytes (or the FIN) below the highest retransmission. */
static int rtx_outstanding(const brisk_sock *c)
{
    if (c->state == BRISK_TCP_SYN_SENT || c->state == BRISK_TCP_SYN_RECEIVED)
        return c->timer.retries > 0;
    return c->txt.rtx_valid && brisk_seq_gt(c->txt.rtx_high, c->snd.una);
}

void tcp_rearm_rto(brisk_sock *c, uint64_t now)
{
    /* Every ACK that moves snd.una comes here: the user timeout's start is forgotten once nothing
     * retransmitted is outstanding (Linux clears retrans_stamp back in the Open state). */
    if (c->uto.rtx_on && !rtx_outstanding(c))
        c->uto.rtx_on = 0;
    if (linux_timers(c) && c->state != BRISK_TCP_SYN_SENT && c->state != BRISK_TCP_SYN_RECEIVED) {
        linux_rearm_on_ack(c, now);
        return;
    }
    if (c->snd.una == c->snd.max) {
        if (c->timer.rtx_kind == TCP_RTX_RTO || c->timer.rtx_kind == TCP_RTX_TLP)
            tcp_clear_rtx(c);
        return;
    }
    if (c->timer.rtx_kind == TCP_RTX_REO && c->timer.rtx_deadline > now)
        return; /* RACK is waiting out a reordering window; its handler re-arms the RTO when it fires */
    uint64_t rto = brisk_rtt_rto(&c->rtt);
    uint64_t pto = tcp_tlp_timeout(c);
    if (pto) {
        if (pto > rto)
            pto = rto; /* RFC 8985 §7.2: never later than the RTO would fire — a probe goes first */
        if (c->net->s.tcp_timer_eager)
            rtx_set(c, TCP_RTX_RTO, now + rto); /* Linux 2019 reset the RTO first, then the probe over it */
        rtx_set(c, TCP_RTX_TLP, now + pto);
    } else {
        rtx_set(c, TCP_RTX_RTO, now + rto);
    }
}

/* tcp_slow_start_after_idle=linux, once tcp_idle_restart (tcp.h) found an idle connection. */
void tcp_idle_restart_linux(brisk_sock *c, uint64_t now)
{
    const struct brisk_settings *s = &c->net->s;
    uint64_t rto = brisk_rtt_rto(&c->rtt);
    /* Linux (tcp_slow_start_after_idle_check, tcp_cwnd_restart) counts in jiffies: the idle time since the
     * last data sent, against the current RTO; one halving per further RTO that passed in full. */
    uint64_t ms = BRISK_NSEC_PER_MSEC;
    if (c->cc_ops->on_tx_start) /* new data with nothing in flight: Linux's CA_EVENT_TX_START */
        c->cc_ops->on_tx_start(&c->cc, c->timer.last_tx, now);
    uint64_t idle = now / ms > c->timer.last_tx / ms ? now / ms - c->timer.last_tx / ms : 0;
    uint64_t rto_ms = (rto + ms - 1) / ms;
    if (rto_ms == 0 || idle <= rto_ms)
        return;
    uint64_t halvings = (idle - 1) / rto_ms;
    brisk_cc_idle_restart_halving(&c->cc, s->tcp_initial_cwnd, halvings > 32 ? 32 : (uint32_t)halvings);
}

void tcp_arm_reo(brisk_sock *c, uint64_t at)
{
    /* The reordering deadline is earlier than the RTO it stands in for; the RTO comes back after it fires. */
    if (c->timer.rtx_kind == TCP_RTX_PERSIST)
        return;
    rtx_set(c, TCP_RTX_REO, at);
}

void tcp_arm_persist(brisk_sock *c, uint64_t now)
{
    if (c->timer.rtx_kind == TCP_RTX_PERSIST)
        return;
    c->timer.retries = 0;
    c->uto.probe0_on = 0; /* a new closed window: the user timeout counts from its first probe */
    uint64_t rto = brisk_rtt_rto(&c->rtt);
    rtx_set(c, TCP_RTX_PERSIST, now + rto);
}

/* RFC 9293 §3.10.7.3 drops an unacceptable ACK in SYN-SENT (with a RST unless it was one); it may come from
 * a peer that still holds an old incarnation of the connection, which that RST has just cleared (RFC 9293
 * §3.5.2, figure 10: "A" then tries again). Linux does not wait out the initial RTO for that: while the SYN
 * has not been retransmitted, tcp_rcv_synsent_state_process re-arms the retransmission timer at
 * TCP_TIMEOUT_MIN ("previous FIN/ACK or RST/ACK might be ignored"), and the expiry is an ordinary one (the
 * RTO doubles, or not under tcp_syn_linear_timeouts). Every profile does the same: the SYN is sent at most
 * once early, so nothing can make it a flood. */
void tcp_syn_rtx_soon(brisk_sock *c, uint64_t now)
{
    if (c->state == BRISK_TCP_SYN_SENT && c->timer.retries == 0)
        rtx_set(c, TCP_RTX_RTO, now + TCP_TIMEOUT_MIN_NS);
}

/* Linux's tcp_model_timeout: how long `boundary` exponentially backed-off retransmissions from an initial RTO
 * `base` take, the doubling stopping at rto_max. */
static uint64_t model_timeout(uint32_t boundary, uint64_t base, uint64_t rto_max)
{
    uint32_t thresh = 0;
    while (thresh < 62 && (base << (thresh + 1)) <= rto_max)
        thresh++; /* ilog2(rto_max / base) */
    if (boundary <= thresh)
        return ((UINT64_C(2) << boundary) - 1) * base;
    return ((UINT64_C(2) << thresh) - 1) * base + (uint64_t)(boundary - thresh) * rto_max;
}

static void abort_timeout(brisk_sock *c, uint64_t now)
{
    c->net->c.TCPAbortOnTimeout++;
    tcp_conn_fail(c, tcp_timeout_error(c), now);
}

/* Whether the user timeout has run out for retransmissions that began at rtx_first, at an expiry that comes
 * after `prior` earlier ones (Linux retransmits_timed_out with icsk_user_timeout: never at the first). */
static int user_timeout_expired(const brisk_sock *c, uint32_t prior, uint64_t now)
{
    return c->sox.user_timeout && prior > 0 && c->uto.rtx_on && now - c->uto.rtx_first >= c->sox.user_timeout;
}

/* The retransmission just made is the first of this run: the user timeout counts from it. */
static void user_timeout_start(brisk_sock *c, uint64_t now)
{
    if (!c->uto.rtx_on) {
        c->uto.rtx_on = 1;
        c->uto.rtx_first = now;
    }
}

/* The RTO just armed, brought forward to when the user timeout runs out (Linux
 * tcp_clamp_rto_to_user_timeout; 1 ms when it already has, Linux's one jiffy). */
static void rto_clamp(brisk_sock *c, uint64_t now)
{
    uint64_t u = c->sox.user_timeout;
    if (!u || !c->uto.rtx_on || c->timer.rtx_kind != TCP_RTX_RTO)
        return;
    uint64_t elapsed = now - c->uto.rtx_first;
    uint64_t at = now + (elapsed < u ? u - elapsed : BRISK_NSEC_PER_MSEC);
    if (at < c->timer.rtx_deadline)
        rtx_set(c, TCP_RTX_RTO, at);
}

/* Whether an opening connection gives up at this expiry (`prior` expiries before it). SYN-RECEIVED: after
 * tcp_synack_retries. SYN-SENT, as Linux's tcp_write_timeout: after tcp_syn_retries + tcp_syn_linear_timeouts
 * retransmissions, or once the first SYN is as old as tcp_syn_retries exponential backoffs from the initial
 * RTO would make it (retransmits_timed_out with tcp_model_timeout: with linear timeouts this comes first
 * when tcp_syn_retries is small) — or, with a user timeout, when that has run out instead. */
static int open_expired(const brisk_sock *c, uint32_t prior, uint64_t now)
{
    const struct brisk_settings *s = &c->net->s;
    if (c->state == BRISK_TCP_SYN_RECEIVED && c->listener) /* a half-open child: its listener's limit alone */
        return c->timer.retries > s->tcp_synack_retries;
    if (c->state == BRISK_TCP_SYN_RECEIVED)
        return c->timer.retries > s->tcp_synack_retries || user_timeout_expired(c, prior, now);
    if (c->timer.retries > s->tcp_syn_retries + s->tcp_syn_linear_timeouts)
        return 1;
    if (c->sox.user_timeout)
        return user_timeout_expired(c, prior, now);
    return prior > 0 && c->rtt_probe.at != BRISK_TIME_NONE &&
           now - c->rtt_probe.at >=
               model_timeout(s->tcp_syn_retries, s->tcp_rto_initial_ns, s->tcp_rto_max_ns);
}

/* tcp_retries2 at a data timeout (`prior` expiries before it): after that many timeouts (RFC 1122 §4.2.3.5's
 * R2 as a count), or with tcp_retries2_timed — Linux's retransmits_timed_out — once the first retransmission
 * of the run is as old as tcp_retries2 backoffs from tcp_rto_min would make it (tcp_model_timeout), whatever
 * the RTO really is: a path with a 2 s RTO gives up at its second timeout with tcp_retries2 = 2 (1.4 s). */
static int retries2_expired(const brisk_sock *c, uint32_t prior, uint64_t now)
{
    const struct brisk_settings *s = &c->net->s;
    if (!s->tcp_retries2_timed)
        return c->timer.retries > s->tcp_retries2;
    return prior > 0 && c->uto.rtx_on &&
           now - c->uto.rtx_first >= model_timeout(s->tcp_retries2, s->tcp_rto_min_ns, s->tcp_rto_max_ns);
}

static void on_rto(brisk_sock *c, uint64_t now)
{
    struct brisk_net *net = c->net;
    uint32_t prior = c->timer.retries++; /* expiries before this one (Linux icsk_retransmits) */
    if (prior == 0 && !rtx_outstanding(c))
        c->uto.rtx_on = 0; /* a start left from an episode whose retransmissions are all acknowledged */
    if (c->state == BRISK_TCP_SYN_SENT || c->state == BRISK_TCP_SYN_RECEIVED) {
        /* A half-open child answers to its listener's SYN-ACK limit alone: in Linux it is a request sock,
         * which the user timeout does not reach; an active (or simultaneous) open has both. */
        int uto = !c->listener;
        if (open_expired(c, prior, now)) {
            abort_timeout(c, now);
            return;
        }
        /* Linux 6.18's tcp_syn_linear_timeouts: the first ones in SYN-SENT keep the initial RTO (the RTO
         * doubles once tp->total_rto exceeds it; a SYN-RECEIVED one always doubles). */
        if (c->state != BRISK_TCP_SYN_SENT || c->timer.retries > net->s.tcp_syn_linear_timeouts)
            brisk_rtt_backoff(&c->rtt);
        brisk_rtt_syn_timeout(&c->rtt);
        tcp_send_syn(c, now); /* a SYN, or a SYN-ACK in SYN-RECEIVED */
        tcp_rearm_rto(c, now);
        if (uto) {
            /* An opening connection's user timeout counts from its first SYN: Linux's retrans_stamp is set
             * when tcp_connect sends it (retransmissions leave it), so the timeout bounds the whole open. */
            user_timeout_start(c, c->rtt_probe.at != BRISK_TIME_NONE ? c->rtt_probe.at : now);
            rto_clamp(c, now);
        }
        return;
    }
    /* With a user timeout, time alone decides; tcp_retries2 is not consulted (Linux passes the user timeout
     * to retransmits_timed_out in place of the boundary's modelled time). */
    if (c->sox.user_timeout ? user_timeout_expired(c, prior, now) : retries2_expired(c, prior, now)) {
        abort_timeout(c, now);
        return;
    }
    net->c.TCPTimeouts++;
    c->stat.rto_count++;
    int first = !c->cc.in_loss;
    if (first) {
        if (!(c->cc.in_recovery && c->undo.active)) /* inside recovery: undo goes back to before it */
            tcp_undo_begin(c, c->cc.cwnd);
    }
    /* cwnd to one segment; ssthresh from the flight at the first timeout only (the cc tracks that). */
    c->cc_ops->on_rto(&c->cc, tcp_flight(c), now);
    c->cc.recover = c->snd.max; /* RFC 6582 §3.2 step 4: no fast retransmit for data sent before the RTO */
    c->dupacks = 0;
    c->timer.tlp_on = 0; /* the RTO ends any probe episode (RFC 8985 §7.3) */
    /* Karn: everything in flight will be sent again; none of it can give a sample. */
    c->txt.len = 0;
    c->txt.rtx_high = c->snd.max;
    c->txt.rtx_valid = 1;
    brisk_rtt_backoff(&c->rtt);
    if (tcp_sb_active(c) && c->sb.len > 0) {
        if (first && c->net->s.tcp_frto && !c->undo.frto) {
            /* F-RTO (undo.c): resend only the oldest segment; the next ACK tells a spurious timeout. */
            tcp_frto_start(c);
            tcp_sb_mark_lost(c, tcp_sb_at(c, 0));
            tcp_retransmit_first_lost(c, now); /* the rest of the window counts as in flight until decided */
        } else {
            /* Everything not SACKed is lost and goes again in order, SACKed data does not (RFC 6675 §5.1);
             * a FIN still unacknowledged after that is resent by the next timeout. */
            c->undo.frto = 0;
            tcp_sb_mark_all_lost(c);
        }
    } else {
        /* Go back to the oldest unacknowledged byte; the FIN, if it was sent, goes again after the data. */
        c->snd.nxt = c->snd.una;
        c->snd.fin_sent = 0;
    }
    c->timer.rtx_kind = TCP_RTX_NONE;
    tcp_write_xmit(c, TCP_XMIT_TIMER, now);
    if (c->timer.rtx_kind != TCP_RTX_RTO)
        rtx_set(c, TCP_RTX_RTO, now + brisk_rtt_rto(&c->rtt));
    user_timeout_start(c, now);
    rto_clamp(c, now);
}

/* The interval to the next zero-window probe: the backed-off RTO (Linux tcp_probe0_when), no later than the
 * user timeout and no sooner than 2 ms (tcp_clamp_probe0_to_user_timeout). */
static uint64_t probe_delay(const brisk_sock *c, uint64_t now)
{
    uint64_t when = brisk_rtt_rto(&c->rtt);
    uint64_t u = c->sox.user_timeout;
    if (u && c->uto.probe0_on) {
        uint64_t elapsed = now - c->uto.probe0_first;
        uint64_t left = elapsed < u ? u - elapsed : 0;
        if (left < 2 * BRISK_NSEC_PER_MSEC)
            left = 2 * BRISK_NSEC_PER_MSEC;
        if (left < when)
            when = left;
    }
    return when;
}

static void on_persist(brisk_sock *c, uint64_t now)
{
    struct brisk_net *net = c->net;
    if (c->snd.wnd != 0 || tcp_notsent(c) == 0) {
        /* A window smaller than the next segment (held by tcp_sws_partial=0, as Linux holds): what fits goes
         * now, with PSH (Linux: tcp_write_wakeup from the probe timer). */
        tcp_clear_rtx(c);
        tcp_write_xmit(c, TCP_XMIT_PROBE, now);
        return;
    }
    /* The user timeout bounds how long the window may stay closed, answered or not (Linux 5.11+
     * tcp_probe_timer: from the first probe, icsk_probes_tstamp, which only an open window resets). */
    uint64_t u = c->sox.user_timeout;
    if (!c->uto.probe0_on) {
        c->uto.probe0_on = 1;
        c->uto.probe0_first = now;
    } else if (u && now - c->uto.probe0_first >= u) {
        abort_timeout(c, now);
        return;
    }
    /* `retries` counts probes the peer left unanswered (any ACK resets it: RFC 1122 §4.2.2.17 keeps a
     * connection open as long as the probes are answered); the interval backs off in the RTT estimator. */
    if (++c->timer.retries > net->s.tcp_retries2) {
        abort_timeout(c, now);
        return;
    }
    net->c.TCPWinProbe++;
    /* A segment at snd.una - 1 is outside the peer's window: it answers with an ACK and its window. */
    tcp_transmit(c, c->snd.una - 1, 0, BRISK_TCP_ACK, now);
    brisk_rtt_backoff(&c->rtt); /* doubling, up to tcp_rto_max */
    rtx_set(c, TCP_RTX_PERSIST, now + probe_delay(c, now));
}

void tcp_persist_ack(brisk_sock *c, uint64_t now)
{
    if (c->timer.rtx_kind == TCP_RTX_PERSIST)
        rtx_set(c, TCP_RTX_PERSIST, now + probe_delay(c, now));
}

static void rtx_fired(struct brisk_timer *t, void *arg, uint64_t now)
{
    (void)t;
    brisk_sock *c = arg;
    if (c->timer.rtx_kind == TCP_RTX_NONE) {
        /* A lazily cleared entry (tcp_clear_rtx) was all that kept a TIME-WAIT socket whole: a record may
         * take its place now (timewait.c). */
        if (c->state == BRISK_TCP_TIME_WAIT)
            tcp_tw_settle(c, now);
        return;
    }
    if (now < c->timer.rtx_deadline) { /* fired early: the deadline moved later since it was armed */
        tcp_timer_arm(c, &c->timer.rtx, c->timer.rtx_deadline);
        return;
    }
    int kind = c->timer.rtx_kind;
    c->timer.rtx_kind = TCP_RTX_NONE;
    if (kind == TCP_RTX_RTO)
        on_rto(c, now);
    else if (kind == TCP_RTX_TLP)
        tcp_tlp_fire(c, now);
    else if (kind == TCP_RTX_REO && linux_timers(c))
        tcp_recovery_reo_timeout(c, now);
    else if (kind == TCP_RTX_REO) {
        /* RFC 8985 §6.3: segments whose reordering window has passed are lost now; send what may go. */
        tcp_rearm_rto(c, now);
        tcp_recovery_check(c, c->cc.cwnd, now);
        if (c->cc.in_recovery)
            tcp_prr_ack(c, 0);
        tcp_write_xmit(c, TCP_XMIT_TIMER, now);
    } else
        on_persist(c, now);
}

void tcp_ack_sent(brisk_sock *c)
{
    c->ack.pending = 0;
    c->ack.unacked_segs = 0;
    if (c->ack.comp_dup & TCP_ACKCOMP_ARMED || c->ack.comp) { /* SACK compression (ackcomp.c) ends */
        c->net->c.TCPAckCompressed += c->ack.comp;
        c->ack.comp = 0;
        c->ack.comp_dup &= (uint8_t)~TCP_ACKCOMP_ARMED;
    }
    /* Stored only when set: an unconditional byte store here stalls the next segment's sack_any (output.c),
     * whose load of dsack with its neighbour cannot be forwarded from it (seen as half of tcp_transmit's
     * time in bulk GRO). */
    if (c->rcv.dsack)
        c->rcv.dsack = 0;
    if (c->net->s.tcp_timer_eager)
        tcp_timer_cancel(c, &c->timer.delack);
}

static void delack_fired(struct brisk_timer *t, void *arg, uint64_t now)
{
    (void)t;
    brisk_sock *c = arg;
    if (!c->ack.pending)
        return;
    if (now < c->timer.delack_deadline) {
        tcp_timer_arm(c, &c->timer.delack, c->timer.delack_deadline);
        return;
    }
    if (tcp_ackcomp_fired(c, now))
        return; /* the compressed ACK (ackcomp.c), not a delayed one: no ATO or pingpong verdict */
    /* The ACK did not ride on data: the exchange is not interactive after all (Linux leaves pingpong mode
     * here), and the timeout was too long for this peer. */
    c->ack.pingpong = 0;
    c->net->c.DelayedACKs++;
    tcp_send_ack(c, now);
}

void tcp_arm_misc(brisk_sock *c, int kind, uint64_t at)
{
    c->timer.misc_kind = (uint8_t)kind;
    tcp_timer_arm(c, &c->timer.misc, at);
}

/* The states keepalive runs in: every synchronized one but TIME-WAIT (Linux's tcp_keepalive_timer skips only
 * CLOSE and SYN-SENT, and a connection in TIME-WAIT is a timewait socket there), as long as no other misc
 * timer (an orphan's FIN-WAIT-2 timeout) holds the slot. */
static int keepalive_state(const brisk_sock *c)
{
    switch (c->state) {
    case BRISK_TCP_ESTABLISHED:
    case BRISK_TCP_CLOSE_WAIT:
    case BRISK_TCP_FIN_WAIT_1:
    case BRISK_TCP_FIN_WAIT_2:
    case BRISK_TCP_CLOSING:
    case BRISK_TCP_LAST_ACK:
        return 1;
    default:
        return 0;
    }
}

void tcp_keepalive_reset(brisk_sock *c, uint64_t now)
{
    c->timer.last_rx = now;
    c->timer.probes = 0;
    if (c->so.keepalive && keepalive_state(c) && c->timer.misc_kind == TCP_MISC_NONE)
        tcp_arm_misc(c, TCP_MISC_KEEPALIVE, now + c->so.keepidle);
}

static void misc_fired(struct brisk_timer *t, void *arg, uint64_t now)
{
    (void)t;
    brisk_sock *c = arg;
    int kind = c->timer.misc_kind;
    c->timer.misc_kind = TCP_MISC_NONE;
    switch (kind) {
    case TCP_MISC_KEEPALIVE: {
        if (!c->so.keepalive || !keepalive_state(c))
            return;
        /* Something is in flight or waiting to go (our FIN in FIN-WAIT-1, CLOSING, LAST-ACK included): the
         * retransmission or probe timer watches the peer, so no probe now; look again a keepalive time later
         * (Linux's tcp_keepalive_timer: "it is alive without keepalive"). */
        if (c->snd.una != c->snd.max || tcp_notsent(c) > 0) {
            tcp_arm_misc(c, TCP_MISC_KEEPALIVE, now + c->so.keepidle);
            return;
        }
        /* Input pushes last_rx forward without touching the timer: the deadline is lazy here too. */
        uint64_t idle_until = c->timer.last_rx + (c->timer.probes ? 0 : c->so.keepidle);
        if (c->timer.probes == 0 && now < idle_until) {
            tcp_arm_misc(c, TCP_MISC_KEEPALIVE, idle_until);
            return;
        }
        /* With a user timeout, the idle time decides once a probe is out, not the probe count (Linux
         * tcp_keepalive_timer). */
        uint64_t u = c->sox.user_timeout;
        if (u ? c->timer.probes > 0 && now - c->timer.last_rx >= u : c->timer.probes >= c->so.keepcnt) {
            /* The peer is presumed gone, but may only have lost the path back: tell it (Linux
             * tcp_keepalive_timer sends an active reset before the error, in both cases; a retransmission
             * timeout does not, as nothing got through). */
            tcp_send_rst(c, now);
            abort_timeout(c, now);
            return;
        }
        c->timer.probes++;
        c->net->c.TCPKeepAlive++;
        tcp_transmit(c, c->snd.una - 1, 0, BRISK_TCP_ACK, now);
        tcp_arm_misc(c, TCP_MISC_KEEPALIVE, now + c->so.keepintvl);
        return;
    }
    case TCP_MISC_TIMEWAIT:
    case TCP_MISC_FINWAIT2:
        tcp_set_state(c, BRISK_TCP_CLOSED, now);
        tcp_raise(c, BRISK_EV_CLOSED);
        tcp_conn_done(c, now);
        return;
    default:
        return;
    }
}
