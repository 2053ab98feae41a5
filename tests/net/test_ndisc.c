/*
 * test_ndisc.c — Neighbour Discovery (src/net/ndisc.c), driven with forged frames on a fake device.
 *
 * A solicitation for our link-local address is answered with a solicited, override advertisement carrying
 * our MAC, and teaches the sender (STALE); one with hop limit 254 is dropped (Nd6InBadHopLimit) and answers
 * nothing, as is an advertisement with hop limit 64. A packet for an unknown neighbour sends a multicast
 * solicitation to its solicited-node group, queues at most unres_qlen packets (the oldest dropped), repeats
 * arp_retries times at arp_retrans and gives up (Nd6ResolveFailed, the queue dropped); an advertisement
 * flushes the queue in order; §7.2.5's S / O rules; arp_unres_max bounds the resolving entries; a stale
 * entry goes DELAY, then PROBE with unicast solicitations, then away; a router advertisement gives the
 * default router and an on-link prefix, unless its hop limit is not 255; with ipv6 off nothing answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/ndisc.h"
#include "stack/stack.h"
#include "support/fakedev.h"
#include "wire/eth.h"
#include "wire/icmp6.h"
#include "wire/ipv6.h"
#include "wire/wire.h"

#define SEC BRISK_NSEC_PER_SEC
#define MS  BRISK_NSEC_PER_MSEC

static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t peer2_mac[6] = {0x02, 0, 0, 0, 0, 0x22};
static const uint8_t router_mac[6] = {0x02, 0, 0, 0, 0, 0x09};
static uint8_t us_ll[16], peer_ll[16];
static const uint8_t router_ll[16] = {0xfe, 0x80, [15] = 1};
static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};

struct env {
    brisk_stack *st;
    struct fakedev f;
    uint64_t now;
};

static struct env *env_new(const char *const *sets)
{
    struct env *e = calloc(1, sizeof(*e));
    assert_non_null(e);
    struct brisk_settings s;
    brisk_settings_default(&s);
    for (; sets && *sets; sets++)
        assert_int_equal(brisk_settings_set(&s, *sets), BRISK_OK);
    e->st = brisk_stack_new(&s);
    assert_non_null(e->st);
    fakedev_init(&e->f, e->st, 1, IP4(10, 0, 0, 1), 24);
    brisk_ipv6_link_local_from_mac(us_ll, e->f.cfg.mac);
    brisk_ipv6_link_local_from_mac(peer_ll, peer_mac);
    e->now = 1 * MS;
    return e;
}

static void env_free(struct env *e)
{
    fakedev_destroy(&e->f, e->st->net.now);
    brisk_stack_free(e->st);
    free(e);
}

static struct brisk_counters counters(struct env *e)
{
    struct brisk_counters c;
    brisk_stack_get_counters(e->st, &c);
    return c;
}

/* Sends an ICMPv6 message r from src (at src_mac) to dst with hop limit `hops`. */
static void send_icmp6(struct env *e, const uint8_t *src_mac, const uint8_t src[16], const uint8_t dst[16],
                       uint8_t hops, const struct brisk_icmp6_repr *r)
{
    uint8_t msg[256], frame[400];
    size_t n = brisk_icmp6_emit(msg, r, src, dst);
    uint8_t mac[6];
    if (brisk_ipv6_is_multicast(dst))
        brisk_ipv6_multicast_mac(mac, dst);
    else
        memcpy(mac, e->f.cfg.mac, 6);
    size_t len = fakedev_ipv6_frame(frame, mac, src_mac, src, dst, BRISK_IP_PROTO_ICMPV6, hops, msg, n);
    assert_int_equal(brisk_stack_input(e->st, e->f.dev, frame, len, e->now), BRISK_OK);
}

static void send_ns(struct env *e, const uint8_t *mac, const uint8_t src[16], const uint8_t target[16],
                    uint8_t hops)
{
    uint8_t opts[8];
    brisk_nd_opt_lla_emit(opts, BRISK_ND_OPT_SLLA, mac);
    struct brisk_icmp6_repr r = {.type = BRISK_ICMP6_ND_NS, .payload = opts, .payload_len = 8};
    memcpy(r.target, target, 16);
    uint8_t dst[16];
    brisk_ipv6_solicited_node(dst, target);
    send_icmp6(e, mac, src, dst, hops, &r);
}

