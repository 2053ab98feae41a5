/*
 * ndisc.c — Neighbour Discovery for a host (RFC 4861): address resolution with neighbour solicitations and
 * advertisements, Neighbour Unreachability Detection, and router advertisements for the default router and
 * the on-link prefixes.
 *
 * Resolution (§7.2). The first packet for an unknown next hop creates an INCOMPLETE entry, is queued on it
 * and triggers a solicitation to the target's solicited-node group (ff02::1:ffXX:XXXX, at its 33:33 MAC),
 * carrying our link-layer address. Solicitations repeat every arp_retrans until an advertisement arrives or
 * arp_retries have gone (MAX_MULTICAST_SOLICIT is 3, RetransTimer 1 s: ARP's defaults are RFC 4861's). An
 * advertisement flushes the queue in order; failure drops it (Nd6ResolveFailed, Nd6UnresolvedDiscards) and
 * frees the entry.
 *
 * NUD (§7.3). A solicited advertisement confirms reachability: REACHABLE for arp_reachable, then STALE.
 * Using a STALE entry sends the packet and moves it to DELAY; DELAY_FIRST_PROBE_TIME (5 s) later, with no
 * confirmation meanwhile, it goes to PROBE: unicast solicitations to the cached address, arp_retries of
 * them, after which the entry is deleted. Upper-layer confirmation (§7.3.1, brisk_nd_confirm): TCP reports
 * forward progress through the neighbour (new data acknowledged) at most once a second per connection, which
 * makes the entry REACHABLE again, so a busy connection's neighbour is never probed — as Linux's
 * dst_confirm; a connection that only receives confirms nothing (Linux's neither), and its neighbour is
 * probed once per reachable time.
 *
 * Input (§7.2.3 – §7.2.5). Every ND message must arrive with hop limit 255 — else it came through a router
 * and is dropped (Nd6InBadHopLimit) — and pass the parser's stateless validity rules (wire/icmp6.c). A
 * solicitation for one of the receiving device's addresses is answered with a solicited advertisement
 * (O set, our link-layer address) and, when it carries the sender's link-layer address, creates or updates
 * the sender's entry as STALE; one from the unspecified address is another node's duplicate address
 * detection, answered to all-nodes without S. An advertisement updates only an entry that exists (an
 * unsolicited one creates nothing: nobody can plant entries by spraying them), by §7.2.5's rules on the
 * S and O flags.
 *
 * The cache has ARP's bounds exactly (neigh.c says why each exists): gc_thresh3 slots allocated at
 * creation, a keyed hash, at most arp_unres_max entries resolving at once (beyond: Nd6UnresolvedLimit, no
 * entry and no solicitation), unres_qlen packets queued per entry (the oldest dropped), a resolving entry
 * never evicting a resolved one used within the last 5 s (Nd6TableOverflow), and a neighbour that proves
 * itself (a solicitation to us with its address) taking the slot of the oldest resolving one. The table's
 * code parallels neigh.c's rather than sharing it: one keyed on 32-bit addresses, one on 128-bit ones.
 *
 * Router advertisements (§6.3.4). From a link-local source (the parser's rule) with hop limit 255: a
 * nonzero router lifetime makes the sender the default router for that long unless a static one was set
 * (brisk_stack_set_gateway6), a zero one removes it if it was the default; each prefix option with the L
 * flag puts its prefix on-link for its valid lifetime (a link-local prefix is ignored), up to
 * BRISK_NETDEV_PREFIX6_MAX per device; the source link-layer option updates the router's entry. The A flag
 * (SLAAC, RFC 4862) is not acted on yet. Redirects and router solicitations are counted and ignored (a
 * host sends none, and redirects need a destination cache).
 */
#include "net/ndisc.h"

#include <stdlib.h>
#include <string.h>

#include "net/ip6.h"
#include "net/net.h"
#include "net/netdev.h"
#include "wire/eth.h"
#include "wire/icmp6.h"
#include "wire/ipv6.h"
#include "wire/wire.h"

