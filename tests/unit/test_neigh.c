/* tests for src/net/neigh.c: ARP resolution, retries, queueing, freshness, the cache bound, RFC 826 merge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "net/neigh.h"
#include "stack/stack.h"
#include "support/fakedev.h"
#include "wire/arp.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"

#define MS  BRISK_NSEC_PER_MSEC
#define SEC BRISK_NSEC_PER_SEC

static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

struct env {
    brisk_stack *st;
    struct fakedev f;
};

static struct env *env_new(const char *const *sets)
{
    struct env *e = calloc(1, sizeof(*e));
    struct brisk_settings s;
    brisk_settings_default(&s);
    for (; sets && *sets; sets++)
        assert_int_equal(brisk_settings_set(&s, *sets), BRISK_OK);
    e->st = brisk_stack_new(&s);
    assert_non_null(e->st);
    fakedev_init(&e->f, e->st, 1, IP4(10, 0, 0, 1), 24);
    return e;
}

static void env_free(struct env *e)
{
    fakedev_destroy(&e->f, e->st->net.now);
    assert_int_equal(brisk_stack_pkts_in_use(e->st), 0);
    brisk_stack_free(e->st);
    free(e);
}

static struct brisk_counters counters(struct env *e)
{
    struct brisk_counters c;
    brisk_stack_get_counters(e->st, &c);
    return c;
}

/* Parses recorded frame i as ARP; asserts it is one. */
static struct brisk_arp_repr tx_arp(struct env *e, size_t i, struct brisk_eth_repr *eth)
{
    assert_true(i < e->f.ntx);
    assert_int_equal(brisk_eth_parse(e->f.tx[i].data, e->f.tx[i].len, eth), BRISK_ETH_HLEN);
    assert_int_equal(eth->type, BRISK_ETH_P_ARP);
    struct brisk_arp_repr a;
    assert_int_equal(brisk_arp_parse(e->f.tx[i].data + 14, e->f.tx[i].len - 14, &a), BRISK_ARP_LEN);
    return a;
}

static void feed_arp(struct env *e, uint16_t op, const uint8_t *sha, uint32_t spa, uint32_t tpa,
                     const uint8_t *dst, uint64_t now)
{
    uint8_t frame[64] = {0};
    struct brisk_eth_repr eth = {.type = BRISK_ETH_P_ARP};
    memcpy(eth.dst, dst, 6);
    memcpy(eth.src, sha, 6);
    brisk_eth_emit(frame, &eth);
    struct brisk_arp_repr a = {.op = op, .spa = spa, .tpa = tpa};
    memcpy(a.sha, sha, 6);
    if (op == BRISK_ARP_OP_REPLY)
        memcpy(a.tha, e->f.cfg.mac, 6);
    brisk_arp_emit(frame + 14, &a);
    assert_int_equal(brisk_stack_input(e->st, e->f.dev, frame, 60, now), BRISK_OK);
}

static uint16_t tx_echo_seq(struct env *e, size_t i)
{
    struct brisk_eth_repr eth;
    assert_int_equal(brisk_eth_parse(e->f.tx[i].data, e->f.tx[i].len, &eth), 14);
    assert_int_equal(eth.type, BRISK_ETH_P_IPV4);
    assert_memory_equal(eth.dst, peer_mac, 6);
    struct brisk_ipv4_repr ip;
    assert_int_equal(brisk_ipv4_parse(e->f.tx[i].data + 14, e->f.tx[i].len - 14, &ip), 20);
    struct brisk_icmp_repr icmp;
    assert_int_equal(brisk_icmp_parse(e->f.tx[i].data + 34, ip.total_len - 20u, &icmp), BRISK_ICMP_HLEN);
    assert_int_equal(icmp.type, BRISK_ICMP_ECHO);
    return icmp.seq;
}

