/*
 * conn.c — TCP connections: the tables that find them, their lifetime, their state changes, and the socket
 * events they raise.
 *
 * Lookup. Connections sit in a hash of the 4-tuple, listeners in a hash of the local port; both are keyed
 * with SipHash under a secret derived from the stack's seed, so a remote host cannot aim segments at one
 * chain. Input looks up the connection first and the listener second (RFC 9293 §3.10.7: the most specific
 * match).
 *
 * Lifetime. A socket is created by brisk_socket() or by a listener receiving a SYN. When the application
 * closes it, it becomes an orphan that the stack finishes (FIN exchange, TIME-WAIT) and frees when it reaches
 * CLOSED. A connection that fails (reset, timeout) keeps its struct until the application closes it, so the
 * application can read the error.
 *
 * Events. Input and timers never call the application directly: they record events on the socket and put it
 * on the stack's pending list; the stack's entry points deliver the list on their way out, when every
 * structure is consistent. A callback may therefore call any socket function, including close.
 */
#include <stdlib.h>
#include <string.h>

#include "tcp/tcp.h"

static const char *const state_names[] = {
    "CLOSED",     "LISTEN",     "SYN-SENT", "SYN-RECEIVED", "ESTABLISHED", "FIN-WAIT-1",
    "FIN-WAIT-2", "CLOSE-WAIT", "CLOSING",  "LAST-ACK",     "TIME-WAIT",
};

const char *brisk_tcp_state_name(int state)
{
    if (state < 0 || state > BRISK_TCP_TIME_WAIT)
        return "?";
    return state_names[state];
}

struct brisk_tcp *brisk_tcp_init(struct brisk_net *net, struct brisk_evq *evq)
{
    struct brisk_tcp *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->net = net;
    t->evq = evq;
    t->nconns_buckets = 4096;
    t->nlisten_buckets = 64;
    t->conns = calloc(t->nconns_buckets, sizeof(*t->conns));
    t->listen = calloc(t->nlisten_buckets, sizeof(*t->listen));
    if (!t->conns || !t->listen || tcp_tw_init(t) != BRISK_OK) {
        free(t->tw.buckets);
        free(t->conns);
        free(t->listen);
        free(t);
        return NULL;
    }
    for (int i = 0; i < 16; i += 8) {
        uint64_t k = brisk_rand_u64(&net->rand);
        memcpy(t->key + i, &k, 8);
    }
    t->next_port = (uint16_t)(49152 + brisk_rand_below(&net->rand, 16384));
    brisk_chunkpool_init(&t->chunks, net->s.tcp_mem_bytes);
    net->pool.owned_free = brisk_tcp_pkt_released;
    net->pool.owned_ctx = t;
    return t;
}

static void free_chain(brisk_sock *c)
{
    while (c) {
        brisk_sock *n = c->hnext;
        c->in_table = 0;
        tcp_conn_free(c);
        c = n;
    }
}

void brisk_tcp_destroy(struct brisk_tcp *t)
{
    if (!t)
        return;
    struct brisk_net *net = t->net;
    /* Children waiting in listeners' queues are not in the listener hash; free them with their listener. */
    for (uint32_t i = 0; i < t->nlisten_buckets; i++) {
        for (brisk_sock *l = t->listen[i]; l; l = l->hnext) {
            while (l->lq.head) {
                brisk_sock *ch = l->lq.head;
                l->lq.head = ch->aq_next;
                ch->listener = NULL;
                if (!ch->in_table)
                    tcp_conn_free(ch);
            }
        }
    }
    /* Packets still in queues below TCP will be freed after us: stop them calling back. */
    net->pool.owned_free = NULL;
    while (t->zombies) {
        brisk_sock *z = t->zombies;
        t->zombies = z->hnext;
        free(z);
    }
    for (uint32_t i = 0; i < t->nconns_buckets; i++)
        free_chain(t->conns[i]);
    tcp_tw_destroy(t);
    for (uint32_t i = 0; i < t->nlisten_buckets; i++)
        free_chain(t->listen[i]);
    free(t->conns);
    free(t->listen);
    brisk_chunkpool_destroy(&t->chunks);
    free(t);
}

