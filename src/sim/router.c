/*
 * router.c — a simulated IPv4 (and IPv6: router6.c) router: N ports on links, a routing table, ARP, and an
 * output queue per port.
 *
 * What a frame arriving at a port goes through (RFC 1812's forwarding path, the parts a bottleneck needs):
 *   - Ethernet: it must be addressed to the port's MAC (or be a broadcast ARP); anything else is counted bad.
 *   - ARP (RFC 826): a request or reply whose sender is already in the neighbour table, or whose target is
 *     the port's address, records the sender's MAC ("merge", then "add if I am the target"); a request for
 *     the port's address is answered. So hosts resolve their gateway the way they would a Linux router, and
 *     the router learns them from it.
 *   - IPv4: the header is validated (brisk_ipv4_parse: lengths, checksum, source address — RFC 1812 §5.2.2,
 *     §5.3.7); a datagram for one of the router's own addresses is dropped (the router runs no stack); one
 *     arriving with TTL <= 1 is dropped, counted and answered with ICMP time exceeded (§5.3.1, rate-limited;
 *     icmp_time_exceeded); otherwise the
 *     TTL is decremented with the checksum updated incrementally (RFC 1624, as Linux's ip_decrease_ttl).
 *   - Routing: longest prefix match over the ports' connected prefixes and the routes added (§5.2.4.3); the
 *     next hop is the route's gateway, or the destination itself on a connected prefix.
 *   - Neighbour: the next hop's MAC from the table; unknown, an ARP request goes out the port (again at most
 *     once a second while unanswered) and the frame waits in the entry's hold queue (HOLD_MAX frames, as
 *     Linux's unres_qlen: a SYN through a router does not cost its sender an RTO). Entries do not expire: a
 *     simulated topology does not change under a run.
 *   - Output: the Ethernet addresses are rewritten (source: the port; destination: the neighbour) and the
 *     frame enters the port's queueing discipline (router_qdisc.c). The link is fed one frame at a time:
 *     the next leaves the queue when the previous one's serialization ends (brisk_sim_router_tx_done, from
 *     link.c), so the queue — not the link's own FIFO — is where frames wait, and CoDel's sojourn time is
 *     enqueue to start of serialization, as a qdisc's is in front of a driver with a one-frame ring.
 *
 * The frame buffer that arrived is the one that leaves: forwarding copies nothing and allocates nothing (ARP
 * frames come from the world's recycled buffers). A checksum the sending NIC left pending stays pending: the
 * TTL is outside the TCP checksum.
 *
 * IPv6 (a port given an address with brisk_sim_router_port_add_addr6) is router6.c's: the same path with
 * Neighbour Discovery for ARP and the hop limit for the TTL; the neighbour table, the ports' output and the
 * ICMP rate limit here serve both families (router.h).
 *
 * Functions: brisk_sim_router_add / port_add / route_add / stats / port_stats (API), brisk_sim_router_rx
 * (input: arp_input, ip_forward, icmp_error; IPv6 to brisk_sim_router_rx6), route_lookup,
 * brisk_sim_router_neigh / neigh_output / neigh_resolved (the neighbour table of both families),
 * brisk_sim_router_enqueue and port_kick (output), brisk_sim_router_tx_done, brisk_sim_router_destroy.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/internal.h"
#include "sim/router.h"
#include "wire/arp.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

brisk_sim_router *brisk_sim_router_add(brisk_sim_world *w, const char *name)
{
    if (!w)
        return NULL;
    brisk_sim_router *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->w = w;
    r->index = w->nrouters++;
    if (name)
        snprintf(r->name, sizeof(r->name), "%s", name);
    else
        snprintf(r->name, sizeof(r->name), "router%u", r->index);
    if (w->routers_tail)
        w->routers_tail->next = r;
    else
        w->routers = r;
    w->routers_tail = r;
    return r;
}

static void route_insert(brisk_sim_router *r, uint32_t prefix, uint8_t len, uint32_t gw, uint32_t port)
{
    struct route *rt = &r->routes[r->nroutes++];
    rt->mask = brisk_ipv4_mask(len);
    rt->prefix = prefix & rt->mask;
    rt->len = len;
    rt->gateway = gw;
    rt->port = port;
}

brisk_sim_port *brisk_sim_router_port_add(brisk_sim_router *r, uint32_t ip, uint8_t prefix_len,
                                          const struct brisk_sim_qdisc *q)
{
    if (!r || r->nports == PORTS_MAX || prefix_len > 32 || !ip)
        return NULL;
    brisk_sim_world *w = r->w;
    brisk_sim_port *p = calloc(1, sizeof(*p));
    struct sim_rport *rp = calloc(1, sizeof(*rp));
    /* The flow hash's key: this port's own, from the world seed, so reruns hash alike and ports differ. */
    uint64_t perturb = brisk_mix64(w->seed ^ brisk_mix64(UINT64_C(0x726f75746572) + ((uint64_t)r->index << 8) + r->nports));
    if (!p || !rp || brisk_sim_qdisc_init(&rp->q, q, perturb) != BRISK_OK) {
        if (rp)
            brisk_sim_qdisc_destroy(&rp->q);
        free(rp);
        free(p);
        return NULL;
    }
    rp->r = r;
    rp->port = p;
    rp->index = r->nports;
    const uint8_t mac[6] = {0x02, 0x00, 0x01, (uint8_t)r->index, (uint8_t)(r->index >> 8), (uint8_t)(r->nports + 1)};
    memcpy(rp->mac, mac, 6);
    rp->ip = ip;
    rp->prefix_len = prefix_len;
    rp->mtu = 65535;
    p->w = w;
    p->kind = SIM_PORT_ROUTER;
    snprintf(p->name, sizeof(p->name), "%.24s.p%u", r->name, r->nports);
    p->rport = rp;
    if (w->ports_tail)
        w->ports_tail->next = p;
    else
        w->ports = p;
    w->ports_tail = p;
    r->ports[r->nports++] = rp;
    route_insert(r, ip, prefix_len, 0, rp->index);
    brisk_sim_frame_size_hint(w, 1514);
    return p;
}

