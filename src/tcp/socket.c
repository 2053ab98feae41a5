/*
 * socket.c — the TCP socket API (include/brisk/brisk.h): non-blocking, event-driven, BSD-shaped.
 *
 * Every call takes `now`, does its work, runs the transmit function where data may now leave, and delivers
 * pending events before returning. Errors are the BRISK_ERR_* codes brisk.h documents per call.
 *
 * send() copies into the send buffer (bounded by SNDBUF) and calls tcp_write_xmit(); MSG_MORE holds the tail
 * of this call like a one-shot cork. It fills the queue in write-time pieces as Linux fills skbs
 * (queue_write): a TCP_NOTSENT_LOWAT write stops where a new piece would begin with that many bytes unsent,
 * and under tcp_push_each_write each write leaves a PSH mark at its end (mark.c); MSG_EOR leaves a record
 * mark no segment crosses. BRISK_EV_WRITABLE follows from tcp_check_writable after ACKs. recv() copies out
 * of the receive buffer and, when reading opened the window by at least two segments (or reopened a closed
 * one), advertises it at once (RFC 9293 §3.8.6.2.2).
 * close() follows RFC 9293 §3.10.4 and RFC 2525 §2.17 in Linux's order (__tcp_close): unread data aborts
 * with a RST, then LINGER 0 (a RST where tcp_disconnect sends one); otherwise the FIN is queued after the
 * data and the stack finishes the close on its own. With a linger time the core still never waits: a close
 * that leaves our FIN unacknowledged keeps the handle (BRISK_ERR_INPROGRESS) until the caller closes again,
 * after BRISK_EV_FIN_ACKED or its linger time (docs/sockets.md has how a blocking facade uses it).
 *
 * Socket options follow Linux's semantics where Linux has the option (brisk.h, enum brisk_sockopt), with
 * times in ns: TCP_USER_TIMEOUT (applied by timer.c), IP_TOS (the ECN bits kept clear), SIOCINQ's count as
 * a read-only BRISK_SO_INQ, SO_LINGER.
 */
#include <string.h>

#include "net/netdev.h"
#include "tcp/tcp.h"

static void finish_call(struct brisk_net *net, uint64_t now)
{
    tcp_deliver_events(net, now);
}

brisk_sock *tcp_socket(struct brisk_tcp *t, int *err)
{
    brisk_sock *c = tcp_conn_alloc(t->net);
    *err = c ? BRISK_OK : BRISK_ERR_NOMEM;
    return c;
}

void brisk_sock_set_callback(brisk_sock *s, brisk_sock_fn fn, void *ctx)
{
    if (!s)
        return;
    s->fn = fn;
    s->ctx = ctx;
    /* Events raised while the socket had no callback (data that came between accept and this call, a reset)
     * were kept: they go now, as the end of any call delivers events (inside a callback: after it). */
    if (fn && s->ev.pending && !s->orphan) {
        tcp_ev_queue(s);
        finish_call(s->net, brisk_net_clock(s->net, 0));
    }
}

/* Whether addr (a unicast address, not any) is one of the stack's own. */
static int addr_is_local(struct brisk_net *net, const struct brisk_addr *a)
{
    if (a->family == BRISK_AF_INET)
        return brisk_netdev_is_local(net, a->u.v4);
    for (uint32_t i = 0; i < net->ndevs; i++)
        if (brisk_netdev_ip6_is_mine(&net->devs[i], a->u.v6))
            return 1;
    return 0;
}

int brisk_bind_addr(brisk_sock *s, const struct brisk_addr *addr, uint16_t port)
{
    if (!s || !addr || s->bound || s->state != BRISK_TCP_CLOSED)
        return BRISK_ERR_INVAL;
    struct brisk_addr a;
    switch (addr->family) {
    case BRISK_AF_UNSPEC: /* any of the stack's: IPv4's, as the uint32_t call's 0 */
        a = brisk_addr4(0);
        break;
    case BRISK_AF_INET:
        a = brisk_addr4(addr->u.v4);
        break;
    case BRISK_AF_INET6:
        if (!s->net->s.ipv6)
            return BRISK_ERR_AFNOSUPPORT;
        a = brisk_addr6(addr->u.v6);
        break;
    default:
        return BRISK_ERR_INVAL;
    }
    if (!brisk_addr_is_any(&a) && !addr_is_local(s->net, &a))
        return BRISK_ERR_ADDRNOTAVAIL;
    if (s->sox.v6only && a.family != BRISK_AF_INET6)
        return BRISK_ERR_AFNOSUPPORT; /* an IPv6-only socket has no IPv4 address, not even 0.0.0.0 */
    if (port && tcp_port_in_use(s->net, &a, s->sox.v6only, port))
        return BRISK_ERR_ADDRINUSE;
    s->id.laddr = a;
    s->id.lport = port;
    s->bound = port != 0;
    return BRISK_OK;
}

int brisk_bind(brisk_sock *s, uint32_t addr, uint16_t port)
{
    return brisk_bind_addr(s, TCP_ADDR4(addr), port);
}