static void send_na(struct env *e, const uint8_t *mac, const uint8_t src[16], int solicited, int override,
                    uint8_t hops)
{
    uint8_t opts[8];
    brisk_nd_opt_lla_emit(opts, BRISK_ND_OPT_TLLA, mac);
    struct brisk_icmp6_repr r = {.type = BRISK_ICMP6_ND_NA, .na_solicited = (uint8_t)solicited,
                                 .na_override = (uint8_t)override, .payload = opts, .payload_len = 8};
    memcpy(r.target, src, 16);
    send_icmp6(e, mac, src, us_ll, hops, &r);
}

/* Parses sent frame i as Ethernet + IPv6 + ICMPv6. */
static void sent(struct env *e, size_t i, struct brisk_eth_repr *eth, struct brisk_ipv6_repr *ip,
                 struct brisk_icmp6_repr *r)
{
    assert_true(i < e->f.ntx);
    const uint8_t *b = e->f.tx[i].data;
    size_t len = e->f.tx[i].len;
    assert_int_equal(brisk_eth_parse(b, len, eth), BRISK_ETH_HLEN);
    assert_int_equal(eth->type, BRISK_ETH_P_IPV6);
    assert_int_equal(brisk_ipv6_parse(b + 14, len - 14, ip), 40);
    assert_int_equal(ip->next_header, BRISK_IP_PROTO_ICMPV6);
    assert_true(brisk_icmp6_parse(b + 54, ip->payload_len, ip->src, ip->dst, r) > 0);
}

static int echo6(struct env *e, const uint8_t dst[16], uint16_t seq)
{
    struct brisk_addr a = {.family = BRISK_AF_INET6};
    memcpy(a.u.v6, dst, 16);
    return brisk_icmp_echo_send_addr(e->st, &a, 7, seq, 16, e->now);
}

static void test_ns_answered(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    send_ns(e, peer_mac, peer_ll, us_ll, 255);
    assert_int_equal(e->f.ntx, 1);
    struct brisk_eth_repr eth;
    struct brisk_ipv6_repr ip;
    struct brisk_icmp6_repr r;
    sent(e, 0, &eth, &ip, &r);
    assert_memory_equal(eth.dst, peer_mac, 6);
    assert_int_equal(r.type, BRISK_ICMP6_ND_NA);
    assert_int_equal(ip.hop_limit, 255);
    assert_memory_equal(ip.src, us_ll, 16);
    assert_memory_equal(ip.dst, peer_ll, 16);
    assert_memory_equal(r.target, us_ll, 16);
    assert_true(r.na_solicited && r.na_override && r.opts.have_tll);
    assert_memory_equal(r.opts.tll, e->f.cfg.mac, 6);
    const struct brisk_nd_entry *n = brisk_nd_lookup(&e->st->net, peer_ll);
    assert_non_null(n);
    assert_int_equal(n->state, BRISK_ND_STALE);
    assert_memory_equal(n->mac, peer_mac, 6);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.Icmp6InNeighborSolicits, 1);
    assert_int_equal(c.Icmp6OutNeighborAdvertisements, 1);
    assert_int_equal(c.Ip6InMcastPkts, 1);

    /* A solicitation for someone else's address is not answered (and its group's MAC is not ours). */
    uint8_t other[16];
    memcpy(other, us_ll, 16);
    other[15] = 0x77;
    send_ns(e, peer_mac, peer_ll, other, 255);
    assert_int_equal(e->f.ntx, 1);
    assert_int_equal(counters(e).EthInNotForUs, 1);
    env_free(e);
}

static void test_hop_limit_not_255_dropped(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    send_ns(e, peer_mac, peer_ll, us_ll, 254);
    assert_int_equal(e->f.ntx, 0);
    assert_null(brisk_nd_lookup(&e->st->net, peer_ll));
    assert_int_equal(counters(e).Nd6InBadHopLimit, 1);
    /* An advertisement from off-link does not resolve a pending entry either. */
    assert_int_equal(echo6(e, peer_ll, 1), BRISK_OK);
    assert_int_equal(e->f.ntx, 1); /* the solicitation */
    send_na(e, peer_mac, peer_ll, 1, 1, 64);
    assert_int_equal(brisk_nd_lookup(&e->st->net, peer_ll)->state, BRISK_ND_INCOMPLETE);
    assert_int_equal(counters(e).Nd6InBadHopLimit, 2);
    assert_int_equal(e->f.ntx, 1);
    env_free(e);
}