static void test_resolve_then_send(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    assert_int_equal(brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 2), 7, 1, 56, 0), BRISK_OK);
    assert_int_equal(e->f.ntx, 1);
    struct brisk_eth_repr eth;
    struct brisk_arp_repr a = tx_arp(e, 0, &eth);
    assert_memory_equal(eth.dst, bcast, 6);
    assert_int_equal(a.op, BRISK_ARP_OP_REQUEST);
    assert_int_equal(a.spa, IP4(10, 0, 0, 1));
    assert_int_equal(a.tpa, IP4(10, 0, 0, 2));
    assert_memory_equal(a.sha, e->f.cfg.mac, 6);
    const struct brisk_neigh *n = brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 2));
    assert_non_null(n);
    assert_int_equal(n->state, BRISK_NEIGH_INCOMPLETE);
    assert_true(brisk_stack_next_deadline(e->st) <= 1 * SEC); /* the retransmit timer */

    feed_arp(e, BRISK_ARP_OP_REPLY, peer_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), e->f.cfg.mac, 1 * MS);
    assert_int_equal(e->f.ntx, 2);
    assert_int_equal(tx_echo_seq(e, 1), 1);
    assert_int_equal(e->f.tx[1].at, 1 * MS);
    n = brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 2));
    assert_int_equal(n->state, BRISK_NEIGH_REACHABLE);
    assert_memory_equal(n->mac, peer_mac, 6);
    /* Resolved: the next datagram goes straight out. */
    assert_int_equal(brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 2), 7, 2, 56, 2 * MS), BRISK_OK);
    assert_int_equal(e->f.ntx, 3);
    assert_int_equal(tx_echo_seq(e, 2), 2);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.ArpOutRequests, 1);
    assert_int_equal(c.ArpInReplies, 1);
    env_free(e);
}

static void test_retries_then_failure(void **state)
{
    (void)state;
    struct env *e = env_new((const char *const[]){"arp_retries=3", "arp_retrans=1s", NULL});
    assert_int_equal(brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 9), 1, 1, 8, 0), BRISK_OK);
    for (uint64_t k = 1; k <= 2; k++) {
        /* The deadline may be a lower bound from a coarse wheel level; never late, exact near expiry. */
        assert_true(brisk_stack_next_deadline(e->st) <= k * SEC);
        brisk_stack_poll(e->st, k * SEC - 1); /* not yet */
        assert_int_equal(e->f.ntx, k);
        assert_int_equal(brisk_stack_next_deadline(e->st), k * SEC);
        brisk_stack_poll(e->st, k * SEC);
        assert_int_equal(e->f.ntx, k + 1);
        assert_int_equal(e->f.tx[k].at, k * SEC);
    }
    brisk_stack_poll(e->st, 3 * SEC);
    assert_int_equal(e->f.ntx, 3); /* three requests, then give up */
    assert_null(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 9)));
    struct brisk_counters c = counters(e);
    assert_int_equal(c.ArpOutRequests, 3);
    assert_int_equal(c.ArpResolveFailed, 1);
    assert_int_equal(c.NeighUnresolvedDiscards, 1);
    assert_int_equal(brisk_stack_next_deadline(e->st), BRISK_TIME_NONE);
    env_free(e);
}

static void test_queue_bound_keeps_newest(void **state)
{
    (void)state;
    struct env *e = env_new((const char *const[]){"unres_qlen=2", NULL});
    for (uint16_t seq = 0; seq < 5; seq++)
        assert_int_equal(brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 2), 1, seq, 8, seq), BRISK_OK);
    assert_int_equal(e->f.ntx, 1);
    assert_int_equal(counters(e).NeighUnresolvedDiscards, 3);
    feed_arp(e, BRISK_ARP_OP_REPLY, peer_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), e->f.cfg.mac, 10);
    assert_int_equal(e->f.ntx, 3);
    assert_int_equal(tx_echo_seq(e, 1), 3);
    assert_int_equal(tx_echo_seq(e, 2), 4);
    env_free(e);
}

static void test_request_for_us_replies_and_learns(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    feed_arp(e, BRISK_ARP_OP_REQUEST, peer_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), bcast, 5);
    assert_int_equal(e->f.ntx, 1);
    struct brisk_eth_repr eth;
    struct brisk_arp_repr a = tx_arp(e, 0, &eth);
    assert_memory_equal(eth.dst, peer_mac, 6);
    assert_int_equal(a.op, BRISK_ARP_OP_REPLY);
    assert_int_equal(a.spa, IP4(10, 0, 0, 1));
    assert_int_equal(a.tpa, IP4(10, 0, 0, 2));
    assert_memory_equal(a.sha, e->f.cfg.mac, 6);
    assert_memory_equal(a.tha, peer_mac, 6);
    const struct brisk_neigh *n = brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 2));
    assert_non_null(n);
    assert_int_equal(n->state, BRISK_NEIGH_REACHABLE);
    /* So the answer to it needs no resolution. */
    assert_int_equal(brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 2), 1, 1, 8, 6), BRISK_OK);
    assert_int_equal(e->f.ntx, 2);
    assert_int_equal(tx_echo_seq(e, 1), 1);
    env_free(e);
}

