/*
 * router6.c — the simulated router's IPv6 half: Neighbour Discovery and IPv6 forwarding (router.h has the
 * state both halves share; router.c the ports' output and the neighbour table's hold queues).
 *
 * A port forwards IPv6 once it has an address (brisk_sim_router_port_add_addr6): its global address with
 * the on-link prefix (the connected route), and the link-local address from its MAC (RFC 4291 §2.5.6), as
 * every IPv6 interface has. What a packet arriving at such a port goes through:
 *   - Ethernet: to the port's MAC, or to the 33:33 multicast MAC (RFC 2464 §7) of all-nodes or of the
 *     solicited-node group of one of its addresses (RFC 4291 §2.7.1) — where hosts send the solicitations
 *     that resolve their default router.
 *   - The fixed header is validated (brisk_ipv6_parse: version, lengths, source).
 *   - Neighbour Discovery (RFC 4861), for the port's own addresses and groups only, hop limit 255 and the
 *     checksum checked (brisk_icmp6_parse): a solicitation for one of its addresses teaches the router the
 *     sender's MAC (its source link-layer address option; §7.2.3 "create or update") and is answered with a
 *     solicited advertisement with the router, solicited and override flags and the port's MAC (§7.2.4); an
 *     advertisement resolves the entry it answers (§7.2.5; the MAC from its target link-layer option, else
 *     the frame's source). Anything else addressed to the router is dropped (`local`: it runs no stack), as
 *     is other multicast (link-scope groups are not forwarded).
 *   - Forwarding (RFC 8200 §3, RFC 4443): a link-local destination is never forwarded (RFC 4291 §2.5.6); a
 *     packet arriving with hop limit <= 1 is dropped and answered with time exceeded code 0 (§3.3); the
 *     route is the longest prefix match over the connected prefixes and the IPv6 routes added; a packet
 *     larger than the output port's MTU is dropped — IPv6 routers never fragment (RFC 8200 §5) — and, unless
 *     the port is a black hole, answered with Packet Too Big and the MTU (§3.2), which is what path MTU
 *     discovery (RFC 8201) needs; otherwise the hop limit is decremented (no header checksum to update) and
 *     the packet goes to the next hop, resolved by a solicitation to its solicited-node group when unknown.
 *   - ICMPv6 errors follow RFC 4443 §2.4 (e): never about an ICMPv6 error, never to a multicast or
 *     unspecified source; from the address of the port they leave by; quoting as much of the packet as fits
 *     in 1280 bytes; rate-limited with the router's ICMP errors (one a millisecond).
 * No router advertisements are sent: the simulated hosts are given their default router
 * (brisk_stack_set_gateway6), as a static configuration.
 *
 * Functions: brisk_sim_router_port_add_addr6 / route_add6 (API), brisk_sim_router_rx6 (input: nd_input,
 * forward6, icmp6_error), route6_lookup, brisk_sim_router_ns_send / na_send (ND output),
 * brisk_sim_router_mac_wanted6.
 */
#include <string.h>

#include "sim/router.h"
#include "wire/eth.h"
#include "wire/icmp6.h"
#include "wire/ipv6.h"

static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};

static void mask6(uint8_t out[16], const uint8_t a[16], uint8_t len)
{
    for (unsigned i = 0; i < 16; i++) {
        unsigned bits = len >= (i + 1) * 8 ? 8 : len > i * 8 ? len - i * 8 : 0;
        out[i] = (uint8_t)(a[i] & (uint8_t)(0xff00u >> bits));
    }
}

static int covers(const struct route6 *rt, const uint8_t a[16])
{
    uint8_t m[16];
    mask6(m, a, rt->len);
    return memcmp(m, rt->prefix, 16) == 0;
}