static void test_resolution_gives_up_and_queue_bounded(void **state)
{
    (void)state;
    struct env *e = env_new(NULL); /* unres_qlen 16, arp_retries 3, arp_retrans 1 s */
    for (uint16_t i = 0; i < 20; i++)
        assert_int_equal(echo6(e, peer_ll, i), BRISK_OK);
    assert_int_equal(e->f.ntx, 1);
    struct brisk_eth_repr eth;
    struct brisk_ipv6_repr ip;
    struct brisk_icmp6_repr r;
    sent(e, 0, &eth, &ip, &r);
    uint8_t sn[16], sn_mac[6];
    brisk_ipv6_solicited_node(sn, peer_ll);
    brisk_ipv6_multicast_mac(sn_mac, sn);
    assert_int_equal(r.type, BRISK_ICMP6_ND_NS);
    assert_memory_equal(ip.dst, sn, 16);
    assert_memory_equal(eth.dst, sn_mac, 6);
    assert_memory_equal(r.target, peer_ll, 16);
    assert_true(r.opts.have_sll);
    const struct brisk_nd_entry *n = brisk_nd_lookup(&e->st->net, peer_ll);
    assert_int_equal(n->qlen, 16);
    assert_int_equal(counters(e).Nd6UnresolvedDiscards, 4);
    brisk_stack_poll(e->st, e->now + 1 * SEC);
    brisk_stack_poll(e->st, e->now + 2 * SEC);
    assert_int_equal(e->f.ntx, 3);
    assert_non_null(brisk_nd_lookup(&e->st->net, peer_ll));
    brisk_stack_poll(e->st, e->now + 3 * SEC);
    assert_int_equal(e->f.ntx, 3);
    assert_null(brisk_nd_lookup(&e->st->net, peer_ll));
    struct brisk_counters c = counters(e);
    assert_int_equal(c.Nd6ResolveFailed, 1);
    assert_int_equal(c.Nd6UnresolvedDiscards, 20);
    assert_int_equal(c.Icmp6OutNeighborSolicits, 3);
    fakedev_complete_all(&e->f, e->now + 3 * SEC);
    assert_int_equal(brisk_stack_pkts_in_use(e->st), 0);
    env_free(e);
}

static void test_advertisement_flushes_and_flags(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    for (uint16_t i = 0; i < 3; i++)
        assert_int_equal(echo6(e, peer_ll, i), BRISK_OK);
    /* An unsolicited advertisement for a neighbour we do not resolve creates nothing. */
    uint8_t stranger[16];
    brisk_ipv6_link_local_from_mac(stranger, peer2_mac);
    send_na(e, peer2_mac, stranger, 0, 1, 255);
    assert_null(brisk_nd_lookup(&e->st->net, stranger));
    send_na(e, peer_mac, peer_ll, 1, 1, 255);
    assert_int_equal(e->f.ntx, 4); /* NS, then the three echoes in order */
    for (size_t i = 1; i < 4; i++) {
        struct brisk_eth_repr eth;
        struct brisk_ipv6_repr ip;
        struct brisk_icmp6_repr r;
        sent(e, i, &eth, &ip, &r);
        assert_memory_equal(eth.dst, peer_mac, 6);
        assert_int_equal(r.type, BRISK_ICMP6_ECHO_REQUEST);
        assert_int_equal(r.seq, i - 1);
        assert_memory_equal(ip.src, us_ll, 16);
    }
    const struct brisk_nd_entry *n = brisk_nd_lookup(&e->st->net, peer_ll);
    assert_int_equal(n->state, BRISK_ND_REACHABLE);
    /* §7.2.5: O clear and another MAC only makes a REACHABLE entry STALE, keeping the MAC. */
    send_na(e, peer2_mac, peer_ll, 0, 0, 255);
    assert_int_equal(n->state, BRISK_ND_STALE);
    assert_memory_equal(n->mac, peer_mac, 6);
    /* O set: the new MAC is taken; S set: REACHABLE. */
    send_na(e, peer2_mac, peer_ll, 1, 1, 255);
    assert_int_equal(n->state, BRISK_ND_REACHABLE);
    assert_memory_equal(n->mac, peer2_mac, 6);
    env_free(e);
}

static void test_unresolved_limit(void **state)
{
    (void)state;
    const char *sets[] = {"arp_unres_max=4", NULL};
    struct env *e = env_new(sets);
    uint8_t a[16];
    memcpy(a, peer_ll, 16);
    for (uint8_t i = 0; i < 4; i++) {
        a[15] = (uint8_t)(0x40 + i);
        assert_int_equal(echo6(e, a, i), BRISK_OK);
    }
    a[15] = 0x50;
    assert_int_equal(echo6(e, a, 9), BRISK_ERR_TOOMANY);
    assert_int_equal(e->f.ntx, 4);
    assert_int_equal(counters(e).Nd6UnresolvedLimit, 1);
    env_free(e);
}

