/*
 * tail.c — the small-tail decision: whether a last piece shorter than a segment goes now or waits for more
 * data. Four mechanisms answer it, and this file is the one place that asks them:
 *
 *   TCP_CORK   (Linux) the application holds partial segments until it uncorks, at most 200 ms (tcp(7));
 *   MSG_MORE   (Linux) this send's tail waits for the next send;
 *   auto-cork  (Linux 3.14) a small tail waits while data of this connection is below TCP, whose TX
 *              completion resumes the connection (the mark tsq.c's resume reads), by which time more data
 *              may have joined the tail; never for the first packet (a181ceb501b3, unless
 *              tcp_autocork_first_packet) and only on the application's send (TCP_XMIT_SEND);
 *   Nagle      (RFC 9293 §3.7.4, RFC 896) with Minshall's refinement: hold only while a previous small
 *              segment is unacknowledged — sent before snd.nxt, which an RTO may have rewound below it —,
 *              unless TCP_NODELAY. tcp_resume_nagle forces Nagle on for a completion resume
 *              (TCP_XMIT_RESUME): the 2014 bug behind the iSCSI seed, kept as a compat knob.
 *
 * None of them holds the piece that goes with the FIN (after shutdown no data can fill it; Linux's
 * tcp_nagle_test passes a FIN segment), a piece that ends a record cannot grow so auto-corking leaves it
 * (Linux: tcp_should_autocork wants a collapsible skb), and the caller asks only for the queue's last piece
 * (Linux: Nagle and cork apply to the last skb only).
 *
 * Two disciplines, one per way new data leaves. brisk's segment loop (output.c) asks cork / MSG_MORE, then
 * auto-cork, then Nagle; setting TCP_NODELAY (push_once) or a send cut short (push_write) pushes past
 * TCP_CORK and Nagle (Linux: TCP_NAGLE_PUSH), and MSG_MORE holds for its call whatever TCP_NODELAY says
 * (Linux: tcp_push with TCP_NAGLE_CORK). Under tcp_sw_gso (piece.c's packets) the answer is Linux's: the
 * call's nonagle bits (tcp_nonagle, as tcp_sendmsg / tcp_push / tcp_send_fin compute them) into
 * tcp_nagle_check, then auto-corking.
 *
 * No hold is indefinite (RFC 9293 MUST-60). brisk: TCP_CORK's documented 200 ms ceiling from the start of
 * the hold; a MSG_MORE tail needs it only with nothing in flight, since otherwise the ACK that comes releases
 * it. tcp_cork_probe_timer (Linux): neither has a timer of its own — the transmit function finds nothing in
 * flight and the queue not empty, so tcp_check_probe_timer arms the zero-window probe timer at max(RTO,
 * TCP_RTO_MIN), and its expiry sends the head of the queue with PSH (tcp_write_wakeup). With data in flight
 * the retransmit timer owns that timer slot and nothing is armed until the flight empties. The timer's
 * call of the transmit function is TCP_XMIT_PROBE: the head goes, held or not.
 */
#include "tcp/tcp.h"

/* Auto-corking may hold only with the setting on, something in flight (or tcp_autocork_first_packet) and
 * data of this connection below TCP, whose completion resumes it. Then it holds, marked throttled, unless a
 * completion came in between. */
static inline int tcp_tail_autocork(brisk_sock *c)
{
    const struct brisk_settings *s = &c->net->s;
    if (!s->tcp_autocorking || (tcp_flight(c) == 0 && !s->tcp_autocork_first_packet) || c->tsq.wmem == 0)
        return 0;
    int was = c->tsq.throttled;
    c->tsq.throttled = 1;
    if (c->tsq.wmem == 0) { /* re-check after marking */
        c->tsq.throttled = (uint8_t)was;
        return 0;
    }
    if (!was)
        c->net->c.TCPAutoCorking++;
    return 1;
}

/* Minshall: a small segment sent before snd.nxt is unacknowledged (Linux: tcp_minshall_check). */
static inline int tcp_tail_minshall(const brisk_sock *c)
{
    return tcp_flight(c) > 0 && brisk_seq_gt(c->snd.sml, c->snd.una) && brisk_seq_leq(c->snd.sml, c->snd.nxt);
}

/* Whether the piece of `len` bytes at snd.nxt ends a record (it cannot grow: auto-corking leaves it). */
static inline int tcp_tail_ends_record(brisk_sock *c, uint32_t len)
{
    return c->snd.marks && (tcp_mark_at(c, c->snd.nxt + len) & TCP_MARK_EOR);
}

