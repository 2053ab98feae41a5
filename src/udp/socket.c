/*
 * socket.c — UDP sockets: the calls of brisk.h's UDP section but send and receive, the per-stack port table
 * and event delivery (RFC 768; RFC 8085 §3 and §5 for the API's choices; Linux's udp.c and ipv6/udp.c for
 * its behaviour).
 *
 * Families. A socket bound to 0.0.0.0 (or BRISK_AF_UNSPEC, as TCP's bind takes it) is IPv4's only; one
 * bound to :: takes and sends both, as a Linux IPv6 socket without IPV6_V6ONLY; one bound to an address
 * only that address's family. A socket that never bound gets :: at its first connect or send (0.0.0.0 with
 * the ipv6 setting off): Linux chooses by the socket's family, and a brisk socket has none, so it stays
 * open to both. An IPv4 sender reaches the application as an IPv4 address, never v4-mapped.
 *
 * The port table. Bound sockets hang on chains by local port. Two sockets may share a port only on
 * addresses that do not overlap: the same address, either of them its family's any address, or either of
 * them :: (which covers IPv4 too) is BRISK_ERR_ADDRINUSE — brisk has no SO_REUSEADDR / SO_REUSEPORT for UDP.
 * So 0.0.0.0 and a specific IPv6 address share a port, 0.0.0.0 and :: do not (Linux's rules without
 * IPV6_V6ONLY). A datagram goes to the socket that matches it best, Linux's compute_score reduced to what
 * these rules leave: a connected socket only takes its peer's datagrams and beats the rest; a socket bound
 * to the destination address beats one bound to any; and of equal ones, a socket of the datagram's family
 * beats ::, as Linux's PF_INET socket beats a PF_INET6 one for an IPv4 datagram.
 *
 * Ephemeral ports. An unbound socket gets one at bind with port 0, its first connect or its first send
 * (Linux's autobind), drawn from Linux's ip_local_port_range, 32768..60999, shared by both families: a
 * random start from the stack's PRNG (so the seed fixes it: RFC 6056 §3.3.1's simple randomisation) and the
 * first port after it free on the address being bound.
 *
 * Errors. A connected socket keeps the error an ICMP or ICMPv6 report gave it (input.c) until it is read,
 * once: by brisk_udp_error, the next recvfrom or the next send, as Linux's sock_error() does.
 */
#include <stdlib.h>
#include <string.h>

#include "core/addr.h"
#include "net/iproute.h"
#include "net/netdev.h"
#include "udp/udp.h"

struct brisk_udp_table *brisk_udp_init(struct brisk_net *net, struct brisk_evq *evq)
{
    struct brisk_udp_table *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->net = net;
    t->evq = evq;
    return t;
}

static void unbind(brisk_udp *u)
{
    if (!u->bound)
        return;
    brisk_udp **pp = &udp_of(u->net)->ports[u->lport % BRISK_UDP_PORT_BUCKETS];
    while (*pp != u)
        pp = &(*pp)->hnext;
    *pp = u->hnext;
    u->hnext = NULL;
    u->bound = 0;
}

static void sock_free(brisk_udp *u)
{
    struct brisk_udp_table *t = udp_of(u->net);
    udp_rq_purge(u);
    unbind(u);
    brisk_evq_remove(t->evq, &u->ev);
    if (u->send_refused)
        t->refused--;
    if (u->aprev)
        u->aprev->anext = u->anext;
    else
        t->all = u->anext;
    if (u->anext)
        u->anext->aprev = u->aprev;
    t->nsocks--;
    free(u);
}

void brisk_udp_destroy(struct brisk_udp_table *t)
{
    if (!t)
        return;
    /* Sockets the application never closed go with the stack, their queued packets back to the pool before
     * it is destroyed. */
    while (t->all)
        sock_free(t->all);
    free(t);
}

brisk_udp *udp_socket(struct brisk_udp_table *t, int *err)
{
    brisk_udp *u = calloc(1, sizeof(*u));
    if (!u) {
        *err = BRISK_ERR_NOMEM;
        return NULL;
    }
    u->net = t->net;
    u->ev.proto = BRISK_IP_PROTO_UDP;
    u->rcvbuf = t->net->s.udp_rcvbuf;
    u->anext = t->all;
    if (t->all)
        t->all->aprev = u;
    t->all = u;
    t->nsocks++;
    *err = BRISK_OK;
    return u;
}

/* An any address (0.0.0.0 or ::) of an address the stack built (core/addr.h). */
static inline int is_any(const struct brisk_addr *a)
{
    static const uint8_t zero[16];
    return a->family == BRISK_AF_INET ? a->u.v4 == 0 : memcmp(a->u.v6, zero, 16) == 0;
}

static inline int is_any6(const struct brisk_addr *a)
{
    return a->family == BRISK_AF_INET6 && is_any(a);
}

static int overlaps(const struct brisk_addr *a, const struct brisk_addr *b)
{
    if (a->family != b->family) /* :: covers IPv4 too */
        return is_any6(a) || is_any6(b);
    return is_any(a) || is_any(b) || brisk_addr_same_fast(a, b);
}

