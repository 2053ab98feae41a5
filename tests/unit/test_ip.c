/* tests for src/net/ip_input.c and ip_output.c: acceptance, counted drops, routing, ICMP errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "net/ip.h"
#include "stack/stack.h"
#include "support/fakedev.h"
#include "wire/arp.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"

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
    /* Teach the stack the peer's MAC so replies leave at once. */
    uint8_t frame[60] = {0};
    struct brisk_eth_repr eth = {.type = BRISK_ETH_P_ARP};
    memcpy(eth.dst, bcast, 6);
    memcpy(eth.src, peer_mac, 6);
    brisk_eth_emit(frame, &eth);
    struct brisk_arp_repr a = {.op = BRISK_ARP_OP_REQUEST, .spa = IP4(10, 0, 0, 2), .tpa = IP4(10, 0, 0, 1)};
    memcpy(a.sha, peer_mac, 6);
    brisk_arp_emit(frame + 14, &a);
    brisk_stack_input(e->st, e->f.dev, frame, sizeof(frame), 0);
    fakedev_clear(&e->f);
    return e;
}

/* `queued`: packets legitimately waiting behind ARP resolution; anything else in use is a leak. */
static void env_free(struct env *e, uint64_t queued)
{
    fakedev_destroy(&e->f, e->st->net.now);
    assert_int_equal(brisk_stack_pkts_in_use(e->st), queued);
    brisk_stack_free(e->st);
    free(e);
}

static struct brisk_counters counters(struct env *e)
{
    struct brisk_counters c;
    brisk_stack_get_counters(e->st, &c);
    return c;
}

static void feed_ip(struct env *e, uint32_t src, uint32_t dst, uint8_t proto, const uint8_t *l4, size_t len,
                    const uint8_t *mac_dst)
{
    uint8_t frame[1600];
    size_t n =
        fakedev_ipv4_frame(frame, mac_dst ? mac_dst : e->f.cfg.mac, peer_mac, src, dst, proto, l4, len);
    brisk_stack_input(e->st, e->f.dev, frame, n, e->st->net.now);
}

static void test_not_for_us_and_martians(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    uint8_t udp[8] = {0};
    feed_ip(e, IP4(10, 0, 0, 2), IP4(10, 0, 0, 3), 17, udp, 8, NULL);
    feed_ip(e, IP4(0, 0, 0, 0), IP4(10, 0, 0, 1), 17, udp, 8, NULL);
    feed_ip(e, IP4(224, 0, 0, 1), IP4(10, 0, 0, 1), 17, udp, 8, NULL);
    feed_ip(e, IP4(255, 255, 255, 255), IP4(10, 0, 0, 1), 17, udp, 8, NULL);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.IpInReceives, 4);
    assert_int_equal(c.IpInAddrErrors, 4);
    assert_int_equal(c.IpInDelivers, 0);
    assert_int_equal(e->f.ntx, 0);
    env_free(e, 0);
}

static void test_bad_headers_counted(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    uint8_t udp[8] = {0};
    uint8_t frame[128];
    size_t n =
        fakedev_ipv4_frame(frame, e->f.cfg.mac, peer_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), 17, udp, 8);
    frame[14 + 10] ^= 0x01; /* break the header checksum */
    brisk_stack_input(e->st, e->f.dev, frame, n, 1);
    frame[14 + 10] ^= 0x01;
    brisk_stack_input(e->st, e->f.dev, frame, n - 1, 2); /* shorter than total length */
    for (size_t len = 14; len < 14 + 20; len++)          /* truncated header */
        brisk_stack_input(e->st, e->f.dev, frame, len, 3);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.IpInHdrErrors, 1 + 20);
    assert_int_equal(c.IpInTruncated, 1);
    assert_int_equal(c.EthInErrors, 0);
    brisk_stack_input(e->st, e->f.dev, frame, 13, 4);
    assert_int_equal(counters(e).EthInErrors, 1);
    env_free(e, 0);
}

