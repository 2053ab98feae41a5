/*
 * test_ip6_input.c — IPv6 receive (src/net/ip6_input.c) and ICMPv6 (src/net/icmp6.c), with forged frames.
 *
 * An echo request to our link-local address is answered from it with the same identifier, sequence and
 * data; one to all-nodes is not. A next header nobody handles over IPv6 (TCP included: it registered no
 * IPv6 handler yet) is Ip6InUnknownProtos and answered with a parameter problem code 1 whose pointer is the
 * Next Header field that named it (the fixed header's, or an extension header's), quoting the packet — but
 * not when the packet went to a multicast group. A malformed chain (hop-by-hop not first, non-zero PadN) is
 * Ip6InHdrErrors, with the walker's parameter problem; an unknown option of type bits 10 is answered even
 * to multicast, one of bits 01 silently dropped; no error is ever sent about an ICMPv6 error, to a
 * multicast source, or beyond icmp_ratelimit's bucket (Icmp6OutRateLimited). A fragment is held for
 * reassembly (tests/net/test_ipfrag.c has the rest), an atomic one answered at once; truncated packets, foreign destinations and bad checksums are counted by reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stack/stack.h"
#include "support/fakedev.h"
#include "wire/eth.h"
#include "wire/icmp6.h"
#include "wire/ipv6.h"
#include "wire/wire.h"

#define MS BRISK_NSEC_PER_MSEC

static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
static uint8_t us_ll[16], peer_ll[16];
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
    fakedev_ipv6_solicit_from(&e->f, peer_mac, e->now); /* answers then go straight out */
    assert_int_equal(e->f.ntx, 1);
    fakedev_clear(&e->f);
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

/* Sends an IPv6 packet from the peer to dst: next header nh, then `payload`. */
static void send6(struct env *e, const uint8_t dst[16], uint8_t nh, const uint8_t *payload, size_t len)
{
    uint8_t frame[1600], mac[6];
    if (brisk_ipv6_is_multicast(dst))
        brisk_ipv6_multicast_mac(mac, dst);
    else
        memcpy(mac, e->f.cfg.mac, 6);
    size_t n = fakedev_ipv6_frame(frame, mac, peer_mac, peer_ll, dst, nh, 64, payload, len);
    assert_int_equal(brisk_stack_input(e->st, e->f.dev, frame, n, e->now), BRISK_OK);
}

static void sent(struct env *e, size_t i, struct brisk_ipv6_repr *ip, struct brisk_icmp6_repr *r)
{
    assert_true(i < e->f.ntx);
    const uint8_t *b = e->f.tx[i].data;
    size_t len = e->f.tx[i].len;
    struct brisk_eth_repr eth;
    assert_int_equal(brisk_eth_parse(b, len, &eth), BRISK_ETH_HLEN);
    assert_memory_equal(eth.dst, peer_mac, 6);
    assert_int_equal(brisk_ipv6_parse(b + 14, len - 14, ip), 40);
    assert_int_equal(ip->next_header, BRISK_IP_PROTO_ICMPV6);
    assert_true(brisk_icmp6_parse(b + 54, ip->payload_len, ip->src, ip->dst, r) > 0);
}