uint64_t tcp_tuple_hash(const struct brisk_tcp *t, const struct brisk_tuple *id)
{
    if (id->laddr.family != BRISK_AF_INET6) { /* a constant length: the compiler specialises the hash */
        uint8_t b[12];
        memcpy(b, &id->laddr.u.v4, 4);
        memcpy(b + 4, &id->raddr.u.v4, 4);
        memcpy(b + 8, &id->lport, 2);
        memcpy(b + 10, &id->rport, 2);
        return brisk_siphash24(t->key, b, sizeof(b));
    }
    uint8_t b[36];
    memcpy(b, id->laddr.u.v6, 16);
    memcpy(b + 16, id->raddr.u.v6, 16);
    memcpy(b + 32, &id->lport, 2);
    memcpy(b + 34, &id->rport, 2);
    return brisk_siphash24(t->key, b, sizeof(b));
}

static uint32_t hashport(const struct brisk_tcp *t, uint16_t port)
{
    return (uint32_t)brisk_siphash24(t->key, &port, sizeof(port));
}

brisk_sock *tcp_conn_alloc(struct brisk_net *net)
{
    /* On a cache-line boundary: struct brisk_sock groups its per-segment fields by 64-byte line (tcp.h),
     * which only holds if the lines of the struct are the lines of the machine. */
    size_t size = (sizeof(brisk_sock) + 63) & ~(size_t)63;
    brisk_sock *c = aligned_alloc(64, size);
    if (!c)
        return NULL;
    memset(c, 0, size);
    c->net = net;
    c->state = BRISK_TCP_CLOSED;
    c->ev.proto = BRISK_IP_PROTO_TCP;
    c->rtt_probe.at = BRISK_TIME_NONE;
    c->oow_ack_at = BRISK_TIME_NONE;
    brisk_sbuf_init(&c->snd.buf);
    brisk_sbuf_init(&c->rcv.buf);
    brisk_reass_init(&c->rcv.ooo);
    c->snd.sndbuf = net->s.tcp_sndbuf;
    c->rcv.rcvbuf = net->s.tcp_rcvbuf;
    c->so.keepidle = net->s.tcp_keepalive_time_ns;
    c->so.keepintvl = net->s.tcp_keepalive_intvl_ns;
    c->so.keepcnt = net->s.tcp_keepalive_probes;
    brisk_rtt_init(&c->rtt, net->s.tcp_rto_initial_ns, net->s.tcp_rto_min_ns, net->s.tcp_rto_max_ns);
    if (net->s.tcp_rtt_estimator == BRISK_COMPAT_LINUX)
        brisk_rtt_use_linux(&c->rtt);       /* the linux-* profiles (rtt.c) */
    c->cc_ops = brisk_cc_for_stack(&net->s); /* the tcp_congestion setting (cc_select.c) */
    c->ack.ato = net->s.tcp_delack_min_ns;
    tcp_timers_init(c);
    tcp_of(net)->nsocks++;
    return c;
}

void tcp_block(brisk_sock *c)
{
    if (c->blocked)
        return;
    c->blocked = 1;
    c->blocked_next = tcp_of(c->net)->blocked_head;
    tcp_of(c->net)->blocked_head = c;
}

static void blocked_unlink(brisk_sock *c)
{
    if (!c->blocked)
        return;
    brisk_sock **pp = &tcp_of(c->net)->blocked_head;
    while (*pp && *pp != c)
        pp = &(*pp)->blocked_next;
    if (*pp)
        *pp = c->blocked_next;
    c->blocked = 0;
}

void brisk_tcp_run_blocked(struct brisk_net *net, uint64_t now)
{
    struct brisk_tcp *t = tcp_of(net);
    brisk_sock *list = t->blocked_head;
    t->blocked_head = NULL;
    while (list) {
        brisk_sock *c = list;
        /* A device queue stopped again (a sender resumed before this one and took the room) means waiting
         * for the next wake: building the parked SYN, ACK or data only for xmit to refuse it would make every
         * wake cost O(parked connections). With one device all the rest wait for this one, so the list is put
         * back whole, after those parked again during this run, rather than walked. */
        int stopped = c->rt.dev && brisk_netdev_stopped(c->rt.dev);
        if (stopped && net->ndevs == 1) {
            brisk_sock **tail = &t->blocked_head;
            while (*tail)
                tail = &(*tail)->blocked_next;
            *tail = list;
            break;
        }
        list = c->blocked_next;
        c->blocked = 0;
        c->blocked_next = NULL;
        if (stopped) {
            tcp_block(c);
            continue;
        }
        if (c->snd.syn_refused) {
            c->snd.syn_refused = 0;
            if (c->state == BRISK_TCP_SYN_SENT || c->state == BRISK_TCP_SYN_RECEIVED) {
                tcp_send_syn(c, now); /* may park it again */
                continue;
            }
        }
        tcp_write_xmit(c, TCP_XMIT_RESUME, now); /* may park it again */
        if (c->ack.refused && !c->blocked) {
            c->ack.refused = 0;
            if (c->ack.pending)
                tcp_send_ack(c, now); /* an ACK the device refused (unless data carried one since) */
            if (c->state == BRISK_TCP_TIME_WAIT)
                tcp_tw_settle(c, now); /* it was the ACK of the peer's FIN (timewait.c) */
        }
    }
    if (t->tw.refused)
        tcp_tw_run_refused(net, now);
}