#define ND_IDLE_EVICT         (5 * BRISK_NSEC_PER_SEC) /* neigh.c's NEIGH_IDLE_EVICT */
#define DELAY_FIRST_PROBE_TIME (5 * BRISK_NSEC_PER_SEC) /* RFC 4861 §10 */

static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};

static uint32_t bucket_of(const struct brisk_nd_table *t, const uint8_t a[16])
{
    uint64_t hi, lo;
    memcpy(&hi, a, 8);
    memcpy(&lo, a + 8, 8);
    return (uint32_t)(brisk_mix64(brisk_mix64(hi ^ t->salt) ^ lo) & (t->nbuckets - 1));
}

static void timer_fired(struct brisk_timer *tm, void *arg, uint64_t now);

int brisk_nd_init(struct brisk_net *net)
{
    struct brisk_nd_table *t = &net->nd;
    memset(t, 0, sizeof(*t));
    t->free_head = -1;
    t->live.head = t->live.tail = -1;
    t->unres.head = t->unres.tail = -1;
    if (!net->s.ipv6)
        return BRISK_OK;
    t->size = net->s.gc_thresh3;
    t->nbuckets = 1;
    while (t->nbuckets < t->size)
        t->nbuckets <<= 1;
    t->e = calloc(t->size, sizeof(*t->e));
    t->buckets = malloc(t->nbuckets * sizeof(*t->buckets));
    if (!t->e || !t->buckets) {
        free(t->e);
        free(t->buckets);
        t->e = NULL;
        t->buckets = NULL;
        return BRISK_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < t->nbuckets; i++)
        t->buckets[i] = -1;
    for (uint32_t i = 0; i < t->size; i++) {
        t->e[i].hnext = i + 1 < t->size ? (int32_t)(i + 1) : -1;
        brisk_timer_init(&t->e[i].timer, timer_fired, net);
    }
    t->free_head = 0;
    /* Keyed from the ARP table's key, not a new draw: the PRNG's sequence (ISNs, ...) stays as it was. */
    t->salt = brisk_mix64(net->neigh.salt ^ 0x6e6469736321ull);
    return BRISK_OK;
}

static void drop_queue(struct brisk_net *net, struct brisk_nd_entry *n)
{
    while (n->q_head) {
        brisk_pkt *p = n->q_head;
        n->q_head = p->next;
        brisk_pkt_free(&net->pool, p);
        net->c.Nd6UnresolvedDiscards++;
    }
    n->q_tail = NULL;
    n->qlen = 0;
}

void brisk_nd_destroy(struct brisk_net *net)
{
    struct brisk_nd_table *t = &net->nd;
    if (!t->e)
        return;
    for (uint32_t i = 0; i < t->size; i++) {
        struct brisk_nd_entry *n = &t->e[i];
        while (n->q_head) {
            brisk_pkt *p = n->q_head;
            n->q_head = p->next;
            brisk_pkt_free(&net->pool, p);
        }
    }
    free(t->e);
    free(t->buckets);
    memset(t, 0, sizeof(*t));
}

static int32_t idx_of(const struct brisk_nd_table *t, const struct brisk_nd_entry *n)
{
    return (int32_t)(n - t->e);
}

static struct brisk_neigh_list *list_of(struct brisk_nd_table *t, const struct brisk_nd_entry *n)
{
    return n->state == BRISK_ND_INCOMPLETE ? &t->unres : &t->live;
}

static void list_unlink(struct brisk_nd_table *t, struct brisk_neigh_list *l, struct brisk_nd_entry *n)
{
    if (n->lru_prev >= 0)
        t->e[n->lru_prev].lru_next = n->lru_next;
    else
        l->head = n->lru_next;
    if (n->lru_next >= 0)
        t->e[n->lru_next].lru_prev = n->lru_prev;
    else
        l->tail = n->lru_prev;
}

static void list_push_front(struct brisk_nd_table *t, struct brisk_neigh_list *l, struct brisk_nd_entry *n)
{
    int32_t i = idx_of(t, n);
    n->lru_prev = -1;
    n->lru_next = l->head;
    if (l->head >= 0)
        t->e[l->head].lru_prev = i;
    l->head = i;
    if (l->tail < 0)
        l->tail = i;
}