/* The longest prefix covering dst (the first among equal lengths), or NULL. */
static const struct route *route_lookup(const brisk_sim_router *r, uint32_t dst)
{
    const struct route *best = NULL;
    for (uint32_t i = 0; i < r->nroutes; i++) {
        const struct route *rt = &r->routes[i];
        if ((dst & rt->mask) == rt->prefix && (!best || rt->len > best->len))
            best = rt;
    }
    return best;
}

int brisk_sim_router_route_add(brisk_sim_router *r, uint32_t prefix, uint8_t prefix_len, uint32_t gateway)
{
    if (!r || prefix_len > 32 || !gateway)
        return BRISK_ERR_INVAL;
    if (r->nadded == ROUTES_MAX)
        return BRISK_ERR_TOOMANY;
    /* The way out: the port whose connected prefix covers the gateway (ip route add ... via GW). */
    const struct route *via = NULL;
    for (uint32_t i = 0; i < r->nroutes; i++) {
        const struct route *rt = &r->routes[i];
        if (!rt->gateway && (gateway & rt->mask) == rt->prefix && (!via || rt->len > via->len))
            via = rt;
    }
    if (!via)
        return BRISK_ERR_INVAL;
    route_insert(r, prefix, prefix_len, gateway, via->port);
    r->nadded++;
    return BRISK_OK;
}

void brisk_sim_router_stats(const brisk_sim_router *r, struct brisk_sim_router_stats *out)
{
    if (!out)
        return;
    if (!r) {
        memset(out, 0, sizeof(*out));
        return;
    }
    *out = r->st;
}

int brisk_sim_router_port_stats(const brisk_sim_port *p, struct brisk_sim_qdisc_stats *out)
{
    if (!p || !out || !p->rport)
        return BRISK_ERR_INVAL;
    *out = p->rport->q.st;
    out->backlog_packets = p->rport->q.packets;
    out->backlog_bytes = p->rport->q.bytes;
    return BRISK_OK;
}

/* ---- output ---- */

/* Feeds the link while its transmitter is idle: one frame on the wire at a time, the rest wait here. A frame
 * the link's own queue refuses (a link with a queue limit of its own) is done with, so the loop goes on. */
static void port_kick(struct sim_rport *rp)
{
    brisk_sim_port *p = rp->port;
    if (!p->tx) {
        /* Unplugged: nothing can leave; drop what is queued rather than hold it forever. */
        for (struct sim_frame *f; (f = brisk_sim_qdisc_dequeue(p->w, &rp->q, p->w->now));)
            brisk_sim_frame_put(p->w, f);
        return;
    }
    while (p->tx->q_packets == 0) {
        struct sim_frame *f = brisk_sim_qdisc_dequeue(p->w, &rp->q, p->w->now);
        if (!f)
            return;
        p->tx_frames++;
        brisk_sim_link_offer(p->tx, f);
    }
}

