/*
 * timewait.c — TIME-WAIT records: a closed connection's last 2 MSL in 152 bytes instead of a socket.
 *
 * A connection that closed first waits in TIME-WAIT (RFC 9293 §3.10.7.4 "TIME-WAIT STATE", §3.6) so that a
 * retransmission of the peer's FIN is acknowledged again, and so that old duplicates of the connection die
 * before its tuple is used again. By then the application has usually closed its handle (brisk_close made
 * the socket an orphan) and nothing of the socket but a dozen numbers can ever matter: its buffers are empty,
 * nothing is in flight and no timer but the 2 MSL one is armed. A busy client leaves tens of thousands of
 * such connections behind (tcp_max_tw_buckets, 65,536 by default), so each becomes a struct tcp_tw — the
 * tuple, SND.MAX, RCV.NXT, the window we advertised and its edges, TS.Recent and its age, the timer — carved
 * from slabs, and the socket is freed (Linux does the same with its inet_timewait_sock, tcp_time_wait).
 *
 * What a record answers is exactly what the socket answered (input.c's conn_input in TIME-WAIT; the same
 * counters move, the same bytes leave):
 *   - PAWS (RFC 7323 §5.3): an older timestamp is an old duplicate, answered with a (rate-limited) ACK;
 *   - a segment outside the window (the peer's FIN retransmitted: our ACK was lost) gets an ACK, a FIN
 *     just below RCV.NXT restarting the 2 MSL wait; an out-of-window RST is dropped;
 *   - a SYN, in the window or not, gets a challenge ACK (RFC 5961 §4.2): brisk reuses no tuple from
 *     TIME-WAIT (no RFC 6191 rule), the peer's new SYN comes again after the RST its ACK draws;
 *   - a RST in the window: at RCV.NXT it ends the wait (RFC 9293; brisk has no RFC 1337 option), anywhere
 *     else a challenge ACK (RFC 5961 §3.2);
 *   - an acceptable ACK updates TS.Recent; a FIN in the window is acknowledged and restarts the wait.
 * ICMP errors for a record are ignored (icmp_err.c), as for a TIME-WAIT socket.
 *
 * When. tcp_tw_settle runs once the socket in TIME-WAIT has answered the segment that brought it there
 * (input.c: the ACK of the peer's FIN is out), when an ACK the device refused finally leaves (conn.c's
 * brisk_tcp_run_blocked), when the application closes a TIME-WAIT socket it still held (socket.c), and when
 * the lazily cleared retransmission entry of our FIN fires with nothing to do (timer.c) — in most
 * TIME-WAITs that entry is still armed at first, and cancelling it early would move the stack's next
 * deadline and the wheel's counts, so the record waits for it (an RTO at most). It keeps the socket whole
 * when a record could not answer as it would: the application still holds it (it may read the error, the
 * state, brisk_conn_info), an ACK is still owed or a timer besides the 2 MSL one is armed, SACK blocks
 * would still ride on its ACKs, the window it would advertise next is not the one it last advertised,
 * tcp_max_tw_buckets was reached (the wait ends at once: TCPTimeWaitOverflow), or no record can be carved.
 * The 2 MSL timer moves into the record where it stands in the wheel (brisk_timer_move), so expiries keep
 * their order and the wheel's counts do not move.
 *
 * One difference remains: a record whose ACK the device refused is resent after the sockets waiting for the
 * same wake (tcp_tw_run_refused runs at the end of brisk_tcp_run_blocked), where the socket would have been
 * resent in its place among them.
 *
 * Accounting. A record counts in brisk_stack_sockets and in tw_count (tcp_max_tw_buckets) like the socket
 * it replaces, and holds its local port (bind, connect). Records are not returned to malloc before the stack
 * goes: a freed one goes on the free list, as stream chunks do (sbuf.c).
 */
#include <stdlib.h>
#include <string.h>

#include "core/slab.h"
#include "tcp/tcp.h"

#define TW_BUCKETS       4096u /* as the connection hash (conn.c) */
#define TW_PER_SLAB      64u   /* records carved at once: 64 x 152 bytes, about 9.5 KB */
#define PAWS_VALIDITY_NS (24ull * 86400 * BRISK_NSEC_PER_SEC)