int brisk_sock_tuple(const brisk_sock *s, struct brisk_tuple *out)
{
    if (!s || !out)
        return BRISK_ERR_INVAL;
    memset(out, 0, sizeof(*out));
    if (!brisk_addr_is_any(&s->id.laddr) || s->id.lport)
        out->laddr = s->id.laddr; /* 0.0.0.0 or ::: bound to any of the stack's */
    if (s->id.rport)
        out->raddr = s->id.raddr;
    out->lport = s->id.lport;
    out->rport = s->id.rport;
    return BRISK_OK;
}

int brisk_listen(brisk_sock *s, int backlog)
{
    if (!s || s->id.lport == 0 || (s->state != BRISK_TCP_CLOSED && s->state != BRISK_TCP_LISTEN))
        return BRISK_ERR_INVAL;
    if (backlog < 1)
        backlog = 1;
    s->lq.backlog = (uint32_t)backlog;
    if (s->state == BRISK_TCP_LISTEN)
        return BRISK_OK;
    s->state = BRISK_TCP_LISTEN;
    return tcp_conn_hash_add(s);
}

brisk_sock *brisk_accept(brisk_sock *ls, int *err)
{
    int dummy;
    if (!err)
        err = &dummy;
    if (!ls || ls->state != BRISK_TCP_LISTEN) {
        *err = BRISK_ERR_INVAL;
        return NULL;
    }
    brisk_sock *c = ls->lq.head;
    if (!c) {
        *err = BRISK_ERR_AGAIN;
        return NULL;
    }
    ls->lq.head = c->aq_next;
    if (!ls->lq.head)
        ls->lq.tail = NULL;
    ls->lq.len--;
    c->aq_next = NULL;
    c->in_aq = 0;
    c->listener = NULL;
    *err = BRISK_OK;
    return c;
}

/* An ephemeral port for the connection id (its ports but lport set) that no other connection of ours uses. */
static int pick_port(struct brisk_net *net, struct brisk_tuple *id)
{
    struct brisk_tcp *t = tcp_of(net);
    for (int i = 0; i < 16384; i++) {
        uint16_t p = t->next_port;
        t->next_port = (uint16_t)(p >= 65535 ? 49152 : p + 1);
        id->lport = p;
        if (!tcp_conn_lookup(net, id) && !tcp_tw_lookup(net, id) && !tcp_listener_lookup(net, &id->laddr, p))
            return BRISK_OK;
    }
    id->lport = 0;
    return BRISK_ERR_ADDRNOTAVAIL;
}

int brisk_connect_addr(brisk_sock *s, const struct brisk_addr *addr, uint16_t port, uint64_t now)
{
    if (!s || !addr || port == 0 || brisk_addr_is_any(addr) ||
        (addr->family != BRISK_AF_INET && addr->family != BRISK_AF_INET6))
        return BRISK_ERR_INVAL;
    if (s->state != BRISK_TCP_CLOSED || s->error)
        return s->state == BRISK_TCP_LISTEN ? BRISK_ERR_INVAL : BRISK_ERR_ISCONN;
    struct brisk_net *net = s->net;
    struct brisk_addr dst = addr->family == BRISK_AF_INET ? brisk_addr4(addr->u.v4) : brisk_addr6(addr->u.v6);
    /* A socket bound to an address reaches only that address's family; bound to an any address (0.0.0.0
     * or ::, a port kept) or not at all, either family — a brisk socket has no family of its own. */
    const struct brisk_addr *la = &s->id.laddr;
    if (!brisk_addr_is_any(la) && la->family != dst.family)
        return BRISK_ERR_INVAL;
    if (s->sox.v6only && dst.family != BRISK_AF_INET6)
        return BRISK_ERR_AFNOSUPPORT;
    now = brisk_net_clock(net, now);
    int rc = brisk_route_lookup(net, &dst, &s->rt);
    if (rc != BRISK_OK)
        return rc == BRISK_ERR_AFNOSUPPORT ? rc : BRISK_ERR_NOROUTE;
    if (!brisk_addr_is_any(la))
        s->rt.src = *la;
    struct brisk_tuple id = {.laddr = s->rt.src, .raddr = dst, .lport = s->id.lport, .rport = port};
    if (!id.lport) {
        rc = pick_port(net, &id);
        if (rc != BRISK_OK)
            return rc;
    } else if (tcp_conn_lookup(net, &id) || tcp_tw_lookup(net, &id)) {
        return BRISK_ERR_ADDRINUSE;
    }
    s->id = id;
    s->bound = 1;
    tcp_rwin_open(s, 0, 0); /* the SYN's window and scale (rwin.c) */
    s->snd.mss = tcp_local_mss(s);
    net->c.TcpActiveOpens++;
    tcp_open(s, BRISK_TCP_SYN_SENT, now);
    finish_call(net, now);
    return BRISK_ERR_INPROGRESS;
}

int brisk_connect(brisk_sock *s, uint32_t addr, uint16_t port, uint64_t now)
{
    if (addr == 0)
        return BRISK_ERR_INVAL;
    return brisk_connect_addr(s, TCP_ADDR4(addr), port, now);
}

/* Whether a write must now mark a forced push (Linux's forced_push): more than half the largest window
 * written since the last PSH mark, so that a long write still gives the receiver pushes to deliver on. */
static int forced_push(const brisk_sock *s)
{
    return brisk_seq_gt(tcp_data_end(s), s->mark.pushed + (s->snd.max_wnd >> 1));
}

static void mark_push(brisk_sock *s)
{
    uint32_t end = tcp_data_end(s);
    tcp_mark_add(s, end, TCP_MARK_PSH);
    s->mark.pushed = end;
}

