/*
 * invariants.c — the TCP connection's internal invariants, checked from the inside (debug and sanitizer
 * builds).
 *
 * Every field of struct brisk_sock is kept consistent with others by the code that changes it: the send
 * sequence variables of RFC 9293 §3.3.1 are ordered, the send buffer holds exactly the bytes from SND.UNA on,
 * the SACK scoreboard's byte totals (RFC 6675 §3) are what its records add up to, the reassembly queue lies
 * after RCV.NXT, the lazy retransmit deadline is never later than its wheel entry would fire, and so on. A
 * mistake in any of that shows up much later as a stall or corrupted data; checked after every segment and
 * every timer callback it shows up at the step that made it.
 *
 * tcp_invariants_violation() checks one connection and describes the first broken invariant (NULL when all
 * hold); it is always compiled, so unit tests can corrupt a connection and see it caught in any build.
 * tcp_check_invariants() prints the connection and the violation to stderr and aborts. The hooks that call it
 * — after brisk_tcp_input's per-connection processing and after each TCP timer callback — exist only when
 * BRISK_INVARIANTS is defined (CMake defines it for the sanitizer build and Debug builds, never for release):
 * the check walks the scoreboard and the reassembly queue, O(segments in flight) per segment.
 *
 * Only what the code guarantees at those points is checked. In particular the retransmit kind is lazy: a
 * deadline of kind REO may outlive the data it watched (its handler re-arms the RTO), and a cancelled kind
 * leaves its wheel entry to fire harmlessly — so "armed" is checked only one way (kind set => entry no later
 * than the deadline).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tcp/tcp.h"

struct vbuf {
    char *buf;
    size_t n;
};

static const char *fail(struct vbuf *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->buf, v->n, fmt, ap);
    va_end(ap);
    return v->buf;
}

static const char *check_listener(const brisk_sock *c, struct vbuf *v)
{
    const struct brisk_settings *s = &c->net->s;
    if (c->lq.syn_count > s->tcp_max_syn_backlog)
        return fail(v, "SYN queue %u over tcp_max_syn_backlog %u", c->lq.syn_count, s->tcp_max_syn_backlog);
    uint32_t n = 0;
    for (const brisk_sock *ch = c->lq.head; ch; ch = ch->aq_next) {
        if (++n > c->lq.len)
            return fail(v, "accept queue longer than its count %u", c->lq.len);
        if (ch->listener != c || !ch->in_aq)
            return fail(v, "accept queue holds a child not marked as queued on this listener");
        if (!ch->aq_next && ch != c->lq.tail)
            return fail(v, "accept queue tail pointer is not its last child");
    }
    if (n != c->lq.len)
        return fail(v, "accept queue holds %u children, count says %u", n, c->lq.len);
    return NULL;
}

/* RFC 9293 §3.3.1 send variables, the send buffer and the FIN. */
static const char *check_send(const brisk_sock *c, struct vbuf *v)
{
    if (brisk_seq_gt(c->snd.una, c->snd.nxt))
        return fail(v, "snd.una %u after snd.nxt %u", c->snd.una, c->snd.nxt);
    if (brisk_seq_gt(c->snd.nxt, c->snd.max))
        return fail(v, "snd.nxt %u after snd.max %u", c->snd.nxt, c->snd.max);
    if (c->snd.fin_sent && !c->snd.fin_queued)
        return fail(v, "FIN sent but never queued");
    if (c->state < BRISK_TCP_ESTABLISHED) {
        if (c->snd.buf.len != 0 && c->state != BRISK_TCP_SYN_SENT && c->state != BRISK_TCP_SYN_RECEIVED)
            return fail(v, "%llu bytes queued before the handshake", (unsigned long long)c->snd.buf.len);
        return NULL;
    }
    /* Synchronized: the buffer starts at snd.una; nothing was sent beyond its data plus the FIN. */
    uint32_t end = tcp_data_end(c);
    if (brisk_seq_gt(c->snd.nxt, end + (c->snd.fin_sent ? 1u : 0u)))
        return fail(v, "snd.nxt %u beyond the data end %u (fin_sent %u)", c->snd.nxt, end, c->snd.fin_sent);
    if (brisk_seq_gt(c->snd.max, end + (c->snd.fin_queued ? 1u : 0u)))
        return fail(v, "snd.max %u beyond the data end %u (fin_queued %u)", c->snd.max, end,
                    c->snd.fin_queued);
    if (c->snd.buf.base != c->stat.bytes_acked)
        return fail(v, "send stream consumed %llu bytes, %llu acknowledged",
                    (unsigned long long)c->snd.buf.base, (unsigned long long)c->stat.bytes_acked);
    /* What SND.UNA passed is the SYN, the bytes acknowledged and at most the FIN. */
    uint32_t extra = c->snd.una - c->snd.iss - 1u - (uint32_t)c->stat.bytes_acked;
    if (extra > (c->snd.fin_queued ? 1u : 0u))
        return fail(v, "snd.una - iss - 1 = %u but %llu bytes acknowledged", c->snd.una - c->snd.iss - 1u,
                    (unsigned long long)c->stat.bytes_acked);
    /* Write marks (mark.c): in sequence order, none past the data; those at or before snd.una are dropped
     * lazily, so only the order and the end are guaranteed. */
    if (c->snd.marks > TCP_MARKS)
        return fail(v, "%u write marks in a ring of %u", c->snd.marks, TCP_MARKS);
    for (uint32_t i = 0; i < c->snd.marks; i++) {
        uint32_t k = (c->mark.head + i) & (TCP_MARKS - 1);
        if (!c->mark.kind[k])
            return fail(v, "write mark %u at %u has no kind", i, c->mark.seq[k]);
        if (brisk_seq_gt(c->mark.seq[k], end))
            return fail(v, "write mark at %u beyond the data end %u", c->mark.seq[k], end);
        uint32_t prev = (k + TCP_MARKS - 1) & (TCP_MARKS - 1);
        if (i > 0 && !brisk_seq_gt(c->mark.seq[k], c->mark.seq[prev]))
            return fail(v, "write marks at %u and %u out of order", c->mark.seq[prev], c->mark.seq[k]);
    }
    return NULL;
}