int tcp_tw_init(struct brisk_tcp *t)
{
    struct tcp_tw_table *tt = &t->tw;
    tt->nbuckets = TW_BUCKETS;
    tt->buckets = calloc(tt->nbuckets, sizeof(*tt->buckets));
    return tt->buckets ? BRISK_OK : BRISK_ERR_NOMEM;
}

void tcp_tw_destroy(struct brisk_tcp *t)
{
    struct brisk_net *net = t->net;
    struct tcp_tw_table *tt = &t->tw;
    for (uint32_t i = 0; i < tt->nbuckets && tt->buckets; i++)
        for (struct tcp_tw *tw = tt->buckets[i]; tw; tw = tw->hnext)
            brisk_timer_cancel(&net->wheel, &tw->timer);
    for (size_t i = 0; i < tt->nslabs; i++)
        free(tt->slabs[i]);
    free(tt->slabs);
    free(tt->buckets);
    memset(tt, 0, sizeof(*tt));
}

static struct tcp_tw *tw_alloc(struct tcp_tw_table *tt)
{
    if (!tt->free) {
        size_t n;
        uint8_t *slab = brisk_slab_carve(&tt->slabs, &tt->nslabs, &tt->slab_cap, &tt->bytes, UINT64_MAX,
                                         TCP_TW_SIZE, TW_PER_SLAB, &n);
        if (!slab)
            return NULL;
        for (size_t i = 0; i < n; i++) {
            struct tcp_tw *tw = (struct tcp_tw *)(void *)(slab + i * TCP_TW_SIZE);
            tw->hnext = tt->free;
            tt->free = tw;
        }
    }
    struct tcp_tw *tw = tt->free;
    tt->free = tw->hnext;
    memset(tw, 0, sizeof(*tw));
    return tw;
}

static struct tcp_tw **bucket_of(struct brisk_net *net, const struct brisk_tuple *id)
{
    struct brisk_tcp *t = tcp_of(net);
    uint64_t h = tcp_tuple_hash(t, id);
    return &t->tw.buckets[h & (t->tw.nbuckets - 1)];
}

struct tcp_tw *tcp_tw_lookup(struct brisk_net *net, const struct brisk_tuple *id)
{
    if (tcp_of(net)->tw.count == 0)
        return NULL; /* most stacks, most of the time: no hash to compute */
    for (struct tcp_tw *tw = *bucket_of(net, id); tw; tw = tw->hnext)
        if (tw->id.lport == id->lport && tw->id.rport == id->rport && brisk_addr_same_fast(&tw->id.laddr, &id->laddr) &&
            brisk_addr_same_fast(&tw->id.raddr, &id->raddr))
            return tw;
    return NULL;
}

int tcp_tw_port_in_use(struct brisk_net *net, const struct brisk_addr *laddr, int v6only, uint16_t lport)
{
    struct tcp_tw_table *tt = &tcp_of(net)->tw;
    if (tt->count == 0)
        return 0;
    for (uint32_t i = 0; i < tt->nbuckets; i++)
        for (const struct tcp_tw *tw = tt->buckets[i]; tw; tw = tw->hnext)
            if (tw->id.lport == lport && tcp_laddr_overlap(&tw->id.laddr, 0, laddr, v6only))
                return 1;
    return 0;
}

static void refused_unlink(struct brisk_net *net, struct tcp_tw *tw)
{
    if (!tw->refused)
        return;
    struct tcp_tw **pp = &tcp_of(net)->tw.refused;
    while (*pp && *pp != tw)
        pp = &(*pp)->bnext;
    if (*pp)
        *pp = tw->bnext;
    tw->bnext = NULL;
    tw->refused = 0;
}

/* The end of the wait (expiry, or a RST at RCV.NXT): the connection is CLOSED and its tuple free. */
static void tw_free(struct tcp_tw *tw)
{
    struct brisk_net *net = tw->net;
    struct brisk_tcp *t = tcp_of(net);
    struct tcp_tw **pp = bucket_of(net, &tw->id);
    while (*pp && *pp != tw)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = tw->hnext;
    t->port_refs[tw->id.lport % TCP_PORT_BUCKETS]--;
    refused_unlink(net, tw);
    t->tw.count--;
    t->tw_count--;
    t->nsocks--;
    tw->hnext = t->tw.free;
    t->tw.free = tw;
}