/*
 * queue_write under brisk's own rules without a low-water mark or records (no tcp_push_each_write, no
 * tcp_sw_gso, no TCP_NOTSENT_LOWAT, no MSG_EOR mark): nothing between the pieces of a write asks the mark or
 * pushes, so its loop would only fill the last unsent piece while it has room and then begin new pieces, all
 * on the grid of the first (tcp_piece_begin leaves the runs as they are for them); and the send buffer stores
 * bytes the same however the calls split them. So the write is one append (a bulk write of 64 KB: one, not
 * 45), and the pieces learn where its first piece begins: the piece it joins, or a new one at the data end.
 * Where that is snd.max (nothing unsent: request / response, every write), the runs behind it are never read
 * again (tcp_piece_tail looks from snd.max on), so it is a fresh run (tcp_piece_restart).
 */
static size_t queue_write_brisk(brisk_sock *s, const uint8_t *buf, size_t want, uint32_t goal)
{
    uint32_t end = tcp_data_end(s);
    uint32_t start = end;
    uint32_t room = 0;
    if (brisk_seq_gt(end, s->snd.max)) {
        start = tcp_piece_tail(s);
        room = end - start < goal ? goal - (end - start) : 0;
        if (room == 0)
            start = end;
    }
    if (start == s->snd.max)
        tcp_piece_restart(s, start, goal);
    else
        tcp_piece_begin(s, start, goal);
    size_t got = brisk_sbuf_append(&tcp_of(s->net)->chunks, &s->snd.buf, buf, want);
    /* The loop begins a new piece once the one joined is full (at once without one to join) and the write
     * goes on, whether or not the buffer then takes more (Linux: tcp_skb_entail clears TCP_NAGLE_PUSH). */
    if (want > room && got >= room)
        s->snd.push_once = 0;
    return got;
}

/*
 * Copies up to `want` bytes into the send queue the way Linux's tcp_sendmsg_locked fills skbs, and returns
 * how many it took. The queue's unsent bytes are pieces of tcp_write_goal() bytes (Linux's skbs, piece.c):
 * the first bytes of a write join the last piece while it is unsent, short of the goal and not the end of a
 * record; every new piece first asks whether the low-water mark allows it (sk_stream_memory_free per skb),
 * which is where a write stops short. Under tcp_push_each_write, joining a piece withdraws the PSH mark the
 * previous write left at its end, and a piece filled mid-write gets one if forced_push says so. A piece that
 * fills while the write goes on is pushed as Linux pushes it: under tcp_sw_gso, everything after a forced
 * push (TCP_NAGLE_PUSH), else the piece alone if it heads the unsent data (tcp_push_one); in brisk's own
 * mode only with a low-water mark in force, so that what leaves during a long write makes room for more.
 */
static size_t queue_write(brisk_sock *s, const uint8_t *buf, size_t want, uint64_t now)
{
    struct brisk_chunkpool *pool = &tcp_of(s->net)->chunks;
    int linux_push = s->net->s.tcp_push_each_write != 0;
    int sw = s->net->s.tcp_sw_gso != 0;
    uint32_t goal = tcp_write_goal(s);
    if (!linux_push && !sw && !s->snd.lowat && !s->snd.marks)
        return queue_write_brisk(s, buf, want, goal);
    size_t done = 0;
    while (done < want) {
        uint32_t end = tcp_data_end(s);
        uint32_t start = end;
        uint32_t room = 0;
        if (brisk_seq_gt(end, s->snd.max) && !(s->snd.marks && (tcp_mark_at(s, end) & TCP_MARK_EOR))) {
            start = tcp_piece_tail(s);
            room = end - start < goal ? goal - (end - start) : 0;
        }
        if (room == 0) {
            if (s->snd.lowat && tcp_notsent(s) >= s->snd.lowat)
                break;
            start = end;
            s->snd.push_once = 0; /* Linux: tcp_skb_entail clears TCP_NAGLE_PUSH */
            room = goal;
        } else if (done == 0 && linux_push && s->snd.marks) {
            tcp_mark_clear_last(s, end, TCP_MARK_PSH);
        }
        tcp_piece_begin(s, start, goal);
        size_t k = want - done < room ? want - done : room;
        size_t got = brisk_sbuf_append(pool, &s->snd.buf, buf + done, k);
        done += got;
        if (got < k || done == want)
            break;
        /* The piece is full and the write goes on. */
        int forced = linux_push && forced_push(s);
        if (forced)
            mark_push(s);
        if (sw) {
            if (forced || start == s->snd.nxt) {
                s->snd.push_mode = (uint8_t)(forced ? TCP_PUSH_CALL : TCP_PUSH_CALL | TCP_PUSH_ONE);
                tcp_write_xmit(s, TCP_XMIT_CALL, now);
                s->snd.push_mode = 0;
            }
        } else if (s->snd.lowat && (forced || start == s->snd.nxt)) {
            tcp_write_xmit(s, TCP_XMIT_CALL, now);
        }
    }
    return done;
}