/* Receive side: RCV.NXT against the bytes delivered, the reassembly queue, the FIN. */
static const char *check_receive(const brisk_sock *c, struct vbuf *v)
{
    const struct brisk_reass *q = &c->rcv.ooo;
    uint32_t n = 0, bytes = 0;
    uint64_t mem = 0;
    const brisk_pkt *prev = NULL;
    for (const brisk_pkt *p = q->head; p; prev = p, p = p->next) {
        if (++n > q->nsegs)
            return fail(v, "reassembly queue longer than its count %u", q->nsegs);
        if (!brisk_seq_lt(p->seq, p->end_seq))
            return fail(v, "empty or inverted reassembly piece [%u, %u)", p->seq, p->end_seq);
        if (brisk_seq_lt(p->seq, c->rcv.nxt))
            return fail(v, "reassembly piece [%u, %u) before rcv.nxt %u", p->seq, p->end_seq, c->rcv.nxt);
        if (prev && brisk_seq_lt(p->seq, prev->end_seq))
            return fail(v, "reassembly pieces [%u, %u) and [%u, %u) out of order or overlapping", prev->seq,
                        prev->end_seq, p->seq, p->end_seq);
        if (c->rcv.fin_pending && brisk_seq_gt(p->end_seq, c->rcv.fin_seq))
            return fail(v, "reassembly piece ends at %u, after the held FIN at %u", p->end_seq,
                        c->rcv.fin_seq);
        bytes += p->end_seq - p->seq;
        mem += p->truesize;
    }
    if (prev != q->tail)
        return fail(v, "reassembly tail pointer is not its last piece");
    if (n != q->nsegs || bytes != q->bytes || mem != q->mem)
        return fail(v, "reassembly totals %u pieces / %u bytes / %llu mem, records add up to %u / %u / %llu",
                    q->nsegs, q->bytes, (unsigned long long)q->mem, n, bytes, (unsigned long long)mem);
    if (q->nsegs > c->net->s.tcp_ooo_max_segs)
        return fail(v, "%u reassembly pieces over tcp_ooo_max_segs %u", q->nsegs, c->net->s.tcp_ooo_max_segs);
    if (c->rcv.fin && c->rcv.fin_pending)
        return fail(v, "FIN both received and pending");
    if (c->rcv.fin_pending && brisk_seq_lt(c->rcv.fin_seq, c->rcv.nxt))
        return fail(v, "pending FIN at %u before rcv.nxt %u", c->rcv.fin_seq, c->rcv.nxt);
    if (c->state < BRISK_TCP_ESTABLISHED)
        return NULL;
    /* What RCV.NXT passed is the SYN, the bytes received (read or still buffered) and the FIN. */
    if ((uint32_t)(c->rcv.nxt - c->rcv.irs - 1u - c->rcv.fin) != (uint32_t)c->stat.bytes_received)
        return fail(v, "rcv.nxt - irs = %u but %llu bytes received (fin %u)", c->rcv.nxt - c->rcv.irs,
                    (unsigned long long)c->stat.bytes_received, c->rcv.fin);
    if (c->rcv.buf.base + c->rcv.buf.len != c->stat.bytes_received)
        return fail(v, "receive stream %llu read + %llu buffered != %llu received",
                    (unsigned long long)c->rcv.buf.base, (unsigned long long)c->rcv.buf.len,
                    (unsigned long long)c->stat.bytes_received);
    return NULL;
}