static void touch(struct brisk_nd_table *t, struct brisk_nd_entry *n, uint64_t now)
{
    n->used = now;
    if (t->live.head == idx_of(t, n))
        return;
    list_unlink(t, &t->live, n);
    list_push_front(t, &t->live, n);
}

static struct brisk_nd_entry *find(const struct brisk_nd_table *t, const uint8_t a[16])
{
    if (!t->e)
        return NULL;
    for (int32_t i = t->buckets[bucket_of(t, a)]; i >= 0; i = t->e[i].hnext)
        if (memcmp(t->e[i].addr, a, 16) == 0)
            return &t->e[i];
    return NULL;
}

const struct brisk_nd_entry *brisk_nd_lookup(const struct brisk_net *net, const uint8_t addr[16])
{
    return find(&net->nd, addr);
}

void brisk_nd_confirm(struct brisk_net *net, const uint8_t addr[16], uint64_t now)
{
    struct brisk_nd_entry *n = find(&net->nd, addr);
    if (!n || n->state == BRISK_ND_INCOMPLETE)
        return;
    n->state = BRISK_ND_REACHABLE;
    n->probes = 0;
    n->confirmed = now;
    brisk_timer_arm(&net->wheel, &n->timer, now + net->s.arp_reachable_ns);
    touch(&net->nd, n, now);
}

static void release(struct brisk_net *net, struct brisk_nd_entry *n)
{
    struct brisk_nd_table *t = &net->nd;
    int32_t i = idx_of(t, n);
    int32_t *pp = &t->buckets[bucket_of(t, n->addr)];
    while (*pp != i)
        pp = &t->e[*pp].hnext;
    *pp = n->hnext;
    list_unlink(t, list_of(t, n), n);
    if (n->state == BRISK_ND_INCOMPLETE)
        t->unres_count--;
    brisk_timer_cancel(&net->wheel, &n->timer);
    drop_queue(net, n);
    n->state = BRISK_ND_FREE;
    n->hnext = t->free_head;
    t->free_head = i;
    t->count--;
}

enum make { MAKE_RESOLVING, MAKE_CONFIRMED };

/* As neigh.c's victim(): -1 a free slot, >= 0 the entry to evict, -2 refused (counted). */
static int32_t victim(struct brisk_net *net, enum make kind, uint64_t now)
{
    struct brisk_nd_table *t = &net->nd;
    if (kind == MAKE_RESOLVING && t->unres_count >= net->s.arp_unres_max) {
        net->c.Nd6UnresolvedLimit++;
        return -2;
    }
    if (t->free_head >= 0)
        return -1;
    int32_t v = t->live.tail;
    if (v >= 0 && now - t->e[v].used >= ND_IDLE_EVICT)
        return v;
    if (kind == MAKE_CONFIRMED && t->unres.tail >= 0)
        return t->unres.tail;
    net->c.Nd6TableOverflow++;
    return -2;
}

static struct brisk_nd_entry *create(struct brisk_net *net, const uint8_t a[16], brisk_netdev *dev,
                                     enum make kind, uint64_t now)
{
    struct brisk_nd_table *t = &net->nd;
    if (!t->e)
        return NULL;
    int32_t v = victim(net, kind, now);
    if (v == -2)
        return NULL;
    if (v >= 0) {
        release(net, &t->e[v]);
        net->c.Nd6CacheEvictions++;
    }
    int32_t i = t->free_head;
    struct brisk_nd_entry *n = &t->e[i];
    t->free_head = n->hnext;
    brisk_timer_fn fn = n->timer.fn;
    void *arg = n->timer.arg;
    memset(n, 0, sizeof(*n));
    brisk_timer_init(&n->timer, fn, arg);
    memcpy(n->addr, a, 16);
    n->dev = dev;
    n->used = now;
    uint32_t b = bucket_of(t, a);
    n->hnext = t->buckets[b];
    t->buckets[b] = i;
    if (kind == MAKE_RESOLVING) {
        n->state = BRISK_ND_INCOMPLETE;
        t->unres_count++;
        list_push_front(t, &t->unres, n);
    } else {
        n->state = BRISK_ND_STALE;
        list_push_front(t, &t->live, n);
    }
    t->count++;
    return n;
}