void brisk_sim_router_enqueue(struct sim_rport *rp, struct sim_frame *f)
{
    f->desc = NULL;
    f->dir = NULL;
    brisk_sim_qdisc_enqueue(rp->port->w, &rp->q, f, rp->port->w->now);
    port_kick(rp);
}

void brisk_sim_router_tx_done(struct sim_rport *rp)
{
    port_kick(rp);
}

/* Writes the Ethernet header for the hop from rp to mac. */
static void eth_rewrite(struct sim_frame *f, const struct sim_rport *rp, const uint8_t *mac)
{
    memcpy(f->data, mac, 6);
    memcpy(f->data + 6, rp->mac, 6);
}

static void arp_send(struct sim_rport *rp, uint16_t op, const uint8_t *tha, uint32_t tpa)
{
    brisk_sim_router *r = rp->r;
    struct sim_frame *f = brisk_sim_frame_get(r->w, SIM_ETH_ZLEN);
    if (!f)
        return;
    memset(f->data, 0, SIM_ETH_ZLEN);
    struct brisk_eth_repr eth = {.type = BRISK_ETH_P_ARP};
    memcpy(eth.dst, op == BRISK_ARP_OP_REQUEST ? bcast : tha, 6);
    memcpy(eth.src, rp->mac, 6);
    brisk_eth_emit(f->data, &eth);
    struct brisk_arp_repr a = {.op = op, .spa = rp->ip, .tpa = tpa};
    memcpy(a.sha, rp->mac, 6);
    if (op == BRISK_ARP_OP_REPLY)
        memcpy(a.tha, tha, 6);
    brisk_arp_emit(f->data + BRISK_ETH_HLEN, &a);
    if (op == BRISK_ARP_OP_REQUEST)
        r->st.arp_requests++;
    else
        r->st.arp_replies++;
    brisk_sim_router_enqueue(rp, f);
}

/* ---- neighbours (both families) ---- */

struct neigh *brisk_sim_router_neigh(brisk_sim_router *r, uint32_t port, int v6, uint32_t ip, const uint8_t *ip6,
                                     int create)
{
    for (uint32_t i = 0; i < r->nneigh; i++) {
        struct neigh *n = &r->neigh[i];
        if (n->port == port && n->v6 == (v6 != 0) && (v6 ? !memcmp(n->ip6, ip6, 16) : n->ip == ip))
            return n;
    }
    if (!create || r->nneigh == NEIGH_MAX)
        return NULL;
    struct neigh *n = &r->neigh[r->nneigh++];
    memset(n, 0, sizeof(*n));
    n->v6 = v6 != 0;
    if (v6)
        memcpy(n->ip6, ip6, 16);
    else
        n->ip = ip;
    n->port = port;
    n->asked_at = BRISK_TIME_NONE;
    return n;
}

void brisk_sim_router_neigh_resolved(brisk_sim_router *r, struct neigh *n, const uint8_t *mac)
{
    memcpy(n->mac, mac, 6);
    n->resolved = 1;
    struct sim_rport *rp = r->ports[n->port];
    while (n->hold_head) {
        struct sim_frame *f = n->hold_head;
        n->hold_head = f->next;
        eth_rewrite(f, rp, n->mac);
        brisk_sim_router_enqueue(rp, f);
    }
    n->hold_tail = NULL;
    n->held = 0;
}

void brisk_sim_router_neigh_output(brisk_sim_router *r, struct neigh *n, struct sim_frame *f, int fwd)
{
    if (!n) {
        r->st.neigh_drops++;
        brisk_sim_frame_put(r->w, f);
        return;
    }
    struct sim_rport *rp = r->ports[n->port];
    if (n->resolved) {
        eth_rewrite(f, rp, n->mac);
        r->st.forwarded += (uint64_t)fwd;
        brisk_sim_router_enqueue(rp, f);
        return;
    }
    if (n->held == HOLD_MAX) {
        r->st.neigh_drops++;
        brisk_sim_frame_put(r->w, f);
    } else {
        f->next = NULL;
        if (n->hold_tail)
            n->hold_tail->next = f;
        else
            n->hold_head = f;
        n->hold_tail = f;
        n->held++;
        r->st.forwarded += (uint64_t)fwd;
    }
    if (n->asked_at == BRISK_TIME_NONE || r->w->now >= sim_time_add(n->asked_at, ARP_RETRY)) {
        n->asked_at = r->w->now;
        if (n->v6)
            brisk_sim_router_ns_send(r, n);
        else
            arp_send(rp, BRISK_ARP_OP_REQUEST, NULL, n->ip);
    }
}