static void test_echo_reply(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    uint8_t data[100], msg[200];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 3 + 1);
    struct brisk_icmp6_repr q = {.type = BRISK_ICMP6_ECHO_REQUEST, .id = 0x1234, .seq = 9,
                                 .payload = data, .payload_len = sizeof data};
    size_t n = brisk_icmp6_emit(msg, &q, peer_ll, us_ll);
    send6(e, us_ll, BRISK_IP_PROTO_ICMPV6, msg, n);
    assert_int_equal(e->f.ntx, 1);
    struct brisk_ipv6_repr ip;
    struct brisk_icmp6_repr r;
    sent(e, 0, &ip, &r);
    assert_int_equal(r.type, BRISK_ICMP6_ECHO_REPLY);
    assert_int_equal(r.id, 0x1234);
    assert_int_equal(r.seq, 9);
    assert_int_equal(r.payload_len, sizeof data);
    assert_memory_equal(r.payload, data, sizeof data);
    assert_memory_equal(ip.src, us_ll, 16);
    assert_memory_equal(ip.dst, peer_ll, 16);
    assert_int_equal(ip.hop_limit, 64);
    /* To all-nodes: counted, not answered (an amplifier otherwise). */
    n = brisk_icmp6_emit(msg, &q, peer_ll, all_nodes);
    send6(e, all_nodes, BRISK_IP_PROTO_ICMPV6, msg, n);
    assert_int_equal(e->f.ntx, 1);
    /* A bad checksum. */
    n = brisk_icmp6_emit(msg, &q, peer_ll, us_ll);
    msg[20] ^= 1;
    send6(e, us_ll, BRISK_IP_PROTO_ICMPV6, msg, n);
    assert_int_equal(e->f.ntx, 1);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.Icmp6InEchos, 2);
    assert_int_equal(c.Icmp6OutEchoReplies, 1);
    assert_int_equal(c.Icmp6InCsumErrors, 1);
    assert_int_equal(c.Icmp6InErrors, 1);
    env_free(e);
}

static void test_unknown_next_header(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    uint8_t seg[20] = {0x04, 0x00, 0x00, 0x50}; /* an SCTP header's start: nobody registered SCTP */
    send6(e, us_ll, 132, seg, sizeof seg);
    assert_int_equal(e->f.ntx, 1);
    struct brisk_ipv6_repr ip;
    struct brisk_icmp6_repr r;
    sent(e, 0, &ip, &r);
    assert_int_equal(r.type, BRISK_ICMP6_PARAM_PROB);
    assert_int_equal(r.code, BRISK_IPV6_PP_NEXTHDR);
    assert_int_equal(r.pointer, 6); /* the fixed header's Next Header */
    assert_int_equal(r.payload_len, 40 + sizeof seg);
    assert_memory_equal(r.payload + 8, peer_ll, 16); /* the quote is our packet */
    /* Behind a destination options header (PadN of 4): the pointer is that header's Next Header. */
    uint8_t p[8 + 20] = {132, 0, 1, 4, 0, 0, 0, 0};
    send6(e, us_ll, BRISK_IP_PROTO_DSTOPTS, p, sizeof p);
    assert_int_equal(e->f.ntx, 2);
    sent(e, 1, &ip, &r);
    assert_int_equal(r.code, BRISK_IPV6_PP_NEXTHDR);
    assert_int_equal(r.pointer, 40);
    /* To a multicast group: counted, never answered. */
    send6(e, all_nodes, 132, seg, sizeof seg);
    assert_int_equal(e->f.ntx, 2);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.Ip6InUnknownProtos, 3);
    assert_int_equal(c.Icmp6OutParmProblems, 2);
    assert_int_equal(c.Ip6InDelivers, 1); /* the set-up's solicitation only */
    env_free(e);
}