brisk_sock *tcp_child_new(brisk_sock *l, const struct brisk_tuple *id, const struct brisk_tcp_repr *seg)
{
    (void)seg;
    struct brisk_net *net = l->net;
    brisk_sock *c = tcp_conn_alloc(net);
    if (!c)
        return NULL;
    if (brisk_route_lookup(net, &id->raddr, &c->rt) != BRISK_OK) {
        tcp_conn_free(c);
        return NULL;
    }
    c->rt.src = id->laddr; /* from the address the SYN came to */
    c->id = *id;
    c->bound = 1;
    /* The listener's socket options, congestion control included (brisk_set_congestion on a listener applies
     * to what it accepts). */
    c->snd.sndbuf = l->snd.sndbuf;
    c->rcv.rcvbuf = l->rcv.rcvbuf;
    tcp_rwin_inherit(c, l); /* SO_RCVBUF's lock on autotuning */
    c->snd.nodelay = l->snd.nodelay;
    c->snd.cork = l->snd.cork;
    c->snd.lowat = l->snd.lowat;
    c->so = l->so;
    c->sox = l->sox; /* TCP_USER_TIMEOUT and SO_LINGER too (Linux's clone copies the listener's socket) */
    c->sox.lingering = 0;
    c->tos = l->tos; /* the SYN-ACK already carries it (Linux tcp_v4_send_synack: the listener's TOS) */
    c->opt.mss_clamp = l->opt.mss_clamp;
    c->cc_ops = l->cc_ops;
    return c;
}

void tcp_conn_free(brisk_sock *c)
{
    struct brisk_net *net = c->net;
    if (c->state == BRISK_TCP_TIME_WAIT)
        tcp_of(net)->tw_count--;
    tcp_timers_stop(c);
    if (c->in_table)
        tcp_conn_hash_del(c);
    brisk_evq_remove(tcp_of(c->net)->evq, &c->ev);
    blocked_unlink(c);
    tcp_ack_undefer(c);
    brisk_sbuf_clear(&tcp_of(net)->chunks, &c->snd.buf);
    brisk_sbuf_clear(&tcp_of(net)->chunks, &c->rcv.buf);
    brisk_reass_clear(&net->pool, &c->rcv.ooo);
    tcp_sb_free(c);
    tcp_rwin_free(c);
    if (c->tsq.pkts > 0 && net->pool.owned_free) {
        /* Packets of ours are still below TCP: the struct lives until the last is released (tsq.c). */
        c->tsq.zombie = 1;
        c->hnext = tcp_of(net)->zombies;
        tcp_of(net)->zombies = c;
        return;
    }
    tcp_of(net)->nsocks--;
    free(c);
}

/* The hash chain c belongs on: listeners by port, connections by 4-tuple. */
static brisk_sock **chain_of(const brisk_sock *c)
{
    struct brisk_tcp *t = tcp_of(c->net);
    if (c->state == BRISK_TCP_LISTEN)
        return &t->listen[hashport(t, c->id.lport) & (t->nlisten_buckets - 1)];
    uint64_t h = tcp_tuple_hash(t, &c->id);
    return &t->conns[h & (t->nconns_buckets - 1)];
}

int tcp_conn_hash_add(brisk_sock *c)
{
    brisk_sock **b = chain_of(c);
    c->hnext = *b;
    *b = c;
    c->in_table = 1;
    if (c->state != BRISK_TCP_LISTEN)
        tcp_of(c->net)->port_refs[c->id.lport % TCP_PORT_BUCKETS]++;
    return BRISK_OK;
}

void tcp_conn_hash_del(brisk_sock *c)
{
    brisk_sock **pp = chain_of(c);
    while (*pp && *pp != c)
        pp = &(*pp)->hnext;
    if (*pp) {
        *pp = c->hnext;
        if (c->state != BRISK_TCP_LISTEN)
            tcp_of(c->net)->port_refs[c->id.lport % TCP_PORT_BUCKETS]--;
    }
    c->hnext = NULL;
    c->in_table = 0;
    if (tcp_of(c->net)->last == c)
        tcp_of(c->net)->last = NULL;
}