static int port_taken(const struct brisk_udp_table *t, const struct brisk_addr *laddr, uint16_t port)
{
    for (const brisk_udp *o = t->ports[port % BRISK_UDP_PORT_BUCKETS]; o; o = o->hnext)
        if (o->lport == port && overlaps(&o->laddr, laddr))
            return 1;
    return 0;
}

int udp_bind_port(brisk_udp *u, const struct brisk_addr *laddr, uint16_t port)
{
    struct brisk_udp_table *t = udp_of(u->net);
    if (port == 0) {
        uint32_t span = BRISK_UDP_EPH_HI - BRISK_UDP_EPH_LO + 1;
        uint32_t start = (uint32_t)brisk_rand_below(&u->net->rand, span);
        for (uint32_t i = 0; i < span && port == 0; i++) {
            uint16_t p = (uint16_t)(BRISK_UDP_EPH_LO + (start + i) % span);
            if (!port_taken(t, laddr, p))
                port = p;
        }
        if (port == 0)
            return BRISK_ERR_ADDRNOTAVAIL;
    } else if (port_taken(t, laddr, port)) {
        return BRISK_ERR_ADDRINUSE;
    }
    u->laddr = *laddr;
    u->lport = port;
    u->bound = 1;
    brisk_udp **head = &t->ports[port % BRISK_UDP_PORT_BUCKETS];
    u->hnext = *head;
    *head = u;
    return BRISK_OK;
}

int udp_autobind(brisk_udp *u)
{
    static const uint8_t any6[16];
    struct brisk_addr any = u->net->s.ipv6 ? brisk_addr6(any6) : brisk_addr4(0);
    return udp_bind_port(u, &any, 0);
}

/* How well a socket bound to `l` takes a datagram to `dst`: 2 its own address, 1 its family's any address,
 * 0 :: for an IPv4 datagram, -1 not at all. */
static inline int laddr_score(const struct brisk_addr *l, const struct brisk_addr *dst)
{
    if (l->family != dst->family)
        return is_any6(l) ? 0 : -1;
    if (is_any(l))
        return 1;
    return brisk_addr_same_fast(l, dst) ? 2 : -1;
}

brisk_udp *udp_lookup(struct brisk_udp_table *t, const struct brisk_addr *dst, uint16_t dport,
                      const struct brisk_addr *src, uint16_t sport)
{
    brisk_udp *best = NULL;
    int best_score = -1;
    for (brisk_udp *u = t->ports[dport % BRISK_UDP_PORT_BUCKETS]; u; u = u->hnext) {
        if (u->lport != dport)
            continue;
        int score = laddr_score(&u->laddr, dst);
        if (score < 0)
            continue;
        if (u->rport) {
            if (u->rport != sport || !brisk_addr_same_fast(&u->raddr, src))
                continue;
            score += 4;
        }
        if (score > best_score) {
            best = u;
            best_score = score;
        }
    }
    return best;
}

int udp_addr(const struct brisk_net *net, const struct brisk_addr *a, int any_ok, struct brisk_addr *out)
{
    switch (a->family) {
    case BRISK_AF_UNSPEC:
        *out = brisk_addr4(0);
        break;
    case BRISK_AF_INET:
        *out = brisk_addr4(a->u.v4);
        break;
    case BRISK_AF_INET6:
        if (!net->s.ipv6)
            return BRISK_ERR_AFNOSUPPORT;
        *out = brisk_addr6(a->u.v6);
        break;
    default:
        return BRISK_ERR_INVAL;
    }
    return any_ok || !is_any(out) ? BRISK_OK : BRISK_ERR_INVAL;
}

int udp_family_ok(const brisk_udp *u, const struct brisk_addr *dst)
{
    if (!u->bound || u->laddr.family == dst->family || is_any6(&u->laddr))
        return BRISK_OK;
    return u->laddr.family == BRISK_AF_INET ? BRISK_ERR_AFNOSUPPORT : BRISK_ERR_INVAL;
}

/* Is a one of the stack's addresses? */
static int is_local(struct brisk_net *net, const struct brisk_addr *a)
{
    if (a->family == BRISK_AF_INET)
        return brisk_netdev_is_local(net, a->u.v4);
    for (uint32_t i = 0; i < net->ndevs; i++)
        if (brisk_netdev_ip6_is_mine(&net->devs[i], a->u.v6))
            return 1;
    return 0;
}

static void finish_call(brisk_udp *u)
{
    brisk_evq_deliver(udp_of(u->net)->evq, u->net->now);
}

int brisk_udp_set_callback(brisk_udp *u, brisk_udp_fn fn, void *ctx)
{
    if (!u)
        return BRISK_ERR_INVAL;
    u->fn = fn;
    u->ctx = ctx;
    /* Events raised while there was no callback were kept: they go now (inside a callback: after it). */
    if (fn && u->ev.pending) {
        udp_raise(u, 0);
        finish_call(u);
    }
    return BRISK_OK;
}