static void test_malformed_chain(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    /* Hop-by-hop after destination options (RFC 8200 §4.1): parameter problem code 1 at the field. */
    uint8_t p[24] = {BRISK_IP_PROTO_HOPOPTS, 0, 1, 4, 0, 0, 0, 0, BRISK_IP_PROTO_NONE, 0, 1, 4};
    send6(e, us_ll, BRISK_IP_PROTO_DSTOPTS, p, sizeof p);
    assert_int_equal(counters(e).Ip6InHdrErrors, 1);
    assert_int_equal(e->f.ntx, 1);
    struct brisk_ipv6_repr ip;
    struct brisk_icmp6_repr r;
    sent(e, 0, &ip, &r);
    assert_int_equal(r.type, BRISK_ICMP6_PARAM_PROB);
    assert_int_equal(r.code, BRISK_IPV6_PP_NEXTHDR);
    assert_int_equal(r.pointer, 40);
    /* A header running past the payload. */
    uint8_t q[8] = {BRISK_IP_PROTO_NONE, 3};
    send6(e, us_ll, BRISK_IP_PROTO_DSTOPTS, q, sizeof q);
    assert_int_equal(counters(e).Ip6InHdrErrors, 2);
    /* Unknown option, type bits 01: discarded silently; bits 10: code 2, even to all-nodes. */
    uint8_t o1[8] = {BRISK_IP_PROTO_NONE, 0, 0x41, 4, 0, 0, 0, 0};
    send6(e, us_ll, BRISK_IP_PROTO_DSTOPTS, o1, sizeof o1);
    size_t before = e->f.ntx;
    uint8_t o2[8] = {BRISK_IP_PROTO_NONE, 0, 0x81, 4, 0, 0, 0, 0};
    send6(e, all_nodes, BRISK_IP_PROTO_DSTOPTS, o2, sizeof o2);
    assert_int_equal(e->f.ntx, before + 1);
    sent(e, before, &ip, &r);
    assert_int_equal(r.code, BRISK_IPV6_PP_OPTION);
    assert_int_equal(r.pointer, 42);
    assert_memory_equal(ip.src, us_ll, 16); /* not from the group */
    assert_int_equal(counters(e).Ip6InHdrErrors, 4);
    /* The same option in front of an ICMPv6 error: never an error about an error (RFC 4443 §2.4 (e.1)). */
    uint8_t o3[8 + 8] = {BRISK_IP_PROTO_ICMPV6, 0, 0x81, 4, 0, 0, 0, 0, BRISK_ICMP6_DEST_UNREACH};
    send6(e, us_ll, BRISK_IP_PROTO_DSTOPTS, o3, sizeof o3);
    assert_int_equal(e->f.ntx, before + 1);
    /* ... while in front of an echo request it is answered. */
    o3[8] = BRISK_ICMP6_ECHO_REQUEST;
    send6(e, us_ll, BRISK_IP_PROTO_DSTOPTS, o3, sizeof o3);
    assert_int_equal(e->f.ntx, before + 2);
    env_free(e);
}

static void test_fragments_truncation_addresses(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    uint8_t frag[8 + 16] = {BRISK_IP_PROTO_ICMPV6, 0, 0, 8 /* offset 1 * 8 */, 0, 0, 0, 1};
    send6(e, us_ll, BRISK_IP_PROTO_FRAGMENT, frag, sizeof frag);
    struct brisk_counters c = counters(e); /* held for reassembly (tests/net/test_ipfrag.c), nothing sent */
    assert_int_equal(c.Ip6ReasmReqds, 1);
    assert_int_equal(c.Ip6ReasmFails, 0);
    assert_int_equal(e->f.ntx, 0);
    /* An atomic fragment (offset 0, M 0) is a whole packet (RFC 6946): this echo request is answered. */
    uint8_t msg[16], atomic[8 + 16] = {BRISK_IP_PROTO_ICMPV6, 0, 0, 0, 0, 0, 0, 2};
    struct brisk_icmp6_repr q = {.type = BRISK_ICMP6_ECHO_REQUEST, .id = 1, .seq = 1};
    size_t n = brisk_icmp6_emit(msg, &q, peer_ll, us_ll);
    memcpy(atomic + 8, msg, n);
    send6(e, us_ll, BRISK_IP_PROTO_FRAGMENT, atomic, 8 + n);
    assert_int_equal(e->f.ntx, 1);
    /* Not ours. */
    uint8_t other[16];
    memcpy(other, us_ll, 16);
    other[15] ^= 0x10;
    send6(e, other, BRISK_IP_PROTO_NONE, NULL, 0);
    /* Payload length beyond the frame. */
    uint8_t frame[100];
    n = fakedev_ipv6_frame(frame, e->f.cfg.mac, peer_mac, peer_ll, us_ll, BRISK_IP_PROTO_NONE, 64, NULL, 0);
    frame[14 + 5] = 40;
    brisk_stack_input(e->st, e->f.dev, frame, n, e->now);
    /* No next header: ends the packet. */
    send6(e, us_ll, BRISK_IP_PROTO_NONE, NULL, 0);
    c = counters(e);
    assert_int_equal(c.Ip6InAddrErrors, 1);
    assert_int_equal(c.Ip6InTruncatedPkts, 1);
    assert_int_equal(c.Ip6InDiscards, 1);
    assert_int_equal(e->f.ntx, 1);
    env_free(e);
}

