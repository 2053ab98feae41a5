/* tests for src/net/icmp.c: echo reply, broadcast echo ignored, echo replies to the tool callback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "stack/stack.h"
#include "support/fakedev.h"
#include "wire/arp.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"
#include "wire/wire.h"

static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static brisk_stack *new_stack(struct fakedev *f)
{
    brisk_stack *st = brisk_stack_new(NULL);
    assert_non_null(st);
    fakedev_init(f, st, 1, IP4(10, 0, 0, 1), 24);
    uint8_t frame[60] = {0};
    struct brisk_eth_repr eth = {.type = BRISK_ETH_P_ARP};
    memcpy(eth.dst, bcast, 6);
    memcpy(eth.src, peer_mac, 6);
    brisk_eth_emit(frame, &eth);
    struct brisk_arp_repr a = {.op = BRISK_ARP_OP_REQUEST, .spa = IP4(10, 0, 0, 2), .tpa = IP4(10, 0, 0, 1)};
    memcpy(a.sha, peer_mac, 6);
    brisk_arp_emit(frame + 14, &a);
    brisk_stack_input(st, f->dev, frame, sizeof(frame), 0);
    fakedev_clear(f);
    return st;
}

static void free_stack(brisk_stack *st, struct fakedev *f)
{
    fakedev_destroy(f, 0);
    assert_int_equal(brisk_stack_pkts_in_use(st), 0);
    brisk_stack_free(st);
}

static size_t echo_frame(uint8_t *frame, const uint8_t *dst_mac, uint32_t dst, uint8_t type, uint16_t id,
                         uint16_t seq, const uint8_t *data, size_t dlen)
{
    uint8_t icmp[1500];
    struct brisk_icmp_repr r = {.type = type, .id = id, .seq = seq, .payload = data, .payload_len = dlen};
    size_t n = brisk_icmp_emit(icmp, &r);
    return fakedev_ipv4_frame(frame, dst_mac, peer_mac, IP4(10, 0, 0, 2), dst, BRISK_IP_PROTO_ICMP, icmp, n);
}

static void test_echo_reply(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack(&f);
    uint8_t data[100];
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 7);
    uint8_t frame[1600];
    size_t n = echo_frame(frame, f.cfg.mac, IP4(10, 0, 0, 1), BRISK_ICMP_ECHO, 0x1234, 9, data, sizeof(data));
    brisk_stack_input(st, f.dev, frame, n, 5);
    assert_int_equal(f.ntx, 1);
    const uint8_t *o = f.tx[0].data;
    assert_memory_equal(o, peer_mac, 6);
    struct brisk_ipv4_repr ip;
    assert_int_equal(brisk_ipv4_parse(o + 14, f.tx[0].len - 14, &ip), 20);
    assert_int_equal(ip.src, IP4(10, 0, 0, 1));
    assert_int_equal(ip.dst, IP4(10, 0, 0, 2));
    struct brisk_icmp_repr r;
    assert_int_equal(brisk_icmp_parse(o + 34, ip.total_len - 20u, &r), 8);
    assert_int_equal(r.type, BRISK_ICMP_ECHO_REPLY);
    assert_int_equal(r.id, 0x1234);
    assert_int_equal(r.seq, 9);
    assert_int_equal(r.payload_len, sizeof(data));
    assert_memory_equal(r.payload, data, sizeof(data));
    struct brisk_counters c;
    brisk_stack_get_counters(st, &c);
    assert_int_equal(c.IcmpInEchos, 1);
    assert_int_equal(c.IcmpOutEchoReps, 1);
    free_stack(st, &f);
}

static void test_padded_short_frame(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack(&f);
    uint8_t frame[64];
    memset(frame, 0xee, sizeof(frame));
    size_t n =
        echo_frame(frame, f.cfg.mac, IP4(10, 0, 0, 1), BRISK_ICMP_ECHO, 1, 1, (const uint8_t *)"ab", 2);
    assert_true(n < 60);
    brisk_stack_input(st, f.dev, frame, 60, 5); /* Ethernet padding after the datagram */
    assert_int_equal(f.ntx, 1);
    assert_int_equal(f.tx[0].len, n); /* the reply quotes 2 data bytes, not the padding */
    free_stack(st, &f);
}

static void test_broadcast_echo_ignored(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack(&f);
    uint8_t frame[128];
    size_t n = echo_frame(frame, bcast, IP4(10, 0, 0, 255), BRISK_ICMP_ECHO, 1, 1, NULL, 0);
    brisk_stack_input(st, f.dev, frame, n, 5);
    n = echo_frame(frame, bcast, IP4(255, 255, 255, 255), BRISK_ICMP_ECHO, 1, 1, NULL, 0);
    brisk_stack_input(st, f.dev, frame, n, 5);
    assert_int_equal(f.ntx, 0);
    struct brisk_counters c;
    brisk_stack_get_counters(st, &c);
    assert_int_equal(c.IcmpInEchos, 2);
    free_stack(st, &f);
}

struct got {
    int n;
    struct brisk_echo_reply r;
    uint64_t now;
};

static void on_reply(void *ctx, const struct brisk_echo_reply *r, uint64_t now)
{
    struct got *g = ctx;
    g->n++;
    g->r = *r;
    g->now = now;
}

static void test_echo_send_and_reply_callback(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack(&f);
    struct got g = {0};
    brisk_icmp_set_echo_handler(st, on_reply, &g);
    uint64_t t0 = 0x123456789abull;
    assert_int_equal(brisk_icmp_echo_send(st, IP4(10, 0, 0, 2), 77, 3, 56, t0), BRISK_OK);
    assert_int_equal(f.ntx, 1);
    /* Turn our request into the peer's reply: same data. */
    struct brisk_ipv4_repr ip;
    assert_int_equal(brisk_ipv4_parse(f.tx[0].data + 14, f.tx[0].len - 14, &ip), 20);
    struct brisk_icmp_repr req;
    assert_int_equal(brisk_icmp_parse(f.tx[0].data + 34, ip.total_len - 20u, &req), 8);
    assert_int_equal(req.type, BRISK_ICMP_ECHO);
    assert_int_equal(req.payload_len, 56);
    uint8_t frame[256];
    size_t n = echo_frame(frame, f.cfg.mac, IP4(10, 0, 0, 1), BRISK_ICMP_ECHO_REPLY, 77, 3, req.payload, 56);
    brisk_stack_input(st, f.dev, frame, n, t0 + 500);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.r.from, IP4(10, 0, 0, 2));
    assert_int_equal(g.r.id, 77);
    assert_int_equal(g.r.seq, 3);
    assert_int_equal(g.r.len, 56);
    assert_int_equal(g.r.sent_at, t0);
    assert_int_equal(g.now, t0 + 500);
    /* A corrupted reply is counted and not delivered. */
    frame[n - 1] ^= 0xff;
    brisk_stack_input(st, f.dev, frame, n, t0 + 600);
    assert_int_equal(g.n, 1);
    struct brisk_counters c;
    brisk_stack_get_counters(st, &c);
    assert_int_equal(c.IcmpInErrors, 1);
    free_stack(st, &f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_echo_reply),
        cmocka_unit_test(test_padded_short_frame),
        cmocka_unit_test(test_broadcast_echo_ignored),
        cmocka_unit_test(test_echo_send_and_reply_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