static void test_nud_delay_probe_delete(void **state)
{
    (void)state;
    const char *sets[] = {"arp_reachable=2s", NULL};
    struct env *e = env_new(sets);
    assert_int_equal(echo6(e, peer_ll, 0), BRISK_OK);
    send_na(e, peer_mac, peer_ll, 1, 1, 255);
    const struct brisk_nd_entry *n = brisk_nd_lookup(&e->st->net, peer_ll);
    assert_int_equal(n->state, BRISK_ND_REACHABLE);
    e->now += 3 * SEC;
    brisk_stack_poll(e->st, e->now);
    assert_int_equal(n->state, BRISK_ND_STALE);
    size_t before = e->f.ntx;
    assert_int_equal(echo6(e, peer_ll, 1), BRISK_OK);
    assert_int_equal(e->f.ntx, before + 1); /* sent at once, to the cached MAC */
    assert_int_equal(n->state, BRISK_ND_DELAY);
    e->now += 5 * SEC;
    brisk_stack_poll(e->st, e->now);
    assert_int_equal(n->state, BRISK_ND_PROBE);
    struct brisk_eth_repr eth;
    struct brisk_ipv6_repr ip;
    struct brisk_icmp6_repr r;
    sent(e, before + 1, &eth, &ip, &r);
    assert_int_equal(r.type, BRISK_ICMP6_ND_NS);
    assert_memory_equal(eth.dst, peer_mac, 6); /* unicast probe */
    assert_memory_equal(ip.dst, peer_ll, 16);
    for (int i = 0; i < 3; i++) {
        e->now += 1 * SEC;
        brisk_stack_poll(e->st, e->now);
    }
    assert_null(brisk_nd_lookup(&e->st->net, peer_ll));
    assert_int_equal(e->f.ntx, before + 4);
    assert_int_equal(counters(e).Nd6ResolveFailed, 1);
    env_free(e);
}

static void send_ra(struct env *e, uint8_t hops, uint16_t lifetime)
{
    uint8_t opts[40];
    struct brisk_nd_prefix p = {.prefix_len = 64, .onlink = 1, .valid_lifetime = 3600,
                                .preferred_lifetime = 1800, .prefix = {0x20, 0x01, 0x0d, 0xb8, 0, 5}};
    size_t n = brisk_nd_opt_prefix_emit(opts, &p);
    n += brisk_nd_opt_lla_emit(opts + n, BRISK_ND_OPT_SLLA, router_mac);
    struct brisk_icmp6_repr r = {.type = BRISK_ICMP6_ND_RA, .ra_hop_limit = 64, .ra_lifetime = lifetime,
                                 .payload = opts, .payload_len = n};
    send_icmp6(e, router_mac, router_ll, all_nodes, hops, &r);
}

static void test_router_advertisement(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    const uint8_t off_link[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 9, [15] = 1};
    const uint8_t on_link[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 5, [15] = 7};
    assert_int_equal(echo6(e, off_link, 0), BRISK_ERR_NOROUTE);
    send_ra(e, 254, 1800); /* from off-link: ignored */
    assert_int_equal(echo6(e, off_link, 0), BRISK_ERR_NOROUTE);
    send_ra(e, 255, 1800);
    assert_int_equal(counters(e).Icmp6InRouterAdvertisements, 1);
    assert_int_equal(echo6(e, off_link, 1), BRISK_OK);
    struct brisk_eth_repr eth;
    struct brisk_ipv6_repr ip;
    struct brisk_icmp6_repr r;
    sent(e, 0, &eth, &ip, &r); /* the router's MAC came with the RA: no solicitation */
    assert_int_equal(r.type, BRISK_ICMP6_ECHO_REQUEST);
    assert_memory_equal(eth.dst, router_mac, 6);
    assert_memory_equal(ip.dst, off_link, 16);
    assert_int_equal(echo6(e, on_link, 2), BRISK_OK); /* on-link: resolved directly */
    sent(e, 1, &eth, &ip, &r);
    assert_int_equal(r.type, BRISK_ICMP6_ND_NS);
    assert_memory_equal(r.target, on_link, 16);
    /* A zero lifetime withdraws the router; the static one outlives advertisements. */
    send_ra(e, 255, 0);
    assert_int_equal(echo6(e, off_link, 3), BRISK_ERR_NOROUTE);
    struct brisk_addr gw = {.family = BRISK_AF_INET6};
    memcpy(gw.u.v6, router_ll, 16);
    assert_int_equal(brisk_stack_set_gateway6(e->st, NULL, &gw), BRISK_ERR_NOROUTE); /* link-local: no dev */
    assert_int_equal(brisk_stack_set_gateway6(e->st, e->f.dev, &gw), BRISK_OK);
    send_ra(e, 255, 0);
    assert_int_equal(echo6(e, off_link, 4), BRISK_OK);
    env_free(e);
}