int64_t brisk_send(brisk_sock *s, const void *buf, size_t len, unsigned flags, uint64_t now)
{
    if (!s || (!buf && len))
        return BRISK_ERR_INVAL;
    struct brisk_net *net = s->net;
    now = brisk_net_clock(net, now);
    if (s->error)
        return s->error;
    if (s->snd.fin_queued)
        return BRISK_ERR_PIPE;
    if (s->state == BRISK_TCP_SYN_SENT || s->state == BRISK_TCP_SYN_RECEIVED)
        return BRISK_ERR_AGAIN;
    if (s->state != BRISK_TCP_ESTABLISHED && s->state != BRISK_TCP_CLOSE_WAIT)
        return BRISK_ERR_NOTCONN;
    /* Linux: pushed_seq starts at write_seq. Only tcp_push_each_write's forced pushes read it. */
    if (net->s.tcp_push_each_write && !s->mark.started) {
        s->mark.started = 1;
        s->mark.pushed = tcp_data_end(s);
    }
    size_t space = s->snd.buf.len < s->snd.sndbuf ? s->snd.sndbuf - (size_t)s->snd.buf.len : 0;
    size_t want = len < space ? len : space;
    int eor = (flags & BRISK_MSG_EOR) != 0;
    /* The record's boundary goes after its last byte, so only a write taken to its end leaves one (Linux
     * marks eor only then; the application sends the rest with MSG_EOR again). One that would end a record
     * waits while the ring holds TCP_MARKS unacknowledged records (mark.c). */
    if (eor && want == len && !tcp_mark_eor_room(s))
        want = 0;
    /* RFC 5681 §4.1: after an idle period longer than the RTO, restart from the initial window (Linux:
     * tcp_slow_start_after_idle_check as the data is queued), before any of it can go. */
    if (want)
        tcp_idle_restart(s, now);
    size_t n = want ? queue_write(s, buf, want, now) : 0;
    if (n == 0 && len > 0) {
        s->snd.was_full = 1;
        return BRISK_ERR_AGAIN;
    }
    int partial = n < len;
    if (partial)
        s->snd.was_full = 1;
    if (eor && !partial)
        tcp_mark_add(s, tcp_data_end(s), TCP_MARK_EOR);
    /* Linux's tcp_push at the end of the write: PSH on its last piece unless MSG_MORE (or a forced push
     * overrides it). A write cut short pushes with MSG_MORE dropped (its wait_for_space push). */
    int more = (flags & BRISK_MSG_MORE) && !partial;
    /* An empty send without MSG_MORE is brisk's push: it marks the unsent tail as a write's end would (and
     * as Linux's blocked writer does before it waits, tcp_push in wait_for_space). */
    if (net->s.tcp_push_each_write && (n || tcp_notsent(s)) && (!more || forced_push(s)))
        mark_push(s);
    /* Data sent soon after data arrived: an interactive exchange, ACKs can ride on replies. */
    if (s->ack.last_data_rx && now - s->ack.last_data_rx < s->ack.ato)
        s->ack.pingpong = 1;
    s->snd.more = (uint8_t)more;
    s->snd.push_write = (uint8_t)partial; /* Linux: TCP_NAGLE_PUSH, past TCP_CORK and Nagle */
    tcp_write_xmit(s, TCP_XMIT_SEND, now); /* auto-corking decides about this call's tail */
    s->snd.push_write = 0;
    /* MSG_MORE holds the tail for this call only (Linux: the push with TCP_NAGLE_CORK); a later ACK or send
     * may release it, subject to Nagle, and a timer does if nothing else will (output.c, tcp_cork_arm). */
    s->snd.more = 0;
    finish_call(net, now);
    return (int64_t)n;
}

void tcp_check_writable(brisk_sock *c)
{
    /* The edge of brisk_sock_poll's writable level (ready.c), as Linux wakes a writer (sk_stream_write_space)
     * only when tcp_poll would say EPOLLOUT: free space at least half of what is queued and, with a low-water
     * mark, fewer than half of it unsent (tcp_stream_memory_free with wake = 1). Hysteresis both: a writer
     * is woken with room for a worthwhile write rather than for every segment that leaves. */
    if (!c->snd.was_full || !(brisk_sock_poll(c) & BRISK_POLL_OUT))
        return;
    c->snd.was_full = 0;
    tcp_raise(c, BRISK_EV_WRITABLE);
}

/* What a read returns with nothing to read. */
static int64_t rcv_empty(const brisk_sock *s)
{
    if (s->rcv.fin)
        return 0;
    if (s->error)
        return s->error;
    if (s->state == BRISK_TCP_CLOSED || s->state == BRISK_TCP_LISTEN)
        return BRISK_ERR_NOTCONN;
    return BRISK_ERR_AGAIN;
}

/* n bytes left the receive stream for the application: free them, and advertise the window if reading made
 * that worth a segment (rwin.c: RFC 9293's receiver SWS avoidance, or Linux's tcp_cleanup_rbuf). */
static void rcv_consumed(brisk_sock *s, size_t n, uint64_t now)
{
    struct brisk_net *net = s->net;
    brisk_sbuf_consume(&tcp_of(net)->chunks, &s->rcv.buf, n);
    tcp_rcv_drain_ooo(s); /* data held back only for lack of buffer memory */
    if (tcp_rwin_read(s, (uint32_t)n, now))
        tcp_send_ack(s, now);
    finish_call(net, now);
}