static void test_request_not_for_us(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    feed_arp(e, BRISK_ARP_OP_REQUEST, peer_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 3), bcast, 5);
    assert_int_equal(e->f.ntx, 0);
    assert_null(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 2)));
    assert_int_equal(counters(e).ArpInNotForUs, 1);
    env_free(e);
}

static void test_gratuitous_updates_only_known(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    const uint8_t new_mac[6] = {0x02, 0, 0, 0, 0, 0x77};
    feed_arp(e, BRISK_ARP_OP_REQUEST, peer_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 2), bcast, 1);
    assert_null(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 2)));
    assert_int_equal(e->f.ntx, 0);
    /* Learn it, then a gratuitous ARP moves it. */
    feed_arp(e, BRISK_ARP_OP_REQUEST, peer_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), bcast, 2);
    feed_arp(e, BRISK_ARP_OP_REQUEST, new_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 2), bcast, 3);
    const struct brisk_neigh *n = brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 2));
    assert_non_null(n);
    assert_memory_equal(n->mac, new_mac, 6);
    assert_int_equal(counters(e).ArpInGratuitous, 2);
    env_free(e);
}

static void test_stale_entry_is_probed_then_dropped(void **state)
{
    (void)state;
    struct env *e =
        env_new((const char *const[]){"arp_reachable=10s", "arp_retrans=1s", "arp_retries=2", NULL});
    feed_arp(e, BRISK_ARP_OP_REPLY, peer_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), e->f.cfg.mac, 0);
    /* A reply we did not ask for teaches nothing (no entry, not for a pending resolution). */
    assert_null(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 2)));
    feed_arp(e, BRISK_ARP_OP_REQUEST, peer_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), bcast, 0);
    fakedev_clear(&e->f);
    brisk_stack_poll(e->st, 10 * SEC);
    assert_int_equal(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 2))->state, BRISK_NEIGH_STALE);
    assert_int_equal(e->f.ntx, 0);
    /* Using it sends the datagram at once and a unicast probe to the cached MAC. */
    assert_int_equal(brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 2), 1, 1, 8, 11 * SEC), BRISK_OK);
    assert_int_equal(e->f.ntx, 2);
    struct brisk_eth_repr eth;
    struct brisk_arp_repr a = tx_arp(e, 0, &eth);
    assert_memory_equal(eth.dst, peer_mac, 6);
    assert_int_equal(a.tpa, IP4(10, 0, 0, 2));
    assert_int_equal(tx_echo_seq(e, 1), 1);
    assert_int_equal(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 2))->state, BRISK_NEIGH_PROBE);
    brisk_stack_poll(e->st, 12 * SEC);
    assert_int_equal(e->f.ntx, 3); /* second probe */
    brisk_stack_poll(e->st, 13 * SEC);
    assert_null(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 2)));
    env_free(e);
}

static void test_cache_bound_evicts_lru(void **state)
{
    (void)state;
    struct env *e = env_new((const char *const[]){"gc_thresh3=4", NULL});
    for (uint8_t i = 0; i < 4; i++) {
        uint8_t mac[6] = {0x02, 0, 0, 0, 1, i};
        feed_arp(e, BRISK_ARP_OP_REQUEST, mac, IP4(10, 0, 0, 10 + i), IP4(10, 0, 0, 1), bcast, i);
    }
    /* Full of entries confirmed just now: a fifth is answered but not learned, nothing is evicted. */
    uint8_t mac4[6] = {0x02, 0, 0, 0, 1, 4};
    feed_arp(e, BRISK_ARP_OP_REQUEST, mac4, IP4(10, 0, 0, 14), IP4(10, 0, 0, 1), bcast, 1 * SEC);
    assert_int_equal(e->f.ntx, 5);
    assert_null(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 14)));
    assert_int_equal(counters(e).NeighTableOverflow, 1);
    assert_int_equal(counters(e).ArpCacheEvictions, 0);
    /* Using .12 keeps it fresh; once the others have been idle 5 s, new hosts take the least recent slots. */
    assert_int_equal(brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 12), 1, 1, 8, 4 * SEC), BRISK_OK);
    for (uint8_t i = 4; i < 6; i++) {
        uint8_t mac[6] = {0x02, 0, 0, 0, 1, i};
        feed_arp(e, BRISK_ARP_OP_REQUEST, mac, IP4(10, 0, 0, 10 + i), IP4(10, 0, 0, 1), bcast, 6 * SEC + i);
    }
    assert_int_equal(e->st->net.neigh.count, 4);
    assert_int_equal(counters(e).ArpCacheEvictions, 2);
    assert_null(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 10)));
    assert_null(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 11)));
    for (uint8_t i = 2; i < 6; i++)
        assert_non_null(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 10 + i)));
    env_free(e);
}