static int xmit_to(brisk_netdev *dev, const uint8_t mac[6], brisk_pkt *pkt, uint64_t now)
{
    struct brisk_eth_repr e = {.type = BRISK_ETH_P_IPV6};
    memcpy(e.dst, mac, 6);
    memcpy(e.src, dev->cfg.mac, 6);
    brisk_eth_emit(brisk_pkt_push(pkt, BRISK_ETH_HLEN), &e);
    return brisk_netdev_xmit(dev, pkt, now);
}

/* An ND message from src to dst on dev, hop limit 255, to the Ethernet address `mac` (NULL: through the
 * cache, for a unicast answer to a neighbour that may need resolving). */
static void nd_send(struct brisk_net *net, brisk_netdev *dev, const uint8_t src[16], const uint8_t dst[16],
                    const uint8_t *mac, struct brisk_icmp6_repr *r, uint64_t now)
{
    size_t len = brisk_icmp6_fixed_len(r->type) + r->payload_len;
    brisk_pkt *pkt = brisk_icmp6_alloc(net, len);
    if (!pkt)
        return;
    brisk_icmp6_emit(pkt->data, r, src, dst);
    struct brisk_ipv6_repr ip = {.payload_len = (uint16_t)len, .next_header = BRISK_IP_PROTO_ICMPV6,
                                 .hop_limit = BRISK_ND_HOP_LIMIT};
    memcpy(ip.src, src, 16);
    memcpy(ip.dst, dst, 16);
    brisk_ipv6_emit(brisk_pkt_push(pkt, BRISK_IPV6_HLEN), &ip);
    net->c.Icmp6OutMsgs++;
    net->c.Ip6OutRequests++;
    if (r->type == BRISK_ICMP6_ND_NS)
        net->c.Icmp6OutNeighborSolicits++;
    else if (r->type == BRISK_ICMP6_ND_NA)
        net->c.Icmp6OutNeighborAdvertisements++;
    uint8_t mmac[6];
    if (brisk_ipv6_is_multicast(dst)) {
        brisk_ipv6_multicast_mac(mmac, dst);
        mac = mmac;
    }
    if (mac)
        xmit_to(dev, mac, pkt, now);
    else
        brisk_nd_output(net, dev, dst, pkt, now);
}

/* A solicitation for n's address: to its solicited-node group while resolving, to its cached MAC while
 * probing (§7.2.2, §7.3.3), with our link-layer address. */
static void send_ns(struct brisk_net *net, struct brisk_nd_entry *n, uint64_t now)
{
    uint8_t opts[BRISK_ND_OPT_LLA_LEN];
    brisk_nd_opt_lla_emit(opts, BRISK_ND_OPT_SLLA, n->dev->cfg.mac);
    struct brisk_icmp6_repr r = {.type = BRISK_ICMP6_ND_NS, .payload = opts, .payload_len = sizeof opts};
    memcpy(r.target, n->addr, 16);
    uint8_t src[16], dst[16];
    brisk_ip6_select_src(n->dev, n->addr, src);
    const uint8_t *mac = NULL;
    if (n->state == BRISK_ND_PROBE) {
        memcpy(dst, n->addr, 16);
        mac = n->mac;
    } else {
        brisk_ipv6_solicited_node(dst, n->addr);
    }
    n->probes++;
    brisk_timer_arm(&net->wheel, &n->timer, now + net->s.arp_retrans_ns);
    nd_send(net, n->dev, src, dst, mac, &r, now);
}