static void route6_insert(brisk_sim_router *r, const uint8_t prefix[16], uint8_t len, const uint8_t *gw,
                          uint32_t port)
{
    struct route6 *rt = &r->routes6[r->nroutes6++];
    memset(rt, 0, sizeof(*rt));
    mask6(rt->prefix, prefix, len);
    rt->len = len;
    if (gw) {
        rt->has_gateway = 1;
        memcpy(rt->gateway, gw, 16);
    }
    rt->port = port;
}

int brisk_sim_router_port_add_addr6(brisk_sim_port *p, const struct brisk_addr *addr, uint8_t prefix_len)
{
    if (!p || !p->rport || !addr || addr->family != BRISK_AF_INET6 || prefix_len > 128 ||
        brisk_ipv6_is_multicast(addr->u.v6) || brisk_ipv6_is_link_local(addr->u.v6) ||
        brisk_ipv6_is_unspecified(addr->u.v6) || brisk_ipv6_is_loopback(addr->u.v6))
        return BRISK_ERR_INVAL;
    struct sim_rport *rp = p->rport;
    if (rp->has_ip6)
        return BRISK_ERR_EXIST;
    memcpy(rp->ip6, addr->u.v6, 16);
    rp->prefix6_len = prefix_len;
    brisk_ipv6_link_local_from_mac(rp->ll6, rp->mac);
    rp->has_ip6 = 1;
    route6_insert(rp->r, rp->ip6, prefix_len, NULL, rp->index);
    return BRISK_OK;
}

/* The longest prefix covering dst (the first among equal lengths), or NULL. */
static const struct route6 *route6_lookup(const brisk_sim_router *r, const uint8_t dst[16])
{
    const struct route6 *best = NULL;
    for (uint32_t i = 0; i < r->nroutes6; i++)
        if (covers(&r->routes6[i], dst) && (!best || r->routes6[i].len > best->len))
            best = &r->routes6[i];
    return best;
}

int brisk_sim_router_route_add6(brisk_sim_router *r, const struct brisk_addr *prefix, uint8_t prefix_len,
                                const struct brisk_addr *gateway)
{
    if (!r || !prefix || !gateway || prefix->family != BRISK_AF_INET6 || gateway->family != BRISK_AF_INET6 ||
        prefix_len > 128 || brisk_ipv6_is_unspecified(gateway->u.v6) || brisk_ipv6_is_multicast(gateway->u.v6))
        return BRISK_ERR_INVAL;
    if (r->nadded6 == ROUTES_MAX)
        return BRISK_ERR_TOOMANY;
    const struct route6 *via = NULL;
    for (uint32_t i = 0; i < r->nroutes6; i++) {
        const struct route6 *rt = &r->routes6[i];
        if (!rt->has_gateway && covers(rt, gateway->u.v6) && (!via || rt->len > via->len))
            via = rt;
    }
    if (!via)
        return BRISK_ERR_INVAL;
    route6_insert(r, prefix->u.v6, prefix_len, gateway->u.v6, via->port);
    r->nadded6++;
    return BRISK_OK;
}

static int is_port_addr(const struct sim_rport *rp, const uint8_t a[16])
{
    return rp->has_ip6 && (!memcmp(a, rp->ip6, 16) || !memcmp(a, rp->ll6, 16));
}

static int is_own6(const brisk_sim_router *r, const uint8_t a[16])
{
    for (uint32_t i = 0; i < r->nports; i++)
        if (is_port_addr(r->ports[i], a))
            return 1;
    return 0;
}

/* The groups a port listens on: all-nodes and its addresses' solicited-node groups. */
static int is_port_group(const struct sim_rport *rp, const uint8_t a[16])
{
    uint8_t g[16];
    if (!rp->has_ip6)
        return 0;
    if (!memcmp(a, all_nodes, 16))
        return 1;
    brisk_ipv6_solicited_node(g, rp->ip6);
    if (!memcmp(a, g, 16))
        return 1;
    brisk_ipv6_solicited_node(g, rp->ll6);
    return !memcmp(a, g, 16);
}