static void tw_fired(struct brisk_timer *timer, void *arg, uint64_t now)
{
    (void)timer;
    (void)now;
    tw_free(arg);
}

/* tcp_arm_misc's TIME-WAIT restart, counted as the socket's was. */
static void tw_restart(struct tcp_tw *tw, uint64_t now)
{
    brisk_timer_arm(&tw->net->wheel, &tw->timer, now + tw->net->s.tcp_time_wait_ns);
    tw->net->c.TCPTimerWheelOps++;
}

/* The socket's pure ACK (output.c, tcp_send_ack / tcp_transmit): SEQ = SND.MAX, ACK = RCV.NXT, timestamps
 * if negotiated, the window it last advertised; through the socket's route, with its TOS. */
static void tw_send_ack(struct tcp_tw *tw, uint64_t now)
{
    struct brisk_net *net = tw->net;
    struct brisk_tcp_repr h = {
        .sport = tw->id.lport,
        .dport = tw->id.rport,
        .seq = tw->snd_max,
        .ack = tw->rcv_nxt,
        .flags = BRISK_TCP_ACK,
        .window = tw->window,
    };
    if (tw->ts) {
        h.opts.ts_ok = 1;
        h.opts.ts_val = (uint32_t)(now / BRISK_NSEC_PER_MSEC) + tw->ts_offset; /* tcp_ts_now */
        h.opts.ts_ecr = tw->ts_recent;
    }
    size_t hlen = BRISK_TCP_HLEN + brisk_tcp_opts_len(&h.opts);
    int rc = BRISK_ERR_NOBUFS;
    struct brisk_route rt = {.dev = tw->dev, .nexthop = tw->nexthop, .src = tw->id.laddr};
    brisk_pkt *pkt = brisk_pkt_alloc(&net->pool, (uint32_t)(hlen + brisk_route_l3_hlen(&rt) + BRISK_ETH_HLEN));
    if (!pkt) {
        net->c.IpOutDiscards++;
        net->tx_wake_wanted = 1;
    } else {
        uint8_t *b = brisk_pkt_put(pkt, (uint32_t)hlen);
        brisk_tcp_emit(b, &h);
        if (rt.dev->cfg.caps & BRISK_NETDEV_CAP_CSUM) {
            tcp_csum_fill(b, hlen, &rt.src, &tw->id.raddr, 1);
            pkt->flags |= BRISK_PKT_CSUM_PARTIAL;
            pkt->csum_start = 0;
            pkt->csum_offset = BRISK_TCP_CSUM_OFF;
        } else {
            tcp_csum_fill(b, hlen, &rt.src, &tw->id.raddr, 0);
        }
        rc = brisk_route_output(net, &rt, &tw->id.raddr, BRISK_IP_PROTO_TCP, tw->tos, pkt, now);
    }
    if (rc == BRISK_ERR_BUSY || rc == BRISK_ERR_NOBUFS) {
        /* Not sent: owed, and resent on the device's next wake, as the socket's was (tcp_block). */
        if (!tw->refused) {
            tw->refused = 1;
            tw->bnext = tcp_of(net)->tw.refused;
            tcp_of(net)->tw.refused = tw;
        }
        return;
    }
    tw->wup = tw->rcv_nxt;
    net->c.TcpOutSegs++;
}

void tcp_tw_run_refused(struct brisk_net *net, uint64_t now)
{
    struct tcp_tw *list = tcp_of(net)->tw.refused;
    tcp_of(net)->tw.refused = NULL;
    while (list) {
        struct tcp_tw *tw = list;
        list = tw->bnext;
        tw->bnext = NULL;
        tw->refused = 0;
        if (tw->dev && brisk_netdev_stopped(tw->dev)) {
            tw->refused = 1;
            tw->bnext = tcp_of(net)->tw.refused;
            tcp_of(net)->tw.refused = tw;
            continue;
        }
        tw_send_ack(tw, now); /* may put it back */
    }
}

/* tcp_oow_limited on the record's own clock. */
static int oow_limited(struct tcp_tw *tw, uint64_t *skipped, uint64_t now)
{
    uint64_t iv = tw->net->s.tcp_invalid_ratelimit_ns;
    if (!iv)
        return 0;
    if (tw->oow_ack_at != BRISK_TIME_NONE && now >= tw->oow_ack_at && now - tw->oow_ack_at < iv) {
        (*skipped)++;
        return 1;
    }
    tw->oow_ack_at = now;
    return 0;
}