static void timer_fired(struct brisk_timer *tm, void *arg, uint64_t now)
{
    struct brisk_net *net = arg;
    struct brisk_nd_entry *n =
        (struct brisk_nd_entry *)(void *)((uint8_t *)tm - offsetof(struct brisk_nd_entry, timer));
    switch (n->state) {
    case BRISK_ND_REACHABLE:
        n->state = BRISK_ND_STALE;
        break;
    case BRISK_ND_DELAY:
        n->state = BRISK_ND_PROBE;
        n->probes = 0;
        send_ns(net, n, now);
        break;
    case BRISK_ND_INCOMPLETE:
    case BRISK_ND_PROBE:
        if (n->probes < net->s.arp_retries) {
            send_ns(net, n, now);
        } else {
            net->c.Nd6ResolveFailed++;
            release(net, n);
        }
        break;
    default:
        break;
    }
}

/* n now has mac; `state` is REACHABLE (confirmed) or STALE (learnt, unconfirmed). A resolving entry moves
 * to the recency list and its queue goes out in order. */
static void set_lla(struct brisk_net *net, struct brisk_nd_entry *n, const uint8_t mac[6], uint8_t state,
                    uint64_t now)
{
    struct brisk_nd_table *t = &net->nd;
    int was_incomplete = n->state == BRISK_ND_INCOMPLETE;
    if (was_incomplete) {
        list_unlink(t, &t->unres, n);
        t->unres_count--;
        list_push_front(t, &t->live, n);
    }
    memcpy(n->mac, mac, 6);
    n->state = state;
    n->probes = 0;
    if (state == BRISK_ND_REACHABLE) {
        n->confirmed = now;
        brisk_timer_arm(&net->wheel, &n->timer, now + net->s.arp_reachable_ns);
    } else {
        brisk_timer_cancel(&net->wheel, &n->timer);
    }
    touch(t, n, now);
    if (!was_incomplete)
        return;
    brisk_pkt *p = n->q_head;
    n->q_head = n->q_tail = NULL;
    n->qlen = 0;
    while (p) {
        brisk_pkt *next = p->next;
        p->next = NULL;
        xmit_to(n->dev, n->mac, p, now);
        p = next;
    }
}

int brisk_nd_output(struct brisk_net *net, brisk_netdev *dev, const uint8_t nexthop[16], brisk_pkt *pkt,
                    uint64_t now)
{
    if (brisk_ipv6_is_multicast(nexthop)) {
        uint8_t mac[6];
        brisk_ipv6_multicast_mac(mac, nexthop);
        return xmit_to(dev, mac, pkt, now);
    }
    struct brisk_nd_entry *n = find(&net->nd, nexthop);
    if (n && n->dev != dev) {
        release(net, n);
        n = NULL;
    }
    if (!n) {
        n = create(net, nexthop, dev, MAKE_RESOLVING, now);
        if (!n) {
            net->c.Ip6OutDiscards++;
            brisk_pkt_free(&net->pool, pkt);
            return BRISK_ERR_TOOMANY;
        }
        send_ns(net, n, now);
    }
    switch (n->state) {
    case BRISK_ND_INCOMPLETE:
        if (net->s.unres_qlen == 0) {
            net->c.Nd6UnresolvedDiscards++;
            brisk_pkt_free(&net->pool, pkt);
            return BRISK_OK;
        }
        if (n->qlen >= net->s.unres_qlen) {
            brisk_pkt *old = n->q_head;
            n->q_head = old->next;
            if (!n->q_head)
                n->q_tail = NULL;
            n->qlen--;
            brisk_pkt_free(&net->pool, old);
            net->c.Nd6UnresolvedDiscards++;
        }
        pkt->next = NULL;
        if (n->q_tail)
            n->q_tail->next = pkt;
        else
            n->q_head = pkt;
        n->q_tail = pkt;
        n->qlen++;
        return BRISK_OK;
    case BRISK_ND_STALE: /* §7.3.3: send, and give the upper layer DELAY_FIRST_PROBE_TIME to confirm */
        n->state = BRISK_ND_DELAY;
        brisk_timer_arm(&net->wheel, &n->timer, now + DELAY_FIRST_PROBE_TIME);
        break;
    default:
        break;
    }
    touch(&net->nd, n, now);
    return xmit_to(dev, n->mac, pkt, now);
}