int brisk_sim_router_mac_wanted6(const struct sim_rport *rp, const uint8_t *mac)
{
    uint8_t m[6], g[16];
    if (!rp->has_ip6)
        return 0;
    brisk_ipv6_multicast_mac(m, all_nodes);
    if (!memcmp(m, mac, 6))
        return 1;
    brisk_ipv6_solicited_node(g, rp->ip6);
    brisk_ipv6_multicast_mac(m, g);
    if (!memcmp(m, mac, 6))
        return 1;
    brisk_ipv6_solicited_node(g, rp->ll6);
    brisk_ipv6_multicast_mac(m, g);
    return !memcmp(m, mac, 6);
}

/* ---- output of the router's own packets ---- */

/* A frame with Ethernet (type IPv6; addresses written later or by the caller) and IPv6 headers for an
 * ICMPv6 message of `icmp_len` bytes from src to dst; the message goes at the returned frame's data + 54. */
static struct sim_frame *frame6(brisk_sim_router *r, const uint8_t src[16], const uint8_t dst[16], size_t icmp_len,
                                uint8_t hop_limit)
{
    size_t len = BRISK_ETH_HLEN + BRISK_IPV6_HLEN + icmp_len;
    struct sim_frame *f = brisk_sim_frame_get(r->w, len < SIM_ETH_ZLEN ? SIM_ETH_ZLEN : len);
    if (!f)
        return NULL;
    memset(f->data, 0, f->len);
    f->data[12] = BRISK_ETH_P_IPV6 >> 8;
    f->data[13] = BRISK_ETH_P_IPV6 & 0xff;
    struct brisk_ipv6_repr h = {.payload_len = (uint16_t)icmp_len,
                                .next_header = BRISK_IP_PROTO_ICMPV6,
                                .hop_limit = hop_limit};
    memcpy(h.src, src, 16);
    memcpy(h.dst, dst, 16);
    brisk_ipv6_emit(f->data + BRISK_ETH_HLEN, &h);
    return f;
}

void brisk_sim_router_ns_send(brisk_sim_router *r, const struct neigh *n)
{
    struct sim_rport *rp = r->ports[n->port];
    uint8_t group[16], opts[BRISK_ND_OPT_LLA_LEN];
    brisk_ipv6_solicited_node(group, n->ip6);
    /* From the port's address of the target's scope (RFC 4861 §7.2.2: an address of the interface). */
    const uint8_t *src = brisk_ipv6_is_link_local(n->ip6) ? rp->ll6 : rp->ip6;
    size_t olen = brisk_nd_opt_lla_emit(opts, BRISK_ND_OPT_SLLA, rp->mac);
    struct brisk_icmp6_repr m = {.type = BRISK_ICMP6_ND_NS, .payload = opts, .payload_len = olen};
    memcpy(m.target, n->ip6, 16);
    size_t mlen = brisk_icmp6_fixed_len(m.type) + olen;
    struct sim_frame *f = frame6(r, src, group, mlen, BRISK_ND_HOP_LIMIT);
    if (!f)
        return;
    brisk_icmp6_emit(f->data + BRISK_ETH_HLEN + BRISK_IPV6_HLEN, &m, src, group);
    brisk_ipv6_multicast_mac(f->data, group);
    memcpy(f->data + 6, rp->mac, 6);
    r->st.nd_solicits++;
    brisk_sim_router_enqueue(rp, f);
}

/* The solicited advertisement of `target` (one of rp's addresses) to the soliciting node (RFC 4861 §7.2.4):
 * to its address and MAC, or to all-nodes (S clear) when it solicited from the unspecified address. */