static int has_tuple(const brisk_sock *c, const struct brisk_tuple *id)
{
    return c->id.lport == id->lport && c->id.rport == id->rport && brisk_addr_same_fast(&c->id.raddr, &id->raddr) &&
           brisk_addr_same_fast(&c->id.laddr, &id->laddr);
}

/* A bulk transfer brings segment after segment of one connection: the last connection found is checked
 * before the keyed hash is computed (a one-entry cache, like Linux's early demux of a socket's dst). */
brisk_sock *tcp_conn_lookup(struct brisk_net *net, const struct brisk_tuple *id)
{
    struct brisk_tcp *t = tcp_of(net);
    if (t->last && has_tuple(t->last, id))
        return t->last;
    brisk_sock *c = t->conns[tcp_tuple_hash(t, id) & (t->nconns_buckets - 1)];
    for (; c; c = c->hnext)
        if (has_tuple(c, id)) {
            t->last = c;
            return c;
        }
    return NULL;
}

/* How well listener l matches a segment to `to`: 3 its address itself, 2 its family's any address, 1 ::
 * for an IPv4 segment (not if l is IPv6-only), 0 not at all. */
static int listener_score(const brisk_sock *l, const struct brisk_addr *to)
{
    const struct brisk_addr *bound = &l->id.laddr;
    if (bound->family == to->family)
        return brisk_addr_equal(bound, to) ? 3 : brisk_addr_is_any(bound) ? 2 : 0;
    return bound->family == BRISK_AF_INET6 && brisk_addr_is_any(bound) && !l->sox.v6only ? 1 : 0;
}

brisk_sock *tcp_listener_lookup(struct brisk_net *net, const struct brisk_addr *laddr, uint16_t lport)
{
    struct brisk_tcp *t = tcp_of(net);
    brisk_sock *best = NULL;
    int best_score = 0;
    for (brisk_sock *c = t->listen[hashport(t, lport) & (t->nlisten_buckets - 1)]; c; c = c->hnext) {
        if (c->id.lport != lport)
            continue;
        int score = listener_score(c, laddr);
        if (score == 3)
            return c;
        if (score > best_score) {
            best = c;
            best_score = score;
        }
    }
    return best;
}

int tcp_laddr_overlap(const struct brisk_addr *a, int a_v6only, const struct brisk_addr *b, int b_v6only)
{
    if (a->family == BRISK_AF_UNSPEC || b->family == BRISK_AF_UNSPEC)
        return 1;
    if (a->family != b->family) /* :: covers IPv4 too, unless IPv6-only */
        return (a->family == BRISK_AF_INET6 && brisk_addr_is_any(a) && !a_v6only) ||
               (b->family == BRISK_AF_INET6 && brisk_addr_is_any(b) && !b_v6only);
    return brisk_addr_is_any(a) || brisk_addr_is_any(b) || brisk_addr_equal(a, b);
}

/* A local port is in use when a listener or a bound socket holds it on an overlapping address. Connections
 * made by connect() share ports only with distinct remote ends, which the 4-tuple hash already
 * distinguishes. */
int tcp_port_in_use(struct brisk_net *net, const struct brisk_addr *laddr, int v6only, uint16_t lport)
{
    struct brisk_tcp *t = tcp_of(net);
    for (brisk_sock *l = t->listen[hashport(t, lport) & (t->nlisten_buckets - 1)]; l; l = l->hnext)
        if (l->id.lport == lport && tcp_laddr_overlap(&l->id.laddr, l->sox.v6only, laddr, v6only))
            return 1;
    if (t->port_refs[lport % TCP_PORT_BUCKETS] == 0)
        return 0; /* no connection in the table has a port in this bucket */
    for (uint32_t i = 0; i < t->nconns_buckets; i++)
        for (brisk_sock *c = t->conns[i]; c; c = c->hnext)
            if (c->id.lport == lport && tcp_laddr_overlap(&c->id.laddr, c->sox.v6only, laddr, v6only))
                return 1;
    return tcp_tw_port_in_use(net, laddr, v6only, lport);
}

void tcp_set_state(brisk_sock *c, int state, uint64_t now)
{
    (void)now;
    /* TIME-WAIT buckets in use (tcp_max_tw_buckets, input.c) */
    if (c->state != BRISK_TCP_TIME_WAIT && state == BRISK_TCP_TIME_WAIT)
        tcp_of(c->net)->tw_count++;
    else if (c->state == BRISK_TCP_TIME_WAIT && state != BRISK_TCP_TIME_WAIT)
        tcp_of(c->net)->tw_count--;
    c->state = (uint8_t)state;
}