static void ns_input(struct brisk_net *net, brisk_netdev *dev, const struct brisk_ipv6_repr *ip,
                     const struct brisk_icmp6_repr *r, uint64_t now)
{
    net->c.Icmp6InNeighborSolicits++;
    if (!brisk_netdev_ip6_is_mine(dev, r->target)) { /* not ours on this link: nothing to say (§7.2.3) */
        net->c.Nd6InInvalid++;
        return;
    }
    int dad = brisk_ipv6_is_unspecified(ip->src);
    if (!dad && r->opts.have_sll) {
        /* §7.2.3: create or update the sender's entry, STALE when the address is new or changed. */
        struct brisk_nd_entry *n = find(&net->nd, ip->src);
        if (n && n->dev != dev) {
            release(net, n);
            n = NULL;
        }
        if (!n)
            n = create(net, ip->src, dev, MAKE_CONFIRMED, now);
        if (n && (n->state == BRISK_ND_INCOMPLETE || memcmp(n->mac, r->opts.sll, 6) != 0))
            set_lla(net, n, r->opts.sll, BRISK_ND_STALE, now);
    }
    uint8_t opts[BRISK_ND_OPT_LLA_LEN];
    brisk_nd_opt_lla_emit(opts, BRISK_ND_OPT_TLLA, dev->cfg.mac);
    struct brisk_icmp6_repr na = {
        .type = BRISK_ICMP6_ND_NA, .na_solicited = !dad, .na_override = 1,
        .payload = opts, .payload_len = sizeof opts,
    };
    memcpy(na.target, r->target, 16);
    /* §7.2.4: to the soliciting node (all-nodes for a DAD probe), from the target address itself. */
    const uint8_t *dst = dad ? all_nodes : ip->src;
    const uint8_t *mac = !dad && r->opts.have_sll ? r->opts.sll : NULL;
    nd_send(net, dev, r->target, dst, mac, &na, now);
}

static void na_input(struct brisk_net *net, brisk_netdev *dev, const struct brisk_icmp6_repr *r, uint64_t now)
{
    net->c.Icmp6InNeighborAdvertisements++;
    if (brisk_netdev_ip6_is_mine(dev, r->target)) { /* someone else claims our address: DAD is off, log it */
        net->c.Nd6InInvalid++;
        return;
    }
    struct brisk_nd_entry *n = find(&net->nd, r->target);
    if (!n || n->dev != dev)
        return; /* §7.2.5: no entry, silently discarded */
    if (n->state == BRISK_ND_INCOMPLETE) {
        if (!r->opts.have_tll) { /* nothing to resolve with */
            net->c.Nd6InInvalid++;
            return;
        }
        n->router = r->na_router;
        set_lla(net, n, r->opts.tll, r->na_solicited ? BRISK_ND_REACHABLE : BRISK_ND_STALE, now);
        return;
    }
    int differs = r->opts.have_tll && memcmp(r->opts.tll, n->mac, 6) != 0;
    if (!r->na_override && differs) {
        if (n->state == BRISK_ND_REACHABLE) { /* §7.2.5: not an override: only doubt the cached one */
            n->state = BRISK_ND_STALE;
            brisk_timer_cancel(&net->wheel, &n->timer);
        }
        return;
    }
    n->router = r->na_router;
    const uint8_t *mac = r->opts.have_tll ? r->opts.tll : n->mac;
    if (r->na_solicited)
        set_lla(net, n, mac, BRISK_ND_REACHABLE, now);
    else if (differs)
        set_lla(net, n, mac, BRISK_ND_STALE, now);
}

static uint64_t lifetime_end(uint64_t now, uint32_t secs)
{
    if (secs == BRISK_ND_INFINITY)
        return UINT64_MAX;
    return now + (uint64_t)secs * BRISK_NSEC_PER_SEC;
}