static void test_fragments_held(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    uint8_t frame[128];
    uint8_t udp[16] = {0};
    size_t n =
        fakedev_ipv4_frame(frame, e->f.cfg.mac, peer_mac, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), 17, udp, 16);
    struct brisk_ipv4_repr ip;
    assert_int_equal(brisk_ipv4_parse(frame + 14, n - 14, &ip), 20);
    ip.df = 0;
    ip.mf = 1;
    brisk_ipv4_emit(frame + 14, &ip);
    brisk_stack_input(e->st, e->f.dev, frame, n, 1);
    ip.mf = 0;
    ip.frag_off = 1480;
    brisk_ipv4_emit(frame + 14, &ip);
    brisk_stack_input(e->st, e->f.dev, frame, n, 2);
    /* Held for reassembly (tests/net/test_ipfrag.c), nothing answered yet; freed with the stack. */
    assert_int_equal(counters(e).IpReasmReqds, 2);
    assert_int_equal(counters(e).IpReasmFails, 0);
    assert_int_equal(counters(e).IpInDelivers, 0);
    assert_int_equal(e->f.ntx, 0);
    env_free(e, 0);
}

static void test_unknown_protocol_gets_icmp(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    /* 253: an experimental protocol number (RFC 3692) no stack registers; the bytes are a UDP header's. */
    uint8_t udp[8] = {0x12, 0x34, 0x00, 0x35, 0x00, 0x08, 0x00, 0x00};
    feed_ip(e, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), 253, udp, 8, NULL);
    assert_int_equal(counters(e).IpInUnknownProtos, 1);
    assert_int_equal(e->f.ntx, 1);
    const uint8_t *f = e->f.tx[0].data;
    struct brisk_ipv4_repr ip;
    assert_int_equal(brisk_ipv4_parse(f + 14, e->f.tx[0].len - 14, &ip), 20);
    assert_int_equal(ip.src, IP4(10, 0, 0, 1));
    assert_int_equal(ip.dst, IP4(10, 0, 0, 2));
    assert_int_equal(ip.proto, BRISK_IP_PROTO_ICMP);
    assert_true(ip.df);
    struct brisk_icmp_repr icmp;
    assert_int_equal(brisk_icmp_parse(f + 34, ip.total_len - 20u, &icmp), 8);
    assert_int_equal(icmp.type, BRISK_ICMP_DEST_UNREACH);
    assert_int_equal(icmp.code, 2);
    assert_int_equal(icmp.payload_len, 28); /* the whole offending datagram: 20 + 8 */
    assert_int_equal(icmp.payload[9], 253);
    assert_memory_equal(icmp.payload + 20, udp, 8);
    /* Not in reply to a broadcast, at either layer. */
    feed_ip(e, IP4(10, 0, 0, 2), IP4(10, 0, 0, 255), 253, udp, 8, NULL);
    feed_ip(e, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), 253, udp, 8, bcast);
    assert_int_equal(e->f.ntx, 1);
    assert_int_equal(counters(e).IpInUnknownProtos, 3);
    env_free(e, 0);
}

static void test_icmp_error_rate_limit(void **state)
{
    (void)state;
    struct env *e = env_new((const char *const[]){"icmp_ratelimit=1s", "icmp_ratelimit_burst=2", NULL});
    uint8_t udp[8] = {0};
    for (int i = 0; i < 5; i++)
        feed_ip(e, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), 253, udp, 8, NULL);
    assert_int_equal(e->f.ntx, 2);
    assert_int_equal(counters(e).IcmpOutRateLimited, 3);
    brisk_stack_poll(e->st, 1 * SEC);
    feed_ip(e, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), 253, udp, 8, NULL);
    feed_ip(e, IP4(10, 0, 0, 2), IP4(10, 0, 0, 1), 253, udp, 8, NULL);
    assert_int_equal(e->f.ntx, 3); /* one token refilled */
    assert_int_equal(counters(e).IcmpOutRateLimited, 4);
    env_free(e, 0);
}