unsigned tcp_nonagle(const brisk_sock *c, int why)
{
    if (c->snd.more)
        return TCP_NAGLE_CORK; /* tcp_push with MSG_MORE: TCP_NAGLE_CORK, whatever else holds */
    if (c->snd.push_write)
        return TCP_NAGLE_PUSH; /* a write cut short pushes what it took (wait_for_space) */
    if (c->snd.push_mode & TCP_PUSH_FIN)
        return TCP_NAGLE_OFF; /* tcp_send_fin */
    if (c->snd.push_mode & TCP_PUSH_CALL)
        return TCP_NAGLE_PUSH; /* tcp_push_one, or a forced push, from inside a write */
    unsigned na = 0;
    if (c->snd.nodelay && !(why == TCP_XMIT_RESUME && c->net->s.tcp_resume_nagle))
        na |= TCP_NAGLE_OFF;
    if (c->snd.cork)
        na |= TCP_NAGLE_CORK;
    if (c->snd.push_once)
        na |= TCP_NAGLE_PUSH;
    return na;
}

int tcp_nagle_check(const brisk_sock *c, int partial, unsigned na)
{
    if (!partial)
        return 0;
    if (na & TCP_NAGLE_CORK)
        return 1;
    return na == 0 && tcp_tail_minshall(c);
}

int tcp_tail_hold(brisk_sock *c, int why, uint32_t len, uint64_t now)
{
    if (c->net->s.tcp_sw_gso) {
        unsigned na = tcp_nonagle(c, why);
        if (!(na & TCP_NAGLE_PUSH) && tcp_nagle_check(c, 1, na)) {
            if (na & TCP_NAGLE_CORK) {
                tcp_cork_arm(c, tcp_flight(c), now);
                return BRISK_HOLD_CORK;
            }
            return BRISK_HOLD_NAGLE;
        }
        return why == TCP_XMIT_SEND && !tcp_tail_ends_record(c, len) && tcp_tail_autocork(c)
                   ? BRISK_HOLD_AUTOCORK
                   : BRISK_HOLD_NONE;
    }
    int push = c->snd.push_once || c->snd.push_write;
    if (c->snd.more || (c->snd.cork && !push)) {
        tcp_cork_arm(c, tcp_flight(c), now);
        return BRISK_HOLD_CORK;
    }
    if (why == TCP_XMIT_SEND && !tcp_tail_ends_record(c, len) && tcp_tail_autocork(c))
        return BRISK_HOLD_AUTOCORK;
    int nodelay = push || (c->snd.nodelay && !(why == TCP_XMIT_RESUME && c->net->s.tcp_resume_nagle));
    return !nodelay && tcp_tail_minshall(c) ? BRISK_HOLD_NAGLE : BRISK_HOLD_NONE;
}

void tcp_cork_arm(brisk_sock *c, uint32_t flight, uint64_t now)
{
    if (brisk_timer_armed(&c->timer.cork))
        return;
    if (c->net->s.tcp_cork_probe_timer) {
        if (flight)
            return;
        uint64_t base = brisk_rtt_rto(&c->rtt);
        tcp_timer_arm(c, &c->timer.cork, now + (base > TCP_CORK_CEILING_NS ? base : TCP_CORK_CEILING_NS));
    } else if (c->snd.cork || flight == 0) {
        tcp_timer_arm(c, &c->timer.cork, now + TCP_CORK_CEILING_NS);
    }
}

void tcp_cork_ack(brisk_sock *c)
{
    /* Linux: an ACK that finds nothing in flight goes to tcp_ack_probe, which clears the probe timer when the
     * head of the queue fits the window; the push that follows re-arms it from now. So a held tail waits
     * max(RTO, 200 ms) after the last segment the peer sent, not after the hold began. */
    if (c->net->s.tcp_cork_probe_timer)
        tcp_timer_cancel(c, &c->timer.cork);
}

void tcp_cork_fired(struct brisk_timer *t, void *arg, uint64_t now)
{
    (void)t;
    brisk_sock *c = arg;
    /* Linux's probe timer (tcp_cork_probe_timer) does nothing while data is in flight (tcp_probe_timer). */
    if (c->net->s.tcp_cork_probe_timer && tcp_flight(c) > 0)
        return;
    tcp_write_xmit(c, TCP_XMIT_PROBE, now); /* the held head goes, with PSH (Linux: tcp_write_wakeup) */
}