int64_t brisk_recv(brisk_sock *s, void *buf, size_t len, uint64_t now)
{
    if (!s || (!buf && len))
        return BRISK_ERR_INVAL;
    struct brisk_net *net = s->net;
    now = brisk_net_clock(net, now);
    if (s->rcv.buf.len == 0)
        return rcv_empty(s);
    size_t n = brisk_sbuf_copyout(&s->rcv.buf, 0, buf, len);
    rcv_consumed(s, n, now);
    return (int64_t)n;
}

int64_t brisk_recv_peek(brisk_sock *s, size_t off, const uint8_t **data)
{
    if (!s || !data)
        return BRISK_ERR_INVAL;
    size_t n = brisk_sbuf_span(&s->rcv.buf, off, data);
    return n ? (int64_t)n : rcv_empty(s);
}

int64_t brisk_recv_consume(brisk_sock *s, size_t n, uint64_t now)
{
    if (!s || n > s->rcv.buf.len)
        return BRISK_ERR_INVAL;
    now = brisk_net_clock(s->net, now);
    rcv_consumed(s, n, now);
    return (int64_t)n;
}

int brisk_shutdown_write(brisk_sock *s, uint64_t now)
{
    if (!s)
        return BRISK_ERR_INVAL;
    now = brisk_net_clock(s->net, now);
    if (s->snd.fin_queued)
        return BRISK_OK;
    if (s->state == BRISK_TCP_ESTABLISHED)
        tcp_set_state(s, BRISK_TCP_FIN_WAIT_1, now);
    else if (s->state == BRISK_TCP_CLOSE_WAIT)
        tcp_set_state(s, BRISK_TCP_LAST_ACK, now);
    else
        return BRISK_ERR_NOTCONN;
    s->snd.fin_queued = 1;
    s->snd.push_mode = TCP_PUSH_FIN; /* Linux's tcp_send_fin pushes with Nagle off */
    tcp_write_xmit(s, TCP_XMIT_CALL, now);
    s->snd.push_mode = 0;
    finish_call(s->net, now);
    return BRISK_OK;
}

/* A closed listener's children go with it: the established ones awaiting accept() with a RST, as Linux's
 * inet_csk_listen_stop resets them (tcp_disconnect); the half-open ones silently, as Linux forgets its
 * request sockets (the peer's ACK then finds no listener and gets a RST, tests/conformance/handshake/
 * listen-close-half-open.pkt: brisk used to reset them at once). */
static void abort_children(brisk_sock *l, uint64_t now)
{
    struct brisk_tcp *t = tcp_of(l->net);
    for (uint32_t i = 0; i < t->nconns_buckets; i++) {
        brisk_sock *c = t->conns[i];
        while (c) {
            brisk_sock *next = c->hnext;
            if (c->listener == l) {
                if (c->state != BRISK_TCP_SYN_RECEIVED)
                    tcp_send_rst(c, now);
                tcp_set_state(c, BRISK_TCP_CLOSED, now);
                tcp_conn_done(c, now); /* detaches from l and frees */
            }
            c = next;
        }
    }
}

int brisk_abort(brisk_sock *s, uint64_t now)
{
    if (!s)
        return BRISK_ERR_INVAL;
    struct brisk_net *net = s->net;
    now = brisk_net_clock(net, now);
    s->orphan = 1;
    s->fn = NULL;
    if (s->state == BRISK_TCP_LISTEN) {
        abort_children(s, now);
        tcp_conn_hash_del(s);
        tcp_conn_free(s);
        finish_call(net, now);
        return BRISK_OK;
    }
    if (s->state != BRISK_TCP_CLOSED && s->state != BRISK_TCP_SYN_SENT && s->state != BRISK_TCP_TIME_WAIT)
        tcp_send_rst(s, now);
    tcp_set_state(s, BRISK_TCP_CLOSED, now);
    tcp_conn_done(s, now);
    finish_call(net, now);
    return BRISK_OK;
}

/* LINGER 0 resets the peer where it holds the connection open (Linux tcp_disconnect, tcp_need_reset): also in
 * CLOSING and LAST-ACK if our FIN never went out, but not once it did — the peer has closed too. */
static int linger0_resets(const brisk_sock *s)
{
    switch (s->state) {
    case BRISK_TCP_ESTABLISHED:
    case BRISK_TCP_CLOSE_WAIT:
    case BRISK_TCP_FIN_WAIT_1:
    case BRISK_TCP_FIN_WAIT_2:
        return 1;
    case BRISK_TCP_CLOSING:
    case BRISK_TCP_LAST_ACK:
        return s->snd.max != tcp_data_end(s) + 1;
    default:
        return 0;
    }
}

/* The close that discards the connection: a RST if `rst`, then CLOSED and freed. */
static int close_discard(brisk_sock *s, int rst, uint64_t now)
{
    struct brisk_net *net = s->net;
    net->c.TCPAbortOnClose++;
    s->orphan = 1;
    s->fn = NULL;
    if (rst)
        tcp_send_rst(s, now);
    tcp_set_state(s, BRISK_TCP_CLOSED, now);
    tcp_conn_done(s, now);
    finish_call(net, now);
    return BRISK_OK;
}

static int in_closing(int state)
{
    return state == BRISK_TCP_FIN_WAIT_1 || state == BRISK_TCP_CLOSING || state == BRISK_TCP_LAST_ACK;
}