void brisk_udp_deliver(struct brisk_evq_node *n, uint64_t now)
{
    brisk_udp *u = (brisk_udp *)((char *)n - offsetof(brisk_udp, ev));
    if (!u->fn)
        return; /* kept in ev.pending until a callback is set */
    unsigned ev = u->ev.pending;
    u->ev.pending = 0;
    if (ev)
        u->fn(u->ctx, u, ev, now);
}

void brisk_udp_run_blocked(struct brisk_net *net)
{
    struct brisk_udp_table *t = udp_of(net);
    if (!t || t->refused == 0)
        return;
    for (brisk_udp *u = t->all; u && t->refused; u = u->anext)
        if (u->send_refused) {
            u->send_refused = 0;
            t->refused--;
            udp_raise(u, BRISK_EV_WRITABLE);
        }
}

int brisk_udp_bind(brisk_udp *u, const struct brisk_addr *addr, uint16_t port)
{
    if (!u || !addr)
        return BRISK_ERR_INVAL;
    struct brisk_addr a;
    int rc = udp_addr(u->net, addr, 1, &a);
    if (rc != BRISK_OK)
        return rc;
    if (u->bound)
        return BRISK_ERR_INVAL;
    if (!is_any(&a) && !is_local(u->net, &a))
        return BRISK_ERR_ADDRNOTAVAIL;
    return udp_bind_port(u, &a, port);
}

int brisk_udp_connect(brisk_udp *u, const struct brisk_addr *addr, uint16_t port)
{
    if (!u || !addr)
        return BRISK_ERR_INVAL;
    if (addr->family == BRISK_AF_UNSPEC) { /* disconnect; the local port stays (Linux keeps a bound one) */
        memset(&u->raddr, 0, sizeof(u->raddr));
        u->rport = 0;
        return BRISK_OK;
    }
    struct brisk_addr dst;
    int rc = udp_addr(u->net, addr, 0, &dst);
    if (rc != BRISK_OK)
        return rc;
    if (port == 0)
        return BRISK_ERR_INVAL;
    if ((rc = udp_family_ok(u, &dst)) != BRISK_OK)
        return rc;
    struct brisk_route rt;
    if (brisk_route_lookup(u->net, &dst, &rt) != BRISK_OK)
        return BRISK_ERR_NOROUTE;
    if (!u->bound && (rc = udp_autobind(u)) != BRISK_OK)
        return rc;
    u->raddr = dst;
    u->rport = port;
    u->error = BRISK_OK; /* a new peer: an old peer's error is no longer news */
    return BRISK_OK;
}

int brisk_udp_error(brisk_udp *u)
{
    if (!u)
        return BRISK_OK;
    int e = u->error;
    u->error = BRISK_OK;
    return e;
}

int brisk_udp_setsockopt(brisk_udp *u, enum brisk_sockopt opt, uint64_t value)
{
    if (!u)
        return BRISK_ERR_INVAL;
    switch (opt) {
    case BRISK_SO_RCVBUF:
        if (value < 2048 || value > (1u << 30))
            return BRISK_ERR_RANGE;
        u->rcvbuf = (uint32_t)value;
        return BRISK_OK;
    case BRISK_SO_TOS:
        if (value > 255)
            return BRISK_ERR_RANGE;
        u->tos = (uint8_t)value;
        return BRISK_OK;
    default:
        return BRISK_ERR_INVAL;
    }
}

int brisk_udp_getsockopt(const brisk_udp *u, enum brisk_sockopt opt, uint64_t *value)
{
    if (!u || !value)
        return BRISK_ERR_INVAL;
    switch (opt) {
    case BRISK_SO_RCVBUF:
        *value = u->rcvbuf;
        return BRISK_OK;
    case BRISK_SO_TOS:
        *value = u->tos;
        return BRISK_OK;
    case BRISK_SO_INQ:
        *value = u->rq_head ? u->rq_head->len - sizeof(struct brisk_udp_meta) : 0;
        return BRISK_OK;
    default:
        return BRISK_ERR_INVAL;
    }
}

int brisk_udp_tuple(const brisk_udp *u, struct brisk_tuple *out)
{
    if (!u || !out)
        return BRISK_ERR_INVAL;
    memset(out, 0, sizeof(*out));
    if (u->bound) {
        out->laddr = u->laddr;
        out->lport = u->lport;
    }
    if (u->rport) {
        out->raddr = u->raddr;
        out->rport = u->rport;
    }
    return BRISK_OK;
}

unsigned brisk_udp_poll(const brisk_udp *u)
{
    if (!u)
        return 0;
    unsigned m = 0;
    if (u->rq_head || u->error)
        m |= BRISK_POLL_IN;
    if (u->error)
        m |= BRISK_POLL_ERR;
    if (!u->send_refused)
        m |= BRISK_POLL_OUT;
    return m;
}

int brisk_udp_close(brisk_udp *u)
{
    if (!u)
        return BRISK_ERR_INVAL;
    sock_free(u);
    return BRISK_OK;
}