static void test_ipv6_off(void **state)
{
    (void)state;
    const char *sets[] = {"ipv6=0", NULL};
    struct env *e = env_new(sets);
    send_ns(e, peer_mac, peer_ll, us_ll, 255);
    assert_int_equal(e->f.ntx, 0);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.EthInNotForUs, 1); /* no group joined: its MAC is not ours */
    assert_int_equal(c.Ip6InReceives, 0);
    struct brisk_addr a = {.family = BRISK_AF_INET6, .u.v6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}};
    assert_int_equal(brisk_netdev_add_addr(e->f.dev, &a, 64), BRISK_ERR_AFNOSUPPORT);
    assert_int_equal(echo6(e, peer_ll, 0), BRISK_ERR_AFNOSUPPORT);
    struct brisk_addr got;
    assert_int_equal(brisk_netdev_get_addr6(e->f.dev, 0, &got, NULL), BRISK_ERR_NOENT);
    /* A unicast IPv6 frame to our MAC: an unknown EtherType, as before IPv6 existed. */
    uint8_t frame[100];
    size_t n = fakedev_ipv6_frame(frame, e->f.cfg.mac, peer_mac, peer_ll, us_ll, 59, 64, NULL, 0);
    brisk_stack_input(e->st, e->f.dev, frame, n, e->now);
    assert_int_equal(counters(e).EthInUnknownType, 1);
    env_free(e);
}

static void test_add_addr(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    struct brisk_addr a = {.family = BRISK_AF_INET6, .u.v6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}};
    struct brisk_addr got;
    uint8_t plen;
    assert_int_equal(brisk_netdev_get_addr6(e->f.dev, 0, &got, &plen), BRISK_OK);
    assert_memory_equal(got.u.v6, us_ll, 16);
    assert_int_equal(plen, 64);
    assert_int_equal(brisk_netdev_add_addr(e->f.dev, &a, 129), BRISK_ERR_INVAL);
    assert_int_equal(brisk_netdev_add_addr(e->f.dev, &a, 64), BRISK_OK);
    assert_int_equal(brisk_netdev_add_addr(e->f.dev, &a, 64), BRISK_ERR_EXIST);
    struct brisk_addr m = {.family = BRISK_AF_INET6, .u.v6 = {0xff, 0x02, [15] = 1}};
    assert_int_equal(brisk_netdev_add_addr(e->f.dev, &m, 64), BRISK_ERR_INVAL);
    struct brisk_addr v4 = brisk_addr_v4(IP4(10, 0, 0, 9));
    assert_int_equal(brisk_netdev_add_addr(e->f.dev, &v4, 24), BRISK_ERR_AFNOSUPPORT);
    a.u.v6[15] = 2;
    assert_int_equal(brisk_netdev_add_addr(e->f.dev, &a, 64), BRISK_OK);
    a.u.v6[15] = 3;
    assert_int_equal(brisk_netdev_add_addr(e->f.dev, &a, 64), BRISK_OK);
    a.u.v6[15] = 4;
    assert_int_equal(brisk_netdev_add_addr(e->f.dev, &a, 64), BRISK_ERR_TOOMANY);
    assert_int_equal(brisk_netdev_get_addr6(e->f.dev, 3, &got, &plen), BRISK_OK);
    assert_int_equal(got.u.v6[15], 3);
    assert_int_equal(brisk_netdev_get_addr6(e->f.dev, 4, &got, &plen), BRISK_ERR_NOENT);
    /* Its solicited-node group is joined: a solicitation for it is answered, from it. */
    uint8_t target[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 2};
    send_ns(e, peer_mac, peer_ll, target, 255);
    assert_int_equal(e->f.ntx, 1);
    struct brisk_eth_repr eth;
    struct brisk_ipv6_repr ip;
    struct brisk_icmp6_repr r;
    sent(e, 0, &eth, &ip, &r);
    assert_memory_equal(ip.src, target, 16);
    assert_memory_equal(r.target, target, 16);
    env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ns_answered),
        cmocka_unit_test(test_hop_limit_not_255_dropped),
        cmocka_unit_test(test_resolution_gives_up_and_queue_bounded),
        cmocka_unit_test(test_advertisement_flushes_and_flags),
        cmocka_unit_test(test_unresolved_limit),
        cmocka_unit_test(test_nud_delay_probe_delete),
        cmocka_unit_test(test_router_advertisement),
        cmocka_unit_test(test_ipv6_off),
        cmocka_unit_test(test_add_addr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