/* The SACK scoreboard (RFC 6675 §3): totals recomputed from the records, records ordered within the flight.
 */
static const char *check_scoreboard(const brisk_sock *c, struct vbuf *v)
{
    if (!tcp_sb_active(c)) {
        if (c->sb.len || c->sb.sacked || c->sb.lost || c->sb.retrans)
            return fail(v, "scoreboard not in use but holds %u records (sacked %u lost %u retrans %u)",
                        c->sb.len, c->sb.sacked, c->sb.lost, c->sb.retrans);
        return NULL;
    }
    if (c->sb.len > c->sb.cap || (c->sb.cap & (c->sb.cap - 1)) != 0)
        return fail(v, "scoreboard ring %u records in capacity %u", c->sb.len, c->sb.cap);
    uint32_t sacked = 0, lost = 0, retrans = 0, prev_end = c->snd.una;
    for (uint32_t i = 0; i < c->sb.len; i++) {
        const struct tcp_sb_rec *r = tcp_sb_at(c, i);
        if (!brisk_seq_lt(r->seq, r->end))
            return fail(v, "scoreboard record %u [%u, %u) empty or inverted", i, r->seq, r->end);
        if (brisk_seq_lt(r->seq, prev_end))
            return fail(v,
                        "scoreboard record %u [%u, %u) before %u (snd.una %u): out of order or overlapping",
                        i, r->seq, r->end, prev_end, c->snd.una);
        if (brisk_seq_gt(r->end, c->snd.max))
            return fail(v, "scoreboard record %u [%u, %u) beyond snd.max %u", i, r->seq, r->end, c->snd.max);
        if ((r->flags & TCP_SB_RETRANS) && !(r->flags & TCP_SB_LOST))
            return fail(v, "scoreboard record %u retransmitted but not lost (flags %#x)", i, r->flags);
        if ((r->flags & TCP_SB_SACKED) && (r->flags & TCP_SB_LOST))
            return fail(v, "scoreboard record %u both SACKed and lost (flags %#x)", i, r->flags);
        uint32_t n = r->end - r->seq;
        if (r->flags & TCP_SB_SACKED)
            sacked += n;
        if (r->flags & TCP_SB_LOST)
            lost += n;
        if (r->flags & TCP_SB_RETRANS)
            retrans += n;
        prev_end = r->end;
    }
    if (sacked != c->sb.sacked || lost != c->sb.lost || retrans != c->sb.retrans)
        return fail(v, "scoreboard totals sacked %u lost %u retrans %u, records add up to %u / %u / %u",
                    c->sb.sacked, c->sb.lost, c->sb.retrans, sacked, lost, retrans);
    return NULL;
}

/* Below-TCP accounting (tsq.c) and the timers. */
static const char *check_tsq_timers(const brisk_sock *c, struct vbuf *v)
{
    if (c->tsq.zombie)
        return fail(v, "a zombie (freed) connection is still reachable");
    if ((c->tsq.pkts == 0) != (c->tsq.wmem == 0) || c->tsq.wmem < c->tsq.pkts)
        return fail(v, "below-TCP accounting: %u packets but %llu bytes", c->tsq.pkts,
                    (unsigned long long)c->tsq.wmem);
    if (c->tsq.pkts > c->net->pool.in_use)
        return fail(v, "%u packets below TCP, only %llu pool buffers in use", c->tsq.pkts,
                    (unsigned long long)c->net->pool.in_use);
    if (c->timer.rtx_kind > TCP_RTX_REO || c->timer.misc_kind > TCP_MISC_FINWAIT2)
        return fail(v, "timer kind out of range (rtx %u misc %u)", c->timer.rtx_kind, c->timer.misc_kind);
    /* Lazy deadline: the wheel entry may fire early (it then re-arms), never late. */
    if (c->timer.rtx_kind != TCP_RTX_NONE &&
        (!brisk_timer_armed(&c->timer.rtx) || c->timer.rtx.expires > c->timer.rtx_deadline))
        return fail(v, "retransmit kind %u with deadline %llu but no wheel entry at or before it",
                    c->timer.rtx_kind, (unsigned long long)c->timer.rtx_deadline);
    if (c->timer.misc_kind != TCP_MISC_NONE && !brisk_timer_armed(&c->timer.misc))
        return fail(v, "misc timer kind %u not armed", c->timer.misc_kind);
    int outstanding = c->snd.una != c->snd.max;
    switch (c->state) {
    case BRISK_TCP_SYN_SENT:
    case BRISK_TCP_SYN_RECEIVED:
        if (c->timer.rtx_kind != TCP_RTX_RTO)
            return fail(v, "handshake without a SYN retransmission deadline (kind %u)", c->timer.rtx_kind);
        break;
    case BRISK_TCP_TIME_WAIT:
        if (c->timer.misc_kind != TCP_MISC_TIMEWAIT)
            return fail(v, "TIME-WAIT without its 2 MSL timer (misc kind %u)", c->timer.misc_kind);
        if (c->timer.rtx_kind != TCP_RTX_NONE)
            return fail(v, "TIME-WAIT with a retransmit deadline (kind %u)", c->timer.rtx_kind);
        break;
    default:
        /* Data, SYN or FIN outstanding: something must bring it back if the peer goes silent. */
        if (outstanding && c->timer.rtx_kind == TCP_RTX_NONE)
            return fail(v, "%u bytes outstanding and no retransmit deadline", c->snd.max - c->snd.una);
        /* Nothing outstanding: RTO and TLP are cleared as the last byte is acknowledged. */
        if (!outstanding && (c->timer.rtx_kind == TCP_RTX_RTO || c->timer.rtx_kind == TCP_RTX_TLP))
            return fail(v, "retransmit kind %u with nothing outstanding", c->timer.rtx_kind);
        break;
    }
    return NULL;
}

