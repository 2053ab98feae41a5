/*
 * cc_select.c — choosing a connection's congestion control: per stack by the tcp_congestion setting, per
 * socket by name (brisk_set_congestion, Linux's TCP_CONGESTION socket option).
 *
 * A new socket takes the stack's algorithm (brisk_cc_for_stack, called where the connection is allocated).
 * The algorithm's state is initialised when the connection is established (the MSS is known then), so before
 * that a switch only changes the ops pointer. On a live connection the switch re-initialises the new
 * algorithm's private state but keeps what the connection has learnt about the path — cwnd, ssthresh and
 * the recovery / loss state that the connection itself drives — as Linux's tcp_reinit_congestion_control
 * does: changing the growth rule must not make a connection burst or collapse. The new algorithm starts its
 * own bookkeeping from there (CUBIC, for example, begins a fresh epoch at the current window).
 */
#include "brisk/brisk.h"
#include "tcp/tcp.h"

/* The variant of `ops` the stack's settings ask for: CUBIC's arithmetic is RFC 9438's or Linux's (tcp_cubic).
 */
static const struct brisk_cc_ops *variant(const struct brisk_cc_ops *ops, const struct brisk_settings *s)
{
    if (ops == &brisk_cc_cubic && s && s->tcp_cubic == BRISK_COMPAT_LINUX)
        return &brisk_cc_cubic_linux;
    return ops;
}

const struct brisk_cc_ops *brisk_cc_for_stack(const struct brisk_settings *s)
{
    const struct brisk_cc_ops *ops = s ? brisk_cc_get(s->tcp_congestion) : NULL;
    return ops ? variant(ops, s) : &brisk_cc_newreno;
}

int brisk_set_congestion(brisk_sock *s, const char *name)
{
    if (!s)
        return BRISK_ERR_INVAL;
    const struct brisk_cc_ops *ops = brisk_cc_find(name);
    if (!ops)
        return BRISK_ERR_INVAL;
    ops = variant(ops, &s->net->s);
    if (ops == s->cc_ops)
        return BRISK_OK;
    /* mss is set by init and never 0 afterwards: 0 means the connection has not been established yet. */
    if (s->cc.mss != 0) {
        struct brisk_cc_state old = s->cc;
        ops->init(&s->cc, old.mss, 1);
        s->cc.cwnd = old.cwnd;
        s->cc.ssthresh = old.ssthresh;
        s->cc.in_recovery = old.in_recovery;
        s->cc.recover = old.recover;
        s->cc.in_loss = old.in_loss;
        s->cc.snd_una = old.snd_una;
        s->cc.snd_nxt = old.snd_nxt;
        s->cc.seq_valid = old.seq_valid;
        s->cc.abc_limit = old.abc_limit; /* the stack's counting rule, whatever the algorithm */
        s->cc.ss_credit = old.ss_credit;
    }
    s->cc_ops = ops;
    return BRISK_OK;
}

const char *brisk_get_congestion(const brisk_sock *s)
{
    return s ? s->cc_ops->name : NULL;
}
