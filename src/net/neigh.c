/*
 * neigh.c — ARP (RFC 826) and the neighbour cache, with the host requirements of RFC 1122 §2.3.2.
 *
 * Resolution. The first datagram for an unknown next hop creates an INCOMPLETE entry, is queued on it and
 * triggers a broadcast request; requests repeat every arp_retrans until a reply arrives or arp_retries have
 * been sent. A reply flushes the queue in order. Failure drops the queue (counted: ArpResolveFailed,
 * NeighUnresolvedDiscards) and frees the entry, so the next datagram starts afresh. The queue is bounded by
 * unres_qlen; on overflow the oldest packet goes (newer data is more useful, as Linux's unres_qlen does).
 *
 * Freshness (RFC 1122 §2.3.2.1). An entry is REACHABLE for arp_reachable after the last confirmation, then
 * STALE: still used, but its next use sends a unicast request to the cached MAC (PROBE). If arp_retries
 * probes go unanswered the entry is deleted; a reply makes it REACHABLE again. Stale entries therefore cost
 * nothing until used and cannot keep a dead neighbour's MAC forever.
 *
 * Input follows RFC 826's merge algorithm: if the sender is in the cache, update its MAC (and confirm);
 * if a request targets the receiving device's address, add the sender if it was not there and reply. Unlike
 * RFC 826, an unsolicited reply creates nothing (Linux's arp_accept=0). A gratuitous ARP
 * (sender address == target address) updates an existing entry but never creates one, so a flood of them
 * cannot fill the cache.
 *
 * The cache is a fixed array of gc_thresh3 slots allocated when the stack is created, a keyed hash on the
 * address (the key comes from the stack's seed, so chains cannot be aimed at from outside), and two lists:
 * resolved entries by last use, resolving (INCOMPLETE) entries by age. No allocation after creation.
 *
 * Bounds against floods. Anyone who can make the stack send to an address on a local subnet — a spoofed SYN,
 * whose SYN-ACK or cookie must go to the spoofed source — makes it resolve that address, and the address
 * never answers. Unbounded, that fills the cache with INCOMPLETE entries, evicts the neighbours of running
 * connections (whose next segments then wait for, or fail, resolution) and broadcasts a request per SYN.
 * So:
 *   - at most arp_unres_max entries resolve at once; a datagram for yet another unknown neighbour is dropped
 *     (NeighUnresolvedLimit) without an entry or a request. A resolving entry lives arp_retries x
 *     arp_retrans, sending arp_retries requests, so broadcast requests never exceed arp_unres_max per
 *     arp_retrans however fast the flood, and packets held behind resolution never exceed arp_unres_max x
 *     unres_qlen (the oldest of an entry's queue goes first, as with Linux's unres_qlen);
 *   - a resolving entry never evicts a resolved one that was used or confirmed in the last NEIGH_IDLE_EVICT
 *     (5 s, the age below which Linux's forced GC keeps an entry): when no slot is free and the least
 *     recently used resolved entry is younger than that, the new entry is refused (NeighTableOverflow,
 *     Linux's table_fulls). The peer of a running connection is used with every segment and is never
 *     evicted; an idle one may be (ArpCacheEvictions) and costs one resolution when it speaks again;
 *   - a mapping that proves itself (an ARP request to us) may take the slot of the oldest resolving entry
 *     when nothing else can go: a host that answers is worth more than a guess that has not.
 * Linux's gc_thresh1/gc_thresh2 drive its periodic garbage collector; brisk has none to drive: STALE entries
 * cost nothing until evicted, resolving ones end by their own timer, so only the hard bound gc_thresh3
 * exists.
 */
#include "net/neigh.h"

#include <stdlib.h>
#include <string.h>

#include "net/ip.h"
#include "net/net.h"
#include "net/netdev.h"
#include "wire/arp.h"
#include "wire/eth.h"
#include "wire/ipv4.h"