static void prefix_learn(brisk_netdev *dev, const struct brisk_nd_prefix *p, uint64_t now)
{
    if (!p->onlink || brisk_ipv6_is_link_local(p->prefix) || brisk_ipv6_is_multicast(p->prefix))
        return; /* §6.3.4: the link-local prefix is always on-link and never taken from an RA */
    struct brisk_netdev_prefix6 *slot = NULL;
    for (uint32_t i = 0; i < BRISK_NETDEV_PREFIX6_MAX; i++) {
        struct brisk_netdev_prefix6 *q = &dev->prefix6[i];
        if (q->prefix_len == p->prefix_len && memcmp(q->prefix, p->prefix, 16) == 0) {
            slot = q;
            break;
        }
        if (!slot && (!q->prefix_len || now >= q->expires))
            slot = q;
    }
    if (!slot)
        return; /* the list is full of live prefixes: this one waits for a slot */
    if (p->valid_lifetime == 0) { /* §6.3.4: a zero valid lifetime times the prefix out at once */
        if (slot->prefix_len == p->prefix_len && memcmp(slot->prefix, p->prefix, 16) == 0)
            slot->prefix_len = 0;
        return;
    }
    memcpy(slot->prefix, p->prefix, 16);
    slot->prefix_len = p->prefix_len ? p->prefix_len : 1; /* a ::/0 "prefix" would be everything: keep /1 */
    slot->expires = lifetime_end(now, p->valid_lifetime);
}

static void ra_input(struct brisk_net *net, brisk_netdev *dev, const struct brisk_ipv6_repr *ip,
                     const struct brisk_icmp6_repr *r, uint64_t now)
{
    net->c.Icmp6InRouterAdvertisements++;
    if (!net->ip6.gw_static) {
        int is_gw = net->ip6.gw_dev == dev && memcmp(net->ip6.gw, ip->src, 16) == 0;
        if (r->ra_lifetime) {
            net->ip6.gw_dev = dev;
            memcpy(net->ip6.gw, ip->src, 16);
            net->ip6.gw_expires = now + (uint64_t)r->ra_lifetime * BRISK_NSEC_PER_SEC;
        } else if (is_gw) {
            net->ip6.gw_dev = NULL;
        }
    }
    size_t pos = 0;
    struct brisk_nd_opt o;
    while (brisk_nd_opt_next(r->payload, r->payload_len, &pos, &o) == 1) {
        struct brisk_nd_prefix p;
        if (o.type == BRISK_ND_OPT_PREFIX && brisk_nd_opt_prefix(&o, &p) == 0)
            prefix_learn(dev, &p, now);
    }
    if (r->opts.have_sll) { /* §6.3.4: as a solicitation's source option, STALE if new or changed */
        struct brisk_nd_entry *n = find(&net->nd, ip->src);
        if (!n)
            n = create(net, ip->src, dev, MAKE_CONFIRMED, now);
        if (n && n->dev == dev && (n->state == BRISK_ND_INCOMPLETE || memcmp(n->mac, r->opts.sll, 6) != 0))
            set_lla(net, n, r->opts.sll, BRISK_ND_STALE, now);
        if (n)
            n->router = 1;
    }
}

void brisk_nd_input(struct brisk_net *net, brisk_netdev *dev, const struct brisk_ipv6_repr *ip,
                    const struct brisk_icmp6_repr *r, uint64_t now)
{
    if (ip->hop_limit != BRISK_ND_HOP_LIMIT) { /* §6.1, §7.1, §8.1: it crossed a router */
        net->c.Nd6InBadHopLimit++;
        net->c.Icmp6InErrors++;
        return;
    }
    switch (r->type) {
    case BRISK_ICMP6_ND_NS:
        ns_input(net, dev, ip, r, now);
        break;
    case BRISK_ICMP6_ND_NA:
        na_input(net, dev, r, now);
        break;
    case BRISK_ICMP6_ND_RA:
        ra_input(net, dev, ip, r, now);
        break;
    case BRISK_ICMP6_ND_RS:
        net->c.Icmp6InRouterSolicits++;
        break;
    default:
        net->c.Icmp6InRedirects++;
        break;
    }
}