/* Sends the IPv4 frame f to nexthop out of rp. */
static void neigh_output(brisk_sim_router *r, struct sim_rport *rp, uint32_t nexthop, struct sim_frame *f, int fwd)
{
    brisk_sim_router_neigh_output(r, brisk_sim_router_neigh(r, rp->index, 0, nexthop, NULL, 1), f, fwd);
}

/* ---- input ---- */

static int is_own_address(const brisk_sim_router *r, uint32_t ip)
{
    for (uint32_t i = 0; i < r->nports; i++)
        if (r->ports[i]->ip == ip)
            return 1;
    return 0;
}

static void arp_input(struct sim_rport *rp, const uint8_t *p, size_t len)
{
    brisk_sim_router *r = rp->r;
    struct brisk_arp_repr a;
    if (brisk_arp_parse(p, len, &a) < 0 || brisk_eth_is_multicast(a.sha)) {
        r->st.bad++;
        return;
    }
    /* RFC 826: merge when the sender is known, add when we are the target. */
    struct neigh *n = a.spa ? brisk_sim_router_neigh(r, rp->index, 0, a.spa, NULL, a.tpa == rp->ip) : NULL;
    if (n)
        brisk_sim_router_neigh_resolved(r, n, a.sha);
    if (a.op == BRISK_ARP_OP_REQUEST && a.tpa == rp->ip)
        arp_send(rp, BRISK_ARP_OP_REPLY, a.sha, a.spa);
}

/* An ICMP error (RFC 792; RFC 1812 §4.3.2) for the datagram at ip (header h), back to its source: time
 * exceeded (§5.3.1), or fragmentation needed with the next hop's MTU (§5.2.7.1, RFC 1191 §4). Never about
 * an ICMP error or a later fragment (§4.3.2.7), at most one a millisecond (§4.3.2.8), from the address of
 * the port it leaves by (§4.3.2.4), quoting as much of the datagram as fits in 576 bytes. */
static void icmp_error(brisk_sim_router *r, const uint8_t *ip, const struct brisk_ipv4_repr *h, uint8_t type,
                       uint8_t code, uint16_t mtu)
{
    if (h->frag_off)
        return;
    if (h->proto == BRISK_IP_PROTO_ICMP) {
        if (h->total_len <= h->hdr_len)
            return;
        uint8_t quoted_type = ip[h->hdr_len];
        if (quoted_type != BRISK_ICMP_ECHO && quoted_type != BRISK_ICMP_ECHO_REPLY)
            return;
    }
    const struct route *rt = route_lookup(r, h->src);
    if (!rt)
        return;
    if (r->w->now < r->icmp_next) {
        r->st.icmp_limited++;
        return;
    }
    r->icmp_next = sim_time_add(r->w->now, ICMP_GAP);
    size_t quote = h->total_len < ICMP_QUOTE ? h->total_len : ICMP_QUOTE;
    size_t len = BRISK_ETH_HLEN + BRISK_IPV4_HLEN + BRISK_ICMP_HLEN + quote;
    struct sim_frame *f = brisk_sim_frame_get(r->w, len < SIM_ETH_ZLEN ? SIM_ETH_ZLEN : len);
    if (!f)
        return;
    memset(f->data, 0, f->len);
    struct sim_rport *out = r->ports[rt->port];
    f->data[12] = BRISK_ETH_P_IPV4 >> 8;
    f->data[13] = BRISK_ETH_P_IPV4 & 0xff;
    uint8_t *nip = f->data + BRISK_ETH_HLEN;
    struct brisk_ipv4_repr eh = {.total_len = (uint16_t)(BRISK_IPV4_HLEN + BRISK_ICMP_HLEN + quote),
                                 .ttl = 64,
                                 .proto = BRISK_IP_PROTO_ICMP,
                                 .src = out->ip,
                                 .dst = h->src};
    brisk_ipv4_emit(nip, &eh);
    struct brisk_icmp_repr ic = {
        .type = type, .code = code, .next_hop_mtu = mtu, .payload = ip, .payload_len = quote};
    brisk_icmp_emit(nip + BRISK_IPV4_HLEN, &ic);
    r->st.icmp_sent++;
    neigh_output(r, out, rt->gateway ? rt->gateway : h->src, f, 0);
}