/* In Linux's order (__tcp_close): unread data, then LINGER 0, then the FIN, then the linger wait. */
int brisk_close(brisk_sock *s, uint64_t now)
{
    if (!s)
        return BRISK_ERR_INVAL;
    struct brisk_net *net = s->net;
    now = brisk_net_clock(net, now);
    if (s->state == BRISK_TCP_LISTEN || s->state == BRISK_TCP_CLOSED || s->state == BRISK_TCP_SYN_SENT)
        return brisk_abort(s, now);
    /* Data the application will never read is lost: a RST tells the peer so (RFC 2525 §2.17, RFC 1122
     * §4.2.2.13), in any state — but TIME-WAIT, where Linux's socket is closed already (tcp_time_wait). */
    if (s->rcv.buf.len > 0 && s->state != BRISK_TCP_TIME_WAIT)
        return close_discard(s, 1, now);
    if (s->sox.linger_on && s->sox.linger == 0 && !s->sox.lingering && s->state != BRISK_TCP_TIME_WAIT)
        return close_discard(s, linger0_resets(s), now);
    int linger = s->sox.linger_on && s->sox.linger > 0 && !s->sox.lingering;
    if (!linger) {
        s->orphan = 1;
        s->fn = NULL;
    }
    if (s->state == BRISK_TCP_ESTABLISHED || s->state == BRISK_TCP_CLOSE_WAIT)
        brisk_shutdown_write(s, now); /* the FIN after the queued data */
    if (linger && in_closing(s->state)) {
        /* Linux's close() would sleep here (sk_stream_wait_close) until the state leaves FIN-WAIT-1, CLOSING
         * and LAST-ACK, or the linger time passes: the caller waits instead, and closes again. */
        s->sox.lingering = 1;
        finish_call(net, now);
        return BRISK_ERR_INPROGRESS;
    }
    s->orphan = 1;
    s->fn = NULL;
    /* An orphan in FIN-WAIT-2 waits tcp_fin_timeout for the peer's FIN; the timer replaces a keepalive (the
     * slot's other tenant in FIN-WAIT-2), as Linux's orphan leaves for its timewait socket. */
    if (s->state == BRISK_TCP_FIN_WAIT_2 && s->timer.misc_kind != TCP_MISC_FINWAIT2)
        tcp_arm_misc(s, TCP_MISC_FINWAIT2, now + net->s.tcp_fin_timeout_ns);
    if (s->state == BRISK_TCP_TIME_WAIT)
        tcp_tw_settle(s, now); /* the rest of the wait as a record (timewait.c) */
    finish_call(net, now);
    return BRISK_OK;
}

int brisk_setsockopt(brisk_sock *s, enum brisk_sockopt opt, uint64_t v, uint64_t now)
{
    if (!s)
        return BRISK_ERR_INVAL;
    now = brisk_net_clock(s->net, now);
    switch (opt) {
    case BRISK_SO_NODELAY:
        s->snd.nodelay = v != 0;
        if (v) {
            /* Linux (__tcp_sock_set_nodelay): TCP_NAGLE_OFF | TCP_NAGLE_PUSH, then a push — past TCP_CORK
             * too, until the next write starts a new piece (tcp_skb_entail clears TCP_NAGLE_PUSH). */
            s->snd.push_once = 1;
            tcp_write_xmit(s, TCP_XMIT_CALL, now);
        }
        break;
    case BRISK_SO_CORK:
        s->snd.cork = v != 0;
        if (!v) { /* uncork pushes at once, subject to Nagle (Linux: __tcp_sock_set_cork) */
            s->snd.more = 0;
            if (s->snd.nodelay)
                s->snd.push_once = 1;
            tcp_timer_cancel(s, &s->timer.cork);
            tcp_write_xmit(s, TCP_XMIT_CALL, now);
        }
        break;
    case BRISK_SO_SNDBUF:
        if (v < 4096 || v > (1u << 30))
            return BRISK_ERR_RANGE;
        s->snd.sndbuf = (uint32_t)v;
        break;
    case BRISK_SO_RCVBUF:
        if (tcp_rwin_linux(s)) {
            s->rcv.rcvbuf = tcp_rwin_rcvbuf_opt(s, v); /* Linux's SO_RCVBUF: doubled, capped (rwin.c) */
            break;
        }
        if (v < 4096 || v > (1u << 30))
            return BRISK_ERR_RANGE;
        s->rcv.rcvbuf = (uint32_t)v;
        break;
    case BRISK_SO_NOTSENT_LOWAT:
        if (v > UINT32_MAX)
            return BRISK_ERR_RANGE;
        s->snd.lowat = (uint32_t)v;
        tcp_check_writable(s); /* a higher mark may make room at once (Linux calls sk_write_space) */
        break;
    case BRISK_SO_KEEPALIVE:
        s->so.keepalive = v != 0;
        if (v)
            tcp_keepalive_reset(s, now);
        break;
    case BRISK_SO_KEEPIDLE:
        if (v < BRISK_NSEC_PER_SEC)
            return BRISK_ERR_RANGE;
        s->so.keepidle = v;
        /* Already idling towards the old value: aim at the new one now (Linux re-arms too), else the first
         * probe would wait for the old idle time, 2 hours by default. */
        if (s->so.keepalive && s->timer.misc_kind == TCP_MISC_KEEPALIVE && s->timer.probes == 0)
            tcp_arm_misc(s, TCP_MISC_KEEPALIVE, s->timer.last_rx + v > now ? s->timer.last_rx + v : now);
        break;
    case BRISK_SO_KEEPINTVL:
        if (v < BRISK_NSEC_PER_SEC)
            return BRISK_ERR_RANGE;
        s->so.keepintvl = v;
        break;
    case BRISK_SO_KEEPCNT:
        if (v < 1 || v > 127)
            return BRISK_ERR_RANGE;
        s->so.keepcnt = (uint32_t)v;
        break;
    case BRISK_SO_QUICKACK:
        if (v) {
            s->ack.pingpong = 0;
            s->ack.quick = 16;
            if (s->ack.pending)
                tcp_send_ack(s, now);
        }
        break;
    case BRISK_SO_MAXSEG:
        if (v && (v < 64 || v > 65535))
            return BRISK_ERR_RANGE;
        s->opt.mss_clamp = (uint32_t)v;
        break;
    case BRISK_SO_LINGER0:
        s->sox.linger_on = v != 0;
        s->sox.linger = 0;
        break;
    case BRISK_SO_LINGER:
        s->sox.linger_on = v != BRISK_TIME_NONE;
        s->sox.linger = v != BRISK_TIME_NONE ? v : 0;
        break;
    case BRISK_SO_USER_TIMEOUT:
        /* Linux takes an int of ms (tcp_sock_set_user_timeout): the same bound here. Nothing is re-armed:
         * the next timeout applies it, as in Linux. */
        if (v > (uint64_t)INT32_MAX * BRISK_NSEC_PER_MSEC)
            return BRISK_ERR_RANGE;
        s->sox.user_timeout = v;
        break;
    case BRISK_SO_TOS:
        if (v > 255)
            return BRISK_ERR_RANGE;
        /* The ECN field belongs to TCP (Linux __ip_sock_set_tos masks INET_ECN_MASK on stream sockets);
         * brisk negotiates no ECN, so it stays 0. Read per segment from the connection's first line. */
        s->tos = (uint8_t)(v & 0xfcu);
        break;
    case BRISK_SO_V6ONLY:
        if (v > 1)
            return BRISK_ERR_RANGE;
        if (s->bound || s->state != BRISK_TCP_CLOSED)
            return BRISK_ERR_INVAL; /* as Linux: only before the socket has a port */
        s->sox.v6only = (uint8_t)v;
        break;
    case BRISK_SO_INQ: /* read only */
    default:
        return BRISK_ERR_INVAL;
    }
    finish_call(s->net, now);
    return BRISK_OK;
}