const char *tcp_invariants_violation(const brisk_sock *c, char *buf, size_t n)
{
    struct vbuf v = {buf, n};
    const char *m;
    if (c->state > BRISK_TCP_TIME_WAIT)
        return fail(&v, "state %u out of range", c->state);
    if (c->state == BRISK_TCP_LISTEN)
        return check_listener(c, &v);
    if (c->state == BRISK_TCP_CLOSED)
        return NULL;
    if (c->state >= BRISK_TCP_ESTABLISHED && c->snd.mss == 0)
        return fail(&v, "zero send MSS");
    if (c->snd.wscale > TCP_MAX_WSCALE || c->rcv.wscale > TCP_MAX_WSCALE)
        return fail(&v, "window scale over %u", TCP_MAX_WSCALE);
    if ((m = check_send(c, &v)) || (m = check_receive(c, &v)) || (m = check_scoreboard(c, &v)) ||
        (m = check_tsq_timers(c, &v)))
        return m;
    /* RFC 6675 pipe counts what is in the network: never more than was sent and not acknowledged. */
    if (tcp_pipe(c) > c->snd.max - c->snd.una)
        return fail(&v, "pipe %u over the %u bytes outstanding", tcp_pipe(c), c->snd.max - c->snd.una);
    return NULL;
}

void tcp_check_invariants(const brisk_sock *c)
{
    char buf[256];
    const char *m = tcp_invariants_violation(c, buf, sizeof(buf));
    if (!m)
        return;
    char la[BRISK_ADDR_STRLEN], ra[BRISK_ADDR_STRLEN];
    fprintf(stderr,
            "brisk: TCP invariant violated: %s\n"
            "  connection %s:%u -> %s:%u state %s\n"
            "  snd una %u nxt %u max %u iss %u wnd %u mss %u buf %llu fin q/s %u/%u\n"
            "  rcv nxt %u irs %u buf %llu ooo %u segs %u bytes fin %u pending %u@%u\n"
            "  sb %u recs sacked %u lost %u retrans %u; tsq %u pkts %llu bytes; rtx kind %u misc kind %u\n",
            m, brisk_addr_format(&c->id.laddr, la), c->id.lport, brisk_addr_format(&c->id.raddr, ra), c->id.rport,
            brisk_tcp_state_name(c->state), c->snd.una, c->snd.nxt,
            c->snd.max, c->snd.iss, c->snd.wnd, c->snd.mss, (unsigned long long)c->snd.buf.len,
            c->snd.fin_queued, c->snd.fin_sent, c->rcv.nxt, c->rcv.irs, (unsigned long long)c->rcv.buf.len,
            c->rcv.ooo.nsegs, c->rcv.ooo.bytes, c->rcv.fin, c->rcv.fin_pending, c->rcv.fin_seq, c->sb.len,
            c->sb.sacked, c->sb.lost, c->sb.retrans, c->tsq.pkts, (unsigned long long)c->tsq.wmem,
            c->timer.rtx_kind, c->timer.misc_kind);
    abort();
}

void tcp_check_tuple(struct brisk_net *net, const struct brisk_tuple *id)
{
    const brisk_sock *c = tcp_conn_lookup(net, id);
    if (c)
        tcp_check_invariants(c);
    const brisk_sock *l = tcp_listener_lookup(net, &id->laddr, id->lport);
    if (l)
        tcp_check_invariants(l);
}