static void na_send(struct sim_rport *rp, const uint8_t target[16], const uint8_t to[16], const uint8_t *to_mac)
{
    brisk_sim_router *r = rp->r;
    int dad = brisk_ipv6_is_unspecified(to);
    const uint8_t *dst = dad ? all_nodes : to;
    uint8_t opts[BRISK_ND_OPT_LLA_LEN];
    size_t olen = brisk_nd_opt_lla_emit(opts, BRISK_ND_OPT_TLLA, rp->mac);
    struct brisk_icmp6_repr m = {.type = BRISK_ICMP6_ND_NA,
                                 .na_router = 1,
                                 .na_solicited = !dad,
                                 .na_override = 1,
                                 .payload = opts,
                                 .payload_len = olen};
    memcpy(m.target, target, 16);
    size_t mlen = brisk_icmp6_fixed_len(m.type) + olen;
    struct sim_frame *f = frame6(r, target, dst, mlen, BRISK_ND_HOP_LIMIT);
    if (!f)
        return;
    brisk_icmp6_emit(f->data + BRISK_ETH_HLEN + BRISK_IPV6_HLEN, &m, target, dst);
    if (dad)
        brisk_ipv6_multicast_mac(f->data, all_nodes);
    else
        memcpy(f->data, to_mac, 6);
    memcpy(f->data + 6, rp->mac, 6);
    r->st.nd_adverts++;
    brisk_sim_router_enqueue(rp, f);
}

/* An ICMPv6 error about the packet at ip (header h, `len` bytes) back to its source (RFC 4443 §2.4). */
static void icmp6_error(brisk_sim_router *r, const uint8_t *ip, size_t len, const struct brisk_ipv6_repr *h,
                        uint8_t type, uint8_t code, uint32_t mtu)
{
    if (brisk_ipv6_is_multicast(h->src) || brisk_ipv6_is_unspecified(h->src))
        return;
    /* Never about an ICMPv6 error (a type below 128), where the message follows the fixed header at once
     * (an extension header chain in front of one is not walked: the simulated hosts send none). */
    if (h->next_header == BRISK_IP_PROTO_ICMPV6 && (len <= BRISK_IPV6_HLEN || ip[BRISK_IPV6_HLEN] < 128))
        return;
    const struct route6 *rt = route6_lookup(r, h->src);
    if (!rt)
        return;
    if (r->w->now < r->icmp_next) {
        r->st.icmp_limited++;
        return;
    }
    r->icmp_next = sim_time_add(r->w->now, ICMP_GAP);
    struct sim_rport *out = r->ports[rt->port];
    size_t quote = brisk_icmp6_quote_len(len);
    struct brisk_icmp6_repr m = {.type = type, .code = code, .mtu = mtu, .payload = ip, .payload_len = quote};
    struct sim_frame *f = frame6(r, out->ip6, h->src, BRISK_ICMP6_HLEN + quote, 64);
    if (!f)
        return;
    brisk_icmp6_emit(f->data + BRISK_ETH_HLEN + BRISK_IPV6_HLEN, &m, out->ip6, h->src);
    r->st.icmp_sent++;
    const uint8_t *nh = rt->has_gateway ? rt->gateway : h->src;
    brisk_sim_router_neigh_output(r, brisk_sim_router_neigh(r, rt->port, 1, 0, nh, 1), f, 0);
}

/* ---- input ---- */