static const uint8_t bcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* A resolved entry neither used nor confirmed for this long may give its slot to a new one. */
#define NEIGH_IDLE_EVICT (5 * BRISK_NSEC_PER_SEC)

static uint32_t bucket_of(const struct brisk_neigh_table *t, uint32_t ip)
{
    return (uint32_t)(brisk_mix64(ip ^ t->salt) & (t->nbuckets - 1));
}

static void timer_fired(struct brisk_timer *tm, void *arg, uint64_t now);

int brisk_neigh_init(struct brisk_net *net)
{
    struct brisk_neigh_table *t = &net->neigh;
    memset(t, 0, sizeof(*t));
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
    t->live.head = t->live.tail = -1;
    t->unres.head = t->unres.tail = -1;
    t->salt = brisk_rand_u64(&net->rand);
    return BRISK_OK;
}

static void drop_queue(struct brisk_net *net, struct brisk_neigh *n)
{
    while (n->q_head) {
        brisk_pkt *p = n->q_head;
        n->q_head = p->next;
        brisk_pkt_free(&net->pool, p);
        net->c.NeighUnresolvedDiscards++;
    }
    n->q_tail = NULL;
    n->qlen = 0;
}

void brisk_neigh_destroy(struct brisk_net *net)
{
    struct brisk_neigh_table *t = &net->neigh;
    if (!t->e)
        return;
    for (uint32_t i = 0; i < t->size; i++) {
        struct brisk_neigh *n = &t->e[i];
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

static int32_t idx_of(const struct brisk_neigh_table *t, const struct brisk_neigh *n)
{
    return (int32_t)(n - t->e);
}

static struct brisk_neigh_list *list_of(struct brisk_neigh_table *t, const struct brisk_neigh *n)
{
    return n->state == BRISK_NEIGH_INCOMPLETE ? &t->unres : &t->live;
}

static void list_unlink(struct brisk_neigh_table *t, struct brisk_neigh_list *l, struct brisk_neigh *n)
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

static void list_push_front(struct brisk_neigh_table *t, struct brisk_neigh_list *l, struct brisk_neigh *n)
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

/* A resolved entry was used or confirmed: it goes to the front of the recency list. */
static void touch(struct brisk_neigh_table *t, struct brisk_neigh *n, uint64_t now)
{
    n->used = now;
    if (t->live.head == idx_of(t, n))
        return;
    list_unlink(t, &t->live, n);
    list_push_front(t, &t->live, n);
}

static struct brisk_neigh *find(const struct brisk_neigh_table *t, uint32_t ip)
{
    if (!t->e)
        return NULL;
    for (int32_t i = t->buckets[bucket_of(t, ip)]; i >= 0; i = t->e[i].hnext)
        if (t->e[i].ip == ip)
            return &t->e[i];
    return NULL;
}

const struct brisk_neigh *brisk_neigh_lookup(const struct brisk_net *net, uint32_t ip)
{
    return find(&net->neigh, ip);
}

static void release(struct brisk_net *net, struct brisk_neigh *n)
{
    struct brisk_neigh_table *t = &net->neigh;
    int32_t i = idx_of(t, n);
    int32_t *pp = &t->buckets[bucket_of(t, n->ip)];
    while (*pp != i)
        pp = &t->e[*pp].hnext;
    *pp = n->hnext;
    list_unlink(t, list_of(t, n), n);
    if (n->state == BRISK_NEIGH_INCOMPLETE)
        t->unres_count--;
    brisk_timer_cancel(&net->wheel, &n->timer);
    drop_queue(net, n);
    n->state = BRISK_NEIGH_FREE;
    n->hnext = t->free_head;
    t->free_head = i;
    t->count--;
}

enum make { MAKE_RESOLVING, MAKE_CONFIRMED };

/* The slot a new entry would take: -1 for a free one, else the index of the entry to evict; -2 (the reason
 * counted) when the entry must not be made. Changes nothing else, so brisk_neigh_admit can ask too. */
static int32_t victim(struct brisk_net *net, enum make kind, uint64_t now)
{
    struct brisk_neigh_table *t = &net->neigh;
    if (kind == MAKE_RESOLVING && t->unres_count >= net->s.arp_unres_max) {
        net->c.NeighUnresolvedLimit++;
        return -2;
    }
    if (t->free_head >= 0)
        return -1;
    int32_t v = t->live.tail;
    if (v >= 0 && now - t->e[v].used >= NEIGH_IDLE_EVICT)
        return v;
    if (kind == MAKE_CONFIRMED && t->unres.tail >= 0)
        return t->unres.tail;
    net->c.NeighTableOverflow++;
    return -2;
}

/* A new entry for ip (INCOMPLETE and on the resolving list, or about to be confirmed and on the recency
 * list), or NULL when the bounds above refuse it. */
static struct brisk_neigh *create(struct brisk_net *net, uint32_t ip, brisk_netdev *dev, enum make kind,
                                  uint64_t now)
{
    struct brisk_neigh_table *t = &net->neigh;
    int32_t v = victim(net, kind, now);
    if (v == -2)
        return NULL;
    if (v >= 0) {
        release(net, &t->e[v]);
        net->c.ArpCacheEvictions++;
    }
    int32_t i = t->free_head;
    struct brisk_neigh *n = &t->e[i];
    t->free_head = n->hnext;
    brisk_timer_fn fn = n->timer.fn;
    void *arg = n->timer.arg;
    memset(n, 0, sizeof(*n));
    brisk_timer_init(&n->timer, fn, arg);
    n->ip = ip;
    n->dev = dev;
    n->used = now;
    uint32_t b = bucket_of(t, ip);
    n->hnext = t->buckets[b];
    t->buckets[b] = i;
    if (kind == MAKE_RESOLVING) {
        n->state = BRISK_NEIGH_INCOMPLETE;
        t->unres_count++;
        list_push_front(t, &t->unres, n);
    } else {
        n->state = BRISK_NEIGH_STALE; /* the caller confirms it at once */
        list_push_front(t, &t->live, n);
    }
    t->count++;
    return n;
}

static void send_arp(struct brisk_net *net, brisk_netdev *dev, uint16_t op, const uint8_t *eth_dst,
                     const uint8_t *tha, uint32_t tpa, uint64_t now)
{
    brisk_pkt *pkt = brisk_pkt_alloc(&net->pool, BRISK_ETH_HLEN + BRISK_ARP_LEN);
    if (!pkt)
        return;
    struct brisk_arp_repr a = {.op = op, .spa = dev->cfg.ip, .tpa = tpa};
    memcpy(a.sha, dev->cfg.mac, 6);
    memcpy(a.tha, tha, 6);
    brisk_arp_emit(brisk_pkt_put(pkt, BRISK_ARP_LEN), &a);
    struct brisk_eth_repr e = {.type = BRISK_ETH_P_ARP};
    memcpy(e.dst, eth_dst, 6);
    memcpy(e.src, dev->cfg.mac, 6);
    brisk_eth_emit(brisk_pkt_push(pkt, BRISK_ETH_HLEN), &e);
    if (op == BRISK_ARP_OP_REQUEST)
        net->c.ArpOutRequests++;
    else
        net->c.ArpOutReplies++;
    brisk_netdev_xmit(dev, pkt, now);
}

static void send_request(struct brisk_net *net, struct brisk_neigh *n, uint64_t now)
{
    static const uint8_t zero_mac[6] = {0};
    /* While resolving, ask everyone; while probing a stale entry, ask the cached MAC (RFC 1122 §2.3.2.1). */
    const uint8_t *dst = n->state == BRISK_NEIGH_PROBE ? n->mac : bcast_mac;
    n->probes++;
    brisk_timer_arm(&net->wheel, &n->timer, now + net->s.arp_retrans_ns);
    send_arp(net, n->dev, BRISK_ARP_OP_REQUEST, dst, zero_mac, n->ip, now);
}

static int xmit_to(brisk_netdev *dev, const uint8_t *mac, brisk_pkt *pkt, uint64_t now)
{
    struct brisk_eth_repr e = {.type = BRISK_ETH_P_IPV4};
    memcpy(e.dst, mac, 6);
    memcpy(e.src, dev->cfg.mac, 6);
    brisk_eth_emit(brisk_pkt_push(pkt, BRISK_ETH_HLEN), &e);
    return brisk_netdev_xmit(dev, pkt, now);
}

static void timer_fired(struct brisk_timer *tm, void *arg, uint64_t now)
{
    struct brisk_net *net = arg;
    struct brisk_neigh *n =
        (struct brisk_neigh *)(void *)((uint8_t *)tm - offsetof(struct brisk_neigh, timer));
    switch (n->state) {
    case BRISK_NEIGH_REACHABLE:
        n->state = BRISK_NEIGH_STALE; /* no timer: the next use decides */
        break;
    case BRISK_NEIGH_INCOMPLETE:
    case BRISK_NEIGH_PROBE:
        if (n->probes < net->s.arp_retries) {
            send_request(net, n, now);
        } else {
            net->c.ArpResolveFailed++;
            release(net, n);
        }
        break;
    default:
        break;
    }
}

static void confirm(struct brisk_net *net, struct brisk_neigh *n, const uint8_t *mac, uint64_t now)
{
    struct brisk_neigh_table *t = &net->neigh;
    int was_incomplete = n->state == BRISK_NEIGH_INCOMPLETE;
    if (was_incomplete) { /* resolved: from the resolving list to the front of the recency list */
        list_unlink(t, &t->unres, n);
        t->unres_count--;
        list_push_front(t, &t->live, n);
    }
    memcpy(n->mac, mac, 6);
    n->state = BRISK_NEIGH_REACHABLE;
    n->probes = 0;
    n->confirmed = now;
    brisk_timer_arm(&net->wheel, &n->timer, now + net->s.arp_reachable_ns);
    touch(t, n, now);
    if (!was_incomplete)
        return;
    /* Flush in order. Detach the queue first: a send cannot re-enter this entry, but be robust anyway. */
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

/* The entry for nexthop on dev, starting resolution if there is none; NULL when the cache is full. */
static struct brisk_neigh *lookup_or_resolve(struct brisk_net *net, brisk_netdev *dev, uint32_t nexthop,
                                             uint64_t now)
{
    struct brisk_neigh *n = find(&net->neigh, nexthop);
    if (n && n->dev != dev) { /* the address moved to another device: start over */
        release(net, n);
        n = NULL;
    }
    if (!n) {
        n = create(net, nexthop, dev, MAKE_RESOLVING, now);
        if (!n)
            return NULL;
        send_request(net, n, now);
    }
    return n;
}

int brisk_neigh_admit(struct brisk_net *net, brisk_netdev *dev, uint32_t nexthop, uint64_t now)
{
    if (brisk_netdev_is_broadcast(dev, nexthop))
        return 1;
    if (find(&net->neigh, nexthop))
        return 1; /* resolved, resolving, or (rarely) moved to another device: brisk_neigh_output decides */
    if (victim(net, MAKE_RESOLVING, now) != -2)
        return 1;
    net->c.IpOutDiscards++; /* as brisk_neigh_output would count the datagram it refused */
    return 0;
}

int brisk_neigh_resolve(struct brisk_net *net, uint32_t dst, uint64_t now)
{
    if (!net)
        return BRISK_ERR_INVAL;
    now = brisk_net_clock(net, now);
    struct brisk_route rt;
    if (brisk_ip_route(net, dst, &rt) != BRISK_OK)
        return BRISK_ERR_NOROUTE;
    if (brisk_netdev_is_broadcast(rt.dev, rt.nexthop.u.v4))
        return BRISK_OK;
    struct brisk_neigh *n = lookup_or_resolve(net, rt.dev, rt.nexthop.u.v4, now);
    if (!n)
        return BRISK_ERR_TOOMANY;
    return n->state == BRISK_NEIGH_INCOMPLETE ? BRISK_ERR_AGAIN : BRISK_OK;
}

int brisk_neigh_output(struct brisk_net *net, brisk_netdev *dev, uint32_t nexthop, brisk_pkt *pkt,
                       uint64_t now)
{
    if (brisk_netdev_is_broadcast(dev, nexthop))
        return xmit_to(dev, bcast_mac, pkt, now);

    struct brisk_neigh *n = lookup_or_resolve(net, dev, nexthop, now);
    if (!n) {
        net->c.IpOutDiscards++;
        brisk_pkt_free(&net->pool, pkt);
        return BRISK_ERR_TOOMANY;
    }
    switch (n->state) {
    case BRISK_NEIGH_INCOMPLETE:
        if (net->s.unres_qlen == 0) {
            net->c.NeighUnresolvedDiscards++;
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
            net->c.NeighUnresolvedDiscards++;
        }
        pkt->next = NULL;
        if (n->q_tail)
            n->q_tail->next = pkt;
        else
            n->q_head = pkt;
        n->q_tail = pkt;
        n->qlen++;
        return BRISK_OK;
    case BRISK_NEIGH_STALE:
        n->state = BRISK_NEIGH_PROBE;
        n->probes = 0;
        send_request(net, n, now);
        break;
    default:
        break;
    }
    touch(&net->neigh, n, now);
    return xmit_to(dev, n->mac, pkt, now);
}

void brisk_neigh_arp_input(struct brisk_net *net, brisk_netdev *dev, const uint8_t *p, size_t len,
                           uint64_t now)
{
    struct brisk_arp_repr a;
    if (brisk_arp_parse(p, len, &a) < 0) {
        net->c.ArpInErrors++;
        return;
    }
    /* A sender claiming a broadcast or multicast MAC, or our own MAC or address, is bogus or a conflict. */
    if ((a.sha[0] & 1) || memcmp(a.sha, dev->cfg.mac, 6) == 0 || brisk_netdev_is_local(net, a.spa) ||
        a.spa == 0xffffffffu || brisk_ipv4_is_multicast(a.spa)) {
        net->c.ArpInErrors++;
        return;
    }
    int gratuitous = a.spa == a.tpa;
    if (gratuitous)
        net->c.ArpInGratuitous++;
    else if (a.op == BRISK_ARP_OP_REQUEST)
        net->c.ArpInRequests++;
    else
        net->c.ArpInReplies++;

    /* An address probe (RFC 5227: sender address 0) teaches nothing about the sender. */
    struct brisk_neigh *n = a.spa ? find(&net->neigh, a.spa) : NULL;
    int merged = 0;
    if (n && n->dev == dev) {
        confirm(net, n, a.sha, now);
        merged = 1;
    }
    if (gratuitous)
        return;
    /* Answer only for the receiving device's own address (Linux arp_ignore=1): no cross-device replies. */
    if (!dev->cfg.ip || a.tpa != dev->cfg.ip) {
        if (a.op == BRISK_ARP_OP_REQUEST)
            net->c.ArpInNotForUs++;
        return;
    }
    /* Learn the sender of a request to us (we are about to talk to it); an unsolicited reply teaches nothing,
     * as in Linux with arp_accept=0, so nobody can plant entries by spraying replies. */
    if (!merged && a.op == BRISK_ARP_OP_REQUEST && a.spa &&
        (a.spa & dev->mask) == (dev->cfg.ip & dev->mask)) {
        n = create(net, a.spa, dev, MAKE_CONFIRMED, now);
        if (n)
            confirm(net, n, a.sha, now);
    }
    if (a.op == BRISK_ARP_OP_REQUEST)
        send_arp(net, dev, BRISK_ARP_OP_REPLY, a.sha, a.sha, a.spa, now);
}