/* What a read returns now (Linux tcp_inq): the in-order bytes not yet read — the receive stream holds no FIN
 * byte, so there is none to subtract — and nothing while the handshake is in progress. */
static uint64_t sock_inq(const brisk_sock *s)
{
    if (s->state == BRISK_TCP_SYN_SENT || s->state == BRISK_TCP_SYN_RECEIVED || s->state == BRISK_TCP_LISTEN)
        return 0;
    return s->rcv.buf.len;
}

int brisk_getsockopt(const brisk_sock *s, enum brisk_sockopt opt, uint64_t *v)
{
    if (!s || !v)
        return BRISK_ERR_INVAL;
    switch (opt) {
    case BRISK_SO_NODELAY:
        *v = s->snd.nodelay;
        return BRISK_OK;
    case BRISK_SO_CORK:
        *v = s->snd.cork;
        return BRISK_OK;
    case BRISK_SO_SNDBUF:
        *v = s->snd.sndbuf;
        return BRISK_OK;
    case BRISK_SO_RCVBUF:
        *v = s->rcv.rcvbuf;
        return BRISK_OK;
    case BRISK_SO_NOTSENT_LOWAT:
        *v = s->snd.lowat;
        return BRISK_OK;
    case BRISK_SO_KEEPALIVE:
        *v = s->so.keepalive;
        return BRISK_OK;
    case BRISK_SO_KEEPIDLE:
        *v = s->so.keepidle;
        return BRISK_OK;
    case BRISK_SO_KEEPINTVL:
        *v = s->so.keepintvl;
        return BRISK_OK;
    case BRISK_SO_KEEPCNT:
        *v = s->so.keepcnt;
        return BRISK_OK;
    case BRISK_SO_QUICKACK:
        *v = !s->ack.pingpong;
        return BRISK_OK;
    case BRISK_SO_MAXSEG:
        *v = s->snd.mss ? s->snd.mss : s->opt.mss_clamp;
        return BRISK_OK;
    case BRISK_SO_LINGER0:
        *v = s->sox.linger_on && s->sox.linger == 0;
        return BRISK_OK;
    case BRISK_SO_LINGER:
        *v = s->sox.linger_on ? s->sox.linger : BRISK_TIME_NONE;
        return BRISK_OK;
    case BRISK_SO_USER_TIMEOUT:
        *v = s->sox.user_timeout;
        return BRISK_OK;
    case BRISK_SO_TOS:
        *v = s->tos;
        return BRISK_OK;
    case BRISK_SO_V6ONLY:
        *v = s->sox.v6only;
        return BRISK_OK;
    case BRISK_SO_INQ:
        if (s->state == BRISK_TCP_LISTEN)
            return BRISK_ERR_INVAL; /* as Linux's SIOCINQ on a listener */
        *v = sock_inq(s);
        return BRISK_OK;
    }
    return BRISK_ERR_INVAL;
}