/* tcp_send_challenge_ack: the record's limit, then the stack's (RFC 5961 §7). */
static void challenge_ack(struct tcp_tw *tw, uint64_t now)
{
    struct brisk_net *net = tw->net;
    struct brisk_tcp *t = tcp_of(net);
    if (oow_limited(tw, &net->c.TCPACKSkippedChallenge, now))
        return;
    if (now - t->challenge.window_start >= BRISK_NSEC_PER_SEC) {
        t->challenge.window_start = now;
        t->challenge.count = 0;
    }
    if (t->challenge.count >= net->s.tcp_challenge_ack_limit) {
        net->c.TCPChallengeACKLimited++;
        return;
    }
    t->challenge.count++;
    net->c.TCPChallengeACK++;
    tw_send_ack(tw, now);
}

/* input.c's acceptable(), with the window the record froze. */
static int acceptable(const struct tcp_tw *tw, uint32_t seq, uint32_t seglen)
{
    uint32_t nxt = tw->rcv_nxt;
    if (!tcp_seq_acceptable(nxt, tw->rcv_adv, seq, seglen))
        return 0;
    if (seglen == 0 || tw->net->s.tcp_rcv_window != TCP_RWIN_LINUX)
        return 1;
    /* tcp_rwin_acceptable: past Linux's right edge only with nothing queued. */
    int32_t w = (int32_t)(tw->rw_edge - nxt);
    uint32_t edge = nxt + (w > 0 ? (uint32_t)w : 0);
    if (!brisk_seq_gt(seq + seglen, edge))
        return 1;
    return !brisk_seq_gt(seq, edge) && tw->buf_empty;
}

/* Segments occupying sequence space without a SYN: their duplicate ACK is never rate-limited. */
static int oow_exempt(const struct brisk_tcp_repr *seg)
{
    return (seg->payload_len || (seg->flags & BRISK_TCP_FIN)) && !(seg->flags & BRISK_TCP_SYN);
}

void tcp_tw_input(struct tcp_tw *tw, const struct brisk_tcp_repr *seg, uint64_t now)
{
    struct brisk_net *net = tw->net;
    uint32_t seglen = (uint32_t)seg->payload_len + ((seg->flags & BRISK_TCP_SYN) ? 1u : 0u) +
                      ((seg->flags & BRISK_TCP_FIN) ? 1u : 0u);
    /* PAWS (RFC 7323 §5.3). */
    if (tw->ts && seg->opts.ts_ok && !(seg->flags & BRISK_TCP_RST) &&
        (int32_t)(seg->opts.ts_val - tw->ts_recent) < 0 && now - tw->ts_recent_age < PAWS_VALIDITY_NS) {
        net->c.PAWSEstab++;
        if (oow_exempt(seg) || !oow_limited(tw, &net->c.TCPACKSkippedPAWS, now))
            tw_send_ack(tw, now);
        return;
    }
    if (!acceptable(tw, seg->seq, seglen)) {
        if (seg->flags & BRISK_TCP_RST)
            return; /* outside the window: not the peer's */
        net->c.TCPOutOfWindow++;
        /* The peer's FIN again (our ACK was lost): the 2 MSL wait starts over. */
        if ((seg->flags & BRISK_TCP_FIN) && seg->seq + (uint32_t)seg->payload_len + 1 == tw->rcv_nxt)
            tw_restart(tw, now);
        if (seg->flags & BRISK_TCP_SYN) {
            net->c.TCPSYNChallenge++; /* RFC 5961 §4.2 */
            challenge_ack(tw, now);
            return;
        }
        if (oow_exempt(seg) || !oow_limited(tw, &net->c.TCPACKSkippedSeq, now))
            tw_send_ack(tw, now);
        return;
    }
    if (seg->flags & BRISK_TCP_RST) {
        if (seg->seq != tw->rcv_nxt) { /* RFC 5961 §3.2: in the window but not exact */
            net->c.TCPRSTChallenge++;
            challenge_ack(tw, now);
            return;
        }
        /* The connection ends (as the socket's tcp_conn_done, which cancelled the timer). */
        brisk_timer_cancel(&net->wheel, &tw->timer);
        net->c.TCPTimerWheelOps++;
        tw_free(tw);
        return;
    }
    if (seg->flags & BRISK_TCP_SYN) {
        net->c.TCPSYNChallenge++;
        challenge_ack(tw, now);
        return;
    }
    if (!(seg->flags & BRISK_TCP_ACK))
        return;
    if (tw->ts && seg->opts.ts_ok && brisk_seq_leq(seg->seq, tw->wup)) { /* ts_recent_update */
        tw->ts_recent = seg->opts.ts_val;
        tw->ts_recent_age = now;
    }
    if (seg->flags & BRISK_TCP_FIN) {
        tw_send_ack(tw, now);
        tw_restart(tw, now);
    }
}