/* Datagrams to unknown addresses 10.0.0.<first>, ... (n of them, wrapping within 2-253) at `now`; completes
 * and forgets what the device sent. */
static void send_to_unknown(struct env *e, unsigned first, unsigned n, uint64_t now)
{
    for (unsigned i = first; i < first + n; i++) {
        int rc = brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 2 + (i - 2) % 252), 1, 1, 8, now);
        assert_true(rc == BRISK_OK || rc == BRISK_ERR_TOOMANY); /* queued, or refused an entry */
    }
    fakedev_complete_all(&e->f, now);
    fakedev_clear(&e->f);
}

/* Polls every 10 ms up to `until`, so timers run on time. */
static void poll_until(struct env *e, uint64_t until)
{
    for (uint64_t t = e->st->net.now; t <= until; t += 10 * MS) {
        brisk_stack_poll(e->st, t);
        fakedev_complete_all(&e->f, t);
        fakedev_clear(&e->f);
    }
}

static void test_unresolved_limit(void **state)
{
    (void)state;
    struct env *e =
        env_new((const char *const[]){"arp_unres_max=4", "arp_retries=3", "arp_retrans=1s", NULL});
    send_to_unknown(e, 2, 10, 0);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.ArpOutRequests, 4); /* one request per admitted entry, none for the refused */
    assert_int_equal(c.NeighUnresolvedLimit, 6);
    assert_int_equal(c.IpOutDiscards, 6);
    assert_int_equal(e->st->net.neigh.unres_count, 4);
    assert_int_equal(e->st->net.neigh.count, 4);
    assert_int_equal(brisk_stack_pkts_in_use(e->st), 4); /* only the admitted datagrams wait */
    assert_null(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 6)));
    /* The stateless-reply check agrees, and counts the refusal the same way. */
    assert_int_equal(brisk_neigh_admit(&e->st->net, e->f.dev, IP4(10, 0, 0, 2), 1), 1); /* resolving */
    assert_int_equal(brisk_neigh_admit(&e->st->net, e->f.dev, IP4(10, 0, 0, 99), 1), 0);
    assert_int_equal(counters(e).NeighUnresolvedLimit, 7);
    assert_int_equal(counters(e).IpOutDiscards, 7);
    /* A reply resolves one and frees a resolving slot for the next new address. */
    feed_arp(e, BRISK_ARP_OP_REPLY, peer_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), e->f.cfg.mac, 2);
    assert_int_equal(e->st->net.neigh.unres_count, 3);
    assert_int_equal(brisk_neigh_admit(&e->st->net, e->f.dev, IP4(10, 0, 0, 99), 3), 1);

    /* A flood of new addresses, 1,000 a millisecond for 10 s: requests stay within arp_unres_max per
     * arp_retrans, and held packets within arp_unres_max x unres_qlen. */
    uint64_t before = counters(e).ArpOutRequests;
    unsigned next = 100;
    uint64_t max_held = 0;
    for (uint64_t t = 1 * MS; t <= 10 * SEC; t += 1 * MS) {
        brisk_stack_poll(e->st, t);
        send_to_unknown(e, next, 1000, t);
        next += 1000;
        if (brisk_stack_pkts_in_use(e->st) > max_held)
            max_held = brisk_stack_pkts_in_use(e->st);
        assert_true(e->st->net.neigh.unres_count <= 4);
    }
    uint64_t reqs = counters(e).ArpOutRequests - before;
    assert_true(reqs <= 4 * (10 + 3)); /* arp_unres_max x (10 s / arp_retrans + arp_retries) */
    assert_true(reqs >= 4 * 10 - 4);   /* and the slots keep turning over: new neighbours still resolve */
    assert_true(max_held <= 4 * 16 + 1);
    poll_until(e, 20 * SEC);
    env_free(e);
}