static void ip_forward(struct sim_rport *rp, struct sim_frame *f)
{
    brisk_sim_router *r = rp->r;
    uint8_t *ip = f->data + BRISK_ETH_HLEN;
    struct brisk_ipv4_repr h;
    if (brisk_ipv4_parse(ip, f->len - BRISK_ETH_HLEN, &h) < 0) {
        r->st.bad++;
        brisk_sim_frame_put(r->w, f);
        return;
    }
    if (is_own_address(r, h.dst)) {
        r->st.local++;
        brisk_sim_frame_put(r->w, f);
        return;
    }
    if (h.ttl <= 1) {
        r->st.ttl_expired++;
        icmp_error(r, ip, &h, BRISK_ICMP_TIME_EXCEEDED, 0, 0);
        brisk_sim_frame_put(r->w, f);
        return;
    }
    const struct route *rt = route_lookup(r, h.dst);
    if (!rt) {
        r->st.no_route++;
        brisk_sim_frame_put(r->w, f);
        return;
    }
    struct sim_rport *out = r->ports[rt->port];
    if (h.total_len > out->mtu) {
        r->st.too_big++;
        if (h.df && out->mtu_icmp) {
            r->st.frag_needed++;
            icmp_error(r, ip, &h, BRISK_ICMP_DEST_UNREACH, 4, (uint16_t)out->mtu);
        }
        brisk_sim_frame_put(r->w, f);
        return;
    }
    /* TTL - 1: the 16-bit word holding TTL and protocol drops by 0x0100, so the one's-complement checksum
     * rises by 0x0100, with the end-around carry (RFC 1624 eqn. 3 for this one change). */
    uint32_t sum = (uint32_t)ip[10] << 8 | ip[11];
    sum += 0x0100;
    sum += sum >> 16;
    ip[8]--;
    ip[10] = (uint8_t)(sum >> 8);
    ip[11] = (uint8_t)sum;
    neigh_output(r, out, rt->gateway ? rt->gateway : h.dst, f, 1);
}

int brisk_sim_router_port_set_mtu(brisk_sim_port *p, uint32_t mtu, int send_icmp)
{
    if (!p || !p->rport || mtu < 68 || mtu > 65535)
        return BRISK_ERR_INVAL;
    p->rport->mtu = mtu;
    p->rport->mtu_icmp = send_icmp != 0;
    return BRISK_OK;
}

void brisk_sim_router_rx(struct sim_rport *rp, struct sim_frame *f)
{
    brisk_sim_router *r = rp->r;
    struct brisk_eth_repr eth;
    if (brisk_eth_parse(f->data, f->len, &eth) < 0 ||
        (memcmp(eth.dst, rp->mac, 6) && !(brisk_eth_is_broadcast(eth.dst) && eth.type == BRISK_ETH_P_ARP) &&
         !(eth.type == BRISK_ETH_P_IPV6 && brisk_sim_router_mac_wanted6(rp, eth.dst)))) {
        r->st.bad++;
        brisk_sim_frame_put(r->w, f);
        return;
    }
    if (eth.type == BRISK_ETH_P_ARP) {
        arp_input(rp, f->data + BRISK_ETH_HLEN, f->len - BRISK_ETH_HLEN);
        brisk_sim_frame_put(r->w, f);
    } else if (eth.type == BRISK_ETH_P_IPV4) {
        ip_forward(rp, f);
    } else if (eth.type == BRISK_ETH_P_IPV6) {
        brisk_sim_router_rx6(rp, f);
    } else {
        r->st.bad++;
        brisk_sim_frame_put(r->w, f);
    }
}

brisk_sim_router *brisk_sim_router_destroy(brisk_sim_router *r)
{
    brisk_sim_router *next = r->next;
    for (uint32_t i = 0; i < r->nneigh; i++)
        for (struct sim_frame *f = r->neigh[i].hold_head, *after; f; f = after) {
            after = f->next;
            free(f);
        }
    for (uint32_t i = 0; i < r->nports; i++) {
        brisk_sim_qdisc_destroy(&r->ports[i]->q);
        free(r->ports[i]);
    }
    free(r);
    return next;
}