/* Whether a record answers for c exactly as c would; see the opening comment. */
static int settleable(brisk_sock *c, uint64_t now)
{
    const struct brisk_timer *other[] = {&c->timer.rtx, &c->timer.delack, &c->timer.cork, &c->timer.pace};
    if (c->state != BRISK_TCP_TIME_WAIT || !c->orphan || c->listener || !c->in_table || c->blocked ||
        c->ack.pending || c->ack.refused || c->timer.misc_kind != TCP_MISC_TIMEWAIT ||
        !brisk_timer_armed(&c->timer.misc) || c->timer.misc.expires <= now)
        return 0;
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
        if (brisk_timer_armed(other[i]))
            return 0;
    if (c->opt.sack && (c->rcv.ooo.nsegs || c->rcv.dsack || c->rcv.fin_pending))
        return 0; /* its ACKs would carry SACK blocks */
    return 1;
}

int tcp_tw_settle(brisk_sock *c, uint64_t now)
{
    struct brisk_net *net = c->net;
    struct brisk_tcp *t = tcp_of(net);
    if (!settleable(c, now))
        return 0;
    /* The window its next ACK would carry. Choosing it again after the ACK of the peer's FIN changes
     * nothing when the choice is settled (the buffer no longer changes in TIME-WAIT): the same window and
     * right edge come out. If they do not, the socket is kept and goes on choosing. */
    uint32_t adv = c->rcv.adv, last_win = c->rcv.last_win;
    uint16_t window = tcp_rwin_select(c, 0);
    if (c->rcv.adv != adv || c->rcv.last_win != last_win) {
        t->tw.kept++;
        return 0;
    }
    struct tcp_tw *tw = tw_alloc(&t->tw);
    if (!tw) {
        t->tw.kept++;
        return 0;
    }
    tw->net = net;
    tw->dev = c->rt.dev;
    tw->nexthop = c->rt.nexthop;
    tw->id = c->id;
    tw->snd_max = c->snd.max;
    tw->rcv_nxt = c->rcv.nxt;
    tw->rcv_adv = c->rcv.adv;
    tw->rw_edge = c->rw.wup + c->rw.wnd;
    tw->wup = c->rcv.wup;
    tw->window = window;
    tw->tos = c->tos;
    tw->ts = c->opt.ts;
    tw->ts_recent = c->opt.ts_recent;
    tw->ts_recent_age = c->opt.ts_recent_age;
    tw->ts_offset = c->opt.ts_offset;
    tw->oow_ack_at = c->oow_ack_at;
    tw->buf_empty = c->rcv.buf.len == 0;
    brisk_timer_init(&tw->timer, tw_fired, tw);
    brisk_timer_move(&net->wheel, &tw->timer, &c->timer.misc);
    c->timer.misc_kind = TCP_MISC_NONE;

    /* The record takes the socket's place: table, port, TIME-WAIT bucket, socket count. */
    struct tcp_tw **b = bucket_of(net, &tw->id);
    tw->hnext = *b;
    *b = tw;
    t->tw.count++;
    t->port_refs[tw->id.lport % TCP_PORT_BUCKETS]++;
    t->nsocks++;
    tcp_set_state(c, BRISK_TCP_CLOSED, now); /* tw_count moves to the record */
    t->tw_count++;
    t->tw.settled++;
    tcp_conn_free(c); /* unlinks it; no timer is left to cancel */
    return 1;
}