static void test_resolving_never_evicts_live(void **state)
{
    (void)state;
    struct env *e = env_new((const char *const[]){"gc_thresh3=4", "arp_unres_max=4", NULL});
    feed_arp(e, BRISK_ARP_OP_REQUEST, peer_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), bcast, 0);
    fakedev_clear(&e->f);
    /* The peer keeps being used while unknown addresses fill every other slot and ask for more. */
    for (uint64_t t = 1; t <= 20; t++) {
        assert_int_equal(brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 2), 1, (uint16_t)t, 8, t * SEC / 2),
                         BRISK_OK);
        assert_int_equal(tx_echo_seq(e, e->f.ntx - 1), t); /* straight out, every time */
        send_to_unknown(e, 10 + 4 * (unsigned)t, 4, t * SEC / 2);
        const struct brisk_neigh *n = brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 2));
        assert_non_null(n);
        assert_true(n->state == BRISK_NEIGH_REACHABLE);
    }
    struct brisk_counters c = counters(e);
    assert_true(c.NeighTableOverflow > 0);
    assert_int_equal(c.ArpCacheEvictions, 0);
    poll_until(e, 20 * SEC);
    env_free(e);
}

static void test_learned_displaces_oldest_resolving(void **state)
{
    (void)state;
    struct env *e = env_new((const char *const[]){"gc_thresh3=4", "arp_unres_max=4", NULL});
    send_to_unknown(e, 20, 4, 0);
    assert_int_equal(e->st->net.neigh.unres_count, 4);
    /* A host that asks for us has proved itself: it takes the slot of the oldest guess (10.0.0.20). */
    feed_arp(e, BRISK_ARP_OP_REQUEST, peer_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), bcast, 1 * MS);
    const struct brisk_neigh *n = brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 2));
    assert_non_null(n);
    assert_int_equal(n->state, BRISK_NEIGH_REACHABLE);
    assert_null(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 20)));
    assert_non_null(brisk_neigh_lookup(&e->st->net, IP4(10, 0, 0, 21)));
    struct brisk_counters c = counters(e);
    assert_int_equal(c.ArpCacheEvictions, 1);
    assert_int_equal(c.NeighUnresolvedDiscards, 1); /* the datagram that waited on it */
    assert_int_equal(e->st->net.neigh.unres_count, 3);
    poll_until(e, 10 * SEC); /* the rest fail and let their datagrams go */
    env_free(e);
}

static void test_malformed_and_bogus(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    uint8_t frame[64] = {0};
    struct brisk_eth_repr eth = {.type = BRISK_ETH_P_ARP};
    memcpy(eth.dst, bcast, 6);
    memcpy(eth.src, peer_mac, 6);
    brisk_eth_emit(frame, &eth);
    struct brisk_arp_repr a = {.op = BRISK_ARP_OP_REQUEST, .spa = IP4(10, 0, 0, 2), .tpa = IP4(10, 0, 0, 1)};
    memcpy(a.sha, peer_mac, 6);
    brisk_arp_emit(frame + 14, &a);
    for (size_t len = 14; len < 14 + BRISK_ARP_LEN; len++)
        brisk_stack_input(e->st, e->f.dev, frame, len, 1);
    assert_int_equal(counters(e).ArpInErrors, BRISK_ARP_LEN);
    /* A sender claiming our own address, or a multicast MAC. */
    a.spa = IP4(10, 0, 0, 1);
    brisk_arp_emit(frame + 14, &a);
    brisk_stack_input(e->st, e->f.dev, frame, 60, 2);
    a.spa = IP4(10, 0, 0, 2);
    a.sha[0] = 0x01;
    brisk_arp_emit(frame + 14, &a);
    brisk_stack_input(e->st, e->f.dev, frame, 60, 3);
    assert_int_equal(counters(e).ArpInErrors, BRISK_ARP_LEN + 2);
    assert_int_equal(e->f.ntx, 0);
    env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolve_then_send),
        cmocka_unit_test(test_retries_then_failure),
        cmocka_unit_test(test_queue_bound_keeps_newest),
        cmocka_unit_test(test_request_for_us_replies_and_learns),
        cmocka_unit_test(test_request_not_for_us),
        cmocka_unit_test(test_gratuitous_updates_only_known),
        cmocka_unit_test(test_stale_entry_is_probed_then_dropped),
        cmocka_unit_test(test_cache_bound_evicts_lru),
        cmocka_unit_test(test_unresolved_limit),
        cmocka_unit_test(test_resolving_never_evicts_live),
        cmocka_unit_test(test_learned_displaces_oldest_resolving),
        cmocka_unit_test(test_malformed_and_bogus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