void tcp_raise(brisk_sock *c, unsigned events)
{
    if (c->orphan || !events)
        return;
    brisk_evq_raise(tcp_of(c->net)->evq, &c->ev, events);
}

void tcp_ev_queue(brisk_sock *c)
{
    brisk_evq_raise(tcp_of(c->net)->evq, &c->ev, 0);
}

void brisk_tcp_deliver(struct brisk_evq_node *n, uint64_t now)
{
    brisk_sock *c = (brisk_sock *)((char *)n - offsetof(brisk_sock, ev));
    if (!c->fn)
        return; /* kept in ev.pending until a callback is set (brisk_sock_set_callback) */
    unsigned ev = c->ev.pending;
    c->ev.pending = 0;
    if (ev && !c->orphan)
        c->fn(c->ctx, c, ev, now);
}

void tcp_conn_fail(brisk_sock *c, int err, uint64_t now)
{
    struct brisk_net *net = c->net;
    if (c->state == BRISK_TCP_SYN_SENT || c->state == BRISK_TCP_SYN_RECEIVED)
        net->c.TcpAttemptFails++;
    else if (c->state == BRISK_TCP_ESTABLISHED || c->state == BRISK_TCP_CLOSE_WAIT)
        if (err == BRISK_ERR_RESET)
            net->c.TcpEstabResets++;
    c->error = err;
    tcp_set_state(c, BRISK_TCP_CLOSED, now);
    tcp_raise(c, BRISK_EV_ERROR | BRISK_EV_CLOSED);
    tcp_conn_done(c, now);
}

/* A child that never reached the application: unlink it from its listener's queues. */
static void detach_child(brisk_sock *c)
{
    brisk_sock *l = c->listener;
    if (!l)
        return;
    c->listener = NULL;
    if (!c->in_aq) { /* still half-open: it counts against the SYN backlog */
        l->lq.syn_count--;
        return;
    }
    c->in_aq = 0;
    brisk_sock **pp = &l->lq.head, *prev = NULL;
    while (*pp && *pp != c) {
        prev = *pp;
        pp = &(*pp)->aq_next;
    }
    if (*pp) {
        *pp = c->aq_next;
        if (l->lq.tail == c)
            l->lq.tail = prev;
        l->lq.len--;
    }
}

void tcp_conn_done(brisk_sock *c, uint64_t now)
{
    (void)now;
    tcp_timers_stop(c);
    if (c->in_table)
        tcp_conn_hash_del(c);
    if (c->listener) {
        /* A half-open or unaccepted child dies with nobody to tell. */
        detach_child(c);
        c->orphan = 1;
    }
    if (c->orphan)
        tcp_conn_free(c);
}

uint32_t tcp_rcv_space(const brisk_sock *c)
{
    uint64_t used = c->rcv.buf.len + c->rcv.ooo.bytes;
    return used >= c->rcv.rcvbuf ? 0 : (uint32_t)(c->rcv.rcvbuf - used);
}

int tcp_foreach_socket(struct brisk_tcp *t, int (*fn)(void *ctx, brisk_sock *s), void *ctx)
{
    for (uint32_t i = 0; i < t->nlisten_buckets; i++)
        for (brisk_sock *l = t->listen[i]; l; l = l->hnext) {
            int rc = fn(ctx, l);
            if (rc)
                return rc;
            for (brisk_sock *ch = l->lq.head; ch; ch = ch->aq_next)
                if (!ch->in_table && (rc = fn(ctx, ch)) != 0)
                    return rc;
        }
    for (uint32_t i = 0; i < t->nconns_buckets; i++)
        for (brisk_sock *c = t->conns[i]; c; c = c->hnext) {
            int rc = fn(ctx, c);
            if (rc)
                return rc;
        }
    return BRISK_OK;
}

uint8_t tcp_wscale_for(uint32_t rcvbuf)
{
    uint8_t ws = 0;
    while (ws < TCP_MAX_WSCALE && (rcvbuf >> ws) > TCP_MAX_WIN)
        ws++;
    return ws;
}

void tcp_open(brisk_sock *c, int state, uint64_t now)
{
    struct brisk_net *net = c->net;
    c->opt.ts_offset = brisk_rand_u32(&net->rand);
    c->snd.iss = tcp_isn(net, &c->id, now);
    c->snd.una = c->snd.nxt = c->snd.max = c->snd.iss;
    tcp_set_state(c, state, now);
    tcp_conn_hash_add(c);
    c->rtt_probe.at = now; /* the handshake's RTT sample, unless the SYN is retransmitted */
    tcp_send_syn(c, now);
    tcp_rearm_rto(c, now);
}