static void test_no_error_about_an_icmp_error(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    uint8_t dgram[64];
    uint8_t icmp[36] = {BRISK_ICMP_DEST_UNREACH, 1};
    struct brisk_ipv4_repr ip = {.hdr_len = 20,
                                 .total_len = 56,
                                 .df = 1,
                                 .ttl = 64,
                                 .proto = 1,
                                 .src = IP4(10, 0, 0, 2),
                                 .dst = IP4(10, 0, 0, 1)};
    brisk_ipv4_emit(dgram, &ip);
    memcpy(dgram + 20, icmp, sizeof(icmp));
    brisk_icmp_send_error(&e->st->net, BRISK_ICMP_DEST_UNREACH, 3, dgram, 56, 1);
    assert_int_equal(e->f.ntx, 0);
    dgram[20] = BRISK_ICMP_ECHO; /* a query may get an error */
    brisk_icmp_send_error(&e->st->net, BRISK_ICMP_DEST_UNREACH, 3, dgram, 56, 1);
    assert_int_equal(e->f.ntx, 1);
    env_free(e, 0);
}

static void test_routing(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    assert_int_equal(brisk_icmp_echo_send(e->st, IP4(8, 8, 8, 8), 1, 1, 8, 1), BRISK_ERR_NOROUTE);
    assert_int_equal(counters(e).IpOutNoRoutes, 1);
    assert_int_equal(brisk_stack_set_gateway(e->st, IP4(192, 168, 0, 1)), BRISK_ERR_NOROUTE);
    assert_int_equal(brisk_stack_set_gateway(e->st, IP4(10, 0, 0, 254)), BRISK_OK);
    assert_int_equal(brisk_icmp_echo_send(e->st, IP4(8, 8, 8, 8), 1, 1, 8, 1), BRISK_OK);
    /* The gateway is resolved, not the destination. */
    assert_int_equal(e->f.ntx, 1);
    struct brisk_arp_repr a;
    assert_int_equal(brisk_arp_parse(e->f.tx[0].data + 14, e->f.tx[0].len - 14, &a), BRISK_ARP_LEN);
    assert_int_equal(a.tpa, IP4(10, 0, 0, 254));
    /* A directly connected destination still goes direct. */
    assert_int_equal(brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 2), 1, 2, 8, 2), BRISK_OK);
    assert_int_equal(e->f.ntx, 2);
    assert_memory_equal(e->f.tx[1].data, peer_mac, 6);
    assert_int_equal(brisk_stack_set_gateway(e->st, 0), BRISK_OK);
    assert_int_equal(brisk_icmp_echo_send(e->st, IP4(8, 8, 8, 8), 1, 1, 8, 3), BRISK_ERR_NOROUTE);
    env_free(e, 1);
}

static void test_mtu_enforced(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    assert_int_equal(brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 2), 1, 1, 1500 - 28, 1), BRISK_OK);
    assert_int_equal(e->f.tx[0].len, 1514);
    assert_int_equal(brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 2), 1, 2, 1500 - 27, 1), BRISK_ERR_MSGSIZE);
    assert_int_equal(e->f.ntx, 1);
    env_free(e, 0);
}

static void test_ttl_and_id(void **state)
{
    (void)state;
    struct env *e = env_new((const char *const[]){"ip_default_ttl=17", NULL});
    brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 2), 1, 1, 8, 1);
    brisk_icmp_echo_send(e->st, IP4(10, 0, 0, 2), 1, 2, 8, 1);
    struct brisk_ipv4_repr a, b;
    assert_int_equal(brisk_ipv4_parse(e->f.tx[0].data + 14, e->f.tx[0].len - 14, &a), 20);
    assert_int_equal(brisk_ipv4_parse(e->f.tx[1].data + 14, e->f.tx[1].len - 14, &b), 20);
    assert_int_equal(a.ttl, 17);
    assert_int_equal((uint16_t)(a.id + 1), b.id);
    env_free(e, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_for_us_and_martians),
        cmocka_unit_test(test_bad_headers_counted),
        cmocka_unit_test(test_fragments_held),
        cmocka_unit_test(test_unknown_protocol_gets_icmp),
        cmocka_unit_test(test_icmp_error_rate_limit),
        cmocka_unit_test(test_no_error_about_an_icmp_error),
        cmocka_unit_test(test_routing),
        cmocka_unit_test(test_mtu_enforced),
        cmocka_unit_test(test_ttl_and_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