static void test_error_rate_limit(void **state)
{
    (void)state;
    const char *sets[] = {"icmp_ratelimit=10s", "icmp_ratelimit_burst=2", NULL};
    struct env *e = env_new(sets);
    uint8_t seg[20] = {0};
    for (int i = 0; i < 5; i++)
        send6(e, us_ll, 132, seg, sizeof seg); /* SCTP: nobody's, a parameter problem each */
    assert_int_equal(e->f.ntx, 2);
    assert_int_equal(counters(e).Icmp6OutRateLimited, 3);
    assert_int_equal(counters(e).IcmpOutRateLimited, 0); /* IPv4's bucket is its own */
    e->now += 10000 * MS;
    send6(e, us_ll, 132, seg, sizeof seg);
    assert_int_equal(e->f.ntx, 3);
    env_free(e);
}

/* A link-local peer on the second device is answered on that device, not on the first IPv6 one. */
static void test_link_local_answer_on_its_device(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    struct fakedev f2;
    fakedev_init(&f2, e->st, 3, IP4(10, 0, 1, 1), 24);
    uint8_t ll2[16], msg[64], frame[200];
    brisk_ipv6_link_local_from_mac(ll2, f2.cfg.mac);
    struct brisk_icmp6_repr q = {.type = BRISK_ICMP6_ECHO_REQUEST, .id = 5, .seq = 5};
    size_t n = brisk_icmp6_emit(msg, &q, peer_ll, ll2);
    n = fakedev_ipv6_frame(frame, f2.cfg.mac, peer_mac, peer_ll, ll2, BRISK_IP_PROTO_ICMPV6, 64, msg, n);
    brisk_stack_input(e->st, f2.dev, frame, n, e->now);
    assert_int_equal(e->f.ntx, 0);
    assert_int_equal(f2.ntx, 1); /* the solicitation for the peer, on f2's link */
    struct brisk_eth_repr eth;
    assert_int_equal(brisk_eth_parse(f2.tx[0].data, f2.tx[0].len, &eth), BRISK_ETH_HLEN);
    assert_int_equal(eth.dst[0], 0x33);
    /* The first device's link-local address is not good on the second link. */
    n = brisk_icmp6_emit(msg, &q, peer_ll, us_ll);
    n = fakedev_ipv6_frame(frame, f2.cfg.mac, peer_mac, peer_ll, us_ll, BRISK_IP_PROTO_ICMPV6, 64, msg, n);
    brisk_stack_input(e->st, f2.dev, frame, n, e->now);
    assert_int_equal(counters(e).Ip6InAddrErrors, 1);
    for (int i = 0; i < 3; i++) { /* the peer never answers: resolution gives up, dropping the reply */
        e->now += 1000 * MS;
        brisk_stack_poll(e->st, e->now);
    }
    assert_int_equal(f2.ntx, 3);
    assert_int_equal(e->f.ntx, 0);
    fakedev_destroy(&f2, e->now);
    env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_echo_reply),
        cmocka_unit_test(test_unknown_next_header),
        cmocka_unit_test(test_malformed_chain),
        cmocka_unit_test(test_fragments_truncation_addresses),
        cmocka_unit_test(test_error_rate_limit),
        cmocka_unit_test(test_link_local_answer_on_its_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