static void nd_input(struct sim_rport *rp, const uint8_t *eth_src, const uint8_t *ip, const struct brisk_ipv6_repr *h)
{
    brisk_sim_router *r = rp->r;
    struct brisk_icmp6_repr m;
    if (h->next_header != BRISK_IP_PROTO_ICMPV6 ||
        brisk_icmp6_parse(ip + BRISK_IPV6_HLEN, h->payload_len, h->src, h->dst, &m) < 0) {
        r->st.local++; /* not ND (or not valid): nothing the router takes */
        return;
    }
    if (!m.nd || h->hop_limit != BRISK_ND_HOP_LIMIT) {
        r->st.local++;
        return;
    }
    if (m.type == BRISK_ICMP6_ND_NS && is_port_addr(rp, m.target)) {
        const uint8_t *mac = m.opts.have_sll ? m.opts.sll : eth_src;
        if (!brisk_ipv6_is_unspecified(h->src)) {
            /* §7.2.3: the sender's entry created or updated from its link-layer address option. */
            struct neigh *n = brisk_sim_router_neigh(r, rp->index, 1, 0, h->src, m.opts.have_sll);
            if (n)
                brisk_sim_router_neigh_resolved(r, n, mac);
        }
        na_send(rp, m.target, h->src, mac);
    } else if (m.type == BRISK_ICMP6_ND_NA) {
        struct neigh *n = brisk_sim_router_neigh(r, rp->index, 1, 0, m.target, 0);
        if (n)
            brisk_sim_router_neigh_resolved(r, n, m.opts.have_tll ? m.opts.tll : eth_src);
    }
}

static void forward6(struct sim_rport *rp, struct sim_frame *f, const struct brisk_ipv6_repr *h)
{
    brisk_sim_router *r = rp->r;
    uint8_t *ip = f->data + BRISK_ETH_HLEN;
    size_t len = BRISK_IPV6_HLEN + (size_t)h->payload_len;
    if (brisk_ipv6_is_link_local(h->dst) || brisk_ipv6_is_link_local(h->src)) {
        r->st.bad++; /* link-local scope: never beyond the link (RFC 4291 §2.5.6) */
        brisk_sim_frame_put(r->w, f);
        return;
    }
    if (h->hop_limit <= 1) {
        r->st.ttl_expired++;
        icmp6_error(r, ip, len, h, BRISK_ICMP6_TIME_EXCEEDED, BRISK_ICMP6_TIME_HOPLIMIT, 0);
        brisk_sim_frame_put(r->w, f);
        return;
    }
    const struct route6 *rt = route6_lookup(r, h->dst);
    if (!rt) {
        r->st.no_route++;
        brisk_sim_frame_put(r->w, f);
        return;
    }
    struct sim_rport *out = r->ports[rt->port];
    if (len > out->mtu) {
        r->st.too_big++;
        if (out->mtu_icmp) {
            r->st.frag_needed++;
            icmp6_error(r, ip, len, h, BRISK_ICMP6_PKT_TOO_BIG, 0, out->mtu);
        }
        brisk_sim_frame_put(r->w, f);
        return;
    }
    ip[7]--; /* the hop limit; IPv6 has no header checksum to update */
    const uint8_t *nh = rt->has_gateway ? rt->gateway : h->dst;
    brisk_sim_router_neigh_output(r, brisk_sim_router_neigh(r, rt->port, 1, 0, nh, 1), f, 1);
}

void brisk_sim_router_rx6(struct sim_rport *rp, struct sim_frame *f)
{
    brisk_sim_router *r = rp->r;
    struct brisk_ipv6_repr h;
    if (!rp->has_ip6 || brisk_ipv6_parse(f->data + BRISK_ETH_HLEN, f->len - BRISK_ETH_HLEN, &h) < 0) {
        r->st.bad++;
        brisk_sim_frame_put(r->w, f);
        return;
    }
    if (brisk_ipv6_is_multicast(h.dst)) {
        if (is_port_group(rp, h.dst))
            nd_input(rp, f->data + 6, f->data + BRISK_ETH_HLEN, &h);
        else
            r->st.bad++;
        brisk_sim_frame_put(r->w, f);
        return;
    }
    if (is_port_addr(rp, h.dst)) {
        nd_input(rp, f->data + 6, f->data + BRISK_ETH_HLEN, &h);
        brisk_sim_frame_put(r->w, f);
        return;
    }
    if (is_own6(r, h.dst)) { /* another port's address: nothing for the router's stack it has not */
        r->st.local++;
        brisk_sim_frame_put(r->w, f);
        return;
    }
    forward6(rp, f, &h);
}