int brisk_sock_error(const brisk_sock *s)
{
    return s ? s->error : BRISK_ERR_INVAL;
}

int brisk_conn_info(const brisk_sock *s, struct brisk_conn_info *o)
{
    if (!s || !o)
        return BRISK_ERR_INVAL;
    memset(o, 0, sizeof(*o));
    o->state = s->state;
    brisk_sock_tuple(s, &o->tuple);
    o->laddr = s->id.laddr.family == BRISK_AF_INET ? s->id.laddr.u.v4 : 0; /* IPv4's; tuple: both */
    o->raddr = s->id.raddr.family == BRISK_AF_INET ? s->id.raddr.u.v4 : 0;
    o->lport = s->id.lport;
    o->rport = s->id.rport;
    o->srtt_ns = brisk_rtt_srtt(&s->rtt);
    o->rttvar_ns = brisk_rtt_rttvar(&s->rtt);
    o->rto_ns = brisk_rtt_rto(&s->rtt);
    o->min_rtt_ns = brisk_rtt_min(&s->rtt);
    o->mss = s->snd.mss;
    o->cwnd = s->cc.cwnd;
    o->ssthresh = s->cc.ssthresh;
    o->snd_wnd = s->snd.wnd;
    o->rcv_wnd = brisk_seq_gt(s->rcv.adv, s->rcv.nxt) ? s->rcv.adv - s->rcv.nxt : 0;
    if (tcp_rwin_linux(s))
        o->rcv_wnd = s->rw.wnd; /* Linux's tcpi_rcv_wnd: the window last advertised */
    o->rcv_ssthresh = tcp_rwin_ssthresh(s);
    o->rcv_space = s->rw.rcvq.space;
    o->rcv_rtt_us = s->rw.rtt.us >> 3;
    o->rcv_mss = tcp_rwin_linux(s) ? s->rw.rcv_mss : s->snd.mss;
    o->bytes_sent = s->stat.bytes_sent;
    o->bytes_acked = s->stat.bytes_acked;
    o->bytes_received = s->stat.bytes_received;
    o->inq = sock_inq(s);
    o->segs_out = s->stat.segs_out;
    o->segs_in = s->stat.segs_in;
    o->retransmits = s->stat.retransmits;
    o->rto_count = s->stat.rto_count;
    o->fast_retransmits = s->stat.fast_retransmits;
    o->tlp_probes = s->stat.tlp_probes;
    o->tlp_recoveries = s->stat.tlp_recoveries;
    o->undos = s->stat.undos;
    o->wheel_ops = s->stat.wheel_ops;
    o->unacked = tcp_flight(s);
    o->notsent = tcp_notsent(s);
    o->ts_ok = s->opt.ts;
    o->sack_ok = s->opt.sack;
    o->ws_ok = s->opt.ws;
    o->snd_wscale = s->snd.wscale;
    o->rcv_wscale = s->rcv.wscale;
    o->wmem = s->tsq.wmem;
    o->tsq_limit = tcp_tsq_limit(s);
    o->pacing_rate = tcp_pacing_rate(s);
    o->hold = s->hold.reason;
    o->hold_events[BRISK_HOLD_NONE] = o->hold_ns[BRISK_HOLD_NONE] = 0; /* not counted */
    for (int i = BRISK_HOLD_NONE + 1; i < BRISK_HOLD_COUNT; i++) {
        o->hold_events[i] = s->hold.events[i - 1];
        o->hold_ns[i] = s->hold.ns[i - 1];
    }
    if (s->hold.reason != BRISK_HOLD_NONE && s->net->now > s->hold.since)
        o->hold_ns[s->hold.reason] += s->net->now - s->hold.since; /* the hold in force, so far */
    if (s->cc.in_loss)
        o->ca_state = BRISK_CA_LOSS;
    else if (s->cc.in_recovery)
        o->ca_state = BRISK_CA_RECOVERY;
    else if (s->dupacks > 0 || s->sb.sacked > 0)
        o->ca_state = BRISK_CA_DISORDER;
    else
        o->ca_state = BRISK_CA_OPEN;
    o->sacked_bytes = s->sb.sacked;
    o->lost_bytes = s->sb.lost;
    o->retrans_bytes = s->sb.retrans;
    o->backoff = s->timer.retries;
    o->keepalive_probes = s->timer.probes;
    o->ato_ns = s->ack.ato;
    o->last_data_sent_ns = s->timer.last_tx;
    o->last_data_recv_ns = s->ack.last_data_rx;
    o->last_recv_ns = s->timer.last_rx;
    o->rcv_queued = s->rcv.buf.len;
    o->snd_queued = s->snd.buf.len;
    o->advmss = s->state == BRISK_TCP_LISTEN ? 0 : tcp_local_mss(s);
    if (tcp_rwin_linux(s) && s->rw.advmss)
        o->advmss = s->rw.advmss; /* Linux's tp->advmss: less the timestamp option once it is in use */
    o->peer_mss = s->opt.peer_mss;
    if (s->net->s.tcp_loss_timers == BRISK_COMPAT_LINUX)
        o->reordering = s->stat.reordering > 3 ? (uint32_t)s->stat.reordering : 3;
    return BRISK_OK;
}
